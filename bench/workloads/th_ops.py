"""libTH's workloads: matmul, element-wise and reduction bandwidth,
and the cost of one tiny operation from Python.

- matmul n=1024, 2048 (float32, `a @ b`, allocating): GFLOP/s = 2 n^3 / time.
- add, mul (2 inputs, 1 output), exp (1 in, 1 out), sum (1 in) over 2^24
  float32, in the out= form and the allocating form (sum: allocating only):
  GB/s = logical bytes read + written / time (add/mul 12 B per element, exp 8,
  sum 4).  The allocating forms include the result's allocation and first
  touch, as a user's `a + b` does.
- tiny add: `a + b` on 1-element float32 tensors, from Python: µs/op.

Every library computes on its own, freshly allocated memory (64-byte aligned
where its allocator does so), holding the same values (uniform [0, 1)).
NumPy's element-wise ops and reductions are single-threaded whatever the
thread count; only its matmul (OpenBLAS) uses threads.
"""
from __future__ import annotations

from functools import partial

import numpy as np

from timing import Stmt

from . import Case, Unsupported

FAMILY = "th_ops"

SIZES = {
    "full": {"matmul": (1024, 2048), "elems": 1 << 24},
    "smoke": {"matmul": (16, 33), "elems": 1 << 10},
}


def _data(shape, seed):
    return np.random.default_rng(seed).random(shape, dtype=np.float32)


def _own(lib, mod, x):
    """A copy of numpy array x in memory that library `lib` allocated itself."""
    if lib == "numpy":
        return x.copy()
    t = mod.empty(tuple(x.shape), dtype=mod.float32)
    # .numpy() is zero-copy for both torch and ember.th: this fills the
    # library's own storage without going through Python lists
    t.numpy()[...] = x
    return t


def _ns(lib, mod, **arrays):
    key = {"ember": "th", "torch": "torch", "numpy": "np"}[lib]
    return {key: mod, **arrays}


def _prefix(lib):
    return {"ember": "th", "torch": "torch", "numpy": "np"}[lib]


def _matmul(n, lib, mod):
    a = _own(lib, mod, _data((n, n), 1))
    b = _own(lib, mod, _data((n, n), 2))
    return Stmt("a @ b", _ns(lib, mod, a=a, b=b), result="a @ b")


def _binary(op, form, n, lib, mod):
    a = _own(lib, mod, _data(n, 1))
    b = _own(lib, mod, _data(n, 2))
    g = _ns(lib, mod, a=a, b=b)
    if form == "out":
        g["c"] = _own(lib, mod, np.zeros(n, np.float32))
        fn = {"add": "add", "mul": "mul" if lib != "numpy" else "multiply"}[op]
        return Stmt(f"{_prefix(lib)}.{fn}(a, b, out=c)", g, result="c")
    sym = {"add": "+", "mul": "*"}[op]
    return Stmt(f"a {sym} b", g, result=f"a {sym} b")


def _exp(form, n, lib, mod):
    a = _own(lib, mod, _data(n, 1))
    g = _ns(lib, mod, a=a)
    p = _prefix(lib)
    if form == "out":
        g["c"] = _own(lib, mod, np.zeros(n, np.float32))
        return Stmt(f"{p}.exp(a, out=c)", g, result="c")
    return Stmt(f"{p}.exp(a)", g, result=f"{p}.exp(a)")


def _sum(n, lib, mod):
    a = _own(lib, mod, _data(n, 1))
    return Stmt("a.sum()", _ns(lib, mod, a=a), result="a.sum()")


def _tiny_add(lib, mod):
    if lib == "numpy":
        a = np.array([1.5], dtype=np.float32)
        b = np.array([2.25], dtype=np.float32)
    elif lib in ("torch", "ember"):
        a = mod.tensor([1.5], dtype=mod.float32)
        b = mod.tensor([2.25], dtype=mod.float32)
    else:  # pragma: no cover
        raise Unsupported(lib)
    return Stmt("a + b", {"a": a, "b": b}, result="a + b")


def cases(scale: str = "full") -> list[Case]:
    s = SIZES[scale]
    n = s["elems"]
    out = []
    for m in s["matmul"]:
        # float32 GEMM of n ~ 2048 sums 2048 products: compare loosely
        out.append(Case(FAMILY, f"matmul n={m}", "GFLOP/s", partial(_matmul, m),
                        work=2.0 * m ** 3, rtol=1e-3, atol=1e-3 * m))
    for op in ("add", "mul"):
        out.append(Case(FAMILY, f"{op} out= 2^{n.bit_length() - 1}", "GB/s",
                        partial(_binary, op, "out", n), work=12.0 * n, rtol=1e-6))
        out.append(Case(FAMILY, f"{op} alloc 2^{n.bit_length() - 1}", "GB/s",
                        partial(_binary, op, "alloc", n), work=12.0 * n, rtol=1e-6))
    out.append(Case(FAMILY, f"exp out= 2^{n.bit_length() - 1}", "GB/s",
                    partial(_exp, "out", n), work=8.0 * n, rtol=1e-5))
    out.append(Case(FAMILY, f"exp alloc 2^{n.bit_length() - 1}", "GB/s",
                    partial(_exp, "alloc", n), work=8.0 * n, rtol=1e-5))
    # summation order differs between libraries (pairwise, blocked, Kahan)
    out.append(Case(FAMILY, f"sum 2^{n.bit_length() - 1}", "GB/s", partial(_sum, n),
                    work=4.0 * n, rtol=1e-4))
    out.append(Case(FAMILY, "tiny add (1 elem, a + b)", "µs/op", _tiny_add, rtol=1e-6))
    return out
