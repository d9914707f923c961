"""Bindings of the losses: nll_loss and cross_entropy, the pointwise losses,
kl_div, margin_ranking_loss, cosine_embedding_loss."""
from ._lib import check as _check, lib as _lib
from ._activation import log_softmax_backward_input, log_softmax_forward
from ._args import _empty, _p, _reduction

__all__ = ["POINTWISE_LOSSES", "nll_loss_forward", "nll_loss_backward_input",
           "cross_entropy_forward", "cross_entropy_backward_input", "pointwise_loss_forward",
           "pointwise_loss_backward_input", "kl_div_forward", "kl_div_backward_input",
           "margin_ranking_loss_forward", "margin_ranking_loss_backward_input",
           "cosine_embedding_loss_forward", "cosine_embedding_loss_backward_input"]


POINTWISE_LOSSES = {"mse": 0, "l1": 1, "smooth_l1": 2, "huber": 3, "bce": 4,
                    "bce_with_logits": 5}


def nll_loss_forward(input, target, weight=None, reduction="mean", ignore_index=-100):
    """(output, total_weight)"""
    r = _reduction(reduction)
    out = _empty(tuple(target.shape) if r == 0 else (), input)
    tw = _empty((), input)
    _check(_lib.thnn_nll_loss_forward(out._p, tw._p, input._p, target._p, _p(weight), r,
                                      ignore_index))
    return out, tw


def nll_loss_backward_input(grad_output, input_shape, target, weight, total_weight,
                            reduction="mean", ignore_index=-100):
    gi = _empty(tuple(input_shape), grad_output)
    _check(_lib.thnn_nll_loss_backward_input(gi._p, grad_output._p, target._p, _p(weight),
                                             total_weight._p, _reduction(reduction),
                                             ignore_index))
    return gi


def cross_entropy_forward(input, target, weight=None, reduction="mean", ignore_index=-100):
    """(output, log_probs, total_weight): log_softmax over dim 1, then nll."""
    lp = log_softmax_forward(input, 1 if input.ndim > 1 else 0)
    out, tw = nll_loss_forward(lp, target, weight, reduction, ignore_index)
    return out, lp, tw


def cross_entropy_backward_input(grad_output, log_probs, target, weight, total_weight,
                                 reduction="mean", ignore_index=-100):
    g = nll_loss_backward_input(grad_output, log_probs.shape, target, weight, total_weight,
                                reduction, ignore_index)
    return log_softmax_backward_input(g, log_probs, 1 if log_probs.ndim > 1 else 0)


def _pointwise(loss):
    try:
        return POINTWISE_LOSSES[loss]
    except KeyError:
        raise ValueError(f"unknown pointwise loss {loss!r}; one of "
                         f"{sorted(POINTWISE_LOSSES)}") from None


def pointwise_loss_forward(loss, input, target, weight=None, pos_weight=None,
                           reduction="mean", a=1.0):
    """loss: mse, l1, smooth_l1 (a = beta), huber (a = delta), bce,
    bce_with_logits (pos_weight)."""
    r = _reduction(reduction)
    out = _empty(tuple(input.shape) if r == 0 else (), input)
    _check(_lib.thnn_pointwise_loss_forward(out._p, input._p, target._p, _p(weight),
                                            _p(pos_weight), _pointwise(loss), r, a))
    return out


def pointwise_loss_backward_input(loss, grad_output, input, target, weight=None,
                                  pos_weight=None, reduction="mean", a=1.0):
    gi = _empty(tuple(input.shape), input)
    _check(_lib.thnn_pointwise_loss_backward_input(
        gi._p, grad_output._p, input._p, target._p, _p(weight), _p(pos_weight),
        _pointwise(loss), _reduction(reduction), a))
    return gi


def _loss_out(shape, like, r):
    return _empty(tuple(shape) if r == 0 else (), like)


def kl_div_forward(input, target, reduction="mean", log_target=False):
    """reduction none / mean / sum ('batchmean' is sum / input.shape[0])."""
    r = _reduction(reduction)
    out = _loss_out(input.shape, input, r)
    _check(_lib.thnn_kl_div_forward(out._p, input._p, target._p, r, int(bool(log_target))))
    return out


def kl_div_backward_input(grad_output, input, target, reduction="mean", log_target=False,
                          need_input=True, need_target=False):
    """(grad_input, grad_target); either is None when not asked for."""
    gi = _empty(tuple(input.shape), input) if need_input else None
    gt = _empty(tuple(input.shape), input) if need_target else None
    _check(_lib.thnn_kl_div_backward_input(_p(gi), _p(gt), grad_output._p, input._p,
                                           target._p, _reduction(reduction),
                                           int(bool(log_target))))
    return gi, gt


def margin_ranking_loss_forward(input1, input2, target, margin=0.0, reduction="mean"):
    r = _reduction(reduction)
    out = _loss_out(input1.shape, input1, r)
    _check(_lib.thnn_margin_ranking_loss_forward(out._p, input1._p, input2._p, target._p,
                                                 float(margin), r))
    return out


def margin_ranking_loss_backward_input(grad_output, input1, input2, target, margin=0.0,
                                       reduction="mean", need_input1=True, need_input2=True):
    """(grad_input1, grad_input2); either is None when not asked for."""
    g1 = _empty(tuple(input1.shape), input1) if need_input1 else None
    g2 = _empty(tuple(input1.shape), input1) if need_input2 else None
    _check(_lib.thnn_margin_ranking_loss_backward_input(
        _p(g1), _p(g2), grad_output._p, input1._p, input2._p, target._p, float(margin),
        _reduction(reduction)))
    return g1, g2


def cosine_embedding_loss_forward(input1, input2, target, margin=0.0, reduction="mean"):
    """inputs (N, D) with target (N), or (D) with a 0-d target."""
    r = _reduction(reduction)
    out = _loss_out(target.shape, input1, r)
    _check(_lib.thnn_cosine_embedding_loss_forward(out._p, input1._p, input2._p, target._p,
                                                   float(margin), r))
    return out


def cosine_embedding_loss_backward_input(grad_output, input1, input2, target, margin=0.0,
                                         reduction="mean", need_input1=True,
                                         need_input2=True):
    """(grad_input1, grad_input2); either is None when not asked for."""
    g1 = _empty(tuple(input1.shape), input1) if need_input1 else None
    g2 = _empty(tuple(input1.shape), input1) if need_input2 else None
    _check(_lib.thnn_cosine_embedding_loss_backward_input(
        _p(g1), _p(g2), grad_output._p, input1._p, input2._p, target._p, float(margin),
        _reduction(reduction)))
    return g1, g2
