"""Complex tensors through every libTH family: the kernels that only move
elements take complex64 and complex128 (16-byte elements) and agree with
NumPy; the ones that compute or order refuse them with PyTorch's
'"<op>_cpu" not implemented for 'ComplexFloat'' (TypeError), never a crash,
garbage, or a silently dropped imaginary part."""
import numpy as np
import pytest

import ember.th as th

DTYPES = [(th.complex64, np.complex64), (th.complex128, np.complex128)]


@pytest.fixture
def rng():
    return np.random.default_rng(5)


def _c(rng, shape, npd):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(npd)


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
    ("cumsum", lambda t: t.cumsum(0)), ("cumprod", lambda t: t.cumprod(1)),
    ("logsumexp", lambda t: t.logsumexp(0)), ("norm", lambda t: t.norm()),
    ("var", lambda t: t.var()), ("mm", lambda t: t @ t.t()), ("dot", lambda t: t[0].dot(t[0])),
    ("matmul_empty", lambda t: t[:, :0] @ t[:0]),
    ("addmm", lambda t: th.addmm(t[:, :3], t, t.t()[:, :3], alpha=0)),
    ("index_add", lambda t: t.index_add_(0, th.tensor([0]), t[:1])),
    ("put_accumulate", lambda t: t.put_(th.tensor([0]), t.reshape(-1)[:1], accumulate=True)),
    ("index_put_accumulate", lambda t: t.index_put_((th.tensor([0]),), t[:1], accumulate=True)),
    ("scatter_add", lambda t: t.scatter_add_(0, th.tensor([[0, 1]]), t[:1, :2])),
    ("nan_to_num", lambda t: t.nan_to_num()), ("floor", lambda t: t.floor()),
    ("sign", lambda t: t.sign()), ("lt", lambda t: t < t), ("maximum", lambda t: t.maximum(t)),
    ("clamp", lambda t: t.clamp(0, 1)), ("remainder", lambda t: t % 2),
    ("bernoulli", lambda t: t.bernoulli_(0.5)), ("random", lambda t: t.random_(0, 2)),
    ("random_default", lambda t: t.random_()), ("uniform", lambda t: t.uniform_()),
    ("searchsorted", lambda t: th.searchsorted(th.tensor([0.0, 1.0]), t)),
    ("bincount_weights", lambda t: th.tensor([0, 1, 1]).bincount(t.reshape(-1)[:3])),
    ("lerp_weight", lambda t: th.lerp(th.ones(2), th.zeros(2), t.reshape(-1)[:2])),
    ("inverse", lambda t: th.linalg_inv_ex(t[:3, :3])),
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
    for call in (lambda: t.prod(0), lambda: t.cumsum(0),
                 lambda: t @ th.zeros(3, 2, dtype=dt), lambda: t.sort()):
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
