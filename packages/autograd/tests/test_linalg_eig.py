"""ember.linalg.eig / eigvals (general real matrices, complex results)
against NumPy, their errors, and their gradients (gradcheck/gradgradcheck
in float64, for losses that do not depend on each eigenvector's phase, as
PyTorch requires)."""
import numpy as np
import pytest

import ember
import ember.linalg as LA
from ember.autograd import gradcheck, gradgradcheck


@pytest.fixture
def rng():
    return np.random.default_rng(17)


def _check_decomposition(a, w, v, tol):
    a = a.astype(np.complex128)
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=tol)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, atol=tol)
    want = np.linalg.eigvals(a).reshape(-1, w.shape[-1])
    for got_row, want_row in zip(w.reshape(-1, w.shape[-1]), want):
        # the same multiset: each eigenvalue's nearest counterpart (the order of
        # nearly equal real parts differs between runs of LAPACK)
        assert np.abs(got_row[:, None] - want_row[None, :]).min(1).max() <= 10 * tol


@pytest.mark.parametrize("shape", [(5, 5), (3, 4, 4), (2, 1, 3, 3), (1, 1), (0, 0), (2, 0, 0)])
@pytest.mark.parametrize("dtype,tol", [(ember.float64, 1e-10), (ember.float32, 1e-4)])
def test_against_numpy(rng, shape, dtype, tol):
    a = rng.standard_normal(shape)
    w, v = LA.eig(ember.tensor(a, dtype=dtype))
    assert w.dtype == dtype.to_complex() and v.dtype == dtype.to_complex()
    assert w.shape == shape[:-1] and v.shape == shape
    if a.size:
        _check_decomposition(a, w.numpy(), v.numpy(), tol)
    np.testing.assert_array_equal(LA.eigvals(ember.tensor(a, dtype=dtype)).numpy(), w.numpy())


def test_conjugate_pairs_and_non_contiguous_input(rng):
    rot = np.array([[0.0, -2.0], [2.0, 0.0]])       # eigenvalues +-2i
    w, v = LA.eig(ember.tensor(rot))
    np.testing.assert_allclose(np.sort_complex(w.numpy()), [-2j, 2j], atol=1e-12)
    np.testing.assert_allclose(v.numpy()[:, 1], v.numpy()[:, 0].conj(), atol=1e-12)
    a = rng.standard_normal((6, 6))
    t = ember.tensor(a).t()                            # a transposed view
    w, v = LA.eig(t)
    _check_decomposition(a.T, w.numpy(), v.numpy(), 1e-10)


def test_errors():
    with pytest.raises(RuntimeError, match="must be batches of square matrices"):
        LA.eig(ember.ones(2, 3))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        LA.eigvals(ember.ones(3))
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as "
                                           "input. Got Long"):
        LA.eig(ember.ones(2, 2, dtype=ember.int64))
    with pytest.raises(LA.LinAlgError, match="non-finite values"):
        LA.eig(ember.tensor([[float("nan"), 1.0], [0.0, 1.0]]))
    with pytest.raises(LA.LinAlgError, match="non-finite values"):
        LA.eig(ember.tensor([[complex("nan+1j"), 1.0], [0.0, 1.0]]))
    with pytest.raises(TypeError, match="must be Tensor"):
        LA.eig([[1.0]])


def test_conjugate_transposes():
    z = ember.tensor([[1 + 2j, 3j], [4.0, 5 - 1j]])
    np.testing.assert_array_equal(z.mH.numpy(), z.numpy().conj().T)
    np.testing.assert_array_equal(z.H.numpy(), z.numpy().conj().T)
    np.testing.assert_array_equal(z.adjoint().numpy(), z.numpy().conj().T)
    x = ember.ones(2, 3)
    assert x.mH.shape == (3, 2)


def _distinct(rng, n):
    """A real matrix with well-separated real eigenvalues."""
    p = rng.standard_normal((n, n)) + n * np.eye(n)
    return p @ np.diag(np.arange(1.0, n + 1) * 1.5 - 3.1) @ np.linalg.inv(p)


def test_gradients_real_spectrum(rng):
    A = ember.tensor(_distinct(rng, 4), requires_grad=True)
    assert gradcheck(LA.eigvals, (A,))
    assert gradgradcheck(LA.eigvals, (A,))
    assert gradcheck(lambda A: LA.eig(A).eigenvectors.abs(), (A,))


def test_gradients_with_complex_pairs_and_batches(rng):
    A = ember.tensor(rng.standard_normal((2, 4, 4)), requires_grad=True)
    assert gradcheck(LA.eigvals, (A,))
    assert gradgradcheck(LA.eigvals, (A,))

    def phase_free(A):
        w, v = LA.eig(A)
        return v.abs() * w.unsqueeze(-2)
    assert gradcheck(phase_free, (A,))


def test_gradient_of_the_trace_identity(rng):
    """sum(eigvals) = trace(A): its gradient is the identity."""
    A = ember.tensor(rng.standard_normal((5, 5)), requires_grad=True)
    LA.eigvals(A).real.sum().backward()
    np.testing.assert_allclose(A.grad.numpy(), np.eye(5), atol=1e-10)
