"""embedding_bag / EmbeddingBag against bag loops in NumPy (float64):
sum, mean and max, offsets and 2-D input, include_last_offset,
per_sample_weights, padding_idx, empty bags, max_norm, from_pretrained;
gradcheck; bad input with PyTorch's wording."""
import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.nn import _kernels

from conftest import requires_torch, torch


@pytest.fixture(autouse=True, params=["installed", "composed"])
def kernels(request, monkeypatch):
    """Every test runs twice: with the installed kernel packages (if any) and
    with the composed forms alone."""
    if request.param == "composed":
        monkeypatch.setattr(_kernels, "_table", dict(_kernels.COMPOSED))
    return request.param


def E(a, grad=False):
    t = ember.from_numpy(np.array(a))
    return t.requires_grad_() if grad else t


def np_bags(weight, indices, bounds, mode, psw=None, padding_idx=None):
    """One row per bag indices[bounds[b]:bounds[b+1]]; padding entries left out."""
    out = np.zeros((len(bounds) - 1, weight.shape[1]))
    for b in range(len(bounds) - 1):
        rows = []
        for j in range(bounds[b], bounds[b + 1]):
            if indices[j] == padding_idx:
                continue
            rows.append(weight[indices[j]] * (psw[j] if psw is not None else 1.0))
        if not rows:
            continue
        rows = np.array(rows)
        out[b] = {"sum": rows.sum(0), "mean": rows.mean(0), "max": rows.max(0)}[mode]
    return out


INDICES = np.array([1, 4, 4, 9, 0, 2, 7, 3, 3, 5])
OFFSETS = np.array([0, 2, 2, 5, 9])                # bag 1 is empty


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 4, -7])
def test_offsets_match_loops(rng, mode, padding_idx):
    w = rng.standard_normal((10, 3))
    got = F.embedding_bag(E(INDICES), E(w), E(OFFSETS), mode=mode, padding_idx=padding_idx)
    pad = None if padding_idx is None else padding_idx % 10
    want = np_bags(w, INDICES, list(OFFSETS) + [len(INDICES)], mode, padding_idx=pad)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_2d_input_and_include_last_offset(rng, mode):
    w = rng.standard_normal((10, 4))
    idx = rng.integers(0, 10, (3, 5))
    got = F.embedding_bag(E(idx), E(w), mode=mode)
    want = np_bags(w, idx.reshape(-1), [0, 5, 10, 15], mode)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    got = F.embedding_bag(E(INDICES), E(w), E([0, 3, 3, 10]), mode=mode,
                          include_last_offset=True)
    np.testing.assert_allclose(got.numpy(), np_bags(w, INDICES, [0, 3, 3, 10], mode),
                               rtol=1e-12)


def test_per_sample_weights(rng):
    w = rng.standard_normal((10, 3))
    psw = rng.standard_normal(len(INDICES))
    got = F.embedding_bag(E(INDICES), E(w), E(OFFSETS), mode="sum", per_sample_weights=E(psw),
                          padding_idx=3)
    want = np_bags(w, INDICES, list(OFFSETS) + [10], "sum", psw, padding_idx=3)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


def test_max_gradient_goes_to_the_first_maximum():
    w = E(np.array([[1.0, 2.0], [1.0, 0.5], [0.0, 2.0]]), grad=True)
    F.embedding_bag(E([0, 1, 2]), w, E([0]), mode="max").sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [[1, 1], [0, 0], [0, 0]])


def test_module_init_padding_and_from_pretrained(rng):
    ember.manual_seed(0)
    m = nn.EmbeddingBag(20, 4, mode="sum", padding_idx=-1)
    assert m.padding_idx == 19 and m.weight[19].tolist() == [0, 0, 0, 0]
    assert abs(float(m.weight[:19].std()) - 1.0) < 0.35
    w = rng.standard_normal((6, 2))
    frozen = nn.EmbeddingBag.from_pretrained(E(w), mode="max")
    assert frozen.weight.requires_grad is False
    idx = E([[0, 5], [2, 2]])
    np.testing.assert_allclose(frozen(idx).numpy(), np_bags(w, [0, 5, 2, 2], [0, 2, 4], "max"))
    assert nn.EmbeddingBag.from_pretrained(E(w), freeze=False).weight.requires_grad


def test_max_norm_renormalises_the_used_rows(rng):
    w = rng.standard_normal((5, 3)) * 3
    weight = E(w)
    F.embedding_bag(E([0, 2]), weight, E([0]), max_norm=1.0, mode="sum")
    norms = np.linalg.norm(weight.numpy(), axis=1)
    assert np.all(norms[[0, 2]] <= 1.0 + 1e-6)
    np.testing.assert_array_equal(weight.numpy()[[1, 3, 4]], w[[1, 3, 4]])


def test_non_contiguous_weight_and_int32_indices(rng):
    w = rng.standard_normal((3, 10))
    got = F.embedding_bag(E(INDICES.astype(np.int32)), E(w).t(), E(OFFSETS.astype(np.int32)),
                          mode="mean")
    np.testing.assert_allclose(got.numpy(), np_bags(w.T, INDICES, list(OFFSETS) + [10], "mean"),
                               rtol=1e-12)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_gradcheck(mode):
    rng = np.random.default_rng(2)
    w = E(rng.standard_normal((10, 3)), grad=True)

    def fn(weight):
        return F.embedding_bag(E(INDICES), weight, E(OFFSETS), mode=mode, padding_idx=3)
    assert gradcheck(fn, (w,), eps=1e-6, atol=1e-5)
    if mode != "max":
        assert gradgradcheck(fn, (w,), eps=1e-6, atol=1e-4)


def test_gradcheck_per_sample_weights():
    rng = np.random.default_rng(3)
    w = E(rng.standard_normal((10, 3)), grad=True)
    psw = E(rng.standard_normal(len(INDICES)), grad=True)

    def fn(weight, s):
        return F.embedding_bag(E(INDICES), weight, E(OFFSETS), mode="sum",
                               per_sample_weights=s)
    assert gradcheck(fn, (w, psw), eps=1e-6, atol=1e-5)
    assert gradgradcheck(fn, (w, psw), eps=1e-6, atol=1e-4)


ERRORS = [
    ("out-of-range", lambda F, L: F.embedding_bag(L.tensor([1, 2, 12]), L.ones(10, 3),
                                                  L.tensor([0])),
     RuntimeError, "Index 2 of input takes value 12 which is not in the valid range [0, 10)"),
    ("first-offset", lambda F, L: F.embedding_bag(L.tensor([1, 2, 3]), L.ones(10, 3),
                                                  L.tensor([1, 2])),
     RuntimeError, "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to "
                   "start from position 0. However, got 1"),
    ("last-offset", lambda F, L: F.embedding_bag(L.tensor([1, 2, 3]), L.ones(10, 3),
                                                 L.tensor([0, 4])),
     RuntimeError, "offsets[-1] can not be greater than input's length 3 but got offsets[-1] "
                   "of 4"),
    ("no-offsets", lambda F, L: F.embedding_bag(L.tensor([1, 2, 3]), L.ones(10, 3)),
     ValueError, "offsets has to be a 1D Tensor but got None"),
    ("2d-offsets", lambda F, L: F.embedding_bag(L.tensor([[1, 2, 3]]), L.ones(10, 3),
                                                L.tensor([0])),
     ValueError, "if input is 2D, then offsets has to be None, as input is treated is a "
                 "mini-batch of fixed length sequences."),
    ("mode", lambda F, L: F.embedding_bag(L.tensor([1, 2, 3]), L.ones(10, 3), L.tensor([0]),
                                          mode="bad"),
     ValueError, "mode has to be one of sum, mean or max"),
    ("psw-mode", lambda F, L: F.embedding_bag(L.tensor([1, 2, 3]), L.ones(10, 3),
                                              L.tensor([0]), per_sample_weights=L.ones(3)),
     NotImplementedError, "embedding_bag: per_sample_weights was not None. per_sample_weights "
                          "is only supported for mode='sum' (got mode='mean')."),
    ("psw-shape", lambda F, L: F.embedding_bag(L.tensor([1, 2, 3]), L.ones(10, 3),
                                               L.tensor([0]), mode="sum",
                                               per_sample_weights=L.ones(2)),
     ValueError, "embedding_bag: If per_sample_weights ("),
    ("float-indices", lambda F, L: F.embedding_bag(L.tensor([1.0, 2.0]), L.ones(10, 3),
                                                   L.tensor([0])),
     RuntimeError, "Expected tensor for argument #1 'indices' to have one of the following "
                   "scalar types: Long, Int; but got "),
    ("padding-idx", lambda F, L: F.embedding_bag(L.tensor([1, 2, 3]), L.ones(10, 3),
                                                 L.tensor([0]), padding_idx=10),
     RuntimeError, "padding_idx must be within the number of embeddings, -10 through 9, but "
                   "got 10"),
    ("offsets-rank", lambda F, L: F.embedding_bag(L.tensor([1, 2, 3]), L.ones(10, 3),
                                                  L.tensor([[0]])),
     ValueError, "offsets has to be a 1D Tensor"),
]


@pytest.mark.parametrize("name,call,exc,message", ERRORS, ids=[e[0] for e in ERRORS])
def test_bad_input(name, call, exc, message):
    with pytest.raises(exc) as info:
        call(F, ember)
    assert message in str(info.value)


@requires_torch
@pytest.mark.torch
@pytest.mark.parametrize("name,call,exc,message", ERRORS, ids=[e[0] for e in ERRORS])
def test_torch_says_the_same(name, call, exc, message):
    with pytest.raises(exc) as info:
        call(torch.nn.functional, torch)
    assert message in str(info.value)


def test_decreasing_offsets_are_refused():
    with pytest.raises(RuntimeError, match="offsets must be non-decreasing"):
        F.embedding_bag(ember.tensor([1, 2, 3]), ember.ones(10, 3), ember.tensor([0, 2, 1]))
    with pytest.raises(AssertionError, match="padding_idx must be within num_embeddings"):
        nn.EmbeddingBag(10, 3, padding_idx=10)


def test_no_bags_and_empty_input(rng):
    w = E(rng.standard_normal((5, 3)), grad=True)
    out = F.embedding_bag(E([1, 2]), w, ember.tensor([], dtype=ember.int64))
    assert tuple(out.shape) == (0, 3)
    out.sum().backward()
    assert w.grad.abs().sum().item() == 0
    assert tuple(F.embedding_bag(E([1, 2]), w, E([0]), include_last_offset=True).shape) == (0, 3)
    for mode in ("sum", "mean", "max"):
        empty = F.embedding_bag(ember.tensor([], dtype=ember.int64), w, E([0, 0]), mode=mode)
        assert empty.tolist() == [[0.0] * 3] * 2
    with pytest.raises(RuntimeError, match="include_last_offset: number of offset should be "
                                           "at least 1"):
        F.embedding_bag(E([1, 2]), w, ember.tensor([], dtype=ember.int64),
                        include_last_offset=True)


@pytest.mark.parametrize("composed", [False, True])
def test_include_last_offset_before_the_end(monkeypatch, composed):
    """With include_last_offset, indices after the last offset belong to no
    bag (as PyTorch)."""
    from ember.nn import _kernels
    if composed:
        monkeypatch.setenv("EMBER_NN_KERNELS", "composed")
    _kernels.reset()
    try:
        w = ember.randn(5, 3, dtype=ember.float64)
        x = ember.tensor([0, 1, 2, 3, 4])
        psw = ember.rand(5, dtype=ember.float64)
        out = F.embedding_bag(x, w, ember.tensor([0, 2, 3]), mode="sum",
                              per_sample_weights=psw, include_last_offset=True)
        expect = ember.stack([w[0] * psw[0] + w[1] * psw[1], w[2] * psw[2]])
        assert ember.allclose(out, expect)
    finally:
        _kernels.reset()
