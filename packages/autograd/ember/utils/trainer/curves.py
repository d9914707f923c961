"""Line charts of per-epoch values drawn with Pillow (imported on first
use): the curves a ``CurvesPlot`` plugin writes, and the charts of
``ember-vision train``'s report."""
import math
import os
import tempfile

INK = (30, 30, 30)
GRID = (225, 225, 225)
SERIES = [(31, 100, 180), (230, 120, 20)]


def _pil():
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError:
        raise ImportError("drawing curves needs the Pillow package: pip install pillow") \
            from None
    return Image, ImageDraw, ImageFont


def font(size):
    ImageFont = _pil()[2]
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


def chart(draw, box, title, series, ylabel, fonts, y_range=None):
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


def save_curves(path, charts, title):
    """Write a PNG of ``charts`` (a list of ``(chart title, y label,
    [(name, values per epoch)], y_range or None)``, side by side) under
    ``title``, atomically: a temporary file in the same folder, then
    ``os.replace``."""
    Image, ImageDraw, _ = _pil()
    small, normal, big = font(11), font(13), font(15)
    width = max(480, 480 * len(charts))
    height = 40 + 260 + 10
    canvas = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(canvas)
    draw.text((width / 2, 10), title, fill=INK, font=big, anchor="ma")
    part = width // max(len(charts), 1)
    for i, (name, ylabel, series, y_range) in enumerate(charts):
        chart(draw, (i * part + 10, 40, (i + 1) * part - 10, 300), name, series, ylabel,
              (small, normal), y_range)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                               dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            canvas.save(f, format="PNG")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path
