"""The node kinds the op table builds on, and how an operation records
itself (out of place and in place).

Each differentiable op gets its own Node subclass (``MulBackward0``, ...),
made by :func:`node_class` from one of the kinds here:

- UnaryNode: formula(g, x, y) for an op of one tensor x with output y;
- BinaryNode: formula_a / formula_b (g, a, b, y) for an op of two operands
  that broadcast, where either may be a Python number; the node reduces
  each gradient to its operand's shape and dtype;
- FormulaNode: formula(g, *saved) for everything else, where ``saved`` is
  what the op's ``save`` function chose to keep.  The formula may also be a
  tuple of per-input formulas, of which only those needed run.

Formulas are written with ember operations, so that under create_graph they
record a graph of their own (double backward).
"""
from .._tensor import Tensor
from . import anomaly_mode, grad_mode
from .graph import NO_EDGE, OUT, Node, edge, output, pack, unpack

_new = object.__new__
_anomaly = anomaly_mode.state
_mode = grad_mode.state


def camel(name):
    return "".join(part.capitalize() for part in name.strip("_").split("_"))


def node_class(kind, op_name, **attrs):
    """A Node subclass named like PyTorch's (``add`` -> ``AddBackward0``)."""
    name = attrs.pop("node_name", None) or f"{camel(op_name)}Backward0"
    for key, value in attrs.items():
        if callable(value) and not isinstance(value, type):
            attrs[key] = staticmethod(value)
    return type(name, (kind,), {"__slots__": (), "__module__": "ember.autograd.nodes", **attrs})


class SavingNode(Node):
    """A node with saved values (checked and freed as in PyTorch)."""

    __slots__ = ("_saved", "_stamps", "_out")

    def _save(self, values, out_data):
        self._saved = values
        self._stamps = stamps = pack(values, out_data)
        # keep the raw output only when it was saved (it may be large)
        self._out = out_data if stamps is not None and any(v is OUT for v in values) else None

    def _values(self):
        stamps = self._stamps
        if stamps is None:
            return self._saved
        return unpack(self, self._saved, stamps, self._out)

    def _release(self):
        if self._stamps is not None:
            self._saved = None
            self._out = None

    @property
    def saved_tensors(self):
        return tuple(v for v in self._values() if isinstance(v, Tensor))


def _conjugated(formula, g, *saved):
    """The element-wise formulas are g * f'(x) for an op f; with complex
    values the gradient (PyTorch's convention: the conjugate Wirtinger
    derivative) is g * conj(f'(z)) = conj(conj(g) f'(z)) for the ops with a
    complex loop (holomorphic all but abs, whose formula handles it)."""
    return formula(g.conj(), *saved).conj()


class UnaryNode(SavingNode):
    __slots__ = ()
    formula = None

    def _run(self, grads):
        x, y = self._values()
        g = grads[0]
        if g._data.dtype.is_complex:  # see _conjugated
            return (_conjugated(self.formula, g, x, y),)
        return (self.formula(g, x, y),)


class BinaryNode(SavingNode):
    __slots__ = ("_fit",)
    formula_a = formula_b = None

    def _run(self, grads):
        g = grads[0]
        a, b, y = self._values()
        ea, eb = self.next_functions
        if g._data.dtype.is_complex:  # see _conjugated
            ga = None if ea[0] is None else _conjugated(self.formula_a, g, a, b, y)
            gb = None if eb[0] is None else _conjugated(self.formula_b, g, a, b, y)
        else:
            ga = None if ea[0] is None else self.formula_a(g, a, b, y)
            gb = None if eb[0] is None else self.formula_b(g, a, b, y)
        fit = self._fit
        if fit is not None:
            ga, gb = fit_grad(ga, fit[0]), fit_grad(gb, fit[1])
        return (ga, gb)


class FormulaNode(SavingNode):
    __slots__ = ()
    formula = None
    holomorphic = False  # products: conjugated for complex values (_conjugated)

    def _run(self, grads):
        g = grads[0]
        saved = self._values()
        f = self.formula
        if self.holomorphic and g._data.dtype.is_complex:
            if f.__class__ is tuple:
                return tuple(None if e[0] is None else _conjugated(fi, g, *saved)
                             for fi, e in zip(f, self.next_functions))
            return (_conjugated(f, g, *saved),)
        if f.__class__ is tuple:
            return tuple(None if e[0] is None else fi(g, *saved)
                         for fi, e in zip(f, self.next_functions))
        r = f(g, *saved)
        return r if r.__class__ is tuple else (r,)


def fit_grad(g, target):
    """Reduces a broadcast gradient to its operand's (shape, dtype)."""
    if g is None or target is None:
        return g
    shape, dtype = target
    if shape is not None:
        g = g.sum_to_size(shape)
    if dtype is not None:
        if g._data.dtype.is_complex and not dtype.is_complex:
            g = g.real  # a real operand of a complex op: PyTorch keeps the real part
        g = g.to(dtype)
    return g


def _operand_fit(t, out):
    """(shape, dtype) to reduce t's gradient to, or None when t already
    has the output's shape and dtype."""
    d = t._data
    same_shape = d.dim() == out.dim() and d.numel() == out.numel() and (
        out.numel() != 0 or d.shape == out.shape)
    same_dtype = d.dtype is out.dtype
    if same_shape and same_dtype:
        return None
    return (None if same_shape else d.shape, None if same_dtype else d.dtype)


def _new_node(cls, edges):
    node = _new(cls)
    node.next_functions = edges
    node._extra = None if not _anomaly.enabled else {
        "trace": anomaly_mode.capture_forward_trace()}
    return node


# ---- recording out-of-place ops ---------------------------------------------
def record_unary(cls, x, out_data):
    node = _new_node(cls, (edge(x),))
    # the saved values written out (this runs for every recorded op)
    if cls.saves_input:
        if cls.saves_output:
            node._saved = (x, OUT)
            node._stamps = ((0, x._data._version()), (1, out_data._version()))
            node._out = out_data
        else:
            node._saved = (x, None)
            node._stamps = ((0, x._data._version()),)
            node._out = None
    elif cls.saves_output:
        node._saved = (None, OUT)
        node._stamps = ((1, out_data._version()),)
        node._out = out_data
    else:
        node._saved = (None, None)
        node._stamps = node._out = None
    return output(out_data, node)


def record_binary(cls, a, b, out_data):
    a_t = isinstance(a, Tensor)
    b_t = isinstance(b, Tensor)
    node = _new_node(cls, (edge(a) if a_t else NO_EDGE, edge(b) if b_t else NO_EDGE))
    # the saved values written out (this runs for every recorded op)
    stamps = []
    if cls.saves_a and a_t:
        stamps.append((0, a._data._version()))
    if cls.saves_b and b_t:
        stamps.append((1, b._data._version()))
    saved_a = a if cls.saves_a else None
    saved_b = b if cls.saves_b else None
    if cls.saves_output:
        stamps.append((2, out_data._version()))
        node._saved = (saved_a, saved_b, OUT)
        node._out = out_data
    else:
        node._saved = (saved_a, saved_b, None)
        node._out = None
    node._stamps = tuple(stamps) if stamps else None
    fa = _operand_fit(a, out_data) if a_t and a._requires_grad else None
    fb = _operand_fit(b, out_data) if b_t and b._requires_grad else None
    node._fit = None if fa is None and fb is None else (fa, fb)
    return output(out_data, node)


def record(cls, out_data, inputs, saved):
    """Records a FormulaNode op with differentiable `inputs` (tensors, or
    anything else for inputs that are not tensors)."""
    node = _new_node(cls, tuple([edge(t) if isinstance(t, Tensor) else NO_EDGE
                                 for t in inputs]))
    node._save(saved, out_data)
    return output(out_data, node)


def any_requires_grad(tensors):
    for t in tensors:
        if isinstance(t, Tensor) and t._requires_grad:
            return True
    return False


# ---- recording in-place ops ----------------------------------------------
def check_inplace(t):
    """In-place on a leaf that requires grad (or a view of one) would
    silently lose the gradient: PyTorch forbids it while grad mode is on."""
    if t._grad_fn is None and t._requires_grad:
        raise RuntimeError("a leaf Variable that requires grad is being used in an "
                           "in-place operation.")
    base = t._base
    if base is not None and base._grad_fn is None and base._requires_grad:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in "
                           "an in-place operation.")


def check_view_write(t):
    """A view taken in no_grad mode of a tensor that requires grad must not
    be written while grad mode is on: the base's history would not see it."""
    if t._base._requires_grad and not t._requires_grad and _mode.enabled:
        raise RuntimeError(
            "A view was created in no_grad mode and is being modified inplace with grad mode "
            "enabled. Given that this use case is ambiguous and error-prone, it is "
            "forbidden. You can clarify your code by moving both the view and the inplace "
            "either both inside the no_grad block (if you don't want the inplace to be "
            "tracked) or both outside (if you want the inplace to be tracked).")


def snapshot(t):
    """A copy of t's current values that keeps t's place in the graph: what
    a formula sees as the input of an in-place op that overwrites it."""
    s = _new(Tensor)
    s._data = t._data.clone()
    s._grad_fn = t._grad_fn
    s._output_nr = t._output_nr if t._grad_fn is not None else 0
    s._requires_grad = t._requires_grad
    s._base = None
    s._meta = None
    if t._grad_fn is not None and t._base is not None:
        s._grad_fn = edge(t)[0]
    return s


def record_inplace(t, cls, inputs, saved, run, fit=None):
    """Runs `run()` (the raw in-place op on t) and records it: t's history
    becomes the new node, whose inputs are `inputs` (t first, as it was
    before) and whose saved values are `saved` (where t itself means its
    value before the op and OUT its value after)."""
    check_inplace(t)
    if any(v is t for v in saved):
        before = snapshot(t)
        saved = tuple(before if v is t else v for v in saved)
    edges = tuple([edge(x) if isinstance(x, Tensor) else NO_EDGE for x in inputs])
    run()
    node = _new_node(cls, edges)
    node._save(saved, t._data)
    if isinstance(node, BinaryNode):
        node._fit = fit
    set_inplace_history(t, node)
    return t


def set_inplace_history(t, node):
    if t._base is None:
        t._grad_fn = node
        t._output_nr = 0
        t._requires_grad = True
    else:
        from .views import rebase_view
        rebase_view(t, node)
