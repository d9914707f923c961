"""The recurrent layers on fused cell kernels (one autograd node per layer
and direction): against the composed per-step form and PyTorch, gradcheck
and double backward, the graph's shape, and the cases that stay composed."""
import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.autograd import gradcheck, gradgradcheck
from ember.nn import _rnn_fused
from ember.nn.utils import rnn as rnn_utils

from conftest import requires_torch, torch

MODES = ["LSTM", "GRU", "RNN_TANH", "RNN_RELU"]
GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def tensors(mode, T, B, H, dtype, seed=0, bias=True):
    g = np.random.default_rng(seed)

    def t(*shape):
        return ember.from_numpy(g.standard_normal(shape) * 0.5).to(dtype).requires_grad_(True)
    G = GATES[mode] * H
    xp, h0, w = t(T * B, G), t(B, H), t(G, H)
    c0 = t(B, H) if mode == "LSTM" else None
    b = t(G) if mode == "GRU" and bias else None
    return xp, h0, c0, w, b


def kernels(mode, *args):
    k = _rnn_fused.kernels_for(mode, *args)
    if k is None:
        pytest.skip("no kernel package with fused recurrent cells installed")
    return k


def graph_nodes(t):
    seen, todo = [], [t.grad_fn]
    while todo:
        n = todo.pop()
        if n is None or any(n is s for s in seen):
            continue
        seen.append(n)
        todo.extend(e[0] for e in n.next_functions)
    return [type(n).__name__ for n in seen]


def packed_tensors(mode, sizes, H, dtype, seed=0):
    """tensors() for a packed batch: sum(sizes) rows of projected input."""
    xp, h0, c0, w, b = tensors(mode, 1, sum(sizes), H, dtype, seed)
    B = sizes[0]
    cut = (lambda t: t.detach()[:B].clone().requires_grad_(True))
    return xp, cut(h0), None if c0 is None else cut(c0), w, b


@pytest.mark.parametrize("dtype,tol", [(ember.float64, 1e-12), (ember.float32, 2e-5)])
@pytest.mark.parametrize("sizes", [3, [3, 3, 2, 2, 1], [4, 1]])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("mode", MODES)
def test_layer_matches_composed(mode, reverse, sizes, dtype, tol):
    T, H = 5, 4
    args = tensors(mode, T, sizes, H, dtype) if isinstance(sizes, int) else \
        packed_tensors(mode, sizes, H, dtype)
    k = kernels(mode, *args)
    fused = [o for o in _rnn_fused.layer(k, mode, *args, sizes, reverse) if o is not None]
    composed = _rnn_fused.compose(mode, *args, sizes, reverse)
    assert len(fused) == len(composed)
    g = np.random.default_rng(1)
    grads = [ember.from_numpy(g.standard_normal(tuple(o.shape))).to(dtype) for o in fused]
    inputs = [a for a in args if a is not None]
    got = ember.autograd.grad(fused, inputs, grads, retain_graph=True)
    want = ember.autograd.grad(composed, inputs, grads, retain_graph=True)
    for a, b in zip(fused, composed):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=tol, rtol=tol)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=tol * 10, rtol=tol * 10)
    # only the final state's gradient, and only the output's
    for keep in (0, 1):
        got = ember.autograd.grad(fused[keep], inputs, grads[keep], retain_graph=True)
        want = ember.autograd.grad(composed[keep], inputs, grads[keep], retain_graph=True)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a.numpy(), b.numpy(), atol=tol * 10, rtol=tol * 10)


@pytest.mark.parametrize("sizes", [2, [3, 2, 1]])
@pytest.mark.parametrize("mode", MODES)
def test_layer_gradcheck_and_gradgradcheck(mode, sizes):
    T, B, H = 3, sizes, 2
    args = tensors(mode, T, B, H, ember.float64, seed=2) if isinstance(sizes, int) else \
        packed_tensors(mode, sizes, H, ember.float64, seed=2)
    k = kernels(mode, *args)
    present = [i for i, a in enumerate(args) if a is not None]

    def f(*xs):
        full = list(args)
        for i, x in zip(present, xs):
            full[i] = x
        return tuple(o for o in _rnn_fused.layer(k, mode, *full, B, True) if o is not None)
    xs = [args[i] for i in present]
    assert gradcheck(f, xs)
    assert gradgradcheck(f, xs)


@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
def test_module_is_one_node_per_layer_and_direction(cls):
    m = getattr(nn, cls)(3, 4, num_layers=2, bidirectional=True)
    x = ember.randn(6, 2, 3)
    if _rnn_fused.kernels_for(m.mode, x, ember.zeros(2, 4), ember.zeros(2, 4) if cls == "LSTM"
                              else None, m.weight_hh_l0, None) is None:
        pytest.skip("no fused kernels")
    out, _ = m(x)
    names = graph_nodes(out)
    layer = {"LSTM": "LstmLayerBackward0", "GRU": "GruLayerBackward0"}.get(cls, "RnnLayerBackward0")
    assert names.count(layer) == 4
    assert len(names) < 40  # no per-step nodes
    # cells: one node per call
    cell = getattr(nn, cls + "Cell")(3, 4)
    h = cell(ember.randn(2, 3))
    h = h[0] if isinstance(h, tuple) else h
    assert type(h.grad_fn).__name__ == layer


@requires_torch
@pytest.mark.parametrize("dtype,tol", [("float64", 1e-10), ("float32", 1e-4)])
@pytest.mark.parametrize("name,kw", [("LSTM", {}), ("GRU", {}), ("RNN", {}),
                                     ("RNN", {"nonlinearity": "relu"}),
                                     ("LSTM", {"batch_first": True, "bias": False})])
def test_bidirectional_two_layers_match_torch(name, kw, dtype, tol):
    torch.manual_seed(0)
    tm = getattr(torch.nn, name)(5, 6, num_layers=2, bidirectional=True,
                                 dtype=getattr(torch, dtype), **kw)
    em = getattr(nn, name)(5, 6, num_layers=2, bidirectional=True,
                           dtype=getattr(ember, dtype), **kw)
    em.load_state_dict({k: ember.from_numpy(v.detach().numpy()) for k, v in tm.state_dict().items()})
    g = np.random.default_rng(3)
    x = g.standard_normal((4, 7, 5) if kw.get("batch_first") else (7, 4, 5)).astype(dtype)
    h = [g.standard_normal((4, 4, 6)).astype(dtype) for _ in range(2 if name == "LSTM" else 1)]
    xt, xe = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
    ht = [torch.tensor(a, requires_grad=True) for a in h]
    he = [ember.tensor(a, requires_grad=True) for a in h]
    ot, st = tm(xt, tuple(ht) if name == "LSTM" else ht[0])
    oe, se = em(xe, tuple(he) if name == "LSTM" else he[0])
    st = st if isinstance(st, tuple) else (st,)
    se = se if isinstance(se, tuple) else (se,)
    w = [g.standard_normal(tuple(o.shape)).astype(dtype) for o in (ot,) + st]
    sum((o * torch.tensor(a)).sum() for o, a in zip((ot,) + st, w)).backward()
    sum((o * ember.tensor(a)).sum() for o, a in zip((oe,) + se, w)).backward()
    for a, b in zip((oe,) + se, (ot,) + st):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=tol, rtol=tol)
    for a, b in [(xe, xt)] + list(zip(he, ht)):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=tol, rtol=tol)
    for n, p in tm.named_parameters():
        np.testing.assert_allclose(getattr(em, n).grad.numpy(), p.grad.numpy(), atol=tol,
                                   rtol=tol, err_msg=n)


@requires_torch
@pytest.mark.parametrize("name", ["LSTMCell", "GRUCell", "RNNCell"])
def test_cells_match_torch_with_gradients(name):
    torch.manual_seed(1)
    tm = getattr(torch.nn, name)(3, 5, dtype=torch.float64)
    em = getattr(nn, name)(3, 5, dtype=ember.float64)
    em.load_state_dict({k: ember.from_numpy(v.detach().numpy()) for k, v in tm.state_dict().items()})
    x = np.random.default_rng(4).standard_normal((2, 3))
    xt, xe = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
    ot, oe = tm(xt), em(xe)
    ot = ot if isinstance(ot, tuple) else (ot,)
    oe = oe if isinstance(oe, tuple) else (oe,)
    sum(o.square().sum() for o in ot).backward()
    sum(o.square().sum() for o in oe).backward()
    for a, b in zip(oe, ot):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), atol=1e-12)
    for n, p in tm.named_parameters():
        np.testing.assert_allclose(getattr(em, n).grad.numpy(), p.grad.numpy(), atol=1e-12)


def test_module_double_backward():
    m = nn.LSTM(2, 3, num_layers=2, bidirectional=True, dtype=ember.float64)
    x = ember.randn(3, 2, 2, dtype=ember.float64, requires_grad=True)
    assert gradgradcheck(lambda x: m(x)[0], [x])


@pytest.mark.parametrize("cls", ["GRU", "LSTM"])
def test_packed_sequences_of_different_lengths(cls):
    """The same results as each sequence run alone, on the fused node."""
    m = getattr(nn, cls)(2, 3, num_layers=2, bidirectional=True, dtype=ember.float64)
    seqs = [ember.randn(n, 2, dtype=ember.float64) for n in (4, 2, 3)]
    packed = rnn_utils.pack_sequence(seqs, enforce_sorted=False)
    out, h = m(packed)
    if cls == "LSTM":
        h = h[0]
    names = graph_nodes(out.data)
    assert "LstmLayerBackward0" in names or "GruLayerBackward0" in names
    padded, lengths = rnn_utils.pad_packed_sequence(out)
    for i, s in enumerate(seqs):
        o1, h1 = m(s.unsqueeze(1))
        h1 = h1[0] if cls == "LSTM" else h1
        np.testing.assert_allclose(padded[:lengths[i], i].detach().numpy(),
                                   o1[:, 0].detach().numpy(), atol=1e-12)
        np.testing.assert_allclose(h[:, i].detach().numpy(), h1[:, 0].detach().numpy(),
                                   atol=1e-12)


def test_output_modified_in_place_refuses_backward():
    m = nn.RNN(2, 3)
    out, _ = m(ember.randn(4, 1, 2))
    if "RnnLayerBackward0" not in graph_nodes(out):
        pytest.skip("no fused kernels")
    out.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_no_grad_records_nothing_and_float16_stays_composed():
    m = nn.LSTM(2, 3)
    with ember.no_grad():
        out, (h, c) = m(ember.randn(4, 2, 2))
    assert out.grad_fn is None and h.grad_fn is None
    x = ember.randn(4, 2, 2).half()
    assert _rnn_fused.kernels_for("LSTM", x.reshape(8, 2), x[0], x[0], x[0], None) is None
