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


def reset_max_memory_allocated(device=None):
    """Starts the peak of allocated bytes afresh (so does
    reset_peak_memory_stats, which resets every peak)."""
    reset_peak_memory_stats(device)


def memory_summary(device=None, abbreviated=False):
    """The caching allocator's counters as a table for printing."""
    stats = memory_stats(device)
    index = _thc("memory_summary").current_device() if device is None else device

    def mib(n):   # bytes in the largest unit that keeps a number >= 1
        for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
            if n >= 1 << shift:
                return f"{n / (1 << shift):,.1f} {unit}"
        return f"{n} B"
    rows = [("allocated memory", mib(stats["allocated_bytes"]),
             mib(stats["max_allocated_bytes"])),
            ("reserved memory", mib(stats["reserved_bytes"]), mib(stats["max_reserved_bytes"]))]
    if not abbreviated:
        rows += [("allocations / frees", f"{stats['num_allocs']} / {stats['num_frees']}", ""),
                 ("segments (device mallocs / frees)", f"{stats['num_segments']} "
                  f"({stats['num_device_mallocs']} / {stats['num_device_frees']})", ""),
                 ("out-of-memory events", str(stats["num_ooms"]), "")]
    width = max(len(r[0]) for r in rows)
    lines = [f"Ember CUDA memory summary, device {index}",
             f"{'':{width}}  {'current':>16}  {'peak':>16}"]
    lines += [f"{name:{width}}  {now:>16}  {peak:>16}".rstrip() for name, now, peak in rows]
    return "\n".join(lines)


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


def seed():
    """Seeds the CUDA generator from the OS's randomness (nothing without
    a GPU, as manual_seed)."""
    if is_available():
        _backends.get_backend("cuda").namespace.seed()


seed_all = seed


def initial_seed():
    return _thc("initial_seed").initial_seed()


def get_rng_state(device="cuda"):
    """The CUDA generator's state: a CPU uint8 tensor."""
    from .._tensor import _make
    return _make(_thc("get_rng_state").get_rng_state(device))


def set_rng_state(new_state, device="cuda"):
    _thc("set_rng_state").set_rng_state(getattr(new_state, "_data", new_state), device)


def get_rng_state_all():
    """One state per device (the devices share one generator)."""
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states):
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def is_bf16_supported(including_emulation=True):
    """Whether bfloat16 works on the current device: compute capability 8.0
    or later computes it natively; Ember's kernels also compute it in
    float32 on older GPUs (`including_emulation`)."""
    if not is_available():
        return False
    return get_device_capability()[0] >= 8 or bool(including_emulation)


def init():
    """Starts the CUDA backend now (it starts at its first use anyway);
    a RuntimeError saying why when there is no usable GPU."""
    _thc("init")


def is_initialized():
    import sys
    return "ember.thc" in sys.modules and is_available()


# ---- streams and events (ember.thc's objects) ------------------------------------
def get_device_name(device=None):
    return _thc("get_device_name").get_device_name(device)


def get_device_properties(device=None):
    return _thc("get_device_properties").get_device_properties(device)


def get_device_capability(device=None):
    return _thc("get_device_capability").get_device_capability(device)


def get_arch_list():
    """The GPU architectures ember-thc was built for (['sm_75', ...,
    'compute_90']); [] without a usable GPU, as PyTorch."""
    if not is_available():
        return []
    return _thc("get_arch_list").arch_list()


def mem_get_info(device=None):
    return _thc("mem_get_info").mem_get_info(device)


def __getattr__(name):
    if name.endswith("Tensor"):  # ember.cuda.FloatTensor, ...: legacy typed classes
        from .._legacy_types import CUDA_TYPES
        if name in CUDA_TYPES:
            return CUDA_TYPES[name]
    if name == "amp":  # ember.cuda.amp: imported on first use
        import importlib
        return importlib.import_module(f"{__name__}.amp")
    if name in ("Stream", "Event", "current_stream", "default_stream", "set_stream", "stream"):
        return getattr(_thc(f"ember.cuda.{name}"), name)
    if name == "comm":  # imported on first use: `import ember` stays cheap
        import importlib
        return importlib.import_module(".comm", __name__)
    raise AttributeError(f"module 'ember.cuda' has no attribute {name!r}")
