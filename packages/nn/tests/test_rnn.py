"""Recurrent layers and cells: a NumPy float64 reference (cells, and whole
stacked bidirectional networks run one sequence at a time, which checks
packed batches), PyTorch with identical weights, gradcheck, errors, and
the packed-sequence utilities."""
import warnings

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.autograd import gradcheck, gradgradcheck
from ember.nn.utils import rnn as rnn_utils

from conftest import requires_torch, torch


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def params(module):
    return {k: v.detach().numpy().astype(np.float64) for k, v in module.named_parameters()}


def randn(*shape, seed=0, requires_grad=False):
    a = np.random.default_rng(seed).standard_normal(shape)
    return ember.from_numpy(a).requires_grad_(requires_grad)


# ---- NumPy reference -------------------------------------------------------------
def np_cell(mode, x, state, w_ih, w_hh, b_ih, b_hh, w_hr=None):
    """One step of PyTorch's documented equations, on 2-D (batch, features)."""
    b_ih = 0 if b_ih is None else b_ih
    b_hh = 0 if b_hh is None else b_hh
    gx, gh = x @ w_ih.T + b_ih, state[0] @ w_hh.T + b_hh
    if mode in ("tanh", "relu"):
        a = gx + gh
        return (np.tanh(a) if mode == "tanh" else np.maximum(a, 0),)
    if mode == "LSTM":
        i, f, g, o = np.split(gx + gh, 4, axis=1)
        c = sigmoid(f) * state[1] + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
        return (h if w_hr is None else h @ w_hr.T, c)
    xr, xz, xn = np.split(gx, 3, axis=1)
    hr, hz, hn = np.split(gh, 3, axis=1)
    r, z = sigmoid(xr + hr), sigmoid(xz + hz)
    n = np.tanh(xn + r * hn)
    return ((1 - z) * n + z * state[0],)


def np_network(mode, p, x, state0, num_layers, bidirectional):
    """Stacked (bi)directional network on one sequence x (T, I); state0 a
    tuple of (layers*dirs, H) arrays.  Returns output (T, D*H), finals."""
    dirs = 2 if bidirectional else 1
    finals = [[] for _ in state0]
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            sfx = f"_l{layer}" + ("_reverse" if d else "")
            w = [p.get(n + sfx) for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh",
                                          "weight_hr")]
            state = tuple(s[layer * dirs + d][None] for s in state0)
            steps = range(len(x) - 1, -1, -1) if d else range(len(x))
            out = [None] * len(x)
            for t in steps:
                state = np_cell(mode, x[t][None], state, *w)
                out[t] = state[0][0]
            outs.append(np.stack(out))
            for f, s in zip(finals, state):
                f.append(s[0])
        x = np.concatenate(outs, 1)
    return x, tuple(np.stack(f) for f in finals)


CELL_CASES = [("tanh", nn.RNNCell, {}), ("relu", nn.RNNCell, {"nonlinearity": "relu"}),
              ("LSTM", nn.LSTMCell, {}), ("GRU", nn.GRUCell, {}),
              ("LSTM", nn.LSTMCell, {"bias": False}), ("GRU", nn.GRUCell, {"bias": False})]


@pytest.mark.parametrize("mode,cls,kw", CELL_CASES)
def test_cell_matches_numpy(mode, cls, kw):
    ember.manual_seed(1)
    cell = cls(5, 4, dtype=ember.float64, **kw)
    p = params(cell)
    x = randn(3, 5, seed=2)
    states = [randn(3, 4, seed=3)] + ([randn(3, 4, seed=4)] if mode == "LSTM" else [])
    out = cell(x, tuple(states) if mode == "LSTM" else states[0])
    out = out if isinstance(out, tuple) else (out,)
    ref = np_cell(mode, x.numpy(), [s.numpy() for s in states], p["weight_ih"],
                  p["weight_hh"], p.get("bias_ih"), p.get("bias_hh"))
    for a, b in zip(out, ref):
        np.testing.assert_allclose(a.detach().numpy(), b, rtol=1e-12, atol=1e-12)
    # no state: zeros; unbatched input: 1-D in, 1-D out
    zero = [np.zeros((1, 4))] * len(states)
    ref1 = np_cell(mode, x.numpy()[:1], zero, p["weight_ih"], p["weight_hh"],
                   p.get("bias_ih"), p.get("bias_hh"))
    out1 = cell(x[0])
    out1 = out1 if isinstance(out1, tuple) else (out1,)
    for a, b in zip(out1, ref1):
        assert a.shape == (4,)
        np.testing.assert_allclose(a.detach().numpy(), b[0], rtol=1e-12, atol=1e-12)


NET_CASES = [("tanh", nn.RNN, {}), ("relu", nn.RNN, {"nonlinearity": "relu"}),
             ("LSTM", nn.LSTM, {}), ("LSTM", nn.LSTM, {"proj_size": 2}), ("GRU", nn.GRU, {}),
             ("GRU", nn.GRU, {"bias": False})]


@pytest.mark.parametrize("mode,cls,kw", NET_CASES)
@pytest.mark.parametrize("bidirectional", [False, True])
def test_network_matches_numpy_per_sequence(mode, cls, kw, bidirectional):
    """A padded batch, and the same batch packed with unsorted lengths and
    a given initial state, against running each sequence alone."""
    ember.manual_seed(5)
    net = cls(3, 4, num_layers=2, bidirectional=bidirectional, dtype=ember.float64, **kw)
    p = params(net)
    dirs = 2 if bidirectional else 1
    out_size = kw.get("proj_size", 4)
    lengths = [3, 5, 1, 4]
    x = randn(5, 4, 3, seed=6)
    h0 = randn(2 * dirs, 4, out_size, seed=7)
    c0 = randn(2 * dirs, 4, 4, seed=8)
    hx = (h0, c0) if mode == "LSTM" else h0
    states_np = (h0.numpy(), c0.numpy()) if mode == "LSTM" else (h0.numpy(),)

    packed = rnn_utils.pack_padded_sequence(x, lengths, enforce_sorted=False)
    out, final = net(packed, hx)
    final = final if isinstance(final, tuple) else (final,)
    padded, out_lengths = rnn_utils.pad_packed_sequence(out)
    assert out_lengths.tolist() == lengths
    for b, n in enumerate(lengths):
        ref_out, ref_final = np_network(mode, p, x.numpy()[:n, b],
                                        tuple(s[:, b] for s in states_np), 2, bidirectional)
        np.testing.assert_allclose(padded[:n, b].detach().numpy(), ref_out, atol=1e-12)
        assert np.all(padded[n:, b].detach().numpy() == 0)
        for f, r in zip(final, ref_final):
            np.testing.assert_allclose(f[:, b].detach().numpy(), r, atol=1e-12)

    # the padded (full-length) batch
    out, final = net(x, hx)
    final = final if isinstance(final, tuple) else (final,)
    assert out.shape == (5, 4, dirs * out_size)
    for b in range(4):
        ref_out, ref_final = np_network(mode, p, x.numpy()[:, b],
                                        tuple(s[:, b] for s in states_np), 2, bidirectional)
        np.testing.assert_allclose(out[:, b].detach().numpy(), ref_out, atol=1e-12)
        for f, r in zip(final, ref_final):
            np.testing.assert_allclose(f[:, b].detach().numpy(), r, atol=1e-12)


def test_batch_first_unbatched_and_noncontiguous():
    ember.manual_seed(0)
    lstm = nn.LSTM(3, 4, num_layers=2, batch_first=True, dtype=ember.float64)
    x = randn(2, 5, 3, seed=1)
    out, (h, c) = lstm(x)
    ref_lstm = nn.LSTM(3, 4, num_layers=2, dtype=ember.float64)
    ref_lstm.load_state_dict(lstm.state_dict())
    ref_out, (rh, rc) = ref_lstm(x.transpose(0, 1))  # non-contiguous time-major view
    np.testing.assert_allclose(out.detach().numpy(), ref_out.transpose(0, 1).detach().numpy(),
                               atol=1e-14)
    np.testing.assert_allclose(h.detach().numpy(), rh.detach().numpy(), atol=1e-14)
    # unbatched: (T, I) in, (T, D*H) out, states (layers, H)
    out1, (h1, c1) = lstm(x[1], (h[:, 1], c[:, 1]))
    out2, (h2, c2) = lstm(x[1:2], (h[:, 1:2].contiguous(), c[:, 1:2].contiguous()))
    assert out1.shape == (5, 4) and h1.shape == (2, 4) and c1.shape == (2, 4)
    np.testing.assert_allclose(out1.detach().numpy(), out2[0].detach().numpy(), atol=1e-14)
    np.testing.assert_allclose(c1.detach().numpy(), c2[:, 0].detach().numpy(), atol=1e-14)


def test_empty_batch_and_state_left_intact():
    gru = nn.GRU(3, 4, num_layers=2, bidirectional=True)
    out, h = gru(ember.randn(5, 0, 3))
    assert out.shape == (5, 0, 8) and h.shape == (4, 0, 4)
    h0 = ember.randn(4, 2, 4)
    before = h0.clone()
    gru(ember.randn(5, 2, 3), h0)
    assert ember.equal(h0, before)


def test_dropout_between_layers():
    ember.manual_seed(0)
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.LSTM(3, 4, dropout=0.5)
    lstm = nn.LSTM(3, 4, num_layers=2, dropout=0.5, dtype=ember.float64)
    plain = nn.LSTM(3, 4, num_layers=2, dtype=ember.float64)
    plain.load_state_dict(lstm.state_dict())
    x = randn(6, 2, 3, seed=3)
    lstm.eval()
    np.testing.assert_allclose(lstm(x)[0].detach().numpy(), plain(x)[0].detach().numpy())
    lstm.train()
    a, b = lstm(x)[0], lstm(x)[0]
    assert not np.allclose(a.detach().numpy(), b.detach().numpy())
    # p=1 zeroes layer 1's output: layer 2 runs on zeros
    lstm.dropout = 1.0
    out = lstm(x)[0]
    second = nn.LSTM(3, 4, dtype=ember.float64)
    second.load_state_dict({k.replace("_l1", "_l0"): v for k, v in lstm.state_dict().items()
                            if "_l1" in k and "weight_ih" not in k}, strict=False)
    with ember.no_grad():
        second.weight_ih_l0.zero_()
    np.testing.assert_allclose(out.detach().numpy(), second(x)[0].detach().numpy(), atol=1e-14)


def test_parameters_and_init():
    lstm = nn.LSTM(10, 20, num_layers=2, bidirectional=True, proj_size=5)
    names = [n for n, _ in lstm.named_parameters()]
    assert names[:5] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
                         "weight_hr_l0"]
    assert "weight_hr_l1_reverse" in names and len(names) == 20
    assert lstm.weight_ih_l0.shape == (80, 10) and lstm.weight_hh_l0.shape == (80, 5)
    assert lstm.weight_ih_l1.shape == (80, 10) and lstm.weight_hr_l0.shape == (5, 20)
    assert len(lstm.all_weights) == 4 and lstm.all_weights[1][0] is lstm.weight_ih_l0_reverse
    big = nn.GRU(50, 400)
    w = big.weight_hh_l0.detach().numpy()
    bound = 1 / np.sqrt(400)
    assert w.min() >= -bound and w.max() <= bound
    assert abs(w.std() - bound / np.sqrt(3)) < 0.05 * bound  # uniform's std
    assert repr(nn.LSTM(3, 4, num_layers=2, batch_first=True, bidirectional=True)) == \
        "LSTM(3, 4, num_layers=2, batch_first=True, bidirectional=True)"
    assert repr(nn.RNNCell(3, 4, nonlinearity="relu")) == "RNNCell(3, 4, nonlinearity=relu)"
    assert [n for n, _ in nn.GRUCell(3, 4, bias=False).named_parameters()] == \
        ["weight_ih", "weight_hh"]


# ---- gradients ---------------------------------------------------------------------
@pytest.mark.parametrize("mode,cls,kw", CELL_CASES[:4])
def test_cell_gradcheck(mode, cls, kw):
    ember.manual_seed(0)
    cell = cls(3, 2, dtype=ember.float64, **kw)
    x = randn(2, 3, seed=1, requires_grad=True)
    h = randn(2, 2, seed=2, requires_grad=True)
    c = randn(2, 2, seed=3, requires_grad=True)
    ps = list(cell.parameters())
    if mode == "LSTM":
        def fn(x, h, c, *_):
            return cell(x, (h, c))
        inputs = (x, h, c, *ps)
    else:
        def fn(x, h, *_):
            return cell(x, h)
        inputs = (x, h, *ps)
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs[:3 if mode == "LSTM" else 2])


@pytest.mark.parametrize("cls,kw", [(nn.LSTM, {}), (nn.GRU, {}), (nn.RNN, {}),
                                    (nn.LSTM, {"proj_size": 1})])
def test_bidirectional_two_layer_gradcheck(cls, kw):
    ember.manual_seed(0)
    net = cls(2, 2, num_layers=2, bidirectional=True, dtype=ember.float64, **kw)
    x = randn(3, 2, 2, seed=1, requires_grad=True)

    def fn(x, *_):
        out, final = net(x)
        return (out,) + (final if isinstance(final, tuple) else (final,))
    assert gradcheck(fn, (x, *net.parameters()))


def test_packed_gradcheck_and_double_backward():
    ember.manual_seed(0)
    gru = nn.GRU(2, 2, bidirectional=True, dtype=ember.float64)
    x = randn(3, 3, 2, seed=1, requires_grad=True)
    h0 = randn(2, 3, 2, seed=2, requires_grad=True)

    def fn(x, h0, *_):
        packed = rnn_utils.pack_padded_sequence(x, [2, 3, 1], enforce_sorted=False)
        out, h = gru(packed, h0)
        return rnn_utils.pad_packed_sequence(out)[0], h
    assert gradcheck(fn, (x, h0, *gru.parameters()))
    assert gradgradcheck(fn, (x, h0))


# ---- against PyTorch ---------------------------------------------------------------
TORCH_CASES = [
    ("RNN", dict(num_layers=2, nonlinearity="relu")),
    ("RNN", dict(bidirectional=True, batch_first=True)),
    ("LSTM", dict(num_layers=2, bidirectional=True)),
    ("LSTM", dict(num_layers=3, proj_size=3, batch_first=True)),
    ("GRU", dict(num_layers=2, bidirectional=True, bias=False)),
    ("GRU", dict(batch_first=True)),
]


def _as_tuple(s):
    return s if isinstance(s, tuple) else (s,)


def _to_torch(a, grad=False):
    return torch.from_numpy(np.array(a.detach().numpy())).requires_grad_(grad)


@requires_torch
@pytest.mark.torch
@pytest.mark.parametrize("name,kw", TORCH_CASES)
@pytest.mark.parametrize("packed", [False, True])
def test_network_matches_torch(name, kw, packed):
    """Same weights (a PyTorch state_dict loaded into ember), outputs and
    the gradients of input, initial state and every parameter."""
    torch.manual_seed(0)
    ref = getattr(torch.nn, name)(4, 6, dtype=torch.float64, **kw)
    net = getattr(nn, name)(4, 6, dtype=ember.float64, **kw)
    net.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy())
                         for k, v in ref.state_dict().items()})
    assert list(net.state_dict()) == list(ref.state_dict())
    bf = kw.get("batch_first", False)
    x = randn(*((3, 5, 4) if bf else (5, 3, 4)), seed=1, requires_grad=True)
    layers = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    h0 = randn(layers, 3, kw.get("proj_size") or 6, seed=2, requires_grad=True)
    c0 = randn(layers, 3, 6, seed=3, requires_grad=True)
    tx, th0, tc0 = _to_torch(x, True), _to_torch(h0, True), _to_torch(c0, True)
    hx, thx = ((h0, c0), (th0, tc0)) if name == "LSTM" else (h0, th0)
    if packed:
        lengths = [4, 5, 2]
        out, final = net(rnn_utils.pack_padded_sequence(x, lengths, bf, False), hx)
        t_out, t_final = ref(torch.nn.utils.rnn.pack_padded_sequence(tx, lengths, bf, False),
                             thx)
        np.testing.assert_array_equal(out.batch_sizes.numpy(), t_out.batch_sizes.numpy())
        np.testing.assert_array_equal(out.sorted_indices.numpy(), t_out.sorted_indices.numpy())
        out, t_out = out.data, t_out.data
    else:
        out, final = net(x, hx)
        t_out, t_final = ref(tx, thx)
    np.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(), atol=1e-12)
    for a, b in zip(_as_tuple(final), _as_tuple(t_final)):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=1e-12)
    weights = [np.random.default_rng(9 + i).standard_normal(tuple(o.shape))
               for i, o in enumerate((out,) + _as_tuple(final))]
    outs, t_outs = (out,) + _as_tuple(final), (t_out,) + _as_tuple(t_final)
    loss = sum((o * ember.from_numpy(w)).sum() for o, w in zip(outs, weights))
    t_loss = sum((o * torch.from_numpy(w)).sum() for o, w in zip(t_outs, weights))
    loss.backward()
    t_loss.backward()
    pairs = [(x, tx), (h0, th0)] + ([(c0, tc0)] if name == "LSTM" else [])
    pairs += [(p, tp) for p, tp in zip(net.parameters(), ref.parameters())]
    for a, b in pairs:
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=1e-10)


@requires_torch
@pytest.mark.torch
@pytest.mark.parametrize("name", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cell_matches_torch(name):
    torch.manual_seed(0)
    ref = getattr(torch.nn, name)(4, 3, dtype=torch.float32)
    cell = getattr(nn, name)(4, 3)
    cell.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy())
                          for k, v in ref.state_dict().items()})
    x = randn(2, 4, seed=1).float()
    out, t_out = cell(x), ref(_to_torch(x))
    for a, b in zip(_as_tuple(out), _as_tuple(t_out)):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=1e-6)


# ---- errors ----------------------------------------------------------------------
def _l(lib, *shape):
    return lib.zeros(*shape)


ERROR_CASES = [
    ("input-size", lambda L: L.nn.LSTM(10, 20)(_l(L, 5, 3, 7)), RuntimeError,
     "input.size(-1) must be equal to input_size. Expected 10, got 7"),
    ("input-rank", lambda L: L.nn.LSTM(10, 20)(_l(L, 2, 5, 3, 10)), ValueError,
     "LSTM: Expected input to be 2D or 3D, got 4D instead"),
    ("rnn-input-rank", lambda L: L.nn.RNN(10, 20)(_l(L, 10)), ValueError,
     "RNN: Expected input to be 2D or 3D, got 1D tensor instead"),
    ("lstm-h0", lambda L: L.nn.LSTM(10, 20, 2)(_l(L, 5, 3, 10),
                                               (_l(L, 2, 2, 20), _l(L, 2, 3, 20))),
     RuntimeError, "Expected hidden[0] size (2, 3, 20), got [2, 2, 20]"),
    ("lstm-c0", lambda L: L.nn.LSTM(10, 20, 2)(_l(L, 5, 3, 10),
                                               (_l(L, 2, 3, 20), _l(L, 2, 3, 5))),
     RuntimeError, "Expected hidden[1] size (2, 3, 20), got [2, 3, 5]"),
    ("gru-h0", lambda L: L.nn.GRU(10, 20, 2)(_l(L, 5, 3, 10), _l(L, 2, 2, 20)), RuntimeError,
     "Expected hidden size (2, 3, 20), got [2, 2, 20]"),
    ("gru-h0-bidir",
     lambda L: L.nn.GRU(10, 20, bidirectional=True)(_l(L, 5, 3, 10), _l(L, 1, 3, 20)),
     RuntimeError, "Expected hidden size (2, 3, 20), got [1, 3, 20]"),
    ("unbatched-hx-rank",
     lambda L: L.nn.LSTM(10, 20)(_l(L, 5, 10), (_l(L, 1, 3, 20), _l(L, 1, 3, 20))),
     RuntimeError, "For unbatched 2-D input, hx and cx should also be 2-D but got (3-D, 3-D) "
                   "tensors"),
    ("batched-hx-rank", lambda L: L.nn.GRU(10, 20)(_l(L, 5, 3, 10), _l(L, 3, 20)),
     RuntimeError, "For batched 3-D input, hx should also be 3-D but got 2-D tensor"),
    ("empty-sequence", lambda L: L.nn.GRU(10, 20)(_l(L, 0, 3, 10)), RuntimeError,
     "Expected sequence length to be larger than 0 in RNN"),
    ("cell-input-size", lambda L: L.nn.LSTMCell(10, 20)(_l(L, 3, 7)), RuntimeError,
     "input has inconsistent input_size: got 7 expected 10"),
    ("cell-batch", lambda L: L.nn.GRUCell(10, 20)(_l(L, 3, 10), _l(L, 2, 20)), RuntimeError,
     "Input batch size 3 doesn't match hidden0 batch size 2"),
    ("cell-hidden",
     lambda L: L.nn.LSTMCell(10, 20)(_l(L, 3, 10), (_l(L, 3, 20), _l(L, 3, 5))),
     RuntimeError, "hidden1 has inconsistent hidden_size: got 5, expected 20"),
    ("cell-rank", lambda L: L.nn.GRUCell(10, 20)(_l(L, 1, 3, 10)), ValueError,
     "GRUCell: Expected input to be 1D or 2D, got 3D instead"),
    ("nonlinearity", lambda L: L.nn.RNN(3, 4, nonlinearity="sigmoid"), ValueError,
     "Unknown nonlinearity 'sigmoid'. Select from 'tanh' or 'relu'."),
    ("proj-gru", lambda L: L.nn.GRU(3, 4, proj_size=2), ValueError,
     "proj_size argument is only supported for LSTM, not RNN or GRU"),
    ("proj-size", lambda L: L.nn.LSTM(3, 4, proj_size=4), ValueError,
     "proj_size has to be smaller than hidden_size"),
    ("dropout-range", lambda L: L.nn.LSTM(3, 4, dropout=1.5), ValueError,
     "dropout should be a number in range [0, 1]"),
    ("hidden-size", lambda L: L.nn.GRU(3, 0), ValueError, "hidden_size must be greater than zero"),
    ("dtype", lambda L: L.nn.GRU(3, 4)(L.zeros(2, 1, 3, dtype=L.float64)), ValueError,
     "RNN input dtype"),
    ("unsorted", lambda L: L.nn.utils.rnn.pack_padded_sequence(_l(L, 4, 3, 2), [2, 3, 1]),
     RuntimeError, "`lengths` array must be sorted in decreasing order when `enforce_sorted` "
                   "is True. You can pass `enforce_sorted=False`"),
    ("lengths-count", lambda L: L.nn.utils.rnn.pack_padded_sequence(_l(L, 4, 3, 2), [2, 1]),
     RuntimeError, "Expected `len(lengths)` to be equal to batch_size, but got 2 "
                   "(batch_size=3)"),
    ("zero-length", lambda L: L.nn.utils.rnn.pack_padded_sequence(_l(L, 4, 3, 2), [3, 2, 0]),
     RuntimeError, "Length of all samples has to be greater than 0"),
    ("total-length", lambda L: L.nn.utils.rnn.pad_packed_sequence(
        L.nn.utils.rnn.pack_padded_sequence(_l(L, 4, 3, 2), [4, 3, 1]), total_length=2),
     ValueError, "Expected total_length to be at least the length of the longest sequence in "
                 "input, but got total_length=2 and max sequence length being 4"),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors(case):
    _, call, exc, message = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(exc) as info:
            call(ember)
    assert message in str(info.value)


@requires_torch
@pytest.mark.torch
@pytest.mark.parametrize("case", [c for c in ERROR_CASES if c[0] != "dtype"],
                         ids=[c[0] for c in ERROR_CASES if c[0] != "dtype"])
def test_errors_match_torch(case):
    _, call, exc, message = case
    import torch.nn.utils.rnn  # noqa: F401
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(exc) as info:
            call(torch)
    assert message in str(info.value)


def test_hx_of_the_wrong_kind_raises():
    with pytest.raises(TypeError, match=r"LSTM expects hx to be a tuple \(h_0, c_0\)"):
        nn.LSTM(2, 3)(ember.zeros(4, 1, 2), ember.zeros(1, 1, 3))
    with pytest.raises(TypeError, match=r"LSTMCell expects hx to be a tuple \(h_0, c_0\)"):
        nn.LSTMCell(2, 3)(ember.zeros(1, 2), (ember.zeros(1, 3), None))
    with pytest.raises(TypeError, match="GRU expects hx to be a Tensor, not tuple"):
        nn.GRU(2, 3)(ember.zeros(4, 1, 2), (ember.zeros(1, 1, 3),))


def test_malformed_packed_sequence_raises():
    gru = nn.GRU(2, 3)
    for sizes in ([1, 2], [2, 0], [2, 1]):
        bad = rnn_utils.PackedSequence(ember.zeros(4, 2), ember.tensor(sizes))
        with pytest.raises(RuntimeError, match="batch_sizes must be positive, non-increasing "
                                               "and sum to data.size"):
            gru(bad)


def test_too_long_lengths_raise():
    with pytest.raises(RuntimeError, match="at most the padded length 4"):
        rnn_utils.pack_padded_sequence(ember.zeros(4, 3, 2), [5, 3, 1])


# ---- packed-sequence utilities ------------------------------------------------------
def test_pack_pad_round_trip():
    x = randn(5, 4, 3, seed=0)
    lengths = [5, 2, 4, 1]
    for batch_first in (False, True):
        xin = x.transpose(0, 1) if batch_first else x
        packed = rnn_utils.pack_padded_sequence(xin, ember.tensor(lengths), batch_first,
                                                enforce_sorted=False)
        assert packed.batch_sizes.tolist() == [4, 3, 2, 2, 1]
        assert packed.sorted_indices.tolist() == [0, 2, 1, 3]
        assert packed.unsorted_indices.tolist() == [0, 2, 1, 3]
        # row order: step by step, longest sequence first
        np.testing.assert_array_equal(packed.data[:4].numpy(), x[0].numpy()[[0, 2, 1, 3]])
        padded, out_lengths = rnn_utils.pad_packed_sequence(packed, batch_first, -1.0, 6)
        assert out_lengths.tolist() == lengths and out_lengths.dtype == ember.int64
        padded = padded.transpose(0, 1) if batch_first else padded
        assert padded.shape == (6, 4, 3)
        for b, n in enumerate(lengths):
            np.testing.assert_array_equal(padded[:n, b].numpy(), x[:n, b].numpy())
            assert np.all(padded[n:, b].numpy() == -1.0)


def test_pack_sequence_round_trip_and_pad_sequence():
    seqs = [randn(n, 2, seed=n) for n in (2, 4, 1)]
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        rnn_utils.pack_sequence(seqs)
    packed = rnn_utils.pack_sequence(seqs, enforce_sorted=False)
    for a, b in zip(rnn_utils.unpack_sequence(packed), seqs):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    padded = rnn_utils.pad_sequence(seqs, batch_first=True, padding_value=7.0)
    assert padded.shape == (3, 4, 2)
    assert np.all(padded[0, 2:].numpy() == 7.0)
    left = rnn_utils.pad_sequence(seqs, padding_side="left")
    assert left.shape == (4, 3, 2)
    np.testing.assert_array_equal(left[2:, 0].numpy(), seqs[0].numpy())
    assert np.all(left[:2, 0].numpy() == 0)
    for a, b in zip(rnn_utils.unpad_sequence(rnn_utils.pad_sequence(seqs), [2, 4, 1]), seqs):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    with pytest.raises(RuntimeError, match="same trailing dimensions"):
        rnn_utils.pad_sequence([ember.zeros(3, 2), ember.zeros(3, 3)])
    # a sorted batch carries no permutation
    packed = rnn_utils.pack_sequence(sorted(seqs, key=len, reverse=True))
    assert packed.sorted_indices is None and packed.unsorted_indices is None


def test_packed_sequence_moves_and_gradients():
    x = randn(3, 2, 2, seed=0, requires_grad=True)
    packed = rnn_utils.pack_padded_sequence(x, [3, 2])
    assert packed.double().data.dtype == ember.float64
    assert packed.float().data.dtype == ember.float32
    assert packed.to(ember.float32).batch_sizes is packed.batch_sizes
    assert not packed.is_cuda

    def fn(x):
        p = rnn_utils.pack_padded_sequence(x, [2, 3], batch_first=True, enforce_sorted=False)
        return rnn_utils.pad_packed_sequence(p, batch_first=True, padding_value=0.5)[0]
    xb = randn(2, 3, 2, seed=1, requires_grad=True)
    assert gradcheck(fn, (xb,)) and gradgradcheck(fn, (xb,))


@requires_torch
@pytest.mark.torch
def test_pack_utilities_match_torch():
    from torch.nn.utils import rnn as trnn
    x = randn(6, 5, 3, seed=0)
    lengths = [2, 6, 6, 1, 4]
    p = rnn_utils.pack_padded_sequence(x, lengths, enforce_sorted=False)
    tp = trnn.pack_padded_sequence(_to_torch(x), lengths, enforce_sorted=False)
    np.testing.assert_array_equal(p.data.numpy(), tp.data.numpy())
    np.testing.assert_array_equal(p.batch_sizes.numpy(), tp.batch_sizes.numpy())
    np.testing.assert_array_equal(p.unsorted_indices.numpy(), tp.unsorted_indices.numpy())
    a, la = rnn_utils.pad_packed_sequence(p, True, 2.0, 8)
    b, lb = trnn.pad_packed_sequence(tp, True, 2.0, 8)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(la.numpy(), lb.numpy())
    seqs = [randn(n, 2, seed=n) for n in (3, 1, 2)]
    np.testing.assert_array_equal(
        rnn_utils.pad_sequence(seqs, True, 1.5, "left").numpy(),
        trnn.pad_sequence([_to_torch(s) for s in seqs], True, 1.5, "left").numpy())


@requires_torch
@pytest.mark.torch
def test_torch_state_dict_loads_and_runs_float32():
    torch.manual_seed(3)
    ref = torch.nn.LSTM(5, 7, num_layers=2, bidirectional=True, batch_first=True)
    net = nn.LSTM(5, 7, num_layers=2, bidirectional=True, batch_first=True)
    net.load_state_dict({k: ember.from_numpy(v.numpy().copy())
                         for k, v in ref.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((4, 6, 5)).astype(np.float32)
    out, (h, c) = net(ember.from_numpy(x))
    t_out, (th, tc) = ref(torch.from_numpy(x))
    np.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(), atol=1e-5)
    np.testing.assert_allclose(c.detach().numpy(), tc.detach().numpy(), atol=1e-5)
