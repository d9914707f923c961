"""Indexing and shaping ops against NumPy: index_select, gather, the
scatter family (every reduce mode, include_self), index_add/copy/fill,
masked_fill/select/scatter, nonzero, take, put_, cat/concat/stack/hstack/
vstack, split/chunk/unbind, flip/fliplr/flipud, roll, repeat/tile,
tril/triu -- every dtype and layout; out-of-range indices raise
IndexError and leave the data unchanged."""
import itertools

import numpy as np
import pytest

import ember.th as th

from th_testing import (DTYPES, LAYOUTS, as_dtype, assert_close, each, ids, new_tensor,
                        np_dtype, to_numpy)
from _refs import assert_unchanged, raises, snapshot

SHAPE = (3, 4, 5)
WRITABLE = ["contiguous", "transposed", "sliced", "0d", "empty"]


def idx_tensor(a, dtype=th.int64):
    return th.tensor(np.asarray(a, dtype=np.int64), dtype=dtype)


def dims_of(t):
    return list(range(-t.ndim, t.ndim)) if t.ndim else [0, -1]


def axis(dim, t):
    return dim % t.ndim if t.ndim else 0


def values_of(t):
    """t's values as NumPy (bfloat16 as float32)."""
    return to_numpy(t)


# ---- index_select / gather / take ----------------------------------------
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_index_select_gather_take(make, rng, d, layout):
    t, a = make(SHAPE, d, layout)
    a1 = a.reshape(1) if t.ndim == 0 else a

    def check(case):
        op, dim, idt = case
        ax = axis(dim, t) if dim is not None else None
        n = a1.shape[ax] if dim is not None else a.size
        if op == "index_select":
            if n == 0:
                idx = np.zeros(0, np.int64)
            else:  # repeats (negative indices are refused, as PyTorch)
                idx = rng.integers(0, n, 7 if t.ndim else 1)
            r = t.index_select(dim, idx_tensor(idx, idt))
            exp = np.take(a1, idx, axis=ax)
            assert_close(r, exp.reshape(()) if t.ndim == 0 else exp, d)
            assert_close(th.index_select(t, dim, idx_tensor(idx, idt)), to_numpy(r), d)
        elif op == "gather":
            ishape = [max(0, s - 1) if i != ax else 6 for i, s in enumerate(a1.shape)]
            if t.ndim == 0:
                ishape = []
            idx = rng.integers(0, n, ishape) if n else np.zeros(ishape, np.int64)
            if n == 0 and ishape and np.prod(ishape):
                idx = np.zeros([0] * len(ishape), np.int64)
            sub = a1[tuple(slice(0, s) if i != ax else slice(None)
                           for i, s in enumerate(idx.shape))] if t.ndim else a1
            exp = np.take_along_axis(sub, idx.reshape(sub.ndim * (1,) if not t.ndim
                                                      else idx.shape) % max(n, 1),
                                     axis=ax)
            r = t.gather(dim, idx_tensor(idx, idt))
            assert_close(r, exp.reshape(idx.shape), d)
        else:  # take: flat indices in logical (row-major) order
            size = a.size
            idx = rng.integers(-size, size, (2, 3)) if size else np.zeros((0,), np.int64)
            r = t.take(idx_tensor(idx))
            assert_close(r, a.reshape(-1)[idx] if size else np.zeros(0, a.dtype), d)

    cases = [(op, dim, idt) for op in ("index_select", "gather") for dim in dims_of(t)
             for idt in (th.int64, th.int32) if not (op == "gather" and idt is th.int32)]
    each(cases + [("take", None, th.int64)], check)


# ---- scatter family ------------------------------------------------------
def scatter_ref(self_a, dim, idx, src, reduce=None, include_self=True):
    """Loop reference of scatter/scatter_reduce (idx and src values)."""
    out = np.array(self_a, dtype=np.float64 if self_a.dtype.kind == "f" else np.int64,
                   copy=True)
    src = np.asarray(src, dtype=out.dtype)
    groups = {}
    for pos in itertools.product(*[range(s) for s in idx.shape]):
        tgt = list(pos)
        tgt[dim] = idx[pos] % self_a.shape[dim]
        groups.setdefault(tuple(tgt), []).append(src[pos])
    for tgt, vals in groups.items():
        if reduce is None:
            out[tgt] = vals[-1]
            continue
        vals = ([out[tgt]] if include_self else []) + vals
        if reduce == "sum":
            out[tgt] = np.sum(vals)
        elif reduce == "prod":
            out[tgt] = np.prod(vals)
        elif reduce == "amax":
            out[tgt] = np.nan if np.isnan(vals).any() else np.max(vals)
        elif reduce == "amin":
            out[tgt] = np.nan if np.isnan(vals).any() else np.min(vals)
        elif reduce == "mean":
            s = np.sum(vals)
            out[tgt] = s / len(vals) if out.dtype.kind == "f" else s // len(vals)
    return out


def unique_scatter_index(rng, ishape, dim, n):
    """An index whose entries along `dim` are distinct (plain scatter's
    result is undefined for repeated targets)."""
    idx = np.empty(ishape, np.int64)
    for pos in itertools.product(*[range(s) for i, s in enumerate(ishape) if i != dim]):
        sl = list(pos)
        sl.insert(dim, slice(None))
        idx[tuple(sl)] = rng.permutation(n)[:ishape[dim]]
    return idx


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_scatter(make, rng, d, layout):
    t0, a = make(SHAPE, d, layout)
    src_t, src = make((3, 4, 5), d)

    def check(case):
        dim, kind = case
        ishape = [2, 3, 4]
        ishape[dim] = 3
        idx = unique_scatter_index(rng, ishape, dim, SHAPE[dim])
        t = t0.clone() if layout == "contiguous" else make(SHAPE, d, layout)[0].copy_(t0)
        if kind == "tensor":
            r = t.scatter(dim, idx_tensor(idx), src_t)
            exp = scatter_ref(a, dim, idx, src[tuple(slice(0, s) for s in ishape)])
        else:
            val = True if d is th.bool else 2
            r = th.scatter(t, dim, idx_tensor(idx), value=val)
            exp = scatter_ref(a, dim, idx, np.full(ishape, val))
        assert_close(r, exp, d)
        assert_close(t, a, d)  # the out-of-place form leaves its input alone
        if kind == "tensor":
            assert t.scatter_(dim, idx_tensor(idx), src_t) is t
            assert_close(t, exp, d)

    each([(dim, k) for dim in range(3) for k in ("tensor", "value")], check)


REDUCE_DTYPES = [th.float32, th.float64, th.float16, th.bfloat16, th.int8, th.uint8,
                 th.int16, th.int32, th.int64]


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("d", REDUCE_DTYPES, ids=ids(REDUCE_DTYPES))
def test_scatter_reduce(make, rng, d, layout):
    """scatter_reduce (every mode, include_self both ways), scatter_add and
    the legacy scatter(reduce='add'/'multiply'), with repeated targets."""
    small = {"low": -3, "high": 3} if d is not th.uint8 else {"low": 0, "high": 3}
    t, a = make((4, 5), d, layout, **small)
    s_t, s = make((6, 6), d, **small)

    def check(case):
        op, mode, include_self, dim = case
        ishape = (6, 3) if dim == 0 else (3, 6)
        idx = rng.integers(0, 4 if dim == 0 else 5, ishape)
        it = idx_tensor(idx)
        src = s[:ishape[0], :ishape[1]]
        if op == "scatter_reduce":
            r = t.scatter_reduce(dim, it, s_t, mode, include_self=include_self)
            exp = scatter_ref(a, dim, idx, src, mode, include_self)
        elif op == "scatter_add":
            r = t.scatter_add(dim, it, s_t)
            exp = scatter_ref(a, dim, idx, src, "sum")
        else:
            r = t.scatter(dim, it, s_t, reduce=mode)
            exp = scatter_ref(a, dim, idx, src, {"add": "sum", "multiply": "prod"}[mode])
        if d.is_floating_point and mode in ("sum", "add", "mean", "prod", "multiply",
                                            None):
            assert_close(r, exp, d, atol=1e-5 if d in (th.float32, th.float64) else None)
        else:
            assert_close(r, exp, d)
        assert_close(t, a, d)
        # the in-place form agrees with the out-of-place one
        c = t.clone()
        if op == "scatter_reduce":
            assert c.scatter_reduce_(dim, it, s_t, mode, include_self=include_self) is c
        elif op == "scatter_add":
            assert c.scatter_add_(dim, it, s_t) is c
        else:
            assert c.scatter_(dim, it, s_t, reduce=mode) is c
        assert_close(c, to_numpy(r), d)

    cases = [("scatter_reduce", m, inc, dim) for m in ("sum", "prod", "mean", "amax", "amin")
             for inc in (True, False) for dim in (0, 1)]
    cases += [("scatter_add", "sum", True, dim) for dim in (0, 1)]
    cases += [("scatter", m, True, dim) for m in ("add", "multiply") for dim in (0, 1)]
    each(cases, check)


def test_scatter_reduce_nan_and_scalar_src():
    nan = float("nan")
    r = th.zeros(3).scatter_reduce(0, idx_tensor([0, 0]), th.tensor([2.0, nan]), "amax")
    assert np.isnan(r[0].item()) and r[1].item() == 0
    r = th.zeros(3).scatter_reduce(0, idx_tensor([1, 1]), th.tensor([2.0, 3.0]), "prod",
                                   include_self=False)
    assert_close(r, [0.0, 6.0, 0.0], th.float32)
    r = th.ones(3, dtype=th.int32).scatter_reduce(0, idx_tensor([0, 0, 2]),
                                                  th.tensor([-4, -6, 6], dtype=th.int32),
                                                  "mean")
    assert_close(r, [-3, 1, 3], th.int32)  # integer mean rounds down (floor)
    r = th.zeros(2, 3).scatter_add(1, idx_tensor([[0, 0, 2]]), 1.5)  # a number source
    assert_close(r, [[3.0, 0.0, 1.5], [0.0, 0.0, 0.0]], th.float32)


def test_scatter_reduce_mean_bool():
    t = th.tensor([True, False])
    with pytest.raises(TypeError, match="not implemented for 'Bool'"):  # as PyTorch
        t.scatter_reduce(0, idx_tensor([0, 0]), th.tensor([True, True]), "mean")
    assert t.tolist() == [True, False]


# ---- index_add / index_copy / index_fill ------------------------------
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_index_add_copy_fill(make, rng, d, layout):
    t, a = make(SHAPE, d, layout)

    def check(case):
        op, dim = case
        n = SHAPE[dim]
        if op == "index_add":
            idx = rng.integers(0, n, 6)  # repeats accumulate
        else:
            idx = rng.permutation(n)[:3]
            if op == "index_fill" and dim == 1:
                idx = idx - n  # index_fill wraps negative indices, as PyTorch
        sshape = list(SHAPE)
        sshape[dim] = len(idx)
        s_t, s = make(sshape, d)
        it = idx_tensor(idx)
        ref = np.array(a, dtype=np.float64 if d.is_floating_point else np.int64)
        sl = [slice(None)] * 3
        if op == "index_add":
            alpha = True if d is th.bool else (2 if not d.is_floating_point else -1.5)
            r = t.index_add(dim, it, s_t, alpha=alpha)
            moved = np.moveaxis(ref, dim, 0)
            np.add.at(moved, idx % n, alpha * np.moveaxis(
                np.asarray(s, moved.dtype), dim, 0))
            exp = ref if d is not th.bool else ref != 0
        elif op == "index_copy":
            r = t.index_copy(dim, it, s_t)
            sl[dim] = idx % n
            ref[tuple(sl)] = s
            exp = ref
        else:
            val = False if d is th.bool else -2
            r = t.index_fill(dim, it, val)
            sl[dim] = idx % n
            ref[tuple(sl)] = val
            exp = ref
        assert_close(r, exp, d)
        assert_close(t, a, d)
        c = t.clone()
        if op == "index_add":
            assert c.index_add_(dim, it, s_t, alpha=alpha) is c
        elif op == "index_copy":
            assert c.index_copy_(dim, it, s_t) is c
        else:
            assert c.index_fill_(dim, it, th.tensor(val, dtype=d) if d is not th.bfloat16
                                 else val) is c
        assert_close(c, to_numpy(r), d)

    each([(op, dim) for op in ("index_add", "index_copy", "index_fill") for dim in range(3)],
         check)


# ---- masked ops -------------------------------------------------------
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_masked_ops(make, rng, d, layout):
    t, a = make(SHAPE, d, layout)
    mask_shapes = [a.shape, a.shape[1:], (1,) * len(a.shape[:-1]) + a.shape[-1:], ()]

    def check(mshape):
        m = rng.random(mshape) < 0.5
        mt = th.tensor(m)
        val = True if d is th.bool else 3
        # masked_fill: the mask broadcasts to the input
        r = t.masked_fill(mt, val)
        exp = np.where(m, val, a)
        assert_close(r, exp, d)
        assert_close(t.masked_fill(mt, th.tensor(val)), exp, d)
        # masked_select: a 1-d result in row-major order of the broadcast
        shape = np.broadcast_shapes(a.shape, m.shape)
        sel = np.broadcast_to(a, shape)[np.broadcast_to(m, shape)]
        assert_close(t.masked_select(mt), sel, d)
        assert_close(th.masked_select(t, mt), sel, d)
        # masked_scatter: source elements in order into the True positions
        if tuple(shape) == tuple(a.shape):
            src_t, src = make((a.size + 2,), d)
            c = t.clone()
            assert c.masked_scatter_(mt, src_t) is c
            exp = np.array(a, copy=True)
            mm = np.broadcast_to(m, a.shape)
            exp[mm] = src[:mm.sum()]
            assert_close(c, exp, d)
            assert_close(t.masked_scatter(mt, src_t), exp, d)
            c = t.clone()
            assert c.masked_fill_(mt, val) is c
            assert_close(c, np.where(m, val, a), d)

    each([s for s in mask_shapes if len(s) <= a.ndim], check)


# ---- nonzero ------------------------------------------------------------
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_nonzero(make, d, layout):
    t, a = make(SHAPE, d, layout, low=0, high=2, discrete=True)
    exp = np.argwhere(a) if a.ndim else np.zeros((int(a != 0), 0), np.int64)
    assert_close(t.nonzero(), exp, th.int64)
    assert_close(th.argwhere(t), exp, th.int64)
    if t.ndim:
        tup = th.nonzero(t, as_tuple=True)
        assert isinstance(tup, tuple) and len(tup) == a.ndim
        for got, want in zip(tup, np.nonzero(a)):
            assert_close(got, want, th.int64)


def test_nonzero_as_tuple_0d():
    (r,) = th.tensor(3.0).nonzero(as_tuple=True)
    assert_close(r, [0], th.int64)
    (r,) = th.tensor(0.0).nonzero(as_tuple=True)
    assert_close(r, np.zeros(0), th.int64)


# ---- put_ ----------------------------------------------------------------
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_put(make, rng, d, layout):
    t, a = make(SHAPE, d, layout)
    size = a.size
    idx = rng.permutation(size)[:7] - size // 2  # distinct, some negative
    s_t, s = make((7,), d)
    c = t.clone()
    assert c.put_(idx_tensor(idx), s_t) is c
    exp = np.array(a, copy=True).reshape(-1)
    exp[idx] = s
    assert_close(c, exp.reshape(a.shape), d)
    assert_close(t.put(idx_tensor(idx), s_t), exp.reshape(a.shape), d)
    assert_close(t, a, d)
    if d is th.bool:
        return
    rep = rng.integers(-size, size, 9)  # repeats add up with accumulate=True
    s2_t, s2 = make((9,), d)
    c = t.clone()
    c.put_(idx_tensor(rep), s2_t, accumulate=True)
    ref = np.array(a, dtype=np.float64 if d.is_floating_point else np.int64).reshape(-1)
    np.add.at(ref, rep, np.asarray(s2, ref.dtype))
    assert_close(c, ref.reshape(a.shape), d)


# ---- out-of-range indices: IndexError, nothing written ------------------
def bad_index_cases():
    """(name, call(t) with one bad index placed after good ones, message); gather and
    the scatter family raise RuntimeError, the others IndexError, as PyTorch"""
    def ix(*v):
        return idx_tensor(v)
    src = th.full((3, 2), -1.0)
    return [
        ("index_select", lambda t: t.index_select(1, ix(0, 1, 4)),
         "index out of range in self"),
        ("index_select neg", lambda t: t.index_select(0, ix(0, -1)),
         "index out of range in self"),
        ("gather", lambda t: t.gather(1, ix(0, 1, 5).reshape(1, 3)),
         "index 5 is out of bounds for dimension 1 with size 4"),
        ("take", lambda t: t.take(ix(0, 11, 12)),
         "out of range: tried to access index 12 on a tensor of 12 elements."),
        ("scatter_", lambda t: t.scatter_(1, ix(0, 1, 2, 3, 0, 4).reshape(3, 2), src),
         "index 4 is out of bounds for dimension 1 with size 4"),
        ("scatter_ neg", lambda t: t.scatter_(1, ix(0, 1, 2, 3, 0, -1).reshape(3, 2), src),
         "index -1 is out of bounds for dimension 1 with size 4"),
        ("gather neg", lambda t: t.gather(0, ix(0, -1).reshape(2, 1)),
         "index -1 is out of bounds for dimension 0 with size 3"),
        ("scatter_add_ neg", lambda t: t.scatter_add_(0, ix(-1).reshape(1, 1), src),
         "index -1 is out of bounds for dimension 0 with size 3"),
        ("scatter_ value", lambda t: t.scatter_(0, ix(0, 3).reshape(2, 1), value=5.0),
         "index 3 is out of bounds for dimension 0 with size 3"),
        ("scatter_add_", lambda t: t.scatter_add_(1, ix(0, 1, 2, 3, 0, 4).reshape(3, 2), src),
         "index 4 is out of bounds"),
        ("scatter_reduce_ sum", lambda t: t.scatter_reduce_(
            1, ix(0, 1, 2, 3, 0, 4).reshape(3, 2), src, "sum"), "index 4 is out of bounds"),
        ("scatter_reduce_ amax", lambda t: t.scatter_reduce_(
            1, ix(0, 1, 2, 3, 0, 4).reshape(3, 2), src, "amax", include_self=False),
         "index 4 is out of bounds"),
        ("scatter_reduce_ mean", lambda t: t.scatter_reduce_(
            1, ix(0, 1, 2, 3, 0, 9).reshape(3, 2), src, "mean"), "index 9 is out of bounds"),
        ("index_add_", lambda t: t.index_add_(0, ix(0, 1, 3), th.ones(3, 4)),
         "index out of range in self"),
        ("index_add_ neg", lambda t: t.index_add_(0, ix(0, 1, -1), th.ones(3, 4)),
         "index out of range in self"),
        ("index_copy_", lambda t: t.index_copy_(0, ix(0, 1, 3), th.ones(3, 4)),
         "index_copy_(): index 3 is out of bounds for dimension 0 with size 3"),
        ("index_copy_ neg", lambda t: t.index_copy_(0, ix(0, 1, -1), th.ones(3, 4)),
         "index_copy_(): index -1 is out of bounds for dimension 0 with size 3"),
        ("index_fill_", lambda t: t.index_fill_(1, ix(0, 1, 4), -1.0),
         "index 4 is out of bounds for dimension 1 with size 4"),
        ("index_fill_ neg", lambda t: t.index_fill_(1, ix(0, 1, -5), -1.0),
         "index -5 is out of bounds for dimension 1 with size 4"),
        ("put_", lambda t: t.put_(ix(0, 1, 12), th.ones(3)),
         "out of range: tried to access index 12 on a tensor of 12 elements."),
        ("put_ accumulate", lambda t: t.put_(ix(0, 1, -13), th.ones(3), accumulate=True),
         "out of range: tried to access index -13 on a tensor of 12 elements."),
        ("index_put_", lambda t: t.index_put_((ix(0, 3),), th.ones(2, 4)),
         "index 3 is out of bounds for dimension 0 with size 3"),
    ]


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_out_of_range_index_leaves_data_unchanged(make, layout):
    def check(case):
        name, call, msg = case
        t = make((3, 4), th.float32, layout)[0]
        snap = snapshot(t)
        kind = RuntimeError if name.startswith(("gather", "scatter")) else IndexError
        with raises(kind, msg):
            call(t)
        assert_unchanged(t, snap)

    each(bad_index_cases(), check)


def test_index_op_errors():
    t = th.arange(12.0).reshape(3, 4)
    snap = snapshot(t)
    with raises(TypeError, "index_select(): Expected dtype int64 or int32 for index, but got "
                           "Float"):
        t.index_select(1, th.tensor([1.0]))
    with raises(IndexError, "index_select(): Index is supposed to be a vector"):
        t.index_select(1, idx_tensor([[1]]))
    with raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], "
                            "but got 2)"):
        t.index_select(2, idx_tensor([1]))
    with raises(TypeError, "gather(): Expected dtype int64 for index"):
        t.gather(0, th.tensor([[1]], dtype=th.int16))
    with raises(RuntimeError, "Index tensor must have the same number of dimensions as input "
                              "tensor"):
        t.gather(1, idx_tensor([0, 1]))
    with raises(RuntimeError, "Size does not match at dimension 0 expected index [4, 2] to be "
                              "smaller than self [3, 4] apart from dimension 1"):
        t.gather(1, idx_tensor([[0, 1]] * 4))
    with raises(TypeError, "scatter(): Expected self.dtype to be equal to src.dtype"):
        t.scatter_(0, idx_tensor([[0]]), th.ones(1, 1, dtype=th.float64))
    with raises(TypeError, "scatter(): Expected dtype int64 for index"):
        t.scatter_(0, th.tensor([[0.0]]), th.ones(1, 1))
    with raises(RuntimeError, "Expected index [2] to be smaller than self [3] apart from "
                              "dimension 0 and to be smaller size than src [1]"):
        th.zeros(3).scatter_(0, idx_tensor([0, 1]), th.ones(1))
    with raises(RuntimeError, "reduce argument must be either add or multiply, got foo"):
        t.scatter_(1, idx_tensor([[0]]), th.ones(1, 1), reduce="foo")
    with raises(RuntimeError, "reduce argument must be either sum, prod, mean, amax or amin, "
                              "got max"):
        t.scatter_reduce_(1, idx_tensor([[0]]), th.ones(1, 1), "max")
    with raises(RuntimeError, "index_add_(): Number of indices (2) should be equal to "
                              "source.size(dim) (3)"):
        th.zeros(3).index_add_(0, idx_tensor([0, 1]), th.ones(3))
    with raises(TypeError, "index_add_(): self (Float) and source (Double) must have the same "
                           "scalar type"):
        th.zeros(3).index_add_(0, idx_tensor([0, 1]), th.ones(2, dtype=th.float64))
    with raises(RuntimeError, "index_copy_(): Number of indices (2) should be equal to "
                              "source.size(dim) (3)"):
        th.zeros(3).index_copy_(0, idx_tensor([0, 1]), th.ones(3))
    with raises(RuntimeError, "index_fill_ only supports a 0-dimensional value tensor, but got "
                              "tensor with 1 dimension(s)."):
        t.index_fill_(0, idx_tensor([0]), th.tensor([2.0]))
    with raises(TypeError, "masked_fill_ only supports boolean masks, but got mask with dtype "
                           "int64"):
        t.masked_fill_(idx_tensor([1, 0, 1, 0]), 0.5)
    with raises(RuntimeError, "masked_fill_ only supports a 0-dimensional value tensor"):
        t.masked_fill_(t > 2, th.tensor([2.0]))
    with raises(RuntimeError, "Shape mismatch: objects cannot be broadcast to a single shape"):
        t.masked_fill(th.tensor([True, False]), 1.0)
    with raises(TypeError, "masked_select: expected BoolTensor for mask, got int64"):
        t.masked_select(idx_tensor([1, 0, 1, 0]))
    with raises(TypeError, "masked_scatter_ only supports boolean masks, but got mask with "
                           "dtype int64"):
        t.masked_scatter_(idx_tensor([1, 0, 1, 0]), th.ones(12))
    with raises(TypeError, "masked_scatter_: expected self and source to have same dtypes but "
                           "got Float and Double"):
        t.masked_scatter_(t > 2, th.ones(12, dtype=th.float64))
    with raises(RuntimeError, "masked_scatter_: Number of elements of source (3) < number of "
                              "ones in mask (9)"):
        t.masked_scatter_(t > 2, th.ones(3))
    with raises(TypeError, "take(): Expected a long tensor for index, but got Float"):
        t.take(th.tensor([0.0]))
    with raises(RuntimeError, "put_(): Expected source and index to have the same number of "
                              "elements, but got source.numel() = 3, index.numel() = 2"):
        t.put_(idx_tensor([0, 1]), th.ones(3))
    with raises(TypeError, "put_(): self and source expected to have the same dtype, but got "
                           "self.dtype = Float and source.dtype = Long"):
        t.put_(idx_tensor([0, 1]), idx_tensor([1, 1]))
    assert_unchanged(t, snap)


def test_writes_into_broadcast_views_are_refused():
    """In place into an expanded tensor (one element behind several
    indices) is an error for the ops that check it."""
    msg = "more than one element of the written-to tensor refers to a single memory location"
    for name, call in (("index_fill_", lambda b: b.index_fill_(1, idx_tensor([0]), 1.0)),
                       ("put_", lambda b: b.put_(idx_tensor([0]), th.tensor([1.0]))),
                       ("index_add_", lambda b: b.index_add_(0, idx_tensor([0]),
                                                             th.ones(1, 4))),
                       ("index_copy_", lambda b: b.index_copy_(1, idx_tensor([0]),
                                                               th.ones(3, 1))),
                       ("masked_scatter_", lambda b: b.masked_scatter_(
                           th.tensor([True, False, False, False]), th.ones(12))),
                       ("index_put_", lambda b: b.index_put_((idx_tensor([0]),), th.ones(4))),
                       ("tril_", lambda b: b.tril_())):
        b = th.zeros(1, 4).expand(3, 4)
        with raises(RuntimeError, msg):
            call(b)
        assert not to_numpy(b).any(), name


BROADCAST_WRITE = "more than one element of the written-to tensor refers to a single memory " \
    "location"


def test_scatter_refuses_broadcast_views():
    idx, src = idx_tensor([[0], [1], [2]]), th.ones(3, 1)
    for call in (lambda b: b.scatter_(1, idx, src), lambda b: b.scatter_add_(1, idx, src),
                 lambda b: b.scatter_reduce_(1, idx, src, "amax")):
        b = th.zeros(1, 4).expand(3, 4)
        with raises(RuntimeError, BROADCAST_WRITE):
            call(b)
        assert not to_numpy(b).any()


def test_masked_fill_refuses_broadcast_views():
    b = th.zeros(1, 4).expand(3, 4)
    with raises(RuntimeError, BROADCAST_WRITE):
        b.masked_fill_(th.tensor([True, False, False, False]), 1.0)


# ---- cat / stack / hstack / vstack ----------------------------------------
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_cat_stack(make, d, layout):
    if layout == "0d":
        t1, a1 = make((), d)
        t2, a2 = make((), d)
        assert_close(th.stack([t1, t2]), np.stack([a1, a2]), d)
        assert_close(th.hstack([t1, t2]), np.hstack([a1, a2]), d)
        assert_close(th.vstack([t1, t2]), np.vstack([a1, a2]), d)
        with raises(RuntimeError, "zero-dimensional tensor (at position 0) cannot be "
                                  "concatenated"):
            th.cat([t1, t2])
        return

    def check(case):
        fn, dim = case
        shapes = {0: [(2, 4, 5), (3, 4, 5), (1, 4, 5)], 1: [(3, 1, 5), (3, 4, 5), (3, 2, 5)],
                  2: [(3, 4, 2), (3, 4, 5), (3, 4, 1)]}[dim % 3]
        if layout == "empty":
            shapes = [s[:-1] + (0,) if dim % 3 != 2 else s for s in shapes]
        parts = [make(s, d, layout) for s in shapes]
        ts, arrs = [p[0] for p in parts], [p[1] for p in parts]
        if fn == "cat":
            exp = np.concatenate(arrs, axis=dim)
            assert_close(th.cat(ts, dim), exp, d)
            assert_close(th.concat(ts, dim=dim), exp, d)
            assert_close(th.cat(tuple(ts), dim=dim), exp, d)
        elif fn == "stack":
            same = [make(shapes[1], d, layout) for _ in range(3)]
            exp = np.stack([p[1] for p in same], axis=dim)
            assert_close(th.stack([p[0] for p in same], dim), exp, d)
        elif fn == "hstack" and dim == 1:
            assert_close(th.hstack(ts), np.hstack(arrs), d)
        elif fn == "vstack" and dim == 0:
            assert_close(th.vstack(ts), np.vstack(arrs), d)

    each([(fn, dim) for fn in ("cat", "stack", "hstack", "vstack") for dim in (0, 1, 2, -1)],
         check)


def test_cat_stack_1d_and_promotion():
    a = th.tensor([1.0, 2.0])
    b = th.tensor([3, 4, 5], dtype=th.int32)
    assert_close(th.hstack([a, b]), [1.0, 2.0, 3.0, 4.0, 5.0], th.float32)
    assert_close(th.vstack([a, a]), [[1.0, 2.0], [1.0, 2.0]], th.float32)
    assert_close(th.stack([a, a], -1), [[1.0, 1.0], [2.0, 2.0]], th.float32)
    # promotion like PyTorch's result_type over all inputs
    cases = [
        ([th.int8, th.uint8], th.int16),
        ([th.bool, th.bool], th.bool),
        ([th.bool, th.int8], th.int8),
        ([th.int64, th.float16], th.float16),
        ([th.float16, th.bfloat16], th.float32),
        ([th.float32, th.float64], th.float64),
        ([th.int32, th.float32, th.int64], th.float32),
        ([th.uint8, th.int64], th.int64),
    ]
    for dts, want in cases:
        ts = [th.ones(2, dtype=dt) for dt in dts]
        r = th.cat(ts)
        assert r.dtype is want, (dts, r.dtype)
        assert_close(r, np.ones(2 * len(dts)), want)
    # legacy: 1-d empty tensors are skipped whatever the other shapes
    m = th.ones(2, 3)
    assert_close(th.cat([m, th.ones(0), m]), np.ones((4, 3)), th.float32)
    assert_close(th.cat([th.ones(2, 3), th.ones(0, 3), th.ones(1, 3, dtype=th.float64)]),
                 np.ones((3, 3)), th.float64)
    # generators are accepted
    assert_close(th.cat(th.ones(2) for _ in range(2)), np.ones(4), th.float32)
    # the result never aliases an input
    r = th.cat([a])
    r[0] = 9.0
    assert a[0].item() == 1.0


def test_cat_stack_errors():
    a = th.ones(3, 4)
    with raises(RuntimeError, "torch.cat(): expected a non-empty list of Tensors"):
        th.cat([])
    with raises(RuntimeError, "Sizes of tensors must match except in dimension 0. Expected "
                              "size 4 but got size 3 for tensor number 1 in the list."):
        th.cat([a, th.ones(1, 3)])
    with raises(RuntimeError, "Tensors must have same number of dimensions: got 2 and 1"):
        th.cat([a, th.ones(4)])
    with raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but "
                            "got 2)"):
        th.cat([a, a], dim=2)
    with raises(RuntimeError, "zero-dimensional tensor (at position 1) cannot be "
                              "concatenated"):
        th.cat([th.ones(1), th.tensor(1.0)])
    with raises(RuntimeError, "stack expects a non-empty TensorList"):
        th.stack([])
    with raises(RuntimeError, "stack expects each tensor to be equal size, but got [3, 4] at "
                              "entry 0 and [2, 4] at entry 1"):
        th.stack([a, th.ones(2, 4)])
    with raises(IndexError, "Dimension out of range (expected to be in range of [-3, 2], but "
                            "got 3)"):
        th.stack([a, a], 3)


# ---- split / chunk / unbind -----------------------------------------------
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "broadcast", "empty"])
@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_split_chunk_unbind(make, d, layout):
    t, a = make((7, 6, 5), d, layout)

    def check(case):
        op, dim, arg = case
        n = a.shape[dim]
        if op == "split":
            if isinstance(arg, int):
                pieces = t.split(arg, dim)
                bounds = list(range(arg, n, arg))
            else:
                arg = [n - sum(arg[:-1])] + list(arg[:-1]) if n >= sum(arg[:-1]) else None
                if arg is None:
                    return
                pieces = th.split(t, arg, dim)
                bounds = list(np.cumsum(arg)[:-1])
            exp = np.split(a, bounds, axis=dim) if n or not isinstance(arg, int) else [a]
        elif op == "chunk":
            pieces = t.chunk(arg, dim)
            size = -(-n // arg) if n else 0
            exp = np.split(a, list(range(size, n, size)), axis=dim) if size else [a]
        else:
            pieces = t.unbind(dim)
            exp = [np.take(a, i, axis=dim) for i in range(n)]
        assert isinstance(pieces, tuple)
        assert len(pieces) == len(exp), (len(pieces), len(exp))
        for p, e in zip(pieces, exp):
            assert_close(p, e, d)

    cases = [("split", dim, s) for dim in (0, 1, -1) for s in (1, 2, 3, 7, [1, 2], [0, 3])]
    cases += [("chunk", dim, c) for dim in (0, 1, 2) for c in (1, 2, 3, 4, 10)]
    cases += [("unbind", dim, None) for dim in (0, 1, -1)]
    each(cases, check)


def test_split_views_share_storage():
    t = th.arange(10.0)
    parts = t.split(4)
    parts[1][0] = -1.0
    assert t[4].item() == -1.0
    assert [tuple(p.shape) for p in th.chunk(th.ones(6), 4)] == [(2,), (2,), (2,)]
    assert [tuple(p.shape) for p in th.ones(5).split(7)] == [(5,)]


def test_split_chunk_errors():
    t = th.ones(5, 2)
    with raises(RuntimeError, "split expects split_size be non-negative, but got "
                              "split_size=-1"):
        t.split(-1)
    with raises(RuntimeError, "split_size=0"):
        t.split(0)
    with raises(RuntimeError, "split_with_sizes expects split_sizes to sum exactly to 5 (input "
                              "tensor's size at dimension 0), but got split_sizes=[1, 2]"):
        t.split([1, 2])
    with raises(RuntimeError, "chunk expects `chunks` to be greater than 0, got: 0"):
        t.chunk(0)
    with raises(IndexError, "Dimension out of range"):
        t.split(2, 2)
    with raises(IndexError, "Dimension out of range"):
        t.unbind(2)
    with raises(IndexError, "Dimension out of range"):
        t.chunk(2, -3)


# ---- flip / roll / repeat / tile / tril / triu ------------------------------
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_flip_roll(make, d, layout):
    t, a = make(SHAPE, d, layout)

    def check(case):
        op, arg = case
        if op == "flip":
            dims = arg if t.ndim else ([] if arg != [0] else [0])
            exp = np.flip(a, axis=tuple(dims) if t.ndim else None) if (t.ndim or dims) else a
            assert_close(t.flip(dims), exp, d)
            assert_close(th.flip(t, dims), exp, d)
        elif op == "fliplr" and t.ndim >= 2:
            assert_close(t.fliplr(), np.fliplr(a), d)
        elif op == "flipud" and t.ndim >= 1:
            assert_close(th.flipud(t), np.flipud(a), d)
        elif op == "roll":
            shifts, dims = arg
            if not t.ndim and dims is not None:
                dims = [0] * len(dims) if isinstance(dims, list) else 0
                shifts = shifts if isinstance(shifts, int) else shifts[:1]
                dims = dims if isinstance(dims, int) else dims[:1]
            if dims is None:
                exp = np.roll(a.reshape(-1), shifts).reshape(a.shape)
            else:
                exp = np.roll(a, shifts, axis=dims if t.ndim else None)
            assert_close(t.roll(shifts, dims), exp, d)

    cases = [("flip", dims) for dims in ([0], [1, 2], [-1], [0, 1, 2], [])]
    cases += [("fliplr", None), ("flipud", None)]
    cases += [("roll", sd) for sd in ((1, None), (-3, None), (13, None), (2, 0), (-1, 2),
                                      ((1, -2), [0, 2]), ((7, 5), [1, -1]), (0, 1))]
    each(cases, check)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_repeat_tile(make, d, layout):
    t, a = make((2, 3, 4), d, layout)

    def check(reps):
        if len(reps) >= a.ndim:
            r = t.repeat(*reps)
            assert_close(r, np.tile(a, reps), d)
            assert_close(t.repeat(reps), np.tile(a, reps), d)
        assert_close(t.tile(reps), np.tile(a, reps), d)
        assert_close(th.tile(t, reps), np.tile(a, reps), d)

    each([(1, 1, 1), (2, 1, 3), (1, 2, 1, 2), (0, 2, 1), (2,), (3, 1), (2, 1, 1, 1, 1),
          ()], check)


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "broadcast",
                                    "empty"])
@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_tril_triu(make, d, layout):
    t2, a2 = make((4, 6), d, layout)
    t3, a3 = make((2, 5, 3), d, layout)

    def check(case):
        op, k, which = case
        t, a = (t2, a2) if which == 2 else (t3, a3)
        npf = np.tril if op == "tril" else np.triu
        assert_close(getattr(t, op)(k), npf(a, k), d)
        assert_close(getattr(th, op)(t, diagonal=k), npf(a, k), d)
        if layout != "broadcast":
            c = t.clone()
            assert getattr(c, op + "_")(k) is c
            assert_close(c, npf(a, k), d)

    each([(op, k, w) for op in ("tril", "triu") for k in (0, 1, -1, 3, -4, 10, -10)
          for w in (2, 3)], check)


def test_shaping_errors():
    t = th.ones(3, 4)
    with raises(RuntimeError, "dim 0 appears multiple times in the list of dims"):
        t.flip([0, 0])
    with raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but "
                            "got 2)"):
        t.flip(2)
    with raises(RuntimeError, "Input must be >= 2-d."):
        th.ones(2).fliplr()
    with raises(RuntimeError, "Input must be >= 1-d."):
        th.tensor(1.0).flipud()
    with raises(RuntimeError, "shifts and dimensions must align. shifts: 2, dims:1"):
        t.roll((1, -1), (0,))
    with raises(RuntimeError, "`shifts` required to be a scalar when `dims` is not specified"):
        t.roll((1, 2))
    with raises(IndexError, "Dimension out of range"):
        t.roll(1, 3)
    with raises(RuntimeError, "Number of dimensions of repeat dims can not be smaller than "
                              "number of dimensions of tensor"):
        t.repeat(2)
    with raises(RuntimeError, "Trying to create tensor with negative dimension"):
        th.ones(2).repeat(-1)
    with raises(RuntimeError, "tril: input tensor must have at least 2 dimensions"):
        th.ones(3).tril()
    with raises(RuntimeError, "triu: input tensor must have at least 2 dimensions"):
        th.ones(3).triu()
