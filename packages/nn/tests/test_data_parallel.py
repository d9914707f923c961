"""ember.nn.DataParallel, ember.nn.parallel and ember.cuda.comm.

The multi-device tests need two CUDA devices: ember-thc's emulated ones
(EMBER_THC_EMULATE=2, as tox's thc-emulated env runs this file) or GPUs;
they skip with fewer.  With EMBER_TEST_CUDA_DEVICES=N set (CI sets it), a
machine with fewer than N devices fails instead of skipping.  The
single-device and no-device tests run in the other environments."""
import collections
import copy
import os
import threading
import warnings

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.nn.parallel import data_parallel, gather, parallel_apply, replicate, scatter
from ember.nn.parallel.scatter_gather import scatter_kwargs

from conftest import requires_torch, to_ember, torch

N_DEVICES = ember.cuda.device_count()
two_devices = pytest.mark.skipif(N_DEVICES < 2, reason="needs 2 CUDA devices "
                                 "(EMBER_THC_EMULATE=2 gives two emulated ones)")
one_device = pytest.mark.skipif(N_DEVICES < 1, reason="needs a CUDA device "
                                "(EMBER_THC_EMULATE=1 gives an emulated one)")
no_device = pytest.mark.skipif(N_DEVICES > 0, reason="for machines without a CUDA device")
CUDA0, CUDA1 = ember.device("cuda", 0), ember.device("cuda", 1)


def test_required_devices_are_present():
    # CI asks for the devices it set up, so the multi-device tests cannot skip silently
    need = int(os.environ.get("EMBER_TEST_CUDA_DEVICES", "0"))
    assert N_DEVICES >= need, f"EMBER_TEST_CUDA_DEVICES={need} but {N_DEVICES} device(s)"


def mlp(device=None):
    ember.manual_seed(0)
    m = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 4)).double()
    return m.to(device) if device is not None else m


def conv_net():
    ember.manual_seed(1)
    return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 3 * 3, 5)).double()


def randn(rng, *shape, device=None):
    t = to_ember(rng.standard_normal(shape))
    return t.to(device) if device is not None else t


def close(a, b, tol=1e-12):
    np.testing.assert_allclose(a.detach().cpu().numpy(), b.detach().cpu().numpy(),
                               rtol=tol, atol=tol)


class Recorder(nn.Module):
    """Wraps a module; records, per call, the device and thread it ran on
    and the shape of its first input (replicas share this list)."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner
        self.calls = []

    def forward(self, x, *rest, **kwargs):
        self.calls.append({"device": x.device, "current": ember.cuda.current_device()
                           if x.device.type == "cuda" else None,
                           "thread": threading.get_ident(), "shape": tuple(x.shape),
                           "grad": ember.is_grad_enabled()})
        return self.inner(x, *rest, **kwargs)


# ---- no CUDA device: DataParallel calls the module --------------------------------
@no_device
def test_without_a_device_the_module_is_called():
    m = mlp()
    dp = nn.DataParallel(m)
    assert dp.device_ids == [] and dp.module is m
    x = ember.randn(3, 6, dtype=ember.float64)
    close(dp(x), m(x))
    with pytest.raises(RuntimeError, match="device type could not be determined"):
        data_parallel(m, x)


@no_device
@requires_torch
def test_without_a_device_as_pytorch():
    tm = torch.nn.Linear(3, 2)
    assert torch.nn.DataParallel(tm).device_ids == nn.DataParallel(nn.Linear(3, 2)).device_ids


def test_state_dict_has_the_module_prefix():
    m = mlp()
    dp = nn.DataParallel(m.to(CUDA0) if N_DEVICES else m)
    keys = list(dp.state_dict())
    assert keys == ["module." + k for k in m.state_dict()]
    other = nn.DataParallel(mlp(dp.module[0].weight.device))
    other.load_state_dict(dp.state_dict())
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "module.0.weight"'):
        dp.load_state_dict(m.state_dict())
    dp.module.load_state_dict(m.state_dict())  # the usual way to load a plain checkpoint


@requires_torch
def test_state_dict_keys_as_pytorch():
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    if N_DEVICES:
        m.to(CUDA0)
    assert list(nn.DataParallel(m).state_dict()) == list(torch.nn.DataParallel(tm).state_dict())
    assert repr(nn.DataParallel(nn.Linear(3, 4))).replace("ember", "torch") == \
        repr(torch.nn.DataParallel(torch.nn.Linear(3, 4)))


@requires_torch
def test_public_names_as_pytorch():
    assert set(ember.nn.parallel.__all__) == set(torch.nn.parallel.__all__)
    import torch.nn.parallel.comm as torch_comm
    for name in ember.cuda.comm.__all__:
        assert hasattr(torch_comm, name)


# ---- one device: the module moves there, the inputs follow ---------------------
@one_device
def test_one_device_id_moves_module_and_inputs():
    m = mlp()
    ref_m = copy.deepcopy(m)
    dp = nn.DataParallel(m, device_ids=[0])
    assert m[0].weight.device == CUDA0 and dp.device_ids == [0] and dp.output_device == 0
    x = ember.randn(4, 6, dtype=ember.float64)
    y = dp(x)
    assert y.device == CUDA0
    close(y, ref_m(x))
    y.sum().backward()
    ref_m(x).sum().backward()
    close(m[0].weight.grad, ref_m[0].weight.grad)


@one_device
def test_one_device_runs_in_the_calling_thread_and_keeps_structures():
    rec = Recorder(nn.Linear(3, 2).double())
    dp = nn.DataParallel(rec, device_ids=["cuda:0"])
    out = dp(ember.randn(2, 3, dtype=ember.float64))
    assert rec.calls[0]["thread"] == threading.get_ident() and out.shape == (2, 2)


@pytest.mark.skipif(N_DEVICES != 1, reason="the default device list of a 1-device machine")
def test_default_device_ids_on_one_device():
    dp = nn.DataParallel(mlp())
    assert dp.device_ids == [0] and dp.src_device_obj == CUDA0


# ---- several devices: outputs --------------------------------------------------
@two_devices
def test_mlp_outputs_equal_the_module():
    m = mlp(CUDA0)
    dp = nn.DataParallel(m)
    assert dp.device_ids == [0, 1] and dp.output_device == 0
    rng = np.random.default_rng(0)
    for batch in (2, 4, 7):
        x = randn(rng, batch, 6)
        y = dp(x)
        assert y.device == CUDA0 and y.shape == (batch, 4)
        close(y, m(x.to(CUDA0)))


@two_devices
def test_conv_net_with_batchnorm_in_eval_mode():
    net = conv_net().to(CUDA0).eval()
    bn = net[1]
    bn.running_mean.copy_(ember.linspace(-1, 1, 4, dtype=ember.float64))
    bn.running_var.copy_(ember.linspace(0.5, 2, 4, dtype=ember.float64))
    x = randn(np.random.default_rng(1), 6, 2, 6, 6)
    close(nn.DataParallel(net)(x), net(x.to(CUDA0)))


@two_devices
def test_replicas_run_in_threads_with_their_device_current():
    rec = Recorder(mlp())
    dp = nn.DataParallel(rec.to(CUDA0))
    dp(ember.randn(4, 6, dtype=ember.float64))
    calls = sorted(rec.calls, key=lambda c: str(c["device"]))
    assert [c["device"] for c in calls] == [CUDA0, CUDA1]
    assert [c["current"] for c in calls] == [0, 1]
    assert threading.get_ident() not in {c["thread"] for c in calls}
    assert all(c["grad"] for c in calls)


# ---- several devices: gradients and training ------------------------------------
@two_devices
def test_gradients_equal_the_single_device_gradients():
    rng = np.random.default_rng(2)
    for trial in range(3):
        m = mlp(CUDA0)
        ref = copy.deepcopy(m)
        x, target = randn(rng, 5, 6), randn(rng, 5, 4)
        F.mse_loss(nn.DataParallel(m)(x), target.to(CUDA0)).backward()
        F.mse_loss(ref(x.to(CUDA0)), target.to(CUDA0)).backward()
        for p, q in zip(m.parameters(), ref.parameters()):
            assert p.grad.device == CUDA0
            close(p.grad, q.grad)


@two_devices
def test_gradients_of_a_conv_net_and_of_the_input():
    net = conv_net().to(CUDA0).eval()
    ref = copy.deepcopy(net)
    x = randn(np.random.default_rng(3), 4, 2, 6, 6).requires_grad_()
    x_ref = x.detach().clone().requires_grad_()
    (nn.DataParallel(net)(x) ** 2).sum().backward()
    (ref(x_ref.to(CUDA0)) ** 2).sum().backward()
    for p, q in zip(net.parameters(), ref.parameters()):
        close(p.grad, q.grad, 1e-10)
    assert x.grad.device == x.device  # back to the CPU input
    close(x.grad, x_ref.grad, 1e-10)


@two_devices
def test_optimizer_steps_match_a_single_device_run():
    m = mlp(CUDA0)
    ref = copy.deepcopy(m)
    dp = nn.DataParallel(m)
    opt = ember.optim.SGD(dp.parameters(), lr=0.1, momentum=0.9)
    opt_ref = ember.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    rng = np.random.default_rng(4)
    for step in range(4):
        x, target = randn(rng, 6, 6), randn(rng, 6, 4)
        for model, o, inp in ((dp, opt, x), (ref, opt_ref, x.to(CUDA0))):
            o.zero_grad()
            loss = F.mse_loss(model(inp), target.to(CUDA0))
            loss.backward()
            o.step()
    for p, q in zip(m.parameters(), ref.parameters()):
        close(p, q, 1e-11)


@two_devices
def test_tied_weights_and_shared_submodules():
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Linear(4, 4, bias=False)
            self.shared = nn.Linear(4, 4)
            self.again = self.shared

        def forward(self, x):
            return F.linear(self.again(self.shared(self.emb(x))), self.emb.weight)
    ember.manual_seed(5)
    m = Tied().double().to(CUDA0)
    ref = copy.deepcopy(m)
    x = randn(np.random.default_rng(5), 3, 4)
    replicas = replicate(m, [0, 1])
    assert replicas[1].shared is replicas[1].again
    nn.DataParallel(m)(x).sum().backward()
    ref(x.to(CUDA0)).sum().backward()
    for p, q in zip(m.parameters(), ref.parameters()):
        close(p.grad, q.grad)


@two_devices
def test_lstm_reads_the_replica_weights():
    ember.manual_seed(6)
    lstm = nn.LSTM(3, 5, batch_first=True).double().to(CUDA0)
    ref = copy.deepcopy(lstm)
    x = randn(np.random.default_rng(6), 4, 7, 3)
    out, (h, c) = nn.DataParallel(lstm)(x)
    ref_out, (ref_h, ref_c) = ref(x.to(CUDA0))
    close(out, ref_out)
    out.sum().backward()
    ref_out.sum().backward()
    close(lstm.weight_hh_l0.grad, ref.weight_hh_l0.grad)
    # the states are (layers, batch, hidden): gathered along dim 0 they do not match
    assert h.shape == (2, 2, 5)


@two_devices
def test_frozen_parameters_get_no_gradient():
    m = mlp(CUDA0)
    m[0].requires_grad_(False)
    ref = copy.deepcopy(m)
    x = randn(np.random.default_rng(17), 4, 6)
    nn.DataParallel(m)(x).sum().backward()
    ref(x.to(CUDA0)).sum().backward()
    assert m[0].weight.grad is None and m[0].bias.grad is None
    close(m[2].weight.grad, ref[2].weight.grad)


@two_devices
def test_hooks_of_the_module_run_once_per_replica():
    m = mlp(CUDA0)
    seen = []
    m[0].register_forward_hook(lambda mod, args, out: seen.append(out.device))
    nn.DataParallel(m)(ember.randn(4, 6, dtype=ember.float64))
    assert sorted(map(str, seen)) == ["cuda:0", "cuda:1"]


# ---- several devices: inputs, dims, devices -------------------------------------
class Structured(nn.Module):
    Out = collections.namedtuple("Out", "y extra")

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 2).double()

    def forward(self, x, pair, *, scale=1.0, table=None, flag=None):
        y = self.lin(x) * scale + pair[0] - pair[1][0]
        return {"y": y, "t": (table["a"] * 2, [table["b"]]), "none": None,
                "nt": self.Out(y.sum(1), y * 0 + (1 if flag else 0))}


@two_devices
def test_kwargs_and_nested_structures():
    m = Structured().to(CUDA0)
    rng = np.random.default_rng(7)
    x, a, b, ta, tb = (randn(rng, 5, 3), randn(rng, 5, 2), randn(rng, 5, 2), randn(rng, 5, 1),
                       randn(rng, 5, 4))
    args, kw = (x, (a, [b])), dict(scale=3.0, table={"a": ta, "b": tb}, flag=True)
    out = nn.DataParallel(m)(*args, **kw)
    ref = m(x.to(CUDA0), (a.to(CUDA0), [b.to(CUDA0)]), scale=3.0,
            table={"a": ta.to(CUDA0), "b": tb.to(CUDA0)}, flag=True)
    assert set(out) == {"y", "t", "none", "nt"} and out["none"] is None
    assert isinstance(out["t"], tuple) and isinstance(out["t"][1], list)
    assert isinstance(out["nt"], Structured.Out)
    close(out["y"], ref["y"])
    close(out["t"][0], ref["t"][0])
    close(out["t"][1][0], ref["t"][1][0])
    close(out["nt"].y, ref["nt"].y)
    close(out["nt"].extra, ref["nt"].extra)


@two_devices
def test_scatter_splits_in_order_and_repeats_other_objects():
    x = ember.arange(10.0).view(5, 2)
    pieces = scatter((x, "s", [x, 3], {"k": x}), [0, 1])
    assert len(pieces) == 2
    first, second = pieces
    assert first[0].device == CUDA0 and second[0].device == CUDA1
    assert first[0].tolist() == x[:3].tolist() and second[0].tolist() == x[3:].tolist()
    assert first[1] == second[1] == "s" and first[2][1] == 3 and isinstance(first[2], list)
    assert second[3]["k"].tolist() == x[3:].tolist()
    args, kws = scatter_kwargs((x,), {"flag": True}, [0, 1])
    assert len(args) == len(kws) == 2 and kws[1] == {"flag": True}
    # a batch of one with a non-tensor keyword: one replica (PyTorch would run
    # a second one with no positional input)
    args, kws = scatter_kwargs((x[:1],), {"flag": True}, [0, 1])
    assert len(args) == len(kws) == 1


@two_devices
def test_dim_1_scatters_and_gathers_along_dim_1():
    rec = Recorder(nn.Linear(4, 3).double())
    dp = nn.DataParallel(rec.to(CUDA0), dim=1)
    x = randn(np.random.default_rng(8), 2, 5, 4)
    y = dp(x)
    assert y.shape == (2, 5, 3)
    assert sorted(c["shape"] for c in rec.calls) == [(2, 2, 4), (2, 3, 4)]
    close(y, rec(x.to(CUDA0)))


@two_devices
def test_uneven_batch_split():
    rec = Recorder(mlp())
    dp = nn.DataParallel(rec.to(CUDA0))
    x = randn(np.random.default_rng(9), 7, 6)
    close(dp(x), rec.inner(x.to(CUDA0)))
    shapes = {c["device"]: c["shape"] for c in rec.calls}
    assert shapes == {CUDA0: (4, 6), CUDA1: (3, 6)}


@two_devices
def test_batch_of_one_uses_one_device():
    rec = Recorder(mlp())
    dp = nn.DataParallel(rec.to(CUDA0))
    x = randn(np.random.default_rng(10), 1, 6)
    y = dp(x)
    close(y, rec.inner(x.to(CUDA0)))
    assert [c["device"] for c in rec.calls] == [CUDA0]
    y.sum().backward()
    assert rec.inner[0].weight.grad is not None


@two_devices
def test_output_device_1():
    m = mlp(CUDA0)
    dp = nn.DataParallel(m, output_device=1)
    x = randn(np.random.default_rng(11), 4, 6)
    y = dp(x)
    assert y.device == CUDA1
    close(y, m(x.to(CUDA0)))
    y.sum().backward()
    assert m[0].weight.grad.device == CUDA0
    assert nn.DataParallel(m, output_device="cuda:1").output_device == 1


@two_devices
def test_device_ids_order_1_0():
    rec = Recorder(mlp())
    rec.to(CUDA1)
    dp = nn.DataParallel(rec, device_ids=[1, 0])
    assert dp.src_device_obj == CUDA1 and dp.output_device == 1
    x = randn(np.random.default_rng(12), 5, 6)
    y = dp(x)
    assert y.device == CUDA1  # the output defaults to device_ids[0]
    close(y, rec.inner(x.to(CUDA1)))
    # the first chunk (the first 3 rows) went to device_ids[0]
    assert {c["device"]: c["shape"][0] for c in rec.calls} == {CUDA1: 3, CUDA0: 2}
    with pytest.raises(RuntimeError, match="on device cuda:1"):
        nn.DataParallel(mlp(CUDA0), device_ids=[1, 0])(x)


@two_devices
def test_no_grad_forward_and_replicas_see_the_grad_mode():
    rec = Recorder(mlp())
    dp = nn.DataParallel(rec.to(CUDA0))
    with ember.no_grad():
        y = dp(ember.randn(4, 6, dtype=ember.float64))
    assert not y.requires_grad
    assert [c["grad"] for c in rec.calls] == [False, False]


@two_devices
def test_replicas_run_under_the_callers_autocast():
    """autocast is per thread: the replicas' threads take the caller's."""
    model = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 3)).to(CUDA0)
    dp = nn.DataParallel(model)
    x = ember.randn(4, 6, device=CUDA0)
    with ember.autocast("cuda"):
        y = dp(x)
    assert y.dtype is ember.float16 and y.device == CUDA0
    y.float().sum().backward()   # float32 parameters, float32 gradients
    assert all(p.grad is not None and p.grad.dtype is ember.float32
               for p in model.parameters())
    with ember.autocast("cuda", dtype=ember.bfloat16):
        with ember.autocast("cuda", enabled=False):
            assert dp(x).dtype is ember.float32
        assert dp(x).dtype is ember.bfloat16


@two_devices
def test_forward_without_inputs_runs_once_on_the_first_device():
    class Const(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(ember.ones(3, dtype=ember.float64))

        def forward(self):
            return self.w * 2
    m = Const().to(CUDA0)
    y = nn.DataParallel(m)()
    assert y.device == CUDA0 and y.tolist() == [2.0, 2.0, 2.0]


@two_devices
def test_scalar_outputs_become_a_vector_with_a_warning():
    class Loss(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 1).double()

        def forward(self, x):
            return self.lin(x).sum()
    m = Loss().to(CUDA0)
    x = randn(np.random.default_rng(13), 4, 3)
    with pytest.warns(UserWarning, match="all input tensors were scalars; will instead "
                      "unsqueeze and return a vector"):
        y = nn.DataParallel(m)(x)
    assert y.shape == (2,)
    close(y.sum(), m(x.to(CUDA0)))
    y.sum().backward()
    assert m.lin.weight.grad is not None


@two_devices
def test_buffers_updated_only_from_device_0():
    # BatchNorm in training mode: each replica normalises its own chunk;
    # the original buffers receive only the replica on device_ids[0]'s update
    ember.manual_seed(14)
    bn = nn.BatchNorm1d(3).double().to(CUDA0)
    ref = copy.deepcopy(bn)
    x = randn(np.random.default_rng(14), 6, 3)
    y = nn.DataParallel(bn)(x)
    close(y[:3], ref(x[:3].to(CUDA0)))  # per-chunk batch statistics
    close(bn.running_mean, ref.running_mean)
    close(bn.running_var, ref.running_var)
    assert int(bn.num_batches_tracked) == 1


# ---- several devices: errors ------------------------------------------------------
@two_devices
def test_parameters_on_the_wrong_device():
    with pytest.raises(RuntimeError) as info:
        nn.DataParallel(mlp())(ember.randn(2, 6, dtype=ember.float64))
    assert str(info.value) == ("module must have its parameters and buffers on device cuda:0 "
                               "(device_ids[0]) but found one of them on device: cpu")
    with pytest.raises(RuntimeError, match="found one of them on device: cpu"):
        data_parallel(mlp(), ember.randn(2, 6, dtype=ember.float64))


@two_devices
def test_bad_device_ids():
    m = mlp(CUDA0)
    for ids in ([0, 2], [0, -1]):
        with pytest.raises(AssertionError, match="Invalid device id"):
            nn.DataParallel(m, device_ids=ids)
    with pytest.raises(ValueError, match="Expected a non cpu device, but got: cpu"):
        nn.DataParallel(m, device_ids=[0, 1], output_device="cpu")
    with pytest.raises(ValueError, match="Expected a non cpu device, but got: cpu"):
        nn.DataParallel(m, device_ids=["cpu"])


@two_devices
def test_unbalanced_devices_warn(monkeypatch):
    real = ember.cuda.get_device_properties

    class Props:
        def __init__(self, i):
            p = real(i)
            self.total_memory = p.total_memory // (2 if i == 1 else 1)
            self.multi_processor_count = p.multi_processor_count
    monkeypatch.setattr(ember.cuda, "get_device_properties", Props)
    with pytest.warns(UserWarning, match="You may want to exclude GPU 1 which\n    has less "
                      "than 75% of the memory or cores of GPU 0"):
        nn.DataParallel(mlp(CUDA0))


@two_devices
def test_mismatched_output_structures():
    class Odd(nn.Module):
        def __init__(self, kind):
            super().__init__()
            self.kind = kind

        def forward(self, x):
            first = x.device.index == 0
            if self.kind == "tuple":
                return (x, x) if first else (x,)
            if self.kind == "dict":
                return {"a": x, "b": x} if first else {"a": x}
            if self.kind == "type":
                return x if first else 3
            return 3
    x = ember.randn(4, 2)
    with pytest.raises(ValueError, match="zip\\(\\) argument 2 is shorter than argument 1"):
        nn.DataParallel(Odd("tuple"))(x)
    with pytest.raises(ValueError, match="All dicts must have the same number of keys"):
        nn.DataParallel(Odd("dict"))(x)
    with pytest.raises(TypeError, match="replica 1 returned int"):
        nn.DataParallel(Odd("type"))(x)
    with pytest.raises(TypeError, match="cannot join outputs of type int"):
        nn.DataParallel(Odd("int"))(x)


@two_devices
def test_an_exception_in_a_replica_is_raised_with_its_type():
    class Fails(nn.Module):
        def forward(self, x):
            if x.device.index == 1:
                raise KeyError("boom")
            return x
    with pytest.raises(KeyError, match="Caught KeyError in replica 1 on device 1") as info:
        nn.DataParallel(Fails())(ember.randn(4, 2))
    assert "boom" in str(info.value) and "Traceback" in str(info.value)


@two_devices
def test_gather_of_cpu_outputs_is_refused_as_in_pytorch():
    class ToCpu(nn.Module):
        def forward(self, x):
            return x.cpu()
    with pytest.raises(AssertionError, match="Gather function not implemented for CPU tensors"):
        nn.DataParallel(ToCpu())(ember.randn(4, 2))


# ---- several devices: the pieces ------------------------------------------------
@two_devices
def test_replicate_gives_recorded_copies():
    m = mlp(CUDA0)
    replicas = replicate(m, [0, 1])
    for device, r in zip((CUDA0, CUDA1), replicas):
        w = r[0].weight
        assert w.device == device and w.grad_fn is not None and not w.is_leaf
        assert not isinstance(w, nn.Parameter)
        close(w, m[0].weight)
    assert replicas[0][0].weight is not m[0].weight
    detached = replicate(m, [0, 1], detach=True)
    assert detached[1][0].weight.grad_fn is None and not detached[1][0].weight.requires_grad
    # the plain attributes and the original stay untouched
    assert isinstance(m[0].weight, nn.Parameter) and replicas[1][1] is not m[1]


@two_devices
def test_parallel_apply_and_gather_directly():
    m = mlp(CUDA0)
    x = randn(np.random.default_rng(15), 4, 6)
    chunks = scatter(x, [0, 1])
    replicas = replicate(m, [0, 1])
    outs = parallel_apply(replicas, chunks, devices=[0, 1])
    assert [o.device for o in outs] == [CUDA0, CUDA1]
    close(gather(outs, 1), m(x.to(CUDA0)))
    assert gather(outs, "cpu").device.type == "cpu"
    # devices found from the inputs when not given
    assert [o.device for o in parallel_apply(replicas, chunks)] == [CUDA0, CUDA1]
    with pytest.raises(AssertionError, match="The number of modules 2 is not equal to the "
                       "number of inputs 1"):
        parallel_apply(replicas, chunks[:1])


@two_devices
def test_data_parallel_function():
    m = mlp(CUDA0)
    x = randn(np.random.default_rng(16), 5, 6)
    y = data_parallel(m, x, output_device=1)
    assert y.device == CUDA1
    close(y, m(x.to(CUDA0)))
    rec = Recorder(mlp()).to(CUDA0)
    data_parallel(rec, (x,), device_ids=[0, 1], module_kwargs={})
    assert len(rec.calls) == 2


# ---- ember.cuda.comm -------------------------------------------------------------------
@two_devices
def test_comm_broadcast_scatter_gather_reduce_add():
    from ember.cuda import comm
    assert ember.cuda.comm is comm
    x = ember.arange(12.0, dtype=ember.float64).view(6, 2).to(CUDA0).requires_grad_()
    a, b = comm.broadcast(x, [0, 1])
    assert a is x and b.device == CUDA1 and b.tolist() == x.tolist()
    s = comm.scatter(x, [0, 1], chunk_sizes=[2, 4])
    assert [t.shape[0] for t in s] == [2, 4] and s[1].device == CUDA1
    g = comm.gather(s, destination=1)
    assert g.device == CUDA1 and g.tolist() == x.tolist()
    r = comm.reduce_add([x, b], destination=1)
    assert r.device == CUDA1 and r.tolist() == (x * 2).tolist()
    # recorded by autograd: the gradients reach x on its own device
    (g.sum() + (r * 3).sum()).backward()
    assert x.grad.device == CUDA0 and x.grad.tolist() == [[7.0, 7.0]] * 6


@two_devices
def test_comm_out_forms_and_streams():
    from ember.cuda import comm
    x = ember.arange(6.0, dtype=ember.float64).view(3, 2).to(CUDA1).requires_grad_()
    outs = [ember.zeros(3, 2, dtype=ember.float64, device=d) for d in (CUDA0, CUDA1)]
    assert comm.broadcast(x, out=outs)[0] is outs[0] and outs[0].tolist() == x.tolist()
    pieces = [ember.zeros(n, 2, dtype=ember.float64, device=d) for n, d in ((1, CUDA0),
                                                                            (2, CUDA1))]
    comm.scatter(x, out=pieces)
    assert pieces[0].tolist() == x[:1].tolist() and pieces[1].tolist() == x[1:].tolist()
    joined = comm.gather(pieces, out=ember.zeros(3, 2, dtype=ember.float64, device=CUDA0))
    assert joined.tolist() == x.tolist()
    (joined.sum() + outs[0].sum()).backward()  # recorded through the in-place copies
    assert x.grad.device == CUDA1 and x.grad.tolist() == [[2.0, 2.0]] * 3
    streams = [ember.cuda.current_stream(0), ember.cuda.current_stream(1)]
    assert [t.device for t in comm.scatter(x, [1, 0], streams=streams)] == [CUDA1, CUDA0]
    assert comm.gather([x, x], dim=-1, destination="cpu").shape == (3, 4)


@two_devices
def test_comm_errors():
    from ember.cuda import comm
    x = ember.randn(4, 2).to(CUDA0)
    with pytest.raises(RuntimeError, match="Exactly one of 'devices' and 'out' must be specified"):
        comm.broadcast(x)
    with pytest.raises(RuntimeError, match="Expected devices and chunk_sizes to be of same "
                       "length, but got len\\(devices\\) = 2 and len\\(chunk_sizes\\) = 3"):
        comm.scatter(x, [0, 1], chunk_sizes=[1, 1, 2])
    with pytest.raises(RuntimeError, match="split_with_sizes expects split_sizes to sum exactly"):
        comm.scatter(x, [0, 1], chunk_sizes=[1, 1])
    with pytest.raises(RuntimeError, match="chunk expects at least a 1-dimensional tensor"):
        comm.scatter(ember.tensor(1.0), [0, 1])
    with pytest.raises(RuntimeError, match="Input tensor at index 1 has invalid shape \\[4, 3\\], "
                       "but expected \\[4, 2\\]"):
        comm.gather([x, ember.randn(4, 3).to(CUDA1)])
    with pytest.raises(RuntimeError, match="Expected all input tensors to be CUDA tensors, but "
                       "tensor at index 1 was on cpu"):
        comm.gather([x, ember.randn(4, 2)])
    with pytest.raises(ValueError, match="input 1 has invalid size: got 3x2, but expected 4x2"):
        comm.reduce_add([x, ember.randn(3, 2).to(CUDA1)], destination=0)
    with pytest.raises(RuntimeError, match="reduce_add expects destination to be on the same GPU "
                       "with one of the tensors"):
        comm.reduce_add([x, x], destination=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(FutureWarning, match="Using -1 to represent CPU tensor is deprecated"):
            comm.gather([x, x], destination=-1)


# ---- DistributedDataParallel without ember-distributed ---------------------------
def test_distributed_data_parallel_names_the_missing_package(monkeypatch):
    # importable from ember.nn always; constructing it needs ember-distributed
    # (its own tests train with it on several ranks)
    import ember.distributed as dist
    monkeypatch.setattr(dist, "is_available", lambda: False)
    with pytest.raises(RuntimeError, match="DistributedDataParallel needs ember-distributed"):
        nn.parallel.DistributedDataParallel(nn.Linear(2, 2))
