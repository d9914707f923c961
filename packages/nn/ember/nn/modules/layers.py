"""Linear, Bilinear, Identity, Flatten/Unflatten, the activations,
Softmax/LogSoftmax, Dropout, Embedding, LayerNorm, BatchNorm, Conv2d and
pooling — each a thin Module over ember.nn.functional, initialised as
PyTorch initialises it."""
import math
import numbers

import ember

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear", "Flatten", "Unflatten", "ReLU", "ReLU6",
           "LeakyReLU", "ELU", "CELU", "SELU", "GELU", "SiLU", "Softplus", "Hardtanh",
           "Hardswish", "Hardsigmoid", "Mish", "Sigmoid", "Tanh", "LogSigmoid", "Softsign",
           "Tanhshrink", "Hardshrink", "Softshrink", "GLU", "PReLU", "Threshold", "Softmax",
           "LogSoftmax", "Softmin", "Softmax2d", "Dropout", "Embedding", "LayerNorm", "RMSNorm",
           "CosineSimilarity", "PairwiseDistance", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "GroupNorm",
           "InstanceNorm2d", "Dropout2d", "Conv1d", "Conv2d", "MaxPool1d", "MaxPool2d",
           "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool2d", "AdaptiveMaxPool2d",
           "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "MaxPool3d",
           "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool3d",
           "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "EmbeddingBag", "InstanceNorm1d",
           "InstanceNorm3d", "Dropout1d", "Dropout3d"]


def _factory(device, dtype):
    kw = {}
    if device is not None:
        kw["device"] = device
    if dtype is not None:
        kw["dtype"] = dtype
    return kw


class Identity(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x Wᵀ + b.  W and b start uniform in ±1/√in_features (PyTorch's
    kaiming_uniform_(a=√5) and its bias rule)."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        kw = _factory(device, dtype)
        self.weight = Parameter(ember.empty(out_features, in_features, **kw))
        if bias:
            self.bias = Parameter(ember.empty(out_features, **kw))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1]
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        super().__init__()
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        kw = _factory(device, dtype)
        self.weight = Parameter(ember.empty(out_features, in1_features, in2_features, **kw))
        if bias:
            self.bias = Parameter(ember.empty(out_features, **kw))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    def __init__(self, dim, unflattened_size):
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


# ---- activations -------------------------------------------------------------------
def _activation(name, fn, params=(), doc=""):
    """A Module class calling F.<fn> with the named constructor arguments."""
    names = [p[0] for p in params]

    def __init__(self, *args, **kwargs):
        Module.__init__(self)
        if len(args) > len(names):
            raise TypeError(f"{name}() takes at most {len(names)} arguments")
        values = dict(params)
        values.update(zip(names, args))
        for k, v in kwargs.items():
            if k not in values:
                raise TypeError(f"{name}() got an unexpected keyword argument '{k}'")
            values[k] = v
        for k in names:
            setattr(self, k, values[k])

    def forward(self, input):
        return fn(input, *(getattr(self, k) for k in names))

    def extra_repr(self):
        shown = [f"{k}={getattr(self, k)!r}" if isinstance(getattr(self, k), str)
                 else f"{k}={getattr(self, k)}" for k in names
                 if not (k == "inplace" and not getattr(self, k))]
        return ", ".join(shown)

    return type(name, (Module,), {"__init__": __init__, "forward": forward,
                                  "extra_repr": extra_repr, "__doc__": doc,
                                  "__module__": __name__})


ReLU = _activation("ReLU", F.relu, [("inplace", False)], "max(0, x)")
ReLU6 = _activation("ReLU6", F.relu6, [("inplace", False)], "min(max(0, x), 6)")
LeakyReLU = _activation("LeakyReLU", F.leaky_relu,
                        [("negative_slope", 0.01), ("inplace", False)])
ELU = _activation("ELU", F.elu, [("alpha", 1.0), ("inplace", False)])
CELU = _activation("CELU", F.celu, [("alpha", 1.0), ("inplace", False)])
SELU = _activation("SELU", F.selu, [("inplace", False)])
GELU = _activation("GELU", F.gelu, [("approximate", "none")])
SiLU = _activation("SiLU", F.silu, [("inplace", False)])
Softplus = _activation("Softplus", F.softplus, [("beta", 1.0), ("threshold", 20.0)])
Hardtanh = _activation("Hardtanh", F.hardtanh,
                       [("min_val", -1.0), ("max_val", 1.0), ("inplace", False)])
Hardswish = _activation("Hardswish", F.hardswish, [("inplace", False)])
Hardsigmoid = _activation("Hardsigmoid", F.hardsigmoid, [("inplace", False)])
Mish = _activation("Mish", F.mish, [("inplace", False)])
Sigmoid = _activation("Sigmoid", F.sigmoid)
Tanh = _activation("Tanh", F.tanh)
LogSigmoid = _activation("LogSigmoid", F.logsigmoid)
Softsign = _activation("Softsign", F.softsign)
Tanhshrink = _activation("Tanhshrink", F.tanhshrink)


class Hardshrink(Module):
    """x where |x| > lambd, else 0."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """x shrunk towards 0 by lambd (0 within it)."""

    def forward(self, input):
        return F.softshrink(input, self.lambd)


GLU = _activation("GLU", F.glu, [("dim", -1)], "a * sigmoid(b), the halves along dim")
Threshold = _activation("Threshold", F.threshold,
                        [("threshold", None), ("value", None), ("inplace", False)])
Softmax = _activation("Softmax", F.softmax, [("dim", None)])
LogSoftmax = _activation("LogSoftmax", F.log_softmax, [("dim", None)])
Softmin = _activation("Softmin", F.softmin, [("dim", None)])


class Softmax2d(Module):
    """Softmax over the channels of each position of (N, C, H, W) or
    (C, H, W) input."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D "
                             f"instead")
        return F.softmax(input, -3)


class PReLU(Module):
    """max(0, x) + a * min(0, x), a learned: one value, or one per channel."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(ember.empty(num_parameters, **_factory(device, dtype)))
        self.reset_parameters()

    def reset_parameters(self):
        with ember.no_grad():
            self.weight.fill_(self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class CosineSimilarity(Module):
    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class Dropout(Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Embedding(Module):
    """A lookup table; weight starts N(0, 1), the padding_idx row zero."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 _freeze=False, device=None, dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
            if padding_idx < 0:
                padding_idx += num_embeddings
        self.padding_idx, self.max_norm, self.norm_type = padding_idx, max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = Parameter(ember.empty(num_embeddings, embedding_dim,
                                                **_factory(device, dtype)),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with ember.no_grad():
                self.weight[self.padding_idx].fill_(0)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None,
                        norm_type=2.0, scale_grad_by_freq=False, sparse=False):
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=embeddings, _freeze=freeze)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm,
                           self.norm_type, self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        return s


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of embedding rows (F.embedding_bag);
    weight starts N(0, 1), the padding_idx row zero."""

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, mode="mean", sparse=False, _weight=None,
                 include_last_offset=False, padding_idx=None, device=None, dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("padding_idx must be within num_embeddings")
            if padding_idx < 0:
                padding_idx += num_embeddings
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(ember.empty(num_embeddings, embedding_dim,
                                                **_factory(device, dtype)))
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.weight = Parameter(_weight)
        self.mode, self.include_last_offset = mode, include_last_offset

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with ember.no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse,
                               per_sample_weights, self.include_last_offset, self.padding_idx)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, mode="mean", sparse=False,
                        include_last_offset=False, padding_idx=None):
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(rows, cols, max_norm, norm_type, scale_grad_by_freq, mode, sparse,
                  embeddings, include_last_offset, padding_idx)
        bag.weight.requires_grad = not freeze
        return bag

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        kw = _factory(device, dtype)
        if elementwise_affine:
            self.weight = Parameter(ember.ones(*self.normalized_shape, **kw))
            if bias:
                self.bias = Parameter(ember.zeros(*self.normalized_shape, **kw))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def reset_parameters(self):
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class RMSNorm(Module):
    """x / sqrt(mean(x^2 over the normalized_shape dims) + eps), times a
    learned weight (elementwise_affine); eps None: the dtype's epsilon."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ember.ones(*self.normalized_shape,
                                               **_factory(device, dtype)))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self):
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, input):
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class _BatchNorm(Module):
    _dims = ()

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, bias=True):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self._has_bias = affine and bias
        kw = _factory(device, dtype)
        if affine:
            self.weight = Parameter(ember.ones(num_features, **kw))
        else:
            self.register_parameter("weight", None)
        if affine and bias:
            self.bias = Parameter(ember.zeros(num_features, **kw))
        else:
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", ember.zeros(num_features, **kw))
            self.register_buffer("running_var", ember.ones(num_features, **kw))
            self.register_buffer("num_batches_tracked",  # with the others (PyTorch's too)
                                 ember.tensor(0, dtype=ember.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def _check_input_dim(self, input):
        if input.dim() not in self._dims:
            want = " or ".join(f"{d}D" for d in self._dims)
            raise ValueError(f"expected {want} input (got {input.dim()}D input)")
        if input.shape[1] != self.num_features:
            raise RuntimeError(f"running_mean should contain {input.shape[1]} elements not "
                               f"{self.num_features}")
        if self.training and input.numel() // max(input.shape[1], 1) <= 1:
            # checked here, before num_batches_tracked moves, so a failing call
            # changes nothing
            raise ValueError(f"Expected more than 1 value per channel when training, got "
                             f"input size {list(input.shape)}")

    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            with ember.no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked)
        use_batch = self.training or not self.track_running_stats
        update = self.training and self.track_running_stats
        return F.batch_norm(input, self.running_mean if update or not use_batch else None,
                            self.running_var if update or not use_batch else None,
                            self.weight, self.bias, use_batch, factor, self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self._has_bias}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    _dims = (4,)


class BatchNorm3d(_BatchNorm):
    _dims = (5,)


class GroupNorm(Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups, self.num_channels = num_groups, num_channels
        self.eps, self.affine = eps, affine
        kw = _factory(device, dtype)
        if affine:
            self.weight = Parameter(ember.ones(num_channels, **kw))
        else:
            self.register_parameter("weight", None)
        if affine and bias:
            self.bias = Parameter(ember.zeros(num_channels, **kw))
        else:
            self.register_parameter("bias", None)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")


class _InstanceNorm(_BatchNorm):
    """Per-sample, per-channel normalisation over the spatial dimensions
    (affine and running statistics off by default, as PyTorch); _dims is
    (unbatched rank, batched rank)."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias)

    def _check_input_dim(self, input):
        if input.dim() not in self._dims:
            raise ValueError(f"expected {self._dims[0]}D or {self._dims[1]}D input (got "
                             f"{input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        unbatched = input.dim() == self._dims[0]
        x = input.unsqueeze(0) if unbatched else input
        if x.shape[1] != self.num_features and self.affine:
            raise ValueError(f"expected input's size at dim=1 to match num_features "
                             f"({self.num_features}), but got: {x.shape[1]}.")
        use_stats = self.training or not self.track_running_stats
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              use_stats, self.momentum if self.momentum is not None else 0.1,
                              self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of (N, C, L) or (C, L) input over L."""
    _dims = (2, 3)


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of (N, C, H, W) or (C, H, W) input over H×W."""
    _dims = (3, 4)


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of (N, C, D, H, W) or (C, D, H, W) input."""
    _dims = (4, 5)


class Dropout1d(Dropout):
    def forward(self, input):
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(Dropout):
    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(Dropout):
    def forward(self, input):
        return F.dropout3d(input, self.p, self.training, self.inplace)


class _ConvNd(Module):
    """Shared by the convolutions and transposed convolutions: arguments,
    parameters (PyTorch's initialisation: kaiming_uniform_(a=√5), bias
    uniform ±1/√fan_in), padding modes, repr."""

    _nd = 0
    _functional = None
    _transposed = False
    _padding_modes = ("zeros", "reflect", "replicate", "circular")

    @classmethod
    def _tuple(cls, v):
        return _ntuple(v, cls._nd)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None, output_padding=0):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode not in self._padding_modes:
            raise ValueError(f"padding_mode must be one of {list(self._padding_modes)}, but "
                             f"got padding_mode='{padding_mode}'")
        if isinstance(padding, str):
            if self._transposed:
                raise ValueError(f"{type(self).__name__} does not accept a padding string, "
                                 f"got padding={padding!r}")
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 "{'valid', 'same'}")
            if padding == "same" and self._tuple(stride) != (1,) * self._nd:
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = self._tuple(padding)
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = self._tuple(kernel_size), self._tuple(stride)
        self.padding, self.dilation, self.groups = padding, self._tuple(dilation), groups
        self.output_padding = self._tuple(output_padding)
        self.transposed = self._transposed
        self.padding_mode = padding_mode
        kw = _factory(device, dtype)
        # a transposed convolution's weight is (in, out / groups, *k)
        rows, cols = ((in_channels, out_channels // groups) if self._transposed
                      else (out_channels, in_channels // groups))
        self.weight = Parameter(ember.empty(rows, cols, *self.kernel_size, **kw))
        if bias:
            self.bias = Parameter(ember.empty(out_channels, **kw))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _mode_padding(self):
        """F.pad's amounts (last dimension first) for a non-zeros padding_mode."""
        if self.padding == "valid":
            return (0,) * (2 * self._nd)
        pads = []
        for i in reversed(range(self._nd)):
            if self.padding == "same":
                total = self.dilation[i] * (self.kernel_size[i] - 1)
                pads += [total // 2, total - total // 2]
            else:
                pads += [self.padding[i]] * 2
        return tuple(pads)

    def forward(self, input):
        padding = self.padding
        if self.padding_mode != "zeros":
            input = F.pad(input, self._mode_padding(), mode=self.padding_mode)
            padding = 0
        return type(self)._functional(input, self.weight, self.bias, self.stride, padding,
                                      self.dilation, self.groups)

    def extra_repr(self):
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * self._nd:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._nd:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self._nd:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


def _ntuple(v, n):
    if isinstance(v, numbers.Integral):
        return (int(v),) * n
    v = tuple(int(i) for i in v)
    if len(v) == 1:
        return v * n
    if len(v) != n:
        raise ValueError(f"expected an int or a tuple of {n} ints, got {v}")
    return v


class Conv1d(_ConvNd):
    """1-D convolution over (N, C, L), through the conv2d kernel."""

    _nd = 1
    _functional = staticmethod(F.conv1d)


class Conv2d(_ConvNd):
    """2-D convolution (cross-correlation) over (N, C, H, W)."""

    _nd = 2
    _functional = staticmethod(F.conv2d)


class Conv3d(_ConvNd):
    """3-D convolution (cross-correlation) over (N, C, D, H, W)."""

    _nd = 3
    _functional = staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    """The gradient of a convolution with respect to its input, as a layer;
    forward's output_size picks among the sizes a stride allows."""

    _transposed = True
    _padding_modes = ("zeros",)

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{type(self).__name__}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype, output_padding)

    def _output_padding(self, input, output_size):
        """output_padding that yields output_size (PyTorch's rule and message)."""
        if output_size is None:
            return self.output_padding
        nd = self._nd
        lead = 2 if input.dim() == nd + 2 else 1
        output_size = [int(v) for v in output_size]
        if len(output_size) == lead + nd:
            output_size = output_size[lead:]
        if len(output_size) != nd:
            raise ValueError(f"ConvTranspose{nd}D: for {input.dim()}D input, output_size must "
                             f"have {nd} or {lead + nd} elements (got {len(output_size)})")
        spatial = input.shape[lead:]
        lows = [(spatial[d] - 1) * self.stride[d] - 2 * self.padding[d]
                + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(nd)]
        highs = [low + self.stride[d] - 1 for d, low in enumerate(lows)]
        for size, low, high in zip(output_size, lows, highs):
            if not low <= size <= high:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {lows} to {highs} (for an input of "
                                 f"{input.shape[2:]})")
        return tuple(size - low for size, low in zip(output_size, lows))

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return type(self)._functional(input, self.weight, self.bias, self.stride, self.padding,
                                      output_padding, self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    _nd = 1
    _functional = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    _nd = 2
    _functional = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    _nd = 3
    _functional = staticmethod(F.conv_transpose3d)


class _MaxPoolNd(Module):
    _functional = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):
        return type(self)._functional(input, self.kernel_size, self.stride, self.padding,
                                      self.dilation, self.ceil_mode, self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}, dilation={self.dilation}, "
                f"ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    _functional = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    _functional = staticmethod(F.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    _functional = staticmethod(F.max_pool3d)


class AvgPool1d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel_size = (F._single(kernel_size),)
        self.stride = (F._single(stride if stride is not None else kernel_size),)
        self.padding = (F._single(padding),)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding,
                            self.ceil_mode, self.count_include_pad)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}")


class AdaptiveAvgPool2d(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool2d(Module):
    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input):
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AvgPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding,
                            self.ceil_mode, self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}")


class AvgPool3d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding,
                            self.ceil_mode, self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}")


class _AdaptivePool(Module):
    _functional = None

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return type(self)._functional(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePool):
    _functional = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool3d(_AdaptivePool):
    _functional = staticmethod(F.adaptive_avg_pool3d)


class AdaptiveMaxPool1d(_AdaptivePool):
    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(AdaptiveMaxPool1d):
    def forward(self, input):
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class _MaxUnpoolNd(Module):
    """Inverse of max pooling: the pooled values go back to the positions
    their indices name, every other element is zero."""
    _nd = 0
    _functional = None

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, self._nd)
        self.stride = _ntuple(stride if stride is not None else kernel_size, self._nd)
        self.padding = _ntuple(padding, self._nd)

    def forward(self, input, indices, output_size=None):
        return type(self)._functional(input, indices, self.kernel_size, self.stride,
                                      self.padding, output_size)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}")


class MaxUnpool1d(_MaxUnpoolNd):
    _nd = 1
    _functional = staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    _nd = 2
    _functional = staticmethod(F.max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    _nd = 3
    _functional = staticmethod(F.max_unpool3d)
