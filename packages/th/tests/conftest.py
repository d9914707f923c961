"""Fixtures for ember.th's tests; the helpers they use live in th_testing.py.

    make(shape, dtype, layout="contiguous", low=None, high=None,
         discrete=False, nonzero=False) -> (ember tensor, NumPy array)

builds a tensor and the equal NumPy array in one of th_testing.LAYOUTS
(contiguous, transposed, sliced with steps, broadcast, 0d, empty), from
fresh random data (never all zeros) drawn with the test's own seeded
generator.  Compare results with th_testing.assert_close, which has
per-dtype tolerances and checks float16/bfloat16 through float32.
"""
import os
import zlib

import numpy as np
import pytest

from th_testing import make_layout


@pytest.fixture
def rng(request):
    """A NumPy generator seeded from the test's id: fresh data per test,
    the same data on every run.  TH_TEST_SEED=n draws other data (to shake
    out tolerance problems)."""
    seed = zlib.crc32(request.node.nodeid.encode()) ^ int(os.environ.get("TH_TEST_SEED", "0"))
    return np.random.default_rng(seed)


@pytest.fixture
def make(rng):
    """make(shape, dtype, layout="contiguous", low=None, high=None,
    discrete=False, nonzero=False) -> (ember tensor, NumPy array) with equal
    values (see random_values)."""
    def make(shape, dtype, layout="contiguous", low=None, high=None, **kw):
        return make_layout(rng, shape, dtype, layout, low, high, **kw)
    return make
