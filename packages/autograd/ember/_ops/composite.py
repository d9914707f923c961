"""Operations composed of other ops: their gradients come from the parts,
so they need no formula of their own (einsum, diag, meshgrid, cross,
median, logaddexp, splits and stacks, ...)."""
import collections
import math
import numbers
import string

import numpy as np

from .._creation import empty_like, ones, tensor, zeros_like
from .._dtypes import bool as bool_, int64
from .._tensor import Tensor, _make
from .define import NAMESPACE, not_tensor, register
from .indexing import sort
from .samples import Index, S, T
from .shape import _ViewOf, cat, narrow, view_scatter, vstack


def _register(fn, samples=(), method=True, **kw):
    register(fn.__name__, function=fn, method=fn if method else None, samples=samples, **kw)
    return fn


# ---- einsum ------------------------------------------------------------------
def einsum(equation, *operands):
    """Einstein summation, contracted pairwise left to right with bmm."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"einsum(): {len(terms)} operands in the equation but "
                         f"{len(operands)} given")
    terms, out = _expand_ellipsis(terms, out if arrow else None, operands)
    parts = [_take_diagonals(x, t) for x, t in zip(operands, terms)]
    x, t = parts[0]
    for i, (y, u) in enumerate(parts[1:], 1):
        keep = set(out).union(*(p[1] for p in parts[i + 1:]))
        x, t = _contract(x, t, y, u, keep)
    x, t = _sum_letters(x, t, set(out))
    return x if t == out else x.permute([t.index(c) for c in out])


def _expand_ellipsis(terms, out, operands):
    used = {c for c in "".join(terms) + (out or "") if c.isalpha()}
    free = [c for c in string.ascii_letters if c not in used]
    n = max((x.ndim - len(t) + 3 for t, x in zip(terms, operands) if "..." in t), default=0)
    ell = "".join(free[:n])
    terms = [t.replace("...", ell[n - (x.ndim - len(t) + 3):]) if "..." in t else t
             for t, x in zip(terms, operands)]
    for t, x in zip(terms, operands):
        if len(t) != x.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(t)}) "
                               f"does not match the number of dimensions ({x.ndim}) for "
                               "operand and no ellipsis was given")
    if out is None:  # implicit output: broadcast dims, then letters used once, sorted
        counts = collections.Counter("".join(terms))
        out = ell + "".join(sorted(c for c in counts if counts[c] == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
    return terms, out


def _take_diagonals(x, t):
    """'ii' -> 'i': repeated letters in one operand select its diagonal."""
    while len(set(t)) != len(t):
        c = next(c for c in t if t.count(c) > 1)
        i = t.index(c)
        j = t.index(c, i + 1)
        x = x.diagonal(0, i, j)
        t = t[:i] + t[i + 1:j] + t[j + 1:] + c
    return x, t


def _sum_letters(x, t, keep):
    drop = [i for i, c in enumerate(t) if c not in keep]
    if not drop:
        return x, t
    return x.sum(drop), "".join(c for c in t if c in keep)


def _contract(x, t, y, u, keep):
    x, t = _sum_letters(x, t, keep | set(u))
    y, u = _sum_letters(y, u, keep | set(t))
    batch = [c for c in t if c in u and c in keep]
    summed = [c for c in t if c in u and c not in keep]
    x_only = [c for c in t if c not in u]
    y_only = [c for c in u if c not in t]
    size = {}
    for c, s in list(zip(t, x.shape)) + list(zip(u, y.shape)):
        size[c] = max(size.get(c, 1), s)
    x = x.permute([t.index(c) for c in batch + x_only + summed]).expand(
        *[size[c] for c in batch], *[size[c] for c in x_only], *[size[c] for c in summed])
    y = y.permute([u.index(c) for c in batch + summed + y_only]).expand(
        *[size[c] for c in batch], *[size[c] for c in summed], *[size[c] for c in y_only])

    def prod(letters):
        return math.prod(size[c] for c in letters)
    b, m, k, n = prod(batch), prod(x_only), prod(summed), prod(y_only)
    z = x.reshape(b, m, k).bmm(y.reshape(b, k, n))
    z = z.reshape([size[c] for c in batch + x_only + y_only])
    return z, "".join(batch + x_only + y_only)


_register(einsum, method=False, samples=[
    S("ij,jk->ik", T(3, 4), T(4, 2)), S("bij,bjk->bik", T(2, 3, 4), T(2, 4, 2)),
    S("ii->i", T(3, 3)), S("ij->", T(3, 4)), S("i,j->ij", T(3), T(4)),
    S("...ij,...jk", T(2, 3, 4), T(4, 2), name="ellipsis_implicit"),
    S("ijk,ik->j", T(2, 3, 4), T(2, 4)), S("ab,bc,cd->ad", T(2, 3), T(3, 4), T(4, 2))])


# ---- diagonals, grids, products ---------------------------------------------------
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Matrices whose diagonal (offset) holds input's last dim."""
    n = input.shape[-1] + abs(offset)
    shape = list(input.shape[:-1]) + [n, n]
    out = view_scatter(input, shape, _ViewOf("diagonal", offset, -2, -1))
    return out if (dim1, dim2) in ((-2, -1), (out.ndim - 2, out.ndim - 1)) else \
        out.movedim((-2, -1), (dim1, dim2))


def diag(input, diagonal=0):
    """1-D -> a matrix with it on a diagonal; 2-D -> that diagonal."""
    if input.ndim == 1:
        return diag_embed(input, diagonal)
    if input.ndim == 2:
        return input.diagonal(diagonal)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


def diagflat(input, offset=0):
    return diag_embed(input.reshape(-1), offset)


_register(diag_embed, samples=[S(T(2, 3)), S(T(3), 1)])
_register(diag, samples=[S(T(3)), S(T(3), -1), S(T(3, 4), 1)])
_register(diagflat, samples=[S(T(2, 2))])


def meshgrid(*tensors, indexing="ij"):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    swap = indexing == "xy" and len(tensors) >= 2
    ts = list(tensors)
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = [t.numel() for t in ts]
    grids = [t.reshape([-1 if i == k else 1 for i in range(len(ts))]).expand(shape)
             for k, t in enumerate(ts)]
    if swap:  # 'xy' is 'ij' of (y, x, ...) with the first two results swapped
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


_register(meshgrid, method=False,
          samples=[S(T(3), T(2), indexing="ij"), S(T(3), T(2), indexing="xy")])


def cross(input, other, dim=None):
    """The cross product of 3-vectors along dim."""
    if dim is None:
        dim = next((i for i, s in enumerate(input.shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    i1 = tensor([1, 2, 0])
    i2 = tensor([2, 0, 1])
    return input.index_select(dim, i1) * other.index_select(dim, i2) - \
        input.index_select(dim, i2) * other.index_select(dim, i1)


_register(cross, samples=[S(T(4, 3), T(4, 3), 1), S(T(3, 2), T(3, 2), 0)])


def inner(input, other):
    """Sum over the last dims of both."""
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    return tensordot(input, other, ([-1], [-1]))


def vdot(input, other):
    return (input * other).sum()


def tensordot(a, b, dims=2):
    if isinstance(dims, int):
        dims = (list(range(a.ndim - dims, a.ndim)), list(range(dims)))
    da = [d % a.ndim for d in ([dims[0]] if isinstance(dims[0], int) else dims[0])]
    db = [d % b.ndim for d in ([dims[1]] if isinstance(dims[1], int) else dims[1])]
    letters = iter(string.ascii_letters)
    ta = [next(letters) for _ in range(a.ndim)]
    tb = [next(letters) for _ in range(b.ndim)]
    for i, j in zip(da, db):
        tb[j] = ta[i]
    out = [c for i, c in enumerate(ta) if i not in da] + \
        [c for j, c in enumerate(tb) if j not in db]
    return einsum(f"{''.join(ta)},{''.join(tb)}->{''.join(out)}", a, b)


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    return beta * input + alpha * vec1.outer(vec2)


def kron(input, other):
    """Kronecker product: every element of input times all of other."""
    n = max(input.ndim, other.ndim)
    a = input.reshape((1,) * (n - input.ndim) + tuple(input.shape))
    b = other.reshape((1,) * (n - other.ndim) + tuple(other.shape))
    prod = a.reshape([s for d in range(n) for s in (a.shape[d], 1)]) * \
        b.reshape([s for d in range(n) for s in (1, b.shape[d])])
    return prod.reshape([a.shape[d] * b.shape[d] for d in range(n)])


_register(inner, samples=[S(T(3), T(3)), S(T(2, 3), T(4, 3))])
_register(vdot, samples=[S(T(3), T(3))])
_register(tensordot, method=False,
          samples=[S(T(2, 3, 4), T(3, 4, 2)), S(T(2, 3), T(3, 2), ([1], [0]))])
_register(addr, samples=[S(T(3, 4), T(3), T(4)), S(T(3, 4), T(3), T(4), beta=0.5, alpha=2.0)])
_register(kron, samples=[S(T(2, 2), T(2, 3)), S(T(3), T(2))])


def dist(input, other, p=2):
    return (input - other).norm(p)


def cdist(x1, x2, p=2.0):
    """Pairwise p-norm distances between the rows of x1 and x2."""
    return (x1.unsqueeze(-2) - x2.unsqueeze(-3)).norm(p, -1)


_register(dist, samples=[S(T(3, 4), T(3, 4)), S(T(3, 4), T(4), 1)])
_register(cdist, method=False, samples=[S(T(3, 2), T(4, 2)), S(T(2, 3, 2), T(2, 4, 2), 1.0)])


# ---- element-wise compositions ---------------------------------------------------
def logaddexp(input, other):
    m = input.detach().maximum(other.detach())
    return m + ((input - m).exp() + (other - m).exp()).log()


def logaddexp2(input, other):
    return logaddexp(input * math.log(2), other * math.log(2)) / math.log(2)


def deg2rad(input):
    return input * (math.pi / 180)


def rad2deg(input):
    return input * (180 / math.pi)


def logit(input, eps=None):
    x = input if eps is None else input.clamp(eps, 1 - eps)
    return (x / (1 - x)).log()


def sinc(input):
    px = input * math.pi
    safe = px.masked_fill(input == 0, 1.0)
    return (safe.sin() / safe).masked_fill(input == 0, 1.0)


def fmax(input, other):
    """maximum that ignores NaN."""
    return input.maximum(other).where(~(input.isnan() | other.isnan()),
                                      input.where(other.isnan(), other))


def fmin(input, other):
    """minimum that ignores NaN."""
    return input.minimum(other).where(~(input.isnan() | other.isnan()),
                                      input.where(other.isnan(), other))


def logcumsumexp(input, dim):
    m = input.detach().amax(dim, keepdim=True)
    m = m.masked_fill(m.isinf(), 0)
    return (input - m).exp().cumsum(dim).log() + m


for _f, _samples in ((logaddexp, [S(T(3, 4), T(3, 4)), S(T(3, 4), T(4))]),
                     (logaddexp2, [S(T(3, 4), T(3, 4))]), (deg2rad, [S(T(3, 4))]),
                     (rad2deg, [S(T(3, 4))]),
                     (logit, [S(T(3, 4, low=0.1, high=0.9)), S(T(3, 4, low=0.1, high=0.9), 0.2)]),
                     (sinc, [S(T(3, 4))]), (fmax, [S(T(3, 4), T(3, 4))]),
                     (fmin, [S(T(3, 4), T(3, 4))]), (logcumsumexp, [S(T(3, 4), 1)])):
    _register(_f, samples=_samples)
Tensor.deg2rad_ = lambda self: self.mul_(math.pi / 180)
Tensor.rad2deg_ = lambda self: self.mul_(180 / math.pi)
Tensor.logit_ = lambda self, eps=None: self.copy_(logit(self, eps))


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """n-th forward differences along dim."""
    if prepend is not None or append is not None:
        parts = [p for p in (prepend, input, append) if p is not None]
        input = cat(parts, dim)
    for _ in range(n):
        length = input.shape[dim]
        input = narrow(input, dim, 1, length - 1) - narrow(input, dim, 0, length - 1)
    return input


_register(diff, samples=[S(T(3, 5)), S(T(3, 5), 2, 0), S(T(4), prepend=T(1))])

MedianResult = collections.namedtuple("median", ["values", "indices"])


def _median(input, dim, keepdim, skip_nan):
    """The lower median along dim (None: of all elements).  Sorting puts NaN
    last, in order: median propagates NaN (the row's first NaN and its
    index, as PyTorch), nanmedian takes the lower median of the rest."""
    if dim is None:
        if input.numel() == 0 and input.dtype.is_floating_point:
            return input.new_full((), float("nan"))  # as PyTorch
        flat = input.reshape(-1)
        result = _median(flat, 0, False, skip_nan).values
        return result
    dim %= max(input.ndim, 1)
    if input.ndim and input.shape[dim] == 0:
        raise IndexError(f"{'nanmedian' if skip_nan else 'median'}(): Expected reduction dim "
                         f"{dim} to have non-zero size.")
    s = sort(input, dim)
    length = input.shape[dim]
    if not input.dtype.is_floating_point:
        k = narrow(s.indices, dim, 0, 1).mul(0).add((length - 1) // 2)
    else:
        nans = input.isnan().sum(dim, keepdim=True)
        k = ((length - nans - 1) // 2).clamp(min=0) if skip_nan else \
            (length - nans).where(nans > 0, nans.mul(0).add((length - 1) // 2))
    values, indices = s.values.gather(dim, k), s.indices.gather(dim, k)
    if not keepdim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return MedianResult(values, indices)


def median(input, dim=None, keepdim=False):
    """The lower median (of all elements, or along dim with its index); NaN
    when there is one."""
    return _median(input, dim, keepdim, False)


def nanmedian(input, dim=None, keepdim=False):
    """median ignoring NaN (NaN only where every element is)."""
    return _median(input, dim, keepdim, True)


_register(median, samples=[S(T(3, 5)), S(T(3, 4), 1), S(T(3, 4), 0, True)])
_register(nanmedian, samples=[S(T(3, 5)), S(T(3, 4), 1), S(T(3, 4), 0, True)])


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each element (or slice along dim) repeated `repeats` times."""
    if repeats is None:  # repeat_interleave(repeats_tensor): indices
        return tensor(np.repeat(np.arange(input.numel()), input.cpu().numpy()),
                      device=input.device)
    if dim is None:
        input, dim = input.reshape(-1), 0
    dim %= max(input.ndim, 1)
    if isinstance(repeats, Tensor) and repeats.numel() > 1:
        index = tensor(np.repeat(np.arange(input.shape[dim]), repeats.cpu().numpy()),
                       device=input.device)
        return input.index_select(dim, index)
    r = int(repeats)
    if r < 0:
        raise RuntimeError("repeats can not be negative")
    expanded = input.unsqueeze(dim + 1)
    shape = list(expanded.shape)
    shape[dim + 1] = r
    out_shape = list(input.shape)
    out_shape[dim] *= r
    return expanded.expand(shape).reshape(out_shape)


_register(repeat_interleave, samples=[S(T(2, 3), 2), S(T(2, 3), 3, 1),
                                      S(T(3, 2), Index([1, 0, 2]), 0, name="per_row")])


def rot90(input, k=1, dims=(0, 1)):
    d0, d1 = dims
    k %= 4
    if k == 1:
        return input.flip([d1]).transpose(d0, d1)
    if k == 2:
        return input.flip([d0, d1])
    if k == 3:
        return input.flip([d0]).transpose(d0, d1)
    return input.clone()


_register(rot90, samples=[S(T(3, 4)), S(T(3, 4), 2), S(T(2, 3, 4), -1, (1, 2))])


def ravel(input):
    return input.reshape(-1)


_register(ravel, samples=[S(T(3, 4))])


# ---- splitting and stacking ----------------------------------------------------
_MAX_PIECES = 2**31  # more tensors than that cannot be held in memory
def tensor_split(input, indices_or_sections, dim=0):
    n = input.shape[dim]
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        if k <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {k}")
        if k > _MAX_PIECES:  # PyTorch fails allocating them
            raise RuntimeError(f"tensor_split(): cannot make {k} sections")
        # the first n % k sections are one longer
        bounds = [i * (n // k) + min(i, n % k) for i in range(k + 1)]
    else:
        bounds = [0] + [min(max(int(i), 0), n) for i in indices_or_sections] + [n]
    return tuple(narrow(input, dim, a, max(b - a, 0)) for a, b in zip(bounds, bounds[1:]))


def hsplit(input, sections):
    return tensor_split(input, sections, 1 if input.ndim > 1 else 0)


def vsplit(input, sections):
    return tensor_split(input, sections, 0)


def dsplit(input, sections):
    return tensor_split(input, sections, 2)


def column_stack(tensors):
    return cat([t.reshape(-1, 1) if t.ndim < 2 else t for t in tensors], 1)


_register(tensor_split, samples=[S(T(7, 2), 3), S(T(2, 6), [1, 4], 1)])
_register(hsplit, samples=[S(T(2, 6), 3)])
_register(vsplit, samples=[S(T(6, 2), [2])])
_register(column_stack, method=False, samples=[S([T(3), T(3, 2)])])
NAMESPACE["row_stack"] = vstack


# ---- unique slices (no gradient) ---------------------------------------------------
# The backends' unique flattens; with dim, the front composes it from stable
# sorts.  The slices along dim are rows of an (n, m) matrix ordered
# lexicographically, element values in the stable sort's order (NaN above
# every number); NaN never equals NaN, so slices holding one stay apart.

def _check_dim(name, input, dim):
    """dim as an int in [0, ndim), with PyTorch's errors."""
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
        raise TypeError(f"{name}(): argument 'dim' must be int, not {type(dim).__name__}")
    dim, n = int(dim), input.ndim
    if n == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-n}, {n - 1}], but got {dim})")
    return dim % n


def _check_sizes(input, dim):
    """PyTorch takes a 0-sized dim only when it is the selected one, alone."""
    zero_dims = sum(1 for s in input.shape if s == 0)
    if input.shape[dim] == 0 and zero_dims > 1:
        raise RuntimeError("Number of zero sized dimensions is more than one, so unique "
                           "cannot be applied ")
    if input.shape[dim] != 0 and zero_dims:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so "
                           "unique cannot be applied")


def _ranks(order, rises):
    """Dense ranks (int64) of keys sorted along dim 0 into `order`, where
    `rises` says whether each sorted key but the first is above the one
    before it: equal keys share a rank, written back at their own rows."""
    sorted_ranks = cat([zeros_like(order[:1]), rises.long().cumsum(0)])
    return empty_like(order).scatter_(0, order, sorted_ranks)


def _column_ranks(rows):
    """Each column's dense ranks; NaNs tie (the sort puts them together),
    so that the ranks order rows as their values do."""
    values, order = sort(rows, 0, stable=True)
    rises = values[1:] != values[:-1]
    if values.is_floating_point():
        rises &= ~(values[1:].isnan() & values[:-1].isnan())
    return _ranks(order, rises)


def _pair_ranks(a, b):
    """Dense ranks of the pairs (a, b) of each column, lexicographically:
    a stable sort by b, then one by a (no a * n + b, which could overflow)."""
    order = sort(b, 0, stable=True).indices
    order = order.gather(0, sort(a.gather(0, order), 0, stable=True).indices)
    sa, sb = a.gather(0, order), b.gather(0, order)
    return _ranks(order, (sa[1:] != sa[:-1]) | (sb[1:] != sb[:-1]))


def _lexicographic_order(rows):
    """The stable permutation sorting the rows of `rows` (n, m)
    lexicographically.  Ranking the columns, then merging neighbouring
    columns' ranks pairwise, takes log2(m) rounds of batched sorts where
    one sort per column (LSD) would take m."""
    if rows.shape[1] > 1:
        ranks = _column_ranks(rows)
        while ranks.shape[1] > 1:
            if ranks.shape[1] % 2:  # the odd column out pairs with a constant
                ranks = cat([ranks, zeros_like(ranks[:, :1])], 1)
            ranks = _pair_ranks(ranks[:, 0::2], ranks[:, 1::2])
        rows = ranks
    return sort(rows[:, 0], stable=True).indices


def _collapse(input, dim, sort_first, return_inverse, return_counts):
    """The slices of input along dim, sorted first or taken as they are,
    with equal neighbours merged; and the inverse and counts asked for."""
    n = input.shape[dim]
    if n == 0:  # nothing to merge (the other dims are not 0: _check_sizes)
        out = [input.new_empty(input.shape)]
        out += [input.new_empty(0, dtype=int64) for _ in range(return_inverse + return_counts)]
    else:
        rows = input.movedim(dim, 0).reshape(n, -1)
        order = _lexicographic_order(rows) if sort_first else None
        if order is not None:
            rows = rows.index_select(0, order)
        # a slice starts a group where any element differs from the slice
        # before (NaN != NaN: slices holding NaN never merge)
        first = cat([ones(1, dtype=bool_, device=input.device),
                     (rows[1:] != rows[:-1]).any(1)])
        starts = first.nonzero().squeeze(1)
        out = [input.index_select(dim, starts if order is None else order[starts])]
        if return_inverse:
            group = first.long().cumsum(0) - 1  # each slice's group, in `order`
            out.append(group if order is None else empty_like(group).scatter_(0, order, group))
        if return_counts:
            out.append(cat([starts[1:], starts.new_full((1,), n)]) - starts)
    return out[0] if len(out) == 1 else tuple(out)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The unique elements (dim=None: the backend's, flattened) or slices
    along dim (always sorted), with the inverse and counts asked for."""
    if not isinstance(input, Tensor):
        raise not_tensor("unique", input)
    if dim is None:
        r = input._data.unique(sorted, return_inverse, return_counts)
        return tuple(_make(x) for x in r) if isinstance(r, tuple) else _make(r)
    dim = _check_dim("unique", input, dim)
    _check_sizes(input, dim)
    return _collapse(input.detach(), dim, True, return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Runs of equal consecutive elements (dim=None: of the flattened
    input) or slices along dim, each kept once; the inverse and counts."""
    if not isinstance(input, Tensor):
        raise not_tensor("unique_consecutive", input)
    input = input.detach()
    if dim is not None:
        dim = _check_dim("unique_consecutive", input, dim)
        _check_sizes(input, dim)
        return _collapse(input, dim, False, return_inverse, return_counts)
    out = _collapse(input.reshape(-1), 0, False, return_inverse, return_counts)
    if return_inverse:  # flattened, the inverse still has the input's shape
        out = (out[0], out[1].reshape(input.shape)) + out[2:]
    return out


_register(unique, differentiable=False, samples=[
    S(Index([[1, 2], [1, 2], [0, 5]]), dim=0, return_inverse=True, return_counts=True),
    S(Index([[1, 2, 1], [3, 2, 3]]), True, True, True, 1),
    S(Index([[2, 1, 2], [1, 3, 1], [2, 0, 2]]), return_counts=True, dim=-1),
    S(Index([[[1, 2], [1, 2]], [[1, 2], [1, 2]], [[0, 2], [1, 2]]]), return_inverse=True, dim=0),
    S(Index([3, 1, 3, 0, 1]), False, True, True, 0),
    S(T(3, 4), dim=1),
    S(T(5), return_inverse=True, return_counts=True)])
_register(unique_consecutive, differentiable=False, samples=[
    S(Index([1, 1, 2, 2, 3, 1, 1, 2]), True, True),
    S(Index([[1, 1], [2, 1], [2, 1]]), return_inverse=True),
    S(Index([[1, 2], [1, 2], [0, 5], [1, 2]]), True, True, dim=0),
    S(Index([[1, 1, 2, 1], [3, 3, 2, 3]]), return_counts=True, dim=-1),
    S(T(3, 4), dim=0)])


# ---- index construction (no gradient) ---------------------------------------------
def tril_indices(row, col, offset=0, *, dtype=None, device=None):
    return tensor(np.stack(np.tril_indices(row, offset, col)), device=device,
                  dtype=dtype)


def triu_indices(row, col, offset=0, *, dtype=None, device=None):
    return tensor(np.stack(np.triu_indices(row, offset, col)), device=device,
                  dtype=dtype)


def heaviside(input, values):
    return (input > 0).to(input.dtype).where(input != 0, values.expand_as(input)
                                             if isinstance(values, Tensor) else values)


def signbit(input):
    return (input < 0) | ((input == 0) & (1.0 / input < 0)) if input.is_floating_point() \
        else input < 0


for _f in (tril_indices, triu_indices):
    register(_f.__name__, function=_f, differentiable=False)
for _f in (heaviside, signbit):
    register(_f.__name__, function=_f, method=_f, differentiable=False)
