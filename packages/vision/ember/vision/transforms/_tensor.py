"""Image operations on ember tensors (..., C, H, W), computed with NumPy.

Every function takes and returns ember tensors; the input is never changed.
Geometric resampling goes through Pillow's float ('F') images one plane at
a time, so tensors and PIL images are resampled by the same code.
"""
import numpy as np
from PIL import Image

import ember

_RGB_WEIGHTS = np.array([0.299, 0.587, 0.114])


def to_numpy(img):
    return img.detach().numpy()


def from_numpy(array):
    return ember.from_numpy(np.ascontiguousarray(array))


def check_image(img):
    if img.ndim < 2:
        raise TypeError(f"Tensor is not an image: expected at least 2 dimensions (..., H, W), "
                        f"got {img.ndim}")


def num_channels(img):
    return 1 if img.ndim == 2 else int(img.shape[-3])


def is_float(array):
    return array.dtype.kind == "f"


def max_value(np_dtype):
    """The value of white: 1.0 for floats, the largest value for integers."""
    np_dtype = np.dtype(np_dtype)
    if np_dtype.kind == "f":
        return 1.0
    if np_dtype.kind == "b":
        return 1
    return np.iinfo(np_dtype).max


def cast_like(values, np_dtype):
    """Float results back to the image's dtype (rounded and clipped for integers)."""
    np_dtype = np.dtype(np_dtype)
    if np_dtype.kind == "f":
        return values.astype(np_dtype, copy=False)
    if np_dtype.kind == "b":
        return values > 0.5
    info = np.iinfo(np_dtype)
    return np.clip(np.rint(values), info.min, info.max).astype(np_dtype)


def channel_values(fill, channels, np_dtype):
    """``fill`` (a number or one value per channel) as an array (C, 1, 1)."""
    if fill is None:
        fill = 0
    values = np.atleast_1d(np.asarray(fill, dtype=np.float64))
    if values.size == 1:
        values = np.repeat(values, channels)
    if values.size != channels:
        raise ValueError(f"The number of elements in 'fill' does not match the number of "
                         f"channels of the image ({values.size} != {channels})")
    return values.reshape(channels, 1, 1)


# -- geometry -------------------------------------------------------------
def pad(array, left, top, right, bottom, fill=0, padding_mode="constant"):
    """Pad the last two axes; negative amounts crop."""
    h, w = array.shape[-2:]
    # negative padding removes rows/columns first
    array = array[..., max(-top, 0):h - max(-bottom, 0), max(-left, 0):w - max(-right, 0)]
    left, top, right, bottom = (max(v, 0) for v in (left, top, right, bottom))
    if padding_mode != "constant":
        widths = [(0, 0)] * (array.ndim - 2) + [(top, bottom), (left, right)]
        if padding_mode == "reflect" and (max(top, bottom) >= array.shape[-2]
                                          or max(left, right) >= array.shape[-1]):
            raise ValueError("Padding size should be less than the corresponding input "
                             f"dimension for padding_mode='reflect', got padding "
                             f"{(left, top, right, bottom)} for an image of size "
                             f"{tuple(array.shape[-2:])}")
        return np.pad(array, widths, mode=padding_mode)
    h, w = array.shape[-2:]
    out_shape = array.shape[:-2] + (h + top + bottom, w + left + right)
    out = np.empty(out_shape, dtype=array.dtype)
    if array.ndim == 2:
        out[...] = cast_like(np.float64(channel_values(fill, 1, array.dtype)[0, 0, 0]), array.dtype)
    else:
        values = channel_values(fill, array.shape[-3], array.dtype)
        out[...] = cast_like(values, array.dtype)
    out[..., top:top + h, left:left + w] = array
    return out


def crop(array, top, left, height, width):
    """The region rows [top, top+height), columns [left, left+width); parts
    outside the image are zeros."""
    h, w = array.shape[-2:]
    if top >= 0 and left >= 0 and top + height <= h and left + width <= w:
        return array[..., top:top + height, left:left + width]
    pad_left, pad_top = max(-left, 0), max(-top, 0)
    padded = pad(array, pad_left, pad_top, max(left + width - w, 0), max(top + height - h, 0))
    top, left = top + pad_top, left + pad_left
    return padded[..., top:top + height, left:left + width]


def planes(array):
    """(float64 planes (N, H, W), function that restores the leading shape)."""
    lead = array.shape[:-2]
    flat = array.reshape((-1,) + array.shape[-2:]).astype(np.float64)
    return flat, lambda out: out.reshape(lead + out.shape[-2:])


def through_pil(array, op, fill=None):
    """Apply ``op(PIL 'F' image, plane fill) -> PIL 'F' image`` to every plane."""
    flat, restore = planes(array)
    channels = 1 if array.ndim == 2 else array.shape[-3]
    fills = channel_values(fill, channels, array.dtype).reshape(-1)
    results = []
    for k, plane in enumerate(flat):
        image = Image.fromarray(plane.astype(np.float32), mode="F")
        results.append(np.asarray(op(image, float(fills[k % channels])), dtype=np.float64))
    return cast_like(restore(np.stack(results)), array.dtype)


def resize_plain(array, height, width, mode):
    """Resampling without antialiasing: 'nearest' (source index
    floor(dst * in / out)), 'nearest-exact' (pixel centres) or 'bilinear'
    (pixel centres, edges clamped)."""
    flat, restore = planes(array)
    in_h, in_w = array.shape[-2:]

    def axis(n_in, n_out):
        scale = n_in / n_out
        dst = np.arange(n_out)
        if mode == "nearest":
            return np.minimum(np.floor(dst * scale).astype(np.int64), n_in - 1), None
        if mode == "nearest-exact":
            return np.minimum(np.floor((dst + 0.5) * scale).astype(np.int64), n_in - 1), None
        src = np.clip((dst + 0.5) * scale - 0.5, 0, n_in - 1)
        lo = np.floor(src).astype(np.int64)
        hi = np.minimum(lo + 1, n_in - 1)
        return (lo, hi), src - lo

    rows, wy = axis(in_h, height)
    cols, wx = axis(in_w, width)
    if wy is None:
        out = flat[:, rows][:, :, cols]
    else:
        top = flat[:, rows[0]] * (1 - wy)[:, None] + flat[:, rows[1]] * wy[:, None]
        out = top[:, :, cols[0]] * (1 - wx) + top[:, :, cols[1]] * wx
    return cast_like(restore(out), array.dtype)


# -- colour ---------------------------------------------------------------
def rgb_to_gray(array):
    """(..., 3, H, W) -> (..., 1, H, W) luma (ITU-R 601-2), in float64."""
    if array.ndim < 3 or array.shape[-3] != 3:
        raise TypeError(f"Input image tensor should have 3 channels (RGB), got shape {tuple(array.shape)}")
    return np.tensordot(array.astype(np.float64), _RGB_WEIGHTS, axes=([-3], [0]))[..., None, :, :]


def blend(array, other, ratio):
    """ratio*array + (1-ratio)*other, clipped to the image's range."""
    bound = max_value(array.dtype)
    out = np.clip(ratio * array.astype(np.float64) + (1.0 - ratio) * other, 0, bound)
    return cast_like(out, array.dtype)


def rgb_to_hsv(rgb):
    """float RGB in [0, 1], channels first -> (h, s, v) each in [0, 1]."""
    r, g, b = rgb[..., 0, :, :], rgb[..., 1, :, :], rgb[..., 2, :, :]
    maxc = rgb.max(axis=-3)
    minc = rgb.min(axis=-3)
    delta = maxc - minc
    safe = np.where(delta == 0, 1.0, delta)
    s = np.where(maxc == 0, 0.0, delta / np.where(maxc == 0, 1.0, maxc))
    rc, gc, bc = (maxc - r) / safe, (maxc - g) / safe, (maxc - b) / safe
    h = np.where(maxc == r, bc - gc, np.where(maxc == g, 2.0 + rc - bc, 4.0 + gc - rc))
    h = np.where(delta == 0, 0.0, (h / 6.0) % 1.0)
    return h, s, maxc


def hsv_to_rgb(h, s, v):
    i = np.floor(h * 6.0)
    f = h * 6.0 - i
    i = i.astype(np.int64) % 6
    p, q, t = v * (1 - s), v * (1 - s * f), v * (1 - s * (1 - f))
    choices = [(v, t, p), (q, v, p), (p, v, t), (p, q, v), (t, p, v), (v, p, q)]
    channels = [np.choose(i, [c[k] for c in choices]) for k in range(3)]
    return np.stack(channels, axis=-3)
