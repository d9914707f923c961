"""Every collective on every dtype (and every reduce operation) against a
NumPy reference; each rank makes every rank's data from the same seeds."""
import numpy as np

import ember
import ember.distributed as dist

dist.init_process_group("mpi")
R, N = dist.get_rank(), dist.get_world_size()
OP = dist.ReduceOp
FLOATS = (ember.float32, ember.float64, ember.float16, ember.bfloat16)
INTS = (ember.int8, ember.uint8, ember.int16, ember.int32, ember.int64)
ALL = FLOATS + INTS + (ember.bool,)
TOL = {ember.float32: 1e-5, ember.float64: 1e-12, ember.float16: 2e-3, ember.bfloat16: 2e-2}


def data(rank, shape, dt, salt=0):
    """Rank `rank`'s tensor: small values, so that products stay in range."""
    rng = np.random.default_rng(1000 * salt + rank)
    if dt is ember.bool:
        v = rng.random(shape) < 0.5
    elif dt in FLOATS:
        v = rng.uniform(-2, 2, shape)
    else:
        v = rng.integers(1, 4, shape)
    return ember.tensor(v, dtype=dt)


def f64(t):
    return t.to(ember.float64).numpy() if t.dtype is not ember.bool else t.numpy().copy()


def np_reduce(arrays, op, dt):
    a = np.stack(arrays)
    if dt is ember.bool:
        a = a.astype(bool)
        if op in (OP.SUM, OP.MAX, OP.BOR):
            return a.any(0)
        if op in (OP.PRODUCT, OP.MIN, OP.BAND):
            return a.all(0)
        return np.logical_xor.reduce(a, 0)
    if op in (OP.BAND, OP.BOR, OP.BXOR):
        fn = {OP.BAND: np.bitwise_and, OP.BOR: np.bitwise_or, OP.BXOR: np.bitwise_xor}[op]
        return fn.reduce(a.astype(np.int64), 0).astype(np.float64)
    out = {OP.SUM: np.sum, OP.AVG: np.mean, OP.PRODUCT: np.prod, OP.MIN: np.min,
           OP.MAX: np.max}[op](a, 0)
    if dt in INTS:    # the integer type's wrap-around
        out = np.asarray(ember.tensor(out.astype(np.int64)).to(dt).to(ember.float64).numpy())
    return out


def check(got, want, dt, what):
    g = f64(got)
    if dt in FLOATS:
        ok = np.allclose(g, want, rtol=TOL[dt], atol=TOL[dt])
    else:
        ok = np.array_equal(g, want)
    assert ok, f"rank {R} {what} {dt}: got {g} want {want}"


def ops_for(dt):
    if dt in FLOATS:
        return (OP.SUM, OP.AVG, OP.PRODUCT, OP.MIN, OP.MAX)
    return (OP.SUM, OP.PRODUCT, OP.MIN, OP.MAX, OP.BAND, OP.BOR, OP.BXOR)


shape = (3, 5)
for dt in ALL:
    mine = [data(r, shape, dt) for r in range(N)]
    ref = [f64(m) for m in mine]
    for op in ops_for(dt):
        # all_reduce, on a contiguous and on a transposed (non-contiguous) tensor
        x = mine[R].clone()
        dist.all_reduce(x, op=op)
        check(x, np_reduce(ref, op, dt), dt, f"all_reduce {op}")
        xt = mine[R].t().contiguous().t()
        w = dist.all_reduce(xt, op=op, async_op=True)
        w.wait()
        assert w.is_completed()
        check(xt, np_reduce(ref, op, dt), dt, f"all_reduce non-contiguous {op}")
        # reduce to the last rank: only the destination's tensor is defined
        y = mine[R].clone()
        dist.reduce(y, dst=N - 1, op=op)
        if R == N - 1:
            check(y, np_reduce(ref, op, dt), dt, f"reduce {op}")
        # reduce_scatter_tensor: rank r keeps the r-th reduced chunk
        big = [data(r, (N * 2, 3), dt, salt=7) for r in range(N)]
        out = ember.empty(2, 3, dtype=dt)
        dist.reduce_scatter_tensor(out, big[R], op=op)
        want = np_reduce([f64(b) for b in big], op, dt)[2 * R:2 * R + 2]
        check(out, want, dt, f"reduce_scatter_tensor {op}")
    # broadcast from rank 1
    b = mine[R].clone()
    dist.broadcast(b, src=1)
    check(b, ref[1], dt, "broadcast")
    # all_gather (list and tensor forms), gather and scatter
    outs = [ember.zeros(shape, dtype=dt) for _ in range(N)]
    dist.all_gather(outs, mine[R])
    for r in range(N):
        check(outs[r], ref[r], dt, "all_gather")
    cat = ember.zeros((N * 3, 5), dtype=dt)
    dist.all_gather_into_tensor(cat, mine[R])
    check(cat, np.concatenate(ref), dt, "all_gather_into_tensor")
    stacked = ember.zeros((N, 3, 5), dtype=dt).transpose(1, 2)   # non-contiguous output
    dist.all_gather_into_tensor(stacked, mine[R].t().contiguous())
    check(stacked, np.stack([r.T for r in ref]), dt, "all_gather_into_tensor stacked")
    glist = [ember.zeros(shape, dtype=dt) for _ in range(N)] if R == 0 else None
    dist.gather(mine[R], glist, dst=0)
    if R == 0:
        for r in range(N):
            check(glist[r], ref[r], dt, "gather")
    s = ember.zeros(shape, dtype=dt)
    pieces = [data(100 + r, shape, dt) for r in range(N)]
    dist.scatter(s, pieces if R == N - 1 else None, src=N - 1)
    check(s, f64(pieces[R]), dt, "scatter")
    # all_to_all_single: rank r sends r + 1 rows to every rank
    rows_in = [R + 1] * N
    inp = data(R, (sum(rows_in), 2), dt, salt=3)
    out = ember.zeros((sum(r + 1 for r in range(N)), 2), dtype=dt)
    dist.all_to_all_single(out, inp, [r + 1 for r in range(N)], rows_in)
    want = np.concatenate([f64(data(r, ((r + 1) * N, 2), dt, salt=3))[R * (r + 1):(R + 1) * (r + 1)]
                           for r in range(N)])
    check(out, want, dt, "all_to_all_single")
    even = data(R, (2 * N,), dt, salt=4)
    out2 = ember.zeros(2 * N, dtype=dt)
    dist.all_to_all_single(out2, even)
    want = np.concatenate([f64(data(r, (2 * N,), dt, salt=4))[2 * R:2 * R + 2] for r in range(N)])
    check(out2, want, dt, "all_to_all_single even")
    # point to point, around the ring (isend/irecv) and 0 -> 1 (send/recv)
    t = ember.zeros(shape, dtype=dt)
    reqs = [dist.isend(mine[R], (R + 1) % N, tag=5), dist.irecv(t, (R - 1) % N, tag=5)]
    for q in reqs:
        q.wait()
    check(t, ref[(R - 1) % N], dt, "isend/irecv")
    if R == 0:
        dist.send(mine[0], 1)
    elif R == 1:
        t2 = ember.zeros(shape, dtype=dt)
        assert dist.recv(t2) == 0
        check(t2, ref[0], dt, "send/recv")

# several async collectives in flight, waited in reverse order
xs = [ember.full((1000,), float(R + i)) for i in range(4)]
works = [dist.all_reduce(x, async_op=True) for x in xs]
for w in reversed(works):
    w.wait()
for i, x in enumerate(xs):
    assert np.allclose(x.numpy(), sum(r + i for r in range(N))), x

# objects
objs = [None] * N
dist.all_gather_object(objs, {"rank": R, "payload": list(range(R))})
assert objs == [{"rank": r, "payload": list(range(r))} for r in range(N)], objs
lst = [R, "x" * R, None] if R == 1 else [None, None, None]
dist.broadcast_object_list(lst, src=1)
assert lst == [1, "x", None], lst

# a subgroup of the even ranks; the others are not members
evens = list(range(0, N, 2))
g = dist.new_group(evens)
if R in evens:
    v = ember.full((4,), float(R))
    dist.all_reduce(v, group=g)
    assert np.allclose(v.numpy(), sum(evens)) and dist.get_rank(g) == evens.index(R)
    b = ember.full((2,), float(R))
    dist.broadcast(b, src=evens[-1], group=g)
    assert np.allclose(b.numpy(), evens[-1])
else:
    assert g is dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(g) == -1
dist.barrier()
dist.destroy_process_group()
print(f"rank {R} DONE", flush=True)
