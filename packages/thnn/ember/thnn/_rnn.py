"""Bindings of the recurrent cells' pointwise kernels (src/rnn.c).

Same conventions as the rest of ember.thnn, plus optional preallocated
outputs (`out=`-style keyword arguments) so that a layer's time loop can
write every step into slices of one buffer.  See thnn.h for the formulas."""
import ember.th as _th

from ._lib import check as _check, ffi as _ffi, lib as _lib

__all__ = ["RNN_NONLINEARITIES", "lstm_cell_forward", "lstm_cell_backward",
           "gru_cell_forward", "gru_cell_backward", "rnn_cell_forward", "rnn_cell_backward",
           "gemm_out", "add_out"]

RNN_NONLINEARITIES = {"tanh": 0, "relu": 1}
_NULL = _ffi.NULL


def _p(t):
    return _NULL if t is None else t._p


def _new(like, width):
    return _th.empty(like.shape[0], width, dtype=like.dtype)


def _nonlinearity(name):
    try:
        return RNN_NONLINEARITIES[name]
    except KeyError:
        raise RuntimeError(f"Unknown nonlinearity: {name}") from None


def lstm_cell_forward(gates, c_prev, h=None, c=None):
    """gates (B, 4H) pre-activations, replaced in place by the activations
    (keep them for the backward). Returns (h, c)."""
    H = gates.shape[-1] // 4 if gates.ndim == 2 else 0
    h = _new(gates, H) if h is None else h
    c = _new(gates, H) if c is None else c
    _check(_lib.thnn_lstm_cell_forward(h._p, c._p, gates._p, c_prev._p))
    return h, c


def lstm_cell_backward(grad_h, grad_c, gates, c_prev, c, grad_gates=None, grad_c_prev=None):
    """grad_h, grad_c: None for zero. Returns (grad_gates, grad_c_prev)."""
    grad_gates = _new(gates, gates.shape[-1]) if grad_gates is None else grad_gates
    grad_c_prev = _new(c_prev, c_prev.shape[-1]) if grad_c_prev is None else grad_c_prev
    _check(_lib.thnn_lstm_cell_backward(grad_gates._p, grad_c_prev._p, _p(grad_h), _p(grad_c),
                                        gates._p, c_prev._p, c._p))
    return grad_gates, grad_c_prev


def gru_cell_forward(input_gates, hidden_gates, h_prev, h=None, save=None):
    """input_gates = x W_ih^T + b_ih, hidden_gates = h_prev W_hh^T + b_hh,
    both (B, 3H). Returns (h, save) with save (B, 4H) for the backward."""
    H = input_gates.shape[-1] // 3 if input_gates.ndim == 2 else 0
    h = _new(input_gates, H) if h is None else h
    save = _new(input_gates, 4 * H) if save is None else save
    _check(_lib.thnn_gru_cell_forward(h._p, save._p, input_gates._p, hidden_gates._p,
                                      h_prev._p))
    return h, save


def gru_cell_backward(grad_h, save, h_prev, grad_input_gates=None, grad_hidden_gates=None,
                      grad_h_prev=None):
    """Returns (grad_input_gates, grad_hidden_gates, the direct part of
    grad_h_prev); the caller adds grad_hidden_gates @ W_hh."""
    H = h_prev.shape[-1]
    gx = _new(h_prev, 3 * H) if grad_input_gates is None else grad_input_gates
    gy = _new(h_prev, 3 * H) if grad_hidden_gates is None else grad_hidden_gates
    gh = _new(h_prev, H) if grad_h_prev is None else grad_h_prev
    _check(_lib.thnn_gru_cell_backward(gx._p, gy._p, gh._p, grad_h._p, save._p, h_prev._p))
    return gx, gy, gh


def rnn_cell_forward(gates, nonlinearity="tanh", h=None):
    """h = tanh(gates) or relu(gates); h may be gates itself."""
    code = _nonlinearity(nonlinearity)
    h = _new(gates, gates.shape[-1]) if h is None else h
    _check(_lib.thnn_rnn_cell_forward(h._p, gates._p, code))
    return h


def rnn_cell_backward(grad_h, h, nonlinearity="tanh", grad_gates=None):
    code = _nonlinearity(nonlinearity)
    grad_gates = _new(h, h.shape[-1]) if grad_gates is None else grad_gates
    _check(_lib.thnn_rnn_cell_backward(grad_gates._p, grad_h._p, h._p, code))
    return grad_gates


# ---- the products of a recurrent layer's time loop (libTH) ---------------------
from ember.th._lib import check as _th_check, lib as _th_lib  # noqa: E402


def gemm_out(out, a, b, beta=0.0, alpha=1.0):
    """out = beta * out + alpha * a @ b in place (2-D; a or b may be
    transposed views): a step's hidden product written into its slice."""
    _th_check(_th_lib.th_gemm_out(out._p, a._p, b._p, float(beta), float(alpha)))
    return out


def add_out(out, a, b):
    """out = a + b (same shapes; out may be a or b)."""
    _th_check(_th_lib.th_binary_out(_th_lib.TH_ADD, out._p, a._p, b._p))
    return out
