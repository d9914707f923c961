"""Transform classes: callables on PIL images and ember tensors.

Random transforms draw from ember's global generator, so ``ember.manual_seed``
makes them reproducible and DataLoader workers (seeded per worker) draw
different values.
"""
import math
import numbers
from collections.abc import Sequence

import ember
from . import functional as F
from .functional import InterpolationMode

__all__ = [
    "Compose", "ToTensor", "PILToTensor", "ToPILImage", "ConvertImageDtype", "Normalize",
    "Resize", "CenterCrop", "RandomCrop", "RandomResizedCrop", "RandomHorizontalFlip",
    "RandomVerticalFlip", "RandomRotation", "RandomAffine", "ColorJitter", "Grayscale",
    "RandomGrayscale", "RandomErasing", "Pad", "Lambda", "RandomApply", "RandomChoice",
    "RandomOrder",
]


# -- random draws from ember's global generator ------------------------------
def _rand():
    return float(ember.rand(1).item())


def _randint(low, high):
    """An int in [low, high)."""
    return int(ember.randint(low, high, (1,)).item())


def _uniform(low, high):
    return float(ember.empty(1).uniform_(low, high).item())


class Transform:
    """Base: ``t(img)`` calls ``t.forward(img)``."""

    def __call__(self, *args):
        return self.forward(*args)

    def extra_repr(self):
        return ""

    def __repr__(self):
        return f"{self.__class__.__name__}({self.extra_repr()})"


def _pair(size, name):
    if isinstance(size, numbers.Number):
        return (int(size), int(size))
    if isinstance(size, Sequence) and len(size) == 1:
        return (int(size[0]), int(size[0]))
    if isinstance(size, Sequence) and len(size) == 2:
        return (int(size[0]), int(size[1]))
    raise ValueError(f"Please provide only two dimensions (h, w) for {name}, got {size!r}")


def _range(value, name, center=1.0, bound=(0, float("inf")), clip_first_on_zero=True):
    """A number v -> [center - v, center + v] (clipped at ``bound``), or a (min, max) pair."""
    if isinstance(value, numbers.Number):
        if value < 0:
            raise ValueError(f"If {name} is a single number, it must be non negative.")
        value = [center - float(value), center + float(value)]
        if clip_first_on_zero:
            value[0] = max(value[0], 0.0)
    elif isinstance(value, Sequence) and len(value) == 2:
        value = [float(value[0]), float(value[1])]
    else:
        raise TypeError(f"{name} should be a single number or a list/tuple with length 2.")
    if not bound[0] <= value[0] <= value[1] <= bound[1]:
        raise ValueError(f"{name} values should be between {bound}, but got {value}.")
    return None if value[0] == value[1] == center else tuple(value)


def _check_fill(fill):
    if fill is not None and not isinstance(fill, (numbers.Number, Sequence)):
        raise TypeError("Fill should be either a sequence or a number.")
    return fill


# -- composition ------------------------------------------------------------
class Compose(Transform):
    """Apply ``transforms`` one after another."""

    def __init__(self, transforms):
        self.transforms = list(transforms)

    def forward(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        lines = [self.__class__.__name__ + "("]
        for t in self.transforms:
            lines += ["    " + line for line in repr(t).splitlines()]
        return "\n".join(lines + [")"])


class Lambda(Transform):
    """Apply a user function."""

    def __init__(self, lambd):
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {type(lambd).__name__!r}")
        self.lambd = lambd

    def forward(self, img):
        return self.lambd(img)


class RandomApply(Transform):
    """Apply all ``transforms`` with probability ``p``."""

    def __init__(self, transforms, p=0.5):
        self.transforms = list(transforms)
        self.p = p

    def forward(self, img):
        if self.p < _rand():
            return img
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        lines = [f"{self.__class__.__name__}(", f"    p={self.p}"]
        for t in self.transforms:
            lines += ["    " + line for line in repr(t).splitlines()]
        return "\n".join(lines + [")"])


class RandomChoice(Transform):
    """Apply one of ``transforms``, picked with probabilities ``p`` (default uniform)."""

    def __init__(self, transforms, p=None):
        self.transforms = list(transforms)
        if p is not None and len(p) != len(self.transforms):
            raise ValueError(f"Length of p doesn't match the number of transforms: "
                             f"{len(p)} != {len(self.transforms)}")
        self.p = p

    def forward(self, img):
        weights = ember.tensor(self.p if self.p is not None else [1.0] * len(self.transforms),
                               dtype=ember.float64)
        return self.transforms[int(ember.multinomial(weights, 1).item())](img)

    def extra_repr(self):
        return f"transforms={self.transforms}, p={self.p}"


class RandomOrder(Transform):
    """Apply ``transforms`` in a random order."""

    def __init__(self, transforms):
        self.transforms = list(transforms)

    def forward(self, img):
        for i in ember.randperm(len(self.transforms)).tolist():
            img = self.transforms[i](img)
        return img

    def extra_repr(self):
        return f"transforms={self.transforms}"


# -- conversion -------------------------------------------------------------
class ToTensor(Transform):
    """PIL image or H×W×C array -> float32 tensor C×H×W in [0, 1] (for uint8)."""

    def forward(self, pic):
        return F.to_tensor(pic)


class PILToTensor(Transform):
    """PIL image -> tensor C×H×W with the image's own dtype and values."""

    def forward(self, pic):
        return F.pil_to_tensor(pic)


class ToPILImage(Transform):
    def __init__(self, mode=None):
        self.mode = mode

    def forward(self, pic):
        return F.to_pil_image(pic, self.mode)

    def extra_repr(self):
        return f"mode={self.mode}" if self.mode is not None else ""


class ConvertImageDtype(Transform):
    def __init__(self, dtype):
        self.dtype = dtype

    def forward(self, image):
        return F.convert_image_dtype(image, self.dtype)

    def extra_repr(self):
        return f"dtype={self.dtype}"


class Normalize(Transform):
    """(input - mean) / std per channel, for float tensors."""

    def __init__(self, mean, std, inplace=False):
        self.mean = mean
        self.std = std
        self.inplace = inplace

    def forward(self, tensor):
        return F.normalize(tensor, self.mean, self.std, self.inplace)

    def extra_repr(self):
        return f"mean={self.mean}, std={self.std}"


# -- geometry ---------------------------------------------------------------
class Resize(Transform):
    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
        if not isinstance(size, (int, Sequence)) or (isinstance(size, Sequence) and len(size) not in (1, 2)):
            raise TypeError(f"Size should be int or sequence of length 1 or 2. Got {size!r}")
        self.size = size
        self.interpolation = F._interpolation(interpolation)
        self.max_size = max_size
        self.antialias = antialias

    def forward(self, img):
        return F.resize(img, self.size, self.interpolation, self.max_size, self.antialias)

    def extra_repr(self):
        return (f"size={self.size}, interpolation={self.interpolation.value}, "
                f"max_size={self.max_size}, antialias={self.antialias}")


class CenterCrop(Transform):
    def __init__(self, size):
        self.size = _pair(size, "size")

    def forward(self, img):
        return F.center_crop(img, self.size)

    def extra_repr(self):
        return f"size={self.size}"


class Pad(Transform):
    def __init__(self, padding, fill=0, padding_mode="constant"):
        F._padding_sides(padding)                # validates
        if padding_mode not in F._PADDING_MODES:
            raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
        self.padding = padding
        self.fill = _check_fill(fill)
        self.padding_mode = padding_mode

    def forward(self, img):
        return F.pad(img, self.padding, self.fill, self.padding_mode)

    def extra_repr(self):
        return f"padding={self.padding}, fill={self.fill}, padding_mode={self.padding_mode}"


class RandomCrop(Transform):
    """Crop a random ``size`` region, after optional ``padding``;
    ``pad_if_needed`` pads an image smaller than ``size``."""

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant"):
        self.size = _pair(size, "size")
        if padding is not None:
            F._padding_sides(padding)
        if padding_mode not in F._PADDING_MODES:
            raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
        self.padding = padding
        self.pad_if_needed = pad_if_needed
        self.fill = _check_fill(fill)
        self.padding_mode = padding_mode

    @staticmethod
    def get_params(img, output_size):
        """(top, left, height, width) of a random crop."""
        _, h, w = F.get_dimensions(img)
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size {(h, w)}")
        if w == tw and h == th:
            return 0, 0, h, w
        return _randint(0, h - th + 1), _randint(0, w - tw + 1), th, tw

    def forward(self, img):
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        _, h, w = F.get_dimensions(img)
        if self.pad_if_needed and w < self.size[1]:
            img = F.pad(img, [self.size[1] - w, 0], self.fill, self.padding_mode)
        if self.pad_if_needed and h < self.size[0]:
            img = F.pad(img, [0, self.size[0] - h], self.fill, self.padding_mode)
        return F.crop(img, *self.get_params(img, self.size))

    def extra_repr(self):
        return f"size={self.size}, padding={self.padding}"


class RandomResizedCrop(Transform):
    """Crop a random region of random area (``scale`` of the image) and
    aspect ratio (``ratio``, drawn log-uniformly), resized to ``size``."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation=InterpolationMode.BILINEAR, antialias=True):
        self.size = _pair(size, "size")
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            raise ValueError("Scale and ratio should be of kind (min, max)")
        self.scale = tuple(scale)
        self.ratio = tuple(ratio)
        self.interpolation = F._interpolation(interpolation)
        self.antialias = antialias

    @staticmethod
    def get_params(img, scale, ratio):
        _, height, width = F.get_dimensions(img)
        area = height * width
        log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
        for _ in range(10):
            target_area = area * _uniform(scale[0], scale[1])
            aspect = math.exp(_uniform(log_ratio[0], log_ratio[1]))
            w = int(round(math.sqrt(target_area * aspect)))
            h = int(round(math.sqrt(target_area / aspect)))
            if 0 < w <= width and 0 < h <= height:
                return _randint(0, height - h + 1), _randint(0, width - w + 1), h, w
        # fall back to a central crop with the ratio clamped to the allowed range
        in_ratio = width / height
        if in_ratio < min(ratio):
            w, h = width, int(round(width / min(ratio)))
        elif in_ratio > max(ratio):
            h, w = height, int(round(height * max(ratio)))
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def forward(self, img):
        i, j, h, w = self.get_params(img, self.scale, self.ratio)
        return F.resized_crop(img, i, j, h, w, self.size, self.interpolation, antialias=self.antialias)

    def extra_repr(self):
        return (f"size={self.size}, scale={tuple(round(s, 4) for s in self.scale)}, "
                f"ratio={tuple(round(r, 4) for r in self.ratio)}, "
                f"interpolation={self.interpolation.value}, antialias={self.antialias}")


class RandomHorizontalFlip(Transform):
    def __init__(self, p=0.5):
        self.p = p

    def forward(self, img):
        return F.hflip(img) if _rand() < self.p else img

    def extra_repr(self):
        return f"p={self.p}"


class RandomVerticalFlip(RandomHorizontalFlip):
    def forward(self, img):
        return F.vflip(img) if _rand() < self.p else img


def _degrees(degrees, name="degrees"):
    if isinstance(degrees, numbers.Number):
        if degrees < 0:
            raise ValueError(f"If {name} is a single number, it must be positive.")
        return [-float(degrees), float(degrees)]
    if isinstance(degrees, Sequence) and len(degrees) == 2:
        return [float(d) for d in degrees]
    raise ValueError(f"If {name} is a sequence, it must be of len 2.")


class RandomRotation(Transform):
    """Rotate by an angle drawn uniformly from ``degrees`` (counter-clockwise)."""

    def __init__(self, degrees, interpolation=InterpolationMode.NEAREST, expand=False,
                 center=None, fill=0):
        self.degrees = _degrees(degrees)
        self.interpolation = F._interpolation(interpolation)
        if center is not None and (not isinstance(center, Sequence) or len(center) != 2):
            raise ValueError("If center is a sequence, it must be of len 2.")
        self.expand = expand
        self.center = center
        self.fill = _check_fill(fill)

    @staticmethod
    def get_params(degrees):
        return _uniform(float(degrees[0]), float(degrees[1]))

    def forward(self, img):
        angle = self.get_params(self.degrees)
        return F.rotate(img, angle, self.interpolation, self.expand, self.center, self.fill)

    def extra_repr(self):
        return (f"degrees={self.degrees}, interpolation={self.interpolation.value}, "
                f"expand={self.expand}, fill={self.fill}")


class RandomAffine(Transform):
    """A random affine map: angle from ``degrees``, translation up to
    ``translate`` (fractions of width, height), scale from ``scale``, shear
    from ``shear`` (x range, or x and y ranges)."""

    def __init__(self, degrees, translate=None, scale=None, shear=None,
                 interpolation=InterpolationMode.NEAREST, fill=0, center=None):
        self.degrees = _degrees(degrees)
        if translate is not None:
            if len(translate) != 2 or not all(0.0 <= t <= 1.0 for t in translate):
                raise ValueError("translate should be a sequence of two values between 0 and 1")
        if scale is not None:
            if len(scale) != 2 or any(s <= 0 for s in scale):
                raise ValueError("scale should be a sequence of two positive values")
        if shear is not None:
            if isinstance(shear, numbers.Number):
                shear = _degrees(shear, "shear")
            elif len(shear) not in (2, 4):
                raise ValueError("shear should be a number or a sequence of 2 or 4 values")
            else:
                shear = [float(s) for s in shear]
        self.translate = translate
        self.scale = scale
        self.shear = shear
        self.interpolation = F._interpolation(interpolation)
        self.fill = _check_fill(fill)
        self.center = center

    @staticmethod
    def get_params(degrees, translate, scale_ranges, shears, img_size):
        """(angle, (tx, ty), scale, (shear_x, shear_y)); ``img_size`` is (w, h)."""
        angle = _uniform(float(degrees[0]), float(degrees[1]))
        if translate is not None:
            max_dx = float(translate[0] * img_size[0])
            max_dy = float(translate[1] * img_size[1])
            tx, ty = int(round(_uniform(-max_dx, max_dx))), int(round(_uniform(-max_dy, max_dy)))
        else:
            tx, ty = 0, 0
        scale = _uniform(scale_ranges[0], scale_ranges[1]) if scale_ranges is not None else 1.0
        shear_x = shear_y = 0.0
        if shears is not None:
            shear_x = _uniform(shears[0], shears[1])
            if len(shears) == 4:
                shear_y = _uniform(shears[2], shears[3])
        return angle, (tx, ty), scale, (shear_x, shear_y)

    def forward(self, img):
        w, h = F.get_image_size(img)
        angle, translate, scale, shear = self.get_params(self.degrees, self.translate, self.scale,
                                                         self.shear, (w, h))
        return F.affine(img, angle, list(translate), scale, list(shear), self.interpolation,
                        self.fill, self.center)

    def extra_repr(self):
        return (f"degrees={self.degrees}, translate={self.translate}, scale={self.scale}, "
                f"shear={self.shear}, interpolation={self.interpolation.value}, fill={self.fill}")


# -- colour -----------------------------------------------------------------
class ColorJitter(Transform):
    """Randomly change brightness, contrast, saturation and hue, in a random order.

    Each of brightness/contrast/saturation is a factor range: v -> [max(0, 1-v), 1+v];
    hue h -> [-h, h] with h ≤ 0.5."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        self.brightness = _range(brightness, "brightness")
        self.contrast = _range(contrast, "contrast")
        self.saturation = _range(saturation, "saturation")
        self.hue = _range(hue, "hue", center=0.0, bound=(-0.5, 0.5), clip_first_on_zero=False)

    @staticmethod
    def get_params(brightness, contrast, saturation, hue):
        """(order of the four adjustments, then each factor or None)."""
        order = ember.randperm(4).tolist()
        factors = [None if r is None else _uniform(r[0], r[1])
                   for r in (brightness, contrast, saturation, hue)]
        return (order, *factors)

    def forward(self, img):
        order, *factors = self.get_params(self.brightness, self.contrast, self.saturation, self.hue)
        adjust = (F.adjust_brightness, F.adjust_contrast, F.adjust_saturation, F.adjust_hue)
        for k in order:
            if factors[k] is not None:
                img = adjust[k](img, factors[k])
        return img

    def extra_repr(self):
        return (f"brightness={self.brightness}, contrast={self.contrast}, "
                f"saturation={self.saturation}, hue={self.hue}")


class Grayscale(Transform):
    def __init__(self, num_output_channels=1):
        if num_output_channels not in (1, 3):
            raise ValueError("num_output_channels should be either 1 or 3")
        self.num_output_channels = num_output_channels

    def forward(self, img):
        return F.rgb_to_grayscale(img, self.num_output_channels)

    def extra_repr(self):
        return f"num_output_channels={self.num_output_channels}"


class RandomGrayscale(Transform):
    """Grayscale (keeping the number of channels) with probability ``p``."""

    def __init__(self, p=0.1):
        self.p = p

    def forward(self, img):
        channels = F.get_image_num_channels(img)
        return F.rgb_to_grayscale(img, channels) if _rand() < self.p else img

    def extra_repr(self):
        return f"p={self.p}"


class RandomErasing(Transform):
    """With probability ``p``, set a random rectangle of a tensor image to
    ``value`` (a number, one per channel, or 'random' for normal noise)."""

    def __init__(self, p=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace=False):
        if not isinstance(value, (numbers.Number, str, tuple, list)):
            raise TypeError("Argument value should be either a number or str or a sequence")
        if isinstance(value, str) and value != "random":
            raise ValueError("If value is str, it should be 'random'")
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            raise ValueError("Scale and ratio should be of kind (min, max)")
        if scale[0] < 0 or scale[1] > 1:
            raise ValueError("Scale should be between 0 and 1")
        if not 0 <= p <= 1:
            raise ValueError("Random erasing probability should be between 0 and 1")
        self.p = p
        self.scale = scale
        self.ratio = ratio
        self.value = value
        self.inplace = inplace

    @staticmethod
    def get_params(img, scale, ratio, value=None):
        """(i, j, h, w, v): the rectangle and the values to write."""
        c, img_h, img_w = int(img.shape[-3]), int(img.shape[-2]), int(img.shape[-1])
        area = img_h * img_w
        log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
        for _ in range(10):
            erase_area = area * _uniform(scale[0], scale[1])
            aspect = math.exp(_uniform(log_ratio[0], log_ratio[1]))
            h = int(round(math.sqrt(erase_area * aspect)))
            w = int(round(math.sqrt(erase_area / aspect)))
            if not (h < img_h and w < img_w):
                continue
            if value is None:
                v = ember.randn(c, h, w, dtype=img.dtype)
            else:
                v = ember.tensor(value, dtype=img.dtype).view(-1, 1, 1)
            return _randint(0, img_h - h + 1), _randint(0, img_w - w + 1), h, w, v
        return 0, 0, img_h, img_w, img           # no rectangle found: leave the image

    def forward(self, img):
        if not isinstance(img, ember.Tensor):
            raise TypeError(f"RandomErasing needs a tensor image, got {type(img).__name__}")
        if _rand() >= self.p:
            return img
        if isinstance(self.value, numbers.Number):
            value = [float(self.value)]
        elif isinstance(self.value, str):
            value = None
        else:
            value = [float(v) for v in self.value]
        channels = int(img.shape[-3])
        if value is not None and len(value) not in (1, channels):
            raise ValueError("If value is a sequence, it should have either a single value or "
                             f"{channels} (number of input channels)")
        i, j, h, w, v = self.get_params(img, self.scale, self.ratio, value)
        if v is img:
            return img
        return F.erase(img, i, j, h, w, v, self.inplace)

    def extra_repr(self):
        return (f"p={self.p}, scale={self.scale}, ratio={self.ratio}, value={self.value}, "
                f"inplace={self.inplace}")
