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
    r = H / OH otherwise (columns alike); r and i * r are computed in float32,
    as PyTorch computes them, so that the chosen rows agree exactly.

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
import itertools
import math

import numpy as np

import ember

__all__ = ["KERNELS"]


# ---- shared helpers --------------------------------------------------------------
def _pad_spatial(x, pads, value):
    """x padded with `value`; pads holds (low, high) per spatial dimension
    (dimension 2 first); a negative amount crops."""
    for i, (lo, hi) in enumerate(pads):
        dim = 2 + i
        if lo < 0:
            x = x.narrow(dim, -lo, x.shape[dim] + lo)
            lo = 0
        if hi < 0:
            x = x.narrow(dim, 0, x.shape[dim] + hi)
            hi = 0
        if not (lo or hi):
            continue
        parts = []
        for amount in (lo, hi):
            shape = list(x.shape)
            shape[dim] = amount
            parts.append(x.new_full(shape, value) if amount else None)
        seq = ([parts[0]] if lo else []) + [x] + ([parts[1]] if hi else [])
        x = ember.cat(seq, dim)
    return x


def _windows(x, kernel_size, stride, dilation):
    """(N, C, O1.., k1..) view of the sliding windows of an already padded x."""
    nd = len(kernel_size)
    for i in range(nd):
        x = x.unfold(2 + i, dilation[i] * (kernel_size[i] - 1) + 1, stride[i])
    if any(d > 1 for d in dilation):
        x = x[(Ellipsis,) + tuple(slice(None, None, d) for d in dilation)]
    return x


def _pool_size(size, k, s, p, d, ceil_mode):
    """PyTorch's pooling output length, and the high padding it reads."""
    eff = d * (k - 1) + 1
    num = size + 2 * p - eff
    out = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out, max(0, (out - 1) * s + eff - size - p)


def pool_output_size(size, k, s, p, d, ceil_mode):
    return _pool_size(size, k, s, p, d, ceil_mode)[0]


def _unravel(flat, sizes):
    """Per-dimension offsets of a row-major flat index within `sizes`."""
    out = []
    for size in reversed(sizes):
        out.append(flat % size)
        flat = flat // size
    return out[::-1]


# ---- convolution ------------------------------------------------------------------
def _conv_nd(x, weight, bias, stride, dilation, groups):
    """Convolution of an already padded (N, C, *S) input, one GEMM per group."""
    nd = x.dim() - 2
    n, c = x.shape[:2]
    o, cg = weight.shape[:2]
    ks = tuple(weight.shape[2:])
    kprod = math.prod(ks)
    p = _windows(x, ks, stride, dilation)                 # N C O.. k..
    osz = tuple(p.shape[2:2 + nd])
    rows = n * math.prod(osz)
    if groups == 1:
        perm = (0,) + tuple(range(2, 2 + nd)) + (1,) + tuple(range(2 + nd, 2 + 2 * nd))
        cols = p.permute(*perm).reshape(rows, c * kprod)
        out = cols.matmul(weight.reshape(o, c * kprod).t())
    else:
        g = groups
        p = p.reshape(n, g, cg, *osz, *ks)
        perm = (1, 0) + tuple(range(3, 3 + nd)) + (2,) + tuple(range(3 + nd, 3 + 2 * nd))
        cols = p.permute(*perm).reshape(g, rows, cg * kprod)
        w = weight.reshape(g, o // g, cg * kprod).transpose(1, 2)
        out = ember.bmm(cols, w)                           # G, rows, O/G
        out = out.permute(1, 0, 2).reshape(rows, o)
    if bias is not None:
        out = out + bias
    out = out.reshape(n, *osz, o)
    return out.permute(0, nd + 1, *range(1, nd + 1)).contiguous()


def conv3d(input, weight, bias, stride, padding, dilation, groups):
    pads = [(padding[2 * i], padding[2 * i + 1]) for i in range(3)]
    return _conv_nd(_pad_spatial(input, pads, 0.0), weight, bias, stride, dilation, groups)


def conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation):
    return conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups,
                             dilation)


def conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups, dilation):
    """Transposed convolution with any number of spatial dimensions: one GEMM
    gives every input element's contribution to its k₁·k₂·… output
    positions, one index_add sums them into place (col2im)."""
    nd = len(stride)
    n, c = input.shape[:2]
    og = weight.shape[1]
    ks = tuple(weight.shape[2:])
    kprod = math.prod(ks)
    insz = tuple(input.shape[2:])
    rows = n * math.prod(insz)
    g = groups
    x = input.movedim(1, -1)                                  # N, *S, C
    if g == 1:
        cols = x.reshape(rows, c).matmul(weight.reshape(c, og * kprod))
    else:
        xg = x.reshape(rows, g, c // g).transpose(0, 1)       # G, rows, C/G
        cols = ember.bmm(xg, weight.reshape(g, c // g, og * kprod)).transpose(0, 1)
    cols = cols.reshape(n, math.prod(insz), g * og, kprod).permute(0, 2, 1, 3)
    cols = cols.reshape(n, g * og, math.prod(insz) * kprod)    # N, O, (S, K)
    # where each (input position, kernel offset) lands in the uncropped output
    full = [(size - 1) * st + d * (k - 1) + 1
            for size, st, d, k in zip(insz, stride, dilation, ks)]
    target = np.zeros((1,) * (2 * nd), dtype=np.int64)
    for i in range(nd):
        shape_s = [1] * (2 * nd)
        shape_s[i] = insz[i]
        shape_k = [1] * (2 * nd)
        shape_k[nd + i] = ks[i]
        pos = (np.arange(insz[i]) * stride[i]).reshape(shape_s) + \
            (np.arange(ks[i]) * dilation[i]).reshape(shape_k)
        target = target * full[i] + pos
    index = _on_device(np.broadcast_to(target, insz + ks).reshape(-1), cols)
    out = cols.new_zeros(n, g * og, math.prod(full)).index_add(2, index, cols)
    out = out.reshape(n, g * og, *full)
    # padding crops both ends; output_padding adds zeros (or keeps rows) at the end
    out = _pad_spatial(out, [(-p, op - p) for p, op in zip(padding, output_padding)], 0.0)
    if bias is not None:
        out = out + bias.reshape((1, -1) + (1,) * nd)
    return out.contiguous()


# ---- pooling -----------------------------------------------------------------------
def _max_pool_nd(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    n, c = input.shape[:2]
    sizes = tuple(input.shape[2:])
    geo = [_pool_size(*a, ceil_mode) for a in zip(sizes, kernel_size, stride, padding,
                                                  dilation)]
    osz = tuple(o for o, _ in geo)
    x = _pad_spatial(input, [(p, r) for p, (_, r) in zip(padding, geo)], float("-inf"))
    win = _windows(x, kernel_size, stride, dilation)
    win = win[(slice(None), slice(None)) + tuple(slice(0, o) for o in osz)]
    flat = win.reshape(n, c, *osz, math.prod(kernel_size))
    k = flat.detach().argmax(-1, keepdim=True)
    out = flat.gather(-1, k).squeeze(-1)
    if not return_indices:
        return out
    offsets = _unravel(k.squeeze(-1), kernel_size)
    index = None
    for i, (size, o) in enumerate(zip(sizes, osz)):
        shape = [1] * len(sizes)
        shape[i] = o
        start = (ember.arange(o, device=out.device) * stride[i] - padding[i]).view(*shape)
        pos = start + offsets[i] * dilation[i]
        index = pos if index is None else index * size + pos
    return out, index


def max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    return _max_pool_nd(input, kernel_size, stride, padding, dilation, ceil_mode,
                        return_indices)


def _avg_divisors(size, k, s, p, out, count_include_pad):
    """How many elements each output position averages along one dimension."""
    counts = []
    for i in range(out):
        start = i * s - p
        end = min(start + k, size + p)
        if count_include_pad:
            counts.append(end - start)
        else:
            counts.append(min(end, size) - max(start, 0))
    return counts


def avg_pool3d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
               divisor_override):
    sizes = tuple(input.shape[2:])
    ones = (1,) * len(sizes)
    geo = [_pool_size(*a, 1, ceil_mode) for a in zip(sizes, kernel_size, stride, padding)]
    osz = tuple(o for o, _ in geo)
    x = _pad_spatial(input, [(p, r) for p, (_, r) in zip(padding, geo)], 0.0)
    win = _windows(x, kernel_size, stride, ones)
    win = win[(slice(None), slice(None)) + tuple(slice(0, o) for o in osz)]
    total = win.sum(tuple(range(-len(sizes), 0)))
    if divisor_override:
        return total / divisor_override
    count = np.ones((), dtype=np.float64)
    for i, a in enumerate(zip(sizes, kernel_size, stride, padding, osz)):
        per = np.asarray(_avg_divisors(*a, count_include_pad), dtype=np.float64)
        count = np.multiply.outer(count, per)
    return total / _on_device(count, input, input.dtype)


def adaptive_max_pool2d(input, output_size, return_indices):
    return adaptive_max_nd(input, output_size, return_indices)


def check_output_size(x, shape):
    """Raises the allocation's error (size overflow, not enough memory) for
    an output of `shape` before a loop over its cells starts."""
    x.new_empty(shape, device="cpu")


def adaptive_mean_dim(x, dim, o):
    """Mean over PyTorch's adaptive cells [floor(j·n/o), ceil((j+1)·n/o))
    along `dim`, all cells at once: each cell's elements are gathered into
    a row of the longest cell's length, padding masked out."""
    n = x.shape[dim]
    if o and n % o == 0:  # equal cells side by side: a reshape and a mean
        return x.reshape(*x.shape[:dim], o, n // o, *x.shape[dim + 1:]).mean(dim + 1)
    j = np.arange(o, dtype=np.int64)
    start = (j * n) // o
    length = -(-((j + 1) * n) // o) - start
    k = int(length.max()) if o else 0
    pos = start[:, None] + np.arange(k, dtype=np.int64)[None, :]
    valid = pos < (start + length)[:, None]
    pos = np.where(valid, pos, start[:, None])
    rest = [1] * (x.dim() - dim - 1)
    g = x.index_select(dim, ember.tensor(pos.reshape(-1), device=x.device))
    g = g.reshape(*x.shape[:dim], o, k, *x.shape[dim + 1:])
    pad = ember.tensor(~valid, device=x.device).reshape(o, k, *rest)
    total = g.masked_fill(pad, 0).sum(dim + 1)
    return total / ember.tensor(length, dtype=x.dtype, device=x.device).reshape(o, *rest)


def adaptive_max_nd(input, output_size, return_indices):
    """Adaptive max pooling over any number of spatial dimensions."""
    n, c = input.shape[:2]
    check_output_size(input, (n, c) + tuple(output_size))
    sizes = tuple(input.shape[2:])
    if all(size % o == 0 for size, o in zip(sizes, output_size)):
        k = tuple(size // o for size, o in zip(sizes, output_size))
        return _max_pool_nd(input, k, k, (0,) * len(k), (1,) * len(k), False, return_indices)
    outs, idxs = [], []
    for pos in itertools.product(*[range(o) for o in output_size]):
        starts = [(i * size) // o for i, size, o in zip(pos, sizes, output_size)]
        ends = [-(-((i + 1) * size) // o) for i, size, o in zip(pos, sizes, output_size)]
        cell = input[(slice(None), slice(None)) + tuple(slice(a, b) for a, b in
                                                        zip(starts, ends))]
        cell = cell.reshape(n, c, -1)
        k = cell.detach().argmax(-1, keepdim=True)
        outs.append(cell.gather(-1, k).squeeze(-1))
        if return_indices:
            offsets = _unravel(k.squeeze(-1), [b - a for a, b in zip(starts, ends)])
            index = None
            for size, start, off in zip(sizes, starts, offsets):
                index = start + off if index is None else index * size + start + off
            idxs.append(index)
    out = ember.stack(outs, -1).reshape(n, c, *output_size)
    if not return_indices:
        return out
    return out, ember.stack(idxs, -1).reshape(n, c, *output_size)


# ---- resampling --------------------------------------------------------------------
def nearest_indices(size, out, scale, device=None):
    """Source index of each output position for nearest upsampling (the
    ratio in float32, as PyTorch computes it), on `device`."""
    r = np.float32(1.0 / scale) if scale else np.float32(size) / np.float32(out)
    src = np.floor(np.arange(out, dtype=np.float32) * r).astype(np.int64)
    return ember.tensor(np.minimum(src, size - 1), device=device)


def linear_weights(size, out, align_corners, scale, device=None):
    """(low index, high index, weight of high) per output position for linear
    interpolation along one dimension; the indices on `device`, the weights
    a NumPy array."""
    dst = np.arange(out, dtype=np.float64)
    if align_corners:
        src = dst * ((size - 1) / (out - 1)) if out > 1 else np.zeros(out)
    else:
        r = 1.0 / scale if scale else size / out
        src = np.maximum((dst + 0.5) * r - 0.5, 0.0)
    lo = np.minimum(np.floor(src).astype(np.int64), size - 1)
    hi = np.minimum(lo + 1, size - 1)
    return ember.tensor(lo, device=device), ember.tensor(hi, device=device), src - lo


def linear_along(x, dim, out, align_corners, scale):
    lo, hi, lam = linear_weights(x.shape[dim], out, align_corners, scale, x.device)
    shape = [1] * x.dim()
    shape[dim] = out
    lam = _on_device(lam, x, x.dtype).view(*shape)
    return x.index_select(dim, lo) * (1 - lam) + x.index_select(dim, hi) * lam


def upsample_nearest2d(input, output_size, scales):
    x = input
    for i, (out, scale) in enumerate(zip(output_size, scales)):
        x = x.index_select(2 + i, nearest_indices(x.shape[2 + i], out, scale, x.device))
    return x.contiguous() if x is not input else x.clone()


def upsample_bilinear2d(input, output_size, align_corners, scales):
    x = input
    for i, (out, scale) in enumerate(zip(output_size, scales)):
        x = linear_along(x, 2 + i, out, align_corners, scale)
    return x


# ---- padding -----------------------------------------------------------------------
def index_pad(input, padding, source):
    """input padded by gathering, along each padded dimension, the elements
    source(j, size) for j in [-low, size + high)."""
    x = input
    for i in range(len(padding) // 2):
        dim = x.dim() - 1 - i
        lo, hi = padding[2 * i], padding[2 * i + 1]
        if not (lo or hi):
            continue
        size = x.shape[dim]
        j = np.arange(-lo, size + hi)
        x = x.index_select(dim, _on_device(source(j, size).astype(np.int64), x))
    return x if x is not input else input.clone()


def reflect_index(j, size):
    period = 2 * (size - 1) if size > 1 else 1
    j = np.abs(j) % period
    return np.where(j >= size, period - j, j)


def replicate_index(j, size):
    return np.clip(j, 0, size - 1)


def circular_index(j, size):
    return j % size


def reflection_pad(input, padding):
    return index_pad(input, padding, reflect_index)


def replication_pad(input, padding):
    return index_pad(input, padding, replicate_index)


# ---- embedding bag -----------------------------------------------------------------
def embedding_bag(weight, indices, offsets, mode, per_sample_weights, padding_idx):
    # gather each bag's rows into a (B, longest bag, D) block; the slots a
    # bag does not fill read a filler row (0 for sums, -inf for the max)
    num, dim = weight.shape
    # the bag layout is data-dependent: read the (small) index arrays on the host
    idx = _host(indices)
    off = _host(offsets)
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
    block = rows.index_select(0, _on_device(slot.reshape(-1), rows)).view(bags, -1, dim)
    if mode == "max":
        best = block.detach().argmax(1, keepdim=True)
        out = block.gather(1, best).squeeze(1)
        empty = _on_device((keep_counts(bag_of, keep, bags) == 0).reshape(bags, 1), out)
        return ember.where(empty, ember.zeros_like(out), out)
    out = block.sum(1)
    if mode == "mean":
        count = np.maximum(keep_counts(bag_of, keep, bags), 1).astype(np.float64)
        out = out / _on_device(count.reshape(bags, 1), out, out.dtype)
    return out


def _on_device(array, like, dtype=None):
    """A helper array computed on the host from shapes, as a tensor on the
    device of `like` (composed forms run on any backend)."""
    t = ember.from_numpy(np.ascontiguousarray(array))
    return t.to(device=like.device, dtype=dtype) if dtype is not None else t.to(like.device)


def _host(t):
    """A tensor's values as a NumPy array, whatever its device."""
    return t.detach().cpu().numpy()


def keep_counts(bag_of, keep, bags):
    """How many entries of each bag are kept (padding_idx left out)."""
    return np.bincount(bag_of[keep], minlength=bags)


KERNELS = {
    "conv3d": conv3d,
    "conv_transpose2d": conv_transpose2d,
    "max_pool3d": max_pool3d,
    "avg_pool3d": avg_pool3d,
    "adaptive_max_pool2d": adaptive_max_pool2d,
    "upsample_nearest2d": upsample_nearest2d,
    "upsample_bilinear2d": upsample_bilinear2d,
    "reflection_pad": reflection_pad,
    "replication_pad": replication_pad,
    "embedding_bag": embedding_bag,
}
