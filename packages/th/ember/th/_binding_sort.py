"""Sorting of ember.th's and ember.thc's tensors (sort/argsort/msort, topk,
kthvalue, mode, unique, histc): one definition over a C library's
th_sort/th_topk/... (or the thc_ ones)."""
import collections

SortResult = collections.namedtuple("sort", ["values", "indices"])
TopkResult = collections.namedtuple("topk", ["values", "indices"])
KthvalueResult = collections.namedtuple("kthvalue", ["values", "indices"])
ModeResult = collections.namedtuple("mode", ["values", "indices"])


def searchsorted_right(right, side):
    """searchsorted's `right` from its right= and side= arguments."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("side and right can't be set to opposites, got side of left "
                               "while right was True")
        right = side == "right"
    return right


def define_sorting(register, C, wrap, check):
    """Defines and registers the functions; returns them by name, with
    pair(call, result), which runs call(values**, indices**) and wraps both
    into the result tuple."""
    ffi, NULL, tensor_pp = C.ffi, C.ffi.NULL, C.tensor_ptr + "*"

    def pair(call, result):
        v, i = ffi.new(tensor_pp), ffi.new(tensor_pp)
        check(call(v, i))
        return result(wrap(v[0]), wrap(i[0]))

    def sort(input, dim=-1, descending=False, stable=False, *, out=None):
        return pair(lambda v, i: C.sort(input._p, dim, bool(descending), bool(stable), v, i),
                    SortResult)

    def argsort(input, dim=-1, descending=False, stable=False):
        return sort(input, dim, descending, stable).indices

    def msort(input):
        return sort(input, 0).values

    def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
        return pair(lambda v, i: C.topk(input._p, int(k), dim, bool(largest), bool(sorted),
                                        v, i), TopkResult)

    def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
        return pair(lambda v, i: C.kthvalue(input._p, int(k), dim, bool(keepdim), v, i),
                    KthvalueResult)

    def mode(input, dim=-1, keepdim=False):
        """The most frequent value along dim (the smallest on ties) and the
        index of its last occurrence."""
        return pair(lambda v, i: C.mode(input._p, dim, bool(keepdim), v, i), ModeResult)

    def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
        if dim is not None:
            raise NotImplementedError("unique(dim=...) is not supported yet; "
                                      "flatten the tensor or use dim=None")
        v = ffi.new(tensor_pp)
        inv = ffi.new(tensor_pp) if return_inverse else NULL
        cnt = ffi.new(tensor_pp) if return_counts else NULL
        check(C.unique(input._p, bool(sorted), v, inv, cnt))
        out = [wrap(v[0])]
        if return_inverse:
            out.append(wrap(inv[0]))
        if return_counts:
            out.append(wrap(cnt[0]))
        return out[0] if len(out) == 1 else tuple(out)

    def histc(input, bins=100, min=0, max=0, *, out=None):
        r = wrap(C.histc(input._p, int(bins), float(min), float(max)))
        return r if out is None else out.copy_(r)

    fns = {f.__name__: f for f in (sort, argsort, msort, topk, kthvalue, mode, unique, histc)}
    for f in fns.values():
        register(f)
    fns["pair"] = pair
    return fns
