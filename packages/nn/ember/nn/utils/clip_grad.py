import math

import ember


def _grads(parameters):
    if isinstance(parameters, ember.Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False):
    norm_type = float(norm_type)
    tensors = list(tensors)
    if not tensors:
        return ember.tensor(0.0)
    with ember.no_grad():
        if math.isinf(norm_type):
            norms = [t.detach().abs().max() for t in tensors]
            total = ember.stack(norms).max()
        else:
            norms = [t.detach().norm(norm_type) for t in tensors]
            total = ember.stack(norms).norm(norm_type)
    if error_if_nonfinite and not math.isfinite(float(total)):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                           "`parameters` is non-finite, so it cannot be clipped. To disable "
                           "this error and scale the gradients by the non-finite norm anyway, "
                           "set `error_if_nonfinite=False`")
    return total


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Scales the gradients in place so their joint norm is at most
    max_norm; returns the norm before clipping."""
    grads = _grads(parameters)
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    if not grads:
        return total
    coef = float(max_norm) / (float(total) + 1e-6)
    if coef < 1:
        with ember.no_grad():
            for g in grads:
                g.mul_(coef)
    return total


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamps every gradient element into [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    with ember.no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)
