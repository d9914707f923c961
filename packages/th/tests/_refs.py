"""Shared helpers of the reduction, linear algebra, indexing-op, sorting,
random and thread tests (test_reduce.py, test_linalg.py, test_index_ops.py,
test_sort.py, test_random.py, test_threads.py).  The layout/tolerance
helpers every test module uses live in th_testing.py; this module only adds
what those families need on top."""
import contextlib
import re

import numpy as np
import pytest

import ember.th as th

from th_testing import TOLERANCES, assert_close, to_numpy

# unit roundoff of the floating dtypes (error bounds of sums)
EPS = {th.float32: 2.0 ** -24, th.float64: 2.0 ** -53,
       th.float16: 2.0 ** -11, th.bfloat16: 2.0 ** -8}

NUMERIC = [th.float32, th.float64, th.float16, th.bfloat16, th.int8, th.uint8,
           th.int16, th.int32, th.int64]


def raises(exc, fragment):
    """pytest.raises(exc) whose message contains `fragment` (literally)."""
    return pytest.raises(exc, match=re.escape(fragment))


def f64(a):
    """A float64 NumPy copy (the reference computation's precision)."""
    return np.asarray(a, dtype=np.float64)


def close_sum(actual, expected, dtype, abs_sum, shape=None):
    """assert_close for sum-like results: besides the dtype's relative
    tolerance, an absolute error of a few roundoffs of the summed
    magnitude (cancellation makes a relative test meaningless)."""
    if dtype.is_floating_point:
        r, a = TOLERANCES[dtype]
        atol = max(a, 16 * EPS[dtype] * float(abs_sum))
        assert_close(actual, expected, dtype, rtol=r, atol=atol, shape=shape)
    else:
        assert_close(actual, expected, dtype, shape=shape)


def snapshot(t):
    """Copies t's values (and shape/strides) to check it was not changed."""
    return (tuple(t.shape), t.stride(), to_numpy(t))


def assert_unchanged(t, snap):
    shape, strides, values = snap
    assert tuple(t.shape) == shape and t.stride() == strides
    np.testing.assert_array_equal(to_numpy(t), values)


@contextlib.contextmanager
def num_threads(n):
    """Runs the block with n libTH threads, restoring the old count."""
    old = th.get_num_threads()
    th.set_num_threads(n)
    try:
        yield
    finally:
        th.set_num_threads(old)


def bits(t):
    """The exact bytes of t's values in logical order (for bit-for-bit
    comparisons, NaN payloads included)."""
    return to_numpy(t.contiguous()).tobytes()
