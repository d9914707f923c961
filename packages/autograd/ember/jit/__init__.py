"""ember.jit: tracing a program into a graph of the front's ops.

    traced = ember.jit.trace(model, (x,))
    print(traced.graph)           # inputs, named constants, one node per op
    print(traced.code)            # the same as Python
    y = traced(x2)                # replays the ops (autograd works through it)
    ember.jit.save(traced, "model.ejit"); ember.jit.load("model.ejit")

As PyTorch's tracer, a trace records what one run did: Python control flow
and sizes are baked in, and reading a Python value out of a tensor
computed from the inputs (``bool``, ``.item()``, ``len``, ``int``, ...)
warns with a TracerWarning.  Modules trace in the mode they are in
(train or eval).  The graph is ember.jit's IR (``ember.jit.Graph``), also
what ember.onnx exports.
"""
from ._graph import Graph, Node, Value
from ._tracer import TracerWarning, record as _record
from ._archive import save, load

__all__ = ["trace", "save", "load", "Graph", "Node", "Value", "TracerWarning",
           "TracedModule", "trace_graph"]


def _names(module):
    """id(tensor) -> (qualified name, role) of a module's parameters and buffers."""
    names = {}
    if module is None:
        return names
    for name, p in module.named_parameters(remove_duplicate=True):
        names.setdefault(id(p), (name, "param"))
    for name, b in module.named_buffers(remove_duplicate=True):
        if b is not None:
            names.setdefault(id(b), (name, "buffer"))
    return names


def _as_tuple(example_inputs):
    import ember
    if isinstance(example_inputs, ember.Tensor):
        return (example_inputs,)
    if isinstance(example_inputs, (tuple, list)):
        return tuple(example_inputs)
    raise TypeError(f"ember.jit.trace: example_inputs must be a Tensor or a tuple of Tensors, "
                    f"not {type(example_inputs).__name__}")


def trace_graph(fn_or_module, example_inputs):
    """(graph, constant tensors by value id, eager output) of one run."""
    module = fn_or_module if hasattr(fn_or_module, "named_parameters") else None
    if not callable(fn_or_module):
        raise TypeError(f"ember.jit.trace: expected a function or a Module, got "
                        f"{type(fn_or_module).__name__}")
    return _record(fn_or_module, _as_tuple(example_inputs), _names(module))


def trace(fn_or_module, example_inputs, check_trace=False, strict=True):
    """Runs fn_or_module(*example_inputs) once and returns a TracedModule
    replaying the ops it ran.  check_trace=True runs both again on the
    inputs and raises if they differ."""
    graph, tensors, _ = trace_graph(fn_or_module, example_inputs)
    name = type(fn_or_module).__name__ if hasattr(fn_or_module, "named_parameters") else \
        getattr(fn_or_module, "__name__", "TracedModule")
    from ._module import traced_module_class
    traced = traced_module_class()(graph, tensors, name)
    if hasattr(fn_or_module, "training"):
        traced.train(fn_or_module.training)
    if check_trace:
        _check(fn_or_module, traced, _as_tuple(example_inputs))
    return traced


def _check(fn, traced, inputs):
    import ember
    from ._tracer import flat_tensors
    with ember.no_grad():
        want, got = flat_tensors(fn(*inputs)), flat_tensors(traced(*inputs))
    if len(want) != len(got) or not all(
            a.shape == b.shape and ember.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)
            for a, b in zip(want, got)):
        raise RuntimeError("ember.jit.trace: the traced graph's results differ from the "
                           "function's on the example inputs")


def __getattr__(name):
    if name == "TracedModule":
        from ._module import traced_module_class
        return traced_module_class()
    raise AttributeError(f"module 'ember.jit' has no attribute {name!r}")
