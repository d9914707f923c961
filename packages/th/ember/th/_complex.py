"""Complex tensors: views as pairs of reals (view_as_real/view_as_complex,
.real, .imag), conj, angle, polar, complex, and sum/mean of complex values
(through the real view).  libTH's complex.c holds the element-wise loops
complex dtypes have (arithmetic, comparisons for equality, exp/log/sqrt,
trigonometry, abs); other ops refuse them with "not implemented for
'ComplexFloat'"."""
import math

from . import dtypes as _dt
from ._binding import registrar
from ._core import Tensor, wrap
from ._lib import lib

_functions = {}
_register = registrar(Tensor, _functions)


def view_as_real(input):
    """A complex tensor as its real dtype with a last dim of 2 (re, im),
    sharing memory."""
    return wrap(lib.th_view_as_real(input._p))


def view_as_complex(input):
    """A float32/float64 tensor whose last dim is (re, im) pairs as a complex
    tensor, sharing memory."""
    return wrap(lib.th_view_as_complex(input._p))


def is_complex(input):
    return input.dtype.is_complex


def _real(self):
    return view_as_real(self).select(-1, 0) if self.dtype.is_complex else self


def _imag(self):
    if not self.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return view_as_real(self).select(-1, 1)


def _set_real(self, value):
    _real(self).copy_(value)


def _set_imag(self, value):
    _imag(self).copy_(value)


def real(input):
    return _real(input)


def imag(input):
    return _imag(input)


def conj_physical(input):
    """The complex conjugate, in new memory (a real tensor is returned as is,
    as PyTorch's conj)."""
    return wrap(lib.th_conj(input._p)) if input.dtype.is_complex else input


def conj(input):
    return conj_physical(input)


def resolve_conj(input):
    return input  # conj is never lazy here


def resolve_neg(input):
    return input


def is_conj(input):
    return False


def angle(input):
    """arg z for complex inputs; for real ones 0 where x >= 0, pi where
    x < 0 and NaN where x is NaN, in a floating dtype."""
    if input.dtype.is_complex:
        return wrap(lib.th_complex_angle(input._p))
    x = input if input.dtype.is_floating_point else input.to(_dt.get_default_dtype())
    return (x < 0).to(x.dtype).mul(math.pi).where(x == x, x)


def polar(abs, angle):
    """abs * (cos(angle) + i sin(angle))."""
    return complex(abs * angle.cos(), abs * angle.sin())


def complex(real, imag):
    """The complex tensor real + i imag (float32 parts give complex64,
    float64 complex128; shapes broadcast)."""
    for name, t in (("real", real), ("imag", imag)):
        if not isinstance(t, Tensor):
            raise TypeError(f"complex(): argument '{name}' must be Tensor, not "
                            f"{type(t).__name__}")
    dtype = complex_dtype_of(real.dtype, imag.dtype)
    shape = _broadcast_shape(real.shape, imag.shape)
    from ._convert import empty
    out = empty(shape, dtype=dtype)
    pairs = view_as_real(out)
    pairs.select(-1, 0).copy_(real)
    pairs.select(-1, 1).copy_(imag)
    return out


def complex_dtype_of(real, imag):
    """The dtype of complex(real, imag) for parts of dtypes real and imag
    (PyTorch's errors where they cannot make one)."""
    if real is not imag:
        raise RuntimeError(f"Expected object of scalar type {real._title} but got "
                           f"scalar type {imag._title} for second argument")
    if real not in (_dt.float32, _dt.float64, _dt.float16):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but "
                           f"got {real._title} and {imag._title}")
    return _dt.complex128 if real is _dt.float64 else _dt.complex64


def _broadcast_shape(a, b):
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b "
                               f"({y}) at non-singleton dimension {len(out)}")
        out.append(y if x == 1 else x)
    return tuple(out)


def complex_reduction(real_fn):
    """sum/mean of complex values: the reduction of the (re, im) real view
    over the same dims (the pairs' dim kept out of it)."""
    def reduce(input, dim=None, keepdim=False, *, dtype=None):
        pairs = view_as_real(input)
        if dim is None:
            dims = tuple(range(input.ndim))
        else:
            dims = (dim,) if isinstance(dim, int) else tuple(dim)
            n = max(input.ndim, 1)
            for d in dims:
                if not -n <= d < n:
                    raise IndexError(f"Dimension out of range (expected to be in range of "
                                     f"[{-n}, {n - 1}], but got {d})")
            dims = tuple(d % n for d in dims) if input.ndim else ()
        r = real_fn(pairs, dims, keepdim=keepdim) if dims else pairs.clone()
        r = view_as_complex(r.contiguous())
        return r if dtype is None else r.to(dtype)
    return reduce


for _f in (view_as_real, view_as_complex, is_complex, real, imag, conj, conj_physical,
           resolve_conj, resolve_neg, is_conj, angle, polar, complex):
    _register(_f, method=_f not in (view_as_real, view_as_complex, polar, complex, real,
                                    imag))
_register(complex_dtype_of, method=False)
Tensor.real = property(_real, _set_real)
Tensor.imag = property(_imag, _set_imag)

functions = _functions
