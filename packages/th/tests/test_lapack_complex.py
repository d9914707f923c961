"""libTH's LAPACK routines on complex64/complex128 matrices (LU, solve,
inverse, determinants, Cholesky, triangular solves, QR and the Householder
routines, the SVD, the Hermitian eigendecomposition) against NumPy on
fresh random data: batches, broadcast right-hand sides, non-contiguous
inputs, orders 0 to 20 (the real kernels' small-order path does not
apply), singular and non-positive-definite inputs, eig, lstsq and LDL
(Hermitian and complex symmetric), and the TH_NO_BLAS build's refusal."""
import numpy as np
import pytest

import ember.th as th
from th_testing import complex_normal as _c

DTYPES = [(np.complex64, 2e-4), (np.complex128, 1e-11)]
# the TH_NO_BLAS build's portable kernels are real: complex matrices need LAPACK
needs_lapack = pytest.mark.skipif(not th.has_lapack(), reason="TH_NO_BLAS build: "
                                  "test_no_blas_build_refuses_complex checks the refusal")



def _close(got, want, tol):
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    assert got.shape == want.shape
    if want.size:
        assert np.abs(got - want).max() / scale < tol


@needs_lapack
@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 2, 4, 5, 17, 20])
def test_solve_inverse_and_determinants(rng, dtype, tol, n):
    A = _c(rng, (3, n, n), dtype) + 3 * np.eye(n, dtype=dtype)
    B = _c(rng, (n, 2), dtype)  # broadcast over the batch
    tA = th.from_numpy(A)
    x, info = th.linalg_solve_ex(tA, th.from_numpy(B))
    assert x.dtype == tA.dtype and not info.numpy().any()
    _close(x.numpy(), np.linalg.solve(A, np.broadcast_to(B, (3, n, 2))), tol)
    _close(th.linalg_inv_ex(tA).inverse.numpy(), np.linalg.inv(A) if n else A, tol)
    if n:
        _close(th.linalg_det(tA).numpy(), np.linalg.det(A), tol)
        sign, logabs = th.linalg_slogdet(tA)
        ref_sign, ref_logabs = np.linalg.slogdet(A)
        assert logabs.dtype == (th.float32 if dtype == np.complex64 else th.float64)
        _close(sign.numpy(), ref_sign, tol)
        _close(logabs.numpy(), ref_logabs, tol)


@needs_lapack
@pytest.mark.parametrize("dtype,tol", DTYPES)
def test_lu_factor_and_solve(rng, dtype, tol):
    A = _c(rng, (2, 6, 6), dtype)
    B = _c(rng, (2, 6, 3), dtype)
    lu, piv, info = th.linalg_lu_factor_ex(th.from_numpy(A))
    assert lu.dtype == th.from_numpy(A).dtype and piv.dtype == th.int32
    x = th.linalg_lu_solve(lu, piv, th.from_numpy(B)).numpy()
    _close(A @ x, B, tol)
    xh = th.linalg_lu_solve(lu, piv, th.from_numpy(B), adjoint=True).numpy()
    _close(A.conj().swapaxes(-1, -2) @ xh, B, tol)  # the conjugate transpose
    wide = _c(rng, (3, 5), dtype)  # rectangular LU
    lu, piv, _ = th.linalg_lu_factor_ex(th.from_numpy(wide))
    L = np.tril(lu.numpy(), -1)[:, :3] + np.eye(3)
    U = np.triu(lu.numpy())
    P = np.eye(3)
    for i, p in enumerate(piv.numpy() - 1):
        P[[i, p]] = P[[p, i]]
    _close(P.T @ L @ U, wide, tol)


@needs_lapack
@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("n", [1, 3, 18])
def test_cholesky_of_hermitian_matrices(rng, dtype, tol, n):
    M = _c(rng, (2, n, n), dtype)
    H = M @ M.conj().swapaxes(-1, -2) + n * np.eye(n, dtype=dtype)
    L, info = th.linalg_cholesky_ex(th.from_numpy(H))
    assert not info.numpy().any()
    _close(L.numpy(), np.linalg.cholesky(H), tol)
    U, _ = th.linalg_cholesky_ex(th.from_numpy(H), upper=True)
    _close(U.numpy(), np.linalg.cholesky(H).conj().swapaxes(-1, -2), tol)
    not_pd = -H
    with pytest.raises(th.LinAlgError, match="not positive-definite"):
        th.linalg_cholesky_ex(th.from_numpy(not_pd), check_errors=True)


@needs_lapack
@pytest.mark.parametrize("dtype,tol", DTYPES)
def test_triangular_solves_non_contiguous(rng, dtype, tol):
    A = _c(rng, (20, 20), dtype) * 0.2 + 4 * np.eye(20, dtype=dtype)  # well conditioned,
    # unit diagonal included
    B = _c(rng, (20, 6), dtype)
    tA = th.from_numpy(A).transpose(0, 1)  # non-contiguous views
    tB = th.from_numpy(B)[:, ::2]
    At, Bv = A.T, B[:, ::2]
    for upper in (True, False):
        T = np.triu(At) if upper else np.tril(At)
        x = th.linalg_solve_triangular(tA, tB, upper=upper).numpy()
        _close(T @ x, Bv, tol)
        x = th.linalg_solve_triangular(tA, tB, upper=upper, transpose=True).numpy()
        _close(T.conj().T @ x, Bv, tol)
    x = th.linalg_solve_triangular(tA, tB, upper=True, unitriangular=True).numpy()
    _close((np.triu(At, 1) + np.eye(20)) @ x, Bv, tol)


@needs_lapack
def test_singular_and_mismatched_inputs():
    S = th.from_numpy(np.array([[1 + 1j, 2 + 2j], [2 + 2j, 4 + 4j]], np.complex128))
    with pytest.raises(th.LinAlgError, match="singular"):
        th.linalg_solve_ex(S, th.ones(2, 1, dtype=th.complex128), check_errors=True)
    with pytest.raises(th.LinAlgError, match="singular"):
        th.linalg_inv_ex(S, check_errors=True)
    assert th.linalg_det(S).item() == 0
    sign, logabs = th.linalg_slogdet(S)
    assert sign.item() == 0 and logabs.item() == -np.inf
    with pytest.raises(RuntimeError, match="same dtype"):
        th.linalg_solve_ex(S, th.ones(2, 1), check_errors=True)
    with pytest.raises(RuntimeError, match="same dtype"):
        th.linalg_solve_ex(S, th.ones(2, 1, dtype=th.complex64))


@needs_lapack
@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 0, 3)])
def test_qr_svd_and_householder(rng, dtype, tol, shape):
    A = _c(rng, shape, dtype)
    tA = th.from_numpy(A)
    k = min(shape[-2:])
    for mode in ("reduced", "complete"):
        Q, R = th.linalg_qr(tA, mode)
        _close(Q.numpy() @ R.numpy(), A, tol)
        eye = np.eye(Q.shape[-1])
        _close(Q.numpy().conj().swapaxes(-1, -2) @ Q.numpy(), np.broadcast_to(eye, Q.shape[:-2]
                                                                               + eye.shape), tol)
    QR, tau = th.linalg_geqrf(tA)
    if shape[-2] >= shape[-1]:
        H = th.linalg_householder_product(QR, tau).numpy()
        _close(H, th.linalg_qr(tA, "reduced")[0].numpy(), tol)
    U, S, Vh = th.linalg_svd(tA, False)
    assert S.dtype == (th.float32 if dtype == np.complex64 else th.float64)
    _close(S.numpy(), np.linalg.svd(A, compute_uv=False), tol)
    _close((U.numpy() * S.numpy()[..., None, :]) @ Vh.numpy(), A, tol)
    U, S, Vh = th.linalg_svd(tA, True)
    assert U.shape[-1] == shape[-2] and Vh.shape[-2] == shape[-1] and S.shape[-1] == k
    _close(th.linalg_svd(tA, False, compute_uv=False)[1].numpy(), S.numpy(), tol)


@needs_lapack
@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
def test_hermitian_eigendecomposition(rng, dtype, tol, upper):
    M = _c(rng, (3, 6, 6), dtype)
    H = M @ M.conj().swapaxes(-1, -2)
    # only one triangle is read: the other holds garbage
    G = np.triu(H) + np.tril(_c(rng, (3, 6, 6), dtype), -1) if upper else \
        np.tril(H) + np.triu(_c(rng, (3, 6, 6), dtype), 1)
    W, V = th.linalg_eigh(th.from_numpy(G.astype(dtype)), "U" if upper else "L")
    assert W.dtype == (th.float32 if dtype == np.complex64 else th.float64)
    _close(W.numpy(), np.linalg.eigvalsh(H), tol * 10)
    _close(H @ V.numpy(), V.numpy() * W.numpy()[..., None, :], tol * 10)


@needs_lapack
@pytest.mark.parametrize("dtype,tol", DTYPES)
def test_general_eigendecomposition_and_least_squares(rng, dtype, tol):
    A = _c(rng, (3, 5, 5), dtype)
    W, V = th.linalg_eig(th.from_numpy(A))
    assert W.dtype == V.dtype == th.from_numpy(A).dtype
    _close(A @ V.numpy(), V.numpy() * W.numpy()[..., None, :], tol * 10)
    _close(np.linalg.norm(V.numpy(), axis=-2), np.ones((3, 5)), tol)
    _close(np.sort_complex(th.linalg_eig(th.from_numpy(A), compute_v=False)[0].numpy()),
           np.sort_complex(np.linalg.eigvals(A)), tol * 10)
    for shape in ((6, 4), (4, 6)):
        M, B = _c(rng, (2,) + shape, dtype), _c(rng, (2, shape[0], 3), dtype)
        X, rank, S = th.linalg_lstsq(th.from_numpy(M), th.from_numpy(B), -1)
        assert S.dtype == W.dtype.to_real() and rank.numpy().tolist() == [4, 4]
        want = np.stack([np.linalg.lstsq(M[i], B[i], rcond=None)[0] for i in range(2)])
        _close(X.numpy(), want, tol * 10)


@needs_lapack
@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("hermitian", [True, False])
def test_ldl_of_hermitian_and_complex_symmetric_matrices(rng, dtype, tol, hermitian):
    M = _c(rng, (2, 6, 6), dtype)
    A = M + (M.conj() if hermitian else M).swapaxes(-1, -2)
    B = _c(rng, (2, 6, 2), dtype)
    LD, piv, info = th.linalg_ldl_factor_ex(th.from_numpy(A), hermitian=hermitian)
    assert not info.numpy().any() and not np.triu(LD.numpy(), 1).any()
    X = th.linalg_ldl_solve(LD, piv, th.from_numpy(B), hermitian=hermitian)
    _close(A @ X.numpy(), B, tol * 10)


@pytest.mark.skipif(th.has_lapack(), reason="the TH_NO_BLAS build's refusal")
def test_no_blas_build_refuses_complex():
    a = th.from_numpy(np.eye(3, dtype=np.complex128))
    with pytest.raises(NotImplementedError, match="need LAPACK"):
        th.linalg_solve_ex(a, a)
    with pytest.raises(NotImplementedError, match="need LAPACK"):
        th.linalg_cholesky_ex(a)
    with pytest.raises(NotImplementedError, match="need LAPACK"):
        th.linalg_qr(a)
