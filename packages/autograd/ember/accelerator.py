"""ember.accelerator: PyTorch's device-agnostic accelerator API, answered
from the installed backends.

The accelerator is CUDA when the CUDA backend (ember-thc) is installed,
otherwise there is none (``current_accelerator()`` is None, as on a
CPU-only PyTorch build).  It is *available* when a device also exists;
the calls that need a device raise PyTorch's RuntimeError otherwise.
Everything goes through ember.cuda, so this module holds no state."""
import importlib.util

from ._device import device as _device

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index",
           "current_device_idx", "set_device_index", "set_device_idx", "device_index",
           "synchronize", "empty_cache", "memory_allocated", "max_memory_allocated",
           "memory_reserved", "max_memory_reserved", "reset_peak_memory_stats"]

_NONE = "Cannot access accelerator device when none is available."


def _cuda_installed():
    try:
        return importlib.util.find_spec("ember.thc") is not None
    except (ImportError, ValueError):
        return False


def _cuda():
    import ember.cuda
    return ember.cuda


def current_accelerator(check_available=False):
    """ember.device('cuda') when the CUDA backend is installed (and, with
    check_available, a device is present); otherwise None."""
    if not _cuda_installed():
        return None
    if check_available and not is_available():
        return None
    return _device("cuda")


def is_available():
    """True when an accelerator device can be used now."""
    return _cuda_installed() and _cuda().is_available()


def device_count():
    return _cuda().device_count() if is_available() else 0


def _require():
    if not is_available():
        raise RuntimeError(_NONE)
    return _cuda()


def _index(device):
    """A device index from an int, 'cuda:1', an ember.device or None (the
    current device)."""
    if device is None:
        return current_device_index()
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    d = _device(device)
    if d.type != "cuda":
        raise ValueError(f"{d.type} doesn't match the current accelerator cuda.")
    return current_device_index() if d.index is None else d.index


def current_device_index():
    return _require().current_device()


def set_device_index(device, /):
    _require().set_device(_index(device))


current_device_idx = current_device_index
set_device_idx = set_device_index


class device_index:
    """Context manager: device index `device` is current inside the block
    (None: no change), the previous one again after it."""

    def __init__(self, device, /):
        self.idx = device
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None:
            cuda = _require()
            self.prev_idx = cuda.current_device()
            cuda.set_device(self.idx)

    def __exit__(self, *exc_info):
        if self.idx is not None:
            _cuda().set_device(self.prev_idx)


def synchronize(device=None, /):
    """Waits for the work queued on `device` (None: the current one)."""
    cuda = _require()
    cuda.synchronize(_index(device))


def empty_cache():
    _require().empty_cache()


def _stat(name):
    def stat(device_index=None, /):
        return getattr(_require(), name)(_index(device_index))
    stat.__name__ = name
    stat.__doc__ = f"ember.cuda.{name} of the accelerator device (None: the current one)."
    return stat


memory_allocated = _stat("memory_allocated")
max_memory_allocated = _stat("max_memory_allocated")
memory_reserved = _stat("memory_reserved")
max_memory_reserved = _stat("max_memory_reserved")
reset_peak_memory_stats = _stat("reset_peak_memory_stats")
