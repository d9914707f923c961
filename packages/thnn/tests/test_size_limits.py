"""Hostile paddings, dilations, strides and groups: output sizes that do
not fit in int64 raise a RuntimeError (libTHNN computes them with
overflow-checked arithmetic) instead of wrapping; sizes at the int64
limit that do fit are still computed exactly."""
import pytest

import ember.th as th
import ember.thnn as thnn
from ember.thnn._lib import ffi as _ffi, lib as _lib

I64_MAX = 2 ** 63 - 1
HUGE = 2 ** 62  # 2 * HUGE wraps


def test_window_output_size_overflow():
    for args in ((5, 3, 1, HUGE, 1, 0), (5, 3, 1, 0, HUGE, 0)):
        assert _lib.thnn_window_output_size(*args) == -1
        assert "overflows int64" in _ffi.string(_lib.thnn_last_error()).decode()
    assert _lib.thnn_window_output_size(I64_MAX, 1, 1, 0, 1, 1) == I64_MAX
    assert _lib.thnn_window_output_size(10, 3, 2, 1, 1, 1) == 6


def test_conv2d_huge_padding_raises():
    x, w = th.ones(1, 1, 5, 5), th.ones(1, 1, 3, 3)
    with pytest.raises(RuntimeError, match="overflows int64"):
        thnn.conv2d_forward(x, w, padding=HUGE)
    with pytest.raises(RuntimeError, match="overflows int64"):
        thnn.conv2d_forward(x, w, dilation=HUGE)


def test_conv2d_huge_groups_raises():
    x, w = th.ones(1, 1, 5, 5), th.ones(0, 1, 3, 3)
    with pytest.raises(RuntimeError):
        thnn.conv2d_forward(x, w, groups=I64_MAX)


def test_max_pool2d_huge_padding_raises():
    x = th.ones(1, 1, 5, 5)
    # the binding sizes the output first (window size), the kernel checks
    # the half-kernel rule without multiplying the padding (C test_limits)
    with pytest.raises(RuntimeError, match="overflows int64"):
        thnn.max_pool2d_forward(x, 3, 1, HUGE)
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel size"):
        thnn.max_pool2d_forward(x, 3, 1, 2)


def test_conv3d_huge_padding_raises():
    x, w = th.ones(1, 1, 3, 3, 3), th.ones(1, 1, 2, 2, 2)
    with pytest.raises(RuntimeError, match="overflows int64"):
        thnn.conv3d_forward(x, w, padding=HUGE)


def test_conv_transpose2d_huge_stride_raises():
    x, w = th.ones(1, 1, 5, 5), th.ones(1, 1, 3, 3)
    # the binding computes the output shape in Python ints: too large for
    # int64 there already (libTHNN's own check is in C test_limits)
    with pytest.raises((RuntimeError, OverflowError)):
        thnn.conv_transpose2d_forward(x, w, stride=HUGE)


def test_conv2d_stride_at_int64_max_is_one_window():
    """A stride of 2**63 - 1 with padding: one output column, computed
    without overflowing the first-valid-position arithmetic (-off + stride)."""
    x = th.arange(1 * 2 * 5 * 5, dtype=th.float64).reshape(1, 2, 5, 5)
    w = th.arange(1 * 2 * 2 * 2, dtype=th.float64).reshape(1, 2, 2, 2)
    huge = thnn.conv2d_forward(x, w, stride=(1, I64_MAX), padding=2)
    ref = thnn.conv2d_forward(x, w, stride=(1, 1000), padding=2)
    assert huge.shape == ref.shape == (1, 1, 8, 1)
    assert huge.tolist() == ref.tolist()
    gi = thnn.conv2d_backward_input(th.ones(1, 1, 8, 1, dtype=th.float64), x.shape, w,
                                    stride=(1, I64_MAX), padding=2)
    gr = thnn.conv2d_backward_input(th.ones(1, 1, 8, 1, dtype=th.float64), x.shape, w,
                                    stride=(1, 1000), padding=2)
    assert gi.tolist() == gr.tolist()
