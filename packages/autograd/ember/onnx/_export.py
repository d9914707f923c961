"""From an ember.jit graph to an ONNX model.

Each node of the traced graph is written by the handler of its op kind
(ember.onnx._symbolic, ``HANDLERS``); a node whose inputs are all
constants is computed at export time instead (``do_constant_folding``).
Parameters and buffers become initializers under their names.
"""
import numpy as np

from ..jit import _points
from ..jit._graph import Value, substitute
from ..jit._tracer import flat_tensors
from . import _symbolic

__all__ = ["build_model", "OnnxExporterError"]


class OnnxExporterError(RuntimeError):
    """Errors raised by the ONNX exporter."""


NP_DTYPES = {"float32": np.float32, "float64": np.float64, "float16": np.float16,
             "int8": np.int8, "uint8": np.uint8, "int16": np.int16, "int32": np.int32,
             "int64": np.int64, "bool": np.bool_}


class Context:
    """What handlers write through: names, initializers and nodes."""

    def __init__(self, onnx, graph, opset, tensors, dynamic):
        self.onnx = onnx
        self.helper = onnx.helper
        self.graph = graph
        self.opset = opset
        self.tensors = tensors      # value id -> ember tensor of the constants
        self.names = {}             # value id -> ONNX name
        self.nodes = []
        self.inits = {}             # ONNX name -> numpy array
        self.count = 0
        self.node = None            # the traced node being written
        self.dynamic = dynamic      # ONNX name -> {dim: symbolic name}
        self.varying = []           # the node's argument paths whose sizes follow dynamic axes
        self.varying_values = {}    # value id -> its shape in the second trace, where it differs
        self.varying_consts = set()     # ... constants among them

    def fresh(self, hint="t"):
        self.count += 1
        return f"{hint}_{self.count}"

    def static_shape(self, v, dims=None):
        """v's traced shape, for a handler that writes it (or its `dims`) into
        the file; refused where those sizes follow a dynamic axis."""
        other = self.varying_values.get(v.id)
        if other is not None and any(other[d] != v.shape[d] for d in (
                range(len(v.shape)) if dims is None else dims)):
            self.fail("needs a shape that follows the dynamic axes, which its ONNX form "
                      "would fix to the traced size")
        return v.shape

    def name(self, v):
        """The ONNX name of a value (a constant becomes an initializer)."""
        n = self.names.get(v.id)
        if n is None:
            if v.id not in self.tensors:
                raise OnnxExporterError(f"value %{v.name} is used before it is computed")
            if v.id in self.varying_consts:
                self.fail("reads a constant whose shape follows the dynamic axes (a tensor "
                          "made with a size read from an input); ONNX would fix it to the "
                          "traced size")
            n = self.const(self.tensors[v.id].detach().cpu().numpy(), v.name)
            self.names[v.id] = n
        return n

    def const(self, array, hint="const"):
        name = hint if hint not in self.inits and hint not in self.used_names else \
            self.fresh(hint)
        self.inits[name] = np.asarray(array)
        return name

    used_names = frozenset()

    def ints(self, values, hint="shape"):
        return self.const(np.asarray(list(values), dtype=np.int64), hint)

    def scalar(self, x, like):
        """A number as a 0-d initializer of the dtype of value `like`."""
        return self.const(np.asarray(x, dtype=NP_DTYPES.get(like.dtype, np.float32)), "scalar")

    def op(self, op_type, inputs, outputs=1, **attrs):
        """Adds a node; returns its output name (or names if outputs > 1)."""
        outs = [self.fresh(op_type) for _ in range(outputs)] if isinstance(outputs, int) \
            else list(outputs)
        src = self.node.source if self.node is not None else ""
        self.nodes.append(self.helper.make_node(
            op_type, list(inputs), outs, name=self.fresh(f"/{op_type}"),
            doc_string=src, **{k: v for k, v in attrs.items() if v is not None}))
        return outs[0] if len(outs) == 1 else outs

    def set(self, v, name):
        self.names[v.id] = name

    def out(self, name, index=0):
        """Binds the node's output `index` to ONNX name `name`."""
        self.names[self.node.outputs[index].id] = name
        return name

    def fail(self, why):
        n = self.node
        raise OnnxExporterError(f"ember.onnx.export: op '{n.kind}' ({n.target}) {why} "
                                f"(called at {n.source or 'an unknown place'})")


def _foldable(node, constant_ids):
    found = node.inputs()
    return not node.inplace and found and all(v.id in constant_ids for v in found) and \
        node.kind not in ("dropout", "rand", "randn", "bernoulli")


#: ops whose handlers write sizes that follow dynamic axes correctly (ctx.varying)
DYNAMIC_AWARE = ("reshape", "view", "rnn_direction")


def default_names(graph, input_names, output_names):
    outputs = graph.output_values()
    input_names = list(input_names or [])
    if len(input_names) > len(graph.inputs):
        raise ValueError(f"ember.onnx.export: {len(input_names)} input_names for "
                         f"{len(graph.inputs)} inputs")
    input_names += [f"input{'' if i == 0 else '.' + str(i)}" if not input_names else
                    f"input.{i}" for i in range(len(input_names), len(graph.inputs))]
    output_names = list(output_names or [])
    if len(output_names) > len(outputs):
        raise ValueError(f"ember.onnx.export: {len(output_names)} output_names for "
                         f"{len(outputs)} outputs")
    output_names += [f"output{'' if i == 0 else '.' + str(i)}" for i in
                     range(len(output_names), len(outputs))]
    return input_names, output_names


def build_model(onnx, graph, tensors, *, opset, input_names, output_names, dynamic_axes,
                do_constant_folding, export_params, producer, varying=None):
    import ember
    helper = onnx.helper
    outputs = graph.output_values()
    input_names, output_names = default_names(graph, input_names, output_names)
    dynamic = _dynamic(dynamic_axes or {}, input_names, output_names)
    ctx = Context(onnx, graph, opset, dict(tensors), dynamic)
    by_node, ctx.varying_values, ctx.varying_consts = varying or ({}, {}, set())
    ctx.used_names = frozenset(input_names) | frozenset(output_names)
    for v, n in zip(graph.inputs, input_names):
        ctx.set(v, n)
    constant_ids = {v.id for v in graph.constants}
    resolved = {}
    with ember.no_grad():
        for index, node in enumerate(graph.nodes):
            ctx.node = node
            ctx.varying = by_node.get(index, [])
            if do_constant_folding and _foldable(node, constant_ids):
                if ctx.varying or any(v.id in ctx.varying_consts for v in node.inputs()):
                    ctx.varying_consts.update(v.id for v in node.outputs)
                fn = resolved.get(node.target) or _points.resolve(node.target)
                resolved[node.target] = fn
                args = substitute(node.args, lambda v: ctx.tensors[v.id])
                kwargs = substitute(node.kwargs, lambda v: ctx.tensors[v.id])
                results = flat_tensors(fn(*args, **kwargs))
                for v, t in zip(node.outputs, results):
                    ctx.tensors[v.id] = t
                    constant_ids.add(v.id)
                continue
            if node.writes_view:
                ctx.fail("writes in place into a view of another tensor, which ONNX cannot "
                         "express; write out of place (e.g. torch.cat instead of slice "
                         "assignment)")
            handler = _symbolic.HANDLERS.get(node.kind)
            if ctx.varying and handler is not None and node.kind not in DYNAMIC_AWARE:
                ctx.fail("takes sizes that follow the dynamic axes, which its ONNX form would "
                         "fix to the traced values")
            if handler is None:
                raise OnnxExporterError(
                    f"ember.onnx.export: no ONNX mapping for op '{node.kind}' ({node.target}), "
                    f"called at {node.source or 'an unknown place'}")
            handler(ctx, node)
            for v in node.outputs:
                if v.id not in ctx.names:
                    ctx.fail("produced no ONNX value")
    ctx.node = None
    for v, n in zip(outputs, output_names):
        ctx.op("Identity", [ctx.name(v)], [n])
    if do_constant_folding and export_params:   # parameters fed as inputs stay as they are
        _fold_batch_norms(ctx)
    _drop_dead(ctx, set(output_names))
    graph_inputs = [_info(helper, onnx, n, v, dynamic.get(n, {})) for v, n in
                    zip(graph.inputs, input_names)]
    graph_outputs = [_info(helper, onnx, n, v, _output_dims(ctx, v, dynamic.get(n, {}), n))
                     for v, n in zip(outputs, output_names)]
    inits = []
    for name, arr in ctx.inits.items():
        inits.append(onnx.numpy_helper.from_array(np.array(arr, order="C"), name))
    if not export_params:   # parameters become inputs the caller feeds
        params = {n for n in ctx.inits if any(v.name == n and v.role in ("param", "buffer")
                                              for v in graph.constants)}
        graph_inputs += [helper.make_tensor_value_info(
            i.name, i.data_type, list(i.dims)) for i in inits if i.name in params]
        inits = [i for i in inits if i.name not in params]
    g = helper.make_graph(ctx.nodes, "main_graph", graph_inputs, graph_outputs, inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name=producer[0], producer_version=producer[1])
    model.ir_version = min(model.ir_version, _max_ir(onnx, opset))
    return model


def _fold_batch_norms(ctx):
    """Conv followed by an eval-mode BatchNormalization that alone reads it,
    all constants: one Conv with the normalisation in its weight and bias."""
    readers = {}
    for n in ctx.nodes:
        for i in n.input:
            readers[i] = readers.get(i, 0) + 1
    producer = {n.output[0]: n for n in ctx.nodes if n.op_type == "Conv"}
    kept = []
    for n in ctx.nodes:
        conv = producer.get(n.input[0]) if n.op_type == "BatchNormalization" else None
        if conv is None or readers.get(conv.output[0]) != 1 or \
                not all(i in ctx.inits for i in list(conv.input[1:]) + list(n.input[1:5])):
            kept.append(n)
            continue
        eps = next((a.f for a in n.attribute if a.name == "epsilon"), 1e-5)
        gamma, beta, mean, var = (ctx.inits[i].astype(np.float64) for i in n.input[1:5])
        w = ctx.inits[conv.input[1]]
        b = ctx.inits[conv.input[2]].astype(np.float64) if len(conv.input) > 2 else 0.0
        scale = gamma / np.sqrt(var + eps)
        shape = (-1,) + (1,) * (w.ndim - 1)
        new_w = (w.astype(np.float64) * scale.reshape(shape)).astype(w.dtype)
        new_b = ((b - mean) * scale + beta).astype(w.dtype)
        conv.input[1:] = [ctx.const(new_w, f"{conv.input[1]}.folded"),
                          ctx.const(new_b, f"{conv.input[1]}.folded_bias")]
        conv.output[0] = n.output[0]
    ctx.nodes = kept


def _drop_dead(ctx, wanted):
    """Removes nodes whose results nothing reads (a recurrent layer's input
    projection, taken into its ONNX operator) and initializers no node reads."""
    nodes = ctx.nodes
    while True:
        read = set(wanted)
        for n in nodes:
            read.update(n.input)
        kept = [n for n in nodes if any(o in read for o in n.output)]
        if len(kept) == len(nodes):
            break
        nodes = kept
    ctx.nodes = nodes
    ctx.inits = {k: v for k, v in ctx.inits.items() if k in read}


def _output_dims(ctx, v, named, name):
    """An output's symbolic dims: those named in dynamic_axes, and any other
    that follows the inputs' dynamic axes."""
    other = ctx.varying_values.get(v.id)
    dims = dict(named)
    if other is not None:
        for i, (a, b) in enumerate(zip(v.shape, other)):
            if a != b and i not in dims:
                dims[i] = f"{name}_dim_{i}"
    return dims


def _max_ir(onnx, opset):
    """The IR version the ONNX release of `opset` came with (older runtimes
    refuse newer IRs)."""
    best = 7
    for _, ir, op, *_ in onnx.helper.VERSION_TABLE:
        if op <= opset:
            best = max(best, ir)
    return best


def _dynamic(dynamic_axes, input_names, output_names):
    out = {}
    for name, axes in dynamic_axes.items():
        if name not in input_names and name not in output_names:
            raise ValueError(f"ember.onnx.export: dynamic_axes names {name!r}, which is "
                             f"neither an input nor an output name")
        if isinstance(axes, dict):
            out[name] = {int(k): str(v) for k, v in axes.items()}
        else:
            out[name] = {int(k): f"{name}_dynamic_axes_{i + 1}" for i, k in enumerate(axes)}
    return out


def _info(helper, onnx, name, v, dyn):
    elem = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(NP_DTYPES[v.dtype]))
    dims = [dyn.get(i, d) for i, d in enumerate(v.shape)]
    return helper.make_tensor_value_info(name, elem, dims)


def is_value(x):
    return isinstance(x, Value)
