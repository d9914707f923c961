"""CUDA tensors through the front: creation on the device, moving between
devices (with gradients flowing back), autograd on the device, and the op
table's gradcheck on the device.  Runs wherever ember-thc has a device: a
GPU, or the emulated device of a host-only ember-thc build
(EMBER_THC_EMULATE=1, the `thc-emulated` tox env); skips elsewhere."""
import numpy as np
import pytest

import ember
from ember._ops import OPS
from ember.autograd import gradcheck

from conftest import leaves, make_sample, sample_cases

pytestmark = pytest.mark.skipif(not ember.cuda.is_available(),
                                reason="no CUDA device (nor ember-thc's emulated device)")

CUDA = ember.device("cuda", 0)


def test_creation_on_the_device():
    for make in (lambda: ember.zeros(2, 3, device="cuda"),
                 lambda: ember.randn(2, 3, device=CUDA),
                 lambda: ember.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device="cuda:0"),
                 lambda: ember.arange(6, device="cuda").reshape(2, 3)):
        t = make()
        assert t.is_cuda and t.device == CUDA and str(t.device) == "cuda:0"
        assert t.shape == (2, 3) and t.get_device() == 0
    assert ember.ones(3, device="cuda").sum().item() == 3.0
    assert ember.cuda.device_count() >= 1


def test_moving_between_devices_keeps_values_and_dtypes():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 5))
    for dtype in (ember.float32, ember.float64, ember.float16, ember.bfloat16, ember.int64,
                  ember.uint8, ember.bool):
        cpu = ember.tensor(a * 10, dtype=dtype)
        gpu = cpu.cuda()
        assert gpu.is_cuda and gpu.dtype is dtype
        back = gpu.cpu()
        assert back.device.type == "cpu" and back.dtype is dtype
        # NumPy has no bfloat16: compare as float32, which holds those values
        exact = (lambda t: t.float()) if dtype is ember.bfloat16 else (lambda t: t)
        assert np.array_equal(exact(back).numpy(), exact(cpu).numpy())
    t = ember.tensor(a)
    assert t.to("cuda").to("cpu", ember.float32).dtype is ember.float32
    assert t.to(CUDA, dtype=ember.float32).is_cuda
    # a non-contiguous CPU view moves with its values
    v = ember.tensor(a).t()
    assert np.array_equal(v.cuda().cpu().numpy(), a.T)


def test_gradients_flow_back_across_devices():
    x = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    y = (x.cuda() * 3.0).sum()
    y.backward()
    assert x.grad.device.type == "cpu"
    assert np.allclose(x.grad.numpy(), 3.0)
    g = ember.randn(3, 4, device="cuda", dtype=ember.float64, requires_grad=True)
    (g.cpu() ** 2).sum().backward()
    assert g.grad.is_cuda
    assert np.allclose(g.grad.cpu().numpy(), 2 * g.detach().cpu().numpy())


def test_copy_into_a_view_of_a_device_tensor_has_gradients():
    # the overwritten region's gradient (zero) is made on the gradient's
    # device (it was made on the CPU, and backward failed)
    x = ember.randn(2, 3, device="cuda", dtype=ember.float64, requires_grad=True)
    out = ember.ones(4, 3, device="cuda", dtype=ember.float64)
    out.narrow(0, 1, 2).copy_(x)
    (out * 2).sum().backward()
    assert x.grad.is_cuda and np.allclose(x.grad.cpu().numpy(), 2.0)


def test_copy_between_devices_both_ways_with_gradients():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((2, 3))
    src = ember.tensor(a, dtype=ember.float64, device="cuda").requires_grad_()
    host = ember.zeros(2, 3, dtype=ember.float32)
    host.copy_(src)                               # a CUDA tensor into a CPU one
    assert host.device.type == "cpu" and host.dtype is ember.float32
    np.testing.assert_allclose(host.detach().numpy(), a.astype(np.float32))
    dst = ember.zeros(2, 3, dtype=ember.float64, requires_grad=True).clone()
    dst.copy_(src)
    w = rng.standard_normal(3)
    (dst * ember.tensor(w)).sum().backward()
    assert src.grad.device == CUDA                # the gradient goes back to the source
    np.testing.assert_allclose(src.grad.cpu().numpy(), np.broadcast_to(w, (2, 3)))
    dev = ember.zeros(2, 3, device="cuda")
    dev.copy_(ember.tensor(a[0], dtype=ember.float32))  # CPU into CUDA, broadcast
    np.testing.assert_allclose(dev.cpu().numpy(), np.broadcast_to(a[0], (2, 3)).astype(np.float32))


def test_a_small_network_step_matches_the_cpu():
    rng = np.random.default_rng(1)
    xs, w1, w2 = (rng.standard_normal(s) for s in ((8, 5), (5, 7), (7, 3)))
    grads = {}
    for dev in ("cpu", "cuda"):
        x = ember.tensor(xs, device=dev)
        a = ember.tensor(w1, device=dev, requires_grad=True)
        b = ember.tensor(w2, device=dev, requires_grad=True)
        loss = ((x @ a).relu() @ b).tanh().pow(2).mean()
        loss.backward()
        grads[dev] = (loss.item(), a.grad.cpu().numpy(), b.grad.cpu().numpy())
    assert np.isclose(grads["cpu"][0], grads["cuda"][0])
    assert np.allclose(grads["cpu"][1], grads["cuda"][1])
    assert np.allclose(grads["cpu"][2], grads["cuda"][2])


def test_mixing_devices_is_a_clear_error():
    a = ember.ones(3, device="cuda")
    with pytest.raises(RuntimeError, match="device"):
        a + ember.ones(3)
    # a 0-d CPU tensor and Python numbers are fine, as in PyTorch
    assert (a + ember.tensor(2.0)).cpu().tolist() == [3.0, 3.0, 3.0]
    assert (a * 2).cpu().tolist() == [2.0, 2.0, 2.0]


def test_numpy_of_a_cuda_tensor_needs_cpu():
    with pytest.raises(TypeError, match="cpu"):
        ember.ones(2, device="cuda").numpy()


def _on_cuda(x):
    if isinstance(x, ember.Tensor):
        return x.detach().cuda().requires_grad_(x.requires_grad)
    if isinstance(x, (list, tuple)):
        return type(x)(_on_cuda(y) for y in x)
    return x


def _differentiable(info):
    return info.differentiable and info.samples


# ops of the table that ember-thc does not run on the GPU yet (their
# NotImplementedError names ember-thc); the test fails when one starts to
# work, so that this list stays true
NOT_ON_THE_GPU_YET = {"view_as_complex", "complex", "polar"}  # they make complex tensors


@pytest.mark.parametrize("info,sample,layout",
                         sample_cases(_differentiable, layouts=("contiguous",)))
def test_gradcheck_on_the_device(info, sample, layout):
    args, kwargs = make_sample(sample, layout)
    if any(isinstance(x, ember.Tensor) and x.is_complex() for x in list(args) + list(
            kwargs.values())):
        with pytest.raises(NotImplementedError, match="ember-thc"):  # no complex tensors there
            _on_cuda(args)
        return
    args, kwargs = _on_cuda(args), {k: _on_cuda(v) for k, v in kwargs.items()}
    inputs = leaves(args, kwargs)
    try:
        assert gradcheck(lambda *_: info.call(*args, **kwargs), inputs)
    except NotImplementedError as e:
        assert "ember-thc" in str(e)
        assert info.name in NOT_ON_THE_GPU_YET, f"{info.name}: {e}"
        return
    assert info.name not in NOT_ON_THE_GPU_YET, f"{info.name} works now: update the list"


def test_cuda_array_interface_and_streams_through_the_front():
    t = ember.arange(6.0, device="cuda")
    cai = t.__cuda_array_interface__
    assert cai["shape"] == (6,) and cai["data"][0] == t.data_ptr()

    class Foreign:   # another CUDA library's array over t's memory
        __cuda_array_interface__ = cai

    shared = ember.as_tensor(Foreign())
    assert shared.is_cuda
    shared.mul_(2)
    assert t.cpu().tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    with pytest.raises(RuntimeError, match="requires grad"):
        ember.ones(2, device="cuda", requires_grad=True).__cuda_array_interface__
    with pytest.raises(AttributeError):
        ember.ones(2).__cuda_array_interface__
    s = ember.cuda.Stream()
    with ember.cuda.stream(s):
        y = t + 1
    y.record_stream(s)
    s.synchronize()
    assert ember.cuda.current_stream() == ember.cuda.default_stream()


def test_pinned_memory_and_the_dataloader():
    import ember.utils.data as data
    t = ember.arange(12.0).reshape(3, 4)
    assert not t.is_pinned()
    p = t.pin_memory()
    assert p.is_pinned() and p.device.type == "cpu" and ember.equal(p, t)
    assert p.pin_memory() is p
    assert ember.equal(p.cuda(non_blocking=True).cpu(), t)
    with pytest.raises(RuntimeError, match="only CPU tensors"):
        p.cuda().pin_memory()
    ds = data.TensorDataset(ember.randn(10, 3), ember.arange(10))
    for workers in (0, 2):
        batches = list(data.DataLoader(ds, batch_size=4, pin_memory=True, num_workers=workers))
        assert len(batches) == 3
        assert all(x.is_pinned() and y.is_pinned() for x, y in batches)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int64"])
def test_non_blocking_moves(dtype):
    t = ember.randn(6, 5).mul(10).to(getattr(ember, dtype))
    w = ember.randn(6, 5, dtype=ember.float64, requires_grad=True)
    pinned = t.pin_memory()
    d = pinned.to("cuda", non_blocking=True)
    back = d.to("cpu", non_blocking=True)   # lands in pinned memory (NumPy's dtypes)
    assert back.is_pinned() == (dtype != "bfloat16")
    ember.cuda.synchronize()
    assert d.device.type == "cuda" and back.dtype is t.dtype and ember.equal(back, t)
    # still differentiable both ways
    y = w.cuda(non_blocking=True).mul(2).to("cpu", non_blocking=True)
    ember.cuda.synchronize()
    y.sum().backward()
    assert ember.equal(w.grad, ember.full((6, 5), 2.0, dtype=ember.float64))


def test_memory_statistics_follow_the_tensors():
    ember.cuda.empty_cache()
    ember.cuda.reset_peak_memory_stats()
    before = ember.cuda.memory_allocated()
    t = ember.empty(1 << 18, device="cuda")   # 1 MiB
    assert ember.cuda.memory_allocated() >= before + (1 << 20)
    assert ember.cuda.max_memory_allocated() >= ember.cuda.memory_allocated()
    assert ember.cuda.memory_reserved() >= ember.cuda.memory_allocated()
    del t
    assert ember.cuda.memory_allocated() == before
    assert ember.cuda.memory_stats()["num_allocs"] >= 1
    ember.cuda.empty_cache()


def test_memory_summary_and_resets():
    ember.cuda.empty_cache()
    t = ember.empty(1 << 19, device="cuda")   # 2 MiB: one whole segment
    text = ember.cuda.memory_summary()
    assert "device 0" in text and "allocated memory" in text and "2.0 MiB" in text
    assert "out-of-memory events" in text
    assert "out-of-memory" not in ember.cuda.memory_summary(abbreviated=True)
    del t
    ember.cuda.reset_max_memory_allocated()
    assert ember.cuda.max_memory_allocated() == ember.cuda.memory_allocated()


def test_generator_state_round_trip_and_seeding():
    ember.cuda.manual_seed(11)
    assert ember.cuda.initial_seed() == 11
    state = ember.cuda.get_rng_state()
    assert state.device.type == "cpu" and state.dtype is ember.uint8 and state.numel() == 16
    a = ember.rand(5, device="cuda")
    ember.cuda.set_rng_state(state)
    assert ember.equal(ember.rand(5, device="cuda"), a)
    states = ember.cuda.get_rng_state_all()
    assert len(states) == ember.cuda.device_count()
    ember.cuda.set_rng_state_all(states)
    assert ember.equal(ember.cuda.get_rng_state(), states[0])
    ember.cuda.seed_all()
    assert ember.cuda.initial_seed() != 11   # drawn from the OS
    with pytest.raises(RuntimeError, match="16-byte generator state"):
        ember.cuda.set_rng_state(ember.zeros(3, dtype=ember.uint8))


def test_generators_of_each_device():
    g = ember.Generator(device="cuda").manual_seed(5)
    a = ember.randn(4, device="cuda", generator=g)
    assert ember.equal(ember.randn(4, device="cuda", generator=ember.Generator("cuda:0")
                                   .manual_seed(5)), a)
    cpu = ember.Generator()
    assert isinstance(g, ember.Generator) and isinstance(cpu, ember.Generator)
    assert not isinstance(object(), ember.Generator)
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator but "
                       "found 'cuda'"):
        ember.randn(3, generator=g)
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator but "
                       "found 'cpu'"):
        ember.ones(3, device="cuda").bernoulli_(0.5, generator=cpu)


def test_tf32_switch_reaches_the_backend():
    import ember.thc as thc
    try:
        ember.backends.cuda.matmul.allow_tf32 = True
        assert thc.float32_matmul_tf32()
        ember.set_float32_matmul_precision("highest")
        assert not thc.float32_matmul_tf32()
    finally:
        ember.set_float32_matmul_precision("highest")


def test_backend_start_and_bfloat16_support():
    assert ember.cuda.get_arch_list() == ember.thc.arch_list()   # [] on the emulated device
    ember.cuda.init()
    assert ember.cuda.is_initialized()
    major = ember.cuda.get_device_capability()[0]
    assert ember.cuda.is_bf16_supported()   # computed in float32 where not native
    assert ember.cuda.is_bf16_supported(including_emulation=False) == (major >= 8)
    x = ember.ones(4, dtype=ember.bfloat16, device="cuda")
    assert (x + x).sum().item() == 8.0


def test_device_queries():
    name = ember.cuda.get_device_name(0)
    assert name == ember.cuda.get_device_properties("cuda:0").name
    assert len(ember.cuda.get_device_capability()) == 2
    free, total = ember.cuda.mem_get_info()
    assert 0 <= free <= total


def test_dlpack_through_the_front():
    t = ember.arange(6.0, device="cuda")
    shared = ember.from_dlpack(t)
    assert shared.is_cuda and shared.data_ptr() == t.data_ptr()
    shared.add_(1)
    assert t.cpu().tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    c = ember.arange(4)
    assert ember.from_dlpack(c).data_ptr() == c.data_ptr()   # CPU: through NumPy
    with pytest.raises(RuntimeError, match="require gradient"):
        ember.ones(2, device="cuda", requires_grad=True).__dlpack__()


# the ops the differentiable table leaves out (no gradient), and integer
# or NaN cases of others: the front gives the same results on both devices
_NO_GRAD_CALLS = {
    "unique": lambda m, x, i: m.unique(i, return_inverse=True, return_counts=True),
    "unique method": lambda m, x, i: i.unique(),
    "unique dim": lambda m, x, i: m.unique(i.reshape(6, 2) % 2, dim=0, return_inverse=True,
                                           return_counts=True),
    "unique_consecutive": lambda m, x, i: (i % 2).unique_consecutive(return_counts=True),
    "bincount": lambda m, x, i: m.bincount(i, minlength=7),
    "bincount weights": lambda m, x, i: i.bincount(x),
    "histc": lambda m, x, i: m.histc(x, 5, -1, 1),
    "searchsorted": lambda m, x, i: m.searchsorted(x.sort().values, x, right=True),
    "bucketize": lambda m, x, i: m.bucketize(i, m.tensor([1, 3, 5], device=i.device)),
    "median": lambda m, x, i: m.median(x),
    "median dim": lambda m, x, i: x.reshape(2, 6).median(1),
    "median nan": lambda m, x, i: x.where(x > -0.6, float("nan")).reshape(3, 4).median(1),
    "nanmedian": lambda m, x, i: x.where(x > -0.6, float("nan")).reshape(3, 4).nanmedian(1),
    "mode ties": lambda m, x, i: i.reshape(3, 4).mode(1),
    "mode nan": lambda m, x, i: x.where(x > -0.6, float("nan")).reshape(4, 3).mode(0, True),
    "scatter_reduce amax": lambda m, x, i: m.zeros(7, dtype=x.dtype, device=x.device).scatter_reduce(
        0, i, x, "amax", include_self=False),
    "scatter_reduce prod": lambda m, x, i: m.ones(7, dtype=x.dtype, device=x.device).scatter_reduce(
        0, i, x, "prod"),
}


@pytest.mark.parametrize("name", sorted(_NO_GRAD_CALLS))
def test_ops_without_gradient_match_the_cpu(name):
    rng = np.random.default_rng(3)
    x = ember.tensor(rng.uniform(-1, 1, 12))
    i = ember.tensor(rng.integers(0, 7, 12))
    want = _NO_GRAD_CALLS[name](ember, x, i)
    got = _NO_GRAD_CALLS[name](ember, x.cuda(), i.cuda())
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    for g, w in zip(got, want, strict=True):
        assert g.is_cuda and g.dtype is w.dtype and g.shape == w.shape
        assert np.allclose(g.cpu().numpy(), w.numpy(), equal_nan=True)


@pytest.mark.parametrize("name", ["unique", "unique_consecutive"])
def test_unique_slices_match_the_cpu(name):
    """Fresh data with repeated slices, ints and floats with NaN, contiguous
    or transposed, every dim and every combination of results."""
    rng = np.random.default_rng()
    fn = getattr(ember, name)
    for _ in range(12):
        shape = tuple(rng.integers(1, 5, rng.integers(1, 4)))
        for a in (rng.integers(0, 3, shape), rng.choice([np.nan, -0.0, 0.0, 1.0], size=shape)):
            cpu, gpu = ember.tensor(a), ember.tensor(a, device="cuda")
            pairs = [(cpu, gpu)]
            if cpu.ndim > 1:  # transposed on each device: non-contiguous there
                pairs.append((cpu.transpose(0, -1), gpu.transpose(0, -1)))
            for x, y in pairs:
                for dim in [None, *range(-x.ndim, x.ndim)]:
                    for inverse, counts in ((False, False), (True, False), (False, True),
                                            (True, True)):
                        want = fn(x, return_inverse=inverse, return_counts=counts, dim=dim)
                        got = fn(y, return_inverse=inverse, return_counts=counts, dim=dim)
                        want = want if isinstance(want, tuple) else (want,)
                        got = got if isinstance(got, tuple) else (got,)
                        for g, w in zip(got, want, strict=True):
                            assert g.is_cuda and g.dtype is w.dtype and g.shape == w.shape
                            assert np.array_equal(g.cpu().numpy(), w.numpy(), equal_nan=True)


def test_unique_slices_on_the_device():
    nan = float("nan")
    v, inv = ember.unique(ember.tensor([[nan, 1.0], [nan, 1.0]], device="cuda"), dim=0,
                          return_inverse=True)
    assert v.is_cuda and v.shape == (2, 2) and inv.cpu().tolist() == [0, 1]
    v, inv, cnt = ember.tensor([[1, 2, 1], [3, 2, 3]], device="cuda").unique(
        dim=1, return_inverse=True, return_counts=True)
    assert v.cpu().tolist() == [[1, 2], [3, 2]] and inv.cpu().tolist() == [0, 1, 0]
    assert cnt.is_cuda and cnt.dtype is ember.int64 and cnt.cpu().tolist() == [2, 1]
    v, inv, cnt = ember.unique_consecutive(ember.empty(0, 3, device="cuda"), dim=0,
                                           return_inverse=True, return_counts=True)
    assert v.is_cuda and v.shape == (0, 3) and inv.is_cuda and inv.shape == (0,)
    assert cnt.is_cuda and cnt.dtype is ember.int64
    with pytest.raises(RuntimeError, match="There are 0 sized dimensions"):
        ember.unique(ember.empty(2, 0, device="cuda"), dim=0)
    with pytest.raises(IndexError, match="but tensor has no dimensions"):
        ember.unique_consecutive(ember.tensor(1.0, device="cuda"), dim=0)


def test_multinomial_through_the_front():
    ember.manual_seed(0)
    s = ember.multinomial(ember.tensor([0.0, 1.0, 3.0], device="cuda"), 4000, True)
    assert s.is_cuda and s.dtype is ember.int64
    freq = np.bincount(s.cpu().numpy(), minlength=3) / 4000
    assert freq[0] == 0 and abs(freq[2] - 0.75) < 0.04
    rows = ember.ones(5, 4, device="cuda").multinomial(4)
    assert sorted(rows.cpu().numpy()[0].tolist()) == [0, 1, 2, 3]


def test_moving_to_a_device_that_does_not_exist_is_an_error():
    x = ember.ones(3, device="cuda")
    n = ember.cuda.device_count()
    with pytest.raises(RuntimeError, match=f"cannot move a tensor to cuda:{n}"):
        x.to(f"cuda:{n}")
    with pytest.raises(RuntimeError, match=f"cannot move a tensor to cuda:{n}"):
        x.cuda(n)
    assert x.to("cuda:0") is x and x.cuda(0) is x



# ---- mixed precision on the device -------------------------------------------------
def _rand(*shape, dtype=ember.float32, device="cuda", requires_grad=False, seed=None):
    values = np.random.default_rng(seed).uniform(-1, 1, size=shape)
    return ember.tensor(values, dtype=dtype, device=device).requires_grad_(requires_grad)


F16, BF16, F32 = ember.float16, ember.bfloat16, ember.float32

# (what, call, inputs' dtypes, result dtype in a float16 CUDA region)
CUDA_POLICY = [
    ("matmul", lambda a, b: ember.matmul(a, b), (F32, F32), F16),
    ("@", lambda a, b: a @ b, (F32, F16), F16),
    ("addmm", lambda a, b: ember.addmm(a, a, b), (F32, F32), F16),
    ("mv", lambda a, b: a.mv(b[0]), (F32, F32), F16),
    ("addr", lambda a, b: ember.addr(a, a[0], b[0]), (F32, F32), F16),
    ("einsum", lambda a, b: ember.einsum("ij,jk->ik", a, b), (F32, F32), F16),
    ("exp", lambda a, b: a.exp(), (F16, F32), F32),
    ("log", lambda a, b: (a + 2).log(), (F16, F32), F32),
    ("pow operator", lambda a, b: a ** 2, (F16, F32), F32),
    ("number / tensor", lambda a, b: 1 / (a + 2), (F16, F32), F32),
    ("tensor / number", lambda a, b: a / 2, (F16, F32), F16),
    ("sum", lambda a, b: a.sum(), (F16, F32), F32),
    ("sum with dtype", lambda a, b: a.sum(dtype=F16), (F16, F32), F16),
    ("softmax", lambda a, b: a.softmax(-1), (F16, F32), F32),
    ("log_softmax", lambda a, b: ember.log_softmax(a, 0), (F16, F32), F32),
    ("cumsum", lambda a, b: a.cumsum(0), (F16, F32), F32),
    ("norm", lambda a, b: a.norm(), (F16, F32), F32),
    ("dot: widest", lambda a, b: ember.dot(a[0], b[0]), (F16, F32), F32),
    ("atan2: widest", lambda a, b: ember.atan2(a, b), (F16, F16), F16),
    ("trace: as one op", lambda a, b: a.trace(), (F16, F32), F16),
    ("logaddexp: as one op", lambda a, b: ember.logaddexp(a, b), (F16, F16), F16),
    ("add of float16 and float32", lambda a, b: a + b, (F16, F32), F32),
    ("relu stays", lambda a, b: a.relu(), (F16, F32), F16),
]


@pytest.mark.parametrize("what,call,dtypes,expected", CUDA_POLICY,
                         ids=[c[0] for c in CUDA_POLICY])
def test_cuda_autocast_policy(what, call, dtypes, expected):
    a, b = _rand(4, 4, dtype=dtypes[0]), _rand(4, 4, dtype=dtypes[1])
    with ember.autocast("cuda"):
        out = call(a, b)
        assert out.dtype is expected and out.is_cuda
    if expected is F16 and dtypes == (F32, F32):  # a matrix product: the region's dtype
        with ember.autocast("cuda", dtype=BF16):
            assert call(a, b).dtype is BF16


def test_cuda_autocast_leaves_other_devices_and_integers_alone():
    c, g = _rand(3, 3, device="cpu"), _rand(3, 3)
    i = ember.arange(9, device="cuda").reshape(3, 3)
    with ember.autocast("cuda"):
        assert ember.is_autocast_enabled() and not ember.is_autocast_enabled("cpu")
        assert (c @ c).dtype is F32 and c.exp().dtype is F32  # CPU tensors: no CUDA region
        assert i.sum().dtype is ember.int64 and i.cumsum(0).dtype is ember.int64
        assert (g.double() @ g.double()).dtype is ember.float64  # float64 is never cast
    with ember.autocast("cpu"):
        assert (g @ g).dtype is F32 and (c @ c).dtype is BF16
    with ember.autocast("cuda"), ember.autocast("cpu"):  # both on: each device its own dtype
        assert (g @ g).dtype is F16 and (c @ c).dtype is BF16


def test_cuda_gradients_reach_float32_parameters():
    x = _rand(8, 16)
    w1, w2 = _rand(16, 32, requires_grad=True), _rand(32, 4, requires_grad=True)

    def loss_of():
        return ((x @ w1).tanh() @ w2).pow(2).mean()

    with ember.autocast("cuda"):
        loss = loss_of()
        assert loss.dtype is F32  # pow in float32 on CUDA
    loss.backward()
    got = [w1.grad, w2.grad]
    assert all(g.dtype is F32 and g.is_cuda for g in got)
    w1.grad = w2.grad = None
    loss_of().backward()
    for g, p in zip(got, (w1, w2)):
        scale = float(p.grad.abs().max()) + 1e-6
        assert float((g - p.grad).abs().max()) <= 1e-2 * scale


def test_cuda_banned_op_is_refused_under_autocast():
    # a package registers a BANNED row with its message (ember.nn does so for
    # binary_cross_entropy); the front's hook refuses the op on CUDA only
    from ember.amp import policy
    from ember.amp.dispatch import autocast_op
    policy.register("_banned_stand_in", policy.BANNED, None, "stand-in is unsafe to autocast")
    try:
        op = autocast_op("_banned_stand_in", lambda p, t: p)
        p = _rand(3).sigmoid()
        assert op(p, p) is p
        with ember.autocast("cuda"):
            with pytest.raises(RuntimeError, match="stand-in is unsafe to autocast"):
                op(p, p)
        with ember.autocast("cpu"):
            assert op(p, p) is p
    finally:
        policy.POLICY.pop("_banned_stand_in")
        policy.BANNED_MESSAGES.pop("_banned_stand_in")


class _SGD:
    def __init__(self, params, lr):
        self.param_groups = [{"params": list(params), "lr": lr}]

    def step(self):
        with ember.no_grad():
            for p in self.param_groups[0]["params"]:
                p.sub_(self.param_groups[0]["lr"] * p.grad)
        return "stepped"


def test_cuda_grad_scaler_skips_inf_steps_and_grows():
    w, x = _rand(4, 3, requires_grad=True, seed=0), _rand(8, 4, seed=1)
    opt = _SGD([w], lr=0.01)
    scaler = ember.amp.GradScaler("cuda", init_scale=2.0 ** 10, growth_interval=2)
    assert scaler.is_enabled()
    steps = ((1.0, True, 2.0 ** 10), (1.0, True, 2.0 ** 11), (float("inf"), False, 2.0 ** 10),
             (float("nan"), False, 2.0 ** 9), (1.0, True, 2.0 ** 9), (1.0, True, 2.0 ** 10))
    for factor, stepped, scale in steps:
        w.grad = None
        before = w.detach().clone()
        with ember.autocast("cuda"):
            loss = (x @ w).pow(2).mean() * factor
        scaler.scale(loss).backward()
        assert w.grad.is_cuda and w.grad.dtype is F32
        assert (scaler.step(opt) == "stepped") is stepped
        assert w.detach().equal(before) is not stepped
        scaler.update()
        assert scaler.get_scale() == scale
    state = scaler.state_dict()
    restored = ember.amp.GradScaler("cuda")
    restored.load_state_dict(state)
    assert restored.state_dict() == state == {"scale": 2.0 ** 10, "growth_factor": 2.0,
                                              "backoff_factor": 0.5, "growth_interval": 2,
                                              "_growth_tracker": 0}
    scaler.update(new_scale=ember.tensor([4.0], device="cuda"))
    assert scaler.get_scale() == 4.0
    with pytest.raises(AssertionError, match="new_scale should be a float"):
        scaler.update(new_scale=ember.tensor([4.0]))  # not on the scaler's device


def test_cuda_amp_aliases_still_work():
    with pytest.warns(FutureWarning, match=r"ember.cuda.amp.autocast\(args...\)` is deprecated"):
        region = ember.cuda.amp.autocast(dtype=BF16)
    assert isinstance(region, ember.autocast)
    a = _rand(2, 2)
    with region:
        assert (a @ a).dtype is BF16 and ember.get_autocast_dtype("cuda") is BF16
    with pytest.warns(FutureWarning, match=r"ember.cuda.amp.GradScaler\(args...\)` is "
                                           r"deprecated. Please use `ember.amp.GradScaler"):
        scaler = ember.cuda.amp.GradScaler(init_scale=16.0)
    assert scaler.is_enabled() and scaler.get_scale() == 16.0
    assert isinstance(scaler, ember.amp.GradScaler)

    with pytest.warns(FutureWarning):
        @ember.cuda.amp.autocast()
        def product(x):
            return x @ x
    assert product(a).dtype is F16


def test_cuda_short_training_loop_with_autocast_and_grad_scaler():
    rng = np.random.default_rng(5)
    x = ember.tensor(rng.standard_normal((64, 8)), dtype=F32, device="cuda")
    target = x @ ember.tensor(rng.standard_normal((8, 1)), dtype=F32, device="cuda")
    w1 = (_rand(8, 16, seed=6) * 0.5).requires_grad_()
    w2 = (_rand(16, 1, seed=7) * 0.5).requires_grad_()
    opt = _SGD([w1, w2], lr=0.05)
    scaler = ember.amp.GradScaler("cuda")
    losses = []
    for _ in range(25):
        w1.grad = w2.grad = None
        with ember.autocast("cuda"):
            out = (x @ w1).relu() @ w2
            loss = (out - target).pow(2).mean()
            assert out.dtype is F16 and loss.dtype is F32
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
