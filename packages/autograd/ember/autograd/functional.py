"""Derivatives of whole functions: vjp, jvp, jacobian, hessian, hvp, vhp
(``torch.autograd.functional``), built on autograd.grad.

jvp uses the double-vjp trick: J v is the gradient, with respect to u, of
the vector-Jacobian product u^T J, which is linear in u.
"""
from .._creation import zeros_like
from .engine import grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _as_tuple(x):
    return (tuple(x), True) if isinstance(x, (tuple, list)) else ((x,), False)


def _prepare(inputs, create_graph):
    """Inputs as fresh leaves (or kept in the graph with create_graph)."""
    return tuple(x if create_graph and x.requires_grad else x.detach().requires_grad_()
                 for x in inputs)


def _grads(outputs, inputs, grad_outputs, create_graph, strict):
    result = grad(outputs, inputs, grad_outputs, retain_graph=True,
                  create_graph=create_graph, allow_unused=True)
    if strict and any(g is None for g in result):
        raise RuntimeError("The output of the user-provided function is independent of "
                           "one of its inputs; this is not allowed in strict mode.")
    return tuple(zeros_like(x) if g is None else g for g, x in zip(result, inputs))


def _finish(x, create_graph):
    return x if create_graph else x.detach()


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J)."""
    inputs, tupled = _as_tuple(inputs)
    inputs = _prepare(inputs, create_graph)
    out = func(*inputs)
    outs, out_tupled = _as_tuple(out)
    vs = _as_tuple(v)[0] if v is not None else (None,) * len(outs)
    g = _grads(outs, inputs, vs, create_graph, strict)
    out = tuple(_finish(o, create_graph) for o in outs)
    return (out if out_tupled else out[0]), (g if tupled else g[0])


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v)."""
    inputs, tupled = _as_tuple(inputs)
    inputs = _prepare(inputs, create_graph)
    out = func(*inputs)
    outs, out_tupled = _as_tuple(out)
    vs = _as_tuple(v)[0] if v is not None else tuple(zeros_like(x) + 1 for x in inputs)
    us = tuple(zeros_like(o).requires_grad_() for o in outs)
    g = grad(outs, inputs, us, create_graph=True, allow_unused=True)
    pairs = [(gi, vi) for gi, vi in zip(g, vs) if gi is not None and gi.requires_grad]
    if pairs:
        jv = grad([p[0] for p in pairs], us, [p[1] for p in pairs],
                  create_graph=create_graph, allow_unused=True)
    else:
        jv = (None,) * len(us)
    jv = tuple(zeros_like(o) if j is None else _finish(j, create_graph)
               for j, o in zip(jv, outs))
    outs = tuple(_finish(o, create_graph) for o in outs)
    return (outs if out_tupled else outs[0]), (jv if out_tupled else jv[0])


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """d func / d inputs: for output i and input j, a tensor of shape
    output_i.shape + input_j.shape (nested tuples as PyTorch)."""
    inputs, tupled = _as_tuple(inputs)
    inputs = _prepare(inputs, create_graph)
    outs, out_tupled = _as_tuple(func(*inputs))
    from .._creation import zeros
    from .._ops.shape import stack
    jac = []
    for o in outs:
        flat = o.reshape(-1)
        rows = [[] for _ in inputs]
        for k in range(flat.numel()):
            seed = zeros(flat.numel(), dtype=o.dtype)
            seed[k] = 1.0
            gs = _grads((flat,), inputs, (seed,), create_graph, strict)
            for j, g in enumerate(gs):
                rows[j].append(g)
        per_input = tuple(
            _finish(stack(r).reshape(tuple(o.shape) + tuple(x.shape)) if r else
                    zeros(tuple(o.shape) + tuple(x.shape), dtype=o.dtype), create_graph)
            for r, x in zip(rows, inputs))
        jac.append(per_input if tupled else per_input[0])
    return tuple(jac) if out_tupled else jac[0]


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """Second derivatives of a scalar function."""
    inputs_t, tupled = _as_tuple(inputs)

    def gradient(*xs):
        out = func(*xs)
        return _grads((out,), xs, (None,), True, strict)

    h = jacobian(gradient, inputs_t, create_graph=create_graph, strict=strict)
    return h if tupled else h[0][0]


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a scalar function."""
    inputs, tupled = _as_tuple(inputs)
    inputs = _prepare(inputs, create_graph)
    out = func(*inputs)
    g = _grads((out,), inputs, (None,), True, strict)
    vs = _as_tuple(v)[0]
    h = _grads(g, inputs, vs, create_graph, strict)
    h = tuple(_finish(x, create_graph) for x in h)
    return _finish(out, create_graph), (h if tupled else h[0])


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v): equal to vhp, the Hessian being symmetric."""
    return vhp(func, inputs, v, create_graph, strict)
