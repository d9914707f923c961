"""Dispatch points: the attributes through which programs call ops.

The front's are the callables its op table notes (ember._ops.define's
DISPATCH): ``ember.<f>`` and ``Tensor.<f>`` (operators and in-place forms
included), and ``autograd.Function.apply`` (a node per custom Function call,
target ``Function.<module>:<qualname>``, replayed with its own backward).  Other packages add theirs through a module named in
``PROVIDERS`` that defines ``points()`` -> ``{name: (container, key, kind)}``
and ``resolve(name)`` -> the callable (ember.nn: its NN kernels).  The
tracer swaps each point for a recording wrapper while it runs and puts the
original back; replay and loading resolve a node's target through the
same tables only, so a saved graph can name nothing else.
"""
import importlib
import sys

import ember

from .._ops.define import DISPATCH
from .._tensor import Tensor

__all__ = ["front_points", "provider", "resolve", "PROVIDERS"]

#: namespace -> module defining points()/resolve() for it
PROVIDERS = {"nn": "ember.nn._jit"}


def front_points():
    """{target: (container, attribute, kind)} of the front's dispatch points."""
    found = {}
    for owner, container in (("Tensor", Tensor), ("ember", ember)):
        for attr, fn in list(vars(container).items()):
            hit = DISPATCH.get(id(fn))
            if hit is not None and hit[0] is fn:
                found[f"{owner}.{attr}"] = (container, attr, hit[1])
    return found


def provider(namespace, load=False):
    """The provider module of `namespace`; None when it is not imported
    (and `load` is False) or unknown."""
    module = PROVIDERS.get(namespace)
    if module is None:
        return None
    package = module.rsplit(".", 1)[0]
    if not load and package not in sys.modules:
        return None
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


_front = None


def function_class(name):
    """The autograd.Function subclass "module:qualname" defined in this
    process (Ember's own modules are imported for it); KeyError if none."""
    from ..autograd.function import DEFINED
    cls = DEFINED.get(name)
    module = name.partition(":")[0]
    if cls is None and module.startswith("ember.") and ":" in name:
        try:
            importlib.import_module(module)
        except ImportError:
            raise KeyError(name) from None
        cls = DEFINED.get(name)
    if cls is None:
        raise KeyError(name)
    return cls


def _front_table():
    """front_points(), made once."""
    global _front
    if _front is None:
        _front = front_points()
    return _front


def resolve(target):
    """The callable a node's target names; KeyError if it names none."""
    owner, _, name = target.partition(".")
    if owner == "Function":
        return function_class(name).apply
    if owner in ("Tensor", "ember"):
        container, attr, _ = _front_table()[target]
        return getattr(container, attr) if container is ember else vars(container)[attr]
    mod = provider(owner, load=True)
    if mod is None:
        raise KeyError(target)
    return mod.resolve(name)


def kind_of(target):
    """The op name (kind) of a target; KeyError if it names none."""
    owner, _, name = target.partition(".")
    if owner == "Function":
        return function_class(name).__name__
    if owner in ("Tensor", "ember"):
        return _front_table()[target][2]
    mod = provider(owner, load=True)
    if mod is None:
        raise KeyError(target)
    mod.resolve(name)
    return name
