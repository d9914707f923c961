"""Reductions against NumPy: sum, prod, mean, nansum, amax/amin, all/any,
count_nonzero, logsumexp, var/std (+ _mean), max/min with indices,
aminmax, argmax/argmin, norm, cumsum/cumprod -- over all dims, one dim,
dim lists and keepdim, for every dtype and layout; result dtypes, the
dtype= argument, NaN propagation, numerical care and the error paths."""
import math

import numpy as np
import pytest

import ember.th as th

from th_testing import (DTYPES, FLOAT_DTYPES, INT_DTYPES, LAYOUTS, as_dtype,
                        assert_close, each, ids, new_tensor, to_numpy)
from _refs import EPS, close_sum, f64, raises

# NumPy's own warnings about empty or degenerate references are expected
pytestmark = pytest.mark.filterwarnings("ignore:Mean of empty slice:RuntimeWarning",
                                        "ignore:Degrees of freedom:RuntimeWarning",
                                        "ignore:invalid value encountered:RuntimeWarning")

SHAPE = (3, 4, 5)
DIMS = [None, 0, 1, -1, (0, 2), [2, 0], (0, 1, 2), []]
DIMS_0D = [None, 0, -1, []]
INF = math.inf


def axis_of(dim, ndim):
    """The NumPy axis for a torch-style dim (None and [] reduce all)."""
    if dim is None or ndim == 0:
        return None
    if isinstance(dim, int):
        return dim
    return tuple(dim) if len(dim) else None


def reduced(shape, dim):
    """The dims (non-negative) a dim argument reduces."""
    nd = len(shape)
    if dim is None or (not isinstance(dim, int) and len(dim) == 0):
        return list(range(nd))
    dims = [dim] if isinstance(dim, int) else list(dim)
    return sorted({d % nd for d in dims}) if nd else []


def sum_dtype(d):
    return th.int64 if not d.is_floating_point else d


def logsumexp_ref(a, axis, keepdims):
    a = f64(a)
    if a.size == 0 or (axis is not None and 0 in [a.shape[i] for i in np.atleast_1d(axis)]):
        with np.errstate(divide="ignore"):
            return np.log(np.sum(np.exp(a), axis=axis, keepdims=keepdims))
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    r = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    return r if keepdims else np.squeeze(r, axis=axis)


# name: (reference(a, axis, keepdims) on float64/int64 data,
#        result dtype(d) or None where the dtype is rejected,
#        value-drawing kwargs(d))
def _vals_01(d):
    return {"low": 0, "high": 1, "discrete": True}


def _vals_prod(d):
    if d.is_floating_point:
        return {"low": 0.5, "high": 1.5}
    return {"low": -2, "high": 2, "nonzero": True}


def _vals_ties(d):
    return {"discrete": True} if d.is_floating_point else {}


REDUCERS = {
    "sum": (np.sum, sum_dtype, lambda d: {}),
    "nansum": (np.nansum, sum_dtype, lambda d: {}),
    "prod": (np.prod, sum_dtype, _vals_prod),
    "mean": (np.mean, lambda d: d if d.is_floating_point else None, lambda d: {}),
    "amax": (np.max, lambda d: d, _vals_ties),
    "amin": (np.min, lambda d: d, _vals_ties),
    "all": (np.all, lambda d: th.uint8 if d is th.uint8 else th.bool, _vals_01),
    "any": (np.any, lambda d: th.uint8 if d is th.uint8 else th.bool, _vals_01),
    "count_nonzero": (lambda a, axis, keepdims: np.count_nonzero(a, axis=axis),
                      lambda d: th.int64, _vals_01),
    "logsumexp": (logsumexp_ref, lambda d: d if d.is_floating_point else th.float32,
                  lambda d: {}),
}


def ref_data(a, d):
    """The reference computation's data: float64 or int64 (bool stays)."""
    if d.is_floating_point:
        return f64(a)
    if d is th.bool:
        return np.asarray(a)
    return np.asarray(a, dtype=np.int64)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_reducers(make, d, layout):
    """Each reducer x dim spec x keepdim against NumPy, one dtype/layout."""
    data = {name: make(SHAPE, d, layout, **vals(d))
            for name, (_, _, vals) in REDUCERS.items()}

    def cases():
        for name in REDUCERS:
            t = data[name][0]
            for dim in (DIMS if t.ndim else DIMS_0D):
                if name == "logsumexp" and dim is None:
                    continue  # logsumexp needs a dim
                for keepdim in (False, True):
                    if name == "count_nonzero" and keepdim:
                        continue  # no keepdim argument
                    yield name, dim, keepdim

    def check(case):
        name, dim, keepdim = case
        t, a = data[name]
        ref, rdtype, _ = REDUCERS[name]
        fn = getattr(th, name)
        args = (t,) if dim is None else (t, dim)
        kw = {"keepdim": keepdim} if name != "count_nonzero" else {}
        want = rdtype(d)
        if want is None:
            with raises(RuntimeError, "mean(): could not infer output dtype"):
                fn(*args, **kw)
            return
        red = reduced(t.shape, dim)
        empty_red = any(t.shape[i] == 0 for i in red)
        if name in ("amax", "amin") and t.numel() == 0 and empty_red:
            if dim is None or (not isinstance(dim, int) and len(dim) == 0):
                with raises(RuntimeError, "Expected reduction dim to be specified"):
                    fn(*args, **kw)
            else:
                with raises(IndexError, "to have non-zero size"):
                    fn(*args, **kw)
            return
        r = fn(*args, **kw)
        x = ref_data(a, d)
        with np.errstate(invalid="ignore", divide="ignore"):
            exp = np.asarray(ref(x, axis=axis_of(dim, t.ndim), keepdims=keepdim and t.ndim > 0))
        if name == "count_nonzero" or name in ("all", "any"):
            exp = exp.astype(np.int64 if name == "count_nonzero" else bool)
        if name in ("sum", "nansum", "mean"):
            close_sum(r, exp, want, np.abs(f64(a)).sum())
        elif name == "logsumexp" and want.is_floating_point and d.is_floating_point:
            close_sum(r, exp, want, np.abs(f64(a)).max(initial=0) + 4)
        else:
            assert_close(r, exp, want)

    each(list(cases()), check)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("d", FLOAT_DTYPES, ids=ids(FLOAT_DTYPES))
def test_var_std(make, d, layout):
    t, a = make(SHAPE, d, layout)
    x = f64(a)
    dims = DIMS if t.ndim else DIMS_0D
    corrections = [(None, None), (True, None), (False, None), (None, 0), (None, 1),
                   (None, 2), (None, 0.5)]

    def ref(dim, keepdim, c):
        ax = axis_of(dim, t.ndim)
        n = x.size if ax is None else int(np.prod([x.shape[i] for i in np.atleast_1d(ax)]))
        with np.errstate(invalid="ignore", divide="ignore"):
            m = np.mean(x, axis=ax, keepdims=True) if x.size else np.zeros_like(
                np.sum(x, axis=ax, keepdims=True))
            ss = np.sum((x - m) ** 2, axis=ax, keepdims=keepdim and t.ndim > 0)
            return ss / max(0.0, n - c), np.mean(x, axis=ax, keepdims=keepdim and t.ndim > 0)

    def check(case):
        dim, keepdim, (unbiased, correction) = case
        c = correction if correction is not None else (0.0 if unbiased is False else 1.0)
        v, m = ref(dim, keepdim, c)
        kw = {"keepdim": keepdim}
        if unbiased is not None:
            kw["unbiased"] = unbiased
        if correction is not None:
            kw["correction"] = correction
        args = (t,) if dim is None else (t, dim)
        scale = 4 * np.abs(x).max(initial=1) ** 2
        with np.errstate(invalid="ignore"):
            close_sum(th.var(*args, **kw), v, d, scale)
            close_sum(t.std(*args[1:], **kw), np.sqrt(v), d, 4 * np.abs(x).max(initial=1))
            vv, mm = th.var_mean(*args, **kw)
            close_sum(vv, v, d, scale)
            close_sum(mm, m, d, np.abs(x).sum())
            ss, mm = th.std_mean(*args, **kw)
            close_sum(ss, np.sqrt(v), d, 4 * np.abs(x).max(initial=1))
            close_sum(mm, m, d, np.abs(x).sum())

    each([(dim, k, c) for dim in dims for k in (False, True) for c in corrections], check)


def test_var_positional_unbiased_and_degenerate():
    t = th.tensor([1.0, 2.0, 4.0])
    assert_close(t.var(False), np.var([1.0, 2.0, 4.0]), th.float32)
    assert_close(t.var(True), np.var([1.0, 2.0, 4.0], ddof=1), th.float32)
    assert_close(th.tensor([3.0]).var(), np.nan, th.float32)        # 0 / 0
    assert_close(th.tensor([1.0, 2.0]).var(correction=2), np.inf, th.float32)  # x / 0
    assert_close(th.tensor(2.0).var(correction=0), 0.0, th.float32)


def test_var_is_numerically_stable():
    """A two-pass (shifted) variance: a large offset does not wipe out the
    spread (E[x^2] - E[x]^2 in float32 would)."""
    rng = np.random.default_rng(11)
    a = (1e4 + rng.standard_normal(100_000)).astype(np.float32)
    want = np.var(a.astype(np.float64), ddof=1)
    got = th.tensor(a).var().item()
    assert abs(got - want) <= 1e-4 * want
    got = th.tensor(a.reshape(100, 1000)).var(1)
    np.testing.assert_allclose(to_numpy(got), np.var(a.reshape(100, 1000).astype(np.float64),
                                                     axis=1, ddof=1), rtol=1e-4)


# ---- max/min with indices, argmax/argmin, aminmax --------------------
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_max_min_dim(make, d, layout):
    t, a = make(SHAPE, d, layout, **_vals_ties(d))
    dims = [0, 1, -1] if t.ndim else [0, -1]

    def check(case):
        fname, dim, keepdim = case
        fn = getattr(t, fname)
        if t.ndim and t.shape[dim] == 0:
            with raises(IndexError, f"{fname}(): Expected reduction dim {dim % t.ndim} "
                                    "to have non-zero size"):
                fn(dim, keepdim)
            return
        r = fn(dim, keepdim=keepdim)
        assert type(r).__name__ == fname and r.values is r[0] and r.indices is r[1]
        ax = dim if t.ndim else None
        npf, nparg = (np.max, np.argmax) if fname == "max" else (np.min, np.argmin)
        x = ref_data(a, d)
        vals = npf(x, axis=ax) if x.size else np.zeros(
            np.delete(x.shape, ax if ax is not None else []), x.dtype)
        idx = nparg(x, axis=ax) if x.size else np.zeros(vals.shape, np.int64)
        if keepdim and t.ndim:
            vals, idx = np.expand_dims(vals, ax), np.expand_dims(idx, ax)
        assert_close(r.values, vals, d)
        assert_close(r.indices, idx, th.int64)

    each([(f, dim, k) for f in ("max", "min") for dim in dims for k in (False, True)], check)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_full_max_min_argmax_aminmax(make, d, layout):
    t, a = make(SHAPE, d, layout, **_vals_ties(d))
    x = ref_data(a, d)
    if d is th.bool:  # as PyTorch: no argmax/argmin of bool
        for fname in ("argmax", "argmin"):
            with raises(RuntimeError, f"{fname}(): does not support bool input"):
                getattr(t, fname)()
            with raises(RuntimeError, "does not support bool input"):
                getattr(t, fname)(0)
    if t.numel() == 0:
        for fname in ("max", "min"):
            with raises(RuntimeError, f"{fname}(): Expected reduction dim to be specified "
                                      "for input.numel() == 0"):
                getattr(t, fname)()
        with raises(RuntimeError, "amin(): Expected reduction dim to be specified"):
            t.aminmax()
        for fname in ("argmax", "argmin"):
            if d is not th.bool:
                with raises(IndexError, f"{fname}(): Expected reduction dim to be "
                                        "specified for input.numel() == 0"):
                    getattr(t, fname)()
        return
    assert_close(t.max(), x.max(), d)
    assert_close(t.min(), x.min(), d)
    lo, hi = th.aminmax(t)
    assert_close(lo, x.min(), d)
    assert_close(hi, x.max(), d)
    if d is th.bool:
        return
    # argmax/argmin over the flattened tensor, in logical (row-major) order
    assert_close(t.argmax(), np.argmax(x), th.int64)
    assert_close(th.argmin(t), np.argmin(x), th.int64)
    assert_close(t.argmax(keepdim=True), np.argmax(x).reshape((1,) * t.ndim), th.int64)

    def check(case):
        fname, dim, keepdim = case
        ax = dim if t.ndim else None
        r = getattr(t, fname)(dim, keepdim=keepdim)
        exp = getattr(np, fname)(x, axis=ax)
        if keepdim and t.ndim:
            exp = np.expand_dims(exp, ax)
        assert_close(r, exp, th.int64)

    dims = [0, 1, 2, -1, -3] if t.ndim else [0, -1]
    each([(f, dim, k) for f in ("argmax", "argmin") for dim in dims for k in (False, True)],
         check)

    def check_aminmax(case):
        dim, keepdim = case
        lo, hi = th.aminmax(t, dim=dim, keepdim=keepdim)
        ax = dim if t.ndim else None
        emin, emax = np.min(x, axis=ax, keepdims=keepdim and t.ndim > 0), \
            np.max(x, axis=ax, keepdims=keepdim and t.ndim > 0)
        assert_close(lo, emin, d)
        assert_close(hi, emax, d)

    each([(dim, k) for dim in ([0, -1] if t.ndim else [0]) for k in (False, True)],
         check_aminmax)


@pytest.mark.parametrize("d", FLOAT_DTYPES, ids=ids(FLOAT_DTYPES))
def test_nan_propagation(rng, d):
    """NaN wins in sum/prod/mean/amax/amin/max/min/argmax/argmin/norm/
    logsumexp/var/cumsum; nansum skips it; NaN counts as non-zero."""
    a = as_dtype(rng.uniform(-3, 3, (4, 6)), d)
    a[1, 2] = a[1, 4] = np.nan
    a[3, 0] = np.nan
    t = new_tensor(a, d)
    x = f64(a)
    with np.errstate(invalid="ignore"):
        for name in ("sum", "prod", "mean", "amax", "amin"):
            r = getattr(t, name)(1)
            exp = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "amax": np.max,
                   "amin": np.min}[name](x, axis=1)
            assert np.isnan(to_numpy(r)).tolist() == np.isnan(exp).tolist(), name
            assert np.isnan(getattr(t, name)().item()), name
        for name in ("max", "min"):
            v, i = getattr(t, name)(1)
            assert np.isnan(to_numpy(v)).tolist() == [False, True, False, True]
            assert to_numpy(i)[[1, 3]].tolist() == [2, 0]  # the first NaN
            assert np.isnan(getattr(t, name)().item())
        assert t.argmax().item() == 8 and t.argmin().item() == 8
        assert_close(t.argmax(0), np.argmax(x, axis=0), th.int64)
        assert_close(t.argmin(1), np.argmin(x, axis=1), th.int64)
        lo, hi = t.aminmax()
        assert np.isnan(lo.item()) and np.isnan(hi.item())
        for p in (1, 2, 3, INF, -INF, 0):
            r = to_numpy(t.norm(p, dim=1))
            if p == 0:
                assert r.tolist() == [6, 6, 6, 6]  # NaN != 0
            else:
                assert np.isnan(r).tolist() == [False, True, False, True], p
        assert np.isnan(to_numpy(t.logsumexp(1))).tolist() == [False, True, False, True]
        assert np.isnan(to_numpy(t.var(1))).tolist() == [False, True, False, True]
        assert np.isnan(to_numpy(t.cumsum(1)))[1].tolist() == [False] * 2 + [True] * 4
        assert np.isnan(to_numpy(t.cumprod(1)))[3].tolist() == [True] * 6
        close_sum(t.nansum(1), np.nansum(x, axis=1), d, np.nansum(np.abs(x)))
        close_sum(t.nansum(), np.nansum(x), d, np.nansum(np.abs(x)))
        assert t.count_nonzero().item() == 24
        assert t.all().item() is True and t.isnan().any().item() is True


# ---- norm --------------------------------------------------------------
def norm_ref(x, p, axis, keepdims):
    x = np.abs(f64(x))
    if p == 0:
        return np.sum(x != 0, axis=axis, keepdims=keepdims).astype(np.float64)
    if p == INF:
        return np.max(x, axis=axis, keepdims=keepdims)
    if p == -INF:
        return np.min(x, axis=axis, keepdims=keepdims)
    return np.sum(x ** p, axis=axis, keepdims=keepdims) ** (1.0 / p)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("d", FLOAT_DTYPES, ids=ids(FLOAT_DTYPES))
def test_norm(make, d, layout):
    t, a = make(SHAPE, d, layout, low=-3, high=3)
    dims = [None, 1, -1, (0, 2)] if t.ndim else [None, 0]
    ps = [1, 2, 3, INF, -INF, 0, "fro", 0.5, -1, 2.5]

    def check(case):
        p, dim, keepdim = case
        ax = axis_of(dim, t.ndim)
        kd = keepdim and t.ndim > 0
        pp = 2 if p == "fro" else p
        args = (p,) if dim is None else (p, dim)
        red = reduced(t.shape, dim)
        if (pp == INF or pp < 0) and t.numel() == 0 and (
                dim is None or any(t.shape[i] == 0 for i in red)):
            # no identity: PyTorch's error for inf and negative orders
            name = {INF: "inf", -INF: "-inf"}.get(pp, f"{pp:g}")
            with raises(RuntimeError, f"linalg.vector_norm cannot compute the {name} norm"):
                t.norm(*args, keepdim=keepdim)
            return
        r = t.norm(*args, keepdim=keepdim)
        with np.errstate(divide="ignore"):
            exp = norm_ref(a, pp, ax, kd)
        assert_close(r, exp, d, rtol=TOL_NORM[d])

    each([(p, dim, k) for p in ps for dim in dims for k in (False, True)], check)


TOL_NORM = {th.float32: 1e-5, th.float64: 1e-12, th.float16: 2e-3, th.bfloat16: 1e-2}


def test_norm_dtype_argument():
    a = np.array([[3.0, -4.0], [1.0, 2.0]])
    h = new_tensor(a, th.float16)
    assert_close(h.norm(dtype=th.float32), np.linalg.norm(a), th.float32)
    assert_close(th.norm(th.tensor([3, 4]), dtype=th.float64), 5.0, th.float64)
    assert_close(th.norm(h, 1, dim=1, dtype=th.float64), [7.0, 3.0], th.float64)


# ---- cumsum / cumprod ------------------------------------------------
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_cumsum_cumprod(make, d, layout):
    s, sa = make(SHAPE, d, layout)
    p, pa = make(SHAPE, d, layout, **_vals_prod(d))
    dims = [0, 1, 2, -1] if s.ndim else [0, -1]

    def check(case):
        name, dim, dtype = case
        t, a = (s, sa) if name == "cumsum" else (p, pa)
        r = getattr(t, name)(dim, dtype=dtype)
        want = dtype or sum_dtype(d)
        x = ref_data(a, d) if dtype is None else np.asarray(as_dtype(a, dtype), dtype=np.float64)
        exp = getattr(np, name)(x, axis=dim if t.ndim else None).reshape(x.shape)
        if name == "cumsum":
            close_sum(r, exp, want, np.abs(f64(a)).sum())
        else:
            assert_close(r, exp, want)
        assert tuple(r.shape) == tuple(t.shape)

    each([(n, dim, dt) for n in ("cumsum", "cumprod") for dim in dims
          for dt in (None, th.float64)], check)


def test_cumsum_inplace_and_int_overflow_dtype():
    t = th.tensor([100, 100, 100], dtype=th.int8)
    assert_close(t.cumsum(0), [100, 200, 300], th.int64)  # no int8 wrap
    assert_close(t.cumsum(0, dtype=th.int16), [100, 200, 300], th.int16)
    f = th.tensor([1.0, 2.0, 3.0])
    assert f.cumsum_(0) is f
    assert_close(f, [1.0, 3.0, 6.0], th.float32)
    f.cumprod_(0)
    assert_close(f, [1.0, 3.0, 18.0], th.float32)


# ---- dtypes: the result dtype and the dtype= argument -------------------
@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_result_dtypes(rng, d):
    t = th.ones(3, 2, dtype=d)
    assert t.sum().dtype is sum_dtype(d)
    assert t.sum(0).dtype is sum_dtype(d)
    assert t.prod(1).dtype is sum_dtype(d)
    assert t.nansum().dtype is sum_dtype(d)
    assert t.cumsum(0).dtype is sum_dtype(d)
    assert t.cumprod(0).dtype is sum_dtype(d)
    assert t.amax().dtype is d and t.amin(0).dtype is d and t.max(0).values.dtype is d
    assert t.max(0).indices.dtype is th.int64
    if d is not th.bool:
        assert t.argmin().dtype is th.int64 and t.argmax(1).dtype is th.int64
    assert t.count_nonzero().dtype is th.int64
    assert t.all().dtype is (th.uint8 if d is th.uint8 else th.bool)
    assert t.any(1).dtype is (th.uint8 if d is th.uint8 else th.bool)
    assert t.logsumexp(0).dtype is (d if d.is_floating_point else th.float32)
    if d.is_floating_point:
        for f in (t.mean, t.var, t.std, t.norm):
            assert f().dtype is d
        assert_close(t.sum(), 6, d)
    else:
        assert_close(t.sum(), 6, th.int64)


@pytest.mark.parametrize("d", DTYPES, ids=ids(DTYPES))
def test_dtype_argument(make, d):
    """sum/prod/mean/nansum/cumsum(dtype=...) convert the input first and
    give that dtype."""
    t, a = make((4, 5), d, low=-3, high=3)
    x = f64(a)
    for out_d in (th.float64, th.float32, th.float16, th.int64):
        if out_d is th.int64 and d.is_floating_point:
            xi = np.trunc(x)  # converted to int64 first, as PyTorch does
        else:
            xi = f64(as_dtype(a, out_d))
        close_sum(t.sum(dtype=out_d), xi.sum(), out_d, np.abs(xi).sum())
        close_sum(t.sum(1, dtype=out_d), xi.sum(1), out_d, np.abs(xi).sum())
        close_sum(th.nansum(t, 0, dtype=out_d), xi.sum(0), out_d, np.abs(xi).sum())
        close_sum(t.cumsum(1, dtype=out_d), xi.cumsum(1), out_d, np.abs(xi).sum())
        assert t.prod(0, dtype=out_d).dtype is out_d
        if out_d.is_floating_point:
            close_sum(t.mean(dtype=out_d), xi.mean(), out_d, np.abs(xi).sum())
            close_sum(t.mean(0, keepdim=True, dtype=out_d), xi.mean(0, keepdims=True), out_d,
                      np.abs(xi).sum())
        else:
            with raises(RuntimeError, "Optional dtype must be either a floating point"):
                t.mean(dtype=out_d)


def test_int_sums_are_int64_without_wrapping():
    a = np.full(1000, 120, dtype=np.int8)
    assert th.tensor(a).sum().item() == 120_000
    u = np.full((300, 7), 255, dtype=np.uint8)
    assert_close(th.tensor(u).sum(0), np.full(7, 300 * 255), th.int64)
    b = np.ones(70_000, dtype=bool)
    assert th.tensor(b).sum().item() == 70_000
    big = np.array([2 ** 62, 2 ** 62, 2 ** 62], dtype=np.int64)
    assert th.tensor(big).sum().item() == int(np.sum(big))  # wraps like int64


# ---- numerical care ---------------------------------------------------
def test_float32_sum_of_many_is_accurate():
    """2^22 ones plus noise in float32: a naive float32 loop is off by
    ~1e-3 relative; pairwise / double accumulation is within ~1e-6."""
    rng = np.random.default_rng(5)
    n = 1 << 22
    a = (1.0 + rng.uniform(-1e-3, 1e-3, n)).astype(np.float32)
    want = a.astype(np.float64).sum()
    t = th.tensor(a)
    assert abs(t.sum().item() - want) <= 1e-6 * want
    assert abs(t.mean().item() - want / n) <= 1e-6 * want / n
    m = t.reshape(1 << 11, 1 << 11)
    m64 = a.reshape(1 << 11, 1 << 11).astype(np.float64)
    for dim in (0, 1):  # column and row kernels
        np.testing.assert_allclose(to_numpy(m.sum(dim)), m64.sum(dim), rtol=1e-6)
    assert abs(m.t().sum().item() - want) <= 1e-6 * want
    assert abs(m[::2, ::3].sum().item() - m64[::2, ::3].sum()) <= 1e-6 * want
    cs = to_numpy(t[: 1 << 20].cumsum(0))
    assert abs(cs[-1] - a[: 1 << 20].astype(np.float64).sum()) <= 1e-5 * cs[-1]


def test_float16_sum_accumulates_in_float32_or_better():
    a = np.full(4096, 1.0, dtype=np.float16)  # 2048 + 1 == 2048 in float16
    t = new_tensor(a, th.float16)
    assert t.sum().item() == 4096.0
    assert new_tensor(np.ones(4096, np.float32), th.bfloat16).sum().item() == 4096.0
    assert t.mean().item() == 1.0


@pytest.mark.parametrize("d", FLOAT_DTYPES, ids=ids(FLOAT_DTYPES))
def test_logsumexp_is_stable(d):
    big = {th.float32: 1e4, th.float64: 1e5, th.float16: 200.0, th.bfloat16: 1e4}[d]
    vals = np.array([[big, big], [-big, -big], [big, -INF], [-INF, -INF], [INF, 1.0],
                     [0.0, 0.0]])
    exp = np.array([big + math.log(2), -big + math.log(2), big, -INF, INF, math.log(2)])
    t = new_tensor(as_dtype(vals, d), d)
    r = t.logsumexp(1)
    assert_close(r, exp, d, rtol=EPS[d] * 8)
    assert_close(t.logsumexp(1, keepdim=True), exp[:, None], d, rtol=EPS[d] * 8)
    assert_close(t[:3].logsumexp(0), np.log(np.exp(f64(as_dtype(vals, d))[:3] - big).sum(0))
                 + big, d, rtol=EPS[d] * 8)



@pytest.mark.parametrize("d", [th.float32, th.float64], ids=["float32", "float64"])
def test_logsumexp_long_rows(d):
    """Rows longer than the float32 kernel's blocks and lanes (with a tail),
    a strided view, and rows holding -inf, inf and NaN, against float64."""
    rng = np.random.default_rng(11)
    a = (rng.standard_normal((5, 4 * 1024 + 23)) * 30).astype(as_dtype(np.zeros(1), d).dtype)
    a[1, 7] = -INF
    a[2, 3000] = INF
    a[3, 4000] = np.nan
    a[4] = -INF
    t = new_tensor(a, d)
    with np.errstate(divide="ignore", invalid="ignore"):  # the all -inf row
        want = logsumexp_ref(a, 1, False)
    got = to_numpy(t.logsumexp(1))
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_allclose(f64(got)[ok], want[ok], rtol=EPS[d] * 8)
    view = t[:2, ::3]  # not contiguous
    np.testing.assert_allclose(f64(to_numpy(view.logsumexp(1))),
                               logsumexp_ref(a[:2, ::3], 1, False), rtol=EPS[d] * 8)

# ---- out= -------------------------------------------------------------
def test_out_argument():
    t = th.tensor([[1.0, 2.0], [3.0, 4.0]])
    out = th.zeros(2)
    assert th.sum(t, 1, out=out) is out
    assert_close(out, [3.0, 7.0], th.float32)
    th.amax(t, 0, out=out)
    assert_close(out, [3.0, 4.0], th.float32)
    th.cumsum(t[0], 0, out=out)
    assert_close(out, [1.0, 3.0], th.float32)


# ---- error paths --------------------------------------------------------
def test_errors():
    t = th.ones(2, 3)
    with raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], "
                            "but got 2)"):
        t.sum(2)
    with raises(IndexError, "but got -3"):
        t.mean([0, -3])
    with raises(RuntimeError, "dim 0 appears multiple times in the list of dims"):
        t.sum([0, 0])
    with raises(RuntimeError, "dim 1 appears multiple times"):
        t.amax([1, -1])
    with raises(IndexError, "Dimension out of range"):
        t.var(5)
    with raises(IndexError, "Dimension out of range"):
        t.max(2)
    with raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], "
                            "but got 5)"):
        t.argmax(5)
    with raises(IndexError, "Dimension out of range"):
        t.cumsum(2)
    with raises(IndexError, "Dimension out of range"):
        t.cumprod(-3)
    with raises(IndexError, "Dimension out of range"):
        t.logsumexp(3)
    with raises(IndexError, "Dimension out of range"):
        t.norm(2, 4)
    with raises(IndexError, "Dimension out of range (expected to be in range of [-1, 0], "
                            "but got 1)"):
        th.tensor(1.0).sum(1)
    ti = th.ones(2, 3, dtype=th.int32)
    with raises(RuntimeError, "mean(): could not infer output dtype. Input dtype must be "
                              "either a floating point or complex dtype. Got: Int"):
        ti.mean()
    with raises(RuntimeError, "Got: Bool"):
        th.tensor([True]).mean()
    with raises(RuntimeError, "Optional dtype must be either a floating point or complex "
                              "dtype. Got: Int"):
        t.mean(dtype=th.int32)
    with raises(RuntimeError, "std and var only support floating point and complex dtypes"):
        ti.var()
    with raises(RuntimeError, "std and var only support floating point"):
        th.std(ti, 0)
    with raises(RuntimeError, "linalg.vector_norm: Expected a floating point or complex "
                              "tensor as input. Got Int"):
        ti.norm()
    with raises(NotImplementedError, "norm with p='nuc' is not supported"):
        t.norm("nuc")
    with raises(TypeError, "dtype must be an ember dtype, got 'float'"):
        t.sum(dtype="float")
    with raises(TypeError, "missing 1 required positional argument: 'dim'"):
        t.logsumexp()
    with raises(TypeError, "missing 1 required positional argument: 'dim'"):
        t.cumsum()
    e = th.zeros(3, 0)
    with raises(RuntimeError, "max(): Expected reduction dim to be specified for "
                              "input.numel() == 0. Specify the reduction dim with the "
                              "'dim' argument."):
        e.max()
    with raises(IndexError, "min(): Expected reduction dim 1 to have non-zero size."):
        e.min(1)
    with raises(IndexError, "amax(): Expected reduction dim 1 to have non-zero size."):
        e.amax(-1)
    with raises(IndexError, "argmax(): Expected reduction dim to be specified for "
                            "input.numel() == 0."):
        e.argmax()
    with raises(IndexError, "argmin(): Expected reduction dim 1 to have non-zero size."):
        e.argmin(1)
    with raises(RuntimeError, "linalg.vector_norm cannot compute the inf norm on an empty "
                              "tensor because the operation does not have an identity"):
        e.norm(INF)
    with raises(RuntimeError, "cannot compute the -inf norm on the dimension 1"):
        e.norm(-INF, 1)
    # reductions never touch their input
    a = th.tensor([[3.0, 1.0], [2.0, 5.0]])
    for f in (lambda: a.sum(0), lambda: a.cumsum(1), lambda: a.max(0), lambda: a.var(),
              lambda: a.norm(3), lambda: a.logsumexp(0)):
        f()
    assert to_numpy(a).tolist() == [[3.0, 1.0], [2.0, 5.0]]
