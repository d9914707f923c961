"""Resampling and padding: upsample_nearest2d, upsample_bilinear2d,
reflection_pad, replication_pad (circular and constant padding are
composed in ember.nn.functional from index_pad)."""
import numpy as np

import ember
from ember._ops.samples import S, T

from . import Kernel
from ._common import on_device


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
    lam = on_device(lam, x, x.dtype).view(*shape)
    return x.index_select(dim, lo) * (1 - lam) + x.index_select(dim, hi) * lam


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
        x = x.index_select(dim, on_device(source(j, size).astype(np.int64), x))
    return x if x is not input else input.clone()


def reflect_index(j, size):
    period = 2 * (size - 1) if size > 1 else 1
    j = np.abs(j) % period
    return np.where(j >= size, period - j, j)


def replicate_index(j, size):
    return np.clip(j, 0, size - 1)


def circular_index(j, size):
    return j % size


class upsample_nearest2d(Kernel):
    """(input, output_size, scales): input (N, C, H, W); output_size a pair
    of positive ints (OH, OW); scales a pair whose entries are None or the
    user's positive float scale factor for that dimension.  Output row i
    reads input row min(floor(i * r), H - 1) with r = 1 / scale when a scale
    is given and r = H / OH otherwise (columns alike); r and i * r are
    computed in float32, as PyTorch computes them, so that the chosen rows
    agree exactly."""
    samples = [S(T(1, 2, 3, 4), (5, 7), (None, None)), S(T(1, 1, 4, 4), (6, 6), (1.5, 1.5))]
    differentiable = 1
    node = "UpsampleNearest2DBackward0"

    @staticmethod
    def composed(input, output_size, scales):
        x = input
        for i, (out, scale) in enumerate(zip(output_size, scales)):
            x = x.index_select(2 + i, nearest_indices(x.shape[2 + i], out, scale, x.device))
        return x.contiguous() if x is not input else x.clone()

    @classmethod
    def forward(cls, x, output_size, scales):
        if not cls.floats(x):
            return NotImplemented
        return cls.k.upsample_nearest2d_forward(x, output_size, scales), (tuple(x.shape), scales)

    @classmethod
    def backward(cls, ctx, g, inputs, needs):
        shape, scales = ctx
        return (cls.k.upsample_nearest2d_backward_input(g.contiguous(), shape, scales),)


class upsample_bilinear2d(Kernel):
    """(input, output_size, align_corners, scales): as upsample_nearest2d.
    The source coordinate of output row i is i (H - 1) / (OH - 1) with
    align_corners (0 when OH == 1), else max(0, (i + 0.5) r - 0.5); it is
    interpolated linearly between rows floor and floor + 1 (clamped to
    H - 1); columns alike."""
    samples = [S(T(1, 2, 3, 4), (5, 7), False, (None, None)),
               S(T(1, 2, 3, 4), (5, 7), True, (None, None))]
    differentiable = 1
    node = "UpsampleBilinear2DBackward0"

    @staticmethod
    def composed(input, output_size, align_corners, scales):
        x = input
        for i, (out, scale) in enumerate(zip(output_size, scales)):
            x = linear_along(x, 2 + i, out, align_corners, scale)
        return x

    @classmethod
    def forward(cls, x, output_size, align_corners, scales):
        if not cls.floats(x):
            return NotImplemented
        out = cls.k.upsample_bilinear2d_forward(x, output_size, align_corners, scales)
        return out, (tuple(x.shape), align_corners, scales)

    @classmethod
    def backward(cls, ctx, g, inputs, needs):
        shape, align_corners, scales = ctx
        return (cls.k.upsample_bilinear2d_backward_input(g.contiguous(), shape, align_corners,
                                                         scales),)


class _IndexPad(Kernel):
    """(input, padding): input (N, C, *S) with 1, 2 or 3 spatial dimensions;
    padding 2 * len(S) non-negative ints in F.pad order, last dimension
    first: (left, right[, top, bottom[, front, back]])."""
    differentiable = 1
    kind = None      # the kernels' prefix: reflection or replication

    @classmethod
    def forward(cls, x, padding):
        k = len(padding) // 2
        if not cls.floats(x) or k not in (1, 2, 3) or x.ndim != k + 2:
            return NotImplemented
        out = getattr(cls.k, f"{cls.kind}_pad{k}d_forward")(x, padding)
        return out, (tuple(x.shape), tuple(padding), k)

    @classmethod
    def backward(cls, ctx, g, inputs, needs):
        shape, padding, k = ctx
        bwd = getattr(cls.k, f"{cls.kind}_pad{k}d_backward_input")
        return (bwd(g.contiguous(), shape, padding),)


class reflection_pad(_IndexPad):
    """The input mirrored about its edges (the edge element is not
    repeated); each amount is smaller than the size of the dimension it pads."""
    samples = [S(T(1, 2, 5), (2, 1)), S(T(1, 2, 4, 5), (1, 2, 3, 0)),
               S(T(1, 1, 3, 3, 4), (1, 1, 2, 0, 1, 2))]
    kind = "reflection"
    requires = "reflection_pad1d_forward"

    @staticmethod
    def composed(input, padding):
        return index_pad(input, padding, reflect_index)


class replication_pad(_IndexPad):
    """The edge element repeated (amounts any non-negative ints, dimensions
    of size at least 1)."""
    samples = [S(T(1, 2, 5), (2, 3)), S(T(1, 2, 4, 5), (1, 2, 3, 0)),
               S(T(1, 1, 3, 3, 4), (1, 1, 2, 0, 1, 2))]
    kind = "replication"
    requires = "replication_pad1d_forward"

    @staticmethod
    def composed(input, padding):
        return index_pad(input, padding, replicate_index)
