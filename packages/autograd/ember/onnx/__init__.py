"""ember.onnx: ONNX export and loading, in PyTorch's names.

    ember.onnx.export(model, (x,), "model.onnx", input_names=["input"],
                      output_names=["output"], dynamic_axes={"input": {0: "batch"}})
    module = ember.onnx.load("model.onnx")     # an nn.Module running the graph on Ember's ops

export traces the model with ember.jit (in eval mode unless told otherwise),
writes each op as ONNX operators with the ``onnx`` package (the optional
extra ``pip install ember[onnx]``) and checks the result with
onnx.checker.  The default opset is the newest the installed onnxruntime
runs (the onnx package's newest without it); opsets 13 and up are
supported.  An op without an ONNX mapping raises OnnxExporterError naming
the op and the line that called it.
"""
import contextlib
import enum
import os

from ._export import OnnxExporterError

__all__ = ["export", "load", "dynamo_export", "is_in_onnx_export",
           "register_custom_op_symbolic", "unregister_custom_op_symbolic",
           "select_model_mode_for_export", "OnnxExporterError", "TrainingMode",
           "OperatorExportTypes", "producer_name", "producer_version", "MIN_OPSET",
           "default_opset"]

producer_name = "ember"
producer_version = "0.1.0"
MIN_OPSET = 13


class TrainingMode(enum.IntEnum):
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class OperatorExportTypes(enum.IntEnum):
    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


def _onnx():
    try:
        import onnx
    except ImportError as e:
        raise ImportError("ember.onnx needs the onnx package: pip install ember[onnx] "
                          "(or pip install onnx onnxruntime)") from e
    return onnx


_default = None


def default_opset():
    """The newest opset the installed onnxruntime runs (the onnx package's
    newest when onnxruntime is not installed)."""
    global _default
    if _default is not None:
        return _default
    onnx = _onnx()
    newest = onnx.defs.onnx_opset_version()
    try:
        import onnxruntime as ort
    except ImportError:
        _default = newest
        return _default
    h = onnx.helper
    f = onnx.TensorProto.FLOAT
    ones = h.make_tensor("w", f, [1, 1, 1, 1], [1.0])
    shape = h.make_tensor("s", onnx.TensorProto.INT64, [2], [1, -1])
    for opset in range(newest, MIN_OPSET - 1, -1):
        # a few of the operators export writes most, so that the runtime must have them
        nodes = [h.make_node("Conv", ["x", "w"], ["c"]), h.make_node("Relu", ["c"], ["r"]),
                 h.make_node("Reshape", ["r", "s"], ["f"]),
                 h.make_node("Softmax", ["f"], ["y"], axis=1)]
        g = h.make_graph(nodes, "probe", [h.make_tensor_value_info("x", f, [1, 1, 2, 2])],
                         [h.make_tensor_value_info("y", f, [1, 4])], [ones, shape])
        m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
        m.ir_version = _export._max_ir(onnx, opset)
        try:
            ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        except Exception:
            continue
        _default = opset
        return opset
    _default = MIN_OPSET
    return _default


_exporting = [False]


def is_in_onnx_export():
    """True while ember.onnx.export runs the model (models may branch on it)."""
    return _exporting[0]


@contextlib.contextmanager
def select_model_mode_for_export(model, mode):
    """Puts model in the mode export asks for, and back afterwards."""
    was = getattr(model, "training", None)
    if was is not None and mode != TrainingMode.PRESERVE:
        model.train(mode == TrainingMode.TRAINING)
    try:
        yield
    finally:
        if was is not None:
            model.train(was)


def export(model, args, f, export_params=True, verbose=False, training=TrainingMode.EVAL,
           input_names=None, output_names=None, operator_export_type=OperatorExportTypes.ONNX,
           opset_version=None, do_constant_folding=True, dynamic_axes=None,
           keep_initializers_as_inputs=None, custom_opsets=None,
           export_modules_as_functions=False, autograd_inlining=True, dynamo=False, **kwargs):
    """Traces model(*args) and writes it to f (a path or a binary file) as
    ONNX; checks it with onnx.checker.  Returns the ModelProto."""
    onnx = _onnx()
    from .. import jit
    from ._export import build_model
    if opset_version is None:
        opset_version = default_opset()
    newest = onnx.defs.onnx_opset_version()
    if not MIN_OPSET <= opset_version <= newest:
        raise ValueError(f"ember.onnx.export: opset_version {opset_version} is not supported "
                         f"(supported: {MIN_OPSET} to {newest}, the installed onnx's newest)")
    if operator_export_type != OperatorExportTypes.ONNX:
        raise ValueError("ember.onnx.export: only operator_export_type=OperatorExportTypes.ONNX "
                         "is supported")
    if isinstance(args, dict) or (isinstance(args, tuple) and args and
                                  isinstance(args[-1], dict)):
        raise ValueError("ember.onnx.export: keyword arguments to the model are not supported; "
                         "pass the inputs as a tuple")
    inputs = args if isinstance(args, tuple) else (args,)
    _exporting[0] = True
    try:
        with select_model_mode_for_export(model, training):
            graph, tensors, _ = jit.trace_graph(model, inputs)
            varying = _varying(model, inputs, graph, input_names, output_names, dynamic_axes)
    finally:
        _exporting[0] = False
    proto = build_model(onnx, graph, tensors, opset=opset_version, input_names=input_names,
                        output_names=output_names, dynamic_axes=dynamic_axes,
                        do_constant_folding=do_constant_folding, export_params=export_params,
                        producer=(producer_name, producer_version), varying=varying)
    data = proto.SerializeToString()
    onnx.checker.check_model(data)   # the bytes: serialised once
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as out:
            out.write(data)
    else:
        f.write(data)
    if verbose:
        print(onnx.helper.printable_graph(proto.graph))
    return proto


def _varying(model, inputs, graph, input_names, output_names, dynamic_axes):
    """With dynamic axes on inputs: the sizes of the trace that follow them
    (a second trace with those dimensions grown, see _dynamic)."""
    from .. import jit
    from ._dynamic import GraphsDiffer, compare, grown_inputs
    from ._export import _dynamic, default_names
    if not dynamic_axes:
        return None
    names, outs = default_names(graph, input_names, output_names)
    dims = _dynamic(dynamic_axes, names, outs)
    per_input = [sorted(dims.get(n, {})) for n in names]
    if not any(per_input):
        return None
    other, _, _ = jit.trace_graph(model, grown_inputs(inputs, per_input))
    try:
        by_node, consts = compare(graph, other)
    except GraphsDiffer as e:
        raise OnnxExporterError(f"ember.onnx.export: the model runs other ops when its dynamic "
                                f"axes change size ({e}); export it without dynamic_axes") \
            from None
    shapes = {v.id: w.shape for v, w in zip(graph.values, other.values) if v.shape != w.shape}
    return by_node, shapes, consts


def load(f):
    """An nn.Module running the ONNX model in f (a path, a binary file or a
    ModelProto) on Ember's ops; its initializers are its parameters."""
    from ._load import load as _load
    return _load(_onnx(), f)


def _missing(name):
    def unsupported(*args, **kwargs):
        raise NotImplementedError(
            f"ember.onnx.{name}: not available in Ember; use ember.onnx.export (the "
            f"TorchScript-style exporter over ember.jit's trace)")
    unsupported.__name__ = unsupported.__qualname__ = name
    unsupported.__doc__ = "Not available (raises NotImplementedError); use ember.onnx.export."
    return unsupported


dynamo_export = _missing("dynamo_export")
register_custom_op_symbolic = _missing("register_custom_op_symbolic")
unregister_custom_op_symbolic = _missing("unregister_custom_op_symbolic")

from . import _export  # noqa: E402
