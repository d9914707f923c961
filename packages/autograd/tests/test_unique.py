"""unique(dim=...) and unique_consecutive, composed in the front: against
np.unique(axis=...) where there is no NaN, against a plain Python
reference (rows sorted by tuples, NaN above every number and never equal)
with NaN, and PyTorch's results for the edge cases."""
import math

import numpy as np
import pytest

import ember

NAN = float("nan")


def reference(a, axis, consecutive=False):
    """(values, inverse, counts) of the slices of `a` along axis: sorted
    lexicographically (NaN after every number, NaNs tied) unless
    consecutive; neighbours merge when every element is == (NaN never is)."""
    rows = np.moveaxis(a, axis, 0).reshape(a.shape[axis], -1)

    def key(i):
        return [(math.isnan(v), 0.0 if math.isnan(v) else v) for v in rows[i].tolist()]

    order = list(range(len(rows))) if consecutive else sorted(range(len(rows)), key=key)
    firsts, inverse = [], np.zeros(len(rows), dtype=np.int64)
    for pos, i in enumerate(order):
        if pos == 0 or not np.all(rows[i] == rows[order[pos - 1]]):
            firsts.append(i)
        inverse[i] = len(firsts) - 1
    counts = np.bincount(inverse, minlength=len(firsts))
    return np.take(a, firsts, axis=axis), inverse, counts


def _check(got, want):
    """got: ember tensors (values, inverse, counts); want: NumPy arrays."""
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert tuple(g.shape) == w.shape
        np.testing.assert_array_equal(g.numpy(), w)   # NaN equals NaN here
    assert got[1].dtype is ember.int64 and got[2].dtype is ember.int64


def _layouts(a):
    """The array as a contiguous tensor and as a transposed view of one."""
    yield ember.tensor(a)
    if a.ndim >= 2:
        t = ember.tensor(np.ascontiguousarray(np.swapaxes(a, 0, -1))).transpose(0, -1)
        assert not t.is_contiguous() or a.shape[0] == 1 or a.shape[-1] == 1
        yield t


def test_integer_slices_match_numpy():
    rng = np.random.default_rng()
    for _ in range(60):
        shape = tuple(rng.integers(1, 6, rng.integers(1, 4)))
        a = rng.integers(0, 3, shape)   # few values: slices repeat
        for axis in range(-a.ndim, a.ndim):
            want = np.unique(a, axis=axis, return_inverse=True, return_counts=True)
            want = (want[0], want[1].reshape(-1), want[2])
            for x in _layouts(a):
                _check(ember.unique(x, dim=axis, return_inverse=True, return_counts=True), want)


@pytest.mark.parametrize("inverse", [False, True])
@pytest.mark.parametrize("counts", [False, True])
def test_every_combination_of_results(inverse, counts):
    rng = np.random.default_rng()
    a = rng.integers(-2, 2, (7, 3, 2))
    v, i, c = np.unique(a, axis=1, return_inverse=True, return_counts=True)
    want = [v] + [i.reshape(-1)] * inverse + [c] * counts
    for x in _layouts(a):
        for got in (ember.unique(x, True, inverse, counts, 1),
                    x.unique(sorted=False, return_inverse=inverse, return_counts=counts, dim=-2)):
            got = got if isinstance(got, tuple) else (got,)
            assert len(got) == len(want)
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g.numpy(), w)


def test_float_slices_with_nan_match_the_reference():
    rng = np.random.default_rng()
    pool = np.array([NAN, -1.5, 0.0, -0.0, 2.0, np.inf])
    for _ in range(40):
        a = rng.choice(pool, size=tuple(rng.integers(1, 6, 2)))
        for axis in (0, 1, -1):
            for x in _layouts(a):
                got = ember.unique(x, dim=axis, return_inverse=True, return_counts=True)
                _check(got, reference(a, axis))
    a = rng.choice(pool[1:], size=(8, 3))   # no NaN: NumPy agrees
    want = np.unique(a, axis=0, return_inverse=True, return_counts=True)
    _check(ember.unique(ember.tensor(a), dim=0, return_inverse=True, return_counts=True),
           (want[0], want[1].reshape(-1), want[2]))


def test_nan_slices_never_merge():
    x = ember.tensor([[NAN, 1.0], [NAN, 1.0]])
    v, inv = ember.unique(x, dim=0, return_inverse=True)
    assert v.shape == (2, 2) and inv.tolist() == [0, 1]
    # a NaN sorts after every number, NaNs tie and the next element decides
    x = ember.tensor([[NAN, 1.0], [2.0, 0.0], [NAN, 0.0], [2.0, 0.0]])
    v, inv, cnt = ember.unique(x, dim=0, return_inverse=True, return_counts=True)
    assert np.array_equal(v.numpy(), [[2.0, 0.0], [NAN, 0.0], [NAN, 1.0]], equal_nan=True)
    assert inv.tolist() == [2, 0, 1, 0] and cnt.tolist() == [2, 1, 1]


def test_pytorch_examples():
    v, inv, cnt = ember.unique(ember.tensor([[1, 2], [1, 2], [0, 5]]), dim=0,
                               return_inverse=True, return_counts=True)
    assert v.tolist() == [[0, 5], [1, 2]] and inv.tolist() == [1, 1, 0]
    assert cnt.tolist() == [1, 2]
    v, inv, cnt = ember.unique(ember.tensor([[1, 2, 1], [3, 2, 3]]), dim=1,
                               return_inverse=True, return_counts=True)
    assert v.tolist() == [[1, 2], [3, 2]] and inv.tolist() == [0, 1, 0]
    assert cnt.tolist() == [2, 1]
    x = ember.tensor([[2.0, 1.0], [1.0, 3.0], [2.0, 0.0]])
    assert x.unique(dim=-1).tolist() == [[1.0, 2.0], [3.0, 1.0], [0.0, 2.0]]
    assert x.unique(sorted=False, dim=-1).tolist() == [[1.0, 2.0], [3.0, 1.0], [0.0, 2.0]]
    # -0.0 == 0.0: one group, which keeps the first slice
    v, cnt = ember.unique(ember.tensor([-0.0, 0.0]), dim=0, return_counts=True)
    assert math.copysign(1, v.item()) == -1 and cnt.tolist() == [2]


def test_one_dimension_with_dim_is_like_without():
    rng = np.random.default_rng()
    a = rng.choice([NAN, 1.0, 2.0, 3.0], size=20)
    x = ember.tensor(a)
    flat = ember.unique(x, return_inverse=True, return_counts=True)
    along = ember.unique(x, dim=0, return_inverse=True, return_counts=True)
    for f, d in zip(flat, along):
        assert f.dtype is d.dtype
        np.testing.assert_array_equal(f.numpy(), d.numpy())
    _check(along, reference(a, 0))


def test_empty_inputs():
    for shape, dim in (((0, 3), 0), ((2, 0), 1), ((0,), 0)):
        v, inv, cnt = ember.unique(ember.empty(shape), dim=dim, return_inverse=True,
                                   return_counts=True)
        assert v.shape == shape and v.dtype is ember.float32
        assert inv.shape == (0,) and cnt.shape == (0,)
        assert inv.dtype is ember.int64 and cnt.dtype is ember.int64
        v, inv, cnt = ember.unique_consecutive(ember.empty(shape), dim=dim,
                                               return_inverse=True, return_counts=True)
        assert v.shape == shape and inv.shape == (0,) and cnt.shape == (0,)
    v, inv, cnt = ember.unique_consecutive(ember.empty(2, 0), return_inverse=True,
                                           return_counts=True)
    assert v.shape == (0,) and inv.shape == (2, 0) and cnt.shape == (0,)
    for fn in (ember.unique, ember.unique_consecutive):
        with pytest.raises(RuntimeError, match="There are 0 sized dimensions, and they "
                           "aren't selected, so unique cannot be applied"):
            fn(ember.empty(2, 0), dim=0)
        with pytest.raises(RuntimeError, match="Number of zero sized dimensions is more "
                           "than one, so unique cannot be applied"):
            fn(ember.empty(0, 2, 0), dim=0)


def test_dim_errors():
    for fn in (ember.unique, ember.unique_consecutive):
        with pytest.raises(IndexError, match="Dimension specified as 0 but tensor has no "
                           "dimensions"):
            fn(ember.tensor(3.0), dim=0)
        with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in "
                           r"range of \[-2, 1\], but got 2\)"):
            fn(ember.ones(2, 2), dim=2)
        with pytest.raises(IndexError, match=r"range of \[-2, 1\], but got -3\)"):
            fn(ember.ones(2, 2), dim=-3)
        with pytest.raises(TypeError, match="argument 'dim' must be int, not float"):
            fn(ember.ones(2, 2), dim=1.0)
        with pytest.raises(TypeError, match="must be Tensor, not list"):
            fn([1, 2], dim=0)


def test_dtypes_and_no_gradient():
    for dtype in (ember.bool, ember.uint8, ember.int8, ember.int32, ember.float16,
                  ember.bfloat16, ember.float64):
        x = ember.tensor([[1, 0, 1], [0, 0, 0]]).to(dtype)
        v, cnt = ember.unique(x, dim=1, return_counts=True)
        assert v.dtype is dtype and v.float().tolist() == [[0, 1], [0, 0]]
        assert cnt.tolist() == [1, 2]
        assert x.unique_consecutive(dim=1).float().tolist() == [[1, 0, 1], [0, 0, 0]]
    x = ember.tensor([[1.0, 2.0], [1.0, 2.0]], requires_grad=True)
    for out in (*ember.unique(x, dim=0, return_inverse=True, return_counts=True),
                *ember.unique_consecutive(x, dim=1, return_inverse=True),
                *ember.unique_consecutive(x, return_counts=True)):
        assert out.grad_fn is None and not out.requires_grad


def test_unique_consecutive_matches_the_reference():
    rng = np.random.default_rng()
    for _ in range(40):
        a = rng.choice([NAN, 0.0, 1.0], size=tuple(rng.integers(1, 6, 2)),
                       p=[0.1, 0.45, 0.45])
        for axis in (0, 1, -2):
            for x in _layouts(a):
                got = ember.unique_consecutive(x, return_inverse=True, return_counts=True,
                                               dim=axis)
                _check(got, reference(a, axis, consecutive=True))
        # dim=None: the flattened elements; the inverse has the input's shape
        v, inv, cnt = reference(a.reshape(-1), 0, consecutive=True)
        for x in _layouts(a):
            _check(x.unique_consecutive(return_inverse=True, return_counts=True),
                   (v, inv.reshape(a.shape), cnt))


def test_unique_consecutive_examples():
    x = ember.tensor([1, 1, 2, 2, 3, 1, 1, 2])
    assert ember.unique_consecutive(x).tolist() == [1, 2, 3, 1, 2]
    v, inv, cnt = ember.unique_consecutive(x, return_inverse=True, return_counts=True)
    assert inv.tolist() == [0, 0, 1, 1, 2, 3, 3, 4] and cnt.tolist() == [2, 2, 1, 2, 1]
    v, inv, cnt = ember.unique_consecutive(ember.tensor([[1, 2], [1, 2], [0, 5], [1, 2]]),
                                           return_inverse=True, return_counts=True, dim=0)
    assert v.tolist() == [[1, 2], [0, 5], [1, 2]] and inv.tolist() == [0, 0, 1, 2]
    assert cnt.tolist() == [2, 1, 1]
    v, inv, cnt = ember.unique_consecutive(ember.tensor([1.0, NAN, NAN, 1.0]),
                                           return_inverse=True, return_counts=True)
    assert inv.tolist() == [0, 1, 2, 3] and cnt.tolist() == [1, 1, 1, 1]
    v, inv, cnt = ember.tensor(3.0).unique_consecutive(return_inverse=True, return_counts=True)
    assert v.tolist() == [3.0] and inv.shape == () and inv.item() == 0 and cnt.tolist() == [1]
