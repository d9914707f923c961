"""Lua Torch nn objects as ember.legacy.nn instances: the object is made
without its constructor, gets the class's defaults, then every field the
file holds, then the conversions the Lua layout needs (4-d convolution
weights, sizes held in storages, running_std of old batch normalisation)."""
import ember

_CONTAINERS = ("Sequential", "Concat", "ConcatTable", "ParallelTable")


def _legacy():
    try:
        from ember.legacy import nn
    except ImportError:     # ember-nn is not installed: modules stay LuaObjects
        return None
    return nn


def _ints(value):
    if isinstance(value, ember.Tensor):
        return tuple(int(v) for v in value.tolist())
    if isinstance(value, (list, tuple)):
        return tuple(int(v) for v in value)
    return (int(value),)


def _class_name(x):
    return x.torch_typename() if hasattr(x, "torch_typename") else type(x).__name__


def _zeros_like(t):
    return ember.zeros_like(t) if isinstance(t, ember.Tensor) else None


def _fix_params(m):
    for p, g in type(m)._param_names:
        if getattr(m, p, None) is None or not isinstance(getattr(m, p), ember.Tensor):
            setattr(m, p, None)
            setattr(m, g, None)
        elif not isinstance(getattr(m, g, None), ember.Tensor) or \
                getattr(m, g).shape != getattr(m, p).shape:
            setattr(m, g, _zeros_like(getattr(m, p)))


def _fix(name, m, nn):
    if isinstance(m, nn.Module):
        _fix_params(m)
        m.train = bool(getattr(m, "train", True))
    if name in _CONTAINERS:
        mods = getattr(m, "modules", [])
        m.modules = list(mods.values()) if isinstance(mods, dict) else list(mods or [])
        if not all(isinstance(x, nn.Module) for x in m.modules):
            raise ValueError(f"nn.{name} holds modules Ember cannot use: "
                             f"{[_class_name(x) for x in m.modules]}")
    elif name == "SpatialConvolution":
        shape = (m.nOutputPlane, m.nInputPlane, m.kH, m.kW)
        m.weight = m.weight.reshape(shape)          # older files keep it 2-d
        m.gradWeight = ember.zeros_like(m.weight)
    elif name == "SpatialBatchNormalization":
        if getattr(m, "running_var", None) is None and getattr(m, "running_std", None) is not None:
            m.running_var = 1.0 / (m.running_std * m.running_std) - m.eps
        m.nOutput = m.running_mean.numel()
        m.affine = m.weight is not None
    elif name in ("View", "Reshape"):
        m.size = _ints(m.size)
        m.numElements = 1
        for s in m.size:
            m.numElements *= s if s != -1 else 1
    elif name in ("ClassNLLCriterion", "CrossEntropyCriterion", "BCECriterion"):
        if name == "CrossEntropyCriterion" and getattr(m, "weights", None) is None:
            nll = getattr(m, "nll", None)
            m.weights = getattr(nll, "weights", None)
        if not isinstance(getattr(m, "weights", None), ember.Tensor):
            m.weights = None
    if isinstance(m, nn.Criterion):
        m.sizeAverage = bool(getattr(m, "sizeAverage", True))
    return m


_DEFAULTS = {
    "SpatialConvolution": dict(padW=0, padH=0, bias=None),
    "SpatialMaxPooling": dict(padW=0, padH=0, ceil_mode=False),
    "SpatialAveragePooling": dict(padW=0, padH=0, ceil_mode=False, count_include_pad=True),
    "SpatialBatchNormalization": dict(eps=1e-5, momentum=0.1, weight=None, bias=None,
                                      running_var=None),
    "Linear": dict(bias=None),
    "Dropout": dict(p=0.5),
    "View": dict(numInputDims=None),
    "Reshape": dict(batchMode=None),
    "JoinTable": dict(nInputDims=None),
    "ClassNLLCriterion": dict(weights=None),
    "CrossEntropyCriterion": dict(weights=None),
    "BCECriterion": dict(weights=None),
}
# per-call state that a file's values must not replace
_RUNTIME = dict(indices=None, noise=None, save_mean=None, save_std=None, total_weight=None,
                log_probs=None)


def to_legacy(class_name, fields):
    """The ember.legacy.nn object for nn.<Name>, or None when there is none."""
    if not class_name.startswith("nn.") or not isinstance(fields, dict):
        return None
    nn = _legacy()
    name = class_name[3:]
    cls = getattr(nn, name, None) if nn is not None and name in nn.__all__ else None
    if cls is None or name in ("Module", "Criterion", "Container"):
        return None
    m = cls.__new__(cls)
    (nn.Criterion if issubclass(cls, nn.Criterion) else nn.Module).__init__(m)
    for k, v in _DEFAULTS.get(name, {}).items():
        setattr(m, k, v)
    for k, v in fields.items():
        # a field never replaces a method (nor private state)
        if isinstance(k, str) and k.isidentifier() and not k.startswith("_") \
                and not callable(getattr(cls, k, None)):
            setattr(m, k, v)
    for k, v in _RUNTIME.items():
        setattr(m, k, v)
    try:
        return _fix(name, m, nn)
    except (AttributeError, TypeError, RuntimeError) as e:
        raise ValueError(f"nn.{name} with fields {sorted(map(str, fields))} "
                         f"cannot be used: {e}") from None
