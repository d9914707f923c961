"""Argument helpers of ember.thnn's family modules: tensors to C pointers,
outputs allocated as ember.th tensors, int tuples, window lengths (libTHNN's
thnn_window_output_size) and reductions."""
import ember.th as _th

from ._lib import check as _check, ffi as _ffi, lib as _lib

NULL = _ffi.NULL


REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _p(t):
    return NULL if t is None else t._p


def _pair(v, name):
    if isinstance(v, int):
        return [v, v]
    v = list(v)
    if len(v) == 1:
        return v * 2
    if len(v) != 2 or not all(isinstance(i, int) for i in v):
        raise ValueError(f"{name} must be an int or a pair of ints, got {v!r}")
    return v


def _empty(shape, like, dtype=None):
    return _th.empty(*shape, dtype=dtype or like.dtype) if shape else \
        _th.empty((), dtype=dtype or like.dtype)


def _window(n, k, s, p, d, ceil):
    r = _lib.thnn_window_output_size(n, k, s, p, d, ceil)
    if r < 0:
        _check(_lib.thnn_last_status() or 4)
    return r


def _reduction(reduction):
    try:
        return REDUCTIONS[reduction]
    except KeyError:
        raise ValueError(f"{reduction} is not a valid value for reduction") from None


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


def _stride(stride, kernel, n):
    return list(kernel) if stride is None or stride == [] or stride == () \
        else _ntuple(stride, n, "stride")


def _window_or_zero(n, k, s, p, d, ceil_mode):
    """Output length of a window along one dim; 0 when invalid (the kernel
    then reports the error in its words)."""
    return max(_lib.thnn_window_output_size(n, k, s, p, d, int(ceil_mode)), 0)
