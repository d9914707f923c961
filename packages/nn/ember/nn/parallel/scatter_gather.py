"""scatter: inputs split into one piece per device; gather: the replicas'
outputs joined on one device.  Tensors are split or concatenated along
`dim`, tuples, lists, dicts and namedtuples are walked, other objects are
passed to every replica as they are (shared, not copied)."""
import warnings

import ember
from ember.cuda import comm

from ._devices import device_index

__all__ = ["scatter", "scatter_kwargs", "gather"]


def _is_namedtuple(obj):
    return isinstance(obj, tuple) and hasattr(obj, "_asdict") and hasattr(obj, "_fields")


def scatter(inputs, target_gpus, dim=0):
    """A list with one piece of `inputs` per device of `target_gpus`, in
    order: tensors in chunks as ``Tensor.chunk`` makes them, so a short
    batch gives fewer pieces than devices (the containers holding it too);
    other objects are repeated."""
    def scatter_map(obj):
        if isinstance(obj, ember.Tensor):
            return list(comm.scatter(obj, target_gpus, None, dim))
        # zip stops at the shortest: a container has as many pieces as its
        # fewest-chunked tensor
        if _is_namedtuple(obj):
            return [type(obj)(*args) for args in zip(*map(scatter_map, obj))]
        if isinstance(obj, tuple) and obj:
            return list(zip(*map(scatter_map, obj)))
        if isinstance(obj, list) and obj:
            return [list(piece) for piece in zip(*map(scatter_map, obj))]
        if isinstance(obj, dict) and obj:
            return [type(obj)(piece) for piece in zip(*map(scatter_map, obj.items()))]
        return [obj for _ in target_gpus]
    return scatter_map(inputs)


def scatter_kwargs(inputs, kwargs, target_gpus, dim=0):
    """Positional and keyword inputs scattered: (tuple of argument tuples,
    tuple of kwargs dicts), as many of each as replicas to run."""
    args = scatter(inputs, target_gpus, dim) if inputs else []
    kws = scatter(kwargs, target_gpus, dim) if kwargs else []
    if args and kws:
        # both present: as many replicas as the shorter allows (PyTorch pads
        # the shorter with empty arguments, and that replica then fails)
        n = min(len(args), len(kws))
        args, kws = args[:n], kws[:n]
    elif kws:
        args = [() for _ in kws]
    else:
        kws = [{} for _ in args]
    return tuple(args), tuple(kws)


def _gather_tensors(outputs, target_device, dim):
    for i, t in enumerate(outputs):
        if not isinstance(t, ember.Tensor):
            raise TypeError(f"gather: replica 0 returned a tensor where replica {i} returned "
                            f"{type(t).__name__}; the replicas' outputs must have the same "
                            "structure")
    if any(t.device.type == "cpu" for t in outputs):
        raise AssertionError("Gather function not implemented for CPU tensors")
    if target_device != "cpu":
        target_device = device_index(target_device, optional=True)
    if dim == 0 and all(t.dim() == 0 for t in outputs):
        outputs = [t.view(1) for t in outputs]
        warnings.warn("Was asked to gather along dimension 0, but all input tensors were "
                      "scalars; will instead unsqueeze and return a vector.", stacklevel=2)
    return comm.gather(outputs, dim, target_device)


def gather(outputs, target_device, dim=0):
    """One output from the replicas' `outputs` (a list, one per replica):
    tensors concatenated along `dim` on `target_device` (an index, a device
    or 'cpu'; 0-d tensors become a vector, with a warning), containers
    rebuilt with their type, None kept.  Containers must match: lengths
    (ValueError from zip), dict sizes ("All dicts must have the same number
    of keys")."""
    def gather_map(outs):
        out = outs[0]
        if isinstance(out, ember.Tensor):
            return _gather_tensors(outs, target_device, dim)
        if out is None:
            return None
        if isinstance(out, dict):
            if not all(len(out) == len(d) for d in outs):
                raise ValueError("All dicts must have the same number of keys")
            return type(out)((k, gather_map([d[k] for d in outs])) for k in out)
        if _is_namedtuple(out):
            return type(out)._make(map(gather_map, zip(*outs, strict=True)))
        if isinstance(out, (list, tuple)):
            return type(out)(map(gather_map, zip(*outs, strict=True)))
        raise TypeError(f"gather: cannot join outputs of type {type(out).__name__}; a replica "
                        "may return tensors, None, and tuples, lists and dicts of them")
    return gather_map(outputs)
