"""Custom ops with ember.autograd.Function."""
import numpy as np
import pytest

import ember
from ember.autograd import Function, gradcheck, gradgradcheck, once_differentiable


class NumpyExp(Function):
    """The README's example: forward in NumPy, backward in ember ops."""

    @staticmethod
    def forward(ctx, x):
        y = ember.from_numpy(np.exp(x.detach().numpy()))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y


def leaf(*shape):
    return ember.randn(*shape, dtype=ember.float64, requires_grad=True)


def test_function_with_numpy_forward():
    x = leaf(3)
    y = NumpyExp.apply(x)
    assert type(y.grad_fn).__name__ == "NumpyExpBackward"
    assert y.grad_fn.next_functions[0][0].variable is x
    y.sum().backward()
    assert ember.allclose(x.grad, x.detach().exp())
    assert gradcheck(NumpyExp.apply, (leaf(3),))
    assert gradgradcheck(NumpyExp.apply, (leaf(3),))  # backward uses ember ops


def test_function_without_grad_returns_plain_tensors():
    y = NumpyExp.apply(ember.ones(2, dtype=ember.float64))
    assert y.grad_fn is None and not y.requires_grad


class ScaleAndShift(Function):
    @staticmethod
    def forward(ctx, x, scale, shift):
        ctx.scale = scale
        return x * scale + shift

    @staticmethod
    def backward(ctx, grad):
        assert ctx.needs_input_grad == (True, False, True)
        return grad * ctx.scale, None, grad.sum()


def test_non_tensor_arguments_and_needs_input_grad():
    x, shift = leaf(3), leaf()
    ScaleAndShift.apply(x, 2.5, shift).sum().backward()
    assert x.grad.tolist() == [2.5] * 3 and shift.grad.item() == 3.0


class WrongCount(Function):
    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, grad):
        return (grad,)


def test_wrong_number_of_gradients():
    with pytest.raises(RuntimeError, match=r"function WrongCountBackward returned an incorrect "
                       r"number of gradients \(expected 2, got 1\)"):
        WrongCount.apply(leaf(2), leaf(2)).sum().backward()


class AddOneInPlace(Function):
    @staticmethod
    def forward(ctx, x):
        x._data.add_(1)  # raw write, as a kernel would
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad


def test_mark_dirty():
    x = leaf(3)
    h = x * 2
    out = AddOneInPlace.apply(h)
    assert out is h and type(h.grad_fn).__name__ == "AddOneInPlaceBackward"
    h.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        AddOneInPlace.apply(leaf(3))


class SortWithIndices(Function):
    @staticmethod
    def forward(ctx, x):
        values, indices = x.sort()
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        return values, indices

    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        (indices,) = ctx.saved_tensors
        return ember.zeros_like(grad_values).scatter(0, indices, grad_values)


def test_mark_non_differentiable_and_several_outputs():
    x = leaf(4)
    values, indices = SortWithIndices.apply(x)
    assert values.requires_grad and not indices.requires_grad
    assert values.grad_fn is not None and values.output_nr == 0
    (values * ember.arange(4.0, dtype=ember.float64)).sum().backward()
    expected = ember.zeros(4, dtype=ember.float64)
    expected[indices] = ember.arange(4.0, dtype=ember.float64)
    assert ember.equal(x.grad, expected)


class SquareOnce(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return ember.from_numpy(2 * x.detach().numpy() * grad.detach().numpy())


def test_once_differentiable():
    x = leaf(3)
    # the gradient reaching SquareOnce's backward depends on x, so it requires grad
    (g,) = ember.autograd.grad((SquareOnce.apply(x) * x).sum(), x, create_graph=True)
    assert ember.allclose(g, 3 * x.detach() ** 2)
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was "
                       "marked with @once_differentiable"):
        g.sum().backward()


class SetupContextStyle(Function):
    @staticmethod
    def forward(x, k):
        return x * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.k = inputs[1]

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.k, None


def test_setup_context_style():
    x = leaf(2)
    SetupContextStyle.apply(x, 3.0).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_saved_tensor_version_check_and_freeing():
    x = leaf(3)
    h = x * 1
    y = NumpyExp.apply(h)
    y.add_(1)  # the saved output
    with pytest.raises(RuntimeError, match="modified by an inplace operation.*output 0 of "
                       "NumpyExpBackward"):
        y.sum().backward()
    z = NumpyExp.apply(x * 1)
    z.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second"):
        z.sum().backward()


def test_legacy_instances_are_rejected():
    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward"):
        NumpyExp()
