"""ember.fft: PyTorch's ``torch.fft``.

The transforms (fft, ifft, rfft, irfft, hfft, ihfft and their 2-d and n-d
forms) take n/s, dim and norm ("backward", "ortho", "forward") as PyTorch
does, promote integer inputs to the default float dtype and real inputs of
the complex transforms to complex, and are differentiable (see
_transforms.py: NumPy's pocketfft computes them on the CPU).  fftfreq,
rfftfreq, fftshift and ifftshift are the helpers; stft/istft (ember.stft,
ember.istft) are built on rfft/fft."""
import numbers

from .._creation import get_default_dtype
from .._tensor import Tensor
from . import _transforms
from ._helpers import fftfreq, fftshift, ifftshift, rfftfreq
from ._transforms import DUAL, resize

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
           "hfft2", "ihfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftfreq",
           "rfftfreq", "fftshift", "ifftshift"]


# ---- arguments ---------------------------------------------------------------
def _norm(norm):
    if norm is None:
        return "backward"
    if norm not in DUAL:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return norm


def _input(name, x, kind):
    """x in the dtype the transform computes in: kind "complex" (c2c, c2r:
    real inputs become complex) or "real" (r2c: complex inputs refused)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"fft_{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    d = x.dtype
    if d.name in ("float16", "bfloat16"):
        raise RuntimeError(f"Unsupported dtype {d._title}")
    if not (d.is_floating_point or d.is_complex):
        x = x.to(get_default_dtype())
        d = x.dtype
    if kind == "real" and d.is_complex:
        raise RuntimeError(f"{name} expects a real input tensor, but got {d._title}")
    if kind == "complex" and not d.is_complex:
        x = x.to(d.to_complex())
    return x


def _dim(x, dim):
    n = max(x.ndim, 1)
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
        raise TypeError(f"dim must be an int, not {type(dim).__name__}")
    if not -n <= dim < n or x.ndim == 0:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return int(dim) % n


def _points(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return n


def _dims_sizes(x, s, dim):
    """(dims, sizes) of an n-d transform, as PyTorch reads s and dim."""
    if dim is not None:
        dims = [_dim(x, d) for d in ((dim,) if isinstance(dim, numbers.Integral) else dim)]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    elif s is not None:
        if len(s) > x.ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{x.ndim} dimensions.")
        dims = list(range(x.ndim - len(s), x.ndim))
    else:
        dims = list(range(x.ndim))
    sizes = [x.shape[d] if s is None or s[i] == -1 else int(s[i]) for i, d in enumerate(dims)]
    return tuple(dims), sizes


def _out(result, out):
    return result if out is None else out.copy_(result)


# ---- one dimension -------------------------------------------------------------
def _c2c(name, forward, input, n, dim, norm, out):
    x = _input(name, input, "complex")
    d = _dim(x, dim)
    x = resize(x, d, _points(x.shape[d] if n is None else n))
    return _out(_transforms.C2C.apply(x, (d,), _norm(norm), forward), out)


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """The discrete Fourier transform along dim (of n points: input
    truncated or zero-padded)."""
    return _c2c("fft", True, input, n, dim, norm, out)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of fft."""
    return _c2c("ifft", False, input, n, dim, norm, out)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """fft of a real input, keeping the n // 2 + 1 non-negative frequencies."""
    x = _input("rfft", input, "real")
    d = _dim(x, dim)
    x = resize(x, d, _points(x.shape[d] if n is None else n))
    return _out(_transforms.R2C.apply(x, (d,), _norm(norm)), out)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of rfft: a real signal of n points (default 2 (m - 1)
    for m input frequencies)."""
    x = _input("irfft", input, "complex")
    d = _dim(x, dim)
    n = _points(2 * (x.shape[d] - 1) if n is None else n)
    x = resize(x, d, n // 2 + 1)
    return _out(_transforms.C2R.apply(x, (d,), n, _norm(norm)), out)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The real transform of a signal with Hermitian symmetry given by its
    first half (the inverse of ihfft)."""
    x = _input("hfft", input, "complex")
    return irfft(x.conj(), n, dim, DUAL[_norm(norm)], out=out)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of hfft: the first half of ifft of a real input."""
    return _out(rfft(input, n, dim, DUAL[_norm(norm)]).conj(), out)


# ---- several dimensions ------------------------------------------------------
def _c2c_n(name, forward, input, s, dim, norm, out):
    x = _input(name, input, "complex")
    dims, sizes = _dims_sizes(x, s, dim)
    for d, n in zip(dims, sizes):
        x = resize(x, d, _points(n))
    if not dims:
        return _out(x.clone(), out)
    return _out(_transforms.C2C.apply(x, dims, _norm(norm), forward), out)


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-dimensional discrete Fourier transform over dim (all dims by
    default; the last len(s) when s is given)."""
    return _c2c_n("fftn", True, input, s, dim, norm, out)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of fftn."""
    return _c2c_n("ifftn", False, input, s, dim, norm, out)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """fftn of a real input, one-sided along the last of dim."""
    x = _input("rfftn", input, "real")
    dims, sizes = _dims_sizes(x, s, dim)
    if not dims:
        raise RuntimeError("rfftn must transform at least one axis")
    for d, n in zip(dims, sizes):
        x = resize(x, d, _points(n))
    return _out(_transforms.R2C.apply(x, dims, _norm(norm)), out)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of rfftn (the last of dim gives 2 (m - 1) points unless
    s says otherwise)."""
    x = _input("irfftn", input, "complex")
    dims, sizes = _dims_sizes(x, s, dim)
    if not dims:
        raise RuntimeError("irfftn must transform at least one axis")
    last = dims[-1]
    if s is None or s[-1] == -1:
        sizes[-1] = 2 * (x.shape[last] - 1)
    n = _points(sizes[-1])
    for d, size in zip(dims[:-1], sizes[:-1]):
        x = resize(x, d, _points(size))
    x = resize(x, last, n // 2 + 1)
    return _out(_transforms.C2R.apply(x, dims, n, _norm(norm)), out)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-dimensional hfft: irfftn of the conjugate (the inverse of
    ihfftn)."""
    x = _input("hfftn", input, "complex")
    return irfftn(x.conj(), s, dim, DUAL[_norm(norm)], out=out)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-dimensional ihfft: the conjugate of rfftn."""
    return _out(rfftn(input, s, dim, DUAL[_norm(norm)]).conj(), out)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return fftn(input, s, dim, norm, out=out)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return ifftn(input, s, dim, norm, out=out)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return rfftn(input, s, dim, norm, out=out)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return irfftn(input, s, dim, norm, out=out)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return hfftn(input, s, dim, norm, out=out)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return ihfftn(input, s, dim, norm, out=out)


for _f in (fft2, ifft2, rfft2, irfft2, hfft2, ihfft2):
    _f.__doc__ = f"{_f.__name__[:-1]}n over two dims (the last two by default)."
