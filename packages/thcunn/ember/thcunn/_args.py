"""Argument and output-shape helpers shared by ember.thcunn's modules:
tensors to C pointers, outputs allocated on the device, int tuples,
window lengths and reductions, as ember.thnn takes and words them."""
import ember.thc as _thc

from ._lib import ffi as _ffi, lib as _lib

NULL = _ffi.NULL
REDUCTIONS = {"none": _lib.THCUNN_REDUCTION_NONE, "mean": _lib.THCUNN_REDUCTION_MEAN,
              "sum": _lib.THCUNN_REDUCTION_SUM}


def _tensor(t):
    """The C tensor of an ember.thc tensor; anything else (None too) is
    refused here: libTHCUNN would read another library's tensor as its own."""
    if not isinstance(t, _thc.Tensor):
        raise TypeError(f"ember.thcunn kernels take CUDA tensors (ember.thc.Tensor), got "
                        f"{type(t).__module__}.{type(t).__name__}")
    return t._p


def _p(t):
    """_tensor, with NULL for None (an optional argument)."""
    return NULL if t is None else _tensor(t)


def _empty(shape, like, dtype=None):
    """An output on the device: `shape`, `like`'s dtype unless given."""
    return _thc.empty(tuple(shape), dtype=dtype or like.dtype)


def _pair(v, name):
    if isinstance(v, int):
        return [v, v]
    v = list(v)
    if len(v) == 1:
        return v * 2
    if len(v) != 2 or not all(isinstance(i, int) for i in v):
        raise ValueError(f"{name} must be an int or a pair of ints, got {v!r}")
    return v


def _ntuple(v, n, name):
    """int or sequence of n ints -> list of n ints (a 1-sequence repeats)."""
    if isinstance(v, int) and not isinstance(v, bool):
        return [v] * n
    try:
        v = list(v)
    except TypeError:
        raise TypeError(f"{name} must be an int or a sequence of {n} ints, got {v!r}") from None
    if len(v) == 1:
        v = v * n
    if len(v) != n or not all(isinstance(i, int) and not isinstance(i, bool) for i in v):
        raise ValueError(f"{name} must be an int or a sequence of {n} ints, got {v!r}")
    return v


def _window(n, k, s, p, d, ceil_mode=False):
    """Output length of a window sliding over n (libTHNN's rule, computed
    by libTHCUNN's overflow-checked thcunn_window_output_size); 0 when
    invalid or beyond int64 (the C kernel then reports the error in its
    words)."""
    try:
        return max(_lib.thcunn_window_output_size(n, k, s, p, d, int(ceil_mode)), 0)
    except OverflowError:  # an argument beyond int64: the kernel call refuses it
        return 0


def _reduction(reduction):
    """"none", "mean" or "sum" -> the C kernels' reduction."""
    try:
        return REDUCTIONS[reduction]
    except KeyError:
        raise ValueError(f"{reduction} is not a valid value for reduction") from None
