"""Devices: ``ember.device('cpu')``, ``ember.device('cuda', 0)``, and the
backend namespace each device type's tensors come from."""
from . import backends

_KNOWN_TYPES = ("cpu", "cuda")


class device:
    """A device type and index, as ``torch.device``."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            if index is not None:
                raise ValueError("device(device, index): give the index in one place")
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int) and not isinstance(type, bool):
            type, index = "cuda", type  # ember.device(0) means cuda:0, as torch
        if not isinstance(type, str):
            raise TypeError(f"device() expects a string or a device, got {type!r}")
        name, sep, idx = type.partition(":")
        if sep:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index "
                                   f"was passed explicitly: {type}")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(idx)
        if name not in _KNOWN_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_KNOWN_TYPES)} device type at "
                               f"start of device string: {type}")
        if index is not None and (not isinstance(index, int) or index < 0):
            raise RuntimeError(f"Device index must not be negative, got {index}")
        self.type = name
        self.index = index

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if not isinstance(other, device):  # as torch.device: 'cpu' is not a device
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))


CPU = device("cpu")
_cpu_namespace = None


def cpu_namespace():
    """The CPU backend's function namespace (ember.th), found on first use."""
    global _cpu_namespace
    if _cpu_namespace is None:
        _cpu_namespace = backends.get_backend("cpu").namespace
    return _cpu_namespace


def namespace(dev):
    """The backend namespace for a device argument (None means the CPU)."""
    if dev is None or dev is CPU or dev.__class__ is str and dev == "cpu":
        return _cpu_namespace or cpu_namespace()
    dev = dev if isinstance(dev, device) else device(dev)
    if dev.type == "cpu":
        return cpu_namespace()
    ns = backends.get_backend(dev.type).namespace
    # 'cuda:1': the backend's functions run with that device current (its
    # `device(index)` context), so what they create lands there
    return _OnDevice(ns, dev.index) if dev.index is not None and hasattr(ns, "device") else ns


class _OnDevice:
    """A backend namespace whose functions run inside ``ns.device(index)``."""

    __slots__ = ("_ns", "_index")

    def __init__(self, ns, index):
        self._ns, self._index = ns, index

    def __getattr__(self, name):
        fn = getattr(self._ns, name)
        if not callable(fn) or isinstance(fn, type):
            return fn

        def on_device(*args, **kwargs):
            with self._ns.device(self._index):
                return fn(*args, **kwargs)
        return on_device


def device_of(raw):
    """The ember.device of a raw tensor."""
    d = raw.device
    if d == "cpu" or d is CPU:
        return CPU
    return d if isinstance(d, device) else device(str(d))
