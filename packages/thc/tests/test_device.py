"""Device query and the front's ember.cuda, with and without a GPU."""
import pytest

import ember
import ember.thc as thc

# the front (packages/autograd over a built ember-th) may be absent where only
# libTHC is built, e.g. device_check.sh on a GPU machine without ember-th
front = pytest.mark.skipif(not hasattr(ember, "Tensor"),
                           reason="the ember front (ember with ember-th) is not importable here")


def test_version_and_abi():
    assert thc.__version__ == "0.2.0"
    import importlib
    _lib = importlib.import_module("ember.thc._lib")
    assert _lib.lib.thc_abi_version_major() == _lib.ABI_MAJOR


def test_device_count_matches_availability():
    n = thc.device_count()
    assert n >= 0
    assert thc.is_available() == (n > 0)
    if n == 0:
        assert thc.cuda_error_text() != ""


@pytest.mark.skipif(thc.device_count() > 0, reason="checks the no-GPU behaviour")
def test_without_a_gpu_calls_fail_clearly():
    for call in (thc.current_device, thc.synchronize, thc.memory_allocated,
                 lambda: thc.set_device(0)):
        with pytest.raises(RuntimeError, match="no CUDA device is available"):
            call()
    thc.empty_cache()   # nothing cached: a no-op
    with pytest.raises(TypeError, match="device index"):
        thc.set_device("0")


@front
@pytest.mark.skipif(thc.device_count() > 0, reason="checks the no-GPU behaviour")
def test_front_without_a_gpu():
    assert ember.cuda.is_available() is False
    assert ember.cuda.device_count() == 0
    for call in (ember.cuda.current_device, ember.cuda.synchronize,
                 ember.cuda.memory_allocated, lambda: ember.cuda.set_device(0)):
        with pytest.raises(RuntimeError, match="ember-thc"):
            call()


@pytest.mark.skipif(thc.built_with_cuda(), reason="a host-only build")
def test_host_only_build_says_so():
    with pytest.raises(RuntimeError, match="built without CUDA"):
        thc.CachingAllocator()
    if not thc.is_emulated():
        assert "EMBER_NO_CUDA" in thc.cuda_error_text()
        assert thc.device_count() == 0


@pytest.mark.skipif(not thc.is_emulated(), reason="checks the emulated device")
def test_the_emulated_device():
    assert thc.device_count() == 1 and thc.current_device() == 0
    before = thc.memory_allocated()
    t = thc.zeros(1000)   # tensors come from the device's caching allocator
    assert thc.memory_allocated() >= before + 4000
    del t
    assert thc.memory_allocated() == before
    assert not thc.cublas_available()


@pytest.mark.gpu
def test_gpu_device_and_allocator():
    assert thc.current_device() == 0
    thc.set_device(0)
    with pytest.raises(ValueError, match="does not exist"):
        thc.set_device(thc.device_count())
    a = thc.CachingAllocator()
    p = a.malloc(1000)
    assert p != 0 and a.stats()["reserved_bytes"] == 2 << 20
    with pytest.raises(thc.OutOfMemoryError, match="CUDA out of memory"):
        a.malloc(1 << 50)
    a.free(p)
    a.empty_cache()
    assert a.stats()["reserved_bytes"] == 0
    thc.synchronize()


@front
@pytest.mark.gpu
def test_gpu_front():
    assert ember.cuda.is_available() and ember.cuda.device_count() >= 1
    assert ember.cuda.current_device() == 0
    before = ember.cuda.memory_allocated()
    t = ember.ones(1 << 20, device="cuda")
    assert ember.cuda.memory_allocated() >= before + (4 << 20)
    assert t.sum().item() == 1 << 20
    ember.cuda.synchronize()
    del t
    ember.cuda.empty_cache()


def test_float32_matmul_tf32_switch():
    assert not thc.float32_matmul_tf32()   # float32 throughout unless asked
    try:
        thc.set_float32_matmul_tf32(True)
        assert thc.float32_matmul_tf32()
    finally:
        thc.set_float32_matmul_tf32(False)
    assert not thc.float32_matmul_tf32()


@pytest.mark.gpu
def test_gpu_float32_products_with_and_without_tf32():
    """Off: float32 accuracy; on: within TF32's (cuBLAS may still choose
    float32, so only the bound is checked)."""
    import numpy as np
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((256, 512)), rng.standard_normal((512, 128))
    want = a @ b
    ga, gb = thc.tensor(a.astype(np.float32)), thc.tensor(b.astype(np.float32))
    scale = np.abs(want).max()
    for allow, tol in ((False, 1e-5), (True, 2e-2)):
        thc.set_float32_matmul_tf32(allow)
        try:
            got = (ga @ gb).cpu().numpy()
        finally:
            thc.set_float32_matmul_tf32(False)
        assert np.abs(got - want).max() / scale < tol, f"allow_tf32={allow}"


def test_arch_list_names_the_code_built_in():
    archs = thc.arch_list()
    if not thc.built_with_cuda():
        assert archs == []
        return
    import re
    assert archs and all(re.fullmatch(r"(sm|compute)_\d+", a) for a in archs)


@pytest.mark.gpu
def test_gpu_runs_code_built_for_it():
    """The device's generation has machine code, or PTX of an older one."""
    major, minor = thc.get_device_capability()
    cap = major * 10 + minor
    archs = thc.arch_list()
    assert f"sm_{cap}" in archs or any(
        a.startswith("compute_") and int(a.split("_")[1]) <= cap for a in archs), archs
