"""Complex numbers: the views between a complex tensor and its (re, im)
pairs, .real/.imag, conj, angle, polar and complex, with gradients in
PyTorch's convention (for a real loss L of z = x + iy the gradient is
dL/dx + i dL/dy; the element-wise formulas conjugate their derivative, see
ember.autograd.nodes._conjugated)."""
import math

from .._creation import get_default_dtype
from .._device import namespace
from .._tensor import Tensor, _make
from ..autograd import grad_mode
from .define import op, register
from .samples import S, T

_mode = grad_mode.state


@op(view=True, method=False)
class view_as_real:
    """A complex tensor as its real dtype with a last dim of 2 (re, im),
    sharing memory."""

    def forward(input):
        return _raw(input, "view_as_real")(input._data)

    def backward(g):
        return view_as_complex(g.contiguous())

    samples = [S(T(3, 4, complex=True)), S(T(complex=True))]


@op(view=True, method=False, contiguous_only=True)  # pairs need their last stride 1
class view_as_complex:
    """A float32/float64 tensor whose last dim holds (re, im) pairs as a
    complex tensor, sharing memory."""

    def forward(input):
        return _raw(input, "view_as_complex")(input._data)

    def backward(g):
        return view_as_real(g)

    samples = [S(T(3, 2)), S(T(2, 3, 2))]


@op(view=True, method=False)
class real:
    """The real parts (a view; a real tensor is returned as is)."""

    def forward(input):
        if not input.is_complex():
            return input._data
        return _raw(input, "real")(input._data)

    def save(out, input):
        return (input.dtype,)

    def backward(g, dtype):
        return g.to(dtype)

    samples = [S(T(3, 4, complex=True))]


@op(view=True, method=False)
class imag:
    """The imaginary parts of a complex tensor (a view)."""

    def forward(input):
        return _raw(input, "imag")(input._data)

    def save(out, input):
        return (input.dtype,)

    def backward(g, dtype):
        return g.to(dtype) * 1j

    samples = [S(T(3, 4, complex=True))]


@op(aliases=("conj_physical",))
class conj:
    """The complex conjugate (new memory; a real tensor is returned as is)."""

    def forward(input):
        if not input.is_complex():
            return input._data
        return _raw(input, "conj")(input._data)

    def backward(g):
        return g.conj()

    samples = [S(T(3, 4, complex=True))]  # real inputs: tests/test_complex.py


@op()
class angle:
    """arg z; for real inputs 0 where x >= 0, pi where x < 0."""

    def forward(input):
        d = input._data
        if input.is_complex():
            return _raw(input, "angle")(d)
        if not d.dtype.is_floating_point:
            d = d.to(get_default_dtype())
        return (d < 0).to(d.dtype).mul(math.pi).where(d == d, d)  # NaN stays NaN

    def save(out, input):
        return (input,)

    def backward(g, z):
        if not z.is_complex():
            return g * 0
        # d arg z = Im(dz / z): the gradient g i z / |z|^2 (0 at z = 0)
        r2 = (z * z.conj()).real
        return (g * z * 1j / r2.masked_fill(r2 == 0, 1)).masked_fill(z == 0, 0)

    samples = [S(T(3, 4, complex=True))]  # real inputs: tests/test_complex.py


def _raw(t, name):
    """The raw function `name` of t's device library (ember.th's on the
    CPU); NotImplementedError where that library has no complex tensors."""
    fn = getattr(namespace(t.device), name, None)
    if fn is None:
        raise NotImplementedError(f"{name} of a {t.device.type} tensor: ember-thc has no "
                                  "complex tensors yet")
    return fn


def resolve_conj(input):
    """Conjugation is never lazy here: the tensor itself."""
    return input


def resolve_neg(input):
    return input


def is_conj(input):
    return False


def complex(real, imag):
    """real + i imag: float32 parts give complex64, float64 complex128
    (shapes broadcast)."""
    for name, t in (("real", real), ("imag", imag)):
        if not isinstance(t, Tensor):
            raise TypeError(f"complex(): argument '{name}' must be Tensor, not "
                            f"{type(t).__name__}")
    if _mode.enabled and (real._requires_grad or imag._requires_grad):
        dtype = _raw(real, "complex_dtype_of")(real.dtype, imag.dtype)  # PyTorch's errors
        return real.to(dtype) + imag.to(dtype) * 1j
    return _make(_raw(real, "complex")(real._data, imag._data))


def polar(abs, angle):
    """abs (cos(angle) + i sin(angle))."""
    return complex(abs * angle.cos(), abs * angle.sin())


for _f in (resolve_conj, resolve_neg):
    register(_f.__name__, function=_f, method=_f, samples=[S(T(3, complex=True))])
register("is_conj", function=is_conj, method=is_conj, differentiable=False)
register("complex", function=complex, samples=[S(T(3), T(3)), S(T(2, 3), T(3))])
register("polar", function=polar, samples=[S(T(3, low=0.2, high=2.0), T(3))])


def _real_property(self):
    return real(self) if self.is_complex() else self


def _set_part(part):
    def setter(self, value):  # z.real = x writes the real parts in place
        part(self).copy_(value)
    return setter


Tensor.real = property(_real_property, _set_part(_real_property))
Tensor.imag = property(imag, _set_part(imag))
