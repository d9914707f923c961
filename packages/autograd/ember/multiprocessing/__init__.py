"""ember.multiprocessing: a drop-in for ``multiprocessing`` whose queues, pipes
and process arguments send ember tensors by sharing their storage.

    import ember.multiprocessing as mp
    t = ember.zeros(3).share_memory_()
    p = mp.Process(target=fill, args=(t,)); p.start(); p.join()   # t changed

A tensor sent to another process is moved to shared memory first (in
place, as ``share_memory_()``); the receiver maps the same memory.  Tensors
that require grad share their data, not their graph (non-leaf tensors that
require grad are refused, as PyTorch does).  Works for the fork, spawn and
forkserver start methods.  A segment made by ``share_memory_`` lives until
the process that made it exits, so keep the sender alive until the
receivers have the tensor.
"""
import multiprocessing as _mp
from multiprocessing import *  # noqa: F401,F403

from .reductions import init_reductions, register_tensor_class

__all__ = _mp.__all__ + ["init_reductions", "register_tensor_class", "get_sharing_strategy",
                         "set_sharing_strategy",
                         "get_all_sharing_strategies"]

init_reductions()

_strategy = "file_system"


def get_all_sharing_strategies():
    return {"file_system"}


def get_sharing_strategy():
    return _strategy


def set_sharing_strategy(new_strategy):
    if new_strategy not in get_all_sharing_strategies():
        raise ValueError(f"sharing strategy {new_strategy!r} is not supported; ember uses "
                         f"named POSIX shared memory ('file_system')")


def get_context(method=None):
    return _mp.get_context(method)
