"""ember.optim: optimizers and learning-rate schedulers, as torch.optim."""
from .optimizer import Optimizer
from ._algorithms import (ASGD, SGD, Adadelta, Adagrad, Adam, Adamax, AdamW, NAdam, RAdam,
                          RMSprop, Rprop)
from .lbfgs import LBFGS
from .sparse_adam import SparseAdam
from . import lr_scheduler

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax",
           "NAdam", "RAdam", "Rprop", "ASGD", "LBFGS", "SparseAdam", "lr_scheduler"]
