"""Dense linear algebra (LAPACK) and the FFT: ember.linalg / ember.fft
against torch.linalg / torch.fft and numpy.linalg / numpy.fft, float32, ms
per call.

- solve n=1024: A x = b for a well-conditioned 1024x1024 A and one
  right-hand side (LU with partial pivoting, then two triangular solves).
- cholesky n=2048: the factor of a 2048x2048 symmetric positive-definite
  matrix.
- svd n=512: U, S, Vh of a 512x512 matrix (full_matrices=False; the
  singular values are compared).
- inv 4096x4x4: a batch of 4096 inverses of 4x4 matrices (libTH inverts
  orders 1-4 in registers, in one pass over the batch).
- rfft 2^22: the one-sided transform of 2^22 float32 samples (complex64
  result; libTH's FFT, four-step, split over the threads).
- rfft 64x2^16: a batch of 64 such transforms of 2^16 samples (whole lines
  side by side on the threads).

Ember runs through its front (ember.Tensor, no grad required), as a user's
program does.
"""
from __future__ import annotations

from functools import partial

import numpy as np

from timing import Stmt

from . import Case, Unsupported

FAMILY = "linalg"

SIZES = {
    "full": {"solve": 1024, "cholesky": 2048, "svd": 512, "batch": (4096, 4), "rfft": 1 << 22,
             "rfft_batch": (64, 1 << 16)},
    "smoke": {"solve": 16, "cholesky": 16, "svd": 8, "batch": (8, 4), "rfft": 64,
              "rfft_batch": (2, 64)},
}


def _well_conditioned(shape, seed):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return a + np.float32(shape[-1]) * np.eye(shape[-1], dtype=np.float32)


def _spd(n, seed):
    a = np.random.default_rng(seed).standard_normal((n, n)).astype(np.float32)
    return (a @ a.T / n + np.eye(n, dtype=np.float32)).astype(np.float32)


def _own(lib, mod, x):
    """x in memory that library `lib` allocated itself (ember: a front Tensor)."""
    if lib == "numpy":
        return x.copy()
    if lib == "ember":
        import ember
        t = ember.empty(tuple(x.shape), dtype=ember.float32)
    else:
        t = mod.empty(tuple(x.shape), dtype=mod.float32)
    t.numpy()[...] = x
    return t


def _la(lib, mod):
    if lib == "ember":
        import ember
        import ember.linalg
        return ember.linalg
    return mod.linalg


def _solve(n, lib, mod):
    a = _own(lib, mod, _well_conditioned((n, n), 1))
    b = _own(lib, mod, np.random.default_rng(2).standard_normal((n, 1)).astype(np.float32))
    return Stmt("la.solve(a, b)", {"la": _la(lib, mod), "a": a, "b": b},
                result="la.solve(a, b)")


def _cholesky(n, lib, mod):
    a = _own(lib, mod, _spd(n, 3))
    return Stmt("la.cholesky(a)", {"la": _la(lib, mod), "a": a}, result="la.cholesky(a)")


def _svd(n, lib, mod):
    a = _own(lib, mod, np.random.default_rng(4).standard_normal((n, n)).astype(np.float32))
    g = {"la": _la(lib, mod), "a": a}
    if lib == "numpy":
        return Stmt("la.svd(a, full_matrices=False)", g, result="la.svd(a, compute_uv=False)")
    return Stmt("la.svd(a, full_matrices=False)", g, result="la.svd(a, full_matrices=False)[1]")


def _batched_inv(batch, n, lib, mod):
    a = _own(lib, mod, _well_conditioned((batch, n, n), 5))
    return Stmt("la.inv(a)", {"la": _la(lib, mod), "a": a}, result="la.inv(a)")


def _rfft(shape, lib, mod):
    a = _own(lib, mod, np.random.default_rng(6).standard_normal(shape).astype(np.float32))
    if lib == "ember":
        import ember.fft
        fft = ember.fft
    else:
        fft = mod.fft
    return Stmt("fft.rfft(a)", {"fft": fft, "a": a}, result="fft.rfft(a)")


def cases(scale: str = "full") -> list[Case]:
    s = SIZES[scale]
    batch, n = s["batch"]
    rb, rn = s["rfft_batch"]
    return [
        Case(FAMILY, f"solve n={s['solve']} (1 rhs)", "ms/op", partial(_solve, s["solve"]),
             rtol=1e-3, atol=1e-4),
        Case(FAMILY, f"cholesky n={s['cholesky']}", "ms/op",
             partial(_cholesky, s["cholesky"]), rtol=1e-3, atol=1e-4),
        Case(FAMILY, f"svd n={s['svd']}", "ms/op", partial(_svd, s["svd"]),
             rtol=1e-3, atol=1e-3),
        Case(FAMILY, f"inv {batch}x{n}x{n}", "ms/op", partial(_batched_inv, batch, n),
             rtol=1e-4, atol=1e-5),
        Case(FAMILY, f"rfft n=2^{s['rfft'].bit_length() - 1}", "ms/op",
             partial(_rfft, (s["rfft"],)), rtol=1e-3, atol=1e-1),
        Case(FAMILY, f"rfft {rb}x2^{rn.bit_length() - 1}", "ms/op",
             partial(_rfft, (rb, rn)), rtol=1e-3, atol=1e-2),
    ]


__all__ = ["FAMILY", "cases", "Unsupported"]
