"""ember.nn on libTHNN against torch.nn:

- conv2d forward+backward: 64x1x28x28 with 20x1x5x5 (LeNet's first layer)
  and 8x64x56x56 with 64x64x3x3, padding 1 (a ResNet stage);
- a LeNet training step (batch 64, SGD with momentum): zero_grad, forward,
  cross-entropy, backward, step;
- an MLP 784-512-512-10 training step (batch 128, SGD with momentum);
- the word language model's training step (PyTorch's example, 10000
  tokens, batch 20, bptt 35): 2-layer LSTM with hidden 200 and 650, and the
  TransformerEncoder model (d_model 200, 2 heads, 2 layers, ff 200, causal
  mask): embedding, model, linear decoder, cross-entropy, backward,
  clip_grad_norm_(0.25) and the plain SGD update, the hidden state carried
  (detached) from step to step.

Both libraries start from the same weights and inputs (NumPy arrays), so
the conv rows check Ember's forward result against PyTorch's.  NumPy has no
form of these workloads.
"""
from __future__ import annotations

import numpy as np

from timing import Stmt

from . import Case, Unsupported

FAMILY = "nn"


def _front(lib, mod):
    if lib == "numpy":
        raise Unsupported("NumPy has no autograd or nn")
    if lib == "torch":
        return mod, mod.nn, mod.nn.functional
    try:
        import ember
        import ember.nn as nn
        import ember.nn.functional as F
    except ImportError as e:
        raise Unsupported(f"ember.nn is not installed ({e})")
    ember.set_num_threads(mod.get_num_threads())
    return ember, nn, F


def _arrays(seed, *shapes):
    g = np.random.default_rng(seed)
    return [g.standard_normal(s).astype(np.float32) for s in shapes]


def _conv(n, c, hw, o, k, pad):
    def make(lib, mod):
        m, _, F = _front(lib, mod)
        x, w, b = (m.from_numpy(a) for a in _arrays(0, (n, c, hw, hw), (o, c, k, k), (o,)))
        x.requires_grad_(True)
        w.requires_grad_(True)
        b.requires_grad_(True)
        g = {"F": F, "x": x, "w": w, "b": b}
        return Stmt(f"F.conv2d(x, w, b, padding={pad}).sum().backward()", g,
                    result=f"F.conv2d(x, w, b, padding={pad}).detach()")
    return make


def _copy_weights(model, m, seed):
    """The same initial weights in both libraries."""
    g = np.random.default_rng(seed)
    with m.no_grad():
        for p in model.parameters():
            bound = 1.0 / np.sqrt(max(1, p[0].numel() if p.dim() > 1 else p.numel()))
            p.copy_(m.from_numpy(g.uniform(-bound, bound, tuple(p.shape)).astype(np.float32)))


def _step_stmt(m, F, model, x, y):
    opt = m.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def step():
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    return Stmt("step()", {"step": step})


def lenet(nn):
    """The LeNet of the training-step workloads (bench/gpu.py times it too)."""
    return nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))


def _lenet(lib, mod):
    m, nn, F = _front(lib, mod)
    model = lenet(nn)
    _copy_weights(model, m, 1)
    (x,) = _arrays(2, (64, 1, 28, 28))
    y = np.random.default_rng(3).integers(0, 10, 64)
    return _step_stmt(m, F, model, m.from_numpy(x), m.from_numpy(y))


def _mlp(lib, mod):
    m, nn, F = _front(lib, mod)
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))
    _copy_weights(model, m, 1)
    (x,) = _arrays(2, (128, 784))
    y = np.random.default_rng(3).integers(0, 10, 128)
    return _step_stmt(m, F, model, m.from_numpy(x), m.from_numpy(y))


def _lm_data(m, ntokens, bptt, batch):
    g = np.random.default_rng(4)
    x = g.integers(0, ntokens, (bptt, batch))
    y = g.integers(0, ntokens, (bptt * batch,))
    return m.from_numpy(x), m.from_numpy(y)


def _lm_update(m, nn, model, loss, lr=20.0):
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 0.25)
    with m.no_grad():
        for p in model.parameters():
            p.add_(p.grad, alpha=-lr)


def _lstm_lm(ntokens, hidden, bptt, batch, dropout):
    def make(lib, mod):
        m, nn, F = _front(lib, mod)
        enc, rnn = nn.Embedding(ntokens, hidden), nn.LSTM(hidden, hidden, 2, dropout=dropout)
        dec, drop = nn.Linear(hidden, ntokens), nn.Dropout(dropout)
        model = nn.ModuleList([enc, rnn, dec])
        _copy_weights(model, m, 1)
        x, y = _lm_data(m, ntokens, bptt, batch)
        state = [tuple(m.zeros(2, batch, hidden) for _ in range(2))]

        def step():
            model.zero_grad()
            hidden_state = tuple(h.detach() for h in state[0])
            out, state[0] = rnn(drop(enc(x)), hidden_state)
            logits = dec(drop(out)).view(-1, ntokens)
            _lm_update(m, nn, model, F.cross_entropy(logits, y))
        return Stmt("step()", {"step": step})
    return make


def _transformer_lm(ntokens, d_model, heads, ff, layers, bptt, batch, dropout):
    def make(lib, mod):
        m, nn, F = _front(lib, mod)
        enc = nn.Embedding(ntokens, d_model)
        body = nn.TransformerEncoder(nn.TransformerEncoderLayer(d_model, heads, ff, dropout),
                                     layers)
        dec, drop = nn.Linear(d_model, ntokens), nn.Dropout(dropout)
        model = nn.ModuleList([enc, body, dec])
        _copy_weights(model, m, 1)
        x, y = _lm_data(m, ntokens, bptt, batch)
        pos = np.arange(bptt)[:, None] / np.power(10000.0, np.arange(0, d_model, 2) / d_model)
        pe = np.zeros((bptt, 1, d_model), np.float32)
        pe[:, 0, 0::2], pe[:, 0, 1::2] = np.sin(pos), np.cos(pos)
        pe = m.from_numpy(pe)
        mask = nn.Transformer.generate_square_subsequent_mask(bptt)
        scale = float(np.sqrt(d_model))

        def step():
            model.zero_grad()
            h = drop(enc(x) * scale + pe)
            logits = dec(body(h, mask)).view(-1, ntokens)
            _lm_update(m, nn, model, F.nll_loss(F.log_softmax(logits, -1), y))
        return Stmt("step()", {"step": step})
    return make


def cases(scale: str = "full") -> list[Case]:
    if scale == "smoke":
        small, big = (4, 1, 12, 3, 3, 0), (2, 4, 8, 4, 3, 1)
    else:
        small, big = (64, 1, 28, 20, 5, 0), (8, 64, 56, 64, 3, 1)
    name = "conv2d fwd+bwd {0}x{1}x{2}x{2} * {3}x{1}x{4}x{4} pad {5}"
    lm = (10000, 35, 20) if scale != "smoke" else (50, 5, 3)
    small_h, big_h, tf = (200, 650, (200, 2, 200, 2)) if scale != "smoke" else \
        (8, 12, (8, 2, 8, 2))
    ntok, bptt, batch = lm
    lm_name = f"{{}} LM training step ({ntok} tokens, batch {batch}, bptt {bptt})"
    return [
        Case(FAMILY, name.format(*small), "ms/op", _conv(*small), rtol=1e-4, atol=1e-4),
        Case(FAMILY, name.format(*big), "ms/op", _conv(*big), rtol=1e-4, atol=1e-3),
        Case(FAMILY, "LeNet training step (batch 64, SGD momentum)", "ms/op", _lenet),
        Case(FAMILY, "MLP 784-512-512-10 training step (batch 128)", "ms/op", _mlp),
        Case(FAMILY, lm_name.format(f"2-layer LSTM {small_h}"), "ms/op",
             _lstm_lm(ntok, small_h, bptt, batch, 0.2)),
        Case(FAMILY, lm_name.format(f"2-layer LSTM {big_h}"), "ms/op",
             _lstm_lm(ntok, big_h, bptt, batch, 0.5)),
        Case(FAMILY, lm_name.format("TransformerEncoder d{} h{} ff{} x{}".format(*tf)), "ms/op",
             _transformer_lm(ntok, *tf, bptt, batch, 0.2)),
    ]
