"""Autograd around a kernel package's raw kernels, written once for every
package (ember-thnn on the CPU, ember-thcunn on the GPU).

A kernel spec (see ember.nn.kernels) computes on a backend's raw tensors
and knows nothing of autograd.  ``wrap`` turns it into a function with the
composed function's signature that records one node per call:

- first-order gradients come from the spec's own backward kernels;
- under ``create_graph`` (double backward) the node recomputes the
  composed function of ember ops from its saved inputs and differentiates
  that, so the gradients record a graph of their own.  Slower, but exact,
  and it keeps every kernel twice-differentiable without second-order C.
"""
import ember
from ember._tensor import Tensor, _make
from ember.autograd import grad_mode
from ember.autograd.graph import NO_EDGE, edge, output
from ember.autograd.nodes import SavingNode, _new_node, node_class

from .kernels import DECLARED

_mode = grad_mode.state


class KernelNode(SavingNode):
    """The node of one kernel call: saved inputs (version-checked), the
    spec's context and the call's other arguments."""

    __slots__ = ("_ctx", "_args")
    spec = None       # set per kernel by node_class
    composed = None

    def _run(self, grads):
        g = grads[0]
        inputs = self._values()  # raises once freed (after a backward without retain_graph)
        if g is None:
            return (None,) * len(inputs)
        needs = tuple(e[0] is not None for e in self.next_functions)
        if _mode.enabled:  # create_graph: differentiate the composed form
            return _composed_grads(self.composed, inputs, self._args, g, needs)
        raw = tuple(None if t is None else t._data for t in inputs)
        result = self.spec.backward(self._ctx, g._data, raw, needs)
        return tuple(None if r is None or not need else _make(r)
                     for r, need in zip(result, needs))

    def _release(self):
        SavingNode._release(self)
        self._ctx = None


def _composed_grads(composed, inputs, args, g, needs):
    """args: the call's arguments with the differentiable ones (`inputs`,
    at the positions args[0] names) left out."""
    wanted = [t for t, need in zip(inputs, needs) if need]
    positions, full = args[0], list(args[1:])
    for i, t in zip(positions, inputs):
        full[i] = t
    with ember.enable_grad():
        out = composed(*full)
    if isinstance(out, tuple):
        out = out[0]
    found = iter(ember.autograd.grad(out, wanted, g, create_graph=True, allow_unused=True))
    return tuple(next(found) if need else None for need in needs)


def _raw(a):
    return a._data if isinstance(a, Tensor) else a


def wrap(name, spec, composed, tensor_type, fallback=None):
    """The autograd-recording function of kernel `name`.  Tensors of another
    backend, and the cases the spec declines by returning NotImplemented, go
    to `fallback` (another kernel package's function, default `composed`);
    double backward differentiates `composed`."""
    fallback = composed if fallback is None else fallback
    n = spec.differentiable  # a count (the leading arguments) or positions
    positions = tuple(range(n)) if isinstance(n, int) else tuple(n)
    decl = DECLARED[name]  # its node's name and how a call is kept for double backward
    cls = node_class(KernelNode, name, node_name=decl.node, spec=spec, composed=composed)
    forward = spec.forward
    recompute_args = decl.recompute_args

    def call(*args):
        if args[0]._data.__class__ is not tensor_type:
            return fallback(*args)
        result = forward(*[_raw(a) for a in args])
        if result is NotImplemented:
            return fallback(*args)
        outs, ctx = result
        tensors = tuple([args[i] for i in positions])
        if not (_mode.enabled and any(t is not None and t._requires_grad for t in tensors)):
            if outs.__class__ is tuple:
                return tuple(_make(o) for o in outs)
            return _make(outs)
        node = _new_node(cls, tuple(NO_EDGE if t is None else edge(t) for t in tensors))
        node._save(tensors, None)
        node._ctx = ctx
        kept = args if recompute_args is None else recompute_args(args)
        # the differentiable tensors are saved (version-checked) above, not here
        node._args = (positions,) + tuple(None if i in positions else a
                                          for i, a in enumerate(kept))
        if outs.__class__ is tuple:  # only the first output is differentiable
            return (output(outs[0], node),) + tuple(_make(o) for o in outs[1:])
        return output(outs, node)

    call.__name__ = name
    call.__doc__ = f"kernel {name!r} of {getattr(spec, '__module__', '?')} with autograd"
    call.spec = spec
    return call
