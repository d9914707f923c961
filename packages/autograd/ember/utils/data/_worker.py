"""What runs in a DataLoader worker process."""
import multiprocessing
import multiprocessing.connection
import os
import queue
import random
import signal
import sys
import threading
import traceback

__all__ = ["get_worker_info", "WorkerInfo"]

_worker_info = None
POLL_S = 0.1


class WorkerInfo:
    """About the current worker: id, num_workers, seed and its dataset copy."""

    __slots__ = ("id", "num_workers", "seed", "dataset")

    def __init__(self, id, num_workers, seed, dataset):
        self.id, self.num_workers, self.seed, self.dataset = id, num_workers, seed, dataset

    def __repr__(self):
        return (f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed}, "
                f"dataset={self.dataset!r})")


def get_worker_info():
    """The WorkerInfo in a DataLoader worker process; None in the main process."""
    return _worker_info


class ExceptionWrapper:
    """An exception raised in a worker, carried with its traceback text."""

    def __init__(self, exc_info, where):
        self.exc_type = exc_info[0]
        self.msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        try:
            exc = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exc


class KeyErrorMessage(str):
    def __repr__(self):
        return self


class IterableDatasetStopIteration:
    def __init__(self, worker_id):
        self.worker_id = worker_id


class ResumeIteration:
    def __init__(self, epoch):
        self.epoch = epoch


def _to_shared(obj):
    """Moves every tensor in a batch into a fresh one-receiver shared-memory
    segment, so the main process maps it instead of unpickling a copy."""
    import ember
    from ember.backends import sharing
    _shared = sharing()
    if isinstance(obj, ember.Tensor):
        if str(obj.device) != "cpu":
            return obj
        from ember._tensor import _new_like
        if _shared.is_transient(obj._data):  # collated straight into shared memory
            return obj
        return _new_like(type(obj), _shared.to_transient(obj._data), obj.requires_grad)
    if isinstance(obj, dict):
        try:
            return type(obj)({k: _to_shared(v) for k, v in obj.items()})
        except TypeError:
            return {k: _to_shared(v) for k, v in obj.items()}
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_to_shared(v) for v in obj))
    if isinstance(obj, (list, tuple)):
        try:
            return type(obj)(_to_shared(v) for v in obj)
        except TypeError:
            return [_to_shared(v) for v in obj]
    return obj


def _seed_all(seed):
    import numpy as np
    import ember
    random.seed(seed)
    ember.manual_seed(seed)
    ss = np.random.SeedSequence([seed & 0xFFFFFFFF, seed >> 32])
    np.random.seed(ss.generate_state(4))


def _exit_with_parent():
    """Ends this worker as soon as the process that started it dies,
    whatever killed it and whatever the worker is doing (a thread blocked
    on the parent's sentinel, not a poll that a busy worker never reaches).
    multiprocessing.parent_process() is the main process for every start
    method (for forkserver, os.getppid() is the server instead)."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return lambda: True

    def watch():
        multiprocessing.connection.wait([parent.sentinel])
        _leave_orphaned()

    threading.Thread(target=watch, name="ember-worker-watchdog", daemon=True).start()
    return parent.is_alive


def _leave_orphaned():
    # nobody will map what we queued
    from ember.backends import sharing
    sharing().sweep(os.getpid())
    os._exit(0)


def worker_loop(dataset_kind, dataset, index_queue, data_queue, done_event, auto_collation,
                collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers):
    global _worker_info
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process shuts us down
    parent_alive = _exit_with_parent()
    import ember
    import ember.multiprocessing  # noqa: F401  (tensor reducers)
    from .fetch import create_fetcher
    # workers run side by side with the main process: one intra-op thread
    # each (as PyTorch's), or they and the training loop oversubscribe the
    # cores; worker_init_fn may set another count
    ember.set_num_threads(1)
    seed = base_seed + worker_id
    try:
        _seed_all(seed)
        _worker_info = WorkerInfo(worker_id, num_workers, seed, dataset)
        init_exception = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(dataset_kind, dataset, auto_collation, collate_fn,
                                     drop_last)
        except Exception:
            init_exception = ExceptionWrapper(sys.exc_info(),
                                              f"in DataLoader worker process {worker_id}")
        exhausted = False
        while True:
            try:
                r = index_queue.get(timeout=POLL_S)
            except queue.Empty:
                if not parent_alive():
                    _leave_orphaned()
                if done_event.is_set():
                    break
                continue
            if r is None:
                break
            if isinstance(r, ResumeIteration):
                exhausted = False
                if init_exception is None:
                    fetcher = create_fetcher(dataset_kind, dataset, auto_collation,
                                             collate_fn, drop_last)
                continue
            if done_event.is_set() or exhausted:
                continue
            task_epoch, idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = _to_shared(fetcher.fetch(index))
                except StopIteration:
                    if dataset_kind == "iterable":
                        exhausted = True
                        data = IterableDatasetStopIteration(worker_id)
                    else:
                        data = ExceptionWrapper(sys.exc_info(),
                                                f"in DataLoader worker process {worker_id}")
                except Exception:
                    data = ExceptionWrapper(sys.exc_info(),
                                            f"in DataLoader worker process {worker_id}")
            data_queue.put((task_epoch, idx, data))
            del data
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
