"""ember.legacy.nn: each layer's output, gradInput and parameter gradients
against ember.autograd on random float64 data, and a whole CNN against the
ember.nn network with the same weights."""
import numpy as np
import pytest

import ember
import ember.nn as enn
import ember.nn.functional as F
from ember.legacy import nn

TOL = dict(rtol=1e-10, atol=1e-12)


def arr(a):
    return np.asarray(a.detach().numpy() if isinstance(a, ember.Tensor) else a)


def close(a, b, **kw):
    np.testing.assert_allclose(arr(a), arr(b), **(kw or TOL))


@pytest.fixture(autouse=True)
def seeded():
    ember.manual_seed(0)


def leaf(t):
    return t.detach().clone().requires_grad_(True)


def reference(layer, x, g, fn):
    """Output, gradInput and parameter gradients of fn(x, *params) by autograd."""
    params, _ = layer.parameters()
    xs = leaf(x)
    ps = [leaf(p) for p in params]
    out = fn(xs, *ps)
    (out * g).sum().backward()
    return out, xs.grad, [p.grad for p in ps]


def rnd(*shape):
    return ember.randn(*shape, dtype=ember.float64)


LAYERS = [
    ("linear", lambda: nn.Linear(5, 3), (4, 5), lambda x, w, b: F.linear(x, w, b)),
    ("linear_vec", lambda: nn.Linear(5, 3), (5,), lambda x, w, b: F.linear(x, w, b)),
    ("linear_nobias", lambda: nn.Linear(5, 3, bias=False), (4, 5), lambda x, w: F.linear(x, w)),
    ("conv", lambda: nn.SpatialConvolution(2, 3, 3, 2, 2, 1, 1, 0), (2, 2, 7, 6),
     lambda x, w, b: F.conv2d(x, w, b, stride=(1, 2), padding=(0, 1))),
    ("conv_3d_input", lambda: nn.SpatialConvolution(2, 3, 3, 3, 1, 1, 1), (2, 5, 5),
     lambda x, w, b: F.conv2d(x.unsqueeze(0), w, b, padding=1).squeeze(0)),
    ("maxpool", lambda: nn.SpatialMaxPooling(3, 2, 2, 1), (2, 3, 6, 7),
     lambda x: F.max_pool2d(x, (2, 3), (1, 2))),
    ("maxpool_ceil", lambda: nn.SpatialMaxPooling(2, 2).ceil(), (2, 3, 5, 5),
     lambda x: F.max_pool2d(x, 2, 2, ceil_mode=True)),
    ("avgpool", lambda: nn.SpatialAveragePooling(2, 3, 1, 2, 1, 1), (2, 3, 6, 7),
     lambda x: F.avg_pool2d(x, (3, 2), (2, 1), (1, 1))),
    ("avgpool_exclude", lambda: nn.SpatialAveragePooling(2, 2, 2, 2, 1, 1).setCountExcludePad(),
     (2, 3, 5, 5), lambda x: F.avg_pool2d(x, 2, 2, 1, count_include_pad=False)),
    ("relu", nn.ReLU, (3, 4), F.relu),
    ("tanh", nn.Tanh, (3, 4), ember.tanh),
    ("sigmoid", nn.Sigmoid, (3, 4), ember.sigmoid),
    ("softmax_vec", nn.SoftMax, (5,), lambda x: F.softmax(x, 0)),
    ("softmax_batch", nn.SoftMax, (3, 5), lambda x: F.softmax(x, 1)),
    ("softmax_spatial", nn.SoftMax, (2, 3, 4, 4), lambda x: F.softmax(x, 1)),
    ("logsoftmax", nn.LogSoftMax, (3, 5), lambda x: F.log_softmax(x, 1)),
    ("logsoftmax_image", nn.LogSoftMax, (3, 4, 4), lambda x: F.log_softmax(x, 0)),
    ("view", lambda: nn.View(-1), (3, 2, 2), lambda x: x.reshape(-1)),
    ("view_batch", lambda: nn.View(8), (3, 2, 4), lambda x: x.reshape(3, 8)),
    ("view_numinputdims", lambda: nn.View(2, 4).setNumInputDims(2), (3, 4, 2),
     lambda x: x.reshape(3, 2, 4)),
    ("reshape", lambda: nn.Reshape(4, 2), (3, 2, 4), lambda x: x.reshape(3, 4, 2)),
    ("identity", nn.Identity, (3, 4), lambda x: x * 1),
    ("dropout_eval", lambda: nn.Dropout(0.3).evaluate(), (3, 4), lambda x: x * 1),
]


@pytest.mark.parametrize("name,make,shape,fn", LAYERS, ids=[row[0] for row in LAYERS])
def test_layer_against_autograd(name, make, shape, fn):
    layer = make().double()
    x = rnd(*shape)
    out = layer.forward(x)
    g = rnd(*out.shape)
    gi = layer.backward(x, g)
    ref_out, ref_gi, ref_gp = reference(layer, x, g, fn)
    close(out, ref_out)
    close(gi, ref_gi)
    for got, want in zip(layer.parameters()[1], ref_gp):
        close(got, want)
    assert not out.requires_grad and not gi.requires_grad


def test_batchnorm_train_and_eval():
    bn = nn.SpatialBatchNormalization(3, eps=1e-4, momentum=0.2).double()
    x, g = rnd(4, 3, 5, 5), rnd(4, 3, 5, 5)
    rm, rv = ember.zeros(3, dtype=ember.float64), ember.ones(3, dtype=ember.float64)
    out = bn.forward(x)
    gi = bn.backward(x, g)
    _, ref_gi, (gw, gb) = reference(
        bn, x, g, lambda x, w, b: F.batch_norm(x, rm, rv, w, b, True, 0.2, 1e-4))
    ref_out = F.batch_norm(x, ember.zeros(3, dtype=ember.float64),
                           ember.ones(3, dtype=ember.float64), bn.weight, bn.bias, True, 0.2, 1e-4)
    close(out, ref_out)
    close(gi, ref_gi)
    close(bn.gradWeight, gw)
    close(bn.gradBias, gb)
    close(bn.running_mean, rm)
    close(bn.running_var, rv)
    bn.evaluate()
    bn.zeroGradParameters()
    out = bn.forward(x)
    gi = bn.backward(x, g)
    _, ref_gi, (gw, gb) = reference(
        bn, x, g, lambda x, w, b: F.batch_norm(x, rm, rv, w, b, False, 0.2, 1e-4))
    close(out, F.batch_norm(x, rm, rv, bn.weight, bn.bias, False, 0.2, 1e-4))
    close(gi, ref_gi)
    close(bn.gradWeight, gw)


def test_accumulation_scale_and_zero():
    lin = nn.Linear(4, 2).double()
    x, g = rnd(3, 4), rnd(3, 2)
    lin.backward(x, g)
    once = lin.gradWeight.clone()
    lin.backward(x, g, 0.5)
    close(lin.gradWeight, once * 1.5)
    lin.zeroGradParameters()
    assert float(lin.gradWeight.abs().sum()) == 0 and float(lin.gradBias.abs().sum()) == 0
    w = lin.weight.clone()
    lin.backward(x, g)
    lin.updateParameters(0.1)
    close(lin.weight, w - 0.1 * lin.gradWeight)


def test_dropout_training_mask():
    d = nn.Dropout(0.4).double()
    x = rnd(50, 40)
    out = d.forward(x)
    kept = out.numpy() != 0
    assert 0.5 < kept.mean() < 0.7
    close(out.numpy()[kept], x.numpy()[kept] / 0.6)
    g = rnd(50, 40)
    gi = d.backward(x, g)
    close(gi.numpy(), np.where(kept, g.numpy() / 0.6, 0))
    with pytest.raises(ValueError, match="p must be in"):
        nn.Dropout(1.0)


def test_tables_against_autograd():
    a, b = rnd(3, 4), rnd(3, 2)
    join = nn.JoinTable(2)
    out = join.forward([a, b])
    g = rnd(3, 6)
    ga, gb = join.backward([a, b], g)
    close(out, ember.cat([a, b], 1))
    close(ga, g[:, :4])
    close(gb, g[:, 4:])
    assert nn.JoinTable(1, 1).forward([rnd(3, 2), rnd(3, 5)]).shape == (3, 7)
    add = nn.CAddTable()
    c = rnd(3, 4)
    close(add.forward([a, c]), a + c)
    g = rnd(3, 4)
    for gi in add.backward([a, c], g):
        close(gi, g)


def _param_grads(module, x, g, fn):
    out, gi, gps = reference(module, x, g, fn)
    return out, gi, gps


def test_containers_against_autograd():
    ember.manual_seed(1)
    l1, l2 = nn.Linear(4, 3).double(), nn.Linear(4, 2).double()
    concat = nn.Concat(2, l1, l2)
    x, g = rnd(5, 4), rnd(5, 5)
    out = concat.forward(x)
    gi = concat.backward(x, g)
    ref = _param_grads(concat, x, g, lambda x, w1, b1, w2, b2:
                       ember.cat([F.linear(x, w1, b1), F.linear(x, w2, b2)], 1))
    close(out, ref[0])
    close(gi, ref[1])
    for got, want in zip(concat.parameters()[1], ref[2]):
        close(got, want)
    # ConcatTable -> ParallelTable -> CAddTable: a residual block
    concat.zeroGradParameters()
    l3, l4 = nn.Linear(4, 3).double(), nn.Linear(4, 3).double()
    block = nn.Sequential(nn.ConcatTable(l3, l4),
                          nn.ParallelTable(nn.Tanh(), nn.Identity()), nn.CAddTable())
    g = rnd(5, 3)
    out = block.forward(x)
    gi = block.backward(x, g)
    ref = _param_grads(block, x, g, lambda x, w3, b3, w4, b4:
                       ember.tanh(F.linear(x, w3, b3)) + F.linear(x, w4, b4))
    close(out, ref[0])
    close(gi, ref[1])
    for got, want in zip(block.parameters()[1], ref[2]):
        close(got, want)
    assert block.get(1) is block.modules[0] and block.size() == 3
    with pytest.raises(IndexError, match="out of range"):
        block.get(0)


@pytest.mark.parametrize("sizeAverage", [True, False])
def test_criterions_against_functional(sizeAverage):
    red = "mean" if sizeAverage else "sum"
    x = rnd(6, 4)
    t = ember.tensor([1, 4, 2, 2, 3, 4])          # 1-based classes
    w = ember.rand(4, dtype=ember.float64)
    cases = [
        (nn.ClassNLLCriterion(w, sizeAverage), lambda x: F.nll_loss(x, t - 1, w, reduction=red)),
        (nn.CrossEntropyCriterion(None, sizeAverage),
         lambda x: F.cross_entropy(x, t - 1, reduction=red)),
    ]
    y = ember.rand(6, 4, dtype=ember.float64)
    p = ember.rand(6, 4, dtype=ember.float64) * 0.9 + 0.05
    bw = ember.rand(4, dtype=ember.float64)
    for crit, fn in cases:
        xs = leaf(x)
        ref = fn(xs)
        ref.backward()
        close(crit.forward(x, t), ref)
        close(crit.backward(x, t), xs.grad)
    mse = nn.MSECriterion(sizeAverage)
    xs = leaf(x)
    ref = F.mse_loss(xs, y, reduction=red)
    ref.backward()
    close(mse.forward(x, y), ref)
    close(mse.backward(x, y), xs.grad)
    bce = nn.BCECriterion(bw, sizeAverage)
    ps = leaf(p)
    ref = F.binary_cross_entropy(ps, y, bw.expand(6, 4), reduction=red)
    ref.backward()
    close(bce.forward(p, y), ref)
    close(bce.backward(p, y), ps.grad)


def test_class_targets_are_one_based():
    crit = nn.ClassNLLCriterion()
    x = F.log_softmax(rnd(2, 3), 1)
    with pytest.raises(IndexError, match="target 0 is out of bounds.*1 to 3"):
        crit.forward(x, ember.tensor([0, 1]))
    with pytest.raises(IndexError, match="target 4 is out of bounds"):
        crit.forward(x, ember.tensor([4, 1]))
    # Lua scripts often hold targets in DoubleTensors
    assert crit.forward(x, ember.tensor([3.0, 1.0], dtype=ember.float64)) == \
        crit.forward(x, ember.tensor([3, 1]))
    with pytest.raises(ValueError, match="class targets must be whole numbers"):
        crit.forward(x, ember.tensor([1.5, 1.0]))
    with pytest.raises(ValueError, match="expected 2 targets for input of size"):
        crit.forward(x, ember.tensor([1, 2, 3]))
    # a vector with an int class
    v = x[1]
    assert crit.forward(v, 2) == pytest.approx(-float(v[1]))
    close(crit.backward(v, 2), np.array([0, -1.0, 0]))


def test_refusals():
    with pytest.raises(ValueError, match="expected 1D or 2D input"):
        nn.Linear(3, 2).forward(ember.randn(2, 2, 3))
    with pytest.raises(ValueError, match="input has 4 features, the layer expects 3"):
        nn.Linear(3, 2).forward(ember.randn(2, 4))
    with pytest.raises(ValueError, match="expected 3D or 4D input"):
        nn.SpatialConvolution(1, 2, 3, 3).forward(ember.randn(5, 5))
    with pytest.raises(ValueError, match="expected input with 1 planes, got 2"):
        nn.SpatialConvolution(1, 2, 3, 3).forward(ember.randn(2, 5, 5))
    with pytest.raises(TypeError, match="expected input to be an ember.Tensor"):
        nn.ReLU().forward([1, 2])
    with pytest.raises(TypeError, match="expected a non-empty list"):
        nn.CAddTable().forward(ember.randn(2))
    with pytest.raises(ValueError, match="same number of elements"):
        nn.MSECriterion().forward(ember.randn(3), ember.randn(4))


def _legacy_cnn():
    return nn.Sequential(
        nn.SpatialConvolution(1, 4, 3, 3, 1, 1, 1, 1), nn.SpatialBatchNormalization(4), nn.ReLU(),
        nn.SpatialMaxPooling(2, 2, 2, 2),
        nn.SpatialConvolution(4, 6, 3, 3), nn.Tanh(), nn.SpatialAveragePooling(2, 2, 1, 1),
        nn.View(6), nn.Linear(6, 10), nn.LogSoftMax())


def _ember_cnn():
    return enn.Sequential(
        enn.Conv2d(1, 4, 3, padding=1), enn.BatchNorm2d(4), enn.ReLU(), enn.MaxPool2d(2),
        enn.Conv2d(4, 6, 3), enn.Tanh(), enn.AvgPool2d(2, 1), enn.Flatten(),
        enn.Linear(6, 10), enn.LogSoftmax(1))


def test_sequential_cnn_equals_ember_nn():
    legacy = _legacy_cnn().double()
    ref = _ember_cnn().double()
    lp, lg = legacy.parameters()
    rp = list(ref.parameters())
    assert [tuple(p.shape) for p in lp] == [tuple(p.shape) for p in rp]
    with ember.no_grad():
        for a, b in zip(lp, rp):
            b.copy_(a)
    crit, lr = nn.ClassNLLCriterion(), 0.1
    for step in range(3):
        x = rnd(5, 1, 8, 8)
        t = ember.randint(1, 11, (5,))
        legacy.zeroGradParameters()
        out = legacy.forward(x)
        loss = crit.forward(out, t)
        gi = legacy.backward(x, crit.backward(out, t))
        legacy.updateParameters(lr)

        xs = leaf(x)
        ref.zero_grad()
        ref_out = ref(xs)
        ref_loss = F.nll_loss(ref_out, t - 1)
        ref_loss.backward()
        close(out, ref_out)
        close(loss, ref_loss)
        close(gi, xs.grad)
        for g, p in zip(lg, rp):
            close(g, p.grad)
        with ember.no_grad():
            for p in rp:
                p.sub_(p.grad * lr)
        for a, b in zip(lp, rp):
            close(a, b)
    close(legacy.get(2).running_mean, ref[1].running_mean)
    close(legacy.get(2).running_var, ref[1].running_var)
    legacy.evaluate()
    ref.eval()
    x = rnd(2, 1, 8, 8)
    close(legacy.forward(x), ref(x))
    assert not legacy.get(2).train
