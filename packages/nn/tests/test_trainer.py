"""ember.utils.trainer: plugins fire at their intervals, monitors publish
what they measure, checkpoints are atomic and resume a run bit for bit,
early stopping and validation."""
import os
import sys

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.optim as optim
from ember.utils.data import DataLoader, TensorDataset
from ember.utils.trainer import (AccuracyMonitor, Checkpoint, EarlyStopping, Logger, LossMonitor,
                                 Plugin, ProgressBar, ProgressMonitor, SchedulerStep,
                                 TimeMonitor, Trainer, Validation)


def make_data(n=60, seed=0):
    g = ember.Generator().manual_seed(seed)
    x = ember.randn(n, 6, generator=g)
    y = (x[:, 0] + x[:, 1] > 0).long() + (x[:, 2] > 1).long()
    return TensorDataset(x, y)


def make_trainer(seed=0, lr=0.05, batch_size=6):
    ember.manual_seed(seed)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 3))
    loader = DataLoader(make_data(), batch_size=batch_size, shuffle=True)
    return Trainer(model, nn.CrossEntropyLoss(), optim.Adam(model.parameters(), lr=lr), loader)


class Recorder(Plugin):
    def __init__(self, interval, log):
        super().__init__(interval)
        self.log = log

    def iteration(self, i, input, target, output, loss):
        assert output.shape == (len(input), 3) and loss.dim() == 0
        self.log.append(("iteration", i, id(self)))

    def batch(self, i, input, target):
        self.log.append(("batch", i, id(self)))

    def update(self, i, model):
        self.log.append(("update", i, id(self)))

    def epoch(self, e):
        self.log.append(("epoch", e, id(self)))


def test_plugins_fire_at_their_intervals():
    trainer = make_trainer()          # 10 batches an epoch
    log = []
    a = trainer.register_plugin(Recorder([(3, "iteration"), (2, "epoch"), (4, "batch"),
                                          (5, "update")], log))
    b = trainer.register_plugin(Recorder([(3, "iteration")], log))
    trainer.run(4)
    assert trainer.iterations == 40 and trainer.epoch == 4

    def times(unit, who):
        return [i for u, i, p in log if u == unit and p == id(who)]
    assert times("iteration", a) == list(range(3, 41, 3)) == times("iteration", b)
    assert times("epoch", a) == [2, 4]
    assert times("batch", a) == list(range(4, 41, 4))
    assert times("update", a) == list(range(5, 41, 5))
    # due at the same time: registration order
    its = [p for u, i, p in log if u == "iteration" and i == 3]
    assert its == [id(a), id(b)]


def test_monitors_and_logger():
    trainer = make_trainer()
    losses = []

    class Spy(Plugin):
        def __init__(self):
            super().__init__([(1, "iteration")])

        def iteration(self, i, input, target, output, loss):
            losses.append(float(loss))
    lines = []
    trainer.register_plugin(Spy())
    for p in (LossMonitor(), AccuracyMonitor(), ProgressMonitor(), TimeMonitor()):
        trainer.register_plugin(p)
    trainer.register_plugin(Logger(["loss", "accuracy.epoch_mean", "progress"],
                                   print_fn=lines.append))
    trainer.run(2)
    stats = trainer.stats
    assert stats["loss"]["last"] == losses[-1]
    assert stats["loss"]["epoch_mean"] == pytest.approx(np.mean(losses[10:]))
    running = losses[0]
    for v in losses[1:]:
        running = 0.7 * running + 0.3 * v
    assert stats["loss"]["running_avg"] == pytest.approx(running)
    assert 0 <= stats["accuracy"]["epoch_mean"] <= 1
    assert stats["progress"]["samples_used"] == 60 and stats["progress"]["percent"] == 100.0
    assert stats["time"]["last"] >= 0
    assert len(lines) == 2 and lines[1].startswith("epoch 2: loss: last ")
    assert "accuracy: epoch_mean 0." in lines[1] and "progress: percent 100.0" in lines[0]


def _snapshot(trainer, validation):
    params = [p.detach().numpy().copy() for p in trainer.model.parameters()]
    return params, [h["loss"] for h in validation.history], trainer.stats["loss"]["epoch_mean"]


def _full_trainer(seed, path):
    trainer = make_trainer(seed)
    trainer.register_plugin(LossMonitor())
    validation = trainer.register_plugin(Validation(DataLoader(make_data(30, 1), batch_size=7)))
    trainer.register_plugin(Checkpoint(path))
    return trainer, validation


def test_resume_from_checkpoint_is_bitwise_identical(tmp_path):
    path = str(tmp_path / "run.ckpt")
    straight, v1 = _full_trainer(0, str(tmp_path / "straight.ckpt"))
    straight.run(5)

    first, _ = _full_trainer(0, path)
    first.run(2)
    resumed, v2 = _full_trainer(123, path)      # other initial weights: all come from the file
    resumed.load_checkpoint(path)
    assert resumed.epoch == 2 and resumed.iterations == 20
    resumed.run(5)
    a, b = _snapshot(straight, v1), _snapshot(resumed, v2)
    for x, y in zip(a[0], b[0]):
        np.testing.assert_array_equal(x, y)
    assert a[1] == b[1] and len(a[1]) == 5 and a[2] == b[2]
    assert sorted(os.listdir(tmp_path)) == ["run.ckpt", "straight.ckpt"]


def test_checkpoint_save_is_atomic(tmp_path, monkeypatch):
    path = str(tmp_path / "c.ckpt")
    trainer, _ = _full_trainer(0, path)
    trainer.run(1)
    before = open(path, "rb").read()

    def broken(obj, f, *a, **k):
        f.write(b"partial")
        raise OSError("disk full")
    monkeypatch.setattr(ember, "save", broken)
    with pytest.raises(OSError, match="disk full"):
        trainer.run(2)
    assert open(path, "rb").read() == before and os.listdir(tmp_path) == ["c.ckpt"]


def test_load_checkpoint_refusals(tmp_path):
    path = str(tmp_path / "c.ckpt")
    trainer, _ = _full_trainer(0, path)
    trainer.run(1)
    other = make_trainer()
    with pytest.raises(ValueError, match="holds 3 plugins, this trainer has 0"):
        other.load_checkpoint(path)
    ember.save({"a": 1}, str(tmp_path / "x.pt"))
    with pytest.raises(ValueError, match="is not a Trainer checkpoint"):
        other.load_checkpoint(str(tmp_path / "x.pt"))


def test_early_stopping_on_validation():
    trainer = make_trainer(lr=0.0)        # nothing improves
    trainer.register_plugin(Validation(DataLoader(make_data(30, 1), batch_size=10)))
    stopper = trainer.register_plugin(EarlyStopping("validation", "loss", patience=2))
    trainer.run(10)
    assert trainer.epoch == 3 and stopper.best_epoch == 1
    trainer = make_trainer(lr=0.05)
    trainer.register_plugin(Validation(DataLoader(make_data(30, 1), batch_size=10)))
    trainer.register_plugin(EarlyStopping("validation", "accuracy", patience=50, mode="max"))
    trainer.run(4)
    assert trainer.epoch == 4
    with pytest.raises(ValueError, match="mode must be 'min' or 'max'"):
        EarlyStopping(mode="lowest")
    trainer = make_trainer()
    trainer.register_plugin(EarlyStopping())
    with pytest.raises(KeyError, match=r"trainer.stats\['validation'\]\['loss'\] is not set"):
        trainer.run(1)


def test_scheduler_step_per_update_or_epoch_and_resumed(tmp_path):
    trainer = make_trainer()                  # 10 batches an epoch
    sched = optim.lr_scheduler.StepLR(trainer.optimizer, step_size=7, gamma=0.5)
    trainer.register_plugin(SchedulerStep(sched))
    trainer.run(2)
    assert sched.last_epoch == 20 and trainer.optimizer.param_groups[0]["lr"] == 0.05 * 0.5 ** 2
    trainer = make_trainer()
    sched = optim.lr_scheduler.StepLR(trainer.optimizer, step_size=1, gamma=0.5)
    trainer.register_plugin(SchedulerStep(sched, every=2, unit="epoch"))
    trainer.run(5)
    assert sched.last_epoch == 2
    # a checkpoint keeps the scheduler's state: a resumed run goes on from it
    path = str(tmp_path / "s.ckpt")

    def build():
        t = make_trainer()
        s = optim.lr_scheduler.OneCycleLR(t.optimizer, max_lr=0.1, epochs=3,
                                          steps_per_epoch=10)
        t.register_plugin(SchedulerStep(s))
        t.register_plugin(Checkpoint(path))
        return t, s
    straight, s1 = build()
    straight.run(3)
    first, _ = build()
    first.run(1)
    resumed, s2 = build()
    resumed.load_checkpoint(path)
    assert s2.last_epoch == 10
    resumed.run(3)
    assert s2.last_epoch == s1.last_epoch == 30
    assert resumed.optimizer.param_groups[0]["lr"] == straight.optimizer.param_groups[0]["lr"]
    with pytest.raises(ValueError, match="unit must be 'update' or 'epoch'"):
        SchedulerStep(sched, unit="iteration")


def test_validation_of_another_module_keeps_predictions():
    trainer = make_trainer()
    data = make_data(30, 1)
    other = nn.Sequential(nn.Linear(6, 3))
    validation = trainer.register_plugin(Validation(DataLoader(data, batch_size=8),
                                                    model=other))
    trainer.run(1)
    with ember.no_grad():
        want = other(data.tensors[0]).argmax(1)
    assert validation.predictions.tolist() == want.tolist()
    acc = (want == data.tensors[1]).float().mean().item()
    assert validation.history[0]["accuracy"] == pytest.approx(acc)
    assert other.training          # back in training mode


# the bar and the PNG themselves are checked in ember-vision's tests, where
# tqdm and Pillow are dependencies
def test_progress_bar_without_tqdm(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    with pytest.raises(ImportError, match="ProgressBar needs the tqdm package: pip install tqdm"):
        ProgressBar()


def test_refusals():
    trainer = make_trainer()
    with pytest.raises(ValueError, match="trigger_interval entries must be"):
        trainer.register_plugin(Recorder([(0, "epoch")], []))
    with pytest.raises(ValueError, match="trigger_interval entries must be"):
        trainer.register_plugin(Recorder([(1, "week")], []))
    with pytest.raises(ValueError, match="no dataset was given"):
        Trainer(trainer.model, trainer.criterion, trainer.optimizer).run(1)
    trainer.dataset = [ember.zeros(3, 6)]
    with pytest.raises(ValueError, match="expected the dataset to give \\(input, target\\)"):
        trainer.run(1)


def test_curves_plot_without_pillow(tmp_path, monkeypatch):
    from ember.utils.trainer import CurvesPlot
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(ImportError, match="needs the Pillow package: pip install pillow"):
        CurvesPlot(str(tmp_path / "curves.png"))
