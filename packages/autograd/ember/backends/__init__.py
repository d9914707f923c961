"""The backend interface: what a tensor backend (ember-th for the CPU,
ember-thc for CUDA) provides to the ``ember`` front, and how the front
finds one.

Backends register an entry point in the group ``ember.backends`` whose
name is the device type (``cpu``, ``cuda``) and whose object is a class
implementing :class:`TensorBackend`.  Discovery is lazy: nothing is
imported until a device is first used.

The front keeps backend tensors ("raw" tensors, no autograd) inside its own
``ember.Tensor`` and calls them through PyTorch's names only:
:data:`RAW_TENSOR_METHODS` and :data:`NAMESPACE_FUNCTIONS` list exactly
what it calls, :data:`STORAGE_METHODS`, :data:`SHARING_FUNCTIONS` and
:data:`PINNING_METHODS` what saving, sharing between processes and
pinning call on the backend object, and :func:`missing_features` checks a
backend against them (the test suite runs it on every installed backend).
No other module of the front imports a backend's internals.
"""
from __future__ import annotations

import importlib
import sys
from typing import Any, Protocol, runtime_checkable

#: Version of this interface.  A backend declares the version it
#: implements; the front accepts backends with the same major version.
BACKEND_API_VERSION = 1

#: Which distribution provides each device type, and where its backend
#: lives, for error messages and for source checkouts without metadata.
PROVIDERS = {"cpu": ("ember-th", "ember.th.backend:CPUBackend"),
             "cuda": ("ember-thc", "ember.thc.backend:CUDABackend")}


@runtime_checkable
class TensorBackend(Protocol):
    """One device type's raw tensors (no autograd).

    The raw tensor type follows PyTorch's tensor API for everything the
    backend implements (methods such as ``add``, ``sum``, ``matmul``,
    ``view``, ``index_select``, ...); the namespace module offers the
    matching functions (``tensor``, ``empty``, ``randn``, ...).  Raw
    tensors are never resized or restrided in place: the front relies on
    a raw tensor's shape and strides being fixed for its lifetime, and on
    ``_version()`` counting the in-place writes to its storage (views of
    one storage share the count).
    """

    #: device type handled, e.g. "cpu"
    device_type: str
    #: BACKEND_API_VERSION this backend implements
    api_version: int
    #: the raw tensor class
    Tensor: type
    #: the module with PyTorch-style functions (ember.th for the CPU); a
    #: backend with several devices also gives it ``device(index)``, a
    #: context manager making that device current (``device='cuda:1'``)
    namespace: Any

    def is_available(self) -> bool:
        """True when the device can be used now (e.g. a GPU is present)."""

    def device_count(self) -> int:
        """Number of devices of this type."""

    def from_numpy(self, array: Any) -> Any:
        """A raw tensor sharing memory with a NumPy array (CPU) or a copy."""

    def to_numpy(self, tensor: Any) -> Any:
        """A NumPy array with the tensor's values (zero-copy on the CPU)."""

    def manual_seed(self, seed: int) -> None:
        """Seed the backend's default generator."""


def _vocabulary():
    """The element-wise ops of libTH's op vocabulary (th_ops.def, which
    libTHC shares): those with an in-place ``name_`` form, and the
    predicates without one."""
    from ember.th import ops
    rows = [o for o in ops() if o.family in ("unary", "binary") and "hidden" not in o.flags]
    return (tuple(o.name for o in rows if "no_inplace" not in o.flags),
            tuple(o.name for o in rows if "no_inplace" in o.flags))


_VOCABULARY, _PREDICATES = _vocabulary()
#: Element-wise raw methods the front calls, each also in its in-place
#: ``name_`` form: the vocabulary's ops and two with extra arguments.
_ELEMENTWISE = (*_VOCABULARY, "clamp", "nan_to_num")

#: Raw tensor methods and properties the front calls (PyTorch semantics).
RAW_TENSOR_METHODS = (
    # metadata and conversion
    "shape", "size", "stride", "dtype", "device", "dim", "numel", "storage_offset",
    "is_contiguous", "is_shared", "data_ptr", "element_size", "_version", "item", "tolist",
    "numpy", "to", "clone", "contiguous", "copy_", "fill_", "zero_",
    # element-wise (and their in-place forms, below)
    *_ELEMENTWISE, *(name + "_" for name in _ELEMENTWISE),
    "__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__", "__pow__",
    "__rpow__", "__and__", "__or__", "__xor__", "__lshift__", "__rshift__",
    *_PREDICATES, "lerp", "where",
    # reductions
    "sum", "nansum", "prod", "mean", "var", "std", "amax", "amin", "max", "min", "argmax",
    "argmin", "norm", "logsumexp", "cumsum", "cumprod", "all", "any", "count_nonzero",
    # linear algebra
    "dot", "mv", "mm", "bmm", "matmul", "outer", "addmm", "addmv", "baddbmm", "addbmm",
    # views and shaping
    "view", "reshape", "transpose", "permute", "t", "narrow", "select", "expand",
    "squeeze", "unsqueeze", "unfold", "as_strided", "diagonal", "flip", "roll", "repeat",
    "tril", "triu",
    # indexing
    "__getitem__", "__setitem__", "index_select", "gather", "scatter", "scatter_",
    "scatter_add", "scatter_add_", "scatter_reduce", "scatter_reduce_", "index_add",
    "index_add_", "index_copy", "index_copy_", "index_fill", "index_fill_", "masked_fill",
    "masked_fill_", "masked_select", "masked_scatter", "masked_scatter_", "nonzero", "take",
    "put_", "index_put_", "sort", "argsort", "topk", "kthvalue", "mode", "unique", "bincount",
    "histc",
    # random
    "uniform_", "normal_", "bernoulli_", "random_", "bernoulli", "multinomial",
)

#: Backend methods the front's ember.save and ember.load call on the
#: backends whose tensors are saved (the CPU: a CUDA tensor is saved from a
#: CPU copy and loaded back to its device).
STORAGE_METHODS = ("storage_key", "storage_numel", "storage_bytes", "dtype_from_name")

#: Functions of a backend's ``sharing`` object, which moves storages into
#: shared memory for ember.multiprocessing and the DataLoader's worker
#: processes (``sharing = None`` for a backend that cannot share).
SHARING_FUNCTIONS = ("share_memory_", "is_shared", "handle", "rebuild", "stack",
                     "is_transient", "to_transient", "sweep", "process_gone")

#: Backend methods for page-locked host memory (Tensor.pin_memory and
#: is_pinned; the CUDA backend).
PINNING_METHODS = ("pin_memory", "is_pinned")

#: ``host_memory()``: True when the device's tensors lie in host memory
#: (ember-thc's emulated device), so that host code may read and write them
#: through ``data_ptr()`` (ember.compile's generated C kernels run on them).
HOST_MEMORY_METHODS = ("host_memory",)

#: Which of the lists above each device type's backend must provide.
DEVICE_FEATURES = {"cpu": STORAGE_METHODS, "cuda": PINNING_METHODS + HOST_MEMORY_METHODS}

#: Functions of the backend namespace the front calls.
NAMESPACE_FUNCTIONS = (
    "tensor", "as_tensor", "from_numpy", "empty", "empty_strided", "zeros", "ones", "full",
    "arange", "linspace", "logspace", "eye", "rand", "randn", "randint", "randperm",
    "normal", "cat", "where", "searchsorted", "manual_seed", "seed", "initial_seed",
    "get_rng_state", "set_rng_state", "set_num_threads", "get_num_threads", "dtype",
    "get_default_dtype", "set_default_dtype", "promote_types", "Size",
)


#: Dense linear algebra of the backend namespace (ember.linalg): batches of
#: matrices in, column-major results out, as ember.th's ``linalg_*``.  Only
#: the CPU backend must provide them so far; on another device ember.linalg
#: raises NotImplementedError naming the routine.
LINALG_FUNCTIONS = (
    "linalg_lu_factor_ex", "linalg_lu_solve", "linalg_solve_ex", "linalg_inv_ex",
    "linalg_det", "linalg_slogdet", "linalg_cholesky_ex", "linalg_solve_triangular",
    "linalg_qr", "linalg_svd", "linalg_eigh", "linalg_lstsq", "linalg_householder_product",
    "linalg_geqrf", "linalg_ldl_factor_ex", "linalg_ldl_solve", "LinAlgError",
)

#: Which namespace functions beyond NAMESPACE_FUNCTIONS each device type's
#: backend must provide.
DEVICE_NAMESPACE_FUNCTIONS = {"cpu": LINALG_FUNCTIONS, "cuda": LINALG_FUNCTIONS}


class BackendError(RuntimeError):
    """A device's backend is missing or incompatible."""


_loaded: dict[str, TensorBackend] = {}


def _entry_point_target(device_type: str) -> str | None:
    from importlib import metadata  # slow to import: only on first device use
    for ep in metadata.entry_points(group="ember.backends"):
        if ep.name == device_type:
            return ep.value
    return None


def _load(target: str):
    module, _, attr = target.partition(":")
    obj = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def get_backend(device_type: str) -> TensorBackend:
    """The backend for a device type, imported on first use."""
    backend = _loaded.get(device_type)
    if backend is not None:
        return backend
    package, default_target = PROVIDERS.get(
        device_type, (f"a backend for '{device_type}'", None))
    # Installed packages register an entry point; a source checkout on
    # PYTHONPATH has no metadata, so the well-known location is tried next.
    # A well-known provider already imported (ember.th: the front imports
    # it) is used without the lookup, which costs 40 ms of importlib.metadata.
    package_of_default = (default_target or "").partition(":")[0].rpartition(".")[0]
    if package_of_default in sys.modules:
        target = default_target
    else:
        target = _entry_point_target(device_type) or default_target
    if target is None:
        raise BackendError(f"no Ember backend is installed for device type "
                           f"'{device_type}'")
    try:
        backend = _load(target)()
    except ImportError as e:
        module = target.partition(":")[0]
        if isinstance(e, ModuleNotFoundError) and e.name and module.startswith(e.name):
            # the provider itself is absent (not one of its dependencies)
            raise BackendError(
                f"no Ember backend is installed for device type '{device_type}': "
                f"install {package} (pip install {package})") from None
        raise BackendError(f"the {package} backend for '{device_type}' failed to "
                           f"import: {e}; reinstall or upgrade {package}") from e
    except AttributeError as e:
        raise BackendError(f"the installed {package} has no backend object "
                           f"({target}): upgrade {package}") from e
    version = getattr(backend, "api_version", None)
    if version != BACKEND_API_VERSION:
        raise BackendError(
            f"the installed {package} implements backend API version {version}, "
            f"but this ember needs version {BACKEND_API_VERSION}: upgrade "
            f"{package} and ember together")
    if not isinstance(backend, TensorBackend):
        raise BackendError(f"{package} does not provide the Ember backend interface; "
                           f"upgrade {package}")
    _loaded[device_type] = backend
    return backend


def loaded_backend(device_type: str) -> TensorBackend | None:
    """The backend for a device type if it was loaded already, else None
    (for questions such as "is this pinned?" that need no import)."""
    return _loaded.get(device_type)


def sharing():
    """The CPU backend's shared-memory functions (SHARING_FUNCTIONS)."""
    sh = getattr(get_backend("cpu"), "sharing", None)
    if sh is None:
        raise BackendError("the installed CPU backend cannot share tensors between "
                           "processes: upgrade ember-th")
    return sh


def is_available(device_type: str) -> bool:
    """True when a backend for the device type is installed and usable."""
    try:
        return bool(get_backend(device_type).is_available())
    except BackendError:
        return False


def missing_features(backend: TensorBackend) -> list[str]:
    """What the front calls that `backend` does not provide (empty when the
    backend is complete)."""
    missing = [f"Tensor.{name}" for name in RAW_TENSOR_METHODS
               if not hasattr(backend.Tensor, name)]
    missing += [name for name in NAMESPACE_FUNCTIONS +
                DEVICE_NAMESPACE_FUNCTIONS.get(backend.device_type, ())
                if not hasattr(backend.namespace, name)]
    missing += [name for name in DEVICE_FEATURES.get(backend.device_type, ())
                if not hasattr(backend, name)]
    sh = getattr(backend, "sharing", None)
    if backend.device_type == "cpu" and sh is None:
        missing.append("sharing")
    elif sh is not None:
        missing += [f"sharing.{name}" for name in SHARING_FUNCTIONS if not hasattr(sh, name)]
    return missing


# PyTorch's switch modules (ember.backends.cudnn, ember.backends.cuda, ember.backends.mps)
from . import cuda, cudnn, mps  # noqa: E402,F401
