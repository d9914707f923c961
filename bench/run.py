#!/usr/bin/env python3
"""Ember's benchmark harness: Ember vs PyTorch (CPU) vs NumPy, in one run.

    python bench/run.py                 # every workload, 1 and 2 threads
    python bench/run.py --quick         # fewer, shorter samples
    python bench/run.py --only matmul   # workloads whose name matches a regex
    python bench/run.py --list          # the workload names

Each thread count runs in its own subprocess, started with OMP_NUM_THREADS,
OPENBLAS_NUM_THREADS and MKL_NUM_THREADS set to it (OpenBLAS reads these when
it loads, so this is what limits NumPy's and Ember's BLAS threads; threadpoolctl
is not needed), and which also calls ember.th.set_num_threads(N) and
torch.set_num_threads(N).  Inside it the libraries are timed interleaved
(see timing.py) and the figures are medians.  The parent prints one markdown
table per workload family, ready to paste into bench/README.md, and saves it
(with every sample, as JSON) under bench/results/ (ignored by git).

OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE may be set on these machines and slow
NumPy's OpenBLAS; the header reports their values, the harness never changes
them (see sysinfo.py).

No time is ever asserted on.  The exit status is non-zero only when a worker
process fails, or (3) when a library's result disagrees with NumPy's.
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import sysinfo  # noqa: E402
from timing import interleaved  # noqa: E402
from workloads import Unsupported, all_cases  # noqa: E402

LIBS = ("ember", "torch", "numpy")
LABEL = {"ember": "Ember", "torch": "PyTorch", "numpy": "NumPy"}
# rounds of interleaved samples, and the shortest sample (ms)
# a figure whose samples' (max - min) / median exceeds this is marked noisy
NOISY = 0.25
SETTINGS = {"full": (15, 50.0), "quick": (5, 20.0), "smoke": (2, 1.0)}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="5 rounds of >= 20 ms samples instead of 15 of >= 50 ms")
    p.add_argument("--only", metavar="PATTERN", help="run the workloads whose name (or family) matches this regular expression")
    p.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    p.add_argument("--rounds", type=int, help="interleaved samples per library (overrides --quick)")
    p.add_argument("--min-sample-ms", type=float, help="shortest sample in ms (overrides --quick)")
    p.add_argument("--settle-ms", type=float, default=150.0,
                   help="pause before each sample when running on more than 1 thread, so that other "
                        "libraries' spinning pool threads have gone to sleep (default 150)")
    p.add_argument("--list", action="store_true", help="list the workloads and exit")
    p.add_argument("--out", metavar="FILE.md", help="save the table here (default bench/results/<date>.md)")
    p.add_argument("--no-save", action="store_true", help="print only, save nothing")
    p.add_argument("--smoke", action="store_true", help="tiny sizes, 2 short rounds: checks the harness itself; figures are meaningless")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--result-file", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    mode = "smoke" if args.smoke else "quick" if args.quick else "full"
    rounds, min_ms = SETTINGS[mode]
    args.mode = mode
    args.rounds = args.rounds or rounds
    args.min_sample_ms = args.min_sample_ms or min_ms
    args.thread_counts = [int(t) for t in str(args.threads).split(",") if t.strip()]
    return args


def select_cases(args):
    cases = all_cases("smoke" if args.smoke else "full")
    if args.only:
        rx = re.compile(args.only)
        cases = [c for c in cases if rx.search(c.name) or rx.search(c.family)]
    return cases


# ---------------------------------------------------------------- worker ----

@contextlib.contextmanager
def busy_processes(count):
    """`count` processes spinning on the CPUs while the block runs (the
    "under load" family); always stopped, even when the block fails."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
             for _ in range(count)]
    try:
        if procs:
            time.sleep(0.5)  # let the scheduler see them
        yield
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


def load_libs(threads: int):
    """Import the libraries, set their thread counts; missing ones become notes."""
    mods, notes = {}, {}
    try:
        import ember.th as th

        if hasattr(th, "set_num_threads"):
            th.set_num_threads(threads)
        else:
            notes["ember"] = "ember.th has no set_num_threads: its thread count is the default"
        mods["ember"] = th
    except Exception as e:  # noqa: BLE001 - any import failure is reported
        notes["ember"] = (f"ember.th not importable ({type(e).__name__}: {e}); "
                          "install it with `python -m pip install ./packages/th`")
    try:
        import torch

        torch.set_num_threads(threads)
        mods["torch"] = torch
    except ImportError as e:
        notes["torch"] = (f"PyTorch not installed ({e}): its columns are empty; "
                          "`python -m pip install torch==2.13.0` (or `tox -e bench`) adds them")
    import numpy

    mods["numpy"] = numpy
    return mods, notes


def _to_numpy(x):
    import numpy as np

    if hasattr(x, "numpy"):
        x = x.numpy()
    x = np.asarray(x)
    return x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)


def run_case(case, mods, rounds, min_sample_s, settle_s=0.0):
    import numpy as np

    stmts, errors = {}, {}
    for lib in LIBS:
        if lib not in mods:
            continue
        try:
            stmts[lib] = case.make(lib, mods[lib])
        except Unsupported as e:
            errors[lib] = f"no form of this workload: {e}"
        except Exception as e:  # noqa: BLE001
            errors[lib] = f"setup failed: {type(e).__name__}: {e}"
    samples = interleaved(stmts, rounds, min_sample_s, errors, settle_s=settle_s)
    mismatch = {}
    ref, ref_lib = None, None
    # the reference result: NumPy's, or PyTorch's for workloads NumPy has no form of
    for candidate in ("numpy", "torch"):
        if candidate in samples and stmts[candidate].result:
            ref_lib = candidate
            ref = _to_numpy(eval(stmts[candidate].result, stmts[candidate].globals))
            break
    for lib in samples:
        s = stmts[lib]
        if lib == ref_lib or ref is None or not s.result:
            continue
        try:
            got = _to_numpy(eval(s.result, s.globals))
            if got.shape != ref.shape and got.size == ref.size:
                got = got.reshape(ref.shape)  # e.g. a 0-d sum against a NumPy scalar
            if not np.allclose(got, ref, rtol=case.rtol, atol=case.atol):
                err = float(np.max(np.abs(got - ref))) if got.shape == ref.shape else float("nan")
                mismatch[lib] = f"result differs from {ref_lib}'s (max abs diff {err:.3g}, shape {got.shape} vs {ref.shape})"
        except Exception as e:  # noqa: BLE001
            mismatch[lib] = f"result check failed: {type(e).__name__}: {e}"
    row = {
        "family": case.family, "name": case.name, "unit": case.unit, "work": case.work,
        "higher_is_better": case.higher_is_better,
        "libs": {lib: {"median_s": s.median_s, "figure": case.figure(s.median_s),
                       "number": s.number, "spread": s.spread, "samples_s": s.per_call_s}
                 for lib, s in samples.items()},
        "errors": errors, "mismatch": mismatch,
    }
    del stmts, samples
    gc.collect()
    return row


def worker(args):
    threads = args.thread_counts[0]
    mods, notes = load_libs(threads)
    out = {
        "threads": threads,
        "notes": notes,
        "versions": sysinfo.library_versions(mods),
        "blas": sysinfo.blas_info(),
        "effective_threads": {},
        "rows": [],
    }
    if "ember" in mods and hasattr(mods["ember"], "get_num_threads"):
        out["effective_threads"]["ember"] = mods["ember"].get_num_threads()
    if "torch" in mods:
        out["effective_threads"]["torch"] = mods["torch"].get_num_threads()
    for case in select_cases(args):
        t0 = time.perf_counter()
        settle = args.settle_ms / 1e3 if threads > 1 else 0.0
        with busy_processes(case.busy):
            row = run_case(case, mods, args.rounds, args.min_sample_ms / 1e3, settle)
        out["rows"].append(row)
        figs = ", ".join(f"{LABEL[k]} {_fmt(v['figure'])}" for k, v in row["libs"].items())
        print(f"  [{threads} thr] {case.name}: {figs} {case.unit} "
              f"({time.perf_counter() - t0:.1f} s)", file=sys.stderr, flush=True)
    with open(args.result_file, "w") as f:
        json.dump(out, f)


# ---------------------------------------------------------------- report ----

def _fmt(v):
    if v is None or v != v:
        return "—"
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    if v >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def _ratio(a, b):
    return "—" if a is None or b is None or not b else f"{a / b:.2f}"


def render(info, runs, args, argv) -> str:
    first = runs[0] if runs else {}
    v = first.get("versions", {})
    lines = [f"## Results: {info['date']}", ""]
    la = info.get("loadavg")
    lines.append(f"- machine: {info['cpu']} ({info['machine']}), {info['cpus']} CPUs available"
                 + (f", load average at start {la[0]:.2f} / {la[1]:.2f} / {la[2]:.2f}" if la else "")
                 + (" (**busy: other work shared the CPUs, figures are noisy**)"
                    if la and la[0] > 0.5 * info["cpus"] else ""))
    sw = [f"Python {info['python']}", f"NumPy {v.get('numpy', '?')}"]
    sw.append(f"PyTorch {v['torch']}" if "torch" in v else "PyTorch not installed")
    sw.append(f"ember-th {v['ember']}" if "ember" in v else "ember-th not importable")
    if "ember_blas" in v:
        sw.append(f"Ember GEMM: {v['ember_blas']}")
    lines.append("- software: " + ", ".join(sw))
    ob = ", ".join(f"{k}={val if val is not None else '(unset)'}" for k, val in info["openblas_env"].items())
    lines.append(f"- {ob} (reported as found, not changed; when set they can slow OpenBLAS: see bench/README.md)")
    blas = first.get("blas") or []
    if blas:
        lines.append("- BLAS/OpenMP libraries loaded (threadpoolctl, 1-thread process): " + "; ".join(
            f"{b['internal_api']} {b.get('version') or ''} {b.get('architecture') or ''} "
            f"({os.path.basename(b.get('filepath') or '')})".replace("  ", " ") for b in blas))
    else:
        lines.append("- BLAS libraries: threadpoolctl not installed, not listed")
    cmd = "python bench/run.py" + ("" if not argv else " " + " ".join(argv))
    lines.append(f"- method: `{cmd}`; each thread count in its own process "
                 "(OMP_NUM_THREADS = OPENBLAS_NUM_THREADS = MKL_NUM_THREADS = N, "
                 "`th.set_num_threads(N)`, `torch.set_num_threads(N)`); libraries interleaved, "
                 f"{args.rounds} rounds (each in a shuffled order) of samples of at least "
                 f"{args.min_sample_ms:g} ms, on more than 1 thread after a {args.settle_ms:g} ms pause "
                 "(pool threads left spinning by the library timed before go to sleep); "
                 "figures are medians")
    if args.smoke:
        lines.append("- **smoke run: tiny sizes, figures are meaningless**")
    lines.append("")

    # rows grouped by family, each workload with its thread counts together
    order, table = [], {}
    for run in runs:
        for row in run["rows"]:
            key = (row["family"], row["name"])
            if key not in table:
                order.append(key)
                table[key] = []
            table[key].append((run["threads"], row))
    notes, mismatches, noisy = [], [], []
    for run in runs:
        for note in run.get("notes", {}).values():
            if note not in notes:
                notes.append(note)
    families = []
    for fam, _ in order:
        if fam not in families:
            families.append(fam)
    for fam in families:
        lines += [f"### {fam}", "",
                  "| workload | unit | threads | Ember | PyTorch | NumPy | Ember/PyTorch time | Ember/NumPy throughput |",
                  "|---|---|--:|--:|--:|--:|--:|--:|"]
        for key in order:
            if key[0] != fam:
                continue
            for threads, row in table[key]:
                libs = row["libs"]
                t = {k: libs[k]["median_s"] if k in libs else None for k in LIBS}
                f = {k: libs[k]["figure"] if k in libs else None for k in LIBS}
                # a figure whose samples spread widely is marked: read it with care
                cells = [row["name"], row["unit"], str(threads)] + [
                    _fmt(f[k]) + ("*" if k in libs and libs[k]["spread"] > NOISY else "") for k in LIBS]
                noisy += [1 for k in libs if libs[k]["spread"] > NOISY]
                cells.append(_ratio(t["ember"], t["torch"]))
                # throughput ratio = inverse time ratio (same work)
                cells.append(_ratio(t["numpy"], t["ember"]) if t["ember"] else "—")
                lines.append("| " + " | ".join(cells) + " |")
                for lib, msg in row["errors"].items():
                    notes.append(f"{row['name']} ({threads} thr), {LABEL[lib]}: {msg}")
                for lib, msg in row["mismatch"].items():
                    mismatches.append(f"{row['name']} ({threads} thr), {LABEL[lib]}: {msg}")
        lines.append("")
    lines.append("Ember/PyTorch time below 1: Ember is faster. Ember/NumPy throughput above 1: "
                 "Ember is faster. NumPy's element-wise ops and sums are single-threaded, so its "
                 "2-thread rows compare Ember on 2 threads with NumPy on 1; its matmul (OpenBLAS) "
                 "does use the threads.")
    if mismatches:
        lines += ["", "**Wrong results** (figures for these are not comparable):"]
        lines += [f"- {m}" for m in mismatches]
    if noisy:
        lines += ["", f"\\* noisy: the samples' spread, (max - min) / median, is above {NOISY:.0%} "
                      f"({len(noisy)} figure(s); the JSON has every sample)."]
    if notes:
        lines += ["", "Notes:"] + [f"- {n}" for n in notes]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ main ----

def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.worker:
        worker(args)
        return 0
    cases = select_cases(args)
    if args.list:
        for c in cases:
            print(f"{c.family:10s} {c.name:32s} {c.unit}")
        return 0
    if not cases:
        print(f"no workload matches {args.only!r}; see --list", file=sys.stderr)
        return 2
    info = sysinfo.machine_info()
    runs = []
    with tempfile.TemporaryDirectory(prefix="ember-bench-") as tmp:
        for threads in args.thread_counts:
            env = dict(os.environ)
            for var in sysinfo.THREAD_VARS:
                env[var] = str(threads)
            # OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE pass through untouched
            result = os.path.join(tmp, f"threads-{threads}.json")
            cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--threads", str(threads),
                   "--rounds", str(args.rounds), "--min-sample-ms", str(args.min_sample_ms),
                   "--settle-ms", str(args.settle_ms), "--result-file", result]
            if args.only:
                cmd += ["--only", args.only]
            if args.smoke:
                cmd.append("--smoke")
            print(f"threads={threads}:", file=sys.stderr, flush=True)
            proc = subprocess.run(cmd, env=env)
            if proc.returncode != 0:
                print(f"bench worker for {threads} thread(s) failed with status {proc.returncode}",
                      file=sys.stderr)
                return 1
            with open(result) as f:
                runs.append(json.load(f))
    md = render(info, runs, args, argv)
    print(md)
    if not args.no_save:
        path = args.out or os.path.join(HERE, "results", time.strftime("%Y%m%d-%H%M%S") + ".md")
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w") as f:
            f.write(md)
        with open(os.path.splitext(path)[0] + ".json", "w") as f:
            json.dump({"info": info, "argv": argv, "runs": runs}, f, indent=1)
        print(f"saved {path} (and .json with every sample)", file=sys.stderr)
    if any(row["mismatch"] for run in runs for row in run["rows"]):
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
