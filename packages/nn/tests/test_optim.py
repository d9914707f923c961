"""Optimizers: the first steps against the published update rules written
out in NumPy; param groups, state_dict round trips, closures, zero_grad."""
import copy

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.optim as optim

STEPS = 8  # RAdam's rectified branch starts at step 6 with beta2=0.9


def grads_seq(shape, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape) for _ in range(STEPS)]


def run_ember(make, p0, grads):
    p = nn.Parameter(ember.from_numpy(p0.copy()))
    opt = make([p])
    out = []
    for g in grads:
        p.grad = ember.from_numpy(g.copy())
        opt.step()
        out.append(p.detach().numpy().copy())
    return out


# ---- the update rules, in NumPy --------------------------------------------------
def np_sgd(p, grads, lr, momentum=0, dampening=0, weight_decay=0, nesterov=False,
           maximize=False):
    buf, out = None, []
    for g in grads:
        g = -g if maximize else g
        g = g + weight_decay * p
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        p = p - lr * g
        out.append(p)
    return out


def np_adam(p, grads, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False,
            maximize=False, decoupled=False):
    m = v = vmax = np.zeros_like(p)
    out = []
    for t, g in enumerate(grads, 1):
        g = -g if maximize else g
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        mhat = m / (1 - betas[0] ** t)
        vmax = np.maximum(vmax, v)
        vhat = (vmax if amsgrad else v) / (1 - betas[1] ** t)
        p = p - lr * mhat / (np.sqrt(vhat) + eps)
        out.append(p)
    return out


def np_rmsprop(p, grads, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
               centered=False):
    sq = np.zeros_like(p)
    gavg = np.zeros_like(p)
    buf = np.zeros_like(p)
    out = []
    for g in grads:
        g = g + weight_decay * p
        sq = alpha * sq + (1 - alpha) * g * g
        if centered:
            gavg = alpha * gavg + (1 - alpha) * g
            avg = np.sqrt(sq - gavg * gavg) + eps
        else:
            avg = np.sqrt(sq) + eps
        if momentum:
            buf = momentum * buf + g / avg
            p = p - lr * buf
        else:
            p = p - lr * g / avg
        out.append(p)
    return out


def np_adagrad(p, grads, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
               eps=1e-10):
    s = np.full_like(p, initial_accumulator_value)
    out = []
    for t, g in enumerate(grads, 1):
        g = g + weight_decay * p
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g
        p = p - clr * g / (np.sqrt(s) + eps)
        out.append(p)
    return out


def np_adadelta(p, grads, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0):
    sq = np.zeros_like(p)
    acc = np.zeros_like(p)
    out = []
    for g in grads:
        g = g + weight_decay * p
        sq = rho * sq + (1 - rho) * g * g
        delta = np.sqrt(acc + eps) / np.sqrt(sq + eps) * g
        acc = rho * acc + (1 - rho) * delta * delta
        p = p - lr * delta
        out.append(p)
    return out


def np_adamax(p, grads, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0):
    m = np.zeros_like(p)
    u = np.zeros_like(p)
    out = []
    for t, g in enumerate(grads, 1):
        g = g + weight_decay * p
        m = betas[0] * m + (1 - betas[0]) * g
        u = np.maximum(betas[1] * u, np.abs(g) + eps)
        p = p - lr / (1 - betas[0] ** t) * m / u
        out.append(p)
    return out


def np_nadam(p, grads, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
             momentum_decay=4e-3):
    m = np.zeros_like(p)
    v = np.zeros_like(p)
    mu_prod = 1.0
    out = []
    for t, g in enumerate(grads, 1):
        g = g + weight_decay * p
        mu = betas[0] * (1 - 0.5 * 0.96 ** (t * momentum_decay))
        mu_next = betas[0] * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
        mu_prod *= mu
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        denom = np.sqrt(v / (1 - betas[1] ** t)) + eps
        p = p - lr * (1 - mu) / (1 - mu_prod) * g / denom \
            - lr * mu_next / (1 - mu_prod * mu_next) * m / denom
        out.append(p)
    return out


def np_radam(p, grads, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0):
    m = np.zeros_like(p)
    v = np.zeros_like(p)
    rho_inf = 2 / (1 - betas[1]) - 1
    out = []
    for t, g in enumerate(grads, 1):
        g = g + weight_decay * p
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        mhat = m / (1 - betas[0] ** t)
        rho_t = rho_inf - 2 * t * betas[1] ** t / (1 - betas[1] ** t)
        if rho_t > 5:
            r = np.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                        / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            p = p - lr * mhat * r * np.sqrt(1 - betas[1] ** t) / (np.sqrt(v) + eps)
        else:
            p = p - lr * mhat
        out.append(p)
    return out


CASES = [
    ("sgd", lambda ps: optim.SGD(ps, lr=0.1), lambda p, g: np_sgd(p, g, 0.1)),
    ("sgd-momentum", lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
     lambda p, g: np_sgd(p, g, 0.1, 0.9)),
    ("sgd-dampening-wd", lambda ps: optim.SGD(ps, lr=0.05, momentum=0.8, dampening=0.3,
                                              weight_decay=0.1),
     lambda p, g: np_sgd(p, g, 0.05, 0.8, 0.3, 0.1)),
    ("sgd-nesterov-maximize", lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True,
                                                   maximize=True),
     lambda p, g: np_sgd(p, g, 0.1, 0.9, nesterov=True, maximize=True)),
    ("adam", lambda ps: optim.Adam(ps, lr=0.01), lambda p, g: np_adam(p, g, 0.01)),
    ("adam-amsgrad-wd", lambda ps: optim.Adam(ps, lr=0.01, betas=(0.8, 0.9), amsgrad=True,
                                              weight_decay=0.1, eps=1e-6),
     lambda p, g: np_adam(p, g, 0.01, (0.8, 0.9), 1e-6, 0.1, amsgrad=True)),
    ("adam-maximize", lambda ps: optim.Adam(ps, lr=0.01, maximize=True),
     lambda p, g: np_adam(p, g, 0.01, maximize=True)),
    ("adamw", lambda ps: optim.AdamW(ps, lr=0.01), lambda p, g: np_adam(
        p, g, 0.01, weight_decay=1e-2, decoupled=True)),
    ("adamw-amsgrad", lambda ps: optim.AdamW(ps, lr=0.02, weight_decay=0.5, amsgrad=True),
     lambda p, g: np_adam(p, g, 0.02, weight_decay=0.5, decoupled=True, amsgrad=True)),
    ("rmsprop", lambda ps: optim.RMSprop(ps), lambda p, g: np_rmsprop(p, g)),
    ("rmsprop-centered-momentum", lambda ps: optim.RMSprop(ps, lr=0.01, alpha=0.9,
                                                           momentum=0.5, centered=True,
                                                           weight_decay=0.1),
     lambda p, g: np_rmsprop(p, g, 0.01, 0.9, weight_decay=0.1, momentum=0.5,
                             centered=True)),
    ("adagrad", lambda ps: optim.Adagrad(ps, lr=0.1), lambda p, g: np_adagrad(p, g, 0.1)),
    ("adagrad-decay", lambda ps: optim.Adagrad(ps, lr=0.1, lr_decay=0.5, weight_decay=0.1,
                                               initial_accumulator_value=0.2),
     lambda p, g: np_adagrad(p, g, 0.1, 0.5, 0.1, 0.2)),
    ("adadelta", lambda ps: optim.Adadelta(ps, lr=0.5, rho=0.8, weight_decay=0.1),
     lambda p, g: np_adadelta(p, g, 0.5, 0.8, weight_decay=0.1)),
    ("adamax", lambda ps: optim.Adamax(ps, lr=0.01, betas=(0.8, 0.9), weight_decay=0.1),
     lambda p, g: np_adamax(p, g, 0.01, (0.8, 0.9), weight_decay=0.1)),
    ("nadam", lambda ps: optim.NAdam(ps, lr=0.01, weight_decay=0.1, momentum_decay=0.01),
     lambda p, g: np_nadam(p, g, 0.01, weight_decay=0.1, momentum_decay=0.01)),
    ("radam", lambda ps: optim.RAdam(ps, lr=0.01, betas=(0.9, 0.9), weight_decay=0.1),
     lambda p, g: np_radam(p, g, 0.01, (0.9, 0.9), weight_decay=0.1)),
]


@pytest.mark.parametrize("name,make,reference", CASES, ids=[c[0] for c in CASES])
def test_first_steps_match_update_rule(name, make, reference):
    p0 = np.random.default_rng(1).standard_normal((3, 2))
    grads = grads_seq((3, 2))
    got = run_ember(make, p0, grads)
    want = reference(p0.copy(), grads)
    # NAdam keeps its running product of momenta as a float32 scalar, as PyTorch
    rtol = 1e-8 if name == "nadam" else 1e-10
    for step, (a, b) in enumerate(zip(got, want)):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-12, err_msg=f"step {step + 1}")


@pytest.mark.parametrize("name,make,reference", CASES, ids=[c[0] for c in CASES])
def test_state_dict_resume(name, make, reference):
    """Two steps, save, load into a fresh optimizer, two more steps: the
    same as four uninterrupted steps."""
    p0 = np.random.default_rng(2).standard_normal(5)
    grads = grads_seq(5, seed=3)
    want = run_ember(make, p0, grads)[-1]
    p = nn.Parameter(ember.from_numpy(p0.copy()))
    opt = make([p])
    for g in grads[:2]:
        p.grad = ember.from_numpy(g.copy())
        opt.step()
    saved = copy.deepcopy(opt.state_dict())
    q = nn.Parameter(p.detach().clone())
    opt2 = make([q])
    opt2.load_state_dict(saved)
    for g in grads[2:]:
        q.grad = ember.from_numpy(g.copy())
        opt2.step()
    np.testing.assert_allclose(q.detach().numpy(), want, rtol=1e-12)


def test_step_runs_under_no_grad_and_in_place():
    p = nn.Parameter(ember.ones(3))
    ptr, version = p.data_ptr(), p._version
    opt = optim.SGD([p], lr=0.5, momentum=0.9)
    (p * 2).sum().backward()
    opt.step()
    assert p.is_leaf and p.grad_fn is None and p.requires_grad
    assert p.data_ptr() == ptr and p._version > version
    assert p.tolist() == [0.0, 0.0, 0.0]
    assert opt.state[p]["momentum_buffer"].requires_grad is False


def test_param_groups_and_add_param_group():
    a, b, c = (nn.Parameter(ember.ones(2)) for _ in range(3))
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1, momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["momentum"] == 0.9
    opt.add_param_group({"params": c, "lr": 1.0})
    for p in (a, b, c):
        p.grad = ember.ones(2)
    opt.step()
    np.testing.assert_allclose([a.tolist(), b.tolist(), c.tolist()],
                               [[0.9, 0.9], [0.5, 0.5], [0, 0]], rtol=1e-6)
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter "
                                         "group"):
        opt.add_param_group({"params": [a]})
    sd = opt.state_dict()
    assert [g["params"] for g in sd["param_groups"]] == [[0], [1], [2]]
    assert set(sd["state"]) == {0, 1, 2}


def test_zero_grad_and_closure():
    p = nn.Parameter(ember.tensor([1.0, -2.0]))
    opt = optim.SGD([p], lr=0.1)
    calls = []

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        calls.append(ember.is_grad_enabled())
        return loss

    loss = opt.step(closure)
    assert calls == [True] and loss.item() == 5.0
    np.testing.assert_allclose(p.tolist(), [0.8, -1.6])
    opt.zero_grad(set_to_none=False)
    assert p.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None


def test_optimizer_errors():
    p = nn.Parameter(ember.ones(2))
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.SGD([p], lr=-1)
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero "
                                         "dampening"):
        optim.SGD([p], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 0: 1.0"):
        optim.Adam([p], betas=(1.0, 0.9))
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        optim.Adam([])
    with pytest.raises(TypeError, match="params argument given to the optimizer should be an "
                                        "iterable of Tensors or dicts"):
        optim.Adam(p)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.Adam([p * 2])
    opt = optim.Adam([p])
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt.load_state_dict({"state": {}, "param_groups": []})


def test_trains_a_small_regression():
    ember.manual_seed(0)
    x = ember.randn(64, 3)
    y = x @ ember.tensor([[1.0], [-2.0], [0.5]]) + 0.3
    for name, make in [("sgd", lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9)),
                       ("adam", lambda ps: optim.Adam(ps, lr=0.05)),
                       ("rmsprop", lambda ps: optim.RMSprop(ps, lr=0.02)),
                       ("adagrad", lambda ps: optim.Adagrad(ps, lr=0.5)),
                       ("adamw", lambda ps: optim.AdamW(ps, lr=0.05)),
                       ("adamax", lambda ps: optim.Adamax(ps, lr=0.1)),
                       ("nadam", lambda ps: optim.NAdam(ps, lr=0.05)),
                       ("radam", lambda ps: optim.RAdam(ps, lr=0.1))]:
        model = nn.Linear(3, 1)
        opt = make(model.parameters())
        for _ in range(150):
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
        assert loss.item() < 1e-2, (name, loss.item())


TORCH_CASES = [
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.05)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, maximize=True)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    ("AdamW", dict(lr=0.01, betas=(0.8, 0.95), amsgrad=True)),
    ("RMSprop", dict(lr=0.01, momentum=0.3, centered=True, weight_decay=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.1, initial_accumulator_value=0.1)),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1, maximize=True)),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("NAdam", dict(lr=0.01, momentum_decay=0.01, weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, betas=(0.9, 0.9), weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, betas=(0.9, 0.9), weight_decay=0.1, decoupled_weight_decay=True,
                   maximize=True)),
]


@pytest.mark.torch
@pytest.mark.parametrize("name,kwargs", TORCH_CASES,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(TORCH_CASES)])
def test_matches_torch(name, kwargs):
    torch = pytest.importorskip("torch")
    p0 = np.random.default_rng(5).standard_normal((4, 3))
    grads = grads_seq((4, 3), seed=6)
    got = run_ember(lambda ps: getattr(optim, name)(ps, **kwargs), p0, grads)
    tp = torch.nn.Parameter(torch.from_numpy(p0.copy()))
    topt = getattr(torch.optim, name)([tp], **kwargs)
    for g, mine in zip(grads, got):
        tp.grad = torch.from_numpy(g.copy())
        topt.step()
        np.testing.assert_allclose(mine, tp.detach().numpy(), rtol=1e-12, atol=1e-14)
    want_keys = set(topt.state_dict()["state"][0])
    p = nn.Parameter(ember.from_numpy(p0.copy()))
    opt = getattr(optim, name)([p], **kwargs)
    p.grad = ember.from_numpy(grads[0].copy())
    opt.step()
    assert set(opt.state_dict()["state"][0]) == want_keys
    assert set(opt.state_dict()["param_groups"][0]) >= set(topt.state_dict()["param_groups"][0])
