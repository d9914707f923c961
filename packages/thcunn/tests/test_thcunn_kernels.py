"""ember.thcunn as a whole: backward kernels refuse gradients of the wrong
shape or dtype, CPU tensors are refused.  Each layer family has its own
file (test_thcunn_conv, _pool, _loss, _norm, _activation, _resample,
_embedding): the kernels against ember.thnn's (the CPU kernels are the
reference) on fresh random float64 and float32 data.  Runs on a GPU or on
libTHC's emulated device."""
import numpy as np
import pytest

import ember.th as th
import ember.thc as thc
import ember.thcunn as k

thnn = pytest.importorskip("ember.thnn", reason="the CPU kernels (ember-thnn) are the reference")

pytestmark = pytest.mark.needs_device


def pair(shape, rng, dtype="float64", low=-1.0, high=1.0):
    """The same random values as an ember.th and an ember.thc tensor."""
    a = rng.uniform(low, high, size=shape).astype(dtype)
    return th.from_numpy(a.copy()), thc.from_numpy(a.copy())


def test_backward_kernels_refuse_mismatched_gradients():
    """More planes in grad_output than in grad_input (it would write past
    grad_input's end), or another dtype (it would be read as grad_input's)."""
    rng = np.random.default_rng(8)
    _, x = pair((2, 3, 6, 6), rng)
    out, idx = k.max_pool2d_forward(x, 2)
    with pytest.raises(RuntimeError, match="do not match grad_input"):
        k.max_pool2d_backward_input(out, (1, 3, 6, 6), idx)
    with pytest.raises(RuntimeError, match="do not match grad_input"):
        k.max_pool2d_backward_input(out, (2, 2, 6, 6), idx)
    grad_in = thc.zeros(2, 3, 6, 6, dtype=thc.float32)   # the C API takes any pair
    with pytest.raises(RuntimeError, match="do not match grad_input"):
        k._check(k._lib.thcunn_max_pool2d_backward_input(k._p(grad_in), k._p(out), k._p(idx)))
    _, lp = pair((3, 4), rng)
    t = thc.from_numpy(np.array([0, 3, 1]))
    _, tw = k.nll_loss_forward(lp, t)
    gi, go = thc.zeros(3, 4, dtype=thc.float64), thc.ones(1, dtype=thc.float32).reshape(())
    with pytest.raises(TypeError, match="expected grad_output of scalar type"):
        k._check(k._lib.thcunn_nll_loss_backward_input(k._p(gi), k._p(go), k._p(t), k.NULL,
                                                       k._p(tw), 1, -100))


def test_a_cpu_tensor_is_refused():
    rng = np.random.default_rng(8)
    xc, _ = pair((2, 3), rng)
    with pytest.raises((TypeError, RuntimeError)):
        k.softmax_forward(xc, 1)
