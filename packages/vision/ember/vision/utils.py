"""Image utilities: tile a batch into a grid, save it, draw boxes."""
import math
import os

import numpy as np
from PIL import Image, ImageColor, ImageDraw, ImageFont

import ember

__all__ = ["make_grid", "save_image", "draw_bounding_boxes"]


def _as_batch(tensor):
    """A tensor (B, C, H, W) from a tensor of 2–4 dims or a list of images."""
    if isinstance(tensor, (list, tuple)):
        if not tensor:
            raise ValueError("make_grid needs at least one image, got an empty list")
        if not all(isinstance(t, ember.Tensor) for t in tensor):
            raise TypeError("tensor or list of tensors expected, got a list holding "
                            f"{sorted({type(t).__name__ for t in tensor})}")
        tensor = ember.stack(list(tensor))
    elif not isinstance(tensor, ember.Tensor):
        raise TypeError(f"tensor or list of tensors expected, got {type(tensor).__name__}")
    array = tensor.detach().numpy()
    if array.ndim == 2:
        array = array[None]
    if array.ndim == 3:
        array = array[None]
    if array.ndim != 4:
        raise ValueError(f"make_grid expects images of 2, 3 or 4 dimensions (B, C, H, W), "
                         f"got shape {tuple(tensor.shape)}")
    if array.shape[1] == 1:                 # grey: repeat into RGB
        array = np.repeat(array, 3, axis=1)
    return array


def _rescale(array, value_range):
    low, high = value_range if value_range is not None else (array.min(), array.max())
    array = np.clip(array, low, high)
    return (array - low) / max(float(high - low), 1e-5)


def make_grid(tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False,
              pad_value=0.0):
    """Tile images into one image (C, H', W'): ``nrow`` images per row,
    ``padding`` pixels of ``pad_value`` around each.  ``normalize`` shifts
    values into [0, 1] using ``value_range`` (default the min and max of the
    batch, or of each image with ``scale_each``).  Grey images become RGB."""
    if value_range is not None and (not isinstance(value_range, (tuple, list)) or len(value_range) != 2):
        raise TypeError("value_range has to be a tuple (min, max) if specified. min and max are numbers")
    if nrow < 1:
        raise ValueError(f"nrow should be a positive integer, got {nrow}")
    if padding < 0:
        raise ValueError(f"padding should be non-negative, got {padding}")
    batch = _as_batch(tensor)
    if normalize:
        batch = batch.astype(np.float32) if batch.dtype.kind != "f" else batch.copy()
        if scale_each:
            batch = np.stack([_rescale(img, value_range) for img in batch]).astype(batch.dtype)
        else:
            batch = _rescale(batch, value_range).astype(batch.dtype)
    n, c, h, w = batch.shape
    if n == 1:
        return ember.from_numpy(np.ascontiguousarray(batch[0]))
    cols = min(nrow, n)
    rows = int(math.ceil(n / cols))
    cell_h, cell_w = h + padding, w + padding
    grid = np.full((c, rows * cell_h + padding, cols * cell_w + padding), pad_value, dtype=batch.dtype)
    for k in range(n):
        y, x = divmod(k, cols)
        top, left = y * cell_h + padding, x * cell_w + padding
        grid[:, top:top + h, left:left + w] = batch[k]
    return ember.from_numpy(grid)


def save_image(tensor, fp, format=None, **kwargs):
    """Save a tensor or batch as an image file (through ``make_grid`` with
    ``kwargs``).  Float values in [0, 1] map to 0..255 (rounded, clipped);
    uint8 values are written as they are."""
    grid = make_grid(tensor, **kwargs).numpy()
    if grid.dtype == np.uint8:
        pixels = grid
    elif grid.dtype.kind == "f":
        pixels = np.clip(grid * 255 + 0.5, 0, 255).astype(np.uint8)
    else:
        raise TypeError(f"save_image needs float images in [0, 1] or uint8 images, got {grid.dtype}")
    pixels = pixels.transpose(1, 2, 0)
    image = Image.fromarray(np.ascontiguousarray(pixels[:, :, 0] if pixels.shape[2] == 1 else pixels))
    if format is None and isinstance(fp, (str, os.PathLike)) and not os.path.splitext(os.fspath(fp))[1]:
        raise ValueError(f"cannot tell the image format of {os.fspath(fp)!r}: give it a file "
                         f"extension (.png, .jpg, ...) or pass format=")
    image.save(fp, format=format)


def _palette(n):
    """``n`` distinct colours: hues spaced by the golden angle."""
    colours = []
    for k in range(n):
        hue = (k * 0.618033988749895) % 1.0
        r, g, b = Image.new("HSV", (1, 1), (int(hue * 255), 200, 255)).convert("RGB").getpixel((0, 0))
        colours.append((r, g, b))
    return colours


def _parse_colour(colour):
    if isinstance(colour, str):
        try:
            return ImageColor.getrgb(colour)[:3]
        except ValueError:
            raise ValueError(f"unknown colour {colour!r}") from None
    colour = tuple(int(v) for v in colour)
    if len(colour) != 3 or not all(0 <= v <= 255 for v in colour):
        raise ValueError(f"a colour is a name or an (R, G, B) tuple of 0..255, got {colour!r}")
    return colour


def draw_bounding_boxes(image, boxes, labels=None, colors=None, fill=False, width=1,
                        font=None, font_size=None):
    """Draw boxes (N×4, x_min y_min x_max y_max, in pixels, both corners
    included) on a uint8 image C×H×W (C is 1 or 3) and return a new uint8
    RGB image 3×H×W.  ``colors`` is one colour for all boxes or one per box
    (names or RGB tuples); ``fill`` shades the inside; ``labels`` are
    written at each box's top-left corner."""
    if not isinstance(image, ember.Tensor):
        raise TypeError(f"Tensor expected, got {type(image)}")
    if image.dtype != ember.uint8:
        raise ValueError(f"Tensor uint8 expected, got {image.dtype}")
    if image.ndim != 3:
        raise ValueError("Pass individual images, not batches")
    if image.shape[0] not in (1, 3):
        raise ValueError("Only grayscale and RGB images are supported")
    box_array = np.asarray(boxes.detach().numpy() if isinstance(boxes, ember.Tensor) else boxes,
                           dtype=np.float64).reshape(-1, 4) if len(boxes) else np.zeros((0, 4))
    if ((box_array[:, 0] > box_array[:, 2]) | (box_array[:, 1] > box_array[:, 3])).any():
        raise ValueError("Boxes need to be in (xmin, ymin, xmax, ymax) format, with "
                         "xmin <= xmax and ymin <= ymax")
    n = len(box_array)
    if labels is not None and len(labels) != n:
        raise ValueError(f"Number of boxes ({n}) and labels ({len(labels)}) mismatch. "
                         f"Please specify labels for each box.")
    if colors is None:
        colours = _palette(n)
    elif isinstance(colors, list):
        if len(colors) < n:
            raise ValueError(f"Number of colors ({len(colors)}) is less than number of boxes ({n}).")
        colours = [_parse_colour(c) for c in colors[:n]]
    else:
        colours = [_parse_colour(colors)] * n
    if width < 0:
        raise ValueError(f"width should be non-negative, got {width}")

    pixels = image.detach().numpy().transpose(1, 2, 0)
    if pixels.shape[2] == 1:
        pixels = np.repeat(pixels, 3, axis=2)
    canvas = Image.fromarray(np.ascontiguousarray(pixels), mode="RGB")
    # in "RGBA" drawing mode the translucent fill blends into the RGB pixels
    draw = ImageDraw.Draw(canvas, "RGBA" if fill else None)
    text_font = None
    if labels is not None:
        if font is not None:
            text_font = ImageFont.truetype(font, size=font_size or 10)
        else:
            text_font = ImageFont.load_default()
    for k, (box, colour) in enumerate(zip(box_array.tolist(), colours)):
        shade = colour + (100,) if fill else None
        draw.rectangle(box, width=width, outline=colour, fill=shade)
        if labels is not None and labels[k]:
            draw.text((box[0] + width + 1, box[1] + width + 1), str(labels[k]), fill=colour, font=text_font)
    out = np.asarray(canvas).transpose(2, 0, 1)
    return ember.from_numpy(np.ascontiguousarray(out))
