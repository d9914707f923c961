"""``Variable``: the pre-0.4 PyTorch wrapper, kept so old code runs.
``Variable(t, requires_grad=True)`` returns the tensor itself, and every
tensor is an instance of Variable."""
from .._tensor import Tensor


class _VariableMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    def __new__(cls, data, requires_grad=False, volatile=False):
        if requires_grad:
            data.requires_grad_(True)
        return data
