"""Lua Torch's optim package: each function takes ``(opfunc, x, config,
state)`` where ``opfunc(x)`` returns ``(f, df/dx)`` at ``x`` (a flat
ember.Tensor, e.g. from ``Module.getParameters()``), updates ``x`` in place,
keeps what it must remember between calls in ``state`` (``config`` itself
when ``state`` is None) and returns ``(x, [f values])``.

Lua Torch's defaults are kept where they differ from ember.optim's: sgd's
``dampening`` defaults to ``momentum``, and adam adds ``epsilon`` to
√v before its bias correction.
"""
import math

import ember

__all__ = ["sgd", "adam", "rmsprop", "adagrad", "lbfgs"]


def _setup(name, x, config, state):
    if not isinstance(x, ember.Tensor):
        raise TypeError(f"optim.{name}: expected x to be an ember.Tensor, "
                        f"got {type(x).__name__}")
    config = {} if config is None else config
    if not isinstance(config, dict):
        raise TypeError(f"optim.{name}: expected config to be a dict, got {type(config).__name__}")
    state = config if state is None else state
    if not isinstance(state, dict):
        raise TypeError(f"optim.{name}: expected state to be a dict, got {type(state).__name__}")
    return config, state


def _evaluate(name, opfunc, x):
    with ember.enable_grad():   # opfunc may use autograd for its gradient
        f, g = opfunc(x)
    if not isinstance(g, ember.Tensor) or tuple(g.shape) != tuple(x.shape):
        got = list(g.shape) if isinstance(g, ember.Tensor) else type(g).__name__
        raise ValueError(f"optim.{name}: opfunc must return (f, df/dx) with df/dx of the size of "
                         f"x {list(x.shape)}, got {got}")
    return float(f), g.detach().clone()


def _decay(g, x, config):
    wd = config.get("weightDecay", 0)
    return g + wd * x if wd else g


def sgd(opfunc, x, config=None, state=None):
    """Config: learningRate (1e-3), learningRateDecay (0), weightDecay (0),
    momentum (0), dampening (momentum), nesterov (False)."""
    config, state = _setup("sgd", x, config, state)
    lr = config.get("learningRate", 1e-3)
    lrd = config.get("learningRateDecay", 0)
    mom = config.get("momentum", 0)
    damp = config.get("dampening", mom)
    nesterov = config.get("nesterov", False)
    if nesterov and (mom <= 0 or damp != 0):
        raise ValueError("optim.sgd: Nesterov momentum requires a momentum and zero dampening")
    with ember.no_grad():
        fx, g = _evaluate("sgd", opfunc, x)
        g = _decay(g, x, config)
        if mom != 0:
            buf = state.get("dfdx")
            buf = g.clone() if buf is None else buf * mom + (1 - damp) * g
            state["dfdx"] = buf
            g = g + mom * buf if nesterov else buf
        n = state.get("evalCounter", 0)
        x.sub_(g * (lr / (1 + n * lrd)))
        state["evalCounter"] = n + 1
    return x, [fx]


def adam(opfunc, x, config=None, state=None):
    """Config: learningRate (1e-3), learningRateDecay (0), beta1 (0.9),
    beta2 (0.999), epsilon (1e-8), weightDecay (0)."""
    config, state = _setup("adam", x, config, state)
    lr = config.get("learningRate", 1e-3)
    lrd = config.get("learningRateDecay", 0)
    b1, b2 = config.get("beta1", 0.9), config.get("beta2", 0.999)
    eps = config.get("epsilon", 1e-8)
    with ember.no_grad():
        fx, g = _evaluate("adam", opfunc, x)
        g = _decay(g, x, config)
        t = state.get("t", 0)
        m = state.get("m", ember.zeros_like(x))
        v = state.get("v", ember.zeros_like(x))
        clr = lr / (1 + t * lrd)
        t += 1
        m = m * b1 + (1 - b1) * g
        v = v * b2 + (1 - b2) * g * g
        step = clr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        x.sub_(step * m / (v.sqrt() + eps))
        state.update(t=t, m=m, v=v)
    return x, [fx]


def rmsprop(opfunc, x, config=None, state=None):
    """Config: learningRate (1e-2), alpha (0.99), epsilon (1e-8),
    weightDecay (0), initialMean (0)."""
    config, state = _setup("rmsprop", x, config, state)
    lr, alpha = config.get("learningRate", 1e-2), config.get("alpha", 0.99)
    eps = config.get("epsilon", 1e-8)
    with ember.no_grad():
        fx, g = _evaluate("rmsprop", opfunc, x)
        g = _decay(g, x, config)
        m = state.get("m")
        if m is None:
            m = ember.full_like(x, config.get("initialMean", 0))
        m = m * alpha + (1 - alpha) * g * g
        x.sub_(lr * g / (m.sqrt() + eps))
        state["m"] = m
    return x, [fx]


def adagrad(opfunc, x, config=None, state=None):
    """Config: learningRate (1e-3), learningRateDecay (0), weightDecay (0)."""
    config, state = _setup("adagrad", x, config, state)
    lr, lrd = config.get("learningRate", 1e-3), config.get("learningRateDecay", 0)
    with ember.no_grad():
        fx, g = _evaluate("adagrad", opfunc, x)
        g = _decay(g, x, config)
        n = state.get("evalCounter", 0)
        var = state.get("paramVariance", ember.zeros_like(x)) + g * g
        x.sub_((lr / (1 + n * lrd)) * g / (var.sqrt() + 1e-10))
        state.update(paramVariance=var, evalCounter=n + 1)
    return x, [fx]


def _dot(a, b):
    return float((a * b).sum())


def lbfgs(opfunc, x, config=None, state=None):
    """Limited-memory BFGS.  Config: maxIter (20), maxEval (maxIter*1.25),
    tolFun (1e-5, on the sum of |df/dx|), tolX (1e-9), nCorrection (100),
    learningRate (1), lineSearch (None: a fixed step; or a function
    ``(opfunc, x, t, d, f, g, gtd) -> (f, g, x, t, nEvals)``).
    Returns ``(x, f_hist, nEvals)``: f at the start and after every step."""
    config, state = _setup("lbfgs", x, config, state)
    max_iter = config.get("maxIter", 20)
    max_eval = config.get("maxEval", max_iter * 1.25)
    tol_fun, tol_x = config.get("tolFun", 1e-5), config.get("tolX", 1e-9)
    n_correction = config.get("nCorrection", 100)
    lr = config.get("learningRate", 1)
    line_search = config.get("lineSearch")
    with ember.no_grad():
        f, g = _evaluate("lbfgs", opfunc, x)
        f_hist, evals = [f], 1
        state["funcEval"] = state.get("funcEval", 0) + 1
        if float(g.abs().sum()) <= tol_fun:
            return x, f_hist, evals
        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps = state.get("old_dirs", []), state.get("old_stps", [])
        h_diag = state.get("Hdiag", 1.0)
        g_old, f_old = state.get("g_old"), state.get("f_old")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["nIter"] = state.get("nIter", 0) + 1
            if state["nIter"] == 1:
                d, old_dirs, old_stps, h_diag = -g, [], [], 1.0
            else:
                y, s = g - g_old, d * t
                ys = _dot(y, s)
                if ys > 1e-10:
                    if len(old_dirs) == n_correction:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                    old_dirs.append(s)
                    old_stps.append(y)
                    h_diag = ys / _dot(y, y)
                # the two-loop recursion: d = -H g
                al = [0.0] * len(old_dirs)
                q = -g
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = _dot(old_dirs[i], q) / _dot(old_stps[i], old_dirs[i])
                    q = q - al[i] * old_stps[i]
                r = q * h_diag
                for i in range(len(old_dirs)):
                    be = _dot(old_stps[i], r) / _dot(old_stps[i], old_dirs[i])
                    r = r + (al[i] - be) * old_dirs[i]
                d = r
            g_old, f_old = g.clone(), f
            t = min(1.0, 1.0 / float(g.abs().sum())) * lr if state["nIter"] == 1 else lr
            gtd = _dot(g, d)
            if gtd > -tol_x:
                break
            ls_evals = 0
            if line_search is not None:
                f, g, x_new, t, ls_evals = line_search(opfunc, x, t, d, f, g, gtd)
                if x_new is not x:
                    x.copy_(x_new)
                f_hist.append(float(f))
            else:
                x.add_(t * d)
                if n_iter != max_iter:
                    f, g = _evaluate("lbfgs", opfunc, x)
                    ls_evals = 1
                    f_hist.append(f)
            evals += ls_evals
            state["funcEval"] += ls_evals
            if n_iter == max_iter or evals >= max_eval:
                break
            if float(g.abs().sum()) <= tol_fun:
                break
            if float((d * t).abs().sum()) <= tol_x or abs(f - f_old) < tol_x:
                break
        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, Hdiag=h_diag,
                     g_old=g_old, f_old=f_old)
    return x, f_hist, evals
