"""Hostile sizes, strides and values: size arithmetic that would wrap in
int64 raises PyTorch's errors instead of addressing memory outside a
storage; integer arithmetic wraps like PyTorch's; unaligned NumPy data is
refused by from_numpy (copied by as_tensor).  Each crash here once ran in
a subprocess-free test: a regression shows as a crash of the test run."""
import re

import numpy as np
import pytest

import ember.th as th
from ember.th.testing import HostileSizes, I64_MAX


def err(exc, msg):
    return pytest.raises(exc, match=re.escape(msg))


# the checks ember.thc's tensors pass too (ember.th.testing)
LIMITS = HostileSizes(th, lambda t: t.tolist())
(test_as_strided_wrapping_strides_refused, test_empty_strided_and_empty_overflow,
 test_expand_overflow, test_repeat_and_view_overflow, test_huge_slice_step) = LIMITS.tests()


def test_bincount_max_int64():
    with err(RuntimeError, f"maximum value of input overflowed, it should be < {I64_MAX} but "
                           f"got {I64_MAX}"):
        th.bincount(th.tensor([I64_MAX]))


@pytest.mark.parametrize("dtype,np_dtype", [(th.int64, np.int64), (th.int32, np.int32),
                                            (th.int16, np.int16), (th.int8, np.int8)])
def test_integer_arithmetic_wraps(dtype, np_dtype):
    info = np.iinfo(np_dtype)
    vals = np.array([info.min, info.min + 1, -1, 0, 1, info.max - 1, info.max], dtype=np_dtype)
    a, b = np.meshgrid(vals, vals)
    ta, tb = th.tensor(a), th.tensor(b)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal((ta + tb).numpy(), a + b)
        np.testing.assert_array_equal((ta - tb).numpy(), a - b)
        np.testing.assert_array_equal((ta * tb).numpy(), a * b)
        np.testing.assert_array_equal((-ta).numpy(), -a)
        np.testing.assert_array_equal(ta.abs().numpy(), np.abs(a))
        np.testing.assert_array_equal(ta.square().numpy(), a * a)
        e = np.abs(b) % 70
        np.testing.assert_array_equal((ta ** th.tensor(e)).numpy(), a ** e)


def test_from_numpy_unaligned_refused_as_tensor_copies():
    buf = bytearray(8 * 5 + 1)
    a = np.frombuffer(buf, dtype=np.float64, offset=1, count=5)
    assert not a.flags.aligned
    with err(ValueError, "not aligned to its 8-byte float64 elements"):
        th.from_numpy(a)
    t = th.as_tensor(a)  # a copy, aligned
    assert t.data_ptr() % 8 == 0 and t.tolist() == a.tolist()
    assert (t + 1).tolist() == (a + 1).tolist()
    # aligned arrays, even at an offset into a buffer, are still shared
    b = np.frombuffer(buf, dtype=np.float64, offset=0, count=5)
    s = th.from_numpy(b)
    b_w = np.frombuffer(memoryview(buf), dtype=np.float64, count=5)
    assert s.data_ptr() == b_w.__array_interface__["data"][0]


@pytest.mark.parametrize("dtype", [th.int8, th.uint8, th.int16, th.int32])
def test_divisor_zero_in_the_compute_dtype(dtype):
    """2**(8 * itemsize) (and 2**32) is 0 once cast to the narrow compute
    dtype, as in PyTorch: the divisor is checked as the loops see it (a
    hardware trap otherwise)."""
    a = th.tensor([1, 2, 3], dtype=dtype)
    for d in (2 ** (8 * a.element_size()), 2 ** 32):
        for f in (lambda: a // d, lambda: a % d, lambda: a.fmod(d),
                  lambda: th.div(a, d, rounding_mode="trunc")):
            with err(RuntimeError, "ZeroDivisionError"):
                f()
