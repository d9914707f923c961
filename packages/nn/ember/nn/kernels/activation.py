"""Activations: relu (the in-place form stays an ember op)."""
from ember._ops.samples import S, T

from . import Kernel


class relu(Kernel):
    """(input,) -> max(input, 0), out of place."""
    samples = [S(T(3, 4))]
    differentiable = 1
    node = "ReluBackward0"
    requires = "activation_forward"

    @staticmethod
    def composed(input):
        return input.relu()

    @classmethod
    def forward(cls, x):
        if not cls.floats(x):
            return NotImplemented
        return cls.k.activation_forward("relu", x), None

    @classmethod
    def backward(cls, ctx, g, inputs, needs):
        return (cls.k.activation_backward_input("relu", g.contiguous(), inputs[0]),)
