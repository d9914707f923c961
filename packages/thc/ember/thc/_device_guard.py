"""Devices: which one an argument names, a block with another one current,
and the device guard.  Work runs on the current device, whose kernels
cannot reach memory of another device; so, as in PyTorch, on a machine with
several devices every tensor method and namespace function runs with its
first CUDA tensor argument's device made current (and restored after), and
its kernels, outputs and temporaries go there.  With one device nothing is
wrapped and nothing is paid."""
import contextlib
import functools
import inspect

from ._lib import check, ffi, lib

# methods that run no device work (or must stay plain for Python itself)
_PLAIN = {"__init__", "__new__", "__del__", "__hash__", "__getattribute__", "__setattr__",
          "__delattr__", "__init_subclass__", "__subclasshook__", "__dir__", "__sizeof__",
          "__class_getitem__", "__dlpack_device__", "data_ptr", "dim", "size", "stride",
          "numel", "element_size", "storage_offset", "is_contiguous", "_version"}

_several = None


def device_index(device):
    """The index a device argument names (an int, 'cuda:1', an ember.device),
    or None for none named (None, 'cuda')."""
    if device is None or isinstance(device, int):
        return device
    if isinstance(device, str):   # (str has an `index` method)
        return int(device.split(":")[1]) if ":" in device else None
    return device.index   # an ember.device


@contextlib.contextmanager
def on_device(index):
    """Device `index` current inside the block, the previous one after
    (None: no change)."""
    if index is None:
        yield
        return
    current = ffi.new("int *")
    check(lib.thc_get_device(current))
    if current[0] == index:
        yield
        return
    check(lib.thc_set_device(index))
    try:
        yield
    finally:
        lib.thc_set_device(current[0])


def several_devices():
    global _several
    if _several is None:
        count = ffi.new("int *")
        lib.thc_device_count(count)
        _several = count[0] > 1
    return _several


def guarded(fn, tensor_type):
    """fn running with the device of its first `tensor_type` argument
    current; fn itself on a machine with one device."""
    if not several_devices():
        return fn

    def first_device(args):
        for a in args:
            if a.__class__ is tensor_type:
                return a._p.storage.device
            if a.__class__ in (list, tuple):   # cat([...]), stack((...))
                d = first_device(a)
                if d is not None:
                    return d
        return None

    @functools.wraps(fn)
    def on_its_device(*args, **kwargs):
        device = first_device(args)
        if device is None or device < 0:
            return fn(*args, **kwargs)
        with on_device(device):
            return fn(*args, **kwargs)

    on_its_device.__wrapped_for_devices__ = True
    return on_its_device


def guard_all(tensor_type, namespace):
    """Wraps tensor_type's methods and the namespace's functions (in place)."""
    if not several_devices():
        return
    for name, attr in list(vars(tensor_type).items()):
        if inspect.isfunction(attr) and name not in _PLAIN and \
                not getattr(attr, "__wrapped_for_devices__", False):
            setattr(tensor_type, name, guarded(attr, tensor_type))
    for name, fn in list(namespace.items()):
        if inspect.isfunction(fn) and not getattr(fn, "__wrapped_for_devices__", False):
            namespace[name] = guarded(fn, tensor_type)
