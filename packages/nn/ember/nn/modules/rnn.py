"""Recurrent layers — RNN (tanh/relu), LSTM (with projections), GRU — and
their single-step cells.  On a kernel package with fused recurrent cells a
layer's direction (or a cell call) is one autograd node (_rnn_fused);
otherwise, and for double backward, they are composed from ember
operations per step (gradcheck, double backward).

Parameter names, shapes, gate order (LSTM: i, f, g, o; GRU: r, z, n) and
the default initialisation are PyTorch's, so a PyTorch state_dict loads
and gives the same outputs.  Per layer and direction the input is projected
for every time step by one matmul before the time loop; a step then costs
one (hidden × gates) matmul plus the gate arithmetic."""
import math
import numbers
import warnings

import ember

from .. import _rnn_fused
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _factory(device, dtype):
    kw = {}
    if device is not None:
        kw["device"] = device
    if dtype is not None:
        kw["dtype"] = dtype
    return kw


# ---- one time step ---------------------------------------------------------------
# Each step function takes the projected input of the step (W_ih x + biases,
# see _input_bias), the state tuple and the layer's weights, and returns the
# new state tuple; state[0] is the output h.
def _rnn_tanh_step(xp, state, w_hh_t, b_hh, w_hr_t):
    return (ember.addmm(xp, state[0], w_hh_t).tanh(),)


def _rnn_relu_step(xp, state, w_hh_t, b_hh, w_hr_t):
    return (ember.addmm(xp, state[0], w_hh_t).relu(),)


def _lstm_step(xp, state, w_hh_t, b_hh, w_hr_t):
    h, c = state
    gates = ember.addmm(xp, h, w_hh_t)
    i, f, g, o = gates.chunk(4, 1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    if w_hr_t is not None:
        h = h.mm(w_hr_t)
    return h, c


def _gru_step(xp, state, w_hh_t, b_hh, w_hr_t):
    h = state[0]
    # b_hh stays out of xp: PyTorch's n gate scales it by r
    hp = h.mm(w_hh_t) if b_hh is None else ember.addmm(b_hh, h, w_hh_t)
    x_r, x_z, x_n = xp.chunk(3, 1)
    h_r, h_z, h_n = hp.chunk(3, 1)
    r = (x_r + h_r).sigmoid()
    z = (x_z + h_z).sigmoid()
    n = (x_n + r * h_n).tanh()
    return (n + z * (h - n),)


_STEPS = {"RNN_TANH": _rnn_tanh_step, "RNN_RELU": _rnn_relu_step, "LSTM": _lstm_step,
          "GRU": _gru_step}


def _input_bias(mode, b_ih, b_hh):
    """The bias added to the input projection of every step."""
    if b_ih is None:
        return None
    return b_ih if mode == "GRU" else b_ih + b_hh


# ---- one layer, one direction, over a packed batch ---------------------------------
def _scan(step, steps_in, batch_sizes, state0, weights, reverse):
    """Runs step over the time steps.  steps_in[t] holds the projected input
    of the batch_sizes[t] sequences still running at step t (longest
    first).  Returns the outputs per step and the final state of every
    sequence (each sequence's own last step)."""
    w_hh_t, b_hh, w_hr_t = weights
    outputs = [None] * len(steps_in)
    if not reverse:
        state, finished = state0, []
        for t, xp in enumerate(steps_in):
            n = batch_sizes[t]
            if n < state[0].shape[0]:  # the shortest sequences ended at t - 1
                finished.append(tuple(s[n:] for s in state))
                state = tuple(s[:n] for s in state)
            state = step(xp, state, w_hh_t, b_hh, w_hr_t)
            outputs[t] = state[0]
        finished.append(state)
        final = tuple(ember.cat(parts[::-1]) if len(parts) > 1 else parts[0]
                      for parts in zip(*finished))
        return outputs, final
    # backwards in time: a sequence joins at its own last step, from state0
    first = batch_sizes[-1] if batch_sizes else 0
    state = tuple(s[:first] for s in state0)
    for t in range(len(steps_in) - 1, -1, -1):
        n = batch_sizes[t]
        if n > state[0].shape[0]:
            state = tuple(ember.cat([s, s0[s.shape[0]:n]]) for s, s0 in zip(state, state0))
        state = step(steps_in[t], state, w_hh_t, b_hh, w_hr_t)
        outputs[t] = state[0]
    return outputs, state


def _fused_step_fn(mode, projected, state, w_hh, b_hh, batch):
    """fn(reverse) -> (out, h_n[, c_n]) over fused kernels, or None; batch:
    the rows of each step (an int for equal steps, or batch_sizes)."""
    h0, c0 = state[0], state[1] if mode == "LSTM" else None
    b_hh = b_hh if mode == "GRU" else None  # the others have it in `projected`
    k = _rnn_fused.kernels_for(mode, projected, h0, c0, w_hh, b_hh)
    if k is None:
        return None

    def run(reverse):
        out, h_n, c_n = _rnn_fused.layer(k, mode, projected, h0, c0, w_hh, b_hh, batch,
                                         reverse)
        return (out, h_n) if c_n is None else (out, h_n, c_n)
    return run


def rnn_direction(mode, projected, state0, w_hh, b_hh, w_hr, batch_sizes, reverse):
    """One direction of one layer over the packed rows `projected` (every
    step's input projection): (output rows, *final states).  On fused
    kernels where they apply (no projection, a kernel package for the
    dtype and device), else composed step by step.  ember.jit traces it
    as one node (ember.onnx: one LSTM / GRU / RNN operator)."""
    fused = None if w_hr is not None or not batch_sizes else \
        _fused_step_fn(mode, projected, state0, w_hh, b_hh, batch_sizes)
    if fused is not None:  # the whole direction as one autograd node
        return tuple(fused(reverse))
    steps_in = projected.split(batch_sizes) if batch_sizes else []
    weights = (w_hh.t(), b_hh, None if w_hr is None else w_hr.t())
    outputs, final = _scan(_STEPS[mode], steps_in, batch_sizes, state0, weights, reverse)
    return (ember.cat(outputs) if outputs else projected[:, :0],) + tuple(final)


def _check_batch_sizes(batch_sizes, rows):
    """A hand-made PackedSequence must still describe a packed batch."""
    if (any(n <= 0 for n in batch_sizes)
            or any(b > a for a, b in zip(batch_sizes, batch_sizes[1:]))
            or sum(batch_sizes) != rows):
        raise RuntimeError(f"PackedSequence: batch_sizes must be positive, non-increasing and "
                           f"sum to data.size(0) = {rows}, but got {batch_sizes}")


class RNNBase(Module):
    """The stacked, optionally bidirectional recurrent layer shared by RNN,
    LSTM and GRU."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):
        super().__init__()
        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
                or not 0 <= dropout <= 1):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=3)
        for name, value in (("bias", bias), ("batch_first", batch_first)):
            if not isinstance(value, bool):
                raise TypeError(f"{name} should be of type bool, got: {type(value).__name__}")
        for name, value in (("input_size", input_size), ("hidden_size", hidden_size)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"{name} should be of type int, got: {type(value).__name__}")
            if value <= 0:
                raise ValueError(f"{name} must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        self.mode = mode
        self.input_size, self.hidden_size = input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional = float(dropout), bidirectional
        self.proj_size = proj_size
        directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        kw = _factory(device, dtype)
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else real_hidden * directions
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                shapes = [("weight_ih", (gate_size, layer_input)),
                          ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                names = []
                for name, shape in shapes:
                    setattr(self, name + suffix, Parameter(ember.empty(*shape, **kw)))
                    names.append(name + suffix)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self):
        """Kept for PyTorch programs (it packs weights for cuDNN there);
        nothing to do here."""

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def _layer_weights(self, layer, direction):
        suffix = f"_l{layer}" + ("_reverse" if direction == 1 else "")
        w_ih = getattr(self, "weight_ih" + suffix)
        w_hh = getattr(self, "weight_hh" + suffix)
        b_ih = getattr(self, "bias_ih" + suffix) if self.bias else None
        b_hh = getattr(self, "bias_hh" + suffix) if self.bias else None
        w_hr = getattr(self, "weight_hr" + suffix) if self.proj_size > 0 else None
        return w_ih, w_hh, b_ih, b_hh, w_hr

    # ---- argument checks (PyTorch's messages) --------------------------------------
    def _state_sizes(self):
        """Sizes of the state tensors' last dimension: (h,) or (h, c)."""
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (real_hidden, self.hidden_size) if self.mode == "LSTM" else (real_hidden,)

    def _check_input(self, input, packed):
        weight = self.weight_ih_l0
        if input.dtype != weight.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({weight.dtype}). Convert input: input.to({weight.dtype}), or "
                             f"convert model: model.to({input.dtype})")
        expected = 2 if packed else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    def _check_hidden(self, hx, batch):
        layers = self.num_layers * (2 if self.bidirectional else 1)
        for i, (h, size) in enumerate(zip(hx, self._state_sizes())):
            expected = (layers, batch, size)
            what = f"hidden[{i}]" if self.mode == "LSTM" else "hidden"
            if tuple(h.shape) != expected:
                raise RuntimeError(f"Expected {what} size {expected}, got {list(h.shape)}")
            if h.dtype != self.weight_ih_l0.dtype:
                raise RuntimeError(f"Expected {what} to have dtype {self.weight_ih_l0.dtype}, "
                                   f"but got {h.dtype}")

    def _hidden_tuple(self, hx, batched):
        """hx as a tuple of 3-D tensors (None stays None), checking ranks."""
        if hx is None:
            return None
        if self.mode == "LSTM":
            if (not isinstance(hx, (tuple, list)) or len(hx) != 2
                    or not all(isinstance(h, ember.Tensor) for h in hx)):
                raise TypeError("LSTM expects hx to be a tuple (h_0, c_0) of two tensors")
            hx = tuple(hx)
            dims = tuple(h.dim() for h in hx)
            want = 3 if batched else 2
            if dims != (want, want):
                kind = "batched 3-D" if batched else "unbatched 2-D"
                raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but "
                                   f"got ({dims[0]}-D, {dims[1]}-D) tensors")
        else:
            if not isinstance(hx, ember.Tensor):
                raise TypeError(f"{type(self).__name__} expects hx to be a Tensor, not "
                                f"{type(hx).__name__}")
            want = 3 if batched else 2
            if hx.dim() != want:
                kind = "batched 3-D" if batched else "unbatched 2-D"
                raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got "
                                   f"{hx.dim()}-D tensor")
            hx = (hx,)
        return hx if batched else tuple(h.unsqueeze(1) for h in hx)

    # ---- forward ---------------------------------------------------------------------
    def forward(self, input, hx=None):
        packed = isinstance(input, PackedSequence)
        if packed:
            data, batch_sizes = input.data, [int(b) for b in input.batch_sizes.tolist()]
            sorted_indices, unsorted_indices = input.sorted_indices, input.unsorted_indices
            self._check_input(data, packed=True)
            _check_batch_sizes(batch_sizes, data.shape[0])
            batch = batch_sizes[0] if batch_sizes else 0
            hx = self._hidden_tuple(hx, batched=True)
            if hx is not None:
                self._check_hidden(hx, batch)
                if sorted_indices is not None:  # hx follows the user's batch order
                    hx = tuple(h.index_select(1, sorted_indices) for h in hx)
            batched = True
        else:
            if not isinstance(input, ember.Tensor):
                raise TypeError(f"{type(self).__name__}: expected input to be a Tensor or a "
                                f"PackedSequence, not {type(input).__name__}")
            if input.dim() not in (2, 3):
                extra = " tensor" if self.mode.startswith("RNN") else ""
                raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got "
                                 f"{input.dim()}D{extra} instead")
            batched = input.dim() == 3
            hx = self._hidden_tuple(hx, batched)
            if not batched:
                input = input.unsqueeze(0 if self.batch_first else 1)
            self._check_input(input, packed=False)
            if self.batch_first:
                input = input.transpose(0, 1)
            steps, batch = input.shape[0], input.shape[1]
            if steps == 0:
                raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
            if hx is not None:
                self._check_hidden(hx, batch)
            data = input.reshape(steps * batch, self.input_size)
            batch_sizes = [batch] * steps
            sorted_indices = unsorted_indices = None
        if hx is None:
            hx = tuple(ember.zeros(self.num_layers * (2 if self.bidirectional else 1), batch,
                                   size, dtype=data.dtype, device=data.device)
                       for size in self._state_sizes())

        out, final = self._run(data, batch_sizes, hx)

        if packed:
            if unsorted_indices is not None:
                final = tuple(h.index_select(1, unsorted_indices) for h in final)
            output = PackedSequence(out, input.batch_sizes, sorted_indices, unsorted_indices)
        else:
            output = out.reshape(len(batch_sizes), batch, out.shape[-1])
            if self.batch_first:
                output = output.transpose(0, 1)
            if not batched:
                output = output.squeeze(0 if self.batch_first else 1)
                final = tuple(h.squeeze(1) for h in final)
        return output, (final if self.mode == "LSTM" else final[0])

    def _run(self, data, batch_sizes, hx):
        """data: the packed rows (sum(batch_sizes), features). Returns the
        last layer's packed output rows and the final states, stacked
        (layers × directions, batch, size) like hx."""
        directions = 2 if self.bidirectional else 1
        finals = [[] for _ in hx]
        for layer in range(self.num_layers):
            if layer > 0 and self.dropout > 0 and self.training:
                data = F.dropout(data, self.dropout, True)
            outs = []
            for direction in range(directions):
                w_ih, w_hh, b_ih, b_hh, w_hr = self._layer_weights(layer, direction)
                # every step's input projection in one matmul
                projected = F.linear(data, w_ih, _input_bias(self.mode, b_ih, b_hh))
                index = layer * directions + direction
                state0 = tuple(h[index] for h in hx)
                out, *final = rnn_direction(self.mode, projected, state0, w_hh, b_hh, w_hr,
                                            batch_sizes, direction == 1)
                outs.append(out)
                for parts, f in zip(finals, final):
                    parts.append(f)
            data = outs[0] if directions == 1 else ember.cat(outs, 1)
        return data, tuple(ember.stack(parts) for parts in finals)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


class RNN(RNNBase):
    """h_t = tanh(W_ih x_t + b_ih + W_hh h_(t-1) + b_hh) (or relu)."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             f"'relu'.")
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = nonlinearity

    def extra_repr(self):
        s = super().extra_repr()
        return s if self.nonlinearity == "tanh" else s + f", nonlinearity={self.nonlinearity}"


class LSTM(RNNBase):
    """Long short-term memory; with proj_size > 0, h is projected to
    proj_size by weight_hr after every step."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    """Gated recurrent unit (PyTorch's form: n = tanh(W_in x + b_in +
    r * (W_hn h + b_hn)))."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


# ---- cells ---------------------------------------------------------------------------
class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        kw = _factory(device, dtype)
        self.weight_ih = Parameter(ember.empty(num_chunks * hidden_size, input_size, **kw))
        self.weight_hh = Parameter(ember.empty(num_chunks * hidden_size, hidden_size, **kw))
        if bias:
            self.bias_ih = Parameter(ember.empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(ember.empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        if nonlinearity != "tanh":
            s += f", nonlinearity={nonlinearity}"
        return s

    def _prepare(self, input, hx):
        """Checks input and the state tensors (a tuple, entries may be None)
        and returns them 2-D, zeros for missing states, and whether the
        input was batched."""
        name = type(self).__name__
        if not isinstance(input, ember.Tensor):
            raise TypeError(f"{name}: expected input to be a Tensor, not "
                            f"{type(input).__name__}")
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D "
                             f"instead")
        for i, h in enumerate(hx):
            if h is not None and h.dim() not in (1, 2):
                what = f"hx[{i}]" if len(hx) > 1 else "hidden"
                raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {h.dim()}D "
                                 f"instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        hx = tuple(h if h is None or h.dim() == 2 else h.unsqueeze(0) for h in hx)
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} "
                               f"expected {self.input_size}")
        batch = input.shape[0]
        states = []
        for i, h in enumerate(hx):
            if h is None:
                h = ember.zeros(batch, self.hidden_size, dtype=input.dtype, device=input.device)
            if h.shape[0] != batch:
                raise RuntimeError(f"Input batch size {batch} doesn't match hidden{i} batch "
                                   f"size {h.shape[0]}")
            if h.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got "
                                   f"{h.shape[1]}, expected {self.hidden_size}")
            states.append(h)
        return input, tuple(states), batched

    def _step(self, mode, input, hx):
        input, state, batched = self._prepare(input, hx)
        bias = _input_bias(mode, self.bias_ih, self.bias_hh)
        projected = F.linear(input, self.weight_ih, bias)
        fused = _fused_step_fn(mode, projected, state, self.weight_hh, self.bias_hh,
                               input.shape[0])
        if fused is not None:  # one node for the step
            state = fused(False)[1:]
        else:
            state = _STEPS[mode](projected, state, self.weight_hh.t(), self.bias_hh, None)
        return state if batched else tuple(s.squeeze(0) for s in state)


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device,
                         dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        mode = "RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"
        return self._step(mode, input, (hx,))[0]


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        if hx is None:
            hx = (None, None)
        elif (not isinstance(hx, (tuple, list)) or len(hx) != 2
              or not all(isinstance(h, ember.Tensor) for h in hx)):
            raise TypeError("LSTMCell expects hx to be a tuple (h_0, c_0) of two tensors")
        return self._step("LSTM", input, tuple(hx))


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        return self._step("GRU", input, (hx,))[0]
