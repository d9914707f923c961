"""SGD, Adam, AdamW, RMSprop, Adagrad: PyTorch's single-tensor update
rules, in place, without building a graph."""
import math

import ember
from ember.sparse import add_to_dense_

from .optimizer import Optimizer, _closure_loss, _use_no_grad, required

__all__ = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam",
           "RAdam", "Rprop", "ASGD"]


def _check(name, value, low=0.0, what=None):
    if not value >= low:
        raise ValueError(f"Invalid {what or name}: {value}")


def _step_tensor(state):
    if "step" not in state:
        state["step"] = ember.tensor(0.0)
    state["step"].add_(1)
    return float(state["step"])


def _grad(p, group, opt):
    """p's gradient as the update uses it: negated to maximize, with L2 weight
    decay added, or (decoupled_weight_decay, as AdamW) p shrunk in place."""
    g = p.grad
    if g.is_sparse:  # SGD and Adagrad take theirs before coming here
        name = "Adam" if isinstance(opt, Adam) else type(opt).__name__
        hint = ", please consider SparseAdam instead" if name == "Adam" else ""
        raise RuntimeError(f"{name} does not support sparse gradients{hint}")
    if group.get("maximize"):
        g = -g
    wd = group.get("weight_decay", 0)
    if wd:
        if group.get("decoupled_weight_decay"):
            p.mul_(1 - group["lr"] * wd)
        else:
            g = g.add(p, alpha=wd)
    return g


def _fused_kernels():
    """ember.compiler's fused steps (the front's; imported on first use)."""
    from ember.compiler import _optim, _toolchain
    return _optim, _toolchain


def _fusable(group):
    """(parameters with a gradient, their gradients), or None when the
    group's tensors are not ones the fused kernels take."""
    ps = [p for p in group["params"] if p.grad is not None]
    grads = [p.grad for p in ps]
    if ps and not _fused_kernels()[0].supported(ps + grads):
        return None
    return ps, grads


_fused_warned = set()


def _fused_unavailable(name, why):
    import warnings
    if why not in _fused_warned:
        _fused_warned.add(why)
        warnings.warn(f"{name}(fused=True): {why}; this step runs unfused", RuntimeWarning,
                      stacklevel=3)


def _check_fused(fused, foreach):
    if fused and foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        if lr is not required:
            _check("lr", lr, what="learning rate")
        _check("momentum", momentum, what="momentum value")
        _check("weight_decay", weight_decay, what="weight_decay value")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        _check_fused(fused, foreach)
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    @_use_no_grad
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            lr, momentum = group["lr"], group["momentum"]
            dampening, nesterov = group["dampening"], group["nesterov"]
            if group.get("fused") and self._fused_step(group):
                continue
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.grad.is_sparse:
                    _sgd_sparse(p, group, self.state[p])
                    continue
                d_p = _grad(p, group, self)
                if momentum != 0:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = d_p.clone().detach()
                    else:
                        buf.mul_(momentum).add_(d_p, alpha=1 - dampening)
                    d_p = d_p.add(buf, alpha=momentum) if nesterov else buf
                p.add_(d_p, alpha=-lr)
        return loss


def _sgd_fused(self, group):
    """The group's step as one generated kernel; False when it cannot run
    fused (the caller runs the usual loop)."""
    found = _fusable(group)
    if found is None:
        return False
    ps, grads = found
    if not ps:
        return True
    _optim, _toolchain = _fused_kernels()
    momentum = group["momentum"]
    bufs, new = None, []
    if momentum != 0:
        bufs = []
        for p in ps:
            state = self.state[p]
            buf = state.get("momentum_buffer")
            new.append(buf is None)
            if buf is None:
                buf = state["momentum_buffer"] = ember.zeros_like(p)
            bufs.append(buf)
    else:
        new = [False] * len(ps)
    try:
        _optim.sgd(ps, grads, bufs, new, lr=group["lr"], momentum=momentum,
                   dampening=group["dampening"], weight_decay=group["weight_decay"],
                   nesterov=group["nesterov"], maximize=group["maximize"])
    except (_toolchain.CompilerMissing, RuntimeError) as e:
        for p, made in zip(ps, new):
            if made:
                del self.state[p]["momentum_buffer"]
        _fused_unavailable("SGD", str(e).splitlines()[0])
        return False
    return True


SGD._fused_step = _sgd_fused


def _sgd_sparse(p, group, state):
    """SGD's step with a sparse gradient: only the rows it holds move (a
    momentum buffer is kept sparse, as PyTorch does)."""
    g = p.grad
    if group["weight_decay"]:
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) "
                           "instead.")
    if group["maximize"]:
        g = -g
    momentum = group["momentum"]
    if momentum != 0:
        buf = state.get("momentum_buffer")
        if buf is None:
            buf = g.clone().detach()
        else:
            buf = buf * momentum + g * (1 - group["dampening"])
        state["momentum_buffer"] = buf
        g = g + buf * momentum if group["nesterov"] else buf
    add_to_dense_(p, g, -group["lr"])


class Adam(Optimizer):
    _decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        _check("lr", lr, what="learning rate")
        _check("eps", eps, what="epsilon value")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        _check("weight_decay", weight_decay, what="weight_decay value")
        _check_fused(fused, foreach)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize, foreach=foreach,
                                      capturable=capturable, differentiable=differentiable,
                                      fused=fused,
                                      decoupled_weight_decay=decoupled_weight_decay
                                      or self._decoupled))

    @_use_no_grad
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            amsgrad = group["amsgrad"]
            if group.get("fused") and self._fused_step(group):
                continue
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "exp_avg" not in state:
                    state["step"] = ember.tensor(0.0)
                    state["exp_avg"] = ember.zeros_like(p)
                    state["exp_avg_sq"] = ember.zeros_like(p)
                    if amsgrad:
                        state["max_exp_avg_sq"] = ember.zeros_like(p)
                step = _step_tensor(state)
                g = _grad(p, group, self)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                exp_avg.lerp_(g, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2)
                bc1 = 1 - beta1 ** step
                bc2_sqrt = math.sqrt(1 - beta2 ** step)
                if amsgrad:
                    m = state["max_exp_avg_sq"]
                    m.copy_(ember.maximum(m, exp_avg_sq))
                    denom = (m.sqrt() / bc2_sqrt).add_(eps)
                else:
                    denom = (exp_avg_sq.sqrt() / bc2_sqrt).add_(eps)
                p.addcdiv_(exp_avg, denom, value=-lr / bc1)
        return loss


def _adam_fused(self, group):
    """The group's step as one generated kernel; False when it cannot run
    fused (the caller runs the usual loop)."""
    found = _fusable(group)
    if found is None:
        return False
    ps, grads = found
    if not ps:
        return True
    _optim, _toolchain = _fused_kernels()
    amsgrad = group["amsgrad"]
    ms, vs, vmax, steps = [], [], [], []
    for p in ps:
        state = self.state[p]
        if "exp_avg" not in state:
            state["step"] = ember.tensor(0.0)
            state["exp_avg"] = ember.zeros_like(p)
            state["exp_avg_sq"] = ember.zeros_like(p)
            if amsgrad:
                state["max_exp_avg_sq"] = ember.zeros_like(p)
        ms.append(state["exp_avg"])
        vs.append(state["exp_avg_sq"])
        if amsgrad:
            vmax.append(state["max_exp_avg_sq"])
        steps.append(float(state["step"]) + 1)
    if not _optim.supported(ps + ms + vs + vmax):
        return False
    beta1, beta2 = group["betas"]
    try:
        _optim.adam(ps, grads, ms, vs, vmax, steps, lr=group["lr"], beta1=beta1, beta2=beta2,
                    eps=group["eps"], weight_decay=group["weight_decay"],
                    decoupled=group["decoupled_weight_decay"], maximize=group["maximize"],
                    amsgrad=amsgrad)
    except (_toolchain.CompilerMissing, RuntimeError) as e:
        _fused_unavailable(type(self).__name__, str(e).splitlines()[0])
        return False
    for p in ps:
        self.state[p]["step"].add_(1)
    return True


Adam._fused_step = _adam_fused


class AdamW(Adam):
    """Adam with decoupled weight decay: p ← p (1 − lr·wd) before the Adam
    step (default weight_decay 1e-2)."""
    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize,
                         foreach=foreach, capturable=capturable,
                         differentiable=differentiable, fused=fused)


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        _check("lr", lr, what="learning rate")
        _check("eps", eps, what="epsilon value")
        _check("momentum", momentum, what="momentum value")
        _check("weight_decay", weight_decay, what="weight_decay value")
        _check("alpha", alpha, what="alpha value")
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=centered,
                                      capturable=capturable, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable))

    @_use_no_grad
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
            momentum, centered = group["momentum"], group["centered"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "square_avg" not in state:
                    state["step"] = ember.tensor(0.0)
                    state["square_avg"] = ember.zeros_like(p)
                    if momentum > 0:
                        state["momentum_buffer"] = ember.zeros_like(p)
                    if centered:
                        state["grad_avg"] = ember.zeros_like(p)
                _step_tensor(state)
                g = _grad(p, group, self)
                sq = state["square_avg"]
                sq.mul_(alpha).addcmul_(g, g, value=1 - alpha)
                if centered:
                    ga = state["grad_avg"]
                    ga.lerp_(g, 1 - alpha)
                    avg = sq.addcmul(ga, ga, value=-1).sqrt_()
                else:
                    avg = sq.sqrt()
                avg = avg.add_(eps)
                if momentum > 0:
                    buf = state["momentum_buffer"]
                    buf.mul_(momentum).addcdiv_(g, avg)
                    p.add_(buf, alpha=-lr)
                else:
                    p.addcdiv_(g, avg, value=-lr)
        return loss


class Adagrad(Optimizer):
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0,
                 initial_accumulator_value=0, eps=1e-10, foreach=None, *, maximize=False,
                 differentiable=False, fused=None):
        _check("lr", lr, what="learning rate")
        _check("lr_decay", lr_decay, what="lr_decay value")
        _check("weight_decay", weight_decay, what="weight_decay value")
        _check("initial_accumulator_value", initial_accumulator_value,
               what="initial_accumulator_value value")
        _check("eps", eps, what="epsilon value")
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps,
                                      weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, fused=fused))
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = ember.tensor(0.0)
                state["sum"] = ember.full_like(p, group["initial_accumulator_value"])

    @_use_no_grad
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                step = _step_tensor(state)
                clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
                if p.grad.is_sparse:
                    _adagrad_sparse(p, group, state["sum"], clr)
                    continue
                g = _grad(p, group, self)
                state["sum"].addcmul_(g, g, value=1)
                std = state["sum"].sqrt().add_(group["eps"])
                p.addcdiv_(g, std, value=-clr)
        return loss


def _adagrad_sparse(p, group, total, clr):
    """Adagrad's step with a sparse gradient: the squared-gradient sum and
    the parameter change only at the gradient's (coalesced) indices."""
    if group["weight_decay"]:
        raise RuntimeError("weight_decay option is not compatible with sparse gradients")
    g = p.grad.coalesce()
    idx, vals = tuple(g._indices()), g._values()
    if group["maximize"]:
        vals = -vals
    if not vals.shape[0]:
        return
    total.index_put_(idx, vals * vals, accumulate=True)
    std = total[idx].sqrt().add_(group["eps"])
    p.index_put_(idx, vals / std * -clr, accumulate=True)


def _check_betas(betas):
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")


class Adadelta(Optimizer):
    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        _check("lr", lr, what="learning rate")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check("eps", eps, what="epsilon value")
        _check("weight_decay", weight_decay, what="weight_decay value")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, capturable=capturable,
                                      foreach=foreach, differentiable=differentiable))

    @_use_no_grad
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            lr, rho, eps = group["lr"], group["rho"], group["eps"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "square_avg" not in state:
                    state["step"] = ember.tensor(0.0)
                    state["square_avg"] = ember.zeros_like(p)
                    state["acc_delta"] = ember.zeros_like(p)
                _step_tensor(state)
                g = _grad(p, group, self)
                sq, acc = state["square_avg"], state["acc_delta"]
                sq.mul_(rho).addcmul_(g, g, value=1 - rho)
                std = sq.add(eps).sqrt_()
                delta = acc.add(eps).sqrt_().div_(std).mul_(g)
                acc.mul_(rho).addcmul_(delta, delta, value=1 - rho)
                p.add_(delta, alpha=-lr)
        return loss


class Adamax(Optimizer):
    """Adam with the infinity norm: u ← max(β₂u, |g| + eps)."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        _check("lr", lr, what="learning rate")
        _check("eps", eps, what="epsilon value")
        _check_betas(betas)
        _check("weight_decay", weight_decay, what="weight_decay value")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    @_use_no_grad
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "exp_avg" not in state:
                    state["step"] = ember.tensor(0.0)
                    state["exp_avg"] = ember.zeros_like(p)
                    state["exp_inf"] = ember.zeros_like(p)
                step = _step_tensor(state)
                g = _grad(p, group, self)
                state["exp_avg"].lerp_(g, 1 - beta1)
                inf = state["exp_inf"]
                inf.copy_(ember.maximum(inf.mul_(beta2), g.abs().add_(eps)))
                p.addcdiv_(state["exp_avg"], inf, value=-lr / (1 - beta1 ** step))
        return loss


class NAdam(Optimizer):
    """Adam with Nesterov momentum and momentum decay (Dozat)."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        _check("lr", lr, what="learning rate")
        _check("eps", eps, what="epsilon value")
        _check_betas(betas)
        _check("weight_decay", weight_decay, what="weight_decay value")
        _check("momentum_decay", momentum_decay, what="momentum_decay value")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, momentum_decay=momentum_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, foreach=foreach,
                                      capturable=capturable, differentiable=differentiable))

    @_use_no_grad
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            decay = group["momentum_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "exp_avg" not in state:
                    state["step"] = ember.tensor(0.0)
                    state["mu_product"] = ember.tensor(1.0)
                    state["exp_avg"] = ember.zeros_like(p)
                    state["exp_avg_sq"] = ember.zeros_like(p)
                step = _step_tensor(state)
                g = _grad(p, group, self)
                bc2 = 1 - beta2 ** step
                mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * decay))
                mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * decay))
                state["mu_product"].mul_(mu)
                mu_product = float(state["mu_product"])
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                exp_avg.lerp_(g, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2)
                denom = exp_avg_sq.div(bc2).sqrt().add_(eps)
                p.addcdiv_(g, denom, value=-lr * (1.0 - mu) / (1.0 - mu_product))
                p.addcdiv_(exp_avg, denom, value=-lr * mu_next / (1.0 - mu_product * mu_next))
        return loss


class RAdam(Optimizer):
    """Rectified Adam (Liu et al.): plain momentum SGD until the variance of
    the adaptive rate is tractable (ρ_t > 5), then rectified Adam steps."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        _check("lr", lr, what="learning rate")
        _check("eps", eps, what="epsilon value")
        _check_betas(betas)
        _check("weight_decay", weight_decay, what="weight_decay value")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, foreach=foreach,
                                      capturable=capturable, differentiable=differentiable))

    @_use_no_grad
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "exp_avg" not in state:
                    state["step"] = ember.tensor(0.0)
                    state["exp_avg"] = ember.zeros_like(p)
                    state["exp_avg_sq"] = ember.zeros_like(p)
                step = _step_tensor(state)
                g = _grad(p, group, self)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                exp_avg.lerp_(g, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2)
                bc1, bc2 = 1 - beta1 ** step, 1 - beta2 ** step
                corrected = exp_avg / bc1
                rho_inf = 2 / (1 - beta2) - 1
                rho_t = rho_inf - 2 * step * (beta2 ** step) / bc2
                if rho_t > 5.0:
                    rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                                     / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
                    adaptive = math.sqrt(bc2) / exp_avg_sq.sqrt().add_(eps)
                    p.add_(corrected * lr * adaptive * rect, alpha=-1.0)
                else:
                    p.add_(corrected * lr, alpha=-1.0)
        return loss


class Rprop(Optimizer):
    """Resilient backpropagation (Riedmiller & Braun): each element has its
    own step size, grown by etaplus while the gradient keeps its sign and
    shrunk by etaminus when it flips (that step is then skipped); only the
    gradient's sign moves the parameter."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check("lr", lr, what="learning rate")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes),
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))

    @_use_no_grad
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            etaminus, etaplus = group["etas"]
            size_min, size_max = group["step_sizes"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "prev" not in state:
                    state["step"] = ember.tensor(0.0)
                    state["prev"] = ember.zeros_like(p)
                    state["step_size"] = ember.full_like(p, group["lr"])
                _step_tensor(state)
                if p.grad.is_sparse:
                    raise RuntimeError("Rprop does not support sparse gradients")
                g = -p.grad if group["maximize"] else p.grad
                agree = (g * state["prev"]).sign()
                factor = ember.where(agree > 0, ember.full_like(g, etaplus),
                                     ember.where(agree < 0, ember.full_like(g, etaminus),
                                                 ember.ones_like(g)))
                size = state["step_size"]
                size.mul_(factor).clamp_(size_min, size_max)
                # after a sign flip the step is skipped and the flip forgotten
                g = ember.where(agree < 0, ember.zeros_like(g), g)
                p.addcmul_(g.sign(), size, value=-1)
                state["prev"].copy_(g)
        return loss


class ASGD(Optimizer):
    """Averaged SGD (Polyak & Juditsky): SGD with a decaying rate
    eta_t = lr / (1 + lambd lr t)^alpha and an average `ax` of the iterates
    that starts moving after t0 steps (mu_t = 1 / max(1, t − t0))."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        _check("lr", lr, what="learning rate")
        _check("weight_decay", weight_decay, what="weight_decay value")
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    @_use_no_grad
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "ax" not in state:
                    state["step"] = ember.tensor(0.0)
                    state["eta"] = ember.tensor(float(lr))
                    state["mu"] = ember.tensor(1.0)
                    state["ax"] = ember.zeros_like(p)
                step = _step_tensor(state)
                g = _grad(p, group, self)
                eta = float(state["eta"])
                p.mul_(1 - lambd * eta)
                p.add_(g, alpha=-eta)
                mu = float(state["mu"])
                if mu != 1:
                    state["ax"].add_((p - state["ax"]).mul_(mu))
                else:
                    state["ax"].copy_(p)
                state["eta"].fill_(lr / ((1 + lambd * lr * step) ** alpha))
                state["mu"].fill_(1 / max(1, step - t0))
        return loss
