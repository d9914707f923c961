"""ember.nn.functional: interpolate (nearest, nearest-exact, linear,
bilinear, bicubic, trilinear, area) and pad (constant, reflect, replicate,
circular)."""
import math
import numbers

import numpy as np

import ember

from . import _kernels
from ._functional_common import _check_tensor, _type_name
from .kernels._common import check_output_size
from .kernels.resample import circular_index, index_pad, linear_along, nearest_indices, \
    reflect_index, replicate_index

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pad"]

_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")
_LINEAR_RANK = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}
_DIM_NAMES = {1: ("W",), 2: ("H", "W"), 3: ("D", "H", "W")}


def _output_geometry(input, size, scale_factor, recompute_scale_factor):
    """Output sizes and the scales the kernels index with (None: in/out)."""
    nd = input.dim() - 2
    spatial = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if recompute_scale_factor:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        if isinstance(size, (list, tuple)):
            if len(size) != nd:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but "
                    f"got input with spatial dimensions of {spatial} and output size of "
                    f"{size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                    "and output size in (o1, o2, ...,oK) format.")
            out = [int(v) for v in size]
        else:
            out = [int(size)] * nd
        return out, [None] * nd
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if isinstance(scale_factor, (list, tuple)):
        if len(scale_factor) != nd:
            raise ValueError(
                "Input and scale_factor must have the same number of spatial dimensions, but "
                f"got input with spatial dimensions of {spatial} and scale_factor of shape "
                f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                "format and scale_factor in (s1, s2, ...,sK) format.")
        scales = [float(v) for v in scale_factor]
    else:
        scales = [float(scale_factor)] * nd
    out = [math.floor(float(n) * s) for n, s in zip(spatial, scales)]
    return out, ([None] * nd if recompute_scale_factor else scales)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resizes the spatial dimensions of (N, C, *S) input to `size` or by
    `scale_factor`, as torch.nn.functional.interpolate."""
    _check_tensor(input)
    if mode not in _MODES or input.dim() not in (3, 4, 5):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) "
            "for the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | "
            f"area | nearest-exact (got {mode})")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not supported")
    if not input.is_floating_point():
        raise NotImplementedError(f'"interpolate ({mode})" not implemented for '
                                  f"'{_type_name(input)[:-6]}'")
    if mode in _LINEAR_RANK and input.dim() != _LINEAR_RANK[mode]:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs "
                                  f"{_LINEAR_RANK[mode]}D input")
    out, scales = _output_geometry(input, size, scale_factor, recompute_scale_factor)
    nd = input.dim() - 2
    if min(out) <= 0 or min(input.shape[2:]) <= 0:
        names = _DIM_NAMES[nd]
        given = ", ".join(f"{n}: {v}" for n, v in zip(names, input.shape[2:]))
        want = ", ".join(f"{n}: {v}" for n, v in zip(names, out))
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({given}) output ({want})")
    if mode == "area":
        from . import _functional_convpool as P
        pools = {1: P.adaptive_avg_pool1d, 2: P.adaptive_avg_pool2d,
                 3: P.adaptive_avg_pool3d}
        return pools[nd](input, out)
    if mode == "nearest" and nd == 2:
        return _kernels.kernel("upsample_nearest2d")(input, tuple(out), tuple(scales))
    if mode == "bilinear":
        return _kernels.kernel("upsample_bilinear2d")(input, tuple(out), bool(align_corners),
                                                      tuple(scales))
    check_output_size(input, tuple(input.shape[:2]) + tuple(out))
    x = input
    for i, (o, s) in enumerate(zip(out, scales)):
        dim = 2 + i
        if mode == "nearest":
            x = x.index_select(dim, nearest_indices(x.shape[dim], o, s,
                                                                   x.device))
        elif mode == "nearest-exact":
            x = x.index_select(dim, _nearest_exact_indices(x.shape[dim], o, s, x.device))
        elif mode == "bicubic":
            x = _cubic_along(x, dim, o, align_corners, s)
        else:
            x = linear_along(x, dim, o, align_corners, s)
    return x if x is not input else input.clone()


def _nearest_exact_indices(size, out, scale, device):
    r = np.float32(1.0 / scale) if scale else np.float32(size) / np.float32(out)
    src = np.floor((np.arange(out, dtype=np.float32) + np.float32(0.5)) * r)
    return ember.tensor(np.minimum(src.astype(np.int64), size - 1), device=device)


_CUBIC_A = -0.75  # the cubic convolution kernel's free parameter, as PyTorch


def _cubic_along(x, dim, out, align_corners, scale):
    """Cubic convolution (Keys) along one dimension: four taps around the
    source coordinate, clamped to the edges; unlike linear interpolation
    the coordinate is not clamped at 0."""
    size = x.shape[dim]
    dst = np.arange(out, dtype=np.float64)
    if align_corners:
        src = dst * ((size - 1) / (out - 1)) if out > 1 else np.zeros(out)
    else:
        r = 1.0 / scale if scale else size / out
        src = (dst + 0.5) * r - 0.5
    base = np.floor(src)
    t = src - base
    a = _CUBIC_A

    def near(d):  # |d| <= 1
        return ((a + 2) * d - (a + 3)) * d * d + 1

    def far(d):   # 1 < |d| < 2
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    weights = (far(t + 1), near(t), near(1 - t), far(2 - t))
    shape = [1] * x.dim()
    shape[dim] = out
    total = None
    for tap, w in zip(range(-1, 3), weights):
        index = np.clip(base.astype(np.int64) + tap, 0, size - 1)
        # tap indices and weights come from shapes alone: made on the host, used on x's device
        term = x.index_select(dim, ember.tensor(index, device=x.device)) * \
            ember.tensor(w, dtype=x.dtype, device=x.device).view(*shape)
        total = term if total is None else total + term
    return total


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated spelling of interpolate."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---- padding -----------------------------------------------------------------------
def pad(input, pad, mode="constant", value=None):
    """Pads the last len(pad) // 2 dimensions, last dimension first:
    (left, right, top, bottom, front, back).  Negative amounts crop.
    mode is 'constant' (with `value`, default 0), 'reflect' (mirror without
    repeating the edge), 'replicate' (repeat the edge) or 'circular' (wrap)."""
    _check_tensor(input)
    for i, p in enumerate(pad):
        if not isinstance(p, numbers.Integral):
            raise TypeError("pad(): argument 'pad' (position 2) must be tuple of ints, but "
                            f"found element of type {type(p).__name__} at pos {i}")
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if mode == "constant":
        if len(pad) // 2 > input.dim():
            raise RuntimeError("Padding length should be less than or equal to two times the "
                               f"input dimension but got padding length {len(pad)} and input "
                               f"of dimension {input.dim()}")
        return _constant_pad(input, pad, 0.0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    n = len(pad) // 2
    if n not in (1, 2, 3) or input.dim() not in (n + 1, n + 2):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for "
                                  f"{input.dim()}D input tensor.")
    batched = input.dim() == n + 2
    for i in range(n):
        dim = input.dim() - 1 - i
        if input.shape[dim] == 0 or (batched and input.shape[1] == 0):
            raise RuntimeError(f"Expected {n + 1}D or {n + 2}D (batch mode) tensor with "
                               "possibly 0 batch size and other non-zero dimensions for "
                               f"input, but got: {list(input.shape)}")
    for i in range(n):
        dim = input.dim() - 1 - i
        lo, hi, size = pad[2 * i], pad[2 * i + 1], input.shape[dim]
        if mode == "reflect" and (lo >= size or hi >= size):
            raise RuntimeError("Argument #4: Padding size should be less than the "
                               f"corresponding input dimension, but got: padding ({lo}, {hi})"
                               f" at dimension {dim} of input {list(input.shape)}")
        if mode == "circular" and (lo > size or hi > size):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if lo + hi + size < 0:
            raise RuntimeError(f"The input size {size}, plus negative padding {lo} and {hi} "
                               "resulted in a negative output size, which is invalid. Check "
                               f"dimension {dim} of your input.")
    if mode == "circular":
        # negative amounts crop first; the wrap then stays within the crop
        cropped = _constant_pad(input, tuple(min(p, 0) for p in pad), 0.0)
        return index_pad(cropped, tuple(max(p, 0) for p in pad), circular_index)
    if min(pad) < 0:
        # negative amounts read a cropped range of the same index map
        source = reflect_index if mode == "reflect" else replicate_index
        return index_pad(input, pad, source)
    x = input if batched else input.unsqueeze(0)
    name = "reflection_pad" if mode == "reflect" else "replication_pad"
    out = _kernels.kernel(name)(x, pad)
    return out if batched else out.squeeze(0)


def _constant_pad(input, pad, value):
    x = input
    for i in range(len(pad) // 2):
        dim = input.dim() - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if x.shape[dim] + lo + hi < 0:
            raise RuntimeError(f"The input size {x.shape[dim]}, plus negative padding {lo} and "
                               f"{hi} resulted in a negative output size, which is invalid. "
                               f"Check dimension {dim} of your input.")
        if lo < 0:
            x = x.narrow(dim, -lo, x.shape[dim] + lo)
            lo = 0
        if hi < 0:
            x = x.narrow(dim, 0, x.shape[dim] + hi)
            hi = 0
        parts = []
        for amount in (lo, hi):
            shape = list(x.shape)
            shape[dim] = amount
            parts.append(x.new_full(shape, value) if amount else None)
        if lo or hi:
            x = ember.cat(([parts[0]] if lo else []) + [x] + ([parts[1]] if hi else []), dim)
    return x if x is not input else input.clone()


# ---- samples: argument lists every function here is tested with
# (tests/test_functional_samples.py: gradcheck and gradgradcheck in float64,
# contiguous and non-contiguous, CUDA against the CPU, and PyTorch's
# torch.nn.functional on the same values) -----------------------------------
from ember._ops.samples import S, T  # noqa: E402

SAMPLES = {
    "interpolate": [S(T(1, 2, 4), size=7, mode="linear"),
                    S(T(1, 2, 3, 4), scale_factor=2, mode="bilinear", align_corners=True),
                    S(T(1, 2, 3, 3), size=(5, 4)),
                    S(T(1, 1, 4, 4), size=(6, 5), mode="bicubic"),
                    S(T(1, 1, 2, 3, 3), scale_factor=2, mode="trilinear")],
    "upsample": [S(T(1, 2, 3, 3), scale_factor=2)],
    "upsample_nearest": [S(T(1, 2, 3, 3), scale_factor=2)],
    "upsample_bilinear": [S(T(1, 2, 3, 3), size=(5, 6))],
    "pad": [S(T(2, 3, 4), (1, 2), value=0.5), S(T(1, 2, 4, 5), (1, 1, 2, 0), mode="reflect"),
            S(T(1, 2, 4, 5), (2, 1, 1, 2), mode="replicate"),
            S(T(1, 2, 4), (1, 2), mode="circular")],
}
