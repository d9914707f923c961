"""One direction of one recurrent layer over a whole sequence as ONE
autograd node, on a kernel package's fused cell kernels (ember-thnn's
``lstm_cell_forward`` ...).

Forward: the caller has projected every step's input (``xp``, one matmul
with its own autograd); the time loop here does, per step, one product
``h_prev @ W_hh^T`` into that step's slice of a preallocated gate buffer
and one fused cell kernel, on raw tensors, recording nothing.
Backward: the steps in reverse, per step the fused backward kernel and one
product ``grad_gates @ W_hh`` for the previous hidden state; the gradient
of W_hh (and GRU's b_hh) is one product over all steps at the end; the
gradient of ``xp`` goes back to the input projection's own node.
Under ``create_graph`` (double backward) the node differentiates the
composed per-step form (``compose``) instead, as _kernel_autograd does.
"""
import ember
from ember._tensor import _make
from ember.autograd import grad_mode
from ember.autograd.graph import NO_EDGE, edge, modified_message, output
from ember.autograd.nodes import SavingNode, _new_node, node_class

from ._kernels import provider_for

_mode = grad_mode.state
_CELL = {"LSTM": "lstm_cell_forward", "GRU": "gru_cell_forward",
         "RNN_TANH": "rnn_cell_forward", "RNN_RELU": "rnn_cell_forward"}
_NONLINEARITY = {"RNN_TANH": "tanh", "RNN_RELU": "relu"}


def kernels_for(mode, xp, h0, c0, w_hh, b_hh):
    """The kernel package to run this layer on, or None (compose instead):
    one raw tensor type and float dtype for all, non-empty."""
    raw = xp._data
    if 0 in tuple(xp.shape) or 0 in tuple(h0.shape):
        return None
    for t in (h0, c0, w_hh, b_hh):
        if t is not None and (t._data.__class__ is not raw.__class__ or t.dtype != xp.dtype):
            return None
    return provider_for(raw, _CELL[mode])


def _steps(T, reverse):
    return range(T - 1, -1, -1) if reverse else range(T)


def _forward(k, mode, xp, h0, c0, w, b_hh, B, reverse):
    """Raw tensors in; (out (T*B, H), h_n, c_n or None, ctx)."""
    T, H = xp.shape[0] // B, h0.shape[1]
    out = ember.th.empty(T * B, H, dtype=xp.dtype)
    rows = [out.narrow(0, t * B, B) for t in range(T)]
    wt = w.t().contiguous()  # the per-step product runs faster on a plain (H, G) matrix
    hp, cp = h0, c0
    if mode == "LSTM":
        gates = xp.clone()  # becomes the activations the backward needs
        cs = ember.th.empty(T * B, H, dtype=xp.dtype)
        for t in _steps(T, reverse):
            g = gates.narrow(0, t * B, B)
            k.gemm_out(g, hp, wt, 1.0)
            c = cs.narrow(0, t * B, B)
            k.lstm_cell_forward(g, cp, rows[t], c)
            hp, cp = rows[t], c
        return out, hp.clone(), cp.clone(), (gates, cs)
    if mode == "GRU":
        xg = xp.contiguous()
        hg = ember.th.empty(B, 3 * H, dtype=xp.dtype)
        save = ember.th.empty(T * B, 4 * H, dtype=xp.dtype)
        for t in _steps(T, reverse):
            if b_hh is None:
                k.gemm_out(hg, hp, wt, 0.0)
            else:
                hg.copy_(b_hh)
                k.gemm_out(hg, hp, wt, 1.0)
            k.gru_cell_forward(xg.narrow(0, t * B, B), hg, hp, rows[t],
                               save.narrow(0, t * B, B))
            hp = rows[t]
        return out, hp.clone(), None, (save,)
    gates = xp.clone()
    nl = _NONLINEARITY[mode]
    for t in _steps(T, reverse):
        g = gates.narrow(0, t * B, B)
        k.gemm_out(g, hp, wt, 1.0)
        k.rnn_cell_forward(g, nl, rows[t])
        hp = rows[t]
    return out, hp.clone(), None, ()


def _h_prev(out, h0, B, reverse):
    """(T*B, H): every step's previous hidden state, in the steps' order."""
    T = out.shape[0] // B
    hprev = ember.th.empty(*out.shape, dtype=out.dtype)
    if T > 1:
        if reverse:
            hprev.narrow(0, 0, (T - 1) * B).copy_(out.narrow(0, B, (T - 1) * B))
        else:
            hprev.narrow(0, B, (T - 1) * B).copy_(out.narrow(0, 0, (T - 1) * B))
    hprev.narrow(0, (T - 1) * B if reverse else 0, B).copy_(h0)
    return hprev


def _backward(k, mode, ctx, grads, inputs, needs):
    """Raw gradients of (xp, h0, c0, w_hh, b_hh) from those of (out, h_n, c_n)."""
    xp, h0, c0, w, b_hh = inputs
    B, reverse, out = ctx[0], ctx[1], ctx[2]
    g_out, g_h, g_c = grads
    T, H = out.shape[0] // B, out.shape[1]
    dh = g_h.clone() if g_h is not None else ember.th.zeros(B, H, dtype=out.dtype)
    hprev = _h_prev(out, h0, B, reverse)
    gx = ember.th.empty(T * B, xp.shape[1], dtype=out.dtype)
    gy = gx  # the gradient of the hidden product's output
    order = list(_steps(T, reverse))[::-1]
    if mode == "LSTM":
        gates, cs = ctx[3]
        dc = g_c.clone() if g_c is not None else ember.th.zeros(B, H, dtype=out.dtype)
        cprev = _h_prev(cs, c0, B, reverse)
        for t in order:
            if g_out is not None:
                k.add_out(dh, dh, g_out.narrow(0, t * B, B))
            s = gx.narrow(0, t * B, B)
            k.lstm_cell_backward(dh, dc, gates.narrow(0, t * B, B), cprev.narrow(0, t * B, B),
                                 cs.narrow(0, t * B, B), s, dc)
            k.gemm_out(dh, s, w, 0.0)
        g_c0 = dc
    elif mode == "GRU":
        (save,) = ctx[3]
        gy = ember.th.empty(T * B, xp.shape[1], dtype=out.dtype)
        for t in order:
            if g_out is not None:
                k.add_out(dh, dh, g_out.narrow(0, t * B, B))
            s = gy.narrow(0, t * B, B)
            k.gru_cell_backward(dh, save.narrow(0, t * B, B), hprev.narrow(0, t * B, B),
                                gx.narrow(0, t * B, B), s, dh)
            k.gemm_out(dh, s, w, 1.0)
        g_c0 = None
    else:
        nl = _NONLINEARITY[mode]
        for t in order:
            if g_out is not None:
                k.add_out(dh, dh, g_out.narrow(0, t * B, B))
            s = gx.narrow(0, t * B, B)
            k.rnn_cell_backward(dh, out.narrow(0, t * B, B), nl, s)
            k.gemm_out(dh, s, w, 0.0)
        g_c0 = None
    g_w = ember.th.mm(gy.t(), hprev) if needs[3] else None
    g_b = gy.sum(0) if needs[4] and b_hh is not None else None
    return gx, dh, g_c0, g_w, g_b


def compose(mode, xp, h0, c0, w_hh, b_hh, B, reverse):
    """The same layer from ember ops (the per-step form), for double backward."""
    from .modules.rnn import _STEPS, _scan
    T = xp.shape[0] // B
    state0 = (h0, c0) if mode == "LSTM" else (h0,)
    outputs, final = _scan(_STEPS[mode], xp.split(B), [B] * T, state0,
                           (w_hh.t(), b_hh, None), reverse)
    return (ember.cat(outputs),) + tuple(final)


class _LayerNode(SavingNode):
    __slots__ = ("_ctx", "_k", "_mode", "_n")

    def _run(self, grads):
        inputs = self._values()  # raises once freed
        needs = tuple(e[0] is not None for e in self.next_functions)
        grads = (list(grads) + [None] * 3)[:3]
        if all(g is None for g in grads):
            return (None,) * 5
        if _mode.enabled:  # create_graph: differentiate the composed form
            return self._composed_grads(inputs, grads, needs)
        out = self._ctx[2]
        if out._version() != self._ctx[4]:  # the output the backward reads was modified
            raise RuntimeError(modified_message(output(out, self), self._ctx[4],
                                                out._version(), self))
        raw = tuple(None if t is None else t._data for t in inputs)
        graw = tuple(None if g is None else g._data.contiguous() for g in grads)
        result = _backward(self._k, self._mode, self._ctx, graw, raw, needs)
        return tuple(None if r is None or not need else _make(r)
                     for r, need in zip(result, needs))

    def _composed_grads(self, inputs, grads, needs):
        B, reverse = self._ctx[0], self._ctx[1]
        wanted = [t for t, need in zip(inputs, needs) if need]
        with ember.enable_grad():
            outs = compose(self._mode, *inputs, B, reverse)
        pairs = [(o, g) for o, g in zip(outs, grads) if g is not None]
        found = iter(ember.autograd.grad([o for o, _ in pairs], wanted,
                                         [g for _, g in pairs], create_graph=True,
                                         allow_unused=True))
        return tuple(next(found) if need else None for need in needs)

    def _release(self):
        SavingNode._release(self)
        self._ctx = None


_NODES = {}


def _node_class(mode):
    cls = _NODES.get(mode)
    if cls is None:
        name = {"LSTM": "LstmLayerBackward0", "GRU": "GruLayerBackward0"}.get(
            mode, "RnnLayerBackward0")
        cls = _NODES[mode] = node_class(_LayerNode, name, node_name=name,
                                        _n_outputs=3 if mode == "LSTM" else 2)
    return cls


def layer(k, mode, xp, h0, c0, w_hh, b_hh, B, reverse):
    """xp (T*B, gates): every step's projected input (GRU: without b_hh);
    h0, c0 (B, H) (c0 None but for LSTM); b_hh None but for GRU.
    Returns (out (T*B, H), h_n, c_n) with c_n None but for LSTM."""
    inputs = (xp, h0, c0, w_hh, b_hh)
    raw = tuple(None if t is None else t._data for t in inputs)
    out, h_n, c_n, saved = _forward(k, mode, *raw, B, reverse)
    if not (_mode.enabled and any(t is not None and t._requires_grad for t in inputs)):
        return _make(out), _make(h_n), None if c_n is None else _make(c_n)
    node = _new_node(_node_class(mode), tuple(NO_EDGE if t is None else edge(t)
                                              for t in inputs))
    node._save(inputs, None)
    node._ctx = (B, reverse, out, saved, out._version())
    node._k, node._mode = k, mode
    return (output(out, node, 0), output(h_n, node, 1),
            None if c_n is None else output(c_n, node, 2))
