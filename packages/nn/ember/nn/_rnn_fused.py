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


class _Plan:
    """Where each step's rows are: a packed batch (batch_sizes
    non-increasing; a sequence runs while its row index is below the
    step's batch size) or a plain one (every step the same size)."""

    __slots__ = ("sizes", "offsets", "rows", "B", "T", "uniform")

    def __init__(self, batch_sizes):
        self.sizes = list(batch_sizes)
        self.T, self.B = len(self.sizes), self.sizes[0]
        self.offsets, n = [], 0
        for b in self.sizes:
            self.offsets.append(n)
            n += b
        self.rows = n
        self.uniform = self.sizes[-1] == self.B

    def step(self, t, buf):
        return buf.narrow(0, self.offsets[t], self.sizes[t])


def _first(t, n):
    return t if t.shape[0] == n else t.narrow(0, 0, n)


def _prev_state(plan, t, seq, s0, reverse):
    """The state step t starts from, (sizes[t], H): the previous step's
    rows, completed from s0 for the sequences that join here (reverse)."""
    n = plan.sizes[t]
    if not reverse:
        return _first(s0, n) if t == 0 else _first(plan.step(t - 1, seq), n)
    if t == plan.T - 1:
        return _first(s0, n)
    m = plan.sizes[t + 1]
    if m == n:
        return plan.step(t + 1, seq)
    prev = ember.th.empty(n, seq.shape[1], dtype=seq.dtype)
    prev.narrow(0, 0, m).copy_(plan.step(t + 1, seq))
    prev.narrow(0, m, n - m).copy_(s0.narrow(0, m, n - m))
    return prev


def _prev_states(plan, seq, s0, reverse):
    """(rows, H): every step's starting state, in the steps' rows."""
    out = ember.th.empty(*seq.shape, dtype=seq.dtype)
    T, B = plan.T, plan.B
    if plan.uniform:  # two copies: the sequence shifted by a step, and s0
        if T > 1:
            src, dst = (B, 0) if reverse else (0, B)
            out.narrow(0, dst, (T - 1) * B).copy_(seq.narrow(0, src, (T - 1) * B))
        out.narrow(0, (T - 1) * B if reverse else 0, B).copy_(s0)
        return out
    for t in range(T):
        plan.step(t, out).copy_(_prev_state(plan, t, seq, s0, reverse))
    return out


def _final_state(plan, seq, reverse):
    """(B, H): each sequence's state after its own last step."""
    if reverse or plan.uniform:
        return plan.step(0 if reverse else plan.T - 1, seq).clone()
    final = ember.th.empty(plan.B, seq.shape[1], dtype=seq.dtype)
    for t in range(plan.T):
        lo = plan.sizes[t + 1] if t + 1 < plan.T else 0
        if lo < plan.sizes[t]:  # the sequences lo.. end at step t
            final.narrow(0, lo, plan.sizes[t] - lo).copy_(
                plan.step(t, seq).narrow(0, lo, plan.sizes[t] - lo))
    return final


def _forward(k, mode, xp, h0, c0, w, b_hh, plan, reverse):
    """Raw tensors in; (out (rows, H), h_n, c_n or None, saved)."""
    H = h0.shape[1]
    out = ember.th.empty(plan.rows, H, dtype=xp.dtype)
    wt = w.t().contiguous()  # the per-step product runs faster on a plain (H, G) matrix
    if mode == "LSTM":
        gates = xp.clone()  # becomes the activations the backward needs
        cs = ember.th.empty(plan.rows, H, dtype=xp.dtype)
        for t in _steps(plan.T, reverse):
            g = plan.step(t, gates)
            k.gemm_out(g, _prev_state(plan, t, out, h0, reverse), wt, 1.0)
            k.lstm_cell_forward(g, _prev_state(plan, t, cs, c0, reverse), plan.step(t, out),
                                plan.step(t, cs))
        return (out, _final_state(plan, out, reverse), _final_state(plan, cs, reverse),
                (gates, cs))
    if mode == "GRU":
        xg = xp.contiguous()
        hg_all = ember.th.empty(plan.B, 3 * H, dtype=xp.dtype)
        save = ember.th.empty(plan.rows, 4 * H, dtype=xp.dtype)
        for t in _steps(plan.T, reverse):
            hp = _prev_state(plan, t, out, h0, reverse)
            hg = _first(hg_all, plan.sizes[t])
            if b_hh is None:
                k.gemm_out(hg, hp, wt, 0.0)
            else:
                hg.copy_(b_hh)
                k.gemm_out(hg, hp, wt, 1.0)
            k.gru_cell_forward(plan.step(t, xg), hg, hp, plan.step(t, out), plan.step(t, save))
        return out, _final_state(plan, out, reverse), None, (save,)
    gates = xp.clone()
    nl = _NONLINEARITY[mode]
    for t in _steps(plan.T, reverse):
        g = plan.step(t, gates)
        k.gemm_out(g, _prev_state(plan, t, out, h0, reverse), wt, 1.0)
        k.rnn_cell_forward(g, nl, plan.step(t, out))
    return out, _final_state(plan, out, reverse), None, ()


def _backward(k, mode, ctx, grads, inputs, needs):
    """Raw gradients of (xp, h0, c0, w_hh, b_hh) from those of (out, h_n, c_n).
    dh, dc hold, per sequence, the gradient of the state it is in; a step
    updates the rows of the sequences it runs."""
    xp, h0, c0, w, b_hh = inputs
    plan, reverse, out = ctx[0], ctx[1], ctx[2]
    g_out, g_h, g_c = grads
    H = out.shape[1]
    dh = g_h.clone() if g_h is not None else ember.th.zeros(plan.B, H, dtype=out.dtype)
    hprev = _prev_states(plan, out, h0, reverse)
    gx = ember.th.empty(plan.rows, xp.shape[1], dtype=out.dtype)
    gy = gx  # the gradient of the hidden product's output
    order = list(_steps(plan.T, reverse))[::-1]
    if mode == "LSTM":
        gates, cs = ctx[3]
        dc = g_c.clone() if g_c is not None else ember.th.zeros(plan.B, H, dtype=out.dtype)
        cprev = _prev_states(plan, cs, c0, reverse)
        for t in order:
            n = plan.sizes[t]
            dht, dct = _first(dh, n), _first(dc, n)
            if g_out is not None:
                k.add_out(dht, dht, plan.step(t, g_out))
            s = plan.step(t, gx)
            k.lstm_cell_backward(dht, dct, plan.step(t, gates), plan.step(t, cprev),
                                 plan.step(t, cs), s, dct)
            k.gemm_out(dht, s, w, 0.0)
        g_c0 = dc
    elif mode == "GRU":
        (save,) = ctx[3]
        gy = ember.th.empty(plan.rows, xp.shape[1], dtype=out.dtype)
        for t in order:
            dht = _first(dh, plan.sizes[t])
            if g_out is not None:
                k.add_out(dht, dht, plan.step(t, g_out))
            s = plan.step(t, gy)
            k.gru_cell_backward(dht, plan.step(t, save), plan.step(t, hprev), plan.step(t, gx),
                                s, dht)
            k.gemm_out(dht, s, w, 1.0)
        g_c0 = None
    else:
        nl = _NONLINEARITY[mode]
        for t in order:
            dht = _first(dh, plan.sizes[t])
            if g_out is not None:
                k.add_out(dht, dht, plan.step(t, g_out))
            s = plan.step(t, gx)
            k.rnn_cell_backward(dht, plan.step(t, out), nl, s)
            k.gemm_out(dht, s, w, 0.0)
        g_c0 = None
    g_w = ember.th.mm(gy.t(), hprev) if needs[3] else None
    g_b = gy.sum(0) if needs[4] and b_hh is not None else None
    return gx, dh, g_c0, g_w, g_b


def compose(mode, xp, h0, c0, w_hh, b_hh, batch_sizes, reverse):
    """The same layer from ember ops (the per-step form), for double backward."""
    from .modules.rnn import _STEPS, _scan
    if isinstance(batch_sizes, int):
        batch_sizes = [batch_sizes] * (xp.shape[0] // batch_sizes)
    state0 = (h0, c0) if mode == "LSTM" else (h0,)
    outputs, final = _scan(_STEPS[mode], xp.split(list(batch_sizes)), list(batch_sizes),
                           state0, (w_hh.t(), b_hh, None), reverse)
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
        plan, reverse = self._ctx[0], self._ctx[1]
        wanted = [t for t, need in zip(inputs, needs) if need]
        with ember.enable_grad():
            outs = compose(self._mode, *inputs, plan.sizes, reverse)
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


def layer(k, mode, xp, h0, c0, w_hh, b_hh, batch_sizes, reverse):
    """xp (rows, gates): every step's projected input (GRU: without b_hh),
    the steps' rows one after the other, batch_sizes[t] rows at step t
    (non-increasing: a packed batch) or an int B for T = rows / B equal
    steps; h0, c0 (B, H) (c0 None but for LSTM); b_hh None but for GRU.
    Returns (out (rows, H), h_n, c_n) with c_n None but for LSTM."""
    if isinstance(batch_sizes, int):
        batch_sizes = [batch_sizes] * (xp.shape[0] // batch_sizes)
    plan = _Plan(batch_sizes)
    inputs = (xp, h0, c0, w_hh, b_hh)
    raw = tuple(None if t is None else t._data for t in inputs)
    out, h_n, c_n, saved = _forward(k, mode, *raw, plan, reverse)
    if not (_mode.enabled and any(t is not None and t._requires_grad for t in inputs)):
        return _make(out), _make(h_n), None if c_n is None else _make(c_n)
    node = _new_node(_node_class(mode), tuple(NO_EDGE if t is None else edge(t)
                                              for t in inputs))
    node._save(inputs, None)
    node._ctx = (plan, reverse, out, saved, out._version())
    node._k, node._mode = k, mode
    return (output(out, node, 0), output(h_n, node, 1),
            None if c_n is None else output(c_n, node, 2))
