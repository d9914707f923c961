"""The training command's picture: loss and accuracy curves per epoch and a
grid of test images labelled with the model's predictions (green when
right, red when wrong), drawn with Pillow alone."""
import math

import numpy as np
from PIL import Image, ImageDraw, ImageFont

GREEN = (20, 140, 40)
RED = (205, 30, 30)
INK = (30, 30, 30)
GRID = (225, 225, 225)
SERIES = [(31, 100, 180), (230, 120, 20)]


def _font(size):
    try:
        return ImageFont.load_default(size=size)      # scalable when FreeType is there
    except (TypeError, OSError):
        return ImageFont.load_default()


def _nice_step(span, target_ticks=5):
    """A 1-2-5 step giving about ``target_ticks`` ticks over ``span``."""
    raw = span / max(target_ticks, 1)
    power = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if m * power >= raw:
            return m * power
    return 10 * power


def _ticks(low, high):
    if high <= low:
        high = low + 1.0
    step = _nice_step(high - low)
    start = math.floor(low / step) * step
    stop = math.ceil(high / step) * step
    count = int(round((stop - start) / step))
    return [start + i * step for i in range(count + 1)], step


def _label(value, step):
    decimals = max(0, -int(math.floor(math.log10(step)))) if step < 1 else 0
    return f"{value:.{decimals}f}"


def _chart(draw, box, title, series, ylabel, fonts, y_range=None):
    """Line chart of ``series`` ([(name, values)], one value per epoch) in
    ``box`` (left, top, right, bottom) with axes, ticks and a legend."""
    left, top, right, bottom = box
    small, normal = fonts
    plot = (left + 52, top + 26, right - 10, bottom - 36)
    px0, py0, px1, py1 = plot
    values = [v for _, vs in series for v in vs if v is not None and math.isfinite(v)]
    low, high = y_range if y_range else (min(values, default=0.0), max(values, default=1.0))
    if not y_range:
        pad = 0.05 * (high - low or abs(high) or 1.0)
        low, high = max(0.0, low - pad), high + pad
    yticks, ystep = _ticks(low, high)
    low, high = yticks[0], yticks[-1]
    epochs = max((len(vs) for _, vs in series), default=1)
    xticks, xstep = _ticks(1, max(epochs, 2))
    # epoch 1 is always labelled; other ticks keep half a step away from it
    xticks = [1] + [t for t in xticks if 1 + xstep / 2 <= t <= max(epochs, 2)
                    and float(t).is_integer()]
    x_high = max(epochs, 2)

    def to_xy(epoch, value):
        x = px0 + (epoch - 1) / (x_high - 1) * (px1 - px0)
        y = py1 - (value - low) / (high - low) * (py1 - py0)
        return x, y

    draw.text(((left + right) / 2, top + 4), title, fill=INK, font=normal, anchor="ma")
    for t in yticks:
        _, y = to_xy(1, t)
        draw.line([(px0, y), (px1, y)], fill=GRID)
        draw.text((px0 - 6, y), _label(t, ystep), fill=INK, font=small, anchor="rm")
    for t in xticks:
        x, _ = to_xy(t, low)
        draw.line([(x, py1), (x, py1 + 4)], fill=INK)
        draw.text((x, py1 + 6), str(int(t)), fill=INK, font=small, anchor="ma")
    draw.line([(px0, py0), (px0, py1), (px1, py1)], fill=INK, width=1)
    draw.text(((px0 + px1) / 2, bottom - 4), "epoch", fill=INK, font=small, anchor="md")
    draw.text((left + 4, top + 4), ylabel, fill=INK, font=small, anchor="la")

    legend_y = py0 + 4
    for (name, vs), colour in zip(series, SERIES):
        points = [to_xy(i + 1, v) for i, v in enumerate(vs) if v is not None and math.isfinite(v)]
        if len(points) > 1:
            draw.line(points, fill=colour, width=2)
        for x, y in points:
            draw.ellipse([x - 2.5, y - 2.5, x + 2.5, y + 2.5], fill=colour)
        if len(series) > 1:
            draw.line([(px1 - 110, legend_y + 6), (px1 - 92, legend_y + 6)], fill=colour,
                      width=2)
            draw.text((px1 - 86, legend_y), name, fill=INK, font=small, anchor="la")
            legend_y += 16


def _tile(image):
    """An H×W (grey) or C×H×W float array in [0, 1] as a Pillow image."""
    array = np.clip(np.asarray(image, dtype=np.float32), 0.0, 1.0)
    if array.ndim == 3 and array.shape[0] == 1:
        array = array[0]
    pixels = np.rint(array * 255).astype(np.uint8)
    if pixels.ndim == 3:
        return Image.fromarray(np.ascontiguousarray(pixels.transpose(1, 2, 0)), "RGB")
    return Image.fromarray(pixels, "L").convert("RGB")


def _short(name):
    return name.split(" - ")[-1] if " - " in name else name


def save_report(path, history, images, labels, predictions, classes, title, caption=None):
    """Write the report PNG to ``path``.

    ``history``: {"train_loss": [...], "test_loss": [...],
    "test_accuracy": [...] (fractions)}; ``images``: N×C×H×W floats in
    [0, 1]; ``labels``/``predictions``: N ints; ``classes``: names;
    ``caption``: the line above the images."""
    small, normal, big = _font(11), _font(13), _font(15)
    width, cols, cell = 960, 12, 76
    rows = max(1, math.ceil(len(images) / cols))
    charts_height = 260
    height = 40 + charts_height + 28 + rows * cell + 10
    canvas = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(canvas)
    draw.text((width / 2, 10), title, fill=INK, font=big, anchor="ma")

    half = width // 2
    _chart(draw, (10, 40, half - 10, 40 + charts_height), "loss",
           [("train", history["train_loss"]), ("test", history["test_loss"])],
           "cross-entropy", (small, normal))
    accuracy = [100.0 * a for a in history["test_accuracy"]]
    low = min(accuracy, default=0.0)
    _chart(draw, (half + 10, 40, width - 10, 40 + charts_height), "test accuracy",
           [("test", accuracy)], "%", (small, normal),
           y_range=(max(0.0, low - 0.1 * (100.0 - low) - 0.5), 100.0))

    top = 40 + charts_height + 6
    wrong = sum(int(p) != int(t) for p, t in zip(predictions, labels))
    if caption is None:
        caption = "test images: predicted label (true label when wrong)"
    draw.text((10, top), f"{caption}; {len(images) - wrong} of {len(images)} right",
              fill=INK, font=normal)
    top += 22
    side = cell - 22
    for i, (image, label, predicted) in enumerate(zip(images, labels, predictions)):
        row, col = divmod(i, cols)
        x = 10 + col * (width - 20) // cols
        y = top + row * cell
        tile = _tile(image).resize((side, side), Image.NEAREST)
        right = int(predicted) == int(label)
        colour = GREEN if right else RED
        canvas.paste(tile, (int(x + 6), int(y)))
        draw.rectangle([x + 5, y - 1, x + 6 + side, y + side], outline=colour, width=2)
        text = _short(classes[int(predicted)])
        if not right:
            text += f" ({_short(classes[int(label)])})"
        draw.text((x + 6 + side / 2, y + side + 3), text[:14], fill=colour, font=small,
                  anchor="ma")
    canvas.save(path, format="PNG")
    return path
