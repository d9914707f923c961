"""Tensor.__getitem__ / __setitem__: ints, slices, None, Ellipsis, bools,
integer-tensor and boolean-mask indexing, with PyTorch's semantics
(integers select first; adjacent advanced indices keep their place,
separated ones move to the front)."""
import numbers
import threading

import numpy as np

from . import dtypes as _dt
from ._core import Tensor, operand, wrap
from ._lib import check, ffi, lib


def _to_index_tensor(obj):
    if isinstance(obj, Tensor):
        return obj
    from ._convert import tensor
    t = tensor(obj)
    if t.numel() == 0 and t.dtype.is_floating_point:  # x[[]] indexes nothing
        t = t.long()
    return t


def _consumed(item):
    if item is None or item is Ellipsis or isinstance(item, bool):
        return 0
    if isinstance(item, Tensor) and item.dtype in (_dt.bool_, _dt.uint8):
        return max(item.ndim, 1) if item.ndim else 0
    return 1


def _normalize(self, idx):
    if not isinstance(idx, tuple):
        idx = (idx,)
    items = []
    for it in idx:
        if isinstance(it, (list, np.ndarray)) or (
                isinstance(it, tuple) and not isinstance(it, Tensor)):
            it = _to_index_tensor(it)
        elif isinstance(it, np.integer):
            it = int(it)
        elif isinstance(it, np.bool_):
            it = bool(it)
        items.append(it)
    used = sum(_consumed(i) for i in items)
    n_ell = sum(1 for i in items if i is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if used > self.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
    if n_ell:
        k = items.index(Ellipsis)
        items[k:k + 1] = [slice(None)] * (self.ndim - used)
    return items


def _apply_basic(self, items):
    """Views for the basic part; returns (view, [(dim, index tensor)])."""
    t, dim, adv = self, 0, []
    for it in items:
        if it is None:
            t = wrap(lib.th_unsqueeze(t._p, dim))
            dim += 1
        elif isinstance(it, bool):
            t = wrap(lib.th_unsqueeze(t._p, dim))
            if not it:
                t = wrap(lib.th_narrow(t._p, dim, 0, 0))
            dim += 1
        elif isinstance(it, numbers.Integral):
            if t.ndim == 0:
                raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` "
                                 "to convert a 0-dim tensor to a number")
            t = wrap(lib.th_select(t._p, dim, int(it)))
        elif isinstance(it, slice):
            start, stop, step = it.start, it.stop, it.step
            step = 1 if step is None else int(step)
            if step <= 0:
                raise ValueError("step must be greater than zero")
            start = 0 if start is None else int(start)
            stop = (1 << 62) if stop is None else int(stop)
            if not (start == 0 and stop == (1 << 62) and step == 1):
                t = wrap(lib.th_slice(t._p, dim, start, stop, step))
            dim += 1
        elif isinstance(it, Tensor):
            if it.dtype in (_dt.bool_, _dt.uint8):
                if it.ndim == 0:  # like a Python bool
                    t = wrap(lib.th_unsqueeze(t._p, dim))
                    if not it.item():
                        t = wrap(lib.th_narrow(t._p, dim, 0, 0))
                    dim += 1
                    continue
                for k in range(it.ndim):
                    if it.shape[k] != t.shape[dim + k]:
                        raise IndexError(
                            f"The shape of the mask {list(it.shape)} at index {k} does not "
                            f"match the shape of the indexed tensor {list(t.shape)} at "
                            f"index {dim + k}")
                nz = wrap(lib.th_nonzero(it._p))
                for k in range(it.ndim):
                    adv.append((dim + k, nz.select(1, k)))
                dim += it.ndim
            elif it.dtype.is_floating_point:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            else:
                adv.append((dim, it))
                dim += 1
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                f"Variables are valid indices (got {type(it).__name__})")
    return t, adv


def _prepare_advanced(t, adv):
    """Moves separated advanced dims to the front; returns (view, first, ptrs)."""
    dims = [d for d, _ in adv]
    if dims != list(range(dims[0], dims[0] + len(dims))):
        rest = [d for d in range(t.ndim) if d not in dims]
        t = t.permute(dims + rest)
        first = 0
    else:
        first = dims[0]
    tensors = [i for _, i in adv]
    arr = ffi.new("th_tensor *[]", [i._p for i in tensors])
    return t, first, arr, tensors


def getitem(self, idx):
    if isinstance(idx, Tensor) and idx.dtype is _dt.bool_ and idx.shape == self.shape \
            and self.ndim > 0:
        return wrap(lib.th_masked_select(self._p, idx._p))
    if idx.__class__ is int:
        return wrap(lib.th_select(self._p, 0, idx)) if self._p.ndim else \
            _apply_basic(self, [idx])[0]
    items = _normalize(self, idx)
    t, adv = _apply_basic(self, items)
    if not adv:
        return t if t is not self else wrap(lib.th_alias(self._p))
    t, first, arr, keep = _prepare_advanced(t, adv)
    return wrap(lib.th_index(t._p, first, len(adv), arr))


def setitem(self, idx, value):
    if isinstance(idx, Tensor) and idx.dtype is _dt.bool_ and idx.shape == self.shape \
            and (not isinstance(value, Tensor) or value.numel() == 1):
        check(lib.th_masked_fill_(self._p, idx._p, operand(value)))
        return
    items = _normalize(self, idx)
    t, adv = _apply_basic(self, items)
    if not adv:
        if isinstance(value, (Tensor, list, tuple, np.ndarray)):
            check(lib.th_copy(t._p, _value_ptr(value, t)))
        else:  # a number: a fill, which refuses 1j for a real tensor (PyTorch)
            check(lib.th_fill(t._p, operand(value)))
        return
    t, first, arr, keep = _prepare_advanced(t, adv)
    vp = _value_ptr(value, t)
    check(lib.th_index_put_(t._p, first, len(adv), arr, vp, 0))


# The tensor made from a list or array value lives until its thread assigns
# the next one: its pointer is lent to a C call that runs without the GIL,
# so it is held per thread, never released by another thread.
_held = threading.local()


def _value_ptr(value, like):
    if isinstance(value, Tensor):
        return value._p
    if isinstance(value, (list, tuple, np.ndarray)):
        from ._convert import tensor
        v = tensor(value, dtype=like.dtype)
        _held.value = v
        return v._p
    return operand(value)


Tensor.__getitem__ = getitem
Tensor.__setitem__ = setitem
