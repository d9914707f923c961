"""ember.autograd.functional: whole-function derivatives."""
import pytest

import ember
from ember.autograd import functional as F


def f(x, y):
    return (x * x * y).sum(0)


def leaf(*shape):
    ember.manual_seed(sum(shape))
    return ember.randn(*shape, dtype=ember.float64)


def test_jacobian_and_hessian_match_closed_forms():
    x = leaf(3)
    jac = F.jacobian(lambda t: t * t, x)
    assert ember.allclose(jac, ember.diag(2 * x))
    hess = F.hessian(lambda t: (t ** 3).sum(), x)
    assert ember.allclose(hess, ember.diag(6 * x))
    jx, jy = F.jacobian(f, (leaf(2, 3), leaf(2, 3)))
    assert jx.shape == (3, 2, 3) and jy.shape == (3, 2, 3)


def test_vjp_jvp_hvp():
    x = leaf(3)
    v = ember.ones(3, dtype=ember.float64)
    out, g = F.vjp(lambda t: t.exp(), x, v)
    assert ember.allclose(g, x.exp()) and not out.requires_grad
    out, jv = F.jvp(lambda t: t.sin(), x, v)
    assert ember.allclose(jv, x.cos())
    value, hv = F.hvp(lambda t: (t ** 3).sum(), x, v)
    assert ember.allclose(hv, 6 * x)
    value, vh = F.vhp(lambda t: (t ** 3).sum(), x, v)
    assert ember.allclose(vh, 6 * x)


def test_matches_pytorch():
    torch = pytest.importorskip("torch", exc_type=ImportError)
    x, y = leaf(2, 3), leaf(2, 3)
    tx, ty = (torch.from_numpy(t.numpy().copy()) for t in (x, y))
    for a, b in zip(F.jacobian(f, (x, y)), torch.autograd.functional.jacobian(f, (tx, ty))):
        assert ember.allclose(a, ember.from_numpy(b.numpy()))
    h = F.hessian(lambda t: (t.exp() * t).sum(), x)
    th = torch.autograd.functional.hessian(lambda t: (t.exp() * t).sum(), tx)
    assert ember.allclose(h, ember.from_numpy(th.numpy()))
