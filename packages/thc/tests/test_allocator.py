"""The caching allocator through the binding, on a fake device written in
Python (the allocator never touches the memory, so addresses are numbers)."""
import pytest

from ember.thc import CachingAllocator, OutOfMemoryError, round_size

MiB = 1 << 20


class FakeDevice:
    def __init__(self, capacity):
        self.capacity = capacity
        self.live = {}           # address -> size
        self.next_address = 1 << 40
        self.busy = set()        # streams with queued work
        self.synced = []

    @property
    def used(self):
        return sum(self.live.values())

    def malloc(self, nbytes):
        if self.used + nbytes > self.capacity:
            raise MemoryError
        address, self.next_address = self.next_address, self.next_address + nbytes + 4096
        self.live[address] = nbytes
        return address

    def free(self, address):
        del self.live[address]

    def synchronize(self, stream):
        self.busy.discard(stream)
        self.synced.append(stream)

    def query(self, stream):
        return stream not in self.busy

    def mem_info(self):
        return self.capacity - self.used, self.capacity


@pytest.fixture
def dev():
    return FakeDevice(64 * MiB)


def test_round_size():
    assert [round_size(n) for n in (0, 1, 512, 513)] == [0, 512, 512, 1024]


def test_small_requests_share_a_two_mib_segment(dev):
    a = CachingAllocator(dev)
    p, q = a.malloc(100), a.malloc(1000)
    assert q == p + 512
    s = a.stats()
    assert (s["allocated_bytes"], s["reserved_bytes"], s["num_segments"]) == (1536, 2 * MiB, 1)
    a.free(p)
    assert a.malloc(300) == p
    assert a.malloc(0) == 0
    a.close()
    assert dev.live == {}


def test_statistics_and_empty_cache(dev):
    a = CachingAllocator(dev)
    p = a.malloc(5 * MiB)
    assert a.stats()["reserved_bytes"] == 6 * MiB
    a.free(p)
    s = a.stats()
    # the 1 MiB left of the 6 MiB segment is not split off: the block held 6 MiB
    assert s["allocated_bytes"] == 0 and s["max_allocated_bytes"] == 6 * MiB
    assert (s["num_allocs"], s["num_frees"]) == (1, 1)
    a.empty_cache()
    assert dev.live == {} and a.stats()["reserved_bytes"] == 0
    assert a.stats()["max_reserved_bytes"] == 6 * MiB
    a.reset_peak_stats()
    assert a.stats()["max_reserved_bytes"] == 0


def test_blocks_stay_on_their_stream(dev):
    a = CachingAllocator(dev)
    p = a.malloc(4096, stream=1)
    a.free(p)
    assert a.malloc(4096, stream=2) != p
    assert a.malloc(4096, stream=1) == p


def test_record_stream_delays_reuse(dev):
    a = CachingAllocator(dev)
    p = a.malloc(4096, stream=1)
    a.record_stream(p, 3)
    dev.busy.add(3)
    a.free(p)
    assert a.stats()["num_pending_frees"] == 1
    q = a.malloc(4096, stream=1)
    assert q != p
    dev.busy.clear()
    assert a.malloc(4096, stream=1) == p


class EventDevice(FakeDevice):
    """A fake device with work queued per stream (busy until finished) and
    events: an event is done once the work queued before it has finished."""

    def __init__(self, capacity):
        super().__init__(capacity)
        self.queued, self.finished = {}, {}   # stream -> items queued, finished
        self.events, self.destroyed = {}, []  # event -> (stream, items before it)
        self.fail_record = False

    def enqueue(self, stream):
        self.queued[stream] = self.queued.get(stream, 0) + 1
        self.busy.add(stream)

    def finish_one(self, stream):
        self.finished[stream] = self.finished.get(stream, 0) + 1
        if self.finished[stream] == self.queued.get(stream, 0):
            self.busy.discard(stream)

    def record_event(self, stream):
        if self.fail_record:
            raise RuntimeError("no more events")
        event = len(self.events) + 1
        self.events[event] = (stream, self.queued.get(stream, 0))
        return event

    def event_query(self, event):
        stream, before = self.events[event]
        return self.finished.get(stream, 0) >= before

    def event_synchronize(self, event):
        stream, before = self.events[event]
        self.finished[stream] = max(self.finished.get(stream, 0), before)

    def event_destroy(self, event):
        self.destroyed.append(event)


def test_freed_blocks_wait_for_an_event_not_for_an_idle_stream():
    """A side stream that never idles (work keeps coming) no longer keeps a
    block it used: only the work queued before the free counts."""
    dev = EventDevice(64 * MiB)
    a = CachingAllocator(dev)
    p = a.malloc(4096, stream=1)
    a.record_stream(p, 3)
    dev.enqueue(3)               # work that uses p
    a.free(p)                    # an event on stream 3 now
    dev.enqueue(3)               # later work: stream 3 stays busy
    assert a.malloc(4096, stream=1) != p and a.stats()["num_pending_frees"] == 1
    dev.finish_one(3)            # the work before the free is done
    assert 3 in dev.busy
    assert a.malloc(4096, stream=1) == p
    assert a.stats()["num_pending_frees"] == 0 and dev.destroyed == [1]


def test_event_failures_fall_back_to_the_stream_and_out_of_memory_waits():
    dev = EventDevice(4 * MiB)
    a = CachingAllocator(dev)
    p = a.malloc(2 * MiB, stream=1)
    a.record_stream(p, 3)
    dev.enqueue(3)
    dev.fail_record = True
    a.free(p)                    # no event: waits for stream 3 to idle
    dev.fail_record = False
    dev.enqueue(3)
    dev.finish_one(3)
    assert a.malloc(2 * MiB, stream=1) != p   # stream 3 is still busy
    a.malloc(2 * MiB, stream=1)   # the device is full: waits for stream 3, releases p's segment
    assert p not in dev.live and len(dev.live) == 2
    assert a.stats()["num_pending_frees"] == 0 and dev.synced == [3]


def test_event_functions_come_before_the_first_allocation():
    from ember.thc._lib import ffi, lib
    dev = EventDevice(64 * MiB)
    a = CachingAllocator(dev)
    a.free(a.malloc(512))
    events = ffi.new("thc_event_ops *", {"ctx": ffi.NULL, "record": lib._thc_py_event_record,
                                         "query": lib._thc_py_event_query,
                                         "synchronize": lib._thc_py_event_synchronize,
                                         "destroy": lib._thc_py_event_destroy})
    assert lib.thc_allocator_set_event_ops(a._ptr, events) != 0
    assert "allocated already" in ffi.string(lib.thc_last_error()).decode()
    events.destroy = ffi.NULL
    assert lib.thc_allocator_set_event_ops(a._ptr, events) != 0


def test_out_of_memory_frees_the_cache_and_retries():
    dev = FakeDevice(8 * MiB)
    a = CachingAllocator(dev)
    a.free(a.malloc(4 * MiB))
    big = a.malloc(6 * MiB, stream=1)     # fits only once the cache is released
    assert a.stats()["reserved_bytes"] == 6 * MiB
    with pytest.raises(OutOfMemoryError, match=r"Tried to allocate 3\.00 MiB") as info:
        a.malloc(3 * MiB, stream=1)
    message = str(info.value)
    assert "6.00 MiB is allocated by tensors" in message
    assert "8.00 MiB in total, of which 2.00 MiB is free" in message
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, MemoryError)
    assert a.stats()["num_ooms"] == 1
    a.free(big)


def test_bad_input(dev):
    a = CachingAllocator(dev)
    with pytest.raises(ValueError, match="was not allocated by this allocator"):
        a.free(12345 * 512)
    p = a.malloc(10)
    a.free(p)
    with pytest.raises(ValueError, match="freed already"):
        a.free(p)
    with pytest.raises(ValueError, match="not a live allocation"):
        a.record_stream(p, 1)
    with pytest.raises(ValueError, match="non-negative int"):
        a.malloc(-1)
    a.close()
    with pytest.raises(RuntimeError, match="closed"):
        a.malloc(1)


def test_a_failing_device_gives_an_error_not_a_crash():
    class Broken(FakeDevice):
        def malloc(self, nbytes):
            raise OSError("device lost")
    a = CachingAllocator(Broken(MiB))
    with pytest.raises(RuntimeError):
        a.malloc(100)
