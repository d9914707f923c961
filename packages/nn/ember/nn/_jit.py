"""ember.nn's dispatch points for ember.jit's tracer.

- every NN kernel (ember.nn.kernels' declarations) as ``nn.<kernel>``;
- the functional forms whose parts would bake sizes or random draws into
  a trace, or that have one ONNX operator, as ``nn.F.<name>``.

A traced call of either is one node; its replay calls the kernel (through
_kernels.kernel, on whichever package computes it then) or the function
again."""
from . import _kernels
from . import functional as _functional
from .modules import rnn as _rnn

__all__ = ["points", "resolve", "FUNCTIONAL"]

FUNCTIONAL = ("linear", "dropout", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "embedding",
              "gelu")


def points():
    """{name: (container, key, kind)}: the kernel table's entries and the
    functional forms above."""
    _kernels.kernel("relu")  # load the table
    table = _kernels._table
    found = {name: (table, name, name) for name in list(table)}
    for name in FUNCTIONAL:
        found[f"F.{name}"] = (_functional, name, name)
    found["rnn_direction"] = (_rnn, "rnn_direction", "rnn_direction")
    return found


def resolve(name):
    """The kernel or function `name`; KeyError when ember.nn has none."""
    if name.startswith("F."):
        if name[2:] not in FUNCTIONAL:
            raise KeyError(name)
        return getattr(_functional, name[2:])
    if name == "rnn_direction":
        return _rnn.rnn_direction
    if name not in _kernels.COMPOSED:
        raise KeyError(name)
    return _kernels.kernel(name)
