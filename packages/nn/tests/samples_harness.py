"""What the two sample harnesses share (test_nn_kernels.py over the kernel
declarations, test_functional_samples.py over ember.nn.functional): making
the tensors a sample describes, running a call with gradients, comparing
two runs."""
import numpy as np

import ember
from ember._ops.samples import Const, Index, T


def make(spec, rng, layout):
    """A float64 leaf for T (non-contiguous: every other element of a wider
    buffer), an int64 tensor for Index, a float64 constant for Const, lists
    and tuples element-wise, anything else as it is."""
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
        if spec.values is not None:
            return ember.tensor(spec.values, dtype=ember.int64)
        return ember.tensor(rng.integers(0, spec.high, size=spec.shape), dtype=ember.int64)
    if isinstance(spec, Const):
        return ember.tensor(spec.values, dtype=ember.float64)
    if isinstance(spec, (list, tuple)) and any(isinstance(s, (T, Index, Const)) for s in spec):
        return type(spec)(make(s, rng, layout) for s in spec)
    return spec


def build(sample, layout, seed=0):
    """(args, kwargs) of a sample, made afresh (the same values for a seed)."""
    rng = np.random.default_rng(seed)
    args = [make(a, rng, layout) for a in sample.args]
    kwargs = {k: make(v, rng, layout) for k, v in sample.kwargs.items()}
    return args, kwargs


def leaves(args, kwargs=None):
    every = list(args) + list((kwargs or {}).values())
    return [a for a in every if isinstance(a, ember.Tensor) and a.requires_grad]


def first(out):
    return out[0] if isinstance(out, tuple) else out


def run(fn, args, kwargs=None):
    """fn's outputs (detached, as NumPy) and the gradients of a fixed
    weighting of its first output with respect to the leaves."""
    out = fn(*args, **(kwargs or {}))
    y = first(out)
    ls = leaves(args, kwargs)
    grads = []
    if ls and y.requires_grad:
        weights = ember.tensor(np.random.default_rng(1).uniform(0.5, 1.5, tuple(y.shape)),
                               dtype=y.dtype, device=y.device)
        grads = ember.autograd.grad((y * weights).sum(), ls, allow_unused=True)
    outs = out if isinstance(out, tuple) else (out,)
    return ([o.detach().cpu().numpy() for o in outs],
            [None if g is None else g.cpu().numpy() for g in grads])


def assert_same(got, want, what, rtol=1e-9, atol=1e-10):
    (go, gg), (wo, wg) = got, want
    assert len(go) == len(wo), f"{what}: {len(go)} outputs against {len(wo)}"
    for i, (a, b) in enumerate(zip(go, wo)):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"{what}: output {i}")
    assert len(gg) == len(wg), f"{what}: {len(gg)} gradients against {len(wg)}"
    for i, (a, b) in enumerate(zip(gg, wg)):
        assert (a is None) == (b is None), f"{what}: gradient {i} missing on one side"
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol,
                                       err_msg=f"{what}: gradient {i}")


def to_cuda(args):
    return [a.detach().cuda().requires_grad_(a.requires_grad)
            if isinstance(a, ember.Tensor) else a for a in args]
