"""Sorting and searching: sort/argsort, topk, kthvalue, mode, unique,
searchsorted/bucketize, bincount, histc."""
import collections
import numbers

from ._core import Tensor, operand, scalar_tensor, wrap
from ._lib import NULL, check, ffi, lib

_functions = {}
SortResult = collections.namedtuple("sort", ["values", "indices"])
TopkResult = collections.namedtuple("topk", ["values", "indices"])
KthvalueResult = collections.namedtuple("kthvalue", ["values", "indices"])
ModeResult = collections.namedtuple("mode", ["values", "indices"])


def _pair():
    return ffi.new("th_tensor **"), ffi.new("th_tensor **")


def sort(input, dim=-1, descending=False, stable=False, *, out=None):
    v, i = _pair()
    check(lib.th_sort(input._p, dim, bool(descending), bool(stable), v, i))
    return SortResult(wrap(v[0]), wrap(i[0]))


def argsort(input, dim=-1, descending=False, stable=False):
    return sort(input, dim, descending, stable).indices


def msort(input):
    return sort(input, 0).values


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    v, i = _pair()
    check(lib.th_topk(input._p, int(k), dim, bool(largest), bool(sorted), v, i))
    return TopkResult(wrap(v[0]), wrap(i[0]))


def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    v, i = _pair()
    check(lib.th_kthvalue(input._p, int(k), dim, bool(keepdim), v, i))
    return KthvalueResult(wrap(v[0]), wrap(i[0]))


def mode(input, dim=-1, keepdim=False):
    """The most frequent value along dim (the smallest on ties) and the index
    of its last occurrence."""
    v, i = _pair()
    check(lib.th_mode(input._p, dim, bool(keepdim), v, i))
    return ModeResult(wrap(v[0]), wrap(i[0]))


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    if dim is not None:
        raise NotImplementedError("unique(dim=...) is not supported yet; "
                                  "flatten the tensor or use dim=None")
    v = ffi.new("th_tensor **")
    inv = ffi.new("th_tensor **") if return_inverse else NULL
    cnt = ffi.new("th_tensor **") if return_counts else NULL
    check(lib.th_unique(input._p, bool(sorted), v, inv, cnt))
    out = [wrap(v[0])]
    if return_inverse:
        out.append(wrap(inv[0]))
    if return_counts:
        out.append(wrap(cnt[0]))
    return out[0] if len(out) == 1 else tuple(out)


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


def histc(input, bins=100, min=0, max=0, *, out=None):
    r = wrap(lib.th_histc(input._p, int(bins), float(min), float(max)))
    return r if out is None else out.copy_(r)


for _f in (sort, argsort, msort, topk, kthvalue, mode, unique, bincount, histc):
    _functions[_f.__name__] = _f
    setattr(Tensor, _f.__name__, _f)
_functions["searchsorted"] = searchsorted
_functions["bucketize"] = bucketize

functions = _functions
