"""Convolutions: conv2d, conv3d, conv_transpose2d (conv1d is conv2d over
(N, C, 1, L) views, composed in ember.nn.functional).

Inputs are batched (N, C, *S) and may be non-contiguous; the dtype is a
floating type; stride and dilation hold one positive int per spatial
dimension; groups is a positive int dividing C and O.  A padded input is
at least as large as the dilated kernel in every dimension.
"""
import math

import numpy as np

import ember
from ember._ops.samples import S, T
from ember.amp.policy import LOWER

from . import Kernel
from ._common import on_device, pad_spatial, windows


def conv_nd(x, weight, bias, stride, dilation, groups):
    """Convolution of an already padded (N, C, *S) input, one GEMM per group."""
    nd = x.dim() - 2
    n, c = x.shape[:2]
    o, cg = weight.shape[:2]
    ks = tuple(weight.shape[2:])
    kprod = math.prod(ks)
    p = windows(x, ks, stride, dilation)                  # N C O.. k..
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
    index = on_device(np.broadcast_to(target, insz + ks).reshape(-1), cols)
    out = cols.new_zeros(n, g * og, math.prod(full)).index_add(2, index, cols)
    out = out.reshape(n, g * og, *full)
    # padding crops both ends; output_padding adds zeros (or keeps rows) at the end
    out = pad_spatial(out, [(-p, op - p) for p, op in zip(padding, output_padding)], 0.0)
    if bias is not None:
        out = out + bias.reshape((1, -1) + (1,) * nd)
    return out.contiguous()


class _Conv(Kernel):
    """conv2d / conv3d: (input, weight, bias, stride, padding, dilation, groups)
    with padding (low, high) per spatial dimension, flattened; the kernels
    take symmetric padding only."""
    differentiable = 3
    node = "ConvolutionBackward0"
    autocast = (LOWER, LOWER)


class conv2d(_Conv):
    """input (N, C, H, W); weight (O, C // groups, kH, kW); bias (O,) or
    None; padding (top, bottom, left, right)."""
    samples = [S(T(2, 4, 6, 5), T(6, 2, 3, 2), T(6), (1, 2), (1, 1, 0, 0), (1, 1), 2),
               S(T(1, 3, 5, 5), T(4, 3, 3, 3), None, (2, 1), (0, 1, 1, 2), (1, 2), 1,
                 name="asymmetric")]

    @staticmethod
    def composed(input, weight, bias, stride, padding, dilation, groups):
        x = pad_spatial(input, [padding[0:2], padding[2:4]], 0.0)
        n, c = x.shape[:2]
        o, cg, kh, kw = weight.shape
        p = windows(x, (kh, kw), stride, dilation)           # N C OH OW kh kw
        oh, ow = p.shape[2], p.shape[3]
        if groups == 1:
            cols = p.permute(0, 2, 3, 1, 4, 5).reshape(n * oh * ow, c * kh * kw)
            out = cols.matmul(weight.reshape(o, c * kh * kw).t())     # (N OH OW, O)
            out = out.reshape(n, oh, ow, o)
        else:
            g = groups
            cols = p.reshape(n, g, cg, oh, ow, kh, kw).permute(1, 0, 3, 4, 2, 5, 6)
            cols = cols.reshape(g, n * oh * ow, cg * kh * kw)
            w = weight.reshape(g, o // g, cg * kh * kw).transpose(1, 2)
            out = ember.bmm(cols, w)                                  # (G, N OH OW, O/G)
            out = out.reshape(g, n, oh, ow, o // g).permute(1, 2, 3, 0, 4).reshape(n, oh, ow, o)
        if bias is not None:
            out = out + bias
        return out.permute(0, 3, 1, 2).contiguous()

    @classmethod
    def forward(cls, x, w, b, stride, pads, dilation, groups):
        top, bottom, left, right = pads
        if top != bottom or left != right or not cls.floats(x, w, b) or \
                x.dtype != w.dtype or (b is not None and b.dtype != x.dtype):
            return NotImplemented  # asymmetric ('same', even kernel) or mixed dtypes
        out = cls.k.conv2d_forward(x, w, b, stride, (top, left), dilation, groups)
        return out, (tuple(x.shape), tuple(w.shape), stride, (top, left), dilation, groups)

    @classmethod
    def backward(cls, ctx, g, inputs, needs):
        x_shape, w_shape, stride, pad, dilation, groups = ctx
        x, w, _ = inputs
        g = g.contiguous()
        gx = cls.k.conv2d_backward_input(g, x_shape, w, stride, pad, dilation, groups) \
            if needs[0] else None
        gw, gb = None, None
        if needs[1] or needs[2]:
            gw, gb = cls.k.conv2d_backward_params(g, x, w_shape, stride, pad, dilation, groups,
                                                  need_weight=needs[1], need_bias=needs[2])
        return gx, gw, gb


class conv3d(_Conv):
    """input (N, C, D, H, W); weight (O, C // groups, kD, kH, kW); bias (O,)
    or None; padding (front, back, top, bottom, left, right) of zeros.
    Returns (N, O, OD, OH, OW) with
    OD = (D + front + back - dD (kD - 1) - 1) // sD + 1 (H, W alike)."""
    samples = [S(T(1, 2, 4, 5, 4), T(3, 2, 2, 3, 2), T(3), (1, 2, 1), (1, 1, 0, 0, 1, 1),
                 (1, 1, 1), 1)]

    @staticmethod
    def composed(input, weight, bias, stride, padding, dilation, groups):
        pads = [(padding[2 * i], padding[2 * i + 1]) for i in range(3)]
        return conv_nd(pad_spatial(input, pads, 0.0), weight, bias, stride, dilation, groups)

    @classmethod
    def forward(cls, x, w, b, stride, pads, dilation, groups):
        front, back, top, bottom, left, right = pads
        if front != back or top != bottom or left != right or not cls.floats(x, w, b) or \
                x.dtype != w.dtype or (b is not None and b.dtype != x.dtype):
            return NotImplemented  # asymmetric ('same', even kernel) or mixed dtypes
        pad = (front, top, left)
        out = cls.k.conv3d_forward(x, w, b, stride, pad, dilation, groups)
        return out, (tuple(x.shape), tuple(w.shape), stride, pad, dilation, groups)

    @classmethod
    def backward(cls, ctx, g, inputs, needs):
        x_shape, w_shape, stride, pad, dilation, groups = ctx
        x, w, _ = inputs
        g = g.contiguous()
        gx = cls.k.conv3d_backward_input(g, x_shape, w, stride, pad, dilation, groups) \
            if needs[0] else None
        gw, gb = None, None
        if needs[1] or needs[2]:
            gw, gb = cls.k.conv3d_backward_params(g, x, w_shape, stride, pad, dilation, groups,
                                                  need_weight=needs[1], need_bias=needs[2])
        return gx, gw, gb


class conv_transpose2d(Kernel):
    """(input, weight, bias, stride, padding, output_padding, groups, dilation)

    The gradient of conv2d with respect to its input.  input (N, C, H, W);
    weight (C, O // groups, kH, kW); bias (O,) or None; stride, padding,
    output_padding and dilation pairs of ints (stride, dilation >= 1,
    padding >= 0, output_padding < max(stride, dilation) per dimension, any
    output_size argument already turned into output_padding).  Returns
    (N, O, OH, OW) with OH = (H - 1) sH - 2 pH + dH (kH - 1) + opH + 1 > 0."""
    samples = [S(T(1, 4, 3, 4), T(4, 3, 3, 2), T(6), (2, 1), (1, 0), (1, 0), 2, (1, 1)),
               S(T(2, 2, 3, 3), T(2, 3, 2, 2), None, (1, 2), (0, 1), (0, 1), 1, (2, 1))]
    differentiable = 3
    node = "ConvolutionBackward0"
    autocast = (LOWER, LOWER)

    @staticmethod
    def composed(input, weight, bias, stride, padding, output_padding, groups, dilation):
        return conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups,
                                 dilation)

    @classmethod
    def forward(cls, x, w, b, stride, padding, output_padding, groups, dilation):
        if not cls.floats(x, w, b) or x.dtype != w.dtype or (b is not None and b.dtype != x.dtype):
            return NotImplemented
        out = cls.k.conv_transpose2d_forward(x, w, b, stride, padding, output_padding, dilation,
                                             groups)
        return out, (tuple(x.shape), tuple(w.shape), stride, padding, output_padding,
                     dilation, groups)

    @classmethod
    def backward(cls, ctx, g, inputs, needs):
        x_shape, w_shape, stride, padding, output_padding, dilation, groups = ctx
        x, w, _ = inputs
        g = g.contiguous()
        gx = cls.k.conv_transpose2d_backward_input(g, x_shape, w, stride, padding, output_padding,
                                                   dilation, groups) if needs[0] else None
        gw, gb = None, None
        if needs[1] or needs[2]:
            gw, gb = cls.k.conv_transpose2d_backward_params(
                g, x, w_shape, stride, padding, output_padding, dilation, groups,
                need_weight=needs[1], need_bias=needs[2])
        return gx, gw, gb
