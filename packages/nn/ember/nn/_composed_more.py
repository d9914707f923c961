"""Composed implementations of the second set of NN kernels.

Each function here is the reference implementation of one kernel name in
ember.nn._kernels: it composes ember operations, so autograd, gradcheck and
double backward work through it.  A kernel package (ember-thnn, later
ember-thcunn) may provide the same names with the same signatures; the
contract below is what ember.nn.functional passes and what it expects back.

Common conventions (functional.py has already validated and normalised):
- Inputs are batched: 4-D (N, C, H, W) for the 2-d kernels, 5-D
  (N, C, D, H, W) for the 3-d ones; unbatched inputs were unsqueezed by the
  caller.  Inputs may be non-contiguous; the dtype is a floating type.
- Spatial arguments are tuples of Python ints with one entry per spatial
  dimension, in the order of the dimensions (D, H, W).
- Padding that may differ per side is a flat tuple of explicit per-side
  amounts; the order is stated per kernel below.
- Every kernel returns a new ember Tensor (never a view of its input),
  or a tuple (output, indices) where stated; indices are int64 and hold the
  flat offset of the chosen element within one (n, c) input plane
  (d * H * W + h * W + w), as PyTorch's indices do.

The kernels and their signatures:

conv3d(input, weight, bias, stride, padding, dilation, groups) -> Tensor
    input (N, C, D, H, W); weight (O, C // groups, kD, kH, kW); bias (O,) or
    None; stride and dilation triples of positive ints; padding a 6-tuple
    of non-negative zero-padding amounts (front, back, top, bottom, left,
    right); groups a positive int dividing C and O.  The padded input is at
    least as large as the dilated kernel in every dimension.  Returns
    (N, O, OD, OH, OW) with OD = (D + front + back - dD (kD - 1) - 1) // sD + 1
    (same for H, W).

conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups,
                 dilation) -> Tensor
    The gradient of conv2d with respect to its input.  input (N, C, H, W);
    weight (C, O // groups, kH, kW); bias (O,) or None; stride, padding,
    output_padding and dilation pairs of ints (stride, dilation >= 1,
    padding >= 0, output_padding < max(stride, dilation) per dimension,
    any output_size argument already turned into output_padding).  Returns
    (N, O, OH, OW) with OH = (H - 1) sH - 2 pH + dH (kH - 1) + opH + 1 > 0.

max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode,
           return_indices) -> Tensor or (Tensor, Tensor)
    input (N, C, D, H, W); kernel_size, stride, dilation triples of positive
    ints; padding a triple of symmetric amounts (at most half the kernel
    size); ceil_mode, return_indices bools.  Output sizes as PyTorch's
    pooling (a ceil-mode window that would start in the right padding is
    dropped).  Padding never wins a maximum; among equal maxima the first in
    the window (d, then h, then w) is chosen and gets the gradient.
    Returns the output, or (output, indices) when return_indices.

avg_pool3d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
           divisor_override) -> Tensor
    input (N, C, D, H, W); kernel_size, stride, padding triples (padding
    symmetric, at most half the kernel size); divisor_override None or a
    non-zero int.  The divisor is divisor_override when given, else the
    window's size clipped to the padded input (count_include_pad) or to the
    input (not count_include_pad).

adaptive_max_pool2d(input, output_size, return_indices) -> Tensor or
                    (Tensor, Tensor)
    input (N, C, H, W) with H, W > 0; output_size a pair of positive ints.
    Cell (i, j) covers rows [floor(i H / OH), ceil((i + 1) H / OH)) and the
    columns alike; its maximum is the first maximal element (row-major),
    which gets the whole gradient.  Returns the output, or (output, indices)
    when return_indices.

upsample_nearest2d(input, output_size, scales) -> Tensor
    input (N, C, H, W); output_size a pair of positive ints (OH, OW);
    scales a pair whose entries are None or the user's positive float
    scale factor for that dimension.  Output row i reads input row
    min(floor(i * r), H - 1) with r = 1 / scale when a scale is given and
    r = H / OH otherwise (columns alike).

upsample_bilinear2d(input, output_size, align_corners, scales) -> Tensor
    input (N, C, H, W); output_size (OH, OW) positive; align_corners bool;
    scales as for upsample_nearest2d.  The source coordinate of output row i
    is i (H - 1) / (OH - 1) with align_corners (0 when OH == 1), else
    max(0, (i + 0.5) r - 0.5) with r as for nearest; it is interpolated
    linearly between rows floor and floor + 1 (clamped to H - 1); columns
    alike.

reflection_pad(input, padding) -> Tensor
    input (N, C, *S) with 1, 2 or 3 spatial dimensions S; padding a tuple of
    2 * len(S) non-negative ints in F.pad order, last dimension first:
    (left, right[, top, bottom[, front, back]]); each amount is smaller
    than the size of the dimension it pads.  Returns the input mirrored
    about its edges (the edge element is not repeated).

replication_pad(input, padding) -> Tensor
    As reflection_pad (amounts any non-negative ints, dimensions of size
    at least 1); the padding repeats the edge element.

embedding_bag(weight, indices, offsets, mode, per_sample_weights,
              padding_idx) -> Tensor
    weight (num_embeddings, D); indices 1-D int64, every entry in
    [0, num_embeddings); offsets 1-D int64 of length B + 1, non-decreasing,
    offsets[0] == 0 and offsets[B] == len(indices), so bag b holds
    indices[offsets[b]:offsets[b + 1]] (include_last_offset and 2-D input
    already folded in); mode 'sum', 'mean' or 'max'; per_sample_weights
    None or 1-D of len(indices) and weight's dtype (only with 'sum'), each
    row scaled by its weight; padding_idx None or an int in
    [0, num_embeddings) whose entries are left out of their bag (and of
    the mean's count).  Returns (B, D); an empty bag gives a zero row.
    'max' takes the per-column maximum and sends the gradient to the first
    row reaching it.
"""
import ember

__all__ = ["KERNELS"]


KERNELS = {}
