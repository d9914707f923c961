"""The training command's picture: loss and accuracy curves per epoch and a
grid of test images labelled with the model's predictions (green when
right, red when wrong), drawn with Pillow alone."""
import math

import numpy as np
from PIL import Image, ImageDraw

from ember.utils.trainer.curves import INK, chart as _chart, font as _font

GREEN = (20, 140, 40)
RED = (205, 30, 30)


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
