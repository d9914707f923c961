"""Bindings of the activations, softmax / log_softmax and dropout."""

NAMES = ["ACTIVATIONS", "softmax_forward", "softmax_backward_input", "log_softmax_forward",
         "log_softmax_backward_input", "dropout_forward", "dropout_backward_input",
         "activation_forward", "activation_backward_input"]


def define(L):
    """This family's functions on kernel library L (see _library)."""
    C, check, ptr, empty = L.C, L.check, L.ptr, L.empty

    ACTIVATIONS = {"relu": C.RELU, "leaky_relu": C.LEAKY_RELU, "elu": C.ELU, "selu": C.SELU,
                   "gelu": C.GELU, "silu": C.SILU, "sigmoid": C.SIGMOID, "tanh": C.TANH,
                   "softplus": C.SOFTPLUS, "hardtanh": C.HARDTANH, "hardswish": C.HARDSWISH,
                   "mish": C.MISH}

    def softmax_forward(input, dim):
        out = empty(input.shape, input)
        check(C.softmax_forward(ptr(out), ptr(input), dim))
        return out

    def softmax_backward_input(grad_output, output, dim):
        gi = empty(output.shape, output)
        check(C.softmax_backward_input(ptr(gi), ptr(grad_output), ptr(output), dim))
        return gi

    def log_softmax_forward(input, dim):
        out = empty(input.shape, input)
        check(C.log_softmax_forward(ptr(out), ptr(input), dim))
        return out

    def log_softmax_backward_input(grad_output, output, dim):
        gi = empty(output.shape, output)
        check(C.log_softmax_backward_input(ptr(gi), ptr(grad_output), ptr(output), dim))
        return gi

    def dropout_forward(input, p=0.5, generator=None):
        """(output, mask) with mask values 0 or 1/(1-p), drawn from the
        tensor library's Generator given (its default one for None)."""
        g = L.generator(generator)
        out, mask = empty(input.shape, input), empty(input.shape, input)
        check(C.dropout_forward(ptr(out), ptr(mask), ptr(input), p, g))
        return out, mask

    def dropout_backward_input(grad_output, mask):
        gi = empty(mask.shape, mask)
        check(C.dropout_backward_input(ptr(gi), ptr(grad_output), ptr(mask)))
        return gi

    def activation_forward(name, input, a=0.0, b=0.0):
        out = empty(input.shape, input)
        check(C.activation_forward(ptr(out), ptr(input), ACTIVATIONS[name], a, b))
        return out

    def activation_backward_input(name, grad_output, input, a=0.0, b=0.0):
        gi = empty(input.shape, input)
        check(C.activation_backward_input(ptr(gi), ptr(grad_output), ptr(input), ACTIVATIONS[name],
                                          a, b))
        return gi

    return {n: v for n, v in locals().items() if n in NAMES}
