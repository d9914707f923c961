"""Bindings of the normalisations: batch_norm, layer_norm, group_norm."""

NAMES = ["layer_norm_forward", "layer_norm_backward_input", "layer_norm_backward_params",
         "batch_norm_forward", "batch_norm_backward_input", "batch_norm_backward_params",
         "group_norm_forward", "group_norm_backward_input", "group_norm_backward_params"]


def _nshape(normalized_shape):
    return (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)


def _stats_shape(input, num_groups):
    return (input.shape[0] if input.ndim else 0, max(num_groups, 0))


def define(L):
    """This family's functions on kernel library L (see _library)."""
    C, check, ptr, empty = L.C, L.check, L.ptr, L.empty

    def _params_out(shape, input, need_weight, need_bias):
        return (empty(shape, input) if need_weight else None,
                empty(shape, input) if need_bias else None)

    def layer_norm_forward(input, normalized_shape, weight=None, bias=None, eps=1e-5):
        """(output, save_mean, save_invstd)"""
        shape = _nshape(normalized_shape)
        nd = len(shape)
        if nd > input.ndim or tuple(input.shape[input.ndim - nd:]) != shape:
            raise RuntimeError(
                f"Given normalized_shape={list(shape)}, expected input with shape "
                f"[*, {', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
        m = 1
        for v in input.shape[:input.ndim - nd]:
            m *= v
        out, sm, si = empty(input.shape, input), empty((m,), input), empty((m,), input)
        check(C.layer_norm_forward(ptr(out), ptr(sm), ptr(si), ptr(input), ptr(weight),
                                   ptr(bias), nd, eps))
        return out, sm, si

    def layer_norm_backward_input(grad_output, input, normalized_shape, weight, save_mean,
                                  save_invstd):
        gi = empty(input.shape, input)
        check(C.layer_norm_backward_input(ptr(gi), ptr(grad_output), ptr(input), ptr(weight),
                                          ptr(save_mean), ptr(save_invstd),
                                          len(_nshape(normalized_shape))))
        return gi

    def layer_norm_backward_params(grad_output, input, normalized_shape, save_mean,
                                   save_invstd, need_weight=True, need_bias=True):
        """(grad_weight, grad_bias); either is None when not asked for."""
        shape = _nshape(normalized_shape)
        gw, gb = _params_out(shape, input, need_weight, need_bias)
        check(C.layer_norm_backward_params(ptr(gw), ptr(gb), ptr(grad_output), ptr(input),
                                           ptr(save_mean), ptr(save_invstd), len(shape)))
        return gw, gb

    def batch_norm_forward(input, weight=None, bias=None, running_mean=None, running_var=None,
                           training=True, momentum=0.1, eps=1e-5):
        """(output, save_mean, save_invstd); running stats updated in place."""
        c = input.shape[1] if input.ndim >= 2 else 0
        out, m, s = empty(input.shape, input), empty((c,), input), empty((c,), input)
        check(C.batch_norm_forward(ptr(out), ptr(m), ptr(s), ptr(running_mean),
                                   ptr(running_var), ptr(input), ptr(weight), ptr(bias),
                                   int(training), momentum, eps))
        return out, m, s

    def batch_norm_backward_input(grad_output, input, weight, save_mean, save_invstd,
                                  training=True):
        gi = empty(input.shape, input)
        check(C.batch_norm_backward_input(ptr(gi), ptr(grad_output), ptr(input), ptr(weight),
                                          ptr(save_mean), ptr(save_invstd), int(training)))
        return gi

    def batch_norm_backward_params(grad_output, input, save_mean, save_invstd,
                                   need_weight=True, need_bias=True):
        """(grad_weight, grad_bias); either is None when not asked for."""
        gw, gb = _params_out((input.shape[1],), input, need_weight, need_bias)
        check(C.batch_norm_backward_params(ptr(gw), ptr(gb), ptr(grad_output), ptr(input),
                                           ptr(save_mean), ptr(save_invstd)))
        return gw, gb

    def group_norm_forward(input, num_groups, weight=None, bias=None, eps=1e-5):
        """(output, save_mean, save_rstd); the statistics are (N, num_groups)."""
        out = empty(input.shape, input)
        sm = empty(_stats_shape(input, num_groups), input)
        sr = empty(_stats_shape(input, num_groups), input)
        check(C.group_norm_forward(ptr(out), ptr(sm), ptr(sr), ptr(input), ptr(weight),
                                   ptr(bias), num_groups, eps))
        return out, sm, sr

    def group_norm_backward_input(grad_output, input, num_groups, weight, save_mean,
                                  save_rstd):
        gi = empty(input.shape, input)
        check(C.group_norm_backward_input(ptr(gi), ptr(grad_output), ptr(input), ptr(weight),
                                          ptr(save_mean), ptr(save_rstd), num_groups))
        return gi

    def group_norm_backward_params(grad_output, input, num_groups, save_mean, save_rstd,
                                   need_weight=True, need_bias=True):
        """(grad_weight, grad_bias); either is None when not asked for."""
        c = (input.shape[1],) if input.ndim >= 2 else (0,)
        gw, gb = _params_out(c, input, need_weight, need_bias)
        check(C.group_norm_backward_params(ptr(gw), ptr(gb), ptr(grad_output), ptr(input),
                                           ptr(save_mean), ptr(save_rstd), num_groups))
        return gw, gb

    return {n: v for n, v in locals().items() if n in NAMES}
