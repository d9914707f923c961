"""The LU family of ember.linalg: lu_factor(_ex), lu, lu_solve and
lu_unpack, differentiable in the input and in the factors.

A = P L U with P a permutation, L (m, k) unit lower triangular, U (k, n)
upper triangular, k = min(m, n).  The factors come packed as LAPACK's
(L below the diagonal of LU, U on and above it) with 1-based int32 pivots:
row i was swapped with row pivots[i] in turn."""
import collections

from .._tensor import Tensor, _make
from ..autograd.function import Function
from ._functions import SolveTriangular, raw_call

LUResult = collections.namedtuple("linalg_lu", ["P", "L", "U"])
LUUnpackResult = collections.namedtuple("lu_unpack", ["P", "L", "U"])


def permutation(pivots, m):
    """The row order of P^T A as an int64 tensor (*, m) on the pivots'
    device: LAPACK's pivots (*, k) applied in turn to 0..m-1 (on the host:
    a sequential walk over k small swaps)."""
    import numpy as np
    from .._creation import from_numpy
    piv = pivots.detach().cpu().numpy().astype(np.int64) - 1
    batch, k = piv.shape[:-1], piv.shape[-1]
    nb = int(np.prod(batch))
    flat = piv.reshape(nb, k)
    perm = np.broadcast_to(np.arange(m), (nb, m)).copy()
    rows = np.arange(nb)
    for i in range(k):
        j = flat[:, i]
        perm[rows, i], perm[rows, j] = perm[rows, j], perm[rows, i].copy()
    return from_numpy(perm.reshape(batch + (m,))).to(pivots.device)


def _rows(X, order):
    """X's rows taken in `order` (*, m): out[i] = X[order[i]]."""
    return X.gather(-2, order.unsqueeze(-1).expand(X.shape))


def _eye(rows, cols, like):
    from .._creation import eye
    return eye(rows, cols, dtype=like.dtype, device=like.device)


def _cat(xs, dim):
    from .._ops.shape import cat
    return cat(xs, dim)


def lu_backward(gL, gU, perm, L, U):
    """The gradient of A = P L U from those of L (m, k) and U (k, n)
    (either may be None), written with differentiable ops.  Square:
    P L^-H (tril(L^H gL, -1) + triu(gU U^H)) U^-H; a wide A = [A1 A2]
    (U = [U1 U2]) or a tall one (L = [L1; L2]) adds the second block's
    own term and solves with the square block."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if m <= n:  # square or wide
        M = None if gL is None else L.mH.matmul(gL)
        if gU is not None:
            t = gU.triu().matmul(U.mH)
            M = -t if M is None else M - t
        U1 = U.narrow(-1, 0, k)
        G = SolveTriangular.apply(U1.mH, M.tril(-1), False, False, False)  # M U1^-T
        if gU is not None:
            G = G + gU.narrow(-1, 0, k).triu()
            if n > k:
                G = _cat([G, gU.narrow(-1, k, n - k)], -1)
        elif n > k:
            G = _cat([G, G.new_zeros(G.shape[:-1] + (n - k,))], -1)
        G = SolveTriangular.apply(L.mH, G, True, True, True)  # L^-T G
    else:  # tall
        M = None if gU is None else gU.matmul(U.mH)
        if gL is not None:
            t = L.mH.matmul(gL.tril(-1))
            M = -t if M is None else M - t
        L1 = L.narrow(-2, 0, k)
        G = SolveTriangular.apply(L1.mH, M.triu(), True, True, True)  # L1^-T M
        if gL is not None:
            G = _cat([G + gL.narrow(-2, 0, k).tril(-1), gL.narrow(-2, k, m - k)], -2)
        else:
            G = _cat([G, G.new_zeros(G.shape[:-2] + (m - k,) + G.shape[-1:])], -2)
        G = SolveTriangular.apply(U.mH, G, False, False, False)  # G U^-T
    return _rows(G, perm.argsort(-1))  # P G


def _unpack_data(LU):
    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    L = LU.narrow(-1, 0, k).tril(-1) + _eye(m, k, LU)
    U = LU.narrow(-2, 0, k).triu()
    return L, U


class LUFactor(Function):
    """LU, pivots, info of A (*, m, n); LU's gradient is lu_backward's
    with the packed gradient split into its two triangles."""

    @staticmethod
    def forward(ctx, A):
        LU, piv, info = (_make(x) for x in raw_call("linalg_lu_factor_ex", A))
        ctx.mark_non_differentiable(piv, info)
        ctx.save_for_backward(LU, piv)
        return LU, piv, info

    @staticmethod
    def backward(ctx, gLU, gpiv, ginfo):
        LU, piv = ctx.saved_tensors
        m, n = LU.shape[-2], LU.shape[-1]
        k = min(m, n)
        L, U = _unpack_data(LU)
        gL = gLU.narrow(-1, 0, k).tril(-1)
        gU = gLU.narrow(-2, 0, k).triu()
        return lu_backward(gL, gU, permutation(piv, m), L, U)


class LUSolve(Function):
    """X with A X = B (adjoint: A^H X = B) from A's factors; differentiable
    in B and in LU: gA = -A^-H gX X^H (adjoint: -X gX^H A^-H), then
    gL = tril(P^T gA U^H, -1), gU = triu(L^H P^T gA) (the conjugate
    transposes are transposes for real matrices)."""

    @staticmethod
    def forward(ctx, LU, pivots, B, adjoint):
        X = _make(raw_call("linalg_lu_solve", LU, pivots, B, adjoint=adjoint))
        ctx.save_for_backward(LU, pivots, X)
        ctx.adjoint = adjoint
        ctx.shapes = (LU.shape, B.shape)
        return X

    @staticmethod
    def backward(ctx, gX):
        LU, pivots, X = ctx.saved_tensors
        gB = LUSolve.apply(LU, pivots, gX, not ctx.adjoint)
        gLU = None
        if ctx.needs_input_grad[0]:
            gA = -X.matmul(gB.mH) if ctx.adjoint else -gB.matmul(X.mH)
            L, U = _unpack_data(LU)
            PtgA = _rows(gA, permutation(pivots, LU.shape[-1]))
            gLU = PtgA.matmul(U.mH).tril(-1) + L.mH.matmul(PtgA).triu()
            gLU = gLU.sum_to_size(ctx.shapes[0])
        return gLU, None, gB.sum_to_size(ctx.shapes[1]) if ctx.needs_input_grad[2] else None, \
            None


def check_pivots(fn, LU, pivots):
    from .._dtypes import int32
    if not isinstance(pivots, Tensor):
        raise TypeError(f"{fn}(): argument 'pivots' must be Tensor, not {type(pivots).__name__}")
    if pivots.dtype != int32:
        raise RuntimeError(f"torch.{fn}: LU_pivots is expected to be a contiguous tensor of "
                           "torch.int32 dtype.\nNote: this function is intended to be used "
                           "with the output produced by torch.linalg.lu_factor")
    m, n = LU.shape[-2], LU.shape[-1]
    if tuple(pivots.shape) != tuple(LU.shape[:-2]) + (min(m, n),):
        raise RuntimeError(f"torch.{fn}: Expected LU_pivots of shape "
                           f"{list(LU.shape[:-2]) + [min(m, n)]} to match LU_data of shape "
                           f"{list(LU.shape)}, but got {list(pivots.shape)}")
    if pivots.numel() and (bool((pivots < 1).any()) or bool((pivots > m).any())):
        raise RuntimeError("pivots passed to lu_unpack must be between 1 and LU.size(-2) "
                           "inclusive.Did you properly pass the result of lu_factor?")


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """P (*, m, m), L (*, m, k), U (*, k, n) from lu_factor's results; a
    part not asked for is an empty tensor.  Differentiable in LU_data."""
    if not isinstance(LU_data, Tensor):
        raise TypeError(f"lu_unpack(): argument 'LU_data' (position 1) must be Tensor, not "
                        f"{type(LU_data).__name__}")
    if LU_data.dim() < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(LU_data.shape)} instead")
    empty = LU_data.new_empty((0,))
    L = U = P = empty
    if unpack_data:
        L, U = _unpack_data(LU_data)
    if unpack_pivots:
        check_pivots("lu_unpack", LU_data, LU_pivots)
        m = LU_data.shape[-2]
        perm = permutation(LU_pivots, m)
        # P[r, i] = 1 where r = perm[i]: P^T's rows are the identity's in perm order
        eye = _eye(m, m, LU_data).expand(tuple(perm.shape) + (m,))
        P = _rows(eye, perm).mT.contiguous()
    result = LUUnpackResult(P, L, U)
    if out is not None:
        for o, r in zip(out, result):
            o.copy_(r)
        return out
    return result


def lu(A, *, pivot=True, out=None):
    """P, L, U with A = P L U (any m x n; singular matrices are factored
    without error, as PyTorch's)."""
    if not isinstance(A, Tensor):
        raise TypeError(f"linalg_lu(): argument 'A' (position 1) must be Tensor, not "
                        f"{type(A).__name__}")
    if A.dim() < 2:
        raise RuntimeError(f"linalg.lu: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A.shape)} instead")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    LU, piv, _ = LUFactor.apply(A)
    P, L, U = lu_unpack(LU, piv)
    result = LUResult(P, L, U)
    if out is not None:
        for o, r in zip(out, result):
            o.copy_(r)
        return out
    return result
