"""load_lua maps Lua Torch nn objects to ember.legacy.nn: a network written
in Lua Torch's field layout (by the tests' byte-level writer) loads as
ember.legacy.nn modules computing what the original computes."""
import sys
from pathlib import Path

import numpy as np
import pytest

import ember
from ember.legacy import nn
from ember.utils.serialization import LuaObject, load_lua

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "autograd" / "tests"))
from t7writer import Object, Storage, Tensor, dumps  # noqa: E402


def lt(t, shape=None):
    a = t.numpy() if isinstance(t, ember.Tensor) else np.asarray(t)
    return Tensor.contiguous("Double", a if shape is None else a.reshape(shape))


def common(**fields):
    empty = lt(np.zeros(0))
    return dict(train=False, output=empty, gradInput=empty, _type="torch.DoubleTensor", **fields)


def lua_network(conv, bn, lin, eps):
    return Object("nn.Sequential", common(modules=[
        Object("nn.SpatialConvolution", common(
            nInputPlane=1, nOutputPlane=3, kW=3, kH=3, dW=1, dH=1, padW=1, padH=1,
            weight=lt(conv.weight, (3, 9)), bias=lt(conv.bias), gradWeight=lt(conv.weight),
            gradBias=lt(conv.bias))),
        Object("nn.SpatialBatchNormalization", common(
            eps=eps, momentum=0.1, affine=True, weight=lt(bn.weight), bias=lt(bn.bias),
            running_mean=lt(bn.running_mean),
            running_std=lt(1 / (bn.running_var + eps).sqrt()))),
        Object("nn.ReLU", common(threshold=0, val=0, inplace=False)),
        Object("nn.SpatialMaxPooling", common(kW=2, kH=2, dW=2, dH=2, padW=0, padH=0,
                                              ceil_mode=False, indices=lt(np.zeros(3))),
               versioned=False),
        Object("nn.View", common(size=Storage("Long", np.array([48])), numElements=48)),
        Object("nn.Dropout", common(p=0.3, v2=True, noise=lt(np.zeros(2)))),
        Object("nn.Linear", common(weight=lt(lin.weight), bias=lt(lin.bias))),
        Object("nn.LogSoftMax", common()),
    ]))


def test_network_loads_as_legacy_modules(tmp_path):
    ember.manual_seed(0)
    eps = 1e-5
    ref = nn.Sequential(nn.SpatialConvolution(1, 3, 3, 3, 1, 1, 1, 1),
                        nn.SpatialBatchNormalization(3, eps), nn.ReLU(),
                        nn.SpatialMaxPooling(2, 2), nn.View(48), nn.Dropout(0.3),
                        nn.Linear(48, 10), nn.LogSoftMax()).double()
    bn = ref.get(2)
    bn.running_mean = ember.randn(3, dtype=ember.float64)
    bn.running_var = ember.rand(3, dtype=ember.float64) + 0.5
    ref.evaluate()
    path = tmp_path / "net.t7"
    path.write_bytes(dumps({"model": lua_network(ref.get(1), bn, ref.get(7), eps),
                            "criterion": Object("nn.ClassNLLCriterion",
                                                {"sizeAverage": False}),
                            "extra": Object("nn.SomethingElse", {"k": 2})}))
    got = load_lua(path)
    model = got["model"]
    assert [type(m).__name__ for m in model.modules] == [type(m).__name__ for m in ref.modules]
    assert model.get(1).weight.shape == (3, 1, 3, 3) and not model.train
    x = ember.randn(4, 1, 8, 8, dtype=ember.float64)
    out = model.forward(x)
    np.testing.assert_allclose(out.numpy(), ref.forward(x).numpy(), rtol=1e-12, atol=1e-12)
    crit = got["criterion"]
    assert isinstance(crit, nn.ClassNLLCriterion) and crit.sizeAverage is False
    t = ember.tensor([1, 2, 10, 3])
    expected = -sum(float(out[i, int(c) - 1]) for i, c in enumerate(t))
    assert crit.forward(out, t) == pytest.approx(expected)
    # the loaded model trains: backward and updateParameters work on its fields
    model.training()
    model.zeroGradParameters()
    out = model.forward(x)
    model.backward(x, crit.backward(out, t))
    before = model.get(7).weight.clone()
    model.updateParameters(0.1)
    assert float((model.get(7).weight - before).abs().sum()) > 0
    assert isinstance(got["extra"], LuaObject) and got["extra"].k == 2


def test_unusable_module_is_refused_with_offset(tmp_path):
    path = tmp_path / "bad.t7"
    path.write_bytes(dumps(Object("nn.Sequential", {"modules": [Object("nn.Mystery", {})]})))
    with pytest.raises(ValueError, match=r"nn.Sequential holds modules Ember cannot use.*"
                                         r"at offset 0"):
        load_lua(path)
    path.write_bytes(dumps(Object("nn.SpatialConvolution", {"nInputPlane": 2})))
    with pytest.raises(ValueError, match=r"nn.SpatialConvolution with fields .* cannot be used"):
        load_lua(path)
