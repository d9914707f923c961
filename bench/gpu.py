#!/usr/bin/env python3
"""Ember's GPU benchmark: Ember (ember.thc, through the ember front) against
PyTorch CUDA, in one run.

    python bench/gpu.py                  # every workload: 15 rounds of >= 50 ms samples
    python bench/gpu.py --quick          # 5 rounds of >= 20 ms samples
    python bench/gpu.py --only matmul    # workloads whose key or name matches a regex
    python bench/gpu.py --smoke          # tiny sizes on whatever device there is (tests the harness)
    python bench/gpu.py --list           # the workloads

The workloads and their targets:

- `a + b` over 2^26 float32 (GB/s, 12 bytes per element) at >= 0.9x PyTorch's
  GB/s, and at >= 0.8x the device-to-device copy bandwidth (`b.copy_(a)`,
  8 bytes per element), measured with each library: the higher of the two
  copy figures is the device's copy bandwidth;
- matmul 4096x4096, float32 and bfloat16 (TFLOP/s, 2n^3 flops) at >= 0.9x
  PyTorch's; the header says whether Ember's products run on cuBLAS;
- a ResNet-18 training step, batch 64 of 3x224x224 (SGD with momentum,
  cross-entropy: zero_grad, forward, backward, step): ms/step at <= 1.25x
  PyTorch's time, and the peak memory of one step at <= 1.1x PyTorch's;
- a LeNet training step, batch 64 of 1x28x28 (bench/workloads/nn.py's
  network), ms/step and peak memory (no target).

Both libraries run in this one process on the same GPU, on the same values
(NumPy arrays uploaded by each), interleaved: one sample of each library per
round, in a seeded shuffled order.  A sample is a `timeit` loop calibrated
(timing.calibrate) to last at least the minimum sample time; the device is
synchronized (ember.cuda.synchronize() / torch.cuda.synchronize()) right
before the clock is read at the sample's start and at its end, so a sample
covers all the GPU work it queued.  Warm-up calls come first.  Figures are
medians.  Each result is checked once, before timing, against PyTorch's
(np.allclose with a tolerance for the dtype); a figure whose result differs
is flagged as not comparable (exit status 3).

PyTorch runs in float32 for float32 work (TF32 off for matmul and cuDNN
convolutions; Ember's products use cuBLAS's strict float32 compute type):
`--allow-tf32` keeps PyTorch's defaults (cuDNN convolutions in TF32), which
then compares different arithmetic.

Without a GPU (no PyTorch CUDA, or no Ember CUDA device, or only the
emulated one) the script prints one line saying so and exits 0
(`--require-gpu`: exits 1 instead).  `--smoke` runs tiny sizes on whatever
there is: Ember on its device (the emulated one of a host-only ember-thc with
EMBER_THC_EMULATE=1), PyTorch where it has CUDA (else its columns are empty
and a note says why); without PyTorch the add, copy and matmul results are
checked against NumPy's instead.

The table goes to stdout (progress to stderr) and is saved, with every
sample, as JSON in bench/results/ (ignored by git): `--out FILE.md` to
choose, `--no-save` for none.  Exit status: 0; 1 when a library failed on a
workload it has (the notes say which) or no GPU with --require-gpu; 2 for a
--only that matches nothing; 3 when a result differs from PyTorch's.  No time
is asserted on.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import re
import subprocess
import sys
import time
import timeit
from dataclasses import dataclass
from typing import Callable

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import sysinfo  # noqa: E402
from run import NOISY, SETTINGS, _fmt  # noqa: E402
from timing import interleaved  # noqa: E402
from workloads import Unsupported  # noqa: E402
from workloads.nn import _copy_weights, _step_stmt, lenet  # noqa: E402
from workloads.vision import _weights as resnet18_weights, torch_resnet18  # noqa: E402

LIBS = ("ember", "torch")
LABEL = {"ember": "Ember", "torch": "PyTorch"}
UNITS = {"GB/s": 1e9, "TFLOP/s": 1e12}  # throughput units: work per second / scale
WARMUP = {"full": 3, "quick": 3, "smoke": 1}  # calls before calibrating


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="5 rounds of >= 20 ms samples instead of 15 of >= 50 ms")
    p.add_argument("--smoke", action="store_true",
                   help="tiny sizes, 2 short rounds, on whatever device there is (the emulated one too): "
                        "checks the harness itself; figures are meaningless")
    p.add_argument("--only", metavar="REGEX", help="run the workloads whose key or name matches this regular expression")
    p.add_argument("--rounds", type=int, help="interleaved samples per library (overrides --quick)")
    p.add_argument("--min-sample-ms", type=float, help="shortest sample in ms (overrides --quick)")
    p.add_argument("--out", metavar="FILE.md", help="save the table here, and the JSON beside it "
                                                     "(default bench/results/gpu-<date>.md)")
    p.add_argument("--no-save", action="store_true", help="print only, save nothing")
    p.add_argument("--list", action="store_true", help="list the workloads and exit")
    p.add_argument("--allow-tf32", action="store_true",
                   help="keep PyTorch's TF32 defaults (cuDNN convolutions in TF32) instead of float32 math")
    p.add_argument("--require-gpu", action="store_true",
                   help="exit 1 (not 0) when there is no GPU to benchmark on (for device checks)")
    # testing the harness's PyTorch side where PyTorch has no CUDA: with --smoke
    # only, PyTorch runs on the CPU (its figures and memory then mean nothing)
    p.add_argument("--torch-cpu", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.torch_cpu and not args.smoke:
        p.error("--torch-cpu is only for --smoke runs")
    args.mode = "smoke" if args.smoke else "quick" if args.quick else "full"
    rounds, min_ms = SETTINGS[args.mode]
    args.rounds = args.rounds or rounds
    args.min_sample_ms = args.min_sample_ms or min_ms
    return args


# ------------------------------------------------------------- libraries ----

class Lib:
    """One library on its device: its module, nn parts, and device calls."""

    def __init__(self, name, m, nn, F, optim, device, sync, memory):
        self.name, self.label = name, LABEL[name]
        self.m, self.nn, self.F, self.optim, self.device = m, nn, F, optim, device
        self.sync = sync
        self.memory = memory  # (reset_peak, max_allocated, allocated, empty_cache) or None

    def upload(self, a: np.ndarray):
        return self.m.from_numpy(np.ascontiguousarray(a)).to(self.device)

    def to_numpy(self, t) -> np.ndarray:
        t = t.detach()
        if t.is_floating_point():
            t = t.to(self.m.float32)  # NumPy has no bfloat16
        return t.cpu().numpy()

    def empty_cache(self):
        if self.memory:
            self.memory[3]()


def load_ember():
    """(Lib, None) with an Ember CUDA device (the emulated one included), or
    (None, why not)."""
    try:
        import ember
        import ember.cuda
    except Exception as e:  # noqa: BLE001 - reported
        return None, f"the ember front is not importable ({type(e).__name__}: {e})"
    try:
        import ember.thc as thc
    except Exception as e:  # noqa: BLE001
        return None, f"ember-thc is not importable ({type(e).__name__}: {e})"
    try:
        if thc.device_count() == 0:
            return None, f"ember-thc found no CUDA device ({thc.cuda_error_text() or 'no reason given'})"
        if not ember.cuda.is_available():
            return None, "ember.cuda.is_available() is False although ember-thc has a device"
        import ember.nn as nn
        import ember.nn.functional as F
        import ember.optim as optim
    except Exception as e:  # noqa: BLE001
        return None, f"Ember's CUDA side failed to load ({type(e).__name__}: {e})"
    c = ember.cuda
    mem = (c.reset_peak_memory_stats, c.max_memory_allocated, c.memory_allocated, c.empty_cache)
    return Lib("ember", ember, nn, F, optim, "cuda", c.synchronize, mem), None


def load_torch(on_cpu=False):
    """(Lib, None) with PyTorch on CUDA (on the CPU for --torch-cpu), or (None, why not)."""
    try:
        import torch
    except ImportError as e:
        return None, f"PyTorch is not installed ({e})"
    if on_cpu:
        return Lib("torch", torch, torch.nn, torch.nn.functional, torch.optim, "cpu",
                   lambda: None, None), None
    if not torch.cuda.is_available():
        why = "no CUDA device" if torch.version.cuda else "a CPU-only build"
        return None, f"PyTorch {torch.__version__} has no CUDA here ({why})"
    c = torch.cuda
    mem = (c.reset_peak_memory_stats, c.max_memory_allocated, c.memory_allocated, c.empty_cache)
    return Lib("torch", torch, torch.nn, torch.nn.functional, torch.optim, "cuda",
               c.synchronize, mem), None


def torch_float32_math(torch, allow_tf32):
    """Float32 work in float32 (not TF32) unless allow_tf32; returns what is in effect."""
    b = torch.backends
    if hasattr(b.cuda.matmul, "fp32_precision") and hasattr(b.cudnn, "conv"):
        # the current API (mixing it with the allow_tf32 flags raises on reading them)
        if not allow_tf32:
            b.cuda.matmul.fp32_precision = "ieee"
            b.cudnn.conv.fp32_precision = "ieee"
        return (f"matmul fp32_precision={b.cuda.matmul.fp32_precision}, "
                f"cuDNN conv fp32_precision={b.cudnn.conv.fp32_precision}")
    if not allow_tf32:
        b.cuda.matmul.allow_tf32 = False
        b.cudnn.allow_tf32 = False
    return (f"matmul allow_tf32={b.cuda.matmul.allow_tf32}, "
            f"cuDNN allow_tf32={b.cudnn.allow_tf32}")


# ------------------------------------------------------------- workloads ----

@dataclass
class Work:
    """One library's form of a workload: the statement timed, its names, and
    its result (a NumPy array, computed once before timing) for the check."""

    stmt: str
    globals: dict
    check: np.ndarray | None = None


@dataclass
class Target:
    op: str  # ">=" or "<="
    value: float

    def met(self, x):
        return x >= self.value if self.op == ">=" else x <= self.value

    def __str__(self):
        return f"{'≥' if self.op == '>=' else '≤'} {self.value:g}"


@dataclass
class Case:
    key: str
    name: str
    unit: str  # GB/s, TFLOP/s (work per second) or ms/step
    make: Callable  # (Lib) -> Work, or raises Unsupported
    work: float = 0.0  # bytes or flops per call
    rtol: float = 1e-5
    atol: float = 0.0
    reference: Callable | None = None  # () -> NumPy's result, when PyTorch has none
    target: Target | None = None  # on Ember / PyTorch
    memory: bool = False  # also measure one call's peak memory
    memory_target: Target | None = None  # on Ember / PyTorch peak bytes

    def figure(self, per_call_s):
        if self.unit in UNITS:
            return self.work / per_call_s / UNITS[self.unit]
        return per_call_s * 1e3  # ms/step


def _host(seed, shape, normal=False):
    g = np.random.default_rng(seed)
    return (g.standard_normal(shape, dtype=np.float32) if normal
            else g.random(shape, dtype=np.float32))


def _bf16_round(a):
    """float32 values rounded to the nearest bfloat16 (ties to even), as float32."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32)


def _elementwise(n):
    A, B = (lambda: _host(0, n)), (lambda: _host(1, n))

    def add(lib):
        a, b = lib.upload(A()), lib.upload(B())
        return Work("a + b", {"a": a, "b": b}, check=lib.to_numpy(a + b))

    def copy(lib):
        a = lib.upload(A())
        b = lib.m.empty_like(a)
        b.copy_(a)
        return Work("b.copy_(a)", {"a": a, "b": b}, check=lib.to_numpy(b))

    size = f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else str(n)
    return [
        Case("add", f"add a + b, {size} float32", "GB/s", add, work=12.0 * n,
             reference=lambda: A() + B(), target=Target(">=", 0.9)),
        Case("copy", f"copy b.copy_(a), {size} float32 (device to device)", "GB/s", copy,
             work=8.0 * n, reference=A),
    ]


def _matmul(n):
    A, B = (lambda: _host(2, (n, n), normal=True)), (lambda: _host(3, (n, n), normal=True))

    def make(dtype):
        def mk(lib):
            a, b = lib.upload(A()), lib.upload(B())
            if dtype == "bfloat16":
                a, b = a.to(lib.m.bfloat16), b.to(lib.m.bfloat16)
            return Work("a @ b", {"a": a, "b": b}, check=lib.to_numpy(a @ b))
        return mk

    def ref(dtype):
        def r():
            a, b = A().astype(np.float64), B().astype(np.float64)
            if dtype == "bfloat16":
                a, b = _bf16_round(a.astype(np.float32)), _bf16_round(b.astype(np.float32))
            return a @ b
        return r

    # Entries are sums of n products of N(0, 1) values: about sqrt(n) in size.
    # float32: summation orders differ by up to ~2e-4 at n = 4096 (measured
    # with NumPy), well inside atol 1e-6 * n; TF32 inputs (10-bit mantissas)
    # differ by ~0.1 there: flagged.  bfloat16: the result is rounded to 8
    # significant bits (rtol 2e-2 is 2-5 of its steps); atol 2e-2 * sqrt(n)
    # also admits split-K with bfloat16 partial sums (PyTorch's default
    # allow_bf16_reduced_precision_reduction), which at n = 4096 in two
    # parts needs 1.5e-2 * sqrt(n) near zero, but not a wrong product.
    return [
        Case("matmul-f32", f"matmul {n}x{n} float32", "TFLOP/s", make("float32"),
             work=2.0 * n ** 3, rtol=1e-4, atol=1e-6 * n, reference=ref("float32"),
             target=Target(">=", 0.9)),
        Case("matmul-bf16", f"matmul {n}x{n} bfloat16", "TFLOP/s", make("bfloat16"),
             work=2.0 * n ** 3, rtol=2e-2, atol=2e-2 * n ** 0.5, reference=ref("bfloat16"),
             target=Target(">=", 0.9)),
    ]


def _device_kernels(n, rows, cols):
    """The hot paths beyond add and matmul, each in GB/s of the bytes it must
    move (no targets): a full sum, argmax, cumsum and sort over n float32
    elements, softmax over `rows` lines of `cols` (a language model's
    logits) and a draw from each of those lines (multinomial)."""
    X = lambda: _host(4, n, normal=True)  # noqa: E731
    L = lambda: _host(5, (rows, cols), normal=True)  # noqa: E731

    def one_hot():   # every line's weight on one category: the same draws in both
        p = np.zeros((rows, cols), np.float32)
        p[np.arange(rows), np.random.default_rng(6).integers(0, cols, rows)] = 1.0
        return p

    def over(stmt, data=X):
        def mk(lib):
            x = lib.upload(data())
            g = {"x": x, "F": lib.F}
            out = eval(stmt, g)
            if isinstance(out, tuple):
                out = out[0]
            return Work(stmt, g, check=lib.to_numpy(out))
        return mk

    size = f"2^{n.bit_length() - 1}"
    return [
        Case("sum", f"sum x.sum(), {size} float32", "GB/s", over("x.sum()"), work=4.0 * n,
             rtol=1e-4, atol=1e-3 * n ** 0.5, reference=lambda: X().astype(np.float64).sum()),
        Case("argmax", f"argmax x.argmax(), {size} float32", "GB/s", over("x.argmax()"),
             work=4.0 * n, reference=lambda: np.argmax(X())),
        Case("cumsum", f"cumsum x.cumsum(0), {size} float32", "GB/s", over("x.cumsum(0)"),
             work=8.0 * n, rtol=1e-3, atol=1e-2 * n ** 0.5,
             reference=lambda: np.cumsum(X().astype(np.float64))),
        Case("sort", f"sort x.sort(), {size} float32", "GB/s", over("x.sort()"),
             work=8.0 * n, reference=lambda: np.sort(X())),
        Case("softmax", f"softmax F.softmax(x, 1), {rows}x{cols} float32", "GB/s",
             over("F.softmax(x, 1)", L), work=8.0 * rows * cols, rtol=1e-4, atol=1e-7,
             reference=lambda: _softmax(L().astype(np.float64))),
        Case("multinomial", f"multinomial x.multinomial(1), {rows}x{cols} float32", "GB/s",
             over("x.multinomial(1)", one_hot), work=4.0 * rows * cols,
             reference=lambda: one_hot().argmax(1)[:, None]),
    ]


def _softmax(a):
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _train_step(lib, model, x, y):
    """A training step (workloads/nn.py's: SGD lr 0.01 momentum 0.9, zero_grad,
    cross-entropy forward, backward, step), and the logits of the untrained
    model in training mode for the check."""
    model.train()
    with lib.m.no_grad():
        logits = lib.to_numpy(model(x))
    stmt = _step_stmt(lib.m, lib.F, model, x, y)
    return Work(stmt.stmt, stmt.globals, check=logits)


def _resnet18(batch, side):
    weights = {}

    def make(lib):
        if lib.name == "ember":
            try:
                import ember.vision.models as models
            except ImportError as e:
                raise Unsupported(f"ember.vision is not installed ({e})")
            model = models.resnet18()
        else:
            model = torch_resnet18(lib.nn)
        if not weights:  # the same weights for both: workloads/vision.py's
            try:
                weights.update(resnet18_weights(0))
            except ImportError as e:
                raise Unsupported(f"ember.vision is not installed ({e})")
        model.load_state_dict({k: lib.m.from_numpy(v) for k, v in weights.items()})
        model.to(lib.device)
        x = lib.upload(_host(1, (batch, 3, side, side), normal=True))
        y = lib.upload(np.random.default_rng(3).integers(0, 1000, batch))
        return _train_step(lib, model, x, y)

    return make


def _lenet(batch):
    def make(lib):
        model = lenet(lib.nn)
        _copy_weights(model, lib.m, 1)
        model.to(lib.device)
        x = lib.upload(_host(2, (batch, 1, 28, 28), normal=True))
        y = lib.upload(np.random.default_rng(3).integers(0, 10, batch))
        return _train_step(lib, model, x, y)

    return make


def cases(scale="full"):
    if scale == "smoke":
        n_elem, n_mm, rn, ln, n_k, lm = 1 << 16, 64, (2, 32), 4, 1 << 12, (4, 1000)
    else:
        n_elem, n_mm, rn, ln, n_k, lm = 1 << 26, 4096, (64, 224), 64, 1 << 24, (1024, 50257)
    b, side = rn
    # logits after 18 layers in float32: summation order differs (cuDNN's
    # algorithms against Ember's), as in workloads/vision.py's CPU check
    return _elementwise(n_elem) + _matmul(n_mm) + _device_kernels(n_k, *lm) + [
        Case("resnet18", f"ResNet-18 training step (batch {b}, 3x{side}x{side}, SGD momentum)",
             "ms/step", _resnet18(b, side), rtol=1e-3, atol=1e-3,
             target=Target("<=", 1.25), memory=True, memory_target=Target("<=", 1.1)),
        Case("lenet", f"LeNet training step (batch {ln}, 1x28x28, SGD momentum)", "ms/step",
             _lenet(ln), rtol=1e-4, atol=1e-4, memory=True),
    ]


def select_cases(args):
    out = cases("smoke" if args.smoke else "full")
    if args.only:
        rx = re.compile(args.only)
        out = [c for c in out if rx.search(c.key) or rx.search(c.name)]
    return out


# ---------------------------------------------------------------- timing ----

def synced_timer(stmt, g, sync):
    """A timeit.Timer whose clock synchronizes the device before it is read:
    at a sample's start (work queued before is not counted) and at its end
    (all the work the sample queued is)."""
    def clock():
        sync()
        return time.perf_counter()
    return timeit.Timer(stmt, globals=g, timer=clock)


def interleaved_synced(works, libs, rounds, min_sample_s, warmup, errors, seed=0):
    """timing.interleaved with the device synchronized around each sample."""
    return interleaved(works, rounds, min_sample_s, errors, seed=seed, warmup=warmup,
                       make_timer=lambda name, w: synced_timer(w.stmt, w.globals,
                                                               libs[name].sync))


def peak_memory(lib, work):
    """Peak bytes allocated by lib's tensors during one call, and before it."""
    reset, peak, allocated, _ = lib.memory
    lib.sync()
    before = allocated()
    reset()
    exec(work.stmt, work.globals)  # noqa: S102 - our own statement
    lib.sync()
    return peak(), before


def check(case, works, ref_name, ref_label, ref):
    """{lib: why its result is not comparable}: each library's result (but
    the reference library's own) against the reference result."""
    bad = {}
    for name, w in works.items():
        if name == ref_name or w.check is None or ref is None:
            continue
        got = np.asarray(w.check, dtype=np.float64)
        want = np.asarray(ref, dtype=np.float64)
        if got.shape != want.shape:
            bad[name] = f"result shape {got.shape}, {ref_label}'s {want.shape}"
        elif not np.allclose(got, want, rtol=case.rtol, atol=case.atol):
            err = np.abs(got - want)
            bad[name] = (f"result differs from {ref_label}'s: max abs diff {err.max():.3g} "
                         f"(rtol {case.rtol:g}, atol {case.atol:g}; "
                         f"{np.mean(~np.isclose(got, want, rtol=case.rtol, atol=case.atol)):.2%} "
                         "of the elements outside)")
    return bad


def run_case(case, libs, args):
    works, errors, unsupported = {}, {}, {}
    for name, lib in libs.items():
        try:
            works[name] = case.make(lib)
        except Unsupported as e:
            unsupported[name] = f"no form of this workload: {e}"
        except Exception as e:  # noqa: BLE001
            errors[name] = f"setup failed: {type(e).__name__}: {e}"
    if "torch" in works and works["torch"].check is not None:
        ref_lib, ref = "PyTorch", works["torch"].check
    elif case.reference is not None:
        ref_lib, ref = "NumPy", case.reference()
    else:
        ref_lib, ref = None, None
    mismatch = check(case, works, "torch" if ref_lib == "PyTorch" else None, ref_lib, ref)
    checked = ref_lib is not None and "ember" in works
    for w in works.values():
        w.check = None  # the NumPy copies are no longer needed
    samples = interleaved_synced(works, libs, args.rounds, args.min_sample_ms / 1e3,
                                 WARMUP[args.mode], errors)
    memory = {}
    if case.memory:
        for name in samples:
            lib = libs[name]
            if lib.memory is None:
                continue
            try:
                peak, before = peak_memory(lib, works[name])
                memory[name] = {"peak_bytes": peak, "before_bytes": before}
            except Exception as e:  # noqa: BLE001
                errors[name] = f"peak memory: {type(e).__name__}: {e}"
    row = {
        "key": case.key, "name": case.name, "unit": case.unit, "work": case.work,
        "libs": {name: {"median_s": s.median_s, "figure": case.figure(s.median_s),
                        "number": s.number, "spread": s.spread, "samples_s": s.per_call_s}
                 for name, s in samples.items()},
        "memory": memory, "errors": errors, "unsupported": unsupported,
        "mismatch": mismatch,
        "checked_against": ref_lib if checked else None,
    }
    del works, samples
    gc.collect()
    for lib in libs.values():
        lib.empty_cache()
    return row


# ---------------------------------------------------------------- report ----

def gpu_info(torch_lib, ember_lib):
    """What the header says about the device."""
    out = {}
    try:
        q = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.max.sm",
                            "--format=csv,noheader"], capture_output=True, text=True, timeout=20)
        if q.returncode == 0 and q.stdout.strip():
            out["nvidia_smi"] = q.stdout.strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError):
        pass
    if torch_lib is not None and torch_lib.device == "cuda":
        t = torch_lib.m
        out["torch_device"] = t.cuda.get_device_name(0)
        out["torch_cuda"] = t.version.cuda
        out["torch_cudnn"] = t.backends.cudnn.version()
    if ember_lib is not None:
        import ember.thc as thc
        out["ember_emulated"] = thc.is_emulated()
        out["ember_built_with_cuda"] = thc.built_with_cuda()
        out["ember_device"] = ("the emulated device (host memory)" if thc.is_emulated()
                               else f"CUDA device {thc.current_device()} of {thc.device_count()}")
    return out


def versions():
    from importlib.metadata import PackageNotFoundError, version
    out = {}
    for dist in ("ember", "ember-thc", "ember-thcunn", "ember-nn", "ember-vision"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            pass
    return out


def cublas_state():
    """Whether ember.thc's products run on cuBLAS, and if not why."""
    import ember.thc as thc
    if thc.cublas_available():
        return True, ""
    why = ""
    text = getattr(thc, "cublas_error_text", None)
    try:
        if text is not None:
            why = text()
        else:  # the C call has no Python wrapper
            why = thc._ffi.string(thc._lib.thc_cublas_error_text()).decode(errors="replace")
    except Exception:  # noqa: BLE001
        pass
    return False, why


def table_rows(rows):
    """The table's rows: one per workload, plus the add/copy fraction and the
    peak-memory rows."""
    out, by_key = [], {r["key"]: r for r in rows}
    all_cases = {c.key: c for c in cases("full")}
    for r in rows:
        case = all_cases[r["key"]]
        fig = {k: r["libs"][k]["figure"] if k in r["libs"] else None for k in LIBS}
        noisy = {k: k in r["libs"] and r["libs"][k]["spread"] > NOISY for k in LIBS}
        ratio = fig["ember"] / fig["torch"] if fig["ember"] and fig["torch"] else None
        out.append({"name": r["name"], "unit": r["unit"], "fig": fig, "noisy": noisy,
                    "ratio": ratio, "target": case.target, "mismatch": bool(r["mismatch"])})
        if case.memory:
            mem = {k: r["memory"][k]["peak_bytes"] / 2 ** 20 if k in r["memory"] else None
                   for k in LIBS}
            ratio = mem["ember"] / mem["torch"] if mem["ember"] and mem["torch"] else None
            out.append({"name": r["name"].replace("training step", "peak memory of one step"),
                        "unit": "MiB", "fig": mem, "noisy": {}, "ratio": ratio,
                        "target": case.memory_target, "mismatch": bool(r["mismatch"])})
        if r["key"] == "copy" and "add" in by_key:
            add, c = by_key["add"], r["libs"]
            copies = [c[k]["figure"] for k in LIBS if k in c]
            if copies:
                best = max(copies)
                frac = {k: add["libs"][k]["figure"] / best if k in add["libs"] else None for k in LIBS}
                out.append({"name": "add GB/s / device copy GB/s (the higher of the two copy figures)",
                            "unit": "fraction", "fig": frac, "noisy": {}, "ratio": None,
                            "target": Target(">=", 0.8), "on_ember": True,
                            "mismatch": bool(r["mismatch"] or add["mismatch"])})
    return out


def _met(t):
    """'yes', 'no', 'not comparable', 'no figure', or None without a target."""
    target = t["target"]
    if target is None:
        return None
    value = t["fig"]["ember"] if t.get("on_ember") else t["ratio"]
    if t["mismatch"]:
        return "not comparable"
    if value is None:
        return "no figure"
    return "yes" if target.met(value) else "no"


def summary_line(rows):
    """One line for logs: how many targets were met."""
    met = [m for m in (_met(t) for t in table_rows(rows)) if m is not None]
    failed = sum(1 for r in rows if r["errors"])
    return (f"{met.count('yes')} of {len(met)} targets met, {met.count('not comparable')} "
            f"not comparable, {met.count('no figure')} without a figure"
            + (f"; {failed} workload(s) failed" if failed else ""))


def render(info, rows, notes, args, argv):
    g = info["gpu"]
    lines = [f"## GPU results: {info['date']}", ""]
    dev = g.get("nvidia_smi") or g.get("torch_device") or "no nvidia-smi, no PyTorch CUDA"
    lines.append(f"- GPU: {dev}" + (f"; PyTorch: {g['torch_device']}, CUDA {g['torch_cuda']}, "
                                   f"cuDNN {g['torch_cudnn']}" if "torch_device" in g else ""))
    v = info["versions"]
    ember = ", ".join(f"{k} {val}" for k, val in v.items()) or "not installed"
    if "ember_device" in g:
        ember += (f"; on {g['ember_device']}, libTHC built "
                  f"{'with' if g['ember_built_with_cuda'] else 'without'} CUDA")
    if "cublas" in info:
        ok, why = info["cublas"]
        ember += ("; matrix products: cuBLAS (ember.thc.cublas_available() is True)" if ok else
                  f"; matrix products: libTHC's own GEMM kernel (ember.thc.cublas_available() "
                  f"is False: {why or 'no reason given'})")
    lines.append(f"- Ember: {ember}")
    if "torch" in info:
        lines.append(f"- PyTorch {info['torch']}" + (
            " on the CPU (--torch-cpu: its figures mean nothing)" if args.torch_cpu else
            f"; float32 math: {info['torch_math']}"
            + (" (PyTorch's defaults kept: --allow-tf32)" if args.allow_tf32 else
               " (TF32 off, as Ember computes float32 in float32)")
            + f"; cudnn.benchmark={info['cudnn_benchmark']}"))
    la = info.get("loadavg")
    lines.append(f"- host: {info['cpu']} ({info['machine']}), {info['cpus']} CPUs, Python {info['python']}"
                 + (f", load average at start {la[0]:.2f}" if la else ""))
    cmd = "python bench/gpu.py" + ("" if not argv else " " + " ".join(argv))
    lines.append(f"- method: `{cmd}`; both libraries in one process on the same device, "
                 f"interleaved: {args.rounds} rounds, each in a seeded shuffled order, of samples of "
                 f"at least {args.min_sample_ms:g} ms (timeit loops), the device synchronized "
                 "(ember.cuda.synchronize() / torch.cuda.synchronize()) before the clock is read at "
                 f"each sample's start and end; {WARMUP[args.mode]} warm-up call(s) first; figures are "
                 "medians; peak memory: max_memory_allocated() over one step after "
                 "reset_peak_memory_stats(), once the timed steps have run")
    if args.smoke:
        lines.append("- **smoke run: tiny sizes, figures are meaningless**")
    lines += ["", "| workload | unit | Ember | PyTorch | ratio | target | met? |",
              "|---|---|--:|--:|--:|---|---|"]
    n_noisy = 0
    for t in table_rows(rows):
        cells = [t["name"], t["unit"]]
        for k in LIBS:
            cells.append(_fmt(t["fig"][k]) + ("*" if t["noisy"].get(k) else "")
                         + ("†" if t["mismatch"] and k == "ember" and t["fig"][k] is not None else ""))
            n_noisy += bool(t["noisy"].get(k))
        cells.append("—" if t["ratio"] is None else f"{t['ratio']:.2f}")
        target = t["target"]
        cells.append("—" if target is None else ("Ember " if t.get("on_ember") else "") + str(target))
        met = _met(t)
        cells.append({None: "—", "no": "**no**"}.get(met, met))
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "ratio: Ember's figure / PyTorch's (GB/s, TFLOP/s: above 1 Ember is faster; "
                  "ms/step and MiB: below 1 Ember is faster or smaller). The add/copy row compares "
                  "each library's add with the device's copy bandwidth."]
    mismatches = [f"{r['name']}, {LABEL[k]}: {msg}" for r in rows for k, msg in r["mismatch"].items()]
    if mismatches:
        lines += ["", "† **Not comparable**: the result differs from the reference:"]
        lines += [f"- {m}" for m in mismatches]
    if n_noisy:
        lines += ["", f"\\* noisy: the samples' spread, (max - min) / median, is above {NOISY:.0%} "
                      f"({n_noisy} figure(s); the JSON has every sample)."]
    checks = []
    for r in rows:
        ref = r["checked_against"]
        checks.append(f"{r['name']}: {'checked against ' + ref if ref else 'not checked (no reference)'}")
    lines += ["", "Result checks (once per workload, before timing): " + "; ".join(checks) + "."]
    notes = list(notes)
    for r in rows:
        for k, msg in list(r["unsupported"].items()) + list(r["errors"].items()):
            notes.append(f"{r['name']}, {LABEL[k]}: {msg}")
    if notes:
        lines += ["", "Notes:"] + [f"- {n}" for n in notes]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ main ----

def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    selected = select_cases(args)
    if args.list:
        for c in selected:
            print(f"{c.key:12s} {c.unit:8s} {c.name}")
        return 0
    if not selected:
        print(f"no workload matches {args.only!r}; see --list", file=sys.stderr)
        return 2
    ember_lib, ember_why = load_ember()
    torch_lib, torch_why = load_torch(on_cpu=args.torch_cpu)
    emulated = ember_lib is not None and ember_lib.m.thc.is_emulated()
    if not args.smoke and (ember_lib is None or torch_lib is None or emulated):
        why = "; ".join(w for w in (
            f"Ember: {ember_why}" if ember_lib is None else
            "Ember: only the emulated device (EMBER_THC_EMULATE=1)" if emulated else "",
            f"PyTorch: {torch_why}" if torch_lib is None else "") if w)
        print(f"bench/gpu.py: no GPU to benchmark on, nothing measured ({why}); "
              "`--smoke` runs the harness on tiny sizes")
        return 1 if args.require_gpu else 0
    libs = {k: v for k, v in (("ember", ember_lib), ("torch", torch_lib)) if v is not None}
    if not libs:
        print(f"bench/gpu.py --smoke: no device for either library, nothing run "
              f"(Ember: {ember_why}; PyTorch: {torch_why})")
        return 1 if args.require_gpu else 0
    notes = []
    if ember_lib is None:
        notes.append(f"Ember's columns are empty: {ember_why}")
    elif emulated:
        notes.append("Ember ran on libTHC's emulated device (host memory, kernels as host loops)")
    if torch_lib is None:
        notes.append(f"PyTorch CUDA columns are empty: {torch_why}; add, copy and matmul "
                     "results are checked against NumPy's instead, the training steps are not checked")

    info = sysinfo.machine_info()
    info["versions"] = versions()
    if torch_lib is not None:
        info["torch"] = torch_lib.m.__version__
        if torch_lib.device == "cuda":
            info["torch_math"] = torch_float32_math(torch_lib.m, args.allow_tf32)
            info["cudnn_benchmark"] = torch_lib.m.backends.cudnn.benchmark
    info["gpu"] = gpu_info(torch_lib, ember_lib)
    rows = []
    for case in selected:
        t0 = time.perf_counter()
        row = run_case(case, libs, args)
        rows.append(row)
        figs = ", ".join(f"{LABEL[k]} {_fmt(v['figure'])}" for k, v in row["libs"].items())
        print(f"  {case.name}: {figs or 'no figure'} {case.unit} "
              f"({time.perf_counter() - t0:.1f} s)", file=sys.stderr, flush=True)
    if ember_lib is not None:
        info["cublas"] = cublas_state()  # after the products: cuBLAS loads on the first one
    md = render(info, rows, notes, args, argv)
    print(md)
    if not args.no_save:
        path = args.out or os.path.join(HERE, "results", time.strftime("gpu-%Y%m%d-%H%M%S") + ".md")
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w") as f:
            f.write(md)
        with open(os.path.splitext(path)[0] + ".json", "w") as f:
            json.dump({"info": info, "argv": argv, "mode": args.mode, "rounds": args.rounds,
                       "min_sample_ms": args.min_sample_ms, "notes": notes, "rows": rows},
                      f, indent=1, default=str)
        print(f"saved {path} (and .json with every sample)", file=sys.stderr)
    print("bench/gpu.py: " + summary_line(rows), file=sys.stderr)
    if any(r["mismatch"] for r in rows):
        return 3
    if any(r["errors"] for r in rows):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
