"""ember.nn.functional: embedding, one_hot, and embedding_bag (sums, means
or maxima of bags of embedding rows, without materialising the rows of each
bag separately)."""
import numpy as np

import ember

from . import _kernels
from ._functional_common import _check_tensor, _type_name, follows_autocast

__all__ = ["embedding_bag"]
__all__ += ["embedding", "one_hot"]


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of `weight` picked by the integer `input`; the row at
    padding_idx receives no gradient."""
    if input.dtype not in (ember.int64, ember.int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"ember.{_type_name(input)} instead (while checking arguments "
                           "for embedding)")
    if scale_grad_by_freq:
        raise NotImplementedError("embedding: scale_grad_by_freq is not supported yet")
    n = weight.shape[0]
    if padding_idx is not None:
        # PyTorch asserts (its wording); a padding_idx outside the rows
        # would otherwise silently pad nothing
        if padding_idx >= n or padding_idx < -n:
            raise AssertionError("Padding_idx must be within num_embeddings")
        if padding_idx < 0:
            padding_idx += n
    flat = input.reshape(-1).long()
    if flat.numel() and (int(flat.max()) >= n or int(flat.min()) < 0):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        with ember.no_grad():
            rows = weight.index_select(0, flat)
            norms = rows.norm(norm_type, dim=1, keepdim=True)
            scale = ember.where(norms > max_norm, max_norm / (norms + 1e-7),
                                ember.ones_like(norms))
            weight[flat] = rows * scale
    if sparse:  # the weight's gradient is a sparse COO tensor
        from ._sparse_embedding import embedding_sparse
        return embedding_sparse(weight, flat, padding_idx).reshape(*input.shape, weight.shape[1])
    out = weight.index_select(0, flat)
    if padding_idx is not None:
        mask = (flat == padding_idx).unsqueeze(1)
        out = ember.where(mask, out.detach(), out)
    return out.reshape(*input.shape, weight.shape[1])


def one_hot(tensor, num_classes=-1):
    if tensor.dtype is not ember.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        num_classes = int(tensor.max()) + 1 if tensor.numel() else 0
    if tensor.numel() and (int(tensor.min()) < 0 or int(tensor.max()) >= num_classes):
        raise RuntimeError("Class values must be smaller than num_classes." if tensor.numel()
                           and int(tensor.min()) >= 0 else "Class values must be non-negative.")
    out = ember.zeros(*tensor.shape, num_classes, dtype=ember.int64, device=tensor.device)
    return out.scatter(-1, tensor.unsqueeze(-1), 1)


@follows_autocast
def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Bags of rows of `weight`: a 2-D input is B bags of equal length; a 1-D
    input is split at `offsets` (bag b starts at offsets[b]).  Each bag is
    reduced by `mode` ('sum', 'mean', 'max'); an empty bag gives zeros."""
    _check_tensor(input)
    _check_tensor(weight, "weight")
    if input.dtype not in (ember.int64, ember.int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"ember.{_type_name(input)} instead (while checking arguments "
                           "for embedding_bag)")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding_bag: scale_grad_by_freq and sparse are not "
                                  "supported yet")
    if per_sample_weights is not None:
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape})"
                             f" is not None, then it must have the same shape as the input "
                             f"({input.shape})")
        if mode != "sum":
            raise NotImplementedError(
                "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
                "on GitHub.")
        if per_sample_weights.dtype != weight.dtype:
            raise RuntimeError(f"Expected per_sample_weights ({per_sample_weights.dtype}) to "
                               f"have the same dtype as weight ({weight.dtype})")
    num = weight.shape[0]
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, {-num} "
                               f"through {num - 1}, but got {padding_idx}")
        padding_idx = padding_idx % num if num else padding_idx

    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found "
                             f"offsets of type {type(offsets)}")
        bags, length = input.shape
        bounds = np.arange(bags + 1, dtype=np.int64) * length
        indices = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        if offsets.dtype not in (ember.int64, ember.int32):
            raise RuntimeError("Expected tensor for argument #2 'offsets' to have one of the "
                               "following scalar types: Long, Int; but got "
                               f"ember.{_type_name(offsets)} instead (while checking "
                               "arguments for embedding_bag)")
        indices = input
        # the checks and the bag layout need the offsets on the host (a transfer on CUDA)
        bounds = offsets.detach().cpu().numpy().astype(np.int64)
        if bounds.size and bounds[0] != 0:
            raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the "
                               "mini-batch has to start from position 0. However, got "
                               f"{bounds[0]}")
        if bounds.size and bounds[-1] > len(indices):
            raise RuntimeError(f"offsets[-1] can not be greater than input's length "
                               f"{len(indices)} but got offsets[-1] of {bounds[-1]}")
        if np.any(np.diff(bounds) < 0):
            raise RuntimeError(f"offsets must be non-decreasing, but got {bounds.tolist()}")
        if include_last_offset:
            if bounds.size == 0:
                raise RuntimeError("include_last_offset: number of offset should be at "
                                   "least 1")
            if bounds[-1] < len(indices):  # entries after the last offset are in no bag
                indices = indices.narrow(0, 0, int(bounds[-1]))
                if per_sample_weights is not None:
                    per_sample_weights = per_sample_weights.narrow(0, 0, int(bounds[-1]))
        else:
            bounds = np.append(bounds, len(indices))
        if bounds.size == 1:  # no bags at all
            return weight.narrow(0, 0, 0).clone()
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")

    indices = indices.long()
    # checked on the indices' device; only a bad input is read back for the message
    if indices.numel() and bool(((indices < 0) | (indices >= num)).any()):
        idx = indices.cpu().numpy()
        bad = np.flatnonzero((idx < 0) | (idx >= num))
        if bad.size:
            raise RuntimeError(f"Index {bad[0]} of input takes value {idx[bad[0]]} which is not "
                               f"in the valid range [0, {num})")
    if max_norm is not None:
        _renorm_rows(weight, indices, max_norm, norm_type)
    bounds = ember.tensor(bounds, device=indices.device)
    return _kernels.kernel("embedding_bag")(weight, indices, bounds, mode,
                                            per_sample_weights, padding_idx)


def _renorm_rows(weight, indices, max_norm, norm_type):
    """Scales, in place, the referenced rows whose norm exceeds max_norm."""
    with ember.no_grad():
        rows = ember.unique(indices.reshape(-1)).to(weight.device)   # on indices' device
        picked = weight.index_select(0, rows)
        norms = picked.norm(norm_type, dim=1, keepdim=True)
        scale = ember.where(norms > max_norm, max_norm / (norms + 1e-7),
                            ember.ones_like(norms))
        weight[rows] = picked * scale


# ---- samples: argument lists every function here is tested with
# (tests/test_functional_samples.py: gradcheck and gradgradcheck in float64,
# contiguous and non-contiguous, CUDA against the CPU, and PyTorch's
# torch.nn.functional on the same values) -----------------------------------
from ember._ops.samples import Index, S, T  # noqa: E402

SAMPLES = {
    "embedding": [S(Index([[0, 2], [4, 1]]), T(5, 3)),
                  S(Index([[0, 2], [4, 1]]), T(5, 3), padding_idx=1, name="padding_idx")],
    "embedding_bag": [S(Index([1, 2, 4, 4, 3]), T(5, 3), Index([0, 2])),
                      S(Index([1, 2, 4, 4, 3]), T(5, 3), Index([0, 2]), mode="sum",
                        per_sample_weights=T(5)),
                      S(Index([1, 2, 4, 4, 3]), T(5, 3), Index([0, 2]), mode="max")],
    "one_hot": [S(Index([0, 2, 1]), 4)],
}
