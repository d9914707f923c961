"""ember.th: the binding of libTH, Ember's strided CPU tensor library.

Raw tensors (no autograd) with PyTorch's names and semantics::

    import ember.th as th
    a = th.randn(3, 4)
    b = (a @ a.T).exp().sum(dim=1)

The ``ember`` front package builds autograd tensors on top of this.
"""
import builtins as _builtins
import os as _os

from ._lib import ffi as _ffi, lib as _lib
from . import dtypes as _dtypes
from .dtypes import (bfloat16, bool_, cdouble, cfloat, complex64, complex128, double, dtype,
                     float16, float32, float64, get_default_dtype, half, int8, int16, int32,
                     int64, long,
                     promote_types, set_default_dtype, short, uint8)
from ._core import Size, Tensor
from . import _elementwise, _views, _convert, _printing, _indexing, _complex, _fft

bool = bool_  # noqa: A001 - PyTorch's name, ember.th.bool
float = float32  # noqa: A001
int = int32  # noqa: A001

__version__ = _ffi.string(_lib.th_version()).decode()

_namespace = {}
for _m in (_elementwise, _views, _convert, _printing, _complex, _fft):
    _namespace.update(_m.functions)

# optional families: present once their C parts are built
for _name in ("_reduce", "_linalg", "_index_ops", "_sort", "_random", "_lapack"):
    try:
        _mod = __import__(f"{__name__}.{_name}", fromlist=["functions"])
    except ImportError as _e:  # pragma: no cover - only during development
        if "No module named" not in str(_e):
            raise
        continue
    _namespace.update(_mod.functions)

globals().update({k: v for k, v in _namespace.items() if not k.startswith("_")})


def ops():
    """libTH's op vocabulary (include/th_ops.def): one OpInfo per element-wise
    and reduction op, with its name, family, code, dtype classes, flags and
    scalar C expressions."""
    return _elementwise.OPS


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()


def get_num_threads():
    return _lib.th_get_num_threads()


def set_num_threads(n):
    if isinstance(n, _builtins.bool) or not isinstance(n, _builtins.int):
        raise TypeError(f"set_num_threads expects an int, got {type(n).__name__}")
    if _lib.th_set_num_threads(n):
        from ._lib import last_error
        raise last_error()


def has_blas():
    return _builtins_bool(_lib.th_has_blas())


def has_threads():
    """True unless libTH was built single-threaded (TH_NO_THREADS=1)."""
    return _builtins_bool(_lib.th_has_threads())


def parallel_info():
    """libTH's thread pool: settings and counters, as text."""
    buf = _ffi.new("char[]", 2048)
    if _lib.th_parallel_info(buf, 2048):
        from ._lib import last_error
        raise last_error()
    return _ffi.string(buf).decode()


_builtins_bool = _builtins.bool


def get_include():
    """Folder holding th.h, for building C code against libTH."""
    return _os.path.join(_os.path.dirname(__file__), "include")


def get_lib_dir():
    """Folder holding libTH.so (and pkgconfig/th.pc)."""
    return _os.path.join(_os.path.dirname(__file__), "lib")


def abi_version():
    return (_lib.th_abi_version_major(), _lib.th_abi_version_minor())
