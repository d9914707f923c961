"""How operations are defined.

Every operation is one entry of the table ``OPS``; defining it makes the
``ember.<name>`` function, the ``Tensor.<name>`` method, the in-place
``Tensor.<name>_`` form and operators, and the tests walk the same table
(its samples) for gradcheck, gradgradcheck and PyTorch conformance.

Three ways to define one, from the most to the least specialised:

- :func:`unary`: an element-wise op of one tensor, with formula(g, x, y);
- :func:`binary`: an element-wise op of two broadcasting operands, with
  formula_a/formula_b(g, a, b, y);
- :func:`op`: a class with ``forward`` (ember arguments -> raw result),
  ``save`` (what backward needs; ``OUT`` stands for the result),
  ``backward`` (g, *saved) -> gradient(s), and optionally ``inputs``
  (which arguments are differentiable, if not just the first),
  ``inplace`` (the raw in-place form) and ``samples``.

The wrappers are written for speed: when no input requires grad an op
costs the raw call plus one Tensor allocation.  An op that the autocast
policy names (ember.amp.policy) also reads one flag (a thread-local one
too once some thread uses autocast); inside an autocast region it calls
itself again through ``amp`` with its inputs cast and the flag down (see
ember.amp.dispatch.autocast_hook).
"""
import functools
import inspect
import numbers
import operator

from .._tensor import Tensor, _make
from ..amp.autocast_mode import anywhere as _autocast_anywhere, state as _autocast
from ..amp.dispatch import autocast_hook, autocast_op
from ..amp.policy import POLICY
from ..autograd import grad_mode
from ..autograd.graph import OUT
from ..autograd.nodes import (BinaryNode, FormulaNode, UnaryNode, _operand_fit,
                              any_requires_grad, check_inplace, check_view_write, node_class,
                              record, record_binary, record_inplace, record_unary)
from ..autograd.views import note_view

__all__ = ["OPS", "NAMESPACE", "DISPATCH", "OUT", "OpInfo", "register", "unary", "binary", "op",
           "raw", "dispatch_point"]

_mode = grad_mode.state
_new = object.__new__


class OpInfo:
    """One operation of the table, as the tests see it."""

    __slots__ = ("name", "function", "method", "inplace", "samples", "differentiable",
                 "torch", "checks")

    def __init__(self, name, function, method, inplace, samples, differentiable, torch,
                 checks):
        self.name = name
        self.function = function      # ember.<name>, or None
        self.method = method          # Tensor.<name>, or None
        self.inplace = inplace        # Tensor.<name>_, or None
        self.samples = samples        # list of samples.S
        self.differentiable = differentiable
        self.torch = torch            # PyTorch's name for it (None: not compared)
        self.checks = checks          # per-op test settings (tolerances, skips)

    @property
    def call(self):
        """The callable the tests use: input first."""
        return self.function or self.method

    def __repr__(self):
        return f"OpInfo({self.name})"


OPS = {}
NAMESPACE = {}
#: id(callable) -> (callable, op name) for every callable through which a
#: program reaches an op (ember.<f>, Tensor.<f>, in-place forms, operators):
#: where ember.jit's tracer records calls
DISPATCH = {}


def dispatch_point(fn, name):
    """Notes `fn` as a way into op `name` (see DISPATCH); returns fn."""
    if fn is not None:
        DISPATCH[id(fn)] = (fn, name)
    return fn


def register(name, *, function=None, method=None, inplace=None, aliases=(),
             samples=(), differentiable=True, torch=True, autocast_ready=False, **checks):
    """Adds an op to the table, the namespace and Tensor.  The function and
    method follow the autocast policy for `name` (ember.amp.policy): the
    templates below check it themselves (`autocast_ready`); any other
    function the policy names is wrapped."""
    if name in OPS:
        raise RuntimeError(f"op '{name}' is defined twice")
    if not autocast_ready:
        same = method is function
        function = None if function is None else \
            autocast_op(name, tensor_args_checked(name, function))
        method = function if same else None if method is None else \
            autocast_op(name, tensor_args_checked(name, method))
    info = OpInfo(name, function, method, inplace, list(samples), differentiable,
                  name if torch is True else torch, checks)
    OPS[name] = info
    for f in (function, method, inplace):
        dispatch_point(f, name)
    for n in (name,) + tuple(aliases):
        if function is not None and not n.startswith("_"):  # private ops stay private
            NAMESPACE[n] = function
        if method is not None:
            setattr(Tensor, n, method)
        if inplace is not None:
            setattr(Tensor, n + "_", inplace)
            if function is not None and not n.startswith("_"):
                NAMESPACE[n + "_"] = inplace  # ember.exp_(x), as torch.exp_
    return info


def raw(x):
    """The raw tensor of an ember Tensor; anything else unchanged."""
    return x._data if isinstance(x, Tensor) else x


def not_tensor(name, x, position=1, arg="input"):
    return TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, "
                     f"not {type(x).__name__}")


def _not_tensor_arg(name, forward, e, args, kwargs):
    """The TypeError (PyTorch's wording) for an AttributeError raised because
    an argument that must be a Tensor is not one, or None."""
    bad = getattr(e, "obj", None)
    if bad is None or isinstance(bad, Tensor):
        return None
    try:
        params = [p for p in inspect.signature(forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    for i, a in enumerate(args):
        if a is bad:
            arg = params[i].name if i < len(params) else "input" if i == 0 else "other"
            return not_tensor(name, bad, i + 1, arg)
    for k, v in kwargs.items():
        if v is bad:
            return TypeError(f"{name}(): argument '{k}' must be Tensor, not "
                             f"{type(v).__name__}")
    return None


def call_forward(name, forward, *args, **kwargs):
    """forward(*args, **kwargs), with a non-Tensor where a Tensor must be a
    TypeError instead of an AttributeError."""
    try:
        return forward(*args, **kwargs)
    except AttributeError as e:
        err = _not_tensor_arg(name, forward, e, args, kwargs)
        if err is None:
            raise
        raise err from None


def tensor_args_checked(name, fn):
    """fn, with call_forward's TypeError for a non-Tensor argument (for
    composite functions that read tensor attributes of their arguments)."""
    @functools.wraps(fn)
    def checked(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except AttributeError as e:
            err = _not_tensor_arg(name, fn, e, args, kwargs)
            if err is None:
                raise
            raise err from None
    return checked


def not_differentiable(name):
    return RuntimeError(f"the derivative for '{name}' is not implemented; it cannot "
                        "modify a tensor that requires grad in place")


# ---- element-wise ops of one tensor ------------------------------------------
def unary(name, formula, *, saves="x", samples=(), aliases=(), inplace=True,
          method=True, function=True, torch=True, node_name=None, forward=None,
          forward_=None, **checks):
    """An element-wise op x -> y; formula(g, x, y) is the gradient for x
    (None: not differentiable).  `saves` says which of x and y it uses;
    forward/forward_ are the raw calls (default: the raw methods)."""
    fwd = forward or operator.methodcaller(name)
    fwd_ = forward_ or operator.methodcaller(name + "_")
    cls = None
    if formula is not None:
        cls = node_class(UnaryNode, name, formula=formula, saves_input="x" in saves,
                         saves_output="y" in saves, node_name=node_name)

    amp = autocast_hook(name)

    def fn(input):
        if amp is not None and _autocast_anywhere.count and _autocast.active:
            return amp(fn, (input,), {})
        try:
            r = fwd(input._data)
        except AttributeError:
            if not isinstance(input, Tensor):
                raise not_tensor(name, input) from None
            raise
        if cls is not None and input._requires_grad and _mode.enabled:
            return record_unary(cls, input, r)
        t = _new(Tensor)
        t._data = r
        t._grad_fn = None
        t._requires_grad = False
        t._base = None
        t._meta = None
        return t

    def fn_(self):
        if _mode.enabled and self._requires_grad:
            if cls is None:
                check_inplace(self)
                raise not_differentiable(name + "_")
            saved = (self if "x" in saves else None, OUT if "y" in saves else None)
            return record_inplace(self, cls, (self,), saved, lambda: fwd_(self._data))
        if self._base is not None:
            check_view_write(self)
        fwd_(self._data)
        return self

    fn.__name__ = name
    fn.__qualname__ = f"Tensor.{name}"
    fn_.__name__ = fn_.__qualname__ = name + "_"
    return register(name, function=fn if function else None, method=fn if method else None,
                    inplace=fn_ if inplace else None, aliases=aliases, samples=samples,
                    differentiable=cls is not None, torch=torch, autocast_ready=True,
                    **checks)


# ---- element-wise ops of two operands ------------------------------------
def binary(name, formula_a=None, formula_b=None, *, saves="ab", samples=(), aliases=(),
           forward=None, inplace=True, method=True, function=True, dunders=(),
           torch=True, node_name=None, numbers=True, **checks):
    """An element-wise op (a, b) -> y of two broadcasting operands, either
    of which may be a Python number (numbers=False: both must be tensors).  formula_a/formula_b(g, a, b, y) give
    the gradients before broadcasting is reduced (None: not differentiable).
    `forward(a, b)` is the raw call (default: the raw method `name`);
    `dunders` names the operators, e.g. ("__add__", "__radd__", "__iadd__")."""
    if forward is None:
        def forward(a, b, _name=name):
            return getattr(a, _name)(b)
    inplace_name = name + "_"
    amp = autocast_hook(name)
    # a reflected operator the policy names by itself (number / tensor)
    amp_reflected = autocast_hook(next((d for d in dunders if d.startswith("__r")
                                        and d in POLICY), name))
    cls = None
    if formula_a is not None:
        cls = node_class(BinaryNode, name, formula_a=formula_a, formula_b=formula_b,
                         saves_a="a" in saves, saves_b="b" in saves,
                         saves_output="y" in saves, node_name=node_name)

    number = _number if numbers else _not_a_tensor

    def slow(input, other):
        """Numbers, subclasses, and a number as the first operand."""
        a = input._data if isinstance(input, Tensor) else number(name, input, 1)
        b = other._data if isinstance(other, Tensor) else number(name, other, 2)
        try:
            r = forward(a, b)
        except AttributeError:  # a number first, for an op that is only a method
            raise not_tensor(name, input) from None
        if cls is not None and _mode.enabled and (
                isinstance(input, Tensor) and input._requires_grad or
                isinstance(other, Tensor) and other._requires_grad):
            return record_binary(cls, input, other, r)
        return _make(r)

    def fn(input, other):
        if amp is not None and _autocast_anywhere.count and _autocast.active:
            return amp(fn, (input, other), {})
        if other.__class__ is Tensor and input.__class__ is Tensor:
            r = forward(input._data, other._data)
            if cls is not None and (input._requires_grad or other._requires_grad) \
                    and _mode.enabled:
                return record_binary(cls, input, other, r)
            t = _new(Tensor)
            t._data = r
            t._grad_fn = None
            t._requires_grad = False
            t._base = None
            t._meta = None
            return t
        return slow(input, other)

    def fn_(self, other):
        b = other._data if isinstance(other, Tensor) else number(inplace_name, other, 2)
        if _mode.enabled and (self._requires_grad or
                              isinstance(other, Tensor) and other._requires_grad):
            if cls is None:
                check_inplace(self)
                raise not_differentiable(inplace_name)
            saved = (self if "a" in saves else None, other if "b" in saves else None,
                     OUT if "y" in saves else None)
            fit_b = _operand_fit(other, self._data) if isinstance(other, Tensor) else None
            return record_inplace(self, cls, (self, other), saved,
                                  lambda: getattr(self._data, inplace_name)(b),
                                  fit=None if fit_b is None else (None, fit_b))
        if self._base is not None:
            check_view_write(self)
        getattr(self._data, inplace_name)(b)
        return self

    def operator_(self, other):
        if amp is not None and _autocast_anywhere.count and _autocast.active:
            return amp(operator_, (self, other), {})
        if isinstance(other, Tensor):
            r = forward(self._data, other._data)
            if cls is not None and (self._requires_grad or other._requires_grad) \
                    and _mode.enabled:
                return record_binary(cls, self, other, r)
        elif numbers and (other.__class__ in _PLAIN_NUMBERS or _is_number(other)):
            r = forward(self._data, other)
            if cls is not None and self._requires_grad and _mode.enabled:
                return record_binary(cls, self, other, r)
        else:
            return NotImplemented
        t = _new(Tensor)
        t._data = r
        t._grad_fn = None
        t._requires_grad = False
        t._base = None
        t._meta = None
        return t

    def reflected(self, other):
        if amp_reflected is not None and _autocast_anywhere.count and \
                _autocast.active:
            return amp_reflected(reflected, (self, other), {})
        if isinstance(other, Tensor) or numbers and _is_number(other):
            return slow(other, self)
        return NotImplemented

    fn.__name__ = name
    fn_.__name__ = inplace_name
    info = register(name, function=fn if function else None, method=fn if method else None,
                    inplace=fn_ if inplace else None, aliases=aliases, samples=samples,
                    differentiable=cls is not None, torch=torch, autocast_ready=True,
                    **checks)
    for d in dunders:
        if d.startswith("__i"):
            setattr(Tensor, d, fn_)
        elif d.startswith("__r") and d not in ("__rshift__",):
            setattr(Tensor, d, dispatch_point(reflected, name))
        else:
            setattr(Tensor, d, dispatch_point(operator_, name))
    return info


_PLAIN_NUMBERS = (int, float, bool)


def _is_number(x):
    return isinstance(x, numbers.Number)


def _number(name, x, position):
    if _is_number(x):
        return x
    raise TypeError(f"{name}(): argument '{'input' if position == 1 else 'other'}' "
                    f"(position {position}) must be Tensor or Number, not {type(x).__name__}")


def _not_a_tensor(name, x, position):
    raise TypeError(f"{name}(): argument '{'input' if position == 1 else 'other'}' "
                    f"(position {position}) must be Tensor, not {type(x).__name__}")


# ---- everything else: class-defined ops ----------------------------------
def _no_save(out, *args, **kwargs):
    return ()


def op(name=None, *, method=True, function=True, view=False, aliases=(), node_name=None,
       torch=True, **checks):
    """Class decorator: defines an op from a class with forward/save/
    backward/inputs/inplace/samples/outputs (see the module docstring).

    `view=True`: the result shares the input's storage (a view).
    `outputs`: a namedtuple type when forward returns several raw tensors,
    of which only the first is differentiable; `save` then receives the
    tuple (OUT, other outputs...) as its first argument.
    """
    def deco(spec):
        d = spec.__dict__
        opname = name or spec.__name__
        forward = d["forward"]
        backward = d.get("backward")
        save = d.get("save", _no_save)
        inputs = d.get("inputs")
        outputs = d.get("outputs")
        cls = None
        if backward is not None:
            cls = node_class(FormulaNode, opname, formula=backward, node_name=node_name,
                             holomorphic=d.get("holomorphic", False))
        ready = outputs is None and not view  # the templates that check autocast
        if outputs is not None:
            fn = _multi_output(opname, forward, save, cls, outputs)
        elif inputs is not None:
            fn = _multi_input(opname, forward, save, cls, inputs)
        elif view:
            fn = _view(opname, forward, save, cls)
        else:
            fn = _single_input(opname, forward, save, cls)
        fn.__name__ = opname
        fn.__doc__ = spec.__doc__
        fn_ = None
        if "inplace" in d:
            fn_ = _inplace(opname, d["inplace"], save, cls, inputs)
        register(opname, function=fn if function else None, method=fn if method else None,
                 inplace=fn_, aliases=aliases, samples=d.get("samples", ()),
                 differentiable=cls is not None, torch=torch, autocast_ready=ready, **checks)
        return fn
    return deco


def _single_input(name, forward, save, cls):
    amp = autocast_hook(name)

    def fn(input, *args, **kwargs):
        if amp is not None and _autocast_anywhere.count and _autocast.active:
            return amp(fn, (input,) + args, kwargs)
        r = call_forward(name, forward, input, *args, **kwargs)
        if cls is not None and input._requires_grad and _mode.enabled:
            return record(cls, r, (input,), save(OUT, input, *args, **kwargs))
        return _make(r)
    return fn


def _view(name, forward, save, cls):
    def fn(input, *args, **kwargs):
        r = call_forward(name, forward, input, *args, **kwargs)
        base = input._base
        if cls is not None and input._requires_grad and _mode.enabled:
            t = record(cls, r, (input,), save(OUT, input, *args, **kwargs))
            t._base = input if base is None else base
            note_view(t)
            return t
        t = _make(r)
        t._base = input if base is None else base
        return t
    return fn


def _multi_input(name, forward, save, cls, inputs):
    amp = autocast_hook(name)

    def fn(*args, **kwargs):
        if amp is not None and _autocast_anywhere.count and _autocast.active:
            return amp(fn, args, kwargs)
        r = call_forward(name, forward, *args, **kwargs)
        if cls is not None and _mode.enabled:
            ins = inputs(*args, **kwargs)
            if any_requires_grad(ins):
                return record(cls, r, ins, save(OUT, *args, **kwargs))
        return _make(r)
    return fn


def _multi_output(name, forward, save, cls, outputs):
    def fn(input, *args, **kwargs):
        r = call_forward(name, forward, input, *args, **kwargs)
        rest = tuple(_make(x) for x in r[1:])
        if cls is not None and input._requires_grad and _mode.enabled:
            first = record(cls, r[0], (input,), save((OUT,) + rest, input, *args, **kwargs))
        else:
            first = _make(r[0])
        return outputs(first, *rest)
    return fn


def _inplace(name, inplace, save, cls, inputs):
    def fn_(self, *args, **kwargs):
        if _mode.enabled:
            ins = (self,) if inputs is None else inputs(self, *args, **kwargs)
            if any_requires_grad(ins):
                if cls is None:
                    check_inplace(self)
                    raise not_differentiable(name + "_")
                return record_inplace(self, cls, ins, save(OUT, self, *args, **kwargs),
                                      lambda: inplace(self, *args, **kwargs))
        if self._base is not None:
            check_view_write(self)
        call_forward(name + "_", inplace, self, *args, **kwargs)
        return self
    fn_.__name__ = name + "_"
    return fn_
