"""Losses: cross_entropy over class indices (the other losses are composed
in ember.nn.functional, or computed by ember.thnn's pointwise kernels)."""
from ember._ops.samples import Index, S, T
from ember.amp.policy import FP32

from . import Kernel


class cross_entropy(Kernel):
    """(input, target, weight, reduction, ignore_index): log_softmax over the
    class dimension, then nll_loss; target holds class indices (int64),
    already checked against the input."""
    samples = [S(T(5, 4), Index([1, 0, 3, 3, 2]), None, "mean", -100),
               S(T(5, 4), Index([1, 0, 3, 3, 2]), T(4, low=0.5, high=1.5, grad=False), "sum", 3),
               S(T(4), Index(2), None, "none", -100, name="unbatched")]
    differentiable = 1
    node = "NllLossBackward0"
    autocast = (FP32, FP32)

    @staticmethod
    def composed(input, target, weight, reduction, ignore_index):
        from .._functional_losses import nll_loss
        logp = input.log_softmax(0 if input.dim() == 1 else 1)
        return nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)

    @classmethod
    def forward(cls, x, target, weight, reduction, ignore_index):
        if x.ndim not in (1, 2) or not cls.floats(x, weight) or \
                (weight is not None and weight.dtype != x.dtype):
            return NotImplemented
        unbatched = None
        if x.ndim == 1:  # one row of classes: the kernels take (N, C)
            unbatched, x, target = x.shape, x.reshape((1, x.shape[0])), target.reshape((1,))
        out, log_probs, total_weight = cls.k.cross_entropy_forward(x, target, weight, reduction,
                                                                   ignore_index)
        if unbatched is not None and reduction == "none":
            out = out.reshape(())
        return out, (log_probs, target, weight, total_weight, reduction, ignore_index, unbatched)

    @classmethod
    def backward(cls, ctx, g, inputs, needs):
        log_probs, target, weight, total_weight, reduction, ignore_index, unbatched = ctx
        if unbatched is None:
            return (cls.k.cross_entropy_backward_input(g.contiguous(), log_probs, target, weight,
                                                       total_weight, reduction, ignore_index),)
        if reduction == "none":
            g = g.reshape((1,))
        gx = cls.k.cross_entropy_backward_input(g.contiguous(), log_probs, target, weight,
                                                total_weight, reduction, ignore_index)
        return (gx.reshape(unbatched),)
