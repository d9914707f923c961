"""ember.nn under ember.autocast on the CPU: layers and functional forms
follow ember.amp's policy (linear and convolutions in bfloat16, losses in
float32, norms in their input's dtype), parameters get float32 gradients,
GradScaler works with ember.optim and clip_grad_norm_, and a small MLP
trains.  Result dtypes are compared with PyTorch where it is installed.
The CUDA forms are in test_cuda.py."""
import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F

from conftest import torch

bf16, f16, f32 = ember.bfloat16, ember.float16, ember.float32


def rand(*shape, dtype=f32, seed=0):
    return ember.tensor(np.random.default_rng(seed).uniform(0.5, 1.5, size=shape), dtype=dtype)


# (what, module, input, result dtype in a bfloat16 CPU region)
LAYERS = [
    ("Linear", lambda: nn.Linear(4, 3), lambda: rand(2, 4), bf16),
    ("Bilinear", lambda: nn.Bilinear(4, 5, 3), None, f32),
    ("Conv1d", lambda: nn.Conv1d(2, 3, 3), lambda: rand(1, 2, 6), bf16),
    ("Conv2d", lambda: nn.Conv2d(2, 3, 3, padding=1), lambda: rand(1, 2, 5, 5), bf16),
    ("ConvTranspose2d", lambda: nn.ConvTranspose2d(2, 3, 3), lambda: rand(1, 2, 4, 4), bf16),
    ("LayerNorm on bfloat16", lambda: nn.LayerNorm(4), lambda: rand(2, 4, dtype=bf16), bf16),
    ("LayerNorm on float32", lambda: nn.LayerNorm(4), lambda: rand(2, 4), f32),
    ("BatchNorm2d on bfloat16", lambda: nn.BatchNorm2d(2), lambda: rand(3, 2, 2, 2, dtype=bf16),
     bf16),
    ("GroupNorm on bfloat16", lambda: nn.GroupNorm(2, 4), lambda: rand(3, 4, 2, dtype=bf16),
     bf16),
    ("Softmax stays", lambda: nn.Softmax(-1), lambda: rand(2, 4), f32),
    ("GELU stays", lambda: nn.GELU(), lambda: rand(2, 4, dtype=bf16), bf16),
    ("ELU stays", lambda: nn.ELU(), lambda: rand(2, 4, dtype=bf16), bf16),
    ("MaxPool3d in float32", lambda: nn.MaxPool3d(2), lambda: rand(1, 1, 2, 2, 2, dtype=bf16),
     f32),
]


@pytest.mark.parametrize("what,make,make_input,expected", LAYERS, ids=[c[0] for c in LAYERS])
def test_layers_under_cpu_autocast(what, make, make_input, expected):
    layer = make()
    if what == "Bilinear":  # two inputs; promoted, as PyTorch on the CPU (not cast)
        args = (rand(2, 4), rand(2, 5))
    else:
        args = (make_input(),)
    with ember.autocast("cpu"):
        out = layer(*args)
        assert out.dtype is expected
    params = [p for p in layer.parameters()]
    if params:
        out.float().sum().backward()
        assert all(p.grad is not None and p.grad.dtype is f32 for p in params)


def test_losses_run_in_float32():
    logits = rand(4, 3, dtype=bf16)
    target = ember.tensor([0, 2, 1, 0])
    with ember.autocast("cpu"):
        assert nn.CrossEntropyLoss()(logits, target).dtype is f32
        assert nn.MSELoss()(logits, rand(4, 3)).dtype is f32
        assert nn.BCEWithLogitsLoss()(logits, rand(4, 3) * 0.5).dtype is f32
        assert nn.BCELoss()(logits.sigmoid(), rand(4, 3) * 0.5).dtype is f32  # allowed on the CPU
        assert F.nll_loss(logits.log_softmax(1), target).dtype is f32


def test_attention_and_transformer_layers():
    mha = nn.MultiheadAttention(8, 2, batch_first=True)
    x = rand(2, 5, 8)
    with ember.autocast("cpu"):
        out, weights = mha(x, x, x)
        assert out.dtype is bf16
        assert F.scaled_dot_product_attention(x, x, x).dtype is bf16
    out.float().sum().backward()
    assert mha.in_proj_weight.grad.dtype is f32


def test_functional_keeps_names_and_is_unchanged_outside():
    assert F.linear.__name__ == "linear" and F.mse_loss.__name__ == "mse_loss"
    assert F.conv2d.__doc__ == F.conv2d.__wrapped__.__doc__
    x, w = rand(2, 4), rand(3, 4)
    assert F.linear(x, w).dtype is f32
    assert F.mse_loss(rand(2, 2, dtype=bf16), rand(2, 2, dtype=bf16)).dtype is bf16


FUNCTIONAL = [
    ("linear", lambda L, F_, a, b: F_.linear(a, b)),
    ("conv2d", lambda L, F_, a, b: F_.conv2d(a.reshape(1, 1, 4, 4), b[None, None, :3, :3])),
    ("conv_transpose1d", lambda L, F_, a, b: F_.conv_transpose1d(a[None], b[None, :, :2])),
    ("softmax", lambda L, F_, a, b: F_.softmax(a, -1)),
    ("log_softmax", lambda L, F_, a, b: F_.log_softmax(a, -1)),
    ("layer_norm", lambda L, F_, a, b: F_.layer_norm(a, (4,), b[0], b[1])),
    ("group_norm", lambda L, F_, a, b: F_.group_norm(a[None], 2, b[0], b[1])),
    ("batch_norm", lambda L, F_, a, b: F_.batch_norm(a, None, None, b[0], b[1], True)),
    ("mse_loss", lambda L, F_, a, b: F_.mse_loss(a, b)),
    ("l1_loss", lambda L, F_, a, b: F_.l1_loss(a, b)),
    ("smooth_l1_loss", lambda L, F_, a, b: F_.smooth_l1_loss(a, b)),
    ("cross_entropy", lambda L, F_, a, b: F_.cross_entropy(a, L.tensor([0, 1, 2, 3]))),
    ("nll_loss", lambda L, F_, a, b: F_.nll_loss(a, L.tensor([0, 1, 2, 3]))),
    ("kl_div", lambda L, F_, a, b: F_.kl_div(a, b, reduction="batchmean")),
    ("binary_cross_entropy_with_logits",
     lambda L, F_, a, b: F_.binary_cross_entropy_with_logits(a, b * 0.5)),
    ("cosine_embedding_loss",
     lambda L, F_, a, b: F_.cosine_embedding_loss(a, b, L.tensor([1.0, -1.0, 1.0, 1.0]))),
    ("triplet_margin_loss", lambda L, F_, a, b: F_.triplet_margin_loss(a, b, a)),
    ("scaled_dot_product_attention",
     lambda L, F_, a, b: F_.scaled_dot_product_attention(a[None], b[None], b[None])),
    ("gelu", lambda L, F_, a, b: F_.gelu(a)), ("elu", lambda L, F_, a, b: F_.elu(a)),
    ("mish", lambda L, F_, a, b: F_.mish(a)), ("softplus", lambda L, F_, a, b: F_.softplus(a)),
    ("avg_pool3d", lambda L, F_, a, b: F_.avg_pool3d(a.reshape(1, 1, 2, 2, 4), 2)),
    ("normalize", lambda L, F_, a, b: F_.normalize(a)),
    ("embedding", lambda L, F_, a, b: F_.embedding(L.tensor([0, 2]), a)),
]


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("low", ["bfloat16", "float16"])
@pytest.mark.parametrize("name,call", FUNCTIONAL, ids=[c[0] for c in FUNCTIONAL])
def test_cpu_result_dtypes_match_pytorch(name, call, low):
    import torch.nn.functional as TF
    values = [np.random.default_rng(2).uniform(0.5, 1.5, (4, 4)) for _ in range(2)]
    for first, second in (("float32", "float32"), (low, low), (low, "float32")):
        got = []
        for L, F_ in ((ember, F), (torch, TF)):
            a, b = (L.tensor(v, dtype=getattr(L, d)) for v, d in zip(values, (first, second)))
            try:
                with L.autocast("cpu", dtype=getattr(L, low)):
                    got.append(str(call(L, F_, a, b).dtype).split(".")[-1])
            except RuntimeError:  # PyTorch refuses some mixes Ember promotes
                got.append("error")
        assert got[0] == got[1] or got[1] == "error", (first, second, got)


# ---- GradScaler with ember.optim ------------------------------------------------------
def _mlp(seed):
    ember.manual_seed(seed)
    return nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                         nn.Linear(32, 3))


def _data(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((64, 8))
    y = (x[:, 0] > 0).astype(np.int64) + (x[:, 1] > 0.5).astype(np.int64)
    return ember.tensor(x, dtype=f32), ember.tensor(y)


def test_unscale_clip_step_with_ember_optim():
    model = _mlp(0)
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    scaler = ember.amp.GradScaler("cpu", init_scale=2.0 ** 12)
    x, y = _data()
    with ember.autocast("cpu"):
        loss = F.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    total = nn.utils.clip_grad_norm_(model.parameters(), 0.01)
    assert 0.01 < float(total) < 100  # unscaled: the true norm, not 4096 times it
    after = ember.stack([p.grad.norm() for p in model.parameters()]).norm()
    assert float(after) <= 0.0101
    before = [p.detach().clone() for p in model.parameters()]
    scaler.step(opt)
    scaler.update()
    moved = ember.stack([(p.detach() - b).norm() for p, b in zip(model.parameters(), before)])
    assert abs(float(moved.norm()) - 0.1 * float(after)) < 1e-4


def test_a_small_mlp_trains_with_autocast_and_grad_scaler():
    model = _mlp(1)
    opt = ember.optim.Adam(model.parameters(), lr=1e-2)
    scaler = ember.amp.GradScaler("cpu")
    x, y = _data(1)
    losses = []
    for _ in range(30):
        opt.zero_grad()
        with ember.autocast("cpu"):
            out = model(x)
            loss = F.cross_entropy(out, y)
            assert out.dtype is bf16 and loss.dtype is f32
        scaler.scale(loss).backward()
        assert all(p.grad.dtype is f32 for p in model.parameters())
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
    assert scaler.get_scale() == 2.0 ** 16  # no overflow, and 30 < growth_interval
