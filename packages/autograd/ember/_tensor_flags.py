"""Tensor.is_<kind> queries PyTorch has beyond is_cpu / is_cuda: the device
types and layouts Ember has no tensors of (XPU, MPS, meta, XLA, ...,
quantized, sparse, MKL-DNN, nested) answer False, as every strided CPU or
CUDA tensor does in PyTorch."""
from ._tensor import Tensor

_ALWAYS_FALSE = ("is_xpu", "is_mps", "is_meta", "is_ipu", "is_maia", "is_mtia", "is_xla",
                 "is_vulkan", "is_mkldnn", "is_quantized", "is_sparse", "is_sparse_csr",
                 "is_nested")


def _false(self):
    return False


for _name in _ALWAYS_FALSE:
    if not hasattr(Tensor, _name):  # a backend that has such tensors defines its own
        setattr(Tensor, _name, property(_false, doc="False: Ember has no such tensors."))


def is_neg(self):
    return False   # no lazy negation bit


def is_conj(self):
    return False   # no complex tensors


def is_distributed(self):
    return False


def is_nonzero(self):
    return bool(self)


def is_set_to(self, tensor):
    """True when both tensors view the same memory with the same sizes and
    strides."""
    return (self.device == tensor.device and self.data_ptr() == tensor.data_ptr()
            and self.dtype == tensor.dtype and tuple(self.shape) == tuple(tensor.shape)
            and tuple(self.stride()) == tuple(tensor.stride()))


def is_coalesced(self):
    raise RuntimeError("is_coalesced expected sparse coordinate tensor layout but got Strided")


for _fn in (is_neg, is_conj, is_distributed, is_nonzero, is_set_to, is_coalesced):
    if not hasattr(Tensor, _fn.__name__):
        setattr(Tensor, _fn.__name__, _fn)
