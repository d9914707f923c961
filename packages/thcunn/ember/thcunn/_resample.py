"""Upsampling (nearest, bilinear) and reflection/replication padding on the
GPU: ember.thnn's functions of the same names and arguments, on ember.thc
tensors; outputs allocated here, the C status raised with its message."""
from ._args import _empty, _tensor as _p
from ._lib import check as _check, lib as _lib

__all__ = [
    "upsample_nearest2d_forward", "upsample_nearest2d_backward_input",
    "upsample_bilinear2d_forward", "upsample_bilinear2d_backward_input",
    "reflection_pad1d_forward", "reflection_pad1d_backward_input",
    "reflection_pad2d_forward", "reflection_pad2d_backward_input",
    "reflection_pad3d_forward", "reflection_pad3d_backward_input",
    "replication_pad1d_forward", "replication_pad1d_backward_input",
    "replication_pad2d_forward", "replication_pad2d_backward_input",
    "replication_pad3d_forward", "replication_pad3d_backward_input",
]


# ---- upsampling ------------------------------------------------------------
def _scales(scales):
    """(scale_h, scale_w) as C wants them: <= 0 for "not given"."""
    if scales is None:
        return 0.0, 0.0
    if isinstance(scales, (int, float)):
        scales = (scales, scales)
    if len(scales) != 2:
        raise ValueError(f"scales must be None, a number or a pair, got {scales!r}")
    return tuple(0.0 if s is None else float(s) for s in scales)


def _size2(output_size):
    if isinstance(output_size, int):
        return (output_size, output_size)
    output_size = tuple(output_size)
    if len(output_size) != 2 or not all(isinstance(v, int) for v in output_size):
        raise ValueError(f"output_size must be an int or a pair of ints, got {output_size!r}")
    return output_size


def _upsampled_shape(input, output_size):
    oh, ow = _size2(output_size)
    if oh < 0 or ow < 0:
        raise RuntimeError(f"upsample: output size must be non-negative, got ({oh}, {ow})")
    lead = tuple(input.shape[:-2]) if input.ndim >= 2 else ()
    return lead + (oh, ow)


def upsample_nearest2d_forward(input, output_size, scales=None):
    """scales: the user's (scale_h, scale_w) (output / input) or None."""
    out = _empty(_upsampled_shape(input, output_size), input)
    _check(_lib.thcunn_upsample_nearest2d_forward(_p(out), _p(input), *_scales(scales)))
    return out


def upsample_nearest2d_backward_input(grad_output, input_shape, scales=None):
    gi = _empty(input_shape, grad_output)
    _check(_lib.thcunn_upsample_nearest2d_backward_input(_p(gi), _p(grad_output),
                                                         *_scales(scales)))
    return gi


def upsample_bilinear2d_forward(input, output_size, align_corners=False, scales=None):
    out = _empty(_upsampled_shape(input, output_size), input)
    _check(_lib.thcunn_upsample_bilinear2d_forward(_p(out), _p(input),
                                                   int(bool(align_corners)), *_scales(scales)))
    return out


def upsample_bilinear2d_backward_input(grad_output, input_shape, align_corners=False,
                                       scales=None):
    gi = _empty(input_shape, grad_output)
    _check(_lib.thcunn_upsample_bilinear2d_backward_input(
        _p(gi), _p(grad_output), int(bool(align_corners)), *_scales(scales)))
    return gi


# ---- reflection / replication padding -----------------------------------------
def _padding(padding, k, name):
    """padding as PyTorch's F.pad takes it: (left, right[, top, bottom[, front, back]])."""
    if isinstance(padding, int):
        padding = (padding,) * (2 * k)
    padding = tuple(padding)
    if len(padding) != 2 * k or not all(isinstance(v, int) for v in padding):
        raise ValueError(f"{name}: padding must be an int or {2 * k} ints, got {padding!r}")
    for v in padding:  # the C takes int64 (PyTorch's error type for wider ints)
        if not -2 ** 63 <= v < 2 ** 63:
            raise RuntimeError(f"value {v} does not fit in int64 (in {list(padding)})")
    return padding


def _padded_shape(input, padding, k):
    shape = list(input.shape)
    if input.ndim in (k + 1, k + 2):
        for j in range(k):
            n = shape[-1 - j] + padding[2 * j] + padding[2 * j + 1]
            # 0 when invalid or beyond int64: the kernel then says why
            shape[-1 - j] = n if 0 < n < 2 ** 63 else 0
    return tuple(shape)


def _make_pad(cname, k):
    fwd = getattr(_lib, f"thcunn_{cname}_forward")
    bwd = getattr(_lib, f"thcunn_{cname}_backward_input")

    def forward(input, padding):
        pad = _padding(padding, k, cname)
        out = _empty(_padded_shape(input, pad, k), input)
        _check(fwd(_p(out), _p(input), pad))
        return out

    def backward_input(grad_output, input_shape, padding):
        pad = _padding(padding, k, cname)
        gi = _empty(input_shape, grad_output)
        _check(bwd(_p(gi), _p(grad_output), pad))
        return gi

    forward.__name__, backward_input.__name__ = f"{cname}_forward", f"{cname}_backward_input"
    forward.__qualname__, backward_input.__qualname__ = forward.__name__, backward_input.__name__
    forward.__doc__ = (f"{cname}: padding = {2 * k} ints, last dim first "
                       "(left, right, top, bottom, front, back); negative crops.")
    backward_input.__doc__ = f"grad of {cname} with respect to its input."
    return forward, backward_input


reflection_pad1d_forward, reflection_pad1d_backward_input = _make_pad("reflection_pad1d", 1)
reflection_pad2d_forward, reflection_pad2d_backward_input = _make_pad("reflection_pad2d", 2)
reflection_pad3d_forward, reflection_pad3d_backward_input = _make_pad("reflection_pad3d", 3)
replication_pad1d_forward, replication_pad1d_backward_input = _make_pad("replication_pad1d", 1)
replication_pad2d_forward, replication_pad2d_backward_input = _make_pad("replication_pad2d", 2)
replication_pad3d_forward, replication_pad3d_backward_input = _make_pad("replication_pad3d", 3)
