"""ember.fft: the frequency helpers against NumPy (and their gradients);
the complex transforms say that they need complex dtypes."""
import numpy as np
import pytest

import ember
import ember.fft
from ember.autograd import gradcheck


@pytest.mark.parametrize("n", [0, 1, 2, 5, 8])
@pytest.mark.parametrize("d", [1.0, 0.25])
def test_frequencies(n, d):
    f = ember.fft.fftfreq(n, d)
    assert f.dtype == ember.get_default_dtype()
    r = ember.fft.rfftfreq(n, d, dtype=ember.float64)
    assert r.dtype == ember.float64
    if n == 0:  # NumPy divides by zero; PyTorch gives empty and [nan], as here
        assert f.shape == (0,) and r.shape == (1,) and r.isnan().all()
        return
    np.testing.assert_allclose(f.numpy(), np.fft.fftfreq(n, d), rtol=1e-6)
    np.testing.assert_allclose(r.numpy(), np.fft.rfftfreq(n, d))


@pytest.mark.parametrize("shape,dim", [((5,), None), ((4, 7), None), ((4, 7), 1),
                                       ((3, 4, 5), (0, 2)), ((2, 3), ())])
def test_shifts(rng, shape, dim):
    a = rng.standard_normal(shape)
    t = ember.tensor(a)
    axes = dim if dim != () else ()
    np.testing.assert_array_equal(ember.fft.fftshift(t, dim).numpy(), np.fft.fftshift(a, axes))
    np.testing.assert_array_equal(ember.fft.ifftshift(t, dim).numpy(), np.fft.ifftshift(a, axes))
    np.testing.assert_array_equal(ember.fft.ifftshift(ember.fft.fftshift(t, dim), dim).numpy(), a)


def test_shift_gradient():
    x = ember.randn(3, 5, dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda x: ember.fft.fftshift(x, 1), [x])


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2",
                                  "irfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfft", "ihfft"])
def test_transforms_need_complex_dtypes(name):
    with pytest.raises(NotImplementedError, match=rf"^ember.fft.{name}: Ember has no complex "
                       "dtypes yet"):
        getattr(ember.fft, name)(ember.ones(8))


@pytest.fixture
def rng():
    return np.random.default_rng(7)
