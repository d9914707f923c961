"""ember.nn on CUDA tensors: Module.cuda(), a small CNN's training steps
(through ember.thcunn's kernels where installed, composed ember ops
elsewhere) against the same steps on the CPU, and the optimizers on the
device.  Runs on a GPU or on ember-thc's emulated device; skips elsewhere."""
import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.nn import _kernels

pytestmark = pytest.mark.skipif(not ember.cuda.is_available(),
                                reason="no CUDA device (nor ember-thc's emulated device)")


def small_cnn():
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(4, 6, 3, stride=2, groups=2), nn.Tanh(), nn.AvgPool2d(1),
        nn.Flatten(), nn.Linear(6, 16), nn.LayerNorm(16), nn.Dropout(0.0), nn.Linear(16, 3))


def test_thcunn_kernels_are_used_when_installed():
    pytest.importorskip("ember.thcunn")
    _kernels.reset()
    assert "cuda" in _kernels.providers()


@pytest.mark.parametrize("device,package", [("cuda", "ember.thcunn"), ("cpu", "ember.thnn")])
def test_each_device_runs_its_own_kernel_package(monkeypatch, device, package):
    # whatever order the kernel packages load in, a layer on CUDA tensors
    # runs ember.thcunn's kernels and on CPU tensors ember.thnn's
    kernels = pytest.importorskip(package)
    _kernels.reset()
    calls = []
    for name in ("conv2d_forward", "conv2d_backward_input", "batch_norm_forward"):
        real = getattr(kernels, name)
        monkeypatch.setattr(kernels, name,
                            lambda *a, _real=real, _name=name, **k: calls.append(_name)
                            or _real(*a, **k))
    model = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3)).to(device)
    x = ember.randn(2, 2, 6, 6, device=device, requires_grad=True)
    model(x).sum().backward()
    assert calls == ["conv2d_forward", "batch_norm_forward", "conv2d_backward_input"]


def test_module_cuda_keeps_parameters_and_moves_buffers():
    m = small_cnn().double()
    params = list(m.parameters())
    m.cuda()
    assert [id(p) for p in m.parameters()] == [id(p) for p in params]
    assert all(p.is_cuda for p in m.parameters())
    assert all(b.is_cuda for b in m.buffers())
    m.cpu()
    assert not any(p.is_cuda for p in m.parameters())


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_training_steps_match_the_cpu(optimizer):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 1, 8, 8))
    y = rng.integers(0, 3, size=5)
    ember.manual_seed(0)
    cpu = small_cnn().double()
    gpu = small_cnn().double()
    gpu.load_state_dict(cpu.state_dict())
    gpu.cuda()
    results = []
    for model, dev in ((cpu, "cpu"), (gpu, "cuda")):
        opt = (ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-3)
               if optimizer == "sgd" else ember.optim.Adam(model.parameters(), lr=0.01))
        xs, ys = ember.tensor(x, device=dev), ember.tensor(y, device=dev)
        losses = []
        for _ in range(3):
            opt.zero_grad()
            loss = F.cross_entropy(model(xs), ys)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        results.append((losses, {k: v.cpu().numpy() for k, v in model.state_dict().items()}))
    (lc, sc), (lg, sg) = results
    assert np.allclose(lc, lg, rtol=1e-9, atol=1e-10)
    for k in sc:
        assert np.allclose(sc[k], sg[k], rtol=1e-7, atol=1e-9), k


def test_float32_network_forward_matches_the_cpu():
    ember.manual_seed(1)
    m = small_cnn().eval()
    x = ember.randn(2, 1, 8, 8)
    ref = m(x)
    out = m.cuda()(x.cuda())
    assert out.is_cuda
    assert np.allclose(out.detach().cpu().numpy(), ref.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_embedding_and_lstm_on_the_device():
    ember.manual_seed(2)
    emb, lstm = nn.Embedding(10, 4).double(), nn.LSTM(4, 5, batch_first=True).double()
    idx = ember.tensor([[1, 2, 3], [4, 5, 9]])
    out_cpu, _ = lstm(emb(idx))
    emb.cuda()
    lstm.cuda()
    out, (h, c) = lstm(emb(idx.cuda()))
    assert out.is_cuda and h.is_cuda
    assert np.allclose(out.detach().cpu().numpy(), out_cpu.detach().numpy(), atol=1e-12)
    out.sum().backward()
    assert emb.weight.grad.is_cuda


# ---- mixed precision on the device -------------------------------------------------
def test_layers_under_cuda_autocast():
    ember.manual_seed(0)
    conv, bn = nn.Conv2d(1, 4, 3, padding=1).cuda(), nn.BatchNorm2d(4).cuda()
    lin, ln = nn.Linear(64, 8).cuda(), nn.LayerNorm(8).cuda()
    x = ember.randn(2, 1, 4, 4, device="cuda")
    target = ember.tensor([1, 3], device="cuda")
    with ember.autocast("cuda"):
        h = conv(x)
        assert h.dtype is ember.float16
        h = bn(h)  # float32 weights, float16 in: float16 out, as PyTorch's kernel
        assert h.dtype is ember.float16
        h = lin(h.relu().reshape(2, 64))
        assert h.dtype is ember.float16
        h = ln(h)  # layer_norm runs in float32 on CUDA
        assert h.dtype is ember.float32
        out = lin(ember.cat([h] * 8, 1))
        loss = F.cross_entropy(out, target)
        assert out.dtype is ember.float16 and loss.dtype is ember.float32
        assert F.mse_loss(out, out.detach().float()).dtype is ember.float32
        assert F.binary_cross_entropy_with_logits(out, out.detach().sigmoid()).dtype is \
            ember.float32
        with pytest.raises(RuntimeError, match="are unsafe to autocast"):
            nn.BCELoss()(out.sigmoid(), out.detach().sigmoid())
    loss.backward()
    for module in (conv, bn, lin, ln):
        assert all(p.grad.dtype is ember.float32 and p.grad.is_cuda
                   for p in module.parameters())


def test_training_on_cuda_with_autocast_and_grad_scaler():
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((64, 8))
    ys = (xs[:, 0] > 0).astype(np.int64) + (xs[:, 1] > 0.5).astype(np.int64)
    x = ember.tensor(xs, dtype=ember.float32, device="cuda")
    y = ember.tensor(ys, device="cuda")
    ember.manual_seed(1)
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 3)).cuda()
    opt = ember.optim.Adam(model.parameters(), lr=1e-2)
    scaler = ember.amp.GradScaler("cuda")
    losses = []
    for _ in range(30):
        opt.zero_grad()
        with ember.autocast("cuda"):
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
    assert all(p.dtype is ember.float32 for p in model.parameters())
