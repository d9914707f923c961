"""ember.utils.trainer on the shipped digits: the Trainer with ember-vision
train's recipe (LeNet, Adam with a one-cycle schedule stepped by a plugin,
15 epochs of 32) reaches the test accuracy the command reaches."""
import ember
import ember.nn as nn
import ember.optim as optim
from ember.utils.data import DataLoader, TensorDataset
from ember.utils.trainer import LossMonitor, Plugin, Trainer, Validation
from ember.vision import datasets, models, train

EPOCHS = 15


def tensors(is_train):
    d = datasets.Digits(train=is_train)
    spec = train.DATASETS["digits"]
    x = ((d.data.float() / 255 - spec.mean[0]) / spec.std[0]).unsqueeze(1)
    return TensorDataset(x, d.targets)


class StepScheduler(Plugin):
    def __init__(self, scheduler):
        super().__init__([(1, "update")])
        self.scheduler = scheduler

    def update(self, i, model):
        self.scheduler.step()


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
    trainer.register_plugin(StepScheduler(optim.lr_scheduler.OneCycleLR(
        opt, max_lr=1e-2, epochs=EPOCHS, steps_per_epoch=len(loader))))
    trainer.register_plugin(LossMonitor())
    test_loader = DataLoader(tensors(False), batch_size=256)
    validation = trainer.register_plugin(Validation(test_loader))
    trainer.run(EPOCHS)
    accuracy = validation.history[-1]["accuracy"]
    assert command_accuracy > 0.95
    assert accuracy >= command_accuracy - 0.01, (accuracy, command_accuracy)
    assert trainer.stats["loss"]["epoch_mean"] < 0.1
