"""One NN kernel library as the family modules see it.

libTHNN (CPU) and libTHCUNN (GPU) declare the same kernels with the same
arguments, under their own prefix and on their own tensor library's
tensors.  The family modules (_activation, _conv, _embedding, _loss, _norm,
_pool, _resample) are therefore written once, as ``define(L)``: the
family's functions bound to ``L``, a KernelLibrary.  ember.thnn binds them
to libTHNN and ember.th; ember.thcunn binds the same modules to libTHCUNN
and ember.thc.
"""
import functools

from ember.th._binding import CLibrary

# the libraries' status codes (th_status / thc_status) -> Python exceptions
EXCEPTIONS = {1: ValueError, 2: IndexError, 3: TypeError, 4: RuntimeError,
              5: MemoryError, 6: NotImplementedError}


class KernelLibrary:
    """A kernel library's cffi functions without their prefix (``L.C``:
    ``L.C.conv2d_forward`` is ``lib.thnn_conv2d_forward``), the tensor
    library its kernels take (``L.tensors``: ember.th or ember.thc), and
    the helpers every binding needs: pointers, outputs, errors, window
    lengths and the reduction codes."""

    def __init__(self, ffi, lib, prefix, tensors, device, abi_major):
        self.ffi, self.lib, self.prefix = ffi, lib, prefix
        self.package = f"ember.{prefix}"
        major = getattr(lib, f"{prefix}_abi_version_major")()
        minor = getattr(lib, f"{prefix}_abi_version_minor")()
        if major != abi_major:  # pragma: no cover - guards upgrades
            raise ImportError(
                f"{self.package} binding expects lib{prefix.upper()} ABI {abi_major}.x but "
                f"loaded {major}.{minor}; reinstall ember-{prefix} so the library and binding "
                "match")
        self.C = CLibrary(ffi, lib, prefix)
        self.NULL = ffi.NULL
        self.tensors = tensors
        self.device = device  # "CPU" or "CUDA": what the errors call the tensors
        self.REDUCTIONS = {"none": self.C.REDUCTION_NONE, "mean": self.C.REDUCTION_MEAN,
                           "sum": self.C.REDUCTION_SUM}

    # ember.thc loads its tensor layer on first use: these are read then
    @functools.cached_property
    def tensor_type(self):
        """The raw tensor class the kernels take."""
        return self.tensors.Tensor

    @functools.cached_property
    def int64(self):
        return self.tensors.int64

    # ---- errors ------------------------------------------------------------
    def last_error(self) -> BaseException:
        """The library's last error as the Python exception to raise."""
        msg = self.ffi.string(self.C.last_error()).decode("utf-8", "replace")
        return EXCEPTIONS.get(self.C.last_status(), RuntimeError)(msg)

    def check(self, rc: int) -> None:
        """Raise the library's last error when a kernel returned non-zero."""
        if rc:
            raise self.last_error()

    # ---- arguments ---------------------------------------------------------
    def ptr(self, t):
        """The C tensor of `t`, NULL for None (an optional argument).  A
        tensor of the other library is refused here: the kernel would read
        it as its own."""
        if t is None:
            return self.NULL
        if not isinstance(t, self.tensor_type):
            raise TypeError(f"{self.package} kernels take {self.device} tensors "
                            f"({self.tensors.__name__}.Tensor), got "
                            f"{type(t).__module__}.{type(t).__name__}")
        return t._p

    def generator(self, g):
        """The C generator of `g` (a Generator of the tensor library), NULL
        for None (the library's default one)."""
        if g is None:
            return self.NULL
        if not isinstance(g, self.tensors.Generator):
            raise TypeError(f"generator must be a {self.tensors.__name__} Generator (a "
                            f"{self.device} generator), got {type(g).__module__}."
                            f"{type(g).__name__}")
        return g._g

    def empty(self, shape, like, dtype=None):
        """An uninitialised output of `shape`, of `like`'s dtype unless given."""
        return self.tensors.empty(tuple(shape), dtype=dtype or like.dtype)

    def window(self, n, k, s, p, d, ceil_mode=False):
        """Output length of a window sliding over n (libTHNN's rule, overflow
        checked in C); 0 when invalid or beyond int64, so that the output is
        empty and the kernel says why in its words."""
        try:
            return max(self.C.window_output_size(n, k, s, p, d, int(ceil_mode)), 0)
        except OverflowError:  # an argument beyond int64: the kernel call refuses it
            return 0

    def reduction(self, reduction):
        """"none", "mean" or "sum" -> the kernels' reduction code."""
        try:
            return self.REDUCTIONS[reduction]
        except KeyError:
            raise ValueError(f"{reduction} is not a valid value for reduction") from None


def pair(v, name):
    """int or 1- or 2-sequence of ints -> list of 2 ints."""
    if isinstance(v, int):
        return [v, v]
    v = list(v)
    if len(v) == 1:
        return v * 2
    if len(v) != 2 or not all(isinstance(i, int) for i in v):
        raise ValueError(f"{name} must be an int or a pair of ints, got {v!r}")
    return v


def ntuple(v, n, name):
    """int or sequence of n ints -> list of n ints (a 1-sequence repeats)."""
    if isinstance(v, int) and not isinstance(v, bool):
        return [v] * n
    try:
        v = list(v)
    except TypeError:
        raise TypeError(f"{name} must be an int or a sequence of {n} ints, got {v!r}") from None
    if len(v) == 1:
        v = v * n
    if len(v) != n or not all(isinstance(i, int) and not isinstance(i, bool) for i in v):
        raise ValueError(f"{name} must be an int or a sequence of {n} ints, got {v!r}")
    return v


def single(v, name):
    """int or 1-sequence of ints -> int."""
    return ntuple(v, 1, name)[0]


def window_stride(stride, kernel, n):
    """A pooling's stride: the kernel size when not given (None or empty)."""
    if stride is None or stride == [] or stride == ():
        return list(kernel) if n > 1 else kernel
    return ntuple(stride, n, "stride") if n > 1 else single(stride, "stride")

