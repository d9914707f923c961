"""The raw sparse COO tensor: what an ember.Tensor of layout sparse_coo
keeps in ``_data`` in place of a backend's strided tensor.

It holds ``indices`` (raw int64, sparse_dim x nnz), ``values`` (raw,
nnz x dense sizes) and the full ``shape``.  It answers the metadata the
front reads from any raw tensor (shape, dtype, device, numel, version)
and the few raw operations sparse tensors support (add, mul by a number,
neg, clone); every other raw operation raises NotImplementedError naming
it, so a dense op given a sparse tensor fails instead of computing on
something that is not there.
"""
import math

from .._layout import sparse_coo
from .._tensor import _make


def _unsupported(name):
    return NotImplementedError(
        f"Could not run '{name}' with arguments from the 'SparseCPU' backend: ember's sparse "
        f"COO tensors (layout=ember.sparse_coo) do not support '{name}'. Convert with "
        ".to_dense() first.")


class SparseCOO:
    __slots__ = ("indices", "values", "shape", "coalesced", "__weakref__")
    layout = sparse_coo
    _sole_owner = None   # accumulate_grad asks raw tensors; a sparse gradient is copied

    def __init__(self, indices, values, shape, coalesced):
        self.indices = indices
        self.values = values
        self.shape = shape
        self.coalesced = coalesced

    # ---- metadata every raw tensor answers ------------------------------
    @property
    def dtype(self):
        return self.values.dtype

    @property
    def device(self):
        return self.values.device

    def size(self, dim=None):
        if dim is None:
            return self.shape
        return self.shape[dim]

    def dim(self):
        return len(self.shape)

    def numel(self):
        return math.prod(self.shape)

    def element_size(self):
        return self.values.element_size()

    def _version(self):
        return self.values._version()

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise _unsupported(name)

    def __bool__(self):
        raise _unsupported("is_nonzero")

    def __array__(self, *args, **kwargs):
        raise _unsupported("numpy")

    def __float__(self):
        raise _unsupported("item")

    __int__ = __index__ = __float__

    def __iter__(self):
        raise _unsupported("unbind")

    def __getitem__(self, key):
        raise _unsupported("index")

    def __setitem__(self, key, value):
        raise _unsupported("index_put_")

    # ---- the raw operations sparse tensors support -----------------------
    def clone(self, memory_format=None):
        return SparseCOO(self.indices.clone(), self.values.clone(), self.shape, self.coalesced)

    def to(self, dtype, *args, **kwargs):
        """The values converted to `dtype` (Tensor.to reaches here for dtypes
        only; another device raises)."""
        if not hasattr(dtype, "is_floating_point"):
            raise _unsupported("to (another device)")
        return SparseCOO(self.indices, self.values.to(dtype), self.shape, self.coalesced)

    def contiguous(self, memory_format=None):
        return self

    def neg(self):
        return SparseCOO(self.indices, self.values.neg(), self.shape, self.coalesced)

    def mul(self, other):
        if isinstance(other, SparseCOO) or hasattr(other, "dim") and other.dim() != 0:
            raise _unsupported("mul (of a sparse tensor by a tensor; only by a number)")
        return SparseCOO(self.indices, self.values.mul(other), self.shape, self.coalesced)

    def div(self, other, rounding_mode=None):
        if isinstance(other, SparseCOO) or hasattr(other, "dim") and other.dim() != 0:
            raise _unsupported("div (of a sparse tensor by a tensor; only by a number)")
        return SparseCOO(self.indices, self.values.div(other), self.shape, self.coalesced)

    def add(self, other, alpha=1):
        if not isinstance(other, SparseCOO):
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) "
                               "instead.")
        if other.shape != self.shape:
            raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self "
                               f"has size {list(self.shape)} while other has size "
                               f"{list(other.shape)} (FYI: dense-sparse addition does not "
                               "currently support broadcasting)")
        if other.dtype is not self.dtype:
            raise RuntimeError(f"add: expected both sparse tensors to have the same dtype, got "
                               f"{self.dtype} and {other.dtype}")
        values = other.values if alpha == 1 else other.values.mul(alpha)
        out = SparseCOO(_cat(self.indices, other.indices, 1), _cat(self.values, values, 0),
                        self.shape, False)
        # as PyTorch: the sum of coalesced tensors is coalesced, else entries concatenate
        return coalesce(out) if self.coalesced and other.coalesced else out

    def sub(self, other, alpha=1):
        return self.add(other, -alpha)

    def t(self):
        if len(self.shape) != 2 or self.indices.shape[0] != 2:
            raise RuntimeError(f"t() expects a 2-D sparse tensor with 2 sparse dimensions, but "
                               f"self is {len(self.shape)}D")
        return SparseCOO(self.indices.flip(0).contiguous(), self.values,
                         type(self.shape)(tuple(self.shape)[::-1]), False)

    # in place (optimizer states and accumulated gradients)
    def mul_(self, other):
        self._set(self.mul(other))
        return self

    def div_(self, other, rounding_mode=None):
        self._set(self.div(other))
        return self

    def add_(self, other, alpha=1):
        self._set(self.add(other, alpha))
        return self

    def sub_(self, other, alpha=1):
        return self.add_(other, -alpha)

    def zero_(self):
        import ember
        self.indices = ember.zeros((self.indices.shape[0], 0), dtype=ember.int64)._data
        self.values = ember.zeros((0,) + tuple(self.values.shape[1:]), dtype=self.dtype)._data
        self.coalesced = True
        return self

    def _set(self, other):
        self.indices, self.values, self.coalesced = other.indices, other.values, other.coalesced

    __add__ = add
    __sub__ = sub
    __mul__ = mul
    __truediv__ = div
    __neg__ = neg

    def __radd__(self, other):
        """dense + sparse (the + operator): a dense result, as PyTorch."""
        if not hasattr(other, "shape"):
            return NotImplemented
        if tuple(other.shape) != tuple(self.shape):
            raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self "
                               f"has size {list(other.shape)} while other has size "
                               f"{list(self.shape)}")
        from . import _to_dense
        return other + _to_dense(self)._data

    def __rmul__(self, other):
        return self.mul(other)

    def __repr__(self):
        from .. import _tensor
        ind = repr(_tensor._make(self.indices))
        val = repr(_tensor._make(self.values))
        pad = " " * len("tensor(indices=")
        ind = ind.replace("\n", "\n" + pad)
        val = val.replace("\n", "\n" + " " * len("tensor(values="))
        size = tuple(self.shape)
        return (f"tensor(indices={ind},\n       values={val},\n       size={size}, "
                f"nnz={self.values.shape[0]}, layout=ember.sparse_coo)")


def _cat(a, b, dim):
    from .. import cat
    return cat([_make(a), _make(b)], dim)._data


def coalesce(s):
    """A coalesced copy of raw sparse s: indices sorted and unique,
    duplicate entries summed."""
    if s.coalesced:
        return s
    import ember
    idx = _make(s.indices)
    vals = _make(s.values)
    nnz = idx.shape[1]
    if nnz == 0:
        return SparseCOO(s.indices, s.values, s.shape, True)
    # one linear key per entry, row-major over the sparse dimensions
    key = ember.zeros(nnz, dtype=ember.int64)
    for d in range(idx.shape[0]):
        key = key * s.shape[d] + idx[d]
    uniq, inverse = ember.unique(key, sorted=True, return_inverse=True)
    out_vals = ember.zeros((uniq.shape[0],) + tuple(vals.shape[1:]), dtype=vals.dtype)
    out_vals.index_add_(0, inverse, vals)
    out_idx = ember.empty((idx.shape[0], uniq.shape[0]), dtype=ember.int64)
    rest = uniq
    for d in reversed(range(idx.shape[0])):
        out_idx[d] = rest % s.shape[d]
        rest = rest.div(s.shape[d], rounding_mode="floor")
    return SparseCOO(out_idx._data, out_vals._data, s.shape, True)
