"""Footprint of Ember's CPU packages: installed size, import time, memory.

    python bench/footprint.py            # the table (and PyTorch's, if installed)
    python bench/footprint.py --gate     # exit 1 when a limit below is passed

Measured, for ember-th, ember-thnn, ember and ember-nn (what a small device
installs to train and run models):
- installed size: the files the distributions installed (their RECORD),
  alone and with their dependencies (numpy, cffi, pycparser,
  scipy-openblas32);
- import time: `import ember` and `import ember.nn` after `import numpy`
  (Ember's own share), median of 10 fresh interpreters, with numpy's own
  import time from the same interpreters;
- resident memory (VmRSS) after `import ember`, and after one training
  step of a LeNet-style CNN on a batch of 64 28×28 images (VmHWM: the peak).
With PyTorch installed, the same for `torch` (its distribution and its
dependencies' sizes, `import torch`, the same step in torch.nn).

The gate (`--gate`, run by `tox -e footprint`): Ember's own installed size
at most 10 MB, `import ember` at most 0.15 s beyond numpy's, RSS after
`import ember` at most 60 MiB.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
from importlib import metadata

OWN = ("ember-th", "ember-thnn", "ember", "ember-nn")
LIMIT_SIZE_MB = 10.0
LIMIT_IMPORT_S = 0.15
LIMIT_RSS_MIB = 60.0
RUNS = 10

PROBE = r"""
import json, sys, time
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024.0
t0 = time.perf_counter()
import numpy
t1 = time.perf_counter()
import {lib}
t2 = time.perf_counter()
import {lib}.nn
t3 = time.perf_counter()
out = {{"numpy_s": t1 - t0, "import_s": t2 - t1, "nn_s": t3 - t2,
        "rss_import_mib": status("VmRSS")}}
if {step}:
    import {lib} as T
    nn = T.nn
    T.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(16 * 5 * 5, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                          nn.Linear(84, 10))
    opt = T.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = T.randn(64, 1, 28, 28), T.randint(0, 10, (64,))
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    out["rss_step_mib"] = status("VmRSS")
    out["hwm_step_mib"] = status("VmHWM")
print(json.dumps(out))
"""


def dist_size(name):
    """Bytes of the files a distribution installed (0 if it is not installed)."""
    try:
        files = metadata.files(name) or []
    except metadata.PackageNotFoundError:
        return 0
    total = 0
    for f in files:
        p = f.locate()
        if os.path.isfile(p):
            total += os.path.getsize(p)
    return total


def requirements(name, seen=None):
    """The installed distributions name needs, transitively (extras left out)."""
    seen = set() if seen is None else seen
    try:
        reqs = metadata.requires(name) or []
    except metadata.PackageNotFoundError:
        return seen
    for r in reqs:
        if "extra ==" in r:
            continue
        dep = r.split(";")[0].split("(")[0].split("[")[0]
        for op in "<>=!~ ":
            dep = dep.split(op)[0]
        dep = dep.strip().lower()
        if dep and dep not in seen:
            try:
                metadata.distribution(dep)
            except metadata.PackageNotFoundError:
                continue
            seen.add(dep)
            requirements(dep, seen)
    return seen


def probe(lib, step, runs):
    """Runs PROBE in `runs` fresh interpreters; medians of each figure."""
    results = []
    for i in range(runs):
        env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
        r = subprocess.run([sys.executable, "-c", PROBE.format(lib=lib, step=step and i == 0)],
                           capture_output=True, text=True, timeout=600, env=env)
        if r.returncode != 0:
            raise SystemExit(f"footprint: the {lib} probe failed:\n{r.stderr}")
        results.append(json.loads(r.stdout))
    keys = results[0].keys() | results[-1].keys()
    return {k: statistics.median(x[k] for x in results if k in x) for k in keys}


def measure(own, lib, runs):
    own_bytes = sum(dist_size(d) for d in own)
    deps = set()
    for d in own:
        deps |= requirements(d)
    deps -= set(own)
    dep_bytes = sum(dist_size(d) for d in deps)
    figures = probe(lib, True, runs)
    figures.update(own_mb=own_bytes / 1e6, with_deps_mb=(own_bytes + dep_bytes) / 1e6,
                   deps=sorted(deps))
    return figures


def table(rows):
    lines = ["| | installed (MB) | with dependencies (MB) | import beyond numpy (s) | "
             "import .nn (s) | RSS after import (MiB) | RSS after a LeNet step (MiB) | "
             "peak (MiB) |",
             "|---|---|---|---|---|---|---|---|"]
    for name, f in rows:
        lines.append(f"| {name} | {f['own_mb']:.1f} | {f['with_deps_mb']:.1f} | "
                     f"{f['import_s']:.3f} | {f['nn_s']:.3f} | {f['rss_import_mib']:.0f} | "
                     f"{f.get('rss_step_mib', float('nan')):.0f} | "
                     f"{f.get('hwm_step_mib', float('nan')):.0f} |")
    numpy_s = statistics.median(f["numpy_s"] for _, f in rows)
    lines.append(f"\n(numpy's own import: {numpy_s:.3f} s, median over the same interpreters; "
                 f"dependencies counted: " +
                 "; ".join(f"{n}: {', '.join(f['deps'])}" for n, f in rows) + ")")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gate", action="store_true",
                    help="exit 1 when Ember passes a footprint limit")
    ap.add_argument("--runs", type=int, default=RUNS, help="fresh interpreters per library")
    ap.add_argument("--no-torch", action="store_true", help="leave PyTorch out")
    args = ap.parse_args(argv)
    missing = [d for d in OWN if not dist_size(d)]
    if missing:
        raise SystemExit(f"footprint: install {', '.join(missing)} first")
    rows = [("Ember (ember-th, ember-thnn, ember, ember-nn)", measure(OWN, "ember", args.runs))]
    if not args.no_torch and dist_size("torch"):
        rows.append(("PyTorch (torch)", measure(("torch",), "torch", args.runs)))
    print(table(rows))
    if not args.gate:
        return 0
    f = rows[0][1]
    over = []
    if f["own_mb"] > LIMIT_SIZE_MB:
        over.append(f"installed size {f['own_mb']:.1f} MB > {LIMIT_SIZE_MB} MB")
    if f["import_s"] > LIMIT_IMPORT_S:
        over.append(f"import ember {f['import_s']:.3f} s beyond numpy > {LIMIT_IMPORT_S} s")
    if f["rss_import_mib"] > LIMIT_RSS_MIB:
        over.append(f"RSS after import {f['rss_import_mib']:.0f} MiB > {LIMIT_RSS_MIB} MiB")
    for o in over:
        print(f"footprint gate: {o}", file=sys.stderr)
    if not over:
        print("footprint gate: within every limit", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
