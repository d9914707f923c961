"""Recording a graph: one run of the program with every dispatch point
(ember.jit._points) swapped for a wrapper that notes the call.

Tensors are followed by identity: the example inputs are the graph's
inputs, the module's parameters and buffers its named constants, a node's
results new values.  An op reached from inside another recorded op (a
composite's parts, a kernel's composed form) is not recorded: the outer
call is one node.  Only calls whose arguments hold a traced tensor are
recorded; anything else is a constant of the run (as in PyTorch's tracer,
Python control flow and sizes read from tensors are baked in).
"""
import os
import sys
import threading
import warnings

from .._tensor import Tensor
from ._graph import Graph, Node, substitute
from . import _points

__all__ = ["TracerWarning", "record"]


class TracerWarning(UserWarning):
    """The trace may not generalise: a Python value was read from a tensor."""


_state = None        # the running trace (one at a time, on one thread)
_lock = threading.Lock()
_EMBER_DIRS = None


def _ember_dirs():
    global _EMBER_DIRS
    if _EMBER_DIRS is None:
        import ember
        _EMBER_DIRS = tuple(os.path.join(os.path.abspath(p), "") for p in ember.__path__)
    return _EMBER_DIRS


def user_frame():
    """(file, line) of the innermost frame outside the ember packages."""
    dirs = _ember_dirs()
    f = sys._getframe(1)
    while f is not None:
        name = os.path.abspath(f.f_code.co_filename)
        if not name.startswith(dirs) and not f.f_code.co_filename.startswith("<"):
            return f"{f.f_code.co_filename}:{f.f_lineno}"
        f = f.f_back
    return ""


class _Trace:
    def __init__(self, names):
        self.graph = Graph()
        self.known = {}      # id(tensor) -> Value
        # id(raw tensor) -> Value: a Tensor re-made around a known one's raw
        # data (an op's saved output, unpacked in backward) is that value
        self.known_raw = {}
        self.keep = []       # every tensor seen, so their ids stay theirs
        self.names = names   # id(tensor) -> (name, role) of parameters and buffers
        self.depth = 0
        self.thread = threading.get_ident()
        self.consts = 0
        self.dependent = set()   # ids of the values computed from the inputs
        self.constant_tensors = {}   # value id -> tensor of the graph's constants
        self.captured = {}   # value id -> a captured constant's own tensor (not a copy)

    def value_of(self, t):
        v = self.known.get(id(t))
        if v is not None:
            return v
        v = self.known_raw.get(id(t._data))
        if v is not None and tuple(t.shape) == v.shape:
            self._note(t, v)
            return v
        named = self.names.get(id(t))
        if named is not None:
            name, role = named
        else:
            if t.grad_fn is not None:
                warnings.warn(
                    f"ember.jit.trace: a tensor with autograd history that the trace did not "
                    f"compute reaches {user_frame() or 'an op'}; it is recorded as a constant "
                    f"and gradients will not flow through it", TracerWarning, stacklevel=4)
            name, role = f"const{self.consts}", "const"
            self.consts += 1
        v = self.graph.new_value(name, t.shape, str(t.dtype).replace("ember.", ""), role)
        # a captured tensor's value as first read (the run may change it in place later)
        if named is None:
            self.captured[v.id] = t
            self.depth += 1   # the copy is the tracer's own, not the program's
            try:
                self.constant_tensors[v.id] = t.detach().clone()
            finally:
                self.depth -= 1
        else:
            self.constant_tensors[v.id] = t
        self._note(t, v)
        return v

    def _note(self, t, v):
        self.known[id(t)] = v
        self.known_raw[id(t._data)] = v
        self.keep.append(t)

    def follows(self, t):
        """Whether t is computed from the inputs (not from constants only)."""
        v = self.known.get(id(t))
        return v is not None and v.id in self.dependent

    def encode(self, obj):
        if isinstance(obj, Tensor):
            return self.value_of(obj)
        if isinstance(obj, (tuple, list)):
            enc = [self.encode(x) for x in obj]
            return enc if isinstance(obj, list) else tuple(enc)
        if isinstance(obj, dict):
            return {k: self.encode(x) for k, x in obj.items()}
        return obj

    def record(self, target, kind, args, encoded, out, inplace):
        """A node for a call whose arguments were encoded (encode) before it ran."""
        enc_args, enc_kwargs = encoded
        results = [args[0]] if inplace else flat_tensors(out)
        node = Node(target, kind, enc_args, enc_kwargs, [], user_frame(), inplace)
        node.writes_view = inplace and args[0]._base is not None
        dependent = any(v.id in self.dependent for v in node.inputs())
        for t in results:
            name = str(len(self.graph.values))
            v = self.graph.new_value(name, t.shape, str(t.dtype).replace("ember.", ""),
                                     "node", node)
            node.outputs.append(v)
            self._note(t, v)
            if dependent:
                self.dependent.add(v.id)
        self.graph.nodes.append(node)


def flat_tensors(obj):
    """The tensors in obj (nested tuples, lists and dict values), in order.
    A loop, not a recursive closure: a function that refers to itself
    through its cell is a reference cycle, and each call's cycle held the
    tensors found (a compiled step's outputs) until the garbage collector
    ran, 14 steps and 200 MiB later."""
    found, stack = [], [obj]
    while stack:
        x = stack.pop()
        if isinstance(x, Tensor):
            found.append(x)
        elif isinstance(x, (tuple, list)):
            stack.extend(reversed(x))
        elif isinstance(x, dict):
            stack.extend(reversed(list(x.values())))
    return found


def _is_inplace(attr):
    return (attr.endswith("_") and not attr.endswith("__")) or attr.startswith("__i") and \
        attr not in ("__index__", "__int__", "__invert__", "__iter__") or attr == "__setitem__"


def _wrapper(fn, target, kind, inplace):
    def traced(*args, **kwargs):
        st = _state
        if st is None or st.depth or st.thread != threading.get_ident():
            return fn(*args, **kwargs)
        # arguments read before the call: a captured tensor's value as the op saw it
        encoded = (st.encode(args), st.encode(kwargs)) \
            if _has_tensor(args) or _has_tensor(kwargs) else None
        st.depth += 1
        try:
            out = fn(*args, **kwargs)
        finally:
            st.depth -= 1
        if out is NotImplemented or encoded is None:
            return out
        if inplace and not (args and isinstance(args[0], Tensor)):
            return out
        if not inplace and args and out is args[0]:
            return out   # the input itself (dropout in eval, a no-op conversion)
        st.record(target, kind, args, encoded, out, inplace)
        return out
    traced.__name__ = getattr(fn, "__name__", kind)
    traced.__doc__ = getattr(fn, "__doc__", None)
    traced.__wrapped__ = fn
    return traced


def _function_wrapper(apply):
    """Function.apply recording one node per custom Function call."""
    def traced(cls, *args, **kwargs):
        st = _state
        if st is None or st.depth or st.thread != threading.get_ident():
            return apply(cls, *args, **kwargs)
        encoded = (st.encode(args), st.encode(kwargs)) \
            if _has_tensor(args) or _has_tensor(kwargs) else None
        st.depth += 1
        try:
            out = apply(cls, *args, **kwargs)
        finally:
            st.depth -= 1
        if encoded is not None:
            st.record(f"Function.{cls.__module__}:{cls.__qualname__}", cls.__name__, args,
                      encoded, out, False)
        return out
    traced.__wrapped__ = apply
    return traced


# ---- reading Python values out of traced tensors ---------------------------------
_DATA_READS = {
    "__bool__": "Converting a tensor to a Python boolean",
    "item": "Converting a tensor to a Python number (.item())",
    "__int__": "Converting a tensor to a Python integer",
    "__float__": "Converting a tensor to a Python float",
    "__index__": "Converting a tensor to a Python index",
    "tolist": "Converting a tensor to a Python list",
    "numpy": "Converting a tensor to a NumPy array",
    "__array__": "Converting a tensor to a NumPy array",
    "__len__": "Using len to get tensor shape",
    "__iter__": "Iterating over a tensor",
}


def _reader(fn, what):
    def read(self, *args, **kwargs):
        st = _state
        if st is not None and st.thread == threading.get_ident() and not st.depth and \
                st.follows(self):
            warnings.warn(f"{what} might cause the trace to be incorrect. We can't record the "
                          f"data flow of Python values, so this value will be treated as a "
                          f"constant in the future. This means that the trace might not "
                          f"generalize to other inputs! (at {user_frame()})", TracerWarning,
                          stacklevel=2)
        return fn(self, *args, **kwargs)
    read.__name__ = getattr(fn, "__name__", what)
    read.__wrapped__ = fn
    return read


def record(run, inputs, names):
    """Runs run(*inputs) recording its ops; returns (graph, constant tensors by
    value id, the output).  names: id(tensor) -> (name, role) of the
    module's parameters and buffers."""
    global _state
    if not _lock.acquire(blocking=False):
        raise RuntimeError("ember.jit.trace: another trace is running (one at a time)")
    try:
        st = _Trace(names)
        for i, t in enumerate(inputs):
            if not isinstance(t, Tensor):
                raise TypeError(f"ember.jit.trace: example input {i} must be a Tensor, not "
                                f"{type(t).__name__}")
            if id(t) in st.known:
                raise ValueError(f"ember.jit.trace: example input {i} is the same tensor as "
                                 f"an earlier one; pass distinct tensors")
            v = st.graph.new_value(f"x{i}", t.shape, str(t.dtype).replace("ember.", ""),
                                   "input")
            st._note(t, v)
            st.dependent.add(v.id)
        _points.resolve("Tensor.add")  # the front's table, read before anything is swapped
        patches = []
        for target, (container, attr, kind) in _all_points().items():
            patches.append((container, attr, _get(container, attr)))
            _set(container, attr, _wrapper(_get(container, attr), target, kind,
                                           _is_inplace(attr)))
        from ..autograd.function import Function
        apply = vars(Function)["apply"]
        patches.append((Function, "apply", apply))
        Function.apply = classmethod(_function_wrapper(apply.__func__))
        for attr, what in _DATA_READS.items():
            fn = vars(Tensor).get(attr)
            if fn is not None:
                patches.append((Tensor, attr, fn))
                setattr(Tensor, attr, _reader(fn, what))
        _state = st
        try:
            out = run(*inputs)
        finally:
            _state = None
            for container, attr, fn in reversed(patches):
                _set(container, attr, fn)
        st.graph.outputs = st.encode(out) if _has_tensor(out) else None
        # the captured tensors themselves, for who replays the graph in this
        # process and wants their current values (ember.compile); not saved
        st.graph.captured = st.captured
        if st.graph.outputs is None:
            raise RuntimeError("ember.jit.trace: the traced function returned no tensor")
        _check_outputs(st, out)
        return st.graph, st.constant_tensors, out
    finally:
        _lock.release()


def _check_outputs(st, out):
    for t in flat_tensors(out):
        if id(t) not in st.known and id(t) not in st.names:
            raise RuntimeError("ember.jit.trace: an output was not computed by a recorded op")


def _has_tensor(obj):
    return bool(flat_tensors(obj))


def _all_points():
    points = dict(_points.front_points())
    for ns in _points.PROVIDERS:
        mod = _points.provider(ns)
        if mod is not None:
            points.update({f"{ns}.{k}": v for k, v in mod.points().items()})
    return points


def _get(container, key):
    return container[key] if isinstance(container, dict) else vars(container)[key] \
        if isinstance(container, type) else getattr(container, key)


def _set(container, key, value):
    if isinstance(container, dict):
        container[key] = value
    else:
        setattr(container, key, value)


def substitute_values(obj, env):
    return substitute(obj, lambda v: env[v.id])
