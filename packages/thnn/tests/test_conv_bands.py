"""conv2d's forward unfolds bands of output rows (about 2 MiB of columns at
a time): shapes large enough to need several bands, with a partial last
band, strides and dilation, against a float64 NumPy reference."""
import numpy as np
import pytest

import ember.th as th
import ember.thnn as nn


def conv2d_ref(x, w, b, stride, pad, dil):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - dil * (kh - 1) - 1) // stride + 1
    ow = (wd + 2 * pad - dil * (kw - 1) - 1) // stride + 1
    out = np.zeros((n, o, oh, ow)) + b.reshape(1, o, 1, 1)
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i * dil: i * dil + stride * (oh - 1) + 1: stride,
                       j * dil: j * dil + stride * (ow - 1) + 1: stride]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return out


@pytest.mark.parametrize("shape,stride,pad,dil", [
    ((2, 64, 61, 90), 1, 1, 1),    # 576 * 90 * 4 bytes a row: bands of 40 rows, then 21
    ((1, 96, 75, 75), 2, 2, 2),    # strided and dilated, several bands
])
def test_banded_forward_matches_reference(shape, stride, pad, dil):
    g = np.random.default_rng()
    x = g.standard_normal(shape).astype(np.float32)
    w = g.standard_normal((5, shape[1], 3, 3)).astype(np.float32)
    b = g.standard_normal(5).astype(np.float32)
    got = nn.conv2d_forward(th.from_numpy(x), th.from_numpy(w), th.from_numpy(b),
                            stride, pad, dil).numpy()
    ref = conv2d_ref(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64),
                     stride, pad, dil)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-3)


def assert_adjoint(got, terms):
    """got (a float64 sum of float32 results) equals the sum of terms (its
    float64 reference, term by term).  On fresh random data the sum can
    cancel to near zero, where a relative tolerance alone fails on float32
    rounding: the rounding of a sum of N terms grows like the root of the
    terms' squares, so that sets the absolute tolerance too (a wrong
    gradient is off by about that root itself, 1e5 times more)."""
    inner = float(terms.sum())
    np.testing.assert_allclose(got, inner, rtol=1e-4,
                               atol=1e-5 * float(np.sqrt((terms ** 2).sum())))


@pytest.mark.parametrize("shape,stride,pad,dil", [
    ((2, 64, 61, 90), 1, 1, 1),
    ((1, 96, 75, 75), 2, 2, 2),
])
def test_banded_backward_kernels_are_adjoint_to_forward(shape, stride, pad, dil):
    """<conv(x, w), g> == <x, backward_input(g, w)> == <w, backward_params(g, x)>,
    summed in float64."""
    g = np.random.default_rng()
    x = g.standard_normal(shape).astype(np.float32)
    w = g.standard_normal((5, shape[1], 3, 3)).astype(np.float32)
    y = nn.conv2d_forward(th.from_numpy(x), th.from_numpy(w), None, stride, pad, dil)
    gy = g.standard_normal(tuple(y.shape)).astype(np.float32)
    gx = nn.conv2d_backward_input(th.from_numpy(gy), shape, th.from_numpy(w), stride, pad,
                                  dil).numpy()
    gw, _ = nn.conv2d_backward_params(th.from_numpy(gy), th.from_numpy(x), w.shape, stride,
                                      pad, dil, need_bias=False)
    ref = conv2d_ref(x.astype(np.float64), w.astype(np.float64), np.zeros(5), stride, pad, dil)
    terms = ref * gy
    assert_adjoint(float((x.astype(np.float64) * gx).sum()), terms)
    assert_adjoint(float((w.astype(np.float64) * gw.numpy()).sum()), terms)


@pytest.mark.parametrize("groups", [1, 2])
def test_sample_batches_for_small_planes(groups):
    """10x10 outputs: 5 samples per GEMM, so 7 samples make a full and a
    partial batch; forward against the reference, backward kernels by the
    adjoint identities."""
    g = np.random.default_rng()
    shape, stride, pad, dil = (7, 4, 10, 10), 1, 1, 1
    x = g.standard_normal(shape).astype(np.float32)
    w = g.standard_normal((6, 4 // groups, 3, 3)).astype(np.float32)
    b = g.standard_normal(6).astype(np.float32)
    y = nn.conv2d_forward(th.from_numpy(x), th.from_numpy(w), th.from_numpy(b), stride, pad,
                          dil, groups).numpy()
    # the grouped reference: each group's channels on their own
    ref = np.concatenate([conv2d_ref(x[:, i * (4 // groups):(i + 1) * (4 // groups)].astype(
        np.float64), w[i * (6 // groups):(i + 1) * (6 // groups)].astype(np.float64),
        b[i * (6 // groups):(i + 1) * (6 // groups)].astype(np.float64), stride, pad, dil)
        for i in range(groups)], axis=1)
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-4)
    gy = g.standard_normal(y.shape).astype(np.float32)
    gx = nn.conv2d_backward_input(th.from_numpy(gy), shape, th.from_numpy(w), stride, pad, dil,
                                  groups).numpy()
    gw, gb = nn.conv2d_backward_params(th.from_numpy(gy), th.from_numpy(x), w.shape, stride,
                                       pad, dil, groups)
    terms = (ref - b.reshape(1, 6, 1, 1)) * gy
    assert_adjoint(float((x.astype(np.float64) * gx).sum()), terms)
    assert_adjoint(float((w.astype(np.float64) * gw.numpy()).sum()), terms)
    np.testing.assert_allclose(gb.numpy(), gy.sum((0, 2, 3)), rtol=1e-4, atol=1e-4)
