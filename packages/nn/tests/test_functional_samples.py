"""One harness over every function of ember.nn.functional, on the samples
declared beside it (each family module's SAMPLES): gradcheck and
gradgradcheck in float64, the same values and gradients from contiguous and
non-contiguous inputs, on CUDA tensors (a GPU, or libTHC's emulated device)
against the CPU, and against PyTorch's torch.nn.functional on the same
values where torch is installed."""
import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from samples_harness import assert_same, build, first, leaves, run, to_cuda

#: functions whose result is not differentiable (an integer tensor)
NOT_DIFFERENTIABLE = {"one_hot"}
#: functions that write into their input: gradients are not asked for
IN_PLACE = {"relu_"}
#: samples whose gradient is not the derivative on purpose, as PyTorch's:
#: the padding row of an embedding gets no gradient
NOT_THE_DERIVATIVE = {("embedding", "padding_idx")}


def cases(layouts=("contiguous",)):
    return [pytest.param(name, sample, layout, id=f"{name}-{sample!r}-{layout}")
            for name, samples in F.SAMPLES.items() for sample in samples
            for layout in layouts]


def call(name, args, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # upsample*'s deprecation, as PyTorch's
        return getattr(F, name)(*args, **kwargs)


def test_every_function_has_samples():
    """A new function comes with samples, so that this harness covers it."""
    missing = sorted(set(F.__all__) - set(F.SAMPLES))
    assert not missing, f"ember.nn.functional functions without samples: {missing}"
    unknown = sorted(set(F.SAMPLES) - set(F.__all__))
    assert not unknown, f"samples of functions ember.nn.functional does not export: {unknown}"


@pytest.mark.parametrize("name,sample,layout", cases())
def test_gradcheck_and_gradgradcheck(name, sample, layout):
    if name in NOT_DIFFERENTIABLE | IN_PLACE:
        pytest.skip(f"{name} is not differentiable")
    if (name, sample.name) in NOT_THE_DERIVATIVE:
        pytest.skip(f"{name} {sample.name}: the gradient leaves a part out on purpose")
    args, kwargs = build(sample, layout)
    inputs = leaves(args, kwargs)
    assert inputs, f"{name} {sample!r}: no input requires grad"
    slots = [(i, None) for i, a in enumerate(args) if any(a is x for x in inputs)] + \
        [(None, k) for k, v in kwargs.items() if any(v is x for x in inputs)]

    def f(*tensors):
        a, kw = list(args), dict(kwargs)
        for (i, k), t in zip(slots, tensors):
            if k is None:
                a[i] = t
            else:
                kw[k] = t
        return first(call(name, a, kw))
    assert ember.autograd.gradcheck(f, tuple(inputs), eps=1e-6, atol=1e-6)
    assert ember.autograd.gradgradcheck(f, tuple(inputs), eps=1e-6, atol=1e-6)


@pytest.mark.parametrize("name,sample,layout", cases())
def test_noncontiguous_inputs_give_the_same(name, sample, layout):
    want = run(lambda *a, **k: call(name, a, k), *build(sample, "contiguous"))
    got = run(lambda *a, **k: call(name, a, k), *build(sample, "noncontiguous"))
    assert_same(got, want, f"{name} {sample!r} non-contiguous")


@pytest.mark.skipif(not ember.cuda.is_available(), reason="no CUDA device (nor the emulated one)")
@pytest.mark.parametrize("name,sample,layout", cases())
def test_cuda_matches_cpu(name, sample, layout):
    args, kwargs = build(sample, layout)
    want = run(lambda *a, **k: call(name, a, k), args, kwargs)
    args, kwargs = build(sample, layout)
    cargs = to_cuda(args)
    ckw = dict(zip(kwargs, to_cuda(list(kwargs.values()))))
    got = run(lambda *a, **k: call(name, a, k), cargs, ckw)
    assert_same(got, want, f"{name} {sample!r} on cuda", rtol=1e-7, atol=1e-9)


# ---- PyTorch conformance ------------------------------------------------------
def _to_torch(torch, x):
    if isinstance(x, ember.Tensor):
        t = torch.tensor(x.detach().numpy())
        return t.requires_grad_(x.requires_grad)
    if isinstance(x, (list, tuple)):
        return type(x)(_to_torch(torch, v) for v in x)
    return x


def _torch_run(torch, name, args, kwargs):
    targs = [_to_torch(torch, a) for a in args]
    tkw = {k: _to_torch(torch, v) for k, v in kwargs.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = getattr(torch.nn.functional, name)(*targs, **tkw)
    y = out[0] if isinstance(out, tuple) else out
    tleaves = [t for t in targs + list(tkw.values())
               if isinstance(t, torch.Tensor) and t.requires_grad]
    grads = []
    if tleaves and y.requires_grad:
        w = torch.tensor(np.random.default_rng(1).uniform(0.5, 1.5, tuple(y.shape)),
                         dtype=y.dtype)
        grads = torch.autograd.grad((y * w).sum(), tleaves, allow_unused=True)
    outs = out if isinstance(out, tuple) else (out,)
    return ([o.detach().numpy() for o in outs],
            [None if g is None else g.numpy() for g in grads])


@pytest.mark.parametrize("name,sample,layout", cases())
def test_matches_pytorch(name, sample, layout):
    torch = pytest.importorskip("torch")
    args, kwargs = build(sample, layout)
    want = _torch_run(torch, name, args, kwargs)     # before: relu_ writes its input
    got = run(lambda *a, **k: call(name, a, k), args, kwargs)
    assert_same(got, want, f"{name} {sample!r} against torch", rtol=1e-7, atol=1e-9)
