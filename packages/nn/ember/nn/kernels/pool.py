"""Pooling: max_pool2d, avg_pool2d, max_pool3d, avg_pool3d,
adaptive_max_pool2d (adaptive average pooling is composed in
ember.nn.functional from adaptive_mean_dim).

Inputs are batched (N, C, *S) and may be non-contiguous, of a floating
dtype; kernel_size, stride, dilation hold one positive int per spatial
dimension, padding one symmetric amount (at most half the kernel size).
Output sizes are window_output_size's (PyTorch's pooling: a ceil-mode
window that would start in the right padding is dropped).  Padding never
wins a maximum; among equal maxima the first in the window is chosen and
gets the gradient.  Indices are int64, the flat offset of the chosen
element within one (n, c) input plane (d * H * W + h * W + w), as
PyTorch's.
"""
import itertools
import math

import numpy as np

import ember
from ember._ops.samples import S, T
from ember.amp.policy import FP32, NATIVE

from . import Kernel
from ._common import check_output_size, on_device, pad_spatial, unravel, windows, \
    window_output_size


def max_pool_nd(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    n, c = input.shape[:2]
    sizes = tuple(input.shape[2:])
    geo = [window_output_size(*a, ceil_mode) for a in zip(sizes, kernel_size, stride, padding,
                                                          dilation)]
    osz = tuple(o for o, _ in geo)
    x = pad_spatial(input, [(p, r) for p, (_, r) in zip(padding, geo)], float("-inf"))
    win = windows(x, kernel_size, stride, dilation)
    win = win[(slice(None), slice(None)) + tuple(slice(0, o) for o in osz)]
    flat = win.reshape(n, c, *osz, math.prod(kernel_size))
    k = flat.detach().argmax(-1, keepdim=True)
    out = flat.gather(-1, k).squeeze(-1)
    if not return_indices:
        return out
    offsets = unravel(k.squeeze(-1), kernel_size)
    index = None
    for i, (size, o) in enumerate(zip(sizes, osz)):
        shape = [1] * len(sizes)
        shape[i] = o
        start = (ember.arange(o, device=out.device) * stride[i] - padding[i]).view(*shape)
        pos = start + offsets[i] * dilation[i]
        index = pos if index is None else index * size + pos
    return out, index


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
        return max_pool_nd(input, k, k, (0,) * len(k), (1,) * len(k), False, return_indices)
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
            offsets = unravel(k.squeeze(-1), [b - a for a, b in zip(starts, ends)])
            index = None
            for size, start, off in zip(sizes, starts, offsets):
                index = start + off if index is None else index * size + start + off
            idxs.append(index)
    out = ember.stack(outs, -1).reshape(n, c, *output_size)
    if not return_indices:
        return out
    return out, ember.stack(idxs, -1).reshape(n, c, *output_size)


class max_pool2d(Kernel):
    """(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)
    -> output, or (output, indices) when return_indices; input (N, C, H, W)."""
    samples = [S(T(2, 3, 6, 5), (2, 2), (2, 1), (1, 0), (1, 1), False, False),
               S(T(1, 2, 7, 7), (3, 2), (2, 2), (1, 1), (2, 1), True, True)]
    differentiable = 1
    node = "MaxPool2DWithIndicesBackward0"

    @staticmethod
    def composed(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
        n, c, h, w = input.shape
        (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel_size, stride, padding, dilation
        oh, rh = window_output_size(h, kh, sh, ph, dh, ceil_mode)
        ow, rw = window_output_size(w, kw, sw, pw, dw, ceil_mode)
        x = pad_spatial(input, [(ph, rh), (pw, rw)], float("-inf"))
        p = windows(x, kernel_size, stride, dilation)[:, :, :oh, :ow]
        flat = p.reshape(n, c, oh, ow, kh * kw)
        idx = flat.detach().argmax(-1, keepdim=True)
        out = flat.gather(-1, idx).squeeze(-1)
        if not return_indices:
            return out
        k = idx.squeeze(-1)
        ki, kj = k // kw, k % kw
        rows = ember.arange(oh, device=input.device).view(oh, 1) * sh - ph + ki * dh
        cols = ember.arange(ow, device=input.device).view(1, ow) * sw - pw + kj * dw
        return out, rows * w + cols

    @classmethod
    def forward(cls, x, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
        if not cls.floats(x):
            return NotImplemented
        out, ind = cls.k.max_pool2d_forward(x, kernel_size, stride, padding, dilation, ceil_mode)
        return ((out, ind) if return_indices else out), (tuple(x.shape), ind)

    @classmethod
    def backward(cls, ctx, g, inputs, needs):
        x_shape, ind = ctx
        return (cls.k.max_pool2d_backward_input(g.contiguous(), x_shape, ind),)


class avg_pool2d(Kernel):
    """(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
    divisor_override); input (N, C, H, W).  The divisor is divisor_override
    when given, else the window's size clipped to the padded input
    (count_include_pad) or to the input."""
    samples = [S(T(2, 3, 6, 5), (2, 3), (2, 2), (1, 1), True, False, None),
               S(T(1, 2, 5, 5), (3, 3), (2, 2), (1, 0), False, True, None),
               S(T(1, 1, 4, 4), (2, 2), (2, 2), (0, 0), False, True, 3)]
    differentiable = 1
    node = "AvgPool2DBackward0"
    autocast = (NATIVE, NATIVE)

    @staticmethod
    def composed(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                 divisor_override):
        n, c, h, w = input.shape
        (kh, kw), (sh, sw), (ph, pw) = kernel_size, stride, padding
        oh, rh = window_output_size(h, kh, sh, ph, 1, ceil_mode)
        ow, rw = window_output_size(w, kw, sw, pw, 1, ceil_mode)
        x = pad_spatial(input, [(ph, rh), (pw, rw)], 0.0)
        p = windows(x, kernel_size, stride, (1, 1))[:, :, :oh, :ow]
        total = p.sum((-2, -1))
        if divisor_override:
            return total / divisor_override
        # how many elements each window averages: the padded image counts 1
        # where count_include_pad (not the ceil-mode overhang), else the input only
        ones = ember.ones(1, 1, h, w, dtype=input.dtype, device=input.device)
        if count_include_pad:
            ones = pad_spatial(ones, [(ph, ph), (pw, pw)], 1.0)
            ones = pad_spatial(ones, [(0, max(0, rh - ph)), (0, max(0, rw - pw))], 0.0)
        else:
            ones = pad_spatial(ones, [(ph, rh), (pw, rw)], 0.0)
        count = windows(ones, kernel_size, stride, (1, 1))[:, :, :oh, :ow].sum((-2, -1))
        return total / count

    @classmethod
    def forward(cls, x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override):
        if divisor_override or not cls.floats(x):
            return NotImplemented
        out = cls.k.avg_pool2d_forward(x, kernel_size, stride, padding, ceil_mode,
                                       count_include_pad)
        return out, (tuple(x.shape), kernel_size, stride, padding, ceil_mode,
                     count_include_pad)

    @classmethod
    def backward(cls, ctx, g, inputs, needs):
        x_shape, k, s, p, ceil_mode, cip = ctx
        return (cls.k.avg_pool2d_backward_input(g.contiguous(), x_shape, k, s, p, ceil_mode,
                                                cip),)


class max_pool3d(Kernel):
    """(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices);
    input (N, C, D, H, W)."""
    samples = [S(T(1, 2, 4, 5, 4), (2, 2, 2), (2, 1, 2), (1, 0, 1), (1, 1, 1), False, True)]
    differentiable = 1
    node = "MaxPool3DWithIndicesBackward0"
    autocast = (NATIVE, FP32)

    @staticmethod
    def composed(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
        return max_pool_nd(input, kernel_size, stride, padding, dilation, ceil_mode,
                           return_indices)

    @classmethod
    def forward(cls, x, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
        if not cls.floats(x):
            return NotImplemented
        out, ind = cls.k.max_pool3d_forward(x, kernel_size, stride, padding, dilation, ceil_mode)
        return ((out, ind) if return_indices else out), (tuple(x.shape), ind)

    @classmethod
    def backward(cls, ctx, g, inputs, needs):
        x_shape, ind = ctx
        return (cls.k.max_pool3d_backward_input(g.contiguous(), x_shape, ind),)


class avg_pool3d(Kernel):
    """(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
    divisor_override); input (N, C, D, H, W); divisor_override None or a
    non-zero int; the divisor as avg_pool2d's."""
    samples = [S(T(1, 2, 4, 5, 4), (2, 2, 2), (2, 1, 2), (1, 0, 1), True, False, None),
               S(T(1, 1, 4, 4, 4), (2, 2, 2), (2, 2, 2), (0, 0, 0), False, True, 3)]
    differentiable = 1
    node = "AvgPool3DBackward0"
    autocast = (NATIVE, FP32)

    @staticmethod
    def composed(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                 divisor_override):
        sizes = tuple(input.shape[2:])
        ones = (1,) * len(sizes)
        geo = [window_output_size(*a, 1, ceil_mode)
               for a in zip(sizes, kernel_size, stride, padding)]
        osz = tuple(o for o, _ in geo)
        x = pad_spatial(input, [(p, r) for p, (_, r) in zip(padding, geo)], 0.0)
        win = windows(x, kernel_size, stride, ones)
        win = win[(slice(None), slice(None)) + tuple(slice(0, o) for o in osz)]
        total = win.sum(tuple(range(-len(sizes), 0)))
        if divisor_override:
            return total / divisor_override
        count = np.ones((), dtype=np.float64)
        for i, a in enumerate(zip(sizes, kernel_size, stride, padding, osz)):
            per = np.asarray(_avg_divisors(*a, count_include_pad), dtype=np.float64)
            count = np.multiply.outer(count, per)
        return total / on_device(count, input, input.dtype)

    @classmethod
    def forward(cls, x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override):
        if not cls.floats(x):
            return NotImplemented
        out = cls.k.avg_pool3d_forward(x, kernel_size, stride, padding, ceil_mode,
                                       count_include_pad, divisor_override)
        return out, (tuple(x.shape), kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)

    @classmethod
    def backward(cls, ctx, g, inputs, needs):
        x_shape, k, s, p, ceil_mode, cip, divisor = ctx
        return (cls.k.avg_pool3d_backward_input(g.contiguous(), x_shape, k, s, p, ceil_mode, cip,
                                                divisor),)


class adaptive_max_pool2d(Kernel):
    """(input, output_size, return_indices); input (N, C, H, W) with H, W > 0,
    output_size a pair of positive ints.  Cell (i, j) covers rows
    [floor(i H / OH), ceil((i + 1) H / OH)) and the columns alike; its
    maximum is the first maximal element (row-major), which gets the whole
    gradient."""
    samples = [S(T(2, 3, 7, 5), (3, 2), True), S(T(1, 2, 4, 6), (2, 3), False)]
    differentiable = 1
    node = "AdaptiveMaxPool2DBackward0"

    @staticmethod
    def composed(input, output_size, return_indices):
        return adaptive_max_nd(input, output_size, return_indices)

    @classmethod
    def forward(cls, x, output_size, return_indices):
        if not cls.floats(x):
            return NotImplemented
        out, ind = cls.k.adaptive_max_pool2d_forward(x, output_size)
        return ((out, ind) if return_indices else out), (tuple(x.shape), ind)

    @classmethod
    def backward(cls, ctx, g, inputs, needs):
        x_shape, ind = ctx
        return (cls.k.adaptive_max_pool2d_backward_input(g.contiguous(), x_shape, ind),)
