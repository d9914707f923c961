"""ember.linalg and the classic top-level names: values against NumPy's
linalg (batches, empty and 1x1 matrices, non-contiguous inputs,
float32/float64), gradcheck and gradgradcheck of every differentiable
routine (float64), and PyTorch's errors."""
import math

import numpy as np
import pytest

import ember
import ember.th
from ember import linalg as LA
from ember.autograd import gradcheck, gradgradcheck

LAPACK = ember.th.has_lapack()
needs_lapack = pytest.mark.skipif(not LAPACK, reason="TH_NO_BLAS build: no LAPACK")


@pytest.fixture
def rng(request):
    import zlib
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


def T(a, dtype=ember.float64, grad=False, transposed=False):
    if transposed and a.ndim >= 2:
        t = ember.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2)), dtype=dtype).mT
        assert a.size < 2 or not t.is_contiguous() or a.shape[-1] == 1 or a.shape[-2] == 1
    else:
        t = ember.tensor(a, dtype=dtype)
    return t.detach().requires_grad_(grad)


def close(got, want, tol=1e-9):
    got = got.detach().numpy() if isinstance(got, ember.Tensor) else np.asarray(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def wc(rng, *shape):
    """A well-conditioned random matrix (batch)."""
    return rng.standard_normal(shape) + shape[-1] * np.eye(shape[-1])


def pd(rng, *shape):
    a = rng.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


# ---- values --------------------------------------------------------------
@pytest.mark.parametrize("dtype,tol", [(ember.float32, 1e-3), (ember.float64, 1e-9)])
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (1, 1), (0, 0), (2, 0, 0)], ids=str)
def test_square_routines(rng, dtype, tol, transposed, shape):
    a = wc(rng, *shape)
    b = rng.standard_normal(shape[:-1] + (2,))
    A, B = T(a, dtype, transposed=transposed), T(b, dtype)
    close(LA.solve(A, B), np.linalg.solve(a, b), tol)
    close(LA.solve(A, B[..., 0]), np.linalg.solve(a, b[..., 0:1])[..., 0], tol)
    close(LA.solve(A, B.mT, left=False), np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2), b),
                                                     -1, -2), tol)
    close(LA.inv(A), np.linalg.inv(a), tol)
    close(ember.inverse(A), np.linalg.inv(a), tol)
    close(LA.det(A), np.linalg.det(a), tol * 10)
    s, l = LA.slogdet(A)
    ws, wl = np.linalg.slogdet(a)
    close(s, ws, tol)
    close(l, wl, tol)
    p = pd(rng, *shape)
    P = T(p, dtype, transposed=transposed)
    close(LA.cholesky(P), np.linalg.cholesky(p), tol)
    close(ember.cholesky(P, upper=True), np.swapaxes(np.linalg.cholesky(p), -1, -2), tol)
    close(ember.cholesky_solve(B, LA.cholesky(P)), np.linalg.solve(p, b), tol * 10)
    LU, piv = LA.lu_factor(A)
    close(LA.lu_solve(LU, piv, B), np.linalg.solve(a, b), tol)
    close(LA.matrix_power(A, 3), np.linalg.matrix_power(a, 3) if a.size else a, tol * 100)
    close(LA.matrix_power(A, -2), np.linalg.matrix_power(a, -2) if a.size else a, tol * 10)
    if LAPACK:
        w, v = LA.eigh(P)
        close(w, np.linalg.eigvalsh(p), tol * 10)
        close(LA.eigvalsh(P, "U"), np.linalg.eigvalsh(p, "U"), tol * 10)
        close(LA.pinv(A), np.linalg.pinv(a) if a.size else np.swapaxes(a, -1, -2), tol * 10)
        close(LA.matrix_rank(A), np.linalg.matrix_rank(a) if a.size else
              np.zeros(shape[:-2], np.int64), 0)


@needs_lapack
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 2), (1, 1), (0, 3), (3, 0)], ids=str)
def test_rectangular_routines(rng, transposed, shape):
    a = rng.standard_normal(shape)
    A = T(a, transposed=transposed)
    U, S, Vh = LA.svd(A, full_matrices=False)
    close(S, np.linalg.svd(a, compute_uv=False))
    close((U * S.unsqueeze(-2)) @ Vh, a)
    close(LA.svdvals(A), np.linalg.svd(a, compute_uv=False))
    U, S, V = ember.svd(A)
    close((U * S.unsqueeze(-2)) @ V.mT, a)
    Q, R = LA.qr(A)
    close(Q @ R, a)
    Qc, Rc = ember.qr(A, some=False)
    assert Qc.shape[-1] == shape[-2]
    close(Qc @ Rc, a)
    close(LA.pinv(A), np.linalg.pinv(a) if a.size else np.swapaxes(a, -1, -2))
    b = rng.standard_normal(shape[:-1] + (2,))
    sol = LA.lstsq(A, T(b))
    close(sol.solution, (np.linalg.pinv(a) if a.size else np.swapaxes(a, -1, -2)) @ b)
    assert sol.singular_values.numel() == 0
    assert LA.lstsq(A, T(b), driver="gelsd").singular_values.shape == S.shape
    assert sol.residuals.numel() == 0  # the default driver (gelsy) gives none
    if shape[-2] > shape[-1] > 0:
        r = LA.lstsq(A, T(b), driver="gels").residuals
        close(r, ((a @ sol.solution.detach().numpy() - b) ** 2).sum(-2))


def test_norms(rng):
    a = rng.standard_normal((2, 3, 4))
    A = T(a)
    close(LA.vector_norm(A), np.linalg.norm(a.ravel()))
    for ord in (1, 2, 3, 0, math.inf, -math.inf, 0.5):
        close(LA.vector_norm(A, ord, dim=-1), np.linalg.norm(a, ord, axis=-1))
    close(LA.vector_norm(A, 2, dim=(0, 2), keepdim=True),
          np.sqrt((a ** 2).sum(axis=(0, 2), keepdims=True)))
    for ord in ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf):
        if not LAPACK and ord in ("nuc", 2, -2):
            continue
        close(LA.matrix_norm(A, ord), np.linalg.norm(a, ord, axis=(-2, -1)))
        close(LA.matrix_norm(A, ord, dim=(0, 2), keepdim=True),
              np.linalg.norm(a, ord, axis=(0, 2), keepdims=True))
    close(LA.norm(A), np.linalg.norm(a.ravel()))
    close(LA.norm(A[0], 1), np.linalg.norm(a[0], 1))
    close(LA.norm(A, dim=(1, 2)), np.linalg.norm(a, axis=(1, 2)))
    if LAPACK:
        sq = T(wc(rng, 3, 3))
        close(LA.cond(sq), np.linalg.cond(sq.detach().numpy()))
        close(LA.cond(sq, "fro"), np.linalg.cond(sq.detach().numpy(), "fro"))


def test_cross_and_multi_dot(rng):
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((1, 3))
    close(LA.cross(T(a), T(b)), np.cross(a, b))
    ms = [rng.standard_normal(s) for s in ((4,), (4, 10), (10, 2), (2, 3), (3,))]
    close(LA.multi_dot([T(m) for m in ms]), ms[0] @ ms[1] @ ms[2] @ ms[3] @ ms[4])


def test_triangular_solve_and_classic_names(rng):
    a = np.triu(wc(rng, 3, 3))
    b = rng.standard_normal((3, 2))
    X, Ac = ember.triangular_solve(T(b), T(a))
    close(X, np.linalg.solve(a, b))
    close(Ac, a)
    X, _ = ember.triangular_solve(T(b), T(a), transpose=True)
    close(X, np.linalg.solve(a.T, b))
    close(LA.solve_triangular(T(a), T(b.T), upper=True, left=False), np.linalg.solve(a.T, b).T)
    u = a.copy()
    np.fill_diagonal(u, 1)
    close(LA.solve_triangular(T(a), T(b), upper=True, unitriangular=True), np.linalg.solve(u, b))
    m = wc(rng, 3, 3)
    close(T(m).logdet(), np.log(np.linalg.det(m)) if np.linalg.det(m) > 0 else np.nan)
    assert math.isnan(float(ember.logdet(T(-np.eye(3)))))


# ---- gradients (float64) ------------------------------------------------
def _sym_pd(X):
    n = X.shape[-1]
    return X @ X.mT + n * ember.eye(n, dtype=X.dtype)


def _sym(X):
    return X + X.mT


def _phase(V):
    """Eigen/singular vectors up to sign: fixed by the first row's sign."""
    return V * V[..., :1, :].sign()


_FIXED = ember.tensor([[4.0, 1.0, -1.0], [2.0, 5.0, 0.5], [0.0, -1.0, 3.0]], dtype=ember.float64)
GRAD_CASES = {
    "solve": (lambda A, B: LA.solve(A, B), [(3, 3), (3, 2)], "wc"),
    "solve_vector": (lambda A, B: LA.solve(A, B), [(2, 3, 3), (3,)], "wc"),
    "solve_right": (lambda A, B: LA.solve(A, B, left=False), [(3, 3), (2, 3)], "wc"),
    "solve_batch_broadcast": (lambda A, B: LA.solve(A, B), [(2, 1, 3, 3), (4, 3, 2)], "wc"),
    "inv": (LA.inv, [(2, 3, 3)], "wc"),
    "det": (LA.det, [(2, 3, 3)], "wc"),
    "slogdet": (lambda A: LA.slogdet(A).logabsdet, [(3, 3)], "wc"),
    "logdet": (lambda A: ember.logdet(_sym_pd(A)), [(3, 3)], None),
    "cholesky": (lambda A: LA.cholesky(_sym_pd(A)), [(2, 3, 3)], None),
    "cholesky_upper": (lambda A: LA.cholesky(_sym_pd(A), upper=True), [(3, 3)], None),
    "cholesky_solve": (lambda A, B: ember.cholesky_solve(B, LA.cholesky(_sym_pd(A))),
                       [(3, 3), (3, 2)], None),
    "solve_triangular_upper": (lambda A, B: LA.solve_triangular(A, B, upper=True),
                               [(3, 3), (3, 2)], "wc"),
    "solve_triangular_lower_right": (
        lambda A, B: LA.solve_triangular(A, B, upper=False, left=False), [(3, 3), (2, 3)], "wc"),
    "solve_triangular_unit": (
        lambda A, B: LA.solve_triangular(A, B, upper=False, unitriangular=True),
        [(3, 3), (3, 2)], "wc"),
    "triangular_solve": (lambda A, B: ember.triangular_solve(B, A, transpose=True)[0],
                         [(3, 3), (3, 2)], "wc"),
    "qr_tall": (lambda A: LA.qr(A), [(4, 3)], None),
    "qr_wide": (lambda A: LA.qr(A), [(3, 5)], None),
    "qr_square_batch": (lambda A: LA.qr(A), [(2, 3, 3)], None),
    "matrix_power": (lambda A: LA.matrix_power(A, 3), [(3, 3)], None),
    "matrix_power_negative": (lambda A: LA.matrix_power(A, -2), [(3, 3)], "wc"),
    # lu_solve with fixed factors (differentiable in B only)
    "lu_solve": (lambda B: LA.lu_solve(*LA.lu_factor(_FIXED), B), [(3, 2)], None),
    "lu_solve_adjoint_right": (
        lambda B: LA.lu_solve(*LA.lu_factor(_FIXED), B, left=False, adjoint=True), [(2, 3)], None),
    "lu_factor": (lambda A: LA.lu_factor(A).LU, [(3, 3)], None),
    "lu_factor_batch": (lambda A: LA.lu_factor(A).LU, [(2, 4, 4)], None),
    "multi_dot": (lambda A, B: LA.multi_dot([A, B, A.mT]), [(3, 4), (4, 4)], None),
    "vector_norm": (lambda A: LA.vector_norm(A, 3, dim=-1), [(2, 3)], None),
    "matrix_norm_inf": (lambda A: LA.matrix_norm(A, math.inf), [(3, 3)], None),
}
SPECTRAL_CASES = {
    "svd_tall": (lambda A: _svd(A), [(4, 3)], None),
    "svd_wide": (lambda A: _svd(A), [(3, 4)], None),
    "svd_batch": (lambda A: _svd(A), [(2, 3, 3)], None),
    "svdvals": (LA.svdvals, [(4, 3)], None),
    "classic_svd": (lambda A: _phase(ember.svd(A)[0]), [(3, 3)], None),
    "eigh": (lambda A: _eigh(_sym(A)), [(3, 3)], None),
    "eigh_upper_batch": (lambda A: _eigh(_sym(A), "U"), [(2, 3, 3)], None),
    "eigvalsh": (lambda A: LA.eigvalsh(_sym(A)), [(3, 3)], None),
    "pinv_tall": (LA.pinv, [(4, 3)], None),
    "pinv_wide": (LA.pinv, [(3, 4)], None),
    "pinv_hermitian": (lambda A: LA.pinv(_sym_pd(A), hermitian=True), [(3, 3)], None),
    "pinverse": (ember.pinverse, [(4, 3)], None),
    "lstsq": (lambda A, B: LA.lstsq(A, B).solution, [(4, 3), (4, 2)], None),
    "matrix_norm_nuc": (lambda A: LA.matrix_norm(A, "nuc"), [(3, 4)], None),
    "matrix_norm_2": (lambda A: LA.matrix_norm(A, 2), [(3, 4)], None),
    "cond": (LA.cond, [(3, 3)], "wc"),
}


def _svd(A):
    U, S, Vh = LA.svd(A, full_matrices=False)
    return _phase(U), S, _phase(Vh.mT)


def _eigh(A, uplo="L"):
    w, v = LA.eigh(A, uplo)
    return w, _phase(v)


def _inputs(rng, shapes, kind):
    out = []
    for s in shapes:
        a = wc(rng, *s) if kind == "wc" and len(s) >= 2 and s[-1] == s[-2] else \
            rng.standard_normal(s)
        out.append(T(a, grad=True))
    return out


def _cases():
    for name, case in GRAD_CASES.items():
        yield pytest.param(case, id=name)
    for name, case in SPECTRAL_CASES.items():
        yield pytest.param(case, id=name, marks=needs_lapack)


@pytest.mark.parametrize("case", _cases())
def test_gradcheck(rng, case):
    fn, shapes, kind = case
    assert gradcheck(fn, _inputs(rng, shapes, kind))


@pytest.mark.parametrize("case", _cases())
def test_gradgradcheck(rng, case):
    fn, shapes, kind = case
    assert gradgradcheck(fn, _inputs(rng, shapes, kind))


@needs_lapack
@pytest.mark.parametrize("a", [[[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]],
                               [[0.0, 0.0], [0.0, 0.0]], [[0.0]]], ids=["rank2", "zero", "1x1"])
def test_det_gradient_at_singular_matrices(a):
    """The adjugate, through the SVD, as PyTorch (det is a polynomial:
    finite differences see it)."""
    A = ember.tensor(a, dtype=ember.float64, requires_grad=True)
    assert gradcheck(LA.det, [A])
    B = ember.tensor([a, np.eye(len(a)).tolist()], dtype=ember.float64, requires_grad=True)
    assert gradcheck(LA.det, [B])  # one singular matrix in the batch


@needs_lapack
def test_svdvals_gradient_with_repeated_singular_values():
    """The singular values alone have a gradient (U Vh) even when they
    repeat, as PyTorch's."""
    A = ember.eye(3, dtype=ember.float64).requires_grad_()
    LA.svdvals(A).sum().backward()
    assert np.allclose(A.grad.numpy(), np.eye(3))


def test_qr_r_mode_is_not_differentiable():
    A = ember.randn(3, 3, dtype=ember.float64, requires_grad=True)
    Q, R = LA.qr(A, mode="r")
    assert Q.shape == (0,)
    with pytest.raises(RuntimeError, match="The derivative of linalg.qr depends on Q"):
        R.sum().backward()


# ---- errors ----------------------------------------------------------------
def test_errors():
    with pytest.raises(LA.LinAlgError, match=r"^torch.linalg.solve: The solver failed because "
                       r"the input matrix is singular.$"):
        LA.solve(ember.zeros(2, 2), ember.ones(2))
    assert issubclass(LA.LinAlgError, RuntimeError)
    with pytest.raises(LA.LinAlgError, match=r"^linalg.inv: The diagonal element 1 is zero"):
        LA.inv(ember.zeros(2, 2))
    with pytest.raises(RuntimeError, match=r"^linalg.inv: A must be batches of square matrices, "
                       r"but they are 3 by 4 matrices$"):
        LA.inv(ember.zeros(3, 4))
    with pytest.raises(RuntimeError, match=r"^linalg.inv: Expected a floating point or complex "
                       r"tensor as input. Got Long$"):
        LA.inv(ember.zeros(3, 3, dtype=ember.int64))
    with pytest.raises(LA.LinAlgError, match=r"^linalg.cholesky: \(Batch element 1\): The "
                       r"factorization could not be completed because the input is not "
                       r"positive-definite \(the leading minor of order 1 is not "
                       r"positive-definite\).$"):
        LA.cholesky(ember.stack([ember.eye(2), -ember.eye(2)]))
    L, info = LA.cholesky_ex(-ember.eye(2))
    assert int(info) == 1
    X, info = LA.inv_ex(ember.zeros(2, 2, 2))
    assert info.tolist() == [1, 1]
    with pytest.raises(TypeError, match="must be Tensor"):
        LA.inv([[1.0]])
    with pytest.raises(RuntimeError, match="qr received unrecognized mode 'x'"):
        LA.qr(ember.ones(2, 2), mode="x")
