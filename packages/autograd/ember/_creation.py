"""Creating tensors: from data, filled, ranges, random; the ``*_like`` and
``Tensor.new_*`` forms; NumPy exchange; seeds, threads and the default
dtype.  Every function takes PyTorch's ``dtype``, ``device`` and
``requires_grad`` keywords; the device picks the backend."""
import functools
import inspect
import os
import warnings

from . import backends
from ._device import cpu_namespace, namespace
from ._tensor import Tensor, _make, _new_like

__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "empty", "empty_strided", "zeros",
           "ones", "full", "arange", "linspace", "logspace", "eye", "scalar_tensor",
           "empty_like", "zeros_like", "ones_like", "full_like", "rand", "randn", "randint",
           "randperm", "rand_like", "randn_like", "randint_like", "normal", "bernoulli",
           "multinomial", "Generator", "manual_seed", "seed", "initial_seed", "get_rng_state",
           "set_rng_state", "set_num_threads", "get_num_threads", "set_num_interop_threads",
           "get_num_interop_threads", "set_default_dtype",
           "get_default_dtype"]


def _leaf(data, requires_grad):
    t = _make(data)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _takes_out(fn):
    """fn with PyTorch's ``out=``: the values are made with out's dtype and
    device (unless given), then written into out (resized as needed) by the
    ops' one out= path (ember/_ops/out.py)."""
    name = fn.__name__
    params = inspect.signature(fn).parameters

    @functools.wraps(fn)
    def f(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        from ._ops.out import check_out, write_out
        check_out(name, out)
        if isinstance(out, Tensor):
            for key, value in (("dtype", out.dtype), ("device", out.device)):
                if key in params and kwargs.get(key) is None:
                    kwargs[key] = value
        return write_out(name, fn(*args, **kwargs), out)
    return f


# ---- from data ---------------------------------------------------------------
def _strip(data):
    """Nested data with ember Tensors replaced by their raw tensors."""
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, (list, tuple)) and data and _holds_tensor(data):
        return [_strip(x) for x in data]
    return data


_MAX_NESTING = 64  # deeper nesting (or a list that holds itself) is refused


def _holds_tensor(seq):
    x, depth = seq, 0
    while isinstance(x, (list, tuple)) and x:
        depth += 1
        if depth > _MAX_NESTING:
            raise ValueError(f"too many dimensions '{type(x).__name__}'")
        x = x[0]
    return isinstance(x, Tensor)


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new leaf tensor copying `data` (numbers, nested lists, arrays)."""
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.clone().detach() or sourceTensor.clone().detach()"
                      ".requires_grad_(True), rather than ember.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
        d = data._data.clone()
        return _leaf(d if dtype is None else d.to(dtype), requires_grad)
    return _leaf(namespace(device).tensor(_strip(data), dtype=dtype), requires_grad)


def as_tensor(data, dtype=None, device=None):
    """`data` as a tensor, sharing memory where it can (a Tensor of the
    right dtype is returned as is; a NumPy array is wrapped)."""
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype is dtype else data.to(dtype)
    if device is None and hasattr(data, "__cuda_array_interface__"):
        device = "cuda"   # CuPy, Numba, ...: shared device memory, as PyTorch
    return _make(namespace(device).as_tensor(_strip(data), dtype=dtype))


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    if copy:
        t = tensor(obj, dtype=dtype, device=device) if not isinstance(obj, Tensor) else \
            obj.detach().clone()
    else:
        t = as_tensor(obj, dtype=dtype, device=device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def from_numpy(ndarray):
    """A CPU tensor sharing memory with a NumPy array."""
    return _make(backends.get_backend("cpu").from_numpy(ndarray))


def from_dlpack(ext_tensor):
    """A tensor sharing the memory of a DLPack producer (anything with
    ``__dlpack__``: PyTorch, CuPy, JAX, NumPy, ...): CUDA data through
    ember-thc, CPU data through NumPy (zero-copy both ways)."""
    device_type = ext_tensor.__dlpack_device__()[0] if hasattr(ext_tensor, "__dlpack_device__") \
        else None
    if device_type == 1:   # kDLCPU
        import numpy as np
        return from_numpy(np.from_dlpack(ext_tensor))
    return _make(backends.get_backend("cuda").namespace.from_dlpack(ext_tensor))


# ---- filled ------------------------------------------------------------------
@_takes_out
def empty(*size, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None):
    return _leaf(namespace(device).empty(*size, dtype=dtype), requires_grad)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    return _leaf(namespace(device).empty_strided(size, stride, dtype=dtype), requires_grad)


@_takes_out
def zeros(*size, dtype=None, layout=None, device=None, requires_grad=False):
    return _leaf(namespace(device).zeros(*size, dtype=dtype), requires_grad)


@_takes_out
def ones(*size, dtype=None, layout=None, device=None, requires_grad=False):
    return _leaf(namespace(device).ones(*size, dtype=dtype), requires_grad)


@_takes_out
def full(size, fill_value, *, dtype=None, layout=None, device=None,
         requires_grad=False):
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return _leaf(namespace(device).full(size, fill_value, dtype=dtype), requires_grad)


def scalar_tensor(s, *, dtype=None, layout=None, device=None, requires_grad=False):
    ns = namespace(device)
    return _leaf(ns.full((), s, dtype=dtype or ns.get_default_dtype()), requires_grad)


def _item(v):
    return v.item() if isinstance(v, Tensor) else v


@_takes_out
def arange(start, end=None, step=1, *, dtype=None, layout=None, device=None,
           requires_grad=False):
    return _leaf(namespace(device).arange(_item(start), _item(end), _item(step), dtype=dtype),
                 requires_grad)


@_takes_out
def linspace(start, end, steps, *, dtype=None, layout=None, device=None,
             requires_grad=False):
    return _leaf(namespace(device).linspace(_item(start), _item(end), steps, dtype=dtype),
                 requires_grad)


@_takes_out
def logspace(start, end, steps, base=10.0, *, dtype=None, layout=None,
             device=None, requires_grad=False):
    return _leaf(namespace(device).logspace(_item(start), _item(end), steps, base,
                                            dtype=dtype), requires_grad)


@_takes_out
def eye(n, m=None, *, dtype=None, layout=None, device=None, requires_grad=False):
    return _leaf(namespace(device).eye(n, m, dtype=dtype), requires_grad)


# ---- like another tensor -------------------------------------------------------
def _like_args(input, dtype, device):
    return (dtype or input.dtype), (input.device if device is None else device)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    dtype, device = _like_args(input, dtype, device)
    return empty(input.shape, dtype=dtype, device=device, requires_grad=requires_grad)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    dtype, device = _like_args(input, dtype, device)
    return zeros(input.shape, dtype=dtype, device=device, requires_grad=requires_grad)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    dtype, device = _like_args(input, dtype, device)
    return ones(input.shape, dtype=dtype, device=device, requires_grad=requires_grad)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None,
              requires_grad=False, memory_format=None):
    dtype, device = _like_args(input, dtype, device)
    return full(input.shape, fill_value, dtype=dtype, device=device,
                requires_grad=requires_grad)


def rand_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    dtype, device = _like_args(input, dtype, device)
    return rand(input.shape, dtype=dtype, device=device, requires_grad=requires_grad)


def randn_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    dtype, device = _like_args(input, dtype, device)
    return randn(input.shape, dtype=dtype, device=device, requires_grad=requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None, layout=None, device=None,
                 requires_grad=False, memory_format=None):
    if high is None:
        low, high = 0, low
    dtype, device = _like_args(input, dtype, device)
    return randint(low, high, input.shape, dtype=dtype, device=device,
                   requires_grad=requires_grad)


# ---- random ------------------------------------------------------------------
@_takes_out
def rand(*size, generator=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    return _leaf(namespace(device).rand(*size, generator=generator, dtype=dtype),
                 requires_grad)


@_takes_out
def randn(*size, generator=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False):
    return _leaf(namespace(device).randn(*size, generator=generator, dtype=dtype),
                 requires_grad)


@_takes_out
def randint(*args, size=None, generator=None, dtype=None, layout=None, device=None,
            requires_grad=False):
    """randint(high, size) or randint(low, high, size)."""
    if size is not None:
        args = args + (size,)
    return _leaf(namespace(device).randint(*args, generator=generator, dtype=dtype),
                 requires_grad)


@_takes_out
def randperm(n, *, generator=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    return _leaf(namespace(device).randperm(n, generator=generator, dtype=dtype),
                 requires_grad)


@_takes_out
def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None,
           layout=None, device=None, requires_grad=False):
    """Samples (no gradient flows to mean and std)."""
    ref = mean if isinstance(mean, Tensor) else std if isinstance(std, Tensor) else None
    ns = namespace(device if ref is None else ref.device)
    r = ns.normal(mean._data if isinstance(mean, Tensor) else mean,
                  std._data if isinstance(std, Tensor) else std,
                  size, generator=generator, dtype=dtype)
    return _leaf(r, requires_grad)


@_takes_out
def bernoulli(input, p=None, *, generator=None):
    return _make(input._data.bernoulli(p, generator=generator))


@_takes_out
def multinomial(input, num_samples, replacement=False, *, generator=None):
    return _make(input._data.multinomial(num_samples, replacement, generator=generator))


class _AnyDeviceGenerator(type):
    """isinstance(g, ember.Generator) holds for every backend's generator."""

    def __instancecheck__(cls, obj):
        kinds = [cpu_namespace().Generator]
        kinds += [b.namespace.Generator for t, b in list(backends._loaded.items()) if t != "cpu"]
        return isinstance(obj, tuple(kinds))


class Generator(metaclass=_AnyDeviceGenerator):
    """A random generator of one device: ``Generator(device='cuda')`` makes
    the CUDA backend's (pass it to random functions on that device)."""

    def __new__(cls, device="cpu"):
        return namespace(device).Generator(device)


def manual_seed(seed):
    """Seeds the default generator of every backend in use (the CPU's at
    least); returns the CPU generator."""
    gen = cpu_namespace().manual_seed(seed)
    for device_type, backend in list(backends._loaded.items()):
        if device_type != "cpu":
            backend.manual_seed(seed)
    return gen


def seed():
    return cpu_namespace().seed()


def initial_seed():
    return cpu_namespace().initial_seed()


def get_rng_state():
    return _make(cpu_namespace().get_rng_state())


def set_rng_state(new_state):
    cpu_namespace().set_rng_state(new_state._data if isinstance(new_state, Tensor)
                                  else new_state)


def set_num_threads(n):
    cpu_namespace().set_num_threads(n)


def get_num_threads():
    return cpu_namespace().get_num_threads()


# Inter-op parallelism (independent ops run side by side) has no pool of its
# own in Ember: ops of one program run one after another, each on libTH's
# intra-op pool.  The setting is kept with PyTorch's rules (once, before
# use) so that programs that make it run and read back what they set.
_interop_threads = None


def set_num_interop_threads(n):
    global _interop_threads
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"set_num_interop_threads(): argument 'nthreads' must be int, "
                        f"not {type(n).__name__}")
    if n < 1:
        raise RuntimeError("Expected positive number of threads")
    if _interop_threads is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel "
                           "work has started or set_num_interop_threads called")
    _interop_threads = n


def get_num_interop_threads():
    if _interop_threads is None:
        return os.cpu_count() or 1
    return _interop_threads


def set_default_dtype(d):
    cpu_namespace().set_default_dtype(d)


def get_default_dtype():
    return cpu_namespace().get_default_dtype()


# ---- Tensor(...) and Tensor.new_* ------------------------------------------
def legacy_tensor(cls, args, device):
    """ember.Tensor(2, 3) (uninitialised), ember.Tensor([1, 2]) (data), or
    ember.Tensor() (empty), always of the default dtype."""
    ns = namespace(device)
    if not args:
        data = ns.empty(0)
    elif all(isinstance(a, int) and not isinstance(a, bool) for a in args) or \
            (len(args) == 1 and isinstance(args[0], ns.Size)):
        data = ns.empty(*args)
    elif len(args) == 1:
        src = args[0]
        data = src._data.to(ns.get_default_dtype()) if isinstance(src, Tensor) else \
            ns.tensor(_strip(src), dtype=ns.get_default_dtype())
    else:
        raise TypeError(f"Tensor() takes sizes or one data argument, got {args!r}")
    return _new_like(cls, data, False)


def _new_method(maker):
    def method(self, *size, dtype=None, device=None, requires_grad=False, **kwargs):
        return maker(*size, dtype=dtype or self.dtype,
                     device=self.device if device is None else device,
                     requires_grad=requires_grad, **kwargs)
    method.__name__ = "new_" + maker.__name__
    return method


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False, **kw):
    return full(size, fill_value, dtype=dtype or self.dtype,
                device=self.device if device is None else device, requires_grad=requires_grad)


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, **kw):
    if isinstance(data, Tensor):
        d = data._data.clone()
        return _leaf(d.to(dtype) if dtype else d, requires_grad)
    return tensor(data, dtype=dtype or self.dtype,
                  device=self.device if device is None else device,
                  requires_grad=requires_grad)


Tensor.new_empty = _new_method(empty)
Tensor.new_zeros = _new_method(zeros)
Tensor.new_ones = _new_method(ones)
Tensor.new_full = new_full
Tensor.new_tensor = new_tensor
Tensor.bernoulli = lambda self, p=None, *, generator=None: \
    bernoulli(self, p, generator=generator)
Tensor.multinomial = multinomial
