"""The distributed family: ember.distributed (MPI) against torch.distributed
(gloo) on 2 ranks of this machine, both on loopback/shared memory.

    python bench/distributed.py            # 3 rounds, each library's job alternately
    python bench/distributed.py --smoke    # tiny sizes: tests the harness

Each round starts one 2-rank job per library (Ember through mpiexec, PyTorch
as two processes meeting at a local port), one thread per rank.  A job
measures:
- all_reduce (SUM, float32, in place) of 1 KiB to 64 MiB: GB/s = the
  tensor's bytes / the time per call (algorithm bandwidth), on rank 0,
  after a barrier, over enough calls to last about 0.2 s;
- the LeNet training step of bench/workloads/nn.py (batch 64 per rank, SGD
  with momentum) under DistributedDataParallel (default buckets), ms/step;
- overlap: the same step with small buckets (bucket_cap_mb=0.1, several
  all-reduces); T_local = the step under no_sync(), T_comm = the time to
  all-reduce the same buckets one after another after backward, T_ddp = the
  DDP step; hidden fraction = (T_local + T_comm - T_ddp) / T_comm, clipped
  to [0, 1].
Figures are medians over the rounds.  Nothing is asserted on."""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SIZES = [1 << k for k in range(10, 27, 2)]          # 1 KiB .. 64 MiB
SMOKE_SIZES = [1 << 10, 1 << 16]


# ---- one rank ------------------------------------------------------------------------
def _lib(name):
    if name == "ember":
        import ember as m
        import ember.distributed as dist
        m.set_num_threads(1)
        dist.init_process_group("mpi")
    else:
        import torch as m
        import torch.distributed as dist
        m.set_num_threads(1)
        dist.init_process_group("gloo")
    return m, dist


def _time_allreduce(m, dist, nbytes, smoke):
    x = m.ones(nbytes // 4, dtype=m.float32)
    reps = 2 if smoke else max(10, min(500, (48 << 20) // nbytes))
    for _ in range(2):
        dist.all_reduce(x)
    dist.barrier()
    t = time.perf_counter()
    for _ in range(reps):
        dist.all_reduce(x)
    return (time.perf_counter() - t) / reps


def _lenet_setup(m, name, bucket_cap_mb):
    sys.path.insert(0, str(HERE))
    from workloads.nn import lenet
    import numpy as np
    nn = m.nn
    model = lenet(nn)
    if name == "ember":
        from ember.nn.parallel import DistributedDataParallel as DDP
    else:
        from torch.nn.parallel import DistributedDataParallel as DDP
    ddp = DDP(model, bucket_cap_mb=bucket_cap_mb)
    rng = np.random.default_rng(2)
    x = m.from_numpy(rng.standard_normal((64, 1, 28, 28)).astype(np.float32))
    y = m.from_numpy(rng.integers(0, 10, 64))
    opt = m.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return model, ddp, x, y, opt


def _step(m, ddp, x, y, opt):
    opt.zero_grad()
    m.nn.functional.cross_entropy(ddp(x), y).backward()
    opt.step()


def _time_steps(fn, n, dist):
    for _ in range(3):
        fn()
    dist.barrier()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t) / n


def worker(name, smoke):
    m, dist = _lib(name)
    out = {"allreduce": {}}
    for nbytes in (SMOKE_SIZES if smoke else SIZES):
        out["allreduce"][nbytes] = _time_allreduce(m, dist, nbytes, smoke)
    steps = 2 if smoke else 30
    model, ddp, x, y, opt = _lenet_setup(m, name, 25)
    out["ddp_step"] = _time_steps(lambda: _step(m, ddp, x, y, opt), steps, dist)
    # overlap, with small buckets
    model, ddp, x, y, opt = _lenet_setup(m, name, 0.1)
    out["ddp_small_buckets"] = _time_steps(lambda: _step(m, ddp, x, y, opt), steps, dist)

    def local():
        with ddp.no_sync():
            _step(m, ddp, x, y, opt)
    out["local"] = _time_steps(local, steps, dist)
    # the same buckets, all-reduced one after another
    params = [p for p in model.parameters()]
    cap = int(0.1 * 1024 * 1024)
    sizes, cur = [], 0
    for p in reversed(params):
        nb = p.numel() * 4
        if cur and cur + nb > cap:
            sizes.append(cur)
            cur = 0
        cur += nb
    sizes.append(cur)
    bufs = [m.ones(s // 4, dtype=m.float32) for s in sizes]

    def comm():
        for b in bufs:
            dist.all_reduce(b)
    out["comm"] = _time_steps(comm, steps, dist)
    out["buckets"] = len(sizes)
    if dist.get_rank() == 0:
        print("RESULT " + json.dumps(out), flush=True)
    dist.barrier()
    dist.destroy_process_group()


# ---- the harness -----------------------------------------------------------------------
def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _job(name, smoke):
    me = [sys.executable, str(Path(__file__).resolve()), "--rank-worker", name]
    if smoke:
        me.append("--smoke")
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    if name == "ember":
        mpiexec = Path(sys.executable).parent / "mpiexec"
        procs = [subprocess.Popen([str(mpiexec), "-n", "2", *me], stdout=subprocess.PIPE,
                                  text=True, env=env)]
    else:
        # gloo finds its address from the host name unless told an interface: on
        # machines whose host name does not resolve, the loopback keeps it working
        env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()), WORLD_SIZE="2",
                   GLOO_SOCKET_IFNAME="lo")
        procs = [subprocess.Popen(me, stdout=subprocess.PIPE, text=True,
                                  env=dict(env, RANK=str(r), LOCAL_RANK=str(r)))
                 for r in range(2)]
    result = None
    for p in procs:
        text, _ = p.communicate(timeout=900)
        if p.returncode:
            raise SystemExit(f"the {name} job failed ({p.returncode}):\n{text}")
        for line in text.splitlines():
            if line.startswith("RESULT "):
                result = json.loads(line[7:])
    return result


def _have_torch():
    try:
        import torch.distributed as d
        return d.is_available()
    except Exception:       # noqa: BLE001 - any failure: no PyTorch columns
        return False


def _overlap(r):
    hidden = r["local"] + r["comm"] - r["ddp_small_buckets"]
    return max(0.0, min(1.0, hidden / r["comm"])) if r["comm"] > 0 else 0.0


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--rank-worker", help=argparse.SUPPRESS)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (tests the harness)")
    ap.add_argument("--rounds", type=int, default=None)
    args = ap.parse_args(argv)
    if args.rank_worker:
        return worker(args.rank_worker, args.smoke)
    libs = ["ember"] + (["torch"] if _have_torch() else [])
    rounds = args.rounds or (1 if args.smoke else 3)
    runs = {lib: [] for lib in libs}
    for i in range(rounds):
        for lib in libs:
            print(f"round {i + 1}/{rounds}: {lib}", file=sys.stderr, flush=True)
            try:
                runs[lib].append(_job(lib, args.smoke))
            except SystemExit as e:
                if lib == "ember":
                    raise
                # PyTorch is the yardstick, not the thing under test: its failure
                # (a machine gloo cannot use) leaves its columns empty, said aloud
                print(f"PyTorch's job failed; its columns stay empty:\n{e}",
                      file=sys.stderr, flush=True)
                runs.pop(lib)
                libs.remove(lib)
                break

    def med(lib, fn):
        return statistics.median(fn(r) for r in runs[lib]) if lib in runs else None

    def cell(v, fmt):
        return "" if v is None else fmt.format(v)
    load = os.getloadavg()[0]
    print(f"2 ranks, 1 thread each; {rounds} round(s); load average at the end {load:.2f}"
          + ("" if "torch" in runs
             else "; PyTorch not installed or its job failed: its columns are empty"))
    print()
    print("| all_reduce float32 | Ember (MPI) GB/s | PyTorch (gloo) GB/s | Ember/gloo bandwidth |")
    print("|---|---|---|---|")
    for nbytes in runs["ember"][0]["allreduce"]:
        e = med("ember", lambda r: int(nbytes) / r["allreduce"][nbytes] / 1e9)
        t = med("torch", lambda r: int(nbytes) / r["allreduce"][nbytes] / 1e9)
        size = int(nbytes)
        label = f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"
        print(f"| {label} | {e:.3f} | {cell(t, '{:.3f}')} | {cell(t and e / t, '{:.2f}x')} |")
    print()
    print("| DDP LeNet, batch 64 per rank | Ember | PyTorch | Ember/PyTorch time |")
    print("|---|---|---|---|")
    rows = [("step, default buckets (ms)", lambda r: r["ddp_step"] * 1e3),
            ("step, 0.1 MB buckets (ms)", lambda r: r["ddp_small_buckets"] * 1e3),
            ("step under no_sync (ms)", lambda r: r["local"] * 1e3),
            ("the buckets' all-reduces alone (ms)", lambda r: r["comm"] * 1e3)]
    for label, fn in rows:
        e, t = med("ember", fn), med("torch", fn)
        print(f"| {label} | {e:.3f} | {cell(t, '{:.3f}')} | {cell(t and e / t, '{:.2f}x')} |")
    e, t = med("ember", _overlap), med("torch", _overlap)
    print(f"| all-reduce hidden behind backward ({runs['ember'][0]['buckets']} buckets) | "
          f"{e:.0%} | {cell(t, '{:.0%}')} | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
