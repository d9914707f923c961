"""Parametrizations: a parameter or buffer of a module computed on access
from unconstrained originals (PyTorch's torch.nn.utils.parametrize).

Registering one moves the tensor to ``module.parametrizations[name]`` (a
ParametrizationList holding ``original``, or ``original0``,
``original1``, ... when the first parametrization's right_inverse gives
several) and gives the module a class of its own,
``Parametrized<Class>``, with a property for the name: reading it runs
the parametrizations in order, assigning to it runs their right_inverse
in reverse order and stores the result in the originals."""
import collections.abc
import contextlib

import ember

from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["register_parametrization", "remove_parametrizations", "is_parametrized",
           "cached", "type_before_parametrizations", "ParametrizationList"]

_cache_depth = 0
_cache = {}


@contextlib.contextmanager
def cached():
    """Within this context each parametrized tensor is computed once, at
    its first access, and reused (e.g. a weight read at every step of an
    RNN)."""
    global _cache_depth
    _cache_depth += 1
    try:
        yield
    finally:
        _cache_depth -= 1
        if not _cache_depth:
            _cache.clear()


def _register(module, name, value):
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _set_value(original, value):
    """Gives `original` the value `value` in place, keeping its identity
    (optimizers hold it): a copy, or new contents for a new shape."""
    with ember.no_grad():
        if tuple(original.shape) == tuple(value.shape) and original.dtype == value.dtype:
            original.copy_(value)
        else:
            original.data = value.detach().clone()


def _check_result(what, Z, dtype, shape):
    if not isinstance(Z, ember.Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(Z).__name__}.")
    if Z.dtype != dtype:
        raise ValueError(f"{what} may not change the dtype of the tensor, unless `unsafe` flag "
                         f"is enabled.\nunparametrized dtype: {dtype}\n"
                         f"parametrized dtype: {Z.dtype}")
    if tuple(Z.shape) != tuple(shape):
        raise ValueError(f"{what} may not change the shape of the tensor, unless `unsafe` flag "
                         f"is enabled.\nunparametrized shape: {shape}\n"
                         f"parametrized shape: {Z.shape}")


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor and its originals."""

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = original.shape, original.dtype
        new = original
        with ember.no_grad():
            for m in reversed(list(self)):
                if hasattr(m, "right_inverse"):
                    try:
                        new = m.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (ember.Tensor, collections.abc.Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                             f"(list, tuple...). Got {type(new).__name__}")
        self.is_tensor = isinstance(new, ember.Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the "
                                 f"dtype.\noriginal.dtype: {original.dtype}\n"
                                 f"right_inverse(original).dtype: {new.dtype}")
            if new is not original:
                _set_value(original, new)
            _register(self, "original", original)
        else:
            for i, t in enumerate(new):
                if not isinstance(t, ember.Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of "
                                     f"tensors (list, tuple...). Got element {i} of the "
                                     f"sequence with type {type(t).__name__}.")
                t = t.detach().clone()
                if isinstance(original, Parameter):
                    t = Parameter(t, requires_grad=original.requires_grad)
                _register(self, f"original{i}", t)
        if not unsafe:
            _check_result("Registering a parametrization", self(), dtype, shape)

    def right_inverse(self, value):
        """Stores the originals that give `value`."""
        with ember.no_grad():
            for m in reversed(list(self)):
                if not hasattr(m, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(m).__name__} does not implement "
                                       "right_inverse.")
                value = m.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, ember.Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got "
                                     f"{type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype "
                                     f"{value.dtype} while `original` has dtype "
                                     f"{self.original.dtype}")
                _set_value(self.original, value)
                return
            if not isinstance(value, collections.abc.Sequence):
                raise ValueError(f"'right_inverse' must return a sequence of tensors. Got "
                                 f"{type(value).__name__}.")
            if len(value) != self.ntensors:
                raise ValueError(f"'right_inverse' must return a sequence of tensors of length "
                                 f"{self.ntensors}. Got a sequence of length {len(value)}.")
            for i, t in enumerate(value):
                original = getattr(self, f"original{i}")
                if not isinstance(t, ember.Tensor):
                    raise ValueError(f"`right_inverse` must return a sequence of tensors. Got "
                                     f"element {i} of type {type(t).__name__}")
                if original.dtype != t.dtype:
                    raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype "
                                     f"{t.dtype} while `original{i}` has dtype "
                                     f"{original.dtype}")
                _set_value(original, t)

    def forward(self):
        mods = list(self)
        if self.is_tensor:
            x = mods[0](self.original)
        else:
            x = mods[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for m in mods[1:]:
            x = m(x)
        return x


def _parametrized_getstate(self):
    raise RuntimeError("Serialization of parametrized modules is only supported through "
                       "state_dict(): save module.state_dict() and load it into a module "
                       "parametrized the same way.")


def _parametrized_deepcopy(self, memo):
    import copy
    if id(self) in memo:
        return memo[id(self)]
    replica = self.__new__(type(self))
    memo[id(self)] = replica
    replica.__dict__.update(copy.deepcopy(self.__dict__, memo))
    return replica


def _give_own_class(module):
    cls = type(module)
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,),
                            {"__getstate__": _parametrized_getstate,
                             "__deepcopy__": _parametrized_deepcopy})


def _add_property(module, name):
    def get(self):
        plist = self.parametrizations[name]
        if not _cache_depth:
            return plist()
        key = (id(self), name)
        if key not in _cache:
            _cache[key] = plist()
        return _cache[key]

    def set_(self, value):
        self.parametrizations[name].right_inverse(value)
    setattr(type(module), name, property(get, set_))


def is_parametrized(module, tensor_name=None):
    plists = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(plists, ModuleDict):
        return False
    return len(plists) > 0 if tensor_name is None else tensor_name in plists


def type_before_parametrizations(module):
    """The module's class before parametrizations gave it its own."""
    return type(module).__bases__[0] if is_parametrized(module) else type(module)


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Makes ``module.<tensor_name>`` the result of `parametrization` on
    unconstrained originals (see the module docstring); registering a
    second one on the same name chains it after the first."""
    if not isinstance(parametrization, Module):
        raise TypeError(f"parametrization must be an ember.nn.Module, not "
                        f"{type(parametrization).__name__}")
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            Y = getattr(module, tensor_name)
            X = parametrization(Y)
            _check_result("Registering a parametrization", X, Y.dtype, Y.shape)
            if hasattr(parametrization, "right_inverse"):
                try:
                    Z = parametrization.right_inverse(X)
                except NotImplementedError:
                    pass
                else:
                    if not isinstance(Z, ember.Tensor):
                        raise ValueError(f"parametrization.right_inverse must return a tensor. "
                                         f"Got: {type(Z).__name__}")
                    if Z.dtype != Y.dtype or tuple(Z.shape) != tuple(Y.shape):
                        raise ValueError("The tensor returned by parametrization.right_inverse "
                                         "must have the same dtype and shape as module."
                                         f"{tensor_name}, unless the `unsafe` flag is enabled."
                                         f"\nmodule.{tensor_name}: {Y.dtype} {tuple(Y.shape)}"
                                         f"\nreturned: {Z.dtype} {tuple(Z.shape)}")
        plist = module.parametrizations[tensor_name]
        plist.append(parametrization)
        plist.unsafe |= unsafe
    elif tensor_name in module._parameters or tensor_name in module._buffers:
        original = getattr(module, tensor_name)
        if original is None:
            raise ValueError(f"Module '{module}' has '{tensor_name}' set to None: there is "
                             "nothing to parametrize")
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _give_own_class(module)
            module.parametrizations = ModuleDict()
        _add_property(module, tensor_name)
        module.parametrizations[tensor_name] = plist
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    return module


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Turns ``module.<tensor_name>`` back into a plain parameter or buffer:
    its current value (leave_parametrized) or its original."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with ember.no_grad():
                value = getattr(module, tensor_name)
            _set_value(original, value)
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                             "that is parametrized in terms of a sequence of tensors.")
        with ember.no_grad():
            value = getattr(module, tensor_name).detach().clone()
        first = plist.original0
        original = Parameter(value, requires_grad=first.requires_grad) \
            if isinstance(first, Parameter) else value
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    _register(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type(module).__bases__[0]
    return module
