"""ember.utils.trainer on the shipped digits: the Trainer with ember-vision
train's recipe (LeNet, Adam with a one-cycle schedule stepped by a plugin,
15 epochs of 32) reaches the test accuracy the command reaches; its tqdm
bar and curves PNG (tqdm and Pillow are ember-vision's dependencies)."""
import io
import os

from PIL import Image

import ember
import ember.nn as nn
import ember.optim as optim
from ember.utils.data import DataLoader, TensorDataset
from ember.utils.trainer import (CurvesPlot, LossMonitor, ProgressBar, SchedulerStep, Trainer,
                                 Validation)
from ember.vision import datasets, models, train

EPOCHS = 15


def tensors(is_train):
    d = datasets.Digits(train=is_train)
    spec = train.DATASETS["digits"]
    x = ((d.data.float() / 255 - spec.mean[0]) / spec.std[0]).unsqueeze(1)
    return TensorDataset(x, d.targets)


def test_trainer_reaches_the_command_accuracy_on_digits(tmp_path):
    out = tmp_path / "cmd"
    args = ["--epochs", str(EPOCHS), "--threads", "1", "--out", str(out)]
    assert train.main(args) == 0
    history = ember.load(out / train.CHECKPOINT)["history"]
    command_accuracy = history["test_accuracy"][-1]

    ember.manual_seed(0)
    model = models.lenet(num_classes=10, in_channels=1, image_size=8)
    loader = DataLoader(tensors(True), batch_size=32, shuffle=True)
    opt = optim.Adam(model.parameters(), lr=1e-2)
    trainer = Trainer(model, nn.CrossEntropyLoss(), opt, loader)
    trainer.register_plugin(SchedulerStep(optim.lr_scheduler.OneCycleLR(
        opt, max_lr=1e-2, epochs=EPOCHS, steps_per_epoch=len(loader))))
    trainer.register_plugin(LossMonitor())
    test_loader = DataLoader(tensors(False), batch_size=256)
    validation = trainer.register_plugin(Validation(test_loader))
    bar_text = io.StringIO()
    bar = trainer.register_plugin(ProgressBar(file=bar_text, mininterval=0, leave=True))
    png = tmp_path / "curves" / "curves.png"
    png.parent.mkdir()
    plot = trainer.register_plugin(CurvesPlot(str(png), title="digits"))
    trainer.run(EPOCHS)
    accuracy = validation.history[-1]["accuracy"]
    assert command_accuracy > 0.95
    assert accuracy >= command_accuracy - 0.01, (accuracy, command_accuracy)
    assert trainer.stats["loss"]["epoch_mean"] < 0.1
    # one bar per epoch, each run to its end with the loss shown
    steps = len(loader)
    assert bar_text.getvalue().count(f"{steps}/{steps}") >= EPOCHS and bar.bar is None
    assert "epoch 15" in bar_text.getvalue() and "loss=" in bar_text.getvalue()
    # the curves of all epochs, both loss series and the accuracy drawn
    assert len(plot.history["validation_accuracy"]) == EPOCHS
    assert plot.history["validation_accuracy"][-1] == accuracy
    with Image.open(png) as image:
        assert image.format == "PNG" and image.size == (960, 310)
        colours = {c for _, c in image.convert("RGB").getcolors(1 << 20)}
    assert (31, 100, 180) in colours and (230, 120, 20) in colours
    assert os.listdir(png.parent) == ["curves.png"]
