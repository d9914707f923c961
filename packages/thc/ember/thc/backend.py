"""ember.thc as the ``cuda`` backend of the ember front (entry point group
``ember.backends``; see packages/autograd/ember/backends/__init__.py)."""
import ember.thc as _thc

API_VERSION = 1


class CUDABackend:
    device_type = "cuda"
    api_version = API_VERSION
    namespace = _thc
    Tensor = _thc.Tensor  # loads the tensor API (the front imports this module lazily)

    def is_available(self):
        return _thc.is_available()

    def device_count(self):
        return _thc.device_count()

    def from_numpy(self, array):
        return _thc.from_numpy(array)  # a device copy

    def to_numpy(self, tensor):
        return tensor.numpy()

    def manual_seed(self, seed):
        _thc.manual_seed(seed)

    def host_memory(self):
        """True on the emulated device, whose memory is host memory (host
        code, such as ember.compile's C kernels, may use its pointers)."""
        return _thc.is_emulated()

    # ---- page-locked host memory ----------------------------------------
    def pin_memory(self, tensor):
        """A copy of a contiguous CPU raw tensor in page-locked memory."""
        return _thc.pin_memory(tensor)

    def is_pinned(self, tensor):
        """True for a CPU raw tensor in page-locked memory."""
        return bool(_thc.device_count() and _thc.is_pinned(tensor))

    #: CUDA storages are not shared between processes here
    sharing = None
