"""The backward engine: runs the recorded graph in reverse.

Iterative throughout (no recursion, so a chain of any length works):

1. discover the nodes reachable from the outputs and count, for each, the
   edges that lead into it;
2. when only some inputs' gradients are wanted (``autograd.grad`` or
   ``backward(inputs=...)``), keep only the nodes on a path to them;
3. run nodes whose count dropped to zero, summing the gradients that
   arrive for each of a node's outputs in a buffer before it runs.

Gradients are computed in grad mode ``create_graph``, so with
create_graph=True the formulas record a graph of their own.
"""
from .. import _tensor
from .._creation import zeros_like
from .._device import namespace
from .._tensor import Tensor
from ..amp.autocast_mode import state as _autocast
from . import anomaly_mode, grad_mode
from .graph import AccumulateGrad, edge, run_post_hooks, run_pre_hooks

_anomaly = anomaly_mode.state


def _tuple(x):
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _root_grads(outputs, grads, create_graph):
    if grads is None:
        grads = (None,) * len(outputs)
    else:
        grads = _tuple(grads)
        if len(grads) != len(outputs):
            raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    result = []
    for i, (t, g) in enumerate(zip(outputs, grads)):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected a Tensor as output {i}, got {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               f"have a grad_fn")
        if g is None:
            d = t._data
            if d.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if d.dtype.is_complex:
                raise RuntimeError("grad can be implicitly created only for real scalar "
                                   "outputs")
            g = _tensor._make(namespace(d.device).ones(d.shape, dtype=d.dtype))
        elif not isinstance(g, Tensor):
            raise TypeError(f"gradient for output {i} must be a Tensor or None, got "
                            f"{type(g).__name__}")
        elif g.shape != t.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                               f"{g.shape} and output[{i}] has a shape of {t.shape}.")
        if not create_graph and g._requires_grad:
            g = g.detach()
        result.append(g)
    return result


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulates the gradients of `tensors` into the ``.grad`` of the
    graph's leaves (or only of `inputs`)."""
    if grad_variables is not None:
        grad_tensors = grad_variables
    outputs = _tuple(tensors)
    if inputs is not None:
        inputs = _tuple(inputs)
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    grads = _root_grads(outputs, grad_tensors, create_graph)
    if retain_graph is None:
        retain_graph = create_graph
    _execute(outputs, grads, retain_graph, create_graph, inputs, accumulate=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False,
         materialize_grads=False):
    """The gradients of `outputs` w.r.t. `inputs`, returned rather than
    accumulated into ``.grad``."""
    if is_grads_batched:
        raise NotImplementedError("is_grads_batched=True is not supported by ember")
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    outs = _tuple(outputs)
    ins = _tuple(inputs)
    for t in ins:
        if not isinstance(t, Tensor):
            raise TypeError(f"grad(): inputs must be Tensors, got {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    grads = _root_grads(outs, grad_outputs, create_graph)
    if retain_graph is None:
        retain_graph = create_graph
    result = _execute(outs, grads, retain_graph, create_graph, ins, accumulate=False)
    for i, g in enumerate(result):
        if g is None:
            if not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have "
                                   "been used in the graph. Set allow_unused=True if this is "
                                   "the desired behavior.")
            if materialize_grads:
                result[i] = zeros_like(ins[i])
        elif not create_graph and g._requires_grad:
            result[i] = g.detach()
    return tuple(result)


def _tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Computes the gradient of this tensor w.r.t. the graph leaves and
    accumulates it into their ``.grad``."""
    backward((self,), None if gradient is None else (gradient,), retain_graph, create_graph,
             inputs=inputs)


Tensor.backward = _tensor_backward


# ---- the run ---------------------------------------------------------------
def _discover(roots):
    """Dependency counts over every node reachable from `roots`."""
    deps = {}
    seen = set(roots)
    stack = list(seen)
    while stack:
        for nxt, _ in stack.pop().next_functions:
            if nxt is not None:
                deps[nxt] = deps.get(nxt, 0) + 1
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
    return deps, seen


def _prune(roots, deps, nodes, targets):
    """Keeps the nodes that lead to a target; returns (needed, deps among them)."""
    # Kahn's order from the roots, then decide from the leaves up
    counts = dict(deps)
    order = []
    ready = [n for n in set(roots) if counts.get(n, 0) == 0]
    while ready:
        n = ready.pop()
        order.append(n)
        for nxt, _ in n.next_functions:
            if nxt is not None:
                counts[nxt] -= 1
                if counts[nxt] == 0:
                    ready.append(nxt)
    needed = set()
    for n in reversed(order):
        if n in targets or any(nxt in needed for nxt, _ in n.next_functions):
            needed.add(n)
    pruned = {}
    for n in needed:
        for nxt, _ in n.next_functions:
            if nxt in needed:
                pruned[nxt] = pruned.get(nxt, 0) + 1
    return needed, pruned


def _execute(outputs, grads, retain_graph, create_graph, inputs, accumulate):
    buffers = {}
    roots = []
    for t, g in zip(outputs, grads):
        node, nr = edge(t)
        roots.append(node)
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node._n_outputs
        buf[nr] = g if buf[nr] is None else buf[nr] + g
    deps, nodes = _discover(roots)

    # what to capture: the gradient arriving at each input's edge
    captures = needed = None
    results = []
    if inputs is not None:
        captures = {}
        for i, t in enumerate(inputs):
            node, nr = edge(t)
            if node is not None and node in nodes:
                captures.setdefault(node, []).append((nr, i))
        needed, deps = _prune(roots, deps, nodes, captures)
        results = [None] * len(inputs)

    ready = [n for n in dict.fromkeys(roots) if deps.get(n, 0) == 0]
    prev, prev_autocast = grad_mode.state.enabled, _autocast.active
    grad_mode.state.enabled = create_graph
    # gradients keep the dtypes the forward chose: no autocast in formulas
    _autocast.active = False
    try:
        _run_ready(ready, buffers, deps, retain_graph, captures, needed, results, inputs,
                   accumulate)
    finally:
        grad_mode.state.enabled, _autocast.active = prev, prev_autocast
    return results


def _run_ready(ready, buffers, deps, retain_graph, captures, needed, results, inputs,
               accumulate):
    """The main loop: run each node once all the edges into it delivered."""
    checked = _anomaly.enabled
    pop = ready.pop
    while ready:
        node = pop()
        grads_in = buffers.pop(node, None) or [None] * node._n_outputs
        extra = node._extra
        if extra is not None:
            grads_in = run_pre_hooks(node, extra, grads_in)
        if captures is not None:
            wanted = captures.get(node)
            if wanted is not None:
                for nr, i in wanted:
                    results[i] = grads_in[nr]
                    if accumulate:
                        _accumulate_into(inputs[i], grads_in[nr])
                # a leaf's AccumulateGrad runs only when backward() accumulates
                if not (accumulate and isinstance(node, AccumulateGrad)) and \
                        not any(nxt in needed for nxt, _ in node.next_functions):
                    continue  # nothing beyond this node is wanted
        if extra is None and not checked and grads_in[0] is not None:
            outs = node._run(grads_in)  # the common case, without the checks of _call
        else:
            outs = _call(node, grads_in, extra)
        if not retain_graph:
            node._release()
        for (nxt, nr), g in zip(node.next_functions, outs):
            if nxt is None or (needed is not None and nxt not in needed):
                continue
            if g is not None:
                buf = buffers.get(nxt)
                if buf is None:
                    buf = buffers[nxt] = [None] * nxt._n_outputs
                old = buf[nr]
                buf[nr] = g if old is None else old + g
            d = deps[nxt] - 1
            if d:
                deps[nxt] = d
            else:
                ready.append(nxt)
        # hold no gradient past its delivery: a leaf's AccumulateGrad can
        # then tell (by reference count) that it may keep one without a copy
        outs = g = grads_in = None


def _call(node, grads, extra):
    for g in grads:
        if g is not None:
            break
    else:  # no gradient arrived: the inputs get none either
        return (None,) * len(node.next_functions)
    if _anomaly.enabled or (extra is not None and "trace" in extra):
        outs = _call_reporting(node, grads)
    else:
        outs = node._run(grads)
    if extra is not None and "post_hooks" in extra:
        outs = run_post_hooks(node, extra, grads, outs)
    return outs


def _call_reporting(node, grads):
    """node._run, reporting the node's forward trace when it fails or (in
    anomaly mode) returns NaN."""
    try:
        outs = node._run(grads)
        if _anomaly.enabled and _anomaly.check_nan:
            anomaly_mode.check_nan(node, outs)
    except Exception as e:
        text = anomaly_mode.report(node, e)
        if text:
            e.add_note(text)
        raise
    return outs


def _accumulate_into(t, g):
    """backward(inputs=[...]) accumulates into .grad of non-leaves too."""
    if g is None or t._grad_fn is None:
        return  # leaves accumulate through their AccumulateGrad node
    m = _tensor.meta_of(t)
    if grad_mode.state.enabled:
        m.grad = g if m.grad is None else m.grad + g
    else:
        m.grad = _tensor._make(g._data.clone() if m.grad is None else m.grad._data + g._data)
