"""Sample inputs in the op table: the argument lists the tests call every op
with (gradcheck, gradgradcheck, PyTorch conformance).

They only describe arguments; the tests make the tensors (float64, and
in a non-contiguous layout as well).
"""


class T:
    """A floating-point tensor argument that requires grad.

    `low`/`high` bound its values (for ops defined on part of the line);
    `grad=False` makes it a constant; `complex=True` a complex one (real
    and imaginary parts each in [low, high)).
    """

    __slots__ = ("shape", "low", "high", "grad", "complex")

    def __init__(self, *shape, low=-2.0, high=2.0, grad=True, complex=False):
        self.shape = shape
        self.low = low
        self.high = high
        self.grad = grad
        self.complex = complex

    def __repr__(self):
        return f"{'C' if self.complex else 'T'}{self.shape}"


class Index:
    """An int64 tensor argument: fixed values, or random in [0, high)."""

    __slots__ = ("values", "shape", "high")

    def __init__(self, values=None, *, shape=None, high=None):
        self.values = values
        self.shape = shape
        self.high = high

    def __repr__(self):
        return f"Index({self.values if self.values is not None else self.shape})"


class Mask:
    """A bool tensor argument (random, with at least one True)."""

    __slots__ = ("shape",)

    def __init__(self, *shape):
        self.shape = shape

    def __repr__(self):
        return f"Mask{self.shape}"


class Const:
    """A float tensor argument with given values that does not require grad
    (targets such as +1/-1 labels)."""

    __slots__ = ("values",)

    def __init__(self, values):
        self.values = values

    def __repr__(self):
        return f"Const({self.values})"


class S:
    """One sample: positional and keyword arguments (T/Index/Mask inside
    are made into tensors; lists of them stay lists)."""

    __slots__ = ("args", "kwargs", "name")

    def __init__(self, *args, name=None, **kwargs):
        self.args = args
        self.kwargs = kwargs
        self.name = name

    def __repr__(self):
        if self.name:
            return self.name
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return ",".join(parts).replace(" ", "")
