"""PyTorch-style repr: fixed and scientific floats, integer-valued floats
("1."), ints, bools, 0-d, empty (size=...), the dtype suffix for
non-default dtypes, and summarised large tensors."""
import numpy as np
import pytest

import ember.th as th

from th_testing import new_tensor


def T(values, dtype=None):
    """A tensor from literal values (bfloat16 through float32)."""
    a = np.asarray(values)
    if dtype is None:
        return th.tensor(values)
    return new_tensor(a, dtype)


# the strings are PyTorch 2.x's, with "torch." spelled "ember."
CASES = [
    (lambda: T([1.5, 2.25, -3.125]), "tensor([ 1.5000,  2.2500, -3.1250])"),
    (lambda: T([1.0, 2.0, 3.0]), "tensor([1., 2., 3.])"),
    (lambda: T([[1.0, -2.0], [30.0, 4.0]]), "tensor([[ 1., -2.],\n        [30.,  4.]])"),
    (lambda: T([0.0, 0.0]), "tensor([0., 0.])"),
    (lambda: T([1e-05, 1.0, 100.0]), "tensor([1.0000e-05, 1.0000e+00, 1.0000e+02])"),
    (lambda: T([1e10, 1.0]), "tensor([1.0000e+10, 1.0000e+00])"),
    (lambda: T([0.1, 123456.7]), "tensor([1.0000e-01, 1.2346e+05])"),
    (lambda: T([1e-10]), "tensor([1.0000e-10])"),
    (lambda: T([123456789.0]), "tensor([1.2346e+08])"),
    (lambda: T([float("inf"), -float("inf"), 1.5]), "tensor([   inf,   -inf, 1.5000])"),
    (lambda: th.arange(30.0) / 7,
     "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n"
     "        1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429, 2.2857, 2.4286,\n"
     "        2.5714, 2.7143, 2.8571, 3.0000, 3.1429, 3.2857, 3.4286, 3.5714, 3.7143,\n"
     "        3.8571, 4.0000, 4.1429])"),
    (lambda: T([[1, 2], [3, 40]]), "tensor([[ 1,  2],\n        [ 3, 40]])"),
    (lambda: T([-1, 5, 100]), "tensor([ -1,   5, 100])"),
    (lambda: T([True, False]), "tensor([ True, False])"),
    (lambda: T([[True], [False]]), "tensor([[ True],\n        [False]])"),
    (lambda: th.tensor(3.5), "tensor(3.5000)"),
    (lambda: th.tensor(-0.5), "tensor(-0.5000)"),
    (lambda: th.tensor(7), "tensor(7)"),
    (lambda: th.tensor(True), "tensor(True)"),
    (lambda: th.zeros(0), "tensor([])"),
    (lambda: th.zeros(2, 0), "tensor([], size=(2, 0))"),
    (lambda: th.zeros(0, 3, dtype=th.int32), "tensor([], size=(0, 3), dtype=ember.int32)"),
    (lambda: T([1, 2], th.int32), "tensor([1, 2], dtype=ember.int32)"),
    (lambda: T([1.5, 2], th.float64), "tensor([1.5000, 2.0000], dtype=ember.float64)"),
    (lambda: T([1.5, 2], th.float16), "tensor([1.5000, 2.0000], dtype=ember.float16)"),
    (lambda: T([1.5, 2], th.bfloat16), "tensor([1.5000, 2.0000], dtype=ember.bfloat16)"),
    (lambda: T([1, 2], th.uint8), "tensor([1, 2], dtype=ember.uint8)"),
    (lambda: th.tensor(5, dtype=th.int16), "tensor(5, dtype=ember.int16)"),
    (lambda: th.arange(24.0).reshape(2, 3, 4),
     "tensor([[[ 0.,  1.,  2.,  3.],\n         [ 4.,  5.,  6.,  7.],\n"
     "         [ 8.,  9., 10., 11.]],\n\n        [[12., 13., 14., 15.],\n"
     "         [16., 17., 18., 19.],\n         [20., 21., 22., 23.]]])"),
    (lambda: th.arange(12.0).reshape(3, 4).t(),
     "tensor([[ 0.,  4.,  8.],\n        [ 1.,  5.,  9.],\n        [ 2.,  6., 10.],\n"
     "        [ 3.,  7., 11.]])"),
    (lambda: th.arange(12).reshape(3, 4)[:, ::2],
     "tensor([[ 0,  2],\n        [ 4,  6],\n        [ 8, 10]])"),
    (lambda: th.tensor([1.0, 2.0]).expand(2, 2), "tensor([[1., 2.],\n        [1., 2.]])"),
]


@pytest.mark.parametrize("make,want", CASES, ids=[w.split("\n")[0][:40] for _, w in CASES])
def test_repr(make, want):
    t = make()
    assert repr(t) == want
    assert str(t) == want


def test_summarised_large_tensors():
    r = repr(th.arange(2000))
    assert r.startswith("tensor([   0,    1,    2,") and r.endswith("1997, 1998, 1999])")
    assert "..." in r and r.count("\n") == 0
    r = repr(th.arange(3000).reshape(100, 30))
    lines = r.split("\n")
    assert len(lines) == 7 and lines[3].strip() == "...,"
    assert lines[0].startswith("tensor([[   0,    1,    2,") and "..." in lines[0]
    assert lines[-1].endswith("2997, 2998, 2999]])")
    r = repr(th.arange(1500.0).reshape(3, 500))
    assert "e+" in r and "..." in r  # scientific: the range is wide
    small = repr(th.arange(1000))  # 1000 elements: the threshold, printed in full
    assert "..." not in small and "999])" in small


def test_summary_marker_spacing_matches_pytorch():
    assert repr(th.arange(2000)) == "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"


def test_nan_does_not_widen_columns():
    assert repr(th.tensor([float("nan"), 1.0])) == "tensor([nan, 1.])"


def test_default_dtype_suffix(float64_default):
    assert repr(th.tensor([1.5, 2.0])) == "tensor([1.5000, 2.0000])"  # now float64
    assert repr(th.tensor([1.5, 2.0], dtype=th.float32)) == \
        "tensor([1.5000, 2.0000], dtype=ember.float32)"


@pytest.fixture
def float64_default():
    old = th.get_default_dtype()
    th.set_default_dtype(th.float64)
    yield
    th.set_default_dtype(old)


@pytest.fixture
def printoptions():
    yield th.set_printoptions
    th.set_printoptions(profile="default")


def test_set_printoptions(printoptions):
    printoptions(precision=2)
    assert repr(th.tensor([1.2345, 2.5])) == "tensor([1.23, 2.50])"
    printoptions(threshold=5, edgeitems=2)
    assert repr(th.arange(10)) == "tensor([0, 1,  ..., 8, 9])"
    printoptions(profile="default")
    assert repr(th.tensor([1.2345])) == "tensor([1.2345])"


def test_format_and_dtype_reprs():
    assert f"{th.tensor(2.5):.2f}" == "2.50"
    assert f"{th.tensor(3)}" == "3"  # 0-d formats its item, as in PyTorch
    assert f"{th.tensor([3])}" == "tensor([3])"
    assert repr(th.float32) == "ember.float32" and repr(th.bool) == "ember.bool"
    assert repr(th.tensor([1, 2]).shape) == "ember.Size([2])"
