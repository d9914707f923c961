"""`ember-vision train --device cuda`: the default run on a CUDA device
(or ember-thc's emulated device), a checkpoint that loads back onto the
device and on the CPU, and resuming there.  Skips without a device."""
import pytest

import ember
from ember.vision import train

pytestmark = pytest.mark.skipif(not ember.cuda.is_available(),
                                reason="no CUDA device (nor ember-thc's emulated device)")


def test_training_on_the_device(tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["--epochs", "2", "--limit", "400", "--batch-size", "32", "--device", "cuda",
            "--out", str(out)]
    assert train.main(argv[:1] + ["1"] + argv[2:]) == 0
    assert train.main(argv + ["--resume"]) == 0
    printed = capsys.readouterr().out
    assert "device cuda" in printed and "epoch 2/2" in printed
    state = ember.load(out / train.CHECKPOINT)
    assert state["epoch"] == 2
    assert next(iter(state["model"].values())).is_cuda
    cpu_state = ember.load(out / train.CHECKPOINT, map_location="cpu")
    assert next(iter(cpu_state["model"].values())).device.type == "cpu"
    assert state["history"]["test_accuracy"][-1] > 0.3   # well above chance (0.1)
