"""The frequency helpers of ember.fft: fftfreq, rfftfreq, fftshift and
ifftshift (differentiable)."""
from .._creation import arange, get_default_dtype
from .._tensor import Tensor


def _freq(name, n, d):
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"{name}(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    if n < 0:
        raise RuntimeError(f"{name}: n must be non-negative, got {n}")


def fftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of an n-point transform with sample spacing
    d: [0, 1, ..., ceil(n/2) - 1, -floor(n/2), ..., -1] / (d n)."""
    _freq("fftfreq", n, d)
    k = arange(n, dtype=dtype or get_default_dtype(), device=device)
    if n:
        k = (k - (k >= (n + 1) // 2).to(k.dtype) * n) / (d * n)
    return k.requires_grad_(requires_grad)


def rfftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of an n-point real transform: [0, 1, ...,
    floor(n/2)] / (d n)."""
    _freq("rfftfreq", n, d)
    k = arange(n // 2 + 1, dtype=dtype or get_default_dtype(), device=device)
    k = k / (d * n)  # n = 0: [nan], as PyTorch
    return k.requires_grad_(requires_grad)


def _shift(name, input, dim, sign):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if dim is None:
        dim = tuple(range(input.dim()))
    elif isinstance(dim, int):
        dim = (dim,)
    dim = tuple(dim)
    if not dim:
        return input.clone()
    shifts = tuple(sign * (input.shape[d] // 2) for d in dim)
    return input.roll(shifts, dim)


def fftshift(input, dim=None):
    """Moves the zero frequency to the centre: a roll by n // 2 along each
    dim (all dims by default)."""
    return _shift("fftshift", input, dim, 1)


def ifftshift(input, dim=None):
    """The inverse of fftshift: a roll by -(n // 2)."""
    return _shift("ifftshift", input, dim, -1)
