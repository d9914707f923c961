"""ember.cuda: GPU availability, seeding, the current device and memory
statistics.  The CUDA backend is the separate ember-thc package (``pip
install ember[cuda]``); without it or without a GPU, is_available() is
False, the seeding calls and empty_cache() do nothing, and the calls that
need a device raise a RuntimeError saying why (naming ember-thc)."""
from .. import backends as _backends


def is_available():
    return _backends.is_available("cuda")


def device_count():
    return _backends.get_backend("cuda").device_count() if is_available() else 0


def _thc(what):
    """ember.thc with a device present, or a RuntimeError saying why not."""
    try:
        import ember.thc as thc
    except ImportError as e:
        if isinstance(e, ModuleNotFoundError) and e.name in ("ember.thc", "ember"):
            raise RuntimeError(f"{what}: Ember has no CUDA support here: ember-thc is not "
                               f"installed (pip install ember-thc)") from None
        raise RuntimeError(f"{what}: ember-thc failed to import: {e}") from e
    if thc.device_count() == 0:
        raise RuntimeError(f"{what}: ember-thc found no CUDA device ({thc.cuda_error_text()})")
    return thc


def current_device():
    return _thc("current_device").current_device()


def set_device(device):
    _thc("set_device").set_device(getattr(device, "index", device))


def device(device):
    """Context manager: CUDA device `device` (an int, 'cuda:1', an
    ember.device; None: no change) is current inside the block."""
    return _thc("device").device(device)


def synchronize(device=None):
    """Waits for the work queued on `device` (None: the current one)."""
    thc = _thc("synchronize")
    with thc.device(device):
        thc.synchronize()


def memory_allocated(device=None):
    return _thc("memory_allocated").memory_allocated(device)


def max_memory_allocated(device=None):
    return _thc("max_memory_allocated").max_memory_allocated(device)


def memory_reserved(device=None):
    return _thc("memory_reserved").memory_reserved(device)


def max_memory_reserved(device=None):
    return _thc("max_memory_reserved").max_memory_reserved(device)


def memory_stats(device=None):
    """The caching allocator's counters (allocated/reserved bytes and their
    peaks, allocation and segment counts, out-of-memory events)."""
    return _thc("memory_stats").memory_stats(device)


def reset_peak_memory_stats(device=None):
    _thc("reset_peak_memory_stats").reset_peak_memory_stats(device)


def empty_cache():
    try:  # nothing is cached without ember-thc
        import ember.thc as thc
    except ImportError:
        return
    thc.empty_cache()


def manual_seed(seed):
    if is_available():
        _backends.get_backend("cuda").manual_seed(seed)


manual_seed_all = manual_seed


# ---- streams and events (ember.thc's objects) ------------------------------------
def get_device_name(device=None):
    return _thc("get_device_name").get_device_name(device)


def get_device_properties(device=None):
    return _thc("get_device_properties").get_device_properties(device)


def get_device_capability(device=None):
    return _thc("get_device_capability").get_device_capability(device)


def mem_get_info(device=None):
    return _thc("mem_get_info").mem_get_info(device)


def __getattr__(name):
    if name in ("Stream", "Event", "current_stream", "default_stream", "set_stream", "stream"):
        return getattr(_thc(f"ember.cuda.{name}"), name)
    raise AttributeError(f"module 'ember.cuda' has no attribute {name!r}")
