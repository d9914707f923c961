"""Bindings of embedding and embedding_bag."""
import ember.th as _th

from ._lib import check as _check, lib as _lib
from ._args import _empty, _p

__all__ = ["embedding_forward", "embedding_backward_params", "EMBEDDING_BAG_MODES",
           "embedding_bag_forward", "embedding_bag_backward_params",
           "embedding_bag_backward_per_sample_weights"]


def embedding_forward(weight, indices):
    shape = tuple(indices.shape) + (weight.shape[1] if weight.ndim == 2 else 0,)
    out = _empty(shape, weight)
    _check(_lib.thnn_embedding_forward(out._p, weight._p, indices._p))
    return out


def embedding_backward_params(grad_output, indices, num_weights, padding_idx=None):
    """padding_idx as in PyTorch: None, or a row (negative counts from the end)."""
    if padding_idx is None:
        padding_idx = -1
    elif padding_idx < 0:
        padding_idx += num_weights
    gw = _empty((num_weights, grad_output.shape[-1]), grad_output)
    _check(_lib.thnn_embedding_backward_params(gw._p, grad_output._p, indices._p, padding_idx))
    return gw


EMBEDDING_BAG_MODES = {"sum": 0, "mean": 1, "max": 2}


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
