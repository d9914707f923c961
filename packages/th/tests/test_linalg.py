"""Matrix products against NumPy: dot, mv, mm, bmm, matmul (every 1-d /
2-d / n-d combination, batch broadcasting), outer, addmm/addmv/addbmm/
baddbmm with beta/alpha, the @ operator; transposed, sliced and broadcast
operands; float32/float64/float16/bfloat16/integer/bool; empty shapes; the
error messages."""
import numpy as np
import pytest

import ember.th as th

from th_testing import (DTYPES, FLOAT_DTYPES, TOLERANCES, as_dtype, assert_close,
                        each, ids, new_tensor, to_numpy)
from _refs import EPS, f64, raises

M, K, N, B = 3, 5, 4, 2
OPERAND_LAYOUTS = ["contiguous", "transposed", "sliced", "broadcast"]
MATMUL_CASES = {
    "1d@1d": ((K,), (K,)),
    "1d@2d": ((K,), (K, N)),
    "2d@1d": ((M, K), (K,)),
    "2d@2d": ((M, K), (K, N)),
    "3d@1d": ((B, M, K), (K,)),
    "1d@3d": ((K,), (B, K, N)),
    "3d@2d": ((B, M, K), (K, N)),
    "2d@3d": ((M, K), (B, K, N)),
    "3d@3d": ((B, M, K), (B, K, N)),
    "4d@3d broadcast": ((2, 1, M, K), (3, K, N)),
    "4d@4d broadcast": ((1, 3, M, K), (2, 1, K, N)),
    "3d@4d broadcast": ((3, M, K), (2, 1, K, N)),
    "1d@4d": ((K,), (2, 3, K, N)),
    "4d@1d": ((2, 3, M, K), (K,)),
    "k=1": ((M, 1), (1, N)),
    "m=n=1": ((1, K), (K, 1)),
}
EMPTY_CASES = {
    "k=0": ((M, 0), (0, N)),
    "m=0": ((0, K), (K, N)),
    "n=0": ((M, K), (K, 0)),
    "batch=0": ((0, M, K), (K, N)),
    "batch=0 broadcast": ((1, M, K), (0, K, N)),
    "dot k=0": ((0,), (0,)),
    "mv k=0": ((M, 0), (0,)),
}
MM_DTYPES = DTYPES  # every dtype multiplies (bool: or of ands)
HALF = (th.float16, th.bfloat16)


def compute_eps(d):
    """Roundoff of the computation: float16/bfloat16 compute in float32."""
    return EPS[th.float32] if d in (th.float16, th.bfloat16) else EPS.get(d, 0)


def ref_matmul(a, b, d):
    """NumPy's matmul of the operands' values, in the result dtype's terms."""
    if d.is_floating_point:
        return np.matmul(f64(a), f64(b))
    r = np.matmul(np.asarray(a, np.int64), np.asarray(b, np.int64))
    return r != 0 if d is th.bool else r


def assert_product(r, exp, d, a, b, beta_input=None):
    """Checks a product against the float64 reference: the dtype's relative
    tolerance plus a few roundoffs of sum |a||b| (cancellation)."""
    if d.is_floating_point:
        scale = np.matmul(np.abs(f64(a)), np.abs(f64(b)))
        if beta_input is not None:
            scale = scale + np.abs(beta_input)
        bound = float(np.max(scale, initial=0))
        rtol, atol = TOLERANCES[d]
        assert_close(r, exp, d, rtol=rtol, atol=max(atol, 32 * compute_eps(d) * bound))
    else:
        assert_close(r, exp, d)


@pytest.mark.parametrize("d", MM_DTYPES, ids=ids(MM_DTYPES))
def test_matmul_combinations(make, d):
    """matmul for every 1-d/2-d/n-d pairing x operand layouts, and @."""

    def check(case):
        name, la, lb = case
        sa, sb = MATMUL_CASES[name]
        ta, a = make(sa, d, la)
        tb, b = make(sb, d, lb)
        r = th.matmul(ta, tb)
        exp = ref_matmul(a, b, d)
        assert_product(r, exp, d, a, b)
        assert_product(ta @ tb, exp, d, a, b)
        assert_product(ta.matmul(tb), exp, d, a, b)

    each([(n, la, lb) for n in MATMUL_CASES for la in OPERAND_LAYOUTS
          for lb in OPERAND_LAYOUTS], check)


@pytest.mark.parametrize("d", [th.float32, th.float64, th.float16, th.bfloat16, th.int32,
                               th.int64, th.bool], ids=lambda d: d.name)
def test_matmul_empty_shapes(make, d):
    def check(name):
        sa, sb = EMPTY_CASES[name]
        ta, a = make(sa, d)
        tb, b = make(sb, d)
        assert_product(th.matmul(ta, tb), ref_matmul(a, b, d), d, a, b)

    each(list(EMPTY_CASES), check)
    z = th.mm(make((M, 0), d)[0], make((0, N), d)[0])
    assert tuple(z.shape) == (M, N) and not to_numpy(z).any()  # sum over nothing
    assert_close(th.dot(make((0,), d)[0], make((0,), d)[0]), 0, d)
    assert tuple(th.bmm(th.ones(0, M, K, dtype=d), th.ones(0, K, N, dtype=d)).shape) == (0, M, N)


@pytest.mark.parametrize("d", MM_DTYPES, ids=ids(MM_DTYPES))
def test_named_products(make, d):
    """dot, mv, mm, bmm, outer/ger on every operand layout."""
    cases = {
        "dot": ((K,), (K,), th.dot, lambda a, b: ref_matmul(a, b, d)),
        "mv": ((M, K), (K,), th.mv, lambda a, b: ref_matmul(a, b, d)),
        "mm": ((M, K), (K, N), th.mm, lambda a, b: ref_matmul(a, b, d)),
        "bmm": ((B, M, K), (B, K, N), th.bmm, lambda a, b: ref_matmul(a, b, d)),
        "outer": ((M,), (N,), th.outer,
                  lambda a, b: ref_matmul(a[:, None], b[None, :], d)),
    }

    def check(case):
        name, la, lb = case
        sa, sb, fn, ref = cases[name]
        ta, a = make(sa, d, la)
        tb, b = make(sb, d, lb)
        exp = ref(a, b)
        if name == "outer":
            assert_product(fn(ta, tb), exp, d, a[:, None], b[None, :])
            assert_product(ta.ger(tb), exp, d, a[:, None], b[None, :])
            return
        assert_product(fn(ta, tb), exp, d, a, b)
        assert_product(getattr(ta, name)(tb), exp, d, a, b)

    each([(n, la, lb) for n in cases for la in OPERAND_LAYOUTS for lb in OPERAND_LAYOUTS],
         check)


@pytest.mark.parametrize("d", [th.float32, th.float64], ids=lambda d: d.name)
def test_large_products_through_gemm(rng, d):
    """Sizes past the small-product cut-off (BLAS or the blocked GEMM), with
    transposed, sliced and offset operands."""
    a = rng.uniform(-1, 1, (70, 131))
    b = rng.uniform(-1, 1, (131, 90))
    ta, tb = new_tensor(a, d), new_tensor(b, d)
    assert_product(ta @ tb, a @ b, d, a, b)
    at = new_tensor(np.ascontiguousarray(a.T), d).t()  # column-major operand
    bt = new_tensor(np.ascontiguousarray(b.T), d).t()
    assert_product(at @ bt, a @ b, d, a, b)
    big = new_tensor(rng.uniform(-1, 1, (141, 263)), d)
    sa = big[1::2, 3::2]  # (70, 130), strides (526, 2)
    na = to_numpy(sa).astype(np.float64)
    nb = b[:130]
    assert_product(sa @ tb[:130], na @ nb, d, na, nb)
    batch = rng.uniform(-1, 1, (3, 40, 50))
    tbat = new_tensor(batch, d)
    assert_product(tbat @ tb[:50, :60], batch @ b[:50, :60], d, batch, b[:50, :60])
    assert_product(tbat.transpose(1, 2) @ new_tensor(a[:40, :30], d),
                   batch.transpose(0, 2, 1) @ a[:40, :30], d, batch.transpose(0, 2, 1),
                   a[:40, :30])
    v = rng.uniform(-1, 1, 131)
    assert_product(ta @ new_tensor(v, d), a @ v, d, a, v)
    assert_product(new_tensor(v[:70], d) @ ta, v[:70] @ a, d, v[:70], a)


def test_integer_products_wrap_like_the_dtype():
    a = np.full((2, 40), 100, dtype=np.int8)
    b = np.full((40, 3), 3, dtype=np.int8)
    r = th.mm(th.tensor(a), th.tensor(b))
    assert r.dtype is th.int8
    assert_close(r, (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int8), th.int8)
    x = np.array([1 << 40, 3], dtype=np.int64)
    assert th.dot(th.tensor(x), th.tensor(x)).item() == int(np.dot(x, x))


# ---- add* products -------------------------------------------------
ADD_DTYPES = [th.float32, th.float64, th.float16, th.bfloat16, th.int32, th.int64]
BETA_ALPHA = [(1, 1), (0.5, 2.0), (0, 1), (2, 0), (-1, 0.25), (0, -3)]
BETA_ALPHA_INT = [(1, 1), (2, 3), (0, 1), (3, 0), (-1, 2)]


def add_cases():
    """name: (input shapes that broadcast, operand shapes, function, ref)."""
    return {
        "addmm": ([(M, N), (N,), (1, N), (M, 1), ()], [(M, K), (K, N)], th.addmm,
                  lambda x, y: x @ y),
        "addmv": ([(M,), (1,), ()], [(M, K), (K,)], th.addmv, lambda x, y: x @ y),
        "baddbmm": ([(B, M, N), (M, N), (N,), ()], [(B, M, K), (B, K, N)], th.baddbmm,
                    lambda x, y: x @ y),
        "addbmm": ([(M, N), (N,), ()], [(B, M, K), (B, K, N)], th.addbmm,
                   lambda x, y: (x @ y).sum(0)),
    }


@pytest.mark.parametrize("d", ADD_DTYPES, ids=ids(ADD_DTYPES))
def test_add_products(make, d):
    cases = add_cases()
    coeffs = BETA_ALPHA if d.is_floating_point else BETA_ALPHA_INT

    def check(case):
        name, ishape, (beta, alpha), layout = case
        ishapes, (s1, s2), fn, ref = cases[name]
        ti, i = make(ishape, d, layout if len(ishape) > 1 else "contiguous")
        t1, a1 = make(s1, d, layout)
        t2, a2 = make(s2, d, layout)
        x = f64(i) if d.is_floating_point else np.asarray(i, np.int64)
        y1 = f64(a1) if d.is_floating_point else np.asarray(a1, np.int64)
        y2 = f64(a2) if d.is_floating_point else np.asarray(a2, np.int64)
        prod = ref(y1, y2)
        exp = (beta * x if beta else 0) + alpha * prod
        exp = np.broadcast_to(exp, prod.shape)
        r = fn(ti, t1, t2, beta=beta, alpha=alpha)
        if d.is_floating_point:
            bound = float(np.max(np.abs(alpha) * ref(np.abs(y1), np.abs(y2)) + abs(beta)
                                 * np.abs(x), initial=0))
            rtol, atol = TOLERANCES[d]
            atol = max(atol, 32 * compute_eps(d) * bound)
            if name == "addbmm" and d in HALF:  # rounded after each batch, as PyTorch
                atol = max(atol, (B + 1) * EPS[d] * bound)
            assert_close(r, exp, d, rtol=rtol, atol=atol)
        else:
            assert_close(r, exp, d)
        # the method and in-place forms (in place needs the full shape)
        r2 = getattr(ti, name)(t1, t2, beta=beta, alpha=alpha)
        assert_close(r2, to_numpy(r), d)
        if tuple(ti.shape) == tuple(r.shape) and layout != "broadcast":
            c = ti.clone()
            assert getattr(c, name + "_")(t1, t2, beta=beta, alpha=alpha) is c
            assert_close(c, to_numpy(r), d)

    each([(n, s, ba, lay) for n, (ishapes, _, _, _) in cases.items() for s in ishapes
          for ba in coeffs for lay in ("contiguous", "transposed", "sliced")], check)


@pytest.mark.parametrize("d", FLOAT_DTYPES, ids=ids(FLOAT_DTYPES))
def test_beta_zero_ignores_nan_input(rng, d):
    """beta=0: the input is not read, so its NaN/inf do not reach the
    result (PyTorch/BLAS semantics)."""
    m1 = new_tensor(rng.uniform(-1, 1, (M, K)), d)
    m2 = new_tensor(rng.uniform(-1, 1, (K, N)), d)
    b1 = new_tensor(rng.uniform(-1, 1, (B, M, K)), d)
    b2 = new_tensor(rng.uniform(-1, 1, (B, K, N)), d)
    v = new_tensor(rng.uniform(-1, 1, K), d)
    nan = float("nan")
    for fn, inp, args in ((th.addmm, th.full((M, N), nan, dtype=d), (m1, m2)),
                          (th.addmv, th.full((M,), nan, dtype=d), (m1, v)),
                          (th.baddbmm, th.full((B, M, N), nan, dtype=d), (b1, b2)),
                          (th.addbmm, th.full((M, N), float("inf"), dtype=d), (b1, b2))):
        r = fn(inp, *args, beta=0, alpha=1.5)
        assert np.isfinite(to_numpy(r)).all(), fn.__name__
        exp = 1.5 * (to_numpy(args[0]).astype(np.float64) @ to_numpy(args[1]))
        bound = 1.5 * K * (B if fn is th.addbmm else 1)
        atol = 32 * compute_eps(d) * bound
        if fn is th.addbmm:
            exp = exp.sum(0)
            if d in HALF:  # rounded to the half type after each batch, as PyTorch
                atol = (B + 1) * EPS[d] * bound
        assert_close(r, exp, d, atol=atol)
    # beta != 0: the NaN does reach the result
    assert np.isnan(to_numpy(th.addmm(th.full((M, N), nan, dtype=d), m1, m2,
                                      beta=1e-3))).all()


def test_add_products_with_number_input():
    m1 = th.tensor([[1.0, 2.0], [3.0, 4.0]])
    m2 = th.tensor([[1.0, 0.0], [0.0, 1.0]])
    assert_close(th.addmm(1.5, m1, m2), [[2.5, 3.5], [4.5, 5.5]], th.float32)
    assert_close(th.addmm(2, m1, m2, beta=0.5), [[2.0, 3.0], [4.0, 5.0]], th.float32)
    assert_close(th.addmv(th.tensor(1.0), m1, th.tensor([1.0, 1.0])), [4.0, 8.0], th.float32)
    h = m1.to(th.float16)
    assert th.addmm(1.5, h, h).dtype is th.float16


def test_float_coefficients_with_integer_tensors_raise():
    i = th.ones(2, 2, dtype=th.int32)
    with raises(RuntimeError, "must not be a floating point number"):
        th.addmm(i, i, i, alpha=0.5)
    with raises(RuntimeError, "must not be a floating point number"):
        th.addmm(i, i, i, beta=0.5)


# ---- errors -------------------------------------------------------------
def test_errors():
    f = th.ones
    with raises(RuntimeError, "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x4)"):
        th.mm(f(2, 3), f(4, 4))
    with raises(RuntimeError, "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)"):
        th.matmul(f(2, 3), f(2, 3))
    with raises(RuntimeError, "shapes cannot be multiplied"):
        f(2, 3) @ f(2, 3)
    with raises(RuntimeError, "shapes cannot be multiplied"):
        th.addmm(f(2, 4), f(2, 3), f(4, 4))
    with raises(RuntimeError, "expected m1 and m2 to have the same dtype, but got: "
                              "float != double"):
        th.mm(f(2, 3), f(3, 4, dtype=th.float64))
    with raises(RuntimeError, "expected m1 and m2 to have the same dtype"):
        th.matmul(f(2, 3, dtype=th.int32), f(3, 4, dtype=th.int64))
    with raises(RuntimeError, "expected m1 and m2 to have the same dtype"):
        th.mv(f(2, 3), f(3, dtype=th.float64))
    with raises(RuntimeError, "expected scalar type Float but found Double"):
        th.bmm(f(2, 2, 3), f(2, 3, 4, dtype=th.float64))
    with raises(RuntimeError, "dot : expected both vectors to have same dtype, but found "
                              "Float and Double"):
        th.dot(f(3), f(3, dtype=th.float64))
    with raises(RuntimeError, "self and mat2 must have the same dtype, but got Double and "
                              "Float"):
        th.addmm(f(2, 4, dtype=th.float64), f(2, 3), f(3, 4))
    with raises(RuntimeError, "inconsistent tensor size, expected tensor [3] and src [4] to "
                              "have the same number of elements"):
        th.dot(f(3), f(4))
    with raises(RuntimeError, "inconsistent tensor size"):
        th.matmul(f(3), f(4))
    with raises(RuntimeError, "1D tensors expected, but got 2D and 1D tensors"):
        th.dot(f(3, 3), f(3))
    with raises(RuntimeError, "size mismatch, got input (2), mat (2x3), vec (4)"):
        th.mv(f(2, 3), f(4))
    with raises(RuntimeError, "mat2 must be a matrix, got 1-D tensor"):
        th.mm(f(2, 3), f(3))
    with raises(RuntimeError, "batch1 must be a 3D tensor"):
        th.bmm(f(2, 3), f(3, 4))
    with raises(RuntimeError, "Expected size for first two dimensions of batch2 tensor to "
                              "be: [2, 3] but got: [3, 3]."):
        th.bmm(f(2, 2, 3), f(3, 3, 4))
    with raises(RuntimeError, "both arguments to matmul need to be at least 1D, but they "
                              "are 0D and 1D"):
        th.matmul(th.tensor(1.0), f(3))
    with raises(RuntimeError, "The size of tensor a (2) must match the size of tensor b (3) "
                              "at non-singleton dimension 0"):
        th.matmul(f(2, 2, 3), f(3, 3, 2))
    with raises(RuntimeError, "outer: Expected 1-D argument self, but got 2-D"):
        th.outer(f(2, 2), f(3))
    with raises(RuntimeError, "The expanded size of the tensor (2) must match the existing "
                              "size (3) at non-singleton dimension 0"):
        th.addmm(f(3, 4), f(2, 3), f(3, 4))
    with raises(RuntimeError, "The expanded size of the tensor"):
        f(2, 3).addmm_(f(2, 3), f(3, 4))  # in place: input must hold the result
    with raises(TypeError, "unsupported operand type(s) for @: 'Tensor' and 'int'"):
        f(2, 3) @ 2
    # nothing was written by the failed in-place call
    c = th.full((2, 3), 7.0)
    with pytest.raises(RuntimeError):
        c.addmm_(f(2, 3), f(3, 4))
    assert (to_numpy(c) == 7).all()


def test_non_tensor_operand_is_a_type_error():
    for fn in (th.mm, th.matmul, th.dot, th.mv, th.bmm, th.outer):
        with pytest.raises(TypeError):
            fn(th.ones(2, 2), 3)


def test_out_argument():
    a, b = th.ones(2, 3), th.full((3, 4), 2.0)
    out = th.zeros(2, 4)
    assert th.mm(a, b, out=out) is out
    assert_close(out, np.full((2, 4), 6.0), th.float32)
    out2 = th.zeros(2, 4)
    th.matmul(a, b, out=out2)
    assert_close(out2, np.full((2, 4), 6.0), th.float32)
