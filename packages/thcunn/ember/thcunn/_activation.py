"""Bindings of the activations, softmax / log_softmax and dropout for the GPU."""
import ember.thc as _thc

from ._lib import check as _check, lib as _lib
from ._args import NULL, _empty, _p

__all__ = ["ACTIVATIONS", "softmax_forward", "softmax_backward_input", "log_softmax_forward",
           "log_softmax_backward_input", "activation_forward", "activation_backward_input",
           "dropout_forward", "dropout_backward_input"]


ACTIVATIONS = {"relu": 0, "leaky_relu": 1, "elu": 2, "selu": 3, "gelu": 4, "silu": 5,
               "sigmoid": 6, "tanh": 7, "softplus": 8, "hardtanh": 9, "hardswish": 10,
               "mish": 11}


def softmax_forward(input, dim):
    out = _empty(input.shape, input)
    _check(_lib.thcunn_softmax_forward(_p(out), _p(input), dim))
    return out


def softmax_backward_input(grad_output, output, dim):
    gi = _empty(output.shape, output)
    _check(_lib.thcunn_softmax_backward_input(_p(gi), _p(grad_output), _p(output), dim))
    return gi


def log_softmax_forward(input, dim):
    out = _empty(input.shape, input)
    _check(_lib.thcunn_log_softmax_forward(_p(out), _p(input), dim))
    return out


def log_softmax_backward_input(grad_output, output, dim):
    gi = _empty(output.shape, output)
    _check(_lib.thcunn_log_softmax_backward_input(_p(gi), _p(grad_output), _p(output), dim))
    return gi


def activation_forward(name, input, a=0.0, b=0.0):
    out = _empty(input.shape, input)
    _check(_lib.thcunn_activation_forward(_p(out), _p(input), ACTIVATIONS[name], a, b))
    return out


def activation_backward_input(name, grad_output, input, a=0.0, b=0.0):
    gi = _empty(input.shape, input)
    _check(_lib.thcunn_activation_backward_input(_p(gi), _p(grad_output), _p(input),
                                                 ACTIVATIONS[name], a, b))
    return gi


def dropout_forward(input, p=0.5, generator=None):
    """(output, mask) with mask values 0 or 1/(1-p), drawn from the
    ember.thc Generator given (libTHC's default one for None)."""
    if generator is None:
        g = NULL
    elif isinstance(generator, _thc.Generator):
        g = generator._g
    else:
        raise TypeError(f"dropout_forward: generator must be an ember.thc Generator (a CUDA "
                        f"generator), got {type(generator).__module__}."
                        f"{type(generator).__name__}")
    out, mask = _empty(input.shape, input), _empty(input.shape, input)
    _check(_lib.thcunn_dropout_forward(_p(out), _p(mask), _p(input), p, g))
    return out, mask


def dropout_backward_input(grad_output, mask):
    gi = _empty(mask.shape, mask)
    _check(_lib.thcunn_dropout_backward_input(_p(gi), _p(grad_output), _p(mask)))
    return gi
