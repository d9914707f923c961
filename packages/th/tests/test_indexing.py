"""Tensor.__getitem__ / __setitem__ against NumPy: ints, slices with steps,
None, Ellipsis, bools, integer tensors and lists (adjacent and separated),
boolean masks, assignment with scalars / tensors / broadcasting, errors.

Advanced indexing goes through libTH's th_index, th_index_put_, th_nonzero,
th_masked_select and th_masked_fill_ (index.c, index_scatter.c)."""
import re

import numpy as np
import pytest

import ember.th as th

from th_testing import DTYPES, assert_close, each, ids, new_tensor, to_numpy

SHAPE = (3, 4, 5)


@pytest.fixture
def x(make):
    return make(SHAPE, th.float32)


def it(v, dtype=th.int64):
    """An ember index tensor."""
    return new_tensor(np.asarray(v), dtype)


def mask(m):
    return new_tensor(np.asarray(m, dtype=bool), th.bool)


def err(exc, msg):
    return pytest.raises(exc, match=re.escape(msg))


def shares(v, t):
    return v.numel() == 0 or (
        v.data_ptr() - v.storage_offset() * v.element_size() ==
        t.data_ptr() - t.storage_offset() * t.element_size())


# ---- basic indexing: views -----------------------------------------------
BASIC = [
    1, -1, (0, 2), (-1, -2, -3), (1, slice(None), 4), slice(1, None), slice(None, None, 2),
    (slice(None), slice(1, 4, 2)), (Ellipsis, 1), (Ellipsis, slice(None, None, 3)),
    (0, Ellipsis, 0), None, (None, 1), (slice(None), None, 2), (None, Ellipsis, None),
    (Ellipsis, None), (1, None, slice(1, 3), None, -1), slice(-2, None), slice(-100, 100),
    slice(2, 1), (slice(None), slice(None), slice(None)), Ellipsis, (),
    (slice(0, 3, 2), slice(None, None, 3), slice(1, None, 2)),
]


@pytest.mark.parametrize("idx", BASIC, ids=repr)
def test_basic_index_is_a_view(idx, x):
    t, a = x
    v = t[idx]
    assert_close(v, a[idx], th.float32)
    assert shares(v, t)
    if v.numel():  # writes through the view reach the tensor
        v.fill_(100)
        assert (to_numpy(t)[idx] == 100).all()


@pytest.mark.parametrize("idx", [True, False, (True, 1), (0, False), (Ellipsis, True),
                                 (None, False, slice(None))], ids=repr)
def test_bool_scalar_index(idx, x):
    t, a = x
    assert_close(t[idx], a[idx], th.float32)


def test_numpy_integers_and_tensor_ints(x):
    t, a = x
    assert_close(t[np.int64(1), np.int32(-1)], a[1, -1])
    assert_close(t[np.bool_(True)], a[True])
    assert_close(t[th.tensor(2)], a[2])  # a 0-d integer tensor indexes like an int
    assert_close(t[1, th.tensor(3, dtype=th.int32)], a[1, 3])


def test_index_zero_d_and_empty():
    s = th.tensor(2.5)
    assert_close(s[()], np.array(2.5, np.float32))
    assert_close(s[None], np.array([2.5], np.float32))
    assert_close(s[...], np.array(2.5, np.float32))
    with err(IndexError, "invalid index of a 0-dim tensor"):
        s[0]
    e = th.zeros(0, 3)
    assert tuple(e[:, 1].shape) == (0,)
    assert tuple(e[1:].shape) == (0, 3)
    with err(IndexError, "index 0 is out of bounds for dimension 0 with size 0"):
        e[0]


@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
def test_basic_index_every_dtype(dtype, make):
    t, a = make(SHAPE, dtype)
    each(BASIC[:12], lambda idx: assert_close(t[idx], a[idx], dtype))


# ---- advanced indexing: integer tensors and lists ------------------------
ADVANCED = [
    ([0, 2],), ([-1, 0, -1],), (slice(None), [3, 0, 3]), ([0, 1], [1, 2]),
    ([0, 1], slice(None), [1, 2]),          # separated: advanced dims go first
    (slice(None), [[0], [1]], [1, 2]),      # broadcast index tensors
    (Ellipsis, [0, 4]), ([[0, 1], [2, 0]],), ([0, 2], slice(1, 3), [1, 4]),
    (None, [0, 1]), ([0, 1], None), ([2], slice(None, None, 2), slice(None)),
    ([], ), (slice(None), []), ([1, 1, 1],), (slice(1, None), [0, -1], slice(None, None, 2)),
]


def _as_ember(idx, dtype=th.int64):
    out = []
    for i in (idx if isinstance(idx, tuple) else (idx,)):
        out.append(it(i, dtype) if isinstance(i, list) and i != [] else i)
    return tuple(out)


def _as_numpy(idx):
    return tuple(np.asarray(i, dtype=np.int64) if isinstance(i, list) else i
                 for i in (idx if isinstance(idx, tuple) else (idx,)))


@pytest.mark.parametrize("idx", ADVANCED, ids=repr)
def test_advanced_index_lists_and_tensors(idx, x):
    t, a = x
    want = a[_as_numpy(idx)]
    assert_close(t[idx if len(idx) > 1 else idx[0]], want, th.float32)  # Python lists
    assert_close(t[_as_ember(idx)], want, th.float32)                    # int64 tensors
    if [] not in idx:
        assert_close(t[_as_ember(idx, th.int32)], want, th.float32)      # int32 tensors
    r = t[_as_ember(idx)]
    if r.numel():  # a copy, not a view
        r.fill_(1234)
        assert not (to_numpy(t) == 1234).any()


def test_numpy_array_index(x):
    t, a = x
    idx = np.array([[2, 0], [1, 1]])
    assert_close(t[idx], a[idx])
    assert_close(t[:, idx], a[:, idx])


@pytest.mark.parametrize("case", [
    # (ember index, PyTorch's result written with NumPy)
    ("x[0, :, [0, 1]]", lambda a: a[0][:, [0, 1]]),
    ("x[1, [0, 3], :]", lambda a: a[1][[0, 3], :]),
    ("x[:, 2, [0, 4]]", lambda a: a[:, 2][:, [0, 4]]),
    ("x[[0, 2], 1, [1, 4]]", lambda a: a[:, 1][[0, 2], [1, 4]]),
    ("x[-1, [1, 2], [2, 3]]", lambda a: a[-1][[1, 2], [2, 3]]),
], ids=lambda c: c[0])
def test_int_next_to_tensor_index_selects_first(case, x):
    """PyTorch applies integer indices first (as select), so an int between
    or next to advanced indices never moves dims to the front like NumPy."""
    t, a = x
    expr, want = case
    assert_close(eval(expr, {"x": t}), want(a), th.float32)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
def test_advanced_index_every_dtype(dtype, make):
    t, a = make(SHAPE, dtype)
    each(ADVANCED[:10], lambda idx: assert_close(t[_as_ember(idx)], a[_as_numpy(idx)], dtype))


def test_advanced_index_on_non_contiguous(x):
    t, a = x
    tt, at = t.transpose(0, 2), a.transpose(2, 1, 0)
    assert_close(tt[[4, 0], :, [1, 2]], at[[4, 0], :, [1, 2]])
    s, as_ = t[:, ::2, 1:], a[:, ::2, 1:]
    assert_close(s[it([2, 0]), 1], as_[[2, 0], 1])
    b = th.tensor(np.arange(4.0)).expand(3, 4)
    assert_close(b[[0, 2], [3, 1]], np.array([3.0, 1.0]))


# ---- boolean masks ------------------------------------------------------
def test_full_mask(x):
    t, a = x
    m = a > 0
    assert_close(t[mask(m)], a[m], th.float32)
    assert_close(t[t > 0], a[m], th.float32)
    empty = np.zeros(SHAPE, bool)
    assert_close(t[mask(empty)], a[empty], th.float32)


@pytest.mark.parametrize("case", ["lead2", "lead1", "middle", "last", "with_int", "with_slice",
                                  "1d_on_0d"])
def test_partial_masks(case, x):
    t, a = x
    m2 = a[:, :, 0] > 0
    m1 = np.array([True, False, True])
    mm = a[0, :, 0] > a[0, :, 1]
    ml = np.array([True, False, False, True, True])
    if case == "lead2":
        assert_close(t[mask(m2)], a[m2])
    elif case == "lead1":
        assert_close(t[mask(m1)], a[m1])
    elif case == "middle":
        assert_close(t[:, mask(mm)], a[:, mm])
    elif case == "last":
        assert_close(t[..., mask(ml)], a[..., ml])
    elif case == "with_int":
        assert_close(t[1, mask(mm)], a[1, mm])
    elif case == "with_slice":
        assert_close(t[mask(m1), 1:3], a[m1, 1:3])
    else:
        s = th.tensor(3.0)
        assert_close(s[th.tensor(True)], np.array([3.0], np.float32))
        assert tuple(s[th.tensor(False)].shape) == (0,)


def test_mask_shape_mismatch(x):
    t, a = x
    with err(IndexError, "The shape of the mask [2, 4] at index 0 does not match the shape of the "
                         "indexed tensor [3, 4, 5] at index 0"):
        t[mask(np.ones((2, 4)))]
    with err(IndexError, "The shape of the mask [5] at index 0 does not match"):
        t[1, mask(np.ones(5))]


# ---- __setitem__ ----------------------------------------------------------
SET_CASES = [
    ("int scalar", 1, 5),
    ("slice step", (slice(None), slice(None, None, 2)), -1.5),
    ("broadcast row", (Ellipsis, 1), np.arange(3.0)[:, None]),
    ("ellipsis all", Ellipsis, np.arange(5.0)),
    ("none", None, 3.0),
    ("int pair 0-d value", (1, 1), np.array(2.5)),
    ("bool true", True, 4.0),
    ("bool false", False, 4.0),
    ("list rows scalar", [0, 2], 7.0),
    ("list + int", ([0, 2], 1), np.array([1.0, 2.0])[:, None]),
    ("list middle", (slice(None), [1, 3]), np.ones((3, 2, 5))),
    ("separated", ([0, 1], slice(None), [1, 2]), np.full((2, 4), 9.0)),
    ("broadcast value", (slice(None), [1, 3]), np.arange(5.0)),
]


@pytest.mark.parametrize("name,idx,value", SET_CASES, ids=[c[0] for c in SET_CASES])
def test_setitem(name, idx, value, x):
    t, a = x
    a = a.copy()
    nidx = _as_numpy(idx) if isinstance(idx, (list, tuple)) else idx
    a[nidx] = value
    v = new_tensor(np.asarray(value), th.float32) if isinstance(value, np.ndarray) else value
    t[idx] = v
    assert_close(t, a, th.float32)


def test_setitem_int_next_to_tensor_index(x):
    t, a = x
    a = a.copy()
    t[0, :, [0, 1]] = new_tensor(np.zeros((4, 2)), th.float32)
    a[0][:, [0, 1]] = 0
    assert_close(t, a)


def test_setitem_masks(x):
    t, a = x
    a = a.copy()
    m = a > 0.5
    t[mask(m)] = 0.0  # masked_fill
    a[m] = 0.0
    assert_close(t, a)
    m = a < -0.5
    vals = np.arange(m.sum(), dtype=np.float32)
    t[mask(m)] = new_tensor(vals, th.float32)  # values in mask order
    a[m] = vals
    assert_close(t, a)
    m2 = a[:, :, 0] > 0
    t[mask(m2)] = new_tensor(np.arange(5.0), th.float32)
    a[m2] = np.arange(5.0)
    assert_close(t, a)
    mm = np.array([True, False, True, False])
    t[:, mask(mm)] = -2.0
    a[:, mm] = -2.0
    assert_close(t, a)
    t[t > 100] = 1.0  # an empty mask changes nothing
    assert_close(t, a)


def test_setitem_converts_dtype():
    i = th.tensor([1, 2, 3])
    i[0] = 2.7
    i[1:] = th.tensor([5.9, -1.2])
    assert i.tolist() == [2, 5, -1] and i.dtype is th.int64
    b = th.zeros(3, dtype=th.bool)
    b[[0, 2]] = 1
    assert b.tolist() == [True, False, True]
    h = th.zeros(2, dtype=th.float16)
    h[1] = 0.1
    assert abs(h[1].item() - 0.1) < 1e-4


def test_setitem_list_value_and_inplace_operator(x):
    t, a = x
    a = a.copy()
    t[1, 2] = [1.0, 2.0, 3.0, 4.0, 5.0]
    a[1, 2] = [1.0, 2.0, 3.0, 4.0, 5.0]
    t[[0, 2]] += 1
    a[[0, 2]] += 1
    t[:, 1] *= 2
    a[:, 1] *= 2
    assert_close(t, a)


def test_setitem_overlapping_source(x):
    t, a = x
    a = a.copy()
    t[1:] = t[:-1].clone()
    a[1:] = a[:-1].copy()
    assert_close(t, a)
    u = th.arange(6.0)
    u[1:] = u[:-1]  # reads what it writes: must behave like a copy first
    assert u.tolist() == [0.0, 0.0, 1.0, 2.0, 3.0, 4.0]


def test_setitem_every_dtype(make):
    def check(d):
        t, a = make((4, 3), d)
        a = a.copy()
        t[1] = t[2]
        a[1] = a[2]
        t[[0, 3], 2] = t[1, 0]
        a[[0, 3], 2] = a[1, 0]
        assert_close(t, a, d)
    each(DTYPES, check)


# ---- errors ---------------------------------------------------------------
def test_index_errors_leave_the_tensor_intact(x):
    t, a = x
    with err(IndexError, "index 3 is out of bounds for dimension 0 with size 3"):
        t[3]
    with err(IndexError, "index -5 is out of bounds for dimension 1 with size 4"):
        t[:, -5]
    with err(IndexError, "index 5 is out of bounds for dimension 0 with size 3"):
        t[[5]]
    with err(IndexError, "index -4 is out of bounds for dimension 0 with size 3"):
        t[it([0, -4])]
    with err(IndexError, "too many indices for tensor of dimension 3"):
        t[0, 0, 0, 0]
    with err(IndexError, "too many indices for tensor of dimension 3"):
        t[0, ..., 0, 0, None, 0]
    with err(IndexError, "an index can only have a single ellipsis ('...')"):
        t[..., ...]
    with err(IndexError, "shape mismatch: indexing tensors could not be broadcast together"):
        t[[0, 1], [1, 2, 3]]
    with err(IndexError, "tensors used as indices must be long, int, byte or bool tensors"):
        t[th.tensor([0.0, 1.0])]
    with err(IndexError, "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                         "Variables are valid indices (got float)"):
        t[1.5]
    with err(IndexError, "(got str)"):
        t["a"]
    with err(ValueError, "step must be greater than zero"):
        t[::-1]
    with pytest.raises(ValueError):
        t[::0]
    assert_close(t, a)


def test_setitem_errors_leave_the_tensor_intact(x):
    t, a = x
    with err(IndexError, "index 3 is out of bounds for dimension 0 with size 3"):
        t[3] = 1.0
    with err(IndexError, "index 5 is out of bounds for dimension 0 with size 3"):
        t[[0, 5]] = 1.0
    with err(IndexError, "too many indices for tensor of dimension 3"):
        t[0, 0, 0, 0] = 1.0
    with pytest.raises(RuntimeError, match="cannot be broadcast|must match"):
        t[1] = new_tensor(np.ones(3), th.float32)
    with pytest.raises(RuntimeError, match="cannot be broadcast|must match|shape mismatch"):
        t[[0, 1]] = new_tensor(np.ones((3, 4, 5)), th.float32)
    with pytest.raises((RuntimeError, IndexError)):
        t[mask(a > 0)] = new_tensor(np.arange(3.0), th.float32)  # wrong count
    assert_close(t, a)
