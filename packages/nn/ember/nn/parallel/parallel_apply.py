"""parallel_apply: each replica called on its inputs in a thread of its
own, with its device current, the caller's current stream of that device
and the caller's grad mode and autocast state (all per thread)."""
import contextlib
import sys
import threading

import ember
# a replica's exception travels to the caller as a DataLoader worker's does
from ember.utils.data._worker import ExceptionWrapper

from ._devices import device_index

__all__ = ["get_a_var", "parallel_apply"]


def get_a_var(obj):
    """The first tensor found in `obj` (tuples, lists and dicts walked), or None."""
    if isinstance(obj, ember.Tensor):
        return obj
    if isinstance(obj, dict):
        obj = list(obj.items())
    if isinstance(obj, (list, tuple)):
        for item in obj:
            found = get_a_var(item)
            if found is not None:
                return found
    return None


class _NoDevice:
    def __init__(self, i):
        self.i = i

    def reraise(self):
        raise RuntimeError(f"in replica {self.i}, no device was provided and no tensor input "
                           "was found; device cannot be resolved")


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None):
    """[modules[i](*inputs[i], **kwargs_tup[i])], each call in its own
    thread with devices[i] current (None: the device of a tensor in its
    inputs); an input that is not a tuple or list is the only argument.
    An exception in any replica is raised here after every thread ended."""
    n = len(modules)
    if len(inputs) != n:
        raise AssertionError(f"The number of modules {n} is not equal to the number of "
                             f"inputs {len(inputs)}")
    if kwargs_tup is None:
        kwargs_tup = [{}] * n
    elif len(kwargs_tup) != n:
        raise AssertionError(f"The number of modules {n} is not equal to the number of "
                             f"kwargs_tup {len(kwargs_tup)}")
    if devices is None:
        devices = [None] * n
    elif len(devices) != n:
        raise AssertionError(f"The number of modules {n} is not equal to the number of "
                             f"devices {len(devices)}")
    devices = [None if d is None else device_index(d, optional=True) for d in devices]
    streams = [None if d is None else ember.cuda.current_stream(d) for d in devices]
    grad_enabled = ember.is_grad_enabled()
    inference = ember.is_inference_mode_enabled()
    # autocast is per thread: the replicas' threads run under the caller's
    autocast = dict(device_type="cuda", enabled=ember.is_autocast_enabled("cuda"),
                    dtype=ember.get_autocast_dtype("cuda"),
                    cache_enabled=ember.is_autocast_cache_enabled())
    missing = object()  # a replica may return None
    results = [missing] * n

    def work(i, module, args, kwargs, device, stream):
        if device is None:
            t = get_a_var(args)
            if t is None:
                results[i] = _NoDevice(i)
                return
            device = t.get_device()
        try:
            if stream is None:
                stream = ember.cuda.current_stream(device)
            with contextlib.ExitStack() as stack:
                stack.enter_context(ember.set_grad_enabled(grad_enabled))
                stack.enter_context(ember.inference_mode(inference))
                stack.enter_context(ember.autocast(**autocast))
                stack.enter_context(ember.cuda.device(device))
                stack.enter_context(ember.cuda.stream(stream))
                if not isinstance(args, (list, tuple)):
                    args = (args,)
                results[i] = module(*args, **kwargs)
        except Exception:
            results[i] = ExceptionWrapper(sys.exc_info(), f"in replica {i} on device {device}")

    jobs = list(zip(range(n), modules, inputs, kwargs_tup, devices, streams))
    if n > 1:
        threads = [threading.Thread(target=work, args=job) for job in jobs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    elif jobs:
        work(*jobs[0])
    for i, r in enumerate(results):
        if isinstance(r, (ExceptionWrapper, _NoDevice)):
            r.reraise()
        if r is missing:  # its thread ended by a BaseException (SystemExit, ...)
            raise RuntimeError(f"replica {i} on device {devices[i]} returned no result")
    return results

