"""ember.linalg.householder_product (ember.orgqr), matrix_exp and the
composed names (vander, vecdot, diagonal, matmul, tensorinv,
tensorsolve): values against NumPy references, gradcheck/gradgradcheck
(float64), PyTorch's errors."""
import numpy as np
import pytest

import ember
import ember.th
from ember import linalg as LA
from ember.autograd import gradcheck, gradgradcheck


@pytest.fixture
def rng(request):
    import zlib
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


def T(a, dtype=ember.float64, transposed=False, grad=False):
    if transposed:
        t = ember.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2)), dtype=dtype).mT
    else:
        t = ember.tensor(a, dtype=dtype)
    return t.detach().requires_grad_(grad)


def close(got, want, tol):
    got = got.detach().numpy()
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def ref_householder(a, tau):
    """H_0 ... H_{k-1} applied to the first n columns of I, per matrix."""
    out = np.zeros(a.shape)
    m, n = a.shape[-2:]
    for idx in np.ndindex(a.shape[:-2]):
        Q = np.eye(m)
        for i in range(tau.shape[-1]):
            v = np.concatenate([np.zeros(i), [1.0], a[idx][i + 1:, i]])
            Q = Q @ (np.eye(m) - tau[idx][i] * np.outer(v, v))
        out[idx] = Q[:, :n]
    return out


@pytest.mark.parametrize("dtype,tol", [(ember.float32, 1e-5), (ember.float64, 1e-12)])
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("shape,k", [((5, 3), 3), ((5, 3), 1), ((4, 4), 4), ((2, 6, 3), 2),
                                     ((1, 1), 1), ((3, 0), 0), ((0, 0), 0), ((2, 0, 0), 0),
                                     ((4, 2), 0)], ids=str)
def test_householder_product_values(rng, dtype, tol, transposed, shape, k):
    a = rng.standard_normal(shape)
    tau = rng.standard_normal(shape[:-2] + (k,))
    if dtype == ember.float32:
        a, tau = a.astype(np.float32).astype(np.float64), tau.astype(np.float32).astype(np.float64)
    want = ref_householder(a, tau)
    close(LA.householder_product(T(a, dtype, transposed), T(tau, dtype)), want, tol)
    close(ember.orgqr(T(a, dtype), T(tau, dtype)), want, tol)


def test_householder_product_of_geqrf_reflectors_is_q(rng):
    """QR's Q is the product of the reflectors LAPACK's geqrf leaves:
    rebuilding them from Q R by NumPy's own QR (mode 'raw')."""
    a = rng.standard_normal((6, 4))
    h, tau = np.linalg.qr(a, mode="raw")
    Q = LA.householder_product(T(h.T), T(tau))
    close(Q, np.linalg.qr(a)[0], 1e-12)


@pytest.mark.parametrize("shape,k", [((4, 3), 3), ((4, 3), 2), ((3, 3), 3), ((2, 4, 2), 2),
                                     ((4, 3), 1)], ids=str)
def test_householder_product_gradients(rng, shape, k):
    A = T(rng.standard_normal(shape), grad=True)
    tau = T(rng.standard_normal(shape[:-2] + (k,)), grad=True)
    assert gradcheck(LA.householder_product, [A, tau])
    assert gradgradcheck(LA.householder_product, [A, tau])


def test_householder_product_errors():
    f = LA.householder_product
    pre = "^torch.linalg.householder_product: "
    with pytest.raises(RuntimeError, match=pre + "input must have at least 2 dimensions.$"):
        f(ember.ones(3), ember.ones(1))
    with pytest.raises(RuntimeError, match=pre + r"input.shape\[-2\] must be greater than or "
                       r"equal to input.shape\[-1\]$"):
        f(ember.ones(3, 5), ember.ones(3))
    with pytest.raises(RuntimeError, match=pre + r"input.shape\[-1\] must be greater than or "
                       r"equal to tau.shape\[-1\]$"):
        f(ember.ones(5, 3), ember.ones(4))
    with pytest.raises(RuntimeError, match=pre + r"Expected batch dimensions of tau to be "
                       r"equal to input.shape\[:-2\], but got \[3\]$"):
        f(ember.ones(2, 5, 3), ember.ones(3, 3))
    with pytest.raises(RuntimeError, match=pre + "Expected tau to have one dimension less than "
                       "input, but got tau.ndim equal to 2 and input.ndim is equal to 2$"):
        f(ember.ones(5, 3), ember.ones(2, 3))
    with pytest.raises(RuntimeError, match=pre + "tau dtype Double does not match input dtype "
                       "Float$"):
        f(ember.ones(5, 3), ember.ones(3, dtype=ember.float64))
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as "
                       "input. Got Long"):
        f(ember.ones(5, 3, dtype=ember.int64), ember.ones(3, dtype=ember.int64))


# ---- matrix_exp ----------------------------------------------------------------
def ref_expm(a):
    """exp through the eigendecomposition (random matrices are diagonalisable)."""
    w, V = np.linalg.eig(a)
    return np.real(V @ (np.exp(w)[..., None] * np.linalg.inv(V)))


@pytest.mark.parametrize("dtype,tol", [(ember.float32, 2e-5), (ember.float64, 1e-11)])
@pytest.mark.parametrize("scale", [1e-3, 0.2, 1.0, 4.0, 20.0])
def test_matrix_exp_values(rng, dtype, tol, scale):
    a = rng.standard_normal((3, 4, 4)) * scale
    a[1] *= 1e-2  # matrices of one batch needing different scalings
    a = a.astype(np.float32).astype(np.float64) if dtype == ember.float32 else a
    want = ref_expm(a)
    got = LA.matrix_exp(T(a, dtype, transposed=True))
    np.testing.assert_allclose(got.numpy(), want, rtol=tol * 10, atol=tol * np.abs(want).max())
    close(ember.matrix_exp(T(a[0], dtype)), want[0], tol * np.abs(want).max() * 10)


def test_matrix_exp_special_cases():
    close(LA.matrix_exp(T(np.zeros((2, 0, 0)))), np.zeros((2, 0, 0)), 0)
    close(LA.matrix_exp(T([[2.0]])), [[np.exp(2.0)]], 1e-14)
    close(LA.matrix_exp(T(np.zeros((3, 3)))), np.eye(3), 0)
    # nilpotent: exp is a finite sum
    close(LA.matrix_exp(T([[0.0, 1.0], [0.0, 0.0]])), [[1.0, 1.0], [0.0, 1.0]], 1e-15)
    # rotation generator: exp is a rotation by 100 radians (heavy scaling)
    t = 100.0
    close(LA.matrix_exp(T([[0.0, -t], [t, 0.0]])),
          [[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]], 1e-10)
    assert np.isnan(LA.matrix_exp(T([[np.inf, 0.0], [0.0, 1.0]])).numpy()).all()


@pytest.mark.parametrize("shape,scale", [((3, 3), 0.5), ((2, 3, 3), 1.0), ((2, 2), 6.0)],
                         ids=str)
def test_matrix_exp_gradients(rng, shape, scale):
    A = T(rng.standard_normal(shape) * scale, grad=True)
    assert gradcheck(LA.matrix_exp, [A])
    assert gradgradcheck(LA.matrix_exp, [A])


def test_matrix_exp_errors():
    with pytest.raises(RuntimeError, match=r"^linalg.matrix_exp: A must be batches of square "
                       r"matrices, but they are 3 by 4 matrices$"):
        LA.matrix_exp(ember.ones(3, 4))
    with pytest.raises(RuntimeError, match=r"^linalg.matrix_exp: The input tensor A must have "
                       r"at least 2 dimensions.$"):
        LA.matrix_exp(ember.ones(3))
    with pytest.raises(RuntimeError, match=r"^linalg.matrix_exp: Expected a floating point or "
                       r"complex tensor as input. Got Long$"):
        LA.matrix_exp(ember.ones(3, 3, dtype=ember.int64))


# ---- composed names ------------------------------------------------------------
def test_vander_vecdot_diagonal_matmul(rng):
    x = rng.standard_normal((2, 3))
    close(LA.vander(T(x)), np.stack([np.vander(r, increasing=True) for r in x]), 1e-12)
    close(LA.vander(T(x), N=5), np.stack([np.vander(r, 5, increasing=True) for r in x]), 1e-12)
    assert LA.vander(ember.tensor([1, 2, 3]), N=3).tolist() == [[1, 1, 1], [1, 2, 4], [1, 3, 9]]
    with pytest.raises(RuntimeError, match="^N must be greater than 1.$"):
        LA.vander(T(x), N=1)
    y = rng.standard_normal((4, 1, 3))
    close(LA.vecdot(T(x), T(y)), (x * y).sum(-1), 1e-12)
    close(LA.vecdot(T(x), T(y), dim=0), (x * y).sum(0), 1e-12)
    with pytest.raises(RuntimeError, match="^linalg.vecdot: Expected x and y to have the same "
                       "dtype, but found x of type Float and y of type Double instead$"):
        LA.vecdot(ember.ones(3), ember.ones(3, dtype=ember.float64))
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as "
                       "input. Got Long"):
        LA.vecdot(ember.ones(3, dtype=ember.int64), ember.ones(3, dtype=ember.int64))
    a = rng.standard_normal((2, 3, 4))
    close(LA.diagonal(T(a), offset=1), np.diagonal(a, 1, -2, -1), 0)
    close(LA.matmul(T(a), T(a).mT), a @ np.swapaxes(a, -1, -2), 1e-12)
    X, Y = T(x, grad=True), T(rng.standard_normal((2, 3)), grad=True)
    assert gradcheck(lambda X, Y: (LA.vander(X), LA.vecdot(X, Y)), [X, Y])


def test_tensorinv_tensorsolve(rng):
    a = rng.standard_normal((4, 6, 8, 3)) + 0.0
    a = a.reshape(24, 24) + 24 * np.eye(24)
    a = a.reshape(4, 6, 8, 3)
    close(LA.tensorinv(T(a), ind=2), np.linalg.tensorinv(a, ind=2), 1e-12)
    b = rng.standard_normal((4, 6))
    close(LA.tensorsolve(T(a), T(b)), np.linalg.tensorsolve(a, b), 1e-12)
    a2 = np.moveaxis(a, 0, -1)  # (6, 8, 3, 4): dims=(0,) moves dim 0 (size 6) last
    close(LA.tensorsolve(T(a2), T(b.T.copy()).reshape(4, 6), dims=(0,)),
          np.linalg.tensorsolve(a2, b.T.copy().reshape(4, 6), axes=(0,)), 1e-12)
    with pytest.raises(RuntimeError, match=r"^Expected self to satisfy the requirement "
                       r"prod\(self.shape\[ind:\]\) == prod\(self.shape\[:ind\]\), but got "
                       r"16 != 24$"):
        LA.tensorinv(ember.ones(4, 6, 8, 2), ind=2)
    with pytest.raises(RuntimeError, match="^Expected a strictly positive integer for 'ind', "
                       "but got 0$"):
        LA.tensorinv(ember.ones(4, 4), ind=0)
    with pytest.raises(RuntimeError, match=r"but got 4 != 6$"):
        LA.tensorsolve(ember.ones(6, 4), ember.ones(6))
    A = T(rng.standard_normal((2, 3, 6)) + np.eye(6).reshape(2, 3, 6) * 6, grad=True)
    assert gradcheck(lambda A: LA.tensorinv(A, ind=2), [A])


def test_geqrf_and_orgqr_give_qr(rng):
    a = rng.standard_normal((2, 5, 3))
    h, tau = ember.geqrf(T(a, grad=True))
    assert h.shape == (2, 5, 3) and tau.shape == (2, 3)
    Q = ember.orgqr(h.detach(), tau.detach())
    close(Q @ h.detach().triu()[..., :3, :], a, 1e-12)
    with pytest.raises(RuntimeError, match="^derivative for geqrf is not implemented$"):
        h.sum().backward()  # as PyTorch: no derivative
    with pytest.raises(RuntimeError, match="^torch.geqrf: input must have at least 2 "
                       "dimensions.$"):
        ember.geqrf(ember.ones(3))


# ---- LDL ---------------------------------------------------------------------------
@pytest.mark.skipif(not ember.th.has_lapack(), reason="TH_NO_BLAS build: no LAPACK sytrf")
def test_ldl_front(rng):
    a = rng.standard_normal((2, 4, 4))
    a = a + np.swapaxes(a, -1, -2)
    b = rng.standard_normal((3, 1, 4, 2))
    LD, piv = LA.ldl_factor(T(a, transposed=True))
    close(LA.ldl_solve(LD, piv, T(b)), np.linalg.solve(a, b), 1e-10)
    close(LA.ldl_solve(LD, piv.long(), T(b), hermitian=True), np.linalg.solve(a, b), 1e-10)
    LD2, piv2, info = LA.ldl_factor_ex(T(a), hermitian=True)
    assert info.tolist() == [0, 0] and piv2.tolist() == piv.tolist()
    with pytest.raises(LA.LinAlgError, match="the input is singular: D"):
        LA.ldl_factor(ember.zeros(3, 3))
    A = T(a, grad=True)
    LD, piv = LA.ldl_factor(A)
    with pytest.raises(RuntimeError, match="^derivative for aten::linalg_ldl_factor_ex is not "
                       "implemented$"):
        LD.sum().backward()
    B = T(b, grad=True)
    with pytest.raises(RuntimeError, match="^derivative for aten::linalg_ldl_solve is not "
                       "implemented$"):
        LA.ldl_solve(LD.detach(), piv, B).sum().backward()
