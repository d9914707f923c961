"""Bindings of group_norm, upsampling, reflection/replication padding,
embedding_bag and the kl_div / margin_ranking / cosine_embedding losses.

Same conventions as the rest of ember.thnn: ember.th tensors in and out,
outputs allocated here, the C status raised with its message."""
import ember.th as _th

from ._lib import check as _check, ffi as _ffi, lib as _lib

__all__ = [
    "EMBEDDING_BAG_MODES",
    "group_norm_forward", "group_norm_backward_input", "group_norm_backward_params",
    "upsample_nearest2d_forward", "upsample_nearest2d_backward_input",
    "upsample_bilinear2d_forward", "upsample_bilinear2d_backward_input",
    "reflection_pad1d_forward", "reflection_pad1d_backward_input",
    "reflection_pad2d_forward", "reflection_pad2d_backward_input",
    "reflection_pad3d_forward", "reflection_pad3d_backward_input",
    "replication_pad1d_forward", "replication_pad1d_backward_input",
    "replication_pad2d_forward", "replication_pad2d_backward_input",
    "replication_pad3d_forward", "replication_pad3d_backward_input",
    "embedding_bag_forward", "embedding_bag_backward_params",
    "embedding_bag_backward_per_sample_weights",
    "kl_div_forward", "kl_div_backward_input",
    "margin_ranking_loss_forward", "margin_ranking_loss_backward_input",
    "cosine_embedding_loss_forward", "cosine_embedding_loss_backward_input",
]

NULL = _ffi.NULL
EMBEDDING_BAG_MODES = {"sum": 0, "mean": 1, "max": 2}
_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _p(t):
    return NULL if t is None else t._p


def _empty(shape, like, dtype=None):
    dtype = dtype or like.dtype
    return _th.empty(*shape, dtype=dtype) if shape else _th.empty((), dtype=dtype)


def _reduction(reduction):
    try:
        return _REDUCTIONS[reduction]
    except KeyError:
        raise ValueError(f"{reduction} is not a valid value for reduction") from None


# ---- group norm ------------------------------------------------------------
def _stats_shape(input, num_groups):
    return (input.shape[0] if input.ndim else 0, num_groups)


def group_norm_forward(input, num_groups, weight=None, bias=None, eps=1e-5):
    """(output, save_mean, save_rstd); the statistics are (N, num_groups)."""
    out = _empty(tuple(input.shape), input)
    sm = _empty(_stats_shape(input, max(num_groups, 0)), input)
    sr = _empty(_stats_shape(input, max(num_groups, 0)), input)
    _check(_lib.thnn_group_norm_forward(out._p, sm._p, sr._p, input._p, _p(weight),
                                        _p(bias), num_groups, eps))
    return out, sm, sr


def group_norm_backward_input(grad_output, input, num_groups, weight, save_mean, save_rstd):
    gi = _empty(tuple(input.shape), input)
    _check(_lib.thnn_group_norm_backward_input(gi._p, grad_output._p, input._p, _p(weight),
                                               _p(save_mean), _p(save_rstd), num_groups))
    return gi


def group_norm_backward_params(grad_output, input, num_groups, save_mean, save_rstd,
                               need_weight=True, need_bias=True):
    """(grad_weight, grad_bias); either is None when not asked for."""
    c = (input.shape[1],) if input.ndim >= 2 else (0,)
    gw = _empty(c, input) if need_weight else None
    gb = _empty(c, input) if need_bias else None
    _check(_lib.thnn_group_norm_backward_params(_p(gw), _p(gb), grad_output._p, input._p,
                                                _p(save_mean), _p(save_rstd), num_groups))
    return gw, gb


# ---- upsampling ------------------------------------------------------------
def _scales(scales):
    """(scale_h, scale_w) as C wants them: <= 0 for "not given"."""
    if scales is None:
        return 0.0, 0.0
    if isinstance(scales, (int, float)):
        scales = (scales, scales)
    if len(scales) != 2:
        raise ValueError(f"scales must be None, a number or a pair, got {scales!r}")
    return tuple(0.0 if s is None else float(s) for s in scales)


def _size2(output_size):
    if isinstance(output_size, int):
        return (output_size, output_size)
    output_size = tuple(output_size)
    if len(output_size) != 2 or not all(isinstance(v, int) for v in output_size):
        raise ValueError(f"output_size must be an int or a pair of ints, got {output_size!r}")
    return output_size


def _upsampled_shape(input, output_size):
    oh, ow = _size2(output_size)
    if oh < 0 or ow < 0:
        raise RuntimeError(f"upsample: output size must be non-negative, got ({oh}, {ow})")
    lead = tuple(input.shape[:-2]) if input.ndim >= 2 else ()
    return lead + (oh, ow)


def upsample_nearest2d_forward(input, output_size, scales=None):
    """scales: the user's (scale_h, scale_w) (output / input) or None."""
    out = _empty(_upsampled_shape(input, output_size), input)
    _check(_lib.thnn_upsample_nearest2d_forward(out._p, input._p, *_scales(scales)))
    return out


def upsample_nearest2d_backward_input(grad_output, input_shape, scales=None):
    gi = _empty(tuple(input_shape), grad_output)
    _check(_lib.thnn_upsample_nearest2d_backward_input(gi._p, grad_output._p,
                                                       *_scales(scales)))
    return gi


def upsample_bilinear2d_forward(input, output_size, align_corners=False, scales=None):
    out = _empty(_upsampled_shape(input, output_size), input)
    _check(_lib.thnn_upsample_bilinear2d_forward(out._p, input._p, int(bool(align_corners)),
                                                 *_scales(scales)))
    return out


def upsample_bilinear2d_backward_input(grad_output, input_shape, align_corners=False,
                                       scales=None):
    gi = _empty(tuple(input_shape), grad_output)
    _check(_lib.thnn_upsample_bilinear2d_backward_input(
        gi._p, grad_output._p, int(bool(align_corners)), *_scales(scales)))
    return gi


# ---- reflection / replication padding -----------------------------------------
def _padding(padding, k, name):
    """padding as PyTorch's F.pad takes it: (left, right[, top, bottom[, front, back]])."""
    if isinstance(padding, int):
        padding = (padding,) * (2 * k)
    padding = tuple(padding)
    if len(padding) != 2 * k or not all(isinstance(v, int) for v in padding):
        raise ValueError(f"{name}: padding must be an int or {2 * k} ints, got {padding!r}")
    return padding


def _padded_shape(input, padding, k):
    shape = list(input.shape)
    if input.ndim in (k + 1, k + 2):
        for j in range(k):
            shape[-1 - j] = max(shape[-1 - j] + padding[2 * j] + padding[2 * j + 1], 0)
    return tuple(shape)


def _make_pad(cname, k):
    fwd = getattr(_lib, f"thnn_{cname}_forward")
    bwd = getattr(_lib, f"thnn_{cname}_backward_input")

    def forward(input, padding):
        pad = _padding(padding, k, cname)
        out = _empty(_padded_shape(input, pad, k), input)
        _check(fwd(out._p, input._p, pad))
        return out

    def backward_input(grad_output, input_shape, padding):
        gi = _empty(tuple(input_shape), grad_output)
        _check(bwd(gi._p, grad_output._p, _padding(padding, k, cname)))
        return gi

    forward.__name__, backward_input.__name__ = f"{cname}_forward", f"{cname}_backward_input"
    forward.__doc__ = (f"{cname}: padding = {2 * k} ints, last dim first "
                       "(left, right, top, bottom, front, back); negative crops.")
    backward_input.__doc__ = f"grad of {cname} with respect to its input."
    return forward, backward_input


reflection_pad1d_forward, reflection_pad1d_backward_input = _make_pad("reflection_pad1d", 1)
reflection_pad2d_forward, reflection_pad2d_backward_input = _make_pad("reflection_pad2d", 2)
reflection_pad3d_forward, reflection_pad3d_backward_input = _make_pad("reflection_pad3d", 3)
replication_pad1d_forward, replication_pad1d_backward_input = _make_pad("replication_pad1d", 1)
replication_pad2d_forward, replication_pad2d_backward_input = _make_pad("replication_pad2d", 2)
replication_pad3d_forward, replication_pad3d_backward_input = _make_pad("replication_pad3d", 3)


# ---- embedding_bag --------------------------------------------------------------
def _mode(mode):
    try:
        return EMBEDDING_BAG_MODES[mode]
    except KeyError:
        raise ValueError(f"embedding_bag: mode has to be one of sum, mean or max, "
                         f"got {mode!r}") from None


def embedding_bag_forward(weight, indices, offsets, mode="mean", per_sample_weights=None,
                          include_last_offset=False, padding_idx=None):
    """(output, offset2bag, bag_size, max_indices): indices and offsets are
    1-D int64 (the caller flattens 2-D input into bags of equal length);
    padding_idx None or a row (negative counts from the end).  max_indices
    is None unless mode is 'max'."""
    m = _mode(mode)
    num = weight.shape[0] if weight.ndim == 2 else 0
    dim = weight.shape[1] if weight.ndim == 2 else 0
    if padding_idx is None:
        padding_idx = -1
    elif padding_idx < 0:
        padding_idx += num
    n = indices.shape[0] if indices.ndim == 1 else 0
    nofs = offsets.shape[0] if offsets.ndim == 1 else 0
    bags = max(nofs - 1, 0) if include_last_offset else nofs
    out = _empty((bags, dim), weight)
    o2b = _empty((n,), weight, _th.int64)
    bsz = _empty((bags,), weight, _th.int64)
    mi = _empty((bags, dim), weight, _th.int64) if m == 2 else None
    _check(_lib.thnn_embedding_bag_forward(out._p, o2b._p, bsz._p, _p(mi), weight._p,
                                           indices._p, offsets._p, _p(per_sample_weights),
                                           m, int(bool(include_last_offset)), padding_idx))
    return out, o2b, bsz, mi


def embedding_bag_backward_params(grad_output, indices, offset2bag, bag_size, max_indices,
                                  num_weights, mode="mean", per_sample_weights=None,
                                  padding_idx=None):
    """Dense grad of the (num_weights, dim) table."""
    if padding_idx is None:
        padding_idx = -1
    elif padding_idx < 0:
        padding_idx += num_weights
    dim = grad_output.shape[-1] if grad_output.ndim else 0
    gw = _empty((num_weights, dim), grad_output)
    _check(_lib.thnn_embedding_bag_backward_params(
        gw._p, grad_output._p, indices._p, offset2bag._p, bag_size._p, _p(max_indices),
        _p(per_sample_weights), _mode(mode), padding_idx))
    return gw


def embedding_bag_backward_per_sample_weights(grad_output, weight, indices, offset2bag,
                                              mode="sum", padding_idx=None):
    """Grad of per_sample_weights (mode 'sum'): <grad_output[bag], weight[row]> per index."""
    if padding_idx is None:
        padding_idx = -1
    elif padding_idx < 0 and weight.ndim == 2:
        padding_idx += weight.shape[0]
    n = indices.shape[0] if indices.ndim == 1 else 0
    gp = _empty((n,), weight)
    _check(_lib.thnn_embedding_bag_backward_per_sample_weights(
        gp._p, grad_output._p, weight._p, indices._p, offset2bag._p, _mode(mode), padding_idx))
    return gp


# ---- losses -------------------------------------------------------------------------
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
