"""Fusion groups: runs of element-wise nodes of a traced graph that one
generated kernel computes.

A node is fusible when it is one of the op vocabulary's unary or binary ops
with a C expression for its dtype class (not a predicate; for integers,
not an op that turns them into floats or checks a divisor or exponent),
or relu; it is not in place; its operands are tensors of its own dtype
(float32, float64 or an integer dtype) or Python numbers; and its extra arguments are the defaults (add/sub alpha=1,
div without rounding_mode).  A group is a run of consecutive fusible nodes
in program order with one output shape and dtype; its inputs may broadcast
to that shape.  A float group also holds reductions over the last dim
(sum, mean, amax, amin) of its full-shape values or inputs, and goes on
after them: later element-wise ops read a kept result broadcast along the
row, and ops over reduced values alone run once per row (see Group).
Everything else (products, convolutions, views, indexing, other
reductions) runs as traced.
"""
import numbers

from ember.jit._graph import Value

__all__ = ["Group", "partition", "fusible_ops"]

FLOAT_DTYPES = ("float32", "float64")
INT_DTYPES = ("int8", "uint8", "int16", "int32", "int64")
# reflected operators: the tensor is the right operand
REFLECTED = {"__radd__", "__rsub__", "__rmul__", "__rtruediv__", "__rpow__",
             "__rfloordiv__", "__rmod__"}
# div(rounding_mode=...) is the vocabulary's floor_divide / trunc_divide
ROUNDING = {"floor": "floor_divide", "trunc": "trunc_divide"}
# ops outside the vocabulary with a C expression (same NaN handling as eager)
EXTRA_UNARY = {"relu": "FMAX(x, 0)"}

_ops = None


def fusible_ops(cls="float"):
    """{name: (family, expression)} of the ops a group of dtype class `cls`
    ("float" or "int") may hold.  Integer groups take the ops whose result
    keeps the operands' dtype and that cannot fail on a value (no divisor
    or exponent checks: eager raises there, a kernel cannot)."""
    global _ops
    if _ops is None:
        from ember.th import ops
        rows = [o for o in ops() if o.family in ("unary", "binary")
                and "predicate" not in o.flags]   # trunc_divide (hidden): div(rounding_mode=)
        _ops = {
            "float": {o.name: (o.family, o.exprs["float"]) for o in rows if "float" in o.exprs},
            "int": {o.name: (o.family, o.exprs["int"]) for o in rows if "int" in o.exprs
                    and not o.flags & {"float", "float_only", "divisor", "exponent"}},
        }
        for name, expr in EXTRA_UNARY.items():
            _ops["float"][name] = ("unary", expr)
    return _ops[cls]


class Group:
    """One fused kernel's worth of nodes.

    ``steps`` holds, in program order, one entry per node: ``("full",
    node, (expression, operands))`` for an element-wise op over the group's
    shape, ``("reduce", node, (kind, operand))`` for a reduction of a
    full-shape value over the last dim, and ``("row", node, (expression,
    operands))`` for an element-wise op over reduced values (one per row).
    A reduction's result is a row value: full steps after it read it
    broadcast along the row (kept as (..., 1)), row steps compute from it.
    The kernel then walks each row once per reduction and once more for
    what follows the last one."""

    __slots__ = ("nodes", "steps", "inputs", "outputs", "row_outputs", "shape", "dtype")

    def __init__(self, shape, dtype):
        self.nodes = []         # the graph's nodes, in order
        self.steps = []         # (kind, node, payload) per node
        self.inputs = []        # Values read from outside the group
        self.outputs = []       # full-shape Values the rest of the program reads
        self.row_outputs = []   # row Values (reductions' and row steps') read after it
        self.shape, self.dtype = shape, dtype

    @property
    def reduces(self):
        return any(kind == "reduce" for kind, _, _ in self.steps)

    @property
    def terms(self):
        """(expression, operands) of the full-shape element-wise steps."""
        return [payload for kind, _, payload in self.steps if kind == "full"]

    def results(self):
        """The Values the kernel writes: full-shape outputs, then row ones."""
        return self.outputs + self.row_outputs

    def row_shape(self, keepdim=True):
        return tuple(self.shape[:-1]) + ((1,) if keepdim else ())

    def describe(self):
        ops = " -> ".join(n.kind + (" (over the last dim)" if k == "reduce" else "")
                          for k, n, _ in self.steps)
        return (f"{len(self.nodes)} ops ({ops}) over {self.dtype}[{', '.join(map(str, self.shape))}]"
                f", {len(self.inputs)} input(s), {len(self.results())} output(s)")


def _operand(a, dtype):
    """a as a group operand (a Value of dtype, or a number: a real one in a
    float group, an integer in an integer group), else None."""
    if isinstance(a, Value):
        return a if a.dtype == dtype else None
    if isinstance(a, bool):
        return None
    if dtype in INT_DTYPES:   # (an int beyond int64 is eager's error to raise)
        ok = isinstance(a, numbers.Integral) and -2 ** 63 <= a < 2 ** 63
        return int(a) if ok else None
    if isinstance(a, numbers.Real):
        return float(a)
    return None


def term(node):
    """(expression, operands) of a fusible node, or None."""
    if node.inplace or node.writes_view or len(node.outputs) != 1:
        return None
    out = node.outputs[0]
    if out.dtype in FLOAT_DTYPES:
        cls = "float"
    elif out.dtype in INT_DTYPES:
        cls = "int"
    else:
        return None
    entry = fusible_ops(cls).get(node.kind)
    if entry is None:
        return None
    family, expr = entry
    kwargs = dict(node.kwargs)
    if kwargs.get("alpha", 1) != 1 or kwargs.get("out") is not None:
        return None
    mode = kwargs.get("rounding_mode")
    if mode is not None:
        if node.kind != "div" or mode not in ROUNDING:
            return None
        if ROUNDING[mode] not in fusible_ops(cls):
            return None
        family, expr = fusible_ops(cls)[ROUNDING[mode]]
    kwargs.pop("alpha", None)
    kwargs.pop("rounding_mode", None)
    kwargs.pop("out", None)
    if kwargs:
        return None
    arity = 1 if family == "unary" else 2
    if len(node.args) != arity:
        return None
    operands = [_operand(a, out.dtype) for a in node.args]
    if any(o is None for o in operands) or not any(isinstance(o, Value) for o in operands):
        return None
    if node.target.split(".", 1)[1] in REFLECTED:
        operands.reverse()
    return expr, operands


REDUCTIONS = ("sum", "mean", "amax", "amin")


def reduction(node):
    """(kind, operand, keepdim) when node reduces a float tensor over its
    last dim (sum, mean, amax, amin; dim given, no dtype=), else None."""
    if node.kind not in REDUCTIONS or node.inplace or node.writes_view or \
            len(node.outputs) != 1:
        return None
    args, kwargs = list(node.args), dict(node.kwargs)
    if not args or not isinstance(args[0], Value):
        return None
    x = args.pop(0)
    names = ["dim", "keepdim"]
    for name, a in zip(names, args):
        if name in kwargs:
            return None
        kwargs[name] = a
    if set(kwargs) - set(names) or x.dtype not in FLOAT_DTYPES:
        return None   # (integer sums are int64: another dtype)
    if node.outputs[0].dtype != x.dtype:
        return None
    dim = kwargs.get("dim")
    if isinstance(dim, (tuple, list)) and len(dim) == 1:
        dim = dim[0]
    nd = len(x.shape)
    if not isinstance(dim, int) or isinstance(dim, bool) or nd == 0 or dim % nd != nd - 1:
        return None
    return node.kind, x, bool(kwargs.get("keepdim", False))


def _admit(group, node, t, kinds):
    """How node joins the open group: ("full" | "row", payload), or None
    when it cannot.  kinds: value id -> "full" or "row" for the group's
    values."""
    out = node.outputs[0]
    if out.dtype != group.dtype:
        return None
    values = [o for o in t[1] if isinstance(o, Value)]
    if tuple(out.shape) == tuple(group.shape):
        for v in values:
            if kinds.get(v.id) == "row" and tuple(v.shape) != group.row_shape() and \
                    not (len(group.shape) == 1 and tuple(v.shape) == ()):
                return None   # a (N,) row value would broadcast along the row, not down it
        return "full", t
    if group.reduces and tuple(out.shape) in (group.row_shape(), group.row_shape(False)) and \
            all(kinds.get(v.id) == "row" and tuple(v.shape) == tuple(out.shape) for v in values):
        return "row", t
    return None


def partition(graph, min_ops=2):
    """The graph's nodes as a list of steps: a Node (run as traced) or a
    Group of at least `min_ops` fusible nodes."""
    steps, group = [], None
    produced = {}   # value id -> the group that computes it
    kinds = {}      # value id -> "full" or "row", for the open group's values

    def close():
        nonlocal group
        if group is None:
            return
        if len(group.nodes) >= min_ops:
            steps.append(group)
        else:
            for n in group.nodes:
                steps.append(n)
                for v in n.outputs:
                    produced.pop(v.id, None)
        group = None
        kinds.clear()

    def add(kind, node, payload):
        group.nodes.append(node)
        group.steps.append((kind, node, payload))
        out = node.outputs[0]
        produced[out.id] = group
        kinds[out.id] = "row" if kind in ("reduce", "row") else "full"

    for node in graph.nodes:
        red = reduction(node)
        if red is not None:
            kind, x, _ = red
            # a reduction of a full-shape value of the open group (computed
            # in it or read from outside), or the start of a new group
            if group is not None and (tuple(x.shape) != tuple(group.shape) or
                                      x.dtype != group.dtype or kinds.get(x.id) == "row"):
                close()
            if group is None:
                group = Group(tuple(x.shape), x.dtype)
            add("reduce", node, (kind, x))
            continue
        t = term(node)
        if t is None:
            close()
            steps.append(node)
            continue
        how = _admit(group, node, t, kinds) if group is not None else None
        if how is None:
            close()
            group = Group(tuple(node.outputs[0].shape), node.outputs[0].dtype)
            how = _admit(group, node, t, kinds)
        add(how[0], node, how[1])
    close()
    _wire(steps, graph, produced)
    # a group nothing reads (a backward graph's recomputed values its
    # gradients do not need) is dead code: its ops have no effects
    return [s for s in steps if not isinstance(s, Group) or s.results()]


def _wire(steps, graph, produced):
    """Each group's inputs (read from outside it) and outputs (read after it)."""
    read_later = {}   # value id -> True when something outside its group reads it
    for step in steps:
        reads = [v for n in (step.nodes if isinstance(step, Group) else [step])
                 for v in n.inputs()]
        for v in reads:
            owner = produced.get(v.id)
            if owner is not None and owner is not step:
                read_later[v.id] = True
    for v in graph.output_values():
        if v.id in produced:
            read_later[v.id] = True
    for step in steps:
        if not isinstance(step, Group):
            continue
        seen = set()
        for kind, _, payload in step.steps:
            operands = [payload[1]] if kind == "reduce" else payload[1]
            for o in operands:
                if isinstance(o, Value) and produced.get(o.id) is not step and o.id not in seen:
                    seen.add(o.id)
                    step.inputs.append(o)
        for kind, node, _ in step.steps:
            v = node.outputs[0]
            if v.id in read_later:
                (step.outputs if kind == "full" else step.row_outputs).append(v)
