"""The caching device allocator, over the CUDA runtime or over any Python
object that plays the device (how the tests drive it without a GPU)."""
from ._lib import check, ffi, lib

_STAT_FIELDS = ("allocated_bytes", "max_allocated_bytes", "reserved_bytes",
                "max_reserved_bytes", "num_allocs", "num_frees", "num_segments",
                "num_device_mallocs", "num_device_frees", "num_ooms", "num_pending_frees")


def _device(ctx):
    return ffi.from_handle(ctx)


# Device callbacks: a Python device's methods, exceptions mapped to statuses
# (an exception must not cross into C).
@ffi.def_extern(onerror=lambda *exc: lib.THC_ERR_RUNTIME)
def _thc_py_malloc(ctx, ptr, nbytes):
    try:
        address = _device(ctx).malloc(nbytes)
    except MemoryError:
        return lib.THC_ERR_MEMORY
    ptr[0] = ffi.cast("void *", address)
    return lib.THC_OK


@ffi.def_extern(onerror=lambda *exc: lib.THC_ERR_RUNTIME)
def _thc_py_free(ctx, ptr):
    _device(ctx).free(int(ffi.cast("uintptr_t", ptr)))
    return lib.THC_OK


@ffi.def_extern(onerror=lambda *exc: lib.THC_ERR_RUNTIME)
def _thc_py_stream_synchronize(ctx, stream):
    _device(ctx).synchronize(int(ffi.cast("uintptr_t", stream)))
    return lib.THC_OK


@ffi.def_extern(onerror=lambda *exc: -1)
def _thc_py_stream_query(ctx, stream):
    return 1 if _device(ctx).query(int(ffi.cast("uintptr_t", stream))) else 0


@ffi.def_extern(onerror=lambda *exc: lib.THC_ERR_RUNTIME)
def _thc_py_mem_info(ctx, free_bytes, total_bytes):
    free_bytes[0], total_bytes[0] = _device(ctx).mem_info()
    return lib.THC_OK


@ffi.def_extern(onerror=lambda *exc: lib.THC_ERR_RUNTIME)
def _thc_py_event_record(ctx, stream, event):
    event[0] = ffi.cast("void *", _device(ctx).record_event(int(ffi.cast("uintptr_t", stream))))
    return lib.THC_OK


@ffi.def_extern(onerror=lambda *exc: -1)
def _thc_py_event_query(ctx, event):
    return 1 if _device(ctx).event_query(int(ffi.cast("uintptr_t", event))) else 0


@ffi.def_extern(onerror=lambda *exc: lib.THC_ERR_RUNTIME)
def _thc_py_event_synchronize(ctx, event):
    _device(ctx).event_synchronize(int(ffi.cast("uintptr_t", event)))
    return lib.THC_OK


@ffi.def_extern(onerror=lambda *exc: lib.THC_ERR_RUNTIME)
def _thc_py_event_destroy(ctx, event):
    _device(ctx).event_destroy(int(ffi.cast("uintptr_t", event)))
    return lib.THC_OK


class CachingAllocator:
    """A caching allocator.  ``device`` is None for the CUDA runtime, or an
    object with ``malloc(nbytes) -> address`` (raising MemoryError when
    full), ``free(address)``, ``synchronize(stream)``, ``query(stream) ->
    bool`` (True when the stream is idle) and ``mem_info() -> (free,
    total)``; with ``record_event(stream) -> event`` (a non-zero int),
    ``event_query(event) -> bool``, ``event_synchronize(event)`` and
    ``event_destroy(event)`` too, freed blocks wait on events.  Streams,
    events and addresses are integers."""

    _ptr = ffi.NULL   # until the C allocator exists

    def __init__(self, device=None):
        if device is None:
            ops = lib.thc_cuda_device_ops()
            if ops == ffi.NULL:
                check(lib.thc_last_status())
            self._keep = None
        else:
            self._handle = ffi.new_handle(device)
            ops = ffi.new("thc_device_ops *", {
                "ctx": self._handle,
                "malloc": lib._thc_py_malloc,
                "free": lib._thc_py_free,
                "stream_synchronize": lib._thc_py_stream_synchronize,
                "stream_query": lib._thc_py_stream_query,
                "mem_info": lib._thc_py_mem_info,
            })
            self._keep = (device, ops)
        self._ptr = lib.thc_allocator_new(ops)
        if self._ptr == ffi.NULL:
            check(lib.thc_last_status())
        if device is not None and hasattr(device, "record_event"):
            events = ffi.new("thc_event_ops *", {
                "ctx": self._handle,
                "record": lib._thc_py_event_record,
                "query": lib._thc_py_event_query,
                "synchronize": lib._thc_py_event_synchronize,
                "destroy": lib._thc_py_event_destroy,
            })
            self._keep = (device, ops, events)
            check(lib.thc_allocator_set_event_ops(self._ptr, events))

    def _alive(self):
        if self._ptr == ffi.NULL:
            raise RuntimeError("the allocator was closed")
        return self._ptr

    def malloc(self, nbytes, stream=0):
        """Address of a new block of at least nbytes on `stream` (0 for none)."""
        if not isinstance(nbytes, int) or isinstance(nbytes, bool) or nbytes < 0:
            raise ValueError(f"nbytes must be a non-negative int, got {nbytes!r}")
        out = ffi.new("void **")
        check(lib.thc_allocator_malloc(self._alive(), out, nbytes, ffi.cast("void *", stream)))
        return int(ffi.cast("uintptr_t", out[0]))

    def free(self, address):
        check(lib.thc_allocator_free(self._alive(), ffi.cast("void *", address)))

    def record_stream(self, address, stream):
        check(lib.thc_allocator_record_stream(self._alive(), ffi.cast("void *", address),
                                              ffi.cast("void *", stream)))

    def empty_cache(self):
        check(lib.thc_allocator_empty_cache(self._alive()))

    def reset_peak_stats(self):
        check(lib.thc_allocator_reset_peak_stats(self._alive()))

    def stats(self):
        """The allocator's counters as a dict (bytes and counts)."""
        s = ffi.new("thc_alloc_stats *")
        check(lib.thc_allocator_stats(self._alive(), s))
        return {name: getattr(s, name) for name in _STAT_FIELDS}

    def close(self):
        """Returns every segment to the device; the allocator is unusable after."""
        if self._ptr != ffi.NULL:
            lib.thc_allocator_delete(self._ptr)
            self._ptr = ffi.NULL

    def __del__(self):
        self.close()


def round_size(nbytes):
    """The size a request is rounded to (512-byte granularity)."""
    return lib.thc_allocator_round_size(nbytes)
