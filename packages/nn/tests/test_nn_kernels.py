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
from ember._ops.samples import Index, T
from ember.nn import _kernels
from ember.nn.kernels import DECLARED

LAYOUTS = ("contiguous", "noncontiguous")


def make(spec, rng, layout):
    """A float64 leaf for T (non-contiguous: every other element of a wider
    buffer), an int64 tensor for Index, anything else as it is."""
    if isinstance(spec, T):
        values = rng.uniform(spec.low, spec.high, size=spec.shape)
        if layout == "noncontiguous" and spec.shape:
            wide = np.zeros(spec.shape + (2,))
            wide[..., 0] = values
            t = ember.tensor(wide, dtype=ember.float64)[..., 0].detach()
        else:
            t = ember.tensor(values, dtype=ember.float64)
        return t.requires_grad_(spec.grad)
    if isinstance(spec, Index):
        return ember.tensor(spec.values, dtype=ember.int64)
    return spec


def build(sample, layout, seed=0):
    rng = np.random.default_rng(seed)
    return [make(a, rng, layout) for a in sample.args]


def leaves(args):
    return [a for a in args if isinstance(a, ember.Tensor) and a.requires_grad]


def first(out):
    return out[0] if isinstance(out, tuple) else out


def cases(layouts=LAYOUTS):
    return [pytest.param(name, sample, layout, id=f"{name}-{sample!r}-{layout}")
            for name, decl in DECLARED.items() for sample in decl.samples for layout in layouts]


def run(fn, args):
    """fn's outputs (detached, as NumPy) and the gradients of a fixed
    weighting of its first output with respect to the leaves."""
    out = fn(*args)
    y = first(out)
    weights = ember.tensor(np.random.default_rng(1).uniform(0.5, 1.5, tuple(y.shape)),
                           dtype=y.dtype, device=y.device)
    grads = ember.autograd.grad((y * weights).sum(), leaves(args), allow_unused=True)
    outs = out if isinstance(out, tuple) else (out,)
    return ([o.detach().cpu().numpy() for o in outs],
            [None if g is None else g.cpu().numpy() for g in grads])


def assert_same(got, want, what):
    (go, gg), (wo, wg) = got, want
    for i, (a, b) in enumerate(zip(go, wo)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10, err_msg=f"{what}: output {i}")
    for i, (a, b) in enumerate(zip(gg, wg)):
        assert (a is None) == (b is None), f"{what}: gradient {i} missing on one side"
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10,
                                       err_msg=f"{what}: gradient {i}")


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


def _cuda(args):
    return [a.detach().cuda().requires_grad_(a.requires_grad)
            if isinstance(a, ember.Tensor) else a for a in args]


@pytest.mark.skipif(not ember.cuda.is_available(), reason="no CUDA device (nor the emulated one)")
@pytest.mark.parametrize("name,sample,layout", cases())
def test_cuda_matches_cpu(name, sample, layout):
    """The same call on CUDA tensors (ember.thcunn's kernel where it is
    installed, else the composed form on libTHC's ops) against the CPU."""
    want = run(_kernels.kernel(name), build(sample, layout))
    got = run(_kernels.kernel(name), _cuda(build(sample, layout)))
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
