"""max_pool2d's 2x2 / stride 2 fast path against a NumPy reference: first
maximum of each window in window order, NaN wins, ties, odd sizes (the last
row/column left out), float32 and float64."""
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
