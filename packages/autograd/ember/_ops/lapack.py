"""PyTorch's classic top-level linear algebra names (ember.inverse,
ember.svd, ember.cholesky_solve, ...) and their Tensor methods, on
ember.linalg.  They are compositions of ember.linalg's differentiable
primitives, so they live outside the op table; tests/test_linalg.py
gradchecks them."""
import collections

from .. import linalg
from ..linalg._lu import lu_unpack
from .._tensor import Tensor
from .define import NAMESPACE

SVDResult = collections.namedtuple("svd", ["U", "S", "V"])
QRResult = collections.namedtuple("qr", ["Q", "R"])
SlogdetResult = collections.namedtuple("slogdet", ["sign", "logabsdet"])
TriangularSolveResult = collections.namedtuple("triangular_solve",
                                               ["solution", "cloned_coefficient"])


def inverse(input, *, out=None):
    return linalg.inv(input, out=out)


def det(input):
    return linalg.det(input)


def logdet(input):
    """log(det(input)): NaN where the determinant is negative, -inf where
    it is zero; for complex matrices the complex log|det| + i arg(det)."""
    sign, logabs = linalg.slogdet(input)
    if input.is_complex():
        from .complex import complex as _complex
        return _complex(logabs, sign.angle())
    return logabs.where(sign >= 0, logabs.new_full((), float("nan")))


def slogdet(input):
    return SlogdetResult(*linalg.slogdet(input))


def svd(input, some=True, compute_uv=True):
    """U, S, V (not Vh); without compute_uv, U and V are zero-filled
    (m, m) and (n, n) matrices, as PyTorch's."""
    if not compute_uv:
        m, n = input.shape[-2], input.shape[-1]
        S = linalg.svdvals(input)
        batch = tuple(input.shape[:-2])
        return SVDResult(input.new_zeros(batch + (m, m)), S, input.new_zeros(batch + (n, n)))
    U, S, Vh = linalg.svd(input, full_matrices=not some)
    return SVDResult(U, S, Vh.mT)


def qr(input, some=True):
    return QRResult(*linalg.qr(input, "reduced" if some else "complete"))


def cholesky(input, upper=False):
    return linalg.cholesky(input, upper=upper)


def cholesky_solve(input, input2, upper=False):
    """X with A X = input, A = L L^H given its factor input2 (U^H U when
    upper)."""
    L = input2.mH if upper else input2
    Y = linalg.solve_triangular(L, input, upper=False)
    return linalg.solve_triangular(L.mH, Y, upper=True)


def cholesky_inverse(input, upper=False, *, out=None):
    """A^-1 for A = L L^H given its factor input (U^H U when upper)."""
    from .._creation import eye
    n = input.shape[-1]
    X = cholesky_solve(eye(n, dtype=input.dtype, device=input.device).expand(input.shape),
                       input, upper)
    if out is not None:
        return out.copy_(X)
    return X


def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False):
    """Solves op(A) X = input; returns (X, a copy of A)."""
    M = A.mT if transpose else A
    X = linalg.solve_triangular(M, input, upper=upper != bool(transpose),
                                unitriangular=unitriangular)
    return TriangularSolveResult(X, A.clone())


def pinverse(input, rcond=1e-15):
    return linalg.pinv(input, rtol=rcond)


def matrix_power(input, n):
    return linalg.matrix_power(input, n)


def lu(A, pivot=True, get_infos=False, out=None):
    """(LU, pivots) or, with get_infos, (LU, pivots, infos); a singular
    matrix is factored without error either way, as PyTorch's."""
    LU, piv, info = linalg.lu_factor_ex(A, pivot=pivot)
    result = (LU, piv, info) if get_infos else (LU, piv)
    if out is not None:
        for o, r in zip(out, result):
            o.copy_(r)
        return out
    return result


def lu_solve(b, LU_data, LU_pivots, *, out=None):
    return linalg.lu_solve(LU_data, LU_pivots, b, out=out)


GeqrfResult = collections.namedtuple("geqrf", ["a", "tau"])


def geqrf(input):
    """QR as LAPACK leaves it: R on and above the diagonal, Householder
    reflectors below, and their scales (no gradient, as PyTorch's)."""
    from ..linalg._functions import raw_call
    if not isinstance(input, Tensor):
        raise TypeError(f"geqrf(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    from ..linalg._ldl import Undifferentiable
    return GeqrfResult(*Undifferentiable.apply(
        "geqrf", lambda A: raw_call("linalg_geqrf", A), input))


def orgqr(input, tau):
    return linalg.householder_product(input, tau)


def matrix_exp(input):
    return linalg.matrix_exp(input)


for _f in (inverse, det, logdet, slogdet, svd, qr, cholesky, cholesky_solve,
           cholesky_inverse, triangular_solve, pinverse, matrix_power, lu, lu_solve, geqrf, orgqr,
           matrix_exp):
    NAMESPACE[_f.__name__] = _f
    setattr(Tensor, _f.__name__, _f)
NAMESPACE["lu_unpack"] = lu_unpack
