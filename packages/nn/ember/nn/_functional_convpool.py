"""ember.nn.functional: convolutions (1-d, 2-d, 3-d, transposed), pooling
(max / average in 1, 2 and 3 d, adaptive), max_unpool.  Arguments are
checked here (with PyTorch's messages) and normalised before the kernel
named in _kernels is called."""
import numbers

import ember
from ember.amp.policy import FP32, LOWER, NATIVE

from . import _kernels
from ._functional_common import _check_tensor, _pair, _single, _type_name, autocast, \
    follows_autocast
from .kernels._common import check_output_size, window_output_size
from .kernels.conv import conv_transpose_nd
from .kernels.pool import adaptive_max_nd, adaptive_mean_dim

__all__ = ["conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
           "max_pool3d", "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool3d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
           "max_unpool1d", "max_unpool2d",
           "max_unpool3d"]
__all__ += ["conv2d", "max_pool2d", "avg_pool2d", "conv1d", "max_pool1d", "avg_pool1d",
            "adaptive_avg_pool2d"]


def _batched4d(input, name):
    if input.dim() not in (3, 4):
        if name != "conv2d":
            raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
        raise RuntimeError(f"Expected 3D (unbatched) or 4D (batched) input to {name}, but got "
                           f"input of size: {list(input.shape)}")
    return (input, False) if input.dim() == 4 else (input.unsqueeze(0), True)


@follows_autocast
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
        if window_output_size(size, kk, ss, pp, dd, ceil_mode)[0] < 1:
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


@follows_autocast
def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    x, unbatched, k, s, p, _ = _pool_args("avg_pool2d", input, kernel_size, stride, padding,
                                          ceil_mode=ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    out = _kernels.kernel("avg_pool2d")(x, k, s, p, ceil_mode, count_include_pad,
                                        divisor_override)
    return out.squeeze(0) if unbatched else out


@autocast(LOWER, LOWER)
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


@autocast(NATIVE, NATIVE)
def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    if input.dim() not in (2, 3):
        raise RuntimeError("avg_pool1d() Expected 2D or 3D input tensor, but got "
                           f"{list(input.shape)}")
    stride = kernel_size if stride is None or stride == [] else stride
    return avg_pool2d(input.unsqueeze(-2), (1, _single(kernel_size)), (1, _single(stride)),
                      (0, _single(padding)), ceil_mode, count_include_pad).squeeze(-2)


@autocast(NATIVE, NATIVE)
def adaptive_avg_pool2d(input, output_size):
    name = "adaptive_avg_pool2d"
    x, unbatched = _batched4d(input, name)
    h, w = x.shape[2:]
    if isinstance(output_size, numbers.Integral) or output_size is None:
        output_size = (output_size, output_size)
    oh, ow = (h if o is None else int(o) for o in output_size)
    if oh <= 0 or ow <= 0 and not (h == 0 or w == 0):
        raise RuntimeError(f"{name}: output_size must be positive, got {list(output_size)}")
    out = _adaptive_avg(x, (oh, ow))
    return out.squeeze(0) if unbatched else out


def _ntuple(v, n, name="argument"):
    """v as a tuple of n ints (an int or a 1-tuple is repeated)."""
    if isinstance(v, numbers.Integral):
        return (int(v),) * n
    v = tuple(int(i) for i in v)
    if len(v) == 1:
        return v * n
    if len(v) != n:
        raise ValueError(f"{name} must be an int or a tuple of {n} ints, got {v}")
    return v


def _batched(input, nd, name):
    """input with a batch dimension (conv messages), and whether it had none."""
    _check_tensor(input)
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    return (input, False) if input.dim() == nd + 2 else (input.unsqueeze(0), True)


def _sizes(values):
    return " x ".join(str(v) for v in values)


# ---- convolution -----------------------------------------------------------------
@follows_autocast
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution (cross-correlation) of (N, C, D, H, W) input."""
    x, unbatched = _batched(input, 3, "conv3d")
    stride, dilation = _ntuple(stride, 3, "stride"), _ntuple(dilation, 3, "dilation")
    if weight.dim() != 5:
        raise RuntimeError(f"weight should have 5 dimensions for conv3d, got {weight.dim()}")
    o, cg = weight.shape[:2]
    ks = tuple(weight.shape[2:])
    if groups < 1 or o % groups:
        raise RuntimeError("Given groups=%d, expected weight to be divisible by %d at "
                           "dimension 0, but got weight of size %s instead"
                           % (groups, groups, list(weight.shape)))
    if min(stride) < 1:
        raise RuntimeError("non-positive stride is not supported")
    if min(dilation) < 1:
        raise RuntimeError("dilation should be greater than zero")
    if x.shape[1] != cg * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected "
            f"input{list(x.shape)} to have {cg * groups} channels, but got {x.shape[1]} "
            "channels instead")
    _same_dtype(x, weight, bias)
    pads = explicit_padding(padding, ks, stride, dilation)
    padded = [x.shape[2 + i] + pads[2 * i] + pads[2 * i + 1] for i in range(3)]
    eff = [d * (k - 1) + 1 for d, k in zip(dilation, ks)]
    if any(p < e for p, e in zip(padded, eff)):
        raise RuntimeError(f"Calculated padded input size per channel: ({_sizes(padded)}). "
                           f"Kernel size: ({_sizes(eff)}). Kernel size can't be greater than "
                           "actual input size")
    out = _kernels.kernel("conv3d")(x, weight, bias, stride, pads, dilation, groups)
    return out.squeeze(0) if unbatched else out


def _same_dtype(input, weight, bias):
    for t in (weight, bias):
        if t is not None and t.dtype != input.dtype:
            raise RuntimeError(f"expected scalar type {_type_name(input)[:-6]} but found "
                               f"{_type_name(t)[:-6]}")


def explicit_padding(padding, kernel_size, stride, dilation):
    """Per-side zero padding (low, high per dimension) from an int, a tuple
    or 'same'/'valid' ('same' puts the odd element on the high side)."""
    nd = len(kernel_size)
    if isinstance(padding, str):
        if padding == "valid":
            return (0,) * (2 * nd)
        if padding == "same":
            if max(stride) != 1:
                raise ValueError("padding='same' is not supported for strided convolutions")
            pads = ()
            for k, d in zip(kernel_size, dilation):
                total = d * (k - 1)
                pads += (total // 2, total - total // 2)
            return pads
        raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                         "{'valid', 'same'}")
    p = _ntuple(padding, nd, "padding")
    if min(p) < 0:
        raise RuntimeError("negative padding is not supported")
    return tuple(v for v in p for _ in range(2))


def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation,
                    nd, name):
    x, unbatched = _batched(input, nd, name)
    if weight.dim() != nd + 2:
        raise RuntimeError(f"weight should have {nd + 2} dimensions for {name}, got "
                           f"{weight.dim()}")
    stride, dilation = _ntuple(stride, nd, "stride"), _ntuple(dilation, nd, "dilation")
    padding = _ntuple(padding, nd, "padding")
    output_padding = _ntuple(output_padding, nd, "output_padding")
    c = weight.shape[0]
    ks = tuple(weight.shape[2:])
    if x.shape[1] != c:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected "
                           f"input{list(x.shape)} to have {c} channels, but got {x.shape[1]} "
                           "channels instead")
    if groups < 1 or c % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size {list(weight.shape)} "
                           "instead")
    if min(stride) < 1:
        raise RuntimeError("non-positive stride is not supported")
    if min(dilation) < 1:
        raise RuntimeError("dilation should be greater than zero")
    _same_dtype(x, weight, bias)
    if min(padding) < 0 or min(output_padding) < 0:
        raise RuntimeError("negative padding is not supported")
    if any(op >= max(s, d) for op, s, d in zip(output_padding, stride, dilation)):
        names = ("depth", "height", "width")[3 - nd:] if nd > 1 else ("width",)
        parts = [f"output_padding_{n}: {v}" for n, v in zip(names, output_padding)]
        parts += [f"stride_{n}: {v}" for n, v in zip(names, stride)]
        parts += [f"dilation_{n}: {v}" for n, v in zip(names, dilation)]
        raise RuntimeError("output padding must be smaller than either stride or dilation, "
                           "but got " + " ".join(parts))
    osz = [(size - 1) * s - 2 * p + d * (k - 1) + op + 1 for size, s, p, d, k, op in
           zip(x.shape[2:], stride, padding, dilation, ks, output_padding)]
    if min(osz) < 1:
        raise RuntimeError(f"Given input size per channel: ({_sizes(x.shape[2:])}). "
                           f"Calculated output size per channel: ({_sizes(osz)}). Output "
                           "size is too small")
    if nd == 2:
        out = _kernels.kernel("conv_transpose2d")(x, weight, bias, stride, padding,
                                                  output_padding, groups, dilation)
    else:
        out = conv_transpose_nd(x, weight, bias, stride, padding,
                                               output_padding, groups, dilation)
    return out.squeeze(0) if unbatched else out


@autocast(LOWER, LOWER)
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    """The gradient of conv1d with respect to its input, as a layer."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 1, "conv_transpose1d")


@follows_autocast
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    """The gradient of conv2d with respect to its input, as a layer; weight
    is (C_in, C_out / groups, kH, kW)."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 2, "conv_transpose2d")


@autocast(LOWER, LOWER)
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 3, "conv_transpose3d")


# ---- 3-d pooling ------------------------------------------------------------------
def _pool3d_args(name, input, kernel_size, stride, padding, dilation, ceil_mode):
    _check_tensor(input)
    if input.dim() not in (4, 5) or input.numel() == 0 and input.dim() == 4:
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    x, unbatched = (input, False) if input.dim() == 5 else (input.unsqueeze(0), True)

    def triple(v, what, form="a single int"):
        try:
            return _ntuple(v, 3, what)
        except (TypeError, ValueError):
            raise RuntimeError(f"{name}: {what} must either be {form}, or a tuple of three "
                               "ints") from None
    k = triple(kernel_size, "kernel_size")
    s = k if stride is None or (not isinstance(stride, numbers.Integral) and len(stride) == 0) \
        else triple(stride, "stride", "omitted, a single int")
    p, d = triple(padding, "padding"), triple(dilation, "dilation")
    if min(s) == 0:
        raise RuntimeError("stride should not be zero")
    if min(k) < 1 or min(s) < 0:
        raise RuntimeError(f"{name}: kernel_size and stride must be greater than zero, but got "
                           f"kernel_size={list(k)} and stride={list(s)}")
    if min(d) < 1:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationT: {d[0]} "
                           f"dilationH: {d[1]} dilationW: {d[2]}")
    for kk, pp, dd in zip(k, p, d):
        if pp < 0 or pp > kk // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={pp}, kernel_size={kk} and dilation={dd}")
    sizes = tuple(x.shape[2:])
    if name == "avg_pool3d" and any(n + 2 * pp < kk for n, kk, pp in zip(sizes, k, p)):
        raise RuntimeError(f"input image (T: {sizes[0]} H: {sizes[1]} W: {sizes[2]}) smaller "
                           f"than kernel size (kT: {k[0]} kH: {k[1]} kW: {k[2]})")
    out = [window_output_size(n, kk, ss, pp, dd, ceil_mode)[0]
           for n, kk, ss, pp, dd in zip(sizes, k, s, p, d)]
    if min(out) < 1:
        shape = "x".join(str(v) for v in x.shape[1:])
        oshape = "x".join(str(v) for v in [x.shape[1]] + out)
        raise RuntimeError(f"Given input size: ({shape}). Calculated output size: ({oshape})."
                           " Output size is too small")
    return x, unbatched, k, s, p, d


@follows_autocast
def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    x, unbatched, k, s, p, d = _pool3d_args("max_pool3d", input, kernel_size, stride,
                                            padding, dilation, ceil_mode)
    out = _kernels.kernel("max_pool3d")(x, k, s, p, d, bool(ceil_mode), bool(return_indices))
    if unbatched:
        return tuple(o.squeeze(0) for o in out) if return_indices else out.squeeze(0)
    return out


@follows_autocast
def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    x, unbatched, k, s, p, _ = _pool3d_args("avg_pool3d", input, kernel_size, stride, padding,
                                            1, ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    out = _kernels.kernel("avg_pool3d")(x, k, s, p, bool(ceil_mode), bool(count_include_pad),
                                        divisor_override)
    return out.squeeze(0) if unbatched else out


# ---- adaptive pooling ---------------------------------------------------------------
def _adaptive_args(input, output_size, nd, name, message):
    _check_tensor(input)
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(message)
    for i in range(1, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {i} being empty")
    if isinstance(output_size, numbers.Integral) or output_size is None:
        output_size = (output_size,) * nd
    output_size = tuple(output_size)
    if len(output_size) != nd:
        raise ValueError(f"{name}: output_size must have {nd} elements, got "
                         f"{len(output_size)}")
    sizes = input.shape[-nd:]
    out = tuple(int(n) if o is None else int(o) for o, n in zip(output_size, sizes))
    if min(out) < 0:
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal "
                           f"to 0 but received {list(out)}")
    return out


def _adaptive_avg(x, out):
    """Mean over PyTorch's adaptive cells, one spatial dimension at a time
    (a mean of equal-length means is the mean)."""
    nd = len(out)
    check_output_size(x, tuple(x.shape[:-nd]) + tuple(out))
    for i, o in enumerate(out):
        x = adaptive_mean_dim(x, x.dim() - nd + i, o)
    return x


@autocast(NATIVE, NATIVE)
def adaptive_avg_pool1d(input, output_size):
    out = _adaptive_args(input, output_size, 1, "adaptive_avg_pool1d",
                         f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional "
                         "tensor for argument #1 'self' (while checking arguments for "
                         "adaptive_avg_pool1d)")
    return _adaptive_avg(input, out)


@autocast(NATIVE, FP32)
def adaptive_avg_pool3d(input, output_size):
    out = _adaptive_args(input, output_size, 3, "adaptive_avg_pool3d",
                         f"adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got "
                         f"{list(input.shape)}")
    return _adaptive_avg(input, out)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    out = _adaptive_args(input, output_size, 2, "adaptive_max_pool2d",
                         "adaptive_max_pool2d(): Expected 3D or 4D tensor, but got "
                         f"{list(input.shape)}")
    x, unbatched = (input, False) if input.dim() == 4 else (input.unsqueeze(0), True)
    if min(out) == 0 or x.shape[0] == 0:
        res = x.new_zeros(x.shape[0], x.shape[1], *out)
        res = (res, res.new_zeros(res.shape, dtype=ember.int64)) if return_indices else res
    else:
        res = _kernels.kernel("adaptive_max_pool2d")(x, out, bool(return_indices))
    if unbatched:
        return tuple(r.squeeze(0) for r in res) if return_indices else res.squeeze(0)
    return res


@autocast(NATIVE, FP32)
def adaptive_max_pool3d(input, output_size, return_indices=False):
    out = _adaptive_args(input, output_size, 3, "adaptive_max_pool3d",
                         "adaptive_max_pool3d(): Expected 4D or 5D tensor, but got "
                         f"{list(input.shape)}")
    x, unbatched = (input, False) if input.dim() == 5 else (input.unsqueeze(0), True)
    if min(out) == 0 or x.shape[0] == 0:
        res = x.new_zeros(x.shape[0], x.shape[1], *out)
        res = (res, res.new_zeros(res.shape, dtype=ember.int64)) if return_indices else res
    else:
        res = adaptive_max_nd(x, out, bool(return_indices))
    if unbatched:
        return tuple(r.squeeze(0) for r in res) if return_indices else res.squeeze(0)
    return res


def adaptive_max_pool1d(input, output_size, return_indices=False):
    (o,) = _adaptive_args(input, output_size, 1, "adaptive_max_pool1d",
                          f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional "
                          "tensor for argument #1 'self' (while checking arguments for "
                          "adaptive_max_pool1d)")
    res = adaptive_max_pool2d(input.unsqueeze(-2), (1, o), return_indices)
    if return_indices:
        return res[0].squeeze(-2), res[1].squeeze(-2)
    return res.squeeze(-2)


# ---- max_unpool ----------------------------------------------------------------------
def _max_unpool(input, indices, kernel_size, stride, padding, output_size, nd, name):
    """Scatters each pooled value back to the position its index names;
    every other element of the output is zero."""
    _check_tensor(input)
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}: Expected {nd + 1}D or {nd + 2}D input, but got "
                           f"{input.dim()}D")
    if indices.dtype is not ember.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: "
                           f"{indices.dtype}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    k = _ntuple(kernel_size, nd, "kernel_size")
    s = k if stride is None else _ntuple(stride, nd, "stride")
    p = _ntuple(padding, nd, "padding")
    sizes = input.shape[-nd:]
    default = [(n - 1) * ss - 2 * pp + kk for n, ss, pp, kk in zip(sizes, s, p, k)]
    if output_size is None:
        out = default
    else:
        out = [int(v) for v in output_size]
        if len(out) == nd + 2 or len(out) == nd + 1 and input.dim() == nd + 1:
            out = out[-nd:]
        if len(out) != nd:
            raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} "
                             f"elements, but it has a length of '{len(out)}'")
        for i, (v, d) in enumerate(zip(out, default)):
            lo, hi = d - s[i], d + s[i]
            if not lo < v < hi:
                raise ValueError(f'invalid output_size "{tuple(out)}" (dim {i} must be between '
                                 f"{lo} and {hi})")
    plane = 1
    for v in out:
        plane *= v
    lead = tuple(input.shape[:-nd])
    flat_idx = indices.reshape(*lead, -1)
    if flat_idx.numel() and (int(flat_idx.min()) < 0 or int(flat_idx.max()) >= plane):
        bad = int(flat_idx.max()) if int(flat_idx.max()) >= plane else int(flat_idx.min())
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(str(v) for v in out)})")
    res = input.new_zeros(*lead, plane).scatter(-1, flat_idx, input.reshape(*lead, -1))
    return res.reshape(*lead, *out)


@autocast(NATIVE, FP32)
def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1,
                       "max_unpool1d")


@autocast(NATIVE, FP32)
def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2,
                       "max_unpool2d")


@autocast(NATIVE, FP32)
def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3,
                       "max_unpool3d")


# ---- samples: argument lists every function here is tested with
# (tests/test_functional_samples.py: gradcheck and gradgradcheck in float64,
# contiguous and non-contiguous, CUDA against the CPU, and PyTorch's
# torch.nn.functional on the same values) -----------------------------------
from ember._ops.samples import Index, S, T  # noqa: E402

SAMPLES = {
    "conv1d": [S(T(2, 4, 7), T(6, 2, 3), T(6), 2, 1, 1, 2)],
    "conv2d": [S(T(2, 4, 6, 5), T(6, 2, 3, 2), T(6), (1, 2), 1, 1, 2),
               S(T(1, 2, 5, 5), T(3, 2, 3, 3), None, 1, "same", 2)],
    "conv3d": [S(T(1, 2, 4, 4, 4), T(3, 2, 2, 2, 2), T(3), 1, 1)],
    "conv_transpose1d": [S(T(2, 4, 5), T(4, 3, 3), T(3), 2, 1, 1)],
    "conv_transpose2d": [S(T(1, 4, 3, 3), T(4, 2, 3, 3), T(4), 2, 1, 1, 2)],
    "conv_transpose3d": [S(T(1, 2, 2, 2, 2), T(2, 2, 2, 2, 2), T(2), 2)],
    "max_pool1d": [S(T(2, 3, 8), 3, 2, 1)],
    "max_pool2d": [S(T(2, 3, 6, 6), 2), S(T(1, 2, 6, 5), (3, 2), (2, 1), 1, ceil_mode=True)],
    "max_pool3d": [S(T(1, 2, 4, 4, 4), 2)],
    "avg_pool1d": [S(T(2, 3, 8), 3, 2, 1)],
    "avg_pool2d": [S(T(2, 3, 6, 6), 2),
                   S(T(1, 2, 6, 5), 3, 2, 1, count_include_pad=False, ceil_mode=True)],
    "avg_pool3d": [S(T(1, 2, 4, 4, 4), 2)],
    "adaptive_avg_pool1d": [S(T(2, 3, 7), 3)],
    "adaptive_avg_pool2d": [S(T(2, 3, 7, 5), (3, 2))],
    "adaptive_avg_pool3d": [S(T(1, 2, 5, 4, 3), 2)],
    "adaptive_max_pool1d": [S(T(2, 3, 7), 3)],
    "adaptive_max_pool2d": [S(T(2, 3, 7, 5), (3, 2))],
    "adaptive_max_pool3d": [S(T(1, 2, 5, 4, 3), 2)],
    "max_unpool1d": [S(T(1, 1, 2), Index([[[1, 2]]]), 2)],
    "max_unpool2d": [S(T(1, 1, 2, 2), Index([[[[0, 3], [9, 14]]]]), 2)],
    "max_unpool3d": [S(T(1, 1, 1, 1, 2), Index([[[[[3, 13]]]]]), 2)],
}
