"""Reductions: sum, prod, mean, var/std, max/min, all/any, logsumexp, ...
(ember.th._binding_math's, over libTH), norm, cumsum/cumprod."""
from ._binding import registrar
from ._binding_math import define_reductions, dims_arg, norm_args
from ._complex import complex_reduction, view_as_complex, view_as_real
from ._core import C, Tensor, dtype_code, int_array, wrap
from ._lib import check, lib

_functions = {}
_register = registrar(Tensor, _functions)
_reducers = define_reductions(_register, Tensor, C, wrap, check, int_array)


def _with_complex(name):
    """sum/mean that take complex tensors through their real view."""
    real_fn = _reducers[name]
    complex_fn = complex_reduction(real_fn)
    COMPLEX64 = lib.TH_COMPLEX64

    def fn(input, dim=None, keepdim=False, *, dtype=None, **kwargs):
        if input._p.dtype >= COMPLEX64:  # the complex codes are the last ones
            if dtype is not None and not dtype.is_complex:
                raise RuntimeError(f"{name}(): a {input.dtype._title} input's {name} cannot "
                                   f"be computed in dtype {dtype._title}")
            r = complex_fn(input, dim, keepdim, dtype=dtype)
            out = kwargs.get("out")
            return r if out is None else out.copy_(r)
        return real_fn(input, dim, keepdim, dtype=dtype, **kwargs)
    fn.__name__ = name
    return fn


for _name in ("sum", "mean"):
    _register(_with_complex(_name))


def _nonzero_of_complex(name):
    """all/any/count_nonzero: a complex element counts as nonzero when
    either part is (the reduction of z != 0)."""
    real_fn = _reducers[name]
    COMPLEX64 = lib.TH_COMPLEX64

    def fn(input, dim=None, *args, **kwargs):
        if input._p.dtype >= COMPLEX64:
            input = input != 0
        return real_fn(input, dim, *args, **kwargs)
    fn.__name__ = name
    return fn


for _name in ("all", "any", "count_nonzero"):
    _register(_nonzero_of_complex(_name))


def norm(input, p="fro", dim=None, keepdim=False, dtype=None, *, out=None):
    input, p = norm_args(input, p, dtype)
    n, arr = dims_arg(dim, int_array, C.ffi.NULL)
    r = wrap(lib.th_norm(input._p, float(p), n, arr, bool(keepdim)))
    return r if out is None else out.copy_(r)


def cumsum(input, dim, *, dtype=None, out=None):
    if input._p.dtype >= lib.TH_COMPLEX64 and (dtype is None or dtype.is_complex):
        r = _complex_cumsum(input, dim, dtype)
    else:
        r = wrap(lib.th_cumsum(input._p, dim, dtype_code(dtype, -1)))
    return r if out is None else out.copy_(r)


def _complex_cumsum(input, dim, dtype):
    """cumsum of complex values: of the (re, im) pairs along the same dim."""
    n = max(input.ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    pairs = view_as_real(input if input.ndim else input.reshape(1))
    r = view_as_complex(wrap(lib.th_cumsum(pairs._p, dim % n, -1)).contiguous())
    r = r if input.ndim else r.reshape(())
    return r if dtype is None else r.to(dtype)


def cumprod(input, dim, *, dtype=None, out=None):
    r = wrap(lib.th_cumprod(input._p, dim, dtype_code(dtype, -1)))
    return r if out is None else out.copy_(r)


for _f in (norm, cumsum, cumprod):
    _register(_f)
Tensor.cumsum_ = lambda self, dim, *, dtype=None: self.copy_(cumsum(self, dim, dtype=dtype))
Tensor.cumprod_ = lambda self, dim, *, dtype=None: self.copy_(cumprod(self, dim, dtype=dtype))

functions = _functions
