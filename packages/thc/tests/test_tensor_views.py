"""Views, shaping, indexing and the indexing kernels on CUDA tensors against
ember.th: the same values, dtypes, shapes and (for views) the same strides
and storage offsets; views share device memory; t[...] and t[...] = v."""
import numpy as np
import pytest

import ember.th as th
import ember.thc as thc

from thc_testing import (DTYPES, assert_same, assert_same_outcome, each, host_values, ids,
                         pair, requires_device, seeded_rng)

pytestmark = requires_device


@pytest.fixture
def rng(request):
    return seeded_rng(request)

# name: (input shape, fn(library, t)); the view ones also compare strides
VIEWS = {
    "view": ((4, 6), lambda m, t: t.view(6, 4)),
    "view -1": ((4, 6), lambda m, t: t.view(-1, 3)),
    "reshape": ((4, 6), lambda m, t: t.reshape(2, 12)),
    "reshape fn": ((4, 6), lambda m, t: m.reshape(t, (3, -1))),
    "view_as": ((4, 6), lambda m, t: t.view_as(m.empty(24))),
    "transpose": ((4, 6), lambda m, t: t.transpose(0, 1)),
    "swapaxes": ((2, 4, 6), lambda m, t: t.swapaxes(0, 2)),
    "permute": ((2, 4, 6), lambda m, t: t.permute(2, 0, 1)),
    "t": ((4, 6), lambda m, t: t.t()),
    "T": ((2, 4, 6), lambda m, t: t.T),
    "mT": ((2, 4, 6), lambda m, t: t.mT),
    "narrow": ((4, 6), lambda m, t: t.narrow(1, 2, 3)),
    "select": ((4, 6), lambda m, t: t.select(0, -1)),
    "expand": ((4, 1), lambda m, t: t.expand(3, 4, 5)),
    "expand -1": ((4, 1), lambda m, t: t.expand(-1, 5)),
    "expand_as": ((4, 1), lambda m, t: t.expand_as(m.empty(4, 7))),
    "broadcast_to": ((4, 1), lambda m, t: m.broadcast_to(t, (2, 4, 3))),
    "squeeze": ((4, 1, 6, 1), lambda m, t: t.squeeze()),
    "squeeze dim": ((4, 1, 6, 1), lambda m, t: t.squeeze(1)),
    "squeeze dims": ((4, 1, 6, 1), lambda m, t: t.squeeze((1, 3))),
    "unsqueeze": ((4, 6), lambda m, t: t.unsqueeze(-1)),
    "flatten": ((2, 4, 6), lambda m, t: t.flatten()),
    "flatten 1": ((2, 4, 6), lambda m, t: t.flatten(1)),
    "unflatten": ((4, 6), lambda m, t: t.unflatten(1, (2, 3))),
    "unfold": ((4, 7), lambda m, t: t.unfold(1, 3, 2)),
    "as_strided": ((4, 6), lambda m, t: t.as_strided((3, 3), (1, 6), 2)),
    "diagonal": ((4, 6), lambda m, t: t.diagonal()),
    "diagonal offset": ((3, 4, 6), lambda m, t: t.diagonal(1, 1, 2)),
    "movedim": ((2, 4, 6), lambda m, t: t.movedim(0, -1)),
    "detach": ((4, 6), lambda m, t: t.detach()),
    "getitem": ((4, 6), lambda m, t: t[1:, None, ::2]),
}
# shaping by copies
COPIES = {
    "contiguous": ((4, 6), lambda m, t: t.t().contiguous()),
    "clone": ((4, 6), lambda m, t: t.clone()),
    "flip": ((4, 6), lambda m, t: t.flip(0)),
    "flip dims": ((2, 4, 6), lambda m, t: t.flip((0, 2))),
    "roll": ((4, 6), lambda m, t: t.roll(2, 1)),
    "roll flat": ((4, 6), lambda m, t: t.roll(-5)),
    "roll dims": ((4, 6), lambda m, t: t.roll((1, 7), (0, 1))),
    "repeat": ((2, 3), lambda m, t: t.repeat(2, 1, 3)),
    "tril": ((4, 6), lambda m, t: t.tril()),
    "tril -1": ((2, 4, 6), lambda m, t: t.tril(-1)),
    "triu 2": ((4, 6), lambda m, t: t.triu(2)),
    "tril_": ((4, 6), lambda m, t: t.clone().tril_(1)),
    "cat": ((4, 6), lambda m, t: m.cat([t, t * 2, t[:1]], 0)),
    "cat dim 1": ((4, 6), lambda m, t: m.cat([t, t[:, :2]], -1)),
    "cat empty": ((4, 6), lambda m, t: m.cat([t, m.empty(0, dtype=t.dtype)])),
    "cat promotes": ((4, 6), lambda m, t: m.cat([t, m.ones(1, 6, dtype=m.float64)])),
    "stack": ((4, 6), lambda m, t: m.stack([t, t], 1)),
    "cat mismatch": ((4, 6), lambda m, t: m.cat([t, t[:, :2]], 0)),
    "cat 0-d": ((4, 6), lambda m, t: m.cat([t[0, 0], t[0, 0]])),
    "repeat too few": ((2, 3), lambda m, t: t.repeat(2)),
}


@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
def test_views_match_the_cpu_metadata_and_values(dtype, rng):
    """Each view has the CPU's shape, strides and storage offset, and shares
    the base tensor's device memory."""
    def check(name):
        shape, fn = VIEWS[name]
        h, g = pair(rng, shape, dtype, "contiguous")
        want, got = fn(th, h), fn(thc, g)
        assert_same(got, want, what=name)
        assert got.stride() == want.stride(), f"{name}: strides {got.stride()} != {want.stride()}"
        assert got.storage_offset() == want.storage_offset()
        assert got.is_contiguous() == want.is_contiguous()
        assert got._version() == g._version()
        if got.numel() and name not in ("expand", "expand -1", "expand_as", "broadcast_to"):
            got.fill_(1)  # a view: the write shows in the base
            want.fill_(1)
            assert_same(g, h, what=f"{name} writes through")
    each(sorted(VIEWS), check)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
def test_shaping_by_copies(dtype, rng):
    def check(name):
        shape, fn = COPIES[name]
        h, g = pair(rng, shape, dtype, "transposed")
        before = host_values(g)
        assert_same_outcome(lambda: fn(thc, g), lambda: fn(th, h), what=name)
        np.testing.assert_array_equal(host_values(g), before)
    each(sorted(COPIES), check)


def test_view_errors():
    g, h = thc.zeros(4, 6), th.zeros(4, 6)
    for fn in (lambda t: t.view(5, 5), lambda t: t.t().view(24), lambda t: t.transpose(0, 2),
               lambda t: t.narrow(0, 3, 2), lambda t: t.select(1, 6), lambda t: t.expand(3, 6),
               lambda t: t.permute(0, 0), lambda t: t.squeeze(5), lambda t: t.unfold(1, 7, 1),
               lambda t: t.as_strided((3,), (1, 1)), lambda t: t.flatten(1, 0),
               lambda t: t.view(-1, -1), lambda t: t.t().t().view(th.float32)):
        assert_same_outcome(lambda: fn(g), lambda: fn(h))


# ---- indexing ------------------------------------------------------------
INDICES = [
    1, -1, (1, 2), slice(1, 3), slice(None, None, 2), (slice(None), 2), (Ellipsis, 1),
    (None, 1), (1, None, slice(None, None, 3)), (slice(5, 1),), (slice(-3, None),), True,
    False, (Ellipsis, None), (slice(None), slice(1, None, 2), None),
    [0, 2], (slice(None), [3, 1, 1]), [[0, 1], [2, 3]], (1, [0, -1]),
    ([0, 2, -1], [4, 0, 1]), ([[0], [3]], [1, 2]), ([1, 2], slice(None, 2), None),
    (Ellipsis, [0, 0]), ([0, 1], None, [2, 3]), ([], slice(None)),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
def test_getitem(dtype, rng):
    """Basic indices and one index list/tensor or mask give the CPU's
    result; basic ones are views with the CPU's strides."""
    h, g = pair(rng, (4, 5), dtype, "transposed")

    def check(idx):
        want, got = h[idx], g[idx]
        assert_same(got, want, what=repr(idx))
        if not isinstance(idx, list) and not (isinstance(idx, tuple) and
                                              any(isinstance(i, list) for i in idx)):
            assert got.stride() == want.stride() and \
                got.storage_offset() == want.storage_offset()
    each(INDICES, check)
    mask_h, mask_g = h > 0, g > 0
    assert_same(g[mask_g], h[mask_h], what="mask")
    assert_same(g[mask_g[:, 0]], h[mask_h[:, 0]], what="row mask")
    assert_same(g[:, mask_g[0]], h[:, mask_h[0]], what="column mask")
    assert_same(g[thc.tensor([3, 0])], h[th.tensor([3, 0])], what="index tensor")
    assert_same(g[th.tensor([3, 0])], h[th.tensor([3, 0])], what="CPU index tensor")
    assert_same(g[thc.tensor(2)], h[th.tensor(2)], what="0-d index tensor")
    assert_same(g[np.array([1, 2])], h[np.array([1, 2])], what="array index")
    assert_same(g[mask_g[:, 0], 1:], h[mask_h[:, 0], 1:], what="mask and slice")
    assert_same(g[None, mask_g[:, 0], [2]], h[None, mask_h[:, 0], [2]], what="mask and list")
    a3h, a3g = pair(rng, (3, 4, 5), dtype, "sliced")
    for idx in (([0, 2], slice(None), [1, 4]), (slice(None), [1, 3], [[0], [4]]),
                ([2], 1, [3]), (Ellipsis, [0, -1])):
        assert_same(a3g[idx], a3h[idx], what=f"3-d {idx!r}")


def test_getitem_errors():
    g, h = thc.zeros(4, 5), th.zeros(4, 5)
    for idx in (5, (0, 0, 0), slice(None, None, -1), (Ellipsis, Ellipsis), 1.5, [4]):
        assert_same_outcome(lambda: g[idx], lambda: h[idx], what=repr(idx))
    assert_same_outcome(lambda: g[thc.tensor([True, False])], lambda: h[th.tensor([True, False])],
                        what="short mask")
    for idx in ((thc.tensor([0, 4]), thc.tensor([1, 5])), ([0, 1], [1, -6]), [[0, 4]]):
        with pytest.raises(IndexError, match="out of bounds"):
            g[idx]
    assert_same_outcome(lambda: thc.zeros(())[0], lambda: th.zeros(())[0])


SETS = [
    (1, 5), ((slice(None), 2), 1.5), (slice(1, 3), "row"), (Ellipsis, "0d"),
    ((slice(None, None, 2), slice(1, None, 2)), 7), ((0,), "cpu row"), (True, 3),
    ([0, 2], 9), ([3, 1], "row"), ((slice(None), [4, 0]), -1), ("mask", 2),
    ((0, [1, 3]), "0d"), ("row mask", 4), (([0, 3], [4, 1]), 6), (([1, 2], [0, 0]), "0d"),
    (([[0], [2]], slice(None)), "row"), (("mask", ), "0d"),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
def test_setitem(dtype, rng):
    """t[idx] = number, 0-d tensor, a broadcast row (CUDA or CPU) write what
    the CPU writes."""
    def check(case):
        idx, value = case
        h, g = pair(rng, (4, 5), dtype, "transposed")
        hv, gv = value, value
        if value == "row":
            hv, gv = pair(rng, (5,), dtype, "contiguous")
        elif value == "cpu row":
            hv, _ = pair(rng, (5,), dtype, "contiguous")
            gv = hv
        elif value == "0d":
            hv, gv = pair(rng, (), dtype, "0d")
        hidx, gidx = idx, idx
        if idx in ("mask", ("mask",)):
            hidx, gidx = h > 1, g > 1
        elif idx == "row mask":
            hidx, gidx = h[:, 0] > 1, g[:, 0] > 1
        h[hidx] = hv
        g[gidx] = gv
        assert_same(g, h, what=f"[{idx!r}] = {value!r}")
    each(SETS, check)


def test_setitem_errors_leave_the_tensor_intact(rng):
    h, g = pair(rng, (4, 5), th.float32, "contiguous")
    before = host_values(g)
    for idx, value in ((0, thc.ones(3)), (5, 1.0), (slice(None), thc.ones(2, 5))):
        with pytest.raises((RuntimeError, IndexError)):
            g[idx] = value
    with pytest.raises(RuntimeError, match="expanded size"):
        g[g > 10] = thc.ones(21)  # not as many values as True entries
    with pytest.raises(IndexError, match="out of bounds"):
        g[[0, 9]] = 1.0
    with pytest.raises(RuntimeError, match="expand"):
        g[0] = th.ones(2, 5)  # a CPU tensor of the wrong shape: refused on the host
    np.testing.assert_array_equal(host_values(g), before)


# ---- the indexing kernels --------------------------------------------------
def _idx(m, values):
    return m.tensor(values, dtype=m.int64)


INDEX_OPS = {
    "index_select": lambda m, t: t.index_select(1, _idx(m, [4, 0, 0, 2])),
    "index_select int32": lambda m, t: m.index_select(t, 0, _idx(m, [3, 1]).int()),
    "index_select -1": lambda m, t: t.index_select(1, _idx(m, [-1])),
    "index_select out of range": lambda m, t: t.index_select(0, _idx(m, [4])),
    "gather": lambda m, t: t.gather(1, _idx(m, [[0, 1], [4, 4], [2, 0], [1, 3]])),
    "gather 0": lambda m, t: m.gather(t, 0, _idx(m, [[3, 2, 1, 0, 0]])),
    "scatter": lambda m, t: t.scatter(0, _idx(m, [[3, 2, 1, 0, 1]]), t[:1].clone()),
    "scatter value": lambda m, t: t.scatter(1, _idx(m, [[0], [1], [2], [3]]), 1),
    "scatter_add": lambda m, t: t.scatter_add(0, _idx(m, [[0, 0, 1, 3, 0]]), t[1:2].clone()),
    "scatter_reduce sum": lambda m, t: t.scatter_reduce(1, _idx(m, [[0, 0]] * 4), t[:, :2],
                                                        "sum"),
    "scatter_ bad dims": lambda m, t: t.clone().scatter_(0, _idx(m, [1]), t),
    "index_add": lambda m, t: t.index_add(0, _idx(m, [0, 0]), t[:2].clone()),
    "index_add alpha": lambda m, t: t.index_add(1, _idx(m, [4, 1]), t[:, :2].clone(), alpha=2),
    "index_copy": lambda m, t: t.index_copy(0, _idx(m, [3, 1]), t[:2].clone()),
    "index_fill": lambda m, t: t.index_fill(1, _idx(m, [0, 2]), 1),
    "index_fill_": lambda m, t: t.clone().index_fill_(0, _idx(m, [1]), -1),
    "masked_fill": lambda m, t: t.masked_fill(t > 0, 0),
    "masked_fill broadcast": lambda m, t: t.masked_fill((t > 1)[0], 3),
    "masked_fill_": lambda m, t: t.clone().masked_fill_(t < 1, 1),
    "masked_fill_ 0-d tensor": lambda m, t: t.clone().masked_fill_(t < 1, t[0, 0].clone()),
    "masked_select": lambda m, t: t.masked_select(t > 0),
    "masked_scatter": lambda m, t: t.masked_scatter(t > 0, t.flatten().clone()),
    "nonzero": lambda m, t: t.nonzero(),
    "nonzero as_tuple": lambda m, t: t.nonzero(as_tuple=True),
    "argwhere": lambda m, t: m.argwhere(t),
    "where 1-arg": lambda m, t: m.where(t > 0),
    "take": lambda m, t: t.take(_idx(m, [[0, 19], [5, 5]])),
    "put_": lambda m, t: t.clone().put_(_idx(m, [0, 7]), t[0, :2].clone()),
    "put_ accumulate": lambda m, t: t.clone().put_(_idx(m, [1, 1]), t[0, :2].clone(), True),
    "index_put_": lambda m, t: t.clone().index_put_((_idx(m, [2, 0]),), t[0].clone()),
    "index_put_ accumulate": lambda m, t: t.clone().index_put_((_idx(m, [1, 1]),), t[0].clone(),
                                                                accumulate=True),
    "index_put_ two": lambda m, t: t.clone().index_put_((_idx(m, [1, 3]), _idx(m, [0, 4])),
                                                        t[0, :2].clone()),
    "index_put_ two accumulate": lambda m, t: t.clone().index_put_(
        (_idx(m, [1, 1, 0]), _idx(m, [2, 2, 2])), t[0, :3].clone(), accumulate=True),
    "index_put_ mask": lambda m, t: t.clone().index_put_((t > 0,), t[0, 0].clone()),
    "scatter_reduce sum no self": lambda m, t: t.scatter_reduce(
        0, _idx(m, [[0, 1, 1, 0, 3]] * 2), t[:2].clone(), "sum", include_self=False),
    "scatter_reduce mean": lambda m, t: t.scatter_reduce(
        0, _idx(m, [[0, 1, 1, 0, 3]] * 2), t[:2].clone(), "mean"),
    "scatter_reduce mean no self": lambda m, t: t.scatter_reduce(
        1, _idx(m, [[0, 0], [1, 1], [4, 4], [0, 2]]), t[:, :2].clone(), "mean",
        include_self=False),
    "cumsum": lambda m, t: t.cumsum(1),
    "cumsum 0": lambda m, t: m.cumsum(t, 0),
    "cumsum dtype": lambda m, t: t.cumsum(0, dtype=m.float64),
    "cumprod": lambda m, t: t.cumprod(1),
    "cumsum_": lambda m, t: t.clone().cumsum_(0),
}
# duplicate positions with float sums may add in any order on a GPU
ORDER_FREE = {"scatter_add", "index_add", "put_ accumulate", "index_put_ accumulate",
              "scatter_reduce sum", "index_put_ two accumulate", "scatter_reduce sum no self",
              "scatter_reduce mean", "scatter_reduce mean no self"}


@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
def test_indexing_kernels(dtype, rng):
    def check(name):
        h, g = pair(rng, (4, 5), dtype, "transposed", -2, 3)
        rtol = 1e-3 if name in ORDER_FREE and dtype in (th.float32, th.float64) else None
        assert_same_outcome(lambda: INDEX_OPS[name](thc, g), lambda: INDEX_OPS[name](th, h),
                            rtol=rtol, what=name)
    each(sorted(INDEX_OPS), check)


# ---- random -----------------------------------------------------------------
@pytest.mark.parametrize("dtype", [th.float32, th.float64, th.float16, th.bfloat16],
                         ids=ids([th.float32, th.float64, th.float16, th.bfloat16]))
def test_random_in_place(dtype):
    thc.manual_seed(123)
    g = thc.empty(64, 64, dtype=dtype)
    g.uniform_(-2, 3)
    v = host_values(g)
    assert v.min() >= -2 and v.max() <= 3 and v.std() > 1
    g.normal_(1.0, 2.0)
    v = host_values(g).astype(np.float64)
    assert abs(v.mean() - 1) < 0.2 and abs(v.std() - 2) < 0.2
    g.bernoulli_(0.25)
    v = host_values(g)
    assert set(np.unique(v)) <= {0, 1} and 0.15 < v.mean() < 0.35
    p = thc.tensor([0.0, 1.0]).expand(64, 2)
    assert host_values(thc.empty(64, 2, dtype=dtype).bernoulli_(p)).tolist() == [[0, 1]] * 64
    assert host_values(p.bernoulli()).tolist() == [[0, 1]] * 64
    g.t().random_(2, 9)  # through a transposed view
    v = host_values(g)
    assert v.min() >= 2 and v.max() <= 8 and np.all(v == np.round(v))


@pytest.mark.parametrize("dtype", [th.int32, th.int64, th.uint8, th.bool],
                         ids=ids([th.int32, th.int64, th.uint8, th.bool]))
def test_random_integers(dtype):
    g = thc.empty(1000, dtype=dtype).random_()
    v = host_values(g).astype(np.int64)
    assert v.min() >= 0 and len(np.unique(v)) > 1
    if dtype is not th.bool:
        v = host_values(thc.empty(1000, dtype=dtype).random_(3, 7)).astype(np.int64)
        assert set(np.unique(v)) == {3, 4, 5, 6}
        v = host_values(thc.empty(1000, dtype=dtype).random_(5)).astype(np.int64)
        assert set(np.unique(v)) == {0, 1, 2, 3, 4}


def test_seeding_reproduces_and_generators_are_independent():
    thc.manual_seed(7)
    a = host_values(thc.randn(100))
    state = thc.get_rng_state()
    b = host_values(thc.rand(50))
    thc.manual_seed(7)
    np.testing.assert_array_equal(host_values(thc.randn(100)), a)
    thc.set_rng_state(state)
    np.testing.assert_array_equal(host_values(thc.rand(50)), b)
    assert isinstance(state, th.Tensor) and state.dtype is th.uint8 and state.numel() == 16
    assert thc.initial_seed() == 7
    gen = thc.Generator().manual_seed(7)
    np.testing.assert_array_equal(host_values(thc.randn(100, generator=gen)), a)
    with pytest.raises(RuntimeError, match="cuda"):
        thc.rand(3, generator=th.Generator())
    assert thc.seed() == thc.initial_seed()


@pytest.mark.parametrize("length", [1025, 70_001])
def test_long_lines_scan_and_compact_in_chunks(rng, length):
    # lines longer than 1024 scan in chunks (and chunk totals recursively):
    # cumsum/cumprod along a long dim with inner elements, and nonzero /
    # masked_select, which place their output rows by a running count
    ints = rng.integers(-3, 4, size=(2, length, 3))
    floats = rng.uniform(0.9, 1.1, size=(length,))
    for values, dims in ((ints, (1, 0, -1)), (floats, (0,))):
        h, g = th.tensor(values), thc.tensor(values)
        for d in dims:
            assert_same(g.cumsum(d), h.cumsum(d))
            assert_same(g.cumprod(d), h.cumprod(d))
        assert_same(g.nonzero(), h.nonzero())
        assert_same(g.masked_select(g > 0), h.masked_select(h > 0))
    f32 = th.tensor(floats).float()
    assert_same(thc.tensor(floats).float().cumsum(0), f32.cumsum(0))


@pytest.mark.parametrize("name", ["scatter_", "scatter_add_", "scatter_reduce_", "index_add_",
                                  "index_copy_", "index_fill_", "put_"])
def test_a_bad_index_leaves_the_target_intact(rng, name):
    # indices are checked on the device before anything is written: the
    # valid ones before the bad one must not have landed
    values = rng.standard_normal((4, 5))
    t = thc.tensor(values)
    src = thc.tensor(rng.standard_normal((4, 5)))
    idx2 = thc.tensor([[0, 1, 2, 3, 9]] * 4)          # 9: out of range along dim 1
    idx1 = thc.tensor([0, 1, 7])                       # 7: out of range along dim 0
    calls = {
        "scatter_": lambda: t.scatter_(1, idx2, src),
        "scatter_add_": lambda: t.scatter_add_(1, idx2, src),
        "scatter_reduce_": lambda: t.scatter_reduce_(1, idx2, src, "amax", include_self=False),
        "index_add_": lambda: t.index_add_(0, idx1, src[:3]),
        "index_copy_": lambda: t.index_copy_(0, idx1, src[:3]),
        "index_fill_": lambda: t.index_fill_(0, idx1, 2.5),
        "put_": lambda: t.put_(thc.tensor([0, 3, 40]),
                               thc.tensor([1.0, 2.0, 3.0], dtype=thc.float64)),
    }
    # as PyTorch: the scatter family raises RuntimeError, the index_* ops IndexError
    with pytest.raises(RuntimeError if name.startswith("scatter") else IndexError):
        calls[name]()
    assert t.cpu().numpy().tolist() == values.tolist()
