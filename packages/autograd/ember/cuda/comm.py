"""ember.cuda.comm: copying tensors between CUDA devices as PyTorch's
torch.cuda.comm does: broadcast, scatter, gather and reduce_add.

Each is composed of differentiable ember ops (``to``, ``split``, ``cat``,
``+``, ``copy_`` for ``out=``), so autograd records them: a gradient flows
back to the source tensor(s).  Copies between devices are ember-thc's peer
copies (``to``; ``out=`` targets are filled from a copy already on their
device)."""
import contextlib
import warnings

import ember

__all__ = ["broadcast", "scatter", "gather", "reduce_add"]


def device_index(device, optional=False, allow_cpu=False):
    """An index from an int, 'cuda:1', an ember.device (-1 for the CPU
    where allowed); None or 'cuda': the current device where optional."""
    if isinstance(device, str):
        device = ember.device(device)
    if isinstance(device, ember.device):
        if device.type == "cpu":
            if not allow_cpu:
                raise ValueError(f"Expected a non cpu device, but got: {device}")
            return -1
        device = device.index
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    if device is None and optional:
        return ember.cuda.current_device()
    raise ValueError("Expected an ember.device with a specified index or an integer, "
                     f"but got:{device}")


def _to(tensor, index):
    """`tensor` on CUDA device `index` (-1: the CPU); itself when there."""
    return tensor.to("cpu" if index == -1 else ember.device("cuda", index))


def broadcast(tensor, devices=None, *, out=None):
    """Copies of `tensor` on each of `devices` (the tensor itself on its own
    device), or copied into the CUDA tensors of `out`."""
    if (devices is None) == (out is None):
        raise RuntimeError("Exactly one of 'devices' and 'out' must be specified, but got "
                           f"devices={devices} and out={out}")
    if devices is not None:
        return tuple(_to(tensor, device_index(d)) for d in devices)
    for i, o in enumerate(out):
        if o.device.type != "cuda":
            raise RuntimeError("Expected all output tensors to be CUDA tensors, but output "
                               f"tensor at index {i} has device '{o.device}'")
        if o.shape != tensor.shape:
            raise RuntimeError("Expected all output tensors to have same shape as the source "
                               f"tensor {list(tensor.shape)}, but output tensor at index {i} "
                               f"has shape {list(o.shape)}")
        o.copy_(tensor.to(o.device))
    return tuple(out)


def scatter(tensor, devices=None, chunk_sizes=None, dim=0, streams=None, *, out=None):
    """Splits `tensor` along `dim` and puts chunk i on devices[i]: equal
    chunks as ``tensor.chunk(len(devices), dim)`` makes them (fewer chunks
    than devices when the dim is short), or `chunk_sizes`; or into the
    tensors of `out` (their sizes along `dim` giving the split)."""
    if out is not None:
        if devices is not None:
            raise RuntimeError("'devices' must not be specified when 'out' is specified, "
                               f"but got devices={devices}")
        if chunk_sizes is not None:
            raise RuntimeError("'chunk_sizes' must not be specified when 'out' is specified, "
                               f"but got chunk_sizes={chunk_sizes}")
        if tensor.dim() == 0:
            raise RuntimeError("chunk expects at least a 1-dimensional tensor")
        for o, piece in zip(out, tensor.split([o.shape[dim] for o in out], dim)):
            o.copy_(piece.to(o.device))
        return tuple(out)
    devices = [device_index(d) for d in devices or ()]
    if not devices:
        raise RuntimeError("Expected at least one device to scatter to")
    if tensor.dim() == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunk_sizes is not None:
        chunk_sizes = list(chunk_sizes)
        if len(chunk_sizes) != len(devices):
            raise RuntimeError("Expected devices and chunk_sizes to be of same length, but got "
                               f"len(devices) = {len(devices)} and len(chunk_sizes) = "
                               f"{len(chunk_sizes)}")
        chunks = tensor.split(chunk_sizes, dim)
    else:
        chunks = tensor.chunk(len(devices), dim)
    result = []
    for i, chunk in enumerate(chunks):
        # the copy is queued on the given stream of its device, if any
        stream = streams[i] if streams else None
        with ember.cuda.stream(stream) if stream is not None else contextlib.nullcontext():
            result.append(_to(chunk, devices[i]))
    return tuple(result)


def _check_gather(tensors, dim):
    if not tensors:
        raise RuntimeError("Expected at least one tensor to gather from")
    first = tensors[0]
    ndim = first.dim()
    if ndim == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-ndim}, {ndim - 1}], but got {dim})")
    dim = dim % ndim
    for i, t in enumerate(tensors):
        if t.device.type != "cuda":
            raise RuntimeError("Expected all input tensors to be CUDA tensors, but tensor at "
                               f"index {i} was on {t.device}")
        if t.dim() != ndim:
            raise RuntimeError(f"Expected all input tensors to have the same number of "
                               f"dimensions ({ndim}), but tensor at index {i} has {t.dim()} "
                               f"dimensions, (gathering along dimension {dim})")
        expected = list(first.shape)
        expected[dim] = t.shape[dim]
        if list(t.shape) != expected:
            raise RuntimeError(f"Input tensor at index {i} has invalid shape {list(t.shape)}, "
                               f"but expected {expected}")
    return dim


def gather(tensors, dim=0, destination=None, *, out=None):
    """The CUDA `tensors` concatenated along `dim` on `destination` (an
    index, a device, 'cpu'; None: the current device), or into `out`."""
    tensors = list(tensors)
    dim = _check_gather(tensors, dim)
    if out is not None:
        if destination is not None:
            raise RuntimeError("'destination' must not be specified when 'out' is specified, "
                               f"but got destination={destination}")
        offset = 0
        for t in tensors:
            n = t.shape[dim]
            out.narrow(dim, offset, n).copy_(t.to(out.device))
            offset += n
        return out
    if destination == -1:
        warnings.warn("Using -1 to represent CPU tensor is deprecated. Please use a device "
                      'object or string instead, e.g., "cpu".', FutureWarning, stacklevel=2)
    index = device_index(destination, optional=True, allow_cpu=True)
    return ember.cat([_to(t, index) for t in tensors], dim)


def reduce_add(inputs, destination=None):
    """The element-wise sum of `inputs` (CUDA tensors of one shape) on
    `destination` (None: the current device), which must hold one of them."""
    destination = device_index(destination, optional=True)
    inputs = list(inputs)
    size = inputs[0].shape
    root = None
    for i, t in enumerate(inputs):
        if t.device.type == "cpu":
            raise AssertionError(f"reduce_add expects all inputs to be on GPUs, but input {i} "
                                 "is on CPU")
        if t.get_device() == destination:
            root = i
        if t.shape != size:
            got = "x".join(str(s) for s in t.shape)
            expected = "x".join(str(s) for s in size)
            raise ValueError(f"input {i} has invalid size: got {got}, but expected {expected}")
    if root is None:
        raise RuntimeError("reduce_add expects destination to be on the same GPU with one of "
                           "the tensors")
    if len(inputs) == 1:
        return inputs[0]
    result = inputs[root]
    for i, t in enumerate(inputs):
        if i != root:
            result = result + _to(t, destination)
    return result
