"""Creation and conversion: tensor() dtype inference, NumPy exchange
(zero-copy both ways), empty/zeros/ones/full(+_like), arange, linspace,
logspace, eye, item/tolist/bool/int/float, .to(dtype) between all dtypes,
and pickling."""
import copy
import gc
import math
import pickle

import numpy as np
import pytest

import ember.th as th
from ember.th import _convert, _core

from th_testing import (DTYPES, as_dtype, assert_close, each, ids, new_tensor, np_dtype,
                      to_numpy)


@pytest.fixture
def float64_default():
    old = th.get_default_dtype()
    th.set_default_dtype(th.float64)
    yield
    th.set_default_dtype(old)


# ---- tensor() -------------------------------------------------------------
@pytest.mark.parametrize("data,dtype,shape", [
    ([1, 2, 3], th.int64, (3,)),
    ([1.0, 2.0], th.float32, (2,)),
    ([1, 2.5], th.float32, (2,)),
    ([True, False], th.bool, (2,)),
    ([True, 2], th.int64, (2,)),
    ([[1, 2], [3, 4]], th.int64, (2, 2)),
    (((1, 2), (3, 4)), th.int64, (2, 2)),
    ([], th.float32, (0,)),
    ([[], []], th.float32, (2, 0)),
    (3, th.int64, ()),
    (2.5, th.float32, ()),
    (True, th.bool, ()),
    (np.float64(2.0), th.float64, ()),
    (np.int32(3), th.int32, ()),
    (np.array([1, 2], dtype=np.int16), th.int16, (2,)),
    (np.array([1.5], dtype=np.float16), th.float16, (1,)),
    (np.array([[1.0]]), th.float64, (1, 1)),
    (np.array(True), th.bool, ()),
], ids=repr)
def test_tensor_dtype_inference(data, dtype, shape):
    t = th.tensor(data)
    assert t.dtype is dtype
    assert tuple(t.shape) == shape
    np.testing.assert_array_equal(to_numpy(t), np.asarray(data))


def test_tensor_float_inference_follows_default_dtype(float64_default):
    assert th.tensor([1.5]).dtype is th.float64
    assert th.tensor(1.5).dtype is th.float64
    assert th.tensor([1, 2]).dtype is th.int64
    assert th.tensor(np.array([1.5], np.float32)).dtype is th.float32  # arrays keep theirs


@pytest.mark.parametrize("dtype", sorted(set(DTYPES) - {th.bfloat16}, key=DTYPES.index),
                         ids=lambda d: d.name)
def test_tensor_explicit_dtype(dtype):
    vals = [[0, 1, 2], [3, 1, 0]]
    t = th.tensor(vals, dtype=dtype)
    assert t.dtype is dtype and t.is_contiguous()
    np.testing.assert_array_equal(to_numpy(t), np.asarray(vals).astype(np_dtype(dtype)))
    assert th.tensor(2, dtype=dtype).item() == (bool(2) if dtype is th.bool else 2)


def test_tensor_bfloat16_keeps_its_temporary_alive(monkeypatch):
    """Spies on the C calls: no th_to_dtype may read a tensor whose last
    reference was already dropped.  Releases are deferred during the call,
    so the check itself never touches freed memory."""
    real = _core.lib
    released, bad, pending = set(), [], []

    class Spy:
        def __getattr__(self, name):
            attr = getattr(real, name)
            if name == "th_tensor_release":
                def release(p):
                    released.add(int(_core.ffi.cast("uintptr_t", p)))
                    pending.append(p)
                return release
            if name == "th_to_dtype":
                def to_dtype(p, code):
                    if int(_core.ffi.cast("uintptr_t", p)) in released:
                        bad.append(p)
                    return attr(p, code)
                return to_dtype
            return attr

    monkeypatch.setattr(_core, "lib", Spy())
    monkeypatch.setattr(_convert, "lib", Spy())
    try:
        t = th.tensor([1.5, 2.0], dtype=th.bfloat16)
        values = t.tolist()
    finally:
        monkeypatch.undo()
        for p in pending:
            real.th_tensor_release(p)
    assert not bad, "th_to_dtype read a released tensor"
    assert values == [1.5, 2.0]


def test_tensor_copies_its_input(rng):
    a = rng.standard_normal(4)
    t = th.tensor(a)
    a[0] = 100
    assert t[0].item() != 100
    u = th.tensor(t)
    u[1] = -5
    assert t[1].item() != -5
    v = th.tensor(t, dtype=th.int32)
    assert v.dtype is th.int32


def test_tensor_errors():
    with pytest.raises(ValueError, match="expected sequence of equal-length lists"):
        th.tensor([[1, 2], [3]])
    with pytest.raises(TypeError, match="Could not infer dtype of NoneType"):
        th.tensor([None])
    with pytest.raises(TypeError):
        th.tensor(["a"])
    with pytest.raises(TypeError, match="can't convert complex to float"):
        th.tensor(1 + 2j, dtype=th.float32)
    with pytest.raises(TypeError, match="dtype must be an ember dtype"):
        th.zeros(2, dtype=np.float32)


def test_as_tensor_and_asarray_share_numpy_memory():
    a = np.arange(4.0)
    t = th.as_tensor(a)
    a[0] = 9
    assert t[0].item() == 9
    assert th.as_tensor(t) is t
    assert th.as_tensor(a, dtype=th.float32).dtype is th.float32
    c = th.asarray(a, copy=True)
    a[1] = -1
    assert c[1].item() == 1.0
    assert th.asarray(a)[1].item() == -1


# ---- NumPy exchange -------------------------------------------------------
NP_DTYPES = [np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.int8,
             np.uint8, np.bool_]


@pytest.mark.parametrize("npd", NP_DTYPES, ids=lambda d: np.dtype(d).name)
def test_from_numpy_zero_copy_both_ways(npd, rng):
    a = (rng.standard_normal((3, 4)) * 5).astype(npd)
    t = th.from_numpy(a)
    assert t.dtype.numpy == np.dtype(npd) and tuple(t.shape) == (3, 4)
    assert t.data_ptr() == a.ctypes.data
    np.testing.assert_array_equal(to_numpy(t), a)
    t[1, 2] = 1  # tensor -> array
    assert a[1, 2] == 1
    a[0, 0] = 0  # array -> tensor
    assert t[0, 0].item() == 0
    n = t.numpy()  # and back to NumPy without a copy
    assert np.shares_memory(n, a)


@pytest.mark.parametrize("view", ["transposed", "strided", "negative", "neg2d", "0d", "empty",
                                  "broadcast"])
def test_from_numpy_strided_arrays(view, rng):
    base = rng.standard_normal((4, 6))
    a = {"transposed": base.T, "strided": base[1::2, ::3], "negative": base[::-1],
         "neg2d": base[::-2, ::-3], "0d": base[1, 2, ...], "empty": base[:0],
         "broadcast": np.broadcast_to(base[:1], (3, 6))}[view]
    t = th.from_numpy(a)
    assert tuple(t.shape) == a.shape
    assert t.stride() == tuple(s // 8 for s in a.strides)
    np.testing.assert_array_equal(to_numpy(t), a)
    if view in ("transposed", "strided", "negative", "neg2d") and a.size:
        t.mul_(0)
        assert (a == 0).all()
        np.testing.assert_array_equal(t.numpy(), a)
        assert np.shares_memory(t.numpy(), base)


def test_from_numpy_keeps_the_array_alive():
    a = np.arange(1000, dtype=np.int64)
    t = th.from_numpy(a[10:20])
    del a
    gc.collect()
    _ = [np.ones(1000) for _ in range(10)]
    assert t.tolist() == list(range(10, 20))


@pytest.mark.parametrize("npd", [np.uint16, np.uint32, np.uint64, np.clongdouble,
                                 object, "M8[s]", "U3"], ids=str)
def test_from_numpy_unsupported_dtypes(npd):
    with pytest.raises(TypeError, match="can't convert np.ndarray of type numpy.*The only "
                                        "supported types are: float64, float32, float16, "
                                        "complex64, complex128, int64, int32, int16, int8, "
                                        "uint8, and bool"):
        th.from_numpy(np.zeros(2, dtype=npd))


def test_from_numpy_bad_inputs():
    with pytest.raises(TypeError, match="expected np.ndarray \\(got list\\)"):
        th.from_numpy([1, 2])
    odd = np.lib.stride_tricks.as_strided(np.zeros(10, np.int32), (3,), (2,))
    with pytest.raises(ValueError, match="strides not a multiple of the element byte size"):
        th.from_numpy(odd)


def test_numpy_zero_copy_and_bfloat16_refusal(rng):
    t = th.tensor(rng.standard_normal((3, 4)))
    n = t.numpy()
    assert n.dtype == np.float64 and n.ctypes.data == t.data_ptr()
    n[0, 0] = 42
    assert t[0, 0].item() == 42
    tt = t.t()
    nt = tt.numpy()
    assert nt.strides == (8, 32) and np.shares_memory(nt, n)
    assert np.asarray(t).ctypes.data == t.data_ptr()
    b = t.bfloat16()
    with pytest.raises(TypeError, match="Got unsupported ScalarType BFloat16"):
        b.numpy()
    with pytest.raises(TypeError, match="BFloat16"):
        np.array(b)  # as PyTorch: NumPy has no bfloat16
    assert_close(b.float(), to_numpy(t), th.float32, rtol=1e-2, atol=1e-2)
    f = tt.numpy(force=True)
    assert f.flags.c_contiguous and not np.shares_memory(f, n)
    assert np.array(th.tensor([1, 2]), dtype=np.float64).dtype == np.float64


def test_numpy_of_every_dtype(make):
    def check(d):
        t, a = make((2, 3), d, "transposed")
        if d is th.bfloat16:
            with pytest.raises(TypeError):
                t.numpy()
            return
        n = t.numpy()
        assert n.dtype == d.numpy
        np.testing.assert_array_equal(n, a)
    each(DTYPES, check)


# ---- empty / zeros / ones / full and _like ---------------------------------
@pytest.mark.parametrize("args", [(2, 3), ((2, 3),), ([2, 3],), (th.Size([2, 3]),), ((),),
                                  (0,), (3, 0, 2), ()], ids=repr)
def test_factory_shapes(args):
    want = () if args in ((), ((),)) else tuple(args[0]) if len(args) == 1 and \
        not isinstance(args[0], int) else tuple(args)
    for f in (th.empty, th.zeros, th.ones):
        t = f(*args)
        assert tuple(t.shape) == want and t.dtype is th.float32 and t.is_contiguous()
    assert (to_numpy(th.zeros(*args)) == 0).all()
    assert (to_numpy(th.ones(*args)) == 1).all()


@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
def test_factories_every_dtype(dtype):
    z = th.zeros(2, 3, dtype=dtype)
    o = th.ones((2, 3), dtype=dtype)
    e = th.empty([2, 3], dtype=dtype)
    f = th.full((2, 3), 1 if dtype is th.bool else 7, dtype=dtype)
    for t in (z, o, e, f):
        assert t.dtype is dtype and tuple(t.shape) == (2, 3)
    assert_close(z, np.zeros((2, 3)), dtype)
    assert_close(o, np.ones((2, 3)), dtype)
    assert_close(f, np.full((2, 3), 1 if dtype is th.bool else 7), dtype)
    src = th.ones(4, 5, dtype=dtype).t()
    for like, v in ((th.zeros_like, 0), (th.ones_like, 1)):
        r = like(src)
        assert r.dtype is dtype and tuple(r.shape) == (5, 4) and r.is_contiguous()
        assert_close(r, np.full((5, 4), v), dtype)
    assert th.empty_like(src).dtype is dtype
    assert tuple(th.empty_like(src).shape) == (5, 4)
    assert_close(th.full_like(src, 1), np.ones((5, 4)), dtype)
    assert th.zeros_like(src, dtype=th.float64).dtype is th.float64
    assert th.full_like(src, 1, dtype=th.int8).dtype is th.int8


def test_full_infers_dtype():
    assert th.full((2,), 3).dtype is th.int64
    assert th.full((2,), 3.0).dtype is th.float32
    assert th.full((2,), True).dtype is th.bool
    assert th.full((2,), 1.5, dtype=th.int64).tolist() == [1, 1]  # converted
    assert th.full((), -2).tolist() == -2


def test_string_size_is_type_error():
    with pytest.raises(TypeError):
        th.zeros("ab")


def test_factory_errors():
    with pytest.raises(RuntimeError, match=r"Trying to create tensor with negative dimension "
                                           r"-1: \[-1\]"):
        th.zeros(-1)
    with pytest.raises(RuntimeError, match="negative dimension -3"):
        th.empty(2, -3)
    with pytest.raises(TypeError, match="size must be a sequence of ints"):
        th.ones([2, None])
    with pytest.raises(ValueError, match="number of dimensions must be in \\[0, 16\\]"):
        th.zeros([1] * 17)
    with pytest.raises(RuntimeError, match=r"Storage size calculation overflowed with "
                                           r"sizes=\[1099511627776, 1099511627776\]"):
        th.empty(2 ** 40, 2 ** 40)


# ---- arange / linspace / logspace / eye ------------------------------------
@pytest.mark.parametrize("args", [(5,), (2, 9), (2, 9, 3), (10, 0, -3), (0, 1), (3, 3), (5, 2),
                                  (-4, 4, 2), (0, 10, 20)], ids=repr)
def test_arange_int(args):
    if len(args) == 2 and args[1] < args[0] or len(args) == 3 and args[2] > 0 > args[1] - args[0]:
        with pytest.raises(RuntimeError, match="upper bound and larger bound inconsistent "
                                               "with step sign"):
            th.arange(*args)
        return
    t = th.arange(*args)
    assert t.dtype is th.int64
    assert t.tolist() == np.arange(*args).tolist()


@pytest.mark.parametrize("args", [(0.0, 1.0, 0.1), (1, 2.5, 0.5), (2.5,), (-1.0, 1.0, 0.25),
                                  (5.0, 0.0, -1.5), (0, 1, 0.3)], ids=repr)
def test_arange_float(args):
    t = th.arange(*args)
    assert t.dtype is th.float32
    want = np.arange(*[float(a) for a in args])
    assert tuple(t.shape) == want.shape
    assert_close(t, want, th.float32)


def test_arange_dtypes_and_tensors(float64_default):
    assert th.arange(3.0).dtype is th.float64
    assert th.arange(5, dtype=th.int32).tolist() == [0, 1, 2, 3, 4]
    assert th.arange(5, dtype=th.int32).dtype is th.int32
    assert th.arange(0, 1, 0.25, dtype=th.float32).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert th.arange(th.tensor(3)).tolist() == [0, 1, 2]
    b = th.arange(4, dtype=th.bfloat16)
    assert b.dtype is th.bfloat16 and b.tolist() == [0.0, 1.0, 2.0, 3.0]
    big = th.arange(2 ** 40, 2 ** 40 + 3)
    assert big.tolist() == [2 ** 40, 2 ** 40 + 1, 2 ** 40 + 2]


def test_arange_errors():
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        th.arange(0, 5, 0)
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        th.arange(0.0, 5.0, 0.0)
    with pytest.raises(RuntimeError, match="upper bound and larger bound inconsistent"):
        th.arange(5, 0, 1)
    with pytest.raises(RuntimeError, match="upper bound and larger bound inconsistent"):
        th.arange(0.0, 5.0, -1.0)
    with pytest.raises(RuntimeError, match="unsupported range"):
        th.arange(0, math.inf)
    with pytest.raises(RuntimeError, match="unsupported range"):
        th.arange(math.nan, 1.0)


@pytest.mark.parametrize("dtype", [th.float32, th.float64], ids=ids([th.float32, th.float64]))
@pytest.mark.parametrize("start,end,steps", [(0, 1, 5), (-2, 3, 7), (1, 1, 3), (3, -3, 4),
                                             (0, 10, 2), (0, 10, 0), (0, 1, 101)])
def test_linspace(start, end, steps, dtype):
    t = th.linspace(start, end, steps, dtype=dtype)
    assert t.dtype is dtype
    want = np.linspace(start, end, steps)
    assert_close(t, want, dtype)
    if steps > 1:  # both ends exact
        assert t[0].item() == start and t[-1].item() == end


def test_linspace_one_step_is_start():
    assert th.linspace(0, 10, 1).tolist() == [0.0]


def test_linspace_int_and_default_dtype():
    assert th.linspace(0, 10, 5, dtype=th.int64).tolist() == [0, 2, 5, 7, 10]
    assert th.linspace(0, 1, 3).dtype is th.float32
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        th.linspace(0, 1, -1)


@pytest.mark.parametrize("start,end,steps,base", [(0, 2, 3, 10.0), (-1, 1, 5, 2.0),
                                                  (0, 3, 4, math.e), (1, 1, 1, 10.0)])
def test_logspace(start, end, steps, base):
    t = th.logspace(start, end, steps, base=base, dtype=th.float64)
    assert_close(t, np.logspace(start, end, steps, base=base), th.float64)
    assert_close(th.logspace(start, end, steps, base), np.logspace(start, end, steps,
                                                                   base=base), th.float32)


@pytest.mark.parametrize("n,m", [(3, None), (2, 4), (4, 2), (0, None), (1, 1), (3, 0)])
def test_eye(n, m):
    t = th.eye(n) if m is None else th.eye(n, m)
    assert_close(t, np.eye(n, m), th.float32)
    assert_close(th.eye(n, m, dtype=th.int32), np.eye(n, m, dtype=np.int32), th.int32)
    assert_close(th.eye(n, m, dtype=th.bool), np.eye(n, m, dtype=bool), th.bool)


def test_eye_errors():
    with pytest.raises(RuntimeError, match="n must be greater or equal to 0, got -1"):
        th.eye(-1)


def test_scalar_tensor():
    t = th.scalar_tensor(3)
    assert t.dtype is th.float32 and t.item() == 3.0 and tuple(t.shape) == ()
    assert th.scalar_tensor(2, dtype=th.int8).dtype is th.int8


# ---- item / tolist / bool / int / float ----------------------------------
@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
def test_item_and_conversions(dtype):
    v = 1 if dtype is th.bool else 3
    t = th.full((), v, dtype=dtype)
    r = t.item()
    if dtype is th.bool:
        assert r is True
    elif dtype.is_floating_point:
        assert type(r) is float and r == 3.0
    else:
        assert type(r) is int and r == 3
    assert th.full((1, 1), v, dtype=dtype).item() == r  # any 1-element tensor
    assert float(t) == float(v) and int(t) == v and bool(t) is True
    assert bool(th.zeros((), dtype=dtype)) is False
    if not dtype.is_floating_point:
        assert [10, 20, 30, 40][t] == [10, 20, 30, 40][v]  # __index__
        assert range(10)[th.full((1,), 2, dtype=th.int64)] == 2
    else:
        with pytest.raises(TypeError, match="only integer tensors of a single element can be "
                                            "converted to an index"):
            [1, 2, 3, 4][t]


def test_item_of_special_values():
    assert math.isnan(th.tensor(math.nan).item())
    assert th.tensor(-math.inf, dtype=th.float16).item() == -math.inf
    assert th.tensor(2 ** 62).item() == 2 ** 62
    assert th.tensor(-128, dtype=th.int8).item() == -128
    assert th.tensor(255, dtype=th.uint8).item() == 255


def test_item_bool_errors():
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to "
                                           "Scalar"):
        th.zeros(2).item()
    with pytest.raises(RuntimeError, match="a Tensor with 0 elements cannot be converted"):
        th.zeros(0).item()
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value "
                                           "is ambiguous"):
        bool(th.zeros(2))
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with no value is ambiguous"):
        bool(th.zeros(0))
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        float(th.zeros(3))
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        int(th.zeros(3))
    with pytest.raises(TypeError, match="only integer tensors of a single element"):
        [1, 2][th.tensor([0, 1])]


@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
def test_tolist(dtype, make):
    t, a = make((2, 3), dtype, "transposed")
    lst = t.tolist()
    assert lst == a.tolist()
    py = bool if dtype is th.bool else float if dtype.is_floating_point else int
    assert all(type(v) is py for row in lst for v in row)
    s, b = make((), dtype, "0d")
    assert s.tolist() == b.item() and type(s.tolist()) is py
    assert th.zeros(0, 2, dtype=dtype).tolist() == []


def test_iteration_len_and_contains(rng):
    a = rng.standard_normal((3, 2))
    a[2, 1] = 0.5  # exact in float32 too (see test_python_float_keeps_double_precision)
    t = th.tensor(a)
    rows = list(t)
    assert len(rows) == 3 and all(tuple(r.shape) == (2,) for r in rows)
    assert_close(rows[1], a[1])
    assert float(a[2, 1]) in t and 1234.5 not in t
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(th.tensor(1.0))
    with pytest.raises(RuntimeError, match="only supports Tensor or scalar"):
        "a" in t


# ---- .to(dtype) between all dtypes ------------------------------------------
_TO_VALUES = np.array([[0.0, 1.0, 2.75, -2.75], [7.5, -0.25, 3.0, -9.0]])


@pytest.mark.parametrize("dst", DTYPES, ids=ids(DTYPES))
@pytest.mark.parametrize("src", DTYPES, ids=ids(DTYPES))
def test_to_dtype_all_pairs(src, dst):
    vals = _TO_VALUES
    if src is th.uint8 or dst is th.uint8:
        vals = np.abs(vals)  # negative floats to uint8 are undefined in C
    s_vals = as_dtype(vals, src)  # what the source holds
    t = new_tensor(s_vals, src).t()  # non-contiguous source
    want = s_vals.T.astype(np.float64) if src.is_floating_point else s_vals.T
    if not dst.is_floating_point and dst is not th.bool and src.is_floating_point:
        want = np.trunc(want)  # float -> int truncates toward zero
    r = t.to(dst)
    assert r.dtype is dst and (r.is_contiguous() or src is dst)
    assert_close(r, as_dtype(want, dst) if dst is not th.bool else want != 0, dst, rtol=0, atol=0)
    if src is dst:
        assert t.to(dst) is t


@pytest.mark.parametrize("method,dtype", [
    ("float", th.float32), ("double", th.float64), ("half", th.float16),
    ("bfloat16", th.bfloat16), ("long", th.int64), ("int", th.int32), ("short", th.int16),
    ("char", th.int8), ("byte", th.uint8), ("bool", th.bool),
])
def test_conversion_methods(method, dtype):
    t = th.tensor([[0.0, 1.0], [2.0, 3.0]])
    r = getattr(t, method)()
    assert r.dtype is dtype
    assert r.tolist() == ([[False, True], [True, True]] if dtype is th.bool
                          else [[0, 1], [2, 3]])


def test_to_variants():
    t = th.tensor([1.0, 2.0])
    assert t.to(th.int64).dtype is th.int64
    assert t.to(dtype=th.float64).dtype is th.float64
    assert t.to(th.tensor([1], dtype=th.int8)).dtype is th.int8
    assert t.to("cpu") is t and t.cpu() is t
    c = t.to(th.float32, copy=True)
    assert c is not t and c.data_ptr() != t.data_ptr()
    assert t.type_as(th.zeros(1, dtype=th.int16)).dtype is th.int16
    with pytest.raises(RuntimeError, match="cannot move to cuda"):
        t.to("cuda")


def test_to_wraps_and_rounds_like_pytorch():
    assert th.tensor([300, -1]).to(th.uint8).tolist() == [44, 255]
    assert th.tensor([200]).to(th.int8).tolist() == [-56]
    assert th.tensor([70000.0]).to(th.float16).item() == math.inf
    assert th.tensor([1.0 + 2 ** -9]).to(th.bfloat16).item() == 1.0  # ties to even
    assert th.tensor([1.0 + 3 * 2 ** -9]).to(th.bfloat16).item() == 1.0 + 2 ** -7
    assert th.tensor([math.nan]).to(th.bfloat16).item() != th.tensor([math.nan]).item()
    assert th.tensor([0.5, 0.0, -0.1]).to(th.bool).tolist() == [True, False, True]


# ---- dtype objects and defaults ------------------------------------------
def test_dtype_objects():
    assert th.float is th.float32 and th.double is th.float64 and th.half is th.float16
    assert th.long is th.int64 and th.int is th.int32 and th.short is th.int16
    assert [d.itemsize for d in DTYPES] == [4, 8, 2, 2, 1, 1, 2, 4, 8, 1]
    assert [d.is_floating_point for d in DTYPES] == [True] * 4 + [False] * 6
    assert pickle.loads(pickle.dumps(th.bfloat16)) is th.bfloat16
    assert th.get_default_dtype() is th.float32
    with pytest.raises(TypeError, match="only floating-point types are supported as the "
                                        "default type"):
        th.set_default_dtype(th.int64)
    assert th.get_default_dtype() is th.float32
    t = th.zeros(2, 3)
    assert t.element_size() == 4 and t.itemsize == 4 and t.nbytes == 24
    assert th.is_tensor(t) and not th.is_tensor(np.zeros(1)) and th.numel(t) == 6


# ---- pickling --------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES, ids=ids(DTYPES))
def test_pickle_round_trip(dtype, make):
    def check(layout):
        t, a = make((3, 4), dtype, layout)
        for proto in (2, pickle.HIGHEST_PROTOCOL):
            u = pickle.loads(pickle.dumps(t, protocol=proto))
            assert u.dtype is dtype and tuple(u.shape) == tuple(t.shape)
            assert u.is_contiguous()
            assert_close(u, a, dtype, rtol=0, atol=0)
            if u.numel():
                assert u.data_ptr() != t.data_ptr()
        d = copy.deepcopy(t)
        assert_close(d, a, dtype, rtol=0, atol=0)
    each(["contiguous", "transposed", "sliced", "broadcast", "0d", "empty"], check)


def test_pickle_in_containers_and_corrupt_data():
    t = th.arange(6).reshape(2, 3)
    obj = {"w": t, "views": [t[0], t.t()]}
    back = pickle.loads(pickle.dumps(obj))
    assert back["w"].tolist() == t.tolist() and back["views"][1].tolist() == t.t().tolist()
    fn, args = t.__reduce__()
    with pytest.raises(RuntimeError, match="corrupt pickled tensor"):
        fn(args[0][:-1], *args[1:])
