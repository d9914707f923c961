"""The ember front's per-op overhead, against PyTorch:

- tiny add with autograd front: `a + b` on 1-element float32 `ember.Tensor`s
  (no grad required): what every op costs above libTH.
- tiny forward+backward: `(a * b).sum().backward()` on 1-element tensors that
  require grad: recording the tape and running the engine.

NumPy has no form of these.  "ember" here is the front (`import ember`),
not ember.th.
"""
from __future__ import annotations

from timing import Stmt

from . import Case, Unsupported

FAMILY = "autograd"


def _front(lib, mod):
    if lib == "numpy":
        raise Unsupported("NumPy has no autograd")
    if lib == "ember":
        try:
            import ember
        except ImportError as e:  # ember.th alone is installed
            raise Unsupported(f"the ember front is not installed ({e})")
        if not hasattr(ember, "Tensor"):
            raise Unsupported("the ember front is not installed")
        ember.set_num_threads(mod.get_num_threads())
        return ember
    return mod


def _tiny_add(lib, mod):
    m = _front(lib, mod)
    a = m.tensor([1.5], dtype=m.float32)
    b = m.tensor([2.25], dtype=m.float32)
    return Stmt("a + b", {"a": a, "b": b}, result="a + b")


def _tiny_fwd_bwd(lib, mod):
    m = _front(lib, mod)
    a = m.tensor([1.5], dtype=m.float32, requires_grad=True)
    b = m.tensor([2.25], dtype=m.float32, requires_grad=True)
    # grads accumulate over the timed calls; the result check reads the last
    # forward value, the same for every library
    return Stmt("(a * b).sum().backward()", {"a": a, "b": b}, result="(a * b).detach()")


def cases(scale: str = "full") -> list[Case]:
    return [
        Case(FAMILY, "front tiny add (1 elem, a + b)", "µs/op", _tiny_add, rtol=1e-6),
        Case(FAMILY, "front (a * b).sum().backward()", "µs/op", _tiny_fwd_bwd, rtol=1e-6),
    ]
