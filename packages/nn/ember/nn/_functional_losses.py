"""ember.nn.functional: margin, embedding and likelihood losses
(margin_ranking, hinge_embedding, soft_margin, cosine_embedding,
multi_margin, multilabel_margin, multilabel_soft_margin, triplet_margin
with or without a distance function, poisson_nll, gaussian_nll) and
pairwise_distance, composed from ember operations."""
import math

import ember

from . import functional as F

__all__ = ["pairwise_distance", "margin_ranking_loss", "hinge_embedding_loss",
           "soft_margin_loss", "cosine_embedding_loss", "multi_margin_loss",
           "triplet_margin_loss", "triplet_margin_with_distance_loss", "poisson_nll_loss",
           "gaussian_nll_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss"]


def _reduction(size_average, reduce, reduction):
    """The reduction the deprecated size_average/reduce flags ask for."""
    if size_average is None and reduce is None:
        F._check_reduction(reduction)
        return reduction
    if reduce is False:
        return "none"
    return "sum" if size_average is False else "mean"


def _hinge(z):
    """max(z, 0) with no gradient at z = 0 (PyTorch's multi-margin kernels
    count a term only where it is positive; clamp would pass it)."""
    return z * (z > 0).to(z.dtype)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """‖x1 − x2 + eps‖_p over the last dimension."""
    F._check_tensors("pairwise_distance", x1=x1, x2=x2)
    dim = max(x1.dim(), x2.dim()) - 1
    return (x1 - x2 + eps).norm(p, dim, keepdim=keepdim)


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                        reduction="mean"):
    """max(0, −y (x1 − x2) + margin)."""
    reduction = _reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError("margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.shape}, input2: {input2.shape}, "
                           f"target: {target.shape} ")
    loss = (-target * (input1 - input2) + margin).clamp(min=0)
    return F._reduce(loss, reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """x where y = 1, max(0, margin − x) where y = −1."""
    reduction = _reduction(size_average, reduce, reduction)
    zeros = ember.zeros((), dtype=input.dtype, device=input.device)
    hinge = ember.where(target != 1, (margin - input).clamp(min=0), zeros)
    same = ember.where(target != -1, input, zeros)
    return F._reduce(hinge + same, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(−y x)), computed without overflow."""
    reduction = _reduction(size_average, reduce, reduction)
    return F._reduce(F._softplus1(-target * input), reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                          reduction="mean"):
    """1 − cos(x1, x2) where y = 1, max(0, cos(x1, x2) − margin) where y = −1."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.dim() not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if target.dim() == 1 and (input1.dim() != 2 or input2.dim() != 2):
        raise RuntimeError("1D target tensor expects 2D input tensors, but found inputs with "
                           f"sizes {list(input1.shape)} and {list(input2.shape)}.")
    if target.dim() == 0 and (input1.dim() != 1 or input2.dim() != 1):
        raise RuntimeError("0D target tensor expects 1D input tensors, but found inputs with "
                           f"sizes {list(input1.shape)} and {list(input2.shape)}.")
    dim = target.dim()
    eps = 1e-12  # keeps a zero vector's cosine finite, as PyTorch
    dot = (input1 * input2).sum(dim)
    sq1 = (input1 * input1).sum(dim) + eps
    sq2 = (input2 * input2).sum(dim) + eps
    cos = dot / (sq1 * sq2).sqrt()
    zeros = ember.zeros((), dtype=cos.dtype, device=cos.device)
    loss = (ember.where(target == 1, 1 - cos, zeros)
            + ember.where(target == -1, (cos - margin).clamp(min=0), zeros))
    return F._reduce(loss, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """Σ_{i ≠ y} max(0, margin − x[y] + x[i])^p / C per sample (times
    weight[y])."""
    reduction = _reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    if input.dim() > 2 or input.dim() == 2 and input.shape[1] == 0 or \
            input.dim() < 2 and input.numel() == 0:
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {list(input.shape)}")
    if target.dtype is not ember.int64:
        raise RuntimeError(f"expected scalar type Long but found "
                           f"{F._type_name(target)[:-6]}")
    x = input.reshape(1, -1) if input.dim() < 2 else input
    n, c = x.shape
    if target.numel() != n or target.dim() > 1:
        raise RuntimeError("multi_margin_loss: target tensor should be 1-D with size equal to "
                           "the number of input samples (batch size). Expected target size "
                           f"[{n}], but got {list(target.shape)}. Input has shape "
                           f"{list(input.shape)}.")
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got "
                           f"{list(weight.shape)}")
    t = target.reshape(n, 1)
    if n and (int(t.min()) < 0 or int(t.max()) >= c):
        raise RuntimeError("target out of range")
    picked = x.gather(1, t)
    z = _hinge(margin - picked + x)
    if p == 2:
        z = z * z
    # the target's own term is left out
    other = ember.arange(c, device=t.device).view(1, c) != t
    z = z * other.to(z.dtype)
    if weight is not None:
        z = z * weight.index_select(0, t.reshape(-1)).view(n, 1)
    loss = z.sum(1) / c
    if input.dim() < 2:
        loss = loss.reshape(())
    return F._reduce(loss, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """max(0, margin + d(a, p) − d(a, n)) with d the pairwise p-distance;
    swap uses min(d(a, n), d(p, n))."""
    reduction = _reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not anchor.dim() == positive.dim() == negative.dim():
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {anchor.dim()}D, "
                           f"positive {positive.dim()}D, and negative {negative.dim()}D inputs")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = ember.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return F._reduce((margin + d_pos - d_neg).clamp(min=0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """max(0, margin + d(a, p) − d(a, n)) for any distance function d
    (pairwise_distance by default)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not anchor.dim() == positive.dim() == negative.dim():
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {anchor.dim()}D, "
                           f"positive {positive.dim()}D, and negative {negative.dim()}D inputs")
    distance = pairwise_distance if distance_function is None else distance_function
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = ember.minimum(d_neg, distance(positive, negative))
    return F._reduce((margin + d_pos - d_neg).clamp(min=0), reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Σ_{j ∈ targets} Σ_{i ∉ targets} max(0, 1 − (x[j] − x[i])) / C per
    sample; a sample's targets are the class indices before its first −1."""
    reduction = _reduction(size_average, reduce, reduction)
    if input.dim() > 2 or input.dim() == 2 and input.shape[1] == 0 or \
            input.dim() < 2 and input.numel() == 0:
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {list(input.shape)}")
    if target.dtype is not ember.int64:
        raise RuntimeError(f"expected scalar type Long but found "
                           f"{F._type_name(target)[:-6]}")
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    x = input.reshape(1, -1) if input.dim() < 2 else input
    n, c = x.shape
    t = target.reshape(n, c)
    if t.numel() and bool(((t < -1) | (t >= c)).any()):
        raise RuntimeError("argument #2 'target' is out of range")
    # which classes are targets: the entries before the first -1 of each row
    # (ember ops, so the target stays on its device)
    before_end = (t != -1).long().cumprod(1)                    # (sample, slot)
    hits = (t.clamp(min=0).unsqueeze(2) ==
            ember.arange(c, device=t.device).view(1, 1, c)).long()
    is_target = (hits * before_end.unsqueeze(2)).sum(1) > 0     # (sample, class)
    pairs = is_target.unsqueeze(2) & ~is_target.unsqueeze(1)   # (sample, target j, other i)
    margins = _hinge(1 - (x.unsqueeze(2) - x.unsqueeze(1)))
    loss = (margins * pairs.to(x.dtype)).sum((1, 2)) / c
    if input.dim() < 2:
        loss = loss.reshape(())
    return F._reduce(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """Binary cross-entropy of sigmoid(x) against each class's 0/1 target,
    averaged over the classes (the last dimension)."""
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    loss = -(target * F.logsigmoid(input) + (1 - target) * F.logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(input.dim() - 1) / input.shape[-1]
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(reduction + " is not valid")
    return F._reduce(loss, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """exp(x) − y x (log_input) or x − y log(x + eps); full adds Stirling's
    approximation of log(y!) where y > 1."""
    reduction = _reduction(size_average, reduce, reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + ember.where(target > 1, stirling, stirling.new_zeros(()))
    return F._reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """½ (log var + (x − y)² / var) (+ ½ log 2π when full); var is clamped
    at eps for the value only (its gradient passes through unchanged)."""
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = ember.full(tuple(input.shape), float(var), dtype=input.dtype,
                         device=input.device)
    elif var.numel() and bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif input.dim() == var.dim() and sum(
                b for a, b in zip(input.shape, var.shape) if a != b) == 1:
            pass  # one dimension of size 1, broadcast (homoscedastic along it)
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var + (var.detach().clamp(min=eps) - var.detach())
    d = input - target
    loss = 0.5 * (var.log() + d * d / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return F._reduce(loss, reduction)
