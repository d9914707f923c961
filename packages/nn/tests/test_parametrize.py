"""ember.nn.utils.parametrize (register/remove, chaining, right_inverse,
caching, state_dict, copying), the parametrizations orthogonal /
spectral_norm / weight_norm and the hook-based nn.utils.spectral_norm:
values against NumPy (orthogonality, largest singular value), training
steps keeping the constraint, PyTorch's errors."""
import copy
import pickle

import numpy as np
import pytest

import ember
from ember import nn
from ember.nn.utils import parametrizations as PZ
from ember.nn.utils import parametrize as P


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).mT

    def right_inverse(self, A):
        return A.triu()


class Scale(nn.Module):
    def forward(self, X):
        return 2 * X

    def right_inverse(self, X):
        return X / 2


class Split(nn.Module):
    """weight = a + b from two originals."""
    def forward(self, a, b):
        return a + b

    def right_inverse(self, X):
        return X * 0.25, X * 0.75


def sym_linear():
    m = nn.Linear(3, 3).double()
    P.register_parametrization(m, "weight", Symmetric())
    return m


def test_register_read_assign_and_remove():
    m = nn.Linear(3, 3).double()
    w = m.weight.detach().clone()
    P.register_parametrization(m, "weight", Symmetric())
    assert type(m).__name__ == "ParametrizedLinear" and isinstance(m, nn.Linear)
    assert P.type_before_parametrizations(m) is nn.Linear
    assert P.is_parametrized(m) and P.is_parametrized(m, "weight")
    assert not P.is_parametrized(m, "bias")
    W = m.weight.detach().numpy()
    np.testing.assert_array_equal(W, W.T)
    np.testing.assert_array_equal(np.triu(W), np.triu(w.numpy()))
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert "weight" not in dict(m.named_parameters())
    # gradients reach the original; it stays a leaf the optimizer updates
    m(ember.ones(2, 3, dtype=ember.float64)).sum().backward()
    g = m.parametrizations.weight.original.grad.numpy()
    np.testing.assert_array_equal(np.tril(g, -1), 0)
    A = ember.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 5.0], [3.0, 5.0, 6.0]], dtype=ember.float64)
    orig = m.parametrizations.weight.original
    m.weight = A
    assert m.parametrizations.weight.original is orig  # same object, new value
    np.testing.assert_array_equal(m.weight.detach().numpy(), A.numpy())
    P.remove_parametrizations(m, "weight")
    assert type(m) is nn.Linear and not hasattr(m, "parametrizations")
    assert isinstance(m.weight, nn.Parameter)
    np.testing.assert_array_equal(m.weight.detach().numpy(), A.numpy())
    assert list(m.state_dict()) == ["bias", "weight"]  # re-registered last, as PyTorch


def test_remove_without_leaving_parametrized():
    m = sym_linear()
    orig = m.parametrizations.weight.original.detach().clone()
    P.remove_parametrizations(m, "weight", leave_parametrized=False)
    np.testing.assert_array_equal(m.weight.detach().numpy(), orig.numpy())


def test_chaining_and_several_originals():
    m = sym_linear()
    P.register_parametrization(m, "weight", Scale())
    W = m.weight.detach().numpy()
    np.testing.assert_allclose(W, W.T)
    assert len(m.parametrizations.weight) == 2
    A = ember.eye(3, dtype=ember.float64)
    m.weight = A  # right_inverse in reverse order: unscale, then triu
    np.testing.assert_allclose(m.weight.detach().numpy(), np.eye(3))
    np.testing.assert_allclose(m.parametrizations.weight.original.detach().numpy(),
                               np.eye(3) / 2)
    n = nn.Linear(2, 2).double()
    w = n.weight.detach().clone()
    P.register_parametrization(n, "weight", Split())
    assert sorted(n.state_dict()) == ["bias", "parametrizations.weight.original0",
                                      "parametrizations.weight.original1"]
    np.testing.assert_allclose(n.weight.detach().numpy(), w.numpy())
    assert isinstance(n.parametrizations.weight.original0, nn.Parameter)
    P.remove_parametrizations(n, "weight")
    np.testing.assert_allclose(n.weight.detach().numpy(), w.numpy())


def test_buffers_state_dict_and_copies():
    m = nn.BatchNorm1d(3).double()
    P.register_parametrization(m, "running_var", Scale())
    # registering keeps the value: the original is right_inverse's
    np.testing.assert_allclose(m.running_var.numpy(), np.ones(3))
    np.testing.assert_allclose(m.state_dict()["parametrizations.running_var.original"].numpy(),
                               0.5 * np.ones(3))
    a, b = sym_linear(), sym_linear()
    b.load_state_dict(a.state_dict())
    np.testing.assert_array_equal(a.weight.detach().numpy(), b.weight.detach().numpy())
    c = copy.deepcopy(a)
    assert type(c) is type(a) and c.parametrizations.weight.original is not \
        a.parametrizations.weight.original
    np.testing.assert_array_equal(c.weight.detach().numpy(), a.weight.detach().numpy())
    with pytest.raises(RuntimeError, match="^Serialization of parametrized modules is only "
                       "supported through state_dict()"):
        pickle.dumps(a)
    d = a.to(ember.float32)
    assert d.weight.dtype == ember.float32


def test_cached():
    calls = []

    class Count(nn.Module):
        def forward(self, X):
            calls.append(1)
            return X

    m = nn.Linear(2, 2)
    P.register_parametrization(m, "weight", Count())
    calls.clear()
    with P.cached():
        w1, w2 = m.weight, m.weight
        assert w1 is w2
    assert len(calls) == 1
    m.weight
    assert len(calls) == 2  # outside the context: computed at every access


def test_errors():
    class ToDouble(nn.Module):
        def forward(self, X):
            return X.double()

    class First(nn.Module):
        def forward(self, X):
            return X[0]

    class NoInverse(nn.Module):
        def forward(self, X):
            return X

    with pytest.raises(ValueError, match=r"^Registering a parametrization may not change the "
                       r"dtype of the tensor, unless `unsafe` flag is enabled.\n"
                       r"unparametrized dtype: ember.float32\nparametrized dtype: "
                       r"ember.float64$"):
        P.register_parametrization(nn.Linear(3, 3), "weight", ToDouble())
    with pytest.raises(ValueError, match=r"may not change the shape of the tensor"):
        P.register_parametrization(nn.Linear(3, 3), "weight", First())
    m = nn.Linear(3, 3)
    P.register_parametrization(m, "weight", First(), unsafe=True)
    assert m.weight.shape == (3,)
    with pytest.raises(ValueError, match=r"^Module 'Linear\(in_features=3, out_features=3, "
                       r"bias=True\)' does not have a parameter, a buffer, or a parametrized "
                       r"element with name 'foo'$"):
        P.register_parametrization(nn.Linear(3, 3), "foo", First())
    with pytest.raises(ValueError, match=r"does not have a parametrization on weight$"):
        P.remove_parametrizations(nn.Linear(3, 3), "weight")
    m = nn.Linear(3, 3)
    P.register_parametrization(m, "weight", NoInverse())
    w = m.weight.detach().clone()
    with pytest.raises(RuntimeError, match="^parametrization NoInverse does not implement "
                       "right_inverse.$"):
        m.weight = ember.ones(3, 3)
    np.testing.assert_array_equal(m.weight.detach().numpy(), w.numpy())  # left as it was


# ---- orthogonal -------------------------------------------------------------------
def _gram_error(W):
    W = W.detach().numpy()
    G = np.swapaxes(W, -1, -2) @ W if W.shape[-2] >= W.shape[-1] else \
        W @ np.swapaxes(W, -1, -2)
    return np.abs(G - np.eye(G.shape[-1])).max()


ORTH_CASES = [((4, 4), None, True), ((5, 3), None, True), ((3, 5), None, True),
              ((5, 3), None, False), ((3, 5), "householder", False), ((4, 4), "cayley", True),
              ((5, 3), "cayley", True), ((3, 5), "matrix_exp", True),
              ((4, 4), "householder", True)]


@pytest.mark.parametrize("shape,orth_map,triv", ORTH_CASES, ids=str)
def test_orthogonal_stays_orthogonal_while_training(shape, orth_map, triv):
    ember.manual_seed(0)
    m = nn.Linear(shape[1], shape[0]).double()
    PZ.orthogonal(m, orthogonal_map=orth_map, use_trivialization=triv)
    assert _gram_error(m.weight) < 1e-12
    opt = ember.optim.SGD(m.parameters(), lr=0.2)
    x = ember.randn(8, shape[1], dtype=ember.float64)
    before = m.weight.detach().clone()
    for _ in range(3):
        opt.zero_grad()
        m(x).square().sum().backward()
        opt.step()
    assert _gram_error(m.weight) < 1e-12
    assert np.abs((m.weight.detach() - before).numpy()).max() > 1e-3  # it did move
    # assigning an orthogonal matrix sets it exactly
    Q = ember.linalg.qr(ember.randn(max(shape), min(shape), dtype=ember.float64))[0]
    Q = Q if shape[0] >= shape[1] else Q.mT
    m.weight = Q
    np.testing.assert_allclose(m.weight.detach().numpy(), Q.numpy(), atol=1e-12)


def test_orthogonal_initial_value_and_batches():
    """A square orthogonal weight is kept as it is; a non-orthogonal one
    becomes the Q of its QR with R's diagonal positive; a 3-d weight is a
    batch of matrices."""
    m = nn.Linear(4, 4).double()
    Q = np.linalg.qr(np.random.default_rng(0).standard_normal((4, 4)))[0]
    with ember.no_grad():
        m.weight.copy_(ember.tensor(Q))
    PZ.orthogonal(m)
    np.testing.assert_allclose(m.weight.detach().numpy(), Q, atol=1e-14)
    w = np.random.default_rng(1).standard_normal((5, 3))
    m = nn.Linear(3, 5).double()
    with ember.no_grad():
        m.weight.copy_(ember.tensor(w))
    PZ.orthogonal(m, use_trivialization=False)
    q, r = np.linalg.qr(w)
    np.testing.assert_allclose(m.weight.detach().numpy(), q * np.sign(np.diag(r)), atol=1e-12)
    c = nn.Conv1d(3, 3, 2).double()  # weight (3, 3, 2): three 3x2 matrices
    PZ.orthogonal(c)
    assert _gram_error(c.weight) < 1e-12


def test_orthogonal_errors():
    with pytest.raises(ValueError, match="^Expected a matrix or batch of matrices. Got a tensor "
                       "of 1 dimensions.$"):
        PZ.orthogonal(nn.Linear(3, 3), "bias")
    with pytest.raises(ValueError, match=r"^Module 'Linear\(in_features=3, out_features=3, "
                       r"bias=True\)' has no parameter or buffer with name 'foo'$"):
        PZ.orthogonal(nn.Linear(3, 3), "foo")
    with pytest.raises(ValueError, match='^orthogonal_map has to be one of "matrix_exp", '
                       '"cayley", "householder". Got: qr$'):
        PZ.orthogonal(nn.Linear(3, 3), orthogonal_map="qr")
    # registering keeps the weight as the original; assigning cannot be done
    c = PZ.orthogonal(nn.Linear(3, 3), orthogonal_map="cayley", use_trivialization=False)
    assert _gram_error(c.weight) < 1e-5
    with pytest.raises(NotImplementedError, match="^It is not possible to assign to the matrix "
                       "exponential or the Cayley parametrizations when "
                       "use_trivialization=False.$"):
        c.weight = ember.eye(3)
    m = PZ.orthogonal(nn.Linear(3, 3))
    with pytest.raises(ValueError, match=r"^Expected a matrix or batch of matrices of shape "
                       r"ember.Size\(\[3, 3\]\). Got a tensor of shape ember.Size\(\[2, 2\]\).$"):
        m.weight = ember.eye(2)


# ---- spectral norm -----------------------------------------------------------------
def _sigma(W, dim=0):
    W = np.moveaxis(W.detach().numpy(), dim, 0)
    return np.linalg.svd(W.reshape(W.shape[0], -1), compute_uv=False)[0]


def test_spectral_norm_parametrization():
    ember.manual_seed(0)
    m = nn.Linear(6, 4).double()
    w = m.weight.detach().clone()
    PZ.spectral_norm(m, n_power_iterations=30)
    assert sorted(k for k in m.state_dict()) == [
        "bias", "parametrizations.weight.0._u", "parametrizations.weight.0._v",
        "parametrizations.weight.original"]
    np.testing.assert_allclose(m.weight.detach().numpy(), w.numpy() / _sigma(w), rtol=1e-8)
    assert abs(_sigma(m.weight) - 1) < 1e-8
    u = m.parametrizations.weight[0]._u.clone()
    m.eval()
    m.weight
    np.testing.assert_array_equal(m.parametrizations.weight[0]._u.numpy(), u.numpy())
    m.train()
    x = ember.randn(3, 6, dtype=ember.float64)
    m(x).sum().backward()
    assert m.parametrizations.weight.original.grad is not None
    ct = nn.ConvTranspose2d(4, 3, 2).double()  # weight (4, 3, 2, 2): output channels on dim 1
    PZ.spectral_norm(ct, n_power_iterations=30)
    assert abs(_sigma(ct.weight, 1) - 1) < 1e-6
    v = nn.Linear(3, 3)
    PZ.spectral_norm(v, "bias")  # a vector is normalised
    np.testing.assert_allclose(float(v.bias.detach().norm()), 1.0, rtol=1e-6)
    with pytest.raises(ValueError, match="^Expected n_power_iterations to be positive, but got "
                       "n_power_iterations=0$"):
        PZ.spectral_norm(nn.Linear(3, 3), n_power_iterations=0)
    with pytest.raises(IndexError, match=r"^Dimension out of range \(expected to be in range "
                       r"of \[-2, 1\] but got 2\)$"):
        PZ.spectral_norm(nn.Linear(3, 3), dim=2)


def test_classic_spectral_norm():
    ember.manual_seed(0)
    m = nn.Linear(5, 4).double()
    w = m.weight.detach().clone()
    nn.utils.spectral_norm(m, n_power_iterations=40)
    assert sorted(m.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    assert isinstance(m.weight_orig, nn.Parameter)
    x = ember.randn(2, 5, dtype=ember.float64)
    y = m(x)  # the hook computes weight before the call
    np.testing.assert_allclose(m.weight.detach().numpy(), w.numpy() / _sigma(w), rtol=1e-8)
    y.sum().backward()
    assert m.weight_orig.grad is not None
    with pytest.raises(RuntimeError, match="^Cannot register two spectral_norm hooks on the same "
                       "parameter weight$"):
        nn.utils.spectral_norm(m)
    nn.utils.remove_spectral_norm(m)
    assert sorted(m.state_dict()) == ["bias", "weight"]
    np.testing.assert_allclose(m.weight.detach().numpy(), w.numpy() / _sigma(w), rtol=1e-8)
    np.testing.assert_allclose(m(x).detach().numpy(), y.detach().numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match=r"^spectral_norm of 'weight' not found in Linear"):
        nn.utils.remove_spectral_norm(m)


def test_weight_norm():
    m = nn.Conv1d(2, 3, 2).double()
    w = m.weight.detach().clone()
    PZ.weight_norm(m)
    g = m.parametrizations.weight.original0
    assert g.shape == (3, 1, 1)
    np.testing.assert_allclose(g.detach().numpy().ravel(),
                               np.linalg.norm(w.numpy().reshape(3, -1), axis=1))
    np.testing.assert_allclose(m.weight.detach().numpy(), w.numpy(), rtol=1e-12)
    m(ember.randn(1, 2, 5, dtype=ember.float64)).sum().backward()
    assert g.grad is not None and m.parametrizations.weight.original1.grad is not None
