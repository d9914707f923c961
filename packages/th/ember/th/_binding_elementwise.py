"""The element-wise math ember.th and ember.thc share: every op of the
vocabulary (include/th_ops.def) as a function, a Tensor method and an
in-place form, the ops with extra arguments (add/sub alpha=, div
rounding_mode=, round decimals=, clamp) and the Python operators, defined
once over a C library's th_unary/th_binary (or the thc_ ones)."""
from ._vocabulary import codes, read_ops

UNARY_ALIASES = {"negative": "neg", "absolute": "abs", "arcsin": "asin",
                 "arccos": "acos", "arctan": "atan", "arcsinh": "asinh",
                 "arccosh": "acosh", "arctanh": "atanh", "fix": "trunc"}
BINARY_ALIASES = {"multiply": "mul", "arctan2": "atan2", "greater": "gt",
                  "greater_equal": "ge", "less": "lt", "less_equal": "le",
                  "not_equal": "ne"}
# the Python operators: (forward, reflected, in-place) dunder stems -> op
OPERATORS = {("add", "radd", "iadd"): "ADD", ("sub", "rsub", "isub"): "SUB",
             ("mul", "rmul", "imul"): "MUL", ("truediv", "rtruediv", "itruediv"): "DIV",
             ("floordiv", "rfloordiv", "ifloordiv"): "FLOOR_DIVIDE",
             ("mod", "rmod", "imod"): "REMAINDER", ("pow", "rpow", "ipow"): "POW",
             ("and", "rand", "iand"): "BITWISE_AND", ("or", "ror", "ior"): "BITWISE_OR",
             ("xor", "rxor", "ixor"): "BITWISE_XOR", ("lshift", "rlshift", "ilshift"): "LSHIFT",
             ("rshift", "rrshift", "irshift"): "RSHIFT"}
COMPARISONS = ("EQ", "NE", "LT", "LE", "GT", "GE")


def inplace_form(fn):
    """fn's in-place form: fn(self, ..., out=self)."""
    def inplace(self, *args, **kwargs):
        return fn(self, *args, out=self, **kwargs)
    inplace.__name__ = fn.__name__ + "_"
    return inplace


def define_elementwise(C, Tensor, functions, operand, wrap, scalar_ptr, check):
    """Defines the element-wise ops on Tensor and in `functions` (the
    binding's namespace table) over CLibrary C; returns by name the
    vocabulary (OPS, UNARY_OPS, BINARY_OPS), the ops with extra arguments
    and `attach` (which a binding uses for its own ops)."""
    un, un_out, bin_, bin_out = C.unary, C.unary_out, C.binary, C.binary_out
    NULL = C.ffi.NULL
    ops = read_ops(C.ffi, C.lib, C.prefix)
    unary_ops = codes(ops, "unary")
    no_inplace = set(unary_ops) - set(codes(ops, "unary", exclude={"no_inplace"}))  # predicates
    binary_ops = codes(ops, "binary", exclude={"hidden"})  # trunc_divide: div(rounding_mode=)

    def attach(name, function, method, inplace=None):
        function.__name__ = method.__name__ = name
        functions[name] = function
        setattr(Tensor, name, method)
        if inplace is not None:
            inplace.__name__ = name + "_"
            functions[name + "_"] = inplace
            setattr(Tensor, name + "_", inplace)

    def make_unary(code):
        def fn(input, *, out=None):
            if out is None:
                return wrap(un(code, input._p))
            check(un_out(code, out._p, input._p))
            return out

        def inplace(self):
            check(un_out(code, self._p, self._p))
            return self
        return fn, inplace

    def make_binary(code):
        def fn(input, other, *, out=None):
            if out is None:
                return wrap(bin_(code, operand(input), operand(other)))
            check(bin_out(code, out._p, operand(input), operand(other)))
            return out

        def method(self, other):
            return wrap(bin_(code, self._p, operand(other)))

        def inplace(self, other):
            check(bin_out(code, self._p, self._p, operand(other)))
            return self
        return fn, method, inplace

    for name, code in unary_ops.items():
        f, fi = make_unary(code)
        attach(name, f, f, None if name in no_inplace else fi)
    for name, code in binary_ops.items():
        attach(name, *make_binary(code))
    for aliases in (UNARY_ALIASES, BINARY_ALIASES):
        for alias, target in aliases.items():
            functions[alias] = functions[target]
            setattr(Tensor, alias, getattr(Tensor, target))
            setattr(Tensor, alias + "_", getattr(Tensor, target + "_"))

    # ---- ops with extra arguments ----------------------------------------
    ADD, SUB, BOOL, add_scaled, add_scaled_out = C.ADD, C.SUB, C.BOOL, C.add_scaled, \
        C.add_scaled_out

    def binary_into(code, a, b, out):
        if out is None:
            return wrap(bin_(code, a, b))
        check(bin_out(code, out._p, a, b))
        return out

    def scaled_into(a, b, alpha, out):
        if out is None:
            return wrap(add_scaled(a, b, scalar_ptr(alpha)))
        check(add_scaled_out(out._p, a, b, scalar_ptr(alpha)))
        return out

    def add(input, other, *, alpha=1, out=None):
        a, b = operand(input), operand(other)
        if alpha == 1:
            if out is None:  # the common call, without binary_into's frame
                return wrap(bin_(ADD, a, b))
            return binary_into(ADD, a, b, out)
        return scaled_into(a, b, alpha, out)

    def sub(input, other, *, alpha=1, out=None):
        a, b = operand(input), operand(other)
        if alpha == 1 or (a.dtype == BOOL and b.dtype == BOOL):  # bools: the bool message
            if out is None:
                return wrap(bin_(SUB, a, b))
            return binary_into(SUB, a, b, out)
        return scaled_into(a, b, -alpha, out)

    rounding = {None: C.DIV, "trunc": C.TRUNC_DIVIDE, "floor": C.FLOOR_DIVIDE}

    def div(input, other, *, rounding_mode=None, out=None):
        try:
            code = rounding[rounding_mode]
        except (KeyError, TypeError):
            raise ValueError("div expected rounding_mode to be one of None, "
                             f"'trunc', or 'floor' but found '{rounding_mode}'") from None
        if out is None:
            return wrap(bin_(code, operand(input), operand(other)))
        return binary_into(code, operand(input), operand(other), out)

    def rsub(input, other, *, alpha=1):
        return sub(other, input, alpha=alpha)

    def round(input, *, decimals=0, out=None):
        if decimals == 0:
            if out is None:
                return wrap(un(C.ROUND, input._p))
            check(un_out(C.ROUND, out._p, input._p))
            return out
        if decimals > 0:
            scale = 10.0 ** decimals
            r = (input * scale).round() / scale
        else:
            scale = 10.0 ** -decimals
            r = (input / scale).round() * scale
        return r if out is None else out.copy_(r)

    clamp_c, clamp_out_c = C.clamp, C.clamp_out

    def clamp(input, min=None, max=None, *, out=None):
        if min is None and max is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        lo = NULL if min is None else operand(min)
        hi = NULL if max is None else operand(max)
        if out is None:
            return wrap(clamp_c(input._p, lo, hi))
        check(clamp_out_c(out._p, input._p, lo, hi))
        return out

    def clamp_min(input, min):
        return clamp(input, min=min)

    def clamp_max(input, max):
        return clamp(input, max=max)

    for f in (add, sub, div, round, clamp):
        attach(f.__name__, f, f, inplace_form(f))
    for alias, f in (("subtract", sub), ("divide", div), ("true_divide", div),
                     ("clip", clamp)):
        functions[alias] = f
        setattr(Tensor, alias, f)
        setattr(Tensor, alias + "_", inplace_form(f))
    for f in (clamp_min, clamp_max, rsub):
        attach(f.__name__, f, f)
    Tensor.clamp_min_ = lambda self, min: clamp(self, min=min, out=self)
    Tensor.clamp_max_ = lambda self, max: clamp(self, max=max, out=self)
    functions["positive"] = lambda input: input
    Tensor.positive = lambda self: self

    # ---- the Python operators: the hot path --------------------------------
    def operator(code):
        def fwd(self, other):
            try:
                b = operand(other)
            except TypeError:
                return NotImplemented
            return wrap(bin_(code, self._p, b))

        def rev(self, other):
            try:
                a = operand(other)
            except TypeError:
                return NotImplemented
            return wrap(bin_(code, a, self._p))

        def inplace(self, other):
            check(bin_out(code, self._p, self._p, operand(other)))
            return self
        return fwd, rev, inplace

    for names, op in OPERATORS.items():
        for n, f in zip(names, operator(getattr(C, op))):
            setattr(Tensor, f"__{n}__", f)
    for op in COMPARISONS:
        setattr(Tensor, f"__{op.lower()}__", operator(getattr(C, op))[0])

    def tensor_operator(code):
        """a + b and a * b with a tensor b skip operand()'s checks (the
        hottest calls: what they use is bound as locals)."""
        def op(self, other, _bin=bin_, _code=code, _wrap=wrap, _tensor=Tensor):
            if other.__class__ is _tensor:
                return _wrap(_bin(_code, self._p, other._p))
            try:
                p = _bin(_code, self._p, operand(other))
            except TypeError:
                return NotImplemented
            return _wrap(p)
        return op

    Tensor.__add__ = tensor_operator(C.ADD)
    Tensor.__mul__ = tensor_operator(C.MUL)
    Tensor.__hash__ = object.__hash__
    Tensor.__neg__ = lambda self: wrap(un(C.NEG, self._p))
    Tensor.__pos__ = lambda self: self
    Tensor.__abs__ = lambda self: wrap(un(C.ABS, self._p))
    Tensor.__invert__ = lambda self: wrap(un(C.BITWISE_NOT, self._p))
    return {"OPS": ops, "UNARY_OPS": unary_ops, "BINARY_OPS": binary_ops, "add": add,
            "sub": sub, "div": div, "rsub": rsub, "round": round, "clamp": clamp,
            "attach": attach}
