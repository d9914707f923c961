"""One harness over every NN kernel declared in ember.nn.kernels, on the
samples beside each declaration: the composed form against each installed
kernel package (values and first-order gradients, float64, contiguous and
non-contiguous inputs), gradcheck and gradgradcheck through the dispatched
kernel (double backward goes through the composed form), and on CUDA
tensors (a GPU, or libTHC's emulated device: EMBER_NO_CUDA=1 builds with
EMBER_THC_EMULATE=1) against the CPU."""
import numpy as np
import pytest

import ember
from ember.nn import _kernels
from ember.nn.kernels import DECLARED
from samples_harness import assert_same, build as build_sample, first, run, to_cuda

LAYOUTS = ("contiguous", "noncontiguous")


def build(sample, layout, seed=0):
    return build_sample(sample, layout, seed)[0]   # kernel samples are positional


def cases(layouts=LAYOUTS):
    return [pytest.param(name, sample, layout, id=f"{name}-{sample!r}-{layout}")
            for name, decl in DECLARED.items() for sample in decl.samples for layout in layouts]


def test_every_kernel_is_declared_with_samples():
    """A new kernel comes with samples, so that this harness covers it; and
    the dispatch table is exactly the declarations."""
    assert sorted(_kernels.COMPOSED) == sorted(DECLARED)
    missing = [name for name, decl in DECLARED.items() if not decl.samples]
    assert not missing, f"kernels without samples: {missing}"
    for name, decl in DECLARED.items():
        assert decl.node is None or decl.node.endswith("Backward0"), name


@pytest.mark.parametrize("name,sample,layout", cases())
def test_kernel_matches_composed(name, sample, layout):
    """Each installed kernel package gives the composed form's values and
    gradients (on the CPU: ember.thnn when installed)."""
    if not _kernels.providers():
        pytest.skip("no kernel package installed (or EMBER_NN_KERNELS=composed)")
    args = build(sample, layout)
    want = run(_kernels.COMPOSED[name], args)
    got = run(_kernels.kernel(name), build(sample, layout))
    assert_same(got, want, f"{name} {sample!r}")


@pytest.mark.parametrize("name,sample,layout", cases(("contiguous",)))
def test_gradcheck_and_gradgradcheck(name, sample, layout):
    args = build(sample, layout)
    positions = [i for i, a in enumerate(args) if isinstance(a, ember.Tensor) and a.requires_grad]
    fn = _kernels.kernel(name)

    def f(*tensors):
        full = list(args)
        for i, t in zip(positions, tensors):
            full[i] = t
        return first(fn(*full))
    inputs = tuple(args[i] for i in positions)
    assert ember.autograd.gradcheck(f, inputs, eps=1e-6, atol=1e-6)
    assert ember.autograd.gradgradcheck(f, inputs, eps=1e-6, atol=1e-6)


@pytest.mark.skipif(not ember.cuda.is_available(), reason="no CUDA device (nor the emulated one)")
@pytest.mark.parametrize("name,sample,layout", cases())
def test_cuda_matches_cpu(name, sample, layout):
    """The same call on CUDA tensors (ember.thcunn's kernel where it is
    installed, else the composed form on libTHC's ops) against the CPU."""
    want = run(_kernels.kernel(name), build(sample, layout))
    got = run(_kernels.kernel(name), to_cuda(build(sample, layout)))
    assert_same(got, want, f"{name} {sample!r} on cuda")


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_with_strided_running_statistics(training):
    """Running statistics that are views (every other element of a buffer)
    are read, and updated in place in training, as contiguous ones are."""
    rng = np.random.default_rng(3)
    x = ember.tensor(rng.standard_normal((4, 3, 5)))
    mean0, var0 = rng.standard_normal(3), rng.uniform(0.5, 1.5, 3)
    buf_m, buf_v = ember.zeros(6, dtype=ember.float64), ember.zeros(6, dtype=ember.float64)
    rm, rv = buf_m[::2], buf_v[::2]
    rm.copy_(ember.tensor(mean0))
    rv.copy_(ember.tensor(var0))
    cm, cv = ember.tensor(mean0), ember.tensor(var0)
    got = ember.nn.functional.batch_norm(x, rm, rv, training=training)
    want = ember.nn.functional.batch_norm(x, cm, cv, training=training)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(rm.numpy(), cm.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(rv.numpy(), cv.numpy(), rtol=1e-12, atol=1e-12)
    assert np.all(buf_m.numpy()[1::2] == 0) and np.all(buf_v.numpy()[1::2] == 0)
    if training:
        xs = x.numpy()
        expect = 0.9 * mean0 + 0.1 * xs.mean((0, 2))
        np.testing.assert_allclose(rm.numpy(), expect, rtol=1e-12, atol=1e-12)
