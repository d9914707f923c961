"""Dense linear algebra through libTH's LAPACK routines (th_linalg_*): the
raw building blocks of ``ember.linalg``.  They take batches of matrices
(``(*, m, n)``, float32/float64/complex64/complex128) and give results laid out column-major
per matrix, as PyTorch's do; argument conventions such as vector
right-hand sides and ``left=False`` are the front's business."""
import collections

from ._core import Tensor, wrap
from ._lib import ffi, lib, last_error

_functions = {}


class LinAlgError(RuntimeError):
    """A matrix the routine cannot handle: singular, not positive-definite,
    or an iteration that did not converge (PyTorch's
    ``torch.linalg.LinAlgError``)."""


# The C messages of the failures that depend on the values, not the shapes.
_VALUE_FAILURES = ("is singular", "not positive-definite", "failed to converge")

LUFactorResult = collections.namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
SolveResult = collections.namedtuple("linalg_solve_ex", ["result", "info"])
InvResult = collections.namedtuple("linalg_inv_ex", ["inverse", "info"])
CholeskyResult = collections.namedtuple("linalg_cholesky_ex", ["L", "info"])
SlogdetResult = collections.namedtuple("linalg_slogdet", ["sign", "logabsdet"])
QRResult = collections.namedtuple("linalg_qr", ["Q", "R"])
SVDResult = collections.namedtuple("linalg_svd", ["U", "S", "Vh"])
EighResult = collections.namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
EigResult = collections.namedtuple("linalg_eig", ["eigenvalues", "eigenvectors"])
LstsqResult = collections.namedtuple("linalg_lstsq", ["solution", "rank", "singular_values"])


def _call(rc):
    if rc:
        e = last_error()
        if isinstance(e, RuntimeError) and any(s in str(e) for s in _VALUE_FAILURES):
            raise LinAlgError(str(e)) from None
        raise e


def _outs(n):
    return [ffi.new("th_tensor **") for _ in range(n)]


def _check(fn, **named):
    for name, x in named.items():
        if not isinstance(x, Tensor):
            raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not "
                            f"{type(x).__name__}")


def linalg_lu_factor_ex(A, *, pivot=True, check_errors=False):
    _check("linalg_lu_factor_ex", A=A)
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on "
                           "the CPU")
    lu, piv, info = _outs(3)
    _call(lib.th_linalg_lu_factor(A._p, lu, piv, info))
    r = LUFactorResult(wrap(lu[0]), wrap(piv[0]), wrap(info[0]))
    if check_errors and r.info.numel() and bool(r.info.ne(0).any()):
        raise LinAlgError(_lu_message(r.info, A.dim()))
    return r


def _lu_message(info, ndim):
    flat = info.reshape(-1)
    b = int(flat.ne(0).nonzero()[0, 0])
    pre = f"(Batch element {b}): " if ndim > 2 else ""
    i = int(flat[b])
    return (f"torch.linalg.lu_factor: {pre}U[{i},{i}] is zero and using it on lu_solve "
            "would result in a division by zero. If you still want to perform the "
            "factorization, consider calling linalg.lu(A, pivot) or "
            "linalg.lu_factor_ex(A, pivot)")


def linalg_lu_solve(LU, pivots, B, *, adjoint=False):
    _check("linalg_lu_solve", LU=LU, pivots=pivots, B=B)
    x, = _outs(1)
    _call(lib.th_linalg_lu_solve(LU._p, pivots._p, B._p, bool(adjoint), x))
    return wrap(x[0])


def linalg_solve_ex(A, B, *, check_errors=False):
    _check("linalg_solve_ex", A=A, B=B)
    x, info = _outs(2)
    _call(lib.th_linalg_solve(A._p, B._p, bool(check_errors), x, info))
    return SolveResult(wrap(x[0]), wrap(info[0]))


def linalg_inv_ex(A, *, check_errors=False):
    _check("linalg_inv_ex", A=A)
    x, info = _outs(2)
    _call(lib.th_linalg_inv(A._p, bool(check_errors), x, info))
    return InvResult(wrap(x[0]), wrap(info[0]))


def linalg_det(A):
    _check("linalg_det", A=A)
    d, = _outs(1)
    _call(lib.th_linalg_det(A._p, d))
    return wrap(d[0])


def linalg_slogdet(A):
    _check("linalg_slogdet", A=A)
    s, la = _outs(2)
    _call(lib.th_linalg_slogdet(A._p, s, la))
    return SlogdetResult(wrap(s[0]), wrap(la[0]))


def linalg_cholesky_ex(A, *, upper=False, check_errors=False):
    _check("linalg_cholesky_ex", A=A)
    l, info = _outs(2)
    _call(lib.th_linalg_cholesky(A._p, bool(upper), bool(check_errors), l, info))
    return CholeskyResult(wrap(l[0]), wrap(info[0]))


def linalg_solve_triangular(A, B, *, upper, transpose=False, unitriangular=False):
    """op(A) X = B, with A's upper or lower triangle (op: the transpose, the
    conjugate transpose for complex A)."""
    _check("linalg_solve_triangular", A=A, B=B)
    x, = _outs(1)
    _call(lib.th_linalg_solve_triangular(A._p, B._p, bool(upper), bool(transpose),
                                         bool(unitriangular), x))
    return wrap(x[0])


_QR_MODES = {"reduced": 0, "complete": 1, "r": 2}


def linalg_qr(A, mode="reduced"):
    _check("linalg_qr", A=A)
    if mode not in _QR_MODES:
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    q, r = _outs(2)
    _call(lib.th_linalg_qr(A._p, _QR_MODES[mode], q, r))
    return QRResult(wrap(q[0]), wrap(r[0]))


def linalg_svd(A, full_matrices=True, *, compute_uv=True):
    """U, S, Vh; U and Vh are empty (0,) tensors when not compute_uv."""
    _check("linalg_svd", A=A)
    u, s, vh = _outs(3)
    _call(lib.th_linalg_svd(A._p, bool(full_matrices), bool(compute_uv), u, s, vh))
    S = wrap(s[0])
    if not compute_uv:
        e = wrap(lib.th_empty(1, ffi.new("int64_t[1]", [0]), A.dtype.code))
        return SVDResult(e, S, e)
    return SVDResult(wrap(u[0]), S, wrap(vh[0]))


def linalg_eigh(A, UPLO="L", *, compute_v=True):
    _check("linalg_eigh", A=A)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    w, v = _outs(2)
    _call(lib.th_linalg_eigh(A._p, UPLO == "U", bool(compute_v), w, v))
    W = wrap(w[0])
    return EighResult(W, wrap(v[0]) if compute_v else None)


def linalg_eig(A, *, compute_v=True):
    """Eigenvalues and right eigenvectors of general real matrices (LAPACK
    geev), both complex."""
    _check("linalg_eig", A=A)
    w, v = _outs(2)
    _call(lib.th_linalg_eig(A._p, bool(compute_v), w, v))
    return EigResult(wrap(w[0]), wrap(v[0]) if compute_v else None)


def linalg_lstsq(A, B, rcond=None):
    """Minimum-norm least squares through the SVD (LAPACK gelsd)."""
    _check("linalg_lstsq", A=A, B=B)
    x, rank, s = _outs(3)
    _call(lib.th_linalg_lstsq(A._p, B._p, -1.0 if rcond is None else float(rcond),
                              x, rank, s))
    return LstsqResult(wrap(x[0]), wrap(rank[0]), wrap(s[0]))


def linalg_householder_product(A, tau):
    """Q from Householder reflectors and their scales (LAPACK orgqr)."""
    _check("linalg_householder_product", A=A, tau=tau)
    q, = _outs(1)
    _call(lib.th_linalg_householder_product(A._p, tau._p, q))
    return wrap(q[0])


GeqrfResult = collections.namedtuple("geqrf", ["a", "tau"])


def linalg_geqrf(A):
    """R and the Householder reflectors packed in one matrix, and their
    scales (LAPACK geqrf)."""
    _check("linalg_geqrf", A=A)
    qr, tau = _outs(2)
    _call(lib.th_linalg_geqrf(A._p, qr, tau))
    return GeqrfResult(wrap(qr[0]), wrap(tau[0]))


LDLResult = collections.namedtuple("linalg_ldl_factor_ex", ["LD", "pivots", "info"])


def linalg_ldl_factor_ex(A, *, hermitian=False, check_errors=False):
    """LDL^T with Bunch-Kaufman pivoting (LAPACK sytrf) of A's lower triangle;
    LDL^H (hetrf) of a complex A when hermitian."""
    _check("linalg_ldl_factor_ex", A=A)
    ld, piv, info = _outs(3)
    _call(lib.th_linalg_ldl_factor(A._p, bool(hermitian), bool(check_errors), ld, piv, info))
    return LDLResult(wrap(ld[0]), wrap(piv[0]), wrap(info[0]))


def linalg_ldl_solve(LD, pivots, B, *, hermitian=False):
    _check("linalg_ldl_solve", LD=LD, pivots=pivots, B=B)
    x, = _outs(1)
    _call(lib.th_linalg_ldl_solve(LD._p, pivots._p, B._p, bool(hermitian), x))
    return wrap(x[0])


def has_lapack():
    """False in the TH_NO_BLAS build, which has LU, solve, inverse, det,
    Cholesky, QR and triangular solves but no SVD, eigh, eig or lstsq."""
    return bool(lib.th_has_lapack())


for _f in (linalg_lu_factor_ex, linalg_lu_solve, linalg_solve_ex, linalg_inv_ex,
           linalg_det, linalg_slogdet, linalg_cholesky_ex, linalg_solve_triangular,
           linalg_qr, linalg_svd, linalg_eigh, linalg_eig, linalg_lstsq, linalg_householder_product,
           linalg_geqrf, linalg_ldl_factor_ex, linalg_ldl_solve, has_lapack):
    _functions[_f.__name__] = _f
_functions["LinAlgError"] = LinAlgError

functions = _functions
