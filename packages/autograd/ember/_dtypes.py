"""Dtypes: one set of objects shared by every backend, defined by ember-th
(``ember.float32 is ember.th.float32``), and their limits (finfo, iinfo)."""
import builtins as _builtins

import numpy as _np

from ember.th import (bfloat16, bool, cdouble, cfloat, complex64, complex128,  # noqa: F401
                      double, dtype, float, float16, float32, float64, half, int, int8, int16,
                      int32, int64, long, promote_types, short, uint8)

ALL = (float32, float64, float16, bfloat16, int8, uint8, int16, int32, int64, bool, complex64,
       complex128)


# bfloat16 has no NumPy type: its limits written out (8 exponent bits, 8
# significand bits)
_BFLOAT16 = {"bits": 16, "eps": 2.0 ** -7, "max": (2 - 2.0 ** -7) * 2.0 ** 127,
             "tiny": 2.0 ** -126, "resolution": 0.01}


class finfo:
    """Limits of a floating-point dtype, as torch.finfo: bits, eps, max,
    min, tiny (= smallest_normal), resolution, dtype (its name)."""

    def __init__(self, type=None):
        if type is None:
            from ._creation import get_default_dtype
            type = get_default_dtype()
        if not isinstance(type, dtype):
            raise TypeError(f"finfo(): argument 'type' must be ember.dtype, not "
                            f"{_builtins.type(type).__name__}")
        if type.is_complex:  # the limits of its parts, as PyTorch
            type = type.to_real()
        if not type.is_floating_point:
            raise TypeError(f"ember.finfo() requires a floating point input type. Use "
                            f"ember.iinfo to handle '{type}'")
        if type is bfloat16:
            f = _BFLOAT16
            self.bits, self.eps, self.max = f["bits"], f["eps"], f["max"]
            self.tiny, self.resolution = f["tiny"], f["resolution"]
        else:
            info = _np.finfo(type.numpy)
            self.bits, self.eps, self.max = info.bits, _builtins.float(info.eps), \
                _builtins.float(info.max)
            self.tiny = _builtins.float(info.smallest_normal)
            self.resolution = 10.0 ** -info.precision   # as a Python float, not rounded to type
        self.min = -self.max
        self.smallest_normal = self.tiny
        self.dtype = type.name

    def __repr__(self):
        return (f"finfo(resolution={self.resolution}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.tiny:g}, tiny={self.tiny:g}, "
                f"dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype, as torch.iinfo: bits, max, min, dtype."""

    def __init__(self, type):
        if not isinstance(type, dtype):
            raise TypeError(f"iinfo(): argument 'type' must be ember.dtype, not "
                            f"{_builtins.type(type).__name__}")
        if type.is_floating_point or type.is_complex or type is bool:
            raise TypeError(f"ember.iinfo() requires an integer input type. Use ember.finfo "
                            f"to handle '{type}'")
        info = _np.iinfo(type.numpy)
        self.bits, self.max, self.min = info.bits, _builtins.int(info.max), _builtins.int(info.min)
        self.dtype = type.name

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"
