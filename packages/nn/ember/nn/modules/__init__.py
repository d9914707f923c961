from .module import Module
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .layers import *  # noqa: F401,F403
from .layers import __all__ as _layers
from .loss import *  # noqa: F401,F403
from .loss import __all__ as _losses
from .padding import *  # noqa: F401,F403
from .padding import __all__ as _padding
from .upsampling import *  # noqa: F401,F403
from .upsampling import __all__ as _upsampling
from .pixelshuffle import *  # noqa: F401,F403
from .pixelshuffle import __all__ as _pixelshuffle
from .rnn import *  # noqa: F401,F403
from .rnn import __all__ as _rnn
from .attention import MultiheadAttention
from .transformer import *  # noqa: F401,F403
from .transformer import __all__ as _transformer

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList",
           "ParameterDict"] + _layers + _losses + _padding + _upsampling + _pixelshuffle + _rnn + [
    "MultiheadAttention"] + _transformer

# PyTorch's module paths (ember.nn.modules.linear.Linear, ...): importing them
# makes each class report its PyTorch-style module, for pickled whole models
from . import (activation, batchnorm, conv, distance, dropout, flatten,  # noqa: E402,F401
               instancenorm, linear, normalization, pooling, sparse)
