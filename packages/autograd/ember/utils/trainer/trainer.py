"""The Trainer: epochs of optimizer steps with plugins called from heap
queues, and checkpoints that resume a run bit for bit."""
import heapq
import os
import tempfile

import ember

__all__ = ["Trainer", "UNITS"]

UNITS = ("iteration", "batch", "update", "epoch")


def _intervals(plugin):
    intervals = plugin.trigger_interval
    if isinstance(intervals, tuple):
        intervals = [intervals]
    for item in intervals:
        if (not isinstance(item, tuple) or len(item) != 2 or not isinstance(item[0], int)
                or item[0] < 1 or item[1] not in UNITS):
            raise ValueError(f"{type(plugin).__name__}: trigger_interval entries must be "
                             f"(n >= 1, unit) with unit one of {', '.join(UNITS)}; got {item!r}")
    return list(intervals)


class Trainer:
    """Trains ``model`` on ``dataset`` by ``optimizer`` against ``criterion``.

    Each iteration calls the 'batch' plugins with ``(i, input, target)``,
    steps the optimizer with a closure computing ``criterion(model(input),
    target)`` and its gradients, then calls the 'iteration' plugins with
    ``(i, input, target, output, loss)`` and the 'update' plugins with
    ``(i, model)``; each epoch ends with the 'epoch' plugins, ``(epoch,)``.
    ``stats`` is where plugins publish what they measure; a plugin sets
    ``trainer.stop = True`` to end the run after the current epoch."""

    def __init__(self, model=None, criterion=None, optimizer=None, dataset=None):
        self.model, self.criterion, self.optimizer, self.dataset = \
            model, criterion, optimizer, dataset
        self.iterations = 0
        self.epoch = 0
        self.stats = {}
        self.stop = False
        self.plugins = []
        self.plugin_queues = {unit: [] for unit in UNITS}
        self._checkpoint_due = None

    def register_plugin(self, plugin):
        intervals = _intervals(plugin)
        plugin.register(self)
        self.plugins.append(plugin)
        for every, unit in intervals:
            queue = self.plugin_queues[unit]
            # (due time, registration number, plugin): ties go by registration
            heapq.heappush(queue, (self._now(unit) + every, len(self.plugins) - 1, plugin))
        return plugin

    def _now(self, unit):
        return self.epoch if unit == "epoch" else self.iterations

    def call_plugins(self, unit, time, *args):
        queue = self.plugin_queues[unit]
        while queue and queue[0][0] <= time:
            _, number, plugin = queue[0]
            getattr(plugin, unit)(time, *args)
            every = next(n for n, u in _intervals(plugin) if u == unit)
            heapq.heapreplace(queue, (time + every, number, plugin))

    def run(self, epochs=1):
        """Train until ``epochs`` epochs are done in all (a resumed trainer
        continues from the epoch its checkpoint holds)."""
        for name in ("model", "criterion", "optimizer", "dataset"):
            if getattr(self, name) is None:
                raise ValueError(f"Trainer.run: no {name} was given")
        self.stop = False
        while self.epoch < epochs and not self.stop:
            self.train()
            self.epoch += 1
            self.call_plugins("epoch", self.epoch)
            if self._checkpoint_due is not None:
                path, self._checkpoint_due = self._checkpoint_due, None
                self.save_checkpoint(path)
        return self

    def train(self):
        """One epoch over the dataset."""
        self.model.train()
        for batch in self.dataset:
            if not isinstance(batch, (tuple, list)) or len(batch) != 2:
                raise ValueError(f"Trainer: expected the dataset to give (input, target) "
                                 f"batches, got {type(batch).__name__}"
                                 + (f" of {len(batch)}" if isinstance(batch, (tuple, list))
                                    else ""))
            input, target = batch
            self.iterations += 1
            i = self.iterations
            self.call_plugins("batch", i, input, target)
            seen = []

            def closure():
                self.optimizer.zero_grad()
                output = self.model(input)
                loss = self.criterion(output, target)
                loss.backward()
                if not seen:            # the plugins see the first evaluation
                    seen.extend((output.detach(), loss.detach()))
                return loss
            self.optimizer.step(closure)
            self.call_plugins("iteration", i, input, target, *seen)
            self.call_plugins("update", i, self.model)

    # -- checkpoints -----------------------------------------------------
    def request_checkpoint(self, path):
        """Save to ``path`` once this epoch's plugins have run."""
        self._checkpoint_due = path

    def state_dict(self):
        queues = {unit: sorted((t, n) for t, n, _ in q) for unit, q in self.plugin_queues.items()}
        return {
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "epoch": self.epoch,
            "iterations": self.iterations,
            "stats": self.stats,
            "queues": queues,
            "plugins": [p.state_dict() for p in self.plugins],
            "rng_state": ember.get_rng_state(),
        }

    def load_state_dict(self, state):
        plugins = state["plugins"]
        if len(plugins) != len(self.plugins):
            raise ValueError(f"Trainer.load_state_dict: the checkpoint holds {len(plugins)} "
                             f"plugins, this trainer has {len(self.plugins)} registered; "
                             f"register the same plugins in the same order before loading")
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.epoch, self.iterations = state["epoch"], state["iterations"]
        self.stats = state["stats"]
        for plugin, saved in zip(self.plugins, plugins):
            plugin.load_state_dict(saved)
        for unit, due in state["queues"].items():
            self.plugin_queues[unit] = [(t, n, self.plugins[n]) for t, n in due]
            heapq.heapify(self.plugin_queues[unit])
        ember.set_rng_state(state["rng_state"])

    def save_checkpoint(self, path):
        """Write the whole training state to ``path`` atomically: a temporary
        file in the same folder, flushed to disk, then renamed over ``path``
        (a crash leaves the previous checkpoint whole)."""
        folder = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                                   dir=folder)
        try:
            with os.fdopen(fd, "wb") as f:
                ember.save(self.state_dict(), f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        return path

    def load_checkpoint(self, path):
        """Restore a state written by ``save_checkpoint``; the model,
        optimizer and plugins must be built and registered as before."""
        state = ember.load(path)
        needed = {"model", "optimizer", "epoch", "queues"}
        if not isinstance(state, dict) or not needed <= set(state):
            raise ValueError(f"Trainer.load_checkpoint: {path!r} is not a Trainer checkpoint")
        self.load_state_dict(state)
        return self
