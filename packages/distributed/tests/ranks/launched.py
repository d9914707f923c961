"""Started by ember.distributed.run: the environment it sets, and a collective."""
import os
import sys

import ember
import ember.distributed as dist

assert dist.is_torchelastic_launched()
dist.init_process_group("mpi")
r = dist.get_rank()
assert r == int(os.environ["RANK"]) and dist.get_world_size() == int(os.environ["WORLD_SIZE"])
assert dist.get_node_local_rank() == int(os.environ["LOCAL_RANK"]) == r
x = ember.ones(2)
dist.all_reduce(x)
if sys.argv[1:] == ["kill"] and r == 1:
    os.kill(os.getpid(), 9)
dist.barrier()
print(f"rank {r} of {dist.get_world_size()} args {sys.argv[1:]} sum {x.tolist()}", flush=True)
