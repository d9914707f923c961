"""Mixed precision on the CPU: ember.autocast (state, nesting, the policy's
result dtypes, gradients through the casts, the parameter cast cache) and
ember.amp.GradScaler (skipped steps, growth, unscale_, state), with a
small hand-written optimizer (ember.optim lives in ember-nn).  The CUDA
forms are in test_cuda.py; result dtypes are compared with PyTorch where
it is installed."""
import threading
import warnings

import numpy as np
import pytest

import ember
from ember.amp import autocast_mode

bf16, f16, f32, f64 = ember.bfloat16, ember.float16, ember.float32, ember.float64


def rand(*shape, dtype=f32, requires_grad=False, seed=None):
    rng = np.random.default_rng(seed)
    t = ember.tensor(rng.uniform(-1, 1, size=shape), dtype=dtype)
    return t.requires_grad_(requires_grad)


class SGD:
    """Just enough of an optimizer for GradScaler: param_groups and step()."""

    def __init__(self, params, lr=0.1):
        self.param_groups = [{"params": list(params), "lr": lr}]
        self.steps = 0

    def step(self):
        self.steps += 1
        with ember.no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        p.sub_(group["lr"] * p.grad)
        return "stepped"

    def zero_grad(self):
        for p in self.param_groups[0]["params"]:
            p.grad = None


# ---- the region ------------------------------------------------------------------
def test_defaults_and_queries():
    assert ember.get_autocast_dtype("cuda") is f16
    assert ember.get_autocast_dtype("cpu") is bf16
    assert not ember.is_autocast_enabled() and not ember.is_autocast_enabled("cpu")
    assert ember.amp.autocast is ember.autocast
    with ember.autocast("cpu") as region:
        assert isinstance(region, ember.autocast)
        assert ember.is_autocast_enabled("cpu") and ember.is_autocast_enabled(device_type="cpu")
        assert not ember.is_autocast_enabled()  # no argument: CUDA, as PyTorch
        assert ember.get_autocast_dtype("cpu") is bf16
        assert ember.is_autocast_cache_enabled()
    assert not ember.is_autocast_enabled("cpu")
    assert ember.amp.is_autocast_available("cpu") and not ember.amp.is_autocast_available("xla")


def test_nesting_disabling_and_restoring():
    a, b = rand(3, 4), rand(4, 2)
    with ember.autocast("cpu"):
        assert (a @ b).dtype is bf16
        with ember.autocast("cpu", enabled=False):
            assert not ember.is_autocast_enabled("cpu")
            assert (a @ b).dtype is f32
        with ember.autocast("cpu", dtype=f16):
            assert (a @ b).dtype is f16
            assert ember.get_autocast_dtype("cpu") is f16
        assert (a @ b).dtype is bf16 and ember.get_autocast_dtype("cpu") is bf16
        with pytest.raises(ZeroDivisionError):
            with ember.autocast("cpu", enabled=False):
                1 / 0
        assert ember.is_autocast_enabled("cpu")
    assert (a @ b).dtype is f32
    assert autocast_mode.anywhere.count == 0 and not autocast_mode.state.active


def test_decorator():
    a, b = rand(3, 4), rand(4, 2)

    @ember.autocast("cpu")
    def product(x, y):
        """docstring"""
        return x @ y, ember.is_autocast_enabled("cpu")

    assert product.__name__ == "product" and product.__doc__ == "docstring"
    for _ in range(2):
        out, on = product(a, b)
        assert out.dtype is bf16 and on
        assert not ember.is_autocast_enabled("cpu")

    @ember.autocast("cpu")
    def nested(depth):  # the same region object re-entered by recursion
        return nested(depth - 1) if depth else ember.is_autocast_enabled("cpu")
    assert nested(3) and not ember.is_autocast_enabled("cpu")
    with pytest.raises(TypeError, match=r"autocast\(\)\(func\) requires a callable, but got int"):
        ember.autocast("cpu")(3)


def test_state_is_thread_local():
    a, b = rand(3, 4), rand(4, 2)
    seen = {}
    inside, done = threading.Event(), threading.Event()

    def other():
        seen["starts_off"] = ember.is_autocast_enabled("cpu")
        seen["dtype"] = (a @ b).dtype
        with ember.autocast("cpu", dtype=f16):
            inside.set()
            done.wait(5)
            seen["own"] = (a @ b).dtype

    with ember.autocast("cpu"):
        t = threading.Thread(target=other)
        t.start()
        inside.wait(5)
        assert (a @ b).dtype is bf16  # the other thread's float16 region is its own
    assert (a @ b).dtype is f32
    done.set()
    t.join()
    assert seen == {"starts_off": False, "dtype": f32, "own": f16}


def test_bad_arguments():
    with pytest.raises(ValueError,
                       match="Expected `device_type` of type `str`, got: `<class 'int'>`"):
        ember.autocast(1)
    with pytest.raises(RuntimeError, match="device type at start of device string: xpu"):
        ember.autocast("xpu")
    with pytest.raises(RuntimeError, match="device string: xpu"):
        ember.is_autocast_enabled("xpu")
    with pytest.raises(TypeError,
                       match="argument 'enabled' \\(position 2\\) must be bool, not int"):
        ember.set_autocast_enabled("cpu", 1)
    with pytest.raises(TypeError, match="must be bool, not int"):
        with ember.autocast("cpu", enabled=1):
            pass
    with pytest.warns(UserWarning, match="In CPU autocast, but the target dtype is not "
                                         "supported. Disabling autocast."):
        region = ember.autocast("cpu", dtype=f32)
    with region:
        assert not ember.is_autocast_enabled("cpu")
        assert (rand(2, 2) @ rand(2, 2)).dtype is f32
    assert not ember.is_autocast_enabled("cpu")


def test_cuda_without_a_device_warns_and_disables(monkeypatch):
    monkeypatch.setattr(ember.cuda, "is_available", lambda: False)
    with pytest.warns(UserWarning, match="CUDA is not available. Disabling autocast."):
        region = ember.autocast("cuda")
    with region:
        assert not ember.is_autocast_enabled("cuda")
    with pytest.warns(FutureWarning, match=r"`ember.cuda.amp.autocast\(args...\)` is "
                                           r"deprecated. Please use `ember.amp.autocast"):
        with pytest.warns(UserWarning, match="CUDA is not available"):
            ember.cuda.amp.autocast()
    with pytest.warns(UserWarning, match="GradScaler is enabled, but CUDA is not available.  "
                                         "Disabling."):
        scaler = ember.amp.GradScaler()
    assert not scaler.is_enabled()


def test_set_functions_and_deprecated_getters():
    try:
        ember.set_autocast_dtype("cpu", f16)
        ember.set_autocast_enabled("cpu", True)
        assert (rand(2, 2) @ rand(2, 2)).dtype is f16
        with pytest.warns(DeprecationWarning, match=r"is_autocast_enabled\('cpu'\)"):
            assert ember.is_autocast_cpu_enabled()
        with pytest.warns(DeprecationWarning):
            assert ember.get_autocast_cpu_dtype() is f16
        with pytest.warns(DeprecationWarning):
            assert ember.get_autocast_gpu_dtype() is f16
    finally:
        ember.set_autocast_enabled("cpu", False)
        ember.set_autocast_dtype("cpu", bf16)
    assert ember.autocast_increment_nesting() == 1 and ember.autocast_decrement_nesting() == 0
    assert (rand(2, 2) @ rand(2, 2)).dtype is f32 and autocast_mode.anywhere.count == 0


# ---- the policy on the CPU ---------------------------------------------------------
def _mm(a, b):
    return ember.mm(a, b)


# (what, call, inputs' dtypes, result dtype in a bfloat16 CPU region, outside one)
CPU_POLICY = [
    ("matmul", lambda a, b: ember.matmul(a, b), (f32, f32), bf16, f32),
    ("@", lambda a, b: a @ b, (f32, bf16), bf16, None),
    ("Tensor.mm", lambda a, b: a.mm(b), (bf16, f32), bf16, None),
    ("mm", _mm, (f32, f32), bf16, f32),
    ("bmm", lambda a, b: a.reshape(1, 4, 4).bmm(b.reshape(1, 4, 4)), (f32, f32), bf16, f32),
    ("addmm", lambda a, b: ember.addmm(a, a, b), (f32, f32), bf16, f32),
    ("baddbmm", lambda a, b: ember.baddbmm(a[None], a[None], b[None]), (f32, f32), bf16, f32),
    ("addbmm", lambda a, b: ember.addbmm(a, a[None], b[None]), (f32, f32), bf16, f32),
    ("einsum (its bmm)", lambda a, b: ember.einsum("ij,jk->ik", a, b), (f32, f32), bf16, f32),
    ("prod", lambda a, b: a.prod(), (bf16, f32), f32, bf16),
    ("cdist", lambda a, b: ember.cdist(a, b), (bf16, bf16), f32, bf16),
    ("trace", lambda a, b: a.trace(), (bf16, f32), f32, bf16),
    ("exp stays", lambda a, b: a.exp(), (bf16, f32), bf16, bf16),
    ("softmax stays", lambda a, b: a.softmax(-1), (f32, f32), f32, f32),
    ("sum stays", lambda a, b: a.sum(), (bf16, f32), bf16, bf16),
    ("add widens", lambda a, b: a + b, (bf16, f32), f32, f32),
    ("mv not cast on the CPU", lambda a, b: a.mv(b[0]), (f32, f32), f32, f32),
    ("mm of float64", _mm, (f64, f64), f64, f64),
]


@pytest.mark.parametrize("what,call,dtypes,inside,outside", CPU_POLICY,
                         ids=[c[0] for c in CPU_POLICY])
def test_cpu_policy(what, call, dtypes, inside, outside):
    a, b = rand(4, 4, dtype=dtypes[0]), rand(4, 4, dtype=dtypes[1])
    with ember.autocast("cpu"):
        assert call(a, b).dtype is inside
    if outside is not None:  # outside a region nothing changes
        assert call(a, b).dtype is outside


def test_integer_tensors_are_left_alone():
    i = ember.arange(4).reshape(2, 2)
    with ember.autocast("cpu"):
        assert (i @ i).dtype is ember.int64 and ember.mm(i, i).dtype is ember.int64
        assert i.sum().dtype is ember.int64
        x = rand(2, 2)
        assert x.index_put((ember.tensor([0, 1]),), rand(2)).dtype is f32


# ---- gradients through the casts ----------------------------------------------------
@pytest.mark.parametrize("low,tol", [(bf16, 5e-2), (f16, 1e-2)])
def test_float32_leaves_get_float32_gradients_close_to_the_reference(low, tol):
    x = rand(8, 16)
    w1, w2 = rand(16, 32, requires_grad=True), rand(32, 4, requires_grad=True)
    b = rand(32, requires_grad=True)

    def loss_of():  # smooth (a relu could flip a unit between the two runs)
        h = ember.addmm(b, x, w1).tanh()
        return (h @ w2).float().pow(2).mean()

    with ember.autocast("cpu", dtype=low):
        loss = loss_of()
        assert (x @ w1).dtype is low and loss.dtype is f32
    loss.backward()
    got = [p.grad for p in (w1, w2, b)]
    assert all(g.dtype is f32 for g in got)
    for p in (w1, w2, b):
        p.grad = None
    loss_of().backward()  # the float32 reference on the same data
    for g, p in zip(got, (w1, w2, b)):
        scale = float(p.grad.abs().max()) + 1e-6
        assert float((g - p.grad).abs().max()) <= tol * scale


def test_backward_runs_without_autocast():
    # a float32 graph differentiated inside a region keeps float32 formulas
    a, b = rand(5, 6, requires_grad=True), rand(6, 3)
    loss = a.mm(b).sum()
    with ember.autocast("cpu"):
        loss.backward()
        assert ember.is_autocast_enabled("cpu")
    expect = b.sum(1).expand(5, 6)
    assert a.grad.dtype is f32 and np.allclose(a.grad.numpy(), expect.numpy(), atol=1e-6)


def test_a_region_entered_in_backward_ends_held_down():
    seen = []
    a = rand(3, 3)

    class Probe(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            seen.append((a @ a).dtype)  # held down in backward
            with ember.autocast("cpu"):  # a custom backward may ask for autocast
                seen.append((a @ a).dtype)
            seen.append((a @ a).dtype)
            return g

    x = rand(3, requires_grad=True)
    with ember.autocast("cpu"):
        Probe.apply(x).sum().backward()
        assert (a @ a).dtype is bf16
    assert seen == [f32, bf16, f32]


def test_low_precision_leaves_keep_their_dtype():
    x = rand(3, 4, dtype=bf16, requires_grad=True)
    with ember.autocast("cpu"):
        y = x.prod()  # float32 on the CPU: bfloat16 in, float32 out
        assert y.dtype is f32
        y.backward()
    assert x.grad.dtype is bf16


# ---- the cast cache -----------------------------------------------------------------
def _cast_node(out, i=1):
    return out.grad_fn.next_functions[i][0]


def test_a_parameter_is_cast_once_per_region():
    w = rand(4, 4, requires_grad=True)
    x = rand(3, 4)
    with ember.autocast("cpu"):
        y1, y2 = x @ w, ember.mm(x, w)
        assert _cast_node(y1) is _cast_node(y2)
        with ember.autocast("cpu", dtype=f16):  # another dtype: another cast
            assert _cast_node(x @ w) is not _cast_node(y1)
        with ember.no_grad():
            w.mul_(1.0)  # an in-place change: cast again
        y3 = x @ w
        assert _cast_node(y3) is not _cast_node(y1)
        # two forward/backward rounds reuse the cast (it saves no tensors)
        for _ in range(2):
            (x @ w).float().sum().backward()
        assert np.allclose(w.grad.numpy(), 2 * x.sum(0)[:, None].expand(4, 4).numpy(),
                           atol=2e-2)
    with ember.autocast("cpu"):
        assert _cast_node(x @ w) is not _cast_node(y3)  # a new region casts afresh
    assert not autocast_mode.state.cache
    with ember.autocast("cpu", cache_enabled=False):
        assert _cast_node(x @ w) is not _cast_node(x @ w)


def test_a_cast_made_under_no_grad_is_not_reused_for_training():
    w = rand(4, 4, requires_grad=True)
    x = rand(3, 4)
    with ember.autocast("cpu"):
        with ember.no_grad():
            assert not (x @ w).requires_grad
        y = x @ w
        assert y.requires_grad
        y.float().sum().backward()
    assert w.grad is not None and w.grad.dtype is f32


# ---- PyTorch's result dtypes ---------------------------------------------------------
FRONT_OPS = [
    ("matmul", lambda L, a, b: L.matmul(a, b)), ("@", lambda L, a, b: a @ b),
    ("mm", lambda L, a, b: a.mm(b)), ("bmm", lambda L, a, b: L.bmm(a[None], b[None])),
    ("addmm", lambda L, a, b: L.addmm(b, a, b)), ("mv", lambda L, a, b: L.mv(a, b[0])),
    ("dot", lambda L, a, b: L.dot(a[0], b[0])), ("outer", lambda L, a, b: L.outer(a[0], b[0])),
    ("einsum", lambda L, a, b: L.einsum("ij,jk->ik", a, b)),
    ("softmax", lambda L, a, b: a.softmax(-1)), ("log_softmax", lambda L, a, b: a.log_softmax(0)),
    ("sum", lambda L, a, b: a.sum()), ("prod", lambda L, a, b: a.prod()),
    ("cumsum", lambda L, a, b: a.cumsum(0)), ("norm", lambda L, a, b: a.norm()),
    ("exp", lambda L, a, b: a.exp()), ("log", lambda L, a, b: (a + 2).log()),
    ("pow", lambda L, a, b: a ** 2), ("rdiv", lambda L, a, b: 1 / (a + 2)),
    ("cdist", lambda L, a, b: L.cdist(a, b)), ("trace", lambda L, a, b: L.trace(a)),
    ("add", lambda L, a, b: a + b), ("where", lambda L, a, b: L.where(a > 0, a, b)),
    ("cat", lambda L, a, b: L.cat([a, b])), ("atan2", lambda L, a, b: L.atan2(a, b)),
    ("addcmul", lambda L, a, b: L.addcmul(a, a, b)), ("logsumexp", lambda L, a, b: a.logsumexp(0)),
]


@pytest.mark.parametrize("low", ["bfloat16", "float16"])
@pytest.mark.parametrize("name,call", FRONT_OPS, ids=[c[0] for c in FRONT_OPS])
def test_cpu_result_dtypes_match_pytorch(name, call, low):
    torch = pytest.importorskip("torch", exc_type=ImportError)
    values = [np.random.default_rng(1).uniform(-1, 1, (3, 3)) for _ in range(2)]
    for first, second in (("float32", "float32"), (low, low), (low, "float32")):
        got = []
        for L in (ember, torch):
            a, b = (L.tensor(v, dtype=getattr(L, d)) for v, d in zip(values, (first, second)))
            try:
                with L.autocast("cpu", dtype=getattr(L, low)):
                    got.append(str(call(L, a, b).dtype).split(".")[-1])
            except RuntimeError:  # PyTorch refuses some mixes Ember promotes
                got.append("error")
        assert got[0] == got[1] or got[1] == "error", (first, second, got)


# ---- GradScaler -----------------------------------------------------------------------
def _model(seed=0):
    return rand(4, 3, requires_grad=True, seed=seed)


def _backward(scaler, w, x, factor=1.0):
    with ember.autocast("cpu"):
        loss = (x @ w).float().pow(2).mean() * factor
    scaler.scale(loss).backward()
    return loss


def test_scale_multiplies_tensors_and_nested_sequences():
    s = ember.amp.GradScaler("cpu", init_scale=8.0)
    t = ember.ones(2)
    assert s.scale(t).tolist() == [8.0, 8.0]
    nested = s.scale([t, (t, [t * 2])])
    assert isinstance(nested, list) and isinstance(nested[1], tuple)
    assert nested[1][1][0].tolist() == [16.0, 16.0]
    assert [x.tolist() for x in s.scale(x for x in (t,))] == [[8.0, 8.0]]
    assert s.scale(ember.ones(2, dtype=f16)).dtype is f16
    with pytest.raises(ValueError, match="outputs must be a Tensor or an iterable of Tensors"):
        s.scale(3.0)


def test_a_step_with_inf_or_nan_gradients_is_skipped_and_the_scale_backs_off():
    x = rand(8, 4, seed=1)
    for bad in (float("inf"), float("nan")):
        w = _model()
        before = w.detach().clone()
        opt = SGD([w])
        s = ember.amp.GradScaler("cpu", init_scale=1024.0)
        _backward(s, w, x, factor=bad)
        assert s.step(opt) is None and opt.steps == 0
        assert w.detach().equal(before)
        s.update()
        assert s.get_scale() == 512.0 and s._get_growth_tracker() == 0


def test_the_scale_grows_after_growth_interval_clean_steps():
    w, x = _model(), rand(8, 4, seed=1)
    opt = SGD([w], lr=0.01)
    s = ember.amp.GradScaler("cpu", init_scale=4.0, growth_factor=3.0, growth_interval=3)
    scales = []
    for _ in range(7):
        opt.zero_grad()
        _backward(s, w, x)
        assert s.step(opt) == "stepped"
        s.update()
        scales.append(s.get_scale())
    assert scales == [4.0, 4.0, 12.0, 12.0, 12.0, 36.0, 36.0]
    assert s._get_growth_tracker() == 1


def test_unscale_then_clip_then_step():
    w, x = _model(), rand(8, 4, seed=1)
    reference = w.detach().clone().requires_grad_()
    (x @ reference).float().pow(2).mean().backward()
    opt = SGD([w], lr=0.5)
    s = ember.amp.GradScaler("cpu", init_scale=2.0 ** 10)
    _backward(s, w, x)
    assert float(w.grad.abs().max()) > 100  # still scaled
    s.unscale_(opt)
    assert np.allclose(w.grad.numpy(), reference.grad.numpy(), rtol=5e-2, atol=1e-2)
    with pytest.raises(RuntimeError, match=r"unscale_\(\) has already been called on this "
                                           r"optimizer since the last update\(\)."):
        s.unscale_(opt)
    norm = float(w.grad.norm())
    w.grad.mul_(0.1 / norm)  # clip to norm 0.1
    before = w.detach().clone()
    s.step(opt)  # does not unscale again
    assert np.allclose((before - w.detach()).norm().item(), 0.05, rtol=1e-4)
    with pytest.raises(RuntimeError, match=r"unscale_\(\) is being called after step\(\)."):
        s.unscale_(opt)
    with pytest.raises(RuntimeError, match=r"step\(\) has already been called since the last "
                                           r"update\(\)."):
        s.step(opt)
    s.update()
    opt.zero_grad()
    _backward(s, w, x)
    s.step(opt)  # a fresh iteration after update()


def test_one_host_read_per_step(monkeypatch):
    params = [rand(3, 3, requires_grad=True, seed=i) for i in range(6)]
    x = rand(2, 3)
    opt = SGD(params)
    opt.param_groups.append({"params": params[3:], "lr": 0.1})
    del opt.param_groups[0]["params"][3:]
    s = ember.amp.GradScaler("cpu")
    with ember.autocast("cpu"):
        loss = sum((x @ p).float().sum() for p in params)
    s.scale(loss).backward()
    reads = []
    for name in ("__bool__", "item", "tolist"):
        def counted(self, *a, _real=getattr(ember.Tensor, name), _name=name):
            reads.append(_name)
            return _real(self, *a)
        monkeypatch.setattr(ember.Tensor, name, counted)
    s.step(opt)
    s.update()
    assert len(reads) == 1


def test_state_dict_round_trip():
    w, x = _model(), rand(8, 4, seed=1)
    opt = SGD([w], lr=0.01)
    s = ember.amp.GradScaler("cpu", init_scale=256.0, growth_factor=4.0, backoff_factor=0.25,
                             growth_interval=5)
    for factor in (1.0, float("inf"), 1.0, 1.0):
        opt.zero_grad()
        _backward(s, w, x, factor)
        s.step(opt)
        s.update()
    state = s.state_dict()
    assert state == {"scale": 64.0, "growth_factor": 4.0, "backoff_factor": 0.25,
                     "growth_interval": 5, "_growth_tracker": 2}
    fresh = ember.amp.GradScaler("cpu")
    fresh.load_state_dict(state)
    assert fresh.state_dict() == state
    assert fresh.get_growth_factor() == 4.0 and fresh.get_backoff_factor() == 0.25
    assert fresh.get_growth_interval() == 5
    fresh.set_growth_factor(2.0)
    fresh.set_backoff_factor(0.5)
    fresh.set_growth_interval(3)
    assert fresh.state_dict()["growth_interval"] == 3
    assert fresh.scale(ember.ones(1)).item() == 64.0
    with pytest.raises(RuntimeError, match="The source state dict is empty, possibly because it "
                                           "was saved from a disabled instance of GradScaler."):
        fresh.load_state_dict({})


def test_disabled_scaler_passes_everything_through():
    w, x = _model(), rand(8, 4, seed=1)
    opt = SGD([w])
    s = ember.amp.GradScaler("cpu", enabled=False)
    t = ember.ones(2)
    assert s.scale(t) is t and s.get_scale() == 1.0 and not s.is_enabled()
    (x @ w).pow(2).mean().backward()
    grad = w.grad.clone()
    s.unscale_(opt)
    assert w.grad.equal(grad)
    assert s.step(opt) == "stepped" and opt.steps == 1
    s.update()
    assert s.state_dict() == {}
    s.load_state_dict({})
    assert s._get_growth_tracker() == 0


def test_grad_scaler_errors():
    w = _model()
    opt = SGD([w])
    s = ember.amp.GradScaler("cpu")
    with pytest.raises(AssertionError, match="Attempted step but _scale is None.  This may "
                                             "indicate your script did not use scaler.scale"):
        s.step(opt)
    with pytest.raises(RuntimeError, match="Closure use is not currently supported if "
                                           "GradScaler is enabled."):
        s.step(opt, closure=lambda: 0.0)
    s.scale(ember.ones(1))
    with pytest.raises(AssertionError, match="No inf checks were recorded for this optimizer."):
        s.step(opt)  # no gradients at all
    s._per_optimizer_states.clear()
    with pytest.raises(AssertionError, match="No inf checks were recorded prior to update."):
        s.update()
    half = rand(2, 2, dtype=f16, requires_grad=True)
    half.grad = ember.ones(2, 2, dtype=f16)
    with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients."):
        s.unscale_(SGD([half]))
    s.update(new_scale=32.0)
    assert s.get_scale() == 32.0
    s.update(new_scale=ember.tensor([8.0]))
    assert s.get_scale() == 8.0
    with pytest.raises(AssertionError, match="new_scale should be a float or a 1-element"):
        s.update(new_scale=ember.ones(2))
    with pytest.raises(AssertionError, match="The growth factor must be > 1.0."):
        ember.amp.GradScaler("cpu", growth_factor=1.0)
    with pytest.raises(AssertionError, match="The backoff factor must be < 1.0."):
        ember.amp.GradScaler("cpu", backoff_factor=1.0)


def test_a_short_training_loop_learns():
    rng = np.random.default_rng(3)
    x = ember.tensor(rng.standard_normal((64, 8)), dtype=f32)
    y = ember.tensor((rng.standard_normal((8, 1)) * 2), dtype=f32)
    target = x @ y
    w1 = (rand(8, 16, seed=4) * 0.5).requires_grad_()
    w2 = (rand(16, 1, seed=5) * 0.5).requires_grad_()
    opt = SGD([w1, w2], lr=0.05)
    scaler = ember.amp.GradScaler("cpu")
    losses = []
    for _ in range(25):
        opt.zero_grad()
        with ember.autocast("cpu"):
            out = (x @ w1).relu() @ w2
            loss = (out - target).pow(2).mean()
            assert out.dtype is bf16 and loss.dtype is f32
        scaler.scale(loss).backward()
        assert w1.grad.dtype is f32
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]


def test_no_warning_outside_autocast():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = rand(2, 2)
        assert (a @ a).dtype is f32 and a.exp().dtype is f32
