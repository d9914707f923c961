"""PyTorch-style tensor printing: tensor([[1., 2.], ...], dtype=...)."""
import math

import numpy as np

from . import dtypes as _dt
from ._core import Tensor

PRECISION = 4
THRESHOLD = 1000
EDGEITEMS = 3
LINEWIDTH = 80


class _Formatter:
    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.width = 1
        vals = values.ravel()
        if not floating:
            self.width = max((len(str(v)) for v in vals.tolist()), default=1)
            return
        finite = vals[np.isfinite(vals) & (vals != 0)]
        if finite.size == 0:  # column width comes from nonzero finite values only
            return
        absv = np.abs(finite.astype(np.float64))
        lo, hi = absv.min(), absv.max()
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        if self.int_mode:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8
        else:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        self.width = max(len(self._fmt(v)) for v in finite.tolist())

    def _fmt(self, v):
        if not self.floating:
            return str(v)
        if self.sci_mode:
            return f"{v:.{PRECISION}e}"
        if self.int_mode:
            s = f"{v:.0f}"
            return s + "." if math.isfinite(v) else s
        return f"{v:.{PRECISION}f}"

    def format(self, v):
        return self._fmt(v).rjust(self.width)


class _ComplexFormatter:
    """re+imj with the real and imaginary parts formatted each on its own
    (as PyTorch prints complex tensors: 1.0000+2.j)."""

    def __init__(self, values):
        self.re = _Formatter(values.real, True)
        self.im = _Formatter(np.abs(values.imag), True)
        self.width = 1
        self.width = max((len(self.format(v)) for v in values.ravel().tolist()), default=1)

    def format(self, v):
        v = complex(v)
        sign = "-" if math.copysign(1.0, v.imag) < 0 else "+"
        return (self.re._fmt(v.real) + sign + self.im._fmt(abs(v.imag)) + "j").rjust(self.width)


def _rows(arr, fmt, indent, summarize):
    """Recursive body text for an n-d array."""
    if arr.ndim == 0:
        return fmt.format(arr.item())
    n = arr.shape[0]
    if summarize and n > 2 * EDGEITEMS:
        idx = list(range(EDGEITEMS)) + [None] + list(range(n - EDGEITEMS, n))
    else:
        idx = list(range(n))
    if arr.ndim == 1:
        items = [" ..." if i is None else fmt.format(arr[i].item()) for i in idx]
        per_line = max(1, (LINEWIDTH - indent) // (fmt.width + 2))
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    parts = ["..." if i is None else _rows(arr[i], fmt, indent + 1, summarize) for i in idx]
    sep = "," + "\n" * (arr.ndim - 1) + " " * (indent + 1)
    return "[" + sep.join(parts) + "]"


def _summary_values(arr):
    """The elements that will be shown (edges only for large tensors)."""
    if arr.size <= THRESHOLD:
        return arr
    for d in range(arr.ndim):
        if arr.shape[d] > 2 * EDGEITEMS:
            arr = np.concatenate([arr.take(range(EDGEITEMS), axis=d),
                                  arr.take(range(arr.shape[d] - EDGEITEMS, arr.shape[d]), axis=d)],
                                 axis=d)
    return arr


def tensor_repr(t, prefix="tensor(", extra=()):
    d = t.dtype
    arr = np.asarray(t) if d.numpy is not None else np.asarray(t.float())
    if d is _dt.float16:
        arr = arr.astype(np.float32)
    suffix = list(extra)
    default = {_dt.get_default_dtype(), _dt.get_default_dtype().to_complex(), _dt.int64,
               _dt.bool_}
    if t.numel() == 0:
        body = "[]"
        if tuple(t.shape) != (0,):
            suffix.insert(0, f"size={tuple(t.shape)}")
    else:
        floating = d.is_floating_point
        if d.is_complex:
            fmt = _ComplexFormatter(_summary_values(arr))
        elif d is _dt.bool_:
            fmt = _Formatter(np.zeros(1, dtype=np.int64), False)
            fmt.width = 5 if arr.any() and not arr.all() else (4 if arr.all() else 5)
            fmt.format = lambda v, w=fmt: str(bool(v)).rjust(w.width)
        else:
            fmt = _Formatter(_summary_values(arr), floating)
        body = _rows(arr, fmt, len(prefix), arr.size > THRESHOLD)
    if d not in default:
        suffix.append(f"dtype={d!r}")
    tail = "".join(", " + s for s in suffix)
    return f"{prefix}{body}{tail})"


Tensor.__repr__ = lambda self: tensor_repr(self)
Tensor.__str__ = Tensor.__repr__


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    global PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH
    if profile == "default":
        PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH = 4, 1000, 3, 80
    elif profile == "short":
        PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH = 2, 1000, 2, 80
    elif profile == "full":
        PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH = 4, math.inf, 3, 80
    if precision is not None:
        PRECISION = precision
    if threshold is not None:
        THRESHOLD = threshold
    if edgeitems is not None:
        EDGEITEMS = edgeitems
    if linewidth is not None:
        LINEWIDTH = linewidth


functions = {"set_printoptions": set_printoptions}
