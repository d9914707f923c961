"""Bindings of the losses: nll_loss and cross_entropy, the pointwise losses,
kl_div, margin_ranking_loss, cosine_embedding_loss."""

NAMES = ["POINTWISE_LOSSES", "nll_loss_forward", "nll_loss_backward_input",
         "cross_entropy_forward", "cross_entropy_backward_input", "pointwise_loss_forward",
         "pointwise_loss_backward_input", "kl_div_forward", "kl_div_backward_input",
         "margin_ranking_loss_forward", "margin_ranking_loss_backward_input",
         "cosine_embedding_loss_forward", "cosine_embedding_loss_backward_input"]


def define(L, log_softmax_forward, log_softmax_backward_input):
    """This family's functions on kernel library L (see _library); cross
    entropy runs the activation family's log_softmax functions given."""
    C, check, ptr, empty, reduction_code = L.C, L.check, L.ptr, L.empty, L.reduction
    NONE = C.REDUCTION_NONE

    POINTWISE_LOSSES = {"mse": C.MSE_LOSS, "l1": C.L1_LOSS, "smooth_l1": C.SMOOTH_L1_LOSS,
                        "huber": C.HUBER_LOSS, "bce": C.BCE_LOSS,
                        "bce_with_logits": C.BCE_WITH_LOGITS_LOSS}

    def _loss_out(shape, like, r):
        """The loss: `shape` unreduced, else 0-d."""
        return empty(shape if r == NONE else (), like)

    def _pointwise(loss):
        try:
            return POINTWISE_LOSSES[loss]
        except KeyError:
            raise ValueError(f"unknown pointwise loss {loss!r}; one of "
                             f"{sorted(POINTWISE_LOSSES)}") from None

    def nll_loss_forward(input, target, weight=None, reduction="mean", ignore_index=-100):
        """(output, total_weight)"""
        r = reduction_code(reduction)
        out, tw = _loss_out(target.shape, input, r), empty((), input)
        check(C.nll_loss_forward(ptr(out), ptr(tw), ptr(input), ptr(target), ptr(weight), r,
                                 ignore_index))
        return out, tw

    def nll_loss_backward_input(grad_output, input_shape, target, weight, total_weight,
                                reduction="mean", ignore_index=-100):
        gi = empty(input_shape, grad_output)
        check(C.nll_loss_backward_input(ptr(gi), ptr(grad_output), ptr(target), ptr(weight),
                                        ptr(total_weight), reduction_code(reduction),
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

    def pointwise_loss_forward(loss, input, target, weight=None, pos_weight=None,
                               reduction="mean", a=1.0):
        """loss: mse, l1, smooth_l1 (a = beta), huber (a = delta), bce,
        bce_with_logits (pos_weight)."""
        code, r = _pointwise(loss), reduction_code(reduction)
        out = _loss_out(input.shape, input, r)
        check(C.pointwise_loss_forward(ptr(out), ptr(input), ptr(target), ptr(weight),
                                       ptr(pos_weight), code, r, float(a)))
        return out

    def pointwise_loss_backward_input(loss, grad_output, input, target, weight=None,
                                      pos_weight=None, reduction="mean", a=1.0):
        code, r = _pointwise(loss), reduction_code(reduction)
        gi = empty(input.shape, input)
        check(C.pointwise_loss_backward_input(ptr(gi), ptr(grad_output), ptr(input),
                                              ptr(target), ptr(weight), ptr(pos_weight), code,
                                              r, float(a)))
        return gi

    def kl_div_forward(input, target, reduction="mean", log_target=False):
        """reduction none / mean / sum ('batchmean' is sum / input.shape[0])."""
        r = reduction_code(reduction)
        out = _loss_out(input.shape, input, r)
        check(C.kl_div_forward(ptr(out), ptr(input), ptr(target), r, int(bool(log_target))))
        return out

    def kl_div_backward_input(grad_output, input, target, reduction="mean", log_target=False,
                              need_input=True, need_target=False):
        """(grad_input, grad_target); either is None when not asked for."""
        r = reduction_code(reduction)
        gi = empty(input.shape, input) if need_input else None
        gt = empty(input.shape, input) if need_target else None
        check(C.kl_div_backward_input(ptr(gi), ptr(gt), ptr(grad_output), ptr(input),
                                      ptr(target), r, int(bool(log_target))))
        return gi, gt

    def _pair_grads(input1, need_input1, need_input2):
        return (empty(input1.shape, input1) if need_input1 else None,
                empty(input1.shape, input1) if need_input2 else None)

    def margin_ranking_loss_forward(input1, input2, target, margin=0.0, reduction="mean"):
        r = reduction_code(reduction)
        out = _loss_out(input1.shape, input1, r)
        check(C.margin_ranking_loss_forward(ptr(out), ptr(input1), ptr(input2), ptr(target),
                                            float(margin), r))
        return out

    def margin_ranking_loss_backward_input(grad_output, input1, input2, target, margin=0.0,
                                           reduction="mean", need_input1=True,
                                           need_input2=True):
        """(grad_input1, grad_input2); either is None when not asked for."""
        r = reduction_code(reduction)
        g1, g2 = _pair_grads(input1, need_input1, need_input2)
        check(C.margin_ranking_loss_backward_input(ptr(g1), ptr(g2), ptr(grad_output),
                                                   ptr(input1), ptr(input2), ptr(target),
                                                   float(margin), r))
        return g1, g2

    def cosine_embedding_loss_forward(input1, input2, target, margin=0.0, reduction="mean"):
        """inputs (N, D) with target (N), or (D) with a 0-d target."""
        r = reduction_code(reduction)
        out = _loss_out(target.shape, input1, r)
        check(C.cosine_embedding_loss_forward(ptr(out), ptr(input1), ptr(input2), ptr(target),
                                              float(margin), r))
        return out

    def cosine_embedding_loss_backward_input(grad_output, input1, input2, target, margin=0.0,
                                             reduction="mean", need_input1=True,
                                             need_input2=True):
        """(grad_input1, grad_input2); either is None when not asked for."""
        r = reduction_code(reduction)
        g1, g2 = _pair_grads(input1, need_input1, need_input2)
        check(C.cosine_embedding_loss_backward_input(ptr(g1), ptr(g2), ptr(grad_output),
                                                     ptr(input1), ptr(input2), ptr(target),
                                                     float(margin), r))
        return g1, g2

    return {n: v for n, v in locals().items() if n in NAMES}
