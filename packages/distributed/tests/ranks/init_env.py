"""init_process_group with RANK/WORLD_SIZE from the environment."""
import os

import ember.distributed as dist
from mpi4py import MPI

try:
    dist.init_process_group()
except ValueError as e:
    print(f"mpi rank {MPI.COMM_WORLD.Get_rank()} ValueError: {e}", flush=True)
    raise SystemExit(0)
ranks = [None] * dist.get_world_size()
dist.all_gather_object(ranks, (dist.get_rank(), MPI.COMM_WORLD.Get_rank()))
assert dist.get_rank() == int(os.environ["RANK"])
print(f"rank {dist.get_rank()} DONE order {ranks}", flush=True)
dist.destroy_process_group()
