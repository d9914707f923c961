"""Sharing tensors' storages between processes through POSIX shared memory.

- ``share_memory_(t)`` moves t's storage into a new shared-memory segment in
  place: every view of that storage sees the move, values are kept.
- ``handle(t)`` describes a shared tensor (segment name, byte count, dtype,
  offset, sizes, strides) as plain data that pickles anywhere;
  ``rebuild(handle)`` maps the segment in another process and returns a
  tensor over it.

Segment lifetime: a segment made by ``share_memory_`` is owned by the
process that made it and unlinked when that process exits (its mappings
elsewhere stay valid).  A *transient* segment (``to_transient``) is meant
for one receiver, which unlinks it as soon as it has mapped it: that is how
DataLoader workers pass batches.  Segment names start with
``/ember_<pid>_`` of their maker, so ``sweep(pid)`` can remove whatever a
dead process left behind.
"""
import atexit
import os

from ._core import int64_array, wrap
from ._lib import ffi, last_error, lib
from . import dtypes as _dt

SHM_DIR = "/dev/shm"

_owned = set()        # segments made here by share_memory_: unlinked at exit
_transient = set()    # segments made here for one receiver


def _name(storage):
    return ffi.string(storage.name).decode()


def _swap(a, b):
    """Exchanges what two C storages hold (memory, kind, name), keeping each
    one's reference count and version."""
    for field in ("data", "nbytes", "kind", "release", "release_ctx"):
        va, vb = getattr(a, field), getattr(b, field)
        setattr(a, field, vb)
        setattr(b, field, va)
    na, nb = ffi.string(a.name), ffi.string(b.name)
    a.name = nb
    b.name = na


def _new_segment(nbytes):
    s = lib.th_storage_new_shared(nbytes)
    if not s:
        raise last_error()
    return s


def share_memory_(t):
    """Moves t's storage to shared memory in place (no-op if already shared)."""
    s = t._p.storage
    if s.kind in (lib.TH_STORAGE_SHARED, lib.TH_STORAGE_FILE):
        return t
    new = _new_segment(s.nbytes)
    if s.nbytes:
        ffi.memmove(new.data, s.data, s.nbytes)
    _swap(s, new)
    _ensure_cleanup()
    _owned.add(_name(s))
    lib.th_storage_release(new)  # frees the old memory, now in `new`
    return t


def to_transient(t):
    """A copy of t (compact, contiguous) in a fresh segment for one receiver,
    which unlinks it when it maps it."""
    nbytes = t.nbytes
    s = _new_segment(nbytes)
    try:
        out = wrap(lib.th_tensor_from_storage(
            s, 0, t.ndim, int64_array(t.shape),
            int64_array(_contiguous_strides(t.shape)), t.dtype.code))
    finally:
        lib.th_storage_release(s)
    if nbytes:
        if lib.th_copy(out._p, t._p):
            raise last_error()
    _ensure_cleanup()
    _transient.add(_name(s))
    return out


def _contiguous_strides(shape):
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return strides[::-1]


def is_shared(t):
    return t._p.storage.kind in (lib.TH_STORAGE_SHARED, lib.TH_STORAGE_FILE)


def handle(t):
    """Plain data naming t's shared segment and t's layout in it."""
    p = t._p
    s = p.storage
    if s.kind != lib.TH_STORAGE_SHARED:
        raise RuntimeError("handle() needs a tensor in shared memory: call share_memory_() "
                           "first")
    name = _name(s)
    transient = name in _transient
    if transient:
        _transient.discard(name)
    return (name, int(s.nbytes), t.dtype.name, int(p.offset), tuple(p.sizes[0:p.ndim]),
            tuple(p.strides[0:p.ndim]), transient)


def rebuild(h):
    """The tensor a handle() describes, over the same shared memory."""
    name, nbytes, dtype_name, offset, sizes, strides, transient = h
    s = lib.th_storage_open_shared(name.encode(), nbytes)
    if not s:
        err = last_error()
        raise RuntimeError(f"could not map the shared memory of a tensor sent by another "
                           f"process ({err}); the sender may have exited, or /dev/shm was "
                           f"cleaned, before it was received") from None
    try:
        if transient:
            lib.th_storage_unlink_shared(s)
        d = _dt._by_name(dtype_name)
        return wrap(lib.th_tensor_from_storage(s, offset, len(sizes), int64_array(sizes),
                                               int64_array(strides), d.code))
    finally:
        lib.th_storage_release(s)


def unlink(name):
    try:
        os.unlink(os.path.join(SHM_DIR, name.lstrip("/")))
    except FileNotFoundError:
        pass


def sweep(pid):
    """Unlinks every segment that process `pid` made and left behind; returns
    how many."""
    prefix = f"ember_{int(pid)}_"
    n = 0
    try:
        names = os.listdir(SHM_DIR)
    except OSError:
        return 0
    for f in names:
        if f.startswith(prefix):
            unlink(f)
            n += 1
    return n


def segments(pid=None):
    """Names of ember segments in /dev/shm (of process pid, if given)."""
    prefix = "ember_" if pid is None else f"ember_{int(pid)}_"
    try:
        return sorted(f for f in os.listdir(SHM_DIR) if f.startswith(prefix))
    except OSError:
        return []


_owner_pid = os.getpid()
_cleanup_pid = None


def _ensure_cleanup():
    """Unlinks this process's segments when it exits: atexit for ordinary
    exits, and multiprocessing's exit hook for its children (which leave
    with os._exit under fork)."""
    global _cleanup_pid
    if _cleanup_pid == os.getpid():
        return
    _cleanup_pid = os.getpid()
    atexit.register(_cleanup)
    import multiprocessing
    if multiprocessing.parent_process() is not None:
        from multiprocessing import util
        util.Finalize(None, _cleanup, exitpriority=0)


def _cleanup():
    if os.getpid() != _owner_pid:  # a forked child inherits the set: not its segments
        return
    for name in list(_owned) + list(_transient):
        unlink(name)
    _owned.clear()
    _transient.clear()


def _after_fork():
    global _owner_pid
    _owner_pid = os.getpid()
    _owned.clear()
    _transient.clear()


os.register_at_fork(after_in_child=_after_fork)
