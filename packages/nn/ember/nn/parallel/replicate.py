"""replicate: copies of a module, one per device, whose parameters are
autograd-recorded copies of the original's, so that backward through any
replica accumulates into the original parameters (summed over replicas)."""
import ember
from ember.cuda import comm

from ._devices import device_index

__all__ = ["replicate"]


def _copies(tensors, devices, differentiable):
    """For each tensor, one copy per device.  Differentiable: copies
    recorded by autograd, and on the tensor's own device a view of it (so
    every replica reads a non-leaf tensor whose gradient reaches the
    original); otherwise detached copies, the tensor itself on its device
    (in-place updates there, e.g. BatchNorm's running stats, are kept)."""
    result = []
    for t in tensors:
        if differentiable:
            per_device = [c.view_as(c) if c is t else c for c in comm.broadcast(t, devices)]
        else:
            with ember.no_grad():
                per_device = list(comm.broadcast(t, devices))
        result.append(per_device)
    return result


def replicate(network, devices, detach=False):
    """A list of copies of `network`, one per device of `devices` (its
    parameters and buffers must be on one of them).  Each replica shares
    the original's plain attributes and hooks; its parameters are copies
    that autograd records (unless `detach`: then plain copies), its buffers
    plain copies, the ones on the original's device being the originals."""
    if not devices:
        return []
    devices = [device_index(d, optional=True) for d in devices]
    params = list(network.parameters())
    buffers = list(network.buffers())
    grad = not detach and ember.is_grad_enabled()
    param_copies = _copies(params, devices, grad)
    # buffers that require grad are recorded as parameters are, the others copied
    buffer_copies = [_copies([b], devices, grad and b.requires_grad)[0] for b in buffers]
    copy_of = {id(t): c for t, c in zip(params + buffers, param_copies + buffer_copies)}

    modules = list(network.modules())
    replicas = [[m._replicate_for_data_parallel() for m in modules] for _ in devices]
    position = {id(m): i for i, m in enumerate(modules)}
    for i, module in enumerate(modules):
        for j, per_device in enumerate(replicas):
            replica = per_device[i]
            for key, child in module._modules.items():
                replica._modules[key] = None if child is None else per_device[position[id(child)]]
            # written to the tables directly: Module.__getattr__ reads them,
            # and register_parameter would refuse a non-leaf tensor
            for key, p in module._parameters.items():
                replica._parameters[key] = None if p is None else copy_of[id(p)][j]
            for key, b in module._buffers.items():
                replica._buffers[key] = None if b is None else copy_of[id(b)][j]
    return [per_device[0] for per_device in replicas]
