"""ember.thcunn's activations, softmax / log_softmax (dropout: test_thcunn_norm)
against ember.thnn's (the CPU kernels are the reference) on fresh random
float64 and float32 data.  Runs on a GPU or on libTHC's emulated device."""
import numpy as np
import pytest

import ember.th as th
import ember.thc as thc
import ember.thcunn as k

thnn = pytest.importorskip("ember.thnn", reason="the CPU kernels (ember-thnn) are the reference")

pytestmark = pytest.mark.needs_device
DTYPES = [("float64", 1e-10), ("float32", 1e-4)]


def pair(shape, rng, dtype="float64", low=-1.0, high=1.0):
    """The same random values as an ember.th and an ember.thc tensor."""
    a = rng.uniform(low, high, size=shape).astype(dtype)
    return th.from_numpy(a.copy()), thc.from_numpy(a.copy())


def same(cpu, gpu, tol):
    c, g = cpu.numpy(), gpu.cpu().numpy()
    assert c.shape == g.shape and c.dtype == g.dtype
    assert np.allclose(c, g, rtol=tol, atol=tol), np.abs(c - g).max()


@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax(dtype, tol, dim):
    rng = np.random.default_rng(3)
    xc, xg = pair((4, 5, 6), rng, dtype, -5, 5)
    gc, gg = pair((4, 5, 6), rng, dtype)
    for fwd, bwd in (("softmax_forward", "softmax_backward_input"),
                     ("log_softmax_forward", "log_softmax_backward_input")):
        yc, yg = getattr(thnn, fwd)(xc, dim), getattr(k, fwd)(xg, dim)
        same(yc, yg, tol)
        same(getattr(thnn, bwd)(gc, yc, dim), getattr(k, bwd)(gg, yg, dim), tol)


@pytest.mark.parametrize("dtype,tol", [("float64", 1e-10), ("float32", 1e-5)])
@pytest.mark.parametrize("shape,dim", [((3, 1500), 1), ((2, 1024), -1), ((1500, 3), 0),
                                       ((2, 300, 3), 1), ((1, 4, 2048), 2)])
def test_softmax_long_lines(dtype, tol, shape, dim):
    """Lines of >= 1024 (or >= 128, few of them) take libTHC's reductions
    along dim: -inf entries, large values (exp overflows without the max
    subtracted), forward and backward."""
    rng = np.random.default_rng(9)
    a = rng.uniform(-5, 5, size=shape).astype(dtype)
    a = np.moveaxis(a, dim, -1)            # a view: lines along the last axis
    a[..., 3] = -np.inf
    a[..., 10] = 30
    a.reshape(-1, a.shape[-1])[0] += 1e4   # a line of large values
    a = np.moveaxis(a, -1, dim)
    xc, xg = th.from_numpy(a.copy()), thc.from_numpy(a.copy())
    gc, gg = pair(shape, rng, dtype)
    for fwd, bwd in (("softmax_forward", "softmax_backward_input"),
                     ("log_softmax_forward", "log_softmax_backward_input")):
        yc, yg = getattr(thnn, fwd)(xc, dim), getattr(k, fwd)(xg, dim)
        assert np.isfinite(yc.numpy()).any()
        same(yc, yg, tol)
        same(getattr(thnn, bwd)(gc, yc, dim), getattr(k, bwd)(gg, yg, dim), tol)


@pytest.mark.parametrize("name,a,b", [
    ("relu", 0, 0), ("leaky_relu", 0.1, 0), ("elu", 1.0, 0), ("selu", 0, 0), ("gelu", 0, 0),
    ("gelu", 1, 0), ("silu", 0, 0), ("sigmoid", 0, 0), ("tanh", 0, 0), ("softplus", 2, 5),
    ("hardtanh", -0.5, 0.5), ("hardswish", 0, 0), ("mish", 0, 0)])
def test_activations(name, a, b):
    rng = np.random.default_rng(7)
    xc, xg = pair((7, 9), rng, "float64", -4, 4)
    gc, gg = pair((7, 9), rng, "float64")
    same(thnn.activation_forward(name, xc, a, b), k.activation_forward(name, xg, a, b), 1e-12)
    same(thnn.activation_backward_input(name, gc, xc, a, b),
         k.activation_backward_input(name, gg, xg, a, b), 1e-12)
