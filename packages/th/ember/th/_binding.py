"""The binding layer ember.th and ember.thc share: their raw tensors are a
Python object owning one C tensor (``th_tensor`` / ``thc_tensor``, the same
fields), so the metadata methods, the helpers that turn Python values into
C arguments, Python numbers as operands and the view functions are written
once here, parameterised by the C library (its cffi ``lib`` and prefix) and
the tensor class, and each binding instantiates them.
"""
import numbers
import operator
import os
import struct
import threading

from . import dtypes as _dt


class CLibrary:
    """A C tensor library's cffi functions and constants without their
    prefix: ``C.view`` is ``lib.th_view`` (or ``lib.thc_view``), ``C.MAXIMUM``
    is ``lib.TH_MAXIMUM``; ``C.ffi`` and ``C.lib`` are the cffi objects and
    ``C.tensor_ptr`` is the C type name of a tensor pointer."""

    def __init__(self, ffi, lib, prefix):
        self.ffi, self.lib, self.prefix = ffi, lib, prefix
        self.tensor_ptr = f"{prefix}_tensor *"
        for name in dir(lib):
            for p in (prefix + "_", prefix.upper() + "_"):
                if name.startswith(p):
                    setattr(self, name[len(p):], getattr(lib, name))


def registrar(tensor_class, functions):
    """register(fn, names=None, method=True, function=True): fn under its
    names (default: its own) as a method of tensor_class and in the
    binding's `functions` table."""
    def register(fn, names=None, method=True, function=True):
        for n in names or (fn.__name__,):
            if method:
                setattr(tensor_class, n, fn)
            if function:
                functions[n] = fn
        return fn
    return register


def decorator(register):
    """register (a registrar's) as a decorator: @deco(*names, method=True,
    function=True)."""
    def deco(*names, method=True, function=True):
        return lambda fn: register(fn, names or None, method, function)
    return deco


def wrap_dim(dim, ndim):
    n = ndim if ndim > 0 else 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def dtype_code(dtype, default):
    if dtype is None:
        return default
    if not isinstance(dtype, _dt.dtype):
        raise TypeError(f"dtype must be an ember dtype, got {dtype!r}")
    return dtype.code


def c_arrays(ffi):
    """int64_array(values) and int_array(values): C arrays for sizes,
    strides and dims."""
    def int64_array(values):
        values = list(values)
        try:
            return ffi.new("int64_t[]", values)
        except OverflowError:  # a size, stride or offset past int64: PyTorch's error type
            bad = next(v for v in values if not -2**63 <= v < 2**63)
            raise RuntimeError(f"value {bad} does not fit in int64 (in {values})") from None

    def int_array(values):
        return ffi.new("int[]", list(values))

    return int64_array, int_array


def shape_parser(tensor_types):
    """parse_shape(args): zeros(2, 3), zeros((2, 3)), zeros([2, 3]),
    zeros(Size) and a 1-d tensor of any of tensor_types alike."""
    def parse_shape(args):
        if len(args) == 1 and not isinstance(args[0], numbers.Integral):
            args = args[0]
            if isinstance(args, tensor_types):
                args = args.tolist()
        if isinstance(args, (str, bytes)):
            raise TypeError(f"size must be a sequence of ints, got {args!r}")
        try:
            if any(isinstance(s, bool) for s in args):
                raise TypeError
            return [operator.index(s) for s in args]
        except TypeError:
            raise TypeError(f"size must be a sequence of ints, got {args!r}") from None
    return parse_shape


def tensor_wrapper(tensor_class, raise_last):
    """wrap(p): a new tensor_class owning the new reference p, or the C
    library's last error (raise_last()) when p is NULL."""
    new = object.__new__

    def wrap(p):
        if not p:
            raise_last()
        t = new(tensor_class)
        t._p = p
        return t
    return wrap


def define_metadata(cls, C, size_class, dtypes, owns_memory):
    """The metadata methods of a tensor class over C's tensors.
    owns_memory(storage): the storage's memory is the library's own (not
    wrapped from elsewhere), a condition of _sole_owner."""
    numel_c, itemsize_c, contiguous_c, data_ptr_c = (C.numel, C.dtype_itemsize,
                                                      C.is_contiguous, C.data_ptr)
    release_c, ffi = C.tensor_release, C.ffi

    def __del__(self):
        try:
            p = self._p
        except AttributeError:  # never given a C tensor
            return
        if p:
            release_c(p)

    def shape(self):
        p = self._p
        return size_class(p.sizes[0:p.ndim])

    def size(self, dim=None):
        p = self._p
        if dim is None:
            return size_class(p.sizes[0:p.ndim])
        if p.ndim == 0:   # nothing to read: a 0-d tensor has no dims
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        return p.sizes[wrap_dim(dim, p.ndim)]

    def stride(self, dim=None):
        p = self._p
        if dim is None:
            return tuple(p.strides[0:p.ndim])
        if p.ndim == 0:   # nothing to read: a 0-d tensor has no dims
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        return p.strides[wrap_dim(dim, p.ndim)]

    def dim(self):
        return self._p.ndim

    def numel(self):
        return numel_c(self._p)

    def element_size(self):
        return itemsize_c(self._p.dtype)

    def nbytes(self):
        return numel_c(self._p) * itemsize_c(self._p.dtype)

    def storage_offset(self):
        return self._p.offset

    def is_contiguous(self, memory_format=None):
        return bool(contiguous_c(self._p))

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def data_ptr(self):
        return int(ffi.cast("uintptr_t", data_ptr_c(self._p)))

    def untyped_storage_nbytes(self):
        return self._p.storage.nbytes

    def _version(self):
        return self._p.storage.version

    def _sole_owner(self, base=None):
        """True when this tensor (with `base`, a tensor it is a view of, if
        given) is the only holder of its memory: the C tensors have one
        reference each, nothing else refers to their storage, whose memory
        is the library's own, and this tensor is contiguous.  (Whether
        Python objects share these tensors is the caller's question.)
        Autograd uses it to keep a fresh gradient as ``.grad`` without
        copying it."""
        p = self._p
        holders = 1
        if base is not None:
            b = base._p
            if b.refcount != 1 or b.storage != p.storage:
                return False
            holders = 2
        return (p.refcount == 1 and p.storage.refcount == holders
                and owns_memory(p.storage) and bool(contiguous_c(p)))

    def __len__(self):
        p = self._p
        if p.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return p.sizes[0]

    for f in (__del__, size, stride, dim, numel, element_size, storage_offset, is_contiguous,
              is_floating_point, data_ptr, untyped_storage_nbytes, _version, _sole_owner,
              __len__):
        setattr(cls, f.__name__, f)
    cls.ndimension = dim
    cls.nelement = numel
    cls.shape = property(shape)
    cls.itemsize = property(element_size)
    cls.nbytes = property(nbytes)
    cls.dtype = property(lambda self: dtypes[self._p.dtype])
    cls.ndim = property(lambda self: self._p.ndim)


def scalar_operands(C, wrap, raise_last):
    """scalar_ptr(v): the C tensor for a Python number, a 0-d "wrapped
    number" (bool, int64 or float64, so a float keeps all its digits) that
    ranks below every tensor in type promotion; borrowed from a cache of
    small ones or from this thread's keep-alive list.  keep_alive(t) keeps
    a tensor whose pointer is lent to a C call."""
    cache = {}
    scalar_int64, scalar_double, release = C.scalar_int64, C.scalar_double, C.tensor_release
    BOOL, INT64, FLOAT64, WRAPPED = C.BOOL, C.INT64, C.FLOAT64, C.TENSOR_WRAPPED_NUMBER
    scalar_complex = getattr(C, "scalar_complex", None)
    COMPLEX128 = getattr(C, "COMPLEX128", None)
    # Uncached scalars live until their thread has made 32 to 64 more.  The
    # list is per thread: the caller lends the pointer to a C call that runs
    # without the GIL, so another thread must never be the one to release it.
    kept_by_thread = threading.local()

    def keep_alive(t):
        kept = getattr(kept_by_thread, "tensors", None)
        if kept is None:
            kept = kept_by_thread.tensors = []
        kept.append(t)
        if len(kept) > 64:
            del kept[:32]

    def scalar_ptr(v):
        cls = v.__class__
        key = (cls, v)
        p = cache.get(key)
        if p is not None:
            return p
        if cls is bool or isinstance(v, bool):
            p = scalar_int64(int(v), BOOL)
        elif isinstance(v, numbers.Integral):
            v = int(v)
            if not -(1 << 63) <= v < (1 << 63):
                raise RuntimeError(f"Overflow when unpacking long: {v}")
            p = scalar_int64(v, INT64)
        elif isinstance(v, numbers.Real):
            p = scalar_double(float(v), FLOAT64)
        elif isinstance(v, numbers.Complex):
            if scalar_complex is None:
                raise TypeError(f"complex numbers are not supported by {C.prefix} tensors")
            v = complex(v)
            p = scalar_complex(v.real, v.imag, COMPLEX128)
        else:
            raise TypeError(f"expected a Tensor or a number, but got {type(v).__name__}")
        if not p:
            raise_last()
        p.flags = WRAPPED
        if len(cache) < 4096 and v == v:
            cached = cache.setdefault(key, p)
            if cached is not p:  # another thread cached this number meanwhile
                release(p)
                p = cached
        else:  # kept alive by a tensor that releases it
            keep_alive(wrap(p))
        return p

    return scalar_ptr, keep_alive


def randint_args(args, size):
    """(low, high, size) of randint(high, size) or randint(low, high, size)."""
    args = list(args)
    if size is None:
        if not args:
            raise TypeError("randint() missing required argument 'size'")
        size = args.pop()
    if len(args) == 1:
        return 0, args[0], size
    if len(args) == 2:
        return args[0], args[1], size
    raise TypeError("randint() expects (high, size) or (low, high, size)")


class PhiloxGenerator:
    """Seeding and state of a C library's Philox generator: `_g` points to
    its state (a 64-bit seed and a counter offset) and `_set_seed` is the
    library's <prefix>_generator_set_seed."""

    __slots__ = ()
    _set_seed = None

    def manual_seed(self, seed):
        seed = int(seed)
        if not -(1 << 63) <= seed < (1 << 64):
            raise RuntimeError(f"Overflow when unpacking long: {seed}")
        seed &= (1 << 64) - 1
        self._set_seed(self._g, seed)
        self._initial_seed = seed
        return self

    def seed(self):
        s = int.from_bytes(os.urandom(8), "little") & ((1 << 63) - 1)
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._initial_seed

    def get_state(self):
        """The state as a CPU uint8 tensor of 16 bytes (seed, offset), as
        PyTorch's generators give theirs."""
        from ._convert import tensor
        return tensor(list(struct.pack("<QQ", self._g.seed, self._g.offset)), dtype=_dt.uint8)

    def set_state(self, new_state):
        data = bytes(new_state.tolist()) if hasattr(new_state, "tolist") else bytes(new_state)
        if len(data) != 16:
            raise RuntimeError(f"Expected a 16-byte generator state, got {len(data)} bytes")
        self._g.seed, self._g.offset = struct.unpack("<QQ", data)
        return self
