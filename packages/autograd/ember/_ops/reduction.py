"""Reductions: sum, mean, prod, var/std, max/min and their arg- and a-
forms, norm, logsumexp, cumulative sums and products, all/any."""
import builtins
import collections
import math

from .._creation import ones, zeros
from .._tensor import Tensor
from .define import NAMESPACE, OUT, op, register
from .samples import S, T

MaxResult = collections.namedtuple("max", ["values", "indices"])
MinResult = collections.namedtuple("min", ["values", "indices"])


def _dims(dim, ndim):
    """The reduced dims as a sorted list of non-negative ints (all when None
    or empty)."""
    if dim is None:
        return list(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    if not dims:
        return list(range(ndim))
    n = builtins.max(ndim, 1)
    return sorted({d % n for d in dims})


def unreduce(g, shape, dim, keepdim):
    """The gradient of a reduction over `dim` broadcast back to `shape`."""
    if not keepdim and dim is not None and len(shape) > 0:
        dims = _dims(dim, len(shape))
        if len(dims) < len(shape):
            for d in dims:
                g = g.unsqueeze(d)
    return g.expand(shape)


def _count(shape, dim):
    return math.prod(shape[d] for d in _dims(dim, len(shape))) if shape else 1


_REDUCE_SAMPLES = [S(T(3, 4)), S(T(3, 4), 1), S(T(3, 4), 0, True), S(T(2, 3, 2), (0, 2)),
                   S(T(2, 3, 2), -1, keepdim=True), S(T())]


@op()
class sum:
    """Sum of all elements, or over dim."""

    def forward(input, dim=None, keepdim=False, *, dtype=None):
        return input._data.sum(dim, keepdim, dtype=dtype)

    def save(out, input, dim=None, keepdim=False, *, dtype=None):
        return (input.shape, dim, keepdim, None if dtype is None else input.dtype)

    def backward(g, shape, dim, keepdim, dtype):
        g = unreduce(g, shape, dim, keepdim)
        return g if dtype is None else g.to(dtype)

    samples = _REDUCE_SAMPLES


@op()
class mean:
    """Mean of all elements, or over dim."""

    def forward(input, dim=None, keepdim=False, *, dtype=None):
        return input._data.mean(dim, keepdim, dtype=dtype)

    def save(out, input, dim=None, keepdim=False, *, dtype=None):
        shape = input.shape
        return (shape, dim, keepdim, _count(shape, dim))

    def backward(g, shape, dim, keepdim, count):
        return unreduce(g, shape, dim, keepdim) / count

    samples = _REDUCE_SAMPLES


@op()
class prod:
    """Product of all elements, or over dim."""

    def forward(input, dim=None, keepdim=False, *, dtype=None):
        if dim is None:
            return input._data.prod(dtype=dtype)
        return input._data.prod(dim, keepdim, dtype=dtype)

    def save(out, input, dim=None, keepdim=False, *, dtype=None):
        return (input, OUT, dim, keepdim)

    def backward(g, x, y, dim, keepdim):
        g = unreduce(g, x.shape, dim, keepdim)
        if not bool((x == 0).any()):
            return g * unreduce(y, x.shape, dim, keepdim) / x
        if dim is None or x.ndim == 0:
            return g * _product_of_others(x.reshape(-1), 0).reshape(x.shape)
        return g * _product_of_others(x, dim)

    samples = [S(T(3, 4, low=0.5)), S(T(3, 4, low=0.5), 1), S(T(2, 3, low=0.5), 0, True)]


def _product_of_others(x, dim):
    """For each element, the product of the others along dim (no division,
    so zeros are fine): exclusive products from the left and the right."""
    n = x.shape[dim]
    if n == 1:
        return ones(x.shape, dtype=x.dtype)
    one = ones(x.narrow(dim, 0, 1).shape, dtype=x.dtype)
    from .shape import cat
    left = cat([one, x.narrow(dim, 0, n - 1)], dim).cumprod(dim)
    right = cat([x.narrow(dim, 1, n - 1), one], dim).flip(dim).cumprod(dim).flip(dim)
    return left * right


@op()
class cumsum:
    """Cumulative sum along dim."""

    def forward(input, dim, *, dtype=None):
        return input._data.cumsum(dim, dtype=dtype)

    def save(out, input, dim, *, dtype=None):
        return (dim, input.ndim, None if dtype is None else input.dtype)

    def backward(g, dim, ndim, dtype):
        if ndim:
            g = g.flip(dim).cumsum(dim).flip(dim)
        return g if dtype is None else g.to(dtype)

    def inplace(input, dim, *, dtype=None):
        input._data.copy_(input._data.cumsum(dim, dtype=dtype))

    samples = [S(T(3, 4), 1), S(T(3, 4), 0), S(T(5), 0)]


@op()
class cumprod:
    """Cumulative product along dim."""

    def forward(input, dim, *, dtype=None):
        return input._data.cumprod(dim, dtype=dtype)

    def save(out, input, dim, *, dtype=None):
        return (input, OUT, dim)

    def backward(g, x, y, dim):
        if x.ndim == 0:
            return g
        if not bool((x == 0).any()):
            return (g * y).flip(dim).cumsum(dim).flip(dim) / x
        return _cumprod_backward_with_zeros(g, x, dim)

    def inplace(input, dim, *, dtype=None):
        input._data.copy_(input._data.cumprod(dim, dtype=dtype))

    samples = [S(T(3, 4, low=0.5), 1), S(T(4, low=0.5), 0)]


def _cumprod_backward_with_zeros(g, x, dim):
    """grad_i = sum over k >= i of g_k * prod_{j <= k, j != i} x_j, built as
    an n x n table along dim (no division; used only when x has zeros)."""
    xm = x.movedim(dim, -1)
    gm = g.movedim(dim, -1)
    n = xm.shape[-1]
    eye = ones(n, n, dtype=x.dtype).tril().triu().bool()
    table = xm.unsqueeze(-2).expand(*xm.shape[:-1], n, n).masked_fill(eye, 1).cumprod(-1)
    upper = ones(n, n, dtype=x.dtype).triu()   # k >= i
    grad = (table * upper * gm.unsqueeze(-2)).sum(-1)
    return grad.movedim(-1, dim)


def _extreme_backward(g, x, y, dim, keepdim):
    """amax/amin (and max()/min()): gradient split evenly among ties."""
    mask = (x == unreduce(y, x.shape, dim, keepdim)).to(g.dtype)
    count = mask.sum() if dim is None else mask.sum(dim, keepdim=True)
    return unreduce(g, x.shape, dim, keepdim) * mask / count


def _define_extreme(name):
    @op(name)
    class spec:
        def forward(input, dim=None, keepdim=False):
            return getattr(input._data, name)(dim, keepdim)

        def save(out, input, dim=None, keepdim=False):
            return (input, OUT, dim if dim not in ((), []) else None, keepdim)

        backward = _extreme_backward
        samples = [S(T(3, 4)), S(T(3, 4), 1), S(T(2, 3, 2), (0, 2), True)]


def _define_extreme_all(name):
    """max()/min() without dim: the amax/amin of everything."""
    @op(name, function=False, method=False, node_name=f"{name[1:4].capitalize()}Backward1")
    class spec:
        def forward(input):
            return getattr(input._data, name[1:4])()

        def save(out, input):
            return (input, OUT, None, False)

        backward = _extreme_backward
    return spec


def _select_backward(g, shape, dim, indices, keepdim):
    """Gradient of a value-selecting reduction (max/min/sort/topk/... with
    indices): g scattered to the selected positions."""
    if len(shape) == 0:
        return g.reshape(shape)
    if not keepdim:
        g = g.unsqueeze(dim)
        indices = indices.unsqueeze(dim)
    return zeros(shape, dtype=g.dtype, device=g.device).scatter(dim, indices, g)


def _define_extreme_dim(name, result_type):
    """max(dim)/min(dim): (values, indices)."""
    @op(name, function=False, method=False, node_name=f"{name[1:4].capitalize()}Backward0")
    class spec:
        outputs = result_type

        def forward(input, dim, keepdim=False):
            return tuple(getattr(input._data, name[1:4])(dim, keepdim))

        def save(out, input, dim, keepdim=False):
            return (input.shape, dim, out[1], keepdim)

        backward = _select_backward
    return spec


def _extreme_function(name, result_type):
    elementwise = NAMESPACE["maximum" if name == "max" else "minimum"]
    of_all = _define_extreme_all(f"_{name}_all")
    by_dim = _define_extreme_dim(f"_{name}_dim", result_type)

    def fn(input, dim=None, keepdim=False):
        if isinstance(dim, Tensor):
            return elementwise(input, dim)
        if dim is None:
            if input.numel() == 0:
                raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                                   "input.numel() == 0. Specify the reduction dim with the "
                                   "'dim' argument.")
            return of_all(input)
        return by_dim(input, dim, keepdim)

    fn.__name__ = name
    return fn


_define_extreme("amax")
_define_extreme("amin")
max = _extreme_function("max", MaxResult)
min = _extreme_function("min", MinResult)
_EXTREME_SAMPLES = [S(T(3, 4)), S(T(3, 4), 1), S(T(3, 4), 0, True), S(T(3, 4), T(3, 4))]
register("max", function=max, method=max, samples=_EXTREME_SAMPLES)
register("min", function=min, method=min, samples=_EXTREME_SAMPLES)


def _correction(unbiased, correction):
    if correction is not None:
        return float(correction)
    return 1.0 if unbiased is None or unbiased else 0.0


def _var_args(dim, unbiased, keepdim, correction):
    if isinstance(dim, bool):  # var(unbiased) positional form
        unbiased, dim = dim, None
    return dim, _correction(unbiased, correction), keepdim


@op()
class var:
    """Variance with `correction` (Bessel's by default)."""

    def forward(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
        return input._data.var(dim, unbiased, keepdim, correction=correction)

    def save(out, input, dim=None, unbiased=None, keepdim=False, *, correction=None):
        dim, corr, keepdim = _var_args(dim, unbiased, keepdim, correction)
        return (input, dim, corr, keepdim)

    def backward(g, x, dim, corr, keepdim):
        n = _count(x.shape, dim)
        mu = x.mean() if dim is None else x.mean(dim, keepdim=True)
        scale = 2.0 / (n - corr) if n != corr else math.inf  # 0 degrees of freedom: nan/inf
        return unreduce(g, x.shape, dim, keepdim) * scale * (x - mu)

    samples = [S(T(3, 4)), S(T(3, 4), 1), S(T(3, 4), 0, keepdim=True, correction=0),
               S(T(2, 3, 2), (0, 2))]


@op()
class std:
    """Standard deviation with `correction` (Bessel's by default)."""

    def forward(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
        return input._data.std(dim, unbiased, keepdim, correction=correction)

    def save(out, input, dim=None, unbiased=None, keepdim=False, *, correction=None):
        dim, corr, keepdim = _var_args(dim, unbiased, keepdim, correction)
        return (input, OUT, dim, corr, keepdim)

    def backward(g, x, y, dim, corr, keepdim):
        n = _count(x.shape, dim)
        mu = x.mean() if dim is None else x.mean(dim, keepdim=True)
        ratio = unreduce(g / ((n - corr) * y), x.shape, dim, keepdim)
        return ratio * (x - mu)

    samples = [S(T(3, 4)), S(T(3, 4), 1), S(T(3, 4), 0, keepdim=True, correction=0)]


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return (var(input, dim, unbiased, keepdim, correction=correction),
            input.mean(_var_args(dim, unbiased, keepdim, correction)[0], keepdim))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return (std(input, dim, unbiased, keepdim, correction=correction),
            input.mean(_var_args(dim, unbiased, keepdim, correction)[0], keepdim))


@op()
class norm:
    """Vector p-norm of all elements, or over dim ('fro' is p=2)."""

    def forward(input, p="fro", dim=None, keepdim=False, dtype=None):
        return input._data.norm(p, dim, keepdim, dtype)

    def save(out, input, p="fro", dim=None, keepdim=False, dtype=None):
        return (input, OUT, 2.0 if p in ("fro", None) else float(p), dim, keepdim)

    def backward(g, x, y, p, dim, keepdim):
        ge = unreduce(g, x.shape, dim, keepdim)
        ye = unreduce(y, x.shape, dim, keepdim)
        if p == 0:
            return ge * 0
        if p == 1:
            return ge * x.sign()
        if math.isinf(p):
            mask = (x.abs() == ye).to(g.dtype)
            count = mask.sum() if dim is None else mask.sum(dim, keepdim=True)
            return ge * x.sign() * mask / count
        if p == 2:
            return (ge * x / ye).masked_fill(ye == 0, 0)
        return (ge * x * x.abs().pow(p - 2) / ye.pow(p - 1)).masked_fill(ye == 0, 0)

    samples = [S(T(3, 4)), S(T(3, 4), 1), S(T(3, 4), 2, 1), S(T(3, 4), 3, 0, True),
               S(T(3, 4), float("inf"), 1)]


@op()
class logsumexp:
    """log(sum(exp(x))) over dim, computed stably."""

    def forward(input, dim, keepdim=False):
        return input._data.logsumexp(dim, keepdim)

    def save(out, input, dim, keepdim=False):
        return (input, OUT, dim, keepdim)

    def backward(g, x, y, dim, keepdim):
        return unreduce(g, x.shape, dim, keepdim) * (x - unreduce(y, x.shape, dim, keepdim)).exp()

    samples = [S(T(3, 4), 1), S(T(3, 4), (0, 1)), S(T(2, 3, 2), 0, True)]


@op()
class nansum:
    """Sum treating NaN as zero."""

    def forward(input, dim=None, keepdim=False, *, dtype=None):
        return input._data.nansum(dim, keepdim, dtype=dtype)

    def save(out, input, dim=None, keepdim=False, *, dtype=None):
        return (input, dim, keepdim)

    def backward(g, x, dim, keepdim):
        return unreduce(g, x.shape, dim, keepdim) * ~x.isnan()

    samples = [S(T(3, 4)), S(T(3, 4), 1)]


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    valid = (~input.isnan()).sum(dim, keepdim) if dim is not None else (~input.isnan()).sum()
    return input.nansum(dim, keepdim, dtype=dtype) / valid


def aminmax(input, *, dim=None, keepdim=False):
    return collections.namedtuple("aminmax", ["min", "max"])(
        input.amin(dim, keepdim) if dim is not None else input.amin(),
        input.amax(dim, keepdim) if dim is not None else input.amax())


# ---- no gradient -------------------------------------------------------------
def _define_plain(name):
    @op(name)
    class spec:
        def forward(input, *args, **kwargs):
            return getattr(input._data, name)(*args, **kwargs)

        samples = [S(T(3, 4, grad=False)), S(T(3, 4, grad=False), 1)]


for _name in ("argmax", "argmin", "all", "any", "count_nonzero"):
    _define_plain(_name)

for _f in (var_mean, std_mean, nanmean, aminmax):
    register(_f.__name__, function=_f, method=_f,
             samples=[S(T(3, 4)), S(T(3, 4), 1)] if _f is not aminmax else [S(T(3, 4))])
