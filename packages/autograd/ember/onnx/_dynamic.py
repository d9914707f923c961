"""Which sizes in a trace follow the dynamic axes.

A trace bakes sizes in (a reshape to the traced batch).  With dynamic axes,
export traces the model a second time with each dynamic dimension of the
inputs one larger and compares the two graphs: a node whose integer
arguments differ takes a size from a dynamic axis.  Handlers that can say so
in ONNX (a reshape: that entry becomes -1) read ``ctx.varying``; any other
node with varying sizes, a graph that changes shape between the two runs,
or a constant whose shape follows the axes is refused, rather than written
with the traced size.
"""
from ..jit._graph import Value

__all__ = ["grown_inputs", "compare"]


def grown_inputs(inputs, dims_by_input):
    """The inputs with each listed dimension one larger (the extra slice a
    copy of the first, so token ids stay valid)."""
    import ember
    out = []
    for x, dims in zip(inputs, dims_by_input):
        for d in sorted(dims):
            if d >= x.dim():
                raise ValueError(f"ember.onnx.export: dynamic_axes names dim {d} of an input "
                                 f"with {x.dim()} dimensions")
            x = ember.cat([x, x.narrow(d, 0, 1)], d) if x.shape[d] else x
        out.append(x.detach())
    return out


class GraphsDiffer(Exception):
    pass


def _diff(a, b, path, found):
    if isinstance(a, Value) or isinstance(b, Value):
        if not (isinstance(a, Value) and isinstance(b, Value)) or a.id != b.id:
            raise GraphsDiffer(path)
        return
    if isinstance(a, bool) or isinstance(b, bool):
        if a != b:
            raise GraphsDiffer(path)
        return
    if isinstance(a, int) and isinstance(b, int):
        if a != b:
            found.append(path)
        return
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        if len(a) != len(b) or type(a) is not type(b):
            raise GraphsDiffer(path)
        for i, (x, y) in enumerate(zip(a, b)):
            _diff(x, y, path + (i,), found)
        return
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            raise GraphsDiffer(path)
        for k in a:
            _diff(a[k], b[k], path + (k,), found)
        return
    if isinstance(a, slice) and isinstance(b, slice):
        _diff((a.start, a.stop, a.step), (b.start, b.stop, b.step), path, found)
        return
    if a != b and not (a is None and b is None):
        raise GraphsDiffer(path)


def compare(g1, g2):
    """{node index: [argument paths whose ints differ]} and the ids of the
    constants whose shapes differ; raises GraphsDiffer with a message when
    the two traces did not run the same ops."""
    if len(g1.nodes) != len(g2.nodes) or len(g1.values) != len(g2.values):
        raise GraphsDiffer(f"the traces ran {len(g1.nodes)} and {len(g2.nodes)} ops")
    varying = {}
    for i, (n1, n2) in enumerate(zip(g1.nodes, g2.nodes)):
        if n1.target != n2.target:
            raise GraphsDiffer(f"op {i} is {n1.target} in one trace and {n2.target} in the other "
                               f"(at {n1.source})")
        found = []
        try:
            _diff((n1.args, n1.kwargs), (n2.args, n2.kwargs), (), found)
        except GraphsDiffer as e:
            raise GraphsDiffer(f"the arguments of {n1.target} (at {n1.source}) differ at "
                               f"{e.args[0]}") from None
        if found:
            varying[i] = found
    consts = {v1.id for v1, v2 in zip(g1.values, g2.values)
              if v1.role == "const" and v1.shape != v2.shape}
    return varying, consts
