"""A reader of Lua Torch 7 binary files (``File:writeObject`` in binary
mode).

The format, as torch7's File writes it: every object starts with a 4-byte
type tag — 0 nil, 1 number (8-byte double), 2 string (4-byte length, bytes),
3 table, 4 Torch object, 5 boolean (4-byte int, 1 true), 6 function,
7 recursive function (legacy tag), 8 recursive function.  Tables, Torch
objects and recursive functions then carry a 4-byte object index: an index
seen before refers back to that object (shared and cyclic references).  A table
holds a 4-byte pair count and that many key/value objects; a Torch object
its version string ``"V <n>"`` and then its class name (files older than
versions hold the class name alone), then its contents: tensors hold their
dimension count, sizes and strides (longs), a 1-based storage offset (long)
and their storage object; storages hold their element count (long) and the
elements; any other class (nn modules) holds the table of its fields.  A
function holds its bytecode (length, bytes) and the table of its upvalues.
Integers are little-endian; longs are 8 bytes unless ``long_size=4``.
"""
import struct

import numpy as np

import ember

__all__ = ["load_lua", "LuaObject", "LuaFunction", "LuaTable", "LuaList"]

NIL, NUMBER, STRING, TABLE, TORCH, BOOLEAN, FUNCTION, LEGACY_RECUR_FUNCTION, RECUR_FUNCTION = \
    range(9)
_INDEXED = (TABLE, TORCH, LEGACY_RECUR_FUNCTION, RECUR_FUNCTION)

# element types of torch.<T>Tensor / torch.<T>Storage; the CUDA ones are
# written with the same elements and load on the CPU
_TYPES = {"Double": np.float64, "Float": np.float32, "Half": np.float16, "Long": np.int64,
          "Int": np.int32, "Short": np.int16, "Char": np.int8, "Byte": np.uint8}
_CUDA = {"Cuda": "Float", "CudaDouble": "Double", "CudaHalf": "Half", "CudaLong": "Long",
         "CudaInt": "Int", "CudaShort": "Short", "CudaChar": "Char", "CudaByte": "Byte"}

MAX_DEPTH = 200         # nesting of objects; deeper files are refused, not a RecursionError
MAX_DIMS = 64


class LuaObject:
    """An instance of a Lua Torch class with no Ember counterpart:
    ``torch_typename()`` is its class name, its fields are attributes (and
    ``fields``, the dict of all of them)."""

    def __init__(self, class_name, fields):
        self._class_name = class_name
        self.fields = fields
        if isinstance(fields, dict):
            for k, v in fields.items():
                if isinstance(k, str) and k.isidentifier() and k not in ("fields",):
                    setattr(self, k, v)

    def torch_typename(self):
        return self._class_name

    def __repr__(self):
        return f"LuaObject({self._class_name!r})"


class LuaTable(dict):
    """A Lua table: a dict that, like a Lua table, can itself be a key
    (hashed by identity; Lua files may key a table by a table)."""
    __hash__ = object.__hash__


class LuaList(list):
    """A Lua table whose keys are 1..n, as a list (hashed by identity)."""
    __hash__ = object.__hash__


class LuaFunction:
    """A serialized Lua function: its bytecode and upvalues (not run)."""

    def __init__(self, bytecode, upvalues):
        self.bytecode, self.upvalues = bytecode, upvalues

    def __repr__(self):
        return f"LuaFunction({len(self.bytecode)} bytes of bytecode)"


def _element_type(class_name, kind):
    """numpy dtype for torch.<T><kind> (kind 'Tensor' or 'Storage'), or None."""
    if not (class_name.startswith("torch.") and class_name.endswith(kind)):
        return None
    t = class_name[len("torch."):-len(kind)]
    return _TYPES.get(_CUDA.get(t, t))


class _Reader:
    def __init__(self, data, name, long_size):
        self.data, self.name, self.pos = data, name, 0
        self.long_size = long_size
        self.memo = {}

    # -- primitives ------------------------------------------------------
    def fail(self, message, at=None):
        raise ValueError(f"load_lua: {self.name}: {message} at offset "
                         f"{self.pos if at is None else at}")

    def need(self, n, what):
        left = len(self.data) - self.pos
        if n < 0 or n > left:
            self.fail(f"truncated or malformed file: {what} needs {n} bytes, {left} left")

    def int(self, what="an int"):
        self.need(4, what)
        v = struct.unpack_from("<i", self.data, self.pos)[0]
        self.pos += 4
        return v

    def long(self, what="a long"):
        self.need(self.long_size, what)
        v = struct.unpack_from("<q" if self.long_size == 8 else "<i", self.data, self.pos)[0]
        self.pos += self.long_size
        return v

    def longs(self, n, what):
        return [self.long(what) for _ in range(n)]

    def double(self):
        self.need(8, "a number")
        v = struct.unpack_from("<d", self.data, self.pos)[0]
        self.pos += 8
        return v

    def raw_string(self, what="a string"):
        at = self.pos
        n = self.int(f"the length of {what}")
        if n < 0:
            self.fail(f"negative length {n} of {what}", at)
        self.need(n, what)
        s = bytes(self.data[self.pos:self.pos + n])
        self.pos += n
        return s

    def string(self, what="a string"):
        s = self.raw_string(what)
        try:
            return s.decode("utf-8")
        except UnicodeDecodeError:
            return s        # Lua strings are bytes; non-UTF-8 ones stay bytes

    # -- objects ---------------------------------------------------------
    def object(self, depth=0):
        if depth > MAX_DEPTH:
            self.fail(f"objects nested deeper than {MAX_DEPTH} levels")
        at = self.pos
        tag = self.int("a type tag")
        if tag == NIL:
            return None
        if tag == NUMBER:
            v = self.double()
            return int(v) if v.is_integer() and abs(v) < 2 ** 53 else v
        if tag == STRING:
            return self.string()
        if tag == BOOLEAN:
            return self.int("a boolean") == 1
        if tag == FUNCTION:         # older files: a function without an index
            bytecode = self.raw_string("function bytecode")
            return LuaFunction(bytecode, self.object(depth + 1))
        if tag not in _INDEXED:
            self.fail(f"unknown type tag {tag}", at)
        index = self.int("an object index")
        if index in self.memo:
            return self.memo[index]
        if tag == TABLE:
            return self.table(index, depth)
        if tag == TORCH:
            return self.torch_object(index, depth, at)
        bytecode = self.raw_string("function bytecode")
        func = self.memo[index] = LuaFunction(bytecode, None)
        func.upvalues = self.object(depth + 1)
        return func

    def table(self, index, depth):
        at = self.pos
        n = self.int("a table size")
        if n < 0:
            self.fail(f"negative table size {n}", at)
        self.need(8 * n, f"a table of {n} pairs")   # two type tags at least per pair
        table = self.memo[index] = LuaTable()
        for _ in range(n):
            key_at = self.pos
            key = self.object(depth + 1)
            value = self.object(depth + 1)
            try:
                table[key] = value
            except TypeError:
                self.fail(f"a table key of type {type(key).__name__} (unhashable here)", key_at)
        if n and set(table) == set(range(1, n + 1)):      # a Lua array: a Python list
            table = self.memo[index] = LuaList(table[i] for i in range(1, n + 1))
        return table

    def torch_object(self, index, depth, at):
        version = self.string("a version string")
        if isinstance(version, str) and version.startswith("V "):
            try:
                int(version[2:])
            except ValueError:
                self.fail(f"bad version string {version!r}")
            class_name = self.string("a class name")
        else:
            class_name = version      # files older than version strings
        if not isinstance(class_name, str) or not class_name:
            self.fail(f"bad class name {class_name!r}")
        dtype = _element_type(class_name, "Storage")
        if dtype is not None:
            obj = self.memo[index] = self.storage(dtype)
            return obj
        dtype = _element_type(class_name, "Tensor")
        if dtype is not None:
            obj = self.memo[index] = self.tensor(dtype, depth)
            return obj
        # any other class: the table of its fields
        holder = self.memo[index] = LuaObject(class_name, None)
        fields = self.object(depth + 1)
        try:
            obj = _make_object(class_name, fields, holder)
        except ValueError as e:
            self.fail(str(e), at)
        self.memo[index] = obj
        return obj

    def storage(self, dtype):
        at = self.pos
        n = self.long("a storage size")
        if n < 0:
            self.fail(f"negative storage size {n}", at)
        size = np.dtype(dtype).itemsize
        if dtype == np.int64 and self.long_size == 4:
            size = 4
        self.need(n * size, f"a storage of {n} elements")
        raw = np.frombuffer(self.data, "<i4" if size == 4 and dtype == np.int64
                            else np.dtype(dtype).newbyteorder("<"), n, self.pos)
        self.pos += n * size
        return ember.from_numpy(raw.astype(dtype))        # a copy, aligned and owned

    def tensor(self, dtype, depth):
        at = self.pos
        nd = self.int("a dimension count")
        if not 0 <= nd <= MAX_DIMS:
            self.fail(f"bad dimension count {nd}", at)
        sizes = self.longs(nd, "a tensor size")
        strides = self.longs(nd, "a tensor stride")
        offset_at = self.pos
        offset = self.long("a storage offset") - 1
        storage_at = self.pos
        storage = self.object(depth + 1)
        if nd == 0 or 0 in sizes:
            return ember.empty(*(sizes if nd else [0]), dtype=_ember_dtype(dtype))
        if any(s < 0 for s in sizes) or any(s < 0 for s in strides):
            self.fail(f"negative size or stride in {sizes} / {strides}", at)
        if not isinstance(storage, ember.Tensor) or storage.dim() != 1:
            self.fail("a tensor whose storage is not a storage", storage_at)
        if storage.dtype != _ember_dtype(dtype):
            self.fail(f"a {dtype.__name__} tensor on a {storage.dtype} storage", storage_at)
        numel = 1
        for s in sizes:
            numel *= s
        last = offset + sum((s - 1) * st for s, st in zip(sizes, strides))
        if offset < 0 or last >= storage.numel() or numel >= 2 ** 48:
            self.fail(f"a tensor of size {sizes}, stride {strides} and offset {offset + 1} "
                      f"outside its storage of {storage.numel()} elements", offset_at)
        return storage.as_strided(sizes, strides, offset)


def _ember_dtype(np_dtype):
    return {np.float64: ember.float64, np.float32: ember.float32, np.float16: ember.float16,
            np.int64: ember.int64, np.int32: ember.int32, np.int16: ember.int16,
            np.int8: ember.int8, np.uint8: ember.uint8}[np_dtype]


def _make_object(class_name, fields, holder):
    from ._lua_nn import to_legacy
    if isinstance(fields, dict) or isinstance(fields, list):
        module = to_legacy(class_name, fields)
        if module is not None:
            return module
    holder.__init__(class_name, fields)
    return holder


def load_lua(path, long_size=8):
    """Read the object a Lua Torch 7 ``torch.save(path, obj)`` wrote (binary
    mode).  Numbers with whole values come back as int, others float;
    strings as str (bytes when not UTF-8); tables as :class:`LuaTable` (a
    dict), or :class:`LuaList` (a list) when their keys are 1..n (both
    hashed by identity, so a table can key a table, as in Lua); booleans
    and nil as bool and None; tensors and storages as ember tensors (a
    tensor is a view of its storage, so tensors sharing a storage share
    memory); nn modules with an ember.legacy.nn counterpart as that class,
    other classes as :class:`LuaObject` (classes that write themselves with
    their own code, such as tds.Hash, are not readable).  Objects
    referenced several times come back as one Python object.  Malformed or
    truncated files raise ValueError naming the offset."""
    if long_size not in (4, 8):
        raise ValueError(f"load_lua: long_size must be 4 or 8, got {long_size}")
    with open(path, "rb") as f:
        data = f.read()
    reader = _Reader(memoryview(data), str(path), long_size)
    obj = reader.object()
    return obj
