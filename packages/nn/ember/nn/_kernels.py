"""The one dispatch point between ember.nn.functional and NN kernels.

Layers whose compute is a kernel (convolution, pooling, ...) call
``kernel(name)(...)``.  Every name is declared once in ember.nn.kernels:
its composed implementation (ember operations, so autograd, gradcheck and
double backward work through it on any backend), its spec, its node name
and its autocast class.

A kernel package (ember-thnn for the CPU, ember-thcunn for the GPU)
registers in the entry-point group ``ember.kernels``; the entry point loads
an object with ``tensor_type`` (the class of the backend's raw tensors it
computes on), ``float_dtypes`` (the dtypes its kernels take) and the kernel
functions by name (``conv2d_forward``, ...), which ember.nn.kernels'
declarations run (``specs_for``); a package may instead give
``nn_kernels()`` returning ``{name: spec}`` itself (a spec as the
declarations' forward/backward, see ember.nn.kernels).

_kernel_autograd adds the autograd recording once for all packages (first
order through the spec's backward, double backward through the composed
function).  Names a package does not provide stay composed;
``EMBER_NN_KERNELS=composed`` ignores installed kernel packages.
"""
import os

from .kernels import COMPOSED, specs_for

__all__ = ["kernel", "providers", "COMPOSED"]

_table = None
_providers = []
_objects = []  # the loaded packages' entry-point objects, in _providers' order


def _load():
    global _table
    table = dict(COMPOSED)
    del _providers[:]
    del _objects[:]
    if os.environ.get("EMBER_NN_KERNELS", "") != "composed":
        from importlib.metadata import entry_points
        from ._kernel_autograd import wrap
        for ep in entry_points(group="ember.kernels"):
            try:
                provider = ep.load()
                # a package's own specs, or this package's table over its functions
                found = provider.nn_kernels() if hasattr(provider, "nn_kernels") \
                    else specs_for(provider)
                tensor_type = provider.tensor_type if found else None
            except Exception as exc:  # a broken kernel package must not break ember.nn
                import warnings
                warnings.warn(f"ember.nn: ignoring kernel package {ep.name!r} ({ep.value}): "
                              f"{exc}", RuntimeWarning, stacklevel=3)
                continue
            _providers.append(ep.name)
            _objects.append(provider)
            # each package's functions take their own tensors and hand the
            # others on to the packages loaded before (the last: composed)
            table.update({k: wrap(k, spec, COMPOSED[k], tensor_type, fallback=table[k])
                          for k, spec in found.items() if k in COMPOSED})
    _table = table
    return table


def kernel(name):
    """The implementation of NN kernel `name` (loaded on first use)."""
    table = _table if _table is not None else _load()
    return table[name]


def reset():
    """Forget the loaded table (the next kernel() call looks again)."""
    global _table
    _table = None


def provider_for(raw, function):
    """The loaded kernel package that computes on raw tensors of `raw`'s
    type and dtype and has `function` (None: compose ember ops instead).
    For layers whose kernels do not fit the one-output spec table
    (the recurrent layers' loops)."""
    if _table is None:
        _load()
    for obj in reversed(_objects):
        if (getattr(obj, "tensor_type", None) is raw.__class__
                and raw.dtype in getattr(obj, "float_dtypes", ()) and hasattr(obj, function)):
            return obj
    return None


def providers():
    """Names of the kernel packages in use (empty: composed ember ops only)."""
    if _table is None:
        _load()
    return list(_providers)
