"""ember.linalg on complex matrices: solve, inv, det, slogdet, logdet,
cholesky, solve_triangular, the LU family, cholesky_solve/inverse, qr,
svd, eigh, eig, lstsq, pinv, householder_product, matrix_exp and the
norms, against NumPy on fresh random data; gradcheck and
gradgradcheck of each in complex128 (PyTorch's convention: through the
(re, im) pairs); the gradients of a real loss against PyTorch's where it is
installed; LDL of Hermitian and complex symmetric matrices."""
import numpy as np
import pytest

import ember
import ember.linalg as LA
from ember.autograd import gradcheck, gradgradcheck

needs_lapack = pytest.mark.skipif(not ember.th.has_lapack(),
                                  reason="the TH_NO_BLAS build has no complex LAPACK")
pytestmark = needs_lapack


@pytest.fixture
def rng():
    return np.random.default_rng(17)


def _c(rng, *shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _hermitian(rng, n, batch=()):
    m = _c(rng, *batch, n, n)
    return m @ m.conj().swapaxes(-1, -2) + n * np.eye(n)


def _close(t, ref, tol=1e-10):
    np.testing.assert_allclose(t.detach().numpy(), ref, rtol=tol, atol=tol)


def test_values_against_numpy(rng):
    A, B, b = _c(rng, 2, 4, 4), _c(rng, 2, 4, 3), _c(rng, 2, 4)
    H = _hermitian(rng, 4, (2,))
    tA, tB, tH = ember.tensor(A), ember.tensor(B), ember.tensor(H)
    _close(LA.solve(tA, tB), np.linalg.solve(A, B))
    _close(LA.solve(tA, ember.tensor(b)), np.linalg.solve(A, b[..., None])[..., 0])
    _close(LA.solve(tA, tB.mT, left=False), np.swapaxes(np.linalg.solve(A.swapaxes(-1, -2),
                                                                         B), -1, -2))
    _close(LA.inv(tA), np.linalg.inv(A))
    _close(ember.inverse(tA), np.linalg.inv(A))
    _close(LA.det(tA), np.linalg.det(A))
    sign, logabs = LA.slogdet(tA)
    ref_sign, ref_logabs = np.linalg.slogdet(A)
    assert logabs.dtype == ember.float64 and sign.dtype == ember.complex128
    _close(sign, ref_sign)
    _close(logabs, ref_logabs)
    _close(ember.logdet(tA), np.log(np.linalg.det(A)))
    _close(LA.cholesky(tH), np.linalg.cholesky(H))
    _close(LA.cholesky(tH, upper=True), np.linalg.cholesky(H).conj().swapaxes(-1, -2))
    L = np.linalg.cholesky(H)
    _close(ember.cholesky_solve(tB, ember.tensor(L)), np.linalg.solve(H, B))
    _close(ember.cholesky_inverse(ember.tensor(L)), np.linalg.inv(H))
    _close(LA.matrix_power(tA, -2), np.linalg.inv(A) @ np.linalg.inv(A))
    _close(LA.vector_norm(tA), np.linalg.norm(A.reshape(-1)))
    _close(LA.matrix_norm(tA), np.linalg.norm(A, "fro", axis=(-2, -1)))
    lu, piv = LA.lu_factor(tA)
    for adjoint in (False, True):
        op = A.conj().swapaxes(-1, -2) if adjoint else A
        _close(LA.lu_solve(lu, piv, tB, adjoint=adjoint), np.linalg.solve(op, B))
    P, Lf, U = LA.lu(tA)
    _close(P @ Lf @ U, A)


def test_triangular_solves_against_numpy(rng):
    A, B = _c(rng, 5, 5) + 3 * np.eye(5), _c(rng, 5, 2)
    for upper in (True, False):
        T = np.triu(A) if upper else np.tril(A)
        for unit in (False, True):
            Tu = T - np.diag(np.diag(T)) + np.eye(5) if unit else T
            X = LA.solve_triangular(ember.tensor(A), ember.tensor(B), upper=upper,
                                    unitriangular=unit)
            _close(X, np.linalg.solve(Tu, B))
            X = LA.solve_triangular(ember.tensor(A), ember.tensor(B.T), upper=upper, left=False,
                                    unitriangular=unit)
            _close(X, np.linalg.solve(Tu.T, B).T)


def test_matrix_exp_against_a_series(rng):
    A = _c(rng, 3, 3) * 0.3
    ref, term = np.eye(3, dtype=complex), np.eye(3, dtype=complex)
    for k in range(1, 30):
        term = term @ A / k
        ref = ref + term
    _close(LA.matrix_exp(ember.tensor(A)), ref)


FUNCTIONS = [
    ("solve", lambda a, b: LA.solve(a, b), (3, 3), (3, 2)),
    ("solve_right", lambda a, b: LA.solve(a, b, left=False), (3, 3), (2, 3)),
    ("inv", lambda a: LA.inv(a), (3, 3)),
    ("det", lambda a: LA.det(a), (3, 3)),
    ("slogdet", lambda a: LA.slogdet(a), (3, 3)),
    ("logdet", lambda a: ember.logdet(a), (3, 3)),
    ("cholesky", lambda a: LA.cholesky(a @ a.mH + 3 * ember.eye(3, dtype=a.dtype)), (3, 3)),
    ("cholesky_upper", lambda a: LA.cholesky(a @ a.mH + 3 * ember.eye(3, dtype=a.dtype),
                                             upper=True), (3, 3)),
    ("solve_triangular", lambda a, b: LA.solve_triangular(a + 3 * ember.eye(3, dtype=a.dtype),
                                                          b, upper=True), (3, 3), (3, 2)),
    ("solve_triangular_right", lambda a, b: LA.solve_triangular(
        a + 3 * ember.eye(3, dtype=a.dtype), b, upper=False, left=False), (3, 3), (2, 3)),
    ("lu_factor", lambda a: LA.lu_factor(a)[0], (3, 3)),
    ("lu_factor_wide", lambda a: LA.lu_factor(a)[0], (2, 4)),
    ("lu_solve", lambda a, b: LA.lu_solve(*LA.lu_factor(a), b), (3, 3), (3, 2)),
    ("lu_solve_adjoint_right", lambda a, b: LA.lu_solve(*LA.lu_factor(a), b, adjoint=True,
                                                         left=False), (3, 3), (2, 3)),
    ("cholesky_solve", lambda b, a: ember.cholesky_solve(
        b, LA.cholesky(a @ a.mH + 3 * ember.eye(3, dtype=a.dtype))), (3, 2), (3, 3)),
    ("matrix_exp", lambda a: LA.matrix_exp(a * 0.5), (3, 3)),
    ("vector_norm", lambda a: LA.vector_norm(a), (3, 3)),
    ("qr", lambda a: LA.qr(a), (3, 3)),
    ("qr_tall", lambda a: LA.qr(a), (4, 2)),
    ("qr_wide", lambda a: LA.qr(a), (2, 4)),
    ("svdvals", lambda a: LA.svdvals(a), (4, 3)),
    # losses that do not depend on the singular vectors' phases
    ("svd", lambda a: _phase_free(*LA.svd(a, full_matrices=False)), (4, 3)),
    ("svd_wide", lambda a: _phase_free(*LA.svd(a, full_matrices=False)), (2, 4)),
    ("eigvalsh", lambda a: LA.eigvalsh(a + a.mH), (3, 3)),
    ("eigh", lambda a: _phase_free(LA.eigh(a + a.mH)[1]), (3, 3)),
    ("pinv", lambda a: LA.pinv(a), (4, 3)),
    ("pinv_hermitian", lambda a: LA.pinv(a + a.mH, hermitian=True), (3, 3)),
    ("matrix_norm_nuc", lambda a: LA.matrix_norm(a, "nuc"), (4, 3)),
    ("householder_product", lambda a, t: LA.householder_product(a, t), (4, 3), (2,)),
    ("eigvals", lambda a: LA.eigvals(a), (3, 3)),
    ("eig", lambda a: _phase_free(LA.eig(a)[1]), (3, 3)),
    ("lstsq", lambda a, b: LA.lstsq(a, b).solution, (4, 3), (4, 2)),
    ("lstsq_wide", lambda a, b: LA.lstsq(a, b).solution, (2, 3), (2, 2)),
]


def _phase_free(U, S=None, Vh=None):
    """|U|^2 weighted, and U S Vh: unchanged by e^{i phi} on a vector pair."""
    w = ember.arange(U.shape[-1], dtype=U.abs().dtype) + 1
    out = (U.abs() ** 2 * w).sum()
    if Vh is not None:
        out = out + (U[..., :1] @ Vh[..., :1, :]).abs().sum() + S.sum()
    return out


@pytest.mark.parametrize("case", FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
def test_gradcheck_and_gradgradcheck(rng, case):
    name, fn, *shapes = case
    xs = [ember.tensor(_c(rng, *s), requires_grad=True) for s in shapes]
    if name.startswith("lu") or name in ("det", "slogdet", "logdet", "inv", "solve",
                                         "solve_right"):
        xs[0] = (xs[0].detach() + 2 * ember.eye(*shapes[0], dtype=xs[0].dtype)
                 ).requires_grad_()  # away from singular matrices
    assert gradcheck(fn, xs)
    assert gradgradcheck(fn, xs)


def test_real_loss_gradients_against_pytorch(rng):
    torch = pytest.importorskip("torch")
    A, B = _c(rng, 2, 4, 4) + 2 * np.eye(4), _c(rng, 2, 4, 3)
    cases = [("solve", lambda m, a, b: m.linalg.solve(a, b)),
             ("slogdet", lambda m, a, b: m.linalg.slogdet(a)[0] * m.linalg.slogdet(a)[1]),
             ("det", lambda m, a, b: m.linalg.det(a)),
             ("lu_solve", lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b,
                                                             adjoint=True)),
             ("cholesky", lambda m, a, b: m.linalg.cholesky(a @ a.mH))]
    for name, f in cases:
        grads = []
        for m in (ember, torch):
            a = m.tensor(A, requires_grad=True)
            b = m.tensor(B, requires_grad=True)
            out = f(m, a, b)
            loss = (out * out.conj()).real.sum() + out.imag.sum()
            loss.backward()
            grads.append([np.asarray(t.grad.resolve_conj().numpy() if m is torch
                                     else t.grad.numpy()) for t in (a, b)
                          if t.grad is not None])
        for ge, gt in zip(*grads):
            np.testing.assert_allclose(ge, gt, rtol=1e-9, atol=1e-9, err_msg=name)


def test_single_precision(rng):
    A = (_c(rng, 5, 5) + 3 * np.eye(5)).astype(np.complex64)
    x = LA.inv(ember.tensor(A))
    assert x.dtype == ember.complex64
    np.testing.assert_allclose(x.numpy(), np.linalg.inv(A), rtol=1e-4, atol=1e-5)


def test_singular_complex_matrices(rng):
    S = ember.tensor(np.array([[1 + 1j, 2 + 2j], [2 + 2j, 4 + 4j]]))
    with pytest.raises(LA.LinAlgError):
        LA.inv(S)
    assert LA.det(S).item() == 0
    assert LA.slogdet(S).logabsdet.item() == -np.inf
    # det's gradient there is the conjugate adjugate, through the SVD
    rank2 = _c(rng, 3, 2) @ _c(rng, 2, 3)
    x = ember.tensor(rank2, requires_grad=True)
    assert gradcheck(lambda a: LA.det(a), [x])
    (LA.det(x) * (1 + 2j)).real.backward()
    adj = np.array([[np.linalg.det(np.delete(np.delete(rank2, i, 0), j, 1)) * (-1) ** (i + j)
                     for j in range(3)] for i in range(3)])  # cofactors: adj(A)^T
    np.testing.assert_allclose(x.grad.numpy(), ((1 + 2j) * adj).conj(), atol=1e-10)


@pytest.mark.parametrize("hermitian", [True, False])
def test_ldl_factor_and_solve(rng, hermitian):
    M = _c(rng, 4, 4)
    A = M + (M.conj() if hermitian else M).T
    B = _c(rng, 4, 2)
    LD, piv = LA.ldl_factor(ember.tensor(A), hermitian=hermitian)
    X = LA.ldl_solve(LD, piv, ember.tensor(B), hermitian=hermitian)
    _close(X, np.linalg.solve(A, B))
    torch = pytest.importorskip("torch")
    tLD, tpiv = torch.linalg.ldl_factor(torch.tensor(A), hermitian=hermitian)
    _close(LD, tLD.numpy())
    assert piv.tolist() == tpiv.tolist()
