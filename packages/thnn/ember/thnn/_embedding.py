"""Bindings of embedding and embedding_bag: outputs allocated here, an
index out of range raised as an IndexError with the kernel's message."""

NAMES = ["EMBEDDING_BAG_MODES", "embedding_forward", "embedding_backward_params",
         "embedding_bag_forward", "embedding_bag_backward_params",
         "embedding_bag_backward_per_sample_weights"]

EMBEDDING_BAG_MODES = {"sum": 0, "mean": 1, "max": 2}


def _mode(mode):
    try:
        return EMBEDDING_BAG_MODES[mode]
    except KeyError:
        raise ValueError(f"embedding_bag: mode has to be one of sum, mean or max, "
                         f"got {mode!r}") from None


def _padding(padding_idx, num):
    """PyTorch's padding_idx (None, or a row; negative counts from the end)
    as the C kernels take it (-1: none)."""
    if padding_idx is None:
        return -1
    return padding_idx + num if padding_idx < 0 else padding_idx


def define(L):
    """This family's functions on kernel library L (see _library)."""
    C, check, ptr, empty = L.C, L.check, L.ptr, L.empty

    def embedding_forward(weight, indices):
        """Rows of the (num, dim) `weight` at the int64 `indices` (any shape):
        indices.shape + (dim,)."""
        shape = tuple(indices.shape) + (weight.shape[1] if weight.ndim == 2 else 0,)
        out = empty(shape, weight)
        check(C.embedding_forward(ptr(out), ptr(weight), ptr(indices)))
        return out

    def embedding_backward_params(grad_output, indices, num_weights, padding_idx=None):
        """Dense (num_weights, dim) gradient of the table; padding_idx as in
        PyTorch: None, or a row (negative counts from the end)."""
        padding_idx = _padding(padding_idx, num_weights)
        gw = empty((num_weights, grad_output.shape[-1] if grad_output.ndim else 0), grad_output)
        check(C.embedding_backward_params(ptr(gw), ptr(grad_output), ptr(indices), padding_idx))
        return gw

    def embedding_bag_forward(weight, indices, offsets, mode="mean", per_sample_weights=None,
                              include_last_offset=False, padding_idx=None):
        """(output, offset2bag, bag_size, max_indices): indices and offsets are
        1-D int64 (the caller flattens 2-D input into bags of equal length);
        padding_idx None or a row (negative counts from the end).  max_indices
        is None unless mode is 'max'."""
        m = _mode(mode)
        num = weight.shape[0] if weight.ndim == 2 else 0
        dim = weight.shape[1] if weight.ndim == 2 else 0
        padding_idx = _padding(padding_idx, num)
        n = indices.shape[0] if indices.ndim == 1 else 0
        nofs = offsets.shape[0] if offsets.ndim == 1 else 0
        bags = max(nofs - 1, 0) if include_last_offset else nofs
        out = empty((bags, dim), weight)
        o2b = empty((n,), weight, L.int64)
        bsz = empty((bags,), weight, L.int64)
        mi = empty((bags, dim), weight, L.int64) if m == 2 else None
        check(C.embedding_bag_forward(ptr(out), ptr(o2b), ptr(bsz), ptr(mi), ptr(weight),
                                      ptr(indices), ptr(offsets), ptr(per_sample_weights), m,
                                      int(bool(include_last_offset)), padding_idx))
        return out, o2b, bsz, mi

    def embedding_bag_backward_params(grad_output, indices, offset2bag, bag_size, max_indices,
                                      num_weights, mode="mean", per_sample_weights=None,
                                      padding_idx=None):
        """Dense grad of the (num_weights, dim) table."""
        padding_idx = _padding(padding_idx, num_weights)
        dim = grad_output.shape[-1] if grad_output.ndim else 0
        gw = empty((num_weights, dim), grad_output)
        check(C.embedding_bag_backward_params(
            ptr(gw), ptr(grad_output), ptr(indices), ptr(offset2bag), ptr(bag_size),
            ptr(max_indices), ptr(per_sample_weights), _mode(mode), padding_idx))
        return gw

    def embedding_bag_backward_per_sample_weights(grad_output, weight, indices, offset2bag,
                                                  mode="sum", padding_idx=None):
        """Grad of per_sample_weights (mode 'sum'): <grad_output[bag], weight[row]>
        per index."""
        if padding_idx is None:
            padding_idx = -1
        elif padding_idx < 0 and weight.ndim == 2:
            padding_idx += weight.shape[0]
        n = indices.shape[0] if indices.ndim == 1 else 0
        gp = empty((n,), weight)
        check(C.embedding_bag_backward_per_sample_weights(
            ptr(gp), ptr(grad_output), ptr(weight), ptr(indices), ptr(offset2bag), _mode(mode),
            padding_idx))
        return gp

    return {n: v for n, v in locals().items() if n in NAMES} | \
        {"EMBEDDING_BAG_MODES": EMBEDDING_BAG_MODES}
