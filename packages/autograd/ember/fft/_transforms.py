"""The three discrete Fourier transforms every ember.fft function is made
of, as autograd Functions: complex to complex (either direction), real to
complex (the one-sided half of the spectrum) and complex to real (its
inverse).

They are computed by libTH's FFT (ember.th's fft_c2c, fft_r2c, fft_c2r:
vectorised, threaded on the pool), one dim after another, for the lengths
it has kernels for (every prime factor <= 61, fft_supported).  Other
lengths (a large prime factor), and backends without those functions, go
through NumPy's pocketfft (numpy.fft) on a zero-copy view, whose result
array becomes the output tensor's memory; float32/complex64 stay in single
precision.  Tensors on another device would go through host memory, but
ember-thc has no complex tensors yet, so the front refuses them first.

Each backward is a transform again (so gradients differentiate again), in
PyTorch's convention for complex gradients: the adjoint of a transform with
normalisation `norm` is the transform in the other direction with the dual
normalisation (same scale factor).

On NumPy's path, with several threads (ember.get_num_threads()) a batch
of transforms is split along its largest batch dim: pocketfft releases the
GIL, so the parts run at once (one transform of one signal runs on one
thread)."""
import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._device import device as _device, namespace
from .._tensor import _make
from ..autograd.function import Function

# the normalisation with the same scale factor in the other direction
DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}
_CPU = _device("cpu")


def _array(t):
    """A NumPy view of a tensor's values (host memory)."""
    data = t._data
    if t.device.type != "cpu":
        from .._ops.conversion import move_raw
        data = move_raw(data, _CPU)
    return np.asarray(data)


_pool = None
_pool_lock = threading.Lock()
_SPLIT_MIN = 1 << 15   # elements below which one thread does the whole batch


def _executor(threads):
    global _pool
    with _pool_lock:
        if _pool is None or _pool._max_workers != threads:
            if _pool is not None:
                _pool.shutdown(wait=False)
            _pool = ThreadPoolExecutor(threads, thread_name_prefix="ember-fft")
        return _pool


def _forget_pool():  # a forked child has none of the parent's threads
    global _pool
    _pool = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def _compute(transform, arr, axes, shape, dtype, **kw):
    """transform(arr, axes=axes, **kw) as a `dtype` array of `shape`, the
    batch split over the threads where it is large enough."""
    from .._creation import get_num_threads
    threads = get_num_threads()
    batch = [d for d in range(arr.ndim) if d not in axes]
    if threads > 1 and batch and arr.size >= _SPLIT_MIN:
        split = max(batch, key=lambda d: arr.shape[d])
        n = arr.shape[split]
        parts = min(threads, n)
        if parts > 1:
            out = np.empty(shape, dtype)
            bounds = [n * i // parts for i in range(parts + 1)]
            index = [slice(None)] * arr.ndim

            def run(i):
                index_i = list(index)
                index_i[split] = slice(bounds[i], bounds[i + 1])
                out[tuple(index_i)] = transform(arr[tuple(index_i)], axes=axes, **kw)
            list(_executor(threads).map(run, range(parts)))
            return out
    r = transform(arr, axes=axes, **kw)
    return r if r.dtype == dtype else r.astype(dtype)  # NumPy < 2 computes in double


def _scale(norm, n, forward):
    """The factor a transform of n points with normalisation `norm` has."""
    if norm == "ortho":
        return 1 / math.sqrt(n)
    return 1 / n if (norm == "forward") == forward else 1.0


def _library(x, lengths, real_last):
    """ember.th's FFT functions when they take x and every length (the
    last one of a real transform when real_last), else None."""
    if x.device.type != "cpu" or x.dtype.name in ("float16", "bfloat16"):
        return None
    ns = namespace(_CPU)
    supported = getattr(ns, "fft_supported", None)
    if supported is None or not all(
            supported(n, real_last and i == len(lengths) - 1) for i, n in enumerate(lengths)):
        return None
    return ns


def _c2c_dims(ns, raw, dims, forward, scale):
    """raw transformed along each of dims (scale applied once)."""
    for i, d in enumerate(dims):
        raw = ns.fft_c2c(raw, d, not forward, scale if i == len(dims) - 1 else 1.0)
    return raw


def _complex_of(arr):
    return np.dtype(np.complex64) if arr.dtype in (np.float32, np.complex64) \
        else np.dtype(np.complex128)


def _tensor(arr, like):
    """A tensor on like's device whose memory is the NumPy array arr."""
    raw = namespace(_CPU).from_numpy(np.ascontiguousarray(arr))
    if like.device.type != "cpu":
        from .._ops.conversion import move_raw
        raw = move_raw(raw, like.device)
    return _make(raw)


def resize(x, dim, n):
    """x truncated or zero-padded to n elements along dim (differentiable)."""
    size = x.shape[dim]
    if n == size:
        return x
    if n < size:
        return x.narrow(dim, 0, n)
    from .._creation import zeros
    from .._ops.define import NAMESPACE
    shape = list(x.shape)
    shape[dim] = n - size
    return NAMESPACE["cat"]([x, zeros(shape, dtype=x.dtype, device=x.device)], dim)


class C2C(Function):
    """Complex to complex over dims: forward=True the transform
    sum_j x_j e^{-2 pi i jk/n}, False the inverse one (e^{+...})."""

    @staticmethod
    def forward(ctx, x, dims, norm, forward):
        ctx.dims, ctx.norm, ctx.forward = dims, norm, forward
        lengths = [x.shape[d] for d in dims]
        ns = _library(x, lengths, False)
        if ns is not None:
            scale = _scale(norm, math.prod(lengths), forward)
            return _make(_c2c_dims(ns, x._data, dims, forward, scale))
        transform = np.fft.fftn if forward else np.fft.ifftn
        a = _array(x)
        return _tensor(_compute(transform, a, dims, a.shape, _complex_of(a), norm=norm), x)

    @staticmethod
    def backward(ctx, g):
        return C2C.apply(g, ctx.dims, DUAL[ctx.norm], not ctx.forward), None, None, None


class R2C(Function):
    """Real to complex over dims, keeping the n // 2 + 1 non-redundant
    frequencies of the last dim (the others are their conjugates)."""

    @staticmethod
    def forward(ctx, x, dims, norm):
        ctx.dims, ctx.norm, ctx.n = dims, norm, x.shape[dims[-1]]
        lengths = [x.shape[d] for d in dims]
        ns = _library(x, lengths[:-1] + [ctx.n], True)
        if ns is not None:
            scale = _scale(norm, math.prod(lengths), True)
            raw = ns.fft_r2c(x._data, dims[-1], scale if len(dims) == 1 else 1.0)
            return _make(_c2c_dims(ns, raw, dims[:-1], True, scale))
        a = _array(x)
        shape = list(a.shape)
        shape[dims[-1]] = shape[dims[-1]] // 2 + 1
        return _tensor(_compute(np.fft.rfftn, a, dims, shape, _complex_of(a), norm=norm), x)

    @staticmethod
    def backward(ctx, g):
        # the adjoint: the one-sided gradient zero-padded to the full length,
        # transformed back; the input was real, so its gradient is the real part
        g = resize(g, ctx.dims[-1], ctx.n)
        return C2C.apply(g, ctx.dims, DUAL[ctx.norm], False).real, None, None


class C2R(Function):
    """Complex to real over dims: the inverse of R2C, reading the last
    dim's n // 2 + 1 frequencies as one half of a conjugate-symmetric
    spectrum of n (the imaginary parts of frequency 0, and of n / 2 for
    even n, are ignored)."""

    @staticmethod
    def forward(ctx, x, dims, n, norm):
        ctx.dims, ctx.norm, ctx.n = dims, norm, n
        sizes = [x.shape[d] for d in dims[:-1]] + [n]
        ns = _library(x, sizes, True)
        if ns is not None:
            raw = _c2c_dims(ns, x._data, dims[:-1], False, 1.0)
            return _make(ns.fft_c2r(raw, dims[-1], n, _scale(norm, math.prod(sizes), False)))
        a = _array(x)
        shape = list(a.shape)
        shape[dims[-1]] = n
        real = np.dtype(np.float32) if a.dtype == np.complex64 else np.dtype(np.float64)
        return _tensor(_compute(np.fft.irfftn, a, dims, shape, real, s=sizes, norm=norm), x)

    @staticmethod
    def backward(ctx, g):
        # the adjoint: the one-sided forward transform of the gradient, with
        # the frequencies that stand for two (k and n - k) counted twice
        gx = R2C.apply(g, ctx.dims, DUAL[ctx.norm])
        last = ctx.dims[-1]
        doubled = ctx.n - gx.shape[last]  # frequencies 1 .. n - (n // 2 + 1)
        if doubled > 0:
            from .._creation import ones
            w = ones(gx.shape[last], dtype=g.dtype, device=g.device)
            w[1:1 + doubled] = 2
            w = w.reshape([-1] + [1] * (gx.ndim - 1 - (last % gx.ndim)))
            gx = gx * w
        return gx, None, None, None
