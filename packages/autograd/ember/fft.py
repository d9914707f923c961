"""ember.fft: PyTorch's ``torch.fft``, as far as Ember's dtypes allow.

Ember has no complex dtypes yet.  Every transform of torch.fft either
returns a complex tensor (fft, ifft, rfft, fft2, ifft2, rfft2, fftn,
ifftn, rfftn, ihfft) or reads one (irfft, irfft2, irfftn, hfft), so the
transforms wait for complex64/complex128 storage; they raise
NotImplementedError saying so, rather than returning real tensors in a
layout PyTorch does not have.  The helpers that need no complex numbers
are here: fftfreq, rfftfreq, fftshift and ifftshift (differentiable)."""
from ._creation import arange, get_default_dtype
from ._tensor import Tensor

__all__ = ["fftfreq", "rfftfreq", "fftshift", "ifftshift", "fft", "ifft", "rfft", "irfft",
           "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfft",
           "ihfft"]


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


def _complex_transform(name):
    def transform(input, *args, **kwargs):
        raise NotImplementedError(
            f"ember.fft.{name}: Ember has no complex dtypes yet, and {name} returns or "
            "reads a complex tensor; the transforms of ember.fft wait for complex64/"
            "complex128 support (fftfreq, rfftfreq, fftshift and ifftshift are available)")
    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = f"Not available yet: {name} needs complex dtypes."
    return transform


for _name in ("fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn",
              "ifftn", "rfftn", "irfftn", "hfft", "ihfft"):
    globals()[_name] = _complex_transform(_name)
