"""A rank that fails (raise, hang, kill, exit) while the others wait in a
collective: the others must fail naming it within the timeout."""
import datetime
import os
import signal
import sys
import time

import ember
import ember.distributed as dist

mode = sys.argv[1]
dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=float(sys.argv[2])))
R = dist.get_rank()
print(f"rank {R} pid {os.getpid()}", flush=True)
dist.barrier()
if R == 1:
    if mode == "raise":
        raise ValueError("boom on purpose")
    if mode == "hang":
        time.sleep(600)
    if mode == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "exit":
        sys.exit(0)
x = ember.ones(8)
dist.all_reduce(x)
print(f"rank {R} finished, which it should not have", flush=True)
