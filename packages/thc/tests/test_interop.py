"""__cuda_array_interface__ both ways, streams and events, record_stream;
CuPy round trips where CuPy and a GPU are present."""
import numpy as np
import pytest

import ember.thc as thc

needs_device = pytest.mark.skipif(thc.device_count() == 0,
                                  reason=f"no CUDA device: {thc.cuda_error_text()}")


class Foreign:
    """Another library's array: just the interface, over given memory."""

    def __init__(self, interface):
        self.__cuda_array_interface__ = interface


@needs_device
def test_interface_of_contiguous_and_strided_tensors():
    t = thc.arange(12.0).reshape(3, 4)
    cai = t.__cuda_array_interface__
    assert cai["shape"] == (3, 4) and cai["typestr"] == "<f4" and cai["version"] == 3
    assert cai["data"] == (t.data_ptr(), False) and cai["strides"] is None
    v = t.t()
    assert v.__cuda_array_interface__["strides"] == (4, 16)
    with pytest.raises(TypeError, match="bfloat16"):
        thc.zeros(2, dtype=thc.bfloat16).__cuda_array_interface__


@needs_device
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int8", "uint8", "int32",
                                   "int64", "bool"])
def test_wrapping_shares_memory(dtype):
    rng = np.random.default_rng(0)
    host = (rng.standard_normal((4, 5)) * 10).astype(dtype)
    t = thc.from_numpy(host)
    for view in (t, t.t(), t[1:, ::2], t.flip(0)):
        foreign = Foreign(view.__cuda_array_interface__)
        w = thc.as_tensor(foreign)
        assert w.dtype is view.dtype and w.shape == view.shape
        assert np.array_equal(w.cpu().numpy(), view.cpu().numpy())
    w = thc.as_tensor(Foreign(t.__cuda_array_interface__))
    w.fill_(1)   # written through the wrapper, seen by the owner
    assert np.all(t.cpu().numpy() == np.ones_like(host))


@needs_device
def test_the_wrapped_object_lives_as_long_as_the_tensor():
    import gc
    import weakref
    t = thc.ones(6)
    foreign = Foreign(t.__cuda_array_interface__)
    ref = weakref.ref(foreign)
    w = thc.as_tensor(foreign)
    del foreign
    gc.collect()
    assert ref() is not None
    del w
    gc.collect()
    assert ref() is None


@needs_device
def test_bad_interfaces_are_refused():
    t = thc.ones(4)
    cai = dict(t.__cuda_array_interface__, typestr="<c8")
    with pytest.raises(TypeError, match="cannot hold"):
        thc.as_tensor(Foreign(cai))
    cai = dict(t.__cuda_array_interface__, strides=(3,))
    with pytest.raises(ValueError, match="multiples of the item size"):
        thc.as_tensor(Foreign(cai))


@needs_device
def test_streams_and_events():
    s = thc.Stream()
    start, end = thc.Event(enable_timing=True), thc.Event(enable_timing=True)
    assert thc.current_stream() == thc.default_stream()
    with thc.stream(s):
        assert thc.current_stream() is s
        start.record()
        x = thc.ones(1000) * 2
        end.record()
        x.record_stream(s)
    assert thc.current_stream() == thc.default_stream()
    end.synchronize()
    assert end.query() and s.query()
    assert start.elapsed_time(end) >= 0
    s.wait_stream(thc.default_stream())
    s.synchronize()
    assert x.sum().item() == 2000


@needs_device
def test_dropped_streams_are_reused_not_destroyed():
    """The allocator and the current-stream slot keep stream handles: a
    dropped Stream's handle stays valid and serves the next Stream()."""
    s = thc.Stream()
    handle = s.cuda_stream
    x = thc.ones(4096)
    x.record_stream(s)
    thc.set_stream(s)
    thc.set_stream(thc.default_stream())
    del s, x   # x's memory waits on the handle; the handle must stay usable
    y = thc.ones(4096) * 3   # allocating polls the recorded stream
    assert y.sum().item() == 3 * 4096
    t = thc.Stream()
    assert t.cuda_stream == handle   # the same stream again
    with thc.stream(t):
        assert (thc.ones(8) + 1).sum().item() == 16
    assert thc.Stream().cuda_stream != handle   # t is alive: a fresh one


@pytest.mark.gpu
def test_cupy_round_trip():
    cupy = pytest.importorskip("cupy")
    t = thc.arange(10.0)
    c = cupy.asarray(t)   # through __cuda_array_interface__: no copy
    assert c.data.ptr == t.data_ptr()
    c *= 2
    assert t.cpu().tolist() == [2.0 * i for i in range(10)]
    a = cupy.arange(6, dtype=cupy.float64).reshape(2, 3)[:, ::2]
    w = thc.as_tensor(a)
    assert w.data_ptr() == a.data.ptr and w.shape == (2, 2)
    assert np.array_equal(w.cpu().numpy(), cupy.asnumpy(a))


@needs_device
def test_pinned_memory_lives_with_its_tensors():
    import gc

    import ember.th as th
    from ember.thc import _host_memory
    t = th.arange(10, dtype=th.float32)
    p = thc.pin_memory(t)
    assert thc.is_pinned(p) and not thc.is_pinned(t)
    assert p.tolist() == t.tolist()
    view = p[2:5]
    assert thc.is_pinned(view)
    before = len(_host_memory._pinned)
    del p
    gc.collect()
    assert len(_host_memory._pinned) == before   # the view still holds the block
    del view
    gc.collect()
    assert len(_host_memory._pinned) == before - 1
    assert thc.pin_memory(th.zeros(3, dtype=th.bfloat16)).dtype is th.bfloat16


@needs_device
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "bfloat16"])
def test_non_blocking_transfers_match_blocking_ones(dtype):
    import ember.th as th
    from ember.thc import _host_memory
    rng = np.random.default_rng(7)
    host = th.tensor(rng.standard_normal((5, 7)) * 10).to(getattr(th, dtype))
    pinned = thc.pin_memory(host)
    assert thc.is_pinned(pinned) == (dtype != "bfloat16")
    d = thc.empty((5, 7), dtype=getattr(thc, dtype)).copy_(pinned, non_blocking=True)
    back = d.to("cpu", non_blocking=True)      # into pinned memory when NumPy has the dtype
    assert thc.is_pinned(back) == (dtype != "bfloat16")
    thc.current_stream().synchronize()
    assert back.tolist() == host.tolist()
    # into a non-contiguous device tensor, and from pageable memory (synchronous)
    target = thc.zeros((7, 5), dtype=getattr(thc, dtype)).t()
    target.copy_(pinned, non_blocking=True)
    assert target.cpu().tolist() == host.tolist()
    target.copy_(host, non_blocking=True)
    assert target.cpu().tolist() == host.tolist()
    thc.synchronize()
    assert _host_memory.flush() == 0   # every finished transfer let go of its memory


@needs_device
def test_non_blocking_upload_keeps_its_source_alive():
    import gc

    import ember.th as th
    from ember.thc import _host_memory
    pinned = thc.pin_memory(th.arange(1000, dtype=th.float64))
    blocks = len(_host_memory._pinned)
    d = thc.empty((1000,), dtype=thc.float64).copy_(pinned, non_blocking=True)
    # held until the stream has passed the copy
    assert any(o.data_ptr() == pinned.data_ptr()
               for _, objs in _host_memory._in_flight for o in objs)
    del pinned
    gc.collect()
    thc.synchronize()
    _host_memory.flush()
    gc.collect()
    assert len(_host_memory._pinned) == blocks - 1
    assert d.cpu().tolist() == list(range(1000))


@needs_device
def test_device_properties_and_memory():
    p = thc.get_device_properties(0)
    assert p.name and p.total_memory > 0 and p.multi_processor_count >= 1
    assert thc.get_device_name() == p.name
    assert thc.get_device_capability() == (p.major, p.minor)
    free, total = thc.mem_get_info()
    assert 0 <= free <= total == p.total_memory
    if thc.is_emulated():
        assert "emulated" in p.name and not thc.cublas_available()
        assert thc.cublas_error_text() != ""
    with pytest.raises(ValueError, match="does not exist"):
        thc.get_device_properties(thc.device_count())


@needs_device
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int8", "uint8",
                                   "int32", "int64", "bool"])
def test_dlpack_round_trip_shares_memory(dtype):
    import gc

    from ember.thc import _dlpack
    t = thc.arange(12).reshape(3, 4).to(getattr(thc, dtype if dtype != "bool" else "bool"))
    assert t.__dlpack_device__() == (2, 0)
    for view in (t, t.t(), t[:, 1::2], t.flip(1)):
        w = thc.from_dlpack(view)   # through __dlpack__
        assert w.dtype is view.dtype and w.shape == view.shape
        assert w.data_ptr() == view.data_ptr()
        assert w.cpu().tolist() == view.cpu().tolist()
    del w
    gc.collect()
    before = len(_dlpack._exported)
    w = thc.from_dlpack(t.__dlpack__())   # a capsule given directly
    assert len(_dlpack._exported) == before + 1
    del w
    gc.collect()   # the consumer's tensor gone: the deleter ran
    assert len(_dlpack._exported) == before
    capsule = t.__dlpack__()
    del capsule   # never consumed: its destructor frees the export
    gc.collect()
    assert len(_dlpack._exported) == before


@needs_device
def test_dlpack_refuses_what_it_cannot_hold():
    with pytest.raises(ValueError, match="dltensor"):
        thc.from_dlpack(object())
    capsule = thc.ones(2).__dlpack__()
    thc.from_dlpack(capsule)
    with pytest.raises(ValueError, match="unused"):
        thc.from_dlpack(capsule)   # already consumed


@pytest.mark.gpu
def test_dlpack_with_pytorch_and_cupy():
    torch = pytest.importorskip("torch")
    t = thc.arange(6.0)
    pt = torch.from_dlpack(t)
    assert pt.is_cuda and pt.data_ptr() == t.data_ptr()
    pt.mul_(3)
    assert t.cpu().tolist() == [0.0, 3.0, 6.0, 9.0, 12.0, 15.0]
    back = thc.from_dlpack(torch.arange(4, device="cuda", dtype=torch.int64))
    assert back.cpu().tolist() == [0, 1, 2, 3]
    cupy = pytest.importorskip("cupy")
    c = cupy.from_dlpack(t)
    assert c.data.ptr == t.data_ptr()
