"""ember.nn: Module and layers, functional ops, initialisers and utilities,
with PyTorch's names and semantics."""
from .parameter import Buffer, Parameter
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from . import functional, init, utils  # noqa: E402
from . import parallel  # noqa: E402
from .parallel import DataParallel  # noqa: E402

__all__ = ["Parameter", "Buffer", "functional", "init", "utils", "parallel",
           "DataParallel"] + _modules_all
