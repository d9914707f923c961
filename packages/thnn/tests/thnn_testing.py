"""Helpers of ember.thnn's tests: tensors to and from NumPy, float64
finite-difference checks, NumPy references shared by several families."""

import numpy as np

import ember.th as th


def T(a):
    return th.from_numpy(np.ascontiguousarray(a))


def N(t):
    return np.array(t.numpy())


def fd_check(f, inputs, backward, eps=1e-6, rtol=1e-5, atol=1e-7, rng=None):
    """f(*numpy inputs) -> numpy output; backward(grad_out) -> list of grads
    (one per input, None to skip).  Compares <grad, dx> with a central
    difference along a random direction dx, for each input."""
    rng = rng or np.random.default_rng(0)
    y = f(*inputs)
    gy = rng.standard_normal(np.shape(y))
    grads = backward(gy)
    for k, (x, g) in enumerate(zip(inputs, grads)):
        if g is None:
            continue
        dx = rng.standard_normal(x.shape)
        xp = [a.copy() for a in inputs]
        xm = [a.copy() for a in inputs]
        xp[k] = x + eps * dx
        xm[k] = x - eps * dx
        num = np.sum(gy * (f(*xp) - f(*xm))) / (2 * eps)
        ana = np.sum(g * dx)
        assert abs(num - ana) <= atol + rtol * abs(num), (k, num, ana)


def tol(dtype):
    return 2e-4 if dtype == np.float32 else 1e-10


def close_to_torch(a, b, tol=1e-4):
    np.testing.assert_allclose(N(a), b.detach().numpy(), rtol=tol, atol=tol)


TOL = {np.float32: 2e-5, np.float64: 1e-12}


def strided(a):
    """a as a non-contiguous ember.th tensor (a transposed copy, transposed back)."""
    t = T(np.ascontiguousarray(np.swapaxes(a, 0, -1)))
    return t.transpose(0, a.ndim - 1) if a.ndim > 1 else t


# ---- group norm --------------------------------------------------------------
def group_norm_ref(x, g, w, b, eps):
    n, c = x.shape[:2]
    xg = x.reshape(n, g, -1)
    mean = xg.mean(-1, keepdims=True)
    var = xg.var(-1, keepdims=True)
    y = ((xg - mean) / np.sqrt(var + eps)).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    if w is not None:
        y = y * w.reshape(shape)
    if b is not None:
        y = y + b.reshape(shape)
    return y, mean.reshape(n, g), 1 / np.sqrt(var.reshape(n, g) + eps)


# ---- upsampling ----------------------------------------------------------------
def nearest_index(o, i, scale):
    if o == i:
        return np.arange(o)
    if o == 2 * i:
        return np.arange(o) // 2
    s = np.float32(1.0 / scale) if scale else np.float32(i) / np.float32(o)
    return np.minimum(np.floor(np.arange(o, dtype=np.float32) * s).astype(np.int64), i - 1)


def linear_weights(o, i, align, scale):
    """(o, i) interpolation matrix along one dim, PyTorch's coordinates (a dim
    that keeps its size is copied, whatever the scale)."""
    if o == i:
        return np.eye(o)
    if align:
        r = (i - 1) / (o - 1) if o > 1 else 0.0
        src = r * np.arange(o)
    else:
        r = 1.0 / scale if scale else i / o
        src = np.maximum(r * (np.arange(o) + 0.5) - 0.5, 0)
    i0 = np.minimum(src.astype(np.int64), i - 1)
    i1 = np.minimum(i0 + 1, i - 1)
    l1 = np.clip(src - i0, 0, 1)
    m = np.zeros((o, i))
    m[np.arange(o), i0] += 1 - l1
    m[np.arange(o), i1] += l1
    return m


def pad_ref(x, k, mode, padding):
    pads = [(0, 0)] * (x.ndim - k) + [(padding[2 * j], padding[2 * j + 1])
                                      for j in reversed(range(k))]
    return np.pad(x, pads, mode=mode)


# ---- embedding_bag -----------------------------------------------------------------
def bag_ranges(n, offsets, include_last):
    """(start, end) of each bag; the last one runs to n (PyTorch reads no end
    from the extra offset of include_last_offset)."""
    starts = offsets[:-1] if include_last else offsets
    return list(zip(starts, list(starts[1:]) + [n]))


def embedding_bag_ref(w, idx, offsets, mode, psw, include_last, pad):
    rows = []
    for s, e in bag_ranges(len(idx), offsets, include_last):
        sel = [i for i in range(s, e) if idx[i] != pad]
        if not sel:
            rows.append(np.zeros(w.shape[1]))
        elif mode == "sum":
            rows.append(sum(w[idx[i]] * (psw[i] if psw is not None else 1.0) for i in sel))
        elif mode == "mean":
            rows.append(np.mean([w[idx[i]] for i in sel], axis=0))
        else:
            rows.append(np.max([w[idx[i]] for i in sel], axis=0))
    return np.array(rows).reshape(-1, w.shape[1])
