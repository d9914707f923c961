"""ember.Tensor: a backend's raw tensor plus autograd metadata.

A Tensor holds its values in ``_data``, a raw tensor of whichever backend
owns the device (ember.th on the CPU), and calls it through PyTorch's names
only, so other backends slot in unchanged.  The autograd state is kept
small and flat, because every operation creates a Tensor:

- ``_grad_fn``: the Node that produced it (None for leaves);
- ``_output_nr``: which output of ``_grad_fn`` it is (set with ``_grad_fn``);
- ``_requires_grad``: True for leaves that require grad and for every
  tensor with a ``_grad_fn``, so one test tells whether an op must record;
- ``_base``: the tensor whose storage this view shares (None if no view);
- ``_meta``: rarely used state (``.grad``, hooks, ...), created on demand.

The operations themselves are attached from ember._ops.
"""
import warnings

from ._device import CPU, device_of
from .backends import get_backend, is_available as backend_available, loaded_backend, sharing

_new = object.__new__

# PyTorch spells tensor types in messages as torch.FloatTensor
TYPE_TITLES = {"float32": "Float", "float64": "Double", "float16": "Half",
               "bfloat16": "BFloat16", "int8": "Char", "uint8": "Byte", "int16": "Short",
               "int32": "Int", "int64": "Long", "bool": "Bool", "complex64": "ComplexFloat",
               "complex128": "ComplexDouble"}


class AutogradMeta:
    """A tensor's less-used autograd state."""

    __slots__ = ("grad", "hooks", "post_accumulate_hooks", "retains_grad", "accumulator",
                 "view_version")

    def __init__(self):
        self.grad = None
        self.hooks = None          # leaf hooks, run before .grad accumulation
        self.post_accumulate_hooks = None  # leaf hooks, run after it
        self.retains_grad = False
        self.accumulator = None    # weakref to the leaf's AccumulateGrad node
        self.view_version = None   # storage version when a view's grad_fn was set


# called with each new Tensor subclass (ember.multiprocessing registers its
# reducer for it, so Parameters are shared like tensors)
SUBCLASS_HOOKS = []


def meta_of(t):
    m = t._meta
    if m is None:
        m = t._meta = AutogradMeta()
    return m


class Tensor:
    """A multi-dimensional array that records operations for autograd."""

    __slots__ = ("_data", "_grad_fn", "_output_nr", "_requires_grad", "_base", "_meta",
                 "__weakref__")
    __array_priority__ = 1000  # NumPy scalars defer to Tensor's reflected operators

    def __new__(cls, *args, device=None):
        from . import _creation
        return _creation.legacy_tensor(cls, args, device)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for hook in SUBCLASS_HOOKS:  # e.g. ember.multiprocessing's reducers
            hook(cls)

    # ---- metadata ------------------------------------------------------
    @property
    def shape(self):
        return self._data.shape

    def size(self, dim=None):
        return self._data.size() if dim is None else self._data.size(dim)

    def stride(self, dim=None):
        return self._data.stride() if dim is None else self._data.stride(dim)

    @property
    def dtype(self):
        return self._data.dtype

    @property
    def device(self):
        return device_of(self._data)

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    @property
    def is_cpu(self):
        return self.device is CPU

    @property
    def layout(self):
        return "strided"

    @property
    def ndim(self):
        return self._data.dim()

    def dim(self):
        return self._data.dim()

    ndimension = dim

    def numel(self):
        return self._data.numel()

    nelement = numel

    def element_size(self):
        return self._data.element_size()

    @property
    def itemsize(self):
        return self._data.element_size()

    @property
    def nbytes(self):
        return self._data.numel() * self._data.element_size()

    def storage_offset(self):
        return self._data.storage_offset()

    def is_contiguous(self, memory_format=None):
        return self._data.is_contiguous()

    def is_floating_point(self):
        return self._data.dtype.is_floating_point

    def is_complex(self):
        return self._data.dtype.is_complex

    def data_ptr(self):
        return self._data.data_ptr()

    @property
    def _version(self):
        return self._data._version()

    def _is_view(self):
        return self._base is not None

    def is_shared(self):
        return self._data.is_shared()

    def share_memory_(self):
        """Moves this tensor's storage to shared memory (in place; views
        follow), so that processes it is sent to share it."""
        if self.device.type != "cpu":
            raise NotImplementedError(f"share_memory_() of a {self.device} tensor")
        sharing().share_memory_(self._data)
        return self

    def is_signed(self):
        return self._data.dtype.is_signed

    def is_same_size(self, other):
        return self._data.shape == other._data.shape

    def get_device(self):
        index = self.device.index
        return -1 if self.device.type == "cpu" else (index or 0)

    def is_inference(self):
        return False

    def is_pinned(self):
        """True for a CPU tensor in page-locked memory (from pin_memory)."""
        if self.device.type != "cpu":
            return False
        cuda = loaded_backend("cuda")  # nothing is pinned before the CUDA backend loads
        return bool(cuda and cuda.is_pinned(self._data))

    def pin_memory(self, device=None):
        """A copy in page-locked host memory, from which copies to the GPU
        are faster (needs a CUDA device; not recorded by autograd)."""
        if self.device.type != "cpu":
            raise RuntimeError(f"cannot pin '{self.device}' memory: only CPU tensors can be "
                               "pinned")
        if not backend_available("cuda"):
            raise RuntimeError("pin_memory needs a CUDA device, and none is available")
        if self.is_pinned():
            return self
        return _make(get_backend("cuda").pin_memory(self._data.contiguous()))

    def __len__(self):
        return len(self._data)

    # ---- autograd state ------------------------------------------------
    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        requires_grad = bool(requires_grad)
        if self._grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want "
                    "to use a computed variable in a subgraph that doesn't require "
                    "differentiation use var_no_grad = var.detach().")
            return self
        if requires_grad and not (self._data.dtype.is_floating_point or
                                  self._data.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point and complex dtype can "
                               "require gradients")
        self._requires_grad = requires_grad
        return self

    @property
    def is_leaf(self):
        return self._grad_fn is None

    @property
    def grad_fn(self):
        if self._base is not None and self._grad_fn is not None:
            from .autograd.views import current_grad_fn
            return current_grad_fn(self)
        return self._grad_fn

    @property
    def output_nr(self):
        return self._output_nr if self._grad_fn is not None else 0

    @property
    def grad(self):
        m = self._meta
        if self._grad_fn is not None and (m is None or m.grad is None and not m.retains_grad):
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being "
                "accessed. Its .grad attribute won't be populated during "
                "autograd.backward(). If you indeed want the .grad field to be populated "
                "for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
                "access the non-leaf Tensor by mistake, make sure you access the leaf "
                "Tensor instead.", UserWarning, stacklevel=2)
        return None if m is None else m.grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got "
                                f"grad of type {type(value).__name__}")
            if value.dtype is not self.dtype:
                raise RuntimeError("attempting to assign a gradient with dtype "
                                   f"'{value.dtype}' to a tensor with dtype '{self.dtype}'. "
                                   "Please ensure that the gradient and the tensor have "
                                   "the same dtype")
            if value.shape != self.shape:
                raise RuntimeError("assigned grad has data of a different size")
        meta_of(self).grad = value

    @grad.deleter
    def grad(self):
        if self._meta is not None:
            self._meta.grad = None

    @property
    def retains_grad(self):
        return self._meta is not None and self._meta.retains_grad

    # retain_grad(), register_hook() and register_post_accumulate_grad_hook()
    # are attached by ember.autograd.graph, backward() by ember.autograd.engine

    def detach(self):
        """A tensor sharing storage with this one, outside the graph."""
        return _make(self._data)

    def detach_(self):
        if self._base is not None and self._requires_grad:
            raise RuntimeError("Can't detach views in-place. Use detach() instead. If you "
                               "are using DistributedDataParallel (DDP) for training, and "
                               "gradient_as_bucket_view is set as True, gradients are views "
                               "of DDP buckets, and hence detach_() cannot be called on "
                               "these gradients. To fix this error, please refer to the "
                               "Optimizer.zero_grad() function in torch/optim/optimizer.py "
                               "as the solution.")
        self._grad_fn = None
        self._requires_grad = False
        return self

    @property
    def data(self):
        return _make(self._data)

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        self._data = value._data

    # ---- conversion to Python and NumPy ----------------------------------
    def numpy(self, *, force=False):
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        if self._data.device != "cpu" and self.device.type != "cpu":
            if not force:
                raise TypeError(f"can't convert {self.device} device type tensor to numpy. "
                                "Use Tensor.cpu() to copy the tensor to host memory first.")
            return self.detach().cpu().numpy()
        return self._data.numpy(force=force)

    @property
    def __cuda_array_interface__(self):
        """Zero-copy exchange with CuPy and other CUDA libraries (CUDA
        tensors only)."""
        if self.device.type != "cuda":
            raise AttributeError(f"{self.device} tensors have no __cuda_array_interface__; "
                                 "it is for CUDA tensors")
        if self._requires_grad:
            raise RuntimeError("Can't get __cuda_array_interface__ on a tensor that requires "
                               "grad. Use tensor.detach() first.")
        return self._data.__cuda_array_interface__

    def __dlpack__(self, stream=None, **kwargs):
        """A DLPack capsule sharing this tensor's memory (CUDA tensors through
        ember-thc, CPU tensors through NumPy)."""
        if self._requires_grad:
            raise RuntimeError("Can't export tensors that require gradient, use "
                               "tensor.detach()")
        if self.device.type == "cpu":
            return self._data.numpy().__dlpack__(stream=stream)
        return self._data.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return (1, 0) if self.device.type == "cpu" else self._data.__dlpack_device__()

    def record_stream(self, stream):
        """The CUDA caching allocator reuses this tensor's memory only after
        the work queued on `stream` so far."""
        self._data.record_stream(stream)

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        if dtype is not None:
            a = a.astype(dtype, copy=False)
        return a.copy() if copy else a

    def item(self):
        return self._data.item()

    def tolist(self):
        return self._data.tolist()

    def __bool__(self):
        return bool(self._data)

    def __float__(self):
        return float(self._data)

    def __int__(self):
        return int(self._data)

    def __index__(self):
        return self._data.__index__()

    def __complex__(self):
        return complex(self._data.item())

    def __iter__(self):
        if self._data.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __contains__(self, element):
        if isinstance(element, Tensor):
            element = element._data
        return element in self._data

    __hash__ = object.__hash__

    def __format__(self, spec):
        if self._data.dim() == 0 and spec:
            return format(self._data.item(), spec)
        return format(repr(self), spec)

    def __repr__(self, *, tensor_contents=None):
        text = repr(self._data)
        if self._grad_fn is not None:
            text = f"{text[:-1]}, grad_fn=<{type(self.grad_fn).__name__}>)"
        elif self._requires_grad:
            text = text[:-1] + ", requires_grad=True)"
        return text

    __str__ = __repr__

    # ---- copying and pickling -------------------------------------------
    def __reduce_ex__(self, protocol):
        return (_rebuild, (type(self), self._data, self._requires_grad, _state_of(self)))

    def __deepcopy__(self, memo):
        if self._grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.")
        if id(self) in memo:
            return memo[id(self)]
        import copy
        new = _new_like(type(self), self._data.clone(), self._requires_grad)
        memo[id(self)] = new
        grad = self._meta.grad if self._meta is not None else None
        if grad is not None:
            meta_of(new).grad = copy.deepcopy(grad, memo)
        state = _state_of(self)
        if state:
            new.__dict__.update(copy.deepcopy(state, memo))
        return new

    @staticmethod
    def _make_subclass(cls, data, require_grad=False):
        """An instance of Tensor subclass `cls` sharing `data`'s values, as a
        leaf (how ember.nn.Parameter is built)."""
        return _new_like(cls, data._data, require_grad)


_Tensor = Tensor


def _make(data):
    """A Tensor around raw `data` that does not require grad (the hot path:
    every operation whose inputs do not require grad ends here)."""
    t = _new(_Tensor)
    t._data = data
    t._grad_fn = None
    t._requires_grad = False
    t._base = None
    t._meta = None
    return t


def _new_like(cls, data, requires_grad):
    t = _new(cls)
    t._data = data
    t._grad_fn = None
    t._base = None
    t._meta = None
    t._requires_grad = False
    if requires_grad:
        t.requires_grad_(True)
    return t


def _state_of(t):
    return getattr(t, "__dict__", None) or None


def _rebuild(cls, data, requires_grad, state=None):
    t = _new_like(cls, data, requires_grad)
    if state:
        t.__dict__.update(state)
    return t


def is_tensor(obj):
    return isinstance(obj, Tensor)
