"""Activations: relu (the in-place form stays an ember op), softmax and
log_softmax along a dim."""
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


class _softmax_family(Kernel):
    """Shared spec of softmax and log_softmax: (input, dim); the backward
    takes the output, which the forward keeps."""
    samples = [S(T(3, 4), 1), S(T(3, 4), 0), S(T(2, 3, 5), -1), S(T(2, 3, 4), 1),
               S(T(5), 0), S(T(2, 0), 1)]
    differentiable = 1

    @classmethod
    def forward(cls, x, dim):
        if not cls.floats(x):
            return NotImplemented
        y = getattr(cls.k, f"{cls.name}_forward")(x, dim)
        return y, (y, dim)

    @classmethod
    def backward(cls, ctx, g, inputs, needs):
        y, dim = ctx
        return (getattr(cls.k, f"{cls.name}_backward_input")(g.contiguous(), y, dim),)


class softmax(_softmax_family):
    """(input, dim) -> exp(input) / sum(exp(input)) along dim."""
    node = "SoftmaxBackward0"

    @staticmethod
    def composed(input, dim):
        return input.softmax(dim)


class log_softmax(_softmax_family):
    """(input, dim) -> log(softmax(input)) along dim (the Transformer LM's
    classifier: one pass each way instead of four composed ones)."""
    node = "LogSoftmaxBackward0"

    @staticmethod
    def composed(input, dim):
        return input.log_softmax(dim)
