"""ember.onnx: PyTorch's ONNX export names.  Ember has no ONNX exporter
yet: the module imports (so programs that export at their end run up to
that point), is_in_onnx_export() answers False, and the functions that
would export raise NotImplementedError saying so."""
import enum

__all__ = ["export", "dynamo_export", "is_in_onnx_export", "register_custom_op_symbolic",
           "unregister_custom_op_symbolic", "select_model_mode_for_export",
           "OnnxExporterError", "TrainingMode", "OperatorExportTypes", "producer_name",
           "producer_version"]

producer_name = "ember"
producer_version = "0.1.0"


class OnnxExporterError(RuntimeError):
    """Errors raised by the ONNX exporter."""


class TrainingMode(enum.IntEnum):
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class OperatorExportTypes(enum.IntEnum):
    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


def _missing(name):
    def unsupported(*args, **kwargs):
        raise NotImplementedError(
            f"ember.onnx.{name}: Ember has no ONNX exporter yet, so models cannot be exported "
            f"to ONNX; save the weights with ember.save(model.state_dict(), path) instead")
    unsupported.__name__ = name
    unsupported.__qualname__ = name
    unsupported.__doc__ = f"Not available: Ember has no ONNX exporter yet (raises " \
                          f"NotImplementedError)."
    return unsupported


export = _missing("export")
dynamo_export = _missing("dynamo_export")
register_custom_op_symbolic = _missing("register_custom_op_symbolic")
unregister_custom_op_symbolic = _missing("unregister_custom_op_symbolic")
select_model_mode_for_export = _missing("select_model_mode_for_export")


def is_in_onnx_export():
    """False: no export is ever running (models branch on this in forward)."""
    return False
