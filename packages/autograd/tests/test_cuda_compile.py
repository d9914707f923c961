"""ember.compile on CUDA tensors.  On ember-thc's emulated device (whose
memory is host memory) the fused groups run as the same generated C
kernels as on the CPU; on a GPU they run eagerly (no NVRTC path yet).
Either way results and gradients equal eager ones.  Runs where ember-thc
has a device (the `thc-emulated` tox env); skips elsewhere."""
import numpy as np
import pytest

import ember
import ember.compiler

pytestmark = pytest.mark.skipif(not ember.cuda.is_available(),
                                reason="no CUDA device (nor ember-thc's emulated device)")

RNG = np.random.default_rng(20261129)


@pytest.fixture(autouse=True)
def kernel_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    ember.compiler.reset()


def cuda(*shape, dtype=ember.float32):
    return ember.tensor(RNG.uniform(-2, 2, shape), dtype=dtype, device="cuda")


def gelu(x):
    return 0.5 * x * (1.0 + ember.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


def log_softmax(x):
    z = x - x.amax(-1, keepdim=True)
    return z - ember.exp(z).sum(-1, keepdim=True).log()


def emulated():
    from ember import backends
    return backends.get_backend("cuda").host_memory()


@pytest.mark.parametrize("fn", [gelu, log_softmax])
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64], ids=["float32", "float64"])
def test_compiled_on_the_device_equals_eager(fn, dtype):
    x = cuda(16, 33, dtype=dtype)
    c = ember.compile(fn)
    c(x)
    got = c(x)
    want = fn(x)
    assert got.is_cuda and got.dtype is dtype and got.shape == want.shape
    tol = 1e-5 if dtype is ember.float32 else 1e-12
    np.testing.assert_allclose(got.cpu().numpy(), want.cpu().numpy(), rtol=tol, atol=tol)
    graphs = list(c.graphs().values())
    assert sum(len(g.groups) for g in graphs) == 1
    kernels = [k for g in graphs for k in g.kernels.values() if k is not None]
    # the emulated device runs the group as a kernel; a GPU runs it eagerly
    assert bool(kernels) == emulated()


def test_gradients_through_a_compiled_group_on_the_device():
    x = cuda(5, 9, dtype=ember.float64).requires_grad_()
    assert ember.autograd.gradcheck(ember.compile(log_softmax), (x,))
    c = ember.compile(gelu)
    y = cuda(7, 3, dtype=ember.float64).requires_grad_()
    c(y).sum().backward()
    g1 = y.grad.clone()
    y.grad = None
    gelu(y).sum().backward()
    assert y.grad.is_cuda
    np.testing.assert_allclose(g1.cpu().numpy(), y.grad.cpu().numpy(), rtol=1e-12)


def test_mixed_devices_run_eagerly_with_eagers_error():
    c = ember.compile(lambda a, b: (a * b).exp() + 1.0)
    with pytest.raises(RuntimeError, match="same device|Expected all tensors"):
        c(cuda(4), ember.ones(4))
