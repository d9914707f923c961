"""The default process group and the groups made from it: init, destroy,
new_group, and the rank and size queries."""
import datetime
import os

import numpy as np

from . import _group

_NOT_INIT = ("Default process group has not been initialized, please make sure to call "
             "init_process_group.")


class _NonMember:
    def __repr__(self):
        return "GroupMember.NON_GROUP_MEMBER"


class GroupMember:
    """PyTorch's markers: WORLD is the default group, NON_GROUP_MEMBER what
    new_group returns on ranks outside the new group."""
    WORLD = None
    NON_GROUP_MEMBER = _NonMember()


class group:                      # noqa: N801  (PyTorch's name: dist.group.WORLD)
    WORLD = None


def _default():
    pg = _group._state["default"]
    if pg is None:
        raise ValueError(_NOT_INIT)
    return pg


def group_or_default(g):
    if g is None or g is GroupMember.WORLD:
        return _default()
    if g is GroupMember.NON_GROUP_MEMBER:
        return g
    if not isinstance(g, _group.ProcessGroup):
        raise TypeError(f"ember.distributed: group must be a ProcessGroup from new_group, "
                        f"got {type(g).__name__}")
    if g not in _group._state["groups"]:
        raise ValueError("ember.distributed: the group was destroyed (destroy_process_group)")
    return g


def is_member(pg):
    return pg is not GroupMember.NON_GROUP_MEMBER and pg.comm is not None


def to_group_rank(pg, rank, what):
    """The group rank of global rank `rank`, with PyTorch's error where the
    global rank is out of range or outside the group."""
    world = _default().size()
    if not 0 <= rank < world:
        raise RuntimeError(f"ember.distributed.{what}: invalid root rank: {rank} "
                           f"(world size {world})")
    try:
        return pg.ranks.index(rank)
    except ValueError:
        raise ValueError(f"Global rank {rank} is not part of group {pg.name}") from None


def is_initialized():
    return _group._state["default"] is not None


def _env_int(name):
    value = os.environ.get(name)
    if value in (None, ""):
        return None
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"Error initializing torch.distributed using env:// rendezvous: "
                         f"environment variable {name} expected, but not set or not an "
                         f"integer ({value!r})") from None


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Joins the processes that mpiexec (or ember.distributed.run) started
    into the default group.  rank/world_size (or RANK/WORLD_SIZE) are
    optional: given, they must describe the MPI world (rank may reorder it);
    MASTER_ADDR/MASTER_PORT and init_method are not needed (MPI's launcher
    connects the processes) and are ignored."""
    if _group._state["default"] is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if backend not in (None, "mpi", "gloo", "nccl", "cpu:gloo,cuda:nccl"):
        raise AssertionError(f"Unknown backend type {backend}")
    if timeout is None:
        timeout = _group._DEFAULT_TIMEOUT
    if not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got "
                        f"{type(timeout)}")
    MPI = _group.mpi()
    world = MPI.COMM_WORLD
    n, me = world.Get_size(), world.Get_rank()
    ws = world_size if world_size is not None and world_size >= 0 else _env_int("WORLD_SIZE")
    rk = rank if rank is not None and rank >= 0 else _env_int("RANK")
    if ws is not None and ws != n:
        raise ValueError(f"init_process_group: world_size {ws} but MPI started {n} "
                         f"process{'es' if n != 1 else ''}; start {ws} with "
                         f"`python -m ember.distributed.run --nproc-per-node {ws} ...` or "
                         f"`mpiexec -n {ws} ...`")
    if rk is not None and not 0 <= rk < n:
        raise ValueError(f"init_process_group: rank {rk} is out of range for world size {n}")
    key = me if rk is None else rk
    # every rank's wish, gathered without blocking so that the timeout holds
    wishes = np.empty(n, dtype=np.int64)
    req = world.Iallgather(np.array([key], dtype=np.int64), wishes)
    _wait_for(req, timeout.total_seconds(), "init_process_group")
    if len(set(wishes.tolist())) != n:
        raise ValueError(f"init_process_group: the ranks given (RANK or rank=) repeat: "
                         f"{wishes.tolist()}")
    comm = world.Split(0, key)               # the group's order follows the ranks given
    pg = _group.ProcessGroup(comm, list(range(n)), timeout, "default_pg")
    local = _env_int("LOCAL_RANK")
    if local is None:
        node = comm.Split_type(MPI.COMM_TYPE_SHARED, key=key)
        local = node.Get_rank()
        node.Free()
    pg.local_rank = local
    _group._state["default"] = pg
    _group._state["groups"].append(pg)
    _group.install_excepthook()
    piddir = os.environ.get("EMBER_DISTRIBUTED_RUN")
    if piddir and os.path.isdir(piddir):     # lets the launcher name a rank that dies
        with open(os.path.join(piddir, f"rank{pg.rank()}.pid"), "w") as f:
            f.write(str(os.getpid()))


def _wait_for(req, seconds, what):
    import time
    end = time.monotonic() + seconds
    while not req.Test():
        if time.monotonic() > end:
            raise RuntimeError(f"ember.distributed.{what}: timed out after {seconds:.1f} s "
                               f"waiting for the other ranks")
        time.sleep(0.0005)


def destroy_process_group(group=None):
    """Frees group (every group, and the default one, when None)."""
    if group is None or group is GroupMember.WORLD:
        if _group._state["default"] is None:
            raise AssertionError("Process group cannot be None")
        for pg in list(_group._state["groups"]):
            _free(pg)
        _group._state["groups"].clear()
        _group._state["default"] = None
        _group.remove_excepthook()
        return
    if group is GroupMember.NON_GROUP_MEMBER:
        return
    if group not in _group._state["groups"]:
        raise ValueError("ember.distributed.destroy_process_group: unknown or already "
                         "destroyed group")
    _group._state["groups"].remove(group)
    _free(group)


def _free(pg):
    if pg.broken is not None or pg.comm is None:
        return
    # what was started is finished first, as PyTorch's destroy does
    while pg.queue:
        pg.queue[0].wait()
    pg.fault_comm.Free()
    pg.comm.Free()
    pg.comm = None


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None):
    """A group of the given global ranks (every rank of the default group
    must call it, members or not; others get GroupMember.NON_GROUP_MEMBER)."""
    default = _default()
    world = default.size()
    ranks = sorted(range(world) if ranks is None else (int(r) for r in ranks))
    if len(ranks) > world:
        raise ValueError("the new group's world size should be less or equal to the world "
                         "size set by init_process_group")
    if len(set(ranks)) != len(ranks) or any(not 0 <= r < world for r in ranks):
        raise ValueError("The new group's rank should be within the world_size set by "
                         "init_process_group")
    from ._collectives import _agree, _signature
    sig = _signature(default, "new_group", root=len(ranks))
    sig[6:6 + len(ranks)] = ranks[:len(sig) - 6]

    def gen():
        table = yield from _agree(default, "new_group", sig, compare=())
        if (table != table[0]).any():
            raise ValueError("ember.distributed.new_group: the ranks differ across ranks; "
                             "every rank must pass the same list")
    _group.run(default, gen(), "new_group", False)
    MPI = _group.mpi()
    comm = default.comm.Create(default.comm.Get_group().Incl(ranks))
    t = default.timeout if timeout is None else timeout.total_seconds()
    if comm == MPI.COMM_NULL:
        return GroupMember.NON_GROUP_MEMBER
    pg = _group.ProcessGroup(comm, ranks, datetime.timedelta(seconds=t),
                             f"group{len(_group._state['groups'])}")
    _group._state["groups"].append(pg)
    return pg


def get_rank(group=None):
    """This process's rank in group (-1 outside it)."""
    pg = group_or_default(group)
    if not is_member(pg):
        return -1
    return pg.rank()


def get_world_size(group=None):
    pg = group_or_default(group)
    if not is_member(pg):
        return -1
    return pg.size()


def get_backend(group=None):
    group_or_default(group)
    return "mpi"


def get_node_local_rank(fallback_rank=None):
    """LOCAL_RANK, or this rank's place among the ranks of its machine."""
    pg = _group._state["default"]
    if pg is not None:
        return pg.local_rank
    local = _env_int("LOCAL_RANK")
    if local is None:
        if fallback_rank is None:
            raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing "
                               "fallback_rank to allow `get_node_local_rank` to work, "
                               "assuming you are not running in a multi-device context and "
                               "want the code to run locally instead.")
        return fallback_rank
    return local


def get_process_group_ranks(group):
    pg = group_or_default(group)
    return list(pg.ranks) if is_member(pg) else []
