"""Rprop, ASGD and LBFGS: the first steps against their published update
rules written out in NumPy, against torch.optim where installed (values and
state keys), state_dict resume, LBFGS with the strong-Wolfe line search on
the Rosenbrock function, and argument errors."""
import copy

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.optim as optim
from ember.optim.lbfgs import strong_wolfe

from conftest import requires_torch, torch

STEPS = 8


def grads_seq(shape, seed=0):
    rng = np.random.default_rng(seed)
    gs = [rng.standard_normal(shape) for _ in range(STEPS)]
    gs[3] = np.abs(gs[2]) * np.sign(gs[2])     # a run of equal signs for Rprop
    return gs


def run_ember(make, p0, grads):
    p = nn.Parameter(ember.from_numpy(p0.copy()))
    opt = make([p])
    out = []
    for g in grads:
        p.grad = ember.from_numpy(g.copy())
        opt.step()
        out.append(p.detach().numpy().copy())
    return out, opt.state[p]


# ---- update rules in NumPy -------------------------------------------------------------
def np_rprop(p, grads, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), maximize=False):
    prev = np.zeros_like(p)
    size = np.full_like(p, lr)
    out = []
    for g in grads:
        g = -g if maximize else g
        s = np.sign(g * prev)
        size = np.clip(size * np.where(s > 0, etas[1], np.where(s < 0, etas[0], 1.0)),
                       *step_sizes)
        g = np.where(s < 0, 0.0, g)          # a sign flip skips the step
        p = p - np.sign(g) * size
        prev = g
        out.append(p)
    return out


def np_asgd(p, grads, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
            maximize=False):
    """eta and mu are kept as float32 scalars (as PyTorch keeps them)."""
    eta, mu = np.float32(lr), np.float32(1.0)
    ax = np.zeros_like(p)
    out = []
    for t, g in enumerate(grads, 1):
        g = -g if maximize else g
        g = g + weight_decay * p
        p = p * (1 - lambd * float(eta)) - float(eta) * g
        ax = ax + (p - ax) * float(mu) if mu != 1 else p.copy()
        eta = np.float32(lr / (1 + lambd * lr * t) ** alpha)
        mu = np.float32(1 / max(1, t - t0))
        out.append((p, ax))
    return out


CASES = [
    ("rprop", lambda ps: optim.Rprop(ps), lambda p, g: np_rprop(p, g)),
    ("rprop-etas-sizes", lambda ps: optim.Rprop(ps, lr=0.1, etas=(0.3, 1.5),
                                                step_sizes=(0.02, 0.25)),
     lambda p, g: np_rprop(p, g, 0.1, (0.3, 1.5), (0.02, 0.25))),
    ("rprop-maximize", lambda ps: optim.Rprop(ps, lr=0.05, maximize=True),
     lambda p, g: np_rprop(p, g, 0.05, maximize=True)),
    ("asgd", lambda ps: optim.ASGD(ps, lr=0.05), lambda p, g: [q for q, _ in np_asgd(p, g, 0.05)]),
    ("asgd-averaging", lambda ps: optim.ASGD(ps, lr=0.1, lambd=0.01, alpha=0.6, t0=3,
                                             weight_decay=0.1),
     lambda p, g: [q for q, _ in np_asgd(p, g, 0.1, 0.01, 0.6, 3, 0.1)]),
    ("asgd-maximize", lambda ps: optim.ASGD(ps, lr=0.05, t0=0, maximize=True),
     lambda p, g: [q for q, _ in np_asgd(p, g, 0.05, t0=0, maximize=True)]),
]


@pytest.mark.parametrize("name,make,reference", CASES, ids=[c[0] for c in CASES])
def test_first_steps_match_update_rule(name, make, reference):
    p0 = np.random.default_rng(1).standard_normal((3, 2))
    grads = grads_seq((3, 2))
    got, _ = run_ember(make, p0, grads)
    for step, (a, b) in enumerate(zip(got, reference(p0.copy(), grads))):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14, err_msg=f"step {step + 1}")


def test_asgd_average_and_rates():
    p0 = np.random.default_rng(2).standard_normal(4)
    grads = grads_seq(4, seed=4)
    _, state = run_ember(lambda ps: optim.ASGD(ps, lr=0.1, lambd=0.01, t0=2), p0, grads)
    want = np_asgd(p0.copy(), grads, 0.1, 0.01, 0.75, 2)
    np.testing.assert_allclose(state["ax"].numpy(), want[-1][1], rtol=1e-12)
    assert float(state["eta"]) == pytest.approx(0.1 / (1 + 0.01 * 0.1 * STEPS) ** 0.75,
                                                rel=1e-6)
    assert float(state["mu"]) == pytest.approx(1 / (STEPS - 2), rel=1e-6)
    assert float(state["step"]) == STEPS


def test_rprop_step_size_state():
    p0 = np.zeros(3)
    g = np.array([1.0, -1.0, 2.0])
    _, state = run_ember(lambda ps: optim.Rprop(ps, lr=0.1, step_sizes=(0.01, 0.13)), p0,
                         [g, g, g, -g])
    # lr while there is no previous gradient, ×1.2 = 0.12, ×1.2 capped at 0.13,
    # then halved by the sign flip
    np.testing.assert_allclose(state["step_size"].numpy(), [0.065] * 3)
    np.testing.assert_array_equal(state["prev"].numpy(), [0.0, 0.0, 0.0])


@pytest.mark.parametrize("name,make,reference", CASES, ids=[c[0] for c in CASES])
def test_state_dict_resume(name, make, reference):
    p0 = np.random.default_rng(2).standard_normal(5)
    grads = grads_seq(5, seed=3)
    want = run_ember(make, p0, grads)[0][-1]
    p = nn.Parameter(ember.from_numpy(p0.copy()))
    opt = make([p])
    for g in grads[:4]:
        p.grad = ember.from_numpy(g.copy())
        opt.step()
    saved = copy.deepcopy(opt.state_dict())
    q = nn.Parameter(p.detach().clone())
    opt2 = make([q])
    opt2.load_state_dict(saved)
    for g in grads[4:]:
        q.grad = ember.from_numpy(g.copy())
        opt2.step()
    np.testing.assert_allclose(q.detach().numpy(), want, rtol=1e-12)


TORCH_CASES = [
    ("Rprop", dict(lr=0.1, etas=(0.4, 1.3), step_sizes=(1e-3, 0.2))),
    ("Rprop", dict(maximize=True)),
    ("ASGD", dict(lr=0.05, lambd=1e-2, alpha=0.6, t0=3, weight_decay=0.1)),
    ("ASGD", dict(maximize=True, t0=0)),
]


@requires_torch
@pytest.mark.torch
@pytest.mark.parametrize("name,kwargs", TORCH_CASES,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(TORCH_CASES)])
def test_matches_torch(name, kwargs):
    p0 = np.random.default_rng(5).standard_normal((4, 3))
    grads = grads_seq((4, 3), seed=6)
    got, state = run_ember(lambda ps: getattr(optim, name)(ps, **kwargs), p0, grads)
    tp = torch.nn.Parameter(torch.from_numpy(p0.copy()))
    topt = getattr(torch.optim, name)([tp], **kwargs)
    for g, mine in zip(grads, got):
        tp.grad = torch.from_numpy(g.copy())
        topt.step()
        np.testing.assert_allclose(mine, tp.detach().numpy(), rtol=1e-12, atol=1e-14)
    tstate = topt.state_dict()["state"][0]
    assert set(state) == set(tstate)
    for key, value in tstate.items():
        np.testing.assert_allclose(np.asarray(state[key].numpy(), dtype=float),
                                   value.numpy().astype(float), rtol=1e-12, err_msg=key)


# ---- LBFGS ------------------------------------------------------------------------
def quadratic(seed=0, n=5):
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((n, n))
    return m @ m.T + n * np.eye(n), rng.standard_normal(n)


def np_lbfgs(x, grad_fn, iterations, lr, history_size):
    """L-BFGS with a fixed step length (Nocedal & Wright, Algorithm 7.5 with
    the two-loop recursion 7.4); the very first step is scaled by
    min(1, 1/‖g‖₁) because no curvature is known yet."""
    dirs, steps = [], []
    h = 1.0
    g_prev = d = t = None
    out = []
    for k in range(iterations):
        g = grad_fn(x)
        if k == 0:
            d = -g
        else:
            y, s = g - g_prev, d * t
            if y @ s > 1e-10:
                if len(dirs) == history_size:
                    dirs.pop(0)
                    steps.pop(0)
                dirs.append(y)
                steps.append(s)
                h = (y @ s) / (y @ y)
            q = -g
            alphas = []
            for y_i, s_i in zip(reversed(dirs), reversed(steps)):
                a = (s_i @ q) / (y_i @ s_i)
                alphas.append(a)
                q = q - a * y_i
            r = h * q
            for (y_i, s_i), a in zip(zip(dirs, steps), reversed(alphas)):
                b = (y_i @ r) / (y_i @ s_i)
                r = r + (a - b) * s_i
            d = r
        g_prev = g
        t = min(1.0, 1.0 / np.abs(g).sum()) * lr if k == 0 else lr
        x = x + t * d
        out.append(x)
    return out


def lbfgs_on_quadratic(make, a, b, x0, calls):
    x = nn.Parameter(ember.from_numpy(x0.copy()))
    opt = make([x])
    A, B = ember.from_numpy(a), ember.from_numpy(b)

    def closure():
        opt.zero_grad()
        loss = 0.5 * (x @ (A @ x)) - B @ x
        loss.backward()
        return loss
    out = []
    for _ in range(calls):
        opt.step(closure)
        out.append(x.detach().numpy().copy())
    return out, opt


@pytest.mark.parametrize("history_size", [100, 2])
def test_lbfgs_iterations_match_the_two_loop_recursion(history_size):
    a, b = quadratic(0)
    x0 = np.random.default_rng(1).standard_normal(5)
    got, opt = lbfgs_on_quadratic(
        lambda ps: optim.LBFGS(ps, lr=0.5, max_iter=3, max_eval=10,
                               history_size=history_size), a, b, x0, calls=3)
    want = np_lbfgs(x0, lambda x: a @ x - b, 9, 0.5, history_size)
    for call, x in enumerate(got):
        np.testing.assert_allclose(x, want[3 * call + 2], rtol=1e-10, atol=1e-12)
    state = opt.state[opt.param_groups[0]["params"][0]]
    assert state["n_iter"] == 9 and state["func_evals"] == 9
    assert len(state["old_dirs"]) == min(8, history_size)


def rosenbrock(x):
    return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


def minimise_rosenbrock(lib, opt_lib, **kwargs):
    x = lib.nn.Parameter(lib.tensor([-1.5, 2.0], dtype=lib.float64))
    opt = opt_lib.LBFGS([x], **kwargs)

    def closure():
        opt.zero_grad()
        loss = rosenbrock(x)
        loss.backward()
        return loss
    path = []
    for _ in range(4):
        opt.step(closure)
        path.append(x.detach().numpy().copy())
    return path, opt.state[x]


def test_lbfgs_strong_wolfe_minimises_rosenbrock():
    path, state = minimise_rosenbrock(ember, optim, lr=1, max_iter=100,
                                      line_search_fn="strong_wolfe", history_size=10,
                                      tolerance_grad=1e-12, tolerance_change=1e-15)
    np.testing.assert_allclose(path[-1], [1.0, 1.0], atol=1e-7)
    assert state["func_evals"] < 200
    # without a line search a small fixed step makes slow progress down the valley
    slow, _ = minimise_rosenbrock(ember, optim, lr=0.02, max_iter=25)
    assert rosenbrock(slow[-1]) < rosenbrock(np.array([-1.5, 2.0]))


def test_strong_wolfe_conditions_hold():
    a, b = quadratic(3, n=4)
    x = np.random.default_rng(0).standard_normal(4)

    def value_grad(z):
        return 0.5 * z @ a @ z - b @ z, a @ z - b
    f, g = value_grad(x)
    d = -g * 3.0                                 # an overlong first guess
    t0 = 1.0

    def evaluate(t):
        fv, gv = value_grad(x + t * d)
        return float(fv), ember.from_numpy(gv)
    f_new, g_new, t, evals = strong_wolfe(evaluate, t0, ember.from_numpy(d), float(f),
                                          ember.from_numpy(g), float(g @ d))
    gtd = g @ d
    assert f_new <= f + 1e-4 * t * gtd
    assert abs(float(g_new.numpy() @ d)) <= 0.9 * abs(gtd)
    assert evals >= 1 and t != t0


def test_lbfgs_state_dict_resume():
    a, b = quadratic(4)
    x0 = np.random.default_rng(5).standard_normal(5)

    def make(ps):
        return optim.LBFGS(ps, lr=0.5, max_iter=2, history_size=3)
    want, _ = lbfgs_on_quadratic(make, a, b, x0, calls=4)
    _, opt = lbfgs_on_quadratic(make, a, b, x0, calls=2)
    saved = copy.deepcopy(opt.state_dict())
    x = nn.Parameter(opt.param_groups[0]["params"][0].detach().clone())
    opt2 = make([x])
    opt2.load_state_dict(saved)
    A, B = ember.from_numpy(a), ember.from_numpy(b)

    def closure():
        opt2.zero_grad()
        loss = 0.5 * (x @ (A @ x)) - B @ x
        loss.backward()
        return loss
    for _ in range(2):
        opt2.step(closure)
    np.testing.assert_allclose(x.detach().numpy(), want[-1], rtol=1e-12)


def test_lbfgs_trains_a_linear_model():
    ember.manual_seed(0)
    xs = ember.randn(32, 3, dtype=ember.float64)
    ys = xs @ ember.tensor([[1.0], [-2.0], [0.5]], dtype=ember.float64) + 0.3
    model = nn.Linear(3, 1).double()
    opt = optim.LBFGS(model.parameters(), line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(xs), ys)
        loss.backward()
        return loss
    first = float(opt.step(closure))
    opt.step(closure)
    assert float(closure()) < 1e-10 < first


@requires_torch
@pytest.mark.torch
@pytest.mark.parametrize("kwargs", [dict(lr=1, max_iter=100, line_search_fn="strong_wolfe",
                                         history_size=10),
                                    dict(lr=0.02, max_iter=20, history_size=5)])
def test_lbfgs_matches_torch(kwargs):
    path, state = minimise_rosenbrock(ember, optim, **kwargs)
    tpath, tstate = minimise_rosenbrock(torch, torch.optim, **kwargs)
    np.testing.assert_allclose(np.array(path), np.array(tpath), rtol=1e-7, atol=1e-9)
    assert state["func_evals"] == tstate["func_evals"]
    assert state["n_iter"] == tstate["n_iter"]
    assert set(state) == set(tstate)


# ---- errors ---------------------------------------------------------------------------
def test_argument_errors():
    p = nn.Parameter(ember.ones(2))
    with pytest.raises(ValueError, match="Invalid eta values: 1.5, 1.2"):
        optim.Rprop([p], etas=(1.5, 1.2))
    with pytest.raises(ValueError, match="Invalid learning rate: -0.1"):
        optim.Rprop([p], lr=-0.1)
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.ASGD([p], lr=-1)
    with pytest.raises(ValueError, match="Invalid weight_decay value: -0.5"):
        optim.ASGD([p], weight_decay=-0.5)
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        optim.LBFGS([p], line_search_fn="backtracking")
    q = nn.Parameter(ember.ones(2))
    with pytest.raises(ValueError, match="LBFGS doesn't support per-parameter options"):
        optim.LBFGS([{"params": [p]}, {"params": [q]}])
    opt = optim.LBFGS([p])
    with pytest.raises(ValueError, match="LBFGS doesn't support per-parameter options"):
        opt.add_param_group({"params": [q]})
    with pytest.raises(RuntimeError, match="LBFGS requires a closure"):
        opt.step(None)


def test_lbfgs_stops_at_a_stationary_point():
    p = nn.Parameter(ember.zeros(3, dtype=ember.float64))
    opt = optim.LBFGS([p])
    calls = []

    def closure():
        calls.append(1)
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss
    assert float(opt.step(closure)) == 0.0
    assert len(calls) == 1 and p.tolist() == [0.0, 0.0, 0.0]
