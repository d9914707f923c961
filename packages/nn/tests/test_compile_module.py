"""ember.compile on an nn.Module: the compiled forward against the module's,
its parameters read live (an optimizer step is seen by the next call),
train/eval as part of the signature, and the module's attributes through
the wrapper."""
import os

import numpy as np
import pytest

import ember
import ember.compiler
import ember.nn as nn


@pytest.fixture(autouse=True)
def kernel_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    ember.compiler.reset()


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 32)
        self.scale = nn.Parameter(ember.ones(32) * 0.5)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        h = self.fc(x)
        h = 0.5 * h * (1.0 + ember.tanh(0.7978845608 * (h + 0.044715 * h * h * h)))
        return self.drop(h * self.scale + 1.0)


def close(a, b):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=2e-5, atol=1e-6)


def test_compiled_module_matches_and_sees_parameter_updates():
    ember.manual_seed(0)
    m = Block().eval()
    c = ember.compile(m)
    x = ember.randn(8, 16)
    with ember.no_grad():
        c(x)
        close(c(x), m(x))
        groups = [g for cg in c._compiled.graphs().values() for g in cg.groups]
        assert groups and max(len(g.nodes) for g in groups) >= 8
        m.scale.mul_(3.0)                 # an update in place, as an optimizer's
        close(c(x), m(x))
    assert c.fc is m.fc and list(c.parameters()) == list(m.parameters())
    assert "Block" in repr(c)


def test_training_mode_is_part_of_the_signature():
    m = Block()
    c = ember.compile(m)
    x = ember.randn(4, 16)
    with ember.no_grad():
        m.eval()
        c(x)
        close(c(x), m(x))
        m.train()
        ember.manual_seed(3)
        c(x)                              # traced again, in training mode
        ember.manual_seed(3)
        got = c(x)
        ember.manual_seed(3)
        want = m(x)
        close(got, want)


def test_training_step_through_the_compiled_module_is_eager_and_right():
    ember.manual_seed(1)
    m = Block().eval()
    ref = Block().eval()
    ref.load_state_dict(m.state_dict())
    c = ember.compile(m)
    x = ember.randn(8, 16)
    for model in (c, ref):
        out = model(x).sum()
        out.backward()
    for (name, p), q in zip(m.named_parameters(), ref.parameters()):
        close(p.grad, q.grad)


def test_compiled_losses_match_eager_and_check_classes():
    """nn.functional's losses, compiled: values and gradients as eager.  The
    losses check their class values in the kernels, so tracing them reads no
    value (it did, and every compiled step with a loss ran eagerly); a bad
    class in a compiled call is still an error."""
    import ember.nn.functional as F

    def losses(x, y):
        return F.nll_loss(F.log_softmax(x, 1), y) + F.cross_entropy(x, y, reduction="sum") / 3

    rng = np.random.default_rng(7)
    y = ember.tensor(rng.integers(0, 10, 32))
    for dtype, tol in ((ember.float32, 2e-5), (ember.float64, 1e-12)):
        x = ember.tensor(rng.uniform(-2, 2, (32, 10))).to(dtype).requires_grad_()
        c = ember.compile(losses)
        c(x, y)
        got = c(x, y)
        want = losses(x, y)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=tol)
        (g_got,) = ember.autograd.grad(got, x)
        (g_want,) = ember.autograd.grad(want, x)
        np.testing.assert_allclose(g_got.numpy(), g_want.numpy(), rtol=tol, atol=tol)
        with pytest.raises((IndexError, RuntimeError), match="out of bounds"):
            c(x, ember.tensor([10] + [0] * 31))
