"""Bindings of upsampling (nearest, bilinear) and reflection / replication
padding."""

PADDINGS = [f"{kind}_pad{k}d" for kind in ("reflection", "replication") for k in (1, 2, 3)]
NAMES = ["upsample_nearest2d_forward", "upsample_nearest2d_backward_input",
         "upsample_bilinear2d_forward", "upsample_bilinear2d_backward_input"] + \
    [f"{name}_{verb}" for name in PADDINGS for verb in ("forward", "backward_input")]


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


def define(L):
    """This family's functions on kernel library L (see _library)."""
    C, check, ptr, empty = L.C, L.check, L.ptr, L.empty

    def upsample_nearest2d_forward(input, output_size, scales=None):
        """scales: the user's (scale_h, scale_w) (output / input) or None."""
        out = empty(_upsampled_shape(input, output_size), input)
        check(C.upsample_nearest2d_forward(ptr(out), ptr(input), *_scales(scales)))
        return out

    def upsample_nearest2d_backward_input(grad_output, input_shape, scales=None):
        gi = empty(input_shape, grad_output)
        check(C.upsample_nearest2d_backward_input(ptr(gi), ptr(grad_output), *_scales(scales)))
        return gi

    def upsample_bilinear2d_forward(input, output_size, align_corners=False, scales=None):
        out = empty(_upsampled_shape(input, output_size), input)
        check(C.upsample_bilinear2d_forward(ptr(out), ptr(input), int(bool(align_corners)),
                                            *_scales(scales)))
        return out

    def upsample_bilinear2d_backward_input(grad_output, input_shape, align_corners=False,
                                           scales=None):
        gi = empty(input_shape, grad_output)
        check(C.upsample_bilinear2d_backward_input(ptr(gi), ptr(grad_output),
                                                   int(bool(align_corners)), *_scales(scales)))
        return gi

    def padding_pair(name):
        """name_forward and name_backward_input for the padding kernel `name`."""
        k = int(name[-2])
        fwd = getattr(C, f"{name}_forward")
        bwd = getattr(C, f"{name}_backward_input")

        def forward(input, padding):
            pad = _padding(padding, k, name)
            out = empty(_padded_shape(input, pad, k), input)
            check(fwd(ptr(out), ptr(input), pad))
            return out

        def backward_input(grad_output, input_shape, padding):
            pad = _padding(padding, k, name)
            gi = empty(input_shape, grad_output)
            check(bwd(ptr(gi), ptr(grad_output), pad))
            return gi

        forward.__name__ = forward.__qualname__ = f"{name}_forward"
        backward_input.__name__ = backward_input.__qualname__ = f"{name}_backward_input"
        forward.__doc__ = (f"{name}: padding = {2 * k} ints, last dim first "
                           "(left, right, top, bottom, front, back); negative crops.")
        backward_input.__doc__ = f"grad of {name} with respect to its input."
        return {forward.__name__: forward, backward_input.__name__: backward_input}

    out = {n: v for n, v in locals().items() if n in NAMES}
    for name in PADDINGS:
        out.update(padding_pair(name))
    return out
