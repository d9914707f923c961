"""The Trainer's plugins.  A plugin declares ``trigger_interval`` (a list of
``(n, unit)``) and has a method named after each unit it uses; what it
measures goes into ``trainer.stats[stat_name]``.  ``state_dict`` holds what
a checkpoint must keep for a resumed run to continue identically."""
import copy
import math
import sys
import time

import ember

__all__ = ["Plugin", "Monitor", "ProgressMonitor", "LossMonitor", "TimeMonitor",
           "AccuracyMonitor", "Logger", "ProgressBar", "Checkpoint", "EarlyStopping",
           "Validation", "CurvesPlot", "SchedulerStep"]


class Plugin:
    _state = ()     # the attributes a checkpoint keeps

    def __init__(self, interval=None):
        self.trigger_interval = [] if interval is None else list(interval)
        self.trainer = None

    def register(self, trainer):
        self.trainer = trainer

    def state_dict(self):
        return {k: copy.deepcopy(getattr(self, k)) for k in self._state}

    def load_state_dict(self, state):
        for k, v in state.items():
            setattr(self, k, copy.deepcopy(v))


class Monitor(Plugin):
    """Publishes a value measured each iteration under
    ``trainer.stats[stat_name]``: 'last', 'running_avg' (exponential, by
    ``smoothing``) and, at each epoch's end, 'epoch_mean'."""
    stat_name = None
    _state = ("_sum", "_count", "_first")

    def __init__(self, running_average=True, epoch_average=True, smoothing=0.7,
                 precision=None, number_format=None, unit=""):
        super().__init__([(1, "iteration"), (1, "epoch")])
        self.with_running_average, self.with_epoch_average = running_average, epoch_average
        self.smoothing = smoothing
        self.number_format = number_format or (f".{precision}f" if precision else "")
        self.unit = unit
        self._sum, self._count, self._first = 0.0, 0, True

    def register(self, trainer):
        super().register(trainer)
        stats = trainer.stats.setdefault(self.stat_name, {})
        stats["log_format"] = f"{{{self.number_format and ':' + self.number_format}}}"
        stats["log_unit"] = self.unit

    def _get_value(self, *args):
        raise NotImplementedError

    def iteration(self, *args):
        stats = self.trainer.stats.setdefault(self.stat_name, {})
        value = self._get_value(*args)
        stats["last"] = value
        if self.with_epoch_average:
            self._sum += value
            self._count += 1
        if self.with_running_average:
            prev = value if self._first else stats.get("running_avg", value)
            stats["running_avg"] = self.smoothing * prev + (1 - self.smoothing) * value
            self._first = False

    def epoch(self, *args):
        if self.with_epoch_average:
            stats = self.trainer.stats.setdefault(self.stat_name, {})
            stats["epoch_mean"] = self._sum / self._count if self._count else math.nan
            self._sum, self._count = 0.0, 0


class LossMonitor(Monitor):
    stat_name = "loss"

    def __init__(self, **kw):
        kw.setdefault("precision", 4)
        super().__init__(**kw)

    def _get_value(self, i, input, target, output, loss):
        return float(loss)


class AccuracyMonitor(Monitor):
    """The fraction of a batch whose argmax over dim 1 is the target."""
    stat_name = "accuracy"

    def __init__(self, **kw):
        kw.setdefault("precision", 4)
        super().__init__(**kw)

    def _get_value(self, i, input, target, output, loss):
        return float((output.argmax(1) == target).float().mean())


class TimeMonitor(Monitor):
    """Seconds per iteration (wall clock between iterations)."""
    stat_name = "time"
    _state = ()

    def __init__(self, **kw):
        kw.setdefault("precision", 3)
        kw.setdefault("unit", "s")
        super().__init__(**kw)
        self._last = None

    def register(self, trainer):
        super().register(trainer)
        self._last = time.perf_counter()

    def _get_value(self, *args):
        now = time.perf_counter()
        value, self._last = now - self._last, now
        return value


class ProgressMonitor(Plugin):
    """``stats['progress']``: samples and batches used in this epoch and
    its percentage (when the dataset has a length)."""
    stat_name = "progress"
    _state = ("samples_used", "batches_used")

    def __init__(self):
        super().__init__([(1, "iteration"), (1, "epoch")])
        self.samples_used = self.batches_used = 0

    def register(self, trainer):
        super().register(trainer)
        trainer.stats.setdefault(self.stat_name, {})

    def iteration(self, i, input, target, *rest):
        self.samples_used += len(input)
        self.batches_used += 1
        stats = self.trainer.stats[self.stat_name]
        stats.update(samples_used=self.samples_used, batches_used=self.batches_used)
        total = _length(self.trainer.dataset)
        if total:
            stats["percent"] = 100.0 * self.batches_used / total

    def epoch(self, epoch):
        self.samples_used = self.batches_used = 0


def _length(dataset):
    try:
        return len(dataset)
    except TypeError:
        return None


class Logger(Plugin):
    """Prints ``fields`` of ``trainer.stats`` (names, or 'name.key' for one
    key) every ``interval`` units; ``print_fn`` receives each line."""

    def __init__(self, fields, interval=None, print_fn=print):
        super().__init__(interval or [(1, "epoch")])
        self.fields, self.print_fn = list(fields), print_fn

    def _describe(self, name):
        stat_name, _, key = name.partition(".")
        stats = self.trainer.stats.get(stat_name, {})
        fmt, unit = stats.get("log_format", "{}"), stats.get("log_unit", "")
        keys = [key] if key else [k for k in ("last", "running_avg", "epoch_mean", "loss",
                                              "accuracy", "percent") if k in stats]
        parts = [f"{k} {fmt.format(stats[k])}{unit}" for k in keys if k in stats]
        return f"{stat_name}: " + ", ".join(parts) if parts else None

    def _log(self, unit, time):
        described = [d for d in map(self._describe, self.fields) if d]
        self.print_fn(f"{unit} {time}: " + "  ".join(described))

    def iteration(self, i, *args):
        self._log("iteration", i)

    def batch(self, i, *args):
        self._log("batch", i)

    def update(self, i, *args):
        self._log("update", i)

    def epoch(self, e):
        self._log("epoch", e)


class ProgressBar(Plugin):
    """A tqdm bar over each epoch's batches showing the batch loss (tqdm is
    imported when the plugin is made; ``tqdm_args`` go to tqdm).  Its label
    is 'epoch N', or 'epoch N/epochs' when ``epochs`` is given."""

    def __init__(self, file=None, epochs=None, **tqdm_args):
        super().__init__([(1, "iteration"), (1, "epoch")])
        try:
            from tqdm import tqdm
        except ImportError:
            raise ImportError("ProgressBar needs the tqdm package: pip install tqdm") from None
        self._tqdm, self._file, self._args = tqdm, file, tqdm_args
        self.epochs = epochs
        self.bar = None

    def iteration(self, i, input, target, output, loss):
        if self.bar is None:
            label = f"epoch {self.trainer.epoch + 1}"
            if self.epochs is not None:
                label += f"/{self.epochs}"
            args = dict(unit="batch", leave=False, desc=label)
            args.update(self._args)
            self.bar = self._tqdm(total=_length(self.trainer.dataset),
                                  file=self._file or sys.stderr, **args)
        self.bar.update(1)
        self.bar.set_postfix(loss=f"{float(loss):.4f}", refresh=False)

    def epoch(self, epoch):
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class Checkpoint(Plugin):
    """Saves the trainer's state to ``path`` every ``every`` epochs, after
    all of that epoch's plugins have run (``Trainer.save_checkpoint``)."""

    def __init__(self, path, every=1):
        super().__init__([(every, "epoch")])
        self.path = path

    def epoch(self, epoch):
        self.trainer.request_checkpoint(self.path)


class SchedulerStep(Plugin):
    """Steps a learning-rate scheduler after every ``every`` optimizer
    updates (``unit='update'``, for per-batch schedules such as OneCycleLR)
    or every ``every`` epochs (``unit='epoch'``); a checkpoint keeps the
    scheduler's state.  For schedulers whose ``step()`` takes no argument
    (ReduceLROnPlateau wants a metric: step it from your own plugin)."""

    def __init__(self, scheduler, every=1, unit="update"):
        if unit not in ("update", "epoch"):
            raise ValueError(f"SchedulerStep: unit must be 'update' or 'epoch', got {unit!r}")
        super().__init__([(every, unit)])
        self.scheduler = scheduler

    def update(self, i, model):
        self.scheduler.step()

    def epoch(self, epoch):
        self.scheduler.step()

    def state_dict(self):
        return {"scheduler": self.scheduler.state_dict()}

    def load_state_dict(self, state):
        self.scheduler.load_state_dict(state["scheduler"])


class Validation(Plugin):
    """Evaluates the model on ``dataset`` every ``every`` epochs, in eval
    mode without gradients: ``stats['validation']`` holds 'loss' (the
    criterion's batch values weighted by batch size) and 'accuracy' (argmax
    over dim 1), and ``history`` one entry per evaluation; ``predictions``
    holds the last evaluation's argmax per sample (on the CPU).  ``model``
    is the module evaluated when it is not the trainer's (the module inside
    a DistributedDataParallel or compiled wrapper, say, evaluated by one
    process alone)."""
    stat_name = "validation"
    _state = ("history",)

    def __init__(self, dataset, every=1, accuracy=True, model=None):
        super().__init__([(every, "epoch")])
        self.dataset, self.with_accuracy, self.model = dataset, accuracy, model
        self.history = []
        self.predictions = None

    def epoch(self, epoch):
        model = self.model if self.model is not None else self.trainer.model
        criterion = self.trainer.criterion
        model.eval()
        total, correct, count, predictions = 0.0, 0, 0, []
        try:
            with ember.no_grad():
                for input, target in self.dataset:
                    output = model(input)
                    total += float(criterion(output, target)) * len(target)
                    if self.with_accuracy:
                        predicted = output.argmax(1)
                        correct += int((predicted == target).sum())
                        predictions.append(predicted.cpu())
                    count += len(target)
        finally:
            model.train()
        if count == 0:
            raise ValueError("Validation: the validation dataset gave no samples")
        if self.with_accuracy:
            self.predictions = ember.cat(predictions)
        result = {"epoch": epoch, "loss": total / count}
        if self.with_accuracy:
            result["accuracy"] = correct / count
        self.history.append(result)
        self.trainer.stats[self.stat_name] = dict(result, log_format="{:.4f}", log_unit="")


class EarlyStopping(Plugin):
    """Stops the run when ``trainer.stats[stat][key]`` has not improved by
    more than ``min_delta`` for ``patience`` epochs (``mode`` 'min' or
    'max').  Register it after the plugin that computes the value."""
    _state = ("best", "bad_epochs", "best_epoch")

    def __init__(self, stat="validation", key="loss", patience=3, mode="min", min_delta=0.0):
        super().__init__([(1, "epoch")])
        if mode not in ("min", "max"):
            raise ValueError(f"EarlyStopping: mode must be 'min' or 'max', got {mode!r}")
        if patience < 1:
            raise ValueError(f"EarlyStopping: patience must be at least 1, got {patience}")
        self.stat, self.key, self.patience, self.mode, self.min_delta = \
            stat, key, patience, mode, min_delta
        self.best, self.bad_epochs, self.best_epoch = None, 0, None

    def epoch(self, epoch):
        stats = self.trainer.stats.get(self.stat, {})
        if self.key not in stats:
            raise KeyError(f"EarlyStopping: trainer.stats[{self.stat!r}][{self.key!r}] is not "
                           f"set at epoch {epoch}; register the plugin computing it first")
        value = float(stats[self.key])
        better = self.best is None or (value < self.best - self.min_delta if self.mode == "min"
                                       else value > self.best + self.min_delta)
        if better:
            self.best, self.best_epoch, self.bad_epochs = value, epoch, 0
        else:
            self.bad_epochs += 1
            if self.bad_epochs >= self.patience:
                self.trainer.stop = True


class CurvesPlot(Plugin):
    """Writes a PNG of the per-epoch curves to ``path`` every ``every``
    epochs: the training loss (``stats['loss']['epoch_mean']``, from a
    LossMonitor) with the validation loss, and the validation accuracy
    (from a Validation plugin), with ember-vision train's chart drawing.
    Register it after the plugins it reads; Pillow is imported when the
    plugin is made."""
    _state = ("history",)

    def __init__(self, path, every=1, title="training curves"):
        super().__init__([(every, "epoch")])
        from .curves import _pil
        _pil()
        self.path, self.title = path, title
        self.history = {"train_loss": [], "validation_loss": [], "validation_accuracy": []}

    def epoch(self, epoch):
        from .curves import save_curves
        stats = self.trainer.stats
        validation = stats.get("validation", {})
        for key, value in (("train_loss", stats.get("loss", {}).get("epoch_mean")),
                           ("validation_loss", validation.get("loss")),
                           ("validation_accuracy", validation.get("accuracy"))):
            self.history[key].append(None if value is None else float(value))
        h = self.history
        charts = [("loss", "loss", [("train", h["train_loss"]),
                                    ("validation", h["validation_loss"])], None)]
        if any(v is not None for v in h["validation_accuracy"]):
            accuracy = [None if v is None else 100.0 * v for v in h["validation_accuracy"]]
            charts.append(("validation accuracy", "%", [("validation", accuracy)], None))
        save_curves(self.path, charts, f"{self.title}: epoch {epoch}")
