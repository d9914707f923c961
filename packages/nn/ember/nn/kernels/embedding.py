"""Embeddings: embedding_bag (embedding itself is an ember index_select
with its own backward in ember.nn.functional)."""
import numpy as np

import ember
from ember._ops.samples import Index, S, T
from ember.amp.policy import NATIVE

from . import Kernel
from ._common import host, on_device


def keep_counts(bag_of, keep, bags):
    """How many entries of each bag are kept (padding_idx left out)."""
    return np.bincount(bag_of[keep], minlength=bags)


class embedding_bag(Kernel):
    """(weight, indices, offsets, mode, per_sample_weights, padding_idx)

    weight (num_embeddings, D); indices 1-D int64, every entry in
    [0, num_embeddings); offsets 1-D int64 of length B + 1, non-decreasing,
    offsets[0] == 0 and offsets[B] == len(indices), so bag b holds
    indices[offsets[b]:offsets[b + 1]] (include_last_offset and 2-D input
    already folded in); mode 'sum', 'mean' or 'max'; per_sample_weights
    None or 1-D of len(indices) and weight's dtype (only with 'sum'), each
    row scaled by its weight; padding_idx None or an int in
    [0, num_embeddings) whose entries are left out of their bag (and of the
    mean's count).  Returns (B, D); an empty bag gives a zero row.  'max'
    takes the per-column maximum and sends the gradient to the first row
    reaching it."""
    samples = [S(T(6, 3), Index([0, 2, 4, 2, 5, 1]), Index([0, 2, 2, 6]), "sum", None, None),
               S(T(6, 3), Index([0, 2, 4, 2, 5, 1]), Index([0, 3, 6]), "mean", None, 2),
               S(T(6, 3), Index([0, 2, 4, 3, 5, 1]), Index([0, 3, 6]), "max", None, None),
               S(T(6, 3), Index([0, 2, 4, 2, 5, 1]), Index([0, 4, 6]), "sum", T(6), None)]
    differentiable = (0, 4)  # weight and per_sample_weights
    node = "EmbeddingBagBackward0"
    autocast = (NATIVE, NATIVE)

    @staticmethod
    def composed(weight, indices, offsets, mode, per_sample_weights, padding_idx):
        # gather each bag's rows into a (B, longest bag, D) block; the slots a
        # bag does not fill read a filler row (0 for sums, -inf for the max)
        num, dim = weight.shape
        # the bag layout is data-dependent: read the (small) index arrays on the host
        idx = host(indices)
        off = host(offsets)
        bags = len(off) - 1
        lengths = np.diff(off)
        keep = np.ones(len(idx), dtype=bool) if padding_idx is None else idx != padding_idx
        longest = int(lengths.max()) if bags and len(idx) else 0
        slot = np.full((bags, max(longest, 1)), len(idx), dtype=np.int64)
        bag_of = np.repeat(np.arange(bags), lengths)
        pos = np.arange(len(idx)) - off[:-1][bag_of]
        slot[bag_of[keep], pos[keep]] = np.arange(len(idx))[keep]
        rows = weight.index_select(0, indices)
        if per_sample_weights is not None:
            rows = rows * per_sample_weights.unsqueeze(1)
        filler = float("-inf") if mode == "max" else 0.0
        rows = ember.cat([rows, weight.new_full((1, dim), filler)], 0)
        block = rows.index_select(0, on_device(slot.reshape(-1), rows)).view(bags, -1, dim)
        if mode == "max":
            best = block.detach().argmax(1, keepdim=True)
            out = block.gather(1, best).squeeze(1)
            empty = on_device((keep_counts(bag_of, keep, bags) == 0).reshape(bags, 1), out)
            return ember.where(empty, ember.zeros_like(out), out)
        out = block.sum(1)
        if mode == "mean":
            count = np.maximum(keep_counts(bag_of, keep, bags), 1).astype(np.float64)
            out = out / on_device(count.reshape(bags, 1), out, out.dtype)
        return out

    @classmethod
    def forward(cls, weight, indices, offsets, mode, per_sample_weights, padding_idx):
        if not cls.floats(weight, per_sample_weights) or (
                per_sample_weights is not None and per_sample_weights.dtype != weight.dtype):
            return NotImplemented
        out, offset2bag, bag_size, max_indices = cls.k.embedding_bag_forward(
            weight, indices, offsets, mode, per_sample_weights, True, padding_idx)
        return out, (offset2bag, bag_size, max_indices, indices, mode, padding_idx)

    @classmethod
    def backward(cls, ctx, g, inputs, needs):
        offset2bag, bag_size, max_indices, indices, mode, padding_idx = ctx
        weight, per_sample_weights = inputs
        g = g.contiguous()
        gw = cls.k.embedding_bag_backward_params(
            g, indices, offset2bag, bag_size, max_indices, weight.shape[0], mode,
            per_sample_weights, padding_idx) if needs[0] else None
        gp = cls.k.embedding_bag_backward_per_sample_weights(
            g, weight, indices, offset2bag, mode, padding_idx) if needs[1] else None
        return gw, gp
