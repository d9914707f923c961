"""ember.legacy.optim against ember.optim on the same problem: the same
trajectory where the two algorithms coincide, state kept in `state`."""
import numpy as np
import pytest

import ember
import ember.optim as optim
from ember.legacy import nn
from ember.legacy import optim as loptim

ember.manual_seed(0)
A = ember.randn(12, 5, dtype=ember.float64)
B = ember.randn(12, dtype=ember.float64)
X0 = ember.randn(5, dtype=ember.float64)


def loss(x):
    r = A.matmul(x) - B
    return 0.5 * (r * r).sum() + 0.1 * (x ** 4).sum()


def opfunc(x):
    xs = x.detach().clone().requires_grad_(True)
    f = loss(xs)
    f.backward()
    return f.item(), xs.grad


def run_legacy(method, config, steps, state=None):
    x = X0.clone()
    fs = []
    for _ in range(steps):
        _, f = method(opfunc, x, config, state)
        fs += f
    return x, fs


def run_ember(cls, steps, **kw):
    p = X0.clone().requires_grad_(True)
    opt = cls([p], **kw)

    def closure():
        opt.zero_grad()
        f = loss(p)
        f.backward()
        return f
    fs = [float(opt.step(closure)) for _ in range(steps)]
    return p.detach(), fs


def close(a, b, rtol=1e-11):
    np.testing.assert_allclose(np.asarray(a.numpy() if isinstance(a, ember.Tensor) else a),
                               np.asarray(b.numpy() if isinstance(b, ember.Tensor) else b),
                               rtol=rtol, atol=1e-13)


SAME = [
    ("sgd", loptim.sgd, dict(learningRate=0.01, weightDecay=0.05), optim.SGD,
     dict(lr=0.01, weight_decay=0.05), 1e-11),
    ("sgd_momentum", loptim.sgd, dict(learningRate=0.01, momentum=0.9, dampening=0), optim.SGD,
     dict(lr=0.01, momentum=0.9), 1e-11),
    ("sgd_lua_dampening", loptim.sgd, dict(learningRate=0.01, momentum=0.8), optim.SGD,
     dict(lr=0.01, momentum=0.8, dampening=0.8), 1e-11),
    ("sgd_nesterov", loptim.sgd, dict(learningRate=0.01, momentum=0.9, dampening=0,
                                      nesterov=True), optim.SGD,
     dict(lr=0.01, momentum=0.9, nesterov=True), 1e-11),
    ("rmsprop", loptim.rmsprop, dict(learningRate=0.01, alpha=0.95, weightDecay=0.01),
     optim.RMSprop, dict(lr=0.01, alpha=0.95, weight_decay=0.01), 1e-11),
    ("adagrad", loptim.adagrad, dict(learningRate=0.1, learningRateDecay=0.05, weightDecay=0.01),
     optim.Adagrad, dict(lr=0.1, lr_decay=0.05, weight_decay=0.01), 1e-11),
    # Lua's adam adds epsilon before the bias correction: equal within eps
    ("adam", loptim.adam, dict(learningRate=0.01, beta1=0.8, beta2=0.99, weightDecay=0.01),
     optim.Adam, dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.01), 1e-6),
]


@pytest.mark.parametrize("name,method,config,cls,kw,rtol", SAME, ids=[s[0] for s in SAME])
def test_same_trajectory_as_ember_optim(name, method, config, cls, kw, rtol):
    state = {}
    x, fs = run_legacy(method, config, 25, state)
    ref, ref_fs = run_ember(cls, 25, **kw)
    close(x, ref, rtol)
    close(fs, ref_fs, rtol)
    assert fs[-1] < fs[0]
    assert state and not any(k in config for k in state if k not in ("learningRate",))


def test_state_defaults_to_config():
    config = dict(learningRate=0.01, momentum=0.9, dampening=0)
    x = X0.clone()
    loptim.sgd(opfunc, x, config)
    assert "dfdx" in config and config["evalCounter"] == 1


def test_sgd_learning_rate_decay():
    lr, lrd = 0.02, 0.3
    x, fs = run_legacy(loptim.sgd, dict(learningRate=lr, learningRateDecay=lrd), 6, {})
    ref = X0.clone()
    for n in range(6):
        ref = ref - lr / (1 + n * lrd) * opfunc(ref)[1]
    close(x, ref)


@pytest.mark.parametrize("calls,iters", [(1, 20), (3, 4)])
def test_lbfgs_equals_ember_lbfgs(calls, iters):
    state = {}
    x = X0.clone()
    hist = []
    for _ in range(calls):
        x, fs, _ = loptim.lbfgs(opfunc, x, dict(maxIter=iters, tolFun=1e-30, tolX=1e-30), state)
        hist += fs
    ref, ref_fs = run_ember(optim.LBFGS, calls, max_iter=iters, tolerance_grad=1e-30,
                            tolerance_change=1e-30)
    close(x, ref, 1e-9)
    # the 20-iteration run converges (f stops changing) before its last iteration
    assert state["nIter"] <= calls * iters and len(state["old_dirs"]) > 0
    if calls > 1:
        assert state["nIter"] == calls * iters
    assert hist[0] == pytest.approx(ref_fs[0])
    assert hist[-1] < hist[0] / 2


def test_lbfgs_stops_at_optimum():
    x = X0.clone()

    def quad(x):
        return float((x * x).sum()), 2 * x
    x, fs, evals = loptim.lbfgs(quad, x, dict(maxIter=50))
    assert float(x.abs().max()) < 1e-6 and evals < 50


def test_with_legacy_module_get_parameters():
    ember.manual_seed(3)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1)).double()
    crit = nn.MSECriterion()
    data = ember.randn(32, 4, dtype=ember.float64)
    target = data.sum(1, keepdim=True).sin()
    params, grads = model.getParameters()
    assert params.numel() == 4 * 8 + 8 + 8 + 1
    assert model.get(1).weight.data_ptr() == params.data_ptr()

    def feval(x):
        assert x is params
        model.zeroGradParameters()
        out = model.forward(data)
        f = crit.forward(out, target)
        model.backward(data, crit.backward(out, target))
        return f, grads
    state, config = {}, dict(learningRate=0.05)
    first = None
    for _ in range(200):
        _, (f,) = loptim.adam(feval, params, config, state)
        first = f if first is None else first
    assert f < first / 3
    assert state["t"] == 200


def test_refusals():
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero"):
        loptim.sgd(opfunc, X0.clone(), dict(nesterov=True, momentum=0.9))
    with pytest.raises(ValueError, match=r"df/dx of the size of x \[5\], got \[4\]"):
        loptim.adam(lambda x: (0.0, ember.zeros(4)), X0.clone())
    with pytest.raises(TypeError, match="expected x to be an ember.Tensor"):
        loptim.rmsprop(opfunc, [1.0, 2.0])
