"""PyTorch's legacy typed tensor classes: ember.FloatTensor, LongTensor,
..., and ember.cuda.FloatTensor, ...

They are not subclasses: calling one makes a plain ember.Tensor of its
dtype and device type, and ``isinstance(t, ember.FloatTensor)`` is true for
any float32 CPU tensor, as in PyTorch.  Call forms: no arguments (an empty
tensor), sizes (uninitialised), a data sequence, or a tensor of the same
type (an alias sharing its storage).  ``Tensor.type()`` names them
('ember.FloatTensor') and ``Tensor.type(name or class)`` converts to one
(PyTorch's 'torch.FloatTensor' spellings are accepted too)."""
from . import _dtypes
from ._tensor import TYPE_TITLES, Tensor

_BY_TITLE = {title: name for name, title in TYPE_TITLES.items()}


class _LegacyTensorType(type):
    """Metaclass: the typed classes test and build ember.Tensors."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and \
            obj.device.type == cls._device_type

    def __subclasscheck__(cls, sub):
        return sub is cls

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__name__}'>"

    def __call__(cls, *args, device=None, **kwargs):
        if kwargs:
            raise TypeError(f"new() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'; {cls.__module__}.{cls.__name__} takes "
                            f"sizes, data or a tensor, and device=")
        if cls._device_type == "cuda":
            import ember.cuda
            if not ember.cuda.is_available():
                raise TypeError(f"type {cls.__module__}.{cls.__name__} not available: Ember "
                                f"has no usable CUDA device here (ember.cuda.is_available() "
                                f"is False)")
        import ember
        dev = cls._device_type if device is None else ember.device(device)
        if device is not None and dev.type != cls._device_type:
            raise RuntimeError(f"legacy constructor expects device type: "
                               f"{cls._device_type} but device type: {dev.type} was passed")
        return _construct(cls, args, dev)


def _construct(cls, args, dev):
    import numpy as np

    import ember
    dtype = cls.dtype
    if not args:
        return ember.empty(0, dtype=dtype, device=dev)
    if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        return ember.empty(*args, dtype=dtype, device=dev)
    if len(args) == 1:
        (a,) = args
        if isinstance(a, ember.Size):
            return ember.empty(a, dtype=dtype, device=dev)
        if isinstance(a, Tensor):
            if not isinstance(a, cls):
                raise TypeError(f"expected {cls.__module__}.{cls.__name__} (got "
                                f"{a.type()})")
            return a.detach()   # an alias of the same storage, not recording
        if isinstance(a, str):
            raise TypeError(f"new(): invalid data type '{type(a).__name__}'")
        if isinstance(a, (list, tuple, np.ndarray)) or hasattr(a, "__array__"):
            return ember.tensor(a, dtype=dtype, device=dev)
        raise TypeError(f"new(): data must be a sequence (got {type(a).__name__})")
    raise TypeError(f"new() received an invalid combination of arguments - got "
                    f"({', '.join(type(a).__name__ for a in args)}), but expected one of: "
                    f"(), (int... size), (sequence data), (Tensor other)")


def _make_types(module, device_type):
    made = {}
    for name, title in TYPE_TITLES.items():
        cls_name = f"{title}Tensor"
        made[cls_name] = _LegacyTensorType(cls_name, (), {
            "dtype": getattr(_dtypes, name), "is_cuda": device_type == "cuda",
            "is_sparse": False, "_device_type": device_type, "__module__": module,
            "__doc__": f"Legacy constructor and isinstance test for {name} "
                       f"{device_type.upper()} tensors."})
    return made


CPU_TYPES = _make_types("ember", "cpu")
CUDA_TYPES = _make_types("ember.cuda", "cuda")


def parse_type(name):
    """(dtype, device type) of a type name ('torch.FloatTensor',
    'ember.cuda.LongTensor', ...) or of a legacy class; None if it is
    neither."""
    if isinstance(name, _LegacyTensorType):
        return name.dtype, name._device_type
    if not isinstance(name, str):
        return None
    parts = name.split(".")
    if len(parts) not in (2, 3) or parts[0] not in ("torch", "ember") or \
            (len(parts) == 3 and parts[1] != "cuda") or not parts[-1].endswith("Tensor"):
        return None
    dname = _BY_TITLE.get(parts[-1][:-len("Tensor")])
    if dname is None:
        return None
    return getattr(_dtypes, dname), "cuda" if len(parts) == 3 else "cpu"
