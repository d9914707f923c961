"""A seeded property-based fuzz of the front, run by test_fuzz.py in a
subprocess of its own: ops of every family (element-wise, reductions,
views and shape ops, indexing, nn.functional, the FFT and linear algebra)
on tensors of random shapes
(0-d, empty, size 1), dtypes and layouts (contiguous, transposed, strided
slices, expanded, as_strided within bounds), with arguments that are often
out of range or hostile (huge or negative sizes).  Ordinary exceptions
(ValueError, IndexError, TypeError, RuntimeError, NotImplementedError,
MemoryError and PyTorch's AssertionError for padding_idx) are fine; any
other exception fails the run, and so do a crash (the process dies on a
signal: the parent reads the op from the log) and a hang (the watchdog
dumps the stack and exits).

    python fuzz_front.py --examples 300 --log /tmp/fuzz.log
    python fuzz_front.py --families inject-crash     # (or -hang, -error): the harness's check
"""
import argparse
import faulthandler
import os
import resource
import signal
import sys
import time

import numpy as np
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

import ember
import ember.nn.functional as F

ALLOWED = (ValueError, IndexError, TypeError, RuntimeError, NotImplementedError, MemoryError)
DTYPES = [ember.float32, ember.float64, ember.float16, ember.bfloat16, ember.int64,
          ember.int32, ember.int16, ember.int8, ember.uint8, ember.bool, ember.complex64,
          ember.complex128]
FLOATS = [ember.float32, ember.float64]
# big enough that a non-empty result cannot be allocated (under --max-memory-gib)
HOSTILE = [2**33, 2**40, 2**62, 2**63 - 1, -2**63, -2**40]
WATCHDOG_S = 30
_watchdog = [WATCHDOG_S]


# ---- tensors ------------------------------------------------------------------------
def _values(rng, n, dtype):
    if dtype is ember.bool:
        return rng.random(n) < 0.5
    if dtype.is_complex:
        return _values(rng, n, ember.float64) + 1j * _values(rng, n, ember.float64)
    if dtype.is_floating_point:
        v = rng.standard_normal(n) * rng.choice([1.0, 1e3])
        if n:
            special = rng.random(n) < 0.1
            v[special] = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30], special.sum())
        return v
    lo = 0 if dtype is ember.uint8 else -5
    return rng.integers(lo, 6, n)


def _make(values, shape, dtype):
    t = ember.tensor(np.asarray(values).reshape(shape))
    return t.to(dtype)


@st.composite
def tensors(draw, dtypes=DTYPES, max_dims=4):
    shape = tuple(draw(st.lists(st.integers(0, 4), max_size=max_dims)))
    dtype = draw(st.sampled_from(dtypes))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    layout = draw(st.sampled_from(["contiguous", "transposed", "sliced", "expanded",
                                   "strided"]))
    n = int(np.prod(shape)) if shape else 1
    if layout == "transposed" and len(shape) >= 2:
        base = _make(_values(rng, n, dtype), shape[::-1], dtype)
        t = base.permute(*reversed(range(len(shape))))
    elif layout == "sliced" and shape:
        wide = tuple(2 * s + 1 for s in shape)
        base = _make(_values(rng, int(np.prod(wide)), dtype), wide, dtype)
        t = base[tuple(slice(1, None, 2) for _ in shape)]
    elif layout == "expanded" and shape:
        small = tuple(1 if draw(st.booleans()) else s for s in shape)
        t = _make(_values(rng, int(np.prod(small)), dtype), small, dtype).expand(*shape)
    elif layout == "strided" and shape:
        strides = tuple(draw(st.lists(st.integers(0, 3), min_size=len(shape),
                                      max_size=len(shape))))
        offset = draw(st.integers(0, 3))
        length = offset + sum((s - 1) * st_ for s, st_ in zip(shape, strides) if s) + 1
        base = _make(_values(rng, length, dtype), (length,), dtype)
        t = base.as_strided(shape, strides, offset)
    else:
        t = _make(_values(rng, n, dtype), shape, dtype)
    assert tuple(t.shape) == shape
    return t


def sizes():
    return st.sampled_from(list(range(-2, 7)) + HOSTILE)


def dims(t):
    return st.integers(-t.dim() - 1, t.dim())


def shapes_like(t):
    """Another operand's shape: t's, broadcastable to it, or unrelated."""
    s = list(t.shape)
    return st.one_of(st.just(s),
                     st.lists(st.booleans(), min_size=len(s), max_size=len(s)).map(
                         lambda ones: [1 if b else v for b, v in zip(ones, s)]),
                     st.just(s[1:]),
                     st.lists(st.integers(0, 4), max_size=4))


def other(data, t, dtypes=DTYPES):
    """A second operand: a number, or a tensor of a shape like t's."""
    kind = data.draw(st.sampled_from(["tensor", "tensor", "int", "float", "bool"]))
    if kind == "int":
        return data.draw(st.integers(-3, 3))
    if kind == "float":
        return data.draw(st.sampled_from([0.0, -1.5, 2.5, float("nan"), float("inf")]))
    if kind == "bool":
        return data.draw(st.booleans())
    shape = data.draw(shapes_like(t))
    dtype = data.draw(st.sampled_from(dtypes))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    return _make(_values(rng, int(np.prod(shape)) if shape else 1, dtype), shape, dtype)


def index_tensor(data, n, shape=None):
    shape = shape if shape is not None else data.draw(st.lists(st.integers(0, 3), max_size=2))
    vals = data.draw(st.lists(st.integers(-n - 2, n + 2) if n < 100 else st.integers(-3, 3),
                              min_size=int(np.prod(shape)) if shape else 1,
                              max_size=int(np.prod(shape)) if shape else 1))
    return ember.tensor(np.asarray(vals, dtype=np.int64).reshape(shape))


# ---- ops: each takes (data, x) and returns whatever the op returns -----------------------
UNARY = ["neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "floor",
         "ceil", "round", "trunc", "sign", "reciprocal", "square", "logical_not",
         "bitwise_not", "isnan", "isinf", "isfinite", "frac", "log1p", "expm1", "rsqrt", "erf",
         "clone", "contiguous", "float", "long", "bool", "half", "nonzero", "argwhere", "t",
         "flatten", "tolist", "numpy", "sum", "mean", "prod", "max", "min", "argmax", "std",
         "var", "norm", "all", "any", "median", "nanmedian", "unique", "count_nonzero",
         "item", "cumsum", "msort", "sort", "argsort", "trace", "diag", "exp2", "log2",
         "sinh", "acos", "atan", "digamma", "lgamma", "signbit", "nan_to_num", "deg2rad"]
BINARY = ["add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "fmod",
          "pow", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge", "logical_and",
          "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "atan2",
          "matmul", "mm", "bmm", "dot", "outer", "copy_", "add_", "mul_", "sub_", "div_",
          "masked_fill", "fill_", "clamp", "where_", "lerp", "dist", "cross", "kron",
          "expand_as", "view_as", "reshape_as", "type_as", "isclose", "float_power",
          "bitwise_left_shift", "hypot", "xlogy", "fmax", "copysign", "__getitem__",
          "__setitem__"]


_log = [None]
_findings = {}   # (family, op, exception type, message head) -> count, with --keep-going


def note(name):
    """Logs the op about to run (the parent reads it after a crash)."""
    _current[1] = name
    if _log[0] is not None:
        _log[0].write(f"  {name}\n")
        _log[0].flush()
    return name


_current = [None, None]


def _call(x, name, *args, **kwargs):
    fn = getattr(x, name, None)
    if fn is None:
        fn = getattr(ember, name, None)
        if fn is None:
            return None
        return fn(x, *args, **kwargs)
    return fn(*args, **kwargs)


def op_unary(data, x):
    return _call(x, note(data.draw(st.sampled_from(UNARY))))


def op_binary(data, x):
    name = note(data.draw(st.sampled_from(BINARY)))
    y = other(data, x)
    if name == "where_":
        return ember.where(x.bool() if hasattr(x, "bool") else x, x, y)
    if name == "masked_fill":
        return x.masked_fill(y.bool() if isinstance(y, ember.Tensor) else
                             ember.tensor(bool(y)), 1)
    if name == "clamp":
        return x.clamp(min=y if not isinstance(y, ember.Tensor) else None,
                       max=data.draw(st.sampled_from([None, 0, 1.5])))
    if name == "__getitem__":
        return x[y] if isinstance(y, ember.Tensor) else x[int(y)] if not isinstance(y, float) \
            else None
    if name == "__setitem__":
        x[data.draw(st.sampled_from([Ellipsis, 0, -1, slice(None, None, 2)]))] = y
        return x
    return _call(x, name, y)


def op_reduce(data, x):
    name = note(data.draw(st.sampled_from(
        ["sum", "mean", "prod", "amax", "amin", "max", "min", "argmax", "argmin", "std",
         "var", "norm", "all", "any", "cumsum", "cumprod", "logsumexp", "median",
         "nanmedian", "mode", "sort", "argsort", "topk", "kthvalue", "softmax",
         "log_softmax", "count_nonzero", "unique", "cummax", "aminmax", "nansum",
         "std_mean", "var_mean", "unique_consecutive", "diff"])))
    dim = data.draw(st.one_of(st.none(), dims(x)))
    keepdim = data.draw(st.booleans())
    if name in ("topk", "kthvalue"):
        return _call(x, name, data.draw(sizes()), dim if dim is not None else -1)
    if name in ("cumsum", "cumprod", "softmax", "log_softmax", "cummax", "argsort", "sort",
                "diff"):
        return _call(x, name, dim if dim is not None else 0)
    if name in ("unique", "unique_consecutive", "count_nonzero"):
        return _call(x, name, dim=dim)
    if dim is None:
        return _call(x, name)
    return _call(x, name, dim, keepdim=keepdim)


def op_view(data, x):
    name = note(data.draw(st.sampled_from(
        ["view", "reshape", "transpose", "permute", "unsqueeze", "squeeze", "flatten",
         "narrow", "select", "unfold", "diagonal", "expand", "repeat", "tile", "flip", "roll",
         "movedim", "chunk", "split", "as_strided", "tril", "triu", "cat", "stack",
         "broadcast_to", "unflatten", "swapaxes", "tensor_split", "hsplit", "unbind",
         "repeat_interleave", "rot90", "take_along_dim", "T", "mT"])))
    d = lambda: data.draw(dims(x))  # noqa: E731
    n = lambda: data.draw(sizes())  # noqa: E731
    shape = lambda: data.draw(st.lists(sizes(), max_size=5))  # noqa: E731
    if name in ("view", "reshape", "expand", "repeat", "tile", "broadcast_to"):
        return _call(x, name, shape())
    if name == "transpose" or name == "swapaxes":
        return _call(x, name, d(), d())
    if name == "permute":
        return x.permute(*data.draw(st.lists(dims(x), max_size=5)))
    if name in ("unsqueeze", "squeeze", "unbind"):
        return _call(x, name, d())
    if name == "flatten":
        return x.flatten(d(), d())
    if name == "narrow":
        return x.narrow(d(), n(), n())
    if name == "select":
        return x.select(d(), n())
    if name == "unfold":
        return x.unfold(d(), n(), n())
    if name == "diagonal":
        return x.diagonal(n(), d(), d())
    if name == "flip":
        return x.flip(*data.draw(st.lists(dims(x), max_size=4)))
    if name == "roll":
        return x.roll(n(), data.draw(st.one_of(st.none(), dims(x))))
    if name == "movedim":
        k = data.draw(st.integers(0, 3))
        return x.movedim(data.draw(st.lists(dims(x), min_size=k, max_size=k)),
                         data.draw(st.lists(dims(x), min_size=k, max_size=k)))
    if name in ("chunk", "split", "tensor_split", "hsplit", "repeat_interleave"):
        return _call(x, name, n())
    if name == "as_strided":
        k = data.draw(st.integers(0, 3))
        return x.as_strided(data.draw(st.lists(sizes(), min_size=k, max_size=k)),
                            data.draw(st.lists(sizes(), min_size=k, max_size=k)), n())
    if name in ("tril", "triu"):
        return _call(x, name, n())
    if name in ("cat", "stack"):
        return getattr(ember, name)([x, other(data, x) if data.draw(st.booleans()) else x],
                                    d())
    if name == "unflatten":
        return x.unflatten(d(), shape())
    if name == "rot90":
        return x.rot90(n(), [d(), d()])
    if name == "take_along_dim":
        return x.take_along_dim(index_tensor(data, x.numel(), list(x.shape)), d())
    return getattr(x, name)


def op_index(data, x):
    name = note(data.draw(st.sampled_from(
        ["getitem", "setitem", "gather", "scatter", "scatter_add", "scatter_reduce",
         "index_select", "index_add", "index_copy", "index_fill", "take", "put",
         "masked_select", "masked_scatter", "index_put", "bincount", "histc",
         "searchsorted", "bucketize"])))
    size = x.shape[0] if x.dim() else 1

    def key():
        parts = data.draw(st.lists(st.one_of(
            st.integers(-size - 2, size + 2), st.sampled_from(HOSTILE),
            st.builds(slice, st.one_of(st.none(), st.integers(-6, 6)),
                      st.one_of(st.none(), st.integers(-6, 6)),
                      st.one_of(st.none(), st.integers(-2, 3))),
            st.just(None), st.just(Ellipsis), st.just("mask"), st.just("itensor")),
            max_size=4))
        out = []
        for p in parts:
            if p == "mask":
                out.append(x.bool() if data.draw(st.booleans()) else
                           ember.tensor(data.draw(st.lists(st.booleans(), max_size=5))))
            elif p == "itensor":
                out.append(index_tensor(data, size))
            else:
                out.append(p)
        return tuple(out) if len(out) != 1 else out[0]
    d = data.draw(dims(x))
    if name == "getitem":
        return x[key()]
    if name == "setitem":
        x[key()] = other(data, x)
        return x
    if name in ("gather", "scatter", "scatter_add", "scatter_reduce"):
        idx = index_tensor(data, size, data.draw(st.lists(st.integers(0, 3), min_size=x.dim(),
                                                          max_size=x.dim())))
        if name == "gather":
            return x.gather(d, idx)
        src = other(data, x)
        if name == "scatter_reduce":
            return x.scatter_reduce(d, idx, src, data.draw(st.sampled_from(
                ["sum", "prod", "mean", "amax", "amin", "bad"])))
        return getattr(x, name)(d, idx, src)
    if name == "index_select":
        return x.index_select(d, index_tensor(data, size))
    if name in ("index_add", "index_copy"):
        return getattr(x, name)(d, index_tensor(data, size), other(data, x))
    if name == "index_fill":
        return x.index_fill(d, index_tensor(data, size), 1)
    if name == "take":
        return x.take(index_tensor(data, x.numel()))
    if name == "put":
        return x.put(index_tensor(data, x.numel()), other(data, x))
    if name == "masked_select":
        return x.masked_select(other(data, x, [ember.bool]))
    if name == "masked_scatter":
        return x.masked_scatter(other(data, x, [ember.bool]), other(data, x))
    if name == "index_put":
        return x.index_put((index_tensor(data, size),), other(data, x),
                           accumulate=data.draw(st.booleans()))
    if name == "bincount":
        return ember.bincount(x, minlength=data.draw(sizes()))
    if name == "histc":
        return ember.histc(x, bins=data.draw(sizes()), min=data.draw(st.integers(-3, 3)),
                           max=data.draw(st.integers(-3, 3)))
    return getattr(ember, name)(x, other(data, x))


def op_nn(data, x):
    name = note(data.draw(st.sampled_from(
        ["relu", "gelu", "silu", "leaky_relu", "elu", "softplus", "hardtanh", "softmax",
         "log_softmax", "dropout", "linear", "conv1d", "conv2d", "max_pool1d", "max_pool2d",
         "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
         "adaptive_max_pool1d", "adaptive_max_pool2d", "interpolate", "pad", "embedding",
         "layer_norm", "batch_norm", "group_norm", "cross_entropy", "nll_loss", "mse_loss",
         "binary_cross_entropy", "one_hot", "normalize", "max_pool3d", "avg_pool3d",
         "adaptive_avg_pool3d", "embedding_bag", "conv_transpose2d", "smooth_l1_loss",
         "kl_div", "cosine_similarity", "pairwise_distance", "glu", "logsigmoid"])))
    if not hasattr(F, name):
        return None
    n = lambda: data.draw(sizes())  # noqa: E731
    small = lambda: data.draw(st.integers(-1, 4))  # noqa: E731
    if name in ("softmax", "log_softmax", "glu"):
        return getattr(F, name)(x, data.draw(dims(x)))
    if name == "dropout":
        return F.dropout(x, data.draw(st.sampled_from([0.0, 0.5, 1.0, -0.1, 1.5])),
                         training=data.draw(st.booleans()))
    if name == "linear":
        return F.linear(x, other(data, x, FLOATS), other(data, x, FLOATS)
                        if data.draw(st.booleans()) else None)
    if name in ("conv1d", "conv2d", "conv_transpose2d"):
        w = data.draw(tensors(dtypes=FLOATS))
        return getattr(F, name)(x, w, None, stride=data.draw(st.integers(-1, 3)),
                                padding=data.draw(st.integers(-1, 3)),
                                dilation=data.draw(st.integers(-1, 3)),
                                groups=data.draw(st.integers(-1, 3)))
    if "adaptive" in name:
        return getattr(F, name)(x, n())
    if "pool" in name:
        kwargs = {}
        if "avg" in name:
            kwargs = dict(count_include_pad=data.draw(st.booleans()))
            if "1d" not in name:
                kwargs["divisor_override"] = data.draw(st.sampled_from([None, 0, 1, -2]))
        else:
            kwargs = dict(dilation=small(), return_indices=data.draw(st.booleans()))
        return getattr(F, name)(x, n(), stride=data.draw(st.one_of(st.none(), sizes())),
                                padding=small(), ceil_mode=data.draw(st.booleans()),
                                **kwargs)
    if name == "interpolate":
        mode = data.draw(st.sampled_from(["nearest", "bilinear", "linear", "bicubic",
                                          "trilinear", "area", "nearest-exact", "bad"]))
        if data.draw(st.booleans()):
            return F.interpolate(x, size=n(), mode=mode)
        return F.interpolate(x, scale_factor=data.draw(st.sampled_from(
            [0.5, 2.0, 0.0, -1.0, 1e12, float("nan")])), mode=mode)
    if name == "pad":
        k = data.draw(st.integers(0, 4))
        return F.pad(x, data.draw(st.lists(st.integers(-3, 4) | st.sampled_from(HOSTILE),
                                           min_size=k, max_size=k)),
                     mode=data.draw(st.sampled_from(["constant", "reflect", "replicate",
                                                     "circular"])))
    if name in ("embedding", "embedding_bag"):
        w = data.draw(tensors(dtypes=FLOATS, max_dims=2))
        idx = index_tensor(data, w.shape[0] if w.dim() else 1)
        pad = data.draw(st.one_of(st.none(), st.integers(-5, 5)))
        if name == "embedding":
            return F.embedding(idx, w, padding_idx=pad)
        return F.embedding_bag(idx.reshape(-1), w, ember.tensor([0]), padding_idx=pad)
    if name == "layer_norm":
        return F.layer_norm(x, x.shape[data.draw(st.integers(0, max(x.dim(), 1))):])
    if name == "batch_norm":
        c = x.shape[1] if x.dim() > 1 else 1
        return F.batch_norm(x, ember.zeros(c), ember.ones(c), training=data.draw(st.booleans()))
    if name == "group_norm":
        return F.group_norm(x, n())
    if name in ("cross_entropy", "nll_loss"):
        c = x.shape[1] if x.dim() > 1 else (x.shape[0] if x.dim() else 1)
        t = index_tensor(data, c, list(x.shape[:1]) + list(x.shape[2:]) if x.dim() > 1
                         else [])
        return getattr(F, name)(x, t, ignore_index=data.draw(st.sampled_from([-100, 0, 1])))
    if name in ("mse_loss", "binary_cross_entropy", "smooth_l1_loss", "kl_div"):
        return getattr(F, name)(x, other(data, x, FLOATS))
    if name == "one_hot":
        return F.one_hot(x, data.draw(st.integers(-2, 5)))
    if name in ("cosine_similarity", "pairwise_distance"):
        return getattr(F, name)(x, other(data, x, FLOATS))
    if name == "normalize":
        return F.normalize(x, dim=data.draw(dims(x)))
    return getattr(F, name)(x)


def op_spectral(data, x):
    """ember.fft's transforms (hostile lengths and dims included) and
    ember.linalg's routines on whatever x is (any dtype, shape, layout)."""
    import ember.fft
    import ember.linalg as LA
    name = note(data.draw(st.sampled_from(
        ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "rfftn", "irfftn", "fftn",
         "stft", "solve", "inv", "det", "slogdet", "cholesky", "lu_factor", "lu_solve",
         "solve_triangular", "eig", "eigh", "qr", "svd", "lstsq", "matrix_exp", "logdet"])))
    if name == "stft":
        return ember.stft(x, data.draw(st.sampled_from([1, 4, 16, 2**40])),
                          hop_length=data.draw(st.sampled_from([None, 1, 3])),
                          return_complex=True)
    if hasattr(ember.fft, name):
        n = data.draw(st.one_of(st.none(), st.integers(-2, 70), st.sampled_from(HOSTILE)))
        dim = data.draw(st.one_of(dims(x), st.integers(-6, 6)))
        fn = getattr(ember.fft, name)
        if name in ("fft2", "rfftn", "irfftn", "fftn"):
            s = None if n is None else (n,)
            return fn(x, s=s, dim=(dim,) if s is not None else None,
                      norm=data.draw(st.sampled_from([None, "ortho", "forward"])))
        return fn(x, n=n, dim=dim, norm=data.draw(st.sampled_from([None, "ortho", "forward"])))
    if name in ("solve", "lstsq"):
        return getattr(LA, name)(x, other(data, x))
    if name == "lu_solve":
        LU, piv = LA.lu_factor(x)
        return LA.lu_solve(LU, piv, other(data, x))
    if name == "solve_triangular":
        return LA.solve_triangular(x, other(data, x), upper=data.draw(st.booleans()),
                                   left=data.draw(st.booleans()))
    if name == "logdet":
        return ember.logdet(x)
    return getattr(LA, name)(x)


FAMILIES = {"unary": op_unary, "binary": op_binary, "reduce": op_reduce, "view": op_view,
            "index": op_index, "nn": op_nn, "spectral": op_spectral}


def _faulty(kind):
    """An op family that fails the way `kind` says on its 5th example: the
    check that the harness sees crashes, hangs and stray exceptions."""
    calls = [0]

    def op(data, x):
        note(f"inject-{kind}")
        calls[0] += 1
        if calls[0] == 5:
            if kind == "crash":
                os.kill(os.getpid(), signal.SIGSEGV)
            elif kind == "hang":
                time.sleep(3600)
            else:
                raise KeyError("injected")
        return x
    return op


def run(family, examples, log, seed_value, keep_going=False):
    fn = FAMILIES[family] if family in FAMILIES else _faulty(family.split("-", 1)[1])

    @seed(seed_value)
    @settings(max_examples=examples, database=None, deadline=None,
              phases=[Phase.explicit, Phase.generate], print_blob=False,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def check(data):
        x = data.draw(tensors(), label="x")
        grad = x.dtype in FLOATS and data.draw(st.booleans(), label="grad")
        if grad:
            x = x.detach().requires_grad_()
        log.write(f"{family} {list(x.shape)} {x.dtype} stride={x.stride()} grad={grad}\n")
        log.flush()
        faulthandler.dump_traceback_later(_watchdog[0], exit=True)
        try:
            out = fn(data, x)
            if grad and isinstance(out, ember.Tensor) and out.requires_grad:
                out.float().sum().backward()
        except ALLOWED:
            pass
        except Exception as e:
            if isinstance(e, AssertionError) and \
                    str(e) == "Padding_idx must be within num_embeddings":
                return
            if not keep_going:
                raise
            key = (family, _current[1], type(e).__name__, str(e)[:80])
            _findings[key] = _findings.get(key, 0) + 1
        finally:
            faulthandler.cancel_dump_traceback_later()

    check()


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--examples", type=int, default=300, help="examples per op family")
    p.add_argument("--families", default=",".join(FAMILIES))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--log", default="/dev/null")
    p.add_argument("--max-memory-gib", type=float, default=4.0)
    p.add_argument("--watchdog", type=float, default=WATCHDOG_S,
                   help="seconds one example may take before it counts as a hang")
    p.add_argument("--keep-going", action="store_true",
                   help="list unexpected exceptions at the end instead of stopping at one")
    a = p.parse_args(argv)
    # a huge allocation fails instead of taking the machine's memory
    _watchdog[0] = a.watchdog
    limit = int(a.max_memory_gib * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    faulthandler.enable()
    np.seterr(all="ignore")
    with open(a.log, "w", buffering=1) as log:
        _log[0] = log
        for family in a.families.split(","):
            log.write(f"== {family}\n")
            run(family, a.examples, log, a.seed, a.keep_going)
    for key, count in sorted(_findings.items()):
        print(count, *key)
    if _findings:
        return 1
    print("fuzz: no crash, hang or unexpected exception")


if __name__ == "__main__":
    sys.exit(main())
