"""Whole models pickled by PyTorch or by Ember load with ember.load: the
classes resolve through PyTorch's module paths (ember.nn.modules.linear,
.conv, .rnn, ...), the loaded modules compute what torch computed; and
weights_only loading with ember.serialization's safe-globals allowlist."""
import os
import pickle
import pickletools
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import ember
import ember.serialization as ser
from ember import nn

from conftest import torch

DATA = os.path.join(os.path.dirname(__file__), "data")
FIXTURE = os.path.join(DATA, "torch_whole_models.pt")   # made by data/make_torch_whole_models.py

TORCH_PATHS = {
    "activation": ["ReLU", "Sigmoid", "Tanh", "GELU", "Softmax", "LogSoftmax",
                   "MultiheadAttention"],
    "linear": ["Linear", "Identity", "Bilinear", "NonDynamicallyQuantizableLinear"],
    "conv": ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose2d"],
    "pooling": ["MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d"],
    "dropout": ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d"],
    "batchnorm": ["BatchNorm1d", "BatchNorm2d"], "instancenorm": ["InstanceNorm2d"],
    "normalization": ["LayerNorm", "GroupNorm"], "sparse": ["Embedding", "EmbeddingBag"],
    "flatten": ["Flatten", "Unflatten"], "container": ["Sequential", "ModuleList", "ModuleDict"],
    "rnn": ["LSTM", "GRU", "RNN", "LSTMCell"], "loss": ["CrossEntropyLoss", "MSELoss"],
    "module": ["Module"], "padding": ["ZeroPad2d", "ReflectionPad2d"],
    "pixelshuffle": ["PixelShuffle", "PixelUnshuffle"], "upsampling": ["Upsample"],
    "transformer": ["TransformerEncoderLayer", "TransformerEncoder"],
}


@pytest.mark.parametrize("module", sorted(TORCH_PATHS))
def test_pytorch_module_paths(module):
    import importlib
    mod = importlib.import_module(f"ember.nn.modules.{module}")
    for name in TORCH_PATHS[module]:
        cls = getattr(mod, name)
        assert cls.__module__ == f"ember.nn.modules.{module}", name
        if hasattr(nn, name):
            assert getattr(nn, name) is cls


@pytest.mark.skipif(torch is None, reason="needs torch")
def test_module_paths_are_torchs():
    for module, names in TORCH_PATHS.items():
        for name in names:
            if hasattr(torch.nn, name):
                assert getattr(torch.nn, name).__module__ == f"torch.nn.modules.{module}", name


def _globals_of(path):
    with zipfile.ZipFile(path) as z:
        data = z.read(next(n for n in z.namelist() if n.endswith("data.pkl")))
    ops = list(pickletools.genops(data))
    names = set()
    for i, (op, arg, _) in enumerate(ops):
        if op.name == "GLOBAL":
            names.add(arg.replace(" ", "."))
        elif op.name == "STACK_GLOBAL":
            names.add(f"{ops[i - 2][1]}.{ops[i - 1][1]}")
    return names


def _check_loaded(loaded):
    cnn, x, y = loaded["cnn"]
    assert type(cnn) is nn.Sequential and type(cnn[0]) is nn.Conv2d
    np.testing.assert_allclose(cnn(x).detach().numpy(), y.numpy(), rtol=1e-5, atol=1e-6)
    lm, tokens, y = loaded["lm"]
    h, _ = lm["rnn"](lm["emb"](tokens))
    g, _ = lm["gru"](h)
    np.testing.assert_allclose(lm["norm"](g).detach().numpy(), y.numpy(), rtol=1e-5, atol=1e-6)
    for key in ("enc", "up"):
        model, x, y = loaded[key]
        np.testing.assert_allclose(model(x).detach().numpy(), y.numpy(), rtol=1e-5, atol=1e-6)


def test_torch_saved_whole_models_load():
    names = _globals_of(FIXTURE)
    assert "torch.nn.modules.rnn.LSTM" in names and "torch.nn.modules.linear.Linear" in names
    loaded = ember.load(FIXTURE, weights_only=False)
    _check_loaded(loaded)
    lm = loaded["lm"][0]
    # the loaded modules train like ember's own
    out, _ = lm["rnn"](lm["emb"](loaded["lm"][1]))
    out.sum().backward()
    assert lm["rnn"].weight_ih_l0.grad is not None and lm["emb"].weight.grad is not None


def test_ember_saved_whole_model_names_pytorch_paths(tmp_path):
    loaded = ember.load(FIXTURE, weights_only=False)
    path = tmp_path / "whole.pt"
    ember.save(loaded, path)
    names = _globals_of(path)
    assert "ember.nn.modules.conv.Conv2d" in names and "ember.nn.modules.rnn.LSTM" in names
    assert not any(n.startswith("ember.nn.modules.layers.") for n in names)
    _check_loaded(ember.load(path, weights_only=False))


def test_missing_class_is_named(tmp_path):
    # a torch class Ember has no twin for: the message names both
    class Fake:
        pass
    Fake.__module__, Fake.__qualname__ = "torch.nn.modules.activation", "NoSuchLayer"
    import types
    fake_mod = types.ModuleType("torch.nn.modules.activation")
    fake_mod.NoSuchLayer = Fake
    saved = {k: sys.modules.get(k) for k in ("torch", "torch.nn", "torch.nn.modules",
                                             "torch.nn.modules.activation")}
    try:
        for k in saved:
            sys.modules[k] = fake_mod if k.endswith("activation") else types.ModuleType(k)
        with open(tmp_path / "x.pt", "wb") as f:
            ember.save({"layer": Fake()}, f)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    with pytest.raises(pickle.UnpicklingError, match=r"torch\.nn\.modules\.activation\."
                       r"NoSuchLayer, and Ember has no ember\.nn\.modules\.activation\."
                       r"NoSuchLayer"):
        ember.load(tmp_path / "x.pt", weights_only=False)


# ---- weights_only and the allowlist -------------------------------------------
ALLOW = [nn.Sequential, nn.Conv2d, nn.BatchNorm2d, nn.ReLU, nn.MaxPool2d, nn.Dropout2d,
         nn.Flatten, nn.Linear, nn.LogSoftmax]


def _cnn_only(tmp_path):
    loaded = ember.load(FIXTURE, weights_only=False)
    path = tmp_path / "cnn.pt"
    ember.save(loaded["cnn"][0], path)
    return path, loaded["cnn"]


@pytest.fixture(autouse=True)
def _clean_allowlist():
    ser.clear_safe_globals()
    yield
    ser.clear_safe_globals()


def test_weights_only_refuses_modules_until_allowed(tmp_path):
    for path in (FIXTURE, _cnn_only(tmp_path)[0]):
        with pytest.raises(pickle.UnpicklingError, match="Weights only load failed.*"
                           "add_safe_globals"):
            ember.load(path)
    path, (_, x, y) = _cnn_only(tmp_path)
    ser.add_safe_globals(ALLOW[:3])
    assert ser.get_safe_globals() == ALLOW[:3]
    with pytest.raises(pickle.UnpicklingError, match="ember.nn.modules.activation.ReLU"):
        ember.load(path)
    ser.add_safe_globals(ALLOW[3:])
    model = ember.load(path)
    np.testing.assert_allclose(model(x).detach().numpy(), y.numpy(), rtol=1e-5, atol=1e-6)
    ser.clear_safe_globals()
    assert ser.get_safe_globals() == []
    with pytest.raises(pickle.UnpicklingError):
        ember.load(path)


def test_safe_globals_context(tmp_path):
    path, (_, x, y) = _cnn_only(tmp_path)
    with ser.safe_globals(ALLOW):
        assert ser.get_safe_globals() == []   # the context's are not the permanent list
        model = ember.load(path)
    np.testing.assert_allclose(model(x).detach().numpy(), y.numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(pickle.UnpicklingError):
        ember.load(path)
    with pytest.raises(TypeError, match="safe_globals must be a list"):
        ser.add_safe_globals(nn.Linear)
    with pytest.raises(TypeError, match="must be \\(global, 'module.name'\\)"):
        ser.add_safe_globals([(nn.Linear,)])


def test_safe_global_under_another_name(tmp_path):
    # a class pickled under an older module path, allowed as (class, "old.path.Name")
    model = nn.Sequential(nn.Linear(2, 3))
    real = nn.Linear.__module__
    nn.Linear.__module__ = "ember.nn.modules.layers"
    try:
        ember.save(model, tmp_path / "old.pt")
    finally:
        nn.Linear.__module__ = real
    assert "ember.nn.modules.layers.Linear" in _globals_of(tmp_path / "old.pt")
    with ser.safe_globals([nn.Sequential, nn.Linear]):
        with pytest.raises(pickle.UnpicklingError, match="ember.nn.modules.layers.Linear"):
            ember.load(tmp_path / "old.pt")
    ser.add_safe_globals([nn.Sequential, (nn.Linear, "ember.nn.modules.layers.Linear")])
    loaded = ember.load(tmp_path / "old.pt")
    assert type(loaded[0]) is nn.Linear
    assert bool((loaded[0].weight == model[0].weight).all())


@pytest.mark.skipif(torch is None, reason="needs torch")
def test_torch_saved_now_loads(tmp_path):
    # a fresh file from the installed torch (another process, so nothing
    # here can come from torch's classes)
    path = tmp_path / "fresh.pt"
    script = os.path.join(DATA, "make_torch_whole_models.py")
    subprocess.run([sys.executable, script, str(path)], check=True, timeout=300)
    _check_loaded(ember.load(path, weights_only=False))
