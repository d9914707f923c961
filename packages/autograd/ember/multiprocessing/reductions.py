"""Reducers that send ember tensors between processes by sharing storage.

Registered with multiprocessing's ForkingPickler (used by its queues, pipes
and process arguments, under fork and spawn alike), never with plain
pickle: ember.save and pickle.dumps still copy the values.
"""
from multiprocessing.reduction import ForkingPickler

from .._tensor import Tensor, _new_like
from ..backends import get_backend, sharing as _shared


def share_raw_(data):
    if str(data.device) != "cpu":
        raise NotImplementedError(f"share_memory_() of a {data.device} tensor")
    _shared().share_memory_(data)
    return data


def rebuild_tensor(cls, handle, requires_grad):
    data = _shared().rebuild(handle)
    return _new_like(cls, data, requires_grad)


def reduce_tensor(t):
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError("Cowardly refusing to serialize non-leaf tensor which requires_grad, "
                           "since autograd does not support crossing process boundaries.  "
                           "If you just want to transfer the data, call detach() on the tensor "
                           "before serializing (e.g., putting it on the queue).")
    sh = _shared()
    data = t._data
    if not sh.is_shared(data):
        sh.share_memory_(data)
    return (rebuild_tensor, (type(t), sh.handle(data), t.requires_grad))


def reduce_raw(data):
    sh = _shared()
    if not sh.is_shared(data):
        sh.share_memory_(data)
    return (_shared().rebuild, (sh.handle(data),))


_registered = False


def register_tensor_class(cls):
    """Makes multiprocessing share tensors of `cls` (a Tensor subclass, such as
    a Parameter) instead of copying them; its subclasses too."""
    ForkingPickler.register(cls, reduce_tensor)
    for sub in cls.__subclasses__():
        register_tensor_class(sub)


def init_reductions():
    """Registers the reducers (Tensor, its subclasses defined so far, and
    backend tensors) with multiprocessing's ForkingPickler."""
    global _registered
    register_tensor_class(Tensor)
    if _registered:
        return
    from .._tensor import SUBCLASS_HOOKS
    SUBCLASS_HOOKS.append(lambda cls: ForkingPickler.register(cls, reduce_tensor))
    ForkingPickler.register(get_backend("cpu").Tensor, reduce_raw)
    _registered = True
