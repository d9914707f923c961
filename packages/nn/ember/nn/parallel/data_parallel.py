"""DataParallel and data_parallel: one process, several CUDA devices; each
forward splits the batch, runs a replica of the module per device (in
threads) and joins the outputs on one device.  Backward sums the replicas'
gradients into the wrapped module's parameters."""
import itertools

import ember

from ..modules.module import Module
from ._devices import all_device_indices, available_device_type, check_balance, device_index
from .parallel_apply import parallel_apply
from .replicate import replicate
from .scatter_gather import gather, scatter_kwargs

__all__ = ["DataParallel", "data_parallel"]


def _check_placement(module, src):
    for t in itertools.chain(module.parameters(), module.buffers()):
        if t.device != src:
            raise RuntimeError("module must have its parameters and buffers on device "
                               f"{src} (device_ids[0]) but found one of them on device: "
                               f"{t.device}")


class DataParallel(Module):
    """Runs `module` on several CUDA devices, splitting its inputs along
    `dim` (default: every device; output on device_ids[0]).

    The module's parameters and buffers must be on device_ids[0].  With no
    CUDA device the module is called as it is; with one device id the
    module is moved there and the inputs follow.  Each forward replicates
    the module: changes a replica makes to plain attributes are lost, and
    in-place buffer updates (BatchNorm's running statistics) are kept only
    from the replica on device_ids[0], which shares the original buffers."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        device_type = available_device_type()
        if device_type is None:
            self.module = module
            self.device_ids = []
            return
        if device_ids is None:
            device_ids = all_device_indices()
        if output_device is None:
            output_device = device_ids[0]
        self.dim = dim
        self.module = module
        self.device_ids = [device_index(d, optional=True) for d in device_ids]
        self.output_device = device_index(output_device, optional=True)
        self.src_device_obj = ember.device(device_type, self.device_ids[0])
        check_balance(self.device_ids)
        if len(self.device_ids) == 1:
            self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        _check_placement(self.module, self.src_device_obj)
        inputs, module_kwargs = self.scatter(inputs, kwargs, self.device_ids)
        if not inputs:  # a forward without inputs runs once, on device_ids[0]
            inputs, module_kwargs = ((),), ({},)
        if len(self.device_ids) == 1:
            return self.module(*inputs[0], **module_kwargs[0])
        replicas = self.replicate(self.module, self.device_ids[:len(inputs)])
        outputs = self.parallel_apply(replicas, inputs, module_kwargs)
        return self.gather(outputs, self.output_device)

    def replicate(self, module, device_ids):
        return replicate(module, device_ids, not ember.is_grad_enabled())

    def scatter(self, inputs, kwargs, device_ids):
        return scatter_kwargs(inputs, kwargs, device_ids, dim=self.dim)

    def parallel_apply(self, replicas, inputs, kwargs):
        return parallel_apply(replicas, inputs, kwargs, self.device_ids[:len(replicas)])

    def gather(self, outputs, output_device):
        return gather(outputs, output_device, dim=self.dim)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """module(*inputs, **module_kwargs) evaluated as DataParallel does, for
    one call (the module must be on device_ids[0]; a CUDA device is needed)."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    device_type = available_device_type()
    if device_type is None:
        raise RuntimeError("device type could not be determined")
    if device_ids is None:
        device_ids = all_device_indices()
    if output_device is None:
        output_device = device_ids[0]
    device_ids = [device_index(d, optional=True) for d in device_ids]
    output_device = device_index(output_device, optional=True)
    _check_placement(module, ember.device(device_type, device_ids[0]))
    inputs, module_kwargs = scatter_kwargs(inputs, module_kwargs, device_ids, dim)
    if not inputs:
        inputs, module_kwargs = ((),), ({},)
    if len(device_ids) == 1:
        return module(*inputs[0], **module_kwargs[0])
    used = device_ids[:len(inputs)]
    replicas = replicate(module, used)
    outputs = parallel_apply(replicas, inputs, module_kwargs, used)
    return gather(outputs, output_device, dim)
