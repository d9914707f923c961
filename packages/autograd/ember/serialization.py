"""ember.save / ember.load: a zip archive of a pickled structure plus raw storages.

Layout (the same as PyTorch's, so one reader handles both)::

    archive/data.pkl      the structure; tensors refer to storages by key
    archive/data/<key>    one record per storage, its raw bytes (little-endian)
    archive/byteorder     "little"
    archive/version       format version

Each storage is written once, so tensors that are views of one another share
storage again after loading.  Loading is restricted by default: the
unpickler accepts only tensors, dtypes, devices, containers and primitive
types, and refuses anything else naming it (``weights_only=False`` opts
out, for files you trust).  Saving to a path writes a temporary file next
to it and renames it over the target, so a failure never destroys the
previous file; the temporary a killed save leaves
(``.<name>.ember-save-<pid>-<random>.tmp``) is removed by the next save to
the same path.  Checkpoints written by ``torch.save`` (zip format) load too.
"""
import _codecs
import collections
import fcntl
import io
import os
import pickle
import sys
import tempfile
import zipfile

from . import _tensor
from .backends import get_backend
from ._tensor import Tensor, _new_like

__all__ = ["save", "load", "UnpicklingError", "FORMAT_VERSION", "add_safe_globals",
           "clear_safe_globals", "get_safe_globals", "safe_globals"]

FORMAT_VERSION = "3"
_EMBER_MARK = "ember"
DEFAULT_PROTOCOL = 2


class UnpicklingError(pickle.UnpicklingError):
    """A checkpoint holds something the restricted loader refuses."""


# ---- saving ---------------------------------------------------------------
class _StorageRef:
    """Stands for one storage inside the pickle; written as a persistent id."""

    __slots__ = ("key", "dtype", "numel", "location")

    def __init__(self, key, dtype, numel, location="cpu"):
        self.key, self.dtype, self.numel, self.location = key, dtype, numel, location


class _LoadedStorage:
    """A storage read from a checkpoint: a 1-D raw CPU tensor plus the device
    map_location sends its tensors to (None: stay on the CPU)."""

    __slots__ = ("data", "location", "target")

    def __init__(self, data, location):
        self.data, self.location, self.target = data, location, None


def _rebuild_tensor(storage, offset, size, stride, requires_grad, cls_name=None):
    """Rebuilds a tensor viewing a loaded storage."""
    if not isinstance(storage, _LoadedStorage):
        raise RuntimeError("corrupt checkpoint: a tensor does not refer to a storage")
    data = _view_of(storage.data, offset, size, stride)
    cls = Tensor
    if cls_name == "ember.nn.Parameter":
        cls = _parameter_class() or Tensor
    t = _new_like(cls, data, False)
    if storage.target is not None and storage.target != "cpu":
        try:
            t = t.to(storage.target)
        except RuntimeError as e:
            raise RuntimeError(f"{e}; the checkpoint holds tensors saved on "
                               f"{storage.location}: load them with map_location='cpu' "
                               "on a machine without that device") from None
    if requires_grad:
        t.requires_grad_(True)
    return t


def _parameter_class():
    try:
        from ember.nn import Parameter
    except ImportError:
        return None
    return Parameter


def _view_of(storage, offset, size, stride):
    """A raw tensor of storage's dtype viewing (offset, size, stride) of it."""
    size = [int(s) for s in size]
    stride = [int(s) for s in stride]
    offset = int(offset)
    n = storage.numel()
    if any(s < 0 for s in size) or any(s < 0 for s in stride) or offset < 0:
        raise RuntimeError("corrupt checkpoint: negative size, stride or offset")
    if 0 not in size:
        last = offset + sum((sz - 1) * st for sz, st in zip(size, stride))
        if last >= n:
            raise RuntimeError(f"corrupt checkpoint: a tensor of size {tuple(size)} at offset "
                               f"{offset} reaches beyond its storage of {n} elements")
    return storage.as_strided(size, stride, offset)


class _Pickler(pickle.Pickler):
    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.storages = {}  # C storage address -> (key, raw tensor over it, dtype)

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        return NotImplemented

    def _reduce_tensor(self, t):
        data = t._data
        if data.__class__.__name__ == "SparseCOO":  # its indices and values are saved
            return (_rebuild_sparse_coo, (_tensor._make(data.indices),
                                          _tensor._make(data.values), tuple(data.shape),
                                          data.coalesced, bool(t.requires_grad)))
        location = str(t.device)
        if location != "cpu":   # written from a host copy, loaded back to the device
            data = data.to("cpu") if hasattr(data, "to") else data.cpu()
            location = "cuda:0" if location == "cuda" else location
        cpu = _cpu()
        addr = (cpu.storage_key(data), data.dtype.name)
        entry = self.storages.get(addr)
        if entry is None:
            entry = self.storages[addr] = (str(len(self.storages)), data, data.dtype)
        key = entry[0]
        numel = cpu.storage_numel(data)
        cls_name = None
        if type(t) is not Tensor and type(t).__name__ == "Parameter":
            cls_name = "ember.nn.Parameter"
        return (_rebuild_tensor,
                (_StorageRef(key, data.dtype.name, numel, location), data.storage_offset(),
                 tuple(data.shape),
                 tuple(data.stride()), bool(t.requires_grad), cls_name))

    def persistent_id(self, obj):
        if isinstance(obj, _StorageRef):
            return ("storage", obj.dtype, obj.key, obj.location, obj.numel)
        return None


def _cpu():
    """The CPU backend: storages are saved from and loaded into its tensors."""
    return get_backend("cpu")


def _dtype_by_name(name):
    return _cpu().dtype_from_name(name)


def _storage_bytes(data):
    return _cpu().storage_bytes(data)


def _write_archive(fileobj, obj, protocol):
    buf = io.BytesIO()
    pickler = _Pickler(buf, protocol)
    pickler.dump(obj)
    with zipfile.ZipFile(fileobj, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", buf.getvalue())
        z.writestr("archive/byteorder", sys.byteorder)
        z.writestr("archive/version", FORMAT_VERSION)
        z.writestr("archive/.format", _EMBER_MARK)
        for key, data, _ in pickler.storages.values():
            with z.open(f"archive/data/{key}", "w", force_zip64=True) as out:
                out.write(_storage_bytes(data))


_TEMP_TAG = ".ember-save-"  # .<name>.ember-save-<pid>-<random>.tmp next to <name>


def save(obj, f, pickle_module=None, pickle_protocol=DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization=True):
    """Saves obj (tensors, state_dicts, containers, numbers, ...) to f: a path
    or a writable binary file.  Saving to a path is atomic: the data goes
    to a temporary file in the same folder, renamed over f when complete.
    Temporaries that killed saves to the same path left behind are removed
    first."""
    if pickle_module is not None and pickle_module is not pickle:
        raise NotImplementedError("ember.save supports only the pickle module")
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        folder = os.path.dirname(os.path.abspath(path))
        _remove_dead_temporaries(path, folder)
        fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(path) + f"{os.getpid()}-",
                                   suffix=".tmp", dir=folder)
        try:
            # held until the rename: a live writer's temporary is never removed
            fcntl.flock(fd, fcntl.LOCK_EX)
            with os.fdopen(fd, "wb") as out:
                _write_archive(out, obj, pickle_protocol)
                out.flush()
                os.fsync(out.fileno())
                if os.path.exists(path):
                    try:
                        os.chmod(tmp, os.stat(path).st_mode & 0o7777)
                    except OSError:
                        pass
                else:
                    umask = os.umask(0)
                    os.umask(umask)
                    os.chmod(tmp, 0o666 & ~umask)
                os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    else:
        _write_archive(f, obj, pickle_protocol)


def _temp_prefix(path):
    return "." + os.path.basename(path) + _TEMP_TAG


def _remove_dead_temporaries(path, folder):
    """Removes the temporaries of saves to `path` whose writer was killed:
    ours by name, unlocked (a writer locks its temporary until the rename)
    and written by a process that has exited (its pid gone, or reused by a
    process that started later)."""
    process_gone = _cpu().sharing.process_gone
    prefix = _temp_prefix(path)
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if not (name.startswith(prefix) and name.endswith(".tmp")):
            continue
        pid = name[len(prefix):].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        tmp = os.path.join(folder, name)
        try:
            fd = os.open(tmp, os.O_RDONLY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if process_gone(int(pid), os.fstat(fd).st_mtime):
                os.unlink(tmp)
        except OSError:
            pass
        finally:
            os.close(fd)


# ---- loading --------------------------------------------------------------
_TORCH_STORAGES = {
    "FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
    "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8",
    "BoolStorage": "bool",
}
_TORCH_DTYPES = {"float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
                 "uint8", "bool", "float", "double", "half", "long", "int", "short"}


class _TorchStorageType:
    def __init__(self, dtype_name):
        self.dtype_name = dtype_name


def _rebuild_sparse_coo(indices, values, size, is_coalesced, requires_grad):
    import ember
    return ember.sparse_coo_tensor(indices, values, size, is_coalesced=is_coalesced,
                                   requires_grad=requires_grad)


def _torch_layout(name):
    """torch.serialization._get_layout: the layout a PyTorch checkpoint names."""
    from ._layout import sparse_coo, strided
    layout = {"torch.sparse_coo": sparse_coo, "torch.strided": strided}.get(name)
    if layout is None:
        raise NotImplementedError(f"ember.load: the checkpoint holds a tensor of layout {name}, "
                                  "which Ember does not have")
    return layout


def _rebuild_sparse_tensor(layout, data):
    """torch._utils._rebuild_sparse_tensor: a sparse COO tensor of a PyTorch
    checkpoint, (indices, values, size[, is_coalesced])."""
    from ._layout import sparse_coo
    if layout != sparse_coo:
        raise NotImplementedError(f"ember.load: sparse layout {layout!r} is not supported")
    indices, values, size = data[:3]
    is_coalesced = data[3] if len(data) > 3 else None
    return _rebuild_sparse_coo(indices, values, size, is_coalesced, False)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False,
                       backward_hooks=None, metadata=None):
    return _rebuild_tensor(storage, storage_offset, size, stride, requires_grad)


def _rebuild_parameter(data, requires_grad, backward_hooks=None, *extra):
    cls = _parameter_class()
    if cls is None:
        return _new_like(Tensor, data._data, requires_grad)
    return cls(data.detach(), requires_grad)


def _torch_device(spec, index=None):
    from ._device import device
    return device(spec) if index is None else device(spec, index)


def _torch_size(*args):
    return _cpu().namespace.Size(*args)


def _bytearray(*args):
    """bytearray from bytes or str only: bytearray(10**12) would allocate."""
    if args and not isinstance(args[0], (bytes, str)):
        raise UnpicklingError("bytearray may only be rebuilt from bytes")
    return bytearray(*args)


_SAFE_GLOBALS = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
    ("builtins", "slice"): slice,
    ("builtins", "complex"): complex,
    ("builtins", "bytearray"): _bytearray,
    ("builtins", "range"): range,
    ("_codecs", "encode"): _codecs.encode,  # bytes under protocol 2
    ("ember.serialization", "_rebuild_tensor"): _rebuild_tensor,
    ("ember.serialization", "_rebuild_sparse_coo"): _rebuild_sparse_coo,
    # how the CPU backend's dtypes pickle (its Size: _safe_global)
    ("ember.th.dtypes", "_by_name"): _dtype_by_name,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_sparse_tensor"): _rebuild_sparse_tensor,
    ("torch.serialization", "_get_layout"): _torch_layout,
    ("torch", "Size"): _torch_size,
}


def _safe_global(module, name):
    fn = _SAFE_GLOBALS.get((module, name))
    if fn is not None:
        return fn
    if (module, name) == ("ember.th._core", "Size"):  # a class: pickled with NEWOBJ
        return _cpu().namespace.Size
    if module == "ember" and name == "device":
        from ._device import device
        return device
    if module == "torch" and name == "device":
        return _torch_device
    if module == "torch" and name in _TORCH_STORAGES:
        return _TorchStorageType(_TORCH_STORAGES[name])
    if module == "torch" and name in _TORCH_DTYPES:
        return _dtype_by_name({"float": "float32", "double": "float64", "half": "float16",
                               "long": "int64", "int": "int32",
                               "short": "int16"}.get(name, name))
    return None


_PY2_MODULES = {"__builtin__": "builtins", "copy_reg": "copyreg"}


def _ember_module(module):
    """The ember module standing for a torch one: torch.nn.modules.linear ->
    ember.nn.modules.linear, torch -> ember (classes of whole pickled
    models, functions they hold such as torch.nn.functional.relu)."""
    if module == "torch" or module.startswith("torch."):
        return "ember" + module[len("torch"):]
    return module


# ---- globals the caller allows under weights_only ----------------------------
_user_safe_globals = []   # objects, or (object, "module.name") pairs
_scoped_safe_globals = []  # the same, for the safe_globals context in force


def _check_safe_entries(entries):
    if not isinstance(entries, (list, tuple)):
        raise TypeError(f"safe_globals must be a list of globals or (global, name) tuples, "
                        f"got {type(entries).__name__}")
    for e in entries:
        if isinstance(e, tuple) and not (len(e) == 2 and isinstance(e[1], str)):
            raise TypeError(f"a tuple in safe_globals must be (global, 'module.name'), got {e!r}")
    return list(entries)


def add_safe_globals(safe_globals):
    """Marks globals (classes, functions) as allowed under weights_only=True.
    An entry is the object, or (object, "module.name") to allow it under
    another name (e.g. a class saved under an older module path)."""
    _user_safe_globals.extend(_check_safe_entries(safe_globals))


def get_safe_globals():
    """The globals add_safe_globals allowed, in order."""
    return list(_user_safe_globals)


def clear_safe_globals():
    """Forgets every global add_safe_globals allowed."""
    _user_safe_globals.clear()


class safe_globals:
    """Context manager: the given globals are allowed under weights_only=True
    inside the block only."""

    def __init__(self, safe_globals):
        self.safe_globals = _check_safe_entries(safe_globals)

    def __enter__(self):
        _scoped_safe_globals.extend(self.safe_globals)

    def __exit__(self, *exc_info):
        del _scoped_safe_globals[len(_scoped_safe_globals) - len(self.safe_globals):]


def _allowed_by_user(module, name):
    """The allowed object whose name is module.name (or its ember twin),
    by name only: nothing is imported for a global that is not allowed."""
    wanted = {f"{module}.{name}", f"{_ember_module(module)}.{name}"}
    for entry in _user_safe_globals + _scoped_safe_globals:
        obj, full = entry if isinstance(entry, tuple) else \
            (entry, f"{getattr(entry, '__module__', '')}.{getattr(entry, '__qualname__', '')}")
        if full in wanted:
            return obj
    return None


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, storages, weights_only):
        super().__init__(file)
        self._storages = storages
        self._weights_only = weights_only

    def find_class(self, module, name):
        if module in _PY2_MODULES:  # protocol 2 spells builtins as Python 2 did
            module = _PY2_MODULES.get(module, module)
        fn = _safe_global(module, name)
        if fn is not None:
            return fn
        if self._weights_only:
            obj = _allowed_by_user(module, name)
            if obj is not None:
                return obj
            raise UnpicklingError(
                f"Weights only load failed: ember.load refuses the global '{module}.{name}' "
                f"(only tensors, containers and primitive types are allowed by default). "
                f"If you trust the file, pass weights_only=False to load it, or allow the "
                f"global with ember.serialization.add_safe_globals([{name}]) or the "
                f"ember.serialization.safe_globals([{name}]) context manager.")
        twin = _ember_module(module)
        if twin != module:
            try:
                return super().find_class(twin, name)
            except (ImportError, AttributeError):
                raise UnpicklingError(
                    f"ember.load: the checkpoint holds {module}.{name}, and Ember has no "
                    f"{twin}.{name} to stand for it") from None
        return super().find_class(module, name)

    def persistent_load(self, pid):
        return self._storages(pid)


def _open_zip(f):
    try:
        return zipfile.ZipFile(f, "r")
    except zipfile.BadZipFile as e:
        raise RuntimeError(f"{_name_of(f)} is not an ember/PyTorch zip checkpoint or it is "
                           f"truncated or corrupt ({e})") from None


def _name_of(f):
    return repr(os.fspath(f)) if isinstance(f, (str, os.PathLike)) else "(file object)"


def _read(z, name, f):
    try:
        return z.read(name)
    except KeyError:
        raise RuntimeError(f"checkpoint {_name_of(f)} is corrupt: record {name!r} is missing") \
            from None
    except (zipfile.BadZipFile, EOFError, zlib_error()) as e:
        raise RuntimeError(f"checkpoint {_name_of(f)} is corrupt: record {name!r} cannot be read "
                           f"({e})") from None


def _read_into(z, info, buf, f):
    """Reads a record straight into buf (its CRC checked at the end)."""
    view = memoryview(buf).cast("B")
    try:
        with z.open(info) as src:
            done = 0
            while done < len(view):
                n = src.readinto(view[done:])
                if not n:
                    raise EOFError(f"{info.filename} ends after {done} bytes")
                done += n
            while src.read(1 << 20):  # to the end of the record: checks its CRC
                pass
    except (zipfile.BadZipFile, EOFError, OSError, zlib_error()) as e:
        raise RuntimeError(f"checkpoint {_name_of(f)} is corrupt: record {info.filename!r} "
                           f"cannot be read ({e})") from None


def zlib_error():
    import zlib
    return zlib.error


def _target_of(map_location, storage, location):
    """The device map_location sends a storage saved at `location` to."""
    from ._device import device as _device
    if map_location is None:   # back to where it was saved
        return None if location == "cpu" else location
    if isinstance(map_location, (str, _device)):
        return str(map_location)
    if isinstance(map_location, dict):
        t = map_location.get(location)
        return None if t is None else str(t)
    if callable(map_location):
        t = map_location(storage, location)
        if t is None or t is storage:
            return None
        if isinstance(t, (str, _device)):
            return str(t)
        raise TypeError(f"map_location returned {type(t).__name__}; expected the storage it "
                        f"was given, a device or a device string")
    raise TypeError(f"map_location must be None, a string, an ember.device, a dict or a "
                    f"callable, got {type(map_location).__name__}")


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None,
         **pickle_load_args):
    """Loads what ember.save (or torch.save, zip format) wrote to f (a path or
    a readable binary file).  Restricted to tensors, containers and
    primitive types unless weights_only=False."""
    if pickle_module is not None and pickle_module is not pickle:
        raise NotImplementedError("ember.load supports only the pickle module")
    if weights_only is None:
        weights_only = True
    if mmap:
        raise NotImplementedError("ember.load(mmap=True) is not supported; storages are read "
                                  "into memory")
    from ._device import device as _device
    if not (map_location is None or callable(map_location)
            or isinstance(map_location, (str, _device, dict))):
        raise TypeError(f"map_location must be None, a string, an ember.device, a dict or a "
                        f"callable, got {type(map_location).__name__}")
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return _load(fh, f, map_location, weights_only)
    return _load(f, f, map_location, weights_only)


def _load(fh, f, map_location, weights_only):
    head = fh.read(4)
    fh.seek(-len(head), 1)
    if head[:2] != b"PK":
        if not head:
            raise RuntimeError(f"{_name_of(f)} is empty: not an ember/PyTorch checkpoint")
        raise RuntimeError(f"{_name_of(f)} is not an ember/PyTorch zip checkpoint (the legacy "
                           f"PyTorch format and plain pickles are not supported)")
    z = _open_zip(fh)
    with z:
        names = z.namelist()
        pkl = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
        if len(pkl) != 1:
            raise RuntimeError(f"checkpoint {_name_of(f)} is corrupt: no data.pkl record")
        prefix = pkl[0][:-len("data.pkl")]
        order = z.read(prefix + "byteorder").decode() if prefix + "byteorder" in names \
            else "little"
        if order != sys.byteorder:
            raise RuntimeError(f"checkpoint {_name_of(f)} is {order}-endian; this machine is "
                               f"{sys.byteorder}-endian")
        loaded = {}

        def storage(pid):
            if not isinstance(pid, tuple) or len(pid) != 5 or pid[0] != "storage":
                raise UnpicklingError(f"checkpoint {_name_of(f)} is corrupt: unknown persistent "
                                      f"id {pid!r}")
            _, stype, key, location, numel = pid
            dname = stype.dtype_name if isinstance(stype, _TorchStorageType) else stype
            try:
                d = _dtype_by_name(dname)
            except (KeyError, TypeError):
                raise UnpicklingError(f"checkpoint {_name_of(f)}: unsupported storage type "
                                      f"{stype!r}") from None
            cache_key = (key, d.name)
            if cache_key in loaded:
                return loaded[cache_key]
            name = f"{prefix}data/{key}"
            try:
                info = z.getinfo(name)
            except KeyError:
                raise RuntimeError(f"checkpoint {_name_of(f)} is corrupt: record {name!r} is "
                                   f"missing") from None
            if not isinstance(numel, int) or numel < 0 or \
                    info.file_size < numel * d.itemsize:
                raise RuntimeError(f"checkpoint {_name_of(f)} is corrupt: storage {key} holds "
                                   f"{info.file_size} bytes, fewer than {numel} x "
                                   f"{d.itemsize}")
            cpu = _cpu()
            t = cpu.namespace.empty(numel, dtype=d)
            _read_into(z, info, cpu.storage_bytes(t), f)
            st = _LoadedStorage(t, location)
            st.target = _target_of(map_location, st, location)
            loaded[cache_key] = st
            return st

        data = _read(z, pkl[0], f)
        try:
            return _Unpickler(io.BytesIO(data), storage, weights_only).load()
        except (UnpicklingError, RuntimeError, NotImplementedError):
            raise
        except (pickle.UnpicklingError, EOFError, ValueError, TypeError, IndexError,
                KeyError, AttributeError) as e:
            raise RuntimeError(f"checkpoint {_name_of(f)} is corrupt: the pickled structure "
                               f"cannot be read ({type(e).__name__}: {e})") from None
