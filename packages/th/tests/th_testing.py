"""Helpers for ember.th's tests (the fixtures that use them are in
conftest.py): random tensors in every layout with their NumPy twins, and a
comparison with per-dtype tolerances.  A module of its own, imported by name,
so that other packages' conftest.py files can never shadow it.

``make(shape, dtype, layout)`` returns ``(tensor, array)`` holding the same
values; the tensor is built by libTH itself (a copy, then ember's own view
operations for the non-contiguous layouts), the array is an independent
NumPy copy.  bfloat16 has no NumPy type: its array is float32 holding
values that bfloat16 represents exactly.
"""

import numpy as np
import pytest

import ember.th as th

# ---- dtypes ------------------------------------------------------------
DTYPES = [th.float32, th.float64, th.float16, th.bfloat16, th.int8, th.uint8,
          th.int16, th.int32, th.int64, th.bool]
FLOAT_DTYPES = [th.float32, th.float64, th.float16, th.bfloat16]
HALF_DTYPES = [th.float16, th.bfloat16]
INT_DTYPES = [th.int8, th.uint8, th.int16, th.int32, th.int64]
LAYOUTS = ["contiguous", "transposed", "sliced", "broadcast", "0d", "empty"]

# rtol, atol per result dtype (halves: about one unit in the last place)
TOLERANCES = {
    th.float32: (1e-5, 1e-6),
    th.float64: (1e-12, 1e-13),
    th.float16: (1e-3, 1e-4),
    th.bfloat16: (8e-3, 1e-3),
}


def complex_normal(rng, shape, dtype=np.complex128):
    """Standard normal real and imaginary parts, as a NumPy array of dtype."""
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def ids(dtypes):
    return [d.name for d in dtypes]


def np_dtype(d):
    """The NumPy dtype holding d's values (float32 for bfloat16)."""
    return np.dtype(np.float32) if d is th.bfloat16 else d.numpy


def round_bf16(a):
    """float32 values rounded to the nearest bfloat16 (ties to even)."""
    a = np.array(a, dtype=np.float32, order="C")
    bits = a.view(np.uint32).astype(np.uint64)
    nan = np.isnan(a)
    bits = np.asarray((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000)
    out = np.array(bits.astype(np.uint32).view(np.float32))
    out[nan] = np.nan
    return out


def as_dtype(a, d):
    """NumPy values of a converted as libTH converts them to dtype d."""
    a = np.asarray(a)
    with np.errstate(over="ignore", invalid="ignore"):
        if d is th.bfloat16:
            return round_bf16(a.astype(np.float32))
        if d is th.float16:
            # libTH rounds float64 -> float32 -> float16, as PyTorch does
            return a.astype(np.float32).astype(np.float16)
        return a.astype(d.numpy)


def to_numpy(t):
    """A NumPy copy of an ember tensor (bfloat16 through float32)."""
    if t.dtype is th.bfloat16:
        t = t.float()
    return np.array(t.numpy(), copy=True)


# ---- random data -------------------------------------------------------
DEFAULT_RANGE = {
    "float": (-4.0, 4.0),
    "signed": (-9, 9),
    "uint8": (0, 18),
}


def random_values(rng, shape, d, low=None, high=None, discrete=False,
                  nonzero=False):
    """Random values of dtype d (float32 array for bfloat16), never all zero.

    low/high bound the values (bool: low >= 1 gives all True); discrete
    draws floats among the integers of [low, high] (so that ties and zeros
    occur); nonzero replaces zeros by 1."""
    shape = tuple(shape)
    if d is th.bool:
        a = np.asarray(rng.random(shape) < 0.5)
        if (low is not None and low >= 1) or nonzero:
            a[...] = True
    elif d.is_floating_point:
        lo, hi = DEFAULT_RANGE["float"]
        lo = lo if low is None else low
        hi = hi if high is None else high
        if discrete:
            a = rng.integers(int(np.ceil(lo)), int(np.floor(hi)), shape,
                             endpoint=True).astype(np.float64)
        else:
            a = rng.uniform(lo, hi, shape)
    else:
        lo, hi = DEFAULT_RANGE["uint8" if d is th.uint8 else "signed"]
        info = np.iinfo(d.numpy)
        lo = lo if low is None else int(np.ceil(low))
        hi = hi if high is None else int(np.floor(high))
        lo, hi = max(lo, int(info.min)), min(hi, int(info.max))
        a = rng.integers(lo, max(lo, hi), shape, endpoint=True)
    if nonzero:
        a = np.where(a == 0, 1, a)
    a = np.array(as_dtype(a, d))
    if a.size and not a.any():  # never all zeros
        flat = a.reshape(-1)
        flat[0] = next((v for v in (1, 2, -1, 0.5)
                        if (low is None or v >= low) and (high is None or v <= high)), 1)
    return np.array(a, copy=True)


def new_tensor(a, d):
    """A fresh contiguous ember tensor of dtype d holding array a.

    bfloat16 goes through a float32 tensor kept alive here: th.tensor(...,
    dtype=bfloat16) itself reads a freed temporary (see test_creation)."""
    a = np.array(a, order="C")
    if d is th.bfloat16:
        f = th.tensor(a, dtype=th.float32)
        return f.to(th.bfloat16)
    return th.tensor(a, dtype=d)


def make_layout(rng, shape, d, layout="contiguous", low=None, high=None,
                **kw):
    """(tensor, array) of the given shape in one of LAYOUTS: contiguous;
    transposed (a permuted view); sliced (steps 2 and 3 and a storage
    offset); broadcast (stride 0 in every other dim); 0d (shape ignored);
    empty (last dim 0)."""
    shape = tuple(shape)
    if layout == "contiguous":
        a = random_values(rng, shape, d, low, high, **kw)
        return new_tensor(a, d), a
    if layout == "transposed":
        if len(shape) < 2:  # a stride-2 column of a transposed (2, n) base
            n = shape[0] if shape else 1
            base = random_values(rng, (2, n), d, low, high, **kw)
            t = new_tensor(base, d).t().select(1, 0)
            a = base.T[:, 0]
            if not shape:
                t, a = t.reshape(()), a.reshape(())
            return t, np.array(a)
        base = random_values(rng, shape[::-1], d, low, high, **kw)
        t = new_tensor(base, d).permute(*reversed(range(len(shape))))
        return t, np.array(base.transpose())
    if layout == "sliced":  # steps 2, 3, 2, ... and a storage offset
        steps = [2 if i % 2 == 0 else 3 for i in range(len(shape))]
        bshape = [s * k + 1 for s, k in zip(shape, steps)]
        base = random_values(rng, bshape, d, low, high, **kw)
        idx = tuple(slice(1, 1 + s * k, k) for s, k in zip(shape, steps))
        t = new_tensor(base, d)[idx]
        return t, np.array(base[idx])
    if layout == "broadcast":  # stride 0 in every other dim, from the last
        bshape = [1 if (len(shape) - 1 - i) % 2 == 0 else s for i, s in enumerate(shape)]
        base = random_values(rng, bshape, d, low, high, **kw)
        t = new_tensor(base, d).expand(*shape)
        return t, np.array(np.broadcast_to(base, shape))
    if layout == "0d":
        a = random_values(rng, (), d, low, high, **kw)
        return new_tensor(a, d), a
    if layout == "empty":
        eshape = tuple(shape[:-1]) + (0,) if shape else (0,)
        a = random_values(rng, eshape, d, low, high, **kw)
        return new_tensor(a, d), a
    raise ValueError(f"unknown layout {layout!r}")


# ---- comparison --------------------------------------------------------
def assert_close(actual, expected, dtype=None, rtol=None, atol=None,
                 shape=None):
    """Checks an ember tensor against NumPy values.

    dtype: the expected ember dtype (checked with `is`); the expected values
    are converted to it first, as libTH would store them.  Floating results
    are compared with the per-dtype tolerance (float16/bfloat16 through
    float32), NaNs must match NaNs and infinities must match exactly;
    integer and bool results must be equal."""
    assert isinstance(actual, th.Tensor), f"expected an ember tensor, got {type(actual)}"
    if dtype is not None:
        assert actual.dtype is dtype, f"dtype {actual.dtype} != expected {dtype}"
    d = actual.dtype
    expected = np.asarray(expected)
    want_shape = expected.shape if shape is None else tuple(shape)
    assert tuple(actual.shape) == want_shape, \
        f"shape {tuple(actual.shape)} != expected {want_shape}"
    got = to_numpy(actual)
    if d.is_floating_point:
        exp = as_dtype(expected, d)
        r, a = TOLERANCES[d]
        r = r if rtol is None else rtol
        a = a if atol is None else atol
        np.testing.assert_allclose(got.astype(np.float64), exp.astype(np.float64),
                                   rtol=r, atol=a, equal_nan=True,
                                   err_msg=f"dtype {d}")
    else:
        exp = expected.astype(d.numpy) if dtype is not None else expected
        if d is th.bool:
            exp = expected.astype(bool)
        np.testing.assert_array_equal(got, exp, err_msg=f"dtype {d}")


def each(cases, check):
    """Runs check(case) for every case and fails once, naming every case
    that failed (a loop inside one test is much cheaper than a pytest
    parameter per case)."""
    failures = []
    for case in cases:
        try:
            check(case)
        except (Exception, pytest.fail.Exception) as e:  # noqa: BLE001 - reported below
            failures.append(f"[{case}] {type(e).__name__}: {e}")
    if failures:
        pytest.fail("\n".join(failures), pytrace=False)
