"""A writer of Lua Torch 7 binary files for the tests of load_lua, emitting
the format byte by byte from its documented layout (tags, object indices,
"V 1" version strings, tensor size/stride/offset, storages)."""
import struct

import numpy as np

CODES = {"Double": "<f8", "Float": "<f4", "Half": "<f2", "Long": "<i8", "Int": "<i4",
         "Short": "<i2", "Char": "i1", "Byte": "u1"}


class Storage:
    def __init__(self, type_name, values):
        self.type_name = type_name          # "Double", "CudaHalf", ...
        self.values = np.asarray(values)


class Tensor:
    def __init__(self, type_name, storage, sizes, strides, offset=1):
        self.type_name, self.storage = type_name, storage
        self.sizes, self.strides, self.offset = list(sizes), list(strides), offset

    @classmethod
    def contiguous(cls, type_name, array):
        array = np.asarray(array)
        strides = [s // array.itemsize for s in array.strides] if array.ndim else []
        return cls(type_name, Storage(type_name, array.reshape(-1)), array.shape, strides)


class Object:
    """An instance of a Torch class (nn.Linear, ...) holding `fields`."""

    def __init__(self, class_name, fields, versioned=True):
        self.class_name, self.fields, self.versioned = class_name, fields, versioned


class Table:
    """A table given as (key, value) pairs, so that keys can be tables,
    itself included (fill `pairs` after making it)."""

    def __init__(self, pairs=()):
        self.pairs = list(pairs)


class Function:
    def __init__(self, bytecode, upvalues, tag=8):
        self.bytecode, self.upvalues, self.tag = bytecode, upvalues, tag


def _element_code(type_name):
    base = {"Cuda": "Float"}.get(type_name, type_name.replace("Cuda", ""))
    return CODES[base]


class Writer:
    def __init__(self, long_size=8):
        self.out = bytearray()
        self.long_size = long_size
        self.indices = {}

    def int(self, v):
        self.out += struct.pack("<i", v)

    def long(self, v):
        self.out += struct.pack("<q" if self.long_size == 8 else "<i", v)

    def string(self, s):
        s = s.encode() if isinstance(s, str) else s
        self.int(len(s))
        self.out += s

    def _indexed(self, tag, obj):
        self.int(tag)
        key = id(obj)
        if key in self.indices:
            self.int(self.indices[key])
            return False
        self.indices[key] = len(self.indices) + 1
        self.int(self.indices[key])
        return True

    def _class(self, name, versioned=True):
        if versioned:
            self.string("V 1")
        self.string(name)

    def write(self, obj):
        if obj is None:
            self.int(0)
        elif isinstance(obj, bool):
            self.int(5)
            self.int(1 if obj else 0)
        elif isinstance(obj, (int, float)):
            self.int(1)
            self.out += struct.pack("<d", obj)
        elif isinstance(obj, (str, bytes)):
            self.int(2)
            self.string(obj)
        elif isinstance(obj, (dict, list)):
            if self._indexed(3, obj):
                items = obj.items() if isinstance(obj, dict) else enumerate(obj, 1)
                items = list(items)
                self.int(len(items))
                for k, v in items:
                    self.write(k)
                    self.write(v)
        elif isinstance(obj, Table):
            if self._indexed(3, obj):
                self.int(len(obj.pairs))
                for k, v in obj.pairs:
                    self.write(k)
                    self.write(v)
        elif isinstance(obj, Storage):
            if self._indexed(4, obj):
                self._class(f"torch.{obj.type_name}Storage")
                self.long(obj.values.size)
                code = _element_code(obj.type_name)
                if code == "<i8" and self.long_size == 4:
                    code = "<i4"
                self.out += obj.values.astype(code).tobytes()
        elif isinstance(obj, Tensor):
            if self._indexed(4, obj):
                self._class(f"torch.{obj.type_name}Tensor")
                self.int(len(obj.sizes))
                for v in obj.sizes + obj.strides:
                    self.long(v)
                self.long(obj.offset)
                self.write(obj.storage)
        elif isinstance(obj, Object):
            if self._indexed(4, obj):
                self._class(obj.class_name, obj.versioned)
                self.write(obj.fields)
        elif isinstance(obj, Function):
            if obj.tag == 6:        # the older form: no object index
                self.int(6)
            elif not self._indexed(obj.tag, obj):
                return self
            self.string(obj.bytecode)
            self.write(obj.upvalues)
        else:
            raise TypeError(f"cannot write {type(obj).__name__}")
        return self

    def save(self, path):
        with open(path, "wb") as f:
            f.write(bytes(self.out))
        return path


def dumps(obj, long_size=8):
    return bytes(Writer(long_size).write(obj).out)
