"""ember.nn.functional: the stateless forms of the layers, as PyTorch's
torch.nn.functional.  Everything here composes ember operations (so it is
differentiable to any order), except convolution and pooling, which go
through ember.nn._kernels so that a C kernel package can take them over."""
import math
import numbers
import warnings

import ember

from . import _kernels

__all__ = [
    "linear", "bilinear", "relu", "relu_", "relu6", "leaky_relu", "elu", "selu", "celu",
    "gelu", "silu", "softplus", "hardtanh", "hardswish", "hardsigmoid", "mish", "sigmoid",
    "tanh", "logsigmoid", "softsign", "tanhshrink", "threshold", "softmax", "log_softmax",
    "softmin", "dropout", "embedding", "layer_norm", "batch_norm", "conv2d", "max_pool2d",
    "avg_pool2d", "conv1d", "max_pool1d", "avg_pool1d", "adaptive_avg_pool2d",
    "adaptive_max_pool2d", "group_norm", "instance_norm", "dropout2d", "pad", "one_hot",
    "normalize", "cosine_similarity", "mse_loss", "l1_loss",
    "smooth_l1_loss", "huber_loss", "nll_loss", "cross_entropy", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "kl_div",
]


def _pair(v, name="argument"):
    if isinstance(v, numbers.Integral):
        return (int(v), int(v))
    v = tuple(int(i) for i in v)
    if len(v) == 1:
        return v * 2
    if len(v) != 2:
        raise ValueError(f"{name} must be an int or a pair of ints, got {v}")
    return v


def _check_tensor(x, name="input"):
    if not isinstance(x, ember.Tensor):
        raise TypeError(f"{name} must be a Tensor, not {type(x).__name__}")


def _check_tensors(fn, **args):
    """PyTorch's TypeError for each named argument that is not a Tensor."""
    for position, (name, x) in enumerate(args.items(), 1):
        if not isinstance(x, ember.Tensor):
            raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, "
                            f"not {type(x).__name__}")


# ---- linear ------------------------------------------------------------------
def linear(input, weight, bias=None):
    """y = x Wᵀ + b, with x (*, in_features), W (out_features, in_features)."""
    _check_tensors("linear", input=input, weight=weight)
    if bias is not None:
        _check_tensor(bias, "bias")
    if input.dim() == 0:
        raise RuntimeError("both arguments to linear need to be at least 1D, but they are 0D "
                           f"and {weight.dim()}D")
    if input.shape[-1] != weight.shape[-1]:
        cols = input.shape[-1]
        rows = input.numel() // cols if cols else 0
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{cols} and "
                           f"{weight.shape[-1]}x{weight.shape[0]})")
    if input.dim() == 2 and bias is not None:
        return ember.addmm(bias, input, weight.t())
    if input.dim() > 2:  # leading dims folded into one product (bias added by it)
        flat = input.reshape(-1, input.shape[-1])
        out = flat.mm(weight.t()) if bias is None else ember.addmm(bias, flat, weight.t())
        return out.view(*input.shape[:-1], weight.shape[0])
    out = input.matmul(weight.t())
    return out if bias is None else out + bias


def bilinear(input1, input2, weight, bias=None):
    """y_o = x1ᵀ W_o x2 + b_o, with W (out, in1, in2)."""
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError("bilinear(): input batch dimensions do not match: got "
                           f"{list(input1.shape[:-1])} and {list(input2.shape[:-1])}")
    o, i1, i2 = weight.shape
    if input1.shape[-1] != i1 or input2.shape[-1] != i2:
        raise RuntimeError(f"bilinear(): input sizes ({input1.shape[-1]}, {input2.shape[-1]})"
                           f" do not match the weight's ({i1}, {i2})")
    lead = input1.shape[:-1]
    x1 = input1.reshape(-1, i1)
    x2 = input2.reshape(-1, i2)
    t = x1.matmul(weight.permute(1, 0, 2).reshape(i1, o * i2)).reshape(-1, o, i2)
    out = (t * x2.unsqueeze(1)).sum(-1)
    if bias is not None:
        out = out + bias
    return out.reshape(*lead, o)


# ---- activations -------------------------------------------------------------------
def _inplace(input, fn, inplace):
    """fn(input), written into input when inplace.  When autograd records,
    fn reads a copy, so the values its backward saved are not the ones
    being overwritten (input's history becomes a copy of fn's result)."""
    if not inplace:
        return fn(input)
    source = input.clone() if input.requires_grad and ember.is_grad_enabled() else input
    return input.copy_(fn(source))


def relu(input, inplace=False):
    return input.relu_() if inplace else _kernels.kernel("relu")(input)


def relu_(input):
    return input.relu_()


def threshold(input, threshold, value, inplace=False):
    return _inplace(input, lambda x: ember.where(x > threshold, x, ember.full_like(x, value)),
                    inplace)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _inplace(input, lambda x: ember.where(x > 0, x, x * negative_slope), inplace)


def elu(input, alpha=1.0, inplace=False):
    # expm1 of the clamped input, so the unselected branch cannot overflow
    return _inplace(input, lambda x: ember.where(x > 0, x, alpha * x.clamp(max=0).expm1()),
                    inplace)


def celu(input, alpha=1.0, inplace=False):
    return _inplace(input, lambda x: ember.where(x > 0, x,
                                                 alpha * (x.clamp(max=0) / alpha).expm1()),
                    inplace)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input, inplace=False):
    return _inplace(input, lambda x: _SELU_SCALE * elu(x, _SELU_ALPHA), inplace)


def gelu(input, approximate="none"):
    if approximate == "none":
        return 0.5 * input * (1.0 + (input * (1.0 / math.sqrt(2.0))).erf())
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (input + 0.044715 * input * input * input)
        return 0.5 * input * (1.0 + inner.tanh())
    raise RuntimeError(f"approximate argument must be either none or tanh, got {approximate!r}")


def silu(input, inplace=False):
    return _inplace(input, lambda x: x * x.sigmoid(), inplace)


def _softplus1(x):
    # log(1 + e^x) without overflow in value or gradient: m + log1p(e^(x - 2m))
    # with m = max(x, 0); clamp passes the gradient at x = 0, so the slope
    # there is 1 - 2 * 0.5 = 0.5 (relu + abs would give 0)
    m = x.clamp(min=0)
    return m + (x - 2 * m).exp().log1p()


def softplus(input, beta=1.0, threshold=20.0):
    z = input * beta
    soft = _softplus1(z) / beta if beta != 1 else _softplus1(z)
    return ember.where(z > threshold, input, soft)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _inplace(input, lambda x: x.clamp(min_val, max_val), inplace)


def hardswish(input, inplace=False):
    return _inplace(input, lambda x: x * (x + 3.0).clamp(0.0, 6.0) / 6.0, inplace)


def hardsigmoid(input, inplace=False):
    return _inplace(input, lambda x: (x + 3.0).clamp(0.0, 6.0) / 6.0, inplace)


def mish(input, inplace=False):
    return _inplace(input, lambda x: x * _softplus1(x).tanh(), inplace)


def sigmoid(input):
    return input.sigmoid()


def tanh(input):
    return input.tanh()


def logsigmoid(input):
    return -_softplus1(-input)


def softsign(input):
    return input / (1 + input.abs())


def tanhshrink(input):
    return input - input.tanh()


def _softmax_dim(ndim):
    warnings.warn("Implicit dimension choice for softmax has been deprecated. Change the "
                  "call to include dim=X as an argument.", UserWarning, stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim(input.dim())
    if dtype is not None:
        input = input.to(dtype)
    return input.softmax(dim)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    return softmax(-input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim(input.dim())
    if dtype is not None:
        input = input.to(dtype)
    return input.log_softmax(dim)


# ---- dropout, embedding --------------------------------------------------------------
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


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of `weight` picked by the integer `input`; the row at
    padding_idx receives no gradient."""
    if input.dtype not in (ember.int64, ember.int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"ember.{_type_name(input)} instead (while checking arguments "
                           "for embedding)")
    if scale_grad_by_freq:
        raise NotImplementedError("embedding: scale_grad_by_freq is not supported yet")
    n = weight.shape[0]
    if padding_idx is not None:
        # PyTorch asserts (its wording); a padding_idx outside the rows
        # would otherwise silently pad nothing
        if padding_idx >= n or padding_idx < -n:
            raise AssertionError("Padding_idx must be within num_embeddings")
        if padding_idx < 0:
            padding_idx += n
    flat = input.reshape(-1).long()
    if flat.numel() and (int(flat.max()) >= n or int(flat.min()) < 0):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        with ember.no_grad():
            rows = weight.index_select(0, flat)
            norms = rows.norm(norm_type, dim=1, keepdim=True)
            scale = ember.where(norms > max_norm, max_norm / (norms + 1e-7),
                                ember.ones_like(norms))
            weight[flat] = rows * scale
    if sparse:  # the weight's gradient is a sparse COO tensor
        from ._sparse_embedding import embedding_sparse
        return embedding_sparse(weight, flat, padding_idx).reshape(*input.shape, weight.shape[1])
    out = weight.index_select(0, flat)
    if padding_idx is not None:
        mask = (flat == padding_idx).unsqueeze(1)
        out = ember.where(mask, out.detach(), out)
    return out.reshape(*input.shape, weight.shape[1])


# how PyTorch spells tensor types in messages (FloatTensor, LongTensor, ...)
_TYPE_TITLES = {"float32": "Float", "float64": "Double", "float16": "Half",
                "bfloat16": "BFloat16", "int8": "Char", "uint8": "Byte", "int16": "Short",
                "int32": "Int", "int64": "Long", "bool": "Bool"}


def _type_name(t):
    """'FloatTensor' for a float32 tensor."""
    name = str(t.dtype).split(".")[-1]
    return _TYPE_TITLES.get(name, name) + "Tensor"


# ---- normalisation ----------------------------------------------------------------
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    if isinstance(normalized_shape, numbers.Integral):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    k = len(normalized_shape)
    if tuple(input.shape[input.dim() - k:]) != normalized_shape or input.dim() < k:
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
            f"[*, {', '.join(str(s) for s in normalized_shape)}], but got input of size"
            f"{list(input.shape)}")
    return _kernels.kernel("layer_norm")(input, weight, bias, normalized_shape, eps)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Normalises over every dimension but 1 (the channels).  In training
    the batch statistics are used and the running ones updated in place
    (with the unbiased variance, as PyTorch); in eval the running ones."""
    if input.dim() < 2:
        raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")
    c = input.shape[1]
    if training and c and input.numel() // c <= 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got "
                         f"input size {list(input.shape)}")
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
    return _kernels.kernel("batch_norm")(input, weight, bias, running_mean, running_var,
                                         training, 0.1 if momentum is None else momentum, eps)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    if out is not None:
        raise NotImplementedError("out= is not supported")
    return input / input.norm(p, dim, keepdim=True).clamp(min=eps)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    _check_tensors("cosine_similarity", x1=x1, x2=x2)
    n1 = x1.norm(2, dim).clamp(min=eps)
    n2 = x2.norm(2, dim).clamp(min=eps)
    return (x1 * x2).sum(dim) / (n1 * n2)


def one_hot(tensor, num_classes=-1):
    if tensor.dtype is not ember.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        num_classes = int(tensor.max()) + 1 if tensor.numel() else 0
    if tensor.numel() and (int(tensor.min()) < 0 or int(tensor.max()) >= num_classes):
        raise RuntimeError("Class values must be smaller than num_classes." if tensor.numel()
                           and int(tensor.min()) >= 0 else "Class values must be non-negative.")
    out = ember.zeros(*tensor.shape, num_classes, dtype=ember.int64, device=tensor.device)
    return out.scatter(-1, tensor.unsqueeze(-1), 1)


# ---- convolution and pooling ---------------------------------------------------
def _batched4d(input, name):
    if input.dim() not in (3, 4):
        if name != "conv2d":
            raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
        raise RuntimeError(f"Expected 3D (unbatched) or 4D (batched) input to {name}, but got "
                           f"input of size: {list(input.shape)}")
    return (input, False) if input.dim() == 4 else (input.unsqueeze(0), True)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    x, unbatched = _batched4d(input, "conv2d")
    stride, dilation = _pair(stride, "stride"), _pair(dilation, "dilation")
    if weight.dim() != 4:
        raise RuntimeError(f"weight should have 4 dimensions for conv2d, got {weight.dim()}")
    o, cg, kh, kw = weight.shape
    if groups < 1 or o % groups:
        raise RuntimeError("Given groups=%d, expected weight to be divisible by %d at "
                           "dimension 0, but got weight of size %s instead"
                           % (groups, groups, list(weight.shape)))
    if min(stride) < 1:
        raise RuntimeError("non-positive stride is not supported")
    if x.shape[1] != cg * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected "
            f"input{list(x.shape)} to have {cg * groups} channels, but got {x.shape[1]} "
            "channels instead")
    if isinstance(padding, str):
        if padding == "valid":
            pads = (0, 0, 0, 0)
        elif padding == "same":
            if max(stride) != 1:
                raise ValueError("padding='same' is not supported for strided convolutions")
            th, tw = dilation[0] * (kh - 1), dilation[1] * (kw - 1)
            pads = (th // 2, th - th // 2, tw // 2, tw - tw // 2)
        else:
            raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                             "{'valid', 'same'}")
    else:
        ph, pw = _pair(padding, "padding")
        pads = (ph, ph, pw, pw)
    h, w = x.shape[2] + pads[0] + pads[1], x.shape[3] + pads[2] + pads[3]
    ekh, ekw = dilation[0] * (kh - 1) + 1, dilation[1] * (kw - 1) + 1
    if h < ekh or w < ekw:
        raise RuntimeError(f"Calculated padded input size per channel: ({h} x {w}). Kernel "
                           f"size: ({ekh} x {ekw}). Kernel size can't be greater than actual "
                           "input size")
    out = _kernels.kernel("conv2d")(x, weight, bias, stride, pads, dilation, groups)
    return out.squeeze(0) if unbatched else out


def _pool_output_size(size, k, s, p, d, ceil_mode):
    """PyTorch's pooling output length (a ceil-mode window that would start
    in the right padding is dropped)."""
    num = size + 2 * p - d * (k - 1) - 1
    out = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _pool_args(name, input, kernel_size, stride, padding, dilation=1, ceil_mode=False):
    x, unbatched = _batched4d(input, name)
    k = _pair(kernel_size, "kernel_size")
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) \
        else _pair(stride, "stride")
    p, d = _pair(padding, "padding"), _pair(dilation, "dilation")
    if min(s) < 1:
        raise RuntimeError(f"{name}: stride should be greater than zero")
    if min(k) < 1:
        raise RuntimeError(f"{name}: kernel_size must be greater than zero")
    if min(p) < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {min(p)}")
    if min(d) < 1:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {d[0]} "
                           f"dilationW: {d[1]}")
    if p[0] > k[0] // 2 or p[1] > k[1] // 2:
        raise RuntimeError(f"{name}: pad should be at most half of effective kernel size, but "
                           f"got pad={p[0] if p[0] > k[0] // 2 else p[1]}, kernel_size="
                           f"{k[0] if p[0] > k[0] // 2 else k[1]} and dilation={d[0]}")
    for size, kk, pp, dd, ss in zip(x.shape[2:], k, p, d, s):
        if _pool_output_size(size, kk, ss, pp, dd, ceil_mode) < 1:
            raise RuntimeError(f"Given input size: ({'x'.join(str(v) for v in x.shape[1:])})."
                               f" Calculated output size is too small")
    return x, unbatched, k, s, p, d


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    x, unbatched, k, s, p, d = _pool_args("max_pool2d", input, kernel_size, stride, padding,
                                          dilation, ceil_mode)
    out = _kernels.kernel("max_pool2d")(x, k, s, p, d, ceil_mode, return_indices)
    if unbatched:
        return tuple(o.squeeze(0) for o in out) if return_indices else out.squeeze(0)
    return out


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    x, unbatched, k, s, p, _ = _pool_args("avg_pool2d", input, kernel_size, stride, padding,
                                          ceil_mode=ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    out = _kernels.kernel("avg_pool2d")(x, k, s, p, ceil_mode, count_include_pad,
                                        divisor_override)
    return out.squeeze(0) if unbatched else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """conv2d over (N, C, 1, L) with a (O, C/g, 1, k) kernel."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2D (unbatched) or 3D (batched) input to conv1d, but got "
                           f"input of size: {list(input.shape)}")
    if weight.dim() != 3:
        raise RuntimeError(f"weight should have 3 dimensions for conv1d, got {weight.dim()}")

    def one(v):
        return v if isinstance(v, str) else (1, _single(v))
    pad = padding if isinstance(padding, str) else (0, _single(padding))
    out = conv2d(input.unsqueeze(-2), weight.unsqueeze(-2), bias, one(stride), pad,
                 one(dilation), groups)
    return out.squeeze(-2)


def _single(v):
    if isinstance(v, numbers.Integral):
        return int(v)
    (v,) = tuple(v)
    return int(v)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    if input.dim() not in (2, 3):
        raise RuntimeError("max_pool1d() Expected 2D or 3D input tensor, but got "
                           f"{list(input.shape)}")
    stride = kernel_size if stride is None or stride == [] else stride
    out = max_pool2d(input.unsqueeze(-2), (1, _single(kernel_size)), (1, _single(stride)),
                     (0, _single(padding)), (1, _single(dilation)), ceil_mode, return_indices)
    if return_indices:
        return out[0].squeeze(-2), out[1].squeeze(-2)
    return out.squeeze(-2)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    if input.dim() not in (2, 3):
        raise RuntimeError("avg_pool1d() Expected 2D or 3D input tensor, but got "
                           f"{list(input.shape)}")
    stride = kernel_size if stride is None or stride == [] else stride
    return avg_pool2d(input.unsqueeze(-2), (1, _single(kernel_size)), (1, _single(stride)),
                      (0, _single(padding)), ceil_mode, count_include_pad).squeeze(-2)


def adaptive_avg_pool2d(input, output_size):
    name = "adaptive_avg_pool2d"
    x, unbatched = _batched4d(input, name)
    h, w = x.shape[2:]
    if isinstance(output_size, numbers.Integral) or output_size is None:
        output_size = (output_size, output_size)
    oh, ow = (h if o is None else int(o) for o in output_size)
    if oh <= 0 or ow <= 0 and not (h == 0 or w == 0):
        raise RuntimeError(f"{name}: output_size must be positive, got {list(output_size)}")
    out = _functional_convpool._adaptive_avg(x, (oh, ow))
    return out.squeeze(0) if unbatched else out


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.dim()}")
    n, c = input.shape[:2]
    if num_groups <= 0:
        raise RuntimeError(f"Expected num groups to be greater than 0, got {num_groups}")
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    return _kernels.kernel("group_norm")(input, weight, bias, num_groups, eps)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Normalises each (sample, channel) over its spatial dimensions."""
    n, c = input.shape[:2]
    if use_input_stats:
        x = input.reshape(1, n * c, *input.shape[2:])
        rm = running_mean.repeat(n) if running_mean is not None else None
        rv = running_var.repeat(n) if running_var is not None else None
        out = batch_norm(x, rm, rv, None, None, True, momentum, eps).reshape(input.shape)
        if running_mean is not None:
            with ember.no_grad():
                running_mean.copy_(rm.view(n, c).mean(0))
                running_var.copy_(rv.view(n, c).mean(0))
    else:
        out = batch_norm(input, running_mean, running_var, None, None, False, momentum, eps)
    shape = (1, c) + (1,) * (input.dim() - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


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


# the 3-d/transposed convolution and pooling, resampling and padding,
# embedding_bag and margin/likelihood losses live in files of their own
from . import _functional_convpool, _functional_embedding, _functional_losses  # noqa: E402
from . import _functional_pixelshuffle, _functional_resample  # noqa: E402
from ._functional_convpool import *  # noqa: E402,F401,F403
from ._functional_embedding import *  # noqa: E402,F401,F403
from ._functional_losses import *  # noqa: E402,F401,F403
from ._functional_resample import *  # noqa: E402,F401,F403
from ._functional_pixelshuffle import *  # noqa: E402,F401,F403

__all__ += (["dropout1d", "dropout3d"] + _functional_convpool.__all__
            + _functional_resample.__all__ + _functional_embedding.__all__
            + _functional_losses.__all__ + _functional_pixelshuffle.__all__)
__all__ = list(dict.fromkeys(__all__))


# ---- losses ----------------------------------------------------------------
def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_reduction(reduction, extra=()):
    if reduction not in ("mean", "sum", "none") + tuple(extra):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _same_size(input, target, name):
    _check_tensors(name, input=input, target=target)
    if input.shape != target.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input "
                      f"size ({input.shape}). This will likely lead to incorrect results due "
                      "to broadcasting. Please ensure they have the same size.",
                      UserWarning, stacklevel=3)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    _check_reduction(reduction)
    _same_size(input, target, "mse_loss")
    d = input - target
    loss = d * d
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    _check_reduction(reduction)
    _same_size(input, target, "l1_loss")
    loss = (input - target).abs()
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean",
                   beta=1.0):
    _check_reduction(reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _same_size(input, target, "smooth_l1_loss")
    d = (input - target).abs()
    if beta == 0:
        return _reduce(d, reduction)
    loss = ember.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    return _reduce(loss, reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    _check_reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _same_size(input, target, "huber_loss")
    d = (input - target).abs()
    loss = ember.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _check_class_target(input, target, ignore_index, fn):
    if target.dtype is not ember.int64 and target.dtype is not ember.uint8:
        raise RuntimeError("expected target dtype to be Long or Byte, but got "
                           f"{_type_name(target)[:-6]}")
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    if input.dim() == 1:
        if target.dim() != 0:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    else:
        target_batch = target.shape[0] if target.dim() else 0
        if target.dim() == 0 or input.shape[0] != target_batch:
            raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                             f"batch_size ({target_batch}).")
        expect = (input.shape[0],) + tuple(input.shape[2:])
        if tuple(target.shape) != expect:
            raise RuntimeError(f"Expected target size {list(expect)}, got "
                               f"{list(target.shape)}")
    c = input.shape[0] if input.dim() == 1 else input.shape[1]
    valid = target[target != ignore_index] if target.numel() else target
    if valid.numel():
        lo, hi = int(valid.min()), int(valid.max())
        if lo < 0 or hi >= c:
            raise IndexError(f"Target {lo if lo < 0 else hi} is out of bounds.")
    return c


def _check_class_weight(weight, c):
    if weight is not None and (weight.dim() != 1 or weight.numel() != c):
        raise RuntimeError(f"weight tensor should be defined either for all {c} classes or no "
                           f"classes but got weight tensor of shape: {list(weight.shape)}")


def _classes_last(input):
    """(N, C, d...) -> (N, d..., C); (C,) stays."""
    return input if input.dim() == 1 else input.movedim(1, -1)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """-input[n, target[n]] (times weight[target[n]]); entries whose target
    is ignore_index count neither in the sum nor in the mean's divisor."""
    _check_reduction(reduction)
    c = _check_class_target(input, target, ignore_index, "nll_loss")
    target = target.long()
    _check_class_weight(weight, c)
    x = _classes_last(input)
    keep = target != ignore_index
    safe = ember.where(keep, target, ember.zeros_like(target))
    picked = x.gather(-1, safe.unsqueeze(-1)).squeeze(-1)
    w = keep.to(input.dtype)
    if weight is not None:
        w = w * weight.index_select(0, safe.reshape(-1)).reshape(safe.shape)
    loss = -picked * w
    if reduction == "mean":
        return _weighted_mean(loss.sum(), w.sum())
    return _reduce(loss, reduction)


def _weighted_mean(total, weight_sum):
    """total / weight_sum; when every entry is ignored (weight_sum 0) the
    value is NaN, as PyTorch's, but the gradient 0 rather than NaN."""
    empty = weight_sum == 0
    safe = ember.where(empty, ember.ones_like(weight_sum), weight_sum)
    nan = ember.where(empty, ember.full_like(weight_sum, float("nan")),
                      ember.zeros_like(weight_sum))
    return total / safe + nan


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """log_softmax over dim 1 (dim 0 for unbatched input) then nll_loss;
    target holds class indices (int64) or class probabilities (float, the
    input's shape)."""
    _check_reduction(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")
    cdim = 0 if input.dim() == 1 else 1
    c = input.shape[cdim]
    wshape = [1] * input.dim()
    wshape[cdim] = c
    if target.is_floating_point():
        if target.shape != input.shape:
            raise RuntimeError(f"Expected target size {list(input.shape)}, got "
                               f"{list(target.shape)}")
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / c
        prod = input.log_softmax(cdim) * target
        if weight is not None:
            prod = prod * weight.reshape(wshape)
        loss = -prod.sum(cdim)
        if reduction == "mean":
            return loss.sum() / (input.numel() // c) if input.numel() else loss.sum() / 0.0
        return _reduce(loss, reduction)
    if label_smoothing == 0:
        # checked here once: the kernel (log_softmax + nll fused) trusts its target
        c = _check_class_target(input, target, ignore_index, "cross_entropy")
        _check_class_weight(weight, c)
        return _kernels.kernel("cross_entropy")(input, target.long(), weight, reduction,
                                                ignore_index)
    logp = input.log_softmax(cdim)
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    target = target.long()
    keep = target != ignore_index
    prod = logp if weight is None else logp * weight.reshape(wshape)
    smooth = -prod.sum(cdim) * keep.to(input.dtype)
    if reduction == "mean":
        if weight is None:
            smooth = _weighted_mean(smooth.sum(), keep.to(smooth.dtype).sum())
        else:
            safe = ember.where(keep, target, ember.zeros_like(target))
            w = weight.index_select(0, safe.reshape(-1)).reshape(safe.shape)
            smooth = _weighted_mean(smooth.sum(), (w * keep.to(w.dtype)).sum())
    else:
        smooth = _reduce(smooth, reduction)
    return (1 - label_smoothing) * nll + smooth * (label_smoothing / c)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    _check_reduction(reduction)
    _check_tensors("binary_cross_entropy", input=input, target=target)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the "
                         f"input size ({input.shape}) is deprecated. Please ensure they have "
                         "the same size.")
    if input.numel():
        lo, hi = float(input.detach().min()), float(input.detach().max())
        if lo < 0 or hi > 1 or lo != lo or hi != hi:
            raise RuntimeError("all elements of input should be between 0 and 1")
    if weight is not None:
        weight = weight.expand_as(input)
    return _reduce(_BinaryCrossEntropy.apply(input, target, weight), reduction)


class _BinaryCrossEntropy(ember.autograd.Function):
    """Pointwise BCE with PyTorch's edge handling: the logs are clamped at
    -100 (so log(0) stays finite) and the input gradient's denominator
    x(1 - x) at 1e-12, so a saturated input (exactly 0 or 1) gives a large
    finite gradient instead of NaN.  The backward is written with ember ops,
    so it differentiates again."""

    @staticmethod
    def forward(ctx, x, y, w):
        ctx.save_for_backward(x, y, w)
        loss = -(y * x.log().clamp(min=-100) + (1 - y) * (-x).log1p().clamp(min=-100))
        return loss if w is None else loss * w

    @staticmethod
    def backward(ctx, g):
        x, y, w = ctx.saved_tensors
        if w is not None:
            g = g * w
        gx = gy = None
        if ctx.needs_input_grad[0]:
            gx = g * (x - y) / ((1 - x) * x).clamp(min=1e-12)
        if ctx.needs_input_grad[1]:  # unclamped, as PyTorch: infinite at x = 0 or 1
            gy = g * ((-x).log1p() - x.log())
        return gx, gy, None


_BinaryCrossEntropy.__name__ = "BinaryCrossEntropy"   # grad_fn=<BinaryCrossEntropyBackward>


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction="mean", pos_weight=None):
    """BCE of sigmoid(input), computed stably: (1 - t) x + (1 + (pw - 1) t)
    log(1 + e^-x)."""
    _check_reduction(reduction)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    sp = _softplus1(-input)
    if pos_weight is not None:
        loss = (1 - target) * input + (1 + (pos_weight - 1) * target) * sp
    else:
        loss = (1 - target) * input + sp
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """target · (log target − input) pointwise; input holds log-probabilities."""
    _check_reduction(reduction, ("batchmean",))
    _check_tensors("kl_div", input=input, target=target)
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and "
                      "the support size.'batchmean' divides only by the batch size, and "
                      "aligns with the KL div math definition.'mean' will be changed to "
                      "behave the same as 'batchmean' in the next major release.",
                      UserWarning, stacklevel=2)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = ember.xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() else loss.sum()
    return _reduce(loss, reduction)


# ---- attention -------------------------------------------------------------------
__all__ += ["scaled_dot_product_attention", "multi_head_attention_forward"]


def _safe_softmax(scores):
    """Softmax over the last dim; a row that masks out every key gives
    zeros (as PyTorch's SDPA), with zero gradient rather than NaN."""
    dead = (scores.detach() == float("-inf")).all(-1, keepdim=True)
    if not bool(dead.any()):
        return scores.softmax(-1)
    return scores.masked_fill(dead, 0.0).softmax(-1).masked_fill(dead, 0.0)


def _attention(query, key, value, attn_mask, dropout_p, is_causal, scale, training=True):
    """(dropout(softmax(q kᵀ · scale + mask)) v, the attention weights).
    attn_mask: None, bool (True = may attend) or float (added)."""
    scores = (query * scale).matmul(key.transpose(-2, -1))
    masked = False
    if is_causal:
        length, source = query.shape[-2], key.shape[-2]
        allowed = ember.ones(length, source, dtype=ember.bool, device=query.device).tril()
        scores = scores.masked_fill(~allowed, float("-inf"))
        masked = True
    if attn_mask is not None:
        if attn_mask.dtype == ember.bool:
            scores = ember.where(attn_mask, scores, float("-inf"))
        else:
            scores = scores + attn_mask
        masked = True
    if scores.shape[-1] == 0:  # no keys: the output is all zeros, as a sum over nothing
        weights = scores
    else:
        weights = _safe_softmax(scores) if masked else scores.softmax(-1)
    if dropout_p > 0.0 and training:
        weights = dropout(weights, dropout_p, True)
    return weights.matmul(value), weights


def _dtype_word(dtype):
    return {ember.float32: "float", ember.float64: "double", ember.float16: "c10::Half",
            ember.bfloat16: "c10::BFloat16", ember.int64: "long int",
            ember.int32: "int"}.get(dtype, str(dtype).replace("ember.", ""))


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """softmax(Q Kᵀ · scale + mask) V over the last two dims, batch dims
    broadcast.  query (..., L, E), key (..., S, E), value (..., S, Ev);
    a bool attn_mask marks the pairs that may attend, a float one is
    added; is_causal masks keys after the query's position; scale
    defaults to 1/√E."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        _check_tensor(t, name)
        if t.dim() < 2:
            raise RuntimeError(f"scaled_dot_product_attention(): expected {name} to have at "
                               f"least 2 dimensions, but got {t.dim()}-D")
    if not query.dtype == key.dtype == value.dtype:
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {_dtype_word(query.dtype)} key.dtype: "
                           f"{_dtype_word(key.dtype)} and value.dtype: "
                           f"{_dtype_word(value.dtype)} instead.")
    if attn_mask is not None:
        _check_tensor(attn_mask, "attn_mask")
        if attn_mask.dtype != ember.bool and not attn_mask.is_floating_point():
            raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match "
                               f"query dtype, but got attn_mask.dtype: "
                               f"{_dtype_word(attn_mask.dtype)} and  query.dtype: "
                               f"{_dtype_word(query.dtype)} instead.")
        if is_causal:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not "
                               "be set when is_causal=True")
    if query.shape[-1] != key.shape[-1]:
        raise RuntimeError(f"scaled_dot_product_attention(): query.size(-1) ({query.shape[-1]})"
                           f" must equal key.size(-1) ({key.shape[-1]})")
    if key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"scaled_dot_product_attention(): key.size(-2) ({key.shape[-2]}) "
                           f"must equal value.size(-2) ({value.shape[-2]})")
    if enable_gqa and query.dim() >= 3:
        heads, kv_heads = query.shape[-3], key.shape[-3]
        if kv_heads == 0 or heads % kv_heads or value.shape[-3] != kv_heads:
            raise RuntimeError(f"Number of heads in key and value must divide the number of "
                               f"heads in query: query has {heads}, key {kv_heads}, value "
                               f"{value.shape[-3]}")
        if heads != kv_heads:
            key = key.repeat_interleave(heads // kv_heads, dim=-3)
            value = value.repeat_interleave(heads // kv_heads, dim=-3)
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1]) if query.shape[-1] else 1.0
    return _attention(query, key, value, attn_mask, dropout_p, is_causal, scale)[0]


def _mha_check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads):
    """PyTorch's rank checks; returns whether the input is batched."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError(f"For batched (3-D) `query`, expected `key` and `value` to be "
                                 f"3-D but found {key.dim()}-D and {value.dim()}-D tensors "
                                 f"respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError(f"For batched (3-D) `query`, expected `key_padding_mask` to be "
                                 f"`None` or 2-D but found {key_padding_mask.dim()}-D tensor "
                                 f"instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError(f"For batched (3-D) `query`, expected `attn_mask` to be "
                                 f"`None`, 2-D or 3-D but found {attn_mask.dim()}-D tensor "
                                 f"instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key` and `value` to "
                                 f"be 2-D but found {key.dim()}-D and {value.dim()}-D tensors "
                                 f"respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key_padding_mask` to "
                                 f"be `None` or 1-D but found {key_padding_mask.dim()}-D tensor "
                                 f"instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError(f"For unbatched (2-D) `query`, expected `attn_mask` to be "
                                     f"`None`, 2-D or 3-D but found {attn_mask.dim()}-D tensor "
                                     f"instead")
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                     f"{attn_mask.shape}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.dim()}-D query tensor")


def _additive_mask(mask, name, dtype):
    """A bool mask (True = masked out) as 0/-inf of dtype; float masks as they are."""
    if mask is None:
        return None
    if mask.dtype != ember.bool and not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {name} are supported")
    if mask.dtype == ember.bool:
        return ember.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(
            mask, float("-inf"))
    return mask


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """Multi-head attention on sequence-first input: query (L, N, E), key
    (S, N, kdim), value (S, N, vdim), or unbatched (L, E) …  Returns the
    output (L, N, E) and, when need_weights, the attention weights (N, L, S)
    averaged over heads — (N, heads, L, S) without average_attn_weights."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        _check_tensor(t, name)
    batched = _mha_check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    length, batch, embed_dim = query.shape
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if key_padding_mask is not None and attn_mask is not None and \
            key_padding_mask.dtype != attn_mask.dtype:
        warnings.warn("Support for mismatched key_padding_mask and attn_mask is deprecated. "
                      "Use same type for both instead.", stacklevel=2)
    key_padding_mask = _additive_mask(key_padding_mask, "key_padding_mask", query.dtype)
    # the is_causal hint replaces the mask where PyTorch's fused path would
    causal = bool(is_causal) and key_padding_mask is None and not need_weights
    attn_mask = None if causal else _additive_mask(attn_mask, "attn_mask", query.dtype)
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    if key.shape[1] != batch:
        raise RuntimeError(f"query and key must have the same batch size, but got "
                           f"{batch} and {key.shape[1]}")

    # input projections
    if use_separate_proj_weight:
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight "
                                     f"is None")
        b_q = b_k = b_v = None
        if in_proj_bias is not None:
            b_q, b_k, b_v = in_proj_bias.chunk(3)
        q = linear(query, q_proj_weight, b_q)
        k = linear(key, k_proj_weight, b_k)
        v = linear(value, v_proj_weight, b_v)
    else:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        w_q, w_k, w_v = in_proj_weight.chunk(3)
        b_q = b_k = b_v = None
        if in_proj_bias is not None:
            b_q, b_k, b_v = in_proj_bias.chunk(3)
        if key is value and query is key:  # self-attention: one matmul
            q, k, v = linear(query, in_proj_weight, in_proj_bias).chunk(3, -1)
        else:
            q, k, v = linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)

    source = key.shape[0]
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (length, source):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(length, source)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif tuple(attn_mask.shape) != (batch * num_heads, length, source):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should "
                               f"be {(batch * num_heads, length, source)}.")

    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key.")
        k = ember.cat([k, bias_k.repeat(1, batch, 1)])
        v = ember.cat([v, bias_v.repeat(1, batch, 1)])
        if attn_mask is not None:
            attn_mask = _allow_one_more_key(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _allow_one_more_key(key_padding_mask)
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k is set but bias_v is None" if bias_k is not None
                             else "bias_v is set but bias_k is None")

    # (len, N, E) -> (N·heads, len, head_dim)
    q = q.reshape(length, batch * num_heads, head_dim).transpose(0, 1)
    k = _static_or_heads(static_k, k, batch * num_heads, head_dim, "static_k")
    v = _static_or_heads(static_v, v, batch * num_heads, head_dim, "static_v")
    if add_zero_attn:
        zeros = ember.zeros(batch * num_heads, 1, head_dim, dtype=k.dtype, device=k.device)
        k, v = ember.cat([k, zeros], 1), ember.cat([v, zeros], 1)
        if attn_mask is not None:
            attn_mask = _allow_one_more_key(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _allow_one_more_key(key_padding_mask)
    source = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (batch, source):
            raise AssertionError(f"expecting key_padding_mask shape of {(batch, source)}, but "
                                 f"got {key_padding_mask.shape}")
        kpm = key_padding_mask.reshape(batch, 1, 1, source).expand(batch, num_heads, 1, source)
        kpm = kpm.reshape(batch * num_heads, 1, source)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm

    out, weights = _attention(q, k, v, attn_mask, dropout_p, causal, 1.0 / math.sqrt(head_dim),
                              training)
    out = out.transpose(0, 1).reshape(length * batch, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(length, batch,
                                                              out_proj_weight.shape[0])
    if not batched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    weights = weights.reshape(batch, num_heads, length, source)
    if average_attn_weights:
        weights = weights.mean(1)
    if not batched:
        weights = weights.squeeze(0)
    return out, weights


def _allow_one_more_key(mask):
    """An additive mask with a trailing 0 (attend) column for an appended key."""
    zeros = ember.zeros(*mask.shape[:-1], 1, dtype=mask.dtype, device=mask.device)
    return ember.cat([mask, zeros], -1)


def _static_or_heads(static, projected, rows, head_dim, name):
    if static is None:
        return projected.reshape(projected.shape[0], rows, head_dim).transpose(0, 1)
    if static.shape[0] != rows:
        raise AssertionError(f"expecting {name}.size(0) of {rows}, but got {static.shape[0]}")
    if static.shape[2] != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got "
                             f"{static.shape[2]}")
    return static


# ---- mixed precision -----------------------------------------------------------
# Under ember.autocast the functions that ember.amp's policy table names cast
# their inputs (linear and convolutions to the autocast dtype, losses and
# norms to float32); the others are left as they are.  Last, so that every
# function of this module is covered and calls between them see the wrappers.
from ember.amp.dispatch import autocast_op as _autocast_op  # noqa: E402

for _name in __all__:
    globals()[_name] = _autocast_op(_name, globals()[_name])
del _name
