"""SparseAdam: Adam for sparse gradients (embeddings with sparse=True).
Only the moments and parameter entries at the gradient's indices are
updated (the lazy variant of Adam), with PyTorch's algorithm."""
import math

import ember

from ._algorithms import _check_betas
from .optimizer import Optimizer, _closure_loss, _use_no_grad


class SparseAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        _check_betas(betas)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, maximize=maximize))
        sparse = [[gi, pi] for gi, group in enumerate(self.param_groups)
                  for pi, p in enumerate(group["params"]) if p.is_sparse]
        if sparse:
            raise ValueError(f"Sparse params at indices {sparse}: SparseAdam requires dense "
                             "parameter tensors")

    @_use_no_grad
    def step(self, closure=None):
        loss = _closure_loss(closure)
        for group in self.param_groups:
            lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad
                if not g.is_sparse:
                    raise RuntimeError("SparseAdam does not support dense gradients, please "
                                       "consider Adam instead")
                state = self.state[p]
                if not state:
                    state["step"] = ember.tensor(0.0)
                    state["exp_avg"] = ember.zeros_like(p)
                    state["exp_avg_sq"] = ember.zeros_like(p)
                state["step"].add_(1)
                step = float(state["step"])
                g = g.coalesce()
                idx, vals = tuple(g._indices()), g._values()
                if group["maximize"]:
                    vals = -vals
                if not vals.shape[0]:
                    continue
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                # the moments' change at the gradient's entries only
                old_avg = exp_avg[idx]
                avg_update = (vals - old_avg) * (1 - beta1)
                exp_avg.index_put_(idx, avg_update, accumulate=True)
                old_sq = exp_avg_sq[idx]
                sq_update = (vals * vals - old_sq) * (1 - beta2)
                exp_avg_sq.index_put_(idx, sq_update, accumulate=True)
                numer = avg_update + old_avg
                denom = (sq_update + old_sq).sqrt() + eps
                step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
                p.index_put_(idx, numer / denom * -step_size, accumulate=True)
        return loss
