"""LDL^T of symmetric indefinite matrices: linalg.ldl_factor(_ex) and
ldl_solve (LAPACK sytrf/sytrs through the backend).  Like PyTorch's they
have no derivative: backward through them raises."""
import collections

from .._dtypes import int32
from .._tensor import Tensor, _make
from ..autograd.function import Function
from ._functions import copy_out as _copy_out, raw_call

LDLFactorResult = collections.namedtuple("linalg_ldl_factor", ["LD", "pivots"])
LDLFactorExResult = collections.namedtuple("linalg_ldl_factor_ex", ["LD", "pivots", "info"])


class Undifferentiable(Function):
    """Runs `fn` on the inputs; backward raises PyTorch's error naming the
    op (its results still record that they came from a tensor that
    requires grad, so the error comes where PyTorch gives it)."""

    @staticmethod
    def forward(ctx, label, fn, *inputs):
        ctx.label = label
        outs = tuple(_make(x) for x in fn(*inputs))
        ctx.mark_non_differentiable(*(o for o in outs if not o.is_floating_point()))
        return outs if len(outs) > 1 else outs[0]

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(f"derivative for {ctx.label} is not implemented")


def _check(fn, **named):
    for name, x in named.items():
        if not isinstance(x, Tensor):
            raise TypeError(f"linalg_{fn}(): argument '{name}' must be Tensor, not "
                            f"{type(x).__name__}")


def ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    _check("ldl_factor_ex", A=A)
    result = LDLFactorExResult(*Undifferentiable.apply(
        "aten::linalg_ldl_factor_ex",
        lambda A: raw_call("linalg_ldl_factor_ex", A, hermitian=hermitian,
                           check_errors=check_errors), A))
    return _copy_out(result, out)


def ldl_factor(A, *, hermitian=False, out=None):
    LD, piv, _ = ldl_factor_ex(A, hermitian=hermitian, check_errors=True)
    return _copy_out(LDLFactorResult(LD, piv), out)


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    _check("ldl_solve", LD=LD, pivots=pivots, B=B)
    if pivots.dtype != int32:
        pivots = pivots.to(int32)
    X = Undifferentiable.apply(
        "aten::linalg_ldl_solve",
        lambda LD, B: (raw_call("linalg_ldl_solve", LD, pivots, B, hermitian=hermitian),),
        LD, B)
    return _copy_out(X, out)
