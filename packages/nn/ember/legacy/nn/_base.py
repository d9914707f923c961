"""Module and Criterion: Lua Torch's explicit forward/backward protocol.

Values are ember.Tensor objects that never require grad; the arithmetic
runs on their raw tensors (``t._data``, ember.th on the CPU) and through
ember.thnn's kernels, so nothing is recorded on the autograd tape.
"""
import ember
from ember._tensor import _make

__all__ = ["Module", "Criterion", "raw", "wrap", "check_tensor"]


def raw(t):
    return t._data


def wrap(data):
    return _make(data)


def check_tensor(module, value, what="input"):
    if not isinstance(value, ember.Tensor):
        raise TypeError(f"{type(module).__name__}: expected {what} to be an ember.Tensor, "
                        f"got {type(value).__name__}")
    if value.requires_grad:
        value = value.detach()
    return value


class Module:
    """The base of every layer: ``output``/``gradInput`` hold the last
    results; ``train`` says whether the module is in training mode."""

    def __init__(self):
        self.output = ember.empty(0)
        self.gradInput = ember.empty(0)
        self.train = True

    # -- the protocol ----------------------------------------------------
    def updateOutput(self, input):
        return self.output

    def updateGradInput(self, input, gradOutput):
        return self.gradInput

    def accGradParameters(self, input, gradOutput, scale=1):
        pass

    def forward(self, input):
        return self.updateOutput(input)

    def backward(self, input, gradOutput, scale=1):
        self.updateGradInput(input, gradOutput)
        self.accGradParameters(input, gradOutput, scale)
        return self.gradInput

    def __call__(self, input):
        return self.forward(input)

    # -- parameters ------------------------------------------------------
    _param_names = ()   # ((param, grad), ...) of fields holding tensors

    def _slots(self):
        """(module, param field, grad field) of every parameter, in order."""
        for p, g in self._param_names:
            if getattr(self, p, None) is not None:
                yield self, p, g

    def parameters(self):
        """(params, gradParams): two lists, as Lua Torch returns them."""
        slots = list(self._slots())
        return [getattr(m, p) for m, p, _ in slots], [getattr(m, g) for m, _, g in slots]

    def getParameters(self):
        """(flat params, flat gradParams): every parameter (and gradient)
        copied into one vector, the module's fields becoming views of it, so
        that ember.legacy.optim can update them all at once.  A later
        ``type()`` makes new tensors and breaks the link."""
        slots = list(self._slots())
        if not slots:
            return ember.empty(0), ember.empty(0)
        dtype = getattr(*slots[0][:2]).dtype
        seen = {}   # a tensor shared by several modules stays shared
        for m, p, g in slots:
            seen.setdefault(id(getattr(m, p)), (getattr(m, p), getattr(m, g)))
        n = sum(t.numel() for t, _ in seen.values())
        flat, gflat = ember.empty(n, dtype=dtype), ember.zeros(n, dtype=dtype)
        views, offset = {}, 0
        with ember.no_grad():
            for key, (t, gt) in seen.items():
                k = t.numel()
                flat[offset:offset + k].copy_(t.reshape(-1))
                gflat[offset:offset + k].copy_(gt.reshape(-1))
                views[key] = (flat[offset:offset + k].view(tuple(t.shape)),
                              gflat[offset:offset + k].view(tuple(t.shape)))
                offset += k
        for m, p, g in slots:
            pv, gv = views[id(getattr(m, p))]
            setattr(m, p, pv)
            setattr(m, g, gv)
        return flat, gflat

    def zeroGradParameters(self):
        for g in self.parameters()[1]:
            if g is not None:
                raw(g).zero_()

    def updateParameters(self, learningRate):
        for p, g in zip(*self.parameters()):
            raw(p).sub_(raw(g) * learningRate)

    def training(self):
        self.train = True
        return self

    def evaluate(self):
        self.train = False
        return self

    # -- types -----------------------------------------------------------
    def type(self, dtype):
        """Convert every tensor field to `dtype` (ember.float64, ...)."""
        for k, v in list(vars(self).items()):
            if isinstance(v, ember.Tensor) and v.is_floating_point():
                setattr(self, k, v.to(dtype))
            elif isinstance(v, Module):
                v.type(dtype)
            elif isinstance(v, list):
                for m in v:
                    if isinstance(m, Module):
                        m.type(dtype)
        return self

    def double(self):
        return self.type(ember.float64)

    def float(self):
        return self.type(ember.float32)

    def clearState(self):
        self.output = ember.empty(0)
        self.gradInput = ember.empty(0)
        return self

    def __repr__(self):
        return f"nn.{type(self).__name__}"


class Criterion:
    """A loss: ``forward(input, target)`` returns a Python number in
    ``output``; ``backward(input, target)`` fills ``gradInput``."""

    def __init__(self):
        self.output = 0.0
        self.gradInput = ember.empty(0)
        self.sizeAverage = True

    def updateOutput(self, input, target):
        raise NotImplementedError

    def updateGradInput(self, input, target):
        raise NotImplementedError

    def forward(self, input, target):
        return self.updateOutput(input, target)

    def backward(self, input, target):
        return self.updateGradInput(input, target)

    def __call__(self, input, target):
        return self.forward(input, target)

    def _reduction(self):
        return "mean" if self.sizeAverage else "sum"

    def type(self, dtype):
        for k, v in list(vars(self).items()):
            if isinstance(v, ember.Tensor) and v.is_floating_point():
                setattr(self, k, v.to(dtype))
        return self

    def double(self):
        return self.type(ember.float64)

    def float(self):
        return self.type(ember.float32)

    def __repr__(self):
        return f"nn.{type(self).__name__}"
