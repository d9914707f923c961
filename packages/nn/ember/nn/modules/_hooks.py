"""Full backward hooks: the module's tensor inputs and outputs pass through
identity autograd Functions, whose backward sees grad_output (and runs the
backward pre-hooks) and grad_input (and runs the backward hooks), as
PyTorch's torch.utils.hooks.BackwardHook."""
import ember
from ember.autograd import Function


def _tensors(values):
    return [i for i, v in enumerate(values) if isinstance(v, ember.Tensor)
            and v.requires_grad]


class _Identity(Function):
    """y_i = x_i; backward hands its gradients to a callback that may
    replace them."""

    @staticmethod
    def forward(ctx, callback, *xs):
        ctx.callback = callback
        return tuple(x.view_as(x) for x in xs)

    @staticmethod
    def backward(ctx, *grads):
        new = ctx.callback(grads)
        return (None,) + tuple(grads if new is None else new)


class BackwardHook:
    """One forward call's hook state."""

    def __init__(self, module, hooks, pre_hooks):
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.grad_output = None
        self.n_inputs = 0

    def _apply(self, values, callback):
        values = list(values)
        idx = _tensors(values)
        if not idx or not ember.is_grad_enabled():
            return tuple(values), False
        outs = _Identity.apply(callback, *(values[i] for i in idx))
        if isinstance(outs, ember.Tensor):
            outs = (outs,)
        for i, o in zip(idx, outs):
            values[i] = o
        return tuple(values), True

    def setup_input_hook(self, args):
        self.n_inputs = len(args)
        args, self.wrapped_inputs = self._apply(args, self._on_grad_input)
        return args

    def setup_output_hook(self, output):
        single = isinstance(output, ember.Tensor)
        values, _ = self._apply((output,) if single else output, self._on_grad_output)
        return values[0] if single else type(output)(values) if isinstance(output, tuple) \
            else values

    def _on_grad_output(self, grads):
        for hook in list(self.pre_hooks.values()):
            res = hook(self.module, grads)
            if res is not None:
                grads = tuple(res) if isinstance(res, (tuple, list)) else (res,)
        self.grad_output = grads
        if not self.wrapped_inputs:  # no input needs a gradient: hooks see None
            self._run_hooks((None,) * max(self.n_inputs, 1))
        return grads

    def _on_grad_input(self, grads):
        return self._run_hooks(grads)

    def _run_hooks(self, grads):
        for hook in list(self.hooks.values()):
            res = hook(self.module, grads, self.grad_output)
            if res is not None:
                res = tuple(res) if isinstance(res, (tuple, list)) else (res,)
                if len(res) != len(grads):
                    raise RuntimeError(f"Backward hook returned an invalid number of grad_input,"
                                       f" got {len(res)}, but expected {len(grads)}")
                grads = res
        return grads
