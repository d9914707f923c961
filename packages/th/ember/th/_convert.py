"""Creation, NumPy exchange (zero-copy both ways), Python conversion
(item, tolist, bool/int/float), dtype conversion and pickling."""
import builtins
import math
import numbers
import weakref

import numpy as np

from . import dtypes as _dt
from ._core import (Tensor, _DTYPES, dtype_code, int64_array, operand,
                    parse_shape, scalar_ptr, wrap)
from ._lib import NULL, check, ffi, last_error, lib, wrap_memory

_functions = {}


def _register(fn, method=False, function=True, names=None):
    for n in names or (fn.__name__,):
        if method:
            setattr(Tensor, n, fn)
        if function:
            _functions[n] = fn
    return fn


def _default_float():
    return lib.th_get_default_dtype()


def _default_complex():
    """complex128 when the default dtype is float64, else complex64 (as
    PyTorch's default complex dtype follows the default float one)."""
    return _DTYPES[_default_float()].to_complex()


def _number_dtype(v):
    """The dtype PyTorch gives a tensor made from the Python number v."""
    if isinstance(v, bool):
        return _dt.bool_
    if isinstance(v, numbers.Integral):
        return _dt.int64
    if isinstance(v, numbers.Real):
        return _DTYPES[_default_float()]
    return _default_complex()


# ---- NumPy exchange --------------------------------------------------
def from_numpy(ndarray):
    """A tensor sharing memory with a NumPy array (any strides)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    d = _dt.from_numpy_dtype(ndarray.dtype)
    item = d.itemsize
    shape, strides = ndarray.shape, ndarray.strides
    if len(shape) > lib.TH_MAX_DIMS:
        raise ValueError(f"arrays with more than {lib.TH_MAX_DIMS} dimensions are not supported")
    if any(s % item for s in strides):
        raise ValueError("given numpy array strides not a multiple of the element byte size. "
                         "Copy the numpy array to reallocate the memory.")
    addr = ndarray.__array_interface__["data"][0]
    # libTH's kernels read elements through typed pointers and vectorise
    # on the element alignment (C requires it; UBSan reports it), so data
    # not aligned to its element size (np.frombuffer at an odd offset, a
    # packed record field) is refused rather than shared.  PyTorch shares
    # such arrays; a silent copy would break the sharing promised here,
    # and as_tensor/tensor copy instead.
    if addr % item and ndarray.size:
        raise ValueError(f"given numpy array's data is not aligned to its {item}-byte "
                         f"{ndarray.dtype} elements (address % {item} == {addr % item}). "
                         "Copy the numpy array (a.copy()) to reallocate the memory.")
    lo = hi = 0
    if 0 not in shape:
        for n, s in zip(shape, strides):
            if s > 0:
                hi += (n - 1) * s
            else:
                lo += (n - 1) * s
        hi += item
    storage = wrap_memory(ndarray, addr + lo, hi - lo)
    p = lib.th_tensor_from_storage(storage, -lo // item, len(shape), int64_array(shape),
                                   int64_array([s // item for s in strides]), d.code)
    lib.th_storage_release(storage)
    return wrap(p)


class _Export:
    """What every NumPy array made from a tensor (and through it each DLPack
    capsule and memoryview) holds on to: the tensor, and once share_memory_()
    has moved the storage's memory into a segment, the old memory, which
    stays alive until the last such array is gone (see _shared.share_memory_).
    The array is a plain view of the memory: no copy."""
    __slots__ = ("tensor", "storage", "old_memory", "__array_interface__", "__weakref__")

    def __init__(self, t):
        p = t._p
        d = _DTYPES[p.dtype]
        item = d.itemsize
        self.tensor = t
        self.storage = p.storage
        self.old_memory = None
        self.__array_interface__ = {
            "version": 3,
            "shape": tuple(p.sizes[0:p.ndim]),
            "typestr": d.numpy.str,
            "data": (int(ffi.cast("uintptr_t", lib.th_data_ptr(p))), False),
            # a size-1 dim's stride addresses nothing and may be any int64:
            # NumPy needs byte strides that fit in int64
            "strides": tuple(s * item if n > 1 else 0
                             for n, s in zip(p.sizes[0:p.ndim], p.strides[0:p.ndim])),
        }
        _exports.add(self)


_exports = weakref.WeakSet()   # every live _Export


def exports_of(storage):
    """The live _Export objects (NumPy arrays and what holds them) over the
    memory `storage` has now."""
    return [e for e in list(_exports) if e.storage == storage and e.old_memory is None]


def _export(t):
    d = _DTYPES[t._p.dtype]
    if d.numpy is None:
        raise TypeError(f"Got unsupported ScalarType {d._title}")
    return np.asarray(_Export(t))


def numpy(self, *, force=False):
    """A NumPy array sharing this tensor's memory."""
    if force:
        return np.array(_export(self.contiguous()))
    return _export(self)


Tensor.numpy = numpy


def _array(self, dtype=None, copy=None):
    a = _export(self)  # NumPy has no bfloat16: a TypeError, as PyTorch
    if dtype is not None:
        a = a.astype(dtype, copy=False)
    return np.array(a) if copy else a


Tensor.__array__ = _array


def _infer_dtype(arr, data):
    if isinstance(data, (np.ndarray, np.generic)):
        if arr.dtype.kind == "f" and arr.dtype.itemsize not in (2, 4, 8):
            return _dt.float64
        return _dt.from_numpy_dtype(arr.dtype)
    kind = arr.dtype.kind
    if kind == "b":
        return _dt.bool_
    if kind in "iu":
        return _dt.int64
    if kind == "f":
        return _DTYPES[_default_float()]
    if kind == "c":
        return _default_complex()
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def _from_array(arr, dtype):
    """A new contiguous tensor of `dtype` holding arr's values."""
    shape = arr.shape
    if dtype.numpy is None:  # bfloat16: go through float32
        tmp = _from_array(arr, _dt.float32)  # keep alive across the C call
        return wrap(lib.th_to_dtype(tmp._p, dtype.code))
    t = wrap(lib.th_empty(len(shape), int64_array(shape), dtype.code))
    if arr.size:
        np.copyto(np.asarray(t), arr, casting="unsafe")
    return t


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor copying `data` (nested lists, numbers, arrays, tensors)."""
    if isinstance(data, Tensor):
        t = data.clone()
        return t if dtype is None else t.to(dtype)
    if isinstance(data, numbers.Number) and not isinstance(data, np.generic):
        return _scalar_new(data, dtype or _number_dtype(data))
    _check_nesting(data)
    try:
        arr = np.asarray(data)
    except ValueError as e:
        raise ValueError(f"expected sequence of equal-length lists: {e}") from None
    if arr.dtype == object:
        raise TypeError(f"Could not infer dtype of {_first_bad(data)}")
    d = dtype or _infer_dtype(arr, data)
    return _from_array(arr, d)


def _check_nesting(data):
    """Refuses lists nested deeper than a tensor's dimensions, such as a list
    that holds itself, before NumPy walks them."""
    depth = 0
    while isinstance(data, (list, tuple)) and data:
        depth += 1
        if depth > lib.TH_MAX_DIMS:
            raise ValueError(f"too many dimensions '{type(data).__name__}'")
        data = data[0]


def _first_bad(data):
    while isinstance(data, (list, tuple)) and data:  # bounded: _check_nesting ran
        data = data[0]
    return type(data).__name__


def _scalar_new(v, d):
    if d.is_complex:
        v = complex(v)
        p = lib.th_scalar_complex(v.real, v.imag, d.code)
    elif not isinstance(v, numbers.Real):
        raise TypeError(f"can't convert complex to {d._title.lower()}")
    elif isinstance(v, (bool, numbers.Integral)) and not d.is_floating_point:
        p = lib.th_scalar_int64(int(v), d.code)
    else:
        p = lib.th_scalar_double(float(v), d.code)
    return wrap(p)


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype is dtype else data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or dtype.numpy == data.dtype):
        try:
            return from_numpy(data)
        except (TypeError, ValueError):
            pass
    return tensor(data, dtype=dtype)


def asarray(obj, *, dtype=None, device=None, copy=None):
    if copy:
        return tensor(obj, dtype=dtype)
    return as_tensor(obj, dtype=dtype)


for _f in (from_numpy, tensor, as_tensor, asarray):
    _register(_f)


# ---- creation --------------------------------------------------------
def empty(*size, dtype=None, device=None, requires_grad=False, out=None,
          pin_memory=False, memory_format=None):
    s = parse_shape(size)
    return wrap(lib.th_empty(len(s), int64_array(s), dtype_code(dtype, _default_float())))


def zeros(*size, dtype=None, device=None, requires_grad=False, out=None):
    t = empty(*size, dtype=dtype)
    check(lib.th_zero(t._p))
    return t


def ones(*size, dtype=None, device=None, requires_grad=False, out=None):
    t = empty(*size, dtype=dtype)
    check(lib.th_fill_double(t._p, 1.0))
    return t


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False, out=None):
    if dtype is None:
        dtype = fill_value.dtype if isinstance(fill_value, Tensor) else _number_dtype(fill_value)
    t = empty(size, dtype=dtype)
    check(lib.th_fill(t._p, operand(fill_value)))
    return t


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False):
    size, stride = list(size), list(stride)
    return wrap(lib.th_empty_strided(len(size), int64_array(size), int64_array(stride),
                                     dtype_code(dtype, _default_float())))


def _like(maker):
    def like(input, dtype=None, **kwargs):
        kwargs.pop("memory_format", None)
        kwargs.pop("device", None)
        kwargs.pop("requires_grad", None)
        return maker(input.shape, dtype=dtype or input.dtype, **kwargs)
    like.__name__ = maker.__name__ + "_like"
    return like


def full_like(input, fill_value, *, dtype=None, **kwargs):
    return full(input.shape, fill_value, dtype=dtype or input.dtype)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False, out=None):
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if dtype is None:
        dtype = _dt.int64 if all(isinstance(v, numbers.Integral) for v in vals) \
            else _DTYPES[_default_float()]
    if dtype is _dt.int64 and all(isinstance(v, numbers.Integral) for v in vals):
        start, end, step = (int(v) for v in vals)
        if step == 0:
            raise RuntimeError("step must be nonzero")
        n = max(0, -((start - end) // step)) if step > 0 else max(0, -((end - start) // -step))
        if (step > 0 and end < start) or (step < 0 and end > start):
            raise RuntimeError("upper bound and larger bound inconsistent with step sign")
        return from_numpy(np.arange(start, start + n * step, step, dtype=np.int64)[:n].copy())
    return wrap(lib.th_arange(float(vals[0]), float(vals[1]), float(vals[2]), dtype.code))


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False, out=None):
    return wrap(lib.th_linspace(float(start), float(end), int(steps),
                                dtype_code(dtype, _default_float())))


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    return wrap(lib.th_logspace(float(start), float(end), int(steps), float(base),
                                dtype_code(dtype, _default_float())))


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False, out=None):
    if m is not None and int(m) < 0:  # libTH reads m < 0 as "m = n"
        raise RuntimeError(f"m must be greater or equal to 0, got {int(m)}")
    return wrap(lib.th_eye(int(n), -1 if m is None else int(m),
                           dtype_code(dtype, _default_float())))


def scalar_tensor(s, *, dtype=None, device=None):
    return _scalar_new(s, dtype or _DTYPES[_default_float()])


for _f in (empty, zeros, ones, full, empty_strided, full_like, arange, linspace,
           logspace, eye, scalar_tensor):
    _register(_f)
for _m in (empty, zeros, ones):
    _register(_like(_m))


# ---- conversion --------------------------------------------------------
def to(self, *args, dtype=None, device=None, copy=False, non_blocking=False, **kwargs):
    """to(dtype), to(device), to(other) as in PyTorch; only 'cpu' here."""
    for a in args:
        if isinstance(a, _dt.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype = a.dtype
        elif a is not None:
            device = a
    if device is not None and str(device) not in ("cpu", "cpu:0"):
        raise RuntimeError(f"ember.th tensors live on the CPU; cannot move to {device}")
    if dtype is None or dtype is self.dtype:
        return self.clone() if copy else self
    return wrap(lib.th_to_dtype(self._p, dtype.code))


Tensor.to = to


def type_as(self, other):
    return self.to(other.dtype)


Tensor.type_as = type_as

for _name, _d in (("float", _dt.float32), ("double", _dt.float64), ("half", _dt.float16),
                  ("bfloat16", _dt.bfloat16), ("long", _dt.int64), ("int", _dt.int32),
                  ("short", _dt.int16), ("char", _dt.int8), ("byte", _dt.uint8),
                  ("bool", _dt.bool_), ("cfloat", _dt.complex64), ("cdouble", _dt.complex128)):
    setattr(Tensor, _name, (lambda d: lambda self, memory_format=None: self.to(d))(_d))
Tensor.cpu = lambda self, memory_format=None: self


def item(self):
    p = self._p
    if lib.th_numel(p) != 1:
        raise RuntimeError(f"a Tensor with {lib.th_numel(p)} elements cannot be converted to Scalar")
    d = p.dtype
    if lib.th_dtype_is_complex(d):
        re, im = ffi.new("double *"), ffi.new("double *")
        check(lib.th_get_complex(p, 0, re, im))
        return complex(re[0], im[0])
    if d == lib.TH_BOOL:
        v = ffi.new("int64_t *")
        check(lib.th_get_int64(p, 0, v))
        return bool(v[0])
    if lib.th_dtype_is_floating(d):
        v = ffi.new("double *")
        check(lib.th_get_double(p, 0, v))
        return v[0]
    v = ffi.new("int64_t *")
    check(lib.th_get_int64(p, 0, v))
    return v[0]


Tensor.item = item


def tolist(self):
    if self.dtype.numpy is None:
        return self.float().tolist()
    return np.asarray(self).tolist()


Tensor.tolist = tolist


def _bool(self):
    n = lib.th_numel(self._p)
    if n != 1:
        raise RuntimeError(f"Boolean value of Tensor with {'more than one' if n else 'no'} "
                           "value is ambiguous")
    return bool(self.item())


def _index(self):
    if self.dtype.is_floating_point or lib.th_numel(self._p) != 1:
        raise TypeError("only integer tensors of a single element can be converted to an index")
    return int(self.item())


Tensor.__bool__ = _bool
Tensor.__float__ = lambda self: builtins.float(self.item())
Tensor.__int__ = lambda self: builtins.int(self.item())
Tensor.__index__ = _index
Tensor.__complex__ = lambda self: complex(self.item())


def _iter(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return (self.select(0, i) for i in range(self.shape[0]))


Tensor.__iter__ = _iter


def _contains(self, element):
    if isinstance(element, (Tensor, numbers.Number)):
        return bool((self == element).any())
    raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type(element)}.")


Tensor.__contains__ = _contains


def _format(self, spec):
    if self.ndim == 0:
        return format(self.item(), spec)
    return object.__format__(self, spec) if not spec else format(repr(self), spec)


Tensor.__format__ = _format


# ---- pickling: raw bytes + dtype + shape (always a compact copy) -------
def _rebuild(data, dtype_name, shape):
    d = _dt._by_name(dtype_name)
    t = wrap(lib.th_empty(len(shape), int64_array(shape), d.code))
    if t.nbytes != len(data):
        raise RuntimeError("corrupt pickled tensor: byte count does not match shape")
    ffi.memmove(lib.th_data_ptr(t._p), data, len(data))
    return t


def _reduce(self):
    c = self.contiguous()
    data = bytes(ffi.buffer(lib.th_data_ptr(c._p), c.nbytes)) if c.nbytes else b""
    return (_rebuild, (data, self.dtype.name, tuple(self.shape)))


Tensor.__reduce__ = _reduce


def __buffer__(self, flags):  # Python 3.12+: memoryview(tensor)
    return memoryview(np.asarray(self.contiguous()) if not self.is_contiguous()
                      else np.asarray(self))


Tensor.__buffer__ = __buffer__

functions = _functions
