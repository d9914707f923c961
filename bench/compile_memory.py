"""Peak memory of a training step, eager against ember.compile.

    python bench/compile_memory.py          # the table, 1 thread

Each row runs in fresh interpreters (one per form, three each, the median
reported): the workload is built and run once to warm up (tracing and
compiling happen there), then the process's peak resident memory (VmHWM)
is reset (`/proc/self/clear_refs` with 5) and five forward+backward steps
run; the figure is the peak above the resident memory just before them,
in MiB.  libTH's block cache is off (EMBER_CPU_CACHE_MB=0) and glibc's
mmap threshold fixed (MALLOC_MMAP_THRESHOLD_), so that freed blocks leave
the process and the figure is what the step needs, not what a cache keeps.

Workloads (those of bench/workloads/compile.py): the Transformer MLP block
(x (1024, 256) -> linear 1024 -> GELU written as ops -> linear 256, plus the
residual) and the Transformer encoder layer (d 256, 4 heads, ff 1024, on
(8, 128, 256)).  Linux only (/proc).
"""
import json
import os
import statistics
import subprocess
import sys

PROBE = r"""
import json, sys
import numpy as np
import ember
ember.set_num_threads(1)
kind, compiled = sys.argv[1], sys.argv[2] == "compiled"
rng = np.random.default_rng(7)

def kib(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1])

if kind == "mlp block":
    def param(*shape):
        return ember.tensor(rng.standard_normal(shape, dtype=np.float32) * 0.05).requires_grad_()
    w1, b1, w2, b2 = param(256, 1024), param(1024), param(1024, 256), param(256)
    x = ember.tensor(rng.standard_normal((1024, 256), dtype=np.float32))

    def gelu(v):
        return 0.5 * v * (1.0 + ember.tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))

    def f(x):
        return x + gelu(x @ w1 + b1) @ w2 + b2
else:
    ember.manual_seed(9)
    f = ember.nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, batch_first=True)
    x = ember.tensor(rng.standard_normal((8, 128, 256), dtype=np.float32))
if compiled:
    f = ember.compile(f)
f(x).sum().backward()
f(x).sum().backward()
with open("/proc/self/clear_refs", "w") as cr:
    cr.write("5")
base = kib("VmRSS")
for _ in range(5):
    f(x).sum().backward()
print(json.dumps({"peak_mib": (kib("VmHWM") - base) / 1024}))
"""

WORKLOADS = ("mlp block", "encoder layer")
RUNS = 3


def peak(kind, form):
    # a fixed mmap threshold: glibc's moving one keeps freed blocks in the
    # heap after the first large free, and the peak then says more about
    # malloc's history than about the step
    env = dict(os.environ, EMBER_CPU_CACHE_MB="0", OMP_NUM_THREADS="1",
               MALLOC_MMAP_THRESHOLD_="131072")
    values = []
    for _ in range(RUNS):
        out = subprocess.run([sys.executable, "-c", PROBE, kind, form], capture_output=True,
                             text=True, env=env, timeout=600)
        if out.returncode != 0:
            raise SystemExit(f"{kind} ({form}) failed:\n{out.stderr}")
        values.append(json.loads(out.stdout.strip().splitlines()[-1])["peak_mib"])
    return statistics.median(values)


def main():
    print("| workload (1 thread, forward+backward) | eager peak (MiB) | compiled peak (MiB) | "
          "compiled / eager |")
    print("|---|--:|--:|--:|")
    for kind in WORKLOADS:
        e, c = peak(kind, "eager"), peak(kind, "compiled")
        print(f"| {kind} | {e:.1f} | {c:.1f} | {c / e:.2f} |" if e else
              f"| {kind} | {e:.1f} | {c:.1f} | — |")


if __name__ == "__main__":
    main()
