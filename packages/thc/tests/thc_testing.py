"""Helpers for ember.thc's tensor tests: the same random values as an
ember.th (CPU) tensor and an ember.thc (CUDA) tensor in the same layout,
and a comparison of a CUDA result with the CPU library's (the reference:
libTHC's op table must match libTH's).

A module of its own, imported by name, so that other packages' conftest.py
files can never shadow it.
"""
import os

import numpy as np
import pytest

import ember.th as th
import ember.thc as thc

# needs a device: a GPU, or EMBER_THC_EMULATE=1 with a host-only build
requires_device = pytest.mark.skipif(
    thc.device_count() == 0,
    reason="no CUDA device (set EMBER_THC_EMULATE=1 to test a host-only build on the "
           f"emulated device): {thc.cuda_error_text()}")

# EMBER_THC_TEST_DEVICE=cuda:1 (with EMBER_THC_EMULATE=2): pair() puts the
# CUDA operands on that device while cuda:0 stays current, so the op table
# runs through the device guard
TEST_DEVICE = os.environ.get("EMBER_THC_TEST_DEVICE") or None


def _default_device(fn):
    def on_test_device(*args, device=None, **kwargs):
        return fn(*args, device=device or TEST_DEVICE, **kwargs)
    return on_test_device


if TEST_DEVICE:   # the tests' own tensors go there too
    for _name in ("tensor", "zeros", "ones", "empty", "full", "arange", "eye", "linspace",
                  "rand", "randn", "randint", "randperm", "as_tensor"):
        setattr(thc, _name, _default_device(getattr(thc, _name)))

DTYPES = [th.float32, th.float64, th.float16, th.bfloat16, th.int32, th.int64, th.uint8,
          th.bool]
FLOAT_DTYPES = [th.float32, th.float64, th.float16, th.bfloat16]
INT_DTYPES = [th.int32, th.int64, th.uint8]
LAYOUTS = ["contiguous", "transposed", "sliced", "broadcast", "0d", "empty"]

# rtol, atol per result dtype: two C implementations of the same formula
# may differ in the last place (float16/bfloat16: about one unit)
TOLERANCES = {
    th.float32: (2e-5, 1e-6),
    th.float64: (1e-12, 1e-13),
    th.float16: (2e-3, 1e-4),
    th.bfloat16: (1.6e-2, 1e-3),
}


def ids(dtypes):
    return [d.name for d in dtypes]


def random_array(rng, shape, d, low=None, high=None, nonzero=False):
    """Random values for dtype d (float64 for floating dtypes, rounded by
    the tensors), never all zero; low/high bound them."""
    shape = tuple(shape)
    if d is th.bool:
        a = np.array(rng.random(shape) < 0.5)
        if nonzero:
            a[...] = True
    elif d.is_floating_point:
        a = rng.uniform(-4.0 if low is None else low, 4.0 if high is None else high, shape)
    else:
        info = np.iinfo(d.numpy)
        lo = (0 if d is th.uint8 else -9) if low is None else int(np.ceil(low))
        hi = (18 if d is th.uint8 else 9) if high is None else int(np.floor(high))
        a = rng.integers(max(lo, int(info.min)), min(hi, int(info.max)), shape, endpoint=True)
    if nonzero:
        a = np.where(a == 0, 1, a)
    a = np.array(a)
    if a.size and not a.any():
        a.reshape(-1)[0] = 1
    return a


def host_tensor(a, d):
    """A contiguous ember.th tensor of dtype d with a's values."""
    a = np.array(a, order="C")  # (np.ascontiguousarray would make a 0-d array 1-d)
    if d is th.bfloat16:
        return th.tensor(a, dtype=th.float32).to(th.bfloat16)
    return th.tensor(a, dtype=d)


def pair(rng, shape, d, layout="contiguous", low=None, high=None, nonzero=False):
    """(cpu, gpu): equal values in the same layout (the same view ops on an
    ember.th base and its upload): contiguous; transposed (a permuted view);
    sliced (steps and a storage offset); broadcast (stride 0 in every other
    dim); 0d (shape ignored); empty (last dim 0)."""
    shape = tuple(shape)

    def base(bshape):
        h = host_tensor(random_array(rng, bshape, d, low, high, nonzero), d)
        return h, thc.tensor(h, device=TEST_DEVICE)

    if layout == "contiguous":
        return base(shape)
    if layout == "0d":
        h, g = base(())
        assert h.ndim == 0 and g.ndim == 0
        return h, g
    if layout == "empty":
        return base(shape[:-1] + (0,) if shape else (0,))
    if layout == "transposed":
        if len(shape) < 2:  # a stride-2 column of a transposed base
            n = shape[0] if shape else 1
            h, g = base((2, n))
            view = (lambda t: t.t().select(1, 0).reshape(shape)) if shape else \
                (lambda t: t.t().select(1, 0).reshape(()))
            return view(h), view(g)
        h, g = base(shape[::-1])
        order = list(reversed(range(len(shape))))
        return h.permute(*order), g.permute(*order)
    if layout == "sliced":
        steps = [2 if i % 2 == 0 else 3 for i in range(len(shape))]
        h, g = base([s * k + 1 for s, k in zip(shape, steps)])
        idx = tuple(slice(1, 1 + s * k, k) for s, k in zip(shape, steps))
        return h[idx], g[idx]
    if layout == "broadcast":
        h, g = base([1 if (len(shape) - 1 - i) % 2 == 0 else s for i, s in enumerate(shape)])
        return h.expand(*shape), g.expand(*shape)
    raise ValueError(f"unknown layout {layout!r}")


def host_values(t):
    """NumPy values of an ember.th or ember.thc tensor (bfloat16 via float32)."""
    if isinstance(t, thc.Tensor):
        t = t.cpu()
    if t.dtype is th.bfloat16:
        t = t.float()
    return np.array(t.numpy(), copy=True)


def assert_same(gpu, cpu, rtol=None, atol=None, what=""):
    """A CUDA result equals the CPU library's: type, dtype, shape, values
    (per-dtype tolerances for floats, NaN where NaN; exact otherwise)."""
    if isinstance(cpu, tuple):  # (values, indices) results
        assert isinstance(gpu, tuple) and len(gpu) == len(cpu), f"{what}: {gpu!r} vs {cpu!r}"
        for g, c in zip(gpu, cpu):
            assert_same(g, c, rtol, atol, what)
        return
    if not isinstance(cpu, th.Tensor):  # a Python number (item(), len(), ...)
        assert gpu == cpu or (gpu != gpu and cpu != cpu), f"{what}: {gpu!r} != {cpu!r}"
        return
    assert isinstance(gpu, thc.Tensor), f"{what}: expected a CUDA tensor, got {type(gpu)}"
    assert gpu.device == (TEST_DEVICE or "cuda:0")
    assert gpu.dtype is cpu.dtype, f"{what}: dtype {gpu.dtype} != CPU's {cpu.dtype}"
    assert tuple(gpu.shape) == tuple(cpu.shape), \
        f"{what}: shape {tuple(gpu.shape)} != CPU's {tuple(cpu.shape)}"
    got, want = host_values(gpu), host_values(cpu)
    if cpu.dtype.is_floating_point:
        r, a = TOLERANCES[cpu.dtype]
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                   rtol=r if rtol is None else rtol,
                                   atol=a if atol is None else atol, equal_nan=True,
                                   err_msg=f"{what} ({cpu.dtype})")
    else:
        np.testing.assert_array_equal(got, want, err_msg=f"{what} ({cpu.dtype})")


def outcome(fn, *args):
    """fn(*args)'s result, or the exception it raised."""
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 - compared by the caller
        return e


def assert_same_outcome(gpu_call, cpu_call, rtol=None, atol=None, what=""):
    """Both calls succeed with the same result, or both raise the same
    exception type."""
    want = outcome(cpu_call)
    got = outcome(gpu_call)
    if isinstance(want, Exception):
        assert isinstance(got, Exception), \
            f"{what}: CPU raised {type(want).__name__}: {want}, CUDA returned {got!r}"
        assert type(got) is type(want), \
            f"{what}: CPU raised {type(want).__name__}: {want}; CUDA raised " \
            f"{type(got).__name__}: {got}"
        return
    if isinstance(got, Exception):
        raise AssertionError(f"{what}: CUDA raised {type(got).__name__}: {got}, "
                             f"CPU gave {want!r}") from got
    assert_same(got, want, rtol, atol, what)


def each(cases, check):
    """Runs check(case) for every case and fails once, naming each case
    that failed (a loop in one test is much cheaper than a parameter per
    case)."""
    failures = []
    for case in cases:
        try:
            check(case)
        except (Exception, pytest.fail.Exception) as e:  # noqa: BLE001 - reported below
            failures.append(f"[{case}] {type(e).__name__}: {e}")
    if failures:
        pytest.fail(f"{len(failures)} case(s) failed:\n" + "\n".join(failures), pytrace=False)


def seeded_rng(request):
    """A NumPy generator seeded from the test's id (each test module's `rng`
    fixture): fresh data per test, the same data on every run.
    THC_TEST_SEED=n draws other data."""
    import os
    import zlib
    seed = zlib.crc32(request.node.nodeid.encode()) ^ int(os.environ.get("THC_TEST_SEED", "0"))
    return np.random.default_rng(seed)
