"""Hostile sizes and strides on CUDA tensors: libTHC's size arithmetic that
would wrap in int64 raises PyTorch's errors instead of making a tensor that
addresses device memory outside its storage (the rules of libTH's, see
packages/th/tests/test_limits.py).  A regression shows as a crash or a
wrong tensor, so every refused call also checks the data is untouched."""
import re

import pytest

import ember.thc as thc

from thc_testing import requires_device

pytestmark = requires_device

BIG = 2 ** 61
I64_MAX, I64_MIN = 2 ** 63 - 1, -2 ** 63


def err(exc, msg):
    return pytest.raises(exc, match=re.escape(msg))


def test_as_strided_wrapping_strides_refused():
    x = thc.arange(10, dtype=thc.float64)
    with err(RuntimeError, "Storage size calculation overflowed with sizes=[2, 2] and "
                           f"strides=[{BIG - 1}, {BIG + 10}]"):
        x.as_strided((2, 2), (BIG - 1, BIG + 10))
    with err(RuntimeError, "Storage size calculation overflowed"):
        x.as_strided((3, 3), (I64_MAX // 2, I64_MAX // 2))
    with err(RuntimeError, "requiring a storage size of 88 are out of bounds for storage "
                           "of size 80"):
        x.as_strided((11,), (1,))
    with err(RuntimeError, "Storage size calculation overflowed"):
        x.as_strided((2,), (1,), I64_MAX)
    assert x.cpu().tolist() == list(range(10))  # untouched
    # a size-1 dim's stride addresses nothing: any value is valid
    v = x.as_strided((1, 1), (I64_MAX, I64_MIN), 9)
    assert v.item() == 9.0


def test_as_strided_write_refused_leaves_data():
    x = thc.zeros(4)
    with err(RuntimeError, "Storage size calculation overflowed"):
        x.as_strided((2, 2), (BIG - 1, BIG + 10)).fill_(1.0)
    assert x.cpu().tolist() == [0.0] * 4


def test_empty_strided_and_empty_overflow():
    with err(RuntimeError, f"Storage size calculation overflowed with sizes=[3] and "
                           f"strides=[{BIG}]"):
        thc.empty_strided((3,), (BIG,))
    with err(RuntimeError, "Storage size calculation overflowed with sizes=[1099511627776, "
                           "1099511627776]"):
        thc.empty(2 ** 40, 2 ** 40)
    with err(RuntimeError, "Storage size calculation overflowed"):
        thc.empty(2 ** 62, dtype=thc.float64)
    with err(RuntimeError, "Trying to create tensor with negative dimension -3: [2, -3]"):
        thc.empty(2, -3)
    with err(RuntimeError, f"value {2 ** 64} does not fit in int64"):
        thc.empty(2 ** 64)
    e = thc.empty(0, 2 ** 40, 2 ** 40)  # no element: no overflow
    assert e.numel() == 0


def test_expand_overflow():
    with err(RuntimeError, "numel: integer multiplication overflow"):
        thc.ones(1, 1).expand(2 ** 40, 2 ** 40)
    v = thc.ones(1, 1).expand(2 ** 40, 4)
    assert v.numel() == 2 ** 42 and v.stride() == (0, 0)


def test_repeat_and_view_overflow():
    with pytest.raises(RuntimeError, match="repeat: sizes \\[2\\] repeated"):
        thc.ones(2).repeat(I64_MAX)
    with err(RuntimeError, "shape '[4294967296, 4294967296, 4]' is invalid for input of size 2"):
        thc.ones(2).view(2 ** 32, 2 ** 32, 4)
    with err(RuntimeError, "is invalid for input of size 2"):
        thc.ones(2).reshape(2 ** 32, 2 ** 32, -1)
    assert thc.ones(2).repeat(3).cpu().tolist() == [1.0] * 6


def test_huge_slice_step():
    x = thc.arange(10)
    assert x[3::I64_MAX].cpu().tolist() == [3]
    assert x[3:3:I64_MAX].cpu().tolist() == []
    assert x.unfold(0, 2, I64_MAX).cpu().tolist() == [[0, 1]]
