"""The Tensor class skeleton and the helpers every op family shares.

A Tensor owns one reference to a C ``th_tensor``; methods of each family
(element-wise, reductions, ...) live in their own modules and are attached
to the class when ember.th is imported.
"""
import numbers
import operator
import threading

from ._lib import NULL, ffi, last_error, lib
from . import dtypes as _dt

_DTYPES = [_dt.BY_CODE[i] for i in range(lib.TH_NUM_DTYPES)]
_new = object.__new__


class Size(tuple):
    """A tensor's shape: a tuple of ints with numel()."""

    __slots__ = ()

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self):
        return f"{_dt._MODULE_NAME}.Size({list(self)})"


class Tensor:
    """A strided CPU tensor backed by libTH (no autograd)."""

    __slots__ = ("_p", "__weakref__")

    def __del__(self):
        p = self._p
        if p:
            lib.th_tensor_release(p)

    # ---- metadata ---------------------------------------------------
    @property
    def shape(self):
        p = self._p
        return Size(p.sizes[0:p.ndim])

    def size(self, dim=None):
        p = self._p
        if dim is None:
            return Size(p.sizes[0:p.ndim])
        if p.ndim == 0:   # nothing to read: a 0-d tensor has no dims
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        return p.sizes[_wrap_dim(dim, p.ndim)]

    def stride(self, dim=None):
        p = self._p
        if dim is None:
            return tuple(p.strides[0:p.ndim])
        if p.ndim == 0:   # nothing to read: a 0-d tensor has no dims
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        return p.strides[_wrap_dim(dim, p.ndim)]

    @property
    def dtype(self):
        return _DTYPES[self._p.dtype]

    @property
    def ndim(self):
        return self._p.ndim

    def dim(self):
        return self._p.ndim

    ndimension = dim

    def numel(self):
        return lib.th_numel(self._p)

    nelement = numel

    def element_size(self):
        return lib.th_dtype_itemsize(self._p.dtype)

    @property
    def itemsize(self):
        return lib.th_dtype_itemsize(self._p.dtype)

    @property
    def nbytes(self):
        return lib.th_numel(self._p) * lib.th_dtype_itemsize(self._p.dtype)

    def storage_offset(self):
        return self._p.offset

    def is_contiguous(self, memory_format=None):
        return bool(lib.th_is_contiguous(self._p))

    def _sole_owner(self, base=None):
        """True when this tensor (with `base`, a tensor it is a view of,
        if given) is the only holder of its memory: the C tensors have one
        reference each and nothing else refers to their storage, which is
        libTH's own heap; this tensor is contiguous.  (Whether Python
        objects share these tensors is the caller's question.)  Autograd
        uses it to keep a fresh gradient as ``.grad`` without copying it."""
        p = self._p
        holders = 1
        if base is not None:
            b = base._p
            if b.refcount != 1 or b.storage != p.storage:
                return False
            holders = 2
        return (p.refcount == 1 and p.storage.refcount == holders and p.storage.kind == 0
                and bool(lib.th_is_contiguous(p)))

    @property
    def is_floating_point_type(self):
        return self.dtype.is_floating_point

    def is_floating_point(self):
        return self.dtype.is_floating_point

    @property
    def device(self):
        return "cpu"

    @property
    def is_cuda(self):
        return False

    def data_ptr(self):
        return int(ffi.cast("uintptr_t", lib.th_data_ptr(self._p)))

    def untyped_storage_nbytes(self):
        return self._p.storage.nbytes

    def is_shared(self):
        return self._p.storage.kind in (lib.TH_STORAGE_SHARED, lib.TH_STORAGE_FILE)

    def _version(self):
        return self._p.storage.version

    def __len__(self):
        p = self._p
        if p.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return p.sizes[0]


_Tensor = Tensor


def wrap(p):
    """A Tensor owning the new reference p; raises the C error if NULL."""
    if not p:
        raise last_error()
    t = _new(_Tensor)
    t._p = p
    return t


def _wrap_dim(dim, ndim):
    n = ndim if ndim > 0 else 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


# ---- Python numbers as 0-d operands ----------------------------------
# Numbers become 0-d "wrapped number" tensors (bool, int64 or float64, so a
# float keeps all its digits) that rank below every tensor in type
# promotion (libTH's TH_TENSOR_WRAPPED_NUMBER).  Small ones are cached.
_scalar_cache = {}


def scalar_ptr(v):
    """th_tensor* for a Python number (borrowed from the cache, or new and
    kept alive by the cache)."""
    cls = v.__class__
    key = (cls, v)
    p = _scalar_cache.get(key)
    if p is not None:
        return p
    if cls is bool or isinstance(v, bool):
        p = lib.th_scalar_int64(int(v), lib.TH_BOOL)
    elif isinstance(v, numbers.Integral):
        v = int(v)
        if not -(1 << 63) <= v < (1 << 63):
            raise RuntimeError(f"Overflow when unpacking long: {v}")
        p = lib.th_scalar_int64(v, lib.TH_INT64)
    elif isinstance(v, numbers.Real):
        p = lib.th_scalar_double(float(v), lib.TH_FLOAT64)
    elif isinstance(v, numbers.Complex):
        raise TypeError("complex numbers are not supported by ember tensors")
    else:
        raise TypeError(f"expected a Tensor or a number, but got "
                        f"{type(v).__name__}")
    if not p:
        raise last_error()
    p.flags = lib.TH_TENSOR_WRAPPED_NUMBER
    if len(_scalar_cache) < 4096 and v == v:
        cached = _scalar_cache.setdefault(key, p)
        if cached is not p:  # another thread cached this number meanwhile
            lib.th_tensor_release(p)
            p = cached
    else:  # keep it alive with a Tensor that releases it
        _keep_alive(wrap(p))
    return p


# Uncached scalars live until their thread has made 32 to 64 more.  The list
# is per thread: the caller lends the pointer to a C call that runs without
# the GIL, so another thread must never be the one to release it.
_keep_scalars = threading.local()


def _keep_alive(t):
    kept = getattr(_keep_scalars, "tensors", None)
    if kept is None:
        kept = _keep_scalars.tensors = []
    kept.append(t)
    if len(kept) > 64:
        del kept[:32]


def operand(x):
    """th_tensor* for a Tensor or a Python number."""
    if x.__class__ is _Tensor:
        return x._p
    if isinstance(x, _Tensor):
        return x._p
    return scalar_ptr(x)


def scalar_tensor(v, dtype=None):
    """A fresh 0-d Tensor holding v (converted to dtype when given)."""
    if isinstance(v, Tensor):
        return v if dtype is None or v.dtype is dtype else wrap(lib.th_to_dtype(v._p, dtype.code))
    p = scalar_ptr(v)
    if dtype is None:
        dtype = _dt.BY_CODE[lib.th_get_default_dtype()] if p.dtype == lib.TH_FLOAT64 \
            else _DTYPES[p.dtype]
    code = dtype.code
    return wrap(lib.th_to_dtype(p, code))


def int64_array(values):
    values = list(values)
    try:
        return ffi.new("int64_t[]", values)
    except OverflowError:  # a size, stride or offset past int64: PyTorch's error type
        bad = next(v for v in values if not -2**63 <= v < 2**63)
        raise RuntimeError(f"value {bad} does not fit in int64 (in {values})") from None


def int_array(values):
    return ffi.new("int[]", list(values))


def parse_shape(args):
    """zeros(2, 3), zeros((2, 3)), zeros([2, 3]) and zeros(Size) alike."""
    if len(args) == 1 and not isinstance(args[0], numbers.Integral):
        args = args[0]
        if isinstance(args, Tensor):
            args = args.tolist()
    if isinstance(args, (str, bytes)):
        raise TypeError(f"size must be a sequence of ints, got {args!r}")
    try:
        if any(isinstance(s, bool) for s in args):
            raise TypeError
        return [operator.index(s) for s in args]
    except TypeError:
        raise TypeError(f"size must be a sequence of ints, got {args!r}") from None


def dtype_code(dtype, default):
    if dtype is None:
        return default
    if not isinstance(dtype, _dt.dtype):
        raise TypeError(f"dtype must be an ember dtype, got {dtype!r}")
    return dtype.code
