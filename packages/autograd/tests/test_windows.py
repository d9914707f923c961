"""ember.hann_window, hamming_window, blackman_window, bartlett_window and
kaiser_window against NumPy's symmetric windows (computed in float64; a
periodic window is the symmetric one of length N + 1 without its last
element), and PyTorch's errors."""
import numpy as np
import pytest

import ember

NAMES = ("hann", "hamming", "blackman", "bartlett", "kaiser")


def reference(name, n, periodic, **kwargs):
    m = n + 1 if periodic and n > 1 else n
    if name == "hann":
        w = np.hanning(m)
    elif name == "hamming":
        alpha, beta = kwargs.get("alpha", 0.54), kwargs.get("beta", 0.46)
        w = alpha - beta * np.cos(2 * np.pi * np.arange(m) / (m - 1)) if m > 1 else np.ones(m)
    elif name == "blackman":
        w = np.blackman(m)
    elif name == "bartlett":
        w = np.bartlett(m)
    else:
        w = np.kaiser(m, kwargs.get("beta", 12.0))
    return w[:n].astype(np.float64)


def window(name, *args, **kwargs):
    return getattr(ember, f"{name}_window")(*args, **kwargs)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("n", [0, 1, 2, 5, 16, 17])
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_against_numpy(name, n, periodic, dtype):
    w = window(name, n, periodic, dtype=dtype)
    assert w.dtype is dtype and w.shape == (n,)
    assert not w.requires_grad
    tol = 1e-6 if dtype is ember.float32 else 1e-12
    np.testing.assert_allclose(w.numpy().astype(np.float64), reference(name, n, periodic),
                               rtol=tol, atol=tol)


def test_numpy_references_agree_with_the_formulas():
    # np.hamming is hamming_window's default alpha and beta
    np.testing.assert_allclose(reference("hamming", 17, False), np.hamming(17), atol=1e-15)


@pytest.mark.parametrize("name", NAMES)
def test_lengths_zero_and_one(name):
    assert window(name, 0).shape == (0,)
    for periodic in (True, False):
        w = window(name, 1, periodic)
        assert w.dtype == ember.get_default_dtype()
        assert w.tolist() == [1.0]


@pytest.mark.parametrize("name", NAMES)
def test_periodic_is_the_default(name):
    np.testing.assert_array_equal(window(name, 8).numpy(), window(name, 8, True).numpy())
    np.testing.assert_array_equal(window(name, 8).numpy(), window(name, 9, False)[:8].numpy())


@pytest.mark.parametrize("name", NAMES)
def test_default_dtype(name):
    old = ember.get_default_dtype()
    try:
        assert window(name, 5).dtype is old
        ember.set_default_dtype(ember.float64)
        assert window(name, 5).dtype is ember.float64
        np.testing.assert_allclose(window(name, 5, False).numpy(), reference(name, 5, False),
                                   rtol=1e-12, atol=1e-12)
    finally:
        ember.set_default_dtype(old)


def test_hamming_alpha_beta():
    w = ember.hamming_window(16, False, 0.6, 0.4, dtype=ember.float64)
    np.testing.assert_allclose(w.numpy(), reference("hamming", 16, False, alpha=0.6, beta=0.4),
                               atol=1e-12)
    # alpha = beta = 0.5 is hann's
    np.testing.assert_allclose(ember.hamming_window(17, True, alpha=0.5, beta=0.5).numpy(),
                               ember.hann_window(17).numpy(), atol=1e-7)


@pytest.mark.parametrize("beta", [0.0, 5.0, 8.6, 14.0, 40.0])
@pytest.mark.parametrize("periodic", [True, False])
def test_kaiser_beta(beta, periodic):
    w = ember.kaiser_window(17, periodic, beta, dtype=ember.float64)
    np.testing.assert_allclose(w.numpy(), reference("kaiser", 17, periodic, beta=beta),
                               rtol=1e-12, atol=1e-15)
    w = ember.kaiser_window(16, periodic, beta=beta)
    np.testing.assert_allclose(w.numpy(), reference("kaiser", 16, periodic, beta=beta),
                               rtol=1e-6, atol=1e-7)


def test_symmetric_windows_are_symmetric_and_peak_at_one():
    for name in NAMES:
        w = window(name, 17, False, dtype=ember.float64).numpy()
        np.testing.assert_allclose(w, w[::-1], atol=1e-15)
        assert abs(w[8] - 1.0) < 1e-15


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [ember.int64, ember.int32, ember.uint8, ember.bool])
def test_integer_dtypes_raise(name, dtype):
    with pytest.raises(RuntimeError, match=rf"^{name}_window expects floating point dtypes, "
                       rf"got: {dtype}"):
        window(name, 5, dtype=dtype)


@pytest.mark.parametrize("name", NAMES)
def test_negative_length_raises(name):
    with pytest.raises(RuntimeError, match=rf"^{name}_window requires non-negative "
                       r"window_length, got window_length=-1$"):
        window(name, -1)


@pytest.mark.parametrize("name", NAMES)
def test_bad_arguments(name):
    with pytest.raises(TypeError, match=rf"{name}_window\(\): argument 'window_length' must "
                       "be int, not float"):
        window(name, 5.0)
    with pytest.raises(RuntimeError, match=rf"^{name}_window is not implemented for sparse"):
        window(name, 5, layout=ember.sparse_coo)
    assert window(name, np.int64(3), layout=ember.strided).shape == (3,)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("n", [0, 1, 6])
def test_requires_grad(name, n):
    w = window(name, n, requires_grad=True)
    assert w.requires_grad and w.is_leaf and w.grad_fn is None
    (w * w).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), 2 * w.detach().numpy())


@pytest.mark.skipif(not ember.cuda.is_available(), reason="needs a cuda backend")
@pytest.mark.parametrize("name", NAMES)
def test_device(name):
    w = window(name, 9, device="cuda", dtype=ember.float64)
    assert w.is_cuda
    np.testing.assert_allclose(w.cpu().numpy(), reference(name, 9, True), atol=1e-12)
