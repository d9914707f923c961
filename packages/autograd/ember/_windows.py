"""Window functions, as PyTorch's: ``hann_window``, ``hamming_window``,
``blackman_window``, ``bartlett_window``, ``kaiser_window``.

Each is built from ember ops on the requested device, in the requested
dtype, the way ATen builds it (TensorFactories.cpp): a length of 0 gives an
empty tensor, 1 gives ``[1.]``, and a periodic window is the symmetric
window of length N + 1 without its last element.  Kaiser's I0 is summed
as its power series in float64 and cast."""
import math
import operator

from ._creation import arange, empty, full, get_default_dtype, ones, ones_like
from ._dtypes import float64
from ._layout import sparse_coo

__all__ = ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
           "kaiser_window"]


def _length(name, window_length):
    if isinstance(window_length, bool):
        raise TypeError(f"{name}(): argument 'window_length' must be int, not bool")
    try:
        return operator.index(window_length)
    except TypeError:
        raise TypeError(f"{name}(): argument 'window_length' must be int, not "
                        f"{type(window_length).__name__}") from None


def _checks(name, window_length, dtype, layout):
    """ATen's window_function_checks, in its order: layout, dtype, length.
    Returns (window_length, dtype) with the default dtype filled in."""
    window_length = _length(name, window_length)
    if dtype is None:
        dtype = get_default_dtype()
    if layout == sparse_coo:
        raise RuntimeError(f"{name} is not implemented for sparse types, got: {layout}")
    if not (dtype.is_floating_point or getattr(dtype, "is_complex", False)):
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    return window_length, dtype


def _window(name, window_length, periodic, dtype, layout, device, requires_grad, make):
    """The checks, the 0 and 1 lengths, and the periodic trim around
    make(n, real_dtype, device), which returns the symmetric window of
    length n >= 2.  A complex dtype gets the real window, cast."""
    n, dtype = _checks(name, window_length, dtype, layout)
    if n == 0:
        return empty(0, dtype=dtype, device=device, requires_grad=requires_grad)
    if n == 1:
        return ones(1, dtype=dtype, device=device, requires_grad=requires_grad)
    real = dtype.to_real() if getattr(dtype, "is_complex", False) else dtype
    window = make(n + 1 if periodic else n, real, device)
    if periodic:
        window = window[:n]
    if window.dtype is not dtype:
        window = window.to(dtype)
    if requires_grad:
        window.requires_grad_(True)
    return window


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, requires_grad=False):
    """alpha - beta * cos(2 pi n / (N - 1)), n = 0 .. N-1 (N = window_length,
    + 1 when periodic)."""
    return _hamming("hamming_window", window_length, periodic, alpha, beta, dtype, layout,
                    device, requires_grad)


def _hamming(name, window_length, periodic, alpha, beta, dtype, layout, device,
             requires_grad):
    def make(n, dtype, device):
        w = arange(n, dtype=dtype, device=device)
        return w.mul(math.pi * 2.0 / (n - 1)).cos().mul(-beta).add(alpha)
    return _window(name, window_length, periodic, dtype, layout, device, requires_grad, make)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                requires_grad=False):
    """0.5 - 0.5 cos(2 pi n / (N - 1)): hamming_window with alpha = beta = 0.5."""
    return _hamming("hann_window", window_length, periodic, 0.5, 0.5, dtype, layout, device,
                    requires_grad)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))."""
    def make(n, dtype, device):
        w = arange(n, dtype=dtype, device=device).mul(math.pi / (n - 1))
        return w.mul(4).cos().mul(0.08) - w.mul(2).cos().mul(0.5) + 0.42
    return _window("blackman_window", window_length, periodic, dtype, layout, device,
                   requires_grad, make)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """The triangle 2n / (N - 1) up to the middle, 2 - 2n / (N - 1) after it."""
    def make(n, dtype, device):
        w = arange(n, dtype=dtype, device=device).mul(2.0 / (n - 1))
        first_half = ((n - 1) >> 1) + 1
        from . import cat  # an op: in the namespace once ember is imported
        return cat([w[:first_half], w[first_half:].mul(-1).add(2)])
    return _window("bartlett_window", window_length, periodic, dtype, layout, device,
                   requires_grad, make)


def _i0_terms(x):
    """How many terms of I0's series sum(((x/2)^2)^k / (k!)^2) reach float64
    precision at |x| (the terms grow with |x|, so this bounds smaller
    arguments too)."""
    q, term, total, k = (x * 0.5) ** 2, 1.0, 1.0, 0
    while k < 100000:
        k += 1
        term = term * q / (k * k)
        total += term
        if not term > total * 2.0 ** -54:  # also stops on inf and nan
            break
    return k


def _i0(x, terms):
    """I0 of a float64 tensor, summed as its power series."""
    q = x.mul(0.5)
    q = q * q
    term = total = ones_like(x)
    for k in range(1, terms + 1):
        term = term.mul(q).div(k * k)
        total = total + term
    return total


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, requires_grad=False):
    """I0(beta sqrt(1 - ((n - a) / a)^2)) / I0(beta), a = (N - 1) / 2."""
    beta = float(beta)

    def make(n, dtype, device):
        a = (n - 1) / 2.0
        r = arange(n, dtype=float64, device=device).sub(a).div(a)
        arg = (1 - r * r).clamp(min=0).sqrt().mul(beta)
        terms = _i0_terms(abs(beta))
        i0_beta = _i0(full((1,), beta, dtype=float64, device=device), terms)
        return _i0(arg, terms).div(i0_beta).to(dtype)
    return _window("kaiser_window", window_length, periodic, dtype, layout, device,
                   requires_grad, make)
