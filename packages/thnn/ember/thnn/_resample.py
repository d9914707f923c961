"""Bindings of upsampling (nearest, bilinear) and reflection / replication
padding."""
from ._lib import check as _check, lib as _lib
from ._args import _empty

__all__ = ["upsample_nearest2d_forward", "upsample_nearest2d_backward_input",
           "upsample_bilinear2d_forward", "upsample_bilinear2d_backward_input",
           "reflection_pad1d_forward", "reflection_pad1d_backward_input",
           "reflection_pad2d_forward", "reflection_pad2d_backward_input",
           "reflection_pad3d_forward", "reflection_pad3d_backward_input",
           "replication_pad1d_forward", "replication_pad1d_backward_input",
           "replication_pad2d_forward", "replication_pad2d_backward_input",
           "replication_pad3d_forward", "replication_pad3d_backward_input"]


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
    _check(_lib.thnn_upsample_nearest2d_forward(out._p, input._p, *_scales(scales)))
    return out


def upsample_nearest2d_backward_input(grad_output, input_shape, scales=None):
    gi = _empty(tuple(input_shape), grad_output)
    _check(_lib.thnn_upsample_nearest2d_backward_input(gi._p, grad_output._p,
                                                       *_scales(scales)))
    return gi


def upsample_bilinear2d_forward(input, output_size, align_corners=False, scales=None):
    out = _empty(_upsampled_shape(input, output_size), input)
    _check(_lib.thnn_upsample_bilinear2d_forward(out._p, input._p, int(bool(align_corners)),
                                                 *_scales(scales)))
    return out


def upsample_bilinear2d_backward_input(grad_output, input_shape, align_corners=False,
                                       scales=None):
    gi = _empty(tuple(input_shape), grad_output)
    _check(_lib.thnn_upsample_bilinear2d_backward_input(
        gi._p, grad_output._p, int(bool(align_corners)), *_scales(scales)))
    return gi


def _padding(padding, k, name):
    """padding as PyTorch's F.pad takes it: (left, right[, top, bottom[, front, back]])."""
    if isinstance(padding, int):
        padding = (padding,) * (2 * k)
    padding = tuple(padding)
    if len(padding) != 2 * k or not all(isinstance(v, int) for v in padding):
        raise ValueError(f"{name}: padding must be an int or {2 * k} ints, got {padding!r}")
    return padding


def _padded_shape(input, padding, k):
    shape = list(input.shape)
    if input.ndim in (k + 1, k + 2):
        for j in range(k):
            shape[-1 - j] = max(shape[-1 - j] + padding[2 * j] + padding[2 * j + 1], 0)
    return tuple(shape)


def _make_pad(cname, k):
    fwd = getattr(_lib, f"thnn_{cname}_forward")
    bwd = getattr(_lib, f"thnn_{cname}_backward_input")

    def forward(input, padding):
        pad = _padding(padding, k, cname)
        out = _empty(_padded_shape(input, pad, k), input)
        _check(fwd(out._p, input._p, pad))
        return out

    def backward_input(grad_output, input_shape, padding):
        gi = _empty(tuple(input_shape), grad_output)
        _check(bwd(gi._p, grad_output._p, _padding(padding, k, cname)))
        return gi

    forward.__name__, backward_input.__name__ = f"{cname}_forward", f"{cname}_backward_input"
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
