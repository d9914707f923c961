"""Shared helpers: turning the op table's samples into tensors."""
import numpy as np
import pytest

import ember
from ember._ops import OPS
from ember._ops.samples import Index, Mask, T

LAYOUTS = ("contiguous", "noncontiguous")


def make_tensor(spec, rng, layout="contiguous", dtype=None):
    """A float64 leaf for a T spec (non-contiguous: every other element of
    a wider buffer), an int64 tensor for Index, a bool tensor for Mask."""
    if isinstance(spec, T):
        values = rng.uniform(spec.low, spec.high, size=spec.shape)
        if spec.complex:  # complex128 (complex64 where the test asks for float32)
            values = values + 1j * rng.uniform(spec.low, spec.high, size=spec.shape)
            dtype = ember.complex64 if dtype is ember.float32 else ember.complex128
        if layout == "noncontiguous" and spec.shape:
            wide = np.zeros(spec.shape + (2,), dtype=values.dtype)
            wide[..., 0] = values
            t = ember.tensor(wide, dtype=dtype or ember.float64)[..., 0].detach()
            assert t.numel() < 2 or not t.is_contiguous()
        else:
            t = ember.tensor(values, dtype=dtype or ember.float64)
        return t.requires_grad_(spec.grad)
    if isinstance(spec, Index):
        if spec.values is not None:
            return ember.tensor(spec.values, dtype=ember.int64)
        return ember.tensor(rng.integers(0, spec.high, size=spec.shape), dtype=ember.int64)
    if isinstance(spec, Mask):
        m = rng.random(spec.shape) > 0.5
        m.flat[0] = True
        return ember.tensor(m)
    if isinstance(spec, list):
        return [make_tensor(s, rng, layout, dtype) for s in spec]
    if isinstance(spec, tuple):
        return tuple(make_tensor(s, rng, layout, dtype) for s in spec)
    return spec


def make_sample(sample, layout="contiguous", seed=0, dtype=None):
    rng = np.random.default_rng(seed)
    args = [make_tensor(a, rng, layout, dtype) for a in sample.args]
    kwargs = {k: make_tensor(v, rng, layout, dtype) for k, v in sample.kwargs.items()}
    return args, kwargs


def leaves(args, kwargs):
    """The tensors of a sample that require grad, in order."""
    found = []

    def walk(x):
        if isinstance(x, ember.Tensor):
            if x.requires_grad:
                found.append(x)
        elif isinstance(x, (list, tuple)):
            for y in x:
                walk(y)
    walk(list(args) + list(kwargs.values()))
    return found


def sample_cases(filter_fn, layouts=LAYOUTS):
    """pytest params (op, sample, layout) for the table entries passing
    filter_fn, named op-sample-layout."""
    cases = []
    for info in OPS.values():
        if info.call is None or not filter_fn(info):
            continue
        for i, sample in enumerate(info.samples):
            for layout in layouts:
                if layout != "contiguous" and info.checks.get("contiguous_only"):
                    continue
                cases.append(pytest.param(info, sample, layout,
                                          id=f"{info.name}-{sample!r}-{layout}"))
    return cases
