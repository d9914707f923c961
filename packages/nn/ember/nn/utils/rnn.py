"""Variable-length batches for the recurrent layers: PackedSequence and the
functions that pack, pad and unpack, as torch.nn.utils.rnn.

A packed batch stores the sequences time step by time step: the rows of
step t are the t-th elements of every sequence longer than t, longest
sequence first, and ``batch_sizes[t]`` says how many there are.  All the
moves between padded and packed layouts are one ``index_select`` each, so
autograd records them (to any order)."""
from collections import namedtuple

import numpy as np

import ember

__all__ = ["PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "pack_sequence", "unpack_sequence", "unpad_sequence", "invert_permutation"]


def invert_permutation(permutation):
    """The permutation q with q[p[i]] = i (None stays None)."""
    if permutation is None:
        return None
    p = np.asarray(permutation.tolist(), dtype=np.int64)
    inverse = np.empty_like(p)
    inverse[p] = np.arange(len(p), dtype=np.int64)
    return ember.from_numpy(inverse).to(device=permutation.device)


class PackedSequence(namedtuple("PackedSequence",
                                ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """data: (sum(lengths), *) rows in time-step order; batch_sizes: int64
    counts per step (on the CPU); sorted_indices: the batch order used for
    packing (None when the batch was already sorted by length);
    unsorted_indices: its inverse."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PyTorch's (data, batch_sizes) tuple form
            data, batch_sizes = data
        if not isinstance(batch_sizes, ember.Tensor):
            batch_sizes = ember.tensor(list(batch_sizes), dtype=ember.int64)
        if batch_sizes.dim() != 1:
            raise ValueError(f"batch_sizes should be a 1D tensor, but got {batch_sizes.dim()}D")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def _with_data(self, data):
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        device = data.device
        sorted_indices = (None if self.sorted_indices is None
                          else self.sorted_indices.to(device=device))
        unsorted_indices = (None if self.unsorted_indices is None
                            else self.unsorted_indices.to(device=device))
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, *args, **kwargs):
        return self.to("cuda" if not args else args[0], **kwargs)

    def double(self):
        return self._with_data(self.data.double())

    def float(self):
        return self._with_data(self.data.float())

    def half(self):
        return self._with_data(self.data.half())

    @property
    def is_cuda(self):
        return self.data.device.type == "cuda"

    def is_pinned(self):
        return False


def _lengths_list(lengths):
    if isinstance(lengths, ember.Tensor):
        if lengths.dim() != 1:
            raise RuntimeError(f"'lengths' argument should be a 1D tensor, but got a "
                               f"{lengths.dim()}D tensor")
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def _batch_sizes(lengths):
    """Steps' batch sizes of a batch sorted by decreasing length."""
    lengths = np.asarray(lengths, dtype=np.int64)
    steps = np.arange(int(lengths[0]) if len(lengths) else 0)
    return (lengths[None, :] > steps[:, None]).sum(1)


def _packed_rows(batch_sizes, batch):
    """For each packed row, its index in the time-major flattened (T*B)
    padded layout."""
    return np.concatenate([t * batch + np.arange(n) for t, n in enumerate(batch_sizes)]
                          or [np.zeros(0, np.int64)]).astype(np.int64)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch (T, B, *) — (B, T, *) when batch_first — whose
    sequence b has lengths[b] valid steps."""
    if not isinstance(input, ember.Tensor):
        raise TypeError(f"pack_padded_sequence(): input must be a Tensor, not "
                        f"{type(input).__name__}")
    if input.dim() < 2:
        raise ValueError(f"pack_padded_sequence(): expected input of at least 2 dimensions "
                         f"(time and batch), but got {input.dim()}D")
    lengths = _lengths_list(lengths)
    if batch_first:
        input = input.transpose(0, 1)
    steps, batch = input.shape[0], input.shape[1]
    if len(lengths) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lengths)} (batch_size={batch})")
    if enforce_sorted:
        if any(a < b for a, b in zip(lengths, lengths[1:])):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                "pack_sequence to sidestep this requirement if you do not need ONNX "
                "exportability.")
        sorted_indices = None
    else:
        order = np.argsort(-np.asarray(lengths, dtype=np.int64), kind="stable")
        sorted_indices = ember.from_numpy(order.astype(np.int64)).to(device=input.device)
        lengths = [lengths[i] for i in order]
        input = input.index_select(1, sorted_indices)
    if batch and lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if batch and lengths[0] > steps:
        raise RuntimeError(f"Expected all lengths to be at most the padded length {steps}, "
                           f"but got a length of {lengths[0]}")
    batch_sizes = _batch_sizes(lengths)
    rows = ember.from_numpy(_packed_rows(batch_sizes, batch)).to(device=input.device)
    data = input.reshape(steps * batch, *input.shape[2:]).index_select(0, rows)
    return PackedSequence(data, ember.from_numpy(batch_sizes.astype(np.int64)), sorted_indices)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The inverse of pack_padded_sequence: (padded, lengths), with the batch
    in its original order."""
    data = sequence.data
    batch_sizes = np.asarray(sequence.batch_sizes.tolist(), dtype=np.int64)
    steps = len(batch_sizes)
    batch = int(batch_sizes[0]) if steps else 0
    if total_length is not None:
        if total_length < steps:
            raise ValueError(f"Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {steps}")
        steps = total_length
    # every padded slot reads a packed row; padding slots read one extra row
    # holding padding_value, appended after the data
    source = np.full(steps * batch, data.shape[0], dtype=np.int64)
    source[_packed_rows(batch_sizes, batch)] = np.arange(data.shape[0])
    pad_row = ember.full((1, *data.shape[1:]), padding_value, dtype=data.dtype,
                         device=data.device)
    rows = ember.from_numpy(source).to(device=data.device)
    padded = ember.cat([data, pad_row]).index_select(0, rows)
    padded = padded.reshape(steps, batch, *data.shape[1:])
    lengths = (batch_sizes[None, :] > np.arange(batch)[:, None]).sum(1).astype(np.int64)
    lengths = ember.from_numpy(lengths)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = lengths.index_select(0, sequence.unsorted_indices.cpu())
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks sequences of shapes (L_i, *) into (max L, B, *) — (B, max L, *)
    when batch_first — filling the missing steps with padding_value."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got "
                         f"{padding_side}.")
    if isinstance(sequences, ember.Tensor):
        sequences = sequences.unbind(0)
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    for i, s in enumerate(sequences):
        if not isinstance(s, ember.Tensor):
            raise TypeError(f"pad_sequence(): expected a sequence of Tensors, but element {i} "
                            f"is {type(s).__name__}")
        if s.dim() == 0:
            raise RuntimeError(f"pad_sequence(): sequence {i} is 0-d; each sequence needs a "
                               f"time dimension")
        if s.shape[1:] != sequences[0].shape[1:]:
            raise RuntimeError(f"pad_sequence(): all sequences must have the same trailing "
                               f"dimensions, but sequence {i} has size {list(s.shape)} and "
                               f"sequence 0 has size {list(sequences[0].shape)}")
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        missing = longest - s.shape[0]
        if missing:
            fill = ember.full((missing, *s.shape[1:]), padding_value, dtype=s.dtype,
                              device=s.device)
            s = ember.cat([s, fill] if padding_side == "right" else [fill, s])
        padded.append(s)
    return ember.stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of sequences that pad_sequence stacked."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[b, :n] for b, n in enumerate(_lengths_list(lengths))]


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of sequences (L_i, *) directly."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences that pack_sequence packed, in their order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
