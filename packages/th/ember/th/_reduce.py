"""Reductions: sum, prod, mean, var/std, max/min, norm, all/any,
logsumexp, cumsum/cumprod, ... over all or given dims."""
import builtins
import collections
import numbers

from ._core import Tensor, _wrap_dim, dtype_code, int_array, wrap
from ._lib import NULL, check, ffi, lib

_functions = {}
_ALL_DIMS = -(1 << 30)  # th_argminmax: reduce the flattened tensor

MaxResult = collections.namedtuple("max", ["values", "indices"])
MinResult = collections.namedtuple("min", ["values", "indices"])


def _register(fn, names=None):
    for n in names or (fn.__name__,):
        _functions[n] = fn
        setattr(Tensor, n, fn)
    return fn


def _dims(dim):
    """(count, int[] or NULL) for dim=None, an int, or a sequence."""
    if dim is None:
        return 0, NULL
    if isinstance(dim, numbers.Integral):
        return 1, int_array([dim])
    dims = list(dim)
    return len(dims), int_array(dims) if dims else NULL


def _reducer(code, name):
    def fn(input, dim=None, keepdim=False, *, dtype=None, out=None):
        n, arr = _dims(dim)
        if n == 0 and dim is not None:  # sum(dim=[]) reduces everything, as PyTorch
            pass
        r = wrap(lib.th_reduce(code, input._p, n, arr, bool(keepdim), dtype_code(dtype, -1)))
        return r if out is None else out.copy_(r)
    fn.__name__ = name
    return fn


for _name, _code in (("sum", lib.TH_RED_SUM), ("prod", lib.TH_RED_PROD),
                     ("mean", lib.TH_RED_MEAN), ("nansum", lib.TH_RED_NANSUM)):
    _register(_reducer(_code, _name))


def _simple(code, name):
    def fn(input, dim=None, keepdim=False, *, out=None):
        n, arr = _dims(dim)
        r = wrap(lib.th_reduce(code, input._p, n, arr, bool(keepdim), -1))
        return r if out is None else out.copy_(r)
    fn.__name__ = name
    return fn


for _name, _code in (("amax", lib.TH_RED_AMAX), ("amin", lib.TH_RED_AMIN),
                     ("all", lib.TH_RED_ALL), ("any", lib.TH_RED_ANY)):
    _register(_simple(_code, _name))


def count_nonzero(input, dim=None):
    n, arr = _dims(dim)
    return wrap(lib.th_reduce(lib.TH_RED_COUNT_NONZERO, input._p, n, arr, False, -1))


def logsumexp(input, dim, keepdim=False, *, out=None):
    n, arr = _dims(dim)
    r = wrap(lib.th_reduce(lib.TH_RED_LOGSUMEXP, input._p, n, arr, bool(keepdim), -1))
    return r if out is None else out.copy_(r)


def _correction(unbiased, correction):
    if correction is not None:
        return float(correction)
    return 1.0 if unbiased is None or unbiased else 0.0


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    if isinstance(dim, bool):  # var(unbiased) positional form
        unbiased, dim = dim, None
    n, arr = _dims(dim)
    r = wrap(lib.th_var(input._p, n, arr, _correction(unbiased, correction), bool(keepdim), 0))
    return r if out is None else out.copy_(r)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    if isinstance(dim, bool):
        unbiased, dim = dim, None
    n, arr = _dims(dim)
    r = wrap(lib.th_var(input._p, n, arr, _correction(unbiased, correction), bool(keepdim), 1))
    return r if out is None else out.copy_(r)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return (var(input, dim, unbiased, keepdim, correction=correction),
            input.mean(dim, keepdim))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return (std(input, dim, unbiased, keepdim, correction=correction),
            input.mean(dim, keepdim))


def norm(input, p="fro", dim=None, keepdim=False, dtype=None, *, out=None):
    if p == "fro" or p is None:
        p = 2.0
    elif isinstance(p, str):
        raise NotImplementedError(f"norm with p='{p}' is not supported")
    if dtype is not None:
        input = input.to(dtype)
    n, arr = _dims(dim)
    r = wrap(lib.th_norm(input._p, float(p), n, arr, bool(keepdim)))
    return r if out is None else out.copy_(r)


def _minmax(is_max, name, result_type):
    def fn(input, dim=None, keepdim=False, *, out=None):
        if isinstance(dim, Tensor):  # max(a, b) is maximum
            return wrap(lib.th_binary(lib.TH_MAXIMUM if is_max else lib.TH_MINIMUM,
                                      input._p, dim._p))
        if dim is None:
            if input.numel() == 0:
                raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                                   "input.numel() == 0. Specify the reduction dim with the "
                                   "'dim' argument.")
            return wrap(lib.th_reduce(lib.TH_RED_AMAX if is_max else lib.TH_RED_AMIN,
                                      input._p, 0, NULL, False, -1))
        vals = ffi.new("th_tensor **")
        idx = ffi.new("th_tensor **")
        check(lib.th_minmax_dim(input._p, dim, bool(keepdim), is_max, vals, idx))
        return result_type(wrap(vals[0]), wrap(idx[0]))
    fn.__name__ = name
    return fn


max = _minmax(1, "max", MaxResult)
min = _minmax(0, "min", MinResult)


def aminmax(input, *, dim=None, keepdim=False):
    return (amin(input, dim, keepdim), amax(input, dim, keepdim))


amin = _functions["amin"]
amax = _functions["amax"]


def _arg_dim(input, dim):
    # explicit dims are range-checked here: the C call reads any dim below
    # -ndim as "over the flattened tensor"
    return _ALL_DIMS if dim is None else _wrap_dim(dim, input.ndim)


def argmax(input, dim=None, keepdim=False):
    return wrap(lib.th_argminmax(input._p, _arg_dim(input, dim), bool(keepdim), 1))


def argmin(input, dim=None, keepdim=False):
    return wrap(lib.th_argminmax(input._p, _arg_dim(input, dim), bool(keepdim), 0))


def cumsum(input, dim, *, dtype=None, out=None):
    r = wrap(lib.th_cumsum(input._p, dim, dtype_code(dtype, -1)))
    return r if out is None else out.copy_(r)


def cumprod(input, dim, *, dtype=None, out=None):
    r = wrap(lib.th_cumprod(input._p, dim, dtype_code(dtype, -1)))
    return r if out is None else out.copy_(r)


for _f in (count_nonzero, logsumexp, var, std, var_mean, std_mean, norm, max, min,
           aminmax, argmax, argmin, cumsum, cumprod):
    _register(_f)
Tensor.cumsum_ = lambda self, dim, *, dtype=None: self.copy_(cumsum(self, dim, dtype=dtype))
Tensor.cumprod_ = lambda self, dim, *, dtype=None: self.copy_(cumprod(self, dim, dtype=dtype))

functions = _functions
