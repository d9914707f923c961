"""Sparse gradients in ember.nn: Embedding(sparse=True), the optimizers that
take sparse gradients (SGD, Adagrad, SparseAdam) against the dense path, a
NumPy reference and PyTorch, and a 2-layer GCN against PyTorch."""
import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F

try:
    import torch
except ImportError:
    torch = None

live = pytest.mark.skipif(torch is None, reason="needs torch")
INDICES = [[1, 2, 2, 7], [4, 0, 2, 2]]


def _pair(padding_idx=None, seed=0):
    ember.manual_seed(seed)
    sparse = nn.Embedding(9, 3, sparse=True, padding_idx=padding_idx).double()
    dense = nn.Embedding(9, 3, padding_idx=padding_idx).double()
    with ember.no_grad():
        dense.weight.copy_(sparse.weight)
    return sparse, dense


def _loss(emb, x):
    return (emb(x) ** 2).sum() + emb(x)[..., 0].sum()


@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_sparse_gradient(padding_idx):
    sparse, dense = _pair(padding_idx)
    x = ember.tensor(INDICES)
    _loss(sparse, x).backward()
    _loss(dense, x).backward()
    g = sparse.weight.grad
    assert g.is_sparse and g.shape == sparse.weight.shape and not g.is_coalesced()
    np.testing.assert_allclose(g.to_dense().numpy(), dense.weight.grad.numpy(), rtol=1e-12)
    # one row per looked-up index (twice: the loss uses the embedding twice)
    kept = [i for row in INDICES for i in row if i != padding_idx]
    assert sorted(g._indices()[0].tolist()) == sorted(kept * 2)
    out = F.embedding(x, sparse.weight, sparse=True)
    np.testing.assert_allclose(out.detach().numpy(), dense(x).detach().numpy())


@pytest.mark.parametrize("make", [
    lambda p: ember.optim.SGD(p, lr=0.1),
    lambda p: ember.optim.SGD(p, lr=0.1, momentum=0.9),
    lambda p: ember.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
    lambda p: ember.optim.SGD(p, lr=0.1, maximize=True),
    lambda p: ember.optim.Adagrad(p, lr=0.3),
    lambda p: ember.optim.Adagrad(p, lr=0.3, lr_decay=0.1, initial_accumulator_value=0.2)])
def test_optimizers_sparse_equal_dense(make):
    """These updates leave rows without gradient as a zero dense gradient
    would, so sparse and dense training agree."""
    sparse, dense = _pair()
    opt_s, opt_d = make(sparse.parameters()), make(dense.parameters())
    for step in range(4):
        x = ember.tensor(INDICES) if step % 2 == 0 else ember.tensor([[3, 3, 5]])
        for emb, opt in ((sparse, opt_s), (dense, opt_d)):
            opt.zero_grad()
            _loss(emb, x).backward()
            opt.step()
    np.testing.assert_allclose(sparse.weight.detach().numpy(), dense.weight.detach().numpy(),
                               rtol=1e-12, atol=1e-12)


def test_sparse_adam_matches_lazy_adam_reference():
    sparse, _ = _pair()
    w = sparse.weight.detach().numpy().copy()
    m, v = np.zeros_like(w), np.zeros_like(w)
    lr, b1, b2, eps = 0.05, 0.8, 0.9, 1e-8
    opt = ember.optim.SparseAdam(sparse.parameters(), lr=lr, betas=(b1, b2), eps=eps)
    for step in range(1, 5):
        x = ember.tensor(INDICES) if step % 2 else ember.tensor([[3, 3, 5]])
        opt.zero_grad()
        _loss(sparse, x).backward()
        g = sparse.weight.grad.to_dense().numpy()
        rows = np.unique(x.numpy())
        m[rows] = b1 * m[rows] + (1 - b1) * g[rows]
        v[rows] = b2 * v[rows] + (1 - b2) * g[rows] ** 2
        size = lr * np.sqrt(1 - b2 ** step) / (1 - b1 ** step)
        w[rows] -= size * m[rows] / (np.sqrt(v[rows]) + eps)
        opt.step()
        np.testing.assert_allclose(sparse.weight.detach().numpy(), w, rtol=1e-10, atol=1e-12)


def test_sparse_gradient_errors():
    sparse, dense = _pair()
    _loss(sparse, ember.tensor(INDICES)).backward()
    for name in ("Adam", "AdamW"):
        with pytest.raises(RuntimeError, match="Adam does not support sparse gradients, please "
                                               "consider SparseAdam instead"):
            getattr(ember.optim, name)(sparse.parameters()).step()
    for name in ("RMSprop", "Adadelta", "Adamax", "NAdam", "RAdam", "Rprop", "ASGD"):
        with pytest.raises(RuntimeError, match=f"{name} does not support sparse gradients"):
            getattr(ember.optim, name)(sparse.parameters()).step()
    with pytest.raises(RuntimeError, match=r"add\(sparse, dense\) is not supported"):
        ember.optim.SGD(sparse.parameters(), lr=0.1, weight_decay=0.1).step()
    with pytest.raises(RuntimeError, match="weight_decay option is not compatible with sparse"):
        ember.optim.Adagrad(sparse.parameters(), weight_decay=0.1).step()
    before = sparse.weight.detach().clone()
    with pytest.raises(NotImplementedError, match="sparse_coo"):
        nn.utils.clip_grad_norm_(sparse.parameters(), 1.0)  # as PyTorch: no sparse norms
    assert ember.equal(sparse.weight.detach(), before)
    _loss(dense, ember.tensor(INDICES)).backward()
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients, "
                                           "please consider Adam instead"):
        ember.optim.SparseAdam(dense.parameters()).step()
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        ember.optim.SparseAdam(dense.parameters(), lr=-1)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1: 1.0"):
        ember.optim.SparseAdam(dense.parameters(), betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="SparseAdam requires dense parameter tensors"):
        ember.optim.SparseAdam([ember.ones(2).to_sparse().requires_grad_()])


@live
@pytest.mark.parametrize("name,kwargs", [("SparseAdam", dict(lr=0.05)),
                                         ("SGD", dict(lr=0.1)),
                                         ("SGD", dict(lr=0.1, momentum=0.9)),
                                         ("Adagrad", dict(lr=0.3))])
def test_embedding_training_matches_torch(name, kwargs):
    sparse, _ = _pair(padding_idx=0)
    w0 = sparse.weight.detach().numpy().astype(np.float32)
    results = []
    for lib in (ember, torch):
        emb = lib.nn.Embedding(9, 3, sparse=True, padding_idx=0)
        with lib.no_grad():
            emb.weight.copy_(lib.tensor(w0))
        opt = getattr(lib.optim, name)(emb.parameters(), **kwargs)
        for step in range(4):
            x = lib.tensor(INDICES) if step % 2 == 0 else lib.tensor([[3, 0, 5]])
            opt.zero_grad()
            _loss(emb, x).backward()
            opt.step()
        results.append(emb.weight.detach().numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5, atol=1e-6)


def _gcn(lib, adj, x, weights, labels):
    """The PyTorch example's GCN: two graph convolutions (support = x @ W,
    out = spmm(adj, support) + b), ReLU and dropout off, log_softmax."""
    params = [lib.tensor(w, requires_grad=True) for w in weights]
    w1, b1, w2, b2 = params
    h = lib.relu(lib.spmm(adj, x @ w1) + b1)
    out = lib.sparse.mm(adj, h @ w2) + b2
    logp = lib.nn.functional.log_softmax(out, dim=1)
    loss = lib.nn.functional.nll_loss(logp, labels)
    loss.backward()
    return [logp.detach().numpy(), loss.detach().numpy()] + [p.grad.numpy() for p in params]


@live
def test_gcn_matches_torch():
    rng = np.random.default_rng(4)
    n, f, h, c = 20, 7, 6, 3
    a = (rng.random((n, n)) < 0.2).astype(np.float32)
    a = np.maximum(a, a.T) + np.eye(n, dtype=np.float32)
    norm = (a / a.sum(1, keepdims=True)).astype(np.float32)   # row-normalised, as the example
    idx = np.stack(np.nonzero(norm))
    vals = norm[tuple(idx)]
    x = rng.standard_normal((n, f)).astype(np.float32)
    weights = [rng.standard_normal(s).astype(np.float32) * 0.3 for s in ((f, h), (h,), (h, c),
                                                                          (c,))]
    labels = rng.integers(0, c, n)
    got = _gcn(ember, ember.sparse_coo_tensor(ember.tensor(idx), ember.tensor(vals), (n, n)),
               ember.tensor(x), weights, ember.tensor(labels))
    want = _gcn(torch, torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(vals), (n, n)),
                torch.tensor(x), weights, torch.tensor(labels))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def _graph_pipeline(lib, edges, words, labels, weights, steps=3):
    """A GCN pipeline written the way PyTorch's GCN example writes it: an
    int64 sparse adjacency from an int32 edge array, self-loops added with a
    dense eye, D^-1/2 A D^-1/2 with sparse diagonal matrices on both sides,
    sparse row-normalised features, graph convolutions as mm + spmm, Adam
    with weight decay."""
    n = words.shape[0]
    features = lib.tensor(words, dtype=lib.float32)
    scale = 1 / lib.sum(features, dim=1)
    scale[scale == float("inf")] = 0
    features = lib.diag(scale).to_sparse() @ features
    adj = lib.sparse_coo_tensor(edges.T, lib.ones(edges.shape[0]), (n, n), dtype=lib.int64)
    adj = lib.eye(n) + adj
    degree = lib.sqrt(1 / lib.sum(adj, dim=1))
    degree[degree == float("inf")] = 0
    degree = lib.diag(degree).to_sparse()
    adj = (degree @ adj @ degree).to_sparse().to("cpu")
    features = features.to_sparse().to("cpu")

    class GraphConv(lib.nn.Module):
        def __init__(self, w, b):
            super().__init__()
            self.kernel = lib.nn.Parameter(lib.tensor(w))
            self.bias = lib.nn.Parameter(lib.tensor(b))

        def forward(self, x, a):
            return lib.spmm(a, lib.mm(x, self.kernel)) + self.bias

    gc1, gc2 = GraphConv(*weights[:2]), GraphConv(*weights[2:])
    params = list(gc1.parameters()) + list(gc2.parameters())
    opt = lib.optim.Adam(params, lr=0.05, weight_decay=5e-4)
    target = lib.tensor(labels)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        out = lib.nn.functional.log_softmax(gc2(lib.relu(gc1(features, adj)), adj), dim=1)
        loss = lib.nn.NLLLoss()(out, target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return [losses, out.detach().numpy()] + [p.detach().numpy() for p in params]


@live
def test_gcn_example_pipeline_matches_torch():
    rng = np.random.default_rng(9)
    n, f, h, c = 30, 12, 8, 4
    edges = rng.integers(0, n, (60, 2)).astype(np.int32)
    words = (rng.random((n, f)) < 0.3).astype(np.int32)
    words[0] = 0  # a node without words: its scale is inf, set to 0
    labels = rng.integers(0, c, n)
    weights = [rng.standard_normal(s).astype(np.float32) * 0.4
               for s in ((f, h), (h,), (h, c), (c,))]
    got = _graph_pipeline(ember, edges, words, labels, weights)
    want = _graph_pipeline(torch, edges, words, labels, weights)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5)
    for g, w in zip(got[1:], want[1:]):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
