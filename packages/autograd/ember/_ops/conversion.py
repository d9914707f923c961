"""Dtype and device conversion (to, float(), type_as, cpu/cuda) and the
in-place writes that replace values: copy_, fill_, zero_ and the random
samplers (uniform_, normal_, ...), whose gradient for the old values is 0."""
import warnings

from .. import backends
from .._creation import zeros_like
from .._device import device as _device, device_of
from .._tensor import TYPE_TITLES, Tensor, _make
from ..autograd import grad_mode
from .define import dispatch_point, op, raw, register, tensor_args_checked
from .samples import S, T

_mode = grad_mode.state


@op(function=False, method=False, node_name="ToCopyBackward0")
class _to_dtype:
    def forward(input, dtype):
        return input._data.to(dtype)

    def save(out, input, dtype):
        return (input.dtype,)

    def backward(g, dtype):
        if g.is_complex() and not dtype.is_complex:
            g = g.real  # the gradient of a real tensor made complex: its real part
        return g.to(dtype)


def move_raw(data, target, non_blocking=False):
    """A raw tensor's values on another device type.  The non-CPU backend
    does the transfer (its raw ``copy_`` from a CPU tensor, its
    ``to('cpu')``), asynchronously from or to pinned memory when
    non_blocking; between two non-CPU types the values go through the CPU."""
    source = backends.get_backend(device_of(data).type)
    dest = backends.get_backend(target.type)  # names the package to install
    if target.type != "cpu" and not dest.is_available():
        raise RuntimeError(f"cannot move a tensor to {target}: no {target.type} device is "
                           "available")
    if target.index is not None and target.index >= dest.device_count():
        raise RuntimeError(f"cannot move a tensor to {target}: there are "
                           f"{dest.device_count()} {target.type} devices")
    if dest.device_type == "cpu":
        return data.to("cpu", non_blocking=non_blocking)
    if source.device_type != "cpu":
        data = move_raw(data, _device("cpu"))
    moved = dest.namespace.empty(tuple(data.shape), dtype=data.dtype, device=str(target))
    return moved.copy_(data, non_blocking=non_blocking)


@op(function=False, method=False, node_name="ToCopyBackward0")
class _to_device:
    def forward(input, target, non_blocking=False):
        return move_raw(input._data, target, non_blocking)

    def save(out, input, target, non_blocking=False):
        return (input.device,)

    def backward(g, source):
        return to(g, source)


def _parse_to(args, dtype, device):
    for a in args:
        if isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, (str, _device)):
            device = a
        elif a is not None:
            dtype = a
    return dtype, device


def to(self, *args, dtype=None, device=None, copy=False, non_blocking=False,
       memory_format=None):
    """to(dtype), to(device), to(device, dtype), to(other): differentiable
    between floating dtypes."""
    dtype, device = _parse_to(args, dtype, device)
    if device is not None:
        target = device if isinstance(device, _device) else _device(device)
        # another device type, or another device of this type ('cuda:1')
        if target.type != self.device.type or target.type != "cpu" and \
                target.index is not None and target.index != self.device.index:
            moved = _to_device(self, target, non_blocking)
            return moved if dtype is None else to(moved, dtype)
    if dtype is None or dtype is self._data.dtype:
        return self.clone() if copy else self
    if self._data.dtype.is_complex and not dtype.is_complex:
        warnings.warn("Casting complex values to real discards the imaginary part",
                      UserWarning, stacklevel=2)
    if self._requires_grad and _mode.enabled and (dtype.is_floating_point or dtype.is_complex):
        return _to_dtype(self, dtype)
    return _make(self._data.to(dtype))


register("to", method=to)


def _as(dtype_name):
    def convert(self, memory_format=None):
        from .. import _dtypes
        return to(self, getattr(_dtypes, dtype_name))
    convert.__name__ = dtype_name
    return convert


for _method, _dtype in (("float", "float32"), ("double", "float64"), ("half", "float16"),
                        ("bfloat16", "bfloat16"), ("long", "int64"), ("int", "int32"),
                        ("short", "int16"), ("char", "int8"), ("byte", "uint8"),
                        ("bool", "bool"), ("cfloat", "complex64"), ("cdouble", "complex128")):
    setattr(Tensor, _method, dispatch_point(_as(_dtype), _method))


def type_(self, dtype=None, non_blocking=False, **kwargs):
    """The type string ('ember.FloatTensor') or a conversion to a dtype, a
    type name ('torch.cuda.LongTensor', 'ember.DoubleTensor', ...) or a
    legacy class (ember.FloatTensor)."""
    from .. import _dtypes
    from .._legacy_types import parse_type
    if dtype is None:
        name = TYPE_TITLES.get(self.dtype.name, self.dtype.name)
        return f"ember.{'cuda.' if self.device.type == 'cuda' else ''}{name}Tensor"
    if isinstance(dtype, _dtypes.dtype):
        return to(self, dtype)
    parsed = parse_type(dtype)
    if parsed is None:
        if isinstance(dtype, str):
            raise ValueError(f"invalid type: '{dtype}'")
        raise TypeError("dtype must be a type, str, or dtype object")
    dt, device_type = parsed
    if device_type == self.device.type:
        return to(self, dt)
    return to(self, device_type, dt, non_blocking=non_blocking)


Tensor.to = dispatch_point(to, "to")
Tensor.type = dispatch_point(type_, "type")
Tensor.type_as = dispatch_point(
    tensor_args_checked("type_as", lambda self, other: to(self, other.dtype)), "type_as")
Tensor.cpu = lambda self, memory_format=None: to(self, "cpu")
Tensor.cuda = lambda self, device=None, non_blocking=False, memory_format=None: \
    to(self, _device("cuda", device if isinstance(device, int) else None)
       if not isinstance(device, (str, _device)) else device, non_blocking=non_blocking)


def _shape(x):
    return x.shape if isinstance(x, Tensor) else None


def _dtype(x):
    return x.dtype if isinstance(x, Tensor) else None


def _src_for(input, src, non_blocking):
    """src's raw values where input's backend can read them: a CUDA tensor
    copied into a CPU one moves first (the backends' raw copy_ takes its
    own tensors and CPU ones; the raw types compare cheaply on this path).
    Complex values into a real tensor warn, as PyTorch's copy_."""
    if not isinstance(src, Tensor):
        return src
    data = src._data
    if data.dtype.is_complex and not input._data.dtype.is_complex:
        warnings.warn("Casting complex values to real discards the imaginary part",
                      UserWarning, stacklevel=5)
    if data.__class__ is not input._data.__class__:
        return move_raw(data, input.device, non_blocking)
    return data


def _grad_of_src(g, shape, dtype, device):
    g = g.to(dtype).sum_to_size(shape)
    return g if device is None or g.device == device else g.to(device)


@op(function=False, method=False)
class copy:
    """Writes src (broadcast, converted, moved to the tensor's device) into
    the tensor."""

    def forward(input, src, non_blocking=False):
        r = input._data.clone()
        r.copy_(_src_for(input, src, non_blocking))
        return r

    def inplace(input, src, non_blocking=False):
        input._data.copy_(_src_for(input, src, non_blocking))

    def inputs(input, src, non_blocking=False):
        return (input, src)

    def save(out, input, src, non_blocking=False):
        return (_shape(src), _dtype(src), src.device if isinstance(src, Tensor) else None)

    backward = (lambda g, shape, dtype, device: zeros_like(g), _grad_of_src)
    samples = [S(T(3, 4), T(3, 4)), S(T(3, 4), T(4)), S(T(3, 4), 1.5)]


@op(function=False, method=False)
class fill:
    """Sets every element to value (a number or a 0-d tensor)."""

    def forward(input, value):
        r = input._data.clone()
        r.fill_(raw(value))
        return r

    def inplace(input, value):
        input._data.fill_(raw(value))

    def inputs(input, value):
        return (input, value)

    backward = (lambda g: zeros_like(g), lambda g: g.sum())
    samples = [S(T(3, 4), 1.5), S(T(3, 4), T())]


@op(function=False, method=False)
class zero:
    def forward(input):
        return input._data.clone().zero_()

    def inplace(input):
        input._data.zero_()

    def backward(g):
        return zeros_like(g)

    samples = [S(T(3, 4))]


def _sampler(name):
    """A random in-place sampler: new values that do not depend on the old
    ones (gradient 0), as PyTorch treats them."""
    @op(name, function=False, method=False, torch=None)
    class spec:
        def forward(input, *args, **kwargs):
            r = input._data.clone()
            getattr(r, name + "_")(*args, **kwargs)
            return r

        def inplace(input, *args, **kwargs):
            getattr(input._data, name + "_")(*args, **kwargs)

        def backward(g):
            return zeros_like(g)


for _name in ("uniform", "normal", "bernoulli", "random"):
    _sampler(_name)
