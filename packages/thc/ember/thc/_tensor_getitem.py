"""``t[...]``, ``t[...] = value`` and index_put_ on CUDA tensors, with
PyTorch's semantics: basic indices (ints, slices, None, Ellipsis, bools)
make views; index tensors, lists and boolean masks (advanced indices) are
broadcast together, and adjacent ones keep their place while separated
ones move to the front.

Advanced indexing is composed from libTHC's kernels: the indexed dims are
merged into one and the broadcast index tensors become one linear index
for index_select (reads), index_copy_/index_fill_ (writes) or index_add_
(accumulating writes)."""
import numbers
import operator

import numpy as np

import ember.th as _th
from ember.th import dtypes as _dt

from ._lib import lib
from ._tensor import Tensor, scalar_tensor, upload, wrap
from ._tensor_index import index_add_, index_copy_, index_fill_, index_select, nonzero

functions = {}


def _is_mask(it):
    return isinstance(it, Tensor) and it.dtype in (_dt.bool_, _dt.uint8)


def _as_device(it):
    """Lists, arrays and CPU tensors used as indices become CUDA tensors;
    0-d integer tensors act as ints and 0-d masks as Python bools."""
    if isinstance(it, (np.integer, np.bool_)):
        return it.item()
    if isinstance(it, (list, np.ndarray)) or (isinstance(it, tuple) and it):
        t = _th.tensor(it)
        it = upload(t.long() if t.numel() == 0 and t.dtype.is_floating_point else t)
    elif isinstance(it, _th.Tensor):
        it = upload(it)
    if isinstance(it, Tensor) and it.ndim == 0:
        if _is_mask(it):
            return bool(it.item())
        if not it.dtype.is_floating_point:
            return int(it.item())
    return it


def _consumed(it):
    if it is None or it is Ellipsis or isinstance(it, bool):
        return 0
    return it.ndim if _is_mask(it) else 1


def _normalize(self, idx):
    items = [_as_device(it) for it in (idx if isinstance(idx, tuple) else (idx,))]
    if sum(1 for it in items if it is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(_consumed(it) for it in items)
    if used > self.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
    if any(it is Ellipsis for it in items):
        k = next(i for i, it in enumerate(items) if it is Ellipsis)
        items[k:k + 1] = [slice(None)] * (self.ndim - used)
    return items


def _slice(t, dim, s):
    step = 1 if s.step is None else operator.index(s.step)
    if step <= 0:
        raise ValueError("step must be greater than zero")
    start = 0 if s.start is None else operator.index(s.start)
    stop = (1 << 62) if s.stop is None else operator.index(s.stop)
    if start == 0 and stop == (1 << 62) and step == 1:
        return t
    return wrap(lib.thc_slice(t._p, dim, start, stop, step))


def _mask_indices(t, dim, mask):
    """One int64 index tensor per dim a boolean mask covers."""
    for k in range(mask.ndim):
        if mask.shape[k] != t.shape[dim + k]:
            raise IndexError(f"The shape of the mask {list(mask.shape)} at index {k} does not "
                             f"match the shape of the indexed tensor {list(t.shape)} at index "
                             f"{dim + k}")
    nz = nonzero(mask)
    return [(dim + k, nz.select(1, k)) for k in range(mask.ndim)]


def _apply_basic(self, items):
    """The view for the basic items, and [(dim, index tensor)] for the
    advanced ones, in the view's dims."""
    t, dim, adv = self, 0, []
    for it in items:
        if it is None or isinstance(it, bool):
            t = wrap(lib.thc_unsqueeze(t._p, dim))
            if it is False:
                t = wrap(lib.thc_narrow(t._p, dim, 0, 0))
            dim += 1
        elif isinstance(it, numbers.Integral):
            if t.ndim == 0:
                raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` "
                                 "to convert a 0-dim tensor to a number")
            t = wrap(lib.thc_select(t._p, dim, int(it)))
        elif isinstance(it, slice):
            t = _slice(t, dim, it)
            dim += 1
        elif isinstance(it, Tensor):
            if _is_mask(it):
                adv += _mask_indices(t, dim, it)
                dim += it.ndim
            elif it.dtype.is_floating_point:
                raise IndexError("tensors used as indices must be long, int, byte or bool "
                                 "tensors")
            else:
                adv.append((dim, it))
                dim += 1
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or "
                             f"byte Variables are valid indices (got {type(it).__name__})")
    return t, adv


class _Advanced:
    """Advanced indices over a view: the view with the indexed dims moved
    together (to the front when separated), where they start, and their
    linear index into the merged dim (bounds checked, negatives wrapped)."""

    def __init__(self, t, adv):
        dims = [d for d, _ in adv]
        if dims != list(range(dims[0], dims[0] + len(dims))):
            t = t.permute(dims + [d for d in range(t.ndim) if d not in dims])
            dims = list(range(len(dims)))
        self.t, self.first, self.k = t, dims[0], len(dims)
        index_shape = _th.broadcast_shapes(*(tuple(i.shape) for _, i in adv))
        self.index_shape = list(index_shape)
        sizes = [t.shape[d] for d in dims]
        linear = None
        for (_, i), size, d in zip(adv, sizes, dims):
            i = _checked(i.long(), size, d).expand(index_shape)
            linear = i if linear is None else linear * size + i
        self.linear = linear.reshape(-1)
        shape = list(t.shape)
        self.before, self.after = shape[:self.first], shape[self.first + self.k:]
        self.merged_shape = self.before + [_prod(sizes)] + self.after

    def merged(self, t):
        """t with the indexed dims merged into one (a view, or raises)."""
        return t.view(self.merged_shape)

    def result_shape(self):
        return self.before + self.index_shape + self.after


def _prod(values):
    n = 1
    for v in values:
        n *= v
    return n


def _checked(i, size, dim):
    """i with negatives wrapped; IndexError for entries out of range."""
    bad = (i < -size) | (i >= size)
    if bad.any():
        v = i.masked_select(bad)[0].item()
        raise IndexError(f"index {v} is out of bounds for dimension {dim} with size {size}")
    return i.remainder(size) if (i < 0).any() else i


def getitem(self, idx):
    if idx.__class__ is int and self._p.ndim:
        return wrap(lib.thc_select(self._p, 0, idx))
    t, adv = _apply_basic(self, _normalize(self, idx))
    if not adv:
        return wrap(lib.thc_alias(self._p)) if t is self else t
    a = _Advanced(t, adv)
    flat = a.t.reshape(a.merged_shape)
    return index_select(flat, a.first, a.linear).view(a.result_shape())


def _put(self, items, value, accumulate):
    t, adv = _apply_basic(self, items)
    if isinstance(value, (list, tuple)):
        value = _th.tensor(value)
    if not adv:
        if accumulate:
            t.add_(value)
        else:
            t.copy_(value)
        return self
    a = _Advanced(t, adv)
    try:
        work = a.merged(a.t)  # writes go straight into self
        back = None
    except RuntimeError:  # the dims do not merge in place: through a copy
        back = a.t.contiguous()
        work = a.merged(back)
    _write(work, a, value, accumulate)
    if back is not None:
        a.t.copy_(back)
    return self


def _write(work, a, value, accumulate):
    n = a.linear.shape[0]
    scalar = not isinstance(value, (Tensor, _th.Tensor, np.ndarray)) or value.ndim == 0
    if scalar and not accumulate:
        index_fill_(work, a.first, a.linear, value)
        return
    src = value if isinstance(value, Tensor) else \
        scalar_tensor(value, work.dtype) if scalar else upload(_th.tensor(value))
    src = src.to(work.dtype).expand(a.result_shape()).reshape(a.before + [n] + a.after)
    (index_add_ if accumulate else index_copy_)(work, a.first, a.linear, src)


def setitem(self, idx, value):
    _put(self, _normalize(self, idx), value, False)


def index_put_(self, indices, values, accumulate=False):
    """self[indices] = values, or += with accumulate (repeated indices
    then add up)."""
    items = [_as_device(i) for i in indices]
    return _put(self, _normalize(self, tuple(items)), values, bool(accumulate))


def index_put(input, indices, values, accumulate=False):
    return index_put_(input.clone(), indices, values, accumulate)


for _f in (index_put_, index_put):
    functions[_f.__name__] = _f
    setattr(Tensor, _f.__name__, _f)
Tensor.__getitem__ = getitem
Tensor.__setitem__ = setitem
