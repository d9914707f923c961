"""ember.onnx.export of ember.vision's models and ember.nn's common layers,
checked by onnx.checker and run by onnxruntime against Ember's outputs;
ember.onnx.load of each exported file; refusals."""
import io

import numpy as np
import pytest

import ember
import ember.onnx
from ember import nn
from ember.vision import models

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from test_jit import LSTMLM, transformer  # noqa: E402


class Layers(nn.Module):
    """The common layers not in the vision models, in one small network."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(2, 4, 3, padding=1)
        self.gn = nn.GroupNorm(2, 4)
        self.c3 = nn.Conv3d(1, 2, 3, padding=1)
        self.p3 = nn.MaxPool3d(2)
        self.a3 = nn.AvgPool3d(2)
        self.ct = nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, output_padding=1)
        self.bn = nn.BatchNorm2d(3)
        self.ap = nn.AvgPool2d(2)
        self.ln = nn.LayerNorm(12)
        self.gru = nn.GRU(12, 6, batch_first=True, bidirectional=True)
        self.mha = nn.MultiheadAttention(12, 3, batch_first=True)
        self.act = nn.Sequential(nn.GELU(), nn.SiLU(), nn.LeakyReLU(0.1), nn.ELU(), nn.Tanh(),
                                 nn.Hardtanh(-0.5, 0.5), nn.Sigmoid(), nn.Dropout(0.3))

    def forward(self, x):                                 # x: (N, 2, 12)
        n = x.shape[0]
        a = self.gn(self.c1(x))                           # (N, 4, 12)
        v = self.c3(a.reshape(n, 1, 4, 3, 4))             # (N, 2, 4, 3, 4)
        v = (self.p3(v).flatten(1) + self.a3(v).flatten(1))  # (N, 2)
        img = self.ap(self.bn(self.ct(x[:, :, :9].reshape(n, 2, 3, 3))))  # (N, 3, 3, 3)
        seq = self.ln(a[:, 1:, :] * 2.0 - 1.0)           # (N, 3, 12)
        h, _ = self.gru(seq)                              # (N, 3, 12)
        att, _ = self.mha(h, h, h)
        z = self.act(att).permute(0, 2, 1)                # (N, 12, 3)
        out = ember.cat([z.mean(2), v, img.flatten(1)[:, ::3], a[:, 0, 2:5]], 1)
        return out.softmax(-1), out.log_softmax(1)


def _cases():
    return {
        "lenet": (lambda: models.lenet(num_classes=10), (2, 1, 28, 28)),
        "alexnet": (lambda: models.alexnet(num_classes=10), (1, 3, 63, 63)),
        "vgg11": (lambda: models.vgg11(num_classes=10), (1, 3, 32, 32)),
        "vgg16": (lambda: models.vgg16(num_classes=10), (1, 3, 32, 32)),
        "resnet18": (lambda: models.resnet18(num_classes=10), (2, 3, 32, 32)),
        "resnet50": (lambda: models.resnet50(num_classes=10), (1, 3, 32, 32)),
        "mobilenet_v2": (lambda: models.mobilenet_v2(num_classes=10), (1, 3, 32, 32)),
        "squeezenet": (lambda: models.squeezenet1_1(num_classes=10), (1, 3, 48, 48)),
        "densenet121": (lambda: models.densenet121(num_classes=10), (1, 3, 32, 32)),
        "lstm_lm": (LSTMLM, "tokens"),
        "transformer": (transformer, (2, 5, 16)),
        "layers": (Layers, (2, 2, 12)),
    }


CASES = _cases()


def _input(spec, batch=None):
    if spec == "tokens":
        return ember.randint(0, 20, (batch or 2, 6))
    shape = (batch or spec[0],) + tuple(spec[1:])
    return ember.randn(*shape)


def _ember_outputs(model, x):
    with ember.no_grad():
        out = model(x)
    return [t.numpy() for t in (out if isinstance(out, tuple) else (out,))]


def _assert_close(got, want):
    for g, w in zip(got, want):
        assert g.shape == w.shape
        scale = max(1.0, float(np.abs(w).max()))
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4 * scale)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """name -> (model, path, input spec), exported once for the tests below."""
    d = tmp_path_factory.mktemp("onnx")
    done = {}

    def get(name):
        if name not in done:
            make, spec = CASES[name]
            ember.manual_seed(0)
            model = make().eval()
            if name == "layers":  # non-trivial running statistics
                model.bn.running_mean.uniform_(-0.5, 0.5)
                model.bn.running_var.uniform_(0.5, 2.0)
            path = d / f"{name}.onnx"
            proto = ember.onnx.export(model, (_input(spec),), str(path), input_names=["input"],
                                      dynamic_axes={"input": {0: "batch"}})
            sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
            done[name] = (model, path, spec, proto.opset_import[0].version, sess)
        return done[name]
    return get


@pytest.mark.parametrize("name", list(CASES))
def test_export_runs_in_onnxruntime(name, exported):
    # (export itself runs onnx.checker on the file's bytes)
    model, path, spec, opset, sess = exported(name)
    assert opset == ember.onnx.default_opset()
    x = _input(spec)
    _assert_close(sess.run(None, {"input": x.numpy()}), _ember_outputs(model, x))


@pytest.mark.parametrize("name", list(CASES))
def test_dynamic_batch(name, exported):
    model, path, spec, _, sess = exported(name)
    assert sess.get_inputs()[0].shape[0] == "batch"
    x = _input(spec, batch=5)
    _assert_close(sess.run(None, {"input": x.numpy()}), _ember_outputs(model, x))


@pytest.mark.parametrize("name", list(CASES))
def test_load_round_trip(name, exported):
    model, path, spec, _, _ = exported(name)
    loaded = ember.onnx.load(str(path))
    assert isinstance(loaded, nn.Module)
    x = _input(spec)
    got = _ember_outputs(loaded, x)
    _assert_close(got, _ember_outputs(model, x))


def test_loaded_module_trains():
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).eval()
    buf = io.BytesIO()
    ember.onnx.export(model, (ember.randn(3, 4),), buf)
    loaded = ember.onnx.load(io.BytesIO(buf.getvalue()))
    params = list(loaded.parameters())
    assert len(params) == 4 and all(p.requires_grad for p in params)
    opt = ember.optim.SGD(loaded.parameters(), lr=0.1)
    x, y = ember.randn(16, 4), ember.randn(16, 2)
    first = None
    for _ in range(20):
        opt.zero_grad()
        loss = ((loaded(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        first = loss.item() if first is None else first
    assert loss.item() < first


def test_opsets_and_defaults(tmp_path):
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU(), nn.Flatten(),
                          nn.Linear(8, 3), nn.LogSoftmax(1)).eval()
    x = ember.randn(2, 1, 4, 4)
    for opset in (13, 17, ember.onnx.default_opset()):
        proto = ember.onnx.export(model, (x,), str(tmp_path / "m.onnx"), opset_version=opset)
        assert proto.opset_import[0].version == opset
        onnx.checker.check_model(proto, full_check=True)   # with shape inference
        sess = ort.InferenceSession(str(tmp_path / "m.onnx"), providers=["CPUExecutionProvider"])
        assert [i.name for i in sess.get_inputs()] == ["input"]
        assert [o.name for o in sess.get_outputs()] == ["output"]
        _assert_close(sess.run(None, {"input": x.numpy()}), _ember_outputs(model, x))
    with pytest.raises(ValueError, match="opset_version 12 is not supported"):
        ember.onnx.export(model, (x,), io.BytesIO(), opset_version=12)
    # export_params=False: the parameters become inputs
    proto = ember.onnx.export(model, (x,), io.BytesIO(), export_params=False)
    assert "0.weight" in [i.name for i in proto.graph.input]
    assert not [i for i in proto.graph.initializer if i.name == "0.weight"]
    # the model's mode is restored
    model.train()
    ember.onnx.export(model, (x,), io.BytesIO())
    assert model.training


def test_unmapped_op_names_op_and_line():
    def f(x):
        return ember.cumsum(x, 0)   # no mapping
    with pytest.raises(ember.onnx.OnnxExporterError,
                       match=r"no ONNX mapping for op 'cumsum' \(ember.cumsum\), called at "
                             r".*test_onnx.py:\d+"):
        ember.onnx.export(f, (ember.randn(3),), io.BytesIO())


def test_training_mode_export_is_refused():
    model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))
    with pytest.raises(ember.onnx.OnnxExporterError, match="'dropout'.*training mode"):
        ember.onnx.export(model, (ember.randn(2, 3),), io.BytesIO(),
                          training=ember.onnx.TrainingMode.TRAINING)


def test_bad_arguments():
    model = nn.Linear(3, 2)
    with pytest.raises(ValueError, match="dynamic_axes names 'x'"):
        ember.onnx.export(model, (ember.randn(2, 3),), io.BytesIO(), dynamic_axes={"x": [0]})
    with pytest.raises(ValueError, match="2 input_names for 1 inputs"):
        ember.onnx.export(model, (ember.randn(2, 3),), io.BytesIO(), input_names=["a", "b"])


def test_files_exported_by_pytorch_load():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    cnn = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.BatchNorm2d(4),
                              torch.nn.ReLU(), torch.nn.MaxPool2d(2), torch.nn.Flatten(),
                              torch.nn.Linear(64, 5), torch.nn.LogSoftmax(1)).eval()
    lstm = torch.nn.LSTM(4, 6, batch_first=True).eval()
    gru = torch.nn.GRU(4, 6).eval()

    class Mixed(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.prelu = torch.nn.PReLU(3)
            self.acts = torch.nn.Sequential(torch.nn.LeakyReLU(0.2), torch.nn.ELU(),
                                            torch.nn.Hardswish(), torch.nn.SELU(),
                                            torch.nn.Hardsigmoid(), torch.nn.Softplus())

        def forward(self, x):
            y = torch.nn.functional.pad(x, (1, 2, 0, 1), mode="reflect")
            y = torch.nn.functional.pad(self.prelu(y), (1, 1), value=0.5)
            y = self.acts(y).repeat(1, 2, 1, 1)
            return torch.maximum(y, y.mean()) + y.argmax(1, keepdim=True)
    mixed = Mixed().eval()
    for model, shape in ((cnn, (2, 3, 8, 8)), (lstm, (2, 3, 4)), (gru, (3, 2, 4)),
                         (mixed, (2, 3, 4, 5))):
        buf = io.BytesIO()
        torch.onnx.export(model, (torch.randn(*shape),), buf, dynamo=False)
        loaded = ember.onnx.load(io.BytesIO(buf.getvalue()))
        x = torch.randn(*shape)
        with torch.no_grad():
            want = model(x)
        want = want[0] if isinstance(want, tuple) else want
        got = loaded(ember.from_numpy(x.numpy()))
        got = got[0] if isinstance(got, tuple) else got
        assert tuple(got.shape) == tuple(want.shape)
        _assert_close([got.detach().numpy()], [want.numpy()])


def test_inplace_write_into_a_view_is_refused():
    def f(x):
        y = x * 2
        y[:, 0].add_(1.0)   # changes y through a view
        return y
    with pytest.raises(ember.onnx.OnnxExporterError, match=r"'add' \(Tensor.add_\) writes in "
                                                           r"place into a view"):
        ember.onnx.export(f, (ember.randn(2, 3),), io.BytesIO())


@pytest.mark.parametrize("body, message", [
    (lambda x: x + ember.zeros(x.shape[0], 3), "reads a constant whose shape follows the "
                                               "dynamic axes"),
    (lambda x: x * 2 if x.shape[0] < 3 else x.relu(), "runs other ops when its dynamic axes "
                                                      "change size"),
    (lambda x: x[: x.shape[0] - 1], "takes sizes that follow the dynamic axes"),
    (lambda x: x.reshape(x.shape[0] * 3, 1).reshape(x.shape[0], 3, 1), None),
])
def test_dynamic_axes_refuse_what_they_cannot_express(body, message):
    x = ember.randn(2, 3)
    buf = io.BytesIO()
    if message is None:   # one size per reshape follows the batch: -1
        ember.onnx.export(body, (x,), buf, dynamic_axes={"input": [0]})
        sess = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
        x = ember.randn(5, 3)
        _assert_close(sess.run(None, {"input": x.numpy()}), [body(x).numpy()])
        return
    with pytest.raises(ember.onnx.OnnxExporterError, match=message):
        ember.onnx.export(body, (x,), buf, dynamic_axes={"input": [0]})


@pytest.mark.parametrize("opset", [13, 17])
@pytest.mark.parametrize("name", ["lstm_lm", "transformer", "layers", "mobilenet_v2"])
def test_older_opsets(name, opset):
    # LayerNormalization (17), Gelu (20) and ReduceMean's axes input (18) have older forms
    make, spec = CASES[name]
    ember.manual_seed(0)
    model = make().eval()
    buf = io.BytesIO()
    ember.onnx.export(model, (_input(spec),), buf, opset_version=opset, input_names=["input"],
                      dynamic_axes={"input": [0]})
    sess = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    x = _input(spec, batch=3)
    _assert_close(sess.run(None, {"input": x.numpy()}), _ember_outputs(model, x))
