"""Indexing with the sequence kinds PyTorch accepts: ranges, deques,
tuples of lists, lists holding slices/None/Ellipsis/tensors (taken as a
tuple, as PyTorch does), NumPy int and bool arrays, float lists
(truncated), bool lists -- read, written and differentiated.  Each case has
the plain NumPy index it means; with torch installed the results are also
compared with PyTorch's."""
import collections
import warnings

import numpy as np
import pytest

import ember

try:
    import torch
except ImportError:
    torch = None

BASE = np.arange(60, dtype=np.float64).reshape(3, 4, 5)

# name: (index builder given the tensor library, the NumPy index it means)
CASES = {
    "range": (lambda L: range(1, 3), [1, 2]),
    "range_step": (lambda L: range(0, 4, 2), [0, 2]),
    "range_negative": (lambda L: range(-2, 0), [-2, -1]),
    "range_empty": (lambda L: range(0), np.array([], dtype=np.int64)),
    "slice_and_range": (lambda L: (slice(None), range(1, 3)), (slice(None), [1, 2])),
    "two_ranges": (lambda L: (range(2), range(1, 3)), ([0, 1], [1, 2])),
    "nested_range": (lambda L: [range(2)], ([0, 1],)),
    "deque": (lambda L: collections.deque([0, 2]), [0, 2]),
    "tuple_of_lists": (lambda L: ([0, 1], [1, 2]), ([0, 1], [1, 2])),
    "list_of_lists": (lambda L: [[0, 1], [1, 2]], ([0, 1], [1, 2])),
    "list_with_slice": (lambda L: [0, slice(1, 3)], (0, slice(1, 3))),
    "list_with_ellipsis": (lambda L: [0, Ellipsis], (0, Ellipsis)),
    "list_with_none": (lambda L: [None, 1], (None, 1)),
    "list_of_tensors": (lambda L: [L.tensor(0), L.tensor(2)], (0, 2)),
    "float_list": (lambda L: [0.0, 1.9], [0, 1]),
    "bool_list": (lambda L: [True, False, True], np.array([True, False, True])),
    "numpy_int": (lambda L: np.array([0, 2]), [0, 2]),
    "numpy_int32": (lambda L: np.array([2, 0], dtype=np.int32), [2, 0]),
    "numpy_2d": (lambda L: np.array([[0, 1], [2, 0]]), np.array([[0, 1], [2, 0]])),
    "numpy_bool": (lambda L: np.array([True, False, True]), np.array([True, False, True])),
    "numpy_scalar": (lambda L: np.int64(1), 1),
    "tensor_and_ranges": (lambda L: (L.tensor([0, 1]), slice(1, 3), range(1, 3)),
                          ([0, 1], slice(1, 3), [1, 2])),
}


# sequences PyTorch takes as a tuple (with its deprecation warning)
AS_TUPLE = {"nested_range", "list_of_lists", "list_with_slice", "list_with_ellipsis",
            "list_with_none", "list_of_tensors"}
pytestmark = pytest.mark.filterwarnings("ignore:Using a non-tuple sequence")


@pytest.mark.parametrize("name", CASES)
def test_get(name):
    make, want = CASES[name]
    with warnings.catch_warnings(record=True) as got_warnings:
        warnings.simplefilter("always")
        got = ember.tensor(BASE)[make(ember)]
    np.testing.assert_array_equal(got.numpy(), BASE[want])
    deprecated = [w for w in got_warnings if "non-tuple sequence" in str(w.message)]
    assert len(deprecated) == (name in AS_TUPLE)


@pytest.mark.parametrize("name", CASES)
def test_set(name):
    make, want = CASES[name]
    x = ember.tensor(BASE)
    x[make(ember)] = -1.0
    ref = BASE.copy()
    ref[want] = -1.0
    np.testing.assert_array_equal(x.numpy(), ref)


@pytest.mark.parametrize("name", ["range", "two_ranges", "list_with_slice", "float_list",
                                  "deque"])
def test_gradients(name):
    make, want = CASES[name]
    x = ember.tensor(BASE, requires_grad=True)
    x[make(ember)].sum().backward()
    ref = np.zeros_like(BASE)
    np.add.at(ref, want if isinstance(want, tuple) else (want,), 1.0)
    np.testing.assert_array_equal(x.grad.numpy(), ref)
    # written through a range into a tensor that requires grad
    y = ember.zeros(3, 4, 5, dtype=ember.float64, requires_grad=True).clone()
    v = ember.ones(BASE[want].shape, dtype=ember.float64, requires_grad=True)
    y[make(ember)] = v
    y.sum().backward()
    assert v.grad.shape == v.shape


def test_errors():
    x = ember.tensor(BASE)
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        x[range(2, 5)]
    with pytest.raises(TypeError, match="new\\(\\): invalid data type 'str'"):
        x["a"]
    with pytest.raises(TypeError, match="new\\(\\): invalid data type 'str'"):
        x[(0, ["a"])]
    before = x.clone()
    with pytest.raises(IndexError):
        x[range(2, 5)] = 0.0
    assert bool((x == before).all())   # a refused write leaves the data intact


@pytest.mark.skipif(torch is None, reason="needs torch")
@pytest.mark.parametrize("name", CASES)
def test_matches_torch(name):
    make = CASES[name][0]
    e, t = ember.tensor(BASE), torch.tensor(BASE)
    np.testing.assert_array_equal(e[make(ember)].numpy(), t[make(torch)].numpy())
    e[make(ember)] = -1.0
    t[make(torch)] = -1.0
    np.testing.assert_array_equal(e.numpy(), t.numpy())
