"""ember.thc as the ``cuda`` backend of the ember front (entry point group
``ember.backends``; see packages/autograd/ember/backends.py)."""
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
