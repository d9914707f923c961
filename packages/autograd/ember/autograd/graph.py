"""The recorded graph: Nodes (what ``tensor.grad_fn`` returns), the edges
between them, saved tensors with their version checks, and hooks.

An edge is a pair ``(node, output_nr)``: the gradient for a node's input
flows to output ``output_nr`` of ``node``; ``(None, 0)`` marks an input that
needs no gradient.  A node's ``next_functions`` is the tuple of edges to its
inputs, as in PyTorch.  Leaves that require grad are reached through an
AccumulateGrad node, which the leaf references weakly: the graph keeps it
alive, and the next graph makes a new one.
"""
import sys
import weakref

from .. import _tensor
from .._tensor import TYPE_TITLES, Tensor, meta_of
from . import grad_mode

NO_EDGE = (None, 0)
_new = object.__new__


class Node:
    """A backward function: turns the gradients of an operation's outputs
    into gradients of its inputs."""

    __slots__ = ("next_functions", "_extra", "__weakref__")

    #: how many outputs the forward operation had (and gradients _run gets)
    _n_outputs = 1

    def name(self):
        return type(self).__name__

    def __repr__(self):
        return f"<{type(self).__name__} object at {id(self):#x}>"

    def _run(self, grads):
        """Gradients w.r.t. the inputs (one per next_functions edge, None
        where there is none) from `grads`, the list of output gradients."""
        raise NotImplementedError

    def _release(self):
        """Frees the saved tensors (after a backward without retain_graph)."""

    def __call__(self, *grads):
        out = self._run(list(grads))
        return out[0] if len(out) == 1 else out

    # ---- hooks and metadata ----------------------------------------------
    def _extras(self):
        e = self._extra
        if e is None:
            e = self._extra = {}
        return e

    @property
    def metadata(self):
        return self._extras().setdefault("metadata", {})

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) runs after this node; a non-None
        return value replaces grad_inputs."""
        return RemovableHandle(self._extras().setdefault("post_hooks", []), fn)

    def register_prehook(self, fn):
        """fn(grad_outputs) runs before this node; a non-None return value
        replaces grad_outputs."""
        return RemovableHandle(self._extras().setdefault("pre_hooks", []), fn)


class RemovableHandle:
    """Returned by register_hook; ``remove()`` unregisters the hook."""

    __slots__ = ("_hooks", "_fn")

    def __init__(self, hooks, fn):
        hooks.append(fn)
        self._hooks = hooks
        self._fn = fn

    def remove(self):
        try:
            self._hooks.remove(self._fn)
        except ValueError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class AccumulateGrad(Node):
    """The node of a leaf that requires grad: adds incoming gradients to
    the leaf's ``.grad``."""

    __slots__ = ("variable",)
    next_functions = ()

    def __init__(self, variable):
        self.variable = variable
        self._extra = None

    def _run(self, grads):
        accumulate_grad(self.variable, grads[0])
        return ()


# references to a gradient no one else holds, as counted in _sole_gradient:
# the engine's input buffer, accumulate_grad's and _sole_gradient's
# parameters, getrefcount's argument; to its raw tensor: the Tensor's slot,
# the local d, getrefcount's argument; to the tensor it is a view of (the
# gradient of x @ w.t() for w is one): g's _base slot, the local base,
# getrefcount's argument; to that one's raw tensor: its slot, the argument
_SOLE_REFS, _SOLE_DATA_REFS, _SOLE_BASE_REFS, _SOLE_BASE_DATA_REFS = 4, 3, 3, 2


def _sole_gradient(g):
    """True when gradient g may become a leaf's .grad without a copy: no
    other Python object refers to it, to its raw tensor or to the tensor it
    is a view of (another leaf's buffer, a hook, the caller's gradient
    argument), and the backend says no other tensor shares its memory.
    Otherwise an optimizer's in-place update of .grad could change someone
    else's tensor."""
    d = g._data
    if sys.getrefcount(g) > _SOLE_REFS or sys.getrefcount(d) > _SOLE_DATA_REFS:
        return False
    base = g._base
    if base is not None and (sys.getrefcount(base) > _SOLE_BASE_REFS
                             or sys.getrefcount(base._data) > _SOLE_BASE_DATA_REFS):
        return False
    sole = getattr(d, "_sole_owner", None)  # (a bound method: one more reference to d)
    return sole is not None and sole(None if base is None else base._data)


def accumulate_grad(t, g):
    """Adds g to t.grad, after t's hooks.  Without create_graph the stored
    gradient never aliases another tensor, so optimizers may update it in
    place; with create_graph it keeps its graph."""
    m = meta_of(t)
    if m.hooks:
        for hook in list(m.hooks):
            r = hook(g)
            if r is not None:
                g = r
    old = m.grad
    if grad_mode.state.enabled:  # create_graph: out of place, keeps the graph
        m.grad = g if old is None else old + g
    elif old is None:
        m.grad = _tensor._make(g._data if _sole_gradient(g) else g._data.clone())
    elif old._requires_grad:
        m.grad = _tensor._make((old._data + g._data))
    else:
        old._data.add_(g._data)
    if m.post_accumulate_hooks:
        for hook in list(m.post_accumulate_hooks):
            hook(t)


def accumulator(t):
    """The AccumulateGrad node of leaf t (new if the last graph is gone)."""
    m = t._meta
    if m is not None and m.accumulator is not None:
        acc = m.accumulator()
        if acc is not None:
            return acc
    acc = AccumulateGrad(t)
    meta_of(t).accumulator = weakref.ref(acc)
    return acc


def edge(t):
    """The edge through which gradient for tensor t flows."""
    fn = t._grad_fn
    if fn is not None:
        if t._base is not None:
            from .views import current_grad_fn
            fn = current_grad_fn(t)
        return (fn, t._output_nr)
    if t._requires_grad:
        return (accumulator(t), 0)
    return NO_EDGE


def output(data, node, nr=0):
    """A new Tensor holding raw `data` as output `nr` of `node`."""
    t = _new(Tensor)
    t._data = data
    t._grad_fn = node
    t._output_nr = nr
    t._requires_grad = True
    t._base = None
    t._meta = None
    return t


# ---- saved tensors ---------------------------------------------------------
class _Out:
    """Placeholder for an operation's own output among its saved values:
    the node keeps the raw output (not the Tensor, which references the
    node) and rebuilds a Tensor on unpacking."""

    __slots__ = ()

    def __repr__(self):
        return "OUT"


OUT = _Out()

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved "
    "tensors after they have already been freed). Saved intermediate values of the "
    "graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or if "
    "you need to access saved tensors after calling backward.")


def pack(values, out_data):
    """Version stamps for the tensors among `values` (a tuple that may
    contain OUT): a tuple of (index, version), or None if no tensor."""
    stamps = None
    for i, v in enumerate(values):
        if isinstance(v, Tensor):
            data = v._data
        elif v is OUT:
            data = out_data
        else:
            continue
        if stamps is None:
            stamps = []
        stamps.append((i, data._version()))
    return None if stamps is None else tuple(stamps)


def unpack(node, values, stamps, out_data):
    """The saved values with OUT rebuilt, after checking that no saved
    tensor was modified in place since it was saved."""
    if values is None:
        raise RuntimeError(FREED_MESSAGE)
    values = list(values)
    for i, version in stamps:
        v = values[i]
        if v is OUT:
            v = values[i] = output(out_data, node)
        now = v._data._version()
        if now != version:
            raise RuntimeError(modified_message(v, version, now, node))
    return values


def type_string(t):
    d = t._data
    prefix = "ember.cuda." if t.device.type == "cuda" else "ember."
    return f"{prefix}{TYPE_TITLES.get(d.dtype.name, d.dtype.name)}Tensor"


def modified_message(t, expected, now, node):
    shape = ", ".join(str(s) for s in t._data.shape)
    fn = t._grad_fn
    which = f", which is output {t._output_nr} of {type(fn).__name__}," if fn else ""
    return (f"one of the variables needed for gradient computation has been modified by "
            f"an inplace operation: [{type_string(t)} [{shape}]]{which} is at version "
            f"{now}; expected version {expected} instead. Hint: {type(node).__name__} "
            f"saved it for its backward; enable anomaly detection to find the operation "
            f"that failed to compute its gradient, with "
            f"ember.autograd.set_detect_anomaly(True).")


# ---- tensor hooks and retained gradients ------------------------------------
def register_tensor_hook(t, hook):
    if t._grad_fn is None:
        m = meta_of(t)
        if m.hooks is None:
            m.hooks = []
        return RemovableHandle(m.hooks, hook)
    hooks = t.grad_fn._extras().setdefault("tensor_hooks", {})
    return RemovableHandle(hooks.setdefault(t._output_nr, []), hook)


def retain_grad(t):
    meta_of(t).retains_grad = True
    retained = t.grad_fn._extras().setdefault("retained", {})
    retained[t._output_nr] = weakref.ref(t)


# ---- the Tensor methods built on them -------------------------------------
def _retain_grad_method(self):
    if not self._requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if self._grad_fn is None or self.retains_grad:
        return
    retain_grad(self)


def _register_post_accumulate_grad_hook(self, hook):
    """Calls hook(tensor) after a gradient was accumulated into this
    leaf's ``.grad`` (optimizers that step per parameter use this)."""
    if self._grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                           "tensors")
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                           "gradient")
    m = meta_of(self)
    if m.post_accumulate_hooks is None:
        m.post_accumulate_hooks = []
    return RemovableHandle(m.post_accumulate_hooks, hook)


def _register_hook(self, hook):
    """Calls hook(grad) when the gradient for this tensor is computed; a
    non-None return value replaces the gradient."""
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                           "gradient")
    return register_tensor_hook(self, hook)


_retain_grad_method.__name__ = _retain_grad_method.__qualname__ = "retain_grad"
_register_post_accumulate_grad_hook.__name__ = "register_post_accumulate_grad_hook"
_register_hook.__name__ = "register_hook"
Tensor.retain_grad = _retain_grad_method
Tensor.register_post_accumulate_grad_hook = _register_post_accumulate_grad_hook
Tensor.register_hook = _register_hook


def run_pre_hooks(node, extra, grads):
    """Tensor hooks, then retained gradients, then node pre-hooks."""
    tensor_hooks = extra.get("tensor_hooks")
    if tensor_hooks:
        for nr, hooks in tensor_hooks.items():
            g = grads[nr]
            if g is None:
                continue
            for hook in list(hooks):
                r = hook(g)
                if r is not None:
                    g = r
            grads[nr] = g
    retained = extra.get("retained")
    if retained:
        for nr, ref in retained.items():
            t = ref()
            g = grads[nr]
            if t is None or g is None:
                continue
            m = meta_of(t)
            if grad_mode.state.enabled:
                m.grad = g if m.grad is None else m.grad + g
            else:
                m.grad = _tensor._make(g._data.clone() if m.grad is None
                                       else m.grad._data + g._data)
    for hook in list(extra.get("pre_hooks", ())):
        r = hook(tuple(grads))
        if r is not None:
            grads = list(r)
    return grads


def run_post_hooks(node, extra, grads, result):
    for hook in list(extra.get("post_hooks", ())):
        r = hook(tuple(result), tuple(grads))
        if r is not None:
            result = tuple(r)
    return result
