"""The transforms as functions, for PIL images and ember tensors (..., C, H, W).

Tensor inputs are never modified (except by ``normalize(..., inplace=True)``
and ``erase(..., inplace=True)``); the result has the input's dtype.
"""
import math
import numbers
from enum import Enum

import numpy as np
from PIL import Image, ImageEnhance

import ember
from . import _tensor as T

__all__ = [
    "InterpolationMode", "get_dimensions", "get_image_num_channels", "get_image_size",
    "to_tensor", "pil_to_tensor", "to_pil_image", "convert_image_dtype", "normalize",
    "resize", "crop", "center_crop", "resized_crop", "pad", "hflip", "vflip",
    "rotate", "affine", "rgb_to_grayscale", "to_grayscale", "adjust_brightness",
    "adjust_contrast", "adjust_saturation", "adjust_hue", "erase",
]


class InterpolationMode(Enum):
    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


_PIL_FILTERS = {
    InterpolationMode.NEAREST: Image.Resampling.NEAREST,
    InterpolationMode.NEAREST_EXACT: Image.Resampling.NEAREST,
    InterpolationMode.BILINEAR: Image.Resampling.BILINEAR,
    InterpolationMode.BICUBIC: Image.Resampling.BICUBIC,
    InterpolationMode.BOX: Image.Resampling.BOX,
    InterpolationMode.HAMMING: Image.Resampling.HAMMING,
    InterpolationMode.LANCZOS: Image.Resampling.LANCZOS,
}
_FROM_PIL_CODE = {int(v): k for k, v in _PIL_FILTERS.items() if k is not InterpolationMode.NEAREST_EXACT}


def _interpolation(mode):
    if isinstance(mode, InterpolationMode):
        return mode
    if isinstance(mode, int) and mode in _FROM_PIL_CODE:
        return _FROM_PIL_CODE[mode]
    if isinstance(mode, str):
        try:
            return InterpolationMode(mode)
        except ValueError:
            pass
    raise TypeError(f"interpolation should be an InterpolationMode (or a PIL filter code), got {mode!r}")


def _is_pil(img):
    return isinstance(img, Image.Image)


def _kind(img):
    if _is_pil(img):
        return "pil"
    if isinstance(img, ember.Tensor):
        T.check_image(img)
        return "tensor"
    raise TypeError(f"img should be PIL Image or Tensor. Got {type(img)}")


def _pil_to_array(img):
    return np.asarray(img)


# dtypes Pillow produces that ember tensors lack: widened to keep every value
_WIDER = {np.dtype(np.uint16): np.int32, np.dtype(">u2"): np.int32, np.dtype(np.uint32): np.int64}


def _widen(array):
    wider = _WIDER.get(array.dtype)
    return array if wider is None else array.astype(wider)


def _array_to_pil(array, like):
    """A PIL image of ``array`` (H×W or H×W×C) with ``like``'s mode and palette."""
    out = Image.fromarray(np.ascontiguousarray(array), mode=None)
    if like.mode == "P":
        out.putpalette(like.getpalette())     # makes the 'L' index image a 'P' one
    elif out.mode != like.mode:
        out = out.convert(like.mode)
    return out


# -- sizes ----------------------------------------------------------------
def get_dimensions(img):
    """[channels, height, width]."""
    if _kind(img) == "pil":
        return [len(img.getbands()), img.height, img.width]
    return [T.num_channels(img), int(img.shape[-2]), int(img.shape[-1])]


def get_image_num_channels(img):
    return get_dimensions(img)[0]


def get_image_size(img):
    """[width, height]."""
    _, h, w = get_dimensions(img)
    return [w, h]


# -- conversion -----------------------------------------------------------
def to_tensor(pic):
    """PIL image or NumPy array H×W(×C) -> tensor C×H×W; uint8 becomes
    float32 in [0, 1], other dtypes keep their values."""
    if _is_pil(pic):
        array = np.array(pic, copy=True)
        if pic.mode == "1":
            array = array.astype(np.uint8) * 255
    elif isinstance(pic, np.ndarray):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2 or 3 dimensional. Got {pic.ndim} dimensions.")
        array = pic
    else:
        raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
    if array.ndim == 2:
        array = array[:, :, None]
    array = _widen(np.ascontiguousarray(array.transpose(2, 0, 1)))
    if array.dtype == np.uint8:
        return ember.from_numpy(array.astype(np.float32) / np.float32(255))
    if array.dtype == np.bool_:
        array = array.astype(np.float32)
    return ember.from_numpy(array.copy())      # never share the caller's array


def pil_to_tensor(pic):
    """PIL image -> tensor C×H×W of its own dtype, values unchanged (16-bit
    images, which ember has no unsigned type for, become int32)."""
    if not _is_pil(pic):
        raise TypeError(f"pic should be PIL Image. Got {type(pic)}")
    array = np.array(pic, copy=True)
    if array.ndim == 2:
        array = array[:, :, None]
    return ember.from_numpy(_widen(np.ascontiguousarray(array.transpose(2, 0, 1))))


_MODES_BY_CHANNELS = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}


def to_pil_image(pic, mode=None):
    """Tensor C×H×W (or H×W) or array H×W×C -> PIL image.  Float values in
    [0, 1] are scaled to 0..255."""
    if isinstance(pic, ember.Tensor):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        array = T.to_numpy(pic)
        array = array[None] if array.ndim == 2 else array
        array = array.transpose(1, 2, 0)
        if T.is_float(array) and mode != "F":
            array = (array * 255).astype(np.uint8)
    elif isinstance(pic, np.ndarray):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        array = pic[:, :, None] if pic.ndim == 2 else pic
    else:
        raise TypeError(f"pic should be Tensor or ndarray. Got {type(pic)}.")
    channels = array.shape[-1]
    if channels not in _MODES_BY_CHANNELS:
        raise ValueError(f"pic should not have > 4 channels. Got {channels} channels.")
    if channels == 1:
        array = array[:, :, 0]
        defaults = {np.dtype(np.uint8): "L", np.dtype(np.int16): "I;16",
                    np.dtype(np.int32): "I", np.dtype(np.float32): "F"}
        default = defaults.get(array.dtype)
        if default is None:
            raise TypeError(f"Input type {array.dtype} is not supported")
        if mode is not None and mode != default and not (mode == "F" and T.is_float(array)):
            raise ValueError(f"Incorrect mode ({mode}) supplied for input type {array.dtype}. "
                             f"Should be {default}")
        if default == "I;16":
            return Image.fromarray(np.ascontiguousarray(array.astype("<u2")), mode="I;16")
        return Image.fromarray(np.ascontiguousarray(array.astype(np.float32) if mode == "F" else array))
    if array.dtype != np.uint8:
        raise TypeError(f"Input type {array.dtype} is not supported for {channels}-channel images")
    allowed = {2: ("LA",), 3: ("RGB", "YCbCr", "HSV"), 4: ("RGBA", "CMYK", "RGBX")}[channels]
    mode = mode or _MODES_BY_CHANNELS[channels]
    if mode not in allowed:
        raise ValueError(f"Only modes {list(allowed)} are supported for {channels}D inputs")
    image = Image.fromarray(np.ascontiguousarray(array), mode=_MODES_BY_CHANNELS[channels])
    return image if image.mode == mode else Image.frombytes(mode, image.size, image.tobytes())


def convert_image_dtype(image, dtype=ember.float32):
    """Convert a tensor image to ``dtype``, rescaling values: integers map
    0..max to [0, 1] and back (floats are scaled by max+1-1e-3, then
    truncated, so 1.0 becomes max)."""
    if not isinstance(image, ember.Tensor):
        raise TypeError(f"Input img should be Tensor Image. Got {type(image)}")
    if image.dtype == dtype:
        return image
    array = T.to_numpy(image)
    target = ember.empty(0, dtype=dtype).numpy().dtype
    src_float, dst_float = T.is_float(array), target.kind == "f"
    if src_float and dst_float:
        return T.from_numpy(array.astype(target))
    if src_float:
        if (array.dtype == np.float32 and target in (np.int32, np.int64)) or \
                (array.dtype == np.float64 and target == np.int64):
            raise RuntimeError(f"The cast from {image.dtype} to {dtype} cannot be performed safely.")
        scale = float(T.max_value(target)) + 1.0 - 1e-3
        return T.from_numpy((array.astype(np.float64) * scale).astype(target))
    src_max = int(T.max_value(array.dtype))
    if dst_float:
        return T.from_numpy((array.astype(np.float64) / src_max).astype(target))
    dst_max = int(T.max_value(target))
    wide = array.astype(np.int64)
    if dst_max > src_max:
        out = wide * ((dst_max + 1) // (src_max + 1))
    else:
        out = wide // ((src_max + 1) // (dst_max + 1))
    return T.from_numpy(out.astype(target))


def normalize(tensor, mean, std, inplace=False):
    """(tensor - mean) / std per channel, for float tensors (..., C, H, W)."""
    if not isinstance(tensor, ember.Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
    if not tensor.dtype.is_floating_point:
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
    if tensor.ndim < 3:
        raise ValueError(f"Expected tensor to be a tensor image of size (..., C, H, W). "
                         f"Got tensor.size() = {tuple(tensor.shape)}")
    array = tensor.detach().numpy()
    mean_a = np.asarray(mean, dtype=array.dtype).reshape(-1)
    std_a = np.asarray(std, dtype=array.dtype).reshape(-1)
    channels = int(tensor.shape[-3])
    for name, value in (("mean", mean_a), ("std", std_a)):
        if value.size not in (1, channels):
            raise ValueError(f"{name} has {value.size} values for an image with {channels} channels")
    if (std_a == 0).any():
        raise ValueError(f"std evaluated to zero after conversion to {tensor.dtype}, "
                         f"leading to division by zero.")
    mean_a, std_a = mean_a.reshape(-1, 1, 1), std_a.reshape(-1, 1, 1)
    if inplace or tensor.requires_grad:
        # ember operations: in-place writes are versioned, gradients flow
        mean_t, std_t = ember.from_numpy(mean_a), ember.from_numpy(std_a)
        if inplace:
            return tensor.sub_(mean_t).div_(std_t)
        return (tensor - mean_t) / std_t
    return ember.from_numpy((array - mean_a) / std_a)


# -- geometry -------------------------------------------------------------
def _output_size(h, w, size, max_size):
    if isinstance(size, numbers.Number) or (isinstance(size, (list, tuple)) and len(size) == 1):
        requested = int(size if isinstance(size, numbers.Number) else size[0])
        short, long = (w, h) if w <= h else (h, w)
        new_short, new_long = requested, int(requested * long / short)
        if max_size is not None:
            if max_size <= requested:
                raise ValueError(f"max_size = {max_size} must be strictly greater than the "
                                 f"requested size for the smaller edge size = {size}")
            if new_long > max_size:
                new_short, new_long = int(max_size * new_short / new_long), max_size
        return (new_long, new_short) if w <= h else (new_short, new_long)
    if max_size is not None:
        raise ValueError("max_size should only be passed if size specifies the length of the "
                         "smaller edge, i.e. size should be an int or a sequence of length 1")
    if not isinstance(size, (list, tuple)) or len(size) != 2:
        raise TypeError(f"size should be an int or a sequence of 1 or 2 ints, got {size!r}")
    return int(size[0]), int(size[1])


def resize(img, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
    """Resize to ``size`` (h, w), or match the smaller edge to an int ``size``."""
    mode = _interpolation(interpolation)
    _, h, w = get_dimensions(img)
    new_h, new_w = _output_size(h, w, size, max_size)
    if new_h <= 0 or new_w <= 0:
        raise ValueError(f"resize would give an empty image ({new_h}×{new_w}) from {h}×{w}")
    if (new_h, new_w) == (h, w):
        return img
    if _kind(img) == "pil":
        return img.resize((new_w, new_h), _PIL_FILTERS[mode])
    array = T.to_numpy(img)
    if mode in (InterpolationMode.NEAREST, InterpolationMode.NEAREST_EXACT) or \
            (mode is InterpolationMode.BILINEAR and not antialias):
        return T.from_numpy(T.resize_plain(array, new_h, new_w, mode.value))
    if mode not in (InterpolationMode.BILINEAR, InterpolationMode.BICUBIC):
        raise ValueError(f"Input Tensor resizing supports nearest, nearest-exact, bilinear and "
                         f"bicubic interpolation, not {mode.value}")
    filt = _PIL_FILTERS[mode]
    return T.from_numpy(T.through_pil(array, lambda im, _: im.resize((new_w, new_h), filt)))


def crop(img, top, left, height, width):
    """The region at (top, left) of size height×width; outside the image is zeros."""
    if _kind(img) == "pil":
        return img.crop((left, top, left + width, top + height))
    return T.from_numpy(T.crop(T.to_numpy(img), int(top), int(left), int(height), int(width)))


def _pair(size, name="size"):
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if isinstance(size, (list, tuple)) and len(size) == 1:
        return int(size[0]), int(size[0])
    if isinstance(size, (list, tuple)) and len(size) == 2:
        return int(size[0]), int(size[1])
    raise ValueError(f"Please provide only two dimensions (h, w) for {name}, got {size!r}")


def center_crop(img, output_size):
    """Crop the centre; an image smaller than ``output_size`` is padded with zeros first."""
    crop_h, crop_w = _pair(output_size, "output_size")
    _, h, w = get_dimensions(img)
    if crop_w > w or crop_h > h:
        pads = [(crop_w - w) // 2 if crop_w > w else 0, (crop_h - h) // 2 if crop_h > h else 0,
                (crop_w - w + 1) // 2 if crop_w > w else 0, (crop_h - h + 1) // 2 if crop_h > h else 0]
        img = pad(img, pads, fill=0)
        _, h, w = get_dimensions(img)
        if (crop_h, crop_w) == (h, w):
            return img
    top = int(round((h - crop_h) / 2.0))
    left = int(round((w - crop_w) / 2.0))
    return crop(img, top, left, crop_h, crop_w)


def resized_crop(img, top, left, height, width, size, interpolation=InterpolationMode.BILINEAR,
                 antialias=True):
    return resize(crop(img, top, left, height, width), size, interpolation, antialias=antialias)


_PADDING_MODES = ("constant", "edge", "reflect", "symmetric")


def _padding_sides(padding):
    if isinstance(padding, numbers.Number):
        if not isinstance(padding, int):
            raise TypeError(f"padding should be an int or a sequence of ints, got {padding!r}")
        return [padding] * 4
    if not isinstance(padding, (list, tuple)) or len(padding) not in (1, 2, 4):
        raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not {padding!r}")
    if len(padding) == 1:
        return [int(padding[0])] * 4
    if len(padding) == 2:
        return [int(padding[0]), int(padding[1])] * 2
    return [int(p) for p in padding]


def pad(img, padding, fill=0, padding_mode="constant"):
    """Pad every side: ``padding`` is an int, (left/right, top/bottom) or
    (left, top, right, bottom); modes constant (with ``fill``), edge,
    reflect (mirror without the edge pixel) and symmetric (with it)."""
    if padding_mode not in _PADDING_MODES:
        raise ValueError(f"Padding mode should be either constant, edge, reflect or symmetric, "
                         f"got {padding_mode!r}")
    left, top, right, bottom = _padding_sides(padding)
    if _kind(img) == "tensor":
        return T.from_numpy(T.pad(T.to_numpy(img), left, top, right, bottom, fill, padding_mode))
    if padding_mode == "constant" and min(left, top, right, bottom) >= 0 and img.mode != "P":
        # a new canvas of the fill colour with the image pasted in: no array round trip
        canvas = Image.new(img.mode, (img.width + left + right, img.height + top + bottom),
                           _pil_fill(img, fill if fill is not None else 0))
        canvas.paste(img, (left, top))
        return canvas
    array = _pil_to_array(img)
    hwc = array.ndim == 3
    chw = array.transpose(2, 0, 1) if hwc else array
    if padding_mode == "constant" and img.mode == "P":
        fill = fill if isinstance(fill, numbers.Number) else fill[0]
    out = T.pad(chw, left, top, right, bottom, fill, padding_mode)
    return _array_to_pil(out.transpose(1, 2, 0) if hwc else out, img)


def hflip(img):
    if _kind(img) == "pil":
        return img.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    return T.from_numpy(T.to_numpy(img)[..., ::-1])


def vflip(img):
    if _kind(img) == "pil":
        return img.transpose(Image.Transpose.FLIP_TOP_BOTTOM)
    return T.from_numpy(T.to_numpy(img)[..., ::-1, :])


def _pil_fill(img, fill):
    if fill is None:
        return None
    bands = len(img.getbands())
    if isinstance(fill, numbers.Number):
        value = float(fill) if img.mode == "F" else int(fill)
        # Pillow reads a single int as a packed colour: give every band the value
        return value if bands == 1 else (value,) * bands
    fill = list(fill)
    if len(fill) == 1:
        return _pil_fill(img, fill[0])
    if len(fill) != bands:
        raise ValueError(f"The number of elements in 'fill' does not match the number of bands "
                         f"of the image ({len(fill)} != {bands})")
    return tuple(int(v) for v in fill)


def _check_geometric_mode(mode):
    mode = _interpolation(mode)
    if mode not in (InterpolationMode.NEAREST, InterpolationMode.NEAREST_EXACT,
                    InterpolationMode.BILINEAR, InterpolationMode.BICUBIC):
        raise ValueError(f"interpolation {mode.value} is not supported for rotations and affine "
                         f"transforms (nearest, bilinear or bicubic)")
    return _PIL_FILTERS[mode]


def rotate(img, angle, interpolation=InterpolationMode.NEAREST, expand=False, center=None, fill=None):
    """Rotate by ``angle`` degrees counter-clockwise about ``center`` ((x, y),
    default the image centre); ``expand`` grows the output to hold the whole
    rotated image; uncovered pixels take ``fill`` (default 0)."""
    filt = _check_geometric_mode(interpolation)
    center = None if center is None else tuple(float(c) for c in center)
    if _kind(img) == "pil":
        return img.rotate(angle, filt, expand, center, fillcolor=_pil_fill(img, fill))
    return T.from_numpy(T.through_pil(
        T.to_numpy(img), lambda im, f: im.rotate(angle, filt, expand, center, fillcolor=f), fill))


def _inverse_affine(center, angle, translate, scale, shear):
    """The output->input pixel map of an affine transform as PIL wants it
    (a, b, c, d, e, f).  The forward map is
        x -> C + t + R(angle) · Sy · Sx · scale · (x - C)
    with R a clockwise rotation (y points down), Sx = [[1, -tan sx], [0, 1]]
    and Sy = [[1, 0], [-tan sy, 1]]."""
    rot = math.radians(angle)
    sx, sy = (math.radians(s) for s in shear)
    rotation = np.array([[math.cos(rot), -math.sin(rot)], [math.sin(rot), math.cos(rot)]])
    shear_x = np.array([[1.0, -math.tan(sx)], [0.0, 1.0]])
    shear_y = np.array([[1.0, 0.0], [-math.tan(sy), 1.0]])
    linear = rotation @ shear_y @ shear_x * scale
    inverse = np.linalg.inv(linear)
    c = np.asarray(center, dtype=np.float64)
    offset = c - inverse @ (c + np.asarray(translate, dtype=np.float64))
    return (inverse[0, 0], inverse[0, 1], offset[0], inverse[1, 0], inverse[1, 1], offset[1])


def affine(img, angle, translate, scale, shear, interpolation=InterpolationMode.NEAREST,
           fill=None, center=None):
    """Rotate by ``angle`` degrees clockwise, shear by ``shear`` degrees ((x, y)
    or one number for x), scale, then translate by ``translate`` pixels,
    keeping ``center`` (default the image centre) fixed."""
    filt = _check_geometric_mode(interpolation)
    if not isinstance(translate, (list, tuple)) or len(translate) != 2:
        raise TypeError("Argument translate should be a sequence of length 2")
    if scale <= 0.0:
        raise ValueError("Argument scale should be positive")
    if isinstance(shear, numbers.Number):
        shear = [shear, 0.0]
    shear = list(shear)
    if len(shear) == 1:
        shear = [shear[0], 0.0]
    if len(shear) != 2:
        raise ValueError(f"Shear should be a sequence containing two values. Got {shear}")
    _, h, w = get_dimensions(img)
    center = (w * 0.5, h * 0.5) if center is None else tuple(float(c) for c in center)
    data = _inverse_affine(center, angle, translate, scale, shear)
    if _kind(img) == "pil":
        return img.transform((w, h), Image.Transform.AFFINE, data, filt, fillcolor=_pil_fill(img, fill))
    return T.from_numpy(T.through_pil(
        T.to_numpy(img),
        lambda im, f: im.transform((w, h), Image.Transform.AFFINE, data, filt, fillcolor=f), fill))


# -- colour ---------------------------------------------------------------
def rgb_to_grayscale(img, num_output_channels=1):
    """Luma L = 0.299 R + 0.587 G + 0.114 B, repeated to 1 or 3 channels."""
    if num_output_channels not in (1, 3):
        raise ValueError("num_output_channels should be either 1 or 3")
    if _kind(img) == "pil":
        gray = img.convert("L")
        return Image.merge("RGB", [gray] * 3) if num_output_channels == 3 else gray
    array = T.to_numpy(img)
    if T.num_channels(img) == 1:
        gray = array.astype(np.float64)
    else:
        gray = T.rgb_to_gray(array)
    gray = T.cast_like(gray, array.dtype)
    if num_output_channels == 3:
        gray = np.repeat(gray, 3, axis=-3)
    return T.from_numpy(gray)


to_grayscale = rgb_to_grayscale


def _check_factor(value, name, low=0.0):
    if value < low:
        raise ValueError(f"{name} ({value}) is not non-negative.")


def _rgb_array(img, what):
    array = T.to_numpy(img)
    channels = T.num_channels(img)
    if channels not in (1, 3):
        raise TypeError(f"{what} needs an image with 1 or 3 channels, got {channels}")
    return array, channels


def adjust_brightness(img, brightness_factor):
    """Multiply by ``brightness_factor`` (0 black, 1 unchanged), clipped."""
    _check_factor(brightness_factor, "brightness_factor")
    if _kind(img) == "pil":
        return ImageEnhance.Brightness(img).enhance(brightness_factor)
    array, _ = _rgb_array(img, "adjust_brightness")
    return T.from_numpy(T.blend(array, 0.0, brightness_factor))


def adjust_contrast(img, contrast_factor):
    """Blend with the mean grey level (0 flat grey, 1 unchanged)."""
    _check_factor(contrast_factor, "contrast_factor")
    if _kind(img) == "pil":
        return ImageEnhance.Contrast(img).enhance(contrast_factor)
    array, channels = _rgb_array(img, "adjust_contrast")
    gray = T.rgb_to_gray(array) if channels == 3 else array.astype(np.float64)
    if not T.is_float(array):
        gray = T.cast_like(gray, array.dtype).astype(np.float64)
    mean = gray.mean(axis=(-3, -2, -1), keepdims=True)
    return T.from_numpy(T.blend(array, mean, contrast_factor))


def adjust_saturation(img, saturation_factor):
    """Blend with the greyscale image (0 grey, 1 unchanged, 2 doubled)."""
    _check_factor(saturation_factor, "saturation_factor")
    if _kind(img) == "pil":
        return ImageEnhance.Color(img).enhance(saturation_factor)
    array, channels = _rgb_array(img, "adjust_saturation")
    if channels == 1:
        return img.clone()
    gray = T.rgb_to_gray(array)
    if not T.is_float(array):
        gray = T.cast_like(gray, array.dtype).astype(np.float64)
    return T.from_numpy(T.blend(array, gray, saturation_factor))


def adjust_hue(img, hue_factor):
    """Shift the hue by ``hue_factor`` turns, in [-0.5, 0.5]."""
    if not -0.5 <= hue_factor <= 0.5:
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    if _kind(img) == "pil":
        if img.mode in ("L", "1", "I", "F"):
            return img
        h, s, v = img.convert("HSV").split()
        shifted = (np.asarray(h, dtype=np.int64) + int(round(hue_factor * 255))) % 256
        h = Image.fromarray(shifted.astype(np.uint8))
        return Image.merge("HSV", (h, s, v)).convert(img.mode)
    array, channels = _rgb_array(img, "adjust_hue")
    if channels == 1:
        return img.clone()
    scale = float(T.max_value(array.dtype))
    h, s, v = T.rgb_to_hsv(array.astype(np.float64) / scale)
    rgb = T.hsv_to_rgb((h + hue_factor) % 1.0, s, v) * scale
    return T.from_numpy(T.cast_like(rgb, array.dtype))


def erase(img, i, j, h, w, v, inplace=False):
    """Set the region rows [i, i+h), columns [j, j+w) of a tensor image to ``v``."""
    if not isinstance(img, ember.Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(img)}")
    out = img if inplace else img.clone()
    with ember.no_grad():
        out[..., i:i + h, j:j + w] = v
    return out
