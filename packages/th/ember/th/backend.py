"""ember.th as the ``cpu`` backend of the ember front (entry point group
``ember.backends``; see packages/autograd/ember/backends.py)."""
import ember.th as _th

API_VERSION = 1


class CPUBackend:
    device_type = "cpu"
    api_version = API_VERSION
    Tensor = _th.Tensor
    namespace = _th

    def is_available(self):
        return True

    def device_count(self):
        return 1

    def from_numpy(self, array):
        return _th.from_numpy(array)

    def to_numpy(self, tensor):
        return tensor.numpy()

    def manual_seed(self, seed):
        _th.manual_seed(seed)
