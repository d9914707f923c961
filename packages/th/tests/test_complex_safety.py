"""Complex tensors through every libTH family: the kernels that only move
elements take complex64 and complex128 (16-byte elements) and agree with
NumPy; the ones that compute or order refuse them with PyTorch's
'"<op>_cpu" not implemented for 'ComplexFloat'' (TypeError), never a crash,
garbage, or a silently dropped imaginary part."""
import numpy as np
import pytest

import ember.th as th
from th_testing import complex_normal as _c

DTYPES = [(th.complex64, np.complex64), (th.complex128, np.complex128)]


@pytest.fixture
def rng():
    return np.random.default_rng(5)



@pytest.mark.parametrize("dt,npd", DTYPES)
def test_data_movement_against_numpy(rng, dt, npd):
    a = _c(rng, (4, 5), npd)
    t = th.tensor(a)
    idx = th.tensor([3, 0, 3, 1])
    np.testing.assert_array_equal(t.index_select(0, idx).numpy(), a[[3, 0, 3, 1]])
    np.testing.assert_array_equal(t.index_select(1, idx).numpy(), a[:, [3, 0, 3, 1]])
    np.testing.assert_array_equal(t.take(th.tensor([0, 7, 19])).numpy(), a.ravel()[[0, 7, 19]])
    np.testing.assert_array_equal(t[idx].numpy(), a[[3, 0, 3, 1]])
    np.testing.assert_array_equal(t[:, 1:4:2].numpy(), a[:, 1:4:2])
    g = th.tensor([[0, 4], [2, 2], [1, 0], [3, 3]])
    np.testing.assert_array_equal(t.gather(1, g).numpy(), np.take_along_axis(a, g.numpy(), 1))
    mask = th.tensor(a.real > 0)
    np.testing.assert_array_equal(t.masked_select(mask).numpy(), a[a.real > 0])
    np.testing.assert_array_equal(t[mask].numpy(), a[a.real > 0])
    np.testing.assert_array_equal(th.where(mask, t, th.zeros(4, 5, dtype=dt)).numpy(),
                                  np.where(a.real > 0, a, 0))
    np.testing.assert_array_equal(t.flip(1).numpy(), a[:, ::-1])
    np.testing.assert_array_equal(t.flip((0, 1)).numpy(), a[::-1, ::-1])
    np.testing.assert_array_equal(th.cat([t, t.t().t()], 1).numpy(), np.concatenate([a, a], 1))
    np.testing.assert_array_equal(th.stack([t, t]).numpy(), np.stack([a, a]))
    np.testing.assert_array_equal(t.roll(2, 1).numpy(), np.roll(a, 2, 1))
    np.testing.assert_array_equal(t.t().contiguous().numpy(), a.T)
    np.testing.assert_array_equal(t.repeat(2, 1).numpy(), np.tile(a, (2, 1)))
    np.testing.assert_array_equal(t.tril().numpy(), np.tril(a))


@pytest.mark.parametrize("dt,npd", DTYPES)
def test_writes_against_numpy(rng, dt, npd):
    a, b = _c(rng, (4, 5), npd), _c(rng, (2, 5), npd)
    want = a.copy()
    want[[2, 0]] = b
    t = th.tensor(a)
    t.index_copy_(0, th.tensor([2, 0]), th.tensor(b))
    np.testing.assert_array_equal(t.numpy(), want)
    t = th.tensor(a)
    t[th.tensor([1, 3])] = th.tensor(b)
    want = a.copy()
    want[[1, 3]] = b
    np.testing.assert_array_equal(t.numpy(), want)
    t = th.tensor(a)
    t.index_fill_(1, th.tensor([0, 4]), 2 - 1j)
    want = a.copy()
    want[:, [0, 4]] = 2 - 1j
    np.testing.assert_array_equal(t.numpy(), want)
    t = th.tensor(a)
    t[th.tensor([0, 2]), th.tensor([1, 3])] = 5j
    want = a.copy()
    want[[0, 2], [1, 3]] = 5j
    np.testing.assert_array_equal(t.numpy(), want)
    t = th.tensor(a)
    mask = a.imag > 0
    t.masked_fill_(th.tensor(mask), 1 + 1j)
    np.testing.assert_array_equal(t.numpy(), np.where(mask, 1 + 1j, a).astype(npd))
    t = th.tensor(a)
    src = _c(rng, (20,), npd)
    t.masked_scatter_(th.tensor(mask), th.tensor(src))
    want = a.copy()
    want[mask] = src[:mask.sum()]
    np.testing.assert_array_equal(t.numpy(), want)
    t = th.zeros(3, 5, dtype=dt)
    g = th.tensor([[0, 1, 2, 0, 1]])
    t.scatter_(0, g, th.tensor(b[:1]))
    want = np.zeros((3, 5), npd)
    want[g.numpy()[0], np.arange(5)] = b[0]
    np.testing.assert_array_equal(t.numpy(), want)
    t = th.tensor(a)
    t.put_(th.tensor([0, 19]), th.tensor(b[0, :2]))
    want = a.copy().ravel()
    want[[0, 19]] = b[0, :2]
    np.testing.assert_array_equal(t.numpy().ravel(), want)
    t = th.tensor(a)
    t.fill_(3 - 2j)
    assert (t == 3 - 2j).all()


@pytest.mark.parametrize("dt,npd", DTYPES)
def test_nonzero_and_bool(rng, dt, npd):
    a = np.array([0, 1j, 2, 0, 1e-30j, -0.0 + 0j], dtype=npd)
    t = th.tensor(a)
    np.testing.assert_array_equal(t.nonzero().numpy().ravel(), np.nonzero(a)[0])
    np.testing.assert_array_equal(t.to(th.bool).numpy(), a != 0)  # either part nonzero
    assert bool(th.tensor(1j)) is True and bool(th.tensor(0j)) is False


REFUSED = [
    ("sort", lambda t: t.sort()), ("topk", lambda t: t.topk(2)),
    ("kthvalue", lambda t: t.kthvalue(1)), ("mode", lambda t: t.mode()),
    ("unique", lambda t: t.unique()), ("max", lambda t: t.max()),
    ("max_dim", lambda t: t.max(0)), ("argmax", lambda t: t.argmax()),
    ("min_dim", lambda t: t.min(1)), ("amax", lambda t: t.amax(0)),
    ("prod", lambda t: t.prod()), ("nansum", lambda t: t.nansum()),
    ("cumprod", lambda t: t.cumprod(1)),
    ("logsumexp", lambda t: t.logsumexp(0)), ("norm", lambda t: t.norm()),
    ("var", lambda t: t.var()), ("std", lambda t: t.std(0)),
    ("histc", lambda t: t.histc()),
    ("addmm", lambda t: th.addmm(t[:, :3], t, t.t()[:, :3], alpha=0)),
    ("addmm_empty", lambda t: th.addmm(t[:, :3], t[:, :0], t[:0, :3])),
    ("index_add", lambda t: t.index_add_(0, th.tensor([0]), t[:1])),
    ("put_accumulate", lambda t: t.put_(th.tensor([0]), t.reshape(-1)[:1], accumulate=True)),
    ("index_put_accumulate", lambda t: t.index_put_((th.tensor([0]),), t[:1], accumulate=True)),
    ("scatter_reduce", lambda t: t.scatter_reduce_(0, th.tensor([[0, 1]]), t[:1, :2], "sum")),
    ("nan_to_num", lambda t: t.nan_to_num()), ("floor", lambda t: t.floor()),
    ("sign", lambda t: t.sign()), ("lt", lambda t: t < t), ("maximum", lambda t: t.maximum(t)),
    ("clamp", lambda t: t.clamp(0, 1)), ("remainder", lambda t: t % 2),
    ("bernoulli", lambda t: t.bernoulli_(0.5)), ("random", lambda t: t.random_(0, 2)),
    ("bernoulli_p", lambda t: th.zeros(3, 4).bernoulli_(t)),
    ("normal_mean", lambda t: th.normal(t, th.ones(3, 4))),
    ("random_default", lambda t: t.random_()), ("uniform", lambda t: t.uniform_()),
    ("searchsorted", lambda t: th.searchsorted(th.tensor([0.0, 1.0]), t)),
    ("bincount_weights", lambda t: th.tensor([0, 1, 1]).bincount(t.reshape(-1)[:3])),
    ("lerp_weight", lambda t: th.lerp(th.ones(2), th.zeros(2), t.reshape(-1)[:2])),
]


@pytest.mark.parametrize("dt,npd", DTYPES)
@pytest.mark.parametrize("name,call", REFUSED, ids=[r[0] for r in REFUSED])
def test_refused_with_the_dtype_named(rng, dt, npd, name, call):
    a = _c(rng, (3, 4), npd)
    t = th.tensor(a)
    with pytest.raises((TypeError, RuntimeError), match=f"{dt._title}|{dt.name}|complex"):
        call(t)
    np.testing.assert_array_equal(t.numpy(), a)  # the input is untouched


@pytest.mark.parametrize("dt,npd", DTYPES)
def test_empty_tensors_are_refused_too(dt, npd):
    t = th.zeros(0, 3, dtype=dt)
    for call in (lambda: t.prod(0), lambda: t.cumprod(0), lambda: t.sort(),
                 lambda: th.addmm(th.zeros(0, 2, dtype=dt), t, th.zeros(3, 2, dtype=dt)),
                 lambda: t.var(0), lambda: t.histc(), lambda: t.argmax(1)):
        with pytest.raises(TypeError, match=dt._title):
            call()


def test_reduction_dtypes_and_creation():
    with pytest.raises(TypeError, match="ComplexFloat"):
        th.ones(3).cumsum(0, dtype=th.complex64)
    with pytest.raises(TypeError, match="ComplexDouble"):
        th.arange(3, dtype=th.complex128)
    with pytest.raises(TypeError, match="ComplexFloat"):
        th.randperm(3, dtype=th.complex64)
    real = th.ones(3)
    with pytest.raises(RuntimeError, match="value cannot be converted to type Float"):
        real.fill_(1j)
    assert real.tolist() == [1.0, 1.0, 1.0]
    z = th.zeros(3, dtype=th.complex64)
    np.testing.assert_array_equal(th.linspace(0, 1, 3, dtype=th.complex64).numpy(),
                                  np.linspace(0, 1, 3).astype(np.complex64))
    assert z.sum().item() == 0j


def _strided(rng, npd):
    """A complex array and the tensor of it as a non-contiguous view
    (transposed, every other column): what the kernels' strided paths see."""
    base = _c(rng, (6, 10), npd)
    return base.T[::2], th.tensor(base).t()[::2]


@pytest.mark.parametrize("dt,npd", DTYPES)
def test_data_movement_of_strided_inputs(rng, dt, npd):
    a, t = _strided(rng, npd)  # (5, 6)
    assert not t.is_contiguous()
    idx = th.tensor([4, 0, 4, 2])
    np.testing.assert_array_equal(t.index_select(0, idx).numpy(), a[[4, 0, 4, 2]])
    np.testing.assert_array_equal(t.index_select(1, idx).numpy(), a[:, [4, 0, 4, 2]])
    np.testing.assert_array_equal(t.take(th.tensor([[0, 29], [7, 7]])).numpy(),
                                  a.ravel()[[[0, 29], [7, 7]]])
    g = th.tensor([[5, 0, 1], [2, 2, 3], [0, 1, 4], [3, 3, 3], [1, 0, 5]])
    np.testing.assert_array_equal(t.gather(1, g).numpy(),
                                  np.take_along_axis(a, g.numpy(), 1))
    g0 = th.tensor([[4, 0, 1, 2, 3, 0]])
    np.testing.assert_array_equal(t.gather(0, g0).numpy(), np.take_along_axis(a, g0.numpy(), 0))
    m = a.imag > 0
    mask = th.tensor(m)
    np.testing.assert_array_equal(t.masked_select(mask).numpy(), a[m])
    np.testing.assert_array_equal(t.masked_select(mask[0]).numpy(),  # broadcast mask
                                  a[np.broadcast_to(m[0], a.shape)])
    np.testing.assert_array_equal(th.where(mask, t, t.flip(0)).numpy(),
                                  np.where(m, a, a[::-1]))
    np.testing.assert_array_equal(th.where(mask, t, 2 - 1j).numpy(),
                                  np.where(m, a, npd(2 - 1j)))
    np.testing.assert_array_equal(t.flip(0).numpy(), a[::-1])
    np.testing.assert_array_equal(t.flip(1).numpy(), a[:, ::-1])
    np.testing.assert_array_equal(t.flip((0, 1)).numpy(), a[::-1, ::-1])
    z = a.copy()
    z[1] = 0
    z[3, 2] = 1j
    zt = th.tensor(np.asfortranarray(z)).t().t()  # column-major storage
    np.testing.assert_array_equal(zt.nonzero().numpy(), np.argwhere(z))
    adv = a[[0, 4]][:, [1, 5]]
    np.testing.assert_array_equal(t[th.tensor([0, 4])][:, th.tensor([1, 5])].numpy(), adv)
    np.testing.assert_array_equal(t[th.tensor([0, 4]), th.tensor([1, 5])].numpy(),
                                  a[[0, 4], [1, 5]])


@pytest.mark.parametrize("dt,npd", DTYPES)
def test_writes_into_strided_tensors(rng, dt, npd):
    def fresh():
        base = _c(np.random.default_rng(1), (6, 10), npd)
        return base.T[::2].copy(), th.tensor(base).t()[::2]

    b = _c(rng, (2, 6), npd)
    a, t = fresh()
    t.index_copy_(0, th.tensor([3, 1]), th.tensor(b))
    a[[3, 1]] = b
    np.testing.assert_array_equal(t.numpy(), a)
    a, t = fresh()
    t.index_fill_(1, th.tensor([5, 0]), -1j)
    a[:, [5, 0]] = -1j
    np.testing.assert_array_equal(t.numpy(), a)
    a, t = fresh()
    m = a.real > 0
    t.masked_fill_(th.tensor(m), 7 + 0.5j)
    a[m] = 7 + 0.5j
    np.testing.assert_array_equal(t.numpy(), a)
    a, t = fresh()
    src = _c(rng, (30,), npd)
    t.masked_scatter_(th.tensor(m), th.tensor(src))
    a[m] = src[:m.sum()]
    np.testing.assert_array_equal(t.numpy(), a)
    a, t = fresh()
    g = th.tensor([[4, 0, 2, 1, 3, 0]])
    t.scatter_(0, g, th.tensor(b[:1]))
    a[g.numpy()[0], np.arange(6)] = b[0]
    np.testing.assert_array_equal(t.numpy(), a)
    a, t = fresh()
    t.scatter_(1, th.tensor([[1], [2], [3], [4], [5]]), 3j)
    a[np.arange(5), [1, 2, 3, 4, 5]] = 3j
    np.testing.assert_array_equal(t.numpy(), a)
    a, t = fresh()
    t[th.tensor([0, 4]), th.tensor([1, 5])] = th.tensor(b[0, :2])
    a[[0, 4], [1, 5]] = b[0, :2]
    np.testing.assert_array_equal(t.numpy(), a)
    a, t = fresh()
    t.put_(th.tensor([0, 29, 7]), th.tensor(b[1, :3]))
    flat = a.ravel()
    flat[[0, 29, 7]] = b[1, :3]
    np.testing.assert_array_equal(t.numpy(), flat.reshape(a.shape))
    a, t = fresh()
    t[1:4:2, ::3] = 1 - 1j
    a[1:4:2, ::3] = 1 - 1j
    np.testing.assert_array_equal(t.numpy(), a)


@pytest.mark.parametrize("dt,npd", DTYPES)
def test_nonzero_edge_values(dt, npd):
    nan = float("nan")
    a = np.array([complex(0, nan), complex(nan, 0), -0.0 - 0.0j, complex(0, -0.0),
                  complex(0, 1e-40 if npd is np.complex128 else 1e-30), 0j], dtype=npd)
    t = th.tensor(a)
    np.testing.assert_array_equal(t.nonzero().numpy().ravel(), np.nonzero(a)[0])
    np.testing.assert_array_equal(t.to(th.bool).numpy(), a != 0)
    np.testing.assert_array_equal(t[t.to(th.bool)].numpy(), a[a != 0])
    np.testing.assert_array_equal(th.tensor(a.reshape(2, 3)).nonzero().numpy(),
                                  np.argwhere(a.reshape(2, 3)))


def test_complex_values_into_real_tensors():
    """A complex value with an imaginary part cannot be stored in a real
    tensor: refused as PyTorch refuses it, never silently truncated."""
    mask, idx = th.tensor([True, False, True]), th.tensor([0, 2])
    calls = [
        lambda r: r.fill_(1j), lambda r: r.masked_fill_(mask, 1j),
        lambda r: r.masked_fill_(mask, th.tensor(2 + 1j)),
        lambda r: r.index_fill_(0, idx, 1 - 1j), lambda r: r.scatter_(0, idx, 1j),
        lambda r: r.__setitem__(0, 1j), lambda r: r.__setitem__(slice(0, 2), 1j),
        lambda r: r.__setitem__(idx, 1j), lambda r: r.__setitem__(mask, 1j),
        lambda r: r.index_put_((idx,), th.tensor(1j)),
        lambda r: r.index_add_(0, idx, th.ones(2), alpha=1j),
    ]
    for call in calls:
        r = th.zeros(3)
        with pytest.raises(RuntimeError, match="value cannot be converted to type Float"):
            call(r)
        assert r.tolist() == [0.0, 0.0, 0.0]
    r = th.zeros(3, dtype=th.float64)
    with pytest.raises(RuntimeError, match="Index put requires the source and destination "
                                           "dtypes match, got Double .* ComplexFloat"):
        r[idx] = th.tensor([1j, 2j])
    assert r.tolist() == [0.0, 0.0, 0.0]
    r = th.zeros(3, dtype=th.int64)  # no imaginary part: the value fits
    r.masked_fill_(mask, 2 + 0j)
    r[1] = 5 + 0j
    r.index_fill_(0, th.tensor([0]), th.tensor(-1 + 0j))
    r.scatter_(0, th.tensor([2]), 4 + 0j)
    assert r.tolist() == [-1, 5, 4]


@pytest.mark.parametrize("dt,npd", DTYPES)
def test_bool_cast_and_back(dt, npd):
    a = np.array([[0, 1j], [-2, 0]], dtype=npd).T  # non-contiguous
    t = th.tensor(np.ascontiguousarray(a.T)).t()
    b = t.to(th.bool)
    np.testing.assert_array_equal(b.numpy(), a != 0)
    np.testing.assert_array_equal(b.to(dt).numpy(), (a != 0).astype(npd))
    np.testing.assert_array_equal(th.zeros(2, 2, dtype=th.bool).copy_(t).numpy(), a != 0)
