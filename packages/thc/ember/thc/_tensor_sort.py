"""Sorting and searching on the device: sort/argsort/msort, topk,
kthvalue (libTHC's stable per-row merge sort; NaN above every number),
median, mode, unique, searchsorted/bucketize, bincount, histc and
multinomial, with ember.th's signatures and result tuples."""
import collections

import ember.th as _th

from ._lib import check, ffi, lib
from ._tensor import Tensor, registrar, scalar_tensor, upload, wrap
from ._tensor_shape import gen_ptr

NULL = ffi.NULL

SortResult = collections.namedtuple("sort", ["values", "indices"])
TopkResult = collections.namedtuple("topk", ["values", "indices"])
KthvalueResult = collections.namedtuple("kthvalue", ["values", "indices"])
MedianResult = collections.namedtuple("median", ["values", "indices"])
ModeResult = collections.namedtuple("mode", ["values", "indices"])


def _pair(call, result):
    v, i = ffi.new("thc_tensor **"), ffi.new("thc_tensor **")
    check(call(v, i))
    return result(wrap(v[0]), wrap(i[0]))


def sort(input, dim=-1, descending=False, stable=False, *, out=None):
    return _pair(lambda v, i: lib.thc_sort(input._p, dim, bool(descending), bool(stable), v, i),
                 SortResult)


def argsort(input, dim=-1, descending=False, stable=False):
    return sort(input, dim, descending, stable).indices


def msort(input):
    return sort(input, 0).values


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    return _pair(lambda v, i: lib.thc_topk(input._p, int(k), dim, bool(largest), bool(sorted),
                                           v, i), TopkResult)


def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    return _pair(lambda v, i: lib.thc_kthvalue(input._p, int(k), dim, bool(keepdim), v, i),
                 KthvalueResult)


def median(input, dim=None, keepdim=False):
    """The lower median: of all elements (0-d), or along dim with its index;
    a NaN propagates, as in PyTorch."""
    if dim is None:
        return wrap(lib.thc_median(input._p))
    return _pair(lambda v, i: lib.thc_median_dim(input._p, dim, bool(keepdim), v, i),
                 MedianResult)


def mode(input, dim=-1, keepdim=False):
    """The most frequent value along dim (the smallest on ties) and the index
    of its last occurrence."""
    return _pair(lambda v, i: lib.thc_mode(input._p, dim, bool(keepdim), v, i), ModeResult)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    if dim is not None:
        raise NotImplementedError("unique(dim=...) is not supported yet; "
                                  "flatten the tensor or use dim=None")
    v = ffi.new("thc_tensor **")
    inv = ffi.new("thc_tensor **") if return_inverse else NULL
    cnt = ffi.new("thc_tensor **") if return_counts else NULL
    check(lib.thc_unique(input._p, bool(sorted), v, inv, cnt))
    out = [wrap(v[0])]
    if return_inverse:
        out.append(wrap(inv[0]))
    if return_counts:
        out.append(wrap(cnt[0]))
    return out[0] if len(out) == 1 else tuple(out)


def _on_device(t):
    """A CPU tensor argument (sorter, weights, values) is uploaded."""
    return upload(t) if isinstance(t, _th.Tensor) else t


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None):
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("side and right can't be set to opposites, got side of left "
                               "while right was True")
        right = side == "right"
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


def histc(input, bins=100, min=0, max=0, *, out=None):
    r = wrap(lib.thc_histc(input._p, int(bins), float(min), float(max)))
    return r if out is None else out.copy_(r)


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    r = wrap(lib.thc_multinomial(input._p, int(num_samples), bool(replacement),
                                 gen_ptr(generator)))
    return r if out is None else out.copy_(r)


functions = {}
_register = registrar(Tensor, functions)
for _f in (sort, argsort, msort, topk, kthvalue, median, mode, unique, bincount, histc,
           multinomial):
    _register(_f)
functions["searchsorted"] = searchsorted
functions["bucketize"] = bucketize
