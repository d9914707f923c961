"""Tensors as MPI buffers: NumPy arrays over the tensor's own memory (no
copy) for contiguous CPU tensors; a contiguous host copy, written back when
the operation completes, for non-contiguous and CUDA tensors; a float32 copy
for float16/bfloat16 reductions (MPI has no 16-bit floating types)."""
import ctypes

import numpy as np

import ember

# the bits of each dtype as MPI moves them (bfloat16 has no NumPy type)
_MOVE = {ember.float32: np.float32, ember.float64: np.float64, ember.float16: np.uint16,
         ember.bfloat16: np.uint16, ember.int8: np.int8, ember.uint8: np.uint8,
         ember.int16: np.int16, ember.int32: np.int32, ember.int64: np.int64,
         ember.bool: np.bool_}
DTYPE_CODES = {dt: i for i, dt in enumerate(_MOVE)}
NARROW_FLOATS = (ember.float16, ember.bfloat16)


def check_tensor(t, name, fn):
    if not isinstance(t, ember.Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"torch.Tensor\n             but got {type(t)} instead.")
    if t.dtype not in _MOVE:
        raise TypeError(f"ember.distributed.{fn}: unsupported dtype {t.dtype}")


def raw_view(t, np_dtype):
    """A NumPy array over contiguous CPU tensor t's memory (it must stay alive
    while the array is used)."""
    n = t.numel()
    if n == 0:
        return np.empty(0, np_dtype)
    nbytes = n * t.element_size()
    return np.frombuffer((ctypes.c_char * nbytes).from_address(t.data_ptr()), dtype=np_dtype)


class Buffer:
    """A tensor's memory as a flat NumPy array for MPI.  ``array`` is what MPI
    reads and writes; ``finish()`` writes a staged copy back into the tensor
    (for outputs).  reduce=True gives float16/bfloat16 as float32."""

    def __init__(self, t, reduce=False, output=True):
        self.tensor = t
        staged = t.device.type != "cpu" or not t.is_contiguous()
        widen = reduce and t.dtype in NARROW_FLOATS
        src = t.detach()
        if widen:
            self.host = src.to(device="cpu", dtype=ember.float32).contiguous()
            self.array = raw_view(self.host, np.float32)
        elif staged:
            self.host = src.to("cpu").contiguous()
            self.array = raw_view(self.host, _MOVE[t.dtype])
        else:
            self.host = None
            self.array = raw_view(src, _MOVE[t.dtype])
        self.output = output

    def finish(self):
        if self.output and self.host is not None:
            with ember.no_grad():
                self.tensor.detach().copy_(self.host)

