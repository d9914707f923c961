"""The module table: each row builds the same layer in ember.nn and
torch.nn, copies ember's weights into torch's, and compares outputs and
gradients (input and parameters) in float64."""
import numpy as np
import pytest

import ember
import ember.nn

from conftest import copy_state, requires_torch, to_ember, to_torch, torch

pytestmark = [requires_torch, pytest.mark.torch]

F64 = "float64"


def R(*shape):
    return ("randn", shape)


def Ints(high, *shape):
    return ("randint", high, shape)


# (id, constructor taking the nn namespace, inputs)
MODULES = [
    ("Linear", lambda nn: nn.Linear(5, 3), [R(4, 5)]),
    ("Linear-3d-nobias", lambda nn: nn.Linear(5, 3, bias=False), [R(2, 4, 5)]),
    ("Linear-1d", lambda nn: nn.Linear(5, 2), [R(5)]),
    ("Bilinear", lambda nn: nn.Bilinear(3, 4, 2), [R(5, 3), R(5, 4)]),
    ("Identity", lambda nn: nn.Identity(), [R(3, 2)]),
    ("Flatten", lambda nn: nn.Flatten(), [R(2, 3, 4)]),
    ("Flatten-0", lambda nn: nn.Flatten(0, 1), [R(2, 3, 4)]),
    ("Unflatten", lambda nn: nn.Unflatten(1, (2, 3)), [R(4, 6)]),
    ("ReLU", lambda nn: nn.ReLU(), [R(3, 4)]),
    ("ReLU6", lambda nn: nn.ReLU6(), [("scaled", 5, (3, 4))]),
    ("LeakyReLU", lambda nn: nn.LeakyReLU(0.2), [R(3, 4)]),
    ("ELU", lambda nn: nn.ELU(0.7), [R(3, 4)]),
    ("CELU", lambda nn: nn.CELU(1.3), [R(3, 4)]),
    ("SELU", lambda nn: nn.SELU(), [R(3, 4)]),
    ("GELU", lambda nn: nn.GELU(), [R(3, 4)]),
    ("GELU-tanh", lambda nn: nn.GELU(approximate="tanh"), [R(3, 4)]),
    ("SiLU", lambda nn: nn.SiLU(), [R(3, 4)]),
    ("Softplus", lambda nn: nn.Softplus(), [R(3, 4)]),
    ("Softplus-beta", lambda nn: nn.Softplus(beta=2.0, threshold=3.0), [("scaled", 4, (3, 4))]),
    ("Hardtanh", lambda nn: nn.Hardtanh(-0.5, 0.8), [R(3, 4)]),
    ("Hardswish", lambda nn: nn.Hardswish(), [("scaled", 4, (3, 4))]),
    ("Hardsigmoid", lambda nn: nn.Hardsigmoid(), [("scaled", 4, (3, 4))]),
    ("Mish", lambda nn: nn.Mish(), [R(3, 4)]),
    ("Sigmoid", lambda nn: nn.Sigmoid(), [R(3, 4)]),
    ("Tanh", lambda nn: nn.Tanh(), [R(3, 4)]),
    ("LogSigmoid", lambda nn: nn.LogSigmoid(), [R(3, 4)]),
    ("Softsign", lambda nn: nn.Softsign(), [R(3, 4)]),
    ("Tanhshrink", lambda nn: nn.Tanhshrink(), [R(3, 4)]),
    ("Hardshrink", lambda nn: nn.Hardshrink(0.3), [R(3, 4)]),
    ("Softshrink", lambda nn: nn.Softshrink(), [R(3, 4)]),
    ("GLU", lambda nn: nn.GLU(), [R(3, 4)]),
    ("GLU-dim1", lambda nn: nn.GLU(1), [R(2, 6, 3)]),
    ("PReLU", lambda nn: nn.PReLU(), [R(3, 4)]),
    ("PReLU-channels", lambda nn: nn.PReLU(3, init=0.1), [R(2, 3, 4, 5)]),
    ("Softmax2d", lambda nn: nn.Softmax2d(), [R(2, 3, 4, 5)]),
    ("CosineSimilarity", lambda nn: nn.CosineSimilarity(), [R(3, 4), R(3, 4)]),
    ("PairwiseDistance", lambda nn: nn.PairwiseDistance(p=1.5, keepdim=True), [R(3, 4), R(3, 4)]),
    ("Threshold", lambda nn: nn.Threshold(0.1, 20.0), [R(3, 4)]),
    ("Softmax", lambda nn: nn.Softmax(dim=1), [R(3, 4)]),
    ("Softmax-0", lambda nn: nn.Softmax(dim=0), [R(3, 4, 2)]),
    ("LogSoftmax", lambda nn: nn.LogSoftmax(dim=-1), [R(3, 4)]),
    ("Softmin", lambda nn: nn.Softmin(dim=1), [R(3, 4)]),
    ("Dropout-eval", lambda nn: nn.Dropout(0.5).eval(), [R(3, 4)]),
    ("Embedding", lambda nn: nn.Embedding(10, 3), [Ints(10, 2, 5)]),
    ("Embedding-pad", lambda nn: nn.Embedding(10, 3, padding_idx=2),
     [("const", [[2, 1, 2, 9], [0, 2, 3, 3]])]),
    ("LayerNorm", lambda nn: nn.LayerNorm(4), [R(3, 4)]),
    ("RMSNorm", lambda nn: nn.RMSNorm(4), [R(3, 4)]),
    ("RMSNorm-2d-eps", lambda nn: nn.RMSNorm((3, 4), eps=1e-3), [R(2, 3, 4)]),
    ("RMSNorm-noaffine", lambda nn: nn.RMSNorm(4, elementwise_affine=False), [R(2, 4)]),
    ("LayerNorm-2d", lambda nn: nn.LayerNorm((3, 4), eps=1e-3), [R(2, 3, 4)]),
    ("LayerNorm-noaffine", lambda nn: nn.LayerNorm(4, elementwise_affine=False), [R(2, 4)]),
    ("BatchNorm1d", lambda nn: nn.BatchNorm1d(3), [R(5, 3)]),
    ("BatchNorm1d-3d", lambda nn: nn.BatchNorm1d(3, momentum=0.3), [R(4, 3, 2)]),
    ("BatchNorm1d-eval", lambda nn: nn.BatchNorm1d(3).eval(), [R(4, 3)]),
    ("BatchNorm2d", lambda nn: nn.BatchNorm2d(2), [R(3, 2, 4, 4)]),
    ("BatchNorm2d-noaffine", lambda nn: nn.BatchNorm2d(2, affine=False), [R(3, 2, 3, 3)]),
    ("BatchNorm2d-nostats", lambda nn: nn.BatchNorm2d(2, track_running_stats=False),
     [R(3, 2, 3, 3)]),
    ("BatchNorm2d-cma", lambda nn: nn.BatchNorm2d(2, momentum=None), [R(3, 2, 3, 3)]),
    ("Conv2d", lambda nn: nn.Conv2d(2, 3, 3), [R(2, 2, 6, 5)]),
    ("Conv2d-stride-pad", lambda nn: nn.Conv2d(2, 4, (3, 2), stride=(2, 1), padding=(1, 2)),
     [R(2, 2, 7, 6)]),
    ("Conv2d-dilation", lambda nn: nn.Conv2d(1, 2, 3, dilation=2, bias=False),
     [R(2, 1, 8, 7)]),
    ("Conv2d-groups", lambda nn: nn.Conv2d(4, 6, 3, groups=2, padding=1), [R(2, 4, 5, 5)]),
    ("Conv2d-same", lambda nn: nn.Conv2d(2, 2, 4, padding="same"), [R(1, 2, 5, 6)]),
    ("Conv2d-valid", lambda nn: nn.Conv2d(2, 2, 3, padding="valid"), [R(1, 2, 5, 6)]),
    ("Conv2d-unbatched", lambda nn: nn.Conv2d(2, 3, 2), [R(2, 4, 4)]),
    ("MaxPool2d", lambda nn: nn.MaxPool2d(2), [R(2, 3, 6, 6)]),
    ("MaxPool2d-stride-pad", lambda nn: nn.MaxPool2d(3, stride=2, padding=1), [R(2, 2, 7, 6)]),
    ("MaxPool2d-ceil", lambda nn: nn.MaxPool2d(2, ceil_mode=True), [R(1, 2, 5, 7)]),
    ("MaxPool2d-dilation", lambda nn: nn.MaxPool2d(2, stride=1, dilation=2), [R(1, 2, 6, 6)]),
    ("MaxPool2d-unbatched", lambda nn: nn.MaxPool2d(2), [R(2, 4, 4)]),
    ("AvgPool2d", lambda nn: nn.AvgPool2d(2), [R(2, 3, 6, 6)]),
    ("AvgPool2d-pad", lambda nn: nn.AvgPool2d(3, stride=2, padding=1), [R(2, 2, 7, 6)]),
    ("AvgPool2d-pad-exclude", lambda nn: nn.AvgPool2d(3, 2, 1, count_include_pad=False),
     [R(2, 2, 7, 6)]),
    ("AvgPool2d-ceil", lambda nn: nn.AvgPool2d(2, ceil_mode=True), [R(1, 2, 5, 7)]),
    ("AvgPool2d-ceil-pad", lambda nn: nn.AvgPool2d(3, 2, 1, ceil_mode=True), [R(1, 1, 6, 6)]),
    ("AvgPool2d-divisor", lambda nn: nn.AvgPool2d(2, divisor_override=3), [R(1, 2, 4, 4)]),
    ("BatchNorm3d", lambda nn: nn.BatchNorm3d(2), [R(2, 2, 3, 2, 2)]),
    ("GroupNorm", lambda nn: nn.GroupNorm(2, 4), [R(3, 4, 3, 2)]),
    ("GroupNorm-noaffine-3d", lambda nn: nn.GroupNorm(3, 6, affine=False), [R(2, 6, 5)]),
    ("InstanceNorm2d", lambda nn: nn.InstanceNorm2d(3), [R(2, 3, 4, 4)]),
    ("InstanceNorm2d-affine-stats", lambda nn: nn.InstanceNorm2d(3, affine=True,
                                                                 track_running_stats=True),
     [R(2, 3, 4, 5)]),
    ("InstanceNorm2d-eval", lambda nn: nn.InstanceNorm2d(3, track_running_stats=True).eval(),
     [R(2, 3, 4, 5)]),
    ("Dropout2d-eval", lambda nn: nn.Dropout2d().eval(), [R(2, 3, 4, 4)]),
    ("Conv1d", lambda nn: nn.Conv1d(3, 4, 3, stride=2, padding=1), [R(2, 3, 9)]),
    ("Conv1d-groups-dilation", lambda nn: nn.Conv1d(4, 2, 2, dilation=3, groups=2,
                                                    bias=False), [R(2, 4, 9)]),
    ("Conv1d-same-unbatched", lambda nn: nn.Conv1d(2, 2, 4, padding="same"), [R(2, 7)]),
    ("MaxPool1d", lambda nn: nn.MaxPool1d(3, 2, 1), [R(2, 3, 8)]),
    ("AvgPool1d", lambda nn: nn.AvgPool1d(3, 2, 1, count_include_pad=False), [R(2, 3, 8)]),
    ("AdaptiveAvgPool2d", lambda nn: nn.AdaptiveAvgPool2d((3, 2)), [R(2, 3, 7, 5)]),
    ("AdaptiveAvgPool2d-1", lambda nn: nn.AdaptiveAvgPool2d(1), [R(2, 3, 4, 4)]),
    ("AdaptiveAvgPool2d-None", lambda nn: nn.AdaptiveAvgPool2d((None, 3)), [R(3, 5, 7)]),
    ("AdaptiveMaxPool2d", lambda nn: nn.AdaptiveMaxPool2d((4, 3)), [R(2, 3, 9, 5)]),
    # 3-d and transposed convolution, padding modes
    ("Conv3d", lambda nn: nn.Conv3d(2, 3, (2, 3, 2), stride=(1, 2, 1), padding=(1, 0, 1)),
     [R(2, 2, 4, 5, 4)]),
    ("Conv3d-groups-dilation", lambda nn: nn.Conv3d(4, 2, 2, dilation=(2, 1, 1), groups=2),
     [R(1, 4, 5, 3, 3)]),
    ("Conv3d-same-unbatched", lambda nn: nn.Conv3d(1, 2, (3, 2, 1), padding="same"),
     [R(1, 3, 4, 2)]),
    ("Conv3d-replicate", lambda nn: nn.Conv3d(2, 2, 3, padding=1, padding_mode="replicate"),
     [R(1, 2, 3, 4, 3)]),
    ("Conv2d-reflect", lambda nn: nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode="reflect"),
     [R(2, 2, 5, 6)]),
    ("Conv2d-circular-same", lambda nn: nn.Conv2d(1, 2, (2, 3), padding="same",
                                                  padding_mode="circular"), [R(2, 1, 4, 5)]),
    ("Conv1d-reflect", lambda nn: nn.Conv1d(2, 2, 3, padding=2, padding_mode="reflect"),
     [R(2, 2, 6)]),
    ("ConvTranspose2d", lambda nn: nn.ConvTranspose2d(3, 2, 3), [R(2, 3, 4, 5)]),
    ("ConvTranspose2d-stride-pad", lambda nn: nn.ConvTranspose2d(
        2, 4, (3, 2), stride=(2, 3), padding=(1, 0), output_padding=(1, 2)), [R(2, 2, 4, 3)]),
    ("ConvTranspose2d-groups-dilation", lambda nn: nn.ConvTranspose2d(
        4, 6, 2, stride=2, groups=2, dilation=3, bias=False), [R(1, 4, 3, 3)]),
    ("ConvTranspose2d-unbatched", lambda nn: nn.ConvTranspose2d(2, 1, 2, stride=2),
     [R(2, 3, 3)]),
    ("ConvTranspose1d", lambda nn: nn.ConvTranspose1d(3, 2, 4, stride=3, padding=1,
                                                      output_padding=2), [R(2, 3, 5)]),
    ("ConvTranspose3d", lambda nn: nn.ConvTranspose3d(2, 2, 2, stride=(1, 2, 2)),
     [R(1, 2, 2, 3, 2)]),
    # 3-d, adaptive pooling
    ("MaxPool3d", lambda nn: nn.MaxPool3d(2), [R(2, 2, 4, 4, 4)]),
    ("MaxPool3d-stride-pad-dil", lambda nn: nn.MaxPool3d((3, 2, 2), stride=(2, 1, 2),
                                                         padding=(1, 0, 1), dilation=(1, 2, 1)),
     [R(1, 2, 5, 5, 6)]),
    ("MaxPool3d-ceil-unbatched", lambda nn: nn.MaxPool3d(2, ceil_mode=True), [R(2, 3, 5, 5)]),
    ("AvgPool3d", lambda nn: nn.AvgPool3d(2), [R(2, 2, 4, 4, 4)]),
    ("AvgPool3d-pad-exclude", lambda nn: nn.AvgPool3d(3, 2, 1, count_include_pad=False),
     [R(1, 2, 5, 4, 5)]),
    ("AvgPool3d-ceil-divisor", lambda nn: nn.AvgPool3d((2, 3, 2), ceil_mode=True,
                                                       divisor_override=5), [R(1, 2, 5, 5, 3)]),
    ("AdaptiveAvgPool1d", lambda nn: nn.AdaptiveAvgPool1d(3), [R(2, 3, 7)]),
    ("AdaptiveAvgPool3d", lambda nn: nn.AdaptiveAvgPool3d((2, None, 3)), [R(2, 2, 5, 3, 7)]),
    ("AdaptiveMaxPool1d", lambda nn: nn.AdaptiveMaxPool1d(4), [R(2, 3, 9)]),
    ("AdaptiveMaxPool2d-even", lambda nn: nn.AdaptiveMaxPool2d(2), [R(2, 3, 6, 4)]),
    ("AdaptiveMaxPool3d", lambda nn: nn.AdaptiveMaxPool3d((2, 3, None)), [R(2, 2, 5, 4, 3)]),
    # resampling
    ("Upsample-nearest", lambda nn: nn.Upsample(scale_factor=2), [R(2, 2, 3, 4)]),
    ("Upsample-nearest-size-1d", lambda nn: nn.Upsample(size=7), [R(2, 2, 3)]),
    ("Upsample-nearest-3d", lambda nn: nn.Upsample(scale_factor=(1.5, 2, 0.7)),
     [R(1, 2, 3, 2, 5)]),
    ("Upsample-linear", lambda nn: nn.Upsample(scale_factor=2.5, mode="linear"), [R(2, 2, 4)]),
    ("Upsample-bilinear", lambda nn: nn.Upsample(size=(5, 7), mode="bilinear"),
     [R(2, 2, 3, 4)]),
    ("Upsample-bilinear-ac", lambda nn: nn.Upsample(scale_factor=1.7, mode="bilinear",
                                                    align_corners=True), [R(1, 2, 4, 3)]),
    ("Upsample-bilinear-recompute", lambda nn: nn.Upsample(
        scale_factor=1.3, mode="bilinear", recompute_scale_factor=True), [R(1, 2, 4, 5)]),
    ("Upsample-bicubic", lambda nn: nn.Upsample(scale_factor=(1.5, 2), mode="bicubic"),
     [R(1, 2, 3, 4)]),
    ("Upsample-bicubic-ac", lambda nn: nn.Upsample(size=(4, 7), mode="bicubic",
                                                   align_corners=True), [R(2, 1, 3, 3)]),
    ("Upsample-trilinear", lambda nn: nn.Upsample(scale_factor=(2, 1.5, 0.5),
                                                  mode="trilinear"), [R(1, 2, 2, 3, 4)]),
    ("UpsamplingNearest2d", lambda nn: nn.UpsamplingNearest2d(size=(5, 3)), [R(2, 2, 3, 2)]),
    ("UpsamplingBilinear2d", lambda nn: nn.UpsamplingBilinear2d(scale_factor=2),
     [R(2, 2, 3, 2)]),
    # padding layers
    ("ZeroPad1d", lambda nn: nn.ZeroPad1d((1, 2)), [R(2, 3, 4)]),
    ("ZeroPad2d", lambda nn: nn.ZeroPad2d((1, 2, 0, 3)), [R(2, 3, 4, 2)]),
    ("ZeroPad3d", lambda nn: nn.ZeroPad3d(1), [R(1, 2, 2, 3, 2)]),
    ("ConstantPad1d", lambda nn: nn.ConstantPad1d(2, 3.5), [R(2, 4)]),
    ("ConstantPad2d", lambda nn: nn.ConstantPad2d((1, -1, 2, 0), -1.5), [R(2, 2, 3, 4)]),
    ("ConstantPad3d", lambda nn: nn.ConstantPad3d((1, 0, 0, 2, 1, 1), 0.5), [R(2, 2, 2, 2)]),
    ("ReflectionPad1d", lambda nn: nn.ReflectionPad1d((3, 1)), [R(2, 3, 5)]),
    ("ReflectionPad2d", lambda nn: nn.ReflectionPad2d((1, 2, 3, 0)), [R(2, 2, 4, 3)]),
    ("ReflectionPad2d-unbatched", lambda nn: nn.ReflectionPad2d(1), [R(3, 3, 3)]),
    ("ReflectionPad3d", lambda nn: nn.ReflectionPad3d((1, 0, 2, 1, 1, 1)), [R(1, 2, 3, 3, 2)]),
    ("ReplicationPad1d", lambda nn: nn.ReplicationPad1d((4, 1)), [R(2, 3, 2)]),
    ("ReplicationPad2d", lambda nn: nn.ReplicationPad2d((1, 3, 2, 0)), [R(2, 2, 3, 3)]),
    ("ReplicationPad3d", lambda nn: nn.ReplicationPad3d(2), [R(1, 2, 2, 2, 3)]),
    ("CircularPad1d", lambda nn: nn.CircularPad1d((2, 3)), [R(2, 3, 4)]),
    ("CircularPad2d", lambda nn: nn.CircularPad2d((1, 0, 2, 2)), [R(2, 2, 3, 3)]),
    ("CircularPad3d", lambda nn: nn.CircularPad3d((1, 1, 0, 2, 1, 0)), [R(1, 2, 2, 3, 3)]),
    # embedding bags, instance norms, channel dropout
    ("EmbeddingBag-mean-2d", lambda nn: nn.EmbeddingBag(10, 3), [Ints(10, 4, 3)]),
    ("EmbeddingBag-sum-offsets", lambda nn: nn.EmbeddingBag(10, 3, mode="sum"),
     [("const", [1, 4, 4, 9, 0, 2, 7]), ("const", [0, 2, 2, 5])]),
    ("EmbeddingBag-max-pad", lambda nn: nn.EmbeddingBag(8, 2, mode="max", padding_idx=3),
     [("const", [1, 3, 5, 3, 3, 7, 0]), ("const", [0, 3, 5])]),
    ("EmbeddingBag-mean-last-pad", lambda nn: nn.EmbeddingBag(
        8, 4, include_last_offset=True, padding_idx=0), [("const", [1, 0, 5, 6, 0, 7]),
                                                         ("const", [0, 2, 2, 6])]),
    ("InstanceNorm1d", lambda nn: nn.InstanceNorm1d(3), [R(2, 3, 6)]),
    ("InstanceNorm1d-affine-unbatched", lambda nn: nn.InstanceNorm1d(3, affine=True),
     [R(3, 5)]),
    ("InstanceNorm3d-stats", lambda nn: nn.InstanceNorm3d(2, affine=True,
                                                          track_running_stats=True),
     [R(2, 2, 3, 2, 3)]),
    ("Dropout1d-eval", lambda nn: nn.Dropout1d(0.3).eval(), [R(2, 3, 4)]),
    ("Dropout3d-eval", lambda nn: nn.Dropout3d().eval(), [R(2, 3, 2, 2, 2)]),
    ("Sequential", lambda nn: nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 2)),
     [R(3, 4)]),
    ("LeNet", lambda nn: nn.Sequential(
        nn.Conv2d(1, 4, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(4, 6, 5),
        nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(6 * 5 * 5, 10)),
     [R(2, 1, 28, 28)]),
]


def make_inputs(specs, rng):
    arrays = []
    for spec in specs:
        if spec[0] == "randn":
            arrays.append(rng.standard_normal(spec[1]))
        elif spec[0] == "scaled":
            arrays.append(spec[1] * rng.standard_normal(spec[2]))
        elif spec[0] == "randint":
            arrays.append(rng.integers(0, spec[1], spec[2]))
        else:
            arrays.append(np.array(spec[1]))
    return arrays


TOL = {"float64": dict(rtol=1e-7, atol=1e-9), "float32": dict(rtol=2e-4, atol=2e-5)}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name,build,specs", MODULES, ids=[m[0] for m in MODULES])
def test_module_matches_torch(name, build, specs, dtype, rng):
    ember.manual_seed(0)
    tol = TOL[dtype]
    m = build(ember.nn).to(getattr(ember, dtype))
    t = build(torch.nn).to(getattr(torch, dtype))
    t.train(m.training)
    for tm, em in zip(t.modules(), m.modules()):
        tm.train(em.training)
    copy_state(m, t)
    arrays = [a.astype(dtype) if a.dtype.kind == "f" else a for a in make_inputs(specs, rng)]
    ex = [to_ember(a, requires_grad=True) for a in arrays]
    tx = [to_torch(a, requires_grad=True) for a in arrays]
    ey, ty = m(*ex), t(*tx)
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), **tol)
    gout = rng.standard_normal(tuple(ty.shape)).astype(dtype)
    ey.backward(to_ember(gout))
    ty.backward(torch.from_numpy(gout))
    for e, tt in zip(ex, tx):
        if tt.is_floating_point():
            np.testing.assert_allclose(e.grad.numpy(), tt.grad.numpy(), **tol)
    tparams = dict(t.named_parameters())
    for key, p in m.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), tparams[key].grad.numpy(), **tol,
                                   err_msg=key)
    # buffers (running statistics) evolve the same way
    tbuf = dict(t.named_buffers())
    for key, b in m.named_buffers():
        np.testing.assert_allclose(b.numpy(), tbuf[key].numpy(), **tol, err_msg=key)
    # the same state_dict keys, and a round trip through a fresh module
    assert list(m.state_dict()) == list(t.state_dict())
    fresh = build(ember.nn).to(getattr(ember, dtype))
    fresh.load_state_dict(m.state_dict())
    fresh.train(m.training)
    for fm, em in zip(fresh.modules(), m.modules()):
        fm.train(em.training)
    for key, v in fresh.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), m.state_dict()[key].numpy())
    if not any(isinstance(x, (ember.nn.BatchNorm1d, ember.nn.BatchNorm2d))
               for x in m.modules()):
        fy = fresh(*[to_ember(a) for a in arrays])
        np.testing.assert_allclose(fy.detach().numpy(), ey.detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("name,build,specs", MODULES, ids=[m[0] for m in MODULES])
def test_repr_matches_torch(name, build, specs):
    assert repr(build(ember.nn)) == repr(build(torch.nn))


def test_max_pool_indices_match_torch(rng):
    a = rng.standard_normal((2, 3, 7, 6))
    ey, ei = ember.nn.functional.max_pool2d(to_ember(a), 3, 2, 1, return_indices=True)
    ty, ti = torch.nn.functional.max_pool2d(to_torch(a), 3, 2, 1, return_indices=True)
    np.testing.assert_array_equal(ei.numpy(), ti.numpy())
    np.testing.assert_allclose(ey.numpy(), ty.numpy())


INIT_STATS = [  # (constructor, parameter, expected bound or std of its distribution)
    ("Linear", lambda nn: nn.Linear(64, 32), "weight", ("uniform", 1 / 8)),
    ("Linear-bias", lambda nn: nn.Linear(64, 32), "bias", ("uniform", 1 / 8)),
    ("Conv2d", lambda nn: nn.Conv2d(4, 16, 3), "weight", ("uniform", 1 / 6)),
    ("Bilinear", lambda nn: nn.Bilinear(16, 5, 8), "weight", ("uniform", 1 / 4)),
    ("Embedding", lambda nn: nn.Embedding(100, 20), "weight", ("normal", 1.0)),
]


@pytest.mark.parametrize("name,build,pname,dist", INIT_STATS, ids=[r[0] for r in INIT_STATS])
def test_default_initialisation(name, build, pname, dist):
    ember.manual_seed(1)
    p = getattr(build(ember.nn), pname).detach().numpy()
    kind, scale = dist
    if kind == "uniform":
        assert np.abs(p).max() <= scale
        assert np.abs(p).max() > 0.8 * scale
        assert abs(p.std() - scale / np.sqrt(3)) < 0.2 * scale
    else:
        assert abs(p.std() - scale) < 0.1 * scale


def test_norm_layer_defaults():
    bn = ember.nn.BatchNorm2d(3)
    assert bn.weight.tolist() == [1, 1, 1] and bn.bias.tolist() == [0, 0, 0]
    assert bn.running_var.tolist() == [1, 1, 1] and int(bn.num_batches_tracked) == 0
    ln = ember.nn.LayerNorm(2)
    assert ln.weight.tolist() == [1, 1] and ln.bias.tolist() == [0, 0]
    e = ember.nn.Embedding(5, 3, padding_idx=1)
    assert e.weight[1].tolist() == [0, 0, 0]


def test_parameter_container_repr_matches_torch():
    for n in (1, 2):
        shapes = [(2, 3), (4,)][:n]
        e = ember.nn.ParameterList([ember.nn.Parameter(ember.zeros(*s)) for s in shapes])
        t = torch.nn.ParameterList([torch.nn.Parameter(torch.zeros(*s)) for s in shapes])
        assert repr(e).replace("ember.", "torch.") == repr(t)
        e = ember.nn.ParameterDict({f"p{i}": ember.zeros(*s) for i, s in enumerate(shapes)})
        t = torch.nn.ParameterDict({f"p{i}": torch.zeros(*s) for i, s in enumerate(shapes)})
        assert repr(e).replace("ember.", "torch.") == repr(t)
