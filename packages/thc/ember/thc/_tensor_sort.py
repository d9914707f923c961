"""Sorting on the device: sort/argsort/msort, topk, kthvalue (libTHC's
stable per-row merge sort; NaN above every number), with ember.th's
signatures and result tuples."""
import collections

from ._lib import check, ffi, lib
from ._tensor import registrar, wrap

SortResult = collections.namedtuple("sort", ["values", "indices"])
TopkResult = collections.namedtuple("topk", ["values", "indices"])
KthvalueResult = collections.namedtuple("kthvalue", ["values", "indices"])


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


functions = {}
_register = registrar(functions)
for _f in (sort, argsort, msort, topk, kthvalue):
    _register(_f)
