"""CUDA streams and events as Python objects (libTHC's handles).  Work is
queued on the calling thread's current stream: ``with ember.thc.stream(s):``
makes `s` current for the block."""
import contextlib
import weakref

from ._device_guard import device_index, on_device
from ._lib import check, ffi, lib


class Stream:
    """A CUDA stream (non-blocking with respect to the default stream).
    ``Stream(_handle=0)`` stands for the default stream.

    Streams are never destroyed: a dropped Stream's handle goes back to a
    pool per device for the next Stream() there.  The caching allocator
    keeps the handles of the streams memory was freed on or recorded for,
    and a thread's current stream outlives the object set current; a
    destroyed (or recreated, same-address) stream would break both."""

    def __init__(self, _handle=None):
        self._owned = _handle is None
        self.device_index = _current_device()   # a stream belongs to its device
        if self._owned:
            pool = _free_handles.setdefault(self.device_index, [])
            if pool:
                self._handle = pool.pop()
            else:
                h = ffi.new("void **")
                check(lib.thc_stream_create(h))
                self._handle = h[0]
        else:
            self._handle = ffi.cast("void *", _handle)

    def __del__(self):
        if getattr(self, "_owned", False) and self._handle:
            try:
                _free_handles.setdefault(self.device_index, []).append(self._handle)
            except (AttributeError, TypeError):   # interpreter shutdown
                pass
            self._handle = ffi.NULL

    @property
    def cuda_stream(self):
        """The cudaStream_t as an integer (0: the default stream)."""
        return int(ffi.cast("uintptr_t", self._handle))

    def query(self):
        """True when all work queued on the stream has finished."""
        with _on_device(self.device_index):   # handle 0 is the current device's
            r = lib.thc_stream_query(self._handle)
        if r < 0:
            check(lib.thc_last_status() or lib.THC_ERR_RUNTIME)
        return bool(r)

    def synchronize(self):
        with _on_device(self.device_index):
            check(lib.thc_stream_synchronize(self._handle))

    def wait_event(self, event):
        if event._handle is None:   # never recorded: nothing to wait for
            return
        with _on_device(self.device_index):
            check(lib.thc_stream_wait_event(self._handle, event._handle))

    def wait_stream(self, stream):
        """Later work on this stream waits for what `stream` has queued."""
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        event = event or Event()
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream) and self.cuda_stream == other.cuda_stream and \
            self.device_index == other.device_index

    def __hash__(self):
        return hash((self.device_index, self.cuda_stream))

    def __repr__(self):
        return f"<ember.cuda.Stream cuda_stream={self.cuda_stream:#x}>"


class Event:
    """A CUDA event: a point in a stream's work, to wait for or time.  It is
    made at its first record, on that stream's device, and records only on
    streams of that device."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self._timing = bool(enable_timing)
        self._handle = None
        self.device_index = None

    def __del__(self):
        if getattr(self, "_handle", None):
            lib.thc_event_destroy(self._handle)
            self._handle = None

    def record(self, stream=None):
        stream = stream or current_stream()
        with _on_device(stream.device_index):
            if self._handle is None:
                h = ffi.new("void **")
                check(lib.thc_event_create(h, int(self._timing)))
                self._handle, self.device_index = h[0], stream.device_index
            elif self.device_index != stream.device_index:
                raise RuntimeError(f"Event device cuda:{self.device_index} does not match "
                                   f"recording stream's device cuda:{stream.device_index}")
            check(lib.thc_event_record(self._handle, stream._handle))

    def wait(self, stream=None):
        (stream or current_stream()).wait_event(self)

    def query(self):
        if self._handle is None:   # never recorded: nothing pending
            return True
        r = lib.thc_event_query(self._handle)
        if r < 0:
            check(lib.thc_last_status() or lib.THC_ERR_RUNTIME)
        return bool(r)

    def synchronize(self):
        if self._handle is not None:
            check(lib.thc_event_synchronize(self._handle))

    def elapsed_time(self, end_event):
        """Milliseconds between this event and `end_event` (both recorded,
        made with enable_timing=True)."""
        if self._handle is None or end_event._handle is None:
            raise RuntimeError("elapsed_time: both events must be recorded first")
        ms = ffi.new("float *")
        check(lib.thc_event_elapsed_ms(self._handle, end_event._handle, ms))
        return ms[0]


# (device, handle) -> the Stream object set current, so current_stream()
# returns it (handle 0 is every device's default stream)
_streams = weakref.WeakValueDictionary()
# device -> handles of dropped Streams, for the next Stream() there
_free_handles = {}


def _current_device():
    d = ffi.new("int *")
    return d[0] if lib.thc_get_device(d) == 0 else 0


def _on_device(index):
    """`index` current inside the block (libTHC keeps a current stream per
    device); no device query when it is already current."""
    return on_device(None if index == _current_device() else index)


def current_stream(device=None):
    """The calling thread's current stream on `device` (None: the current
    device)."""
    with _on_device(device_index(device)):
        h = int(ffi.cast("uintptr_t", lib.thc_current_stream()))
        return _streams.get((_current_device(), h)) or Stream(_handle=h)


def default_stream(device=None):
    with _on_device(device_index(device)):
        return Stream(_handle=0)


def set_stream(stream):
    """Makes `stream` current on its own device."""
    _streams[(stream.device_index, stream.cuda_stream)] = stream
    with _on_device(stream.device_index):
        check(lib.thc_set_current_stream(stream._handle))


@contextlib.contextmanager
def stream(s):
    """Makes `s` the current stream, and its device the current device,
    inside the block (None: no change)."""
    if s is None:
        yield
        return
    with _on_device(s.device_index):
        previous = current_stream()
        set_stream(s)
        try:
            yield s
        finally:
            set_stream(previous)
