"""Lua Torch's ``nn`` and ``optim`` APIs on Ember's kernels.

``ember.legacy.nn`` holds modules with explicit ``forward``/``backward``
passes (no autograd tape) computed by libTHNN through ember.thnn;
``ember.legacy.optim`` holds the ``(opfunc, x, config, state)`` optimizers.
"""
import importlib

__all__ = ["nn", "optim"]


def __getattr__(name):
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'ember.legacy' has no attribute {name!r}")
