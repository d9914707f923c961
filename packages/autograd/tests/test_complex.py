"""Complex tensors in the front: creation and conversion, the complex ops on
real inputs, and gradients in PyTorch's convention (for a real loss L of
z = x + iy, z.grad = dL/dx + i dL/dy), checked with gradcheck and
gradgradcheck through the (re, im) pairs and against closed forms."""
import warnings

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck


@pytest.fixture
def rng():
    return np.random.default_rng(3)


def _z(rng, *shape, grad=True):
    a = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    return ember.tensor(a, requires_grad=grad)


def test_dtypes_and_creation():
    assert ember.cfloat is ember.complex64 and ember.cdouble is ember.complex128
    z = ember.tensor([1 + 2j])
    assert z.dtype == ember.complex64 and z.is_complex() and not z.is_floating_point()
    assert ember.zeros(2, dtype=ember.complex128, requires_grad=True).requires_grad
    assert ember.finfo(ember.complex64).eps == ember.finfo(ember.float32).eps
    assert ember.ones(2).cdouble().dtype == ember.complex128
    assert ember.tensor(2j).type() == "ember.ComplexFloatTensor"
    assert "requires_grad=True" in repr(_z(np.random.default_rng(0), 2))
    old = ember.get_default_dtype()
    try:
        ember.set_default_dtype(ember.float64)
        assert ember.tensor([1j]).dtype == ember.complex128
    finally:
        ember.set_default_dtype(old)


def test_casting_complex_to_real_warns_and_keeps_the_real_part():
    z = ember.tensor([1 + 2j, -3j])
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        r = z.to(ember.float32)
    assert r.tolist() == [1.0, 0.0]
    target = ember.full((2,), 7.0)
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        target.copy_(z)
    assert target.tolist() == [1.0, 0.0]
    with warnings.catch_warnings():  # complex into complex, real into complex: silent
        warnings.simplefilter("error")
        ember.zeros(2, dtype=ember.complex64).copy_(z)
        ember.zeros(2, dtype=ember.complex64).copy_(target)


def test_ops_on_real_inputs():
    x = ember.tensor([-1.5, 0.0, 2.0, float("nan")])
    assert ember.conj(x) is not None and ember.conj(x).tolist()[:3] == [-1.5, 0.0, 2.0]
    np.testing.assert_allclose(ember.angle(x).numpy(), [np.pi, 0, 0, np.nan])
    assert ember.angle(ember.tensor([-2, 3])).dtype == ember.get_default_dtype()
    assert x.real is x
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with "
                                           "non-complex dtypes"):
        x.imag
    assert not ember.is_conj(x) and ember.resolve_conj(x) is x


def test_real_and_imag_assignment():
    z = ember.tensor([1 + 2j, 3 + 4j])
    z.real = ember.tensor([5.0, 6.0])
    z.imag.mul_(2)
    assert z.tolist() == [5 + 4j, 6 + 8j]


ELEMENTWISE = [
    lambda a, b: a * b, lambda a, b: a / b, lambda a, b: a - b * 2j, lambda a, b: a ** b,
    lambda a, b: (a * b).abs(), lambda a, b: a.exp() * b.conj(), lambda a, b: a.log() + b.sqrt(),
    lambda a, b: a.sin() * b.cos() + a.tanh(), lambda a, b: a.reciprocal() - b.square(),
    lambda a, b: a.sigmoid() * b, lambda a, b: (a * 1j + 1).mean(), lambda a, b: a.sum(0) * b,
    lambda a, b: a.angle() + b.abs(), lambda a, b: a.real * b.imag,
    lambda a, b: ember.view_as_real(a) * ember.view_as_real(b).flip(-1),
    lambda a, b: ember.view_as_complex(ember.view_as_real(a) * 3) / b,
    lambda a, b: ember.polar(a.abs(), b.angle()), lambda a, b: a[1:] + b[:-1].neg(),
    lambda a, b: a.tan() + b.sinh() * a.cosh(), lambda a, b: a.asin() - b.acos() + a.atan(),
    lambda a, b: a.asinh() * b.atanh(), lambda a, b: a.rsqrt() + b.log2() - a.exp2() * b.log10(),
    lambda a, b: (a.abs() + 1 + b * 0.1).acosh(),  # Re > 0: PyTorch's formula holds there
    lambda a, b: a.cumsum(0) * b,
]


@pytest.mark.parametrize("k", range(len(ELEMENTWISE)))
def test_gradcheck(rng, k):
    f = ELEMENTWISE[k]
    a, b = _z(rng, 4), _z(rng, 4)
    assert gradcheck(f, (a, b))
    assert gradgradcheck(f, (a, b))


def test_real_operand_of_a_complex_op_gets_the_real_part(rng):
    x = ember.tensor(rng.standard_normal(4), requires_grad=True)
    z = _z(rng, 4, grad=False)
    ember.view_as_real(x * z).sum().backward()
    c = z.detach().numpy()
    # d/dx sum(re(x z) + im(x z)) = re(z) + im(z)
    np.testing.assert_allclose(x.grad.numpy(), c.real + c.imag)
    assert x.grad.dtype == ember.float64
    assert gradcheck(lambda x: x * z, (x,))
    assert gradcheck(lambda x: ember.complex(x, x * 2).abs(), (x,))
    assert gradcheck(lambda x: x.to(ember.complex128).exp(), (x,))


def test_closed_form_gradients(rng):
    z = _z(rng, 5)
    (z * z.conj()).real.sum().backward()          # L = sum |z|^2: grad 2 z
    np.testing.assert_allclose(z.grad.numpy(), 2 * z.detach().numpy())
    w = _z(rng, 5)
    w.abs().sum().backward()                      # L = sum |w|: grad w / |w|
    c = w.detach().numpy()
    np.testing.assert_allclose(w.grad.numpy(), c / np.abs(c))
    zero = ember.zeros(1, dtype=ember.complex128, requires_grad=True)
    zero.abs().sum().backward()                   # 0 at z = 0, as PyTorch
    assert zero.grad.tolist() == [0j]
    zero.grad = None
    zero.angle().sum().backward()
    assert zero.grad.tolist() == [0j]


def test_backward_of_a_complex_scalar_needs_a_gradient(rng):
    z = _z(rng, 3)
    with pytest.raises(RuntimeError, match="only for real scalar outputs"):
        z.sum().backward()
    z.sum().backward(ember.tensor(1 + 0j, dtype=ember.complex128))
    assert z.grad.tolist() == [1 + 0j] * 3


def test_ember_complex_argument_errors():
    with pytest.raises(TypeError, match="must be Tensor"):
        ember.complex(1.0, ember.ones(1))
    with pytest.raises(RuntimeError, match="Expected object of scalar type"):
        ember.complex(ember.ones(1, dtype=ember.float64), ember.ones(1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        z = ember.complex(ember.ones(2, requires_grad=True), ember.zeros(2))
    assert z.dtype == ember.complex64 and z.requires_grad
