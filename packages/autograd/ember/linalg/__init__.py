"""ember.linalg: PyTorch's ``torch.linalg`` on the backend's LAPACK
routines, with gradients (see _functions.py for the primitives).

Results of factorisations are laid out column-major per matrix, as
PyTorch's.  Every routine takes complex matrices (complex64/complex128)
too, with PyTorch's complex gradients."""
import collections
import math
import numbers

from .._dtypes import float64 as _float64
from .._tensor import Tensor, _make
from ..autograd import grad_mode
from . import _functions as F
from . import _lu
from ._functions import copy_out as _out, raw_call
from ._lu import lu
from ._ldl import ldl_factor, ldl_factor_ex, ldl_solve
from ._matfun import householder_product, matrix_exp
from ._tensor_ops import diagonal, matmul, tensorinv, tensorsolve, vander, vecdot

__all__ = ["solve", "solve_ex", "inv", "inv_ex", "det", "slogdet", "cholesky", "cholesky_ex",
           "qr", "svd", "svdvals", "eigh", "eigvalsh", "eig", "eigvals", "lstsq", "lu", "lu_factor",
           "lu_factor_ex", "lu_solve", "solve_triangular", "matrix_rank", "pinv", "matrix_power",
           "matrix_norm", "vector_norm", "norm", "cond", "cross", "multi_dot", "householder_product",
           "matrix_exp", "vander", "vecdot", "diagonal", "matmul", "tensorinv", "tensorsolve",
           "ldl_factor", "ldl_factor_ex", "ldl_solve", "LinAlgError"]

LinAlgError = F.linalg_error()

SolveExResult = collections.namedtuple("linalg_solve_ex", ["result", "info"])
InvExResult = collections.namedtuple("linalg_inv_ex", ["inverse", "info"])
CholeskyExResult = collections.namedtuple("linalg_cholesky_ex", ["L", "info"])
SlogdetResult = collections.namedtuple("linalg_slogdet", ["sign", "logabsdet"])
QRResult = collections.namedtuple("linalg_qr", ["Q", "R"])
SVDResult = collections.namedtuple("linalg_svd", ["U", "S", "Vh"])
EighResult = collections.namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
EigResult = collections.namedtuple("linalg_eig", ["eigenvalues", "eigenvectors"])
LstsqResult = collections.namedtuple("linalg_lstsq",
                                     ["solution", "residuals", "rank", "singular_values"])
LUFactorResult = collections.namedtuple("linalg_lu_factor", ["LU", "pivots"])
LUFactorExResult = collections.namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])


def _tensor(fn, x, name="A"):
    if not isinstance(x, Tensor):
        raise TypeError(f"linalg_{fn}(): argument '{name}' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    return x


def _grad(*xs):
    return grad_mode.is_grad_enabled() and any(
        isinstance(x, Tensor) and x.requires_grad for x in xs)


def _eps(dtype):
    return 2.220446049250313e-16 if dtype == _float64 else 1.1920928955078125e-07


# ---- solving and inverting ------------------------------------------------
def _vector_rhs(A, B):
    """PyTorch's rule: B is a (batch of) vector(s) when it is 1-D or has
    the shape of A without its last dim."""
    return B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


def solve(A, B, *, left=True, out=None):
    _tensor("solve", A)
    _tensor("solve", B, "B")
    vector = _vector_rhs(A, B)
    Bm = B.unsqueeze(-1) if vector else B
    if left:
        X = F.Solve.apply(A, Bm)
    else:
        X = F.Solve.apply(A.mT, Bm.mT).mT
    return _out(X.squeeze(-1) if vector else X, out)


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    vector = _vector_rhs(A, B)
    Bm = B.unsqueeze(-1) if vector else B
    if _grad(A, B):
        X = solve(A, B, left=left)
        info = _make(raw_call("linalg_solve_ex", A if left else A.mT,
                              Bm if left else Bm.mT)[1])
        return _out(SolveExResult(X, info), out)
    X, info = raw_call("linalg_solve_ex", A if left else A.mT, Bm if left else Bm.mT,
                       check_errors=check_errors)
    X = _make(X)
    X = X if left else X.mT
    return _out(SolveExResult(X.squeeze(-1) if vector else X, _make(info)), out)


def inv(A, *, out=None):
    return _out(F.Inv.apply(_tensor("inv", A)), out)


def inv_ex(A, *, check_errors=False, out=None):
    _tensor("inv_ex", A)
    if _grad(A):
        _, info = raw_call("linalg_inv_ex", A)
        if check_errors:
            raw_call("linalg_inv_ex", A, check_errors=True)
        return _out(InvExResult(F.Inv.apply(A), _make(info)), out)
    X, info = raw_call("linalg_inv_ex", A, check_errors=check_errors)
    return _out(InvExResult(_make(X), _make(info)), out)


def det(A, *, out=None):
    return _out(F.Det.apply(_tensor("det", A)), out)


def slogdet(A, *, out=None):
    sign, logabs = F.Slogdet.apply(_tensor("slogdet", A))
    return _out(SlogdetResult(sign, logabs), out)


def cholesky(A, *, upper=False, out=None):
    return _out(F.Cholesky.apply(_tensor("cholesky", A), bool(upper)), out)


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    _tensor("cholesky_ex", A)
    L, info = raw_call("linalg_cholesky_ex", A, upper=bool(upper), check_errors=check_errors)
    if _grad(A) and not bool(_make(info).ne(0).any()):
        return _out(CholeskyExResult(F.Cholesky.apply(A, bool(upper)), _make(info)), out)
    return _out(CholeskyExResult(_make(L), _make(info)), out)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    _tensor("solve_triangular", A)
    _tensor("solve_triangular", B, "B")
    return _out(F.SolveTriangular.apply(A, B, bool(upper), bool(left), bool(unitriangular)),
                out)


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """LU, pivots (int32, 1-based) and info (no error for a singular
    matrix unless check_errors); LU is differentiable."""
    _tensor("lu_factor_ex", A)
    if A.dim() < 2:
        raise RuntimeError(f"torch.lu_factor: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(A.shape)} instead")
    if _grad(A):
        if check_errors or not pivot:
            raw_call("linalg_lu_factor_ex", A, pivot=pivot, check_errors=check_errors)
        return _out(LUFactorExResult(*_lu.LUFactor.apply(A)), out)
    LU, piv, info = raw_call("linalg_lu_factor_ex", A, pivot=pivot, check_errors=check_errors)
    return _out(LUFactorExResult(_make(LU), _make(piv), _make(info)), out)


def lu_factor(A, *, pivot=True, out=None):
    LU, piv, _ = lu_factor_ex(A, pivot=pivot, check_errors=True)
    return _out(LUFactorResult(LU, piv), out)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    _tensor("lu_solve", LU, "LU")
    if left:
        X = _lu.LUSolve.apply(LU, pivots, B, bool(adjoint))
    else:  # X A = B  <=>  A^H X^H = B^H (and X A^H = B  <=>  A X^H = B^H)
        X = _lu.LUSolve.apply(LU, pivots, B.mH, not adjoint).mH
    return _out(X, out)


def lstsq(A, B, rcond=None, *, driver=None):
    """Least squares through the SVD (LAPACK gelsd) for every driver:
    `rank` is returned except for driver 'gels', `singular_values` for
    'gelsd'/'gelss' (empty otherwise, as PyTorch), `residuals` when m > n,
    every matrix has full rank and the driver is not 'gelsy' (the default)."""
    _tensor("lstsq", A)
    _tensor("lstsq", B, "B")
    if driver not in (None, "gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"torch.linalg.lstsq: parameter `driver` should be one of "
                           f"(gels, gelsy, gelsd, gelss), but got {driver}")
    vector = B.dim() == A.dim() - 1
    Bm = B.unsqueeze(-1) if vector else B
    m, n = A.shape[-2], A.shape[-1]
    if rcond is None:
        rcond = _eps(A.dtype) * max(m, n)
    X, rank, sv = (_make(x) for x in raw_call("linalg_lstsq", A, Bm, rcond))
    if _grad(A, B):
        X = pinv(A, rtol=rcond).matmul(Bm)
    empty = A.new_empty((0,))
    residuals = empty
    if driver not in (None, "gelsy") and m > n and n > 0 and bool((rank == n).all()):
        residuals = (A.matmul(X) - Bm).square().sum(-2)
        if vector:
            residuals = residuals.squeeze(-1)
    if vector:
        X = X.squeeze(-1)
    if driver == "gels":
        rank = A.new_empty((0,), dtype=rank.dtype)
    if driver not in ("gelsd", "gelss"):
        sv = empty
    return LstsqResult(X, residuals, rank, sv)


# ---- factorisations -------------------------------------------------------
def qr(A, mode="reduced", *, out=None):
    _tensor("qr", A)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    Q, R = F.QR.apply(A, mode)
    return _out(QRResult(Q, R), out)


def svd(A, full_matrices=True, *, driver=None, out=None):
    _tensor("svd", A)
    m, n = A.shape[-2], A.shape[-1]
    if _grad(A):
        if full_matrices and m != n:
            raise NotImplementedError(
                "linalg.svd: the derivative is only implemented for full_matrices=False "
                "when the input is not square; call svd(A, full_matrices=False)")
        return _out(SVDResult(*F.SVD.apply(A)), out)
    U, S, Vh = raw_call("linalg_svd", A, full_matrices)
    return _out(SVDResult(_make(U), _make(S), _make(Vh)), out)


def svdvals(A, *, driver=None, out=None):
    _tensor("svdvals", A)
    if _grad(A):
        return _out(F.SVD.apply(A)[1], out)
    return _out(_make(raw_call("linalg_svd", A, False, compute_uv=False)[1]), out)


def eigh(A, UPLO="L", *, out=None):
    _tensor("eigh", A)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    W, V = F.Eigh.apply(A, UPLO)
    return _out(EighResult(W, V), out)


def eig(A, *, out=None):
    """Eigenvalues and right eigenvectors of general square matrices (real
    or complex), complex (for real ones conjugate pairs together; vectors of
    unit norm); differentiable for losses that do not depend on each
    vector's phase."""
    _tensor("eig", A)
    from ._eig import Eig
    W, V = Eig.apply(A)
    return _out(EigResult(W, V), out)


def eigvals(A, *, out=None):
    _tensor("eigvals", A)
    if _grad(A):
        return _out(eig(A)[0], out)
    return _out(_make(raw_call("linalg_eig", A, compute_v=False)[0]), out)


def eigvalsh(A, UPLO="L", *, out=None):
    _tensor("eigvalsh", A)
    if _grad(A):
        return _out(eigh(A, UPLO)[0], out)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return _out(_make(raw_call("linalg_eigh", A, UPLO, compute_v=False)[0]), out)


# ---- derived ------------------------------------------------------------
def _rtol_default(A, atol, rtol):
    if rtol is None:
        rtol = 0.0 if atol is not None and (not isinstance(atol, numbers.Number) or atol > 0) \
            else _eps(A.dtype) * max(A.shape[-2], A.shape[-1])
    return rtol


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    _tensor("pinv", A)
    return _out(F.Pinv.apply(A, atol, _rtol_default(A, atol, rtol), bool(hermitian)), out)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, out=None):
    _tensor("matrix_rank", A)
    rtol = _rtol_default(A, atol, rtol)
    with grad_mode.no_grad():
        S = eigvalsh(A).abs() if hermitian else svdvals(A)
        if S.shape[-1] == 0:
            return _out(S.sum(-1).long(), out)
        smax = S.amax(-1, keepdim=True)
        tol = F._tolerance(smax, atol, rtol)
        return _out((S > tol).sum(-1), out)


def matrix_power(A, n, *, out=None):
    _tensor("matrix_power", A)
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but "
                           f"they are {A.shape[-2] if A.dim() > 1 else 1} by {A.shape[-1]} "
                           "matrices")
    if n == 0:
        from .._creation import eye
        e = eye(A.shape[-1], dtype=A.dtype, device=A.device)
        return _out(e.expand(A.shape).clone(), out)
    if n < 0:
        A, n = inv(A), -n
    result, base = None, A
    while n:  # binary powers: O(log n) products
        if n & 1:
            result = base if result is None else result.matmul(base)
        n >>= 1
        if n:
            base = base.matmul(base)
    return _out(result, out)


def _dims(dim, ndim):
    return tuple(d % ndim for d in dim) if ndim else tuple(dim)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    _tensor("vector_norm", x, "input")
    if dtype is not None:
        x = x.to(dtype)
    if not (x.is_floating_point() or x.is_complex()):
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor "
                           f"as input. Got {x.dtype}")
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) == 0:
        dim = None
    a = x.abs()
    red = {} if dim is None else {"dim": tuple(dim), "keepdim": keepdim}
    if dim is None and keepdim:
        red = {"dim": tuple(range(x.dim())), "keepdim": True}
    if ord == math.inf:
        r = a.amax(**red) if red else a.amax()
    elif ord == -math.inf:
        r = a.amin(**red) if red else a.amin()
    elif ord == 0:
        r = (a != 0).to(x.dtype).sum(**red)
    elif ord == 2 or ord == 1:
        r = (a if x.is_complex() else x).norm(ord, red.get("dim"), red.get("keepdim", False))
    else:
        r = a.pow(ord).sum(**red).pow(1.0 / ord)
    return _out(r, out)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    _tensor("matrix_norm", A)
    if dtype is not None:
        A = A.to(dtype)
    if A.dim() < 2:
        raise RuntimeError(f"linalg.matrix_norm: The input tensor A must have at least 2 "
                           f"dimensions.")
    d0, d1 = _dims(dim, A.dim())
    if ord == "fro":
        return _out(vector_norm(A, 2, (d0, d1), keepdim), out)
    if ord == "nuc" or ord in (2, -2):
        B = A.movedim((d0, d1), (-2, -1))
        S = svdvals(B)
        r = S.sum(-1) if ord == "nuc" else S.amax(-1) if ord == 2 else S.amin(-1)
    elif ord in (1, -1, math.inf, -math.inf):
        along, over = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = A.abs().sum(along, keepdim=True)
        r = sums.amax(over, keepdim=True) if ord > 0 else sums.amin(over, keepdim=True)
        if not keepdim:
            r = r.squeeze(max(d0, d1)).squeeze(min(d0, d1))
        return _out(r, out)
    else:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if keepdim:
        r = r.unsqueeze(min(d0, d1)).unsqueeze(max(d0, d1))
    return _out(r, out)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    _tensor("norm", A)
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) == 2:
        return _out(matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype),
                    out)
    if dim is None and ord is not None:
        if A.dim() == 2:
            return _out(matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype), out)
        if A.dim() != 1:
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input "
                               f"must be 1D or 2D. Got {A.dim()}D.")
    return _out(vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype), out)


def cond(A, p=None, *, out=None):
    _tensor("cond", A)
    if p is None or p in (2, -2):
        S = svdvals(A)
        r = S[..., 0] / S[..., -1] if p != -2 else S[..., -1] / S[..., 0]
        return _out(r, out)
    return _out(matrix_norm(A, p) * matrix_norm(inv(A), p), out)


def cross(input, other, *, dim=-1, out=None):
    _tensor("cross", input, "input")
    shape = _broadcast(input.shape, other.shape)
    a, b = input.expand(shape), other.expand(shape)
    if a.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[dim]} and {other.shape[dim]}")
    return _out(a.cross(b, dim=dim), out)


def _broadcast(s, t):
    n = max(len(s), len(t))
    s, t = (1,) * (n - len(s)) + tuple(s), (1,) * (n - len(t)) + tuple(t)
    out = []
    for i, (x, y) in enumerate(zip(s, t)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b "
                               f"({y}) at non-singleton dimension {i}")
        out.append(max(x, y))
    return tuple(out)


def multi_dot(tensors, *, out=None):
    """The product of a chain of matrices, multiplied in the order that
    needs the fewest multiply-adds; the first (last) may be a vector."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first_vec, last_vec = tensors[0].dim() == 1, tensors[-1].dim() == 1
    ms = [t.unsqueeze(0) if i == 0 and first_vec else
          t.unsqueeze(-1) if i == len(tensors) - 1 and last_vec else t
          for i, t in enumerate(tensors)]
    for i, t in enumerate(ms):
        if t.dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.dim()}D")
    r = _chain(ms)
    if first_vec:
        r = r.squeeze(0)
    if last_vec:
        r = r.squeeze(-1)
    return _out(r, out)


def _chain(ms):
    """Matrix-chain order by dynamic programming (n is small)."""
    n = len(ms)
    dims = [ms[0].shape[0]] + [m.shape[1] for m in ms]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def build(i, j):
        if i == j:
            return ms[i]
        k = split[i][j]
        return build(i, k).mm(build(k + 1, j))
    return build(0, n - 1)
