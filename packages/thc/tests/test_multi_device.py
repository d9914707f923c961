"""Several devices, on two emulated ones (EMBER_THC_EMULATE=2, in a child
process: the device count is read once per process): tensors on a chosen
device, each op run on its tensors' device (the device guard), libTHC's
refusal of work on a tensor of a device that is not current, `device(i)`
blocks, copies between devices (peer copies, with stream ordering on
both devices, converting and broadcasting), one allocator per
device, and the front and ember.nn on top."""
import os
import subprocess
import sys
import textwrap

import pytest

import ember.thc as thc

pytestmark = pytest.mark.skipif(not thc.is_emulated(),
                                reason="runs on two emulated devices (a host-only build)")

SCRIPT = textwrap.dedent('''
    import pytest
    import ember.thc as thc
    assert thc.device_count() == 2 and thc.current_device() == 0
    a = thc.ones((3,), device="cuda:1")
    assert a.device == "cuda:1" and thc.current_device() == 0
    # each op runs on its tensors' device (the device guard), the current
    # device is left as it was
    b = a * 2
    assert b.device == "cuda:1" and b.sum().item() == 6 and thc.current_device() == 0
    assert (a @ a).device == "cuda:1" and a.sort()[1].device == "cuda:1"
    with thc.device(1):
        assert thc.zeros(2).device == "cuda:1" and thc.current_device() == 1
    assert thc.current_device() == 0
    # libTHC itself refuses work on a tensor that is not on the current device
    from ember.thc._lib import ffi, lib
    assert lib.thc_zero(a._p) != 0
    assert "is on cuda:1 but the current device is cuda:0" in ffi.string(
        lib.thc_last_error()).decode()
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        a + thc.ones((3,))
    c = b.to("cuda:0")                      # a peer copy
    assert c.device == "cuda:0" and c.tolist() == [2.0, 2.0, 2.0]
    c.copy_(b * 3)                          # copy_ from another device
    assert c.tolist() == [6.0, 6.0, 6.0] and thc.current_device() == 0
    m = thc.arange(12.0).reshape(3, 4)
    with thc.device(1):
        into = thc.zeros((4, 3), dtype=thc.float64)
    into.copy_(m.t())                       # strided source, other dtype
    assert into.device == "cuda:1" and into.tolist() == m.t().tolist()
    with thc.device(1):
        rows = thc.zeros((2, 4), dtype=thc.int32)
    rows.copy_(m[1])                        # converted, broadcast to every row
    assert rows.tolist() == [[4, 5, 6, 7]] * 2
    assert m.to("cuda:1", thc.int64).tolist() == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
    assert thc.empty((0, 3)).to("cuda:1").shape == (0, 3)
    assert thc.memory_allocated(1) > 0 and thc.memory_allocated(0) > 0
    with pytest.raises(ValueError, match="device 2 does not exist"):
        thc.set_device(2)
    # a current stream per device: a stream made on cuda:1 is current there
    with thc.device(1):
        s1 = thc.Stream()
    assert s1.device_index == 1
    with thc.stream(s1):
        assert thc.current_device() == 1 and thc.current_stream() == s1
        assert thc.current_stream(0) == thc.default_stream(0)
        (b + 1).sum()
    assert thc.current_device() == 0 and thc.current_stream() == thc.default_stream()
    thc.set_stream(s1)
    assert thc.current_stream(1) == s1 and thc.current_stream() == thc.default_stream()
    thc.set_stream(thc.default_stream(1))
    assert thc.default_stream(0) != thc.default_stream(1)
    # an event is made on its first stream's device and stays there
    e = thc.Event()
    e.record(s1)
    assert e.device_index == 1 and e.query()
    with pytest.raises(RuntimeError, match="does not match recording stream's device"):
        e.record(thc.default_stream(0))
    thc.default_stream(0).wait_event(e)     # a wait across devices is fine
    s1.synchronize()
    assert thc.cat([b, b]).device == "cuda:1" and thc.stack((b, b)).device == "cuda:1"
    assert thc.tensor(b, device="cuda:0").device == "cuda:0"
    # work mixing devices is refused (not run on the wrong device)
    with pytest.raises(RuntimeError, match="is on cuda:1 but the current device is cuda:0"):
        thc.ones((3,)).index_add_(0, thc.tensor([0, 1, 2]), b)
    import ember
    import ember.nn as nn
    x = ember.randn(2, 3, device="cuda:1", requires_grad=True)
    assert x.device == ember.device("cuda", 1)
    y = x.to("cuda:0")                      # recorded: the gradient goes back to cuda:1
    y.sum().backward()
    assert x.grad.device == ember.device("cuda", 1)
    model = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU()).to("cuda:1")
    out = model(ember.randn(2, 2, 5, 5, device="cuda:1"))   # ember.thcunn on cuda:1
    assert out.device == ember.device("cuda", 1) and ember.cuda.current_device() == 0
    out.sum().backward()
    assert all(p.grad.device == ember.device("cuda", 1) for p in model.parameters())
    with ember.cuda.device(1):
        assert ember.zeros(1, device="cuda").device == ember.device("cuda", 1)
    ember.cuda.synchronize(1)
    assert ember.cuda.current_device() == 0
    print("ok")
''')


def test_two_emulated_devices():
    env = dict(os.environ, EMBER_THC_EMULATE="2")
    run = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), run.stderr[-3000:]
