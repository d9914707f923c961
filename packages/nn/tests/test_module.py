"""Module machinery: registration, iteration, state_dict, modes, dtype
moves, hooks, containers, repr, utils, init."""
import copy
import math
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.nn import init, utils


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.bn = nn.BatchNorm1d(4)
        self.fc2 = nn.Linear(4, 2)
        self.scale = nn.Parameter(ember.ones(1))
        self.register_buffer("step", ember.zeros(1))
        self.register_buffer("cache", ember.zeros(2), persistent=False)

    def forward(self, x):
        return self.fc2(self.bn(self.fc1(x)).relu()) * self.scale


def test_registration_and_named_members():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == [
        "scale", "fc1.weight", "fc1.bias", "bn.weight", "bn.bias", "fc2.weight", "fc2.bias"]
    assert [n for n, _ in net.named_buffers()] == [
        "step", "cache", "bn.running_mean", "bn.running_var", "bn.num_batches_tracked"]
    assert [n for n, _ in net.named_children()] == ["fc1", "bn", "fc2"]
    assert [n for n, _ in net.named_modules()] == ["", "fc1", "bn", "fc2"]
    assert list(net.state_dict()) == [
        "scale", "step", "fc1.weight", "fc1.bias", "bn.weight", "bn.bias", "bn.running_mean",
        "bn.running_var", "bn.num_batches_tracked", "fc2.weight", "fc2.bias"]
    assert len(list(net.parameters(recurse=False))) == 1
    assert net.get_submodule("bn") is net.bn
    assert net.get_parameter("fc1.bias") is net.fc1.bias


def test_shared_parameters_counted_once():
    a = nn.Linear(2, 2)
    seq = nn.Sequential(a, nn.Tanh(), a)
    assert len(list(seq.parameters())) == 2
    assert len(list(seq.named_parameters(remove_duplicate=False))) == 4


def test_attribute_errors_and_deletion():
    net = Net()
    with pytest.raises(TypeError, match="cannot assign 'ember.Tensor' as parameter 'scale'"):
        net.scale = ember.ones(1)
    with pytest.raises(KeyError, match="attribute 'fc1' already exists"):
        net.register_buffer("fc1", ember.ones(1))
    with pytest.raises(KeyError, match='contain "."'):
        net.register_parameter("a.b", nn.Parameter(ember.ones(1)))
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'nope'"):
        net.nope
    with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor to parameter 'w'"):
        net.register_parameter("w", _non_leaf_parameter())
    del net.fc2
    assert "fc2" not in dict(net.named_children())
    net.fc1 = None
    assert net.fc1 is None and [n for n, _ in net.named_children()] == ["bn"]

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(ember.ones(1))

    with pytest.raises(AttributeError, match="cannot assign parameters before "
                                             "Module.__init__\\(\\) call"):
        Early()


def _non_leaf_parameter():
    p = nn.Parameter(ember.ones(1))
    q = object.__new__(nn.Parameter)
    r = p * 2
    for s in ("_data", "_grad_fn", "_output_nr", "_requires_grad", "_base", "_meta"):
        setattr(q, s, getattr(r, s))
    return q


def test_state_dict_round_trip_and_strict_errors():
    ember.manual_seed(0)
    a, b = Net(), Net()
    a.bn.running_mean.fill_(3.0)
    result = b.load_state_dict(a.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    for (k, v), (_, w) in zip(a.state_dict().items(), b.state_dict().items()):
        assert ember.equal(v, w), k
    sd = a.state_dict()
    assert not sd["fc1.weight"].requires_grad
    del sd["fc1.bias"]
    sd["extra"] = ember.ones(1)
    sd["fc2.nope"] = ember.ones(1)
    with pytest.raises(RuntimeError) as err:
        b.load_state_dict(sd)
    msg = str(err.value)
    assert msg.startswith("Error(s) in loading state_dict for Net:")
    assert 'Missing key(s) in state_dict: "fc1.bias".' in msg
    assert 'Unexpected key(s) in state_dict: "extra", "fc2.nope".' in msg
    result = b.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["fc1.bias"]
    assert result.unexpected_keys == ["extra", "fc2.nope"]
    sd = a.state_dict()
    sd["fc1.weight"] = ember.ones(5, 5)
    with pytest.raises(RuntimeError, match="size mismatch for fc1.weight: copying a param with "
                                           "shape"):
        b.load_state_dict(sd)


def test_load_state_dict_keeps_parameter_identity():
    a, b = nn.Linear(2, 2), nn.Linear(2, 2)
    w = b.weight
    b.load_state_dict(a.state_dict())
    assert b.weight is w and ember.equal(w, a.weight)


def test_load_state_dict_assign():
    a, b = nn.Linear(2, 2), nn.Linear(2, 2)
    b.bias.requires_grad_(False)
    sd = a.state_dict()
    b.load_state_dict(sd, assign=True)
    assert isinstance(b.weight, nn.Parameter) and b.weight.data_ptr() == sd["weight"].data_ptr()
    assert b.weight.requires_grad and not b.bias.requires_grad
    bn = nn.BatchNorm1d(2)
    sd = {k: v.clone() for k, v in nn.BatchNorm1d(2).state_dict().items()}
    bn.load_state_dict(sd, assign=True)
    assert bn.running_mean is sd["running_mean"]


def test_train_eval_and_dropout():
    net = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5))
    assert net.training and net[1].training
    net.eval()
    assert not net.training and not net[1].training
    x = ember.ones(4, 2)
    assert ember.equal(net(x), net[0](x))
    net.train()
    ember.manual_seed(0)
    y = nn.functional.dropout(ember.ones(1000), 0.3)
    kept = (y != 0).float().mean().item()
    assert 0.63 < kept < 0.77
    values = np.unique(y.numpy())
    np.testing.assert_allclose(values, [0.0, 1 / 0.7], rtol=1e-6)


def test_to_double_float_keeps_parameters():
    net = Net()
    w = net.fc1.weight
    net.double()
    assert net.fc1.weight is w and w.dtype == ember.float64
    assert net.bn.running_mean.dtype == ember.float64
    assert net.bn.num_batches_tracked.dtype == ember.int64
    assert net(ember.randn(3, 3, dtype=ember.float64)).dtype == ember.float64
    net.to(ember.float32)
    assert w.dtype == ember.float32 and w.requires_grad and w.is_leaf
    net.to("cpu")
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point"):
        net.to(ember.int64)


def test_zero_grad_requires_grad_apply():
    net = Net()
    net(ember.randn(4, 3)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(float(p.grad.abs().sum()) == 0 for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "BatchNorm1d", "Linear", "Net"]

    def init_weights(m):
        if isinstance(m, nn.Linear):
            init.zeros_(m.weight)
    net.apply(init_weights)
    assert float(net.fc1.weight.abs().sum()) == 0


def test_forward_hooks():
    lin = nn.Linear(2, 2)
    calls = []
    h1 = lin.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    h2 = lin.register_forward_hook(lambda m, args, out: calls.append(args[0].sum().item()))
    h3 = lin.register_forward_hook(lambda m, args, out: out + 100)
    out = lin(ember.ones(1, 2))
    assert calls == [0.0]
    assert ember.allclose(out, lin.bias.detach() + 100)
    for h in (h1, h2, h3):
        h.remove()
    out = lin(ember.ones(1, 2))
    assert calls == [0.0] and float(out.max()) < 50

    def kw_hook(m, args, kwargs):
        return args, {}
    lin.register_forward_pre_hook(kw_hook, with_kwargs=True)
    assert lin(ember.ones(1, 2)).shape == (1, 2)


def test_containers():
    seq = nn.Sequential(OrderedDict([("a", nn.Linear(2, 3)), ("b", nn.ReLU())]))
    assert seq.a is seq[0] and len(seq) == 2 and isinstance(seq[-1], nn.ReLU)
    assert isinstance(seq[:1], nn.Sequential) and len(seq[:1]) == 1
    seq.append(nn.Linear(3, 1))
    assert seq(ember.ones(4, 2)).shape == (4, 1)
    ml = nn.ModuleList([nn.Linear(1, 1) for _ in range(3)])
    ml.append(nn.Tanh())
    ml.insert(0, nn.ReLU())
    del ml[1]
    assert [type(m).__name__ for m in ml] == ["ReLU", "Linear", "Linear", "Tanh"]
    assert len(list(ml.parameters())) == 4
    md = nn.ModuleDict({"x": nn.Linear(1, 1)})
    md["y"] = nn.ReLU()
    assert list(md.keys()) == ["x", "y"] and "x" in md
    pl = nn.ParameterList([ember.ones(2), nn.Parameter(ember.zeros(3))])
    assert isinstance(pl[0], nn.Parameter) and len(pl) == 2
    assert [n for n, _ in pl.named_parameters()] == ["0", "1"]
    pd = nn.ParameterDict({"a": ember.ones(1)})
    pd["b"] = nn.Parameter(ember.ones(2))
    assert list(pd.keys()) == ["a", "b"] and isinstance(pd["a"], nn.Parameter)
    assert len(list(nn.ModuleDict({"p": pd}).parameters())) == 2
    with pytest.raises(IndexError, match="index 5 is out of range"):
        seq[5]


def test_repr():
    net = nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.ReLU(), nn.Dropout(0.1)))
    assert repr(net) == (
        "Sequential(\n"
        "  (0): Linear(in_features=2, out_features=3, bias=True)\n"
        "  (1): Sequential(\n"
        "    (0): ReLU()\n"
        "    (1): Dropout(p=0.1, inplace=False)\n"
        "  )\n"
        ")")
    assert repr(nn.Parameter(ember.ones(2))) == ("Parameter containing:\n"
                                                 "tensor([1., 1.], requires_grad=True)")


def test_parameter_semantics():
    t = ember.ones(3)
    p = nn.Parameter(t)
    assert p.requires_grad and p.is_leaf and isinstance(p, ember.Tensor)
    assert p.data_ptr() == t.data_ptr()
    assert type(p * 2) is ember.Tensor
    assert not nn.Parameter(t, requires_grad=False).requires_grad
    q = copy.deepcopy(p)
    assert isinstance(q, nn.Parameter) and q.data_ptr() != p.data_ptr()
    r = pickle.loads(pickle.dumps(p))
    assert isinstance(r, nn.Parameter) and r.requires_grad and ember.equal(r, p)


def test_deepcopy_and_pickle_module():
    net = Net()
    other = copy.deepcopy(net)
    assert other.fc1.weight is not net.fc1.weight
    assert ember.equal(other.fc1.weight, net.fc1.weight)
    again = pickle.loads(pickle.dumps(net))
    x = ember.randn(2, 3)
    net.eval(), again.eval()
    assert ember.allclose(again(x), net(x))


def test_clip_grad_and_vectors():
    a = nn.Parameter(ember.tensor([3.0, 0.0]))
    b = nn.Parameter(ember.tensor([4.0]))
    a.grad, b.grad = ember.tensor([3.0, 0.0]), ember.tensor([4.0])
    total = utils.clip_grad_norm_([a, b], 1.0)
    assert total.item() == pytest.approx(5.0)
    assert math.hypot(*a.grad.tolist(), *b.grad.tolist()) == pytest.approx(1.0, rel=1e-5)
    a.grad = ember.tensor([3.0, -1.0])
    assert utils.clip_grad_norm_(a, 10.0, norm_type="inf").item() == 3.0
    assert a.grad.tolist() == [3.0, -1.0]
    utils.clip_grad_value_([a], 0.5)
    assert a.grad.tolist() == [0.5, -0.5]
    a.grad = ember.tensor([float("nan"), 1.0])
    with pytest.raises(RuntimeError, match="non-finite"):
        utils.clip_grad_norm_([a], 1.0, error_if_nonfinite=True)
    vec = utils.parameters_to_vector([a, b])
    assert vec.tolist() == [3.0, 0.0, 4.0]
    utils.vector_to_parameters(ember.tensor([1.0, 2.0, 3.0]), [a, b])
    assert a.tolist() == [1.0, 2.0] and b.tolist() == [3.0] and a.is_leaf


def test_init_functions():
    ember.manual_seed(0)
    w = ember.empty(200, 300)
    assert init.calculate_gain("relu") == math.sqrt(2)
    assert init.calculate_gain("leaky_relu", 0.2) == math.sqrt(2 / 1.04)
    assert init.calculate_gain("tanh") == 5 / 3 and init.calculate_gain("selu") == 0.75
    init.xavier_uniform_(w, gain=2.0)
    bound = 2.0 * math.sqrt(6 / 500)
    assert float(w.abs().max()) <= bound and float(w.abs().max()) > 0.95 * bound
    init.xavier_normal_(w)
    assert float(w.std()) == pytest.approx(math.sqrt(2 / 500), rel=0.05)
    init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert float(w.std()) == pytest.approx(math.sqrt(2 / 200), rel=0.05)
    init.kaiming_uniform_(w, a=0, nonlinearity="relu")
    assert float(w.abs().max()) <= math.sqrt(6 / 300)
    c = ember.empty(8, 4, 3, 3)
    init.kaiming_normal_(c)
    assert float(c.std()) == pytest.approx(math.sqrt(2 / 36), rel=0.1)
    init.trunc_normal_(w, mean=0.5, std=1.0, a=-1.0, b=1.5)
    assert float(w.min()) >= -1.0 and float(w.max()) <= 1.5
    q = ember.empty(5, 7, dtype=ember.float64)
    init.orthogonal_(q, gain=2.0)
    np.testing.assert_allclose(q.numpy() @ q.numpy().T, 4 * np.eye(5), atol=1e-10)
    q = ember.empty(7, 5, dtype=ember.float64)
    init.orthogonal_(q)
    np.testing.assert_allclose(q.numpy().T @ q.numpy(), np.eye(5), atol=1e-10)
    e = init.eye_(ember.empty(3, 4))
    assert e.tolist() == np.eye(3, 4).tolist()
    assert init.constant_(ember.empty(2), 0.5).tolist() == [0.5, 0.5]
    assert init.ones_(ember.empty(2)).tolist() == [1, 1]
    d = init.dirac_(ember.empty(2, 2, 3, 3))
    assert float(d.sum()) == 2 and float(d[1, 1, 1, 1]) == 1
    p = nn.Parameter(ember.empty(3, 3))
    init.normal_(p)
    assert p.is_leaf and p.grad_fn is None
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed for tensor "
                                         "with fewer than 2 dimensions"):
        init.xavier_uniform_(ember.empty(3))
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_uniform_(w, mode="fan_avg")
    with pytest.raises(ValueError, match="Unsupported nonlinearity gelu"):
        init.calculate_gain("gelu")


def test_kernel_dispatch_point():
    from ember.nn import _kernels
    assert {"conv2d", "max_pool2d", "avg_pool2d"} <= set(_kernels.COMPOSED)
    assert _kernels.kernel("conv2d") is not None
    assert isinstance(_kernels.providers(), list)


def test_full_backward_hooks():
    lin = nn.Linear(3, 2)
    log = []
    h1 = lin.register_full_backward_pre_hook(
        lambda m, go: log.append(("pre", [tuple(g.shape) for g in go])))
    h2 = lin.register_full_backward_hook(
        lambda m, gi, go: log.append(("post", [None if g is None else tuple(g.shape)
                                               for g in gi], [tuple(g.shape) for g in go])))
    x = ember.ones(4, 3, requires_grad=True)
    (lin(x) * 2).sum().backward()
    assert log == [("pre", [(4, 2)]), ("post", [(4, 3)], [(4, 2)])]
    want = (2 * lin.weight.detach().sum(0)).tolist()
    np.testing.assert_allclose(x.grad[0].tolist(), want, rtol=1e-6)
    log.clear()
    lin(ember.ones(4, 3)).sum().backward()      # no input needs a gradient
    assert log == [("pre", [(4, 2)]), ("post", [None], [(4, 2)])]
    h1.remove()
    h2.remove()
    # a hook may replace grad_input; a pre-hook grad_output
    lin.register_full_backward_pre_hook(lambda m, go: (go[0] * 3,))
    lin.register_full_backward_hook(lambda m, gi, go: (gi[0] + 1,))
    x = ember.zeros(1, 3, requires_grad=True)
    lin(x).sum().backward()
    np.testing.assert_allclose(x.grad.tolist(), [(3 * lin.weight.detach().sum(0) + 1).tolist()],
                               rtol=1e-6)
    assert lin.weight.grad is not None
    log.clear()
    with ember.no_grad():
        assert lin(ember.ones(1, 3)).grad_fn is None


def test_dropout2d_zeroes_whole_channels():
    ember.manual_seed(0)
    y = nn.Dropout2d(0.5)(ember.ones(8, 16, 3, 3)).numpy()
    per_channel = y.reshape(8, 16, 9)
    assert set(np.unique(per_channel.std(-1))) == {0.0}
    assert set(np.unique(y)) == {0.0, 2.0}
    assert ember.equal(nn.Dropout2d(0.5).eval()(ember.ones(2, 3, 2, 2)), ember.ones(2, 3, 2, 2))


@pytest.mark.skipif(not hasattr(ember, "save"), reason="this ember has no save/load")
def test_save_load_checkpoint(tmp_path):
    import ember.optim as optim
    ember.manual_seed(0)
    net = Net()
    opt = optim.Adam(net.parameters(), lr=0.01)
    x = ember.randn(4, 3)
    net(x).sum().backward()
    opt.step()
    path = tmp_path / "ckpt.pt"
    ember.save({"model": net.state_dict(), "optim": opt.state_dict()}, path)
    ckpt = ember.load(path)
    net2 = Net()
    opt2 = optim.Adam(net2.parameters(), lr=0.5)
    net2.load_state_dict(ckpt["model"])
    opt2.load_state_dict(ckpt["optim"])
    assert opt2.param_groups[0]["lr"] == 0.01
    for (k, v), w in zip(net.state_dict().items(), net2.state_dict().values()):
        assert ember.equal(v, w), k
    for net_, opt_ in ((net, opt), (net2, opt2)):
        opt_.zero_grad()
        net_(x).sum().backward()
        opt_.step()
    for (k, v), w in zip(net.state_dict().items(), net2.state_dict().values()):
        assert ember.allclose(v, w), k


INPLACE = ["relu", "relu6", "leaky_relu", "elu", "celu", "selu", "silu", "hardtanh",
           "hardswish", "hardsigmoid", "mish", "threshold", "dropout", "dropout2d"]


@pytest.mark.parametrize("name", INPLACE)
def test_inplace_functional_matches_out_of_place(name):
    F = nn.functional
    args = {"threshold": (0.1, 2.0), "dropout": (0.3, True), "dropout2d": (0.3, True)}
    rng = np.random.default_rng(0)
    w, a = rng.standard_normal((3, 4)), 3 * rng.standard_normal((2, 3, 2, 3))
    grads, outs = [], []
    for inplace in (False, True):
        W = ember.tensor(w, requires_grad=True)
        x = ember.tensor(a, requires_grad=True)
        y = x @ W
        ember.manual_seed(0)  # the same dropout masks
        z = getattr(F, name)(y, *args.get(name, ()), inplace=inplace)
        assert (z is y) == inplace
        (z * z).sum().backward()
        outs.append(z.detach().numpy())
        grads.append((x.grad.numpy(), W.grad.numpy()))
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-12)
    for g_in, g_out in zip(grads[1], grads[0]):
        np.testing.assert_allclose(g_in, g_out, rtol=1e-12, atol=1e-14)
    leaf = ember.randn(1, 2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used "
                                           "in an in-place operation"):
        getattr(F, name)(leaf, *args.get(name, ()), inplace=True)
