"""ember.jit.trace on ember.vision's models and ember.nn's sequence layers:
replay equals eager (on other inputs than the traced ones), gradients
through the traced module equal eager gradients, the data-dependence
warnings, train vs eval, save/load and refused files."""
import copy
import io
import json
import warnings
import zipfile

import numpy as np
import pytest

import ember
import ember.jit
from ember import nn
from ember.vision import models


class LSTMLM(nn.Module):
    def __init__(self, vocab=20, dim=8, hidden=12):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        out, _ = self.lstm(self.embed(tokens))
        return self.head(out).log_softmax(-1)


def transformer():
    layer = nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, batch_first=True)
    return nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)


def _models():
    ember.manual_seed(0)
    return {
        "lenet": (lambda: models.lenet(num_classes=10), lambda b: ember.randn(b, 1, 28, 28)),
        "resnet18": (lambda: models.resnet18(num_classes=10),
                     lambda b: ember.randn(b, 3, 32, 32)),
        "alexnet": (lambda: models.alexnet(num_classes=10), lambda b: ember.randn(b, 3, 63, 63)),
        "vgg11": (lambda: models.vgg11(num_classes=10), lambda b: ember.randn(b, 3, 32, 32)),
        "vgg16": (lambda: models.vgg16(num_classes=10), lambda b: ember.randn(b, 3, 32, 32)),
        "resnet50": (lambda: models.resnet50(num_classes=10),
                     lambda b: ember.randn(b, 3, 32, 32)),
        "mobilenet_v2": (lambda: models.mobilenet_v2(num_classes=10),
                         lambda b: ember.randn(b, 3, 32, 32)),
        "squeezenet": (lambda: models.squeezenet1_1(num_classes=10),
                       lambda b: ember.randn(b, 3, 48, 48)),
        "densenet121": (lambda: models.densenet121(num_classes=10),
                        lambda b: ember.randn(b, 3, 32, 32)),
        "lstm_lm": (LSTMLM, lambda b: ember.randint(0, 20, (b, 6))),
        "transformer": (transformer, lambda b: ember.randn(b, 5, 16)),
    }


MODELS = _models()


def _close(a, b, tol=1e-5):
    a, b = a.detach().numpy(), b.detach().numpy()
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol * max(1.0, float(np.abs(b).max())))


# training mode (batch statistics, dropout) on the smaller ones; eval on all
_TRAIN = ("lenet", "resnet18", "lstm_lm", "transformer")


@pytest.mark.parametrize("name, mode", [(n, "eval") for n in MODELS] +
                         [(n, "train") for n in _TRAIN])
def test_replay_and_gradients_equal_eager(name, mode):
    make, data = MODELS[name]
    ember.manual_seed(1)
    model = make()
    if mode == "eval":
        model.eval()
    elif name == "transformer":  # dropout draws differ between two runs
        model.eval()
    traced = ember.jit.trace(model, (data(2),))
    eager = copy.deepcopy(model)   # after the trace's own run (training updates statistics)
    # other values (and another batch where the model allows it) than traced
    batch = 3 if name not in ("lstm_lm", "transformer") else 2
    x = data(batch)
    if x.is_floating_point():
        x.requires_grad_(True)
    x2 = x.detach().clone().requires_grad_(x.requires_grad)
    got, want = traced(x), eager(x2)
    _close(got, want)
    weights = ember.randn(*want.shape)
    (got * weights).sum().backward()
    (want * weights).sum().backward()
    grads = dict(eager.named_parameters())
    checked = 0
    for n, p in traced.named_parameters():
        assert n in grads
        if grads[n].grad is None:
            assert p.grad is None
            continue
        _close(p.grad, grads[n].grad, 1e-4)
        checked += 1
    assert checked == len([p for p in eager.parameters() if p.grad is not None]) > 0
    if x.requires_grad:
        _close(x.grad, x2.grad, 1e-4)
    buffers = dict(eager.named_buffers())
    for n, b in traced.named_buffers():
        if not n.startswith("_constants"):
            _close(b, buffers[n])   # train mode: batch norm's running statistics moved alike


def test_graph_print_and_code():
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8, 3)).eval()
    traced = ember.jit.trace(model, ember.randn(1, 1, 4, 4))
    text = str(traced.graph)
    assert text.startswith("graph(%x0: float32[1, 1, 4, 4]):")
    assert "%0.weight: float32[2, 1, 3, 3] = param" in text
    assert "nn.conv2d(%x0, %0.weight, %0.bias" in text
    assert "test_jit.py:" in text        # the user's line of each call
    assert [n.kind for n in traced.graph.nodes] == ["conv2d", "relu", "flatten", "linear"]
    code = traced.code
    assert code.startswith("def forward(self, x0):")
    assert "_kernels.kernel('conv2d')(x0, self.get_parameter('0.weight')" in code


def test_train_and_eval_trace_as_they_run():
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5), nn.BatchNorm1d(4))
    x = ember.randn(8, 4)
    train_kinds = [n.kind for n in ember.jit.trace(model.train(), x).graph.nodes]
    eval_kinds = [n.kind for n in ember.jit.trace(model.eval(), x).graph.nodes]
    assert "dropout" in train_kinds and "dropout" not in eval_kinds
    assert "add" in train_kinds   # num_batches_tracked += 1 happens in training only
    assert "add" not in eval_kinds
    # the training trace draws a new dropout mask per call
    traced = ember.jit.trace(model.train(), x)
    assert not ember.equal(traced(x), traced(x))


@pytest.mark.parametrize("body, what", [
    (lambda x: x * 2 if x.sum() > 0 else x, "Python boolean"),
    (lambda x: x * x.sum().item(), "Python number"),
    (lambda x: x.new_zeros(len(x)) + x, "len to get tensor shape"),
    (lambda x: x.reshape(int(x.sum().clamp(min=1, max=1)) * 3), "Python integer"),
])
def test_data_dependence_warns(body, what):
    with pytest.warns(ember.jit.TracerWarning, match=what):
        ember.jit.trace(body, ember.ones(3))


def test_no_warning_for_parameters_and_shapes():
    lin = nn.Linear(3, 2)

    def f(x):
        assert lin.weight.sum().item() == lin.weight.sum().item()   # not from the input
        return lin(x).reshape(x.shape[0], -1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ember.jit.TracerWarning)
        ember.jit.trace(f, ember.ones(2, 3))


def test_functions_and_several_outputs():
    def f(a, b):
        top, idx = a.max(1)
        x, y = (a + b).chunk(2, 1)
        a2 = a.clone()
        a2[:, 0] = 5.0
        return {"m": top, "cat": ember.cat([x * y, a2[:, :1]], 1), "i": idx}
    a, b = ember.randn(3, 4), ember.randn(3, 4)
    traced = ember.jit.trace(f, (a, b))
    a, b = ember.randn(3, 4), ember.randn(3, 4)
    got, want = traced(a, b), f(a, b)
    assert set(got) == {"m", "cat", "i"}
    for k in got:
        assert ember.equal(got[k], want[k])


def test_wrong_number_of_inputs():
    traced = ember.jit.trace(lambda x: x + 1, ember.ones(2))
    with pytest.raises(TypeError, match="forward\\(\\) takes 1 positional argument but 2"):
        traced(ember.ones(2), ember.ones(2))


@pytest.mark.parametrize("name", ["lenet", "lstm_lm", "transformer"])
def test_save_load_round_trip(name, tmp_path):
    make, data = MODELS[name]
    model = make().eval()
    x = data(2)
    traced = ember.jit.trace(model, (x,))
    path = tmp_path / "m.ejit"
    ember.jit.save(traced, path)
    loaded = ember.jit.load(path)
    assert str(loaded.graph) == str(traced.graph)
    x = data(2)
    _close(loaded(x), model(x), 1e-6)
    assert sorted(loaded.state_dict()) == sorted(model.state_dict())
    # gradients flow into the loaded module's own parameters
    loaded(x).sum().backward()
    assert all(p.grad is not None for p in loaded.parameters())


def _saved(fn=lambda x: (x * 2).relu(), *inputs):
    traced = ember.jit.trace(fn, inputs or (ember.ones(3),))
    buf = io.BytesIO()
    ember.jit.save(traced, buf)
    return buf.getvalue()


def _rewrite(data, edit):
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name in src.namelist():
            content = src.read(name)
            if name.endswith("graph.json"):
                doc = json.loads(content)
                edit(doc)
                content = json.dumps(doc)
            z.writestr(name, content)
    return out.getvalue()


def test_truncated_file_refused(tmp_path):
    data = _saved()
    for cut in (0, 10, len(data) // 2, len(data) - 5):
        with pytest.raises(RuntimeError, match="not a valid ember.jit archive"):
            ember.jit.load(io.BytesIO(data[:cut]))


def _hostile_target(doc):
    doc["nodes"][0]["target"] = "os.system"


def _unknown_function(doc):
    doc["nodes"][0]["target"] = "Function.os:system"


def _forward_ref(doc):
    doc["nodes"][0]["args"] = {"$tuple": [{"$v": 99}, 2]}


def _bad_shape(doc):
    doc["values"][1]["shape"] = [10 ** 6]


def _unknown_key(doc):
    doc["nodes"][0]["args"] = {"$tuple": [{"$pickle": "cos\nsystem\n"}]}


@pytest.mark.parametrize("edit, message", [
    (_hostile_target, "calls 'os.system', which is not an Ember op"),
    (_unknown_function, "calls 'Function.os:system', which is not an Ember op"),
    (_forward_ref, "reference to value 99 before it is defined"),
    (_bad_shape, "bytes for shape"),
    (_unknown_key, "unexpected argument"),
])
def test_hostile_file_refused(edit, message):
    data = _rewrite(_saved(lambda x: (x * ember.arange(3.0)).relu(), ember.ones(3)), edit)
    with pytest.raises(RuntimeError, match=message):
        ember.jit.load(io.BytesIO(data))


def test_constants_computed_in_the_trace_are_recorded():
    def f(x):
        scale = ember.arange(3.0) * 2   # no input involved: a constant and its ops
        return x * scale
    traced = ember.jit.trace(f, ember.ones(3))
    assert [n.kind for n in traced.graph.nodes] == ["mul", "mul"]
    assert ember.equal(traced(ember.full((3,), 2.0)), ember.tensor([0.0, 4.0, 8.0]))


def test_history_from_outside_the_trace_warns():
    w = nn.Parameter(ember.ones(3))
    before = w * 3   # computed before tracing: gradients cannot reach w through it
    with pytest.warns(ember.jit.TracerWarning, match="autograd history"):
        ember.jit.trace(lambda x: x + before, ember.ones(3))


def test_a_failing_trace_puts_everything_back():
    add, to_bool = ember.Tensor.add, ember.Tensor.__bool__

    def f(x):
        x = x + 1
        raise ValueError("boom")
    with pytest.raises(ValueError, match="boom"):
        ember.jit.trace(f, ember.ones(2))
    assert ember.Tensor.add is add and ember.Tensor.__bool__ is to_bool
    assert ember.jit.trace(lambda x: x * 3, ember.ones(2))(ember.ones(2)).tolist() == [3.0, 3.0]


class _Cube(ember.autograd.Function):
    """x³ with a backward that is deliberately 10× the true one, so a test can
    tell the Function's own backward from the gradient of its parts."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 30 * x * x


def test_custom_function_is_one_node_with_its_backward(tmp_path):
    def f(x):
        return _Cube.apply(x).sum() + ember.linalg.inv(x).sum()
    x = ember.randn(3, 3) + 3 * ember.eye(3)
    traced = ember.jit.trace(f, x)
    assert [n.target for n in traced.graph.nodes][:2] == [
        "Function.test_jit:_Cube", "Tensor.sum"]
    assert "_Cube.apply(x0)" in traced.code
    for module in (traced, None):
        if module is None:   # and after a save/load round trip
            ember.jit.save(traced, tmp_path / "f.ejit")
            module = ember.jit.load(tmp_path / "f.ejit")
        a = (ember.randn(3, 3) + 3 * ember.eye(3)).requires_grad_()
        b = a.detach().clone().requires_grad_()
        module(a).backward()
        f(b).backward()
        _close(a.grad, b.grad, 1e-5)
        x2 = a.detach() ** 2
        assert float((a.grad - 3 * x2).abs().max()) > 1       # the Function's own backward
        assert float((a.grad - 30 * x2).abs().max()) > 1e-2   # and inv's part


def test_constants_written_in_place_start_each_call_as_traced():
    def f(x):
        scale = ember.ones(3)
        scale.mul_(2)      # a captured tensor changed in place by the program
        return x * scale
    traced = ember.jit.trace(f, ember.ones(3))
    for _ in range(3):
        assert traced(ember.ones(3)).tolist() == [2.0, 2.0, 2.0]
