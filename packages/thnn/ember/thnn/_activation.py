"""Bindings of the activations, softmax / log_softmax and dropout."""
from ._lib import check as _check, lib as _lib
from ._args import NULL, _empty

__all__ = ["ACTIVATIONS", "softmax_forward", "softmax_backward_input", "log_softmax_forward",
           "log_softmax_backward_input", "dropout_forward", "dropout_backward_input",
           "activation_forward", "activation_backward_input"]


ACTIVATIONS = {"relu": 0, "leaky_relu": 1, "elu": 2, "selu": 3, "gelu": 4, "silu": 5,
               "sigmoid": 6, "tanh": 7, "softplus": 8, "hardtanh": 9, "hardswish": 10,
               "mish": 11}


def softmax_forward(input, dim):
    out = _empty(tuple(input.shape), input)
    _check(_lib.thnn_softmax_forward(out._p, input._p, dim))
    return out


def softmax_backward_input(grad_output, output, dim):
    gi = _empty(tuple(output.shape), output)
    _check(_lib.thnn_softmax_backward_input(gi._p, grad_output._p, output._p, dim))
    return gi


def log_softmax_forward(input, dim):
    out = _empty(tuple(input.shape), input)
    _check(_lib.thnn_log_softmax_forward(out._p, input._p, dim))
    return out


def log_softmax_backward_input(grad_output, output, dim):
    gi = _empty(tuple(output.shape), output)
    _check(_lib.thnn_log_softmax_backward_input(gi._p, grad_output._p, output._p, dim))
    return gi


def dropout_forward(input, p=0.5, generator=None):
    """(output, mask) with mask values 0 or 1/(1-p)."""
    out, mask = _empty(tuple(input.shape), input), _empty(tuple(input.shape), input)
    g = NULL if generator is None else generator._g
    _check(_lib.thnn_dropout_forward(out._p, mask._p, input._p, p, g))
    return out, mask


def dropout_backward_input(grad_output, mask):
    gi = _empty(tuple(mask.shape), mask)
    _check(_lib.thnn_dropout_backward_input(gi._p, grad_output._p, mask._p))
    return gi


def activation_forward(name, input, a=0.0, b=0.0):
    out = _empty(tuple(input.shape), input)
    _check(_lib.thnn_activation_forward(out._p, input._p, ACTIVATIONS[name], a, b))
    return out


def activation_backward_input(name, grad_output, input, a=0.0, b=0.0):
    gi = _empty(tuple(input.shape), input)
    _check(_lib.thnn_activation_backward_input(gi._p, grad_output._p, input._p,
                                               ACTIVATIONS[name], a, b))
    return gi
