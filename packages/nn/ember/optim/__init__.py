"""ember.optim: optimizers and learning-rate schedulers, as torch.optim."""
from .optimizer import Optimizer
from ._algorithms import (SGD, Adadelta, Adagrad, Adam, Adamax, AdamW, NAdam, RAdam,
                          RMSprop)
from . import lr_scheduler

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax",
           "NAdam", "RAdam", "lr_scheduler"]
