"""The graph IR: values, nodes and the graph a trace records.

A graph has inputs (the traced function's tensor arguments), constants
(tensors it reads but does not compute: a module's parameters and buffers
by their names, other captured tensors as ``const<N>``), nodes (one per op
call, in program order) and outputs.  A node names the op it called as
``<owner>.<attribute>`` (``ember.cat``, ``Tensor.__add__``, ``Tensor.relu_``,
``nn.conv2d``: a dispatch point, see ember.jit._points), its ``kind`` (the
op's name in the op table, shared by the function, method and operator
forms), its arguments with tensors replaced by values, and its output
values.  Arguments are plain data (numbers, strings, None, tuples, lists,
slices, Ellipsis, dtypes, devices), so a graph is saved as JSON.
"""
import math

__all__ = ["Value", "Node", "Graph"]


class Value:
    """One tensor of the graph: an input, a constant or a node's output."""

    __slots__ = ("id", "name", "shape", "dtype", "node", "role")

    def __init__(self, id, name, shape, dtype, role, node=None):
        self.id = id          # position in Graph.values
        self.name = name      # what printing shows after '%'
        self.shape = tuple(shape)
        self.dtype = dtype    # ember dtype name, e.g. "float32"
        self.role = role      # "input", "param", "buffer", "const" or "node"
        self.node = node      # the producing node (role "node")

    def __repr__(self):
        return f"%{self.name}"


class Node:
    """One op call."""

    __slots__ = ("target", "kind", "args", "kwargs", "outputs", "source", "inplace",
                 "writes_view")

    def __init__(self, target, kind, args, kwargs, outputs, source, inplace=False):
        self.writes_view = False  # in place into a view (its base's value goes stale)
        self.target = target    # dispatch point: "ember.cat", "Tensor.add_", "nn.conv2d"
        self.kind = kind        # the op's name: "cat", "add", "conv2d"
        self.args = args        # tuple, tensors replaced by Values
        self.kwargs = kwargs    # dict, likewise
        self.outputs = outputs  # list of Values (an in-place op: the updated tensor)
        self.source = source    # "file:line" of the user's call
        self.inplace = inplace  # writes into args[0]

    def inputs(self):
        """The values the node reads, in argument order."""
        found = []
        walk((self.args, self.kwargs), lambda v: found.append(v))
        return found

    def __repr__(self):
        outs = ", ".join(f"{v!r}: {_type(v)}" for v in self.outputs)
        call = ", ".join([format_arg(a) for a in self.args] +
                         [f"{k}={format_arg(a)}" for k, a in self.kwargs.items()])
        where = f"  # {self.source}" if self.source else ""
        return f"{outs or '_'} = {self.target}({call}){where}"


def _type(v):
    return f"{v.dtype}[{', '.join(map(str, v.shape))}]"


def walk(obj, fn):
    """Calls fn on every Value inside nested tuples, lists and dicts."""
    if isinstance(obj, Value):
        fn(obj)
    elif isinstance(obj, (tuple, list)):
        for x in obj:
            walk(x, fn)
    elif isinstance(obj, dict):
        for x in obj.values():
            walk(x, fn)


def substitute(obj, fn):
    """obj with every Value v replaced by fn(v) (containers rebuilt)."""
    if isinstance(obj, Value):
        return fn(obj)
    if isinstance(obj, list):
        return [substitute(x, fn) for x in obj]
    if isinstance(obj, tuple):
        return tuple(substitute(x, fn) for x in obj)
    if isinstance(obj, dict):
        return {k: substitute(x, fn) for k, x in obj.items()}
    return obj


def format_arg(a):
    if isinstance(a, float) and not math.isfinite(a):
        return repr(a)
    if isinstance(a, slice):
        return ":".join("" if x is None else format_arg(x) for x in (a.start, a.stop, a.step)
                        ).rstrip(":") or ":"
    if a is Ellipsis:
        return "..."
    if isinstance(a, tuple):
        return "(" + ", ".join(format_arg(x) for x in a) + ("," if len(a) == 1 else "") + ")"
    if isinstance(a, list):
        return "[" + ", ".join(format_arg(x) for x in a) + "]"
    if isinstance(a, dict):
        return "{" + ", ".join(f"{k!r}: {format_arg(x)}" for k, x in a.items()) + "}"
    return repr(a)


class Graph:
    """A traced program: inputs, constants, nodes, outputs."""

    def __init__(self):
        self.values = []      # every Value, by id
        self.inputs = []      # Values of role "input"
        self.constants = []   # Values of role "param", "buffer", "const"
        self.nodes = []
        self.outputs = None   # the output structure, Values inside containers
        self.captured = {}    # value id -> a captured constant's tensor, in the tracing process

    def new_value(self, name, shape, dtype, role, node=None):
        v = Value(len(self.values), name, shape, dtype, role, node)
        self.values.append(v)
        if role == "input":
            self.inputs.append(v)
        elif role != "node":
            self.constants.append(v)
        return v

    def output_values(self):
        found = []
        walk(self.outputs, lambda v: found.append(v))
        return found

    def __str__(self):
        ins = ", ".join(f"%{v.name}: {_type(v)}" for v in self.inputs)
        lines = [f"graph({ins}):"]
        for v in self.constants:
            lines.append(f"  %{v.name}: {_type(v)} = {v.role}")
        lines += [f"  {n!r}" for n in self.nodes]
        lines.append(f"  return {format_arg(self.outputs)}")
        return "\n".join(lines)

    __repr__ = __str__

    def code(self):
        """The graph as the Python that replays it (ember ops, one line per node)."""
        def name(v):
            if v.role == "input":
                return v.name
            if v.role == "node":
                return f"_{v.name}"
            if all(p.isidentifier() for p in v.name.split(".")):
                return f"self.{'_constants.' if v.role == 'const' else ''}{v.name}"
            getter = "get_parameter" if v.role == "param" else "get_buffer"
            return f"self.{getter}({v.name!r})"

        def arg(a):
            return format_arg(substitute(a, lambda v: _Raw(name(v))))

        ins = ", ".join(["self"] + [v.name for v in self.inputs])
        lines = [f"def forward({ins}):"]
        for n in self.nodes:
            owner, attr = n.target.split(".", 1)
            call = ", ".join([arg(a) for a in n.args] +
                             [f"{k}={arg(x)}" for k, x in n.kwargs.items()])
            if owner == "Tensor":
                first, rest = arg(n.args[0]), call.split(", ", 1)[1:] if n.args else []
                expr = f"{first}.{attr}({', '.join(rest)})" if n.args else f"{n.target}()"
                if attr == "__setitem__":
                    idx = arg(n.args[1])
                    expr = f"{first}[{idx}] = {arg(n.args[2])}"
            else:
                expr = f"_kernels.kernel({attr!r})({call})" if owner == "nn" \
                    else f"{attr.partition(':')[2]}.apply({call})" if owner == "Function" \
                    else f"{owner}.{attr}({call})"
            outs = ", ".join(name(v) for v in n.outputs)
            lines.append(f"    {outs} = {expr}" if outs and attr != "__setitem__"
                         else f"    {expr}")
        lines.append(f"    return {arg(self.outputs)}")
        return "\n".join(lines)


class _Raw:
    """Prints as its text (names inside formatted arguments)."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text
