"""The LU family of ember.linalg (lu_factor, lu_factor_ex, lu, lu_solve)
and the classic ember.lu, ember.lu_unpack, ember.lu_solve: factors and
pivots against a NumPy partial-pivoting reference, singular inputs,
non-contiguous, broadcast and empty inputs, gradcheck/gradgradcheck of
every differentiable output (float64), PyTorch's errors."""
import numpy as np
import pytest

import ember
from ember import linalg as LA
from ember.autograd import gradcheck, gradgradcheck


@pytest.fixture
def rng(request):
    import zlib
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


def ref_lu(a):
    """LAPACK's getrf on one matrix: packed LU and 1-based pivots."""
    a = np.array(a, dtype=np.float64)
    m, n = a.shape
    piv = []
    for j in range(min(m, n)):
        p = j + int(np.argmax(np.abs(a[j:, j])))
        piv.append(p + 1)
        a[[j, p]] = a[[p, j]]
        if a[j, j] != 0:
            a[j + 1:, j] /= a[j, j]
            a[j + 1:, j + 1:] -= np.outer(a[j + 1:, j], a[j, j + 1:])
    return a, np.array(piv, dtype=np.int32)


def ref_batch(a):
    k = min(a.shape[-2:])
    lu, piv = a.copy(), np.zeros(a.shape[:-2] + (k,), np.int32)
    for idx in np.ndindex(a.shape[:-2]):
        lu[idx], piv[idx] = ref_lu(a[idx])
    return lu, piv


def T(a, dtype=ember.float64, transposed=False, grad=False):
    if transposed:
        t = ember.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2)), dtype=dtype).mT
    else:
        t = ember.tensor(a, dtype=dtype)
    return t.detach().requires_grad_(grad)


@pytest.mark.parametrize("dtype,tol", [(ember.float32, 1e-4), (ember.float64, 1e-12)])
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("shape", [(3, 3), (5, 3), (3, 5), (2, 4, 4), (2, 1, 3, 2), (1, 1),
                                   (0, 0), (0, 3), (3, 0), (2, 0, 0)], ids=str)
def test_factors_against_reference(rng, dtype, tol, transposed, shape):
    a = rng.standard_normal(shape)
    a = a.astype(np.float32).astype(np.float64) if dtype == ember.float32 else a
    want_lu, want_piv = ref_batch(a)
    A = T(a, dtype, transposed)
    LU, piv, info = LA.lu_factor_ex(A)
    assert piv.dtype == ember.int32 and info.dtype == ember.int32
    np.testing.assert_allclose(LU.numpy(), want_lu, rtol=tol, atol=tol)
    np.testing.assert_array_equal(piv.numpy(), want_piv)
    assert info.shape == shape[:-2] and not info.numpy().any()
    P, L, U = LA.lu(A)
    m, n = shape[-2:]
    k = min(m, n)
    assert P.shape == shape[:-2] + (m, m) and L.shape == shape[:-2] + (m, k)
    assert U.shape == shape[:-2] + (k, n)
    np.testing.assert_allclose((P @ L @ U).numpy(), a, rtol=10 * tol, atol=10 * tol)
    p = P.numpy()
    assert set(np.unique(p)) <= {0.0, 1.0} and np.all(p.sum(-1) == 1) and np.all(p.sum(-2) == 1)
    np.testing.assert_array_equal(L.numpy(), np.tril(L.numpy()))
    np.testing.assert_array_equal(np.diagonal(L.numpy(), 0, -2, -1), 1)
    np.testing.assert_array_equal(U.numpy(), np.triu(U.numpy()))
    for got, want in zip(ember.lu_unpack(LU, piv), (P, L, U)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    LU2, piv2 = ember.lu(A)
    np.testing.assert_array_equal(LU2.numpy(), LU.numpy())
    np.testing.assert_array_equal(A.lu()[1].numpy(), piv.numpy())


def test_lu_unpack_parts():
    A = ember.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 10.0]])
    LU, piv = LA.lu_factor(A)
    P, L, U = ember.lu_unpack(LU, piv, unpack_data=False)
    assert L.shape == (0,) and U.shape == (0,) and P.shape == (3, 3)
    P, L, U = ember.lu_unpack(LU, piv, unpack_pivots=False)
    assert P.shape == (0,) and L.shape == (3, 3)
    # row 3 (largest first entry) leads: P's first column is e_3
    np.testing.assert_array_equal(ember.lu_unpack(LU, piv).P.numpy()[:, 0], [0, 0, 1])


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_lu_solve_broadcast_and_options(rng, dtype):
    a = rng.standard_normal((2, 1, 3, 3)) + 3 * np.eye(3)
    b = rng.standard_normal((4, 3, 2))
    LU, piv = LA.lu_factor(T(a, dtype))
    tol = 1e-4 if dtype == ember.float32 else 1e-10
    want = np.linalg.solve(a, b)
    np.testing.assert_allclose(LA.lu_solve(LU, piv, T(b, dtype)).numpy(), want, rtol=tol, atol=tol)
    at = np.swapaxes(a, -1, -2)
    np.testing.assert_allclose(LA.lu_solve(LU, piv, T(b, dtype), adjoint=True).numpy(),
                               np.linalg.solve(at, b), rtol=tol, atol=tol)
    bt = np.swapaxes(b, -1, -2)  # X A = B^T
    np.testing.assert_allclose(LA.lu_solve(LU, piv, T(bt, dtype), left=False).numpy(),
                               np.swapaxes(np.linalg.solve(at, b), -1, -2), rtol=tol, atol=tol)
    np.testing.assert_allclose(ember.lu_solve(T(b, dtype), LU, piv).numpy(), want,
                               rtol=tol, atol=tol)
    E = LA.lu_solve(*LA.lu_factor(ember.zeros(0, 0, dtype=dtype)), ember.zeros(0, 2, dtype=dtype))
    assert E.shape == (0, 2)


def test_singular_matrices():
    S = ember.tensor([[1.0, 2.0], [2.0, 4.0]])
    LU, piv, info = LA.lu_factor_ex(S)
    assert int(info) == 2 and piv.tolist() == [2, 2]
    np.testing.assert_allclose(LU.numpy(), [[2.0, 4.0], [0.5, 0.0]])
    with pytest.raises(LA.LinAlgError, match=r"^torch.linalg.lu_factor: \(Batch element 1\): "
                       r"U\[2,2\] is zero and using it on lu_solve would result in a division "
                       r"by zero."):
        LA.lu_factor(ember.stack([ember.eye(2), S]))
    with pytest.raises(LA.LinAlgError, match=r"U\[2,2\] is zero"):
        LA.lu_factor_ex(S, check_errors=True)
    P, L, U = LA.lu(S)  # no error, as PyTorch
    np.testing.assert_allclose((P @ L @ U).numpy(), S.numpy())
    LU, piv, info = ember.lu(ember.zeros(2, 2), get_infos=True)
    assert int(info) == 1 and piv.tolist() == [1, 2]
    ember.lu(ember.zeros(2, 2))  # no error without get_infos either


def test_errors():
    with pytest.raises(RuntimeError, match=r"^linalg.lu: Expected tensor with 2 or more "
                       r"dimensions. Got size: \[3\] instead$"):
        LA.lu(ember.ones(3))
    with pytest.raises(RuntimeError, match=r"^torch.lu_factor: Expected tensor with 2 or more "
                       r"dimensions"):
        LA.lu_factor(ember.ones(3))
    with pytest.raises(RuntimeError, match="LU without pivoting is not implemented on the CPU"):
        LA.lu(ember.eye(2), pivot=False)
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as "
                       "input. Got Int"):
        LA.lu_factor(ember.ones(2, 2, dtype=ember.int32))
    LU, piv = LA.lu_factor(ember.eye(3))
    with pytest.raises(RuntimeError, match=r"^torch.lu_unpack: LU_pivots is expected to be a "
                       r"contiguous tensor of torch.int32 dtype."):
        ember.lu_unpack(LU, piv.long())
    with pytest.raises(RuntimeError, match=r"^pivots passed to lu_unpack must be between 1 and "
                       r"LU.size\(-2\) inclusive."):
        ember.lu_unpack(LU, ember.tensor([5, 1, 1], dtype=ember.int32))
    with pytest.raises(RuntimeError, match="LU must be batches of square matrices, but they "
                       "are 3 by 4 matrices"):
        LA.lu_solve(ember.zeros(3, 4), piv, ember.ones(3, 1))
    with pytest.raises(RuntimeError, match=r"Incompatible shapes of A and B for the equation "
                       r"AX = B \(3x3 and 4x2\)"):
        LA.lu_solve(LU, piv, ember.ones(4, 2))
    with pytest.raises(RuntimeError, match="Expected A and B to have the same dtype"):
        LA.lu_solve(LU, piv, ember.ones(3, 2, dtype=ember.float64))
    with pytest.raises(RuntimeError, match="pivots must be between 1 and 3, but got 0"):
        LA.lu_solve(LU, piv * 0, ember.ones(3, 2))
    B = ember.ones(3, 2)
    LA.lu_solve(LU, piv, B)
    assert B.tolist() == [[1.0, 1.0]] * 3  # inputs untouched


# ---- gradients (float64) ----------------------------------------------------
def _wc(rng, shape):
    a = rng.standard_normal(shape)
    if shape[-1] == shape[-2]:
        a = a + shape[-1] * np.eye(shape[-1])
    return a


LU_SHAPES = [(3, 3), (2, 4, 4), (5, 3), (3, 5), (2, 4, 2), (2, 2, 4)]


@pytest.mark.parametrize("shape", LU_SHAPES, ids=str)
@pytest.mark.parametrize("transposed", [False, True])
def test_lu_gradients(rng, shape, transposed):
    A = T(_wc(rng, shape), transposed=transposed, grad=True)
    assert gradcheck(lambda A: LA.lu(A), [A])
    assert gradgradcheck(lambda A: LA.lu(A)[1:], [A])
    assert gradcheck(lambda A: LA.lu_factor(A).LU, [A])
    assert gradgradcheck(lambda A: LA.lu_factor_ex(A).LU, [A])
    assert gradcheck(lambda A: ember.lu_unpack(*ember.lu(A))[1:], [A])


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve_gradients(rng, left, adjoint):
    A = T(_wc(rng, (2, 1, 3, 3)), grad=True)
    B = T(rng.standard_normal((4, 3, 2) if left else (4, 2, 3)), grad=True)

    def f(A, B):
        return LA.lu_solve(*LA.lu_factor(A), B, left=left, adjoint=adjoint)
    assert gradcheck(f, [A, B])
    assert gradgradcheck(f, [A, B])
    LU = LA.lu_factor(A.detach())[0].requires_grad_()
    piv = LA.lu_factor(A.detach())[1]
    assert gradcheck(lambda LU, B: LA.lu_solve(LU, piv, B, left=left, adjoint=adjoint), [LU, B])
