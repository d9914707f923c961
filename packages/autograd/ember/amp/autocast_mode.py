"""ember.autocast: regions where ops run in lower precision, per the one
table of ember.amp.policy (applied by ember.amp.dispatch).

The state is thread-local (as PyTorch's): per device type whether autocast
is on and its dtype, whether casts of parameters are cached, and the
nesting depth.  ``state.active`` says "some device type has autocast on and
it is not held down" -- it is held down inside an op the policy names and
in the backward pass, so that gradients follow the dtypes the forward
chose (each recorded cast takes its gradient back to the source dtype: a
float32 weight gets a float32 ``.grad``).  Reading a thread-local costs
more than a plain attribute, so ops first read ``anywhere.count`` (how many
threads' device types have autocast on, process-wide) and the thread-local
flag only when that is not 0.
"""
import copy
import functools
import threading
import warnings

from .._device import device as _device
from .._dtypes import bfloat16, float16, float32

__all__ = ["autocast", "is_autocast_available", "is_autocast_enabled",
           "set_autocast_enabled", "get_autocast_dtype", "set_autocast_dtype",
           "is_autocast_cache_enabled", "set_autocast_cache_enabled", "clear_autocast_cache",
           "autocast_increment_nesting", "autocast_decrement_nesting",
           "is_autocast_cpu_enabled", "get_autocast_cpu_dtype", "get_autocast_gpu_dtype"]

_DEFAULT_DTYPES = {"cuda": float16, "cpu": bfloat16}


class _State(threading.local):
    def __init__(self):  # runs once in each thread
        self.active = False
        self.enabled = {"cuda": False, "cpu": False}
        self.dtype = dict(_DEFAULT_DTYPES)
        self.cache_enabled = True
        self.nesting = 0
        # (id, dtype) -> (source, version, cast): casts of parameters, reused in a region
        self.cache = {}


state = _State()


class _Anywhere:
    __slots__ = ("count",)


#: (thread, device type) pairs with autocast on; a thread that ends inside a
#: region leaves it raised, which costs only the thread-local check
anywhere = _Anywhere()
anywhere.count = 0
_count_lock = threading.Lock()


def _set_enabled(device_type, enabled):
    was = state.enabled[device_type]
    if was != enabled:
        with _count_lock:
            anywhere.count += 1 if enabled else -1
        state.enabled[device_type] = enabled
    state.active = any(state.enabled.values())


def _device_type(device_type):
    """'cpu', 'cuda' from a device type string ('cuda:0' too), or
    ember.device's error naming the known types."""
    if device_type in ("cuda", "cpu"):
        return device_type
    return _device(device_type).type


# ---- the state, as PyTorch's functions ------------------------------------------
def is_autocast_available(device_type):
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    return device_type in _DEFAULT_DTYPES


def is_autocast_enabled(device_type=None):
    """Whether autocast is on for `device_type` (None: CUDA, as PyTorch)."""
    return state.enabled[_device_type("cuda" if device_type is None else device_type)]


def set_autocast_enabled(device_type, enabled=None):
    """set_autocast_enabled(device_type, enabled); set_autocast_enabled(enabled)
    sets CUDA's, as PyTorch's older form."""
    if enabled is None and isinstance(device_type, bool):
        device_type, enabled = "cuda", device_type
    if not isinstance(enabled, bool):
        raise TypeError("set_autocast_enabled(): argument 'enabled' (position 2) must be "
                        f"bool, not {type(enabled).__name__}")
    _set_enabled(_device_type(device_type), enabled)


def get_autocast_dtype(device_type):
    return state.dtype[_device_type(device_type)]


def set_autocast_dtype(device_type, dtype):
    state.dtype[_device_type(device_type)] = dtype


def is_autocast_cache_enabled():
    return state.cache_enabled


def set_autocast_cache_enabled(enabled):
    state.cache_enabled = bool(enabled)


def clear_autocast_cache():
    state.cache.clear()


def autocast_increment_nesting():
    state.nesting += 1
    return state.nesting


def autocast_decrement_nesting():
    state.nesting -= 1
    return state.nesting


def _deprecated(old, new):
    warnings.warn(f"ember.{old}() is deprecated. Please use ember.{new} instead.",
                  DeprecationWarning, stacklevel=3)


def is_autocast_cpu_enabled():
    _deprecated("is_autocast_cpu_enabled", "is_autocast_enabled('cpu')")
    return state.enabled["cpu"]


def get_autocast_cpu_dtype():
    _deprecated("get_autocast_cpu_dtype", "get_autocast_dtype('cpu')")
    return state.dtype["cpu"]


def get_autocast_gpu_dtype():
    _deprecated("get_autocast_gpu_dtype", "get_autocast_dtype('cuda')")
    return state.dtype["cuda"]


# ---- the region ------------------------------------------------------------------
class autocast:
    """Context manager and decorator: inside, ops on `device_type`'s
    floating tensors follow ember.amp.policy (matrix products in `dtype`,
    precision-sensitive ops in float32).  Nests: an inner
    ``autocast(..., enabled=False)`` turns it off until the block ends.

    device_type: 'cuda' or 'cpu'; dtype: default float16 on CUDA, bfloat16
    on the CPU (get_autocast_dtype); cache_enabled: reuse the cast of a
    parameter within the outermost region (default: is_autocast_cache_enabled()).
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = _device_type(device_type)
        self.fast_dtype = get_autocast_dtype(self.device) if dtype is None else dtype
        self._cache_enabled = state.cache_enabled if cache_enabled is None else cache_enabled
        # a non-bool `enabled` fails at __enter__, as PyTorch's
        self._enabled = enabled if not enabled or self._usable() else False
        self._saved = []

    def _usable(self):
        """Whether autocast can run as asked; warns (and it is disabled) where
        PyTorch warns."""
        name = self.device.upper()
        if self.device == "cuda":
            from .. import cuda
            if not cuda.is_available():
                warnings.warn("CUDA is not available. Disabling autocast.", stacklevel=3)
                return False
            if self.fast_dtype is bfloat16 and not cuda.is_bf16_supported():
                raise RuntimeError("Current CUDA Device does not support bfloat16. Please "
                                   "switch dtype to float16.")
            supported = (float16, bfloat16, float32)
        else:
            supported = (bfloat16, float16)
        if self.fast_dtype not in supported:
            warnings.warn(f"In {name} autocast, but the target dtype is not supported. "
                          f"Disabling autocast.\n{name} Autocast only supports dtypes of "
                          f"{', '.join(map(str, supported))} currently.", stacklevel=3)
            return False
        return True

    def __enter__(self):
        dev = self.device
        # entered inside an autocast op or the backward pass, where autocast is held down
        held_down = not state.active and any(state.enabled.values())
        self._saved.append((state.enabled[dev], state.dtype[dev], state.cache_enabled,
                            held_down))
        set_autocast_enabled(dev, self._enabled)
        state.dtype[dev] = self.fast_dtype
        state.nesting += 1
        state.cache_enabled = bool(self._cache_enabled)
        return self

    def __exit__(self, *exc):
        state.nesting -= 1
        if state.nesting == 0:  # the outermost region ends: its casts are dropped
            state.cache.clear()
        dev = self.device
        enabled, state.dtype[dev], state.cache_enabled, held_down = self._saved.pop()
        _set_enabled(dev, enabled)
        if held_down:
            state.active = False
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(f"autocast()(func) requires a callable, but got "
                            f"{type(func).__name__}. Did you mean to use autocast as a context "
                            "manager? For example:\n    with ember.autocast(device_type=...):\n"
                            "        output = model(input)")

        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with self._clone():  # a copy per call: the saved state is per call and thread
                return func(*args, **kwargs)
        return decorated

    def _clone(self):
        c = copy.copy(self)
        c._saved = []
        return c
