"""Sizes and options PyTorch refuses: huge adaptive-pool and resampling
sizes fail fast (they used to loop in Python), and pooling / embedding
options that used to give wrong results quietly are refused with PyTorch's
error type and wording."""
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F


def raises(kind, message):
    return pytest.raises(kind, match="^" + re.escape(message) + "$")


def test_huge_output_sizes_fail_fast_subprocess():
    # each call used to run a Python loop over the output size for hours
    code = textwrap.dedent("""
        import ember, ember.nn.functional as F
        calls = [
            lambda: F.adaptive_avg_pool2d(ember.randn(1, 2, 5, 5), 2**40),
            lambda: F.adaptive_avg_pool1d(ember.randn(1, 2, 5), 2**40),
            lambda: F.adaptive_avg_pool3d(ember.randn(1, 2, 5, 5, 5), 2**30),
            lambda: F.adaptive_max_pool1d(ember.randn(1, 2, 5), 2**40),
            lambda: F.adaptive_max_pool2d(ember.randn(1, 2, 5, 5), 2**40),
            lambda: F.adaptive_max_pool3d(ember.randn(1, 2, 5, 5, 5), 2**30),
            lambda: F.interpolate(ember.randn(1, 2, 5, 5), size=2**40),
            lambda: F.interpolate(ember.randn(1, 2, 5, 5), scale_factor=2.0**40),
            lambda: F.interpolate(ember.randn(1, 2, 5), size=2**40, mode="linear"),
        ]
        for call in calls:
            try:
                call()
                print("no error")
            except (RuntimeError, MemoryError) as e:
                print(type(e).__name__)
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert "no error" not in r.stdout and len(r.stdout.split()) == 9, r.stdout


def adaptive_ref(a, out):
    """PyTorch's adaptive average cells, by loops over NumPy."""
    nd = len(out)
    for i, o in enumerate(out):
        ax = a.ndim - nd + i
        n = a.shape[ax]
        cells = [np.take(a, range((j * n) // o, -(-((j + 1) * n) // o)), axis=ax).mean(ax)
                 for j in range(o)]
        a = np.stack(cells, ax)
    return a


@pytest.mark.parametrize("shape,out", [((2, 3, 7), (3,)), ((1, 2, 5), (9,)),
                                       ((2, 3, 7, 5), (3, 4)), ((1, 2, 5, 5), (9, 2)),
                                       ((3, 4, 4), (1, 1)), ((2, 1, 7, 4, 5), (3, 5, 2))])
def test_adaptive_avg_pool_matches_reference(shape, out):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape)
    f = {1: F.adaptive_avg_pool1d, 2: F.adaptive_avg_pool2d, 3: F.adaptive_avg_pool3d}[len(out)]
    x = ember.tensor(a, requires_grad=True)
    y = f(x, out)
    np.testing.assert_allclose(y.detach().numpy(), adaptive_ref(a, out), rtol=1e-12, atol=1e-12)
    g = rng.standard_normal(y.shape)
    y.backward(ember.tensor(g))
    # the gradient of a sum of cell means: each cell spreads g / len over its elements
    eps = 1e-6
    d = rng.standard_normal(shape)
    num = ((adaptive_ref(a + eps * d, out) - adaptive_ref(a - eps * d, out)) * g).sum() / (2 * eps)
    assert abs((x.grad.numpy() * d).sum() - num) < 1e-6


def test_adaptive_avg_pool_keeps_inf():
    x = ember.tensor([[[[float("inf"), 1.], [1., 1.]]]])
    assert F.adaptive_avg_pool2d(x, 1).item() == float("inf")


def test_avg_pool_divisor_override_zero():
    for call in (lambda: F.avg_pool2d(ember.ones(1, 1, 4, 4), 2, divisor_override=0),
                 lambda: F.avg_pool3d(ember.ones(1, 1, 4, 4, 4), 2, divisor_override=0),
                 lambda: nn.AvgPool2d(2, divisor_override=0)(ember.ones(1, 1, 4, 4))):
        with raises(RuntimeError, "divisor must be not zero"):
            call()
    assert F.avg_pool2d(ember.ones(1, 1, 4, 4), 2, divisor_override=2).flatten().tolist() \
        == [2.] * 4


def test_pool_padding_and_dilation_checked():
    x = ember.ones(1, 1, 4, 4)
    with raises(RuntimeError, "pad must be non-negative, but got pad: -1"):
        F.max_pool2d(x, 2, padding=-1)
    with raises(RuntimeError, "pad must be non-negative, but got pad: -1"):
        F.avg_pool2d(x, 2, padding=-1)
    with raises(RuntimeError, "dilation should be greater than zero, but got dilationH: 0 "
                              "dilationW: 0"):
        F.max_pool2d(x, 2, dilation=0)


def test_embedding_padding_idx_out_of_range():
    w = ember.ones(3, 2)
    for p in (10, 3, -4):
        with raises(AssertionError, "Padding_idx must be within num_embeddings"):
            F.embedding(ember.tensor([0]), w, padding_idx=p)
    w = ember.arange(6.).reshape(3, 2).requires_grad_()
    F.embedding(ember.tensor([0, 2, 2]), w, padding_idx=-1).sum().backward()
    assert w.grad.tolist() == [[1., 1.], [0., 0.], [0., 0.]]


def test_norms_with_zero_groups_or_channels():
    with raises(RuntimeError, "Expected num groups to be greater than 0, got 0"):
        F.group_norm(ember.zeros(2, 4), 0)
    with raises(RuntimeError, "Expected num groups to be greater than 0, got -2"):
        F.group_norm(ember.zeros(2, 4), -2)
    # no channels: nothing to normalise (was a ZeroDivisionError)
    for dtype in (ember.float32, ember.float16):   # the kernel and the composed path
        assert F.batch_norm(ember.zeros(2, 0, 3, dtype=dtype), ember.zeros(0), ember.ones(0),
                            training=True).shape == (2, 0, 3)
