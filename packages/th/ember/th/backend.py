"""ember.th as the ``cpu`` backend of the ember front (entry point group
``ember.backends``; see packages/autograd/ember/backends/__init__.py)."""
import ember.th as _th
from ember.th import _shared
from ember.th._lib import ffi as _ffi

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

    # ---- storages (ember.save / ember.load) ----------------------------
    def storage_key(self, tensor):
        """An int naming the tensor's storage: equal for views of one storage."""
        return int(_ffi.cast("uintptr_t", tensor._p.storage))

    def storage_numel(self, tensor):
        """How many elements of the tensor's dtype its whole storage holds."""
        return tensor._p.storage.nbytes // tensor.element_size()

    def storage_bytes(self, tensor):
        """The tensor's whole storage as a writable buffer (no copy)."""
        s = tensor._p.storage
        n = self.storage_numel(tensor) * tensor.element_size()
        return _ffi.buffer(s.data, n) if n else bytearray()

    def dtype_from_name(self, name):
        """The backend dtype called `name` ("float32", "int64", ...): KeyError
        for a name it does not know."""
        return _th.dtypes._by_name(name)

    #: shared-memory storages between processes (ember.multiprocessing, the
    #: DataLoader's workers): share_memory_, is_shared, handle, rebuild,
    #: stack, is_transient, to_transient, sweep, process_gone
    sharing = _shared
