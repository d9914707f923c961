"""conv2d's Winograd F(4x4, 3x3) path (float32, 3x3, stride 1, dilation 1,
one group, at least 16 channels each way and 36 output positions; taken by
default when the batch and plane repay the filter transform, always with
EMBER_CONV_WINOGRAD=1): the forward and both gradients against
float64 NumPy references and against the im2col path
(EMBER_CONV_WINOGRAD=0), over odd sizes, paddings 0-2, batches, bias or
none, non-contiguous inputs, chunks of tile rows, and 1 or 2 threads;
shapes outside the path still take im2col."""
import numpy as np
import pytest

import ember.th as th
import ember.thnn as nn

from test_conv import conv2d_ref

CASES = [  # (N, C, H, W), O, padding
    ((2, 16, 9, 11), 16, (1, 1)),
    ((3, 24, 14, 14), 32, (1, 1)),
    ((1, 16, 8, 8), 20, (0, 0)),
    ((2, 20, 7, 7), 16, (2, 2)),
    ((1, 17, 13, 6), 18, (1, 0)),      # odd sizes, one padding each way
    ((4, 64, 30, 31), 64, (1, 1)),     # several chunks of tile rows
    ((6, 16, 28, 28), 16, (1, 1)),     # taken by default (unset)
    ((8, 16, 64, 63), 16, (1, 1)),     # the weight gradient's sums over several chunks
]


def grad_weight_ref(gy, x, p):
    """sum over samples and output positions of gy times the padded input
    window at each tap (float64)."""
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    oh, ow = gy.shape[2:]
    gw = np.empty((gy.shape[1], x.shape[1], 3, 3))
    for i in range(3):
        for j in range(3):
            gw[:, :, i, j] = np.einsum("nohw,nchw->oc", gy, xp[:, :, i:i + oh, j:j + ow])
    return gw


def grad_input_ref(gy, w, p, shape):
    """The input gradient as a convolution of gy with the flipped,
    transposed filters and padding 2 - p (float64)."""
    wt = np.ascontiguousarray(w[:, :, ::-1, ::-1].transpose(1, 0, 2, 3))
    gi = conv2d_ref(gy, wt, None, (1, 1), (2 - p[0], 2 - p[1]), (1, 1), 1)
    return gi[:, :, :shape[2], :shape[3]]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape, o, p", CASES)
def test_winograd_against_references_and_im2col(shape, o, p, threads, monkeypatch):
    rng = np.random.default_rng(11)
    x = rng.standard_normal(shape).astype(np.float32)
    w = (rng.standard_normal((o, shape[1], 3, 3)) / (3 * np.sqrt(shape[1]))).astype(np.float32)
    b = rng.standard_normal(o).astype(np.float32)
    if shape[0] < 6:      # small: forced (the default takes it from about this size on)
        monkeypatch.setenv("EMBER_CONV_WINOGRAD", "1")
    old = th.get_num_threads()
    th.set_num_threads(threads)
    try:
        y = nn.conv2d_forward(th.from_numpy(x), th.from_numpy(w), th.from_numpy(b), 1, p).numpy()
        gy = rng.standard_normal(y.shape).astype(np.float32)
        gi = nn.conv2d_backward_input(th.from_numpy(gy), shape, th.from_numpy(w), 1, p).numpy()
        gw = nn.conv2d_backward_params(th.from_numpy(gy), th.from_numpy(x), w.shape, 1, p,
                                       need_bias=False)[0].numpy()
        monkeypatch.setenv("EMBER_CONV_WINOGRAD", "0")
        y_im2col = nn.conv2d_forward(th.from_numpy(x), th.from_numpy(w), th.from_numpy(b),
                                     1, p).numpy()
        gi_im2col = nn.conv2d_backward_input(th.from_numpy(gy), shape, th.from_numpy(w),
                                             1, p).numpy()
        gw_im2col = nn.conv2d_backward_params(th.from_numpy(gy), th.from_numpy(x), w.shape, 1,
                                              p, need_bias=False)[0].numpy()
    finally:
        th.set_num_threads(old)
    want = conv2d_ref(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64),
                      (1, 1), p, (1, 1), 1)
    want_gi = grad_input_ref(gy.astype(np.float64), w.astype(np.float64), p, shape)
    want_gw = grad_weight_ref(gy.astype(np.float64), x.astype(np.float64), p)
    # float32 rounding of the transforms (which scale values by up to 8 and
    # 1/24): a few 1e-6 of the largest output, about 1e-5 of the largest
    # weight gradient entry (summed over every tile)
    for got, other, ref, tol in ((y, y_im2col, want, 1e-5), (gi, gi_im2col, want_gi, 1e-5),
                                 (gw, gw_im2col, want_gw, 3e-5)):
        scale = np.abs(ref).max()
        assert np.abs(got - ref).max() <= tol * scale
        assert np.abs(got - other).max() <= tol * scale
        assert not np.array_equal(got, other) or got.size < 64   # the other path ran


def test_the_same_bits_on_one_and_two_threads(monkeypatch):
    """Chunks of tile rows are computed alone, so the thread count changes
    nothing."""
    monkeypatch.setenv("EMBER_CONV_WINOGRAD", "1")
    rng = np.random.default_rng(15)
    x = th.from_numpy(rng.standard_normal((4, 64, 30, 31)).astype(np.float32))
    w = th.from_numpy(rng.standard_normal((48, 64, 3, 3)).astype(np.float32))
    gy = th.from_numpy(rng.standard_normal((4, 48, 30, 31)).astype(np.float32))
    old, runs = th.get_num_threads(), []
    try:
        for n in (1, 2):
            th.set_num_threads(n)
            runs.append([nn.conv2d_forward(x, w, None, 1, 1).numpy(),
                         nn.conv2d_backward_input(gy, tuple(x.shape), w, 1, 1).numpy(),
                         nn.conv2d_backward_params(gy, x, tuple(w.shape), 1, 1,
                                                   need_bias=False)[0].numpy()])
    finally:
        th.set_num_threads(old)
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)


def test_no_bias_and_non_contiguous_input(monkeypatch):
    monkeypatch.setenv("EMBER_CONV_WINOGRAD", "1")
    rng = np.random.default_rng(12)
    x = rng.standard_normal((2, 10, 12, 16)).astype(np.float32)   # (N, H, W, C) memory
    w = (rng.standard_normal((16, 16, 3, 3)) * 0.1).astype(np.float32)
    xt = th.from_numpy(x).permute(0, 3, 1, 2)                     # (2, 16, 10, 12), strided
    y = nn.conv2d_forward(xt, th.from_numpy(w), None, 1, 1).numpy()
    monkeypatch.setenv("EMBER_CONV_WINOGRAD", "0")
    assert not np.array_equal(y, nn.conv2d_forward(xt, th.from_numpy(w), None, 1, 1).numpy())
    want = conv2d_ref(x.transpose(0, 3, 1, 2).astype(np.float64), w.astype(np.float64), None,
                      (1, 1), (1, 1), (1, 1), 1)
    assert np.abs(y - want).max() <= 1e-5 * np.abs(want).max()
    # the weight gradient from a strided input and a strided grad_output
    gy = rng.standard_normal((2, 10, 12, 16)).astype(np.float32)
    gyt = th.from_numpy(gy).permute(0, 3, 1, 2)
    monkeypatch.setenv("EMBER_CONV_WINOGRAD", "1")
    gw = nn.conv2d_backward_params(gyt, xt, (16, 16, 3, 3), 1, 1, need_bias=False)[0].numpy()
    want_gw = grad_weight_ref(gy.transpose(0, 3, 1, 2).astype(np.float64),
                              x.transpose(0, 3, 1, 2).astype(np.float64), (1, 1))
    assert np.abs(gw - want_gw).max() <= 3e-5 * np.abs(want_gw).max()


@pytest.mark.parametrize("shape, wshape, stride, dilation, groups", [
    ((1, 8, 10, 10), (16, 8, 3, 3), 1, 1, 1),      # too few input channels
    ((1, 16, 4, 4), (16, 16, 3, 3), 1, 1, 1),      # too few output positions
    ((1, 16, 12, 12), (16, 16, 3, 3), 2, 1, 1),    # stride 2
    ((1, 16, 12, 12), (16, 16, 3, 3), 1, 2, 1),    # dilation 2
    ((1, 32, 12, 12), (32, 16, 3, 3), 1, 1, 2),    # groups
])
def test_other_shapes_take_im2col(shape, wshape, stride, dilation, groups, monkeypatch):
    monkeypatch.setenv("EMBER_CONV_WINOGRAD", "1")   # even when asked for
    rng = np.random.default_rng(13)
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal(wshape).astype(np.float32)
    y = nn.conv2d_forward(th.from_numpy(x), th.from_numpy(w), None, stride, 1, dilation,
                          groups).numpy()
    monkeypatch.setenv("EMBER_CONV_WINOGRAD", "0")
    y2 = nn.conv2d_forward(th.from_numpy(x), th.from_numpy(w), None, stride, 1, dilation,
                           groups).numpy()
    np.testing.assert_array_equal(y, y2)                 # the same path: the same bits


def test_small_batches_and_planes_take_im2col_by_default(monkeypatch):
    """ResNet-18's 512-channel 7x7 layers at batch 8: the filter transform
    costs more than the products save."""
    monkeypatch.delenv("EMBER_CONV_WINOGRAD", raising=False)
    rng = np.random.default_rng(14)
    x = th.from_numpy(rng.standard_normal((2, 32, 7, 7)).astype(np.float32))
    w = th.from_numpy(rng.standard_normal((32, 32, 3, 3)).astype(np.float32))
    y = nn.conv2d_forward(x, w, None, 1, 1).numpy()
    monkeypatch.setenv("EMBER_CONV_WINOGRAD", "0")
    np.testing.assert_array_equal(y, nn.conv2d_forward(x, w, None, 1, 1).numpy())


def test_weight_gradient_over_few_tiles_takes_im2col_by_default(monkeypatch):
    """14x14 planes at batch 4 (64 tiles): the forward takes the path, the
    weight gradient's products over so few tiles do not repay it (from
    128, ResNet-18's 14x14 layers at batch 8, they do)."""
    monkeypatch.delenv("EMBER_CONV_WINOGRAD", raising=False)
    rng = np.random.default_rng(16)
    x = th.from_numpy(rng.standard_normal((4, 16, 14, 14)).astype(np.float32))
    w = th.from_numpy(rng.standard_normal((16, 16, 3, 3)).astype(np.float32))
    gy = th.from_numpy(rng.standard_normal((4, 16, 14, 14)).astype(np.float32))

    def run():
        return (nn.conv2d_forward(x, w, None, 1, 1).numpy(),
                nn.conv2d_backward_params(gy, x, (16, 16, 3, 3), 1, 1,
                                          need_bias=False)[0].numpy())
    y, gw = run()
    monkeypatch.setenv("EMBER_CONV_WINOGRAD", "0")
    y0, gw0 = run()
    assert not np.array_equal(y, y0)
    np.testing.assert_array_equal(gw, gw0)
