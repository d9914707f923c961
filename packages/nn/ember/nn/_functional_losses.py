"""ember.nn.functional: the losses -- regression (mse, l1, smooth_l1,
huber), classification (nll, cross_entropy, binary_cross_entropy with or
without logits, kl_div), margin, embedding and likelihood losses
(margin_ranking, hinge_embedding, soft_margin, cosine_embedding,
multi_margin, multilabel_margin, multilabel_soft_margin, triplet_margin
with or without a distance function, poisson_nll, gaussian_nll) -- and
pairwise_distance, composed from ember operations (class-index
cross-entropy through its kernel)."""
import math
import warnings

import ember
from ember.amp.policy import BANNED, FP32

from . import _kernels
from ._functional_activation import logsigmoid
from ._functional_common import _check_reduction, _check_tensors, _reduce, _softplus1, \
    _type_name, autocast, follows_autocast

__all__ = ["pairwise_distance", "margin_ranking_loss", "hinge_embedding_loss",
           "soft_margin_loss", "cosine_embedding_loss", "multi_margin_loss",
           "triplet_margin_loss", "triplet_margin_with_distance_loss", "poisson_nll_loss",
           "gaussian_nll_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss"]
__all__ += ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "nll_loss", "cross_entropy",
            "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div"]


def _same_size(input, target, name):
    _check_tensors(name, input=input, target=target)
    if input.shape != target.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input "
                      f"size ({input.shape}). This will likely lead to incorrect results due "
                      "to broadcasting. Please ensure they have the same size.",
                      UserWarning, stacklevel=3)


@autocast(FP32, FP32)
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    _check_reduction(reduction)
    _same_size(input, target, "mse_loss")
    d = input - target
    loss = d * d
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@autocast(FP32, FP32)
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    _check_reduction(reduction)
    _same_size(input, target, "l1_loss")
    loss = (input - target).abs()
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@autocast(FP32, FP32)
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean",
                   beta=1.0):
    _check_reduction(reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _same_size(input, target, "smooth_l1_loss")
    d = (input - target).abs()
    if beta == 0:
        return _reduce(d, reduction)
    loss = ember.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    return _reduce(loss, reduction)


@autocast(FP32, FP32)
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    _check_reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _same_size(input, target, "huber_loss")
    d = (input - target).abs()
    loss = ember.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _check_class_target(input, target, ignore_index, fn):
    if target.dtype is not ember.int64 and target.dtype is not ember.uint8:
        raise RuntimeError("expected target dtype to be Long or Byte, but got "
                           f"{_type_name(target)[:-6]}")
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    if input.dim() == 1:
        if target.dim() != 0:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    else:
        target_batch = target.shape[0] if target.dim() else 0
        if target.dim() == 0 or input.shape[0] != target_batch:
            raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                             f"batch_size ({target_batch}).")
        expect = (input.shape[0],) + tuple(input.shape[2:])
        if tuple(target.shape) != expect:
            raise RuntimeError(f"Expected target size {list(expect)}, got "
                               f"{list(target.shape)}")
    # the class values themselves are checked by the nll kernel (libTHNN's
    # and libTHCUNN's: IndexError "Target k is out of bounds."), not read
    # here: a read would make every traced or compiled loss data-dependent
    return input.shape[0] if input.dim() == 1 else input.shape[1]


def _check_class_weight(weight, c):
    if weight is not None and (weight.dim() != 1 or weight.numel() != c):
        raise RuntimeError(f"weight tensor should be defined either for all {c} classes or no "
                           f"classes but got weight tensor of shape: {list(weight.shape)}")


def _classes_last(input):
    """(N, C, d...) -> (N, d..., C); (C,) stays."""
    return input if input.dim() == 1 else input.movedim(1, -1)


@autocast(FP32, FP32)
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """-input[n, target[n]] (times weight[target[n]]); entries whose target
    is ignore_index count neither in the sum nor in the mean's divisor."""
    _check_reduction(reduction)
    c = _check_class_target(input, target, ignore_index, "nll_loss")
    target = target.long()
    _check_class_weight(weight, c)
    x = _classes_last(input)
    keep = target != ignore_index
    safe = ember.where(keep, target, ember.zeros_like(target))
    try:   # the gather checks the class values (not read here: see above)
        picked = x.gather(-1, safe.unsqueeze(-1)).squeeze(-1)
    except RuntimeError:
        bad = safe[(safe < 0) | (safe >= c)]
        if not bad.numel():
            raise
        raise IndexError(f"Target {int(bad.reshape(-1)[0])} is out of bounds.") from None
    w = keep.to(input.dtype)
    if weight is not None:
        w = w * weight.index_select(0, safe.reshape(-1)).reshape(safe.shape)
    loss = -picked * w
    if reduction == "mean":
        return _weighted_mean(loss.sum(), w.sum())
    return _reduce(loss, reduction)


def _weighted_mean(total, weight_sum):
    """total / weight_sum; when every entry is ignored (weight_sum 0) the
    value is NaN, as PyTorch's, but the gradient 0 rather than NaN."""
    empty = weight_sum == 0
    safe = ember.where(empty, ember.ones_like(weight_sum), weight_sum)
    nan = ember.where(empty, ember.full_like(weight_sum, float("nan")),
                      ember.zeros_like(weight_sum))
    return total / safe + nan


@follows_autocast
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """log_softmax over dim 1 (dim 0 for unbatched input) then nll_loss;
    target holds class indices (int64) or class probabilities (float, the
    input's shape)."""
    _check_reduction(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")
    cdim = 0 if input.dim() == 1 else 1
    c = input.shape[cdim]
    wshape = [1] * input.dim()
    wshape[cdim] = c
    if target.is_floating_point():
        if target.shape != input.shape:
            raise RuntimeError(f"Expected target size {list(input.shape)}, got "
                               f"{list(target.shape)}")
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / c
        prod = input.log_softmax(cdim) * target
        if weight is not None:
            prod = prod * weight.reshape(wshape)
        loss = -prod.sum(cdim)
        if reduction == "mean":
            return loss.sum() / (input.numel() // c) if input.numel() else loss.sum() / 0.0
        return _reduce(loss, reduction)
    if label_smoothing == 0:
        c = _check_class_target(input, target, ignore_index, "cross_entropy")
        _check_class_weight(weight, c)
        return _kernels.kernel("cross_entropy")(input, target.long(), weight, reduction,
                                                ignore_index)
    logp = input.log_softmax(cdim)
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    target = target.long()
    keep = target != ignore_index
    prod = logp if weight is None else logp * weight.reshape(wshape)
    smooth = -prod.sum(cdim) * keep.to(input.dtype)
    if reduction == "mean":
        if weight is None:
            smooth = _weighted_mean(smooth.sum(), keep.to(smooth.dtype).sum())
        else:
            safe = ember.where(keep, target, ember.zeros_like(target))
            w = weight.index_select(0, safe.reshape(-1)).reshape(safe.shape)
            smooth = _weighted_mean(smooth.sum(), (w * keep.to(w.dtype)).sum())
    else:
        smooth = _reduce(smooth, reduction)
    return (1 - label_smoothing) * nll + smooth * (label_smoothing / c)


_BCE_UNSAFE = ("ember.nn.functional.binary_cross_entropy and ember.nn.BCELoss are unsafe to "
               "autocast.\nMany models use a sigmoid layer right before the binary cross "
               "entropy layer.\nIn this case, combine the two layers using "
               "ember.nn.functional.binary_cross_entropy_with_logits\nor "
               "ember.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and "
               "BCEWithLogits are\nsafe to autocast.")


@autocast(BANNED, FP32, _BCE_UNSAFE)
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    _check_reduction(reduction)
    _check_tensors("binary_cross_entropy", input=input, target=target)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the "
                         f"input size ({input.shape}) is deprecated. Please ensure they have "
                         "the same size.")
    if input.numel():
        lo, hi = float(input.detach().min()), float(input.detach().max())
        if lo < 0 or hi > 1 or lo != lo or hi != hi:
            raise RuntimeError("all elements of input should be between 0 and 1")
    if weight is not None:
        weight = weight.expand_as(input)
    return _reduce(_BinaryCrossEntropy.apply(input, target, weight), reduction)


class _BinaryCrossEntropy(ember.autograd.Function):
    """Pointwise BCE with PyTorch's edge handling: the logs are clamped at
    -100 (so log(0) stays finite) and the input gradient's denominator
    x(1 - x) at 1e-12, so a saturated input (exactly 0 or 1) gives a large
    finite gradient instead of NaN.  The backward is written with ember ops,
    so it differentiates again."""

    @staticmethod
    def forward(ctx, x, y, w):
        ctx.save_for_backward(x, y, w)
        loss = -(y * x.log().clamp(min=-100) + (1 - y) * (-x).log1p().clamp(min=-100))
        return loss if w is None else loss * w

    @staticmethod
    def backward(ctx, g):
        x, y, w = ctx.saved_tensors
        if w is not None:
            g = g * w
        gx = gy = None
        if ctx.needs_input_grad[0]:
            gx = g * (x - y) / ((1 - x) * x).clamp(min=1e-12)
        if ctx.needs_input_grad[1]:  # unclamped, as PyTorch: infinite at x = 0 or 1
            gy = g * ((-x).log1p() - x.log())
        return gx, gy, None


_BinaryCrossEntropy.__name__ = "BinaryCrossEntropy"   # grad_fn=<BinaryCrossEntropyBackward>


@autocast(FP32, FP32)
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction="mean", pos_weight=None):
    """BCE of sigmoid(input), computed stably: (1 - t) x + (1 + (pw - 1) t)
    log(1 + e^-x)."""
    _check_reduction(reduction)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    sp = _softplus1(-input)
    if pos_weight is not None:
        loss = (1 - target) * input + (1 + (pos_weight - 1) * target) * sp
    else:
        loss = (1 - target) * input + sp
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@autocast(FP32, FP32)
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """target · (log target − input) pointwise; input holds log-probabilities."""
    _check_reduction(reduction, ("batchmean",))
    _check_tensors("kl_div", input=input, target=target)
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and "
                      "the support size.'batchmean' divides only by the batch size, and "
                      "aligns with the KL div math definition.'mean' will be changed to "
                      "behave the same as 'batchmean' in the next major release.",
                      UserWarning, stacklevel=2)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = ember.xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() else loss.sum()
    return _reduce(loss, reduction)


def _reduction(size_average, reduce, reduction):
    """The reduction the deprecated size_average/reduce flags ask for."""
    if size_average is None and reduce is None:
        _check_reduction(reduction)
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
    _check_tensors("pairwise_distance", x1=x1, x2=x2)
    dim = max(x1.dim(), x2.dim()) - 1
    return (x1 - x2 + eps).norm(p, dim, keepdim=keepdim)


@autocast(FP32, FP32)
def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                        reduction="mean"):
    """max(0, −y (x1 − x2) + margin)."""
    reduction = _reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError("margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.shape}, input2: {input2.shape}, "
                           f"target: {target.shape} ")
    loss = (-target * (input1 - input2) + margin).clamp(min=0)
    return _reduce(loss, reduction)


@autocast(FP32, FP32)
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """x where y = 1, max(0, margin − x) where y = −1."""
    reduction = _reduction(size_average, reduce, reduction)
    zeros = ember.zeros((), dtype=input.dtype, device=input.device)
    hinge = ember.where(target != 1, (margin - input).clamp(min=0), zeros)
    same = ember.where(target != -1, input, zeros)
    return _reduce(hinge + same, reduction)


@autocast(FP32, FP32)
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(−y x)), computed without overflow."""
    reduction = _reduction(size_average, reduce, reduction)
    return _reduce(_softplus1(-target * input), reduction)


@autocast(FP32, FP32)
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
    return _reduce(loss, reduction)


@autocast(FP32, FP32)
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
                           f"{_type_name(target)[:-6]}")
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
    return _reduce(loss, reduction)


@autocast(FP32, FP32)
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
    return _reduce((margin + d_pos - d_neg).clamp(min=0), reduction)


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
    return _reduce((margin + d_pos - d_neg).clamp(min=0), reduction)


@autocast(FP32, FP32)
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
                           f"{_type_name(target)[:-6]}")
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
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """Binary cross-entropy of sigmoid(x) against each class's 0/1 target,
    averaged over the classes (the last dimension)."""
    if size_average is not None or reduce is not None:
        reduction = _reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(input.dim() - 1) / input.shape[-1]
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(reduction + " is not valid")
    return _reduce(loss, reduction)


@autocast(FP32, FP32)
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
    return _reduce(loss, reduction)


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
    return _reduce(loss, reduction)


# ---- samples: argument lists every function here is tested with
# (tests/test_functional_samples.py: gradcheck and gradgradcheck in float64,
# contiguous and non-contiguous, CUDA against the CPU, and PyTorch's
# torch.nn.functional on the same values) -----------------------------------
from ember._ops.samples import Const, Index, S, T  # noqa: E402

SAMPLES = {
    "pairwise_distance": [S(T(3, 4), T(3, 4)), S(T(3, 4), T(3, 4), p=1.0, keepdim=True)],
    "margin_ranking_loss": [S(T(4), T(4), Const([1.0, -1.0, 1.0, -1.0]), margin=0.1)],
    "hinge_embedding_loss": [S(T(4), Const([1.0, -1.0, 1.0, -1.0]))],
    "soft_margin_loss": [S(T(4), Const([1.0, -1.0, 1.0, -1.0]), reduction="sum")],
    "cosine_embedding_loss": [S(T(3, 4), T(3, 4), Const([1.0, -1.0, 1.0]))],
    "multi_margin_loss": [S(T(3, 4), Index([1, 0, 3])),
                          S(T(3, 4), Index([1, 0, 3]), p=2, margin=0.5,
                            weight=T(4, low=0.5, high=1.5, grad=False))],
    "triplet_margin_loss": [S(T(3, 4), T(3, 4), T(3, 4)),
                            S(T(3, 4), T(3, 4), T(3, 4), p=1, swap=True)],
    "triplet_margin_with_distance_loss": [S(T(3, 4), T(3, 4), T(3, 4), margin=0.5)],
    "poisson_nll_loss": [S(T(3, 4), T(3, 4, low=0.0, high=3.0, grad=False)),
                         S(T(3, 4, low=0.5, high=2.0), T(3, 4, low=0.0, high=3.0, grad=False),
                           log_input=False, full=True)],
    "gaussian_nll_loss": [S(T(3, 4), T(3, 4, grad=False), T(3, 4, low=0.5, high=2.0))],
    "multilabel_margin_loss": [S(T(2, 4), Index([[3, 0, -1, 1], [1, 2, 3, -1]]))],
    "multilabel_soft_margin_loss": [S(T(2, 4), Const([[1.0, 0.0, 1.0, 0.0], [0.0, 0.0, 1.0, 1.0]]),
                                      weight=T(4, low=0.5, high=1.5, grad=False))],
    "mse_loss": [S(T(3, 4), T(3, 4, grad=False)), S(T(3, 4), T(3, 4), reduction="none")],
    "l1_loss": [S(T(3, 4), T(3, 4, grad=False)), S(T(3, 4), T(3, 4), reduction="sum")],
    "smooth_l1_loss": [S(T(3, 4), T(3, 4, grad=False), beta=0.5)],
    "huber_loss": [S(T(3, 4), T(3, 4, grad=False), delta=0.5)],
    "nll_loss": [S(T(3, 5), Index([1, 0, 4])),
                 S(T(3, 5), Index([1, 0, 4]), weight=T(5, low=0.5, high=1.5, grad=False),
                   ignore_index=0),
                 S(T(2, 3, 2, 2), Index([[[0, 1], [2, 1]], [[1, 1], [0, 2]]]), reduction="sum")],
    "cross_entropy": [S(T(3, 5), Index([1, 0, 4])),
                      S(T(3, 5), Index([1, 0, 4]), label_smoothing=0.1),
                      S(T(3, 5), T(3, 5, low=0.0, high=1.0, grad=False))],
    "binary_cross_entropy": [S(T(3, 4, low=0.1, high=0.9), T(3, 4, low=0.0, high=1.0, grad=False),
                               weight=T(3, 4, low=0.5, high=1.5, grad=False))],
    "binary_cross_entropy_with_logits": [
        S(T(3, 4), T(3, 4, low=0.0, high=1.0, grad=False),
          pos_weight=T(4, low=0.5, high=1.5, grad=False))],
    "kl_div": [S(T(3, 4), T(3, 4, low=0.1, high=1.0, grad=False), reduction="batchmean"),
               S(T(3, 4), T(3, 4, grad=False), log_target=True)],
}
