"""Hostile sizes and strides through the ember front: each once wrote
outside a buffer or returned a wrong size; now libTH raises PyTorch's
RuntimeError and the data is left intact."""
import re

import numpy as np
import pytest

import ember

BIG = 2 ** 61
I64_MAX = 2 ** 63 - 1


def err(msg):
    return pytest.raises(RuntimeError, match=re.escape(msg))


def test_as_strided_out_of_range_write_refused():
    x = ember.arange(10, dtype=ember.float64)
    with err("Storage size calculation overflowed with sizes=[2, 2]"):
        y = x.as_strided((2, 2), (BIG - 1, BIG + 10))
        y[1, 0] = 123.0
    assert x.tolist() == [float(i) for i in range(10)]


def test_empty_strided_overflow_refused():
    with err(f"Storage size calculation overflowed with sizes=[3] and strides=[{BIG}]"):
        ember.empty_strided((3,), (BIG,)).fill_(1.0)


def test_expand_numel_overflow_refused():
    with err("numel: integer multiplication overflow"):
        ember.ones(1, 1).expand(2 ** 40, 2 ** 40).numel()
    assert ember.ones(1, 1).expand(2 ** 40, 2).numel() == 2 ** 41


def test_bincount_of_int64_max_refused():
    with err(f"maximum value of input overflowed, it should be < {I64_MAX} but got {I64_MAX}"):
        ember.bincount(ember.tensor([I64_MAX]))
    assert ember.bincount(ember.tensor([0, 2, 2])).tolist() == [1, 0, 2]


def test_int64_arithmetic_wraps():
    a = ember.tensor([I64_MAX, -I64_MAX - 1])
    assert (a + 1).tolist() == [-I64_MAX - 1, -I64_MAX]
    assert (-a).tolist() == [-I64_MAX, -I64_MAX - 1]
    assert (a * 2).tolist() == [-2, 0]
    assert a.abs().tolist() == [I64_MAX, -I64_MAX - 1]


def test_from_numpy_unaligned():
    buf = bytearray(8 * 4 + 1)
    a = np.frombuffer(buf, dtype=np.float64, offset=1, count=4)
    with pytest.raises(ValueError, match="not aligned"):
        ember.from_numpy(a)
    t = ember.as_tensor(a)
    assert t.tolist() == a.tolist()
