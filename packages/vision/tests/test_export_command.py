"""`ember-vision export`, and a torchvision-named ResNet-18 checkpoint
exported through it: onnxruntime's logits equal Ember's."""
import numpy as np
import pytest

import ember
from ember.vision import models
from ember.vision.__main__ import main

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")


def _torchvision_named_state(seed=0):
    """A ResNet-18 state_dict with torchvision's key names: written by
    torch.save from a torch model when torch is installed, else from
    ember.vision's resnet18, whose names are torchvision's."""
    try:
        import torch
    except ImportError:
        torch = None
    ember.manual_seed(seed)
    state = models.resnet18(num_classes=7).state_dict()
    if torch is not None:   # the same tensors under torch, as a torchvision checkpoint holds
        return {k: torch.from_numpy(v.numpy().copy()) for k, v in state.items()}, torch
    return state, None


def test_torchvision_named_checkpoint(tmp_path, capsys):
    state, torch = _torchvision_named_state()
    ckpt = tmp_path / "resnet18.pth"
    if torch is not None:
        torch.save(state, ckpt)
    else:
        ember.save(state, ckpt)
    assert "layer1.0.conv1.weight" in state and "fc.weight" in state
    out = tmp_path / "r18.onnx"
    assert main(["export", "--model", "resnet18", "--checkpoint", str(ckpt), "--out", str(out),
                 "--image-size", "32", "--dynamic-batch"]) == 0
    text = capsys.readouterr().out
    assert "max abs difference" in text
    diff = float(text.rsplit("difference", 1)[1])
    assert diff < 1e-4
    # the checkpoint's logits computed by Ember
    model = models.resnet18(num_classes=7)
    model.load_state_dict(ember.load(ckpt))
    model.eval()
    x = ember.randn(3, 3, 32, 32)
    with ember.no_grad():
        want = model(x).numpy()
    sess = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    got = sess.run(None, {"input": x.numpy()})[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(want).max()))


def test_export_lenet_and_train_checkpoint(tmp_path, capsys):
    ember.manual_seed(1)
    model = models.lenet(num_classes=4, in_channels=1, image_size=28)
    ckpt = tmp_path / "checkpoint.pt"
    ember.save({"model": model.state_dict(), "epoch": 1}, ckpt)   # ember-vision train's form
    out = tmp_path / "lenet.onnx"
    assert main(["export", "--model", "lenet", "--checkpoint", str(ckpt), "--out", str(out)]) == 0
    assert "max abs difference" in capsys.readouterr().out
    sess = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    assert sess.get_outputs()[0].shape == [1, 4]


def test_export_errors(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["export", "--model", "resnet18"])           # --out missing
    assert "--out" in capsys.readouterr().err
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(SystemExit):
        main(["export", "--model", "resnet18", "--checkpoint", str(bad), "--out",
              str(tmp_path / "x.onnx")])
    assert "cannot read" in capsys.readouterr().err
    ember.save({"fc.weight": ember.zeros(3, 4)}, tmp_path / "other.pt")
    with pytest.raises(SystemExit):
        main(["export", "--model", "resnet18", "--checkpoint", str(tmp_path / "other.pt"),
              "--out", str(tmp_path / "x.onnx")])
    assert "does not fit resnet18" in capsys.readouterr().err
