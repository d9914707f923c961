"""python -m ember.distributed.run --nproc-per-node N script.py [args...]

Starts N ranks of script.py on this machine through MPICH's mpiexec (the
one the mpich wheel installs next to this Python), each with RANK,
LOCAL_RANK, WORLD_SIZE and LOCAL_WORLD_SIZE set (and OMP_NUM_THREADS=1
unless set, as torchrun does), and returns the job's exit status.  Where a
rank dies of a signal, names it (mpiexec names its PID).  Several machines:
run mpiexec yourself (see the package README)."""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def mpiexec_path():
    exe = Path(sys.executable).parent / "mpiexec"
    if exe.exists():
        return str(exe)
    found = shutil.which("mpiexec")
    if found is None:
        raise SystemExit("ember.distributed.run: no mpiexec found (install the mpich wheel: "
                         "pip install mpich)")
    return found


def parse(argv):
    p = argparse.ArgumentParser(prog="python -m ember.distributed.run", allow_abbrev=False,
                                description="Start N ranks of a training script on this "
                                            "machine (MPI through mpiexec).")
    p.add_argument("--nproc-per-node", "--nproc_per_node", type=int, default=1,
                   help="how many ranks to start (default 1)")
    p.add_argument("-m", "--module", action="store_true",
                   help="run the script argument as a module (python -m)")
    p.add_argument("--no-python", "--no_python", action="store_true",
                   help="run the script argument as a program, not through Python")
    p.add_argument("script")
    # what follows the script is the script's: split there, before argparse
    # could take the script's options for the launcher's
    own, i = [], 0
    while i < len(argv) and argv[i].startswith("-"):
        own.append(argv[i])
        if argv[i] == "--nproc-per-node" or argv[i] == "--nproc_per_node":
            own.append(argv[i + 1] if i + 1 < len(argv) else "")
            i += 1
        i += 1
    args = p.parse_args(own + argv[i:i + 1])
    args.script_args = argv[i + 1:]
    if args.nproc_per_node < 1:
        p.error("--nproc-per-node must be at least 1")
    return args


def command(args, piddir):
    n = args.nproc_per_node
    if args.no_python:
        prog = [args.script]
    elif args.module:
        prog = [sys.executable, "-u", "-m", args.script]
    else:
        prog = [sys.executable, "-u", args.script]
    cmd = [mpiexec_path()]
    for r in range(n):
        if r:
            cmd.append(":")
        env = {"RANK": r, "LOCAL_RANK": r, "WORLD_SIZE": n, "LOCAL_WORLD_SIZE": n,
               "GROUP_RANK": 0, "EMBER_DISTRIBUTED_RUN": piddir}
        cmd += ["-n", "1"]
        for k, v in env.items():
            cmd += ["-env", k, str(v)]
        cmd += prog + list(args.script_args)
    return cmd


def main(argv=None):
    args = parse(sys.argv[1:] if argv is None else argv)
    if args.nproc_per_node > 1 and "OMP_NUM_THREADS" not in os.environ:
        # as torchrun: N ranks with a thread per core each would oversubscribe
        os.environ["OMP_NUM_THREADS"] = "1"
        print("ember.distributed.run: OMP_NUM_THREADS=1 for each rank (set it to choose "
              "another count)", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(prefix="ember-run-") as piddir:
        proc = subprocess.Popen(command(args, piddir), stdout=subprocess.PIPE, text=True,
                                bufsize=1)
        dead = []
        for line in proc.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            m = re.search(r"PID (\d+) RUNNING AT", line)
            if m:
                dead.append(m.group(1))
            m = re.search(r"EXIT STRING: (.*)", line)
            if m:
                dead.append(m.group(1).strip())
        rc = proc.wait()
        ranks = {}
        for f in Path(piddir).glob("rank*.pid"):
            ranks[f.read_text().strip()] = f.stem[4:]
        if rc != 0 and dead and dead[0] in ranks:
            why = dead[1] if len(dead) > 1 else "a failure"
            print(f"ember.distributed.run: rank {ranks[dead[0]]} (pid {dead[0]}) ended the job: "
                  f"{why}", file=sys.stderr, flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
