"""A tour of ember.th, Ember's raw CPU tensors (no autograd yet).

    python -m pip install ./packages/th && python examples/th_demo.py

Each step prints its result and checks it against NumPy; the script ends with
"th_demo: all checks passed" or stops at the first difference.
"""
import time

import numpy as np

import ember.th as th


def check(name, got, want, rtol=1e-5, atol=1e-6):
    got = got.numpy() if hasattr(got, "numpy") else np.asarray(got)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=name)


def main():
    print(f"ember.th {getattr(th, '__version__', '?')}, "
          f"{th.get_num_threads()} thread(s)\n")

    # creation, printing, dtypes
    x = th.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=th.float32)
    print("x =", x)
    print("x.dtype =", x.dtype, " x.shape =", tuple(x.shape))
    ones = th.ones((2, 3), dtype=th.float32)
    print("th.full((2, 3), 7) =", th.full((2, 3), 7.0, dtype=th.float32))
    print("th.arange(5) =", th.arange(5))

    # element-wise math with operators, functions and out=
    y = x + ones
    print("\nx + 1 =", y)
    check("add", y, [[2, 3, 4], [5, 6, 7]])
    out = th.empty((2, 3), dtype=th.float32)
    th.mul(x, x, out=out)
    print("th.mul(x, x, out=out) ->", out)
    check("mul out=", out, np.array([[1, 2, 3], [4, 5, 6]], np.float32) ** 2)
    e = th.exp(x)
    print("th.exp(x) =", e)
    check("exp", e, np.exp(np.array([[1, 2, 3], [4, 5, 6]], np.float32)))
    s = x.sum()
    print("x.sum() =", s)
    check("sum", s, 21.0)

    # matrix product
    w = th.randn(3, 4)
    p = x @ w
    print("\n(x @ w).shape =", tuple(p.shape))
    check("matmul", p, x.numpy() @ w.numpy(), rtol=1e-4, atol=1e-4)
    check("th.matmul", th.matmul(x, w), x.numpy() @ w.numpy(), rtol=1e-4, atol=1e-4)

    # zero-copy exchange with NumPy, both ways
    arr = np.arange(6, dtype=np.float32)
    t = th.from_numpy(arr)
    arr[0] = 100.0  # t sees the change: it shares arr's memory
    print("\nth.from_numpy(arr) after arr[0] = 100:", t)
    check("from_numpy shares memory", t, arr)
    back = t.numpy()
    back[1] = -1.0
    print("t.numpy() shares memory too: arr =", arr)
    check("numpy() shares memory", arr, [100, -1, 2, 3, 4, 5])

    # threads and a larger matmul
    n = 512
    a, b = th.rand(n, n), th.rand(n, n)
    for threads in (1, 2):
        th.set_num_threads(threads)
        a @ b  # warm-up
        best = float("inf")
        for _ in range(5):  # best of 5: the machine may be busy with other work
            t0 = time.perf_counter()
            c = a @ b
            best = min(best, time.perf_counter() - t0)
        print(f"\nmatmul {n}x{n} on {th.get_num_threads()} thread(s): "
              f"{best * 1e3:.2f} ms ({2 * n ** 3 / best / 1e9:.1f} GFLOP/s)", end="")
    check("matmul 512", c, a.numpy() @ b.numpy(), rtol=1e-3, atol=1e-2)
    print("\n\nth_demo: all checks passed")


if __name__ == "__main__":
    main()
