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

A process killed with SIGKILL runs no exit code: its segments are
reclaimed by the next Ember process's first shared-memory use
(``reclaim()``).  A process that calls ``share_memory_`` holds a shared
flock on its liveness file ``/dev/shm/.ember-lock-<pid>`` for as long as it
lives (one fd; the kernel drops the lock however the process dies).  A
segment is reclaimed only when it is this user's, older than
``reclaim_after_s``, its maker's pid is gone or now names a process that
started after the segment was made (a reused pid), and no liveness file of
that pid older than the segment is locked (which also protects makers in
another pid namespace sharing /dev/shm).  That is what a normal exit would
have done: receivers' mappings stay valid, only the name goes.
"""
import atexit
import fcntl
import os
import re
import time

from ._core import int64_array, wrap
from ._lib import ffi, last_error, lib
from . import _convert, dtypes as _dt

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


_file_paths = {}      # address of a file-backed storage -> its path
_warned = []
_counter = [0]


def fallback_dir():
    """Where segments go when /dev/shm is full ($EMBER_SHM_FALLBACK_DIR, or
    the temporary folder); "" or "none" in that variable turns it off."""
    import tempfile
    d = os.environ.get("EMBER_SHM_FALLBACK_DIR")
    if d is None:
        return tempfile.gettempdir()
    return None if d.lower() in ("", "none", "0") else d


def _addr(s):
    return int(ffi.cast("uintptr_t", s))


def _create_shm(nbytes):
    return lib.th_storage_new_shared(nbytes)


def _new_segment(nbytes):
    if not _reclaimed:
        _reclaimed.append(reclaim())
    s = _create_shm(nbytes)
    if s:
        return s
    err = last_error()
    folder = fallback_dir()
    if not isinstance(err, MemoryError):
        raise err
    if folder is None:
        raise MemoryError(f"{err}. The file-backed fallback is off "
                          f"(EMBER_SHM_FALLBACK_DIR={os.environ.get('EMBER_SHM_FALLBACK_DIR')!r}); "
                          f"set it to a folder to share through files there.") from None
    # /dev/shm is too small: a mapped file in fallback_dir() instead
    _counter[0] += 1
    path = os.path.join(folder, f"ember_{os.getpid()}_{_counter[0]}_{os.urandom(4).hex()}")
    f = lib.th_storage_new_file(path.encode(), nbytes, 1)
    if not f:
        ferr = last_error()
        try:
            os.unlink(path)
        except OSError:
            pass
        raise MemoryError(f"{err}; the file-backed fallback in {folder} failed too: {ferr}") \
            from None
    if not _warned:
        import warnings
        _warned.append(1)
        warnings.warn(f"shared memory (/dev/shm) is too small; sharing tensors through files "
                      f"in {folder} instead (slower). Enlarge /dev/shm (docker --shm-size) or "
                      f"set EMBER_SHM_FALLBACK_DIR.", RuntimeWarning, stacklevel=3)
    _file_paths[_addr(f)] = path
    return f


# ---- liveness locks and reclaiming the segments of killed processes ----------------
reclaim_after_s = 5.0   # younger segments may be a DataLoader batch on its way
_LOCK_PREFIX = ".ember-lock-"
_lock_fd = [None]       # this process's liveness file, locked while it lives
_reclaimed = []         # reclaim() ran in this process
_SEGMENT = re.compile(r"ember_(\d+)_\d+_[0-9a-f]+$")


def _lock_path(pid):
    return os.path.join(SHM_DIR, f"{_LOCK_PREFIX}{int(pid)}")


def _hold():
    """Makes and locks this process's liveness file, once (before its first
    share_memory_ segment, so that the file is older than its segments).  A
    file of the same name is a dead process's whose pid this one reuses."""
    if _lock_fd[0] is not None:
        return
    path = _lock_path(os.getpid())
    try:
        os.unlink(path)
    except OSError:
        pass
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
    except OSError:
        os.close(fd)
        return
    _lock_fd[0] = fd


def _locked(path, before=None):
    """Whether a live process holds the lock of the file at path (made
    before `before`, if given)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        if before is not None and os.fstat(fd).st_ctime > before + 1.0:
            return False   # made by a later process with the same pid
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        return False
    finally:
        os.close(fd)


def _start_time(pid):
    """When process pid started (seconds since the epoch), None if unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        ticks = int(stat[stat.rindex(b")") + 2:].split()[19])  # field 22, starttime
        with open("/proc/stat", "rb") as f:
            btime = next(int(line.split()[1]) for line in f if line.startswith(b"btime "))
        return btime + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def process_gone(pid, since):
    """Whether process `pid`, known to be alive at time `since` (it made a
    file then), has exited: no process has its pid, or the one that has it
    started later (a reused pid; boot time is known to the second)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass
    start = _start_time(pid)
    return start is not None and start > since + 2.0


def _stale(path, pid, now):
    """Whether the segment at path was left by a dead maker (see the module
    docstring)."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    if st.st_uid != os.getuid() or now - st.st_ctime < reclaim_after_s:
        return False
    return process_gone(pid, st.st_ctime) and not _locked(_lock_path(pid), st.st_ctime)


def _unlink_quietly(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def reclaim():
    """Unlinks the segments (and fallback files) that killed processes left
    behind; returns how many.  Runs once per process, at its first
    shared-memory use."""
    now, n, me = time.time(), 0, os.getpid()
    for folder in {SHM_DIR, fallback_dir()}:
        try:
            names = os.listdir(folder) if folder else ()
        except OSError:
            continue
        for f in names:
            m = _SEGMENT.match(f)
            path = os.path.join(folder, f)
            if f.startswith(_LOCK_PREFIX) and folder == SHM_DIR and f[len(_LOCK_PREFIX):].isdigit():
                pid = int(f[len(_LOCK_PREFIX):])
                if pid != me and process_gone(pid, now) and not _locked(path):
                    _unlink_quietly(path)   # a dead process's liveness file
                continue
            if not m or int(m.group(1)) == me:
                continue
            if _stale(path, int(m.group(1)), now):
                try:
                    os.unlink(path)
                    n += 1
                except OSError:
                    pass
    return n


def _id_of(s):
    """(kind, name or path) identifying a shared storage across processes."""
    if s.kind == lib.TH_STORAGE_FILE:
        path = _file_paths.get(_addr(s))
        if path is None or not path.endswith(_name(s)):  # none, or a stale entry
            raise RuntimeError("this file-backed storage was not made by ember's sharing")
        return "file", path
    return "shm", _name(s)


def share_memory_(t):
    """Moves t's storage to shared memory in place (no-op if already shared)."""
    s = t._p.storage
    if s.kind in (lib.TH_STORAGE_SHARED, lib.TH_STORAGE_FILE):
        return t
    _hold()
    new = _new_segment(s.nbytes)
    if s.nbytes:
        ffi.memmove(new.data, s.data, s.nbytes)
    path = _file_paths.pop(_addr(new), None) if new.kind == lib.TH_STORAGE_FILE else None
    views = _convert.exports_of(s)
    _swap(s, new)
    _ensure_cleanup()
    if path is not None:
        _file_paths[_addr(s)] = path
        _owned.add(path)
    else:
        _owned.add(_name(s))
    if not views:
        lib.th_storage_release(new)  # frees the old memory, now in `new`
        return t
    # NumPy arrays (DLPack capsules, memoryviews) point into the old memory:
    # it lives on, released with the last of them, so that they never read
    # freed memory.  They keep the values of the move and stop following the
    # tensor (refusing the move instead would fail inside multiprocessing's
    # queue feeder thread, where the sender never sees the error).
    old = ffi.gc(new, lib.th_storage_release)
    for v in views:
        v.old_memory = old
    _warn(f"share_memory_(): {len(views)} NumPy array(s) (or DLPack capsules, memoryviews) "
          f"of this tensor keep the memory it had before the move, with the values it had "
          f"then, and no longer follow the tensor; call .numpy() again after share_memory_()")
    return t


def _warn(msg):
    """A RuntimeWarning pointing at the first caller outside ember."""
    import sys
    import warnings
    root = os.path.dirname(os.path.dirname(__file__)) + os.sep  # the ember package
    level, f = 2, sys._getframe(1)   # stacklevel 2 is _warn's caller
    while f is not None and f.f_code.co_filename.startswith(root):
        level, f = level + 1, f.f_back
    warnings.warn(msg, RuntimeWarning, stacklevel=level)


def empty_transient(shape, dtype):
    """An uninitialised contiguous tensor in a fresh segment for one
    receiver, which unlinks it when it maps it."""
    shape = [int(n) for n in shape]
    nbytes = dtype.itemsize
    for n in shape:
        nbytes *= n
    s = _new_segment(nbytes)
    try:
        out = wrap(lib.th_tensor_from_storage(
            s, 0, len(shape), int64_array(shape), int64_array(_contiguous_strides(shape)),
            dtype.code))
    finally:
        lib.th_storage_release(s)
    _ensure_cleanup()
    _transient.add(_id_of(out._p.storage)[1])
    return out


def stack(raws, transient=False):
    """Stacks same-dtype, same-shape contiguous tensors along a new first
    dimension by copying their bytes (into a transient segment if asked);
    None if they do not qualify."""
    first = raws[0]
    dtype, shape = first.dtype, first.shape
    nb = first.nbytes
    for r in raws:
        if r.dtype is not dtype or r.shape != shape or not lib.th_is_contiguous(r._p):
            return None
    full = (len(raws),) + tuple(shape)
    if transient:
        out = empty_transient(full, dtype)
    else:
        out = wrap(lib.th_empty(len(full), int64_array(full), dtype.code))
    if nb:
        dst = ffi.cast("char *", lib.th_data_ptr(out._p))
        data_ptr, memmove = lib.th_data_ptr, ffi.memmove
        for i, r in enumerate(raws):
            memmove(dst + i * nb, data_ptr(r._p), nb)
    return out


def is_transient(t):
    s = t._p.storage
    if s.kind not in (lib.TH_STORAGE_SHARED, lib.TH_STORAGE_FILE):
        return False
    return _id_of(s)[1] in _transient


def to_transient(t):
    """A copy of t (compact, contiguous) in a fresh segment for one receiver."""
    out = empty_transient(t.shape, t.dtype)
    if t.nbytes and lib.th_copy(out._p, t._p):
        raise last_error()
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
    if s.kind not in (lib.TH_STORAGE_SHARED, lib.TH_STORAGE_FILE):
        raise RuntimeError("handle() needs a tensor in shared memory: call share_memory_() "
                           "first")
    kind, name = _id_of(s)
    transient = name in _transient
    if transient:
        _transient.discard(name)
    return (name, int(s.nbytes), t.dtype.name, int(p.offset), tuple(p.sizes[0:p.ndim]),
            tuple(p.strides[0:p.ndim]), transient, kind)


def rebuild(h):
    """The tensor a handle() describes, over the same shared memory."""
    name, nbytes, dtype_name, offset, sizes, strides, transient, kind = h
    if kind == "file":
        s = lib.th_storage_new_file(name.encode(), nbytes, 0)
    else:
        s = lib.th_storage_open_shared(name.encode(), nbytes)
    if not s:
        err = last_error()
        raise RuntimeError(f"could not map the shared memory of a tensor sent by another "
                           f"process ({err}); the sender may have exited, or /dev/shm was "
                           f"cleaned, before it was received") from None
    try:
        if kind == "file":
            if transient:
                unlink(name)
            else:
                _file_paths[_addr(s)] = name
        elif transient:
            lib.th_storage_unlink_shared(s)
        d = _dt._by_name(dtype_name)
        return wrap(lib.th_tensor_from_storage(s, offset, len(sizes), int64_array(sizes),
                                               int64_array(strides), d.code))
    finally:
        lib.th_storage_release(s)


def unlink(name):
    """Removes a segment ("/ember_..." or "ember_...") or a fallback file (a path)."""
    path = name if name.startswith("/") and not name.startswith("/ember_") else \
        os.path.join(SHM_DIR, name.lstrip("/"))
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def sweep(pid):
    """Unlinks every segment that process `pid` made and left behind; returns
    how many."""
    prefix = f"ember_{int(pid)}_"
    n = 0
    for folder in {SHM_DIR, fallback_dir()}:
        if folder is None:
            continue
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for f in names:
            if f.startswith(prefix):
                try:
                    os.unlink(os.path.join(folder, f))
                    n += 1
                except OSError:
                    pass
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
    if _lock_fd[0] is not None:
        _unlink_quietly(_lock_path(os.getpid()))


def _after_fork():
    global _owner_pid
    _owner_pid = os.getpid()
    _owned.clear()
    _transient.clear()
    if _lock_fd[0] is not None:  # the parent's liveness lock, not this child's
        os.close(_lock_fd[0])
        _lock_fd[0] = None


os.register_at_fork(after_in_child=_after_fork)
