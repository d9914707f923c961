"""The ember.thc namespace's tensor functions (what the front calls through
backends.NAMESPACE_FUNCTIONS, with PyTorch's names): creation, random
numbers and generators, dtypes and the element-wise, reduction and
shaping functions of the _tensor_* modules.

Creation of patterned data (arange, linspace, logspace, eye) runs on the
host through ember.th and uploads the result: one transfer, and the
values are the CPU library's to the last bit."""
import numbers

import ember.th as _th
from ember.th import dtypes as _dt
from ember.th._binding import PhiloxGenerator, randint_args

from ._lib import check, ffi, lib
from ._tensor import (Tensor, _check_cuda, default_float, dtype_code, int64_array,
                      parse_shape, upload, wrap)
from ._tensor import scalar_tensor as _scalar_tensor
from . import (_linalg, _tensor_getitem, _tensor_index, _tensor_math, _tensor_ops,
               _tensor_shape, _tensor_sort)
from ._tensor_shape import cat, gen_ptr
from ._interop import from_cuda_array
from ._host_memory import is_pinned, pin_memory
from ._dlpack import from_dlpack
from ._device_guard import guard_all, on_device

functions = {}


def _register(fn, names=None):
    for n in names or (fn.__name__,):
        functions[n] = fn
    return fn


# ---- devices -------------------------------------------------------------
def _on(device):
    """Makes `device` ('cuda', 'cuda:1', an ember.device, an index) the
    current device inside the block ('cuda' and None: no change)."""
    if device is None:
        return on_device(None)
    if isinstance(device, numbers.Integral) and not isinstance(device, bool):
        device = f"cuda:{int(device)}"
    index = _check_cuda(device)   # checks the type and that the device exists
    return on_device(index if ":" in str(device) else None)


def _empty(size, dtype, default, device=None):
    s = parse_shape(size)
    code = dtype_code(dtype, default)
    with _on(device):
        return wrap(lib.thc_empty(len(s), int64_array(s), code))


def _upload(host, device=None):
    with _on(device):
        return upload(host)


# ---- creation --------------------------------------------------------------
@_register
def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new device tensor copying `data` (nested lists, numbers, arrays,
    CPU or CUDA tensors)."""
    if isinstance(data, Tensor):
        t = data.to(device, copy=True) if device is not None else data.clone()
        return t if dtype is None else t.to(dtype)
    host = _th.tensor(data.contiguous() if isinstance(data, _th.Tensor) else data,
                      dtype=dtype)
    return _upload(host, device)


@_register
def as_tensor(data, dtype=None, device=None):
    """Shares `data`'s memory when it is a device tensor or has
    ``__cuda_array_interface__`` (CuPy, Numba); else copies it."""
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype is dtype else data.to(dtype)
    if hasattr(data, "__cuda_array_interface__"):
        t = from_cuda_array(data)
        return t if dtype is None or t.dtype is dtype else t.to(dtype)
    return tensor(data, dtype=dtype, device=device)


@_register
def asarray(obj, *, dtype=None, device=None, copy=None):
    return tensor(obj, dtype=dtype, device=device) if copy else \
        as_tensor(obj, dtype=dtype, device=device)


@_register
def from_numpy(ndarray):
    """A device copy of a NumPy array (device memory cannot share NumPy's)."""
    return upload(_th.from_numpy(ndarray))


@_register
def empty(*size, dtype=None, device=None, requires_grad=False, out=None, pin_memory=False,
          memory_format=None):
    return _empty(size, dtype, default_float(), device)


@_register
def zeros(*size, dtype=None, device=None, requires_grad=False, out=None):
    with _on(device):   # the fill runs on the tensor's device
        t = _empty(size, dtype, default_float())
        check(lib.thc_zero(t._p))
    return t


@_register
def ones(*size, dtype=None, device=None, requires_grad=False, out=None):
    with _on(device):
        t = _empty(size, dtype, default_float())
        check(lib.thc_fill_double(t._p, 1.0))
    return t


@_register
def full(size, fill_value, *, dtype=None, device=None, requires_grad=False, out=None):
    if dtype is None:
        dtype = _dt.bool_ if isinstance(fill_value, bool) else _dt.int64 \
            if isinstance(fill_value, numbers.Integral) else _dt.BY_CODE[default_float()]
    with _on(device):
        return _empty((size,), dtype, None).fill_(fill_value)


@_register
def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False):
    size, stride = list(size), list(stride)
    code = dtype_code(dtype, default_float())
    with _on(device):
        return wrap(lib.thc_empty_strided(len(size), int64_array(size), int64_array(stride),
                                          code))


@_register
def scalar_tensor(s, *, dtype=None, device=None):
    with _on(device):
        return _scalar_tensor(s, dtype or _dt.BY_CODE[default_float()])


def _like(maker):
    def like(input, dtype=None, *, device=None, **kwargs):
        kwargs.pop("memory_format", None)
        kwargs.pop("requires_grad", None)
        return maker(input.shape, dtype=dtype or input.dtype, device=device, **kwargs)
    like.__name__ = maker.__name__ + "_like"
    return like


for _m in (empty, zeros, ones):
    _register(_like(_m))


@_register
def full_like(input, fill_value, *, dtype=None, device=None, **kwargs):
    return full(input.shape, fill_value, dtype=dtype or input.dtype, device=device)


@_register
def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False,
           out=None):
    vals = [v.item() if isinstance(v, (Tensor, _th.Tensor)) else v for v in (start, end, step)]
    default_float()  # ember.th picks the floating dtype: keep libTHC's equal
    return _upload(_th.arange(*vals, dtype=dtype), device)


@_register
def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False, out=None):
    return _upload(_th.linspace(start, end, steps, dtype=dtype), device)


@_register
def logspace(start, end, steps, base=10.0, *, dtype=None, device=None,
             requires_grad=False):
    return _upload(_th.logspace(start, end, steps, base, dtype=dtype), device)


@_register
def eye(n, m=None, *, dtype=None, device=None, requires_grad=False, out=None):
    return _upload(_th.eye(n, m, dtype=dtype), device)


# ---- random numbers --------------------------------------------------------
class Generator(PhiloxGenerator):
    """A CUDA random generator: libTHC's counter-based Philox state (a
    64-bit seed and a counter offset)."""

    __slots__ = ("_g", "_initial_seed")
    _set_seed = lib.thc_generator_set_seed

    def __init__(self, device="cuda"):
        _check_cuda(device)
        self._g = ffi.new("thc_generator *")  # owned: freed with this object
        self.manual_seed(_DEFAULT_SEED)

    @classmethod
    def _wrap_default(cls):
        g = object.__new__(cls)
        g._g = lib.thc_default_generator()
        g._initial_seed = g._g.seed
        return g

    @property
    def device(self):
        return "cuda:0"


_DEFAULT_SEED = 67280421310721  # PyTorch's default seed
default_generator = Generator._wrap_default()


@_register
def manual_seed(seed):
    return default_generator.manual_seed(seed)


@_register
def seed():
    return default_generator.seed()


@_register
def initial_seed():
    return default_generator.initial_seed()


@_register
def get_rng_state(device="cuda"):
    return default_generator.get_state()


@_register
def set_rng_state(new_state, device="cuda"):
    default_generator.set_state(new_state)


manual_seed_all = _register(manual_seed, ["manual_seed_all"])


@_register
def rand(*size, generator=None, dtype=None, device=None, requires_grad=False, out=None):
    with _on(device):
        return _empty(size, dtype, default_float()).uniform_(generator=generator)


@_register
def randn(*size, generator=None, dtype=None, device=None, requires_grad=False, out=None):
    with _on(device):
        return _empty(size, dtype, default_float()).normal_(generator=generator)


@_register
def randint(*args, size=None, generator=None, dtype=None, device=None, requires_grad=False):
    """randint(high, size) or randint(low, high, size)."""
    low, high, size = randint_args(args, size)
    with _on(device):
        t = _empty((size,), dtype, lib.THC_INT64)
        check(lib.thc_randint_(t._p, int(low), int(high), gen_ptr(generator)))
    return t


@_register
def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    """A random permutation from the CUDA generator: the order of random
    62-bit keys, drawn and sorted on the device."""
    n = int(n)
    if n < 0:
        raise RuntimeError(f"randperm: n must be non-negative, got {n}")
    with _on(device):
        keys = _empty((n,), _dt.int64, None)
        check(lib.thc_randint_(keys._p, 0, 1 << 62, gen_ptr(generator)))
        order = keys.sort(stable=True)[1]
        return order if dtype is None or dtype is _dt.int64 else order.to(dtype)


@_register
def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, out=None):
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        ref = mean if isinstance(mean, Tensor) else std
        shape = _th.broadcast_shapes(_shape(mean), _shape(std))
        t = _empty((shape,), dtype or ref.dtype, None)
        t.normal_(generator=generator)
        return t.mul_(std).add_(mean)
    if size is None:
        raise TypeError("normal() with float mean and std needs a size")
    t = _empty((size,), dtype, default_float())
    return t.normal_(float(mean), float(std), generator=generator)


def _shape(x):
    return tuple(x.shape) if isinstance(x, Tensor) else ()


@_register
def rand_like(input, *, dtype=None, **kw):
    return rand(input.shape, dtype=dtype or input.dtype)


@_register
def randn_like(input, *, dtype=None, **kw):
    return randn(input.shape, dtype=dtype or input.dtype)


@_register
def randint_like(input, low=0, high=None, *, dtype=None, **kw):
    if high is None:
        low, high = 0, low
    return randint(low, high, input.shape, dtype=dtype or input.dtype)


# ---- dtypes, threads and the rest: ember.th's ------------------------------
@_register
def set_default_dtype(d):
    _th.set_default_dtype(d)  # libTHC's default dtype is libTH's


@_register
def get_default_dtype():
    return _th.get_default_dtype()


@_register
def is_tensor(obj):
    return isinstance(obj, Tensor)


@_register
def numel(input):
    return input.numel()


for _name in ("set_num_threads", "get_num_threads", "promote_types", "Size", "dtype",
              "broadcast_shapes"):
    functions[_name] = getattr(_th, _name)
for _d in _dt.ALL:
    if not _d.is_complex:  # ember-thc has no complex tensors
        functions[_d.name] = _d
for _alias in ("float", "double", "half", "short", "int", "long", "bool"):
    functions[_alias] = getattr(_dt, _alias)
functions["Generator"] = Generator
functions["default_generator"] = default_generator
functions["Tensor"] = Tensor
functions["cat"] = cat
functions["from_cuda_array"] = from_cuda_array
functions["pin_memory"] = pin_memory
functions["from_dlpack"] = from_dlpack
functions["is_pinned"] = is_pinned


def _namespace():
    """Every public name: the families' functions first, these last."""
    ns = {}
    for m in (_tensor_ops, _tensor_math, _tensor_shape, _tensor_index, _tensor_getitem,
              _tensor_sort, _linalg):
        ns.update(m.functions)
    ns.update(functions)
    return {k: v for k, v in ns.items() if not k.startswith("_")}


namespace = _namespace()
guard_all(Tensor, namespace)   # several devices: each call on its tensors' device
