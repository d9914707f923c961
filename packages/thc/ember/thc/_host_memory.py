"""Page-locked (pinned) host memory and the bookkeeping of non_blocking
transfers.

A transfer queued without waiting (``non_blocking=True`` from or to pinned
memory) reads or writes host memory after the call returns, so the objects
owning that memory are kept alive until the current stream has passed the
copy: an event is recorded behind it and the objects are dropped once the
event has completed (checked at the next transfer and by ``flush()``)."""
import numpy as np

import ember.th as _th

from ._lib import check, ffi, lib

# [start, end) address ranges of live pinned blocks, for is_pinned()
_pinned = {}
# (event handle, objects kept alive) of transfers that may still run
_in_flight = []


def _free_pinned(p, _pinned=_pinned, ffi=ffi, lib=lib):
    # the defaults hold the module's objects: a block freed while the
    # interpreter exits finds its globals already set to None
    _pinned.pop(int(ffi.cast("uintptr_t", p)), None)
    lib.thc_host_free(p)


def _numpy_dtype(dtype):
    return {"bool": np.bool_}.get(dtype.name) or getattr(np, dtype.name, None)


def pinned_empty(shape, dtype):
    """An uninitialised contiguous ember.th tensor in page-locked memory, or
    None for dtypes NumPy lacks (bfloat16)."""
    np_dtype = _numpy_dtype(dtype)
    if np_dtype is None:
        return None
    count = 1
    for n in shape:
        count *= n
    nbytes = max(count * np.dtype(np_dtype).itemsize, 1)
    raw = ffi.new("void **")
    check(lib.thc_host_alloc(raw, nbytes))
    start = int(ffi.cast("uintptr_t", raw[0]))
    _pinned[start] = start + nbytes
    block = ffi.gc(ffi.cast("char *", raw[0]), _free_pinned)
    # the array's buffer keeps `block` (and so the memory) alive
    arr = np.frombuffer(ffi.buffer(block, nbytes), dtype=np_dtype)[:count]
    return _th.from_numpy(arr.reshape(tuple(shape)))


def pin_memory(t):
    """A copy of CPU tensor `t` (ember.th) in page-locked host memory, from
    which host-to-device copies run at full speed and asynchronously.  The
    memory is freed when the last tensor over it goes.  Dtypes NumPy lacks
    (bfloat16) are returned unpinned."""
    pinned = pinned_empty(tuple(t.shape), t.dtype)
    if pinned is None:
        return t
    pinned.copy_(t)
    return pinned


def is_pinned(t):
    """True when CPU tensor `t` lies in page-locked memory from pin_memory."""
    addr = t.data_ptr()
    return any(start <= addr < end for start, end in _pinned.items())


def flush():
    """Drops what finished transfers kept alive; returns how many may still
    be running."""
    running = []
    for event, objects in _in_flight:
        if lib.thc_event_query(event) == 0:
            running.append((event, objects))
        else:
            lib.thc_event_destroy(event)
    _in_flight[:] = running
    return len(running)


def keep_until_done(*objects):
    """Keeps `objects` alive until the work queued so far on the current
    stream has run."""
    flush()
    event = ffi.new("void **")
    check(lib.thc_event_create(event, 0))
    rc = lib.thc_event_record(event[0], lib.thc_current_stream())
    if rc:
        lib.thc_event_destroy(event[0])
        check(rc)
    _in_flight.append((event[0], objects))
