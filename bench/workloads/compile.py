"""ember.compile against eager evaluation and torch.compile (inductor, CPU),
forward only (no tensor requires grad):

- GELU-tanh over 2^24 float32 written as element-wise ops
  (0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))): 9 ops, GB/s = 8 bytes
  per element (one read, one write) / time.
- the LSTM cell's pointwise part on gates (64, 4*512) and c (64, 512):
  sigmoid/tanh of the four gates, the new c and h: ms/op.
- LayerNorm of (4096, 1024) written as ops (mean, centre, variance,
  normalise, scale and shift): ms/op; its fused groups end in reductions.
- a Transformer MLP block forward and backward: x (8*128, 256) ->
  linear 1024 -> GELU written as ops (tanh form) -> linear 256, plus the
  residual, `.sum().backward()` (weights require grad): ms/op.
- softmax + NLL of (4096, 1000) logits written as ops (max, centre,
  exp-sum, log, gather, mean) against class indices: ms/op, forward.
- a Transformer encoder layer (d 256, 4 heads, ff 1024, no dropout,
  batch-first) forward and backward on (8, 128, 256): `nn.TransformerEncoderLayer`
  itself, `.sum().backward()`: ms/op.
- an AdamW step (weight decay 1e-2) over parameters of ResNet-18's shapes
  (11.7 M floats, 62 tensors) with fixed gradients: `fused=False` (the eager
  rows) against `fused=True` (the compiled rows; Ember: one generated
  kernel, PyTorch: its fused CPU AdamW): ms/op; the result checked is the
  first parameter after the timed steps.

Each workload has an eager row (Ember, PyTorch, NumPy where it can) and a
compiled row (ember.compile, torch.compile; the first call, which traces and
compiles, is the harness's warm-up and is not timed).  At smoke scale the
compiled rows run Ember only: torch.compile's first compile takes tens of
seconds on this machine.
"""
from __future__ import annotations

import numpy as np

from timing import Stmt

from . import Case, Unsupported

FAMILY = "compile"
SIZES = {"full": {"elems": 1 << 24, "batch": 64, "hidden": 512, "rows": 4096, "width": 1024,
                  "shapes": "resnet18"},
         "smoke": {"elems": 1 << 10, "batch": 4, "hidden": 8, "rows": 8, "width": 16,
                   "shapes": [(8, 3, 3, 3), (8,), (4, 8)]}}
_scale = "full"


def _program(lib, mod):
    """(gelu, lstm_cell) written with `mod`'s element-wise functions, looked
    up at each call (ember.compile's tracer sees ember.tanh, not a function
    object taken before compiling)."""
    if lib == "numpy":
        class mod:  # noqa: N801 - NumPy under the names the others use
            tanh = staticmethod(np.tanh)

            @staticmethod
            def sigmoid(v):
                return 1.0 / (1.0 + np.exp(-v))

    def gelu(x):
        return 0.5 * x * (1.0 + mod.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))

    def cell(i, f, g, o, c):
        c2 = mod.sigmoid(f) * c + mod.sigmoid(i) * mod.tanh(g)
        return mod.sigmoid(o) * mod.tanh(c2)
    return gelu, cell


def _layer_norm_program(lib, mod):
    if lib == "numpy":
        def layer_norm(x, w, b):
            mu = x.mean(-1, keepdims=True)
            xc = x - mu
            var = (xc * xc).mean(-1, keepdims=True)
            return xc / np.sqrt(var + 1e-5) * w + b
        return layer_norm

    def layer_norm(x, w, b):
        mu = x.mean(-1, keepdim=True)
        xc = x - mu
        var = (xc * xc).mean(-1, keepdim=True)
        return xc / mod.sqrt(var + 1e-5) * w + b
    return layer_norm


def _module(lib, mod):
    if lib == "ember":
        import ember
        ember.set_num_threads(mod.get_num_threads())
        return ember
    return mod


def _array(lib, m, x):
    if lib == "numpy":
        return x.copy()
    return m.tensor(x)


def _gelu(compiled, lib, mod):
    n = SIZES[_scale]["elems"]
    m = _module(lib, mod)
    x = _array(lib, m, np.random.default_rng(3).standard_normal(n, dtype=np.float32))
    gelu, _ = _program(lib, m)
    if compiled:
        gelu = _compile(lib, m, gelu)
    return Stmt("f(x)", {"f": gelu, "x": x}, result="f(x)")


def _lstm(compiled, lib, mod):
    b, h = SIZES[_scale]["batch"], SIZES[_scale]["hidden"]
    m = _module(lib, mod)
    rng = np.random.default_rng(4)
    gates = [_array(lib, m, rng.standard_normal((b, h), dtype=np.float32)) for _ in range(4)]
    c = _array(lib, m, rng.standard_normal((b, h), dtype=np.float32))
    _, cell = _program(lib, m)
    if compiled:
        cell = _compile(lib, m, cell)
    return Stmt("f(i, fg, g, o, c)", {"f": cell, "i": gates[0], "fg": gates[1], "g": gates[2],
                                      "o": gates[3], "c": c}, result="f(i, fg, g, o, c)")


def _layer_norm(compiled, lib, mod):
    r, d = SIZES[_scale]["rows"], SIZES[_scale]["width"]
    m = _module(lib, mod)
    rng = np.random.default_rng(5)
    x, w, b = (_array(lib, m, rng.standard_normal(shape, dtype=np.float32))
               for shape in ((r, d), (d,), (d,)))
    fn = _layer_norm_program(lib, m)
    if compiled:
        fn = _compile(lib, m, fn)
    return Stmt("f(x, w, b)", {"f": fn, "x": x, "w": w, "b": b}, result="f(x, w, b)")


def _mlp_block(compiled, lib, mod):
    if lib == "numpy":
        raise Unsupported("NumPy has no autograd")
    m = _module(lib, mod)
    rows, d, ff = (1024, 256, 1024) if _scale == "full" else (8, 8, 16)
    rng = np.random.default_rng(7)

    def param(*shape):
        return m.tensor(rng.standard_normal(shape, dtype=np.float32) * 0.05).requires_grad_()
    w1, b1, w2, b2 = param(d, ff), param(ff), param(ff, d), param(d)
    x = m.tensor(rng.standard_normal((rows, d), dtype=np.float32))
    gelu, _ = _program(lib, m)

    def block(x):
        return x + gelu(x @ w1 + b1) @ w2 + b2
    if compiled:
        block = _compile(lib, m, block)
    return Stmt("block(x).sum().backward()", {"block": block, "x": x},
                result="block(x).detach()")


def _softmax_nll(compiled, lib, mod):
    if lib == "numpy":
        raise Unsupported("NumPy has no gather-by-index loss of this form")
    r, c = (4096, 1000) if _scale == "full" else (8, 10)
    m = _module(lib, mod)
    rng = np.random.default_rng(8)
    x = m.tensor(rng.standard_normal((r, c), dtype=np.float32))
    y = m.tensor(rng.integers(0, c, r))

    def nll(x, y):
        z = x - x.amax(-1, keepdim=True)
        logp = z - m.exp(z).sum(-1, keepdim=True).log()
        return -logp.gather(1, y.unsqueeze(1)).mean()
    if compiled:
        nll = _compile(lib, m, nll)
    return Stmt("f(x, y)", {"f": nll, "x": x, "y": y}, result="f(x, y)")


def _encoder_layer(compiled, lib, mod):
    if lib == "numpy":
        raise Unsupported("NumPy has no autograd")
    m = _module(lib, mod)
    b, t, d = (8, 128, 256) if _scale == "full" else (2, 4, 8)
    m.manual_seed(9)
    layer = m.nn.TransformerEncoderLayer(d, 4, 4 * d, dropout=0.0, batch_first=True)
    rng = np.random.default_rng(9)
    with m.no_grad():   # the same weights in every library
        for p in layer.parameters():
            p.copy_(m.tensor(rng.standard_normal(tuple(p.shape), dtype=np.float32) * 0.05))
    x = m.tensor(rng.standard_normal((b, t, d), dtype=np.float32))
    f = _compile(lib, m, layer) if compiled else layer
    return Stmt("f(x).sum().backward()", {"f": f, "x": x}, result="f(x).detach()")


def _param_shapes():
    shapes = SIZES[_scale]["shapes"]
    if shapes != "resnet18":
        return shapes
    try:
        from ember.vision import models
    except ImportError as e:
        raise Unsupported(f"ember-vision (ResNet-18's shapes) is not installed ({e})")
    return [tuple(p.shape) for p in models.resnet18().parameters()]


def _adamw(fused, lib, mod):
    if lib == "numpy":
        raise Unsupported("NumPy has no optimizers")
    m = _module(lib, mod)
    rng = np.random.default_rng(6)
    params, grads = [], []
    for shape in _param_shapes():
        p = m.tensor(rng.standard_normal(shape, dtype=np.float32)).requires_grad_()
        p.grad = m.tensor(rng.standard_normal(shape, dtype=np.float32))
        params.append(p)
    opt = m.optim.AdamW(params, lr=1e-3, weight_decay=1e-2, fused=fused)
    return Stmt("opt.step()", {"opt": opt, "p": params[0]}, result="p.detach()")


def _compile(lib, m, fn):
    if lib == "numpy":
        raise Unsupported("NumPy has no compiler")
    if lib == "torch":
        if _scale == "smoke":
            raise Unsupported("torch.compile is not run at smoke scale (its first compile "
                              "takes tens of seconds)")
        return m.compile(fn)
    return m.compile(fn)


def cases(scale: str = "full") -> list[Case]:
    global _scale
    _scale = scale
    n = SIZES[scale]["elems"]
    return [
        Case(FAMILY, "GELU-tanh ops 2^24, eager", "GB/s", lambda lib, mod: _gelu(False, lib, mod),
             work=8 * n, rtol=1e-5, atol=1e-6),
        Case(FAMILY, "GELU-tanh ops 2^24, compiled", "GB/s",
             lambda lib, mod: _gelu(True, lib, mod), work=8 * n, rtol=1e-5, atol=1e-6),
        Case(FAMILY, "LSTM cell pointwise (64x512), eager", "ms/op",
             lambda lib, mod: _lstm(False, lib, mod), rtol=1e-5, atol=1e-6),
        Case(FAMILY, "LSTM cell pointwise (64x512), compiled", "ms/op",
             lambda lib, mod: _lstm(True, lib, mod), rtol=1e-5, atol=1e-6),
        Case(FAMILY, "LayerNorm ops (4096x1024), eager", "ms/op",
             lambda lib, mod: _layer_norm(False, lib, mod), rtol=1e-4, atol=1e-5),
        Case(FAMILY, "LayerNorm ops (4096x1024), compiled", "ms/op",
             lambda lib, mod: _layer_norm(True, lib, mod), rtol=1e-4, atol=1e-5),
        Case(FAMILY, "Transformer MLP block fwd+bwd (1024x256, ff 1024), eager", "ms/op",
             lambda lib, mod: _mlp_block(False, lib, mod), rtol=1e-4, atol=1e-4),
        Case(FAMILY, "Transformer MLP block fwd+bwd (1024x256, ff 1024), compiled", "ms/op",
             lambda lib, mod: _mlp_block(True, lib, mod), rtol=1e-4, atol=1e-4),
        Case(FAMILY, "softmax+NLL ops (4096x1000), eager", "ms/op",
             lambda lib, mod: _softmax_nll(False, lib, mod), rtol=1e-4, atol=1e-5),
        Case(FAMILY, "softmax+NLL ops (4096x1000), compiled", "ms/op",
             lambda lib, mod: _softmax_nll(True, lib, mod), rtol=1e-4, atol=1e-5),
        Case(FAMILY, "Transformer encoder layer fwd+bwd (8x128x256), eager", "ms/op",
             lambda lib, mod: _encoder_layer(False, lib, mod), rtol=1e-3, atol=1e-4),
        Case(FAMILY, "Transformer encoder layer fwd+bwd (8x128x256), compiled", "ms/op",
             lambda lib, mod: _encoder_layer(True, lib, mod), rtol=1e-3, atol=1e-4),
        # the checked value drifts with the number of steps each library
        # took (calibration): a loose check that both updated the same way
        Case(FAMILY, "AdamW step (ResNet-18 parameters), eager", "ms/op",
             lambda lib, mod: _adamw(False, lib, mod), rtol=0.5, atol=0.5),
        Case(FAMILY, "AdamW step (ResNet-18 parameters), fused", "ms/op",
             lambda lib, mod: _adamw(True, lib, mod), rtol=0.5, atol=0.5),
    ]
