"""Random numbers: reproducibility (manual_seed, Generator objects,
get_state/set_state), independence of the thread count, shapes, dtypes,
ranges and rough moments of rand/randn/randint/randperm/normal/bernoulli/
multinomial and the in-place samplers, and the error paths."""
import numpy as np
import pytest

import ember.th as th

from th_testing import FLOAT_DTYPES, INT_DTYPES, ids, to_numpy
from _refs import bits, num_threads, raises

N = 100_000  # moments: standard errors ~ 0.3% of the spread


def draws(g=None):
    """One of each sampler, from generator g (None: the default one)."""
    p = th.full((50,), 0.3)
    probs = th.tensor([0.1, 0.0, 0.5, 0.4])
    return [
        th.rand(3, 4, generator=g),
        th.randn(17, generator=g, dtype=th.float64),
        th.randint(-5, 5, (20,), generator=g),
        th.randperm(30, generator=g),
        th.normal(1.0, 2.0, (9,), generator=g),
        th.normal(th.zeros(4, 3), th.ones(3), generator=g),
        th.bernoulli(p, generator=g),
        th.bernoulli(p, 0.7, generator=g),
        th.multinomial(probs, 20, replacement=True, generator=g),
        th.multinomial(probs, 3, generator=g),
        th.zeros(8).uniform_(-2, 3, generator=g),
        th.zeros(8).normal_(5, 0.1, generator=g),
        th.zeros(8).bernoulli_(0.5, generator=g),
        th.zeros(8, dtype=th.int32).random_(3, 9, generator=g),
        th.rand(5, dtype=th.float16, generator=g),
        th.randn(5, dtype=th.bfloat16, generator=g),
    ]


def same(xs, ys):
    return len(xs) == len(ys) and all(bits(x) == bits(y) for x, y in zip(xs, ys))


def test_manual_seed_reproduces_everything():
    th.manual_seed(1234)
    a = draws()
    th.manual_seed(1234)
    b = draws()
    assert same(a, b)
    c = draws()  # the stream moved on
    assert not any(bits(x) == bits(y) for x, y in zip(a[:6], c[:6]))
    th.manual_seed(1235)
    d = draws()
    assert not any(bits(x) == bits(y) for x, y in zip(a[:6], d[:6]))
    assert th.initial_seed() == 1235


def test_generator_objects():
    g1 = th.Generator().manual_seed(7)
    g2 = th.Generator()
    assert g2.manual_seed(7) is g2
    th.manual_seed(99)
    a = draws(g1)
    th.rand(1000)  # the default generator does not affect g2
    b = draws(g2)
    assert same(a, b)
    assert g1.initial_seed() == 7 and g1.device == "cpu"
    # a generator does not move the default one
    th.manual_seed(5)
    x = th.rand(10)
    th.manual_seed(5)
    draws(th.Generator().manual_seed(1))
    assert bits(th.rand(10)) == bits(x)
    # seeds are 64-bit: negative ones wrap, as PyTorch
    g = th.Generator().manual_seed(-1)
    assert g.initial_seed() == (1 << 64) - 1
    h = th.Generator().manual_seed((1 << 64) - 1)
    assert bits(th.rand(8, generator=g)) == bits(th.rand(8, generator=h))
    s = th.Generator().seed()
    assert isinstance(s, int) and 0 <= s < (1 << 64)
    # something else as a generator: which device type was expected
    class Other:
        device = "cuda:0"
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator but "
                       "found 'cuda'"):
        th.rand(3, generator=Other())


def test_get_state_set_state_round_trip():
    g = th.Generator().manual_seed(3)
    th.rand(5, generator=g)  # state mid-stream
    state = g.get_state()
    assert state.dtype is th.uint8 and tuple(state.shape) == (16,)
    a = draws(g)
    assert g.set_state(state) is g
    b = draws(g)
    assert same(a, b)
    # another generator takes the state over
    other = th.Generator().manual_seed(999)
    other.set_state(state)
    assert same(a, draws(other))
    # the default generator's state
    th.manual_seed(11)
    st = th.get_rng_state()
    x = draws()
    th.rand(77)
    th.set_rng_state(st)
    assert same(x, draws())
    # the state is a copy, not a view of the live state
    st2 = th.get_rng_state()
    th.rand(10)
    assert bits(st2) != bits(th.get_rng_state())


@pytest.mark.parametrize("sampler", ["rand", "randn", "randint", "normal", "normal_tensor",
                                     "bernoulli", "bernoulli_tensor", "uniform_", "normal_",
                                     "randperm", "multinomial"])
def test_thread_count_does_not_change_values(sampler):
    """The same seed gives the same bits on 1 and 2 threads (a large
    tensor, so that the parallel path runs)."""
    n = 1 << 20
    calls = {
        "rand": lambda: th.rand(n),
        "randn": lambda: th.randn(n // 2, 2, dtype=th.float64),
        "randint": lambda: th.randint(-1000, 1000, (n,)),
        "normal": lambda: th.normal(3.0, 2.0, (n,)),
        "normal_tensor": lambda: th.normal(th.zeros(n // 4, 4), th.ones(4)),
        "bernoulli": lambda: th.bernoulli(th.full((n,), 0.25)),
        "bernoulli_tensor": lambda: th.zeros(n).bernoulli_(0.5),
        "uniform_": lambda: th.empty(n, dtype=th.float16).uniform_(-1, 1),
        "normal_": lambda: th.empty(n).normal_(),
        "randperm": lambda: th.randperm(n // 4),
        "multinomial": lambda: th.multinomial(th.rand(64, 256), 128),
    }
    out = {}
    for k in (1, 2):
        with num_threads(k):
            g = th.Generator().manual_seed(2024)
            th.manual_seed(2024)
            x = calls[sampler]()
            state = th.get_rng_state()
            out[k] = (bits(x), bits(state))
            del g
    assert out[1][0] == out[2][0]
    assert out[1][1] == out[2][1]  # and the generator advanced the same way


# ---- shapes, dtypes, ranges ---------------------------------------------
def test_shapes_and_default_dtypes():
    th.manual_seed(0)
    assert tuple(th.rand(2, 3).shape) == (2, 3) and th.rand(2, 3).dtype is th.float32
    assert tuple(th.randn((4, 1, 2)).shape) == (4, 1, 2)
    assert tuple(th.rand([]).shape) == () and tuple(th.rand(0, 3).shape) == (0, 3)
    assert th.randint(5, (3,)).dtype is th.int64
    assert th.randperm(4).dtype is th.int64
    assert th.normal(0.0, 1.0, (2,)).dtype is th.float32
    assert th.multinomial(th.ones(3), 2).dtype is th.int64
    old = th.get_default_dtype()
    th.set_default_dtype(th.float64)
    try:
        assert th.rand(2).dtype is th.float64 and th.randn(2).dtype is th.float64
        assert th.normal(0.0, 1.0, (2,)).dtype is th.float64
    finally:
        th.set_default_dtype(old)
    assert th.rand(2).dtype is old
    t = th.ones(2, 5, dtype=th.float16)
    assert th.rand_like(t).dtype is th.float16 and tuple(th.randn_like(t).shape) == (2, 5)
    assert th.randint_like(t, 3).dtype is th.float16
    assert ((to_numpy(th.randint_like(t, 3)) >= 0) & (to_numpy(th.randint_like(t, 3)) < 3)
            ).all()


@pytest.mark.parametrize("d", FLOAT_DTYPES, ids=ids(FLOAT_DTYPES))
def test_rand_randn_moments(d):
    g = th.Generator().manual_seed(10)
    u = th.rand(N, dtype=d, generator=g)
    assert u.dtype is d and tuple(u.shape) == (N,)
    x = to_numpy(u).astype(np.float64)
    assert x.min() >= 0 and x.max() <= 1
    if d in (th.float32, th.float64):
        assert x.max() < 1  # [0, 1)
    assert abs(x.mean() - 0.5) < 0.01 and abs(x.var() - 1 / 12) < 0.005
    assert len(np.unique(x)) > (200 if d in (th.float16, th.bfloat16) else N // 2)
    z = to_numpy(th.randn(N, dtype=d, generator=g)).astype(np.float64)
    assert np.isfinite(z).all()
    assert abs(z.mean()) < 0.02 and abs(z.std() - 1) < 0.02
    assert abs(np.mean(np.abs(z) < 1) - 0.6827) < 0.01  # shape, not just moments
    assert 0 < abs(z).max() < 7


def test_randint_randperm():
    g = th.Generator().manual_seed(4)
    for d in INT_DTYPES + [th.float32, th.float64]:
        lo, hi = (0, 200) if d is th.uint8 else (-100, 100)
        r = th.randint(lo, hi, (N,), dtype=d, generator=g)
        assert r.dtype is d
        x = to_numpy(r).astype(np.int64)
        assert x.min() == lo and x.max() == hi - 1  # [low, high), every value hit
        counts = np.bincount(x - lo)
        assert counts.min() > 0.8 * N / (hi - lo) and counts.max() < 1.2 * N / (hi - lo)
    b = to_numpy(th.randint(0, 2, (1000,), dtype=th.bool, generator=g))
    assert b.dtype == bool and 400 < b.sum() < 600
    r = th.randint(10, (5, 3), generator=g)  # randint(high, size)
    assert tuple(r.shape) == (5, 3) and 0 <= to_numpy(r).min() and to_numpy(r).max() < 10
    big = to_numpy(th.randint(-(1 << 62), 1 << 62, (1000,), generator=g))
    assert big.min() < -(1 << 60) and big.max() > (1 << 60)
    for n, d in ((0, th.int64), (1, th.int64), (50, th.int32), (1000, th.int64),
                 (200, th.uint8), (100, th.float32)):
        p = th.randperm(n, dtype=d, generator=g)
        assert p.dtype is d and tuple(p.shape) == (n,)
        assert sorted(to_numpy(p).astype(np.int64).tolist()) == list(range(n))
    p = to_numpy(th.randperm(1000, generator=g))
    assert (p != np.arange(1000)).mean() > 0.9  # shuffled


def test_normal_scalar_and_tensor_arguments():
    g = th.Generator().manual_seed(8)
    x = to_numpy(th.normal(2.0, 3.0, (N,), generator=g)).astype(np.float64)
    assert abs(x.mean() - 2) < 0.05 and abs(x.std() - 3) < 0.05
    x = to_numpy(th.normal(-1.0, 0.5, size=(N // 10, 10), generator=g, dtype=th.float64))
    assert x.dtype == np.float64 and abs(x.mean() + 1) < 0.01 and abs(x.std() - 0.5) < 0.01
    # tensor mean, number std
    mean = th.tensor([[-10.0], [0.0], [10.0]]).expand(3, N // 10)
    x = to_numpy(th.normal(mean, 2.0, generator=g))
    assert x.shape == (3, N // 10)
    np.testing.assert_allclose(x.mean(1), [-10, 0, 10], atol=0.06)
    np.testing.assert_allclose(x.std(1), [2, 2, 2], atol=0.05)
    # number mean, tensor std
    x = to_numpy(th.normal(5.0, th.tensor([0.0, 1.0, 4.0]).reshape(3, 1).expand(3, N // 10),
                           generator=g))
    np.testing.assert_allclose(x.mean(1), [5, 5, 5], atol=0.1)
    np.testing.assert_allclose(x.std(1), [0, 1, 4], atol=0.1)
    assert (x[0] == 5).all()  # std 0: exactly the mean
    # both tensors, broadcast together
    x = th.normal(th.tensor([1.0, 100.0]), th.full((N // 10, 1), 0.1), generator=g)
    assert tuple(x.shape) == (N // 10, 2)
    np.testing.assert_allclose(to_numpy(x).mean(0), [1, 100], atol=0.01)
    assert th.normal(th.zeros(3, dtype=th.float64), 1.0).dtype is th.float64


def test_bernoulli_and_multinomial():
    g = th.Generator().manual_seed(12)
    p = th.tensor([0.0, 0.1, 0.5, 0.9, 1.0]).reshape(5, 1).expand(5, N // 10).contiguous()
    b = to_numpy(th.bernoulli(p, generator=g))
    assert b.dtype == np.float32 and set(np.unique(b)) <= {0.0, 1.0}
    np.testing.assert_allclose(b.mean(1), [0, 0.1, 0.5, 0.9, 1], atol=0.015)
    assert b[0].sum() == 0 and b[4].all()
    b = to_numpy(th.bernoulli(th.zeros(N, dtype=th.float64), 0.3, generator=g))
    assert b.dtype == np.float64 and abs(b.mean() - 0.3) < 0.01
    t = th.zeros(N, dtype=th.int32).bernoulli_(0.2, generator=g)
    assert t.dtype is th.int32 and abs(to_numpy(t).mean() - 0.2) < 0.01
    t = th.zeros(2, N // 2).bernoulli_(th.tensor([[0.25], [0.75]]), generator=g)
    np.testing.assert_allclose(to_numpy(t).mean(1), [0.25, 0.75], atol=0.015)
    # multinomial with replacement: frequencies follow the (unnormalised) weights
    w = th.tensor([1.0, 0.0, 2.0, 7.0])
    s = to_numpy(th.multinomial(w, N, replacement=True, generator=g))
    assert s.dtype == np.int64 and s.shape == (N,)
    np.testing.assert_allclose(np.bincount(s, minlength=4) / N, [0.1, 0, 0.2, 0.7], atol=0.01)
    # without replacement: distinct categories, zero weight never drawn
    for _ in range(20):
        s = to_numpy(th.multinomial(w, 3, generator=g))
        assert sorted(s.tolist()) == [0, 2, 3]
    s = to_numpy(th.multinomial(th.ones(2, 50), 50, generator=g))
    assert s.shape == (2, 50) and all(sorted(r) == list(range(50)) for r in s.tolist())
    # rows are distributions of their own
    rows = th.tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]], dtype=th.float64)
    assert to_numpy(th.multinomial(rows, 5, replacement=True, generator=g)).tolist() == \
        [[1] * 5, [0] * 5]
    # first-draw frequencies without replacement follow the weights too
    first = to_numpy(th.multinomial(th.tensor([1.0, 3.0]).expand(20000, 2).contiguous(), 1,
                                    generator=g))
    assert abs(first.mean() - 0.75) < 0.015


def test_in_place_samplers():
    g = th.Generator().manual_seed(13)
    for d in FLOAT_DTYPES:
        t = th.empty(N, dtype=d)
        assert t.uniform_(-2, 3, generator=g) is t
        x = to_numpy(t).astype(np.float64)
        assert x.min() >= -2 and x.max() <= 3 and abs(x.mean() - 0.5) < 0.05
        assert t.normal_(5, 0.5, generator=g) is t
        x = to_numpy(t).astype(np.float64)
        assert abs(x.mean() - 5) < 0.02 and abs(x.std() - 0.5) < 0.02
    t = th.empty(N, dtype=th.int16)
    assert t.random_(-3, 4, generator=g) is t
    assert to_numpy(t).min() == -3 and to_numpy(t).max() == 3
    t = th.empty(1000, dtype=th.uint8).random_(generator=g)  # the dtype's range
    assert to_numpy(t).max() > 200
    t = th.empty(100).random_(7, generator=g)  # random_(to)
    assert to_numpy(t).min() >= 0 and to_numpy(t).max() <= 6
    # a strided (non-contiguous) target only writes its own elements
    base = th.zeros(10, 10)
    view = base[::2, 1::3]
    view.uniform_(1, 2, generator=g)
    b = to_numpy(base)
    mask = np.zeros((10, 10), bool)
    mask[::2, 1::3] = True
    assert (b[mask] >= 1).all() and (b[~mask] == 0).all()


# ---- errors -------------------------------------------------------------
def test_errors():
    with raises(RuntimeError, "Trying to create tensor with negative dimension -1: [-1]"):
        th.rand(-1)
    with raises(TypeError, "uniform_ expects a floating point tensor, but got dtype int32"):
        th.rand(2, dtype=th.int32)
    with raises(TypeError, "uniform_ expects a floating point tensor"):
        th.zeros(3, dtype=th.int64).uniform_()
    with raises(RuntimeError, "uniform_ expects to return a [from, to) range, but found "
                              "from=3 > to=2"):
        th.zeros(3).uniform_(3, 2)
    with raises(RuntimeError, "random_ expects 'from' to be less than 'to', but got from=5 "
                              ">= to=3"):
        th.randint(5, 3, (3,))
    with raises(RuntimeError, "to - 1 is out of bounds for uint8 (to=300)"):
        th.randint(0, 300, (3,), dtype=th.uint8)
    with raises(TypeError, "randint() missing required argument 'size'"):
        th.randint()
    with raises(TypeError, "randint() expects (high, size) or (low, high, size)"):
        th.randint(5)
    with raises(RuntimeError, "n must be non-negative, got -1"):
        th.randperm(-1)
    with raises(RuntimeError, "n is too large for result tensor type: 'uint8' (n=300)"):
        th.randperm(300, dtype=th.uint8)
    with raises(RuntimeError, "normal expects std >= 0.0, but found std -1"):
        th.normal(0.0, -1.0, (3,))
    with raises(RuntimeError, "normal expects all elements of std >= 0.0"):
        th.normal(th.zeros(3), -th.ones(3))
    with raises(TypeError, "normal() with float mean and std needs a size"):
        th.normal(0.0, 1.0)
    with raises(RuntimeError, "bernoulli_ expects p to be in [0, 1], but got p=1.5"):
        th.bernoulli(th.full((4,), 1.5))
    with raises(RuntimeError, "bernoulli_ expects p to be in [0, 1], but got p=1.1"):
        th.zeros(4).bernoulli_(1.1)
    with raises(RuntimeError, "probability tensor contains either `inf`, `nan` or element "
                              "< 0"):
        th.multinomial(th.tensor([-0.1, 0.0, 0.9]), 1)
    with raises(RuntimeError, "probability tensor contains either `inf`, `nan` or element "
                              "< 0"):
        th.multinomial(th.tensor([1.0, float("nan")]), 1)
    with raises(RuntimeError, "probability tensor contains either `inf`"):
        th.multinomial(th.tensor([1.0, float("inf")]), 1)
    with raises(RuntimeError, "invalid multinomial distribution (sum of probabilities <= 0)"):
        th.multinomial(th.tensor([0.0, 0.0]), 1)
    with raises(RuntimeError, "cannot sample n_sample <= 0 samples"):
        th.multinomial(th.tensor([1.0, 1.0]), 0)
    with raises(RuntimeError, "prob_dist must be 1 or 2 dim"):
        th.multinomial(th.ones(1, 1, 2), 1)
    with raises(TypeError, "multinomial only supports floating-point dtypes for input, got: "
                           "int64"):
        th.multinomial(th.tensor([1, 1]), 1)
    with raises(RuntimeError, "invalid multinomial distribution (with replacement=False, not "
                              "enough non-negative category to sample)"):
        th.multinomial(th.tensor([0.1, 0.0, 0.9]), 3)
    with raises(RuntimeError, "ember.th generators are CPU generators, got device cuda"):
        th.Generator("cuda")
    with raises(RuntimeError, "Overflow when unpacking long: 18446744073709551616"):
        th.Generator().manual_seed(1 << 64)
    with raises(RuntimeError, "Expected a 16-byte generator state, got 3 bytes"):
        th.Generator().set_state(th.zeros(3, dtype=th.uint8))
    # in-place samplers refuse expanded (stride-0) targets
    for call in (lambda b: b.uniform_(), lambda b: b.normal_(), lambda b: b.bernoulli_(0.5),
                 lambda b: b.random_(0, 5)):
        b = th.zeros(1, 4).expand(3, 4)
        with raises(RuntimeError, "more than one element of the written-to tensor refers to "
                                  "a single memory location"):
            call(b)
        assert not to_numpy(b).any()
    # a failed call leaves the generator where it was
    g = th.Generator().manual_seed(1)
    state = g.get_state()
    with pytest.raises(RuntimeError):
        th.normal(0.0, -1.0, (3,), generator=g)
    with pytest.raises(RuntimeError):
        th.multinomial(th.tensor([0.0, 0.0]), 1, generator=g)
    assert bits(g.get_state()) == bits(state)
