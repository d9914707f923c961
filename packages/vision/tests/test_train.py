"""The training command on tiny runs: outputs, resume, reproducibility and
bad options."""
import gzip
import pickle
import struct

import numpy as np
import pytest
from PIL import Image

import ember
from ember.vision import __main__ as command
from ember.vision import train

TINY = ["--epochs", "1", "--limit", "48", "--batch-size", "16", "--threads", "1"]


def run(tmp_path, *extra, name="run"):
    out = tmp_path / name
    assert train.main([*TINY, "--out", str(out), *extra]) == 0
    return out, ember.load(out / train.CHECKPOINT)


def history_of(out):
    return ember.load(out / train.CHECKPOINT)["history"]


def test_tiny_run_writes_checkpoint_and_report(tmp_path, capsys):
    out, state = run(tmp_path)
    printed = capsys.readouterr().out
    assert "epoch 1/1: train loss" in printed and "test accuracy" in printed
    assert "final test accuracy" in printed and str(out / train.REPORT) in printed
    assert state["epoch"] == 1
    assert set(state) >= {"model", "optimizer", "scheduler", "history", "args", "rng_state"}
    for key in ("train_loss", "test_loss", "test_accuracy", "seconds"):
        assert len(state["history"][key]) == 1
    assert 0.0 <= state["history"]["test_accuracy"][0] <= 1.0
    assert state["args"]["limit"] == 48 and state["args"]["model"] == "lenet"
    # the checkpoint's model is usable as weights= of the model constructor
    from ember.vision import models
    model = models.lenet(image_size=8, weights=out / train.CHECKPOINT)
    assert tuple(model(ember.zeros(1, 1, 8, 8)).shape) == (1, 10)
    with Image.open(out / train.REPORT) as png:
        assert png.format == "PNG" and png.size[0] == 960 and png.size[1] > 300
        pixels = np.asarray(png.convert("RGB"))
    assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 10        # not a blank page


def test_report_marks_right_and_wrong_predictions(tmp_path):
    from ember.vision._report import GREEN, RED, save_report
    history = {"train_loss": [2.0, 1.0], "test_loss": [1.5, 1.2], "test_accuracy": [0.5, 0.75]}
    images = np.random.default_rng(0).random((4, 1, 8, 8))
    for predictions, present, absent in (([1, 2, 3, 4], GREEN, RED), ([0, 0, 0, 0], RED, GREEN)):
        path = tmp_path / "report.png"
        save_report(path, history, images, [1, 2, 3, 4], predictions, list("0123456789"), "t")
        colours = {tuple(c) for c in np.asarray(Image.open(path).convert("RGB")).reshape(-1, 3)}
        assert present in colours and absent not in colours
    blue = np.zeros((2, 3, 8, 8))
    blue[:, 2] = 1.0                                    # colour images stay in colour
    save_report(path, history, blue, [0, 1], [0, 1], ["a", "b"], "t")
    colours = {tuple(c) for c in np.asarray(Image.open(path).convert("RGB")).reshape(-1, 3)}
    assert (0, 0, 255) in colours


def test_same_seed_same_history(tmp_path):
    first, _ = run(tmp_path, "--seed", "3", name="a")
    again, _ = run(tmp_path, "--seed", "3", name="b")
    other, _ = run(tmp_path, "--seed", "4", name="c")
    assert history_of(first)["train_loss"] == history_of(again)["train_loss"]
    assert history_of(first)["test_accuracy"] == history_of(again)["test_accuracy"]
    assert history_of(first)["train_loss"] != history_of(other)["train_loss"]


def test_compile_trains_through_ember_compile(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path / "kernels"))
    out, state = run(tmp_path, "--compile", name="compiled")
    printed = capsys.readouterr().out
    assert "ember.compile:" in printed and "x eager" in printed
    plain, plain_state = run(tmp_path, name="plain")
    # the same seed, the same updates: compiled training changes nothing
    for k, v in plain_state["model"].items():
        np.testing.assert_allclose(state["model"][k].numpy(), v.numpy(), rtol=1e-4, atol=1e-6)


def test_resume_continues_at_the_next_epoch(tmp_path, capsys, monkeypatch):
    options = ["--epochs", "2", "--limit", "48", "--batch-size", "16", "--seed", "5"]
    whole = tmp_path / "whole"
    assert train.main([*options, "--out", str(whole)]) == 0
    expected = history_of(whole)

    # stop the second run right after its first checkpoint, as an interrupt would
    save = train._save_checkpoint

    def save_then_stop(trainer, path):
        save(trainer, path)
        raise KeyboardInterrupt

    parts = tmp_path / "parts"
    monkeypatch.setattr(train, "_save_checkpoint", save_then_stop)
    with pytest.raises(KeyboardInterrupt):
        train.main([*options, "--out", str(parts)])
    monkeypatch.setattr(train, "_save_checkpoint", save)
    assert ember.load(parts / train.CHECKPOINT)["epoch"] == 1
    capsys.readouterr()

    assert train.main([*options, "--out", str(parts), "--resume"]) == 0
    printed = capsys.readouterr().out
    assert "after epoch 1" in printed and "epoch 2/2" in printed and "epoch 1/2" not in printed
    resumed = ember.load(parts / train.CHECKPOINT)
    assert resumed["epoch"] == 2
    assert resumed["history"]["train_loss"] == pytest.approx(expected["train_loss"], rel=1e-6)
    assert resumed["history"]["test_accuracy"] == expected["test_accuracy"]


def test_resume_for_more_epochs_and_from_a_path(tmp_path, capsys):
    out, _ = run(tmp_path)
    longer = tmp_path / "longer"
    options = [*TINY, "--epochs", "2", "--out", str(longer)]
    assert train.main([*options, "--resume", str(out / train.CHECKPOINT)]) == 0
    state = ember.load(longer / train.CHECKPOINT)
    assert state["epoch"] == 2 and len(state["history"]["train_loss"]) == 2
    assert state["history"]["train_loss"][0] == history_of(out)["train_loss"][0]


def _write_idx(path, array):
    magic = {1: 2049, 3: 2051}[array.ndim]
    header = struct.pack(">I", magic) + b"".join(struct.pack(">I", d) for d in array.shape)
    with gzip.open(path, "wb") as f:
        f.write(header + array.astype(np.uint8).tobytes())


def test_mnist_files_in_a_dataset_folder(tmp_path, capsys):
    """``--root R`` also finds the IDX files in ``R/mnist/`` (the layout of a
    folder holding several datasets)."""
    rng = np.random.default_rng(0)
    folder = tmp_path / "data" / "mnist"
    folder.mkdir(parents=True)
    for prefix, n in (("train", 40), ("t10k", 20)):
        _write_idx(folder / f"{prefix}-images-idx3-ubyte.gz", rng.integers(0, 256, (n, 28, 28)))
        _write_idx(folder / f"{prefix}-labels-idx1-ubyte.gz", rng.integers(0, 10, n))
    histories = []
    for name, workers in (("a", "0"), ("b", "2"), ("c", "2")):
        out = tmp_path / name
        assert train.main(["--dataset", "mnist", "--root", str(tmp_path / "data"),
                           "--epochs", "2", "--batch-size", "20", "--workers", workers,
                           "--out", str(out)]) == 0
        assert "mnist: 40 training and 20 test images" in capsys.readouterr().out
        assert (out / train.REPORT).exists()
        histories.append(history_of(out)["train_loss"])
    # random crops in worker processes repeat under the same seed
    assert histories[1] == histories[2]


def test_cifar10_batches(tmp_path, capsys):
    """Colour images: LeNet takes 3×32×32, the report shows them in colour."""
    rng = np.random.default_rng(0)
    folder = tmp_path / "data" / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        batch = {"data": rng.integers(0, 256, (4, 3072)).astype(np.uint8),
                 "labels": rng.integers(0, 10, 4).tolist(), "batch_label": name}
        (folder / name).write_bytes(pickle.dumps(batch, protocol=2))
    names = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship",
             "truck"]
    (folder / "batches.meta").write_bytes(pickle.dumps({"label_names": names}, protocol=2))
    out = tmp_path / "out"
    assert train.main(["--dataset", "cifar10", "--root", str(tmp_path / "data"), "--epochs", "1",
                       "--out", str(out)]) == 0
    assert "cifar10: 20 training and 4 test images" in capsys.readouterr().out
    state = ember.load(out / train.CHECKPOINT)
    assert tuple(state["model"]["conv1.weight"].shape) == (6, 3, 5, 5)
    assert tuple(state["model"]["fc1.weight"].shape) == (120, 16 * 6 * 6)
    assert (out / train.REPORT).exists()


def test_an_imagenet_model_on_grey_digits(tmp_path, capsys):
    out, state = run(tmp_path, "--model", "squeezenet1_1", "--limit", "16")
    assert "squeezenet1_1" in capsys.readouterr().out
    assert state["model"]["features.0.weight"].shape[1] == 3     # grey repeated to RGB


@pytest.mark.parametrize("argv,message", [
    (["--epochs", "0"], "--epochs: must be at least 1, got 0"),
    (["--batch-size", "many"], "--batch-size: invalid int value: 'many'"),
    (["--lr", "-0.1"], "--lr: must be a positive number"),
    (["--workers", "-1"], "--workers: must be at least 0"),
    (["--limit", "0"], "--limit: must be at least 1"),
    (["--dataset", "imagenet"], "--dataset: invalid choice: 'imagenet'"),
    (["--model", "resnet7"], "--model: invalid choice: 'resnet7'"),
    (["--device", "tpu"], "--device: invalid choice: 'tpu'"),
    (["--frobnicate"], "unrecognized arguments: --frobnicate"),
])
def test_bad_options_are_argparse_errors(argv, message, capsys):
    with pytest.raises(SystemExit) as stop:
        train.main(argv)
    assert stop.value.code == 2
    assert message in capsys.readouterr().err


def test_errors_found_after_parsing(tmp_path, capsys):
    def fails(argv, message):
        with pytest.raises(SystemExit) as stop:
            train.main(argv)
        assert stop.value.code == 2
        assert message in capsys.readouterr().err

    fails(["--dataset", "mnist", "--root", str(tmp_path), "--out", str(tmp_path / "o")],
          "--dataset mnist: cannot read the files under --root")
    fails(["--resume", "--out", str(tmp_path / "nothing")], "--resume: no checkpoint at")
    (tmp_path / "a-file").write_text("")
    fails(["--out", str(tmp_path / "a-file")], "exists and is not a folder")
    out, _ = run(tmp_path)
    fails([*TINY, "--out", str(out), "--resume", "--model", "resnet18"],
          "--resume: the checkpoint was trained with --model lenet, not resnet18")
    fails([*TINY, "--out", str(out), "--resume"], "already reached epoch 1 of --epochs 1")
    if not ember.cuda.is_available():
        fails(["--device", "cuda"], "--device cuda: no CUDA device is available")


def test_command_dispatch(capsys):
    with pytest.raises(SystemExit) as stop:
        command.main(["train", "--help"])
    assert stop.value.code == 0 and "--dataset" in capsys.readouterr().out
    assert command.main(["fly"]) == 2
    assert "unknown command 'fly'" in capsys.readouterr().err


def test_report_shows_mistakes_first():
    class Labelled:
        targets = ember.arange(100) % 10

        def __len__(self):
            return 100

    predictions = Labelled.targets.clone()
    predictions[[7, 42, 43, 98]] = 0
    shown = train._shown_indices(Labelled(), predictions, count=12)
    assert len(shown) == 12 == len(set(shown))
    assert {7, 42, 43, 98} <= set(shown)
    few = train._shown_indices(Labelled(), Labelled.targets, count=4)
    assert few == [0, 33, 66, 99]                   # no mistakes: spread evenly
