"""Sorting and searching on the device: sort/argsort/msort, topk,
kthvalue (libTHC's stable per-row merge sort; NaN above every number),
median, mode, unique, searchsorted/bucketize, bincount, histc and
multinomial, with ember.th's signatures and result tuples."""
import collections

import ember.th as _th
from ember.th._binding_sort import define_sorting, searchsorted_right

from ._lib import check, ffi, lib
from ._tensor import C, Tensor, registrar, scalar_tensor, upload, wrap
from ._tensor_shape import gen_ptr

NULL = ffi.NULL
MedianResult = collections.namedtuple("median", ["values", "indices"])
functions = {}
_register = registrar(Tensor, functions)
_pair = define_sorting(_register, C, wrap, check)["pair"]


def median(input, dim=None, keepdim=False):
    """The lower median: of all elements (0-d), or along dim with its index;
    a NaN propagates, as in PyTorch."""
    if dim is None:
        return wrap(lib.thc_median(input._p))
    return _pair(lambda v, i: lib.thc_median_dim(input._p, dim, bool(keepdim), v, i),
                 MedianResult)


def _on_device(t):
    """A CPU tensor argument (sorter, weights, values) is uploaded."""
    return upload(t) if isinstance(t, _th.Tensor) else t


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None):
    right = searchsorted_right(right, side)
    if sorter is not None:
        sorted_sequence = sorted_sequence.gather(-1, _on_device(sorter))
    if isinstance(input, (Tensor, _th.Tensor)):
        v = _on_device(input)
    else:  # a number: a 0-d tensor of ember.th's dtype for it, promoted in C
        v = scalar_tensor(input, _th.scalar_tensor(input).dtype)
    return wrap(lib.thc_searchsorted(sorted_sequence._p, v._p, bool(right), bool(out_int32)))


def bucketize(input, boundaries, *, out_int32=False, right=False):
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def bincount(input, weights=None, minlength=0):
    w = None if weights is None else _on_device(weights)
    return wrap(lib.thc_bincount(input._p, NULL if w is None else w._p, int(minlength)))


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    r = wrap(lib.thc_multinomial(input._p, int(num_samples), bool(replacement),
                                 gen_ptr(generator)))
    return r if out is None else out.copy_(r)


for _f in (median, bincount, multinomial):
    _register(_f)
functions["searchsorted"] = searchsorted
functions["bucketize"] = bucketize
