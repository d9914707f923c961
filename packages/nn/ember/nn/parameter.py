"""Parameter: a Tensor that a Module registers as one of its parameters."""
import ember

__all__ = ["Parameter", "Buffer", "is_parameter"]


class Parameter(ember.Tensor):
    """A leaf tensor that, assigned as a Module attribute, is registered as a
    parameter. ``Parameter(data, requires_grad=True)`` shares ``data``'s
    storage, as PyTorch's does."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = ember.empty(0)
        if not isinstance(data, ember.Tensor):
            raise TypeError(f"Parameter expects a Tensor as data, got {type(data).__name__}")
        return ember.Tensor._make_subclass(cls, data.detach(), requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (self.detach(), self.requires_grad))


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)


class Buffer:
    """Marks a tensor as a buffer when assigned as a Module attribute
    (``self.running_mean = Buffer(ember.zeros(3))``)."""

    def __init__(self, data, persistent=True):
        self.data = data
        self.persistent = persistent


def is_parameter(obj):
    return isinstance(obj, Parameter)
