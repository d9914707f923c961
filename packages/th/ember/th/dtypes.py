"""Dtype objects: ember.th.float32, ember.th.int64, ..."""
import builtins

import numpy as np

from ._lib import lib


class dtype:
    """A tensor element type.  Compare with `is` or `==`."""

    __slots__ = ("name", "code", "itemsize", "is_floating_point", "is_complex", "is_signed",
                 "numpy", "_title")

    def __init__(self, name, code, np_dtype, title):
        self.name = name
        self.code = code
        self.itemsize = lib.th_dtype_itemsize(code)
        self.is_floating_point = builtins.bool(lib.th_dtype_is_floating(code))
        self.is_complex = builtins.bool(lib.th_dtype_is_complex(code))
        self.is_signed = name not in ("uint8", "bool")
        self.numpy = np_dtype  # None where NumPy has no such type
        self._title = title

    def __repr__(self):
        return f"{_MODULE_NAME}.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))

    def to_real(self):
        """The dtype of a complex dtype's parts (float32 for complex64);
        real dtypes give themselves."""
        return BY_CODE[lib.th_complex_part_dtype(self.code)] if self.is_complex else self

    def to_complex(self):
        """The complex dtype holding values of this floating dtype
        (complex128 for float64, complex64 for the narrower ones)."""
        if self.is_complex:
            return self
        if not self.is_floating_point:
            raise RuntimeError(f"to_complex is only supported for floating point dtypes, "
                               f"got {self!r}")
        return complex128 if self is float64 else complex64


_MODULE_NAME = "ember"  # how reprs spell the namespace, as torch.float32

float32 = dtype("float32", lib.TH_FLOAT32, np.dtype(np.float32), "Float")
float64 = dtype("float64", lib.TH_FLOAT64, np.dtype(np.float64), "Double")
float16 = dtype("float16", lib.TH_FLOAT16, np.dtype(np.float16), "Half")
bfloat16 = dtype("bfloat16", lib.TH_BFLOAT16, None, "BFloat16")
int8 = dtype("int8", lib.TH_INT8, np.dtype(np.int8), "Char")
uint8 = dtype("uint8", lib.TH_UINT8, np.dtype(np.uint8), "Byte")
int16 = dtype("int16", lib.TH_INT16, np.dtype(np.int16), "Short")
int32 = dtype("int32", lib.TH_INT32, np.dtype(np.int32), "Int")
int64 = dtype("int64", lib.TH_INT64, np.dtype(np.int64), "Long")
bool_ = dtype("bool", lib.TH_BOOL, np.dtype(np.bool_), "Bool")
complex64 = dtype("complex64", lib.TH_COMPLEX64, np.dtype(np.complex64), "ComplexFloat")
complex128 = dtype("complex128", lib.TH_COMPLEX128, np.dtype(np.complex128), "ComplexDouble")

# PyTorch's aliases
float = float32
double = float64
half = float16
short = int16
int = int32
long = int64
bool = bool_
cfloat = complex64
cdouble = complex128

ALL = (float32, float64, float16, bfloat16, int8, uint8, int16, int32, int64, bool_,
       complex64, complex128)
BY_CODE = {d.code: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}
_FROM_NUMPY = {d.numpy: d for d in ALL if d.numpy is not None}


def _by_name(name):
    return _BY_NAME[name]


def from_numpy_dtype(np_dtype):
    try:
        return _FROM_NUMPY[np.dtype(np_dtype)]
    except KeyError:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype)}. The "
            "only supported types are: float64, float32, float16, complex64, "
            "complex128, int64, int32, int16, int8, uint8, and bool.") from None


def get_default_dtype():
    return BY_CODE[lib.th_get_default_dtype()]


def set_default_dtype(d):
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the "
                        f"default type, got {d!r}")
    lib.th_set_default_dtype(d.code)


def promote_types(a, b):
    return BY_CODE[lib.th_promote_types(a.code, b.code)]
