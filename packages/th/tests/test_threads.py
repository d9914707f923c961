"""Threads: get/set_num_threads (and their errors), and results that do not
depend on the thread count -- large element-wise ops, reductions, scans,
index ops and matrix products give the same bits on 1 and 2 threads."""
import numpy as np
import pytest

import ember.th as th

from th_testing import new_tensor
from _refs import bits, num_threads, raises

BIG = 1 << 20  # well past the parallel grain (2^15 elements)


def test_get_set_num_threads():
    old = th.get_num_threads()
    assert isinstance(old, int) and old >= 1
    try:
        th.set_num_threads(1)
        assert th.get_num_threads() == 1
        th.set_num_threads(3)
        assert th.get_num_threads() == 3
        assert th.set_num_threads(2) is None
        assert th.get_num_threads() == 2
    finally:
        th.set_num_threads(old)
    assert th.get_num_threads() == old


def test_set_num_threads_errors():
    old = th.get_num_threads()
    for bad in ("2", 2.0, True, None, [2]):
        with pytest.raises(TypeError, match="set_num_threads expects an int, got"):
            th.set_num_threads(bad)
    with raises(TypeError, "set_num_threads expects an int, got bool"):
        th.set_num_threads(False)
    with raises(ValueError, "set_num_threads expects a positive integer, got 0"):
        th.set_num_threads(0)
    with raises(ValueError, "set_num_threads expects a positive integer, got -1"):
        th.set_num_threads(-1)
    assert th.get_num_threads() == old  # a refused call changes nothing


def on_1_and_2_threads(fn):
    """(result bits on 1 thread, on 2 threads) of fn(), a tensor or a tuple."""
    out = []
    for k in (1, 2):
        with num_threads(k):
            r = fn()
        rs = r if isinstance(r, (tuple, list)) else (r,)
        out.append([bits(x) for x in rs])
    return out


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(77)
    a = rng.uniform(-3, 3, BIG).astype(np.float32)
    b = rng.uniform(0.5, 2, BIG).astype(np.float32)
    i = rng.integers(-50, 50, BIG).astype(np.int32)
    return {
        "a": th.tensor(a), "b": th.tensor(b), "i": th.tensor(i),
        "a64": th.tensor(a.astype(np.float64)),
        "h": th.tensor(a).to(th.float16), "bf": th.tensor(a).to(th.bfloat16),
        "m": th.tensor(a.reshape(1024, 1024)),
        "m64": th.tensor(a.astype(np.float64).reshape(1024, 1024)),
        "few": th.tensor(a.reshape(4, BIG // 4)),      # few long rows
        "many": th.tensor(a.reshape(BIG // 4, 4)),     # many short rows
        "mid": th.tensor(a.reshape(64, 128, 128)),
        "mask": th.tensor(a > 0),
    }


ELEMENTWISE = {
    "add": lambda d: d["a"] + d["b"],
    "mul_scalar": lambda d: d["a"] * 1.5,
    "div": lambda d: d["a"] / d["b"],
    "exp": lambda d: d["a"].exp(),
    "sin": lambda d: d["a"].sin(),
    "tanh": lambda d: th.tanh(d["a64"]),
    "pow": lambda d: d["b"] ** 2.5,
    "sqrt_half": lambda d: d["h"].abs().sqrt(),
    "bf16_mul": lambda d: d["bf"] * d["bf"],
    "promote": lambda d: d["i"] + d["a"],
    "int_ops": lambda d: (d["i"] * 3 - 7) // 5,
    "compare": lambda d: d["a"] > d["b"],
    "where": lambda d: th.where(d["mask"], d["a"], d["b"]),
    "clamp": lambda d: d["a"].clamp(-1, 1),
    "transposed": lambda d: d["m"].t() + d["m"],
    "broadcast": lambda d: d["m"] * d["m"][0],
    "sliced": lambda d: d["m"][::2, 1::3].exp(),
    "inplace": lambda d: d["a"].clone().mul_(d["b"]).add_(1.0),
    "out": lambda d: th.add(d["a"], d["b"], out=th.empty(BIG)),
    "copy_cast": lambda d: d["a"].to(th.float16).to(th.int32),
    "contiguous": lambda d: d["m"].t().contiguous(),
}

REDUCTIONS = {
    "sum": lambda d: d["a"].sum(),
    "sum64": lambda d: d["a64"].sum(),
    "sum_half": lambda d: d["h"].sum(),
    "sum_rows": lambda d: d["m"].sum(1),
    "sum_cols": lambda d: d["m"].sum(0),
    "sum_few_rows": lambda d: d["few"].sum(1),
    "sum_many_rows": lambda d: d["many"].sum(1),
    "sum_mid": lambda d: d["mid"].sum((0, 2)),
    "sum_transposed": lambda d: d["m"].t().sum(1),
    "int_sum": lambda d: d["i"].sum(),
    "mean": lambda d: d["a"].mean(),
    "mean_cols": lambda d: d["m64"].mean(0),
    "prod": lambda d: d["b"].prod(),
    "nansum": lambda d: d["a"].nansum(),
    "var": lambda d: d["a"].var(),
    "std_cols": lambda d: d["m"].std(0),
    "norm": lambda d: d["a"].norm(),
    "norm3": lambda d: d["few"].norm(3, 1),
    "logsumexp": lambda d: d["a"].logsumexp(0),
    "amax": lambda d: d["a"].amax(),
    "amin_cols": lambda d: d["m"].amin(0),
    "max_dim": lambda d: tuple(d["m"].max(1)),
    "min_few": lambda d: tuple(d["few"].min(1)),
    "argmax": lambda d: d["a"].argmax(),
    "argmin_cols": lambda d: d["m"].argmin(0),
    "all_any": lambda d: (d["mask"].all(), d["mask"].any(0)),
    "count_nonzero": lambda d: d["i"].count_nonzero(),
    "cumsum": lambda d: d["a"].cumsum(0),
    "cumsum_cols": lambda d: d["m"].cumsum(0),
    "cumprod_rows": lambda d: d["m"].cumprod(1),
}

OTHERS = {
    "index_select": lambda d: d["m"].index_select(0, th.arange(1023, -1, -1)),
    "gather": lambda d: d["m"].gather(1, th.arange(1024).remainder(7).expand(1024, 1024)),
    "scatter_add": lambda d: th.zeros(1024, 16).scatter_add(
        1, th.arange(1024 * 1024).remainder(16).reshape(1024, 1024), d["m"]),
    "index_add": lambda d: th.zeros(16, 1024).index_add(
        0, th.arange(1024).remainder(16), d["m"]),
    "masked_select": lambda d: d["a"].masked_select(d["mask"]),
    "nonzero": lambda d: d["mask"].nonzero(),
    "cat": lambda d: th.cat([d["m"], d["m"].t()], 1),
    "sort": lambda d: tuple(d["m"].sort(1)),
    "topk": lambda d: tuple(d["few"].topk(5, 1)),
    "flip": lambda d: d["m"].flip([0, 1]),
    "tril": lambda d: d["m"].tril(3),
}


def matmuls():
    rng = np.random.default_rng(78)
    x = rng.uniform(-1, 1, (512, 384))
    y = rng.uniform(-1, 1, (384, 256))
    bx = rng.uniform(-1, 1, (64, 32, 48))
    by = rng.uniform(-1, 1, (64, 48, 40))
    # mid-sized products (2^19 to 2^22 multiply-adds): bands of C's columns
    # or rows on the pool, widths not multiples of the band
    sx = rng.uniform(-1, 1, (21, 203))
    sy = rng.uniform(-1, 1, (203, 777))
    xi = rng.integers(-9, 9, (256, 200))
    yi = rng.integers(-9, 9, (200, 128))
    # name: (fn, A, B, k, alpha): the result holds alpha * A @ B (+ a term
    # that both thread counts compute alike) with A, B the exact inputs
    f32 = lambda v: v.astype(np.float32).astype(np.float64)  # noqa: E731
    return {
        "mm_f32": (lambda: th.tensor(x, dtype=th.float32) @ th.tensor(y, dtype=th.float32),
                   f32(x), f32(y), 384, 1),
        "mm_f64": (lambda: th.tensor(x) @ th.tensor(y), x, y, 384, 1),
        "mm_transposed": (lambda: th.tensor(x.T.copy(), dtype=th.float32).t()
                          @ th.tensor(y, dtype=th.float32), f32(x), f32(y), 384, 1),
        "mm_half": (lambda: new_tensor(x, th.float16) @ new_tensor(y, th.float16),
                    x, y, 384, 1),
        "mm_bf16": (lambda: new_tensor(x, th.bfloat16) @ new_tensor(y, th.bfloat16),
                    x, y, 384, 1),
        "mm_int": (lambda: th.tensor(xi) @ th.tensor(yi), xi, yi, 200, 1),
        "mm_bands_of_columns": (lambda: th.tensor(sx, dtype=th.float32)
                                @ th.tensor(sy, dtype=th.float32), f32(sx), f32(sy), 203, 1),
        "mm_bands_of_rows_f64": (lambda: th.tensor(sy.T) @ th.tensor(sx.T), sy.T, sx.T, 203, 1),
        "mm_bands_transposed": (lambda: th.tensor(sx.T.copy(), dtype=th.float32).t()
                                @ th.tensor(sy.T.copy(), dtype=th.float32).t(),
                                f32(sx), f32(sy), 203, 1),
        "addmm_bands": (lambda: th.addmm(th.ones(777), th.tensor(sx, dtype=th.float32),
                                         th.tensor(sy, dtype=th.float32), beta=0.5, alpha=2),
                        f32(sx), f32(sy), 203, 2),
        "bmm_small": (lambda: th.bmm(th.tensor(bx, dtype=th.float32),
                                     th.tensor(by, dtype=th.float32)), f32(bx), f32(by), 48, 1),
        "matmul_broadcast": (lambda: th.tensor(bx[:, None]) @ th.tensor(by[:2]),
                             bx[:, None], by[:2], 48, 1),
        "mv": (lambda: th.tensor(x) @ th.tensor(y[:, 0]), x, y[:, 0], 384, 1),
        "addmm": (lambda: th.addmm(th.ones(256), th.tensor(x, dtype=th.float32),
                                   th.tensor(y, dtype=th.float32), beta=0.5, alpha=2),
                  f32(x), f32(y), 384, 2),
        "addbmm": (lambda: th.addbmm(th.ones(32, 40, dtype=th.float64), th.tensor(bx),
                                     th.tensor(by)), bx, by, 48 * 64, 1),
    }


# unit roundoff of the accumulation (half types accumulate in float32)
# and of the stored result, by result dtype
_ACC_U = {th.float32: 2.0 ** -24, th.float16: 2.0 ** -24, th.bfloat16: 2.0 ** -24,
          th.float64: 2.0 ** -53}
_OUT_U = {th.float32: 2.0 ** -24, th.float16: 2.0 ** -11, th.bfloat16: 2.0 ** -8,
          th.float64: 2.0 ** -53}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_same_on_1_and_2_threads(data, name):
    one, two = on_1_and_2_threads(lambda: ELEMENTWISE[name](data))
    assert one == two


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions_same_on_1_and_2_threads(data, name):
    one, two = on_1_and_2_threads(lambda: REDUCTIONS[name](data))
    assert one == two


@pytest.mark.parametrize("name", sorted(OTHERS))
def test_index_and_sort_ops_same_on_1_and_2_threads(data, name):
    one, two = on_1_and_2_threads(lambda: OTHERS[name](data))
    assert one == two


@pytest.mark.parametrize("name", sorted(matmuls()))
def test_matmul_same_on_1_and_2_threads(name):
    """Integer products and libTH's own blocked GEMM (TH_NO_BLAS) split the
    work by output blocks, so each element sums in one order: same bits.
    OpenBLAS promises no such thing (its kernels and k-splits may change
    with the thread count; float32 results differ by ~1e-5 on an AMD
    EPYC), so there the two results must agree within what any summation
    order allows: each is within k*u*sum|a_i b_i| of the exact product
    (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed.,
    section 3.1; u the accumulation's unit roundoff), so they differ by at
    most twice that, plus one rounding of each to the result's dtype."""
    fn, a, b, k, alpha = matmuls()[name]
    with num_threads(1):
        one = fn()
    with num_threads(2):
        two = fn()
    if not one.dtype.is_floating_point or not th.has_blas():
        assert bits(one) == bits(two)
        return
    mag = abs(alpha) * (np.abs(a) @ np.abs(b))
    if name == "addbmm":
        mag = mag.sum(0)
    r1 = one.double().numpy()
    r2 = two.double().numpy()
    tol = 2 * k * _ACC_U[one.dtype] * mag + 2 * _OUT_U[one.dtype] * np.abs(r1)
    excess = np.abs(r1 - r2) - tol
    assert (excess <= 0).all(), f"{name}: 1 and 2 threads differ beyond the bound by " \
                                f"{excess.max():.3g}"


def test_threaded_results_are_right(data):
    """On 2 threads the big results still match NumPy (the thread split
    neither drops nor repeats work)."""
    a = data["a"].numpy().astype(np.float64)
    m = a.reshape(1024, 1024)
    with num_threads(2):
        np.testing.assert_allclose(data["a"].sum().item(), a.sum(), rtol=1e-6)
        np.testing.assert_allclose(data["m"].sum(0).numpy(), m.sum(0), rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(data["few"].sum(1).numpy(), a.reshape(4, -1).sum(1),
                                   rtol=1e-6)
        np.testing.assert_array_equal((data["a"] + data["b"]).numpy(),
                                      data["a"].numpy() + data["b"].numpy())
        assert data["a"].argmax().item() == int(np.argmax(a))
        np.testing.assert_array_equal(data["m"].amin(0).numpy(), m.min(0).astype(np.float32))


def test_float32_reductions_of_odd_lengths_same_on_1_and_2_threads():
    rng = np.random.default_rng(0)
    a = th.tensor(rng.uniform(-3, 3, 100_003).astype(np.float32))
    c = th.tensor(rng.uniform(-3, 3, (40_001, 5)).astype(np.float32))
    cases = {
        "sum": lambda: a.sum(),
        "mean": lambda: a.mean(),
        "prod": lambda: (a.abs() * 1e-4 + 1).prod(),
        "sum_dim0": lambda: c.sum(0),
    }
    differ = [name for name, fn in cases.items()
              if len(set(map(tuple, on_1_and_2_threads(fn)))) > 1]
    assert not differ, f"differ between 1 and 2 threads: {differ}"


FIRST_PRODUCT_ON_2_THREADS = r"""
import numpy as np, ember.th as th
th.set_num_threads(2)
a = th.tensor(np.random.default_rng(0).standard_normal((576, 576)).astype(np.float32))
b = th.tensor(np.random.default_rng(1).standard_normal((576, 5000)).astype(np.float32))
np.testing.assert_allclose(th.matmul(a, b).numpy(), a.numpy() @ b.numpy(), rtol=1e-3,
                           atol=1e-3)
"""


def test_first_blas_product_of_a_process_on_2_threads_finishes():
    # the pool's first worker starts during OpenBLAS's first parallel section,
    # whose jobs wait for each other: it must join that section
    import subprocess
    import sys
    try:
        out = subprocess.run([sys.executable, "-c", FIRST_PRODUCT_ON_2_THREADS],
                             capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("the first 2-thread matrix product did not finish within 120 s")
    assert out.returncode == 0, out.stderr
