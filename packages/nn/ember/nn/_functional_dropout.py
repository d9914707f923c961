"""ember.nn.functional: dropout and feature (channel) dropout."""
import warnings

import ember


__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d"]


def dropout(input, p=0.5, training=True, inplace=False):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return input.mul_(0.0) if inplace else input * 0.0
    mask = ember.empty_like(input).bernoulli_(1.0 - p)
    mask = mask.mul_(1.0 / (1.0 - p))
    return input.mul_(mask) if inplace else input * mask


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _feature_dropout(input, p, training, inplace, batched):
    """Zeroes whole features: one Bernoulli draw per (sample, channel) of a
    batched input, per channel (dim 0) of an unbatched one, as PyTorch's
    feature dropout (which adds the batch dimension to unbatched input)."""
    if not training or p == 0.0:
        return input
    lead = 2 if batched else 1
    if p < 1.0 and input.dim() + 2 - lead < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    lead = min(lead, input.dim())
    shape = tuple(input.shape[:lead]) + (1,) * (input.dim() - lead)
    if p == 1.0:
        mask = ember.zeros(shape, dtype=input.dtype, device=input.device)
    else:
        mask = ember.empty(shape, dtype=input.dtype, device=input.device) \
            .bernoulli_(1.0 - p) / (1.0 - p)
    return input.mul_(mask) if inplace else input * mask


def _rank_warning(name, ndim, spatial):
    warnings.warn(f"{name}: Received a {ndim}-D input to {name}, which is deprecated and will "
                  f"result in an error in a future release. To retain the behavior and silence "
                  f"this warning, please use dropout instead. Note that {name} exists to "
                  f"provide channel-wise dropout on inputs with {spatial} spatial dimensions, a "
                  f"channel dimension, and an optional batch dimension (i.e. {spatial + 1}D or "
                  f"{spatial + 2}D inputs).", UserWarning, stacklevel=3)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of (N, C, L) or (C, L) input."""
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D "
                           "input. Note that dropout1d exists to provide channel-wise dropout "
                           "on inputs with 1 spatial dimension, a channel dimension, and an "
                           "optional batch dimension (i.e. 2D or 3D inputs).")
    return _feature_dropout(input, p, training, inplace, batched=input.dim() == 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of (N, C, H, W) input.  As PyTorch, other ranks
    warn and proceed: 3-D input is taken as (N, C, L), 2-D as (N, C) (each
    element its own channel), others with their first two dims as (N, C)."""
    _check_p(p)
    ndim = input.dim()
    if ndim not in (3, 4):
        _rank_warning("dropout2d", ndim, 2)
    if ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                      "channel-wise 1D dropout behavior is desired - input is interpreted as "
                      "shape (N, C, L), where C is the channel dim. This behavior will change "
                      "in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout "
                      "behavior, please switch to using dropout1d instead.", UserWarning,
                      stacklevel=2)
    return _feature_dropout(input, p, training, inplace, batched=True)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) input; other
    ranks warn and are taken as unbatched (channels along dim 0)."""
    _check_p(p)
    ndim = input.dim()
    if ndim not in (4, 5):
        _rank_warning("dropout3d", ndim, 3)
    return _feature_dropout(input, p, training, inplace, batched=ndim == 5)


# ---- samples: argument lists every function here is tested with
# (tests/test_functional_samples.py: gradcheck and gradgradcheck in float64,
# contiguous and non-contiguous, CUDA against the CPU, and PyTorch's
# torch.nn.functional on the same values) -----------------------------------
from ember._ops.samples import S, T  # noqa: E402

SAMPLES = {
    "dropout": [S(T(3, 4), 0.5, training=False), S(T(3, 4), 0.0)],
    "dropout1d": [S(T(2, 3, 4), training=False), S(T(2, 3, 4), 0.0)],
    "dropout2d": [S(T(2, 3, 4, 4), training=False)],
    "dropout3d": [S(T(2, 3, 2, 2, 2), training=False)],
}
