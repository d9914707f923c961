"""max_pool2d's fast paths against a NumPy reference: the 2x2 / stride 2
window, and the general windows' interior (outputs whose columns all lie
inside the row, pooled a chunk at a time, one tap after another over the
chunk): first maximum of each window in window order, the first NaN wins,
ties, odd sizes, padding, dilation, rows longer than a chunk, float32 and
float64."""
import numpy as np
import pytest

import ember.th as th
import ember.thnn as nn


def reference(a):
    n, c, h, w = a.shape
    oh, ow = h // 2, w // 2
    out = np.empty((n, c, oh, ow), a.dtype)
    ind = np.empty((n, c, oh, ow), np.int64)
    for i in range(oh):
        for j in range(ow):
            taps = [(2 * i, 2 * j), (2 * i, 2 * j + 1), (2 * i + 1, 2 * j), (2 * i + 1, 2 * j + 1)]
            for p in np.ndindex(n, c):
                vals = [a[p][t] for t in taps]
                nan = [k for k, v in enumerate(vals) if np.isnan(v)]
                k = nan[0] if nan else int(np.argmax(vals))  # argmax: the first maximum
                out[p + (i, j)] = vals[k]
                ind[p + (i, j)] = taps[k][0] * w + taps[k][1]
    return out, ind


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(2, 3, 8, 10), (1, 2, 9, 7), (1, 1, 2, 2)])
def test_max_pool_2x2(dtype, shape):
    g = np.random.default_rng()
    a = g.integers(-3, 3, shape).astype(dtype)  # small integers: many ties
    a[0, 0, 0, 1] = np.nan
    out, ind = nn.max_pool2d_forward(th.from_numpy(a), 2)
    ref_out, ref_ind = reference(a)
    np.testing.assert_array_equal(out.numpy(), ref_out)
    np.testing.assert_array_equal(ind.numpy(), ref_ind)


def general_reference(a, k, s, p, d):
    """Windows in row-major tap order; taps outside the input are skipped."""
    n, c, h, w = a.shape
    oh = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    out = np.empty((n, c, oh, ow), a.dtype)
    ind = np.empty((n, c, oh, ow), np.int64)
    flat = a.reshape(n, c, -1)
    for i in range(oh):
        for j in range(ow):
            taps = [(i * s[0] - p[0] + ti * d[0], j * s[1] - p[1] + tj * d[1])
                    for ti in range(k[0]) for tj in range(k[1])]
            taps = [r * w + q for r, q in taps if 0 <= r < h and 0 <= q < w]
            vals = flat[:, :, taps]                       # (n, c, taps)
            first_nan = np.where(np.isnan(vals).any(-1), np.isnan(vals).argmax(-1), -1)
            best = np.where(first_nan >= 0, first_nan, np.nanargmax(
                np.where(np.isnan(vals), -np.inf, vals), -1))
            ind[:, :, i, j] = np.asarray(taps)[best]
            out[:, :, i, j] = np.take_along_axis(vals, best[..., None], -1)[..., 0]
    return out, ind


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k, s, p, d, shape", [
    ((3, 3), (2, 2), (1, 1), (1, 1), (2, 2, 9, 300)),   # ResNet's stem pooling, long rows
    ((3, 3), (1, 1), (1, 1), (1, 1), (1, 2, 5, 260)),   # stride 1: two chunks and a tail
    ((2, 3), (1, 3), (0, 1), (2, 1), (1, 1, 7, 40)),    # dilation, stride 3
    ((3, 2), (2, 1), (1, 0), (1, 2), (2, 1, 6, 33)),
])
def test_max_pool_general_interior(dtype, k, s, p, d, shape):
    g = np.random.default_rng(7)
    a = g.integers(-3, 3, shape).astype(dtype)  # small integers: many ties
    a[0, 0, 1, 3] = np.nan
    a[0, -1, 2, 150 % shape[3]] = np.nan
    a[-1, 0, 0, 5:9] = np.nan                   # several NaNs in one window
    out, ind = nn.max_pool2d_forward(th.from_numpy(a), k, s, p, d, False)
    ref_out, ref_ind = general_reference(a, k, s, p, d)
    np.testing.assert_array_equal(out.numpy(), ref_out)
    np.testing.assert_array_equal(ind.numpy(), ref_ind)
