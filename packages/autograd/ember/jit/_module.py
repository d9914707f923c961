"""The traced module: a graph and its constants, replayed through the front.

Replay calls each node's op again (the same dispatch point, the same
arguments with values bound to this call's tensors), so autograd records
as in the eager run and in-place writes and views behave as they did.
Parameters and buffers are the traced module's own (the original
module's tensors, under their names), so optimizers and state_dict work;
other captured tensors are non-persistent buffers of a ``_constants``
child.
"""
from . import _points
from ._graph import substitute
from ._tracer import flat_tensors

__all__ = ["run_graph", "traced_module_class"]


def run_graph(graph, inputs, constant, resolved):
    """Evaluates graph on inputs; constant(value) gives each constant's
    tensor; resolved: a dict caching target -> callable."""
    if len(inputs) != len(graph.inputs):
        raise TypeError(f"forward() takes {len(graph.inputs)} positional argument"
                        f"{'s' if len(graph.inputs) != 1 else ''} but {len(inputs)} were given")
    env = {}
    for v, x in zip(graph.inputs, inputs):
        env[v.id] = x
    written = _written_constants(graph)
    for v in graph.constants:
        # a captured constant the program writes in place starts each call as traced
        env[v.id] = constant(v).clone() if v.id in written else constant(v)

    def bind(v):
        return env[v.id]
    for n in graph.nodes:
        fn = resolved.get(n.target)
        if fn is None:
            fn = resolved[n.target] = _points.resolve(n.target)
        args = substitute(n.args, bind)
        kwargs = substitute(n.kwargs, bind)
        out = fn(*args, **kwargs)
        results = [args[0]] if n.inplace else flat_tensors(out)
        if len(results) != len(n.outputs):
            raise RuntimeError(f"{n.target} gave {len(results)} tensors where the trace "
                               f"recorded {len(n.outputs)} (at {n.source})")
        for v, t in zip(n.outputs, results):
            env[v.id] = t
    return substitute(graph.outputs, bind)


def _written_constants(graph):
    """Ids of the captured constants (not parameters or buffers, whose
    in-place updates are the module's state) that nodes write in place."""
    found = getattr(graph, "_written", None)
    if found is None:
        found = graph._written = {n.args[0].id for n in graph.nodes if n.inplace and
                                  getattr(n.args[0], "role", None) == "const"}
    return found


_class = None


def traced_module_class():
    """ember.jit.TracedModule (an ember.nn.Module; made on first use, so that
    importing ember.jit does not import ember.nn)."""
    global _class
    if _class is not None:
        return _class
    try:
        from ember import nn
    except ImportError as e:
        raise ImportError("ember.jit's traced modules are ember.nn Modules: install "
                          "ember-nn (pip install ember-nn)") from e

    class TracedModule(nn.Module):
        """A module running a traced graph (see ember.jit.trace)."""

        def __init__(self, graph, tensors, name="TracedModule"):
            super().__init__()
            self.__dict__["graph"] = graph
            self.__dict__["_resolved"] = {}
            self.__dict__["_traced_name"] = name
            consts = None
            for v in graph.constants:
                t = tensors[v.id]
                if v.role == "const":
                    if consts is None:
                        consts = nn.Module()
                        self.add_module("_constants", consts)
                    consts.register_buffer(v.name, t, persistent=False)
                    continue
                owner, attr = self._owner(v.name)
                if v.role == "param":
                    if not isinstance(t, nn.Parameter):
                        t = nn.Parameter(t, requires_grad=t.requires_grad)
                    owner.register_parameter(attr, t)
                else:
                    owner.register_buffer(attr, t)

        def _owner(self, dotted):
            *path, attr = dotted.split(".")
            m = self
            for p in path:
                child = m._modules.get(p)
                if child is None:
                    child = nn.Module()
                    m.add_module(p, child)
                m = child
            return m, attr

        def _constant(self, v):
            if v.role == "const":
                return self._modules["_constants"]._buffers[v.name]
            owner, attr = self._owner(v.name)
            return owner._parameters[attr] if v.role == "param" else owner._buffers[attr]

        def forward(self, *inputs):
            return run_graph(self.graph, inputs, self._constant, self._resolved)

        @property
        def code(self):
            """The graph as Python source (one line per op)."""
            return self.graph.code()

        def _get_name(self):
            return self._traced_name

    _class = TracedModule
    return _class
