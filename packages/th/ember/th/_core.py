"""The Tensor class skeleton and the helpers every op family shares.

A Tensor owns one reference to a C ``th_tensor``; methods of each family
(element-wise, reductions, ...) live in their own modules and are attached
to the class when ember.th is imported.
"""
from ._lib import NULL, ffi, last_error, lib
from . import dtypes as _dt
from ._binding import (CLibrary, c_arrays, define_metadata, dtype_code, scalar_operands,
                       shape_parser, tensor_wrapper, wrap_dim as _wrap_dim)

_DTYPES = [_dt.BY_CODE[i] for i in range(lib.TH_NUM_DTYPES)]
C = CLibrary(ffi, lib, "th")


class Size(tuple):
    """A tensor's shape: a tuple of ints with numel()."""

    __slots__ = ()

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self):
        return f"{_dt._MODULE_NAME}.Size({list(self)})"


class Tensor:
    """A strided CPU tensor backed by libTH (no autograd); its metadata
    methods are ember.th._binding's."""

    __slots__ = ("_p", "__weakref__")

    @property
    def is_floating_point_type(self):
        return self.dtype.is_floating_point

    @property
    def device(self):
        return "cpu"

    @property
    def is_cuda(self):
        return False

    def is_shared(self):
        return self._p.storage.kind in (lib.TH_STORAGE_SHARED, lib.TH_STORAGE_FILE)


# libTH's own heap (not shared memory, a file or wrapped memory)
define_metadata(Tensor, C, Size, _DTYPES, lambda storage: storage.kind == 0)


def _raise_last():
    raise last_error()


wrap = tensor_wrapper(Tensor, _raise_last)
wrap.__doc__ = "A Tensor owning the new reference p; raises the C error if NULL."
_Tensor = Tensor
int64_array, int_array = c_arrays(ffi)
parse_shape = shape_parser(Tensor)
scalar_ptr, _keep_alive = scalar_operands(C, wrap, _raise_last)


def operand(x):
    """th_tensor* for a Tensor or a Python number."""
    if x.__class__ is _Tensor:
        return x._p
    if isinstance(x, _Tensor):
        return x._p
    return scalar_ptr(x)


def scalar_tensor(v, dtype=None):
    """A fresh 0-d Tensor holding v (converted to dtype when given)."""
    if isinstance(v, Tensor):
        return v if dtype is None or v.dtype is dtype else wrap(lib.th_to_dtype(v._p, dtype.code))
    p = scalar_ptr(v)
    if dtype is None:  # wrapped numbers: floats take the default dtype
        dtype = _DTYPES[p.dtype]
        if p.dtype == lib.TH_FLOAT64:
            dtype = _dt.BY_CODE[lib.th_get_default_dtype()]
        elif p.dtype == lib.TH_COMPLEX128:
            dtype = _dt.BY_CODE[lib.th_get_default_dtype()].to_complex()
    code = dtype.code
    return wrap(lib.th_to_dtype(p, code))
