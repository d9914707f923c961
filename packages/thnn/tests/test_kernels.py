"""ember.thnn as a whole: errors that name the problem, the ABI and the
kernel entry point, bad input that corrupts nothing.  Each layer family has
its own test file (test_conv, test_pool, test_loss, test_norm,
test_activation, test_resample, test_embedding, test_rnn_kernels): forward
against NumPy references, float64 finite-difference checks of every
backward, bad-input errors."""

import numpy as np
import pytest

import ember.th as th
import ember.thnn as nn

from thnn_testing import N


def test_errors_name_the_problem():
    with pytest.raises(TypeError, match="Float or Double"):
        nn.softmax_forward(th.tensor([1, 2, 3]), 0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        nn.softmax_forward(th.randn(2, 3), 2)


COMPLEX_CALLS = {  # kernel: call on complex operands of dtype dt
    "softmax": lambda dt: nn.softmax_forward(th.ones(2, 3, dtype=dt), 1),
    "activation": lambda dt: nn.activation_forward("relu", th.ones(2, 3, dtype=dt)),
    "conv2d": lambda dt: nn.conv2d_forward(th.ones(1, 2, 4, 4, dtype=dt),
                                           th.ones(3, 2, 3, 3, dtype=dt)),
    "conv2d_weight": lambda dt: nn.conv2d_forward(th.ones(1, 2, 4, 4),
                                                  th.ones(3, 2, 3, 3, dtype=dt)),
    "max_pool2d": lambda dt: nn.max_pool2d_forward(th.ones(1, 2, 4, 4, dtype=dt), 2),
    "batch_norm": lambda dt: nn.batch_norm_forward(th.ones(2, 3, 4, dtype=dt)),
    "layer_norm": lambda dt: nn.layer_norm_forward(th.ones(2, 4, dtype=dt), (4,)),
    "reflection_pad2d": lambda dt: nn.reflection_pad2d_forward(th.ones(1, 1, 3, 3, dtype=dt),
                                                               (1, 1, 1, 1)),
    "embedding": lambda dt: nn.embedding_forward(th.ones(5, 3, dtype=dt), th.tensor([0, 4])),
    "nll_loss": lambda dt: nn.nll_loss_forward(th.ones(2, 3, dtype=dt), th.tensor([0, 1])),
    "gemm_out": lambda dt: nn.gemm_out(th.empty(2, 2, dtype=dt), th.ones(2, 2, dtype=dt),
                                       th.ones(2, 2, dtype=dt)),
}


@pytest.mark.parametrize("dt", [th.complex64, th.complex128], ids=str)
@pytest.mark.parametrize("kernel", COMPLEX_CALLS)
def test_complex_tensors_refused(kernel, dt):
    """libTHNN's kernels are real-valued: a complex operand is a TypeError
    naming its dtype (libTH's titles, past the ten real dtypes' table)."""
    with pytest.raises(TypeError, match=dt._title):
        COMPLEX_CALLS[kernel](dt)


def test_abi_and_entry_point():
    assert nn._lib.thnn_abi_version_major() == 1
    assert nn.kernels.conv2d_forward is nn.conv2d_forward
    from importlib.metadata import entry_points
    eps = [e for e in entry_points(group="ember.kernels") if e.name == "cpu"]
    if eps:  # only once installed
        assert eps[0].load() is nn.kernels


def test_bad_input_corrupts_nothing():
    """Checks run before any write: running statistics and the caller's
    tensors are untouched after an error."""
    x = th.randn(4, 3, 2, 2, dtype=th.float64)
    rm, rv = th.zeros(3, dtype=th.float64), th.ones(3, dtype=th.float64)
    with pytest.raises(RuntimeError, match=r"expected weight of shape \[3\]"):
        nn.batch_norm_forward(x, th.ones(4, dtype=th.float64), None, rm, rv, True)
    np.testing.assert_array_equal(N(rm), np.zeros(3))
    np.testing.assert_array_equal(N(rv), np.ones(3))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        nn.batch_norm_forward(th.randn(1, 3, dtype=th.float64), None, None, rm, rv, True)
    np.testing.assert_array_equal(N(rm), np.zeros(3))
    before = N(x).copy()
    with pytest.raises(RuntimeError):
        nn.conv2d_forward(x, th.randn(2, 5, 3, 3, dtype=th.float64))
    np.testing.assert_array_equal(N(x), before)
