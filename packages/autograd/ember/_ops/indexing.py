"""Indexing: ``x[idx]`` and ``x[idx] = v`` (basic, advanced and boolean),
index_select, gather, the scatter and index_* families, masked_*,
take/put, index_put, and the values of sort/topk/kthvalue."""
import collections
import collections.abc
import warnings

import numpy as np

from .._creation import tensor, zeros, zeros_like
from .._tensor import Tensor, _make
from ..autograd import grad_mode
from ..autograd.nodes import check_view_write
from .define import dispatch_point, op, raw, register
from .reduction import _select_backward
from .samples import Index, Mask, S, T
from .shape import _ViewOf, broadcast_shapes, view_scatter

_mode = grad_mode.state
_ADVANCED = (Tensor, list, tuple, np.ndarray)


_SCALARS = (int, slice, type(None), type(Ellipsis))


def _is_sequence(x):
    return isinstance(x, (list, tuple, range, np.ndarray, collections.abc.Sequence))


def _as_tuple(seq):
    """PyTorch's (and old NumPy's) rule for a non-tuple sequence index:
    x[[0, slice(1, 3)]] means x[0, 1:3] when a short sequence holds a
    tensor, a sequence, a slice, Ellipsis or None; x[[0, 2]] stays one
    index.  NumPy arrays are always one index."""
    if isinstance(seq, np.ndarray) or len(seq) >= 32:
        return False
    return any(isinstance(i, (Tensor, slice)) or i is None or i is Ellipsis or _is_sequence(i)
               for i in seq)


def _sequence_index(seq):
    """One index element that is a sequence (range, deque, nested tuple,
    list of floats, ...) as an int64 array; bool and uint8 stay masks."""
    if isinstance(seq, list) and all(i.__class__ is int for i in seq):
        return seq
    if isinstance(seq, str):
        raise TypeError(f"new(): invalid data type '{type(seq).__name__}'")
    a = seq if isinstance(seq, np.ndarray) else np.asarray(list(seq))
    if a.dtype == np.bool_ or a.dtype == np.uint8:
        return a
    if a.dtype.kind in "iuf" or a.size == 0:
        return a.astype(np.int64)   # floats truncate, as PyTorch's index conversion
    bad = next((i for i in a.reshape(-1) if not isinstance(i, (int, float, np.number))), a)
    if isinstance(bad, np.generic):
        bad = bad.item()   # np.str_ -> str, as the message names Python types
    raise TypeError(f"new(): invalid data type '{type(bad).__name__}'")


def _element(i):
    if isinstance(i, (_SCALARS, Tensor, np.ndarray, np.integer, np.bool_)):
        return i
    if _is_sequence(i):
        return _sequence_index(i)
    return i


def _normalize_index(idx):
    """An index in the forms the backend takes: ranges and other sequences
    become index arrays, short sequences holding slices/None/... become
    tuples (see _as_tuple)."""
    if isinstance(idx, tuple):
        if all(isinstance(i, _SCALARS) or isinstance(i, Tensor) for i in idx):
            return idx
        return tuple(_element(i) for i in idx)
    if isinstance(idx, Tensor) or not _is_sequence(idx):
        return idx
    if isinstance(idx, str):
        raise TypeError(f"new(): invalid data type '{type(idx).__name__}'")
    if _as_tuple(idx):
        warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated; "
                      "use x[tuple(seq)] instead of x[seq]. A future release will interpret it "
                      "as a tensor index, x[ember.tensor(seq)], which will result either in an "
                      "error or a different result", UserWarning, stacklevel=3)
        return tuple(_element(i) for i in idx)
    return _element(idx)


def _raw_index(idx):
    """(index for the raw tensor, whether it is basic: ints, slices, None,
    Ellipsis and bools only, which select a view)."""
    if isinstance(idx, tuple):
        if not any(isinstance(i, _ADVANCED) for i in idx):
            return idx, True
        return tuple(i._data if isinstance(i, Tensor) else i for i in idx), False
    if isinstance(idx, _ADVANCED):
        return (idx._data if isinstance(idx, Tensor) else idx), False
    return idx, True


@op(function=False, method=False, view=True, node_name="SliceBackward0")
class _basic_index:
    def forward(input, idx):
        return input._data[idx]

    def save(out, input, idx):
        return (input.shape, _ViewOf("__getitem__", idx))

    def backward(g, shape, view_of):
        return view_scatter(g, shape, view_of)


@op(function=False, method=False, node_name="IndexBackward0")
class _advanced_index:
    def forward(input, idx, raw_idx):
        return input._data[raw_idx]

    def save(out, input, idx, raw_idx):
        return (input.shape, _ViewOf("__getitem__", idx, raw_args=(raw_idx,)))

    def backward(g, shape, view_of):
        return view_scatter(g, shape, view_of, overlapping=True)


def getitem(self, idx):
    if idx.__class__ is int:  # x[i]: the common case, a view
        if not (self._requires_grad and _mode.enabled):
            t = _make(self._data[idx])
            base = self._base
            t._base = self if base is None else base
            return t
        return _basic_index(self, idx)
    idx = _normalize_index(idx)
    raw_idx, basic = _raw_index(idx)
    if basic:
        return _basic_index(self, idx)
    return _advanced_index(self, idx, raw_idx)


@op(function=False, method=False, node_name="IndexPutBackward0")
class _index_assign:
    """self[idx] = value for an advanced index."""

    def forward(input, idx, raw_idx, value):
        r = input._data.clone()
        r[raw_idx] = raw(value)
        return r

    def inplace(input, idx, raw_idx, value):
        input._data[raw_idx] = raw(value)

    def inputs(input, idx, raw_idx, value):
        return (input, value)

    def save(out, input, idx, raw_idx, value):
        mask = zeros(input.shape, dtype=_bool(), device=input.device)
        mask._data[raw_idx] = True
        return (mask, _ViewOf("__getitem__", idx, raw_args=(raw_idx,)), _shape(value))

    backward = (lambda g, mask, view_of, vshape: g.masked_fill(mask, 0),
                lambda g, mask, view_of, vshape: view_of(g).sum_to_size(vshape))


def _bool():
    from .._dtypes import bool as bool_
    return bool_


def _shape(x):
    return x.shape if isinstance(x, Tensor) else None


def setitem(self, idx, value):
    idx = _normalize_index(idx)
    raw_idx, basic = _raw_index(idx)
    value_is_tensor = isinstance(value, Tensor)
    if not (_mode.enabled and (self._requires_grad or
                               value_is_tensor and value._requires_grad)):
        if self._base is not None:
            check_view_write(self)
        self._data[raw_idx] = value._data if value_is_tensor else value
        return
    if not value_is_tensor and isinstance(value, (list, tuple, np.ndarray)):
        value = tensor(value, dtype=self.dtype, device=self.device)
    if basic:  # writing through a view: the base's history takes it in
        getitem(self, idx).copy_(value)
    else:
        self._index_assign_(idx, raw_idx, value)


Tensor.__getitem__ = getitem
Tensor.__setitem__ = dispatch_point(setitem, "__setitem__")
register("__getitem__", method=getitem, samples=[
    S(T(4, 3), 1), S(T(4, 3), (slice(1, 3), -1)),
    S(T(4, 3), (Ellipsis, None, slice(None, None, 2))),
    S(T(4, 3), Index([0, 2, 2]), name="repeated_rows"),
    S(T(4, 3), (Index([0, 3]), Index([1, 1])), name="two_tensors"),
    S(T(4, 3), (slice(None), [2, 0]), name="list"),
    S(T(4, 3), Mask(4, 3), name="mask"), S(T(4, 3), (Mask(4), 0), name="row_mask")])


def _assign(x, idx, value):
    x = x.clone()
    x[idx] = value
    return x


register("__setitem__", function=_assign, torch=None, samples=[
    S(T(4, 3), 1, T(3)), S(T(4, 3), (slice(1, 3), 0), T(2)), S(T(4, 3), 0, 2.5),
    S(T(4, 3), Index([0, 2]), T(2, 3), name="rows"),
    S(T(4, 3), (Index([0, 2]), Index([1, 1])), T(2), name="points"),
    S(T(4, 3), Mask(4, 3), 0.5, name="mask")])


# ---- gather and scatter ----------------------------------------------------
@op()
class index_select:
    """Slices of dim at `index`."""

    def forward(input, dim, index):
        return input._data.index_select(dim, index._data)

    def save(out, input, dim, index):
        return (input.shape, dim, index)

    def backward(g, shape, dim, index):
        return zeros(shape, dtype=g.dtype, device=g.device).index_add(dim, index, g)

    samples = [S(T(4, 3), 0, Index([3, 0, 0])), S(T(4, 3), 1, Index([2]))]


@op()
class gather:
    """out[i][j] = input[index[i][j]][j] (for dim 0), and so on."""

    def forward(input, dim, index, *, sparse_grad=False):
        return input._data.gather(dim, index._data)

    def save(out, input, dim, index, *, sparse_grad=False):
        return (input.shape, dim, index)

    def backward(g, shape, dim, index):
        return zeros(shape, dtype=g.dtype, device=g.device).scatter_add(dim, index, g)

    samples = [S(T(4, 3), 0, Index([[0, 1, 3], [3, 3, 0]])),
               S(T(4, 3), 1, Index([[2], [0], [1], [1]]))]


def _scatter_src(src, value):
    return value if src is None else src


@op()
class scatter:
    """Writes src (or value) at index along dim; with `reduce`, combines."""

    def forward(input, dim, index, src=None, *, value=None, reduce=None):
        kw = {} if reduce is None else {"reduce": reduce}
        return input._data.scatter(dim, index._data, raw(_scatter_src(src, value)), **kw)

    def inplace(input, dim, index, src=None, *, value=None, reduce=None):
        kw = {} if reduce is None else {"reduce": reduce}
        input._data.scatter_(dim, index._data, raw(_scatter_src(src, value)), **kw)

    def inputs(input, dim, index, src=None, *, value=None, reduce=None):
        return (input, _scatter_src(src, value))

    def save(out, input, dim, index, src=None, *, value=None, reduce=None):
        if reduce is not None:
            raise NotImplementedError("the derivative of scatter with reduce is not "
                                      "implemented; use scatter_reduce")
        return (dim, index)

    backward = (lambda g, dim, index: g.scatter(dim, index, 0),
                lambda g, dim, index: g.gather(dim, index))
    samples = [S(T(4, 3), 0, Index([[0, 1, 3]]), T(1, 3)),
               S(T(4, 3), 1, Index([[2], [0], [1], [1]]), 1.5, name="number")]


@op()
class scatter_add:
    """Adds src at index along dim."""

    def forward(input, dim, index, src):
        return input._data.scatter_add(dim, index._data, src._data)

    def inplace(input, dim, index, src):
        input._data.scatter_add_(dim, index._data, src._data)

    def inputs(input, dim, index, src):
        return (input, src)

    def save(out, input, dim, index, src):
        return (dim, index)

    backward = (lambda g, dim, index: g, lambda g, dim, index: g.gather(dim, index))
    samples = [S(T(4, 3), 0, Index([[0, 1, 3], [0, 0, 3]]), T(2, 3))]


@op()
class scatter_reduce:
    """Combines src into input at index with 'sum', 'mean', 'prod', 'amax'
    or 'amin' (gradients for 'sum' and 'mean')."""

    def forward(input, dim, index, src, reduce, *, include_self=True):
        return input._data.scatter_reduce(dim, index._data, src._data, reduce,
                                          include_self=include_self)

    def inplace(input, dim, index, src, reduce, *, include_self=True):
        input._data.scatter_reduce_(dim, index._data, src._data, reduce,
                                    include_self=include_self)

    def inputs(input, dim, index, src, reduce, *, include_self=True):
        return (input, src)

    def save(out, input, dim, index, src, reduce, *, include_self=True):
        if reduce not in ("sum", "mean"):
            raise NotImplementedError(f"the derivative of scatter_reduce with "
                                      f"reduce='{reduce}' is not implemented")
        counts = None
        if reduce == "mean":  # how many values were averaged into each element
            ones = zeros(input.shape, dtype=input.dtype, device=input.device) + int(include_self)
            counts = ones.scatter_add(dim, index, zeros_like(src) + 1).clamp(min=1)
        hit = zeros(input.shape, dtype=_bool(), device=input.device).scatter(dim, index, True)
        return (dim, index, counts, hit, include_self)

    backward = (
        lambda g, dim, index, counts, hit, inc: _scaled(g, counts).masked_fill(hit, 0)
        if not inc else _scaled(g, counts),
        lambda g, dim, index, counts, hit, inc: _scaled(g, counts).gather(dim, index),
    )
    samples = [S(T(4, 3), 0, Index([[0, 1, 3], [0, 0, 3]]), T(2, 3), "sum"),
               S(T(4, 3), 0, Index([[0, 1, 3], [0, 0, 3]]), T(2, 3), "mean"),
               S(T(4, 3), 0, Index([[0, 1, 3], [0, 0, 3]]), T(2, 3), "sum",
                 include_self=False, name="exclude_self")]


def _scaled(g, counts):
    return g if counts is None else g / counts


@op()
class index_add:
    """Adds alpha * source's slices at index along dim."""

    def forward(input, dim, index, source, *, alpha=1):
        return input._data.index_add(dim, index._data, source._data, alpha=alpha)

    def inplace(input, dim, index, source, *, alpha=1):
        input._data.index_add_(dim, index._data, source._data, alpha=alpha)

    def inputs(input, dim, index, source, *, alpha=1):
        return (input, source)

    def save(out, input, dim, index, source, *, alpha=1):
        return (dim, index, alpha)

    backward = (lambda g, dim, index, alpha: g,
                lambda g, dim, index, alpha: g.index_select(dim, index) * alpha)
    samples = [S(T(4, 3), 0, Index([0, 2, 0]), T(3, 3)),
               S(T(4, 3), 1, Index([1]), T(4, 1), alpha=2.0)]


@op()
class index_copy:
    """Copies source's slices to index along dim."""

    def forward(input, dim, index, source):
        return input._data.index_copy(dim, index._data, source._data)

    def inplace(input, dim, index, source):
        input._data.index_copy_(dim, index._data, source._data)

    def inputs(input, dim, index, source):
        return (input, source)

    def save(out, input, dim, index, source):
        return (dim, index)

    backward = (lambda g, dim, index: g.index_fill(dim, index, 0),
                lambda g, dim, index: g.index_select(dim, index))
    samples = [S(T(4, 3), 0, Index([3, 1]), T(2, 3))]


@op()
class index_fill:
    """Fills the slices at index along dim with value."""

    def forward(input, dim, index, value):
        return input._data.index_fill(dim, index._data, raw(value))

    def inplace(input, dim, index, value):
        input._data.index_fill_(dim, index._data, raw(value))

    def inputs(input, dim, index, value):
        return (input, value)

    def save(out, input, dim, index, value):
        return (dim, index)

    backward = (lambda g, dim, index: g.index_fill(dim, index, 0),
                lambda g, dim, index: g.index_select(dim, index).sum())
    samples = [S(T(4, 3), 0, Index([3, 1]), 1.5), S(T(4, 3), 1, Index([0]), T())]


@op()
class masked_fill:
    """value where mask (broadcast) is True."""

    def forward(input, mask, value):
        return input._data.masked_fill(mask._data, raw(value))

    def inplace(input, mask, value):
        input._data.masked_fill_(mask._data, raw(value))

    def inputs(input, mask, value):
        return (input, None, value)

    def save(out, input, mask, value):
        return (mask, input.shape)

    backward = (lambda g, mask, shape: g.masked_fill(mask, 0).sum_to_size(shape),
                lambda g, mask, shape: None,
                lambda g, mask, shape: g.masked_fill(~mask, 0).sum())
    samples = [S(T(4, 3), Mask(4, 3), 1.5), S(T(4, 3), Mask(3), T(), name="tensor_value")]


@op()
class masked_select:
    """The elements where mask (broadcast) is True, as a 1-D tensor."""

    def forward(input, mask):
        return input._data.masked_select(mask._data)

    def save(out, input, mask):
        return (mask, input.shape, broadcast_shapes(input.shape, mask.shape))

    def backward(g, mask, shape, full):
        z = zeros(full, dtype=g.dtype, device=g.device)
        return z.masked_scatter(mask.expand(full), g).sum_to_size(shape)

    samples = [S(T(4, 3), Mask(4, 3)), S(T(4, 3), Mask(3), name="broadcast_mask")]


@op()
class masked_scatter:
    """Copies source's leading elements to where mask is True."""

    def forward(input, mask, source):
        return input._data.masked_scatter(mask._data, source._data)

    def inplace(input, mask, source):
        input._data.masked_scatter_(mask._data, source._data)

    def inputs(input, mask, source):
        return (input, None, source)

    def save(out, input, mask, source):
        return (mask, source.shape)

    backward = (lambda g, mask, sshape: g.masked_fill(mask, 0),
                lambda g, mask, sshape: None,
                lambda g, mask, sshape: _pad_to(g.masked_select(mask), sshape))
    samples = [S(T(4, 3), Mask(4, 3), T(15))]


def _pad_to(values, shape):
    """values (1-D) followed by zeros, as `shape`."""
    import math
    n = math.prod(shape)
    k = values.numel()
    if k < n:
        from .shape import cat
        values = cat([values, zeros(n - k, dtype=values.dtype, device=values.device)])
    return values.reshape(shape)


@op()
class take:
    """input.flatten()[index]."""

    def forward(input, index):
        return input._data.take(index._data)

    def save(out, input, index):
        return (input.shape, input.numel(), index)

    def backward(g, shape, numel, index):
        z = zeros(numel, dtype=g.dtype, device=g.device)
        return z.put(index, g, accumulate=True).view(shape)

    samples = [S(T(4, 3), Index([0, 11, 5, 5]))]


@op()
class put:
    """Writes source at the flat positions index (adding when accumulate)."""

    def forward(input, index, source, accumulate=False):
        r = input._data.clone()
        r.put_(index._data, source._data, accumulate)
        return r

    def inplace(input, index, source, accumulate=False):
        input._data.put_(index._data, source._data, accumulate)

    def inputs(input, index, source, accumulate=False):
        return (input, None, source)

    def save(out, input, index, source, accumulate=False):
        return (index, source.shape, accumulate)

    backward = (lambda g, index, sshape, acc:
                g if acc else g.put(index, zeros_like(index, dtype=g.dtype)),
                lambda g, index, sshape, acc: None,
                lambda g, index, sshape, acc: g.take(index).reshape(sshape))
    samples = [S(T(4, 3), Index([0, 11, 5]), T(3)),
               S(T(4, 3), Index([0, 5, 5]), T(3), True, name="accumulate")]


@op()
class index_put:
    """input[indices] = values, with tensors for the leading dims."""

    def forward(input, indices, values, accumulate=False):
        r = input._data.clone()
        r.index_put_([i._data for i in indices], raw(values), accumulate)
        return r

    def inplace(input, indices, values, accumulate=False):
        input._data.index_put_([i._data for i in indices], raw(values), accumulate)

    def inputs(input, indices, values, accumulate=False):
        return (input, None, values)

    def save(out, input, indices, values, accumulate=False):
        return (tuple(indices), _shape(values), accumulate)

    backward = (lambda g, idx, vshape, acc: g if acc else g.index_put(idx, 0.0),
                lambda g, idx, vshape, acc: None,
                lambda g, idx, vshape, acc: g[idx].sum_to_size(vshape))
    samples = [S(T(4, 3), (Index([0, 2]),), T(2, 3)),
               S(T(4, 3), (Index([0, 0]), Index([1, 1])), T(2), True, name="accumulate")]


# ---- sorting: values carry gradient, indices do not --------------------------
SortResult = collections.namedtuple("sort", ["values", "indices"])
TopkResult = collections.namedtuple("topk", ["values", "indices"])
KthvalueResult = collections.namedtuple("kthvalue", ["values", "indices"])
ModeResult = collections.namedtuple("mode", ["values", "indices"])


@op()
class sort:
    """Sorted values along dim and where they came from."""

    outputs = SortResult

    def forward(input, dim=-1, descending=False, stable=False):
        return tuple(input._data.sort(dim, descending, stable))

    def save(out, input, dim=-1, descending=False, stable=False):
        return (input.shape, dim, out[1], True)

    backward = _select_backward
    samples = [S(T(3, 4)), S(T(3, 4), 0, True)]


@op()
class topk:
    """The k largest (or smallest) values along dim, and their indices."""

    outputs = TopkResult

    def forward(input, k, dim=-1, largest=True, sorted=True):
        return tuple(input._data.topk(k, dim, largest, sorted))

    def save(out, input, k, dim=-1, largest=True, sorted=True):
        return (input.shape, dim, out[1], True)

    backward = _select_backward
    samples = [S(T(3, 4), 2), S(T(3, 4), 1, 0, False)]


@op()
class kthvalue:
    """The k-th smallest value along dim and its index."""

    outputs = KthvalueResult

    def forward(input, k, dim=-1, keepdim=False):
        return tuple(input._data.kthvalue(k, dim, keepdim))

    def save(out, input, k, dim=-1, keepdim=False):
        return (input.shape, dim, out[1], keepdim)

    backward = _select_backward
    samples = [S(T(3, 4), 2), S(T(3, 4), 1, 0, True)]


@op()
class mode:
    """The most frequent value along dim (the smallest on ties) and the index
    of its last occurrence."""

    outputs = ModeResult

    def forward(input, dim=-1, keepdim=False):
        return tuple(input._data.mode(dim, keepdim))

    def save(out, input, dim=-1, keepdim=False):
        return (input.shape, dim, out[1], keepdim)

    backward = _select_backward
    # distinct random values: each row's mode is its smallest (a repeat would
    # make the numerical gradient jump); ember.th's tests cover repeats
    samples = [S(T(3, 4)), S(T(4, 3), 0, True)]


def msort(input):
    return sort(input, 0).values


def take_along_dim(input, indices, dim=None):
    if dim is None:
        return input.reshape(-1).gather(0, indices.reshape(-1))
    return input.gather(dim, indices)


register("msort", function=msort, method=msort, samples=[S(T(3, 4))])
register("take_along_dim", function=take_along_dim, method=take_along_dim,
         samples=[S(T(3, 4), Index([[0], [2], [1]]), 1)])


# ---- no gradient -------------------------------------------------------------
def _plain(name, method=True):
    def fn(input, *args, **kwargs):
        # tensor arguments (bincount's weights) go to the backend raw
        args = [raw(a) for a in args]
        kwargs = {k: raw(v) for k, v in kwargs.items()}
        r = getattr(input._data, name)(*args, **kwargs)
        return tuple(_make(x) for x in r) if isinstance(r, tuple) else _make(r)
    fn.__name__ = name
    register(name, function=fn, method=fn if method else None, differentiable=False)
    return fn


# unique is composite.py's: the backends' unique flattens, unique(dim=...) is composed
for _name in ("argsort", "nonzero", "argwhere", "bincount", "histc"):
    _plain(_name)


def searchsorted(sorted_sequence, input, **kwargs):
    from .._device import namespace
    ns = namespace(sorted_sequence.device)
    if kwargs.get("sorter") is not None:
        kwargs["sorter"] = raw(kwargs["sorter"])
    return _make(ns.searchsorted(sorted_sequence._data, raw(input), **kwargs))


def bucketize(input, boundaries, **kwargs):
    return searchsorted(boundaries, input, **kwargs)


register("searchsorted", function=searchsorted, differentiable=False)
register("bucketize", function=bucketize, differentiable=False)
