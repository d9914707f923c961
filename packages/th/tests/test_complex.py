"""Complex tensors in ember.th: the dtypes and their promotion, creation,
NumPy exchange, casts, the element-wise ops with complex loops against
NumPy (broadcast, non-contiguous, 0-d and empty operands), the views as
(re, im) pairs, sum/mean and printing."""
import pickle

import numpy as np
import pytest

import ember.th as th
from th_testing import complex_normal as _c

COMPLEX = [th.complex64, th.complex128]


@pytest.fixture
def rng():
    return np.random.default_rng(11)



def test_dtype_facts():
    assert th.cfloat is th.complex64 and th.cdouble is th.complex128
    assert th.complex64.itemsize == 8 and th.complex128.itemsize == 16
    for d in COMPLEX:
        assert d.is_complex and not d.is_floating_point and d.is_signed
        assert pickle.loads(pickle.dumps(d)) is d
    assert th.complex64.to_real() is th.float32 and th.complex128.to_real() is th.float64
    assert th.float64.to_complex() is th.complex128 and th.float16.to_complex() is th.complex64
    assert not th.float32.is_complex and th.float32.to_real() is th.float32
    with pytest.raises(RuntimeError, match="floating point"):
        th.int64.to_complex()


@pytest.mark.parametrize("a,b,want", [
    (th.complex64, th.float64, th.complex128), (th.complex64, th.float32, th.complex64),
    (th.complex64, th.int64, th.complex64), (th.complex128, th.float32, th.complex128),
    (th.complex64, th.complex128, th.complex128), (th.bool, th.complex64, th.complex64),
    (th.float16, th.complex64, th.complex64)])
def test_promote_types(a, b, want):
    assert th.promote_types(a, b) is want
    assert th.promote_types(b, a) is want


def test_result_types_with_scalars_and_zero_dim_tensors():
    f32, f64 = th.ones(2), th.ones(2, dtype=th.float64)
    assert (f32 * 1j).dtype is th.complex64            # a Python complex: the default complex
    assert (f64 * 1j).dtype is th.complex128
    assert (f32 * th.tensor(1j, dtype=th.complex128)).dtype is th.complex64  # 0-d: category only
    assert (f64 * th.tensor(1j, dtype=th.complex64)).dtype is th.complex128  # keeps f64's width
    assert (th.ones(2, dtype=th.int64) * th.tensor(1j)).dtype is th.complex64
    assert (th.ones(2, dtype=th.complex64) * 2.5).dtype is th.complex64
    assert (th.ones(2, dtype=th.complex64) * th.ones(2, dtype=th.float64)).dtype is th.complex128


def test_creation_and_conversion(rng):
    assert th.tensor([1 + 2j, 3]).dtype is th.complex64
    assert th.tensor(1j).dtype is th.complex64 and th.tensor(1j).item() == 1j
    a = _c(rng, (2, 3))
    t = th.tensor(a)
    assert t.dtype is th.complex128
    np.testing.assert_array_equal(t.numpy(), a)
    assert t.tolist() == a.tolist()
    assert complex(t[1, 2]) == a[1, 2]
    shared = th.from_numpy(a)
    a[0, 0] = 5 - 5j
    assert shared[0, 0].item() == 5 - 5j                 # zero-copy both ways
    assert th.full((2,), 1 + 1j).dtype is th.complex64
    np.testing.assert_array_equal(th.zeros(3, dtype=th.cdouble).numpy(), np.zeros(3))
    np.testing.assert_array_equal(th.ones(2, 2, dtype=th.cfloat).numpy(), np.ones((2, 2)))
    with pytest.raises(TypeError, match="can't convert complex"):
        th.tensor(1j, dtype=th.float32)


def test_casts(rng):
    a = _c(rng, (4, 5))
    t = th.tensor(a)
    np.testing.assert_array_equal(t.to(th.complex64).numpy(), a.astype(np.complex64))
    np.testing.assert_array_equal(t.to(th.float64).numpy(), a.real)      # keeps the real part
    np.testing.assert_array_equal(t.to(th.int32).numpy(), a.real.astype(np.int32))
    np.testing.assert_array_equal(t.to(th.float16).numpy(), a.real.astype(np.float16))
    r = rng.standard_normal((4, 5)).astype(np.float32)
    np.testing.assert_array_equal(th.tensor(r).to(th.complex128).numpy(), r.astype(np.complex128))
    np.testing.assert_array_equal(th.tensor(r).to(th.complex64).numpy(), r.astype(np.complex64))
    nc = t.t()                                            # strided copies
    np.testing.assert_array_equal(nc.contiguous().numpy(), a.T)
    np.testing.assert_array_equal(nc.to(th.complex64).numpy(), a.T.astype(np.complex64))
    out = th.empty(5, 4, dtype=th.complex128)
    out.copy_(nc)
    np.testing.assert_array_equal(out.numpy(), a.T)


BINARY = [("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("div", np.divide),
          ("pow", np.power), ("eq", np.equal), ("ne", np.not_equal)]


@pytest.mark.parametrize("name,ref", BINARY)
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_binary_against_numpy(rng, name, ref, dtype):
    tol = 1e-5 if dtype is np.complex64 else 1e-12
    a, b = _c(rng, (3, 4), dtype), _c(rng, (4,), dtype)
    cases = [(a, b), (a[:, ::2], a[1, ::2]), (a[0, 0], b), (np.zeros((0, 4), dtype), b)]
    for x, y in cases:
        got = getattr(th, name)(th.tensor(x), th.tensor(y))
        want = ref(x, y)
        if name in ("eq", "ne"):
            assert got.dtype is th.bool
        np.testing.assert_allclose(got.numpy(), want, rtol=tol, atol=tol)
    # a non-contiguous tensor as both operands, a real operand, a Python complex
    t = th.tensor(a).t()
    np.testing.assert_allclose(getattr(th, name)(t, t).numpy(), ref(a.T, a.T), rtol=tol, atol=tol)
    r = rng.standard_normal(4).astype(np.float32)
    np.testing.assert_allclose(getattr(th, name)(th.tensor(a), th.tensor(r)).numpy(),
                               ref(a, r), rtol=tol, atol=tol)
    np.testing.assert_allclose(getattr(th, name)(th.tensor(a), 0.5 - 2j).numpy(),
                               ref(a, np.asarray(0.5 - 2j, dtype)), rtol=tol, atol=tol)


UNARY = [("neg", np.negative), ("exp", np.exp), ("log", np.log), ("sqrt", np.sqrt),
         ("reciprocal", np.reciprocal), ("square", np.square), ("sin", np.sin),
         ("cos", np.cos), ("tanh", np.tanh), ("sigmoid", lambda z: 1 / (1 + np.exp(-z))),
         ("abs", np.abs), ("isnan", np.isnan), ("isinf", np.isinf),
         ("isfinite", np.isfinite), ("angle", np.angle), ("conj", np.conj),
         ("tan", np.tan), ("sinh", np.sinh), ("cosh", np.cosh), ("asin", np.arcsin),
         ("acos", np.arccos), ("atan", np.arctan), ("asinh", np.arcsinh),
         ("acosh", np.arccosh), ("atanh", np.arctanh), ("rsqrt", lambda z: 1 / np.sqrt(z)),
         ("log2", np.log2), ("log10", np.log10), ("exp2", np.exp2)]


@pytest.mark.parametrize("name,ref", UNARY)
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_unary_against_numpy(rng, name, ref, dtype):
    tol = 1e-5 if dtype is np.complex64 else 1e-12
    a = _c(rng, (5, 6), dtype)
    if name.startswith("is"):  # the special values (elsewhere C99's and NumPy's differ)
        a[0, :3] = [np.nan + 1j, 1 + np.inf * 1j, 0]
    for x in (a, a[:, ::3], a[2, 2], a[:0]):
        got = getattr(th, name)(th.tensor(x) if x.ndim else th.tensor(a)[2, 2])
        want = ref(x)
        if name in ("abs", "angle"):
            assert got.dtype is th.tensor(a).dtype.to_real()
        np.testing.assert_allclose(got.numpy(), want, rtol=tol, atol=tol, equal_nan=True)


def test_in_place_and_out(rng):
    a, b = _c(rng, (3,)), _c(rng, (3,))
    t = th.tensor(a)
    t.mul_(th.tensor(b))
    np.testing.assert_allclose(t.numpy(), a * b)
    t.add_(1j)
    np.testing.assert_allclose(t.numpy(), a * b + 1j)
    out = th.empty(3, dtype=th.complex128)
    th.add(th.tensor(a), th.tensor(b), alpha=2, out=out)
    np.testing.assert_allclose(out.numpy(), a + 2 * b)
    with pytest.raises(RuntimeError, match="result type ComplexDouble can't be cast to the "
                                           "desired output type Double"):
        th.add(th.tensor(a), th.tensor(b), out=th.empty(3, dtype=th.float64))
    real = th.ones(3)
    with pytest.raises(RuntimeError, match="can't be cast"):
        real.mul_(1j)
    np.testing.assert_array_equal(real.numpy(), np.ones(3))  # untouched


def test_views_as_real_pairs(rng):
    a = _c(rng, (3, 4))
    t = th.tensor(a)
    pairs = th.view_as_real(t)
    assert pairs.shape == (3, 4, 2) and pairs.dtype is th.float64
    np.testing.assert_array_equal(pairs.numpy(), np.stack([a.real, a.imag], -1))
    pairs[0, 0, 1] = 9.0                                      # shares memory
    assert t[0, 0].item().imag == 9.0
    np.testing.assert_array_equal(t.real.numpy(), a.real)
    np.testing.assert_array_equal(th.imag(t).numpy()[1:], a.imag[1:])
    back = th.view_as_complex(pairs)
    assert back.dtype is th.complex128 and back.data_ptr() == t.data_ptr()
    nc = th.view_as_real(t.t())                               # strided complex: strided pairs
    np.testing.assert_array_equal(nc.numpy()[..., 0], t.numpy().T.real)
    t.imag = th.zeros(3, 4, dtype=th.float64)
    assert (t.imag == 0).all()
    s = th.view_as_real(th.tensor(1 + 2j))
    assert s.shape == (2,) and s.tolist() == [1.0, 2.0]
    with pytest.raises(RuntimeError, match="only supported for complex tensors"):
        th.view_as_real(th.ones(2))
    with pytest.raises(RuntimeError, match="last dimension of size 2"):
        th.view_as_complex(th.ones(3, 3))
    with pytest.raises(RuntimeError, match="stride 1"):
        th.view_as_complex(th.ones(2, 4)[:, ::2])
    with pytest.raises(RuntimeError, match="stride divisible by 2"):
        th.view_as_complex(th.ones(3, 3)[:, :2])
    with pytest.raises(RuntimeError, match="storage_offset divisible by 2"):
        th.view_as_complex(th.ones(7)[1:5].view(2, 2))
    with pytest.raises(RuntimeError, match="float and double tensors"):
        th.view_as_complex(th.ones(2, dtype=th.int64))
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with "
                                           "non-complex dtypes"):
        th.ones(2).imag


def test_complex_polar_and_conj(rng):
    re, im = rng.standard_normal((2, 3)), rng.standard_normal(3)
    z = th.complex(th.tensor(re), th.tensor(im))
    assert z.dtype is th.complex128
    np.testing.assert_array_equal(z.numpy(), re + 1j * im)
    r, phi = np.abs(re), im
    np.testing.assert_allclose(th.polar(th.tensor(r), th.tensor(phi)).numpy(),
                               r * np.exp(1j * phi))
    x = th.tensor(re)
    assert th.conj(x) is x and not th.is_conj(z) and th.resolve_conj(z) is z
    np.testing.assert_allclose(th.angle(x).numpy(), np.angle(re))
    with pytest.raises(RuntimeError, match="Expected object of scalar type Double"):
        th.complex(th.tensor(re), th.tensor(im, dtype=th.float32))
    with pytest.raises(RuntimeError, match="Half, Float or Double"):
        th.complex(th.ones(2, dtype=th.int64), th.ones(2, dtype=th.int64))


def test_sum_and_mean(rng):
    a = _c(rng, (3, 4, 5))
    t = th.tensor(a)
    np.testing.assert_allclose(t.sum().item(), a.sum())
    np.testing.assert_allclose(t.sum(1).numpy(), a.sum(1))
    np.testing.assert_allclose(t.sum((0, -1), keepdim=True).numpy(), a.sum((0, 2), keepdims=True))
    np.testing.assert_allclose(t.mean(-1).numpy(), a.mean(-1))
    np.testing.assert_allclose(t.transpose(0, 2).sum(0).numpy(), a.transpose(2, 1, 0).sum(0))
    assert th.tensor(2 + 1j).sum().item() == 2 + 1j
    assert th.zeros(0, 3, dtype=th.complex64).sum(0).tolist() == [0j, 0j, 0j]
    with pytest.raises(IndexError, match="Dimension out of range"):
        t.sum(3)


def test_printing():
    assert repr(th.tensor([1 + 2j, 3 - 1j])) == "tensor([1.+2.j, 3.-1.j])"
    assert repr(th.tensor([1.5 + 2j], dtype=th.complex128)) == \
        "tensor([1.5000+2.j], dtype=ember.complex128)"
    assert repr(th.zeros(0, dtype=th.complex64)) == "tensor([], dtype=ember.complex64)" or \
        repr(th.zeros(0, dtype=th.complex64)) == "tensor([])"


def test_refusals_name_the_dtype():
    z = th.tensor([1 + 1j, 2])
    for op in (lambda: z.max(), lambda: z.floor(), lambda: z < z, lambda: z.sign()):
        with pytest.raises(TypeError, match="ComplexFloat"):
            op()


def test_in_place_abs_and_real_dtype_sums_are_refused():
    z = th.tensor([3 + 4j, 1j])
    with pytest.raises(RuntimeError, match="In-place abs is not supported for complex"):
        z.abs_()
    assert z.tolist() == [3 + 4j, 1j]
    with pytest.raises(RuntimeError, match="cannot be computed in dtype Float"):
        z.sum(dtype=th.float32)
    assert z.sum(dtype=th.complex128).dtype is th.complex128


def test_any_all_count_nonzero():
    z = th.tensor([[0j, 1j], [2 + 0j, 0j]])
    assert z.any().item() is True and z.all().item() is False
    assert z.count_nonzero().item() == 2
    assert z.any(0).tolist() == [True, True] and z.all(1).tolist() == [False, False]
    assert z.count_nonzero(1).tolist() == [1, 1]


def test_cumsum(rng):
    a = _c(rng, (3, 4))
    t = th.tensor(a)
    np.testing.assert_allclose(t.cumsum(1).numpy(), a.cumsum(1))
    np.testing.assert_allclose(t.cumsum(-2).numpy(), a.cumsum(0))
    np.testing.assert_allclose(t.t().cumsum(0).numpy(), a.T.cumsum(0))
    assert th.tensor(1 + 2j).cumsum(0).item() == 1 + 2j
    assert t.cumsum(0, dtype=th.complex64).dtype is th.complex64
    with pytest.raises(TypeError, match="ComplexDouble"):
        t.cumprod(0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        t.cumsum(2)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("dim", [0, 1, -1, -2])
def test_scatter_add_of_complex_values(rng, dtype, dim):
    """scatter_add sums the (re, im) pairs (the gradient of gather)."""
    a = _c(rng, (3, 4), dtype)
    src = _c(rng, (3, 4), dtype)
    index = rng.integers(0, 3 if dim % 2 == 0 else 4, (3, 4))
    want = a.copy()
    for i in range(3):
        for j in range(4):
            k = index[i, j]
            want[(k, j) if dim % 2 == 0 else (i, k)] += src[i, j]
    t = th.from_numpy(a.copy())
    got = t.scatter_add_(dim, th.tensor(index), th.from_numpy(src).transpose(0, 1)
                         .transpose(0, 1))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    with pytest.raises(RuntimeError, match="out of bounds"):
        t.scatter_add_(dim, th.tensor(index + 4), th.from_numpy(src))
