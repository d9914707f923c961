"""libTH's LAPACK routines (th_linalg_*) through ember.th, against NumPy's
linalg on fresh random data: batches, empty matrices, 1x1, non-contiguous
inputs, float32/float64; PyTorch's errors; the TH_NO_BLAS subset."""
import numpy as np
import pytest

import ember.th as th

DTYPES = {"float32": (np.float32, 2e-4), "float64": (np.float64, 1e-10)}
# up to order 16 the LAPACK build uses libTH's portable LU/Cholesky/triangular
# kernels (as the TH_NO_BLAS build does for every size): the 20x20 shapes
# reach LAPACK itself
SQUARE_SHAPES = [(1, 1), (4, 4), (3, 5, 5), (2, 3, 3, 3), (0, 0), (2, 0, 0), (0, 3, 3),
                 (2, 20, 20)]
RECT_SHAPES = [(5, 3), (3, 5), (2, 4, 2), (2, 2, 4), (1, 1), (0, 3), (3, 0), (2, 0, 4),
               (20, 18), (18, 20)]
LAPACK = th.has_lapack()
needs_lapack = pytest.mark.skipif(not LAPACK, reason="TH_NO_BLAS build: no LAPACK")


def tensor(a, layout):
    """a as an ember.th tensor, contiguous or as a transposed view."""
    if layout == "transposed" and a.ndim >= 2:
        return th.from_numpy(np.ascontiguousarray(np.swapaxes(a, -1, -2))).transpose(-1, -2)
    return th.from_numpy(np.ascontiguousarray(a))


def well_conditioned(rng, shape, dt):
    a = rng.standard_normal(shape)
    if shape[-1]:
        a = a + shape[-1] * np.eye(shape[-1])
    return a.astype(dt)


def spd(rng, shape, dt):
    a = rng.standard_normal(shape)
    return (a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dt)


def close(got, want, tol):
    got = got.numpy() if isinstance(got, th.Tensor) else got
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=tol * 10, atol=tol * 10)


@pytest.fixture(params=list(DTYPES))
def dtype(request):
    return DTYPES[request.param]


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("shape", SQUARE_SHAPES, ids=str)
class TestSquare:
    def test_solve_inv_det(self, rng, dtype, layout, shape):
        dt, tol = dtype
        a = well_conditioned(rng, shape, dt)
        b = rng.standard_normal(shape[:-1] + (2,)).astype(dt)
        A = tensor(a, layout)
        x, info = th.linalg_solve_ex(A, tensor(b, layout))
        close(x, np.linalg.solve(a.astype(np.float64), b), tol)
        assert info.numpy().shape == shape[:-2] and not info.numpy().any()
        inv, info = th.linalg_inv_ex(A)
        close(inv, np.linalg.inv(a.astype(np.float64)), tol)
        close(th.linalg_det(A), np.linalg.det(a.astype(np.float64)).astype(dt), tol * 100)
        sign, logabs = th.linalg_slogdet(A)
        ws, wl = np.linalg.slogdet(a.astype(np.float64))
        close(sign, ws.astype(dt), tol)
        close(logabs, wl.astype(dt), tol)
        assert np.array_equal(a, a)  # inputs are left alone
        close(A, a, 0)

    def test_lu(self, rng, dtype, layout, shape):
        dt, tol = dtype
        a = well_conditioned(rng, shape, dt)
        b = rng.standard_normal(shape[:-1] + (3,)).astype(dt)
        LU, piv, info = th.linalg_lu_factor_ex(tensor(a, layout))
        assert piv.dtype == th.int32 and piv.shape == shape[:-1]
        close(th.linalg_lu_solve(LU, piv, tensor(b, layout)),
              np.linalg.solve(a.astype(np.float64), b), tol)
        at = np.swapaxes(a, -1, -2).astype(np.float64)
        close(th.linalg_lu_solve(LU, piv, tensor(b, layout), adjoint=True),
              np.linalg.solve(at, b), tol)

    def test_cholesky(self, rng, dtype, layout, shape):
        dt, tol = dtype
        a = spd(rng, shape, dt)
        L, info = th.linalg_cholesky_ex(tensor(a, layout))
        want = np.linalg.cholesky(a.astype(np.float64))
        close(L, want, tol)
        U, _ = th.linalg_cholesky_ex(tensor(a, layout), upper=True)
        close(U, np.swapaxes(want, -1, -2), tol)
        b = rng.standard_normal(shape[:-1] + (2,)).astype(dt)
        Lt = th.from_numpy(want.astype(dt))
        x = th.linalg_solve_triangular(Lt, tensor(b, layout), upper=False)
        close(x, np.linalg.solve(want, b), tol)
        x = th.linalg_solve_triangular(Lt, tensor(b, layout), upper=False, transpose=True)
        close(x, np.linalg.solve(np.swapaxes(want, -1, -2), b), tol)

    @needs_lapack
    def test_eigh(self, rng, dtype, layout, shape):
        dt, tol = dtype
        a = spd(rng, shape, dt)
        w, v = th.linalg_eigh(tensor(a, layout))
        close(w, np.linalg.eigvalsh(a.astype(np.float64)), tol * 10)
        vn, wn = v.numpy().astype(np.float64), w.numpy().astype(np.float64)
        close(vn @ (wn[..., :, None] * np.swapaxes(vn, -1, -2)), a.astype(np.float64), tol * 10)
        wu, _ = th.linalg_eigh(tensor(a, layout), "U", compute_v=False)
        close(wu, np.linalg.eigvalsh(a.astype(np.float64), "U"), tol * 10)


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("shape", RECT_SHAPES, ids=str)
class TestRectangular:
    @pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
    def test_qr(self, rng, dtype, layout, shape, mode):
        dt, tol = dtype
        a = rng.standard_normal(shape).astype(dt)
        Q, R = th.linalg_qr(tensor(a, layout), mode)
        wq, wr = np.linalg.qr(a.astype(np.float64), "complete" if mode == "complete" else "reduced")
        close(np.abs(R.numpy()), np.abs(wr), tol)  # the signs are LAPACK's choice
        if mode == "r":
            assert Q.shape == (0,)
            return
        assert Q.shape == wq.shape
        close(Q.numpy().astype(np.float64) @ R.numpy(), a.astype(np.float64), tol)
        k = Q.shape[-1]
        close(np.swapaxes(Q.numpy(), -1, -2) @ Q.numpy(), np.broadcast_to(np.eye(k), shape[:-2] + (k, k)), tol)

    @needs_lapack
    @pytest.mark.parametrize("full", [False, True])
    def test_svd(self, rng, dtype, layout, shape, full):
        dt, tol = dtype
        a = rng.standard_normal(shape).astype(dt)
        U, S, Vh = th.linalg_svd(tensor(a, layout), full)
        wu, ws, wvh = np.linalg.svd(a.astype(np.float64), full_matrices=full)
        close(S, ws, tol)
        assert U.shape == wu.shape and Vh.shape == wvh.shape
        k = S.shape[-1]
        rec = (U.numpy()[..., :, :k] * S.numpy()[..., None, :]) @ Vh.numpy()[..., :k, :]
        close(rec, a, tol)
        _, S2, _ = th.linalg_svd(tensor(a, layout), full, compute_uv=False)
        close(S2, ws, tol)

    @needs_lapack
    def test_lstsq(self, rng, dtype, layout, shape):
        dt, tol = dtype
        a = rng.standard_normal(shape).astype(dt)
        b = rng.standard_normal(shape[:-1] + (2,)).astype(dt)
        X, rank, S = th.linalg_lstsq(tensor(a, layout), tensor(b, layout))
        want = np.linalg.pinv(a.astype(np.float64)) @ b
        close(X, want, tol * 10)
        assert rank.dtype == th.int64
        assert (rank.numpy() == np.linalg.matrix_rank(a) if a.size else rank.numpy() == 0).all()
        close(S, np.linalg.svd(a.astype(np.float64), compute_uv=False), tol)


def test_broadcast_batches(rng):
    a = well_conditioned(rng, (2, 1, 3, 3), np.float64)
    b = rng.standard_normal((4, 3, 2))
    x, _ = th.linalg_solve_ex(th.from_numpy(a), th.from_numpy(b))
    close(x, np.linalg.solve(a, b), 1e-10)
    with pytest.raises(RuntimeError, match="must match the size"):
        th.linalg_solve_ex(th.from_numpy(a), th.from_numpy(rng.standard_normal((3, 3, 3, 2))))


def test_singular_and_info():
    z = th.zeros(3, 2, 2, dtype=th.float64)
    x, info = th.linalg_inv_ex(z)
    assert info.tolist() == [1, 1, 1]
    with pytest.raises(th.LinAlgError, match=r"^linalg.inv: \(Batch element 0\): The diagonal "
                       r"element 1 is zero, the inversion could not be completed because the "
                       r"input matrix is singular.$"):
        th.linalg_inv_ex(z, check_errors=True)
    with pytest.raises(th.LinAlgError, match=r"^torch.linalg.solve: The solver failed because "
                       r"the input matrix is singular.$"):
        th.linalg_solve_ex(th.zeros(2, 2), th.ones(2, 1), check_errors=True)
    a = th.tensor([[1.0, 2.0], [2.0, 1.0]])
    _, info = th.linalg_cholesky_ex(a)
    assert int(info) == 2
    with pytest.raises(th.LinAlgError, match=r"^linalg.cholesky: The factorization could not be "
                       r"completed because the input is not positive-definite \(the leading minor "
                       r"of order 2 is not positive-definite\).$"):
        th.linalg_cholesky_ex(a, check_errors=True)
    assert float(th.linalg_det(th.zeros(3, 3))) == 0
    sign, logabs = th.linalg_slogdet(th.zeros(3, 3))
    assert float(sign) == 0 and float(logabs) == -np.inf


@pytest.mark.parametrize("fn", ["linalg_inv_ex", "linalg_det", "linalg_cholesky_ex"])
def test_shape_and_dtype_errors(fn):
    f = getattr(th, fn)
    name = fn[7:].replace("_ex", "")
    with pytest.raises(RuntimeError, match=rf"^linalg.{name}: A must be batches of square "
                       r"matrices, but they are 3 by 4 matrices$"):
        f(th.zeros(3, 4))
    with pytest.raises(RuntimeError, match=rf"^linalg.{name}: The input tensor A must have at "
                       r"least 2 dimensions.$"):
        f(th.zeros(3))
    with pytest.raises(RuntimeError, match=rf"^linalg.{name}: Expected a floating point or "
                       r"complex tensor as input. Got Long$"):
        f(th.zeros(3, 3, dtype=th.int64))
    with pytest.raises(RuntimeError, match=rf"^linalg.{name}: Low precision dtypes not "
                       r"supported. Got Half$"):
        f(th.zeros(3, 3, dtype=th.float16))


def test_pair_errors():
    with pytest.raises(RuntimeError, match=r"^linalg.solve: Incompatible shapes of A and B for "
                       r"the equation AX = B \(3x3 and 4x1\)$"):
        th.linalg_solve_ex(th.ones(3, 3), th.ones(4, 1))
    with pytest.raises(RuntimeError, match=r"^linalg.solve: Expected A and B to have the same "
                       r"dtype, but found A of type Float and B of type Double instead$"):
        th.linalg_solve_ex(th.ones(3, 3), th.ones(3, 1, dtype=th.float64))
    LU, piv, _ = th.linalg_lu_factor_ex(th.eye(3))
    piv[1] = 7  # a bad pivot is an error, not an access outside the matrix
    with pytest.raises(RuntimeError, match="pivots must be between 1 and 3, but got 7"):
        th.linalg_lu_solve(LU, piv, th.ones(3, 1))
    with pytest.raises(RuntimeError, match="qr received unrecognized mode 'x'"):
        th.linalg_qr(th.ones(3, 3), "x")


@needs_lapack
def test_nonfinite_inputs():
    nan = th.full((3, 3), float("nan"))
    with pytest.raises(th.LinAlgError, match=r"^linalg.svd: The algorithm failed to converge "
                       r"because the input matrix contained non-finite values.$"):
        th.linalg_svd(nan)
    with pytest.raises(th.LinAlgError, match="linalg.eigh: The algorithm failed to converge"):
        th.linalg_eigh(nan)


def test_large_batch_threads(rng):
    """Many small matrices run over the thread pool: same as one by one."""
    a = well_conditioned(rng, (300, 4, 4), np.float64)
    inv, _ = th.linalg_inv_ex(th.from_numpy(a))
    close(inv, np.linalg.inv(a), 1e-10)
    # the order-4 kernel spreads batches above 8192 matrices
    a = well_conditioned(rng, (20000, 4, 4), np.float64)
    a[4321] = 0
    old = th.get_num_threads()
    try:
        th.set_num_threads(2)
        inv, info = th.linalg_inv_ex(th.from_numpy(a))
    finally:
        th.set_num_threads(old)
    assert np.flatnonzero(info.numpy()).tolist() == [4321]
    keep = np.arange(20000) != 4321
    close(inv.numpy()[keep], np.linalg.inv(a[keep]), 1e-10)


@pytest.mark.skipif(LAPACK, reason="checks the TH_NO_BLAS build")
@pytest.mark.parametrize("fn,args", [("linalg_svd", (th.ones(2, 2),)),
                                     ("linalg_eigh", (th.ones(2, 2),)),
                                     ("linalg_eig", (th.ones(2, 2),)),
                                     ("linalg_lstsq", (th.ones(2, 2), th.ones(2, 1)))])
def test_no_blas_reports_missing_routines(fn, args):
    name = fn[7:]
    with pytest.raises(NotImplementedError, match=rf"^linalg.{name}: not available in this "
                       r"build of libTH \(TH_NO_BLAS=1"):
        getattr(th, fn)(*args)


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("shape,k", [((5, 3), 3), ((5, 3), 1), ((2, 4, 4), 4), ((3, 0), 0),
                                     ((0, 0), 0), ((20, 18), 18), ((4, 2), 0)], ids=str)
def test_householder_product(rng, dtype, layout, shape, k):
    """orgqr (portable in the TH_NO_BLAS build) against the product of
    the reflectors, and QR's Q from NumPy's raw geqrf output."""
    dt, tol = dtype
    a = rng.standard_normal(shape).astype(dt)
    tau = (rng.standard_normal(shape[:-2] + (k,)) * 0.3).astype(dt)
    m, n = shape[-2:]
    want = np.zeros(shape)
    for idx in np.ndindex(shape[:-2]):
        q = np.eye(m)
        for i in range(k):
            v = np.concatenate([np.zeros(i), [1.0], a[idx][i + 1:, i]])
            q = q @ (np.eye(m) - tau[idx][i] * np.outer(v, v))
        want[idx] = q[:, :n]
    Q = th.linalg_householder_product(tensor(a, layout), tensor(tau, "contiguous"))
    assert Q.stride()[-2:] == (1, max(m, 1))  # column-major, as PyTorch's
    close(Q, want, tol)
    g = rng.standard_normal((6, 4))
    h, t = np.linalg.qr(g, mode="raw")  # geqrf's reflectors (transposed) and scales
    close(th.linalg_householder_product(th.from_numpy(h.T.copy()), th.from_numpy(t)),
          np.linalg.qr(g)[0], 1e-10)


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (2, 0, 3), (1, 1), (20, 18)],
                         ids=str)
def test_geqrf(rng, dtype, layout, shape):
    """R above the diagonal as QR's (up to signs), and the reflectors give
    back A through householder_product."""
    dt, tol = dtype
    a = rng.standard_normal(shape).astype(dt)
    QR, tau = th.linalg_geqrf(tensor(a, layout))
    m, n = shape[-2:]
    k = min(m, n)
    assert QR.shape == shape and tau.shape == shape[:-2] + (k,)
    qr = QR.numpy().astype(np.float64)
    R = np.triu(qr[..., :k, :])
    np.testing.assert_allclose(np.abs(R), np.abs(np.linalg.qr(a.astype(np.float64))[1]),
                               rtol=tol * 10, atol=tol * 10)
    if k:
        Q = th.linalg_householder_product(QR.narrow(-1, 0, k).contiguous() if n > k else QR,
                                          tau).numpy()
        close(Q @ R, a.astype(np.float64), tol)
    with pytest.raises(RuntimeError, match="^torch.geqrf: input must have at least 2 dimensions.$"):
        th.linalg_geqrf(th.ones(3))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_small_inverses(rng, dtype, n):
    """Orders 1-4 take the register kernel (5 the general path): values,
    pivoting through zero diagonals, strided and expanded batches, and
    info equal to LU's first zero pivot."""
    dt, tol = dtype
    a = well_conditioned(rng, (3, 7, n, n), dt)
    a[0, 0] = np.eye(n)[::-1]  # anti-diagonal: every pivot needs a row swap
    A = th.from_numpy(a)
    X, info = th.linalg_inv_ex(A)
    close(X, np.linalg.inv(a.astype(np.float64)), tol)
    assert X.stride()[-2:] == (1, n) and not info.numpy().any()
    # a non-contiguous batch (every other matrix, transposed)
    V = A.transpose(-1, -2)[:, ::2]
    close(th.linalg_inv_ex(V)[0], np.linalg.inv(np.swapaxes(a, -1, -2)[:, ::2].astype(np.float64)),
          tol)
    E = th.from_numpy(a[0, 1]).expand(4, n, n)  # a batch stride of 0
    close(th.linalg_inv_ex(E)[0], np.broadcast_to(np.linalg.inv(a[0, 1].astype(np.float64)),
                                                  (4, n, n)), tol)
    s = a[:1, :3].copy()
    s[0, 1, :, -1] = 0  # last column zero: LU stops at pivot n
    s[0, 2] = 0         # zero matrix: first pivot
    _, info = th.linalg_inv_ex(th.from_numpy(s))
    lu_info = th.linalg_lu_factor_ex(th.from_numpy(s)).info
    assert info.tolist() == [[0, n, 1]] == lu_info.tolist()
    with pytest.raises(th.LinAlgError, match=rf"^linalg.inv: \(Batch element 1\): The diagonal "
                       rf"element {n} is zero"):
        th.linalg_inv_ex(th.from_numpy(s), check_errors=True)
    X, info = th.linalg_inv_ex(th.zeros(0, n, n, dtype=th.float64))
    assert X.shape == (0, n, n) and info.shape == (0,)
    # near-singular (rows nearly parallel: pivoted Gauss-Jordan rather than
    # the closed form) and badly scaled (a determinant beyond float32's range)
    if n > 1:
        near = well_conditioned(rng, (n, n), np.float64)
        near[-1] = near[0] + 1e-3 * near[-1]
        big = well_conditioned(rng, (n, n), np.float64) * 1e12
        hard = np.stack([near, big]).astype(dt)
        want = np.linalg.inv(hard.astype(np.float64))
        got = th.linalg_inv_ex(th.from_numpy(hard))[0].numpy()
        for g, w, h in zip(got, want, hard.astype(np.float64)):
            err = np.abs(g - w).max() / np.abs(w).max()
            assert err < 50 * np.linalg.cond(h) * np.finfo(dt).eps, err


@needs_lapack
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("shape", [(3, 3), (2, 5, 5), (1, 1), (0, 0), (2, 0, 0), (20, 20)],
                         ids=str)
def test_ldl(rng, dtype, layout, shape):
    """Symmetric indefinite matrices: LD's upper triangle is zero, the
    pivots are sytrf's, and solving from the factors solves A X = B."""
    dt, tol = dtype
    a = rng.standard_normal(shape)
    a = (a + np.swapaxes(a, -1, -2)).astype(dt)
    n = shape[-1]
    if n >= 2:  # a zero diagonal in the first matrix: 2x2 pivots
        a.reshape(-1, n, n)[0][np.diag_indices(n)] = 0
    LD, piv, info = th.linalg_ldl_factor_ex(tensor(a, layout))
    assert LD.shape == shape and piv.shape == shape[:-1] and info.shape == shape[:-2]
    assert piv.dtype == th.int32 and not info.numpy().any()
    ld = LD.numpy()
    np.testing.assert_array_equal(np.triu(ld, 1), 0)
    p = piv.numpy()
    assert ((np.abs(p) >= 1) & (np.abs(p) <= n)).all()
    b = rng.standard_normal(shape[:-1] + (2,)).astype(dt)
    x = th.linalg_ldl_solve(LD, piv, tensor(b, layout))
    cond = np.linalg.cond(a.astype(np.float64)).max() if a.size else 1
    close(x, np.linalg.solve(a.astype(np.float64), b) if a.size else b, tol * max(cond, 1))


@needs_lapack
def test_ldl_known_case_and_errors():
    a = th.tensor([[0.0, 1.0, 2.0], [1.0, 0.0, 3.0], [2.0, 3.0, 1.0]], dtype=th.float64)
    LD, piv, info = th.linalg_ldl_factor_ex(a)
    # a 2x2 block (rows 1 and 3 swapped), then a 1x1 block
    close(LD, [[0, 0, 0], [2, 1, 0], [1.25, 0.5, -2.75]], 1e-15)
    assert piv.tolist() == [-3, -3, 3] and int(info) == 0
    _, _, info = th.linalg_ldl_factor_ex(th.zeros(2, 2, 2))
    assert info.tolist() == [1, 1]
    with pytest.raises(th.LinAlgError, match=r"^torch.linalg.ldl_factor: \(Batch element 0\): "
                       r"The factorization could not be completed because the input is "
                       r"singular: D\[1,1\] is zero."):
        th.linalg_ldl_factor_ex(th.zeros(2, 2, 2), check_errors=True)
    with pytest.raises(RuntimeError, match=r"^torch.linalg.ldl_factor_ex: A must be batches of "
                       r"square matrices, but they are 2 by 3 matrices$"):
        th.linalg_ldl_factor_ex(th.zeros(2, 3))
    b = th.ones(3, 1, dtype=th.float64)
    with pytest.raises(RuntimeError, match=r"^Incompatible matrix sizes for "
                       r"torch.linalg.ldl_solve: each A matrix is 3 by 3 but each b matrix is "
                       r"4 by 1$"):
        th.linalg_ldl_solve(LD, piv, th.ones(4, 1, dtype=th.float64))
    for bad in ([4, 1, 1], [-1, 1, 1], [1, 2, -3], [0, 1, 1]):
        with pytest.raises(RuntimeError, match="invalid pivots"):
            th.linalg_ldl_solve(LD, th.tensor(bad, dtype=th.int32), b)
    with pytest.raises(RuntimeError, match="Expected pivots to be int32, but got Long"):
        th.linalg_ldl_solve(LD, th.tensor([1, 2, 3]), b)


@pytest.mark.skipif(LAPACK, reason="checks the TH_NO_BLAS build")
def test_no_blas_ldl():
    with pytest.raises(NotImplementedError, match=r"^linalg.ldl_factor: not available in this "
                       r"build of libTH \(TH_NO_BLAS=1"):
        th.linalg_ldl_factor_ex(th.eye(2))
    with pytest.raises(NotImplementedError, match=r"^linalg.ldl_solve: not available"):
        th.linalg_ldl_solve(th.eye(2), th.tensor([1, 2], dtype=th.int32), th.ones(2, 1))
