"""ember.nn.functional: the stateless forms of the layers, as PyTorch's
torch.nn.functional.  This module only gathers the family modules, which
never import it:

- _functional_linear: linear, bilinear, attention;
- _functional_activation: activations and softmax;
- _functional_dropout: dropout and feature dropout;
- _functional_norm: layer, batch, group and instance norm, normalize;
- _functional_convpool: convolution, pooling, unpooling;
- _functional_resample: interpolate and pad;
- _functional_embedding: embedding, embedding_bag, one_hot;
- _functional_losses: the losses and pairwise_distance;
- _functional_pixelshuffle: pixel_shuffle, pixel_unshuffle.

Everything composes ember operations (so it is differentiable to any
order), except the layers declared in ember.nn.kernels, which go through
ember.nn._kernels so that a C kernel package can take them over.  A
function's autocast class is declared beside it (ember.amp.policy)."""
from . import _functional_activation, _functional_convpool, _functional_dropout, \
    _functional_embedding, _functional_linear, _functional_losses, _functional_norm, \
    _functional_pixelshuffle, _functional_resample
from ._functional_activation import *  # noqa: F401,F403
from ._functional_common import _check_reduction, _check_tensor, _check_tensors, _pair, \
    _reduce, _single, _softplus1, _type_name  # noqa: F401  (used as F._x)
from ._functional_convpool import *  # noqa: F401,F403
from ._functional_convpool import max_pool2d_with_indices  # noqa: F401
from ._functional_dropout import *  # noqa: F401,F403
from ._functional_embedding import *  # noqa: F401,F403
from ._functional_linear import *  # noqa: F401,F403
from ._functional_losses import *  # noqa: F401,F403
from ._functional_norm import *  # noqa: F401,F403
from ._functional_pixelshuffle import *  # noqa: F401,F403
from ._functional_resample import *  # noqa: F401,F403

__all__ = list(dict.fromkeys(
    _functional_linear.__all__ + _functional_activation.__all__ + _functional_dropout.__all__
    + _functional_norm.__all__ + _functional_convpool.__all__ + _functional_resample.__all__
    + _functional_embedding.__all__ + _functional_losses.__all__
    + _functional_pixelshuffle.__all__))

#: function name -> its samples (declared beside each function in its family module)
SAMPLES = {name: samples for module in (
    _functional_linear, _functional_activation, _functional_dropout, _functional_norm,
    _functional_convpool, _functional_resample, _functional_embedding, _functional_losses,
    _functional_pixelshuffle) for name, samples in module.SAMPLES.items()}
