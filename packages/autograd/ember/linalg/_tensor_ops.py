"""ember.linalg's names that are compositions of other ops: vander,
vecdot, diagonal, matmul, tensorinv and tensorsolve (differentiable
through the ops they use)."""
import math

from .._tensor import Tensor


def _check(fn, **named):
    for name, x in named.items():
        if not isinstance(x, Tensor):
            raise TypeError(f"linalg_{fn}(): argument '{name}' must be Tensor, not "
                            f"{type(x).__name__}")


def vander(x, *, N=None):
    """(*, n, N): column j holds x ** j (j = 0 .. N-1)."""
    _check("vander", x=x)
    if x.dim() == 0:
        raise RuntimeError("N must be greater than 1.")
    N = x.shape[-1] if N is None else N
    if N < 2:
        raise RuntimeError("N must be greater than 1.")
    powers = x.unsqueeze(-1).expand(tuple(x.shape) + (N - 1,)).cumprod(-1)
    from .._ops.shape import cat
    return cat([x.new_ones(tuple(x.shape) + (1,)), powers], -1)


def vecdot(x, y, *, dim=-1, out=None):
    _check("vecdot", x=x, y=y)
    if x.dtype != y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found "
                           f"x of type {x.dtype._title} and y of type {y.dtype._title} instead")
    if not x.is_floating_point():
        raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as "
                           f"input. Got {x.dtype._title}")
    r = (x * y).sum(dim)
    return r if out is None else out.copy_(r)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    _check("diagonal", A=A)
    return A.diagonal(offset, dim1, dim2)


def matmul(input, other, *, out=None):
    _check("matmul", input=input, other=other)
    r = input.matmul(other)
    return r if out is None else out.copy_(r)


def tensorinv(A, ind=2, *, out=None):
    """The inverse of A read as a matrix of its first `ind` dims by the
    rest; shape A.shape[ind:] + A.shape[:ind]."""
    from . import inv
    _check("tensorinv", A=A)
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    lead, rest = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    if math.prod(rest) != math.prod(lead):
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {math.prod(rest)} != "
                           f"{math.prod(lead)}")
    r = inv(A.reshape(math.prod(lead), math.prod(rest))).reshape(rest + lead)
    return r if out is None else out.copy_(r)


def tensorsolve(A, B, dims=None, *, out=None):
    """X with tensordot(A, X, X.ndim) = B: X has shape A.shape[B.ndim:]
    (after moving `dims` of A to the end)."""
    from . import solve
    _check("tensorsolve", A=A, B=B)
    if dims is not None:
        dims = [d % A.dim() for d in dims]
        A = A.permute([d for d in range(A.dim()) if d not in dims] + dims)
    rest = tuple(A.shape[B.dim():])
    nrest, nb = math.prod(rest), B.numel()
    if nrest != nb or math.prod(A.shape[:B.dim()]) != nb:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:])"
                           f" == prod(self.shape[:other.ndim]), but got {nrest} != {nb}")
    r = solve(A.reshape(nb, nrest), B.reshape(nb)).reshape(rest)
    return r if out is None else out.copy_(r)
