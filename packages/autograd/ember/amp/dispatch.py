"""How ops follow the autocast policy (ember.amp.policy) -- one mechanism,
two ways in:

- ``autocast_hook(name)``: for the op templates of ember._ops.define, which
  test ``anywhere.count and state.active`` in their own fast path and, in a
  region, call themselves again through the hook with their inputs cast
  and autocast down (so an op outside a region pays one attribute read);
- ``autocast_op(name, fn)``: for functions composed of other ops (the
  front's composites, ember.nn.functional): a wrapper with fn's own
  signature that makes the same test and casts the same way.

Inside an op the policy names, autocast is off (as PyTorch excludes its
dispatch key below an autocast kernel): the op's parts run on the cast
inputs as they are.  A composite the policy leaves alone on a device keeps
autocast on inside, so its parts follow their own rows.
"""
import functools
import inspect

from .._device import device_of
from .._dtypes import float32, float64, promote_types
from .._tensor import Tensor
from ..autograd import grad_mode
from .autocast_mode import anywhere, state
from .policy import BANNED, BANNED_MESSAGES, FP32, INPUT_DTYPE, LOWER, POLICY, WIDEST

__all__ = ["autocast_op", "autocast_hook"]

_grad = grad_mode.state


def autocast_hook(name):
    """None when the policy does not name op `name`, else
    ``run(fn, args, kwargs)``: fn on the cast inputs with autocast down."""
    rule = POLICY.get(name)
    if rule is None:
        return None
    return functools.partial(_autocast_call, rule + (name,), reentering=True)


def autocast_op(name, fn):
    """`fn` under the policy for `name`: fn itself when the policy does not
    name it, else a wrapper with fn's signature (help and inspect see the
    real parameters, and a call costs one frame, not an *args repack)."""
    rule = POLICY.get(name)
    if rule is None:
        return fn
    rule += (name,)
    try:
        wrapper = _same_signature(fn, rule)
    except (TypeError, ValueError):  # no signature to copy (a builtin), or a clash
        def wrapper(*args, **kwargs):
            if anywhere.count and state.active:
                return _autocast_call(rule, fn, args, kwargs)
            return fn(*args, **kwargs)
    return functools.wraps(fn)(wrapper)


class _Name:
    """Renders as a bare name in a signature's text (a default's stand-in)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


_OURS = ("_anywhere", "_state", "_call", "_rule", "_fn")


def _same_signature(fn, rule):
    """A wrapper written with fn's parameters (fn's default objects, shared)."""
    sig = inspect.signature(fn)
    params, positional, keywords, passed = [], [], [], []
    env = {}
    if any(name in _OURS or name.startswith("_default_") for name in sig.parameters):
        raise ValueError("a parameter name would shadow the wrapper's own")
    for p in sig.parameters.values():
        if p.default is not p.empty:
            env["_default_" + p.name] = p.default
            p = p.replace(default=_Name("_default_" + p.name))
        params.append(p.replace(annotation=p.empty))
        if p.kind is p.VAR_POSITIONAL:
            positional.append("*" + p.name)
        elif p.kind is p.VAR_KEYWORD:
            keywords.append("**" + p.name)
            passed.append("**" + p.name)
        elif p.kind is p.KEYWORD_ONLY:
            keywords.append(f"{p.name!r}: {p.name}")
            passed.append(f"{p.name}={p.name}")
        else:
            positional.append(p.name)
    args = ", ".join(positional) + ("," if positional else "")
    source = (f"def wrapper{sig.replace(parameters=params, return_annotation=sig.empty)}:\n"
              f"    if _anywhere.count and _state.active:\n"
              f"        return _call(_rule, _fn, ({args}), {{{', '.join(keywords)}}})\n"
              f"    return _fn({', '.join(positional + passed)})\n")
    env.update(_anywhere=anywhere, _state=state, _call=_autocast_call, _rule=rule, _fn=fn)
    exec(source, env)
    return env["wrapper"]


def _autocast_call(rule, fn, args, kwargs, reentering=False):
    """fn(*args, **kwargs) under `rule` (cuda, cpu, op name).  `reentering`: fn is
    the op that called here, so it must run with autocast down even where
    the rule leaves its inputs alone (else it would come back here)."""
    st = state
    dev = _first_device_type(args, kwargs)
    kind = None
    if dev is not None and st.enabled.get(dev):
        kind = rule[0] if dev == "cuda" else rule[1]
    if kind is None:
        if not reentering:  # a composite whose parts autocast may still cast
            return fn(*args, **kwargs)
    elif kind is LOWER:
        args, kwargs = _cast_all(args, kwargs, dev, st.dtype[dev], st.cache_enabled)
    elif kind is FP32:
        if kwargs.get("dtype") is None:  # an explicit dtype= wins
            args, kwargs = _cast_all(args, kwargs, dev, float32, False)
    elif kind is WIDEST:
        target = _widest(args, kwargs, dev)
        if target is not None:
            args, kwargs = _cast_all(args, kwargs, dev, target, False)
    elif kind is BANNED:
        raise RuntimeError(BANNED_MESSAGES.get(rule[2], f"{rule[2]} is unsafe to autocast"))
    st.active = False
    try:
        out = fn(*args, **kwargs)
    finally:
        st.active = True
    if kind is INPUT_DTYPE:
        first = _first_eligible(args, kwargs, dev)
        if first is not None:
            out = _cast_value(out, dev, first.dtype, False)
    return out


def _tensors(args, kwargs):
    for x in args:
        if isinstance(x, Tensor):
            yield x
        elif x.__class__ in (list, tuple):
            yield from (y for y in x if isinstance(y, Tensor))
    for x in kwargs.values():
        if isinstance(x, Tensor):
            yield x


def _first_device_type(args, kwargs):
    """The op's device type: its first floating tensor's, else its first tensor's."""
    first = None
    for t in _tensors(args, kwargs):
        if t._data.dtype.is_floating_point:
            return device_of(t._data).type
        if first is None:
            first = t
    return None if first is None else device_of(first._data).type


def _eligible(t, dev):
    """A floating tensor on the region's device, and not float64: one autocast casts."""
    d = t._data.dtype
    return d.is_floating_point and d is not float64 and device_of(t._data).type == dev


def _first_eligible(args, kwargs, dev):
    return next((t for t in _tensors(args, kwargs) if _eligible(t, dev)), None)


def _widest(args, kwargs, dev):
    found = {t.dtype for t in _tensors(args, kwargs) if _eligible(t, dev)}
    if len(found) < 2:
        return None
    widest = found.pop()
    for d in found:
        widest = promote_types(widest, d)
    return widest


def _cast_all(args, kwargs, dev, dtype, cache):
    args = tuple(_cast_value(x, dev, dtype, cache) for x in args)
    if kwargs:
        kwargs = {k: _cast_value(v, dev, dtype, cache) for k, v in kwargs.items()}
    return args, kwargs


def _cast_value(x, dev, dtype, cache):
    if isinstance(x, Tensor):
        if x._data.dtype is dtype or not _eligible(x, dev):
            return x
        if cache and x._requires_grad and x._grad_fn is None and _grad.enabled:
            return _cached_cast(x, dtype)
        return x.to(dtype)
    if x.__class__ in (list, tuple):
        return x.__class__(_cast_value(y, dev, dtype, cache) for y in x)
    return x


def _cached_cast(x, dtype):
    """A leaf that requires grad (a parameter) is cast once per region and
    per dtype, and again after an in-place change (its version moved)."""
    key = (id(x), dtype)
    version = x._data._version()
    hit = state.cache.get(key)
    if hit is not None and hit[0] is x and hit[1] == version:
        return hit[2]
    cast = x.to(dtype)
    state.cache[key] = (x, version, cast)  # holds x, so its id is not reused meanwhile
    return cast
