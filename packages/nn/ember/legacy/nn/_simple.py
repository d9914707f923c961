"""Layers without parameters: activations, (log-)softmax, dropout, shape
changes, and the table layers CAddTable and JoinTable.  Dimensions are
1-based, as in Lua Torch."""
import math

import ember
import ember.thnn as thnn

from ._base import Module, check_tensor, raw, wrap

__all__ = ["ReLU", "Tanh", "Sigmoid", "SoftMax", "LogSoftMax", "Dropout", "View", "Reshape",
           "Identity", "CAddTable", "JoinTable"]


class _Activation(Module):
    _kernel = None

    def updateOutput(self, input):
        x = raw(check_tensor(self, input)).contiguous()
        self.output = wrap(thnn.activation_forward(self._kernel, x))
        return self.output

    def updateGradInput(self, input, gradOutput):
        x = raw(check_tensor(self, input)).contiguous()
        self.gradInput = wrap(thnn.activation_backward_input(
            self._kernel, raw(gradOutput).contiguous(), x))
        return self.gradInput


class ReLU(_Activation):
    _kernel = "relu"


class Tanh(_Activation):
    _kernel = "tanh"


class Sigmoid(_Activation):
    _kernel = "sigmoid"


def _softmax_dim(module, x):
    # Lua Torch: over the only dim of a vector, dim 2 of a batch of rows, the
    # planes of a C×H×W image and of an N×C×H×W batch
    if x.dim() not in (1, 2, 3, 4):
        raise ValueError(f"{type(module).__name__}: expected 1D, 2D, 3D or 4D input "
                         f"(got {x.dim()}D)")
    return 0 if x.dim() in (1, 3) else 1


class SoftMax(Module):
    _forward, _backward = staticmethod(thnn.softmax_forward), \
        staticmethod(thnn.softmax_backward_input)

    def updateOutput(self, input):
        x = raw(check_tensor(self, input)).contiguous()
        self.output = wrap(self._forward(x, _softmax_dim(self, x)))
        return self.output

    def updateGradInput(self, input, gradOutput):
        out = raw(self.output)
        self.gradInput = wrap(self._backward(raw(gradOutput).contiguous(), out,
                                             _softmax_dim(self, out)))
        return self.gradInput


class LogSoftMax(SoftMax):
    _forward, _backward = staticmethod(thnn.log_softmax_forward), \
        staticmethod(thnn.log_softmax_backward_input)


class Dropout(Module):
    """Zeroes each element with probability p in training mode and scales
    the others by 1/(1-p); evaluation mode passes the input through."""

    def __init__(self, p=0.5):
        super().__init__()
        if not 0 <= p < 1:
            raise ValueError(f"Dropout: p must be in [0, 1), got {p}")
        self.p = p
        self.noise = None

    def updateOutput(self, input):
        x = raw(check_tensor(self, input)).contiguous()
        if self.train and self.p > 0:
            out, self.noise = thnn.dropout_forward(x, self.p)
        else:
            out, self.noise = x.clone(), None
        self.output = wrap(out)
        return self.output

    def updateGradInput(self, input, gradOutput):
        go = raw(gradOutput).contiguous()
        if self.train and self.p > 0:
            if self.noise is None:
                raise RuntimeError("Dropout: backward called before forward in training mode")
            self.gradInput = wrap(thnn.dropout_backward_input(go, self.noise))
        else:
            self.gradInput = wrap(go.clone())
        return self.gradInput

    def __repr__(self):
        return f"nn.Dropout({self.p})"


def _sizes(args):
    if len(args) == 1 and isinstance(args[0], (tuple, list, ember.Size)):
        args = tuple(args[0])
    return tuple(int(a) for a in args)


class View(Module):
    """A view with the given sizes (one may be -1).  Input with more elements
    than the sizes hold, or with more than ``numInputDims`` dims, is a batch:
    its first dim is kept."""

    def __init__(self, *sizes):
        super().__init__()
        self.size = _sizes(sizes)
        if sum(1 for s in self.size if s == -1) > 1:
            raise ValueError("View: only one size may be -1")
        self.numElements = math.prod(s for s in self.size if s != -1)
        self.numInputDims = None

    def setNumInputDims(self, numInputDims):
        self.numInputDims = numInputDims
        return self

    def _shape(self, x):
        if self.numInputDims is not None and x.dim() > self.numInputDims:
            return (x.shape[0],) + self.size
        if -1 not in self.size and x.numel() != self.numElements:
            if x.dim() > 0 and x.numel() == x.shape[0] * self.numElements:
                return (x.shape[0],) + self.size
        return self.size

    def updateOutput(self, input):
        x = raw(check_tensor(self, input))
        self.output = wrap(x.contiguous().view(self._shape(x)))
        return self.output

    def updateGradInput(self, input, gradOutput):
        self.gradInput = wrap(raw(gradOutput).contiguous().view(tuple(input.shape)))
        return self.gradInput

    def __repr__(self):
        return f"nn.View({', '.join(map(str, self.size))})"


class Reshape(View):
    """Like View but always a contiguous copy; ``batchMode`` True keeps the
    first dim, False never does, None decides by the element count."""

    def __init__(self, *sizes, batchMode=None):
        super().__init__(*sizes)
        self.batchMode = batchMode

    def _shape(self, x):
        if self.batchMode or (self.batchMode is None and x.numel() != self.numElements
                              and -1 not in self.size):
            return (x.shape[0],) + self.size
        return self.size

    def updateOutput(self, input):
        x = raw(check_tensor(self, input))
        self.output = wrap(x.reshape(self._shape(x)).clone())
        return self.output

    def __repr__(self):
        return f"nn.Reshape({', '.join(map(str, self.size))})"


class Identity(Module):
    def updateOutput(self, input):
        self.output = input
        return self.output

    def updateGradInput(self, input, gradOutput):
        self.gradInput = gradOutput
        return self.gradInput


def _table(module, input):
    if not isinstance(input, (list, tuple)) or not input:
        raise TypeError(f"{type(module).__name__}: expected a non-empty list of tensors as "
                        f"input, got {type(input).__name__}")
    return [raw(check_tensor(module, t, f"input[{i}]")) for i, t in enumerate(input)]


class CAddTable(Module):
    """The element-wise sum of a list of tensors."""

    def updateOutput(self, input):
        xs = _table(self, input)
        out = xs[0].clone()
        for x in xs[1:]:
            out = out + x
        self.output = wrap(out)
        return self.output

    def updateGradInput(self, input, gradOutput):
        xs = _table(self, input)
        go = raw(gradOutput)
        self.gradInput = [wrap(go.reshape(tuple(x.shape)).clone()) for x in xs]
        return self.gradInput


class JoinTable(Module):
    """Concatenates a list of tensors along ``dimension`` (1-based; negative
    counts from the end).  With ``nInputDims``, input with more dims is a
    batch and the dimension moves one to the right."""

    def __init__(self, dimension, nInputDims=None):
        super().__init__()
        self.dimension, self.nInputDims = dimension, nInputDims

    def _dim(self, x):
        d = self.dimension
        if d < 0:
            d = x.dim() + d + 1
        elif self.nInputDims is not None and x.dim() == self.nInputDims + 1:
            d += 1
        if not 1 <= d <= x.dim():
            raise IndexError(f"JoinTable: dimension {self.dimension} out of range for "
                             f"{x.dim()}D input")
        return d - 1

    def updateOutput(self, input):
        xs = _table(self, input)
        self.output = wrap(ember.th.cat(xs, self._dim(xs[0])))
        return self.output

    def updateGradInput(self, input, gradOutput):
        xs = _table(self, input)
        d, go, offset = self._dim(xs[0]), raw(gradOutput), 0
        grads = []
        for x in xs:
            grads.append(wrap(go.narrow(d, offset, x.shape[d]).contiguous()))
            offset += x.shape[d]
        self.gradInput = grads
        return self.gradInput

    def __repr__(self):
        return f"nn.JoinTable({self.dimension})"
