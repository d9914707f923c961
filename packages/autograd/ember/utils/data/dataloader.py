"""DataLoader: batches from a dataset, in the main process or in workers."""
import itertools
import multiprocessing as _mp
import queue
import warnings
import weakref

import ember
from ember.backends import sharing

from . import _worker
from ._collate import default_collate, default_convert
from .dataset import IterableDataset
from .fetch import create_fetcher
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader"]


class _InfiniteConstantSampler:
    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """Iterates over batches of a dataset (PyTorch's arguments and semantics).

    With ``num_workers > 0`` each worker process makes whole batches; their
    tensors reach this process through shared memory (no pickled copy of
    the data).  A worker's exception re-raises here with its traceback; a
    worker that dies raises a RuntimeError instead of hanging.
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device=""):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 "
                             "to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing. let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.persistent_workers = persistent_workers
        self.generator = generator

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = "iterable"
            if shuffle not in (False, None):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"shuffle option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"sampler option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            self._dataset_kind = "map"
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            if self._dataset_kind == "iterable":
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        if pin_memory and not ember.cuda.is_available():
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.")
        self._iterator = None

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self):
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        if self.persistent_workers:
            if self._iterator is None or self._iterator._shutdown:
                self._iterator = _MultiProcessIter(self)
            else:
                self._iterator._reset(self)
            return self._iterator
        return _MultiProcessIter(self)

    def __len__(self):
        if self._dataset_kind == "iterable":
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self._index_sampler)


def _pin(data):
    """The batch with its CPU tensors in page-locked memory (pin_memory=True)."""
    if isinstance(data, ember.Tensor):
        return data.pin_memory() if data.device.type == "cpu" else data
    if isinstance(data, tuple) and hasattr(data, "_fields"):   # namedtuple
        return type(data)(*(_pin(d) for d in data))
    if isinstance(data, (list, tuple)):
        return type(data)(_pin(d) for d in data)
    if isinstance(data, dict):
        return {k: _pin(v) for k, v in data.items()}
    return data


class _BaseIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._kind = loader._dataset_kind
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._collate_fn = loader.collate_fn
        self._pin = bool(loader.pin_memory) and ember.cuda.is_available()
        self._timeout = loader.timeout
        self._generator = loader.generator
        self._num_yielded = 0
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = int(ember.randint(0, 2 ** 62, (1,), generator=loader.generator).item())

    def _reset(self, loader):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._base_seed = int(ember.randint(0, 2 ** 62, (1,), generator=loader.generator).item())

    def _next_index(self):
        return next(self._sampler_iter)

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._index_sampler)


class _SingleProcessIter(_BaseIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._fetcher = create_fetcher(self._kind, self._dataset, self._auto_collation,
                                       self._collate_fn, self._drop_last)

    def __next__(self):
        index = self._next_index()
        data = self._fetcher.fetch(index)
        self._num_yielded += 1
        return _pin(data) if self._pin else data


class _MultiProcessIter(_BaseIter):
    def __init__(self, loader):
        super().__init__(loader)
        import ember.multiprocessing  # noqa: F401  (registers the tensor reducers)
        # workers seed NumPy's generator; importing numpy.random takes about
        # 13 ms, paid here once instead of in every forked worker each epoch
        import numpy.random  # noqa: F401
        self._shutdown = False
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor
        self._persistent = loader.persistent_workers
        ctx = loader.multiprocessing_context
        if ctx is None:
            ctx = _mp.get_context()
        elif isinstance(ctx, str):
            ctx = _mp.get_context(ctx)
        self._done_event = ctx.Event()
        self._data_queue = ctx.Queue()
        self._stopped = [False]  # shared with the finalizer: shut down once
        self._index_queues, self._workers, self._worker_pids = [], [], []
        try:
            for i in range(self._num_workers):
                iq = ctx.Queue()
                iq.cancel_join_thread()
                w = ctx.Process(
                    target=_worker.worker_loop,
                    args=(self._kind, self._dataset, iq, self._data_queue, self._done_event,
                          self._auto_collation, self._collate_fn, self._drop_last,
                          self._base_seed, loader.worker_init_fn, i, self._num_workers),
                    daemon=True)
                w.start()
                self._index_queues.append(iq)
                self._workers.append(w)
                self._worker_pids.append(w.pid)
        except BaseException:
            self._shutdown_workers()
            raise
        self._finalizer = weakref.finalize(self, _shutdown, self._state())
        self._epoch = 0
        self._start_epoch()

    def _state(self):
        return (self._workers, self._index_queues, self._data_queue, self._done_event,
                self._stopped)

    def _start_epoch(self):
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}       # idx -> (worker,) or (worker, data)
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _reset(self, loader):
        super()._reset(loader)
        self._epoch += 1
        for q in self._index_queues:
            q.put(_worker.ResumeIteration(self._epoch))
        self._start_epoch()

    def _try_put_index(self):
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            w = next(self._worker_cycle)
            if self._workers_status[w]:
                break
        else:
            return
        self._index_queues[w].put((self._epoch, self._send_idx, index))
        self._task_info[self._send_idx] = (w,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _get_data(self):
        """Waits for the next result, checking that the workers are alive."""
        import time
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            wait = 0.1
            if deadline is not None:
                wait = min(wait, max(deadline - time.monotonic(), 0))
            try:
                return self._data_queue.get(timeout=wait)
            except queue.Empty:
                pass
            failed = [w for w in self._workers if not w.is_alive()]
            if failed:
                w = failed[0]
                code = w.exitcode
                self._shutdown_workers()
                if code is not None and code < 0:
                    import signal
                    try:
                        sig = signal.Signals(-code).name
                    except ValueError:
                        sig = str(-code)
                    why = f"is killed by signal: {sig}"
                else:
                    why = f"exited unexpectedly with exit code {code}"
                raise RuntimeError(f"DataLoader worker (pid(s) {w.pid}) {why}. ") from None
            if deadline is not None and time.monotonic() >= deadline:
                self._shutdown_workers()
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")

    def __next__(self):
        if self._shutdown:
            raise StopIteration
        while True:
            # skip tasks whose (iterable) worker has ended
            while self._rcvd_idx < self._send_idx:
                info = self._task_info[self._rcvd_idx]
                if len(info) == 2 or self._workers_status[info[0]]:
                    break
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            info = self._task_info[self._rcvd_idx]
            if len(info) == 2:
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
                return self._process(info[1])
            epoch, idx, data = self._get_data()
            if epoch != self._epoch:
                continue  # a leftover from an abandoned epoch
            self._tasks_outstanding -= 1
            if isinstance(data, _worker.IterableDatasetStopIteration):
                self._workers_status[data.worker_id] = False
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                self._task_info[idx] += (data,)
                continue
            del self._task_info[idx]
            self._rcvd_idx += 1
            return self._process(data)

    def _process(self, data):
        self._try_put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            if not self._persistent:
                self._shutdown_workers()
            data.reraise()
        self._num_yielded += 1
        return _pin(data) if self._pin else data

    def _shutdown_workers(self):
        if self._shutdown:
            return
        self._shutdown = True
        fin = getattr(self, "_finalizer", None)
        if fin is not None:
            fin.detach()
        _shutdown(self._state())

    def __del__(self):
        self._shutdown_workers()


def _shutdown(state):
    """Stops the workers, then removes any shared memory they made that was
    never received."""
    workers, index_queues, data_queue, done_event, stopped = state
    if stopped[0]:
        return
    stopped[0] = True
    done_event.set()
    for q in index_queues:
        try:
            q.put(None)
        except Exception:  # pragma: no cover - a closed queue
            pass
    for w in workers:
        w.join(timeout=1.0)
    for w in workers:
        if w.is_alive():
            w.terminate()
            w.join(timeout=1.0)
    # drain what is still queued: mapping a result also unlinks its segment
    while True:
        try:
            data_queue.get(timeout=0.01)
        except Exception:
            break
    for w in workers:
        if w.pid is not None:
            sharing().sweep(w.pid)
    for q in index_queues:
        q.cancel_join_thread()
        q.close()
    data_queue.cancel_join_thread()
    data_queue.close()
