"""A leaf's first gradient becomes its .grad without a copy when nothing
else refers to it; whenever something might (another leaf, a hook, the
caller's gradient, a view), .grad gets its own memory, so an optimizer's
in-place update of .grad never changes another tensor."""
import pytest

import ember
import ember.th as th


@pytest.fixture
def clones(monkeypatch):
    calls = []
    orig = th.Tensor.clone

    def counting(self, *args, **kwargs):
        calls.append(tuple(self.shape))
        return orig(self, *args, **kwargs)
    monkeypatch.setattr(th.Tensor, "clone", counting)
    return calls


def test_fresh_gradients_are_kept_without_a_copy(clones):
    w = ember.randn(5, 3, requires_grad=True)
    b = ember.randn(3, requires_grad=True)
    (ember.randn(4, 5) @ w + b).sum().backward()
    assert clones == []
    w.grad.add_(1)  # the stored gradient is writable and owned
    assert w.grad.shape == (5, 3)


def _independent(*tensors):
    """Writing into the first changes none of the others."""
    before = [t.clone() for t in tensors[1:]]
    tensors[0].add_(100)
    return all(ember.equal(t, b) for t, b in zip(tensors[1:], before))


def test_one_gradient_for_two_leaves():
    a = ember.randn(3, requires_grad=True)
    c = ember.randn(3, requires_grad=True)
    (a + c).sum().backward()
    assert _independent(a.grad, c.grad)


def test_gradient_passed_through_unchanged_from_the_caller():
    a = ember.randn(3, requires_grad=True)
    g = ember.randn(3)
    (a + 0).backward(g)
    assert _independent(a.grad, g)
    b = ember.randn(2, 3, requires_grad=True)
    g2 = ember.randn(6)
    b.view(6).backward(g2)
    assert _independent(b.grad, g2)


def test_gradient_seen_by_a_hook_or_retained():
    a = ember.randn(3, requires_grad=True)
    seen = []
    y = a + 0
    y.register_hook(seen.append)
    y.retain_grad()
    y.sum().backward()
    assert _independent(a.grad, seen[0], y.grad)


def test_expanded_and_viewed_gradients():
    a = ember.randn(1, 3, requires_grad=True)
    g = ember.randn(4, 3)
    a.expand(4, 3).backward(g)
    assert ember.allclose(a.grad, g.sum(0, keepdim=True))
    w = ember.randn(3, 4, requires_grad=True)
    w.t().backward(ember.ones(4, 3))  # a transposed view of the caller's gradient
    assert w.grad.is_contiguous() and (w.grad == 1).all()


@pytest.mark.parametrize("form", ["mm", "addmm", "addmm scaled"])
def test_linear_weight_gradient_arrives_contiguous(clones, form):
    """x @ w.t(): mm's mat2 gradient takes mat2's (transposed) layout, so
    w's gradient is contiguous and kept without a copy; values and
    gradcheck as for any layout."""
    alpha = 2.0 if form == "addmm scaled" else 1.0

    def f(x, w, b):
        if form == "mm":
            return x.mm(w.t())
        return ember.addmm(b, x, w.t(), beta=0.5 if alpha != 1 else 1, alpha=alpha)
    x = ember.randn(4, 5, dtype=ember.float64, requires_grad=True)
    w = ember.randn(3, 5, dtype=ember.float64, requires_grad=True)
    b = ember.randn(3, dtype=ember.float64, requires_grad=True)
    f(x, w, b).sum().backward()
    assert clones == [] and w.grad.is_contiguous()
    expect = ember.ones(4, 3, dtype=ember.float64).t().mm(x.detach()) * alpha
    assert ember.allclose(w.grad, expect)
    assert ember.autograd.gradcheck(f, (x, w, b))
