"""ember.distributed: PyTorch's torch.distributed names on MPI (mpi4py and
the mpich wheel): process groups, collectives, point-to-point messages and
Python-object collectives between the processes that mpiexec (or
``python -m ember.distributed.run``) starts.  See the package README."""
from ._collectives import (ReduceOp, all_gather, all_gather_into_tensor,  # noqa: F401
                           all_gather_object, all_reduce, all_to_all_single, barrier,
                           broadcast, broadcast_object_list, gather, irecv, isend, recv,
                           reduce, reduce_scatter_tensor, scatter, send)
from ._group import DistributedError, ProcessGroup, Work  # noqa: F401
from ._state import (GroupMember, destroy_process_group, get_backend,  # noqa: F401
                     get_node_local_rank, get_process_group_ranks, get_rank,
                     get_world_size, group, init_process_group, is_initialized, new_group)

__version__ = "0.1.0"

__all__ = ["is_available", "is_initialized", "is_mpi_available", "is_torchelastic_launched",
           "init_process_group", "destroy_process_group", "new_group", "get_rank",
           "get_world_size", "get_backend", "get_node_local_rank", "get_process_group_ranks",
           "ReduceOp", "GroupMember", "group", "ProcessGroup", "Work", "DistributedError",
           "barrier", "all_reduce", "reduce", "broadcast", "all_gather",
           "all_gather_into_tensor", "gather", "scatter", "reduce_scatter_tensor",
           "all_to_all_single", "send", "recv", "isend", "irecv", "broadcast_object_list",
           "all_gather_object"]


def is_available():
    """True: this package is installed (with mpi4py)."""
    return True


def is_mpi_available():
    return True


def is_torchelastic_launched():
    """True in a process that ember.distributed.run started."""
    import os
    return "EMBER_DISTRIBUTED_RUN" in os.environ
