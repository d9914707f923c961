"""libTH's discrete Fourier transforms along one dim (src/fft.c): the
three building blocks ember.fft composes its transforms from.  Each takes
a tensor of any strides and returns a new contiguous one; `scale`
multiplies the unnormalised transform."""
from ._binding import registrar
from ._core import Tensor, wrap
from ._lib import lib

_functions = {}
_register = registrar(Tensor, _functions)


def fft_supported(n, real=False):
    """Whether libTH has a kernel for a transform of length n (complex, or
    real when `real`): lengths whose prime factors are all <= 61."""
    return bool(lib.th_fft_supported(n, 1 if real else 0))


def fft_c2c(input, dim, inverse=False, scale=1.0):
    """scale * sum_j x_j e^{-+2 pi i jk/n} along dim of a complex tensor (the
    sign + when inverse)."""
    return wrap(lib.th_fft_c2c(input._p, dim, 1 if inverse else 0, float(scale)))


def fft_r2c(input, dim, scale=1.0):
    """The n // 2 + 1 non-negative frequencies of a float32/float64 tensor's
    forward transform along dim."""
    return wrap(lib.th_fft_r2c(input._p, dim, float(scale)))


def fft_c2r(input, dim, n, scale=1.0):
    """The n real values whose one-sided spectrum is input's first
    n // 2 + 1 values along dim (inverse transform, times scale)."""
    return wrap(lib.th_fft_c2r(input._p, dim, n, float(scale)))


for _f in (fft_supported, fft_c2c, fft_r2c, fft_c2r):
    _register(_f, method=False)

functions = _functions
