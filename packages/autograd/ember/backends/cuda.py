"""ember.backends.cuda: how CUDA matrix products may round float32.

``matmul.allow_tf32`` (and ``ember.set_float32_matmul_precision``) let
float32 products through cuBLAS round their inputs to TF32 on GPUs with
TF32 tensor cores: much faster, with 10-bit mantissas.  Off by default, as
in PyTorch.  libTHC's own GEMM kernel (no cuBLAS, and the emulated device)
always computes in float32.
"""
import importlib.util

_PRECISIONS = ("highest", "high", "medium")
_precision = "highest"


def _thc():
    """ember.thc when it is installed (imported to apply a setting), else None."""
    if importlib.util.find_spec("ember.thc") is None:
        return None
    import ember.thc
    return ember.thc


def set_float32_matmul_precision(precision):
    """'highest': float32 products in float32; 'high' and 'medium': TF32
    allowed (Ember makes no other use of 'medium')."""
    global _precision
    if precision not in _PRECISIONS:
        raise RuntimeError(f"Invalid precision {precision!r}: expected one of "
                           + ", ".join(repr(p) for p in _PRECISIONS))
    _precision = precision
    thc = _thc()
    if thc is not None:
        thc.set_float32_matmul_tf32(precision != "highest")


def get_float32_matmul_precision():
    return _precision


class _MatmulSwitches:
    """``ember.backends.cuda.matmul``: allow_tf32 follows the float32 matmul
    precision; the reduced-precision-reduction switches are kept but change
    nothing (cuBLAS sums float16/bfloat16 products in float32 here)."""

    __slots__ = ("allow_fp16_reduced_precision_reduction",
                 "allow_bf16_reduced_precision_reduction")

    def __init__(self):
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True

    @property
    def allow_tf32(self):
        return _precision != "highest"

    @allow_tf32.setter
    def allow_tf32(self, allow):
        set_float32_matmul_precision("high" if allow else "highest")


matmul = _MatmulSwitches()


def is_built():
    """Whether Ember's CUDA backend is installed and was built with CUDA."""
    thc = _thc()
    return thc is not None and thc.built_with_cuda()
