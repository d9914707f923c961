"""Hostile window, padding and kernel sizes: libTHCUNN's output-size
arithmetic is overflow-checked (libTHNN's rules), so a huge padding,
dilation or stride raises a RuntimeError in libTHNN's words instead of a
wrapped output size.  Runs on a GPU or on libTHC's emulated device."""
import re

import pytest

import ember.th as th
import ember.thc as thc
import ember.thcunn as k
from ember.thcunn._lib import last_error, lib

thnn = pytest.importorskip("ember.thnn", reason="the CPU kernels (ember-thnn) are the reference")

pytestmark = pytest.mark.needs_device
HUGE = 2 ** 62
I64_MAX = 2 ** 63 - 1


def err(msg):
    return pytest.raises(RuntimeError, match=re.escape(msg))


def window(n, kernel, stride, padding, dilation, ceil_mode):
    """thcunn_window_output_size, its error raised."""
    r = lib.thcunn_window_output_size(n, kernel, stride, padding, dilation, int(ceil_mode))
    if r < 0:
        raise last_error()
    return r


def test_window_output_size_overflow():
    with err("window output size: input size 4 with padding 4611686018427387904, kernel 3 "
             "and dilation 1 overflows int64"):
        window(4, 3, 1, HUGE, 1, False)
    with err("window output size: input size 4 with padding 0, kernel 4611686018427387904 "
             "and dilation 4 overflows int64"):
        window(4, HUGE, 1, 0, 4, False)
    # the ceil-mode last-window check multiplies (out - 1) * stride: no wrap
    assert window(I64_MAX, 2, HUGE, 0, 1, True) == 2
    assert window(4, 3, 1, 1, 1, False) == 4
    # the same sizes as libTHNN's, refused where it refuses
    for args in [(4, 3, 1, HUGE, 1, 0), (I64_MAX, 2, HUGE, 0, 1, 1), (10, 3, 2, 1, 2, 1),
                 (I64_MAX, 1, 1, 0, 1, 0), (5, 2, I64_MAX, 1, 1, 1), (2, 5, 1, 1, 1, 0)]:
        assert lib.thcunn_window_output_size(*args) == thnn._lib.thnn_window_output_size(*args)


@pytest.mark.parametrize("call", ["max", "avg"])
def test_huge_pool_padding_refused(call):
    x = thc.ones(1, 1, 4, 4)
    with err("pad should be at most half of effective kernel size, but got "
             f"pad={HUGE}, kernel_size=3"):
        if call == "max":
            k.max_pool2d_forward(x, (3, 3), (1, 1), (HUGE, HUGE), (1, 1), False)
        else:
            k.avg_pool2d_forward(x, (3, 3), (1, 1), (HUGE, HUGE), False, True)
    with err("pad should be at most half of"):
        k.max_pool3d_forward(thc.ones(1, 1, 4, 4, 4), (3, 3, 3), (1, 1, 1), (HUGE, 0, 0))
    # a huge kernel with a huge pad passes the pad check; the window overflows
    with err("overflows int64"):
        k.max_pool2d_forward(x, (HUGE, HUGE), (1, 1), (HUGE // 2, HUGE // 2), (4, 4), False)
    assert x.cpu().numpy().sum() == 16  # untouched


def test_huge_pool_stride_ceil_mode():
    xg = thc.from_numpy(th.arange(16.0).reshape(1, 1, 4, 4).numpy())
    og, _ = k.max_pool2d_forward(xg, (2, 2), (HUGE, HUGE), (1, 1), (1, 1), True)
    oc, _ = thnn.max_pool2d_forward(th.arange(16.0).reshape(1, 1, 4, 4), (2, 2),
                                    (HUGE, HUGE), (1, 1), (1, 1), True)
    assert og.cpu().numpy().tolist() == oc.numpy().tolist()


def test_conv_overflow():
    x, w = thc.ones(1, 1, 4, 4), thc.ones(1, 1, 3, 3)
    with err("conv2d_forward: input size 4 with padding 4611686018427387904, kernel 3 and "
             "dilation 1 overflows int64"):
        k.conv2d_forward(x, w, None, 1, HUGE, 1, 1)
    with err("overflows int64"):
        k.conv2d_forward(x, w, None, 1, 0, HUGE, 1)
    with err("overflows int64"):
        k.conv3d_forward(thc.ones(1, 1, 4, 4, 4), thc.ones(1, 1, 3, 3, 3), None, 1,
                         (HUGE, 0, 0), 1, 1)
    with err("the output size overflows int64"):
        k.conv_transpose2d_forward(x, w, None, (HUGE, 1), 0, 0, 1, 1)


def test_padding_overflow():
    x = thc.ones(1, 2, 4)
    with err("replication_pad1d: the padded size overflows int64"):
        k.replication_pad1d_forward(x, (I64_MAX, 1))
    with err("Padding size should be less than the corresponding input dimension"):
        k.reflection_pad1d_forward(x, (I64_MAX, I64_MAX))
    with err("does not fit in int64"):
        k.replication_pad1d_forward(x, (2 ** 63, 0))
    assert x.cpu().numpy().sum() == 8
