"""The reductions and matrix products ember.th and ember.thc share: one
definition over a C library's th_reduce/th_var/th_minmax_dim/th_argminmax
and mm/bmm/addmm/baddbmm (or the thc_ ones)."""
import collections
import numbers

from ._binding import dtype_code, wrap_dim

MaxResult = collections.namedtuple("max", ["values", "indices"])
MinResult = collections.namedtuple("min", ["values", "indices"])
_ALL_DIMS = -(1 << 30)  # argminmax: reduce the flattened tensor


def out_to(r, out):
    """r, or r copied into `out` when given."""
    return r if out is None else out.copy_(r)


def dims_arg(dim, int_array, NULL):
    """(count, int[] or NULL) for dim=None, an int, or a sequence."""
    if dim is None:
        return 0, NULL
    if isinstance(dim, numbers.Integral):
        return 1, int_array([dim])
    dim = list(dim)
    return len(dim), int_array(dim) if dim else NULL


def norm_args(input, p, dtype):
    """norm's (input in dtype, p as a number): 'fro' and None are 2."""
    if p == "fro" or p is None:
        p = 2.0
    elif isinstance(p, str):
        raise NotImplementedError(f"norm with p='{p}' is not supported")
    return (input if dtype is None else input.to(dtype)), p


def _correction(unbiased, correction):
    if correction is not None:
        return float(correction)
    return 1.0 if unbiased is None or unbiased else 0.0


def define_reductions(register, Tensor, C, wrap, check, int_array):
    """sum, prod, mean, nansum, amax, amin, all, any, count_nonzero,
    logsumexp, var, std, var_mean, std_mean, max, min, aminmax, argmax,
    argmin; returns them by name."""
    NULL, reduce_c, var_c = C.ffi.NULL, C.reduce, C.var
    tensor_pp = C.tensor_ptr + "*"

    def dims(dim):
        return dims_arg(dim, int_array, NULL)

    def reducer(code, name):
        def fn(input, dim=None, keepdim=False, *, dtype=None, out=None):
            n, arr = dims(dim)
            return out_to(wrap(reduce_c(code, input._p, n, arr, bool(keepdim),
                                        dtype_code(dtype, -1))), out)
        fn.__name__ = name
        return fn

    def simple(code, name):
        def fn(input, dim=None, keepdim=False, *, out=None):
            n, arr = dims(dim)
            return out_to(wrap(reduce_c(code, input._p, n, arr, bool(keepdim), -1)), out)
        fn.__name__ = name
        return fn

    def count_nonzero(input, dim=None):
        n, arr = dims(dim)
        return wrap(reduce_c(C.RED_COUNT_NONZERO, input._p, n, arr, False, -1))

    def logsumexp(input, dim, keepdim=False, *, out=None):
        n, arr = dims(dim)
        return out_to(wrap(reduce_c(C.RED_LOGSUMEXP, input._p, n, arr, bool(keepdim), -1)),
                      out)

    def variance(take_sqrt, name):
        def fn(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
            if isinstance(dim, bool):  # var(unbiased) positional form
                unbiased, dim = dim, None
            n, arr = dims(dim)
            return out_to(wrap(var_c(input._p, n, arr, _correction(unbiased, correction),
                                     bool(keepdim), take_sqrt)), out)
        fn.__name__ = name
        return fn

    var, std = variance(0, "var"), variance(1, "std")

    def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
        return (var(input, dim, unbiased, keepdim, correction=correction),
                input.mean(dim, keepdim))

    def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
        return (std(input, dim, unbiased, keepdim, correction=correction),
                input.mean(dim, keepdim))

    def minmax(is_max, name, result_type):
        def fn(input, dim=None, keepdim=False, *, out=None):
            if isinstance(dim, Tensor):  # max(a, b) is maximum
                return wrap(C.binary(C.MAXIMUM if is_max else C.MINIMUM, input._p, dim._p))
            if dim is None:
                if input.numel() == 0:
                    raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                                       "input.numel() == 0. Specify the reduction dim with "
                                       "the 'dim' argument.")
                return wrap(reduce_c(C.RED_AMAX if is_max else C.RED_AMIN, input._p, 0, NULL,
                                     False, -1))
            vals = C.ffi.new(tensor_pp)
            idx = C.ffi.new(tensor_pp)
            check(C.minmax_dim(input._p, dim, bool(keepdim), is_max, vals, idx))
            return result_type(wrap(vals[0]), wrap(idx[0]))
        fn.__name__ = name
        return fn

    def arg_dim(input, dim):
        # explicit dims are range-checked here: the C call reads any dim below
        # -ndim as "over the flattened tensor"
        return _ALL_DIMS if dim is None else wrap_dim(dim, input.ndim)

    def argmax(input, dim=None, keepdim=False):
        return wrap(C.argminmax(input._p, arg_dim(input, dim), bool(keepdim), 1))

    def argmin(input, dim=None, keepdim=False):
        return wrap(C.argminmax(input._p, arg_dim(input, dim), bool(keepdim), 0))

    fns = [reducer(C.RED_SUM, "sum"), reducer(C.RED_PROD, "prod"),
           reducer(C.RED_MEAN, "mean"), reducer(C.RED_NANSUM, "nansum"),
           simple(C.RED_AMAX, "amax"), simple(C.RED_AMIN, "amin"),
           simple(C.RED_ALL, "all"), simple(C.RED_ANY, "any"),
           count_nonzero, logsumexp, var, std, var_mean, std_mean,
           minmax(1, "max", MaxResult), minmax(0, "min", MinResult), argmax, argmin]
    by_name = {f.__name__: f for f in fns}
    amin, amax = by_name["amin"], by_name["amax"]

    def aminmax(input, *, dim=None, keepdim=False):
        return (amin(input, dim, keepdim), amax(input, dim, keepdim))

    by_name["aminmax"] = aminmax
    for f in by_name.values():
        register(f)
    return by_name


def check_scalars(like, beta, alpha):
    """PyTorch's error for float alpha/beta with integer matrices."""
    if not like.dtype.is_floating_point:
        for name, v in (("alpha", alpha), ("beta", beta)):
            if isinstance(v, float):
                raise RuntimeError(f"For integral input tensors, argument {name} must "
                                   "not be a floating point number.")


def define_products(C, wrap, check_operands, input_of):
    """mm, bmm, addmm and baddbmm over the C library's kernels.
    check_operands(*(name, x)) refuses operands of the wrong kind;
    input_of(x, like) is the add* products' `input` as a tensor (numbers
    take like's dtype)."""
    def mm(input, mat2, *, out=None):
        check_operands(("input", input), ("mat2", mat2))
        return out_to(wrap(C.mm(input._p, mat2._p)), out)

    def bmm(input, mat2, *, out=None):
        check_operands(("input", input), ("mat2", mat2))
        return out_to(wrap(C.bmm(input._p, mat2._p)), out)

    def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
        check_operands(("mat1", mat1), ("mat2", mat2))
        check_scalars(mat1, beta, alpha)
        inp = input_of(input, mat1)  # a name keeps it alive across the C call
        return out_to(wrap(C.addmm(inp._p, mat1._p, mat2._p, float(beta), float(alpha))), out)

    def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
        check_operands(("batch1", batch1), ("batch2", batch2))
        check_scalars(batch1, beta, alpha)
        inp = input_of(input, batch1)
        return out_to(wrap(C.baddbmm(inp._p, batch1._p, batch2._p, float(beta),
                                     float(alpha))), out)

    return mm, bmm, addmm, baddbmm


def register_products(register, Tensor, dot, mv, mm, bmm, matmul, outer, addmm, addmv,
                      baddbmm, addbmm, matmul_c=None, wrap=None):
    """The products as functions and methods, `ger`, the in-place add*_
    forms and the @ operator; where the library has a C matmul (matmul_c,
    with wrap), @ calls it directly: its operands are known to be tensors."""
    for f in (dot, mv, mm, bmm, matmul, outer, addmm, addmv, baddbmm, addbmm):
        register(f)
    register(outer, ["ger"])

    def inplace(fn):
        def inplace(self, *args, **kwargs):
            return self.copy_(fn(self, *args, **kwargs))
        inplace.__name__ = fn.__name__ + "_"
        return inplace

    for f in (addmm, addmv, baddbmm, addbmm):
        setattr(Tensor, f.__name__ + "_", inplace(f))
    if matmul_c is not None:
        Tensor.__matmul__ = lambda self, other: wrap(matmul_c(self._p, other._p)) \
            if isinstance(other, Tensor) else NotImplemented
        Tensor.__rmatmul__ = lambda self, other: wrap(matmul_c(other._p, self._p)) \
            if isinstance(other, Tensor) else NotImplemented
    else:
        Tensor.__matmul__ = lambda self, other: matmul(self, other) \
            if isinstance(other, Tensor) else NotImplemented
        Tensor.__rmatmul__ = lambda self, other: matmul(other, self) \
            if isinstance(other, Tensor) else NotImplemented
