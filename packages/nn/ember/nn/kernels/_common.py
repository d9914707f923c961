"""Helpers of the composed forms: padding, sliding windows, the window
arithmetic of pooling and convolution (one function for every caller),
and host arrays moved to a tensor's device."""
import numpy as np

import ember


def window_output_size(size, k, s, p, d, ceil_mode=False):
    """PyTorch's output length of a window of `k` taps `d` apart sliding by
    `s` over `size` elements padded by `p` on both sides, and the high
    padding the last window reads (a ceil-mode window that would start in
    the right padding is dropped).  Convolutions are the floor-mode case.
    The output length is < 1 when the padded input is shorter than the
    window."""
    eff = d * (k - 1) + 1
    num = size + 2 * p - eff
    out = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out, max(0, (out - 1) * s + eff - size - p)


def pad_spatial(x, pads, value):
    """x padded with `value`; pads holds (low, high) per spatial dimension
    (dimension 2 first); a negative amount crops."""
    for i, (lo, hi) in enumerate(pads):
        dim = 2 + i
        if lo < 0:
            x = x.narrow(dim, -lo, x.shape[dim] + lo)
            lo = 0
        if hi < 0:
            x = x.narrow(dim, 0, x.shape[dim] + hi)
            hi = 0
        if not (lo or hi):
            continue
        parts = []
        for amount in (lo, hi):
            shape = list(x.shape)
            shape[dim] = amount
            parts.append(x.new_full(shape, value) if amount else None)
        seq = ([parts[0]] if lo else []) + [x] + ([parts[1]] if hi else [])
        x = ember.cat(seq, dim)
    return x


def windows(x, kernel_size, stride, dilation):
    """(N, C, O1.., k1..) view of the sliding windows of an already padded x."""
    nd = len(kernel_size)
    for i in range(nd):
        x = x.unfold(2 + i, dilation[i] * (kernel_size[i] - 1) + 1, stride[i])
    if any(d > 1 for d in dilation):
        x = x[(Ellipsis,) + tuple(slice(None, None, d) for d in dilation)]
    return x


def unravel(flat, sizes):
    """Per-dimension offsets of a row-major flat index within `sizes`."""
    out = []
    for size in reversed(sizes):
        out.append(flat % size)
        flat = flat // size
    return out[::-1]


def check_output_size(x, shape):
    """Raises the allocation's error (size overflow, not enough memory) for
    an output of `shape` before a loop over its cells starts."""
    x.new_empty(shape, device="cpu")


def on_device(array, like, dtype=None):
    """A helper array computed on the host from shapes, as a tensor on the
    device of `like` (composed forms run on any backend)."""
    t = ember.from_numpy(np.ascontiguousarray(array))
    return t.to(device=like.device, dtype=dtype) if dtype is not None else t.to(like.device)


def host(t):
    """A tensor's values as a NumPy array, whatever its device."""
    return t.detach().cpu().numpy()
