"""Hogwild: several processes train one model whose parameters live in shared
memory, each updating them without locks (Recht et al., 2011).

    python examples/hogwild/main.py --processes 2 --steps 200

The model is a softmax regression on a synthetic 3-class problem, written
with plain ember tensors (no ember.nn needed); every process computes
gradients on its own mini-batches and applies SGD updates in place on the
shared weights.  Prints the loss before and after.
"""
import argparse

import ember
import ember.multiprocessing as mp


def make_data(n=600, seed=0):
    g = ember.Generator()
    g.manual_seed(seed)
    centers = ember.tensor([[2.0, 0.0], [-1.0, 1.7], [-1.0, -1.7]])
    y = ember.randint(0, 3, (n,), generator=g)
    x = centers[y] + 0.6 * ember.randn(n, 2, generator=g)
    return x, y


def loss_of(w, b, x, y):
    logits = x @ w + b
    return -logits.log_softmax(1).gather(1, y.unsqueeze(1)).mean()


def train(rank, w, b, steps, lr, batch_size):
    x, y = make_data()
    g = ember.Generator()
    g.manual_seed(100 + rank)
    for _ in range(steps):
        idx = ember.randint(0, x.shape[0], (batch_size,), generator=g)
        loss = loss_of(w, b, x[idx], y[idx])
        gw, gb = ember.autograd.grad(loss, (w, b))
        with ember.no_grad():
            w.sub_(lr * gw)   # in place on the shared memory, no lock
            b.sub_(lr * gb)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--processes", type=int, default=2)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--start-method", default=None, choices=["fork", "spawn", "forkserver"])
    a = p.parse_args(argv)
    w = ember.zeros(2, 3, requires_grad=True).share_memory_()
    b = ember.zeros(3, requires_grad=True).share_memory_()
    x, y = make_data()
    with ember.no_grad():
        before = loss_of(w, b, x, y).item()
    ctx = mp.get_context(a.start_method)
    procs = [ctx.Process(target=train, args=(r, w, b, a.steps, a.lr, a.batch_size))
             for r in range(a.processes)]
    for q in procs:
        q.start()
    for q in procs:
        q.join()
    if any(q.exitcode for q in procs):
        raise SystemExit(f"a training process failed: exit codes {[q.exitcode for q in procs]}")
    with ember.no_grad():
        after = loss_of(w, b, x, y).item()
        acc = ((x @ w + b).argmax(1) == y).float().mean().item()
    print(f"loss before {before:.4f}, after {after:.4f}, accuracy {acc:.3f} "
          f"({a.processes} processes x {a.steps} steps)")
    return before, after


if __name__ == "__main__":
    main()
