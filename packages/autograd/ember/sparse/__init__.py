"""Sparse COO tensors on the CPU, in PyTorch's names.

    i = ember.tensor([[0, 1, 1], [2, 0, 2]])
    s = ember.sparse_coo_tensor(i, ember.tensor([3., 4., 5.]), (2, 3))
    s @ ember.randn(3, 4)          # dense result
    ember.sparse.mm(s, d)          # the gradient for s is sparse

A sparse tensor is an ordinary ember.Tensor whose raw data is a SparseCOO
(ember.sparse._coo) instead of a strided tensor; the operations here are
written with dense ember ops on its indices and values, and record autograd
through ember.autograd.Function.  What is not listed in the package README
raises NotImplementedError naming the op.
"""
from .._layout import sparse_coo, strided
from .._tensor import Tensor, _make
from ..autograd import grad_mode
from ..autograd.function import Function, _node_class
from ._coo import SparseCOO, _unsupported, coalesce as _coalesce_raw

__all__ = ["mm", "sum", "addmm"]


def is_sparse_tensor(t):
    return isinstance(t, Tensor) and t._data.__class__ is SparseCOO


def _sparse(indices, values, shape, coalesced):
    return _make(SparseCOO(indices._data if isinstance(indices, Tensor) else indices,
                           values._data if isinstance(values, Tensor) else values,
                           shape, coalesced))


def _need_sparse(t, name, what="sparse coordinate tensor layout"):
    if not is_sparse_tensor(t):
        raise RuntimeError(f"{name} expected {what} but got Strided")
    return t._data


def _first_order(backward):
    """These backwards are written on raw indices and values: refuse
    create_graph rather than give a graph that misses their dependencies."""
    def wrapper(ctx, *grads):
        if grad_mode.state.enabled:
            raise NotImplementedError(
                f"{type(ctx).__name__}: double backward (create_graph=True) through sparse "
                "COO operations is not supported")
        return backward(ctx, *grads)
    wrapper.__name__ = backward.__name__
    return wrapper


# ---- construction ----------------------------------------------------------------
class SparseCooTensor(Function):
    """indices, values -> sparse; differentiable in values."""

    @staticmethod
    def forward(ctx, indices, values, shape, coalesced):
        ctx.save_for_backward(indices)
        return _sparse(indices, values.detach(), shape, coalesced)

    @staticmethod
    @_first_order
    def backward(ctx, g):
        indices, = ctx.saved_tensors
        if is_sparse_tensor(g):
            g = g.to_dense()
        return None, g[tuple(indices)], None, None


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """A sparse COO tensor with the given indices (sparse_dim x nnz) and
    values (nnz x dense sizes); `size` defaults to the smallest that holds
    the indices."""
    import ember
    from .._device import device as _device
    if device is not None and _device(device).type != "cpu":
        raise NotImplementedError("sparse COO tensors are supported on the CPU only")
    if not isinstance(indices, Tensor):
        indices = ember.tensor(indices)
    if not isinstance(values, Tensor):
        values = ember.tensor(values, dtype=dtype)
    elif dtype is not None and values.dtype is not dtype:
        values = values.to(dtype)
    if indices.dtype is not ember.int64:
        if indices.is_floating_point():
            raise RuntimeError("indices must be an int64 tensor")
        indices = indices.long()
    if indices.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    if values.dim() == 0:
        raise RuntimeError("values must be at least 1-dimensional (nnz x dense sizes)")
    nnz = indices.shape[1]
    if values.shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{nnz}, nnz from values: {values.shape[0]}")
    sparse_dim = indices.shape[0]
    dense_sizes = tuple(values.shape[1:])
    if nnz:
        lo = indices.amin(1).tolist()
        hi = indices.amax(1).tolist()
        for d, m in enumerate(lo):
            if m < 0:
                raise RuntimeError(f"found negative index {m} for dim {d}")
    else:
        hi = [-1] * sparse_dim
    if size is None:
        shape = tuple(h + 1 if nnz else 0 for h in hi) + dense_sizes
    else:
        shape = tuple(size)
        if len(shape) != sparse_dim + len(dense_sizes):
            raise RuntimeError(f"number of dimensions must be sparse_dim ({sparse_dim}) + "
                               f"dense_dim ({len(dense_sizes)}), but got {len(shape)}")
        if shape[sparse_dim:] != dense_sizes:
            raise RuntimeError(f"values has incorrect size, expected {[nnz, *shape[sparse_dim:]]}"
                               f", got {list(values.shape)}")
        for d, m in enumerate(hi):
            if m >= shape[d]:  # always checked: the ops here index with them
                raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is "
                                   f"{shape[d]} but found index {m}")
    shape = ember.Size(shape)
    if is_coalesced is None:
        is_coalesced = nnz <= 1
    if values._requires_grad:
        out = SparseCooTensor.apply(indices.detach(), values, shape, bool(is_coalesced))
    else:
        out = _sparse(indices.detach(), values, shape, bool(is_coalesced))
    if requires_grad:
        out.requires_grad_(True)
    return out


# ---- conversions -----------------------------------------------------------------
class ToDense(Function):
    @staticmethod
    def forward(ctx, s, masked_grad):
        ctx.save_for_backward(s.detach())
        ctx.masked_grad = masked_grad
        return _to_dense(s._data)

    @staticmethod
    @_first_order
    def backward(ctx, g):
        s, = ctx.saved_tensors
        if not ctx.masked_grad:  # the full gradient, in s's layout (as PyTorch)
            return (g if is_sparse_tensor(g) else g.to_sparse()), None
        return _sparse_mask(g, s._data), None


def _to_dense(raw):
    import ember
    out = ember.zeros(raw.shape, dtype=raw.dtype)
    idx = _make(raw.indices)
    if idx.shape[1]:
        sd = idx.shape[0]
        flat = out.view((-1,) + tuple(raw.shape[sd:]))
        key = ember.zeros(idx.shape[1], dtype=ember.int64)
        for d in range(sd):
            key = key * raw.shape[d] + idx[d]
        flat.index_add_(0, key, _make(raw.values))
    return out


def _sparse_mask(dense, raw):
    """The entries of dense at raw's indices, as a sparse tensor with them."""
    if is_sparse_tensor(dense):
        dense = dense.to_dense()
    raw = _coalesce_raw(raw)  # one entry per position, so to_dense() does not add twice
    return _sparse(raw.indices, dense[tuple(_make(raw.indices))], raw.shape, raw.coalesced)


class ToSparse(Function):
    @staticmethod
    def forward(ctx, x, sparse_dim):
        import ember
        sd = x.dim() if sparse_dim is None else sparse_dim
        if not 1 <= sd <= x.dim():
            raise RuntimeError(f"sparse_dim must be in [1, {x.dim()}] but got {sd}")
        nz = x.reshape(tuple(x.shape[:sd]) + (-1,)).ne(0).any(-1) if sd < x.dim() else x.ne(0)
        idx = nz.nonzero().t().contiguous()
        vals = x[tuple(idx)] if idx.shape[1] else ember.zeros(
            (0,) + tuple(x.shape[sd:]), dtype=x.dtype)
        return _sparse(idx, vals.detach().contiguous(), ember.Size(x.shape), True)

    @staticmethod
    def backward(ctx, g):
        return (g.to_dense() if is_sparse_tensor(g) else g), None


def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    if layout is not None and layout != sparse_coo:
        raise NotImplementedError(f"to_sparse: ember supports layout=ember.sparse_coo only, "
                                  f"not {layout!r}")
    if is_sparse_tensor(self):
        return self
    return ToSparse.apply(self, sparse_dim)


def to_sparse_coo(self):
    return to_sparse(self)


def to_dense(self, dtype=None, *, masked_grad=True):
    if not is_sparse_tensor(self):
        return self if dtype is None else self.to(dtype)
    out = ToDense.apply(self, bool(masked_grad))
    return out if dtype is None else out.to(dtype)


class Coalesce(Function):
    @staticmethod
    def forward(ctx, s):
        return _make(_coalesce_raw(s._data))

    @staticmethod
    def backward(ctx, g):
        return g


def coalesce(self):
    raw = _need_sparse(self, "coalesce")
    if raw.coalesced:
        return self
    return Coalesce.apply(self)


class Values(Function):
    @staticmethod
    def forward(ctx, s):
        ctx.save_for_backward(s.detach())
        return _make(s._data.values)

    @staticmethod
    @_first_order
    def backward(ctx, g):
        s, = ctx.saved_tensors
        raw = s._data
        return _sparse(raw.indices, g, raw.shape, raw.coalesced)


def _values(self):
    """The stored values, duplicates included (not differentiable, as in
    PyTorch; values() of the coalesced tensor is)."""
    return _make(_need_sparse(self, "values", "sparse tensor layout").values)


def values(self):
    raw = _need_sparse(self, "values", "sparse tensor layout")
    if not raw.coalesced:
        raise RuntimeError("Cannot get values on an uncoalesced tensor, please call "
                           ".coalesce() first")
    return Values.apply(self)


def _indices(self):
    return _make(_need_sparse(self, "indices").indices)


def indices(self):
    raw = _need_sparse(self, "indices")
    if not raw.coalesced:
        raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call "
                           ".coalesce() first")
    return _make(raw.indices)


# ---- products ----------------------------------------------------------------------
_CHUNK = 1 << 16   # entries per step of the product, to bound its temporaries


def _spmm_forward(raw, d):
    """raw (n x m, 2 sparse dims) @ dense d (m x k) -> dense n x k."""
    import ember
    rows, cols = _make(raw.indices)
    vals = _make(raw.values)
    out = ember.zeros((raw.shape[0], d.shape[1]), dtype=d.dtype)
    for lo in range(0, rows.shape[0], _CHUNK):
        r, c, v = rows[lo:lo + _CHUNK], cols[lo:lo + _CHUNK], vals[lo:lo + _CHUNK]
        out.index_add_(0, r, d.index_select(0, c) * v.unsqueeze(1))
    return out


def _check_mm(raw, d, name):
    if raw.indices.shape[0] != 2 or len(raw.shape) != 2:
        raise NotImplementedError(f"{name}: the sparse operand must be 2-D with 2 sparse "
                                  f"dimensions (hybrid sparse tensors are not supported), got "
                                  f"size {tuple(raw.shape)} with sparse_dim "
                                  f"{raw.indices.shape[0]}")
    if is_sparse_tensor(d):
        raise NotImplementedError(f"{name}: sparse @ sparse is not supported; convert one "
                                  "operand with .to_dense()")
    if not isinstance(d, Tensor):
        raise TypeError(f"{name}(): argument 'mat2' (position 2) must be Tensor, not "
                        f"{type(d).__name__}")
    if d.dim() != 2:
        raise RuntimeError(f"{name}: mat2 must be a matrix, got {d.dim()}-D tensor")
    if raw.shape[1] != d.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({raw.shape[0]}x"
                           f"{raw.shape[1]} and {d.shape[0]}x{d.shape[1]})")
    if raw.dtype is not d.dtype:
        raise RuntimeError(f"expected mat1 and mat2 to have the same dtype, but got: "
                           f"{raw.dtype} != {d.dtype}")


class _SparseDenseProduct(Function):
    """sparse @ dense; the sparse operand's gradient is masked to its
    pattern (sparse) or full (dense), as PyTorch's sparse.mm and mm give."""

    masked = True

    @staticmethod
    def forward(ctx, s, d):
        ctx.save_for_backward(s.detach(), d.detach())
        return _spmm_forward(s._data, d)

    @staticmethod
    @_first_order
    def backward(ctx, g):
        s, d = ctx.saved_tensors
        raw = s._data
        gs = gd = None
        if ctx.needs_input_grad[1]:
            gd = _spmm_forward(raw.t(), g)
        if ctx.needs_input_grad[0]:
            if ctx._function.masked:
                rows, cols = _make(raw.indices)
                gv = (g.index_select(0, rows) * d.index_select(0, cols)).sum(1)
                gs = _sparse(raw.indices, gv, raw.shape, raw.coalesced)
            else:
                gs = g.mm(d.t())
        return gs, gd


class SparseAddmm(_SparseDenseProduct):
    masked = True


class Mm(_SparseDenseProduct):
    masked = False


# grad_fn names as PyTorch's
for _fn, _name in ((SparseCooTensor, "SparseCooTensorWithDimsAndTensorsBackward0"),
                   (ToDense, "ToDenseBackward0"), (ToSparse, "ToSparseBackward0"),
                   (Coalesce, "CoalesceBackward0"), (Values, "ValuesBackward0"),
                   (SparseAddmm, "SparseAddmmBackward0"), (Mm, "MmBackward0")):
    _node_class(_fn).__name__ = _node_class(_fn).__qualname__ = _name


def mm(mat1, mat2, reduce="sum"):
    """sparse @ dense -> dense; the gradient for the sparse mat1 is sparse
    with mat1's pattern (coalesced)."""
    if reduce != "sum":
        raise NotImplementedError(f"ember.sparse.mm: reduce='{reduce}' is not supported "
                                  "(only 'sum')")
    if not is_sparse_tensor(mat1):
        return mat1.mm(mat2)
    mat1 = coalesce(mat1)
    _check_mm(mat1._data, mat2, "sparse.mm")
    return SparseAddmm.apply(mat1, mat2)


def _dense_gradient_mm(mat1, mat2, name):
    _check_mm(mat1._data, mat2, name)
    return Mm.apply(mat1, mat2)


def addmm(input, mat1, mat2, *, beta=1.0, alpha=1.0):
    """beta * input + alpha * (sparse mat1 @ dense mat2)."""
    return input * beta + mm(mat1, mat2) * alpha


def sum(input, dim=None, dtype=None):
    """The sum of all entries (dim=None) of a sparse tensor; its gradient
    is sparse with input's pattern."""
    _need_sparse(input, "sparse.sum", "sparse tensor layout")
    if dim is not None:
        raise NotImplementedError("ember.sparse.sum over dimensions is not supported; only "
                                  "the full sum (dim=None)")
    out = Values.apply(coalesce(input)).sum()
    return out if dtype is None else out.to(dtype)


def add_to_dense_(dense, sparse, alpha=1):
    """dense += alpha * sparse, in place, without autograd (optimizers)."""
    raw = sparse._data
    if raw.shape != dense.shape:
        raise RuntimeError(f"add_: expected 'self' and 'other' to have same size, but self has "
                           f"size {list(dense.shape)} while other has size {list(raw.shape)}")
    vals = _make(raw.values)
    if alpha != 1:
        vals = vals * alpha
    idx = _make(raw.indices)
    if idx.shape[1]:
        dense.index_put_(tuple(idx), vals.to(dense.dtype), accumulate=True)
    return dense


def sparse_mask(self, mask):
    """The entries of dense self at sparse mask's indices, as a sparse
    tensor with mask's indices."""
    raw = _need_sparse(mask, "sparse_mask")
    if tuple(self.shape) != tuple(raw.shape):
        raise RuntimeError("sparse_mask(): expected self and mask to have the same shape")
    return _sparse_mask(self.detach(), raw)


# ---- Tensor methods and properties ---------------------------------------------
def _layout(self):
    return sparse_coo if self._data.__class__ is SparseCOO else strided


def _is_sparse(self):
    return self._data.__class__ is SparseCOO


def is_coalesced(self):
    return _need_sparse(self, "is_coalesced").coalesced


def sparse_dim(self):
    return self._data.indices.shape[0] if is_sparse_tensor(self) else 0


def dense_dim(self):
    raw = self._data
    return len(raw.shape) - raw.indices.shape[0] if raw.__class__ is SparseCOO else raw.dim()


def _nnz(self):
    return _need_sparse(self, "_nnz", "sparse tensor layout").values.shape[0]


def sparse_resize_(self, *args):
    raise _unsupported("sparse_resize_")


def _dense_sparse_product(a, b, name):
    """dense a @ sparse b, as (b.t() @ a.t()).t() (dense result and a dense
    gradient for b, as PyTorch's MmBackward0); None when b is not sparse."""
    if not is_sparse_tensor(b):
        return None
    if not isinstance(a, Tensor) or a.dim() != 2:
        raise _unsupported(f"{name} (dense @ sparse with a {getattr(a, 'ndim', 0)}-D first "
                           "operand; only matrices)") from None
    if b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x"
                           f"{a.shape[1]} and {'x'.join(map(str, b.shape))})") from None
    return _dense_gradient_mm(b.t(), a.t(), name).t()


def _install():
    import ember
    from .._ops.define import NAMESPACE, dispatch_point
    from .._ops.out import with_out
    Tensor.layout = property(_layout)
    Tensor.is_sparse = property(_is_sparse)
    for f in (to_sparse, to_sparse_coo, to_dense, coalesce, is_coalesced, values, _values,
              indices, _indices, sparse_dim, dense_dim, _nnz, sparse_mask):
        setattr(Tensor, f.__name__, f)
    # products with a sparse first operand; the dense path pays one class test
    dense_mm, dense_matmul = Tensor.mm, Tensor.matmul
    fn_mm, fn_matmul = NAMESPACE["mm"], NAMESPACE["matmul"]

    # a sparse second operand reaches the dense op, which refuses its raw data
    # with a TypeError: then dense @ sparse runs here (no cost on the dense path)
    def mm_method(self, mat2):
        if self._data.__class__ is SparseCOO:
            return _dense_gradient_mm(self, mat2, "mm")
        try:
            return dense_mm(self, mat2)
        except TypeError:
            r = _dense_sparse_product(self, mat2, "mm")
            if r is None:
                raise
        return r

    def matmul_method(self, other):
        if self._data.__class__ is SparseCOO:
            return _dense_gradient_mm(self, other, "matmul")
        try:
            return dense_matmul(self, other)
        except TypeError:
            r = _dense_sparse_product(self, other, "matmul")
            if r is None:
                raise
        return r

    def mm_fn(input, mat2, **kwargs):
        if getattr(input, "_data", None).__class__ is SparseCOO and not kwargs:
            return _dense_gradient_mm(input, mat2, "mm")
        try:
            return fn_mm(input, mat2, **kwargs)
        except TypeError:
            r = _dense_sparse_product(input, mat2, "mm")
            if r is None:
                raise
        return r

    def matmul_fn(input, other, **kwargs):
        if getattr(input, "_data", None).__class__ is SparseCOO and not kwargs:
            return _dense_gradient_mm(input, other, "matmul")
        try:
            return fn_matmul(input, other, **kwargs)
        except TypeError:
            r = _dense_sparse_product(input, other, "matmul")
            if r is None:
                raise
        return r

    def matmul_operator(self, other):
        if not isinstance(other, Tensor):
            return NotImplemented
        if self._data.__class__ is SparseCOO:
            return _dense_gradient_mm(self, other, "matmul")
        try:
            return fn_matmul(self, other)
        except TypeError:
            r = _dense_sparse_product(self, other, "matmul")
            if r is None:
                raise
        return r

    def rmatmul_operator(self, other):
        if not isinstance(other, Tensor):
            return NotImplemented
        return matmul_fn(other, self)

    for f, name in ((mm_method, "mm"), (matmul_method, "matmul"), (mm_fn, "mm"),
                    (matmul_fn, "matmul"), (matmul_operator, "matmul"),
                    (rmatmul_operator, "matmul")):
        dispatch_point(f, name)
    for f, name in ((mm_method, "mm"), (matmul_method, "matmul")):
        f.__name__ = name
        setattr(Tensor, name, f)
    Tensor.__matmul__ = matmul_operator
    Tensor.__rmatmul__ = rmatmul_operator
    mm_fn.__name__, matmul_fn.__name__ = "mm", "matmul"
    # out= for sparse operands too (the dense functions' own is not reached)
    mm_fn, matmul_fn = with_out(mm_fn, "mm"), with_out(matmul_fn, "matmul")
    NAMESPACE["mm"], NAMESPACE["matmul"] = mm_fn, matmul_fn
    ember.mm, ember.matmul = mm_fn, matmul_fn
    ember.spmm = mm_fn
    ember.sparse_coo_tensor = sparse_coo_tensor
    ember.sparse_coo, ember.strided, ember.layout = sparse_coo, strided, type(strided)


_install()
