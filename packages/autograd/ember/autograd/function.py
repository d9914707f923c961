"""Custom differentiable operations in Python: ``ember.autograd.Function``.

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            y, = ctx.saved_tensors
            return grad * y

    y = Exp.apply(x)

As in PyTorch, ``ctx`` is the node itself (``y.grad_fn`` is an
``ExpBackward``), forward runs without recording, and backward runs with
recording when create_graph is set, so a backward written with ember ops
differentiates again (unless it is marked @once_differentiable).
"""
import functools
import weakref

from .. import _tensor
from .._tensor import Tensor
from . import grad_mode
from .graph import (FREED_MESSAGE, NO_EDGE, Node, edge, modified_message, output)
from .nodes import _new_node, check_inplace

__all__ = ["Function", "FunctionCtx", "once_differentiable", "BackwardCFunction"]
_mode = grad_mode.state


class FunctionCtx:
    """What forward can tell backward: saved tensors, which inputs it
    modified in place, which outputs are not differentiable."""

    def save_for_backward(self, *tensors):
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError("save_for_backward can only save variables, but argument "
                                f"{tensors.index(t)} is of type {type(t).__name__}")
        self._to_save = tensors

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable = tensors

    def set_materialize_grads(self, value):
        self._materialize_grads = bool(value)

    @property
    def saved_tensors(self):
        return self._unpack_saved()

    saved_variables = saved_tensors

    def _unpack_saved(self):
        """Saved tensors as forward left them (no graph outside a node)."""
        saved = getattr(self, "_to_save", None)
        return () if saved is None else tuple(saved)


class _SavedOutput:
    """An output of the Function among its saved tensors: the node keeps
    its raw data, not the Tensor (which references the node)."""

    __slots__ = ("nr", "data")

    def __init__(self, nr, data):
        self.nr = nr
        self.data = data


class BackwardCFunction(Node, FunctionCtx):
    """The node of a custom Function; also its ``ctx``."""

    _function = None  # the Function subclass

    def _save(self, outputs):
        """Stamps versions of what save_for_backward got; outputs among
        them are kept as raw data."""
        saved = getattr(self, "_to_save", None)
        if not saved:
            self._saved, self._stamps = (), ()
            return
        ids = {id(o): i for i, o in enumerate(outputs) if isinstance(o, Tensor)}
        entries, stamps = [], []
        for t in saved:
            if t is None:
                entries.append(None)
                stamps.append(None)
                continue
            nr = ids.get(id(t))
            entries.append(t if nr is None else _SavedOutput(nr, t._data))
            stamps.append(t._data._version())
        self._saved, self._stamps = tuple(entries), tuple(stamps)
        del self._to_save

    def _unpack_saved(self):
        if not hasattr(self, "_saved"):  # inside forward
            return super()._unpack_saved()
        if self._saved is None:
            raise RuntimeError(FREED_MESSAGE)
        out = []
        for entry, version in zip(self._saved, self._stamps):
            if entry is None:
                out.append(None)
                continue
            t = output(entry.data, self, entry.nr) if isinstance(entry, _SavedOutput) else entry
            if t._data._version() != version:
                raise RuntimeError(modified_message(t, version, t._data._version(), self))
            out.append(t)
        return tuple(out)

    def _release(self):
        if getattr(self, "_saved", None):
            self._saved = None

    def _run(self, grads):
        fn = type(self)._function
        if getattr(self, "_materialize_grads", True):
            from .._creation import zeros
            grads = [g if g is not None else zeros(shape, dtype=dtype, device=device)
                     for g, (shape, dtype, device) in zip(grads, self._output_meta)]
        result = fn.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n = len(self.next_functions)
        if len(result) != n:
            if len(result) > n and all(r is None for r in result[n:]):
                result = result[:n]
            else:
                raise RuntimeError(f"function {type(self).__name__} returned an incorrect "
                                   f"number of gradients (expected {n}, got {len(result)})")
        for i, (g, is_tensor) in enumerate(zip(result, self._input_is_tensor)):
            if g is not None and not is_tensor:
                raise RuntimeError(f"function {type(self).__name__} returned a gradient "
                                   f"different than None at position {i + 1}, but the "
                                   "corresponding forward input was not a Variable")
        return result


def _node_class(function):
    cls = function.__dict__.get("_backward_cls")
    if cls is None:
        cls = type(f"{function.__name__}Backward", (BackwardCFunction,),
                   {"_function": function, "__module__": function.__module__})
        function._backward_cls = cls
    return cls


#: "module:qualname" -> every Function subclass defined in this process (what
#: ember.jit replays and loads a traced Function call by)
DEFINED = weakref.WeakValueDictionary()


class _FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_cls = None
        DEFINED[f"{cls.__module__}:{cls.__qualname__}"] = cls


class Function(metaclass=_FunctionMeta):
    """Base class of custom differentiable operations: define static
    ``forward(ctx, *args)`` and ``backward(ctx, *grads)``, call ``apply``."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is "
                           "deprecated. Please use new-style autograd function with static "
                           "forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html"
                           "#torch.autograd.Function)")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    vjp = backward

    @classmethod
    def apply(cls, *args, **kwargs):
        node_cls = cls.__dict__.get("_backward_cls") or _node_class(cls)
        ctx = _new_node(node_cls, ())  # with the forward trace in anomaly mode
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
        ctx._input_is_tensor = tuple(isinstance(a, Tensor) for a in args)
        record = _mode.enabled and any(ctx.needs_input_grad)

        uses_setup_context = cls.setup_context is not Function.setup_context
        prev = _mode.enabled
        _mode.enabled = False
        try:
            if uses_setup_context:
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        finally:
            _mode.enabled = prev

        is_tuple = isinstance(outputs, tuple)
        outs = outputs if is_tuple else (outputs,)
        if not record:
            return outputs
        return _connect(ctx, args, outs, is_tuple)


def _connect(ctx, args, outs, is_tuple):
    """Makes ctx the grad_fn of the outputs (and of inputs marked dirty)."""
    ctx.next_functions = tuple(edge(a) if isinstance(a, Tensor) else NO_EDGE for a in args)
    ctx._n_outputs = len(outs)
    dirty = {id(t) for t in getattr(ctx, "_dirty", ())}
    non_diff = {id(t) for t in getattr(ctx, "_non_differentiable", ())}
    inputs = {id(a) for a in args if isinstance(a, Tensor)}
    result, meta = [], []
    for nr, o in enumerate(outs):
        if not isinstance(o, Tensor):
            result.append(o)
            meta.append(((), None, None))
            continue
        meta.append((o.shape, o.dtype, o.device))
        if id(o) in non_diff or not (o._data.dtype.is_floating_point or
                                     o._data.dtype.is_complex):
            if id(o) in inputs and id(o) not in dirty:
                o = _tensor._make(o._data)
            result.append(o)
            continue
        if id(o) in dirty:
            check_inplace(o)
            o._grad_fn, o._output_nr, o._requires_grad = ctx, nr, True
        elif id(o) in inputs:  # an input returned as is: an alias with new history
            o = output(o._data, ctx, nr)
        else:
            o._grad_fn, o._output_nr, o._requires_grad = ctx, nr, True
        result.append(o)
    ctx._output_meta = meta
    ctx._save(result)
    return tuple(result) if is_tuple else result[0]


class _DelayedError(Node):
    """Stands in for the graph of a @once_differentiable backward: using
    it raises."""

    __slots__ = ("_message", "_n_outputs")

    def _run(self, grads):
        raise RuntimeError(self._message)


def once_differentiable(backward):
    """Marks a backward as not differentiable itself (it may use NumPy):
    it runs without recording, and differentiating its result raises."""
    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        prev = _mode.enabled
        _mode.enabled = False
        try:
            result = backward(ctx, *grads)
        finally:
            _mode.enabled = prev
        if not prev or not any(isinstance(g, Tensor) and g._requires_grad for g in grads):
            return result
        single = not isinstance(result, tuple)
        outs = (result,) if single else result
        err = _new_node(_DelayedError, tuple(edge(g) if isinstance(g, Tensor) else NO_EDGE
                                             for g in grads))
        err._message = ("trying to differentiate twice a function that was marked with "
                        "@once_differentiable")
        err._n_outputs = len(outs)
        wrapped = tuple(output(o._data, err, i) if isinstance(o, Tensor) else o
                        for i, o in enumerate(outs))
        return wrapped[0] if single else wrapped
    return wrapper
