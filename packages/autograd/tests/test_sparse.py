"""Sparse COO tensors: construction, conversions, coalescing, products and
their gradients against NumPy references on random data (duplicates, empty
nnz, hybrid layouts) and, where torch is installed, against PyTorch."""
import pickle

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck

try:
    import torch
except ImportError:
    torch = None

live = pytest.mark.skipif(torch is None, reason="needs torch")
DTYPES = [ember.float32, ember.float64]


def random_coo(rng, shape, nnz, dense_dims=0, dtype=np.float64):
    """indices (with duplicates) and values of a COO tensor of `shape`
    whose last `dense_dims` dimensions are dense."""
    sd = len(shape) - dense_dims
    idx = np.stack([rng.integers(0, shape[d], nnz) for d in range(sd)]) if nnz else \
        np.zeros((sd, 0), np.int64)
    if nnz > 2:
        idx[:, -1] = idx[:, 0]  # at least one duplicate
    vals = rng.standard_normal((nnz,) + tuple(shape[sd:])).astype(dtype)
    return idx.astype(np.int64), vals


def dense_of(idx, vals, shape):
    out = np.zeros(shape, vals.dtype)
    np.add.at(out, tuple(idx), vals)
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,nnz,dense_dims", [((4, 5), 7, 0), ((4, 5), 0, 0),
                                                  ((3, 4, 2), 6, 1), ((6,), 5, 0)])
def test_construct_coalesce_to_dense(dtype, shape, nnz, dense_dims):
    rng = np.random.default_rng(nnz)
    idx, vals = random_coo(rng, shape, nnz, dense_dims)
    s = ember.sparse_coo_tensor(ember.tensor(idx), ember.tensor(vals, dtype=dtype), shape)
    assert s.is_sparse and s.layout == ember.sparse_coo and s.shape == ember.Size(shape)
    assert s.dtype is dtype and s.device == ember.device("cpu")
    assert s.sparse_dim() == len(shape) - dense_dims and s.dense_dim() == dense_dims
    assert s._nnz() == nnz and s.dim() == len(shape)
    want = dense_of(idx, vals, shape)
    np.testing.assert_allclose(s.to_dense().numpy(), want, rtol=1e-6, atol=1e-6)
    c = s.coalesce()
    assert c.is_coalesced()
    ci = c.indices().numpy()
    keys = np.ravel_multi_index(tuple(ci), shape[:ci.shape[0]]) if nnz else ci[0]
    assert np.all(np.diff(keys) > 0), "coalesced indices are sorted and unique"
    np.testing.assert_allclose(c.to_dense().numpy(), want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(c.values().sum(0).numpy(), vals.sum(0), rtol=1e-5, atol=1e-5)


def test_size_inferred_and_invariants():
    s = ember.sparse_coo_tensor(ember.tensor([[0, 5]]), ember.ones(2))
    assert s.shape == ember.Size([6])
    with pytest.raises(RuntimeError, match="size is inconsistent with indices: for dim 0, "
                                           "size is 2 but found index 5"):
        ember.sparse_coo_tensor(ember.tensor([[0, 5]]), ember.ones(2), (2,))
    with pytest.raises(RuntimeError, match="found negative index -1 for dim 0"):
        ember.sparse_coo_tensor(ember.tensor([[0, -1]]), ember.ones(2))
    with pytest.raises(RuntimeError, match="indices and values must have same nnz"):
        ember.sparse_coo_tensor(ember.tensor([[0, 1]]), ember.ones(3), (2,))


def test_dense_tensor_queries_and_errors():
    d = ember.ones(2, 2)
    assert d.layout == ember.strided and not d.is_sparse and d.layout == "strided"
    assert repr(ember.strided) == "ember.strided"
    assert d.to_dense() is d and d.sparse_dim() == 0 and d.dense_dim() == 2
    with pytest.raises(RuntimeError, match="indices expected sparse coordinate tensor layout "
                                           "but got Strided"):
        d.indices()
    with pytest.raises(RuntimeError, match="values expected sparse tensor layout but got "
                                           "Strided"):
        d.values()
    with pytest.raises(RuntimeError, match="is_coalesced expected sparse coordinate"):
        d.is_coalesced()


def test_uncoalesced_indices_values_refused():
    s = ember.sparse_coo_tensor(ember.tensor([[1, 0, 1]]), ember.ones(3), (2,))
    assert not s.is_coalesced()
    with pytest.raises(RuntimeError, match="Cannot get indices on an uncoalesced tensor"):
        s.indices()
    with pytest.raises(RuntimeError, match="Cannot get values on an uncoalesced tensor"):
        s.values()
    assert s._indices().tolist() == [[1, 0, 1]] and s._values().tolist() == [1, 1, 1]


@pytest.mark.parametrize("name,call", [
    ("sigmoid", lambda s: s.sigmoid()), ("exp", lambda s: ember.exp(s)),
    ("mean", lambda s: s.mean()), ("clamp", lambda s: ember.relu(s)),  # relu runs clamp
    ("numpy", lambda s: s.numpy()), ("index", lambda s: s[0]),
    ("view", lambda s: s.view(-1))])
def test_unsupported_ops_raise_naming_op_and_layout(name, call):
    s = ember.sparse_coo_tensor(ember.tensor([[0, 1], [1, 0]]), ember.ones(2), (2, 2))
    with pytest.raises(NotImplementedError, match=f"'{name}'.*sparse_coo"):
        call(s)
    assert s.to_dense().tolist() == [[0, 1], [1, 0]]  # left intact


def test_add_mul_t_and_mixed_errors():
    rng = np.random.default_rng(1)
    i1, v1 = random_coo(rng, (3, 4), 5)
    i2, v2 = random_coo(rng, (3, 4), 4)
    a = ember.sparse_coo_tensor(ember.tensor(i1), ember.tensor(v1), (3, 4))
    b = ember.sparse_coo_tensor(ember.tensor(i2), ember.tensor(v2), (3, 4))
    da, db = dense_of(i1, v1, (3, 4)), dense_of(i2, v2, (3, 4))
    np.testing.assert_allclose((a + b).to_dense().numpy(), da + db)
    np.testing.assert_allclose((a - b).to_dense().numpy(), da - db)
    np.testing.assert_allclose((a * 2.5).to_dense().numpy(), da * 2.5)
    np.testing.assert_allclose((3 * a).to_dense().numpy(), da * 3)
    np.testing.assert_allclose((a / 2).to_dense().numpy(), da / 2)
    np.testing.assert_allclose((-a).to_dense().numpy(), -da)
    np.testing.assert_allclose(a.t().to_dense().numpy(), da.T)
    assert (a.coalesce() + b.coalesce()).is_coalesced()
    dense = ember.tensor(rng.standard_normal((3, 4)))
    np.testing.assert_allclose((dense + a).numpy(), dense.numpy() + da)
    assert not (dense + a).is_sparse
    np.testing.assert_allclose(ember.add(dense, a).numpy(), dense.numpy() + da)
    m = dense.sparse_mask(a)
    ci = a.coalesce().indices()
    assert m.is_sparse and ember.equal(m.indices(), ci)
    np.testing.assert_allclose(m.values().numpy(), dense.numpy()[tuple(ci.numpy())])
    c = ember.tensor(rng.standard_normal((3, 2)))
    np.testing.assert_allclose(ember.sparse.addmm(c, a, ember.ones(4, 2, dtype=a.dtype),
                                                  beta=0.5, alpha=2.0).numpy(),
                               0.5 * c.numpy() + 2.0 * da @ np.ones((4, 2)))
    with pytest.raises(RuntimeError, match=r"add\(sparse, dense\) is not supported"):
        a + ember.ones(3, 4)
    with pytest.raises(RuntimeError, match="expected 'self' and 'other' to have same size"):
        a + ember.sparse_coo_tensor(ember.tensor([[0]]), ember.ones(1), (3,))
    with pytest.raises(NotImplementedError, match="mul"):
        a * ember.ones(3, 4)


def test_to_sparse_roundtrip_and_hybrid():
    x = ember.tensor([[0., 2., 0.], [1., 0., 0.], [0., 0., 0.]])
    s = x.to_sparse()
    assert s.is_coalesced() and s._nnz() == 2
    assert s.indices().tolist() == [[0, 1], [1, 0]] and s.values().tolist() == [2., 1.]
    assert ember.equal(s.to_dense(), x)
    h = x.to_sparse(1)
    assert h.sparse_dim() == 1 and h.dense_dim() == 1 and h._nnz() == 2
    assert ember.equal(h.to_dense(), x)
    assert x.to_sparse_coo().to_dense().tolist() == x.tolist()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("nnz", [0, 9, 40])
def test_sparse_dense_products(dtype, nnz):
    rng = np.random.default_rng(nnz + 3)
    idx, vals = random_coo(rng, (5, 6), nnz)
    s = ember.sparse_coo_tensor(ember.tensor(idx), ember.tensor(vals, dtype=dtype), (5, 6))
    d = rng.standard_normal((6, 3))
    dd = ember.tensor(d, dtype=dtype)
    want = dense_of(idx, vals, (5, 6)) @ d
    tol = dict(rtol=1e-5, atol=1e-5)
    for out in (ember.sparse.mm(s, dd), ember.mm(s, dd), ember.spmm(s, dd), s.mm(dd),
                s.matmul(dd), ember.matmul(s, dd), s @ dd):
        assert not out.is_sparse and out.dtype is dtype
        np.testing.assert_allclose(out.numpy(), want, **tol)
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied "
                                           r"\(5x6 and 5x3\)"):
        s @ ember.ones(5, 3, dtype=dtype)


def test_dense_at_sparse_and_dtype_conversion():
    rng = np.random.default_rng(8)
    idx, vals = random_coo(rng, (4, 5), 9)
    s = ember.sparse_coo_tensor(ember.tensor(idx), ember.tensor(vals), (4, 5))
    a = ember.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    want = a.detach().numpy() @ dense_of(idx, vals, (4, 5))
    for out in (a @ s, ember.mm(a, s), a.mm(s), ember.matmul(a, s), a.matmul(s)):
        assert not out.is_sparse
        np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-12)
    assert gradcheck(lambda a: a @ s, (a,))
    with pytest.raises(RuntimeError, match=r"shapes cannot be multiplied \(3x5 and 4x5\)"):
        ember.ones(3, 5, dtype=ember.float64) @ s
    f = s.float()
    assert f.is_sparse and f.dtype is ember.float32 and s.to("cpu") is s
    np.testing.assert_allclose(f.to_dense().numpy(), dense_of(idx, vals, (4, 5)), rtol=1e-6)
    i = ember.sparse_coo_tensor(ember.tensor(idx), ember.ones(9), (4, 5), dtype=ember.int64)
    assert i.dtype is ember.int64
    np.testing.assert_allclose((ember.eye(4, 5) + i).numpy(),
                               np.eye(4, 5) + dense_of(idx, np.ones(9), (4, 5)))


def test_product_chunks_match(monkeypatch):
    import ember.sparse as sp
    monkeypatch.setattr(sp, "_CHUNK", 3)
    rng = np.random.default_rng(7)
    idx, vals = random_coo(rng, (4, 5), 11)
    s = ember.sparse_coo_tensor(ember.tensor(idx), ember.tensor(vals), (4, 5))
    d = rng.standard_normal((5, 2))
    np.testing.assert_allclose((s @ ember.tensor(d)).numpy(),
                               dense_of(idx, vals, (4, 5)) @ d, rtol=1e-12)


def test_gradients_of_products():
    rng = np.random.default_rng(5)
    idx, vals = random_coo(rng, (4, 5), 8)
    it = ember.tensor(idx)
    d = ember.tensor(rng.standard_normal((5, 3)), requires_grad=True)
    v = ember.tensor(vals, requires_grad=True)
    for product in (ember.sparse.mm, ember.mm, lambda a, b: a @ b):
        assert gradcheck(lambda v, d: product(ember.sparse_coo_tensor(it, v, (4, 5)), d),
                         (v, d))
    # a sparse leaf: sparse.mm gives it a sparse gradient on its (coalesced)
    # pattern, mm a dense one, as PyTorch
    s = ember.sparse_coo_tensor(it, ember.tensor(vals), (4, 5), requires_grad=True)
    g = rng.standard_normal((4, 3))
    ember.sparse.mm(s, d).backward(ember.tensor(g))
    full = g @ d.detach().numpy().T
    assert s.grad.is_sparse and s.grad.is_coalesced()
    mask = dense_of(idx, np.ones(8), (4, 5)) > 0
    np.testing.assert_allclose(s.grad.to_dense().numpy(), np.where(mask, full, 0), rtol=1e-12)
    np.testing.assert_allclose(d.grad.numpy(), dense_of(idx, vals, (4, 5)).T @ g, rtol=1e-12)
    s.grad = None
    ember.mm(s, d).backward(ember.tensor(g))
    assert not s.grad.is_sparse
    np.testing.assert_allclose(s.grad.numpy(), full, rtol=1e-12)
    # accumulation of two sparse gradients stays sparse
    s.grad = None
    ember.sparse.mm(s, d).sum().backward()
    ember.sparse.mm(s, d).sum().backward()
    assert s.grad.is_sparse
    np.testing.assert_allclose(s.grad.to_dense().numpy(),
                               2 * np.where(mask, np.ones((4, 3)) @ d.detach().numpy().T, 0))


def test_mixed_sparse_dense_accumulation_raises_and_keeps_grad():
    s = ember.sparse_coo_tensor(ember.tensor([[0, 1], [1, 0]]), ember.ones(2), (2, 2),
                                requires_grad=True)
    d = ember.randn(2, 2)
    ember.sparse.mm(s, d).sum().backward()
    kept = s.grad.to_dense().clone()
    with pytest.raises(RuntimeError, match=r"add\(sparse, dense\) is not supported"):
        ember.mm(s, d).sum().backward()
    assert s.grad.is_sparse and ember.equal(s.grad.to_dense(), kept)
    s.grad = None
    ember.mm(s, d).sum().backward()
    kept = s.grad.clone()
    with pytest.raises(TypeError, match="SparseCOO"):
        ember.sparse.mm(s, d).sum().backward()
    assert ember.equal(s.grad, kept)


def test_double_backward_refused():
    s = ember.sparse_coo_tensor(ember.tensor([[0, 1], [1, 0]]), ember.ones(2), (2, 2),
                                requires_grad=True)
    d = ember.randn(2, 2, requires_grad=True)
    with pytest.raises(NotImplementedError, match="SparseAddmmBackward0: double backward"):
        ember.autograd.grad(ember.sparse.mm(s, d).sum(), d, create_graph=True)


def test_product_errors():
    s = ember.sparse_coo_tensor(ember.tensor([[0, 1], [1, 0]]), ember.ones(2), (2, 2))
    h = ember.sparse_coo_tensor(ember.tensor([[0, 1]]), ember.ones(2, 2), (2, 2))
    with pytest.raises(NotImplementedError, match="hybrid"):
        h @ ember.ones(2, 2)
    with pytest.raises(NotImplementedError, match="sparse @ sparse"):
        ember.sparse.mm(s, s)
    with pytest.raises(NotImplementedError, match="dense @ sparse with a 1-D"):
        ember.ones(2) @ s
    with pytest.raises(RuntimeError, match="expected mat1 and mat2 to have the same dtype"):
        s @ ember.ones(2, 2, dtype=ember.float64)


def test_gradients_of_conversions():
    x = ember.tensor(np.random.default_rng(2).standard_normal((3, 4)), requires_grad=True)
    assert gradcheck(lambda x: x.to_sparse().to_dense() * 2, (x,))
    v = ember.tensor(np.random.default_rng(3).standard_normal(5), requires_grad=True)
    it = ember.tensor([[0, 1, 0, 2, 2], [1, 1, 1, 0, 3]])
    assert gradcheck(lambda v: ember.sparse_coo_tensor(it, v, (3, 4)).to_dense(), (v,))
    s = ember.sparse_coo_tensor(it, v.detach(), (3, 4), requires_grad=True)
    s.to_dense(masked_grad=False).sum().backward()
    assert s.grad.is_sparse and s.grad.to_dense().tolist() == [[1.0] * 4] * 3
    s.grad = None
    s.to_dense().sum().backward()
    assert s.grad.is_sparse and s.grad._nnz() == 4
    assert gradcheck(lambda v: ember.sparse_coo_tensor(it, v, (3, 4)).coalesce().values(),
                     (v,))
    assert gradcheck(lambda v: (ember.sparse_coo_tensor(it, v, (3, 4)).t() * 3).to_dense(),
                     (v,))
    assert gradcheck(lambda v: ember.sparse.sum(ember.sparse_coo_tensor(it, v, (3, 4))), (v,))
    s = ember.sparse_coo_tensor(it, v.detach(), (3, 4), requires_grad=True)
    ember.sparse.sum(s).backward()
    assert s.grad.is_sparse
    assert s.grad.to_dense().tolist() == [[0, 1, 0, 0], [0, 1, 0, 0], [1, 0, 0, 1]]


def test_gcn_two_layers_matches_dense_path():
    """A 2-layer GCN (normalised adjacency as a sparse matrix): outputs and
    gradients equal those of the same model with the dense adjacency."""
    rng = np.random.default_rng(11)
    n, f, h, c = 12, 6, 5, 3
    a = (rng.random((n, n)) < 0.25).astype(np.float64)
    a = np.maximum(a, a.T) + np.eye(n)
    deg = a.sum(1)
    norm = a / np.sqrt(deg[:, None] * deg[None, :])
    adj = ember.tensor(norm).to_sparse()
    x = ember.tensor(rng.standard_normal((n, f)))
    w1 = rng.standard_normal((f, h))
    w2 = rng.standard_normal((h, c))
    labels = ember.tensor(rng.integers(0, c, n))

    def run(adjacency):
        p1 = ember.tensor(w1, requires_grad=True)
        p2 = ember.tensor(w2, requires_grad=True)
        hid = ember.relu(ember.sparse.mm(adjacency, x @ p1))
        out = adjacency @ (hid @ p2)
        # cross-entropy composed of the front's ops (ember.nn is another package)
        loss = -(out.log_softmax(1).gather(1, labels[:, None])).mean()
        loss.backward()
        return out.detach().numpy(), p1.grad.numpy(), p2.grad.numpy()

    for got, want in zip(run(adj), run(ember.tensor(norm))):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_save_load_and_pickle(tmp_path):
    s = ember.sparse_coo_tensor(ember.tensor([[0, 2], [1, 1]]), ember.tensor([1., 2.]), (3, 2))
    back = pickle.loads(pickle.dumps(s))
    assert back.is_sparse and ember.equal(back.to_dense(), s.to_dense())
    ember.save({"adj": s}, tmp_path / "adj.pt")
    back = ember.load(tmp_path / "adj.pt")["adj"]
    assert back.is_sparse and back.shape == s.shape
    assert ember.equal(back.to_dense(), s.to_dense())


@live
def test_load_torch_saved_sparse(tmp_path):
    idx, vals = [[0, 1, 1], [2, 0, 2]], [3., 4., 5.]
    t = torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(vals), (2, 3))
    torch.save({"adj": t, "c": t.coalesce()}, tmp_path / "t.pt")
    back = ember.load(tmp_path / "t.pt")
    for key in ("adj", "c"):
        assert back[key].is_sparse and back[key].shape == ember.Size([2, 3])
        np.testing.assert_array_equal(back[key].to_dense().numpy(), t.to_dense().numpy())
    assert back["c"].is_coalesced()


@live
def test_repr_matches_torch():
    idx = [[0, 1, 1, 0], [2, 0, 2, 2]]
    vals = [3., 4., 5., 1.]
    e = ember.sparse_coo_tensor(ember.tensor(idx), ember.tensor(vals), (2, 3))
    t = torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(vals), (2, 3))
    for a, b in ((e, t), (e.coalesce(), t.coalesce()),
                 (e.requires_grad_(), t.requires_grad_())):
        assert repr(a).replace("ember", "torch") == repr(b)


@live
@pytest.mark.parametrize("nnz", [0, 10])
def test_products_and_gradients_match_torch(nnz):
    rng = np.random.default_rng(nnz)
    idx, vals = random_coo(rng, (6, 4), nnz, dtype=np.float32)
    d = rng.standard_normal((4, 3)).astype(np.float32)
    g = rng.standard_normal((6, 3)).astype(np.float32)
    results = []
    for lib in (ember, torch):
        s = lib.sparse_coo_tensor(lib.tensor(idx), lib.tensor(vals), (6, 4),
                                  requires_grad=True)
        dd = lib.tensor(d, requires_grad=True)
        out = lib.sparse.mm(s, dd)
        out.backward(lib.tensor(g))
        results.append((out.detach().numpy(), s.grad.coalesce().to_dense().numpy(),
                        dd.grad.numpy(), s.grad.is_sparse))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
