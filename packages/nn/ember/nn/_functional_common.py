"""Argument helpers shared by ember.nn.functional's family modules (int
pairs, tensor checks with PyTorch's messages, reductions), and the
decorators by which a function declares its autocast class."""
import numbers

import ember
from ember.amp import policy as _policy
from ember.amp.dispatch import autocast_op as _autocast_op


def autocast(cuda, cpu, banned_message=None):
    """Declares the decorated function's class under ember.autocast
    (ember.amp.policy: LOWER, FP32, ...; None: runs as it comes) on CUDA
    and on the CPU (and for BANNED what it raises), registers it with the
    policy and wraps the function."""
    def declare(fn):
        _policy.register(fn.__name__, cuda, cpu, banned_message)
        return _autocast_op(fn.__name__, fn)
    return declare


def follows_autocast(fn):
    """The decorated function under the policy row of its name that another
    declaration registered (its kernel's in ember.nn.kernels, or the front's
    op of the same name)."""
    return _autocast_op(fn.__name__, fn)


def _pair(v, name="argument"):
    if isinstance(v, numbers.Integral):
        return (int(v), int(v))
    v = tuple(int(i) for i in v)
    if len(v) == 1:
        return v * 2
    if len(v) != 2:
        raise ValueError(f"{name} must be an int or a pair of ints, got {v}")
    return v


def _check_tensor(x, name="input"):
    if not isinstance(x, ember.Tensor):
        raise TypeError(f"{name} must be a Tensor, not {type(x).__name__}")


def _check_tensors(fn, **args):
    """PyTorch's TypeError for each named argument that is not a Tensor."""
    for position, (name, x) in enumerate(args.items(), 1):
        if not isinstance(x, ember.Tensor):
            raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, "
                            f"not {type(x).__name__}")


def _inplace(input, fn, inplace):
    """fn(input), written into input when inplace.  When autograd records,
    fn reads a copy, so the values its backward saved are not the ones
    being overwritten (input's history becomes a copy of fn's result)."""
    if not inplace:
        return fn(input)
    source = input.clone() if input.requires_grad and ember.is_grad_enabled() else input
    return input.copy_(fn(source))


def _softplus1(x):
    # log(1 + e^x) without overflow in value or gradient: m + log1p(e^(x - 2m))
    # with m = max(x, 0); clamp passes the gradient at x = 0, so the slope
    # there is 1 - 2 * 0.5 = 0.5 (relu + abs would give 0)
    m = x.clamp(min=0)
    return m + (x - 2 * m).exp().log1p()


# how PyTorch spells tensor types in messages (FloatTensor, LongTensor, ...)
_TYPE_TITLES = {"float32": "Float", "float64": "Double", "float16": "Half",
                "bfloat16": "BFloat16", "int8": "Char", "uint8": "Byte", "int16": "Short",
                "int32": "Int", "int64": "Long", "bool": "Bool"}


def _type_name(t):
    """'FloatTensor' for a float32 tensor."""
    name = str(t.dtype).split(".")[-1]
    return _TYPE_TITLES.get(name, name) + "Tensor"


def _single(v):
    if isinstance(v, numbers.Integral):
        return int(v)
    (v,) = tuple(v)
    return int(v)


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_reduction(reduction, extra=()):
    if reduction not in ("mean", "sum", "none") + tuple(extra):
        raise ValueError(f"{reduction} is not a valid value for reduction")
