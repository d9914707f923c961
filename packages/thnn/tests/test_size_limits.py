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
    # an invalid window sizes an empty output and the kernel says why: it
    # checks the half-kernel rule without multiplying the padding (C test_limits)
    with pytest.raises(RuntimeError, match=f"pad should be at most half of effective kernel "
                                           f"size, but got pad={HUGE}, kernel_size=3"):
        thnn.max_pool2d_forward(x, 3, 1, HUGE)
    with pytest.raises(RuntimeError, match="overflows int64"):
        thnn.max_pool2d_forward(x, HUGE, 1, HUGE // 2, 4)
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


@pytest.mark.parametrize("dims", [2, 3])
def test_avg_pool_huge_kernel_divisor(dims):
    """A kernel of 2**42 per dim with padding 2**41: the padded window
    area (2**84) does not fit in int64; the divisor is computed in double."""
    k, p = 2 ** 42, 2 ** 41
    if dims == 2:
        x = th.ones(1, 1, 5, 5, dtype=th.float64)
        pool = lambda cip: thnn.avg_pool2d_forward(x, k, 1, p, count_include_pad=cip)  # noqa: E731
    else:
        x = th.ones(1, 1, 1, 5, 5, dtype=th.float64)
        pool = lambda cip: thnn.avg_pool3d_forward(x, (1, k, k), 1, (0, p, p),  # noqa: E731
                                                   count_include_pad=cip)
    inside = pool(False).numpy()
    assert inside.shape[-2:] == (6, 6)
    assert ((inside == 1.0) | (inside == 0.0)).all() and (inside == 1.0).any()
    padded = pool(True).numpy()
    assert (padded >= 0).all() and (padded < 1e-20).all() and (padded > 0).any()


def test_replication_pad_crop_beyond_int64():
    """padding (-2**63, 2**63 - 1) keeps 4 of 5 columns; every output maps
    past the last input (o + 2**63 would wrap), so it replicates the last."""
    x = th.arange(5, dtype=th.float32).reshape(1, 1, 5)
    y = thnn.replication_pad1d_forward(x, [-2 ** 63, I64_MAX])
    assert y.tolist() == [[[4.0, 4.0, 4.0, 4.0]]]
