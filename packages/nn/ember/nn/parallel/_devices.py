"""Device arguments of ember.nn.parallel: indices from ints, 'cuda:1' or
ember.device objects, the devices present, and PyTorch's checks on them."""
import warnings

import ember
# the one parser of device arguments, shared with ember.cuda.comm
from ember.cuda.comm import device_index  # noqa: F401


def available_device_type():
    """'cuda' when a CUDA device is present (ember-thc installed, a GPU or
    the emulated device), else None."""
    return "cuda" if ember.cuda.is_available() else None


def all_device_indices():
    return list(range(ember.cuda.device_count()))


_IMBALANCE = """
    There is an imbalance between your GPUs. You may want to exclude GPU {} which
    has less than 75% of the memory or cores of GPU {}. You can do so by setting
    the device_ids argument to DataParallel, or by setting the CUDA_VISIBLE_DEVICES
    environment variable."""


def check_balance(device_ids):
    """AssertionError('Invalid device id') for an index that names no
    device; a warning when one device has less than 75% of another's memory
    or multiprocessors (the slowest replica sets the pace)."""
    count = ember.cuda.device_count()
    for i in device_ids:
        if not 0 <= i < count:
            raise AssertionError("Invalid device id")
    props = [ember.cuda.get_device_properties(i) for i in device_ids]
    for attr in ("total_memory", "multi_processor_count"):
        values = [getattr(p, attr) for p in props]
        low = min(range(len(values)), key=values.__getitem__)
        high = max(range(len(values)), key=values.__getitem__)
        if values[high] and values[low] / values[high] < 0.75:
            warnings.warn(_IMBALANCE.format(device_ids[low], device_ids[high]), stacklevel=3)
            return
