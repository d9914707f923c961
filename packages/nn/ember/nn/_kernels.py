"""The one dispatch point between ember.nn.functional and NN kernels.

Layers whose compute is a kernel (convolution, pooling, ...) call
``kernel(name)(...)``.  Every name has a composed implementation here (or
in _composed_more), written with ember operations, so autograd, gradcheck
and double backward work through it on any backend.

A kernel package (ember-thnn for the CPU, ember-thcunn for the GPU)
registers in the entry-point group ``ember.kernels``; the entry point loads
an object with ``tensor_type`` (the class of the backend's raw tensors it
computes on), ``float_dtypes`` (the dtypes its kernels take) and the kernel
functions by name (``conv2d_forward``, ...), which _kernel_specs.py's one
table turns into specs; a package may instead give ``nn_kernels()``
returning ``{name: spec}`` itself.  A spec works on raw tensors, without
autograd:

- ``differentiable``: n -- the first n arguments are the tensors (or None)
  gradients flow to -- or a tuple of the positions of those arguments;
- ``forward(*args)``: the composed function's arguments with every ember
  Tensor replaced by its raw tensor; returns ``(outputs, ctx)`` -- a raw
  tensor, or a tuple whose first element is the one differentiable output
  -- or NotImplemented for a case it does not handle (the composed function
  runs instead);
- ``backward(ctx, grad, inputs, needs)``: the raw gradient of the first
  output, the differentiable raw inputs and which of them need a gradient;
  returns one raw gradient each (None where not needed).

_kernel_autograd adds the autograd recording once for all packages (first
order through the spec's backward, double backward through the composed
function).  Names a package does not provide stay composed;
``EMBER_NN_KERNELS=composed`` ignores installed kernel packages.
"""
import os

import ember

__all__ = ["kernel", "providers", "COMPOSED"]

_table = None
_providers = []
_objects = []  # the loaded packages' entry-point objects, in _providers' order


def _load():
    global _table
    table = dict(COMPOSED)
    del _providers[:]
    del _objects[:]
    if os.environ.get("EMBER_NN_KERNELS", "") != "composed":
        from importlib.metadata import entry_points
        from ._kernel_autograd import wrap
        from ._kernel_specs import specs_for
        for ep in entry_points(group="ember.kernels"):
            try:
                provider = ep.load()
                # a package's own specs, or this package's table over its functions
                found = provider.nn_kernels() if hasattr(provider, "nn_kernels") \
                    else specs_for(provider)
                tensor_type = provider.tensor_type if found else None
            except Exception as exc:  # a broken kernel package must not break ember.nn
                import warnings
                warnings.warn(f"ember.nn: ignoring kernel package {ep.name!r} ({ep.value}): "
                              f"{exc}", RuntimeWarning, stacklevel=3)
                continue
            _providers.append(ep.name)
            _objects.append(provider)
            # each package's functions take their own tensors and hand the
            # others on to the packages loaded before (the last: composed)
            table.update({k: wrap(k, spec, COMPOSED[k], tensor_type, fallback=table[k])
                          for k, spec in found.items() if k in COMPOSED})
    _table = table
    return table


def kernel(name):
    """The implementation of NN kernel `name` (loaded on first use)."""
    table = _table if _table is not None else _load()
    return table[name]


def reset():
    """Forget the loaded table (the next kernel() call looks again)."""
    global _table
    _table = None


def provider_for(raw, function):
    """The loaded kernel package that computes on raw tensors of `raw`'s
    type and dtype and has `function` (None: compose ember ops instead).
    For layers whose kernels do not fit the one-output spec table
    (the recurrent layers' loops)."""
    if _table is None:
        _load()
    for obj in reversed(_objects):
        if (getattr(obj, "tensor_type", None) is raw.__class__
                and raw.dtype in getattr(obj, "float_dtypes", ()) and hasattr(obj, function)):
            return obj
    return None


def providers():
    """Names of the kernel packages in use (empty: composed ember ops only)."""
    if _table is None:
        _load()
    return list(_providers)


# ---------------------------------------------------------------------------
# composed implementations (inputs are 4-D, arguments normalised to pairs)

def _pad_hw(x, top, bottom, left, right, value):
    if not (top or bottom or left or right):
        return x
    n, c, h, w = x.shape
    parts = []
    if left or right:
        row = []
        if left:
            row.append(x.new_full((n, c, h, left), value))
        row.append(x)
        if right:
            row.append(x.new_full((n, c, h, right), value))
        x = ember.cat(row, 3)
        w = x.shape[3]
    if top:
        parts.append(x.new_full((n, c, top, w), value))
    parts.append(x)
    if bottom:
        parts.append(x.new_full((n, c, bottom, w), value))
    return ember.cat(parts, 2) if len(parts) > 1 else x


def _windows(x, kernel_size, stride, dilation):
    """(N, C, OH, OW, kh, kw) view of the sliding windows of a padded x."""
    (kh, kw), (sh, sw), (dh, dw) = kernel_size, stride, dilation
    ekh, ekw = dh * (kh - 1) + 1, dw * (kw - 1) + 1
    p = x.unfold(2, ekh, sh).unfold(3, ekw, sw)
    if dh > 1 or dw > 1:
        p = p[..., ::dh, ::dw]
    return p


def conv2d(input, weight, bias, stride, padding, dilation, groups):
    """input (N, C, H, W); padding is (top, bottom, left, right)."""
    x = _pad_hw(input, *padding, 0.0)
    n, c = x.shape[:2]
    o, cg, kh, kw = weight.shape
    p = _windows(x, (kh, kw), stride, dilation)          # N C OH OW kh kw
    oh, ow = p.shape[2], p.shape[3]
    if groups == 1:
        cols = p.permute(0, 2, 3, 1, 4, 5).reshape(n * oh * ow, c * kh * kw)
        out = cols.matmul(weight.reshape(o, c * kh * kw).t())     # (N OH OW, O)
        out = out.reshape(n, oh, ow, o)
    else:
        g = groups
        cols = p.reshape(n, g, cg, oh, ow, kh, kw).permute(1, 0, 3, 4, 2, 5, 6)
        cols = cols.reshape(g, n * oh * ow, cg * kh * kw)
        w = weight.reshape(g, o // g, cg * kh * kw).transpose(1, 2)
        out = ember.bmm(cols, w)                                  # (G, N OH OW, O/G)
        out = out.reshape(g, n, oh, ow, o // g).permute(1, 2, 3, 0, 4).reshape(n, oh, ow, o)
    if bias is not None:
        out = out + bias
    return out.permute(0, 3, 1, 2).contiguous()


def _pool_pads(size, k, s, p, d, ceil_mode):
    """Output length and the right padding pooling needs (PyTorch's sizes)."""
    eff = d * (k - 1) + 1
    num = size + 2 * p - eff
    out = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    right = max(0, (out - 1) * s + eff - size - p)
    return out, right


def max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    n, c, h, w = input.shape
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel_size, stride, padding, dilation
    oh, rh = _pool_pads(h, kh, sh, ph, dh, ceil_mode)
    ow, rw = _pool_pads(w, kw, sw, pw, dw, ceil_mode)
    x = _pad_hw(input, ph, rh, pw, rw, float("-inf"))
    p = _windows(x, kernel_size, stride, dilation)[:, :, :oh, :ow]
    flat = p.reshape(n, c, oh, ow, kh * kw)
    idx = flat.detach().argmax(-1, keepdim=True)
    out = flat.gather(-1, idx).squeeze(-1)
    if not return_indices:
        return out
    k = idx.squeeze(-1)
    ki, kj = k // kw, k % kw
    rows = ember.arange(oh, device=input.device).view(oh, 1) * sh - ph + ki * dh
    cols = ember.arange(ow, device=input.device).view(1, ow) * sw - pw + kj * dw
    return out, rows * w + cols


def avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
               divisor_override):
    n, c, h, w = input.shape
    (kh, kw), (sh, sw), (ph, pw) = kernel_size, stride, padding
    oh, rh = _pool_pads(h, kh, sh, ph, 1, ceil_mode)
    ow, rw = _pool_pads(w, kw, sw, pw, 1, ceil_mode)
    x = _pad_hw(input, ph, rh, pw, rw, 0.0)
    p = _windows(x, kernel_size, stride, (1, 1))[:, :, :oh, :ow]
    total = p.sum((-2, -1))
    if divisor_override:
        return total / divisor_override
    # how many elements each window averages: the padded image counts 1
    # where count_include_pad (not the ceil-mode overhang), else the input only
    ones = ember.ones(1, 1, h, w, dtype=input.dtype, device=input.device)
    if count_include_pad:
        ones = _pad_hw(ones, ph, 0, pw, 0, 1.0)
        ones = _pad_hw(ones, 0, ph, 0, pw, 1.0)
        ones = _pad_hw(ones, 0, max(0, rh - ph), 0, max(0, rw - pw), 0.0)
    else:
        ones = _pad_hw(ones, ph, rh, pw, rw, 0.0)
    count = _windows(ones, kernel_size, stride, (1, 1))[:, :, :oh, :ow].sum((-2, -1))
    return total / count


def relu(input):
    """max(input, 0) (out of place; the in-place form stays an ember op)."""
    return input.relu()


def layer_norm(input, weight, bias, normalized_shape, eps):
    """Normalises over the last len(normalized_shape) dimensions."""
    dims = tuple(range(-len(normalized_shape), 0))
    mean = input.mean(dims, keepdim=True)
    centered = input - mean
    var = (centered * centered).mean(dims, keepdim=True)
    out = centered * (var + eps).rsqrt()
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def group_norm(input, weight, bias, num_groups, eps):
    """Normalises each sample's num_groups channel groups (input (N, C, *),
    C divisible by num_groups); weight, bias (C,) or None."""
    n, c = input.shape[:2]
    x = input.reshape(n, num_groups, -1)
    mean = x.mean(-1, keepdim=True)
    centered = x - mean
    var = (centered * centered).mean(-1, keepdim=True)
    out = (centered * (var + eps).rsqrt()).reshape(input.shape)
    shape = (1, c) + (1,) * (input.dim() - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """Normalises over every dimension but 1 (the channels).  In training
    the batch statistics are used and the running ones (when given)
    updated in place with the unbiased variance; in eval the running ones."""
    c = input.shape[1]
    dims = (0,) + tuple(range(2, input.dim()))
    shape = (1, c) + (1,) * (input.dim() - 2)
    if training:
        count = input.numel() // c if c else 0  # no channels: empty statistics
        mean = input.mean(dims)
        centered = input - mean.reshape(shape)
        var = (centered * centered).mean(dims)
        if running_mean is not None:
            with ember.no_grad():
                running_mean.mul_(1 - momentum).add_(mean.detach() * momentum)
                running_var.mul_(1 - momentum).add_(
                    var.detach() * (momentum * count / (count - 1)))
        out = centered * (var + eps).rsqrt().reshape(shape)
    else:
        out = (input - running_mean.reshape(shape)) * (running_var + eps).rsqrt().reshape(shape)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def cross_entropy(input, target, weight, reduction, ignore_index):
    """log_softmax over the class dimension, then nll_loss; target holds
    class indices (int64), already checked against the input."""
    from .functional import nll_loss
    logp = input.log_softmax(0 if input.dim() == 1 else 1)
    return nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)


COMPOSED = {"conv2d": conv2d, "max_pool2d": max_pool2d, "avg_pool2d": avg_pool2d,
            "relu": relu, "layer_norm": layer_norm, "group_norm": group_norm,
            "batch_norm": batch_norm,
            "cross_entropy": cross_entropy}
COMPOSED.update(__import__("ember.nn._composed_more", fromlist=["KERNELS"]).KERNELS)
