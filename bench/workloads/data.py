"""DataLoader throughput: one epoch of 100 shuffled batches of
64x1x28x28 float32 (plus int64 labels) from a TensorDataset, with 0 and 2
worker processes (the 2-worker epoch includes starting the workers, as a
user's loop does).  Reported in ms per epoch; Ember/PyTorch time below 1
means Ember delivers more batches per second.  NumPy has no form of it.
"""
from __future__ import annotations

from functools import partial

import numpy as np

from timing import Stmt

from . import Case, Unsupported

FAMILY = "data"
SIZES = {"full": 6400, "smoke": 256}


def _epoch(samples, workers, lib, mod):
    if lib == "numpy":
        raise Unsupported("NumPy has no data loader")
    if lib == "ember":
        try:
            import ember
            import ember.utils.data as data
        except ImportError as e:
            raise Unsupported(f"the ember front is not installed ({e})")
        m = ember
    else:
        import torch.utils.data as data
        m = mod
    rng = np.random.default_rng(0)
    x = m.tensor(rng.standard_normal((samples, 1, 28, 28)).astype(np.float32))
    y = m.tensor(np.arange(samples) % 10)
    loader = data.DataLoader(data.TensorDataset(x, y), batch_size=64, shuffle=True,
                             num_workers=workers)
    return Stmt("for _batch in loader: pass", {"loader": loader})


def cases(scale: str = "full") -> list[Case]:
    n = SIZES[scale]
    return [Case(FAMILY, f"DataLoader epoch, {n // 64} batches, {w} workers", "ms/op",
                 partial(_epoch, n, w)) for w in (0, 2)]
