"""ember.compile: element-wise chains fused into generated C kernels.

    fast = ember.compile(fn)          # or a Module: ember.compile(model)
    y = fast(x)                       # first call for these shapes: trace + build
    print(ember.compiler.explain(fn, x))

On the first call for a signature (the tensor arguments' shapes, strides,
dtypes, devices and requires_grad, grad mode, a module's training flag,
the other arguments' values) the program is traced into ember.jit's graph
(its eager result is returned); the graph is partitioned into fusion
groups (runs of the op vocabulary's element-wise ops, see _partition); each
group becomes one C99 function generated from the ops' C expressions in
th_ops.def, compiled by the system C compiler into the on-disk cache
($EMBER_CACHE_DIR, default ~/.cache/ember/kernels) and loaded through cffi.
Later calls with the signature run the graph: groups through their
kernels (outer loop on libTH's thread pool), everything else as traced.

Falls back to eager evaluation, with one warning saying why, when there
is no C compiler, when tracing met data-dependent Python control flow,
or when a kernel fails to build.  Results equal eager ones up to float
rounding of transcendental functions; in-place ops, views, products and
reductions run as in eager mode.
"""
import functools
import threading
import warnings
import weakref

from . import _toolchain
from ._runtime import CompiledGraph, logs_fusion, reproduces

__all__ = ["compile", "explain", "reset", "CompiledFunction", "stats"]

_live = weakref.WeakSet()     # every CompiledFunction, for reset()


def _signature(args, kwargs, grad, training):
    """What a compiled graph is valid for; None when an argument is not
    hashable (that call runs eagerly)."""
    import ember
    parts = [grad, training]
    for key, a in list(enumerate(args)) + sorted(kwargs.items()):
        if isinstance(a, ember.Tensor):
            parts.append((key, a.shape, a.stride(), a.dtype, a.device, a.requires_grad))
        else:
            try:
                hash(a)
            except TypeError:
                return None
            parts.append((key, type(a).__name__, a))
    return tuple(parts)


class CompiledFunction:
    """What ember.compile returns for a function: call it as the function."""

    def __init__(self, fn, module=None, dynamic=False, fullgraph=False, mode=None):
        self._fn, self._module = fn, module
        self.dynamic, self.fullgraph, self.mode = dynamic, fullgraph, mode
        self._cache = {}          # signature -> CompiledGraph or None (run eagerly)
        self._lock = threading.Lock()
        functools.update_wrapper(self, fn, updated=())
        _live.add(self)

    def __call__(self, *args, **kwargs):
        import ember
        training = getattr(self._module, "training", None)
        sig = _signature(args, kwargs, ember.is_grad_enabled(), training)
        if sig is None:
            return self._fn(*args, **kwargs)
        entry = self._cache.get(sig, False)
        if entry is None:
            return self._fn(*args, **kwargs)
        if entry is False:
            entry, result = self._build(args, kwargs)
            self._cache[sig] = entry
            return result
        return entry.run([a for a in args if isinstance(a, ember.Tensor)])

    def _build(self, args, kwargs):
        """(CompiledGraph or None, the eager result of this call)."""
        import ember
        from ember.jit import TracerWarning, trace_graph
        positions = [i for i, a in enumerate(args) if isinstance(a, ember.Tensor)]
        tensors = tuple(args[i] for i in positions)

        def program(*ts):
            full = list(args)
            for i, t in zip(positions, ts):
                full[i] = t
            return self._fn(*full, **kwargs)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", TracerWarning)
            try:
                graph, consts, result = trace_graph(_Traced(program, self._module), tensors)
            except Exception as e:     # not traceable: this signature runs eagerly
                _warn(f"ember.compile: {self._name()} could not be traced "
                      f"({type(e).__name__}: {e}); running it eagerly")
                return None, self._fn(*args, **kwargs)
        dependent = [w for w in caught if issubclass(w.category, TracerWarning)]
        for w in caught:
            if not issubclass(w.category, TracerWarning):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        if dependent:
            if self.fullgraph:
                raise RuntimeError(f"ember.compile(fullgraph=True): {self._name()} "
                                   f"depends on tensor values: {dependent[0].message}")
            _warn(f"ember.compile: {self._name()} depends on tensor values (data-dependent "
                  f"control flow or a value read out of a tensor: {dependent[0].message}); "
                  f"running it eagerly")
            return None, result
        compiled = CompiledGraph(graph, _constant_reader(graph, consts, self._module),
                                 self._name())
        if not reproduces(compiled, program, tensors):
            _warn(f"ember.compile: the trace of {self._name()} does not reproduce it on other "
                  f"inputs (it calls an op the trace cannot see, such as a function bound "
                  f"before compiling, or keeps state the trace fixes); running it eagerly")
            return None, result
        if logs_fusion():
            import sys
            print(f"[ember.compile] {compiled.explain()}", file=sys.stderr)
        return compiled, result

    def _name(self):
        return getattr(self._fn, "__qualname__", None) or type(self._fn).__name__

    def graphs(self):
        """The CompiledGraphs built so far, by signature."""
        return {k: v for k, v in self._cache.items() if v is not None}

    def reset(self):
        with self._lock:
            self._cache.clear()


class _Traced:
    """The program as ember.jit traces it: parameters and buffers named as
    the module's (so that they are read live on every call)."""

    def __init__(self, program, module):
        self._program, self._module = program, module
        if module is not None:
            self.named_parameters = module.named_parameters
            self.named_buffers = module.named_buffers

    def __call__(self, *ts):
        return self._program(*ts)


def _constant_reader(graph, consts, module):
    """value -> its tensor on this call: a module's parameters and buffers
    looked up by name, other captured tensors as they are now (eager code
    reads them live: an optimizer's in-place update, their autograd
    history)."""
    def constant(v):
        if v.role in ("param", "buffer") and module is not None:
            owner = module
            *path, last = v.name.split(".")
            for p in path:
                owner = getattr(owner, p)
            return getattr(owner, last)
        live = graph.captured.get(v.id)
        return live if live is not None else consts[v.id]
    return constant


class CompiledModule:
    """What ember.compile returns for a Module: calls run the compiled
    forward; everything else (parameters, train/eval, state_dict) is the
    module's."""

    def __init__(self, module, **options):
        object.__setattr__(self, "_orig_mod", module)
        object.__setattr__(self, "_compiled", CompiledFunction(module.__call__, module=module,
                                                               **options))

    def __call__(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def forward(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._orig_mod, name)

    def __setattr__(self, name, value):
        setattr(self._orig_mod, name, value)

    def __repr__(self):
        return f"CompiledModule({self._orig_mod!r})"


def compile(model=None, *, fullgraph=False, dynamic=False, backend="ember", mode=None,
            options=None, disable=False):
    """PyTorch's torch.compile: model_or_fn compiled by fusing its
    element-wise chains; as a decorator too (``@ember.compile`` or
    ``@ember.compile(...)``).  backend: "ember" (generated C) or "eager"
    (no compilation); dynamic=True shares kernels across sizes (they are
    always size-generic; the graph is traced per signature)."""
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                 mode=mode, options=options, disable=disable)
    if backend not in ("ember", "eager", "inductor"):
        raise ValueError(f"ember.compile: unknown backend {backend!r} (ember, eager)")
    if disable or backend == "eager":
        return model
    if not callable(model):
        raise TypeError(f"ember.compile: expected a function or a Module, got "
                        f"{type(model).__name__}")
    if hasattr(model, "named_parameters") and hasattr(model, "forward"):
        return CompiledModule(model, dynamic=dynamic, fullgraph=fullgraph, mode=mode)
    return CompiledFunction(model, dynamic=dynamic, fullgraph=fullgraph, mode=mode)


def explain(fn, *args, **kwargs):
    """The fusion groups ember.compile makes of fn(*args, **kwargs) (a
    function, a Module or an ember.compile result), as text; fn runs once."""
    compiled = fn if isinstance(fn, (CompiledFunction, CompiledModule)) else compile(fn)
    inner = compiled._compiled if isinstance(compiled, CompiledModule) else compiled
    compiled(*args, **kwargs)    # traces (first call) ...
    compiled(*args, **kwargs)    # ... and builds the kernels
    graphs = list(inner.graphs().values())
    if not graphs:
        return f"{inner._name()}: runs eagerly (see the warning)"
    return "\n".join(g.explain() for g in graphs)


def reset():
    """Clears every compiled function's traced graphs and the table of
    loaded kernels (the disk cache stays)."""
    for f in list(_live):
        f.reset()
    _toolchain.forget()


def stats():
    """{'compiled', 'loaded', 'compile_s'}: kernels this process compiled,
    kernels it took from the disk cache, seconds spent compiling."""
    return dict(_toolchain.stats)


_warned = set()


def _warn(msg):
    if msg not in _warned:
        _warned.add(msg)
        warnings.warn(msg, RuntimeWarning, stacklevel=4)
