"""fused=True optimizers (one generated kernel per step and parameter
group, ember.compiler._optim) against the same optimizers unfused."""
import copy
import warnings

import numpy as np
import pytest

import ember
import ember.compiler
import ember.nn as nn

CASES = [
    (ember.optim.Adam, dict(lr=1e-2)),
    (ember.optim.Adam, dict(lr=1e-2, weight_decay=0.05, amsgrad=True)),
    (ember.optim.Adam, dict(lr=1e-2, maximize=True, betas=(0.8, 0.9))),
    (ember.optim.AdamW, dict(lr=1e-2, weight_decay=0.1)),
    (ember.optim.AdamW, dict(lr=1e-2, amsgrad=True)),
    (ember.optim.SGD, dict(lr=0.05)),
    (ember.optim.SGD, dict(lr=0.05, momentum=0.9, weight_decay=1e-3, dampening=0.1)),
    (ember.optim.SGD, dict(lr=0.05, momentum=0.9, nesterov=True, maximize=True)),
]


@pytest.fixture(autouse=True)
def kernel_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    ember.compiler.reset()


def _model(dtype):
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(20, 40), nn.Tanh(), nn.Linear(40, 5)).to(dtype)


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("opt,kw", CASES, ids=[f"{o.__name__}-{i}" for i, (o, _) in
                                                enumerate(CASES)])
def test_fused_equals_unfused(opt, kw, dtype):
    m1 = _model(dtype)
    m2 = copy.deepcopy(m1)
    o1, o2 = opt(m1.parameters(), **kw), opt(m2.parameters(), fused=True, **kw)
    rng = np.random.default_rng(1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)   # no silent fallback
        for _ in range(4):
            x = ember.tensor(rng.standard_normal((8, 20)), dtype=dtype)
            for m, o in ((m1, o1), (m2, o2)):
                o.zero_grad()
                m(x).pow(2).mean().backward()
                o.step()
    tol = 1e-6 if dtype == ember.float32 else 1e-13
    for a, b in zip(m1.parameters(), m2.parameters()):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=tol, atol=tol)
    for p1, p2 in zip(m1.parameters(), m2.parameters()):
        for k, v in o1.state[p1].items():
            np.testing.assert_allclose(o2.state[p2][k].numpy(), v.numpy(), rtol=tol, atol=tol)


def test_a_group_the_kernel_cannot_take_runs_unfused():
    p = ember.randn(6, 4).t().detach().requires_grad_()     # not contiguous
    q = p.detach().clone().requires_grad_()
    o1, o2 = ember.optim.Adam([p], lr=0.1, fused=True), ember.optim.Adam([q], lr=0.1)
    g = ember.randn(4, 6)
    for o, t in ((o1, p), (o2, q)):
        t.grad = g.clone()
        o.step()
    np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-6)


def test_fused_and_foreach_together_are_refused():
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together"):
        ember.optim.Adam([ember.zeros(2, requires_grad=True)], fused=True, foreach=True)


def test_no_compiler_runs_unfused_with_a_warning(monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent/cc")
    p = ember.randn(10).requires_grad_()
    q = p.detach().clone().requires_grad_()
    o1, o2 = ember.optim.SGD([p], lr=0.1, momentum=0.5, fused=True), \
        ember.optim.SGD([q], lr=0.1, momentum=0.5)
    with pytest.warns(RuntimeWarning, match="fused=True"):
        for _ in range(2):
            for o, t in ((o1, p), (o2, q)):
                t.grad = ember.ones(10)
                o.step()
    np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy())
