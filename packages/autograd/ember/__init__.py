"""Ember: tensors with tape-based reverse-mode autograd, in PyTorch's names.

    import ember
    x = ember.randn(3, requires_grad=True)
    (x * x).sum().backward()
    x.grad          # 2 * x

This package is the user front: ``ember.Tensor`` keeps a backend's raw
tensor (ember-th on the CPU; ember-thc for CUDA) with autograd state, and
``ember.autograd`` differentiates through whatever ran.  It also owns the
``ember`` namespace, which other distributions extend (``ember.th``,
``ember.nn``, ...).
"""
import builtins as _builtins
import pkgutil as _pkgutil

# ember.th, ember.nn, ... come from other distributions: look for them in
# every ember/ folder on the path (regular and editable installs alike)
__path__ = _pkgutil.extend_path(__path__, __name__)

from . import _fallbacks  # noqa: E402  (ember.distributed without ember-distributed)
_fallbacks.install()

__version__ = "0.1.0"

from ._dtypes import (bfloat16, bool, cdouble, cfloat, complex64, complex128,  # noqa: E402
                      double, dtype, finfo, float, float16, float32, float64, half, iinfo, int,
                      int8, int16, int32, int64, long, promote_types, short, uint8)
from ._device import device  # noqa: E402
from ._tensor import Tensor, is_tensor  # noqa: E402
from . import autograd  # noqa: E402
from .autograd import (enable_grad, inference_mode, is_grad_enabled,  # noqa: E402
                       is_inference_mode_enabled, no_grad, set_grad_enabled)
from ._creation import (Generator, arange, as_tensor, asarray, bernoulli, empty,  # noqa: E402
                        empty_like, empty_strided, eye, from_dlpack, from_numpy, full, full_like,
                        get_default_dtype, get_num_interop_threads, get_num_threads,
                        get_rng_state, initial_seed,
                        linspace, logspace, manual_seed, multinomial, normal, ones, ones_like,
                        rand, rand_like, randint, randint_like, randn, randn_like, randperm,
                        scalar_tensor, seed, set_default_dtype, set_num_interop_threads,
                        set_num_threads, set_rng_state,
                        tensor, zeros, zeros_like)
from ._windows import (bartlett_window, blackman_window, hamming_window,  # noqa: E402
                       hann_window, kaiser_window)
from . import _ops  # noqa: E402
from . import amp  # noqa: E402
from .amp.autocast_mode import (autocast, autocast_decrement_nesting,  # noqa: E402
                                autocast_increment_nesting, clear_autocast_cache,
                                get_autocast_cpu_dtype, get_autocast_dtype,
                                get_autocast_gpu_dtype, is_autocast_cache_enabled,
                                is_autocast_cpu_enabled, is_autocast_enabled,
                                set_autocast_cache_enabled, set_autocast_dtype,
                                set_autocast_enabled)
from . import cuda  # noqa: E402
from . import __config__  # noqa: E402
from .backends.cuda import (get_float32_matmul_precision,  # noqa: E402
                            set_float32_matmul_precision)
from ember.th import Size, default_generator, set_printoptions  # noqa: E402

globals().update(_ops.NAMESPACE)
from . import _tensor_flags  # noqa: E402,F401  (Tensor.is_xpu, is_mps, ...)
from . import sparse  # noqa: E402  (sparse COO tensors; ember.sparse_coo_tensor)
from .sparse import sparse_coo_tensor  # noqa: E402
from ._layout import layout, sparse_coo, strided  # noqa: E402
from ._legacy_types import CPU_TYPES as _CPU_TYPES  # noqa: E402
globals().update(_CPU_TYPES)  # ember.FloatTensor, ember.LongTensor, ...
Tensor.__module__ = device.__module__ = "ember"  # <class 'ember.Tensor'>, as torch


def numel(input):
    return input.numel()


def is_floating_point(input):
    return input.is_floating_point()


def is_nonzero(input):
    return bool(input)


def result_type(tensor1, tensor2):
    """The dtype of an arithmetic op of the two (tensors or numbers)."""
    def dtype_of(x):
        if isinstance(x, Tensor):
            return x.dtype
        if isinstance(x, _builtins.bool):
            return bool
        return int64 if isinstance(x, _builtins.int) else get_default_dtype()
    return promote_types(dtype_of(tensor1), dtype_of(tensor2))


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True):
    """Saves obj to f (a path or binary file); see ember.serialization."""
    from .serialization import save as _save
    return _save(obj, f, pickle_module, pickle_protocol)


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None,
         **pickle_load_args):
    """Loads what ember.save (or torch.save) wrote; see ember.serialization."""
    from .serialization import load as _load
    return _load(f, map_location, pickle_module, weights_only=weights_only, mmap=mmap)


_LAZY_SUBMODULES = ("serialization", "utils", "multiprocessing", "nn", "optim", "accelerator",
                    "onnx", "distributed", "fft", "jit", "legacy", "compiler")


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None):
    """The short-time Fourier transform (ember.fft's stft; see there)."""
    from .fft._stft import stft as _stft
    return _stft(input, n_fft, hop_length, win_length, window, center, pad_mode, normalized,
                 onesided, return_complex)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """The inverse short-time Fourier transform (ember.fft's istft)."""
    from .fft._stft import istft as _istft
    return _istft(input, n_fft, hop_length, win_length, window, center, normalized, onesided,
                  length, return_complex)


Tensor.stft, Tensor.istft = stft, istft


def compile(model=None, **options):
    """PyTorch's torch.compile: fuses model's element-wise chains into
    generated C kernels (ember.compiler)."""
    from .compiler import compile as _compile
    return _compile(model, **options)


def __getattr__(name):  # ember.utils, ember.multiprocessing: imported on first use
    if name in _LAZY_SUBMODULES:
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'ember' has no attribute {name!r}")
