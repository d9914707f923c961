"""The hook-based spectral normalisation (PyTorch's
torch.nn.utils.spectral_norm): ``<name>_orig`` is the parameter,
``<name>_u``/``<name>_v`` the power-iteration buffers, and a forward
pre-hook sets ``module.<name>`` to weight / sigma before every call."""
import ember

from .. import functional as F
from ..modules.layers import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..parameter import Parameter

__all__ = ["spectral_norm", "remove_spectral_norm", "SpectralNorm"]


class SpectralNorm:
    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.name = name
        self.dim = dim
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute([self.dim] + [d for d in range(weight.dim())
                                                  if d != self.dim])
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        W = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with ember.no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(ember.mv(W.mT, u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(ember.mv(W, v), dim=0, eps=self.eps))
                # the graph of this call must not see the next call's updates
                u, v = u.clone(), v.clone()
        sigma = ember.dot(u, ember.mv(W, v))
        return weight / sigma

    def remove(self, module):
        with ember.no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, module.training))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same "
                                   f"parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters.get(name)
        if weight is None:
            raise ValueError(f"Module '{module}' has no parameter with name '{name}'")
        with ember.no_grad():
            W = fn.reshape_weight_to_matrix(weight)
            h, w = W.shape
            u = F.normalize(weight.new_empty((h,)).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty((w,)).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, name)
        module.register_parameter(name + "_orig", weight)
        # a plain attribute until the first call's hook computes it
        object.__setattr__(module, name, weight.detach())
        module.register_buffer(name + "_u", u)
        module.register_buffer(name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Applies spectral normalisation to ``module.<name>`` through a
    forward pre-hook; dim defaults to 1 for transposed convolutions."""
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"spectral_norm of '{name}' not found in {module}")
