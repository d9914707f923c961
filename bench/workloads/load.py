"""Under load: the training steps while two other processes keep the cores
busy (what DataLoader workers, a second job or a shared CI box do), and the
training command's epoch with worker processes against without.

The harness starts the busy processes before each case's samples and stops
them after (run.py, Case.busy): Ember and PyTorch are timed interleaved
under the same load.  Compare with the quiet rows of the nn family in the
same run (`--only 'nn|load'`): the targets are Ember <= 1.0x PyTorch's time
under load, and <= 3x Ember's own quiet 1-thread time.

The epoch rows run `ember-vision train --dataset mnist --limit 3000
--epochs 1 --workers N` in the bench process (Ember only; the whole command:
loading, one epoch, the test pass, the report).  They read the MNIST IDX
files from $EMBER_BENCH_MNIST when set, else from 3000 + 1000 synthetic
images written in the same format (the same decoding, transforms and worker
processes; the figures then say nothing about accuracy).
"""
from __future__ import annotations

import contextlib
import gzip
import io
import os
import struct
import tempfile
from functools import partial

import numpy as np

from timing import Stmt

from . import Case, Unsupported
from .nn import _lenet, _mlp

FAMILY = "under load"
BUSY = 2  # busy processes beside the timed one


def _write_idx(path, array):
    kind = {1: 0x08}[array.dtype.itemsize]
    header = struct.pack(">BBBB", 0, 0, kind, array.ndim) + b"".join(
        struct.pack(">I", d) for d in array.shape)
    with gzip.open(path, "wb", compresslevel=1) as f:
        f.write(header + array.tobytes())


def _synthetic_mnist(root, train, test):
    rng = np.random.default_rng(0)
    for prefix, n in (("train", train), ("t10k", test)):
        labels = rng.integers(0, 10, n).astype(np.uint8)
        images = rng.integers(0, 256, (n, 28, 28)).astype(np.uint8)
        _write_idx(os.path.join(root, f"{prefix}-images-idx3-ubyte.gz"), images)
        _write_idx(os.path.join(root, f"{prefix}-labels-idx1-ubyte.gz"), labels)


def _epoch(workers, scale, lib, mod):
    if lib != "ember":
        raise Unsupported("the training command is Ember's")
    try:
        from ember.vision import train
    except ImportError as e:
        raise Unsupported(f"ember-vision is not installed ({e})")
    tmp = tempfile.mkdtemp(prefix="ember-bench-epoch-")
    root = os.environ.get("EMBER_BENCH_MNIST")
    limit = 3000 if scale == "full" else 128
    if not root:
        root = os.path.join(tmp, "mnist")
        os.makedirs(root)
        _synthetic_mnist(root, limit, limit // 3)
    argv = ["--dataset", "mnist", "--root", root, "--limit", str(limit), "--epochs", "1",
            "--workers", str(workers), "--out", os.path.join(tmp, "run")]

    def run():
        sink = io.StringIO()
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            train.main(argv)
    return Stmt("run()", {"run": run})


def cases(scale: str = "full") -> list[Case]:
    return [
        Case(FAMILY, f"LeNet training step (batch 64), {BUSY} busy processes", "ms/op", _lenet,
             busy=BUSY),
        Case(FAMILY, f"MLP 784-512-512-10 training step (batch 128), {BUSY} busy processes",
             "ms/op", _mlp, busy=BUSY),
        Case(FAMILY, "ember-vision train, mnist --limit 3000, 1 epoch, --workers 0", "s",
             partial(_epoch, 0, scale)),
        Case(FAMILY, "ember-vision train, mnist --limit 3000, 1 epoch, --workers 2", "s",
             partial(_epoch, 2, scale)),
    ]
