"""libTH and libTHNN called from several Python threads at once.

cffi releases the GIL around every C call, so these threads really run the
C libraries concurrently.  Each thread works on its own tensors; the results
must equal the serial ones bit for bit, each thread must read back its own
error messages, and concurrent draws from the shared default generator must
be the same blocks of random numbers as serial draws (in some order).
"""
import threading

import numpy as np
import pytest

import ember.th as th

thnn = pytest.importorskip("ember.thnn")

THREADS = 4
ROUNDS = 3


def run_threads(work):
    """work(k) in THREADS threads started together; returns their results
    in thread order, re-raising the first exception."""
    barrier = threading.Barrier(THREADS)
    results, errors = [None] * THREADS, []

    def body(k):
        try:
            barrier.wait()
            results[k] = work(k)
        except BaseException as e:   # noqa: BLE001 - re-raised in the main thread
            errors.append(e)

    ts = [threading.Thread(target=body, args=(k,)) for k in range(THREADS)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        raise errors[0]
    return results


def as_bytes(outputs):
    return [np.ascontiguousarray(o.numpy()).tobytes() for o in outputs]


def th_work(seed):
    """A mix of libTH ops on tensors of this seed: BLAS, reductions, scans,
    sorting, indexing, element-wise ops on large (OpenMP) and small tensors."""
    g = th.Generator().manual_seed(seed)
    a = th.randn(192, 160, generator=g)
    b = th.randn(160, 128, generator=g, dtype=th.float64)
    big = th.rand(1 << 17, generator=g)
    idx = th.randint(0, 192, (50,), generator=g)
    out = [a @ b.to(th.float32), b.t() @ b, big.exp().sum(), big.cumsum(0),
           a.sort(dim=1)[0], a.index_select(0, idx), (a * 2 - 1).tanh().amax(1),
           th.where(big > 0.5, big, -big), th.rand(1000, generator=g)]
    return as_bytes(out)


def thnn_work(seed):
    """A small training-style sequence of libTHNN kernels, forward and backward,
    with this thread's own batch-norm running statistics and dropout generator."""
    g = th.Generator().manual_seed(seed)
    x = th.randn(4, 3, 20, 20, generator=g, dtype=th.float64)
    w = th.randn(6, 3, 3, 3, generator=g, dtype=th.float64)
    bias = th.randn(6, generator=g, dtype=th.float64)
    y = thnn.conv2d_forward(x, w, bias, 1, 1)
    rm, rv = th.zeros(6, dtype=th.float64), th.ones(6, dtype=th.float64)
    yn, mean, invstd = thnn.batch_norm_forward(y, None, None, rm, rv, True, 0.1, 1e-5)
    r = thnn.activation_forward("relu", yn)
    p, ind = thnn.max_pool2d_forward(r, 2)
    d, mask = thnn.dropout_forward(p, 0.3, generator=g)
    logits = d.flatten(1)[:, :10]
    target = th.randint(0, 10, (4,), generator=g)
    loss, logp, tw = thnn.cross_entropy_forward(logits, target)
    gl = thnn.cross_entropy_backward_input(th.ones(()).to(th.float64), logp, target, None, tw)
    gp = thnn.max_pool2d_backward_input(th.randn(*p.shape, generator=g, dtype=th.float64),
                                        r.shape, ind)
    gx = thnn.conv2d_backward_input(th.randn(*y.shape, generator=g, dtype=th.float64),
                                    x.shape, w, 1, 1, 1, 1)
    gw, gb = thnn.conv2d_backward_params(th.randn(*y.shape, generator=g, dtype=th.float64),
                                         x, w.shape, 1, 1, 1, 1)
    return as_bytes([y, yn, rm, rv, p, d, mask, loss, gl, gp, gx, gw, gb])


@pytest.mark.parametrize("work", [th_work, thnn_work], ids=["libTH", "libTHNN"])
def test_concurrent_calls_give_the_serial_results(work):
    serial = [work(100 + k) for k in range(THREADS)]
    for _ in range(ROUNDS):
        assert run_threads(lambda k: work(100 + k)) == serial


def test_both_libraries_at_once():
    serial = [(th_work if k % 2 else thnn_work)(k) for k in range(THREADS)]
    assert run_threads(lambda k: (th_work if k % 2 else thnn_work)(k)) == serial


def test_each_thread_reads_its_own_error_message():
    def work(k):
        seen = []
        for i in range(200):
            n = k * 1000 + i + 3         # a value no other thread uses (>= 3 classes)
            if k % 2:
                with pytest.raises(RuntimeError) as info:
                    th.mm(th.zeros(n, 3), th.zeros(4, 5))
            else:
                with pytest.raises(IndexError) as info:
                    thnn.nll_loss_forward(th.zeros(2, 3), th.tensor([0, n]))
            seen.append((n, str(info.value)))
        return seen

    for per_thread in run_threads(work):
        for n, msg in per_thread:
            assert str(n) in msg, msg


def test_default_generator_hands_out_disjoint_blocks():
    def draws(k):
        return as_bytes([th.randn(1000) for _ in range(25)])

    th.manual_seed(1234)
    threaded = sum(run_threads(draws), [])
    th.manual_seed(1234)
    serial = sum((draws(k) for k in range(THREADS)), [])
    assert len(set(threaded)) == len(threaded)     # no block was handed out twice
    assert sorted(threaded) == sorted(serial)      # the same blocks as serial draws


def test_refcounts_of_shared_inputs():
    """Threads taking and dropping views of one shared tensor: its storage is
    reference-counted atomically, so it survives all of them intact."""
    base = th.arange(0, 1 << 16, dtype=th.float64)
    expected = base.sum().item()

    def work(k):
        total = 0.0
        for i in range(300):
            v = base[k::THREADS].view(-1, 4).t().contiguous()
            total += v.sum().item()
            del v
        return total

    sums = run_threads(work)
    assert sum(sums) / 300 == pytest.approx(expected)
    assert base.sum().item() == expected


def test_python_numbers_stay_alive_while_other_threads_make_more():
    """A Python number becomes a 0-d tensor lent to the C call; once the
    binding's cache of numbers is full, new ones are kept alive per thread, so
    another thread making many numbers cannot free one that is still in use."""
    for i in range(5000):               # fill the number cache with fresh values
        th.ones(1) * (0.25 + i)
    big = th.ones(1 << 19, dtype=th.float64)
    stop = threading.Event()

    def user(k):
        wrong = []
        for r in range(100):
            v = 1e6 * (k + 1) + r + 0.5
            out = big * v                # runs in C, without the GIL
            if out.amin().item() != v or out.amax().item() != v:
                wrong.append(v)
        return wrong

    churn_errors = []

    def churn():
        i = 0
        try:
            while not stop.is_set():
                v = -0.5 - i
                if (th.ones(1, dtype=th.float64) * v).item() != v:
                    churn_errors.append(v)
                i += 1
        except Exception as e:   # noqa: BLE001 - a freed number shows up as any error
            churn_errors.append(e)

    churners = [threading.Thread(target=churn) for _ in range(2)]
    for t in churners:
        t.start()
    try:
        wrong = run_threads(user)
    finally:
        stop.set()
        for t in churners:
            t.join()
    assert wrong == [[]] * THREADS
    assert churn_errors == []


def test_assigned_arrays_stay_alive_while_other_threads_assign():
    """`t[...] = array` converts the array to a tensor lent to the C copy;
    other threads assigning their own arrays meanwhile must not free it."""
    n = 1 << 17

    def work(k):
        t = th.zeros(n, dtype=th.float64)
        wrong = []
        for r in range(60):
            v = float(1000 * k + r)
            t[:] = np.full(n, v)
            if t.amin().item() != v or t.amax().item() != v:
                wrong.append(v)
        return wrong

    assert run_threads(work) == [[]] * THREADS
