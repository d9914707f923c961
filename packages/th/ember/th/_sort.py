"""Sorting and searching: sort/argsort, topk, kthvalue, mode, unique, histc
(ember.th._binding_sort's, over libTH), searchsorted/bucketize, bincount."""

from ._binding import registrar
from ._binding_sort import define_sorting, searchsorted_right
from ._core import C, Tensor, scalar_tensor, wrap
from ._lib import NULL, check, lib

_functions = {}
define_sorting(registrar(Tensor, _functions), C, wrap, check)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None):
    right = searchsorted_right(right, side)
    if sorter is not None:
        n = sorted_sequence.shape[-1] if sorted_sequence.ndim else 1
        if sorter.numel() and (int(sorter.min()) < 0 or int(sorter.max()) >= n):
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
        sorted_sequence = sorted_sequence.gather(-1, sorter)
    scalar = not isinstance(input, Tensor)
    v = scalar_tensor(input) if scalar else input  # promoted with the sequence in C
    r = wrap(lib.th_searchsorted(sorted_sequence._p, v._p, bool(right), bool(out_int32)))
    return r


def bucketize(input, boundaries, *, out_int32=False, right=False):
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def bincount(input, weights=None, minlength=0):
    return wrap(lib.th_bincount(input._p, NULL if weights is None else weights._p, int(minlength)))


for _f in (bincount,):
    _functions[_f.__name__] = _f
    setattr(Tensor, _f.__name__, _f)
_functions["searchsorted"] = searchsorted
_functions["bucketize"] = bucketize

functions = _functions
