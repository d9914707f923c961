"""ember.thcunn's embedding and embedding_bag kernels against ember.thnn's
(the CPU kernels are the reference) on fresh random data in float64 and
float32: every output (offset2bag, bag_size and max_indices exactly), the
gradients, the options, non-contiguous inputs, degenerate sizes and the
errors (same exception and message as ember.thnn, inputs left intact).
Runs on a GPU or on libTHC's emulated device."""
import numpy as np
import pytest

import ember.th as th
import ember.thc as thc
import ember.thcunn as k

thnn = pytest.importorskip("ember.thnn", reason="the CPU kernels (ember-thnn) are the reference")

pytestmark = pytest.mark.needs_device
DTYPES = [("float64", 1e-10), ("float32", 1e-4)]
MODES = ["sum", "mean", "max"]


def both(a):
    """The same numpy array as an ember.th and an ember.thc tensor."""
    a = np.ascontiguousarray(a)
    return th.from_numpy(a.copy()), thc.from_numpy(a.copy())


def rand(shape, rng, dtype="float64", low=-1.0, high=1.0):
    return both(rng.uniform(low, high, size=shape).astype(dtype))


def same(cpu, gpu, tol=0.0):
    if cpu is None or gpu is None:
        assert cpu is None and gpu is None
        return
    c, g = cpu.numpy(), gpu.cpu().numpy()
    assert c.shape == g.shape and c.dtype == g.dtype, (c.shape, g.shape, c.dtype, g.dtype)
    if tol == 0.0:
        np.testing.assert_array_equal(c, g)
    else:
        assert np.allclose(c, g, rtol=tol, atol=tol, equal_nan=True), np.nanmax(np.abs(c - g))


def raises_like(cpu_call, gpu_call):
    """Both raise the same exception type with the same message."""
    with pytest.raises(Exception) as ec:
        cpu_call()
    with pytest.raises(Exception) as eg:
        gpu_call()
    assert type(eg.value) is type(ec.value), (eg.value, ec.value)
    assert str(eg.value) == str(ec.value)
    return eg.value


# ---- embedding ----------------------------------------------------------------------
@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 4), (), (0,), (4, 0)])
@pytest.mark.parametrize("padding_idx", [None, 2, -1, -6])
def test_embedding(dtype, tol, shape, padding_idx):
    rng = np.random.default_rng(0)
    num, dim = 6, 5
    wc, wg = rand((num, dim), rng, dtype)
    idx = rng.integers(0, num, size=shape)
    if idx.size:   # repeated rows, the padding row and the last row
        idx.flat[0] = 2
        idx.flat[-1] = num - 1
        idx.flat[idx.size // 2] = 2
    ic, ig = both(idx)
    oc, og = thnn.embedding_forward(wc, ic), k.embedding_forward(wg, ig)
    same(oc, og, 0.0)   # a copy: exact
    gc, gg = rand(tuple(oc.shape), rng, dtype)
    gwc = thnn.embedding_backward_params(gc, ic, num, padding_idx)
    gwg = k.embedding_backward_params(gg, ig, num, padding_idx)
    same(gwc, gwg, tol)
    if padding_idx is not None and idx.size:
        assert not gwg.cpu().numpy()[padding_idx % num].any()
    if padding_idx is None or (idx != padding_idx % num).any():   # not all zeros
        assert np.abs(gwg.cpu().numpy()).sum() > 0 or idx.size == 0


@pytest.mark.parametrize("dtype,tol", DTYPES)
def test_embedding_non_contiguous(dtype, tol):
    rng = np.random.default_rng(1)
    w = rng.uniform(-1, 1, size=(4, 9)).astype(dtype)   # the table is its transpose
    idx = rng.integers(0, 9, size=(3, 8))
    wc, _ = both(w.T)
    _, wg = both(w)
    wg = wg.t()
    ic, _ = both(idx[:, ::2])
    _, ig = both(idx)
    ig = ig[:, ::2]
    assert not wg.is_contiguous() and not ig.is_contiguous()
    oc, og = thnn.embedding_forward(wc, ic), k.embedding_forward(wg, ig)
    same(oc, og, 0.0)
    g = rng.uniform(-1, 1, size=(4, 3, 5)).astype(dtype)   # grad (3, 4, 4) as a permutation
    gc, _ = both(g.transpose(1, 2, 0)[:, :4])
    _, gg = both(g)
    gg = gg.permute(1, 2, 0)[:, :4]
    assert not gg.is_contiguous()
    same(thnn.embedding_backward_params(gc, ic, 9, 3),
         k.embedding_backward_params(gg, ig, 9, 3), tol)


def test_embedding_errors():
    rng = np.random.default_rng(2)
    w = rng.uniform(-1, 1, size=(5, 3))
    wc, wg = both(w)
    for bad in ([1, 5, 2, 7], [0, -1, 3], [[0, 1], [2, 9]]):
        ic, ig = both(np.array(bad))
        e = raises_like(lambda: thnn.embedding_forward(wc, ic),
                        lambda: k.embedding_forward(wg, ig))
        assert isinstance(e, IndexError) and "of 5 rows" in str(e)
        gc, gg = both(np.ones(np.array(bad).shape + (3,)))
        raises_like(lambda: thnn.embedding_backward_params(gc, ic, 5),
                    lambda: k.embedding_backward_params(gg, ig, 5))
        # nothing was corrupted
        np.testing.assert_array_equal(wg.cpu().numpy(), w)
        np.testing.assert_array_equal(ig.cpu().numpy(), np.array(bad))
    # the first bad index is named, as on the CPU
    ic, ig = both(np.array([0, 8, 1, 6]))
    e = raises_like(lambda: thnn.embedding_forward(wc, ic), lambda: k.embedding_forward(wg, ig))
    assert "index 8 " in str(e)
    # wrong dtypes and shapes
    fc, fg = both(np.array([0.0, 1.0]))
    raises_like(lambda: thnn.embedding_forward(wc, fc), lambda: k.embedding_forward(wg, fg))
    ic, ig = both(np.array([0, 1]))
    w1c, w1g = both(w[0])
    raises_like(lambda: thnn.embedding_forward(w1c, ic), lambda: k.embedding_forward(w1g, ig))
    lc, lg = both(np.arange(6).reshape(2, 3))
    raises_like(lambda: thnn.embedding_forward(lc, ic), lambda: k.embedding_forward(lg, ig))
    gc, gg = both(np.ones((3, 3)))
    e = raises_like(lambda: thnn.embedding_backward_params(gc, ic, 5),
                    lambda: k.embedding_backward_params(gg, ig, 5))
    assert "[3, 3]" in str(e)
    with pytest.raises(TypeError, match="CUDA tensors"):
        k.embedding_forward(wg, ic)


# ---- embedding_bag -------------------------------------------------------------------
def bag_case(rng, n, offsets, num=7, dim=4, dtype="float64", psw=False, ties=False):
    w = rng.uniform(-1, 1, size=(num, dim)).astype(dtype)
    if ties:   # rows 1 and 4 equal: the first counted wins the max
        w[4] = w[1]
    idx = rng.integers(0, num, size=n)
    if n >= 4:   # repeated rows and the padding row (2)
        idx[1] = idx[0]
        idx[3] = 2
    p = rng.uniform(0.5, 2, size=n).astype(dtype) if psw else None
    return w, idx, np.array(offsets, dtype=np.int64), p


def run_bag(w, idx, ofs, p, mode, last, pad, tol, rng):
    wc, wg = both(w)
    ic, ig = both(idx)
    oc, og = both(ofs)
    pc, pg = both(p) if p is not None else (None, None)
    rc = thnn.embedding_bag_forward(wc, ic, oc, mode, pc, last, pad)
    rg = k.embedding_bag_forward(wg, ig, og, mode, pg, last, pad)
    same(rc[0], rg[0], tol)
    for a, b in zip(rc[1:], rg[1:]):   # offset2bag, bag_size, max_indices: exact
        same(a, b)
    gc, gg = rand(tuple(rc[0].shape), rng, w.dtype.name)
    same(thnn.embedding_bag_backward_params(gc, ic, rc[1], rc[2], rc[3], w.shape[0], mode, pc,
                                            pad),
         k.embedding_bag_backward_params(gg, ig, rg[1], rg[2], rg[3], w.shape[0], mode, pg,
                                         pad), tol)
    if mode == "sum":
        same(thnn.embedding_bag_backward_per_sample_weights(gc, wc, ic, rc[1], mode, pad),
             k.embedding_bag_backward_per_sample_weights(gg, wg, ig, rg[1], mode, pad), tol)
    return rg


@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("last", [False, True])
@pytest.mark.parametrize("pad", [None, 2, -5])
def test_embedding_bag(dtype, tol, mode, last, pad):
    rng = np.random.default_rng(3)
    n = 12
    # empty bags first, in the middle and last
    offsets = [0, 0, 3, 3, 4, 9, 12] if not last else [0, 0, 3, 3, 4, 9, 12, 12]
    w, idx, ofs, _ = bag_case(rng, n, offsets, dtype=dtype, ties=True)
    out, o2b, bsz, mi = run_bag(w, idx, ofs, None, mode, last, pad, tol, rng)
    assert out.shape == (7, 4)
    assert (bsz.cpu().numpy()[[0, 2, 6]] == 0).all() and not out.cpu().numpy()[0].any()
    if mode == "max":
        assert (mi.cpu().numpy()[0] == -1).all()


@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("last", [False, True])
@pytest.mark.parametrize("pad", [None, 2, -1])
def test_embedding_bag_per_sample_weights(dtype, tol, last, pad):
    rng = np.random.default_rng(4)
    n = 10
    offsets = [0, 2, 2, 7] + ([10] if last else [])
    w, idx, ofs, p = bag_case(rng, n, offsets, dtype=dtype, psw=True)
    run_bag(w, idx, ofs, p, "sum", last, pad, tol, rng)


@pytest.mark.parametrize("mode", MODES)
def test_embedding_bag_fixed_length_bags(mode):
    """2-D input as ember.nn passes it: bags of equal length, offsets with
    the end (include_last_offset)."""
    rng = np.random.default_rng(5)
    bags, length = 6, 5
    w, idx, _, _ = bag_case(rng, bags * length, [0], num=20, dim=8)
    run_bag(w, idx, np.arange(bags + 1) * length, None, mode, True, None, 1e-10, rng)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n,offsets,last,dim", [
    (5, [], False, 3),          # no bags: offset2bag stays -1
    (5, [0], True, 3),          # no bags either
    (0, [0, 0, 0], False, 3),   # no indices: every bag empty
    (0, [0], False, 3),
    (6, [0, 4], False, 0),      # a table of no columns
    (6, [0, 2, 6], True, 0),
    (1, [0], False, 3),
])
def test_embedding_bag_degenerate(mode, n, offsets, last, dim):
    rng = np.random.default_rng(6)
    w, idx, ofs, _ = bag_case(rng, n, offsets, dim=dim)
    out, o2b, bsz, mi = run_bag(w, idx, ofs, None, mode, last, None, 1e-10, rng)
    if len(offsets) - int(last) == 0:
        assert (o2b.cpu().numpy() == -1).all()


def test_embedding_bag_max_nan_and_ties():
    rng = np.random.default_rng(7)
    w = rng.uniform(-1, 1, size=(6, 5))
    w[3, 1] = np.nan
    w[5] = w[0]
    idx = np.array([0, 5, 1, 3, 3, 2, 5, 0, 4])
    run_bag(w, idx, np.array([0, 3, 6]), None, "max", False, None, 1e-10, rng)
    run_bag(w, idx, np.array([0, 3, 6]), None, "max", False, 3, 1e-10, rng)


@pytest.mark.parametrize("dtype,tol", DTYPES)
@pytest.mark.parametrize("mode", MODES)
def test_embedding_bag_non_contiguous(dtype, tol, mode):
    rng = np.random.default_rng(8)
    w = rng.uniform(-1, 1, size=(5, 11)).astype(dtype)   # the table is its transpose
    idx = rng.integers(0, 11, size=20)
    ofs = np.array([0, 0, 2, 2, 4, 7, 9, 9, 9, 10, 10, 13])   # every other one: [0, 2, 4, 9, 9, 10]
    p = rng.uniform(0.5, 2, size=20).astype(dtype)
    wc, _ = both(w.T)
    _, wg = both(w)
    wg = wg.t()
    ic, _ = both(idx[::2])
    _, ig = both(idx)
    ig = ig[::2]
    oc, _ = both(ofs[::2])
    _, og = both(ofs)
    og = og[::2]
    pc, pg = (None, None)
    if mode == "sum":
        pc, _ = both(p[::2])
        _, pg = both(p)
        pg = pg[::2]
    assert not (wg.is_contiguous() or ig.is_contiguous() or og.is_contiguous())
    rc = thnn.embedding_bag_forward(wc, ic, oc, mode, pc, False, 1)
    rg = k.embedding_bag_forward(wg, ig, og, mode, pg, False, 1)
    same(rc[0], rg[0], tol)
    for a, b in zip(rc[1:], rg[1:]):
        same(a, b)
    g = rng.uniform(-1, 1, size=(5, 12)).astype(dtype)
    gc, _ = both(g.T[::2])
    _, gg = both(g)
    gg = gg.t()[::2]
    assert not gg.is_contiguous()
    same(thnn.embedding_bag_backward_params(gc, ic, rc[1], rc[2], rc[3], 11, mode, pc, 1),
         k.embedding_bag_backward_params(gg, ig, rg[1], rg[2], rg[3], 11, mode, pg, 1), tol)
    if mode == "sum":
        same(thnn.embedding_bag_backward_per_sample_weights(gc, wc, ic, rc[1], mode, 1),
             k.embedding_bag_backward_per_sample_weights(gg, wg, ig, rg[1], mode, 1), tol)


def test_embedding_bag_large_random():
    """Many bags of random lengths (atomics on a real GPU)."""
    rng = np.random.default_rng(9)
    n, bags = 3000, 200
    cuts = np.sort(rng.integers(0, n + 1, size=bags - 1))
    offsets = np.concatenate([[0], cuts])
    for mode in MODES:
        w, idx, _, p = bag_case(rng, n, [0], num=50, dim=33, psw=mode == "sum")
        run_bag(w, idx, offsets, p, mode, False, 7, 1e-9, rng)


# ---- embedding_bag errors --------------------------------------------------------------
def bag_tensors(w, idx, ofs, p=None):
    return [both(np.asarray(a)) if a is not None else (None, None) for a in (w, idx, ofs, p)]


def test_embedding_bag_index_errors_leave_tensors_intact():
    rng = np.random.default_rng(10)
    w = rng.uniform(-1, 1, size=(6, 3))
    for bad in ([0, 1, 6, 2], [3, -1, 0, 9], [0, 1, 2, -7]):
        idx = np.array(bad)
        ofs = np.array([0, 2])
        (wc, wg), (ic, ig), (oc, og), _ = bag_tensors(w, idx, ofs)
        for mode in MODES:
            e = raises_like(lambda: thnn.embedding_bag_forward(wc, ic, oc, mode),
                            lambda: k.embedding_bag_forward(wg, ig, og, mode))
            assert isinstance(e, IndexError) and "position" in str(e)
        np.testing.assert_array_equal(wg.cpu().numpy(), w)
        np.testing.assert_array_equal(ig.cpu().numpy(), idx)
        np.testing.assert_array_equal(og.cpu().numpy(), ofs)
        # the backwards check indices too (offset2bag and bag_size from a good forward)
        o2bc, o2bg = both(np.array([0, 0, 1, 1]))
        bsc, bsg = both(np.array([2, 2]))
        gc, gg = both(np.ones((2, 3)))
        for mode in ("sum", "mean"):
            raises_like(lambda: thnn.embedding_bag_backward_params(gc, ic, o2bc, bsc, None, 6,
                                                                   mode),
                        lambda: k.embedding_bag_backward_params(gg, ig, o2bg, bsg, None, 6,
                                                                mode))
        raises_like(lambda: thnn.embedding_bag_backward_per_sample_weights(gc, wc, ic, o2bc),
                    lambda: k.embedding_bag_backward_per_sample_weights(gg, wg, ig, o2bg))


def test_embedding_bag_backward_checks_offset2bag_and_max_indices():
    rng = np.random.default_rng(11)
    w = rng.uniform(-1, 1, size=(6, 3))
    (wc, wg), (ic, ig), _, _ = bag_tensors(w, np.array([0, 1, 2, 3]), None)
    bsc, bsg = both(np.array([2, 2]))
    gc, gg = both(np.ones((2, 3)))
    for o2b in ([0, 0, 2, 1], [0, -2, 1, 1]):
        o2bc, o2bg = both(np.array(o2b))
        e = raises_like(lambda: thnn.embedding_bag_backward_params(gc, ic, o2bc, bsc, None, 6,
                                                                   "sum"),
                        lambda: k.embedding_bag_backward_params(gg, ig, o2bg, bsg, None, 6,
                                                                "sum"))
        assert isinstance(e, IndexError) and "offset2bag" in str(e)
        raises_like(lambda: thnn.embedding_bag_backward_per_sample_weights(gc, wc, ic, o2bc),
                    lambda: k.embedding_bag_backward_per_sample_weights(gg, wg, ig, o2bg))
    o2bc, o2bg = both(np.array([0, 0, 1, 1]))
    for mi in ([[0, 1, 6], [2, 3, 3]], [[0, 1, 1], [-2, 3, 3]]):
        mic, mig = both(np.array(mi))
        e = raises_like(lambda: thnn.embedding_bag_backward_params(gc, ic, o2bc, bsc, mic, 6,
                                                                   "max"),
                        lambda: k.embedding_bag_backward_params(gg, ig, o2bg, bsg, mig, 6,
                                                                "max"))
        assert isinstance(e, IndexError) and "max_indices" in str(e)
    raises_like(lambda: thnn.embedding_bag_backward_params(gc, ic, o2bc, bsc, None, 6, "max"),
                lambda: k.embedding_bag_backward_params(gg, ig, o2bg, bsg, None, 6, "max"))
    mic, mig = both(np.zeros((3, 3), dtype=np.int64))
    e = raises_like(lambda: thnn.embedding_bag_backward_params(gc, ic, o2bc, bsc, mic, 6, "max"),
                    lambda: k.embedding_bag_backward_params(gg, ig, o2bg, bsg, mig, 6, "max"))
    assert "[3, 3]" in str(e)
    g3c, g3g = both(np.ones((3, 3)))
    e = raises_like(lambda: thnn.embedding_bag_backward_params(g3c, ic, o2bc, bsc, None, 6),
                    lambda: k.embedding_bag_backward_params(g3g, ig, o2bg, bsg, None, 6))
    assert "[2, 3]" in str(e) and "[3, 3]" in str(e)
    o5c, o5g = both(np.zeros(5, dtype=np.int64))
    e = raises_like(lambda: thnn.embedding_bag_backward_params(gc, ic, o5c, bsc, None, 6),
                    lambda: k.embedding_bag_backward_params(gg, ig, o5g, bsg, None, 6))
    assert "[5]" in str(e)


@pytest.mark.parametrize("offsets,last", [
    ([1, 2], False),          # offsets[0] has to be 0
    ([0, 3, 2], False),       # decreasing
    ([0, 2, 9], False),       # past the end of indices
    ([0, 9, 2], True),        # past the end before decreasing
    ([], True),               # include_last_offset with no offsets
])
def test_embedding_bag_offset_errors(offsets, last):
    rng = np.random.default_rng(12)
    w = rng.uniform(-1, 1, size=(6, 3))
    (wc, wg), (ic, ig), (oc, og), _ = bag_tensors(w, np.array([0, 1, 2, 3, 4]),
                                                  np.array(offsets, dtype=np.int64))
    e = raises_like(lambda: thnn.embedding_bag_forward(wc, ic, oc, "sum", None, last),
                    lambda: k.embedding_bag_forward(wg, ig, og, "sum", None, last))
    assert isinstance(e, ValueError)
    np.testing.assert_array_equal(og.cpu().numpy(), np.array(offsets, dtype=np.int64))


def test_embedding_bag_argument_errors():
    rng = np.random.default_rng(13)
    w = rng.uniform(-1, 1, size=(6, 3))
    (wc, wg), (ic, ig), (oc, og), (pc, pg) = bag_tensors(w, np.array([0, 1, 2]),
                                                         np.array([0, 1]), np.ones(3))
    cases = [
        lambda m, W, I, O, P: m.embedding_bag_forward(W, I, O, "mean", P),    # psw needs sum
        lambda m, W, I, O, P: m.embedding_bag_forward(W, I, O, "prod"),       # bad mode
        lambda m, W, I, O, P: m.embedding_bag_forward(W[0], I, O),            # 1-D weight
        lambda m, W, I, O, P: m.embedding_bag_backward_per_sample_weights(
            W[:2], W, I, I, "mean"),
    ]
    for case in cases:
        raises_like(lambda: case(thnn, wc, ic, oc, pc), lambda: case(k, wg, ig, og, pg))
    # float offsets, float indices
    fc, fg = both(np.zeros(3))
    raises_like(lambda: thnn.embedding_bag_forward(wc, ic, fc),
                lambda: k.embedding_bag_forward(wg, ig, fg))
    raises_like(lambda: thnn.embedding_bag_forward(wc, fc, oc),
                lambda: k.embedding_bag_forward(wg, fg, og))
    # per_sample_weights of another dtype or shape
    p32c, p32g = both(np.ones(3, dtype=np.float32))
    raises_like(lambda: thnn.embedding_bag_forward(wc, ic, oc, "sum", p32c),
                lambda: k.embedding_bag_forward(wg, ig, og, "sum", p32g))
    p2c, p2g = both(np.ones(2))
    raises_like(lambda: thnn.embedding_bag_forward(wc, ic, oc, "sum", p2c),
                lambda: k.embedding_bag_forward(wg, ig, og, "sum", p2g))
    # 2-D indices
    i2c, i2g = both(np.zeros((2, 2), dtype=np.int64))
    e = raises_like(lambda: thnn.embedding_bag_forward(wc, i2c, oc),
                    lambda: k.embedding_bag_forward(wg, i2g, og))
    assert "[2, 2]" in str(e)
    with pytest.raises(TypeError, match="CUDA tensors"):
        k.embedding_bag_forward(wg, ic, og)


# ---- through ember.nn's spec table -----------------------------------------------------
@pytest.mark.parametrize("mode", MODES)
def test_ember_nn_spec_runs_these_kernels(mode):
    """ember.nn's one spec (names and arguments as it calls them) on these
    functions and on ember.thnn's gives the same outputs and gradients."""
    specs = pytest.importorskip("ember.nn.kernels", reason="ember.nn is not installed")
    gpu = specs.specs_for(k.kernels)["embedding_bag"]
    cpu = specs.specs_for(thnn.kernels)["embedding_bag"]
    rng = np.random.default_rng(14)
    w, idx, ofs, p = bag_case(rng, 9, [0, 3, 3, 7, 9], psw=mode == "sum")
    (wc, wg), (ic, ig), (oc, og), (pc, pg) = bag_tensors(w, idx, ofs, p)
    outc, ctxc = cpu.forward(wc, ic, oc, mode, pc, 1)
    outg, ctxg = gpu.forward(wg, ig, og, mode, pg, 1)
    same(outc, outg, 1e-10)
    gc, gg = rand(tuple(outc.shape), rng)
    needs = (True, mode == "sum")
    for a, b in zip(cpu.backward(ctxc, gc, (wc, pc), needs),
                    gpu.backward(ctxg, gg, (wg, pg), needs)):
        same(a, b, 1e-10)
