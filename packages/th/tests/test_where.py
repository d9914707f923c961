"""where(cond, a, b): the branch-free select of every element width, on
every layout of each operand, with a scalar on either side, against NumPy;
exact (a select copies bits: NaN and -0.0 pass through)."""
import numpy as np
import pytest

import ember.th as th
from th_testing import DTYPES, LAYOUTS, ids, make_layout, to_numpy


@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
@pytest.mark.parametrize("layout", LAYOUTS)
def test_where_layouts(d, layout):
    rng = np.random.default_rng()
    shape = (5, 37)  # not a multiple of a vector width
    a, an = make_layout(rng, shape, d, layout)
    b, bn = make_layout(rng, shape, d, "contiguous" if layout == "0d" else layout)
    cond, cn = make_layout(rng, shape, th.bool, layout)
    out = th.where(cond, a, b)
    expect = np.where(cn, an, bn)
    assert out.dtype is d and tuple(out.shape) == expect.shape
    np.testing.assert_array_equal(to_numpy(out).astype(np.float64),
                                  expect.astype(np.float64))


@pytest.mark.parametrize("d", [th.float32, th.float64, th.int16, th.int8],
                         ids=ids([th.float32, th.float64, th.int16, th.int8]))
def test_where_scalars_and_uint8_condition(d):
    rng = np.random.default_rng()
    a, an = make_layout(rng, (4, 1000), d)
    m = rng.random((4, 1000)) < 0.5
    for cond in (th.from_numpy(m), th.from_numpy(m.astype(np.uint8))):
        np.testing.assert_array_equal(to_numpy(th.where(cond, a, 3)),
                                      np.where(m, an, 3).astype(an.dtype))
        np.testing.assert_array_equal(to_numpy(th.where(cond, -2, a)),
                                      np.where(m, -2, an).astype(an.dtype))


def test_where_copies_bits():
    a = th.from_numpy(np.array([np.nan, -0.0, np.inf, 1.0] * 9, np.float32))
    b = th.from_numpy(np.array([1.0, 2.0, -np.inf, -0.0] * 9, np.float32))
    m = th.from_numpy(np.array([True, True, False, False] * 9))
    got = th.where(m, a, b).numpy()
    expect = np.where(m.numpy(), a.numpy(), b.numpy())
    assert got.tobytes() == expect.tobytes()
