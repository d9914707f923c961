"""L-BFGS: a quasi-Newton method that keeps the last `history_size`
curvature pairs (s = step, y = gradient change) and applies the inverse
Hessian estimate they define with the two-loop recursion (Nocedal &
Wright, Numerical Optimization, Algorithm 7.4).  The step length is `lr`
(scaled on the very first iteration), or comes from a line search that
enforces the strong Wolfe conditions (Algorithms 3.5 and 3.6 there, with
cubic interpolation)."""
import math

import ember

from .optimizer import Optimizer

__all__ = ["LBFGS"]


class LBFGS(Optimizer):
    """Needs a closure that re-evaluates the loss (and its gradients); one
    step() runs up to max_iter iterations.  All parameters form one group
    and are treated as one flat vector."""

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        if line_search_fn not in (None, "strong_wolfe"):
            raise RuntimeError("only 'strong_wolfe' is supported")
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                                      tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change,
                                      history_size=history_size,
                                      line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def add_param_group(self, param_group):
        if self.param_groups:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        super().add_param_group(param_group)

    # ---- the parameters as one flat vector ---------------------------------------------
    def _flat_grad(self):
        parts = []
        for p in self._params:
            g = p.grad if p.grad is not None else ember.zeros_like(p)
            parts.append(g.reshape(-1))
        return ember.cat(parts, 0)

    def _add_direction(self, t, d):
        """params += t · d (d flat)."""
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(d[offset:offset + n].view_as(p), alpha=t)
            offset += n

    def _copy_params(self):
        return [p.detach().clone() for p in self._params]

    def _set_params(self, values):
        for p, v in zip(self._params, values):
            p.copy_(v)

    def _evaluate(self, closure):
        with ember.enable_grad():
            loss = float(closure())
        return loss, self._flat_grad()

    def _evaluate_at(self, closure, x, t, d):
        """Loss and flat gradient at x + t·d; the parameters go back to x."""
        self._add_direction(t, d)
        loss, grad = self._evaluate(closure)
        self._set_params(x)
        return loss, grad

    # ---- one step ----------------------------------------------------------------------
    def step(self, closure):
        if closure is None:
            raise RuntimeError("LBFGS requires a closure that re-evaluates the model and "
                               "returns the loss")
        with ember.no_grad():
            return self._step(closure)

    def _step(self, closure):
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        history_size, line_search = group["history_size"], group["line_search_fn"]

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        with ember.enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        evals = 1
        state["func_evals"] += 1
        grad = self._flat_grad()
        if float(grad.abs().max()) <= tol_grad:
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps = state.get("old_dirs"), state.get("old_stps")
        ro, h_diag, alphas = state.get("ro"), state.get("H_diag"), state.get("al", [])
        prev_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -grad
                old_dirs, old_stps, ro = [], [], []
                h_diag = 1.0
            else:
                y = grad - prev_grad
                s = d * t
                ys = float(y.dot(s))
                if ys > 1e-10:  # keep only pairs of positive curvature
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / float(y.dot(y))
                d, alphas = _two_loop(grad, old_dirs, old_stps, ro, h_diag)
            prev_grad = grad.clone()
            prev_loss = loss

            # the first iteration has no curvature yet: a cautious step
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / float(grad.abs().sum())) * lr
            else:
                t = lr
            gtd = float(grad.dot(d))
            if gtd > -tol_change:  # not a descent direction
                break

            if line_search == "strong_wolfe":
                x = self._copy_params()
                loss, grad, t, ls_evals = strong_wolfe(
                    lambda step: self._evaluate_at(closure, x, step, d), t, d, loss, grad, gtd,
                    tolerance_change=tol_change)
                self._add_direction(t, d)
            else:
                self._add_direction(t, d)
                ls_evals = 0
                if n_iter != max_iter:
                    loss, grad = self._evaluate(closure)
                    ls_evals = 1
            evals += ls_evals
            state["func_evals"] += ls_evals

            if n_iter == max_iter or evals >= max_eval:
                break
            if float(grad.abs().max()) <= tol_grad:
                break
            if float(d.abs().max()) * abs(t) <= tol_change:
                break
            if abs(loss - prev_loss) < tol_change:
                break

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=h_diag,
                     al=alphas, prev_flat_grad=prev_grad, prev_loss=prev_loss)
        return orig_loss


def _two_loop(grad, dirs, steps, ro, h_diag):
    """−H·grad for the inverse-Hessian estimate of the stored pairs, and the
    first loop's coefficients (one per pair, oldest first)."""
    q = -grad
    alphas = []
    for y, s, r in zip(reversed(dirs), reversed(steps), reversed(ro)):
        a = float(s.dot(q)) * r
        alphas.append(a)
        q = q.add(y, alpha=-a)
    r_vec = q * h_diag
    for y, s, r, a in zip(dirs, steps, ro, reversed(alphas)):
        b = float(y.dot(r_vec)) * r
        r_vec = r_vec.add(s, alpha=a - b)
    return r_vec, alphas[::-1]


# ---- the strong-Wolfe line search ----------------------------------------------------
def _cubic_minimum(x1, f1, g1, x2, f2, g2, low=None, high=None):
    """Minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1, g2,
    kept within [low, high] (default: between x1 and x2); the midpoint when
    the cubic has no minimum."""
    if low is None:
        low, high = min(x1, x2), max(x1, x2)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    disc = d1 * d1 - g1 * g2
    if disc < 0:
        return (low + high) / 2
    d2 = math.copysign(math.sqrt(disc), x2 - x1)
    x = x2 - (x2 - x1) * (g2 + d2 - d1) / (g2 - g1 + 2 * d2)
    return min(max(x, low), high)


def strong_wolfe(evaluate, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                 max_ls=25):
    """A step t along d satisfying the strong Wolfe conditions
    f(t) <= f + c1 t gtd and |g(t)·d| <= c2 |gtd|.  evaluate(t) returns
    (loss, flat gradient) at x + t d.  Returns (loss, gradient, t, evaluations)."""
    d_max = float(d.abs().max())
    f_new, g_new = evaluate(t)
    evals = 1
    gtd_new = float(g_new.dot(d))

    # phase 1: grow t until an interval is known to hold an acceptable step
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    bracket = None
    tries = 0
    while tries < max_ls:
        if f_new > f + c1 * t * gtd or (tries > 0 and f_new >= f_prev):
            bracket = [(t_prev, f_prev, g_prev, gtd_prev), (t, f_new, g_new, gtd_new)]
            break
        if abs(gtd_new) <= -c2 * gtd:
            return f_new, g_new, t, evals
        if gtd_new >= 0:
            bracket = [(t_prev, f_prev, g_prev, gtd_prev), (t, f_new, g_new, gtd_new)]
            break
        # extrapolate with the cubic, at least 1% past t and at most 10 t
        t_next = _cubic_minimum(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                t + 0.01 * (t - t_prev), t * 10)
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new, gtd_new
        t = t_next
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = float(g_new.dot(d))
        tries += 1
    if bracket is None:  # out of tries: fall back to the last point tried
        bracket = [(0.0, f, g, gtd), (t, f_new, g_new, gtd_new)]

    # phase 2 (zoom): shrink the interval; `low` is always its better end
    low = 0 if bracket[0][1] <= bracket[1][1] else 1
    stuck = False
    while tries < max_ls:
        (ta, fa, _, gda), (tb, fb, _, gdb) = bracket
        if abs(tb - ta) * d_max < tolerance_change:
            break
        t = _cubic_minimum(ta, fa, gda, tb, fb, gdb)
        # keep t away from the ends so that the interval keeps shrinking
        lo, hi = min(ta, tb), max(ta, tb)
        margin = 0.1 * (hi - lo)
        if min(hi - t, t - lo) < margin:
            if stuck or t >= hi or t <= lo:
                t = hi - margin if abs(t - hi) < abs(t - lo) else lo + margin
                stuck = False
            else:
                stuck = True
        else:
            stuck = False
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = float(g_new.dot(d))
        tries += 1
        point = (t, f_new, g_new, gtd_new)
        high = 1 - low
        if f_new > f + c1 * t * gtd or f_new >= bracket[low][1]:
            bracket[high] = point
        else:
            if abs(gtd_new) <= -c2 * gtd:
                bracket[low] = point
                break
            if gtd_new * (bracket[high][0] - bracket[low][0]) >= 0:
                bracket[high] = bracket[low]
            bracket[low] = point
        low = 0 if bracket[0][1] <= bracket[1][1] else 1
    t, f_new, g_new, _ = bracket[low]
    return f_new, g_new, t, evals
