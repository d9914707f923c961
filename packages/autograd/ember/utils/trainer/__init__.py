"""A training loop driven by plugins.

``Trainer(model, criterion, optimizer, dataset)`` runs epochs over
``dataset`` (any iterable of ``(input, target)`` batches, e.g. a
DataLoader), stepping ``optimizer`` through a closure; plugins registered
with ``register_plugin`` declare when they run (``trigger_interval``:
``[(n, unit)]`` with unit 'iteration', 'batch', 'update' or 'epoch') and are
kept in one heap queue per unit, ordered by their next due time.
"""
from .plugins import (AccuracyMonitor, Checkpoint, CurvesPlot, EarlyStopping, Logger,
                      LossMonitor, Monitor, Plugin, ProgressBar, ProgressMonitor,
                      SchedulerStep, TimeMonitor, Validation)
from .trainer import Trainer

__all__ = ["Trainer", "Plugin", "Monitor", "ProgressMonitor", "LossMonitor", "TimeMonitor",
           "AccuracyMonitor", "Logger", "ProgressBar", "Checkpoint", "EarlyStopping",
           "Validation", "CurvesPlot", "SchedulerStep"]
