"""Layers with parameters: Linear, SpatialConvolution, the spatial poolings
and SpatialBatchNormalization, with Lua Torch's constructor arguments
(widths before heights: ``kW, kH, dW, dH, padW, padH``)."""
import math

import ember
import ember.thnn as thnn

from ._base import Module, check_tensor, raw, wrap

__all__ = ["Linear", "SpatialConvolution", "SpatialMaxPooling", "SpatialAveragePooling",
           "SpatialBatchNormalization"]


def _uniform(shape, stdv):
    return ember.empty(*shape).uniform_(-stdv, stdv)


def _acc(grad, value, scale):
    raw(grad).add_(value * scale if scale != 1 else value)


def _image_batch(module, input):
    """(4-d raw input, was it batched): 3-d C×H×W input is one image."""
    input = check_tensor(module, input)
    x = raw(input)
    if x.dim() == 3:
        return x.unsqueeze(0).contiguous(), False
    if x.dim() != 4:
        raise ValueError(f"{type(module).__name__}: expected 3D or 4D input "
                         f"(got {x.dim()}D input of size {list(x.shape)})")
    return x.contiguous(), True


def _unbatch(out, batched):
    return out if batched else out.squeeze(0)


class Linear(Module):
    """y = x Wᵀ + b for a vector or a batch of rows; ``weight`` is
    outputSize × inputSize."""
    _param_names = (("weight", "gradWeight"), ("bias", "gradBias"))

    def __init__(self, inputSize, outputSize, bias=True):
        super().__init__()
        self.weight = ember.empty(outputSize, inputSize)
        self.gradWeight = ember.zeros(outputSize, inputSize)
        self.bias = ember.empty(outputSize) if bias else None
        self.gradBias = ember.zeros(outputSize) if bias else None
        self.reset()

    def reset(self, stdv=None):
        stdv = 1.0 / math.sqrt(self.weight.size(1)) if stdv is None else stdv
        dtype = self.weight.dtype
        self.weight = _uniform(self.weight.shape, stdv).to(dtype)
        if self.bias is not None:
            self.bias = _uniform(self.bias.shape, stdv).to(dtype)
        return self

    def noBias(self):
        self.bias = self.gradBias = None
        return self

    def _input(self, input):
        x = raw(check_tensor(self, input))
        if x.dim() not in (1, 2):
            raise ValueError(f"Linear: expected 1D or 2D input (got {x.dim()}D input of size "
                             f"{list(x.shape)})")
        if x.shape[-1] != self.weight.size(1):
            raise ValueError(f"Linear: input has {x.shape[-1]} features, the layer expects "
                             f"{self.weight.size(1)} (weight of size {list(self.weight.shape)})")
        return x

    def updateOutput(self, input):
        x = self._input(input)
        out = x.matmul(raw(self.weight).t())
        if self.bias is not None:
            out = out + raw(self.bias)
        self.output = wrap(out)
        return self.output

    def updateGradInput(self, input, gradOutput):
        self._input(input)
        self.gradInput = wrap(raw(gradOutput).matmul(raw(self.weight)))
        return self.gradInput

    def accGradParameters(self, input, gradOutput, scale=1):
        x, go = self._input(input), raw(gradOutput)
        if x.dim() == 1:
            _acc(self.gradWeight, go.unsqueeze(1).mm(x.unsqueeze(0)), scale)
            if self.bias is not None:
                _acc(self.gradBias, go, scale)
        else:
            _acc(self.gradWeight, go.t().mm(x), scale)
            if self.bias is not None:
                _acc(self.gradBias, go.sum(0), scale)

    def __repr__(self):
        extra = "" if self.bias is not None else " without bias"
        return f"nn.Linear({self.weight.size(1)} -> {self.weight.size(0)}){extra}"


class SpatialConvolution(Module):
    """2-d convolution of nInputPlane × H × W images (or a batch of them)
    with nOutputPlane kernels of kH × kW; ``weight`` is
    nOutputPlane × nInputPlane × kH × kW."""
    _param_names = (("weight", "gradWeight"), ("bias", "gradBias"))

    def __init__(self, nInputPlane, nOutputPlane, kW, kH, dW=1, dH=1, padW=0, padH=None):
        super().__init__()
        self.nInputPlane, self.nOutputPlane = nInputPlane, nOutputPlane
        self.kW, self.kH, self.dW, self.dH = kW, kH, dW, dH
        self.padW, self.padH = padW, padW if padH is None else padH
        shape = (nOutputPlane, nInputPlane, kH, kW)
        self.weight = ember.empty(*shape)
        self.gradWeight = ember.zeros(*shape)
        self.bias = ember.empty(nOutputPlane)
        self.gradBias = ember.zeros(nOutputPlane)
        self.reset()

    def reset(self, stdv=None):
        stdv = 1.0 / math.sqrt(self.kW * self.kH * self.nInputPlane) if stdv is None else stdv
        dtype = self.weight.dtype
        self.weight = _uniform(self.weight.shape, stdv).to(dtype)
        if self.bias is not None:
            self.bias = _uniform(self.bias.shape, stdv).to(dtype)
        return self

    def noBias(self):
        self.bias = self.gradBias = None
        return self

    def _geometry(self):
        return (self.dH, self.dW), (self.padH, self.padW)

    def updateOutput(self, input):
        x, batched = _image_batch(self, input)
        if x.shape[1] != self.nInputPlane:
            raise ValueError(f"SpatialConvolution: expected input with {self.nInputPlane} "
                             f"planes, got {x.shape[1]} (input of size {list(raw(input).shape)})")
        s, p = self._geometry()
        bias = raw(self.bias) if self.bias is not None else None
        out = thnn.conv2d_forward(x, raw(self.weight).contiguous(), bias, s, p)
        self.output = wrap(_unbatch(out, batched))
        return self.output

    def updateGradInput(self, input, gradOutput):
        x, batched = _image_batch(self, input)
        go = raw(gradOutput).contiguous()
        go = go if batched else go.unsqueeze(0)
        s, p = self._geometry()
        gi = thnn.conv2d_backward_input(go, tuple(x.shape), raw(self.weight).contiguous(), s, p,
                                        1, 1)
        self.gradInput = wrap(_unbatch(gi, batched))
        return self.gradInput

    def accGradParameters(self, input, gradOutput, scale=1):
        x, batched = _image_batch(self, input)
        go = raw(gradOutput).contiguous()
        go = go if batched else go.unsqueeze(0)
        s, p = self._geometry()
        gw, gb = thnn.conv2d_backward_params(go, x, tuple(self.weight.shape), s, p, 1, 1,
                                             need_bias=self.bias is not None)
        _acc(self.gradWeight, gw, scale)
        if self.bias is not None:
            _acc(self.gradBias, gb, scale)

    def __repr__(self):
        return (f"nn.SpatialConvolution({self.nInputPlane} -> {self.nOutputPlane}, "
                f"{self.kW}x{self.kH}, {self.dW},{self.dH}, {self.padW},{self.padH})")


class _SpatialPooling(Module):
    """Window, step and padding (W before H, as Lua Torch takes them) and
    the output-size rounding that ceil()/floor() choose."""

    def __init__(self, kW, kH, dW, dH, padW, padH):
        super().__init__()
        self.kW, self.kH, self.dW, self.dH = kW, kH, dW, dH
        self.padW, self.padH = padW, padH
        self.ceil_mode = False

    def ceil(self):
        self.ceil_mode = True
        return self

    def floor(self):
        self.ceil_mode = False
        return self

    def __repr__(self):
        return (f"nn.{type(self).__name__}({self.kW}x{self.kH}, {self.dW},{self.dH}, "
                f"{self.padW},{self.padH})")


class SpatialMaxPooling(_SpatialPooling):
    def __init__(self, kW, kH, dW=None, dH=None, padW=0, padH=0):
        super().__init__(kW, kH, kW if dW is None else dW, kH if dH is None else dH, padW, padH)
        self.indices = None

    def _args(self):
        return (self.kH, self.kW), (self.dH, self.dW), (self.padH, self.padW)

    def updateOutput(self, input):
        x, batched = _image_batch(self, input)
        k, s, p = self._args()
        out, self.indices = thnn.max_pool2d_forward(x, k, s, p, 1, self.ceil_mode)
        self.output = wrap(_unbatch(out, batched))
        return self.output

    def updateGradInput(self, input, gradOutput):
        x, batched = _image_batch(self, input)
        if self.indices is None:
            raise RuntimeError("SpatialMaxPooling: backward called before forward")
        go = raw(gradOutput).contiguous()
        go = go if batched else go.unsqueeze(0)
        gi = thnn.max_pool2d_backward_input(go, tuple(x.shape), self.indices)
        self.gradInput = wrap(_unbatch(gi, batched))
        return self.gradInput


class SpatialAveragePooling(_SpatialPooling):
    def __init__(self, kW, kH, dW=1, dH=1, padW=0, padH=0):
        super().__init__(kW, kH, dW, dH, padW, padH)
        self.count_include_pad = True

    def setCountIncludePad(self):
        self.count_include_pad = True
        return self

    def setCountExcludePad(self):
        self.count_include_pad = False
        return self

    def _args(self):
        return ((self.kH, self.kW), (self.dH, self.dW), (self.padH, self.padW), self.ceil_mode,
                self.count_include_pad)

    def updateOutput(self, input):
        x, batched = _image_batch(self, input)
        out = thnn.avg_pool2d_forward(x, *self._args())
        self.output = wrap(_unbatch(out, batched))
        return self.output

    def updateGradInput(self, input, gradOutput):
        x, batched = _image_batch(self, input)
        go = raw(gradOutput).contiguous()
        go = go if batched else go.unsqueeze(0)
        gi = thnn.avg_pool2d_backward_input(go, tuple(x.shape), *self._args())
        self.gradInput = wrap(_unbatch(gi, batched))
        return self.gradInput


class SpatialBatchNormalization(Module):
    """Batch normalisation over the planes of N × C × H × W input; training
    mode normalises by the batch's statistics and updates ``running_mean``
    and ``running_var`` (unbiased) by ``momentum``; evaluation mode uses
    them."""
    _param_names = (("weight", "gradWeight"), ("bias", "gradBias"))

    def __init__(self, nOutput, eps=1e-5, momentum=0.1, affine=True):
        super().__init__()
        self.nOutput, self.eps, self.momentum, self.affine = nOutput, eps, momentum, affine
        self.running_mean = ember.zeros(nOutput)
        self.running_var = ember.ones(nOutput)
        if affine:
            self.weight = ember.empty(nOutput).uniform_()
            self.bias = ember.zeros(nOutput)
            self.gradWeight, self.gradBias = ember.zeros(nOutput), ember.zeros(nOutput)
        else:
            self.weight = self.bias = self.gradWeight = self.gradBias = None
        self.save_mean = self.save_std = None

    def _input(self, input):
        x = raw(check_tensor(self, input))
        if x.dim() != 4:
            raise ValueError(f"SpatialBatchNormalization: expected 4D input (got {x.dim()}D "
                             f"input of size {list(x.shape)})")
        if x.shape[1] != self.nOutput:
            raise ValueError(f"SpatialBatchNormalization: expected input with {self.nOutput} "
                             f"planes, got {x.shape[1]}")
        return x.contiguous()

    def _opt(self, name):
        t = getattr(self, name)
        return raw(t) if t is not None else None

    def updateOutput(self, input):
        x = self._input(input)
        out, self.save_mean, self.save_std = thnn.batch_norm_forward(
            x, self._opt("weight"), self._opt("bias"), raw(self.running_mean),
            raw(self.running_var), self.train, self.momentum, self.eps)
        self.output = wrap(out)
        return self.output

    def _saved(self):
        if self.save_mean is None:
            raise RuntimeError("SpatialBatchNormalization: backward called before forward")
        return self.save_mean, self.save_std

    def updateGradInput(self, input, gradOutput):
        x = self._input(input)
        m, s = self._saved()
        gi = thnn.batch_norm_backward_input(raw(gradOutput).contiguous(), x, self._opt("weight"),
                                            m, s, self.train)
        self.gradInput = wrap(gi)
        return self.gradInput

    def accGradParameters(self, input, gradOutput, scale=1):
        if not self.affine:
            return
        x = self._input(input)
        m, s = self._saved()
        gw, gb = thnn.batch_norm_backward_params(raw(gradOutput).contiguous(), x, m, s)
        _acc(self.gradWeight, gw, scale)
        _acc(self.gradBias, gb, scale)

    def __repr__(self):
        return f"nn.SpatialBatchNormalization ({self.nOutput})"
