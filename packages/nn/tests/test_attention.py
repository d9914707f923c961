"""Attention: scaled_dot_product_attention and MultiheadAttention against a
NumPy float64 reference and PyTorch (same weights), the Transformer
encoder, decoder and encoder-decoder against PyTorch, gradcheck, masks,
dropout and errors."""
import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck

from conftest import requires_torch, torch


def randn(*shape, seed=0, requires_grad=False):
    a = np.random.default_rng(seed).standard_normal(shape)
    return ember.from_numpy(a).requires_grad_(requires_grad)


def np_sdpa(q, k, v, mask=None, causal=False, scale=None):
    """Returns (output, weights); rows that mask every key give zeros."""
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    m = s.max(-1, keepdims=True)
    dead = np.isneginf(m)
    e = np.exp(s - np.where(dead, 0, m))
    w = np.where(dead, 0, e / np.where(dead, 1, e.sum(-1, keepdims=True)))
    return w @ v, w


def np_mha(query, key, value, p, heads, kpm=None, attn_mask=None):
    """Sequence-first (L, N, E) multi-head attention with packed in_proj."""
    w_q, w_k, w_v = np.split(p["in_proj_weight"], 3)
    b_q, b_k, b_v = np.split(p["in_proj_bias"], 3)
    L, N, E = query.shape
    S, hd = key.shape[0], E // heads

    def split(x, w, b):  # (len, N, E) -> (N, heads, len, hd)
        y = x @ w.T + b
        return y.reshape(len(x), N, heads, hd).transpose(1, 2, 0, 3)
    q, k, v = split(query, w_q, b_q), split(key, w_k, b_k), split(value, w_v, b_v)
    mask = np.zeros((N, 1, L, S))
    if kpm is not None:
        mask = mask + np.where(kpm, -np.inf, 0)[:, None, None, :]
    if attn_mask is not None:
        mask = mask + np.where(attn_mask, -np.inf, 0)
    out, w = np_sdpa(q, k, v, mask)
    out = out.transpose(2, 0, 1, 3).reshape(L, N, E) @ p["out_proj.weight"].T
    return out + p["out_proj.bias"], w.mean(1)


def numpy_of(t):
    return t.detach().numpy()


# ---- scaled_dot_product_attention ---------------------------------------------------
SDPA_CASES = [
    ("plain", {}),
    ("bool-mask", {"mask": "bool"}),
    ("float-mask", {"mask": "float"}),
    ("causal", {"causal": True}),
    ("scale", {"scale": 0.3}),
    ("dead-row", {"mask": "dead"}),
]


def _mask(kind, L, S, seed=5):
    rng = np.random.default_rng(seed)
    if kind == "bool":
        m = rng.random((L, S)) > 0.4
        m[:, 0] = True  # every query keeps a key
        return m
    if kind == "float":
        return rng.standard_normal((L, S))
    if kind == "dead":
        m = rng.random((L, S)) > 0.4
        m[:, 0] = True
        m[1] = False  # query 1 may attend to nothing
        return m
    return None


@pytest.mark.parametrize("name,case", SDPA_CASES, ids=[c[0] for c in SDPA_CASES])
def test_sdpa_matches_numpy(name, case):
    q, k, v = randn(2, 3, 4, 8, seed=1), randn(2, 3, 5, 8, seed=2), randn(2, 3, 5, 6, seed=3)
    mask = _mask(case.get("mask"), 4, 5)
    out = F.scaled_dot_product_attention(
        q, k, v, None if mask is None else ember.from_numpy(mask),
        is_causal=case.get("causal", False), scale=case.get("scale"))
    ref, _ = np_sdpa(q.numpy(), k.numpy(), v.numpy(), mask, case.get("causal", False),
                     case.get("scale"))
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12, atol=1e-12)
    if name == "dead-row":
        assert np.all(out.numpy()[:, :, 1] == 0)


def test_sdpa_broadcast_noncontiguous_unbatched_and_gqa():
    q = randn(3, 4, 2, 8, seed=1).permute(2, 0, 1, 3)  # (2, 3, 4, 8), non-contiguous
    k = randn(1, 5, 8, seed=2)                         # batch dims broadcast
    v = randn(1, 5, 6, seed=3)
    mask = randn(2, 1, 4, 5, seed=4)
    out = F.scaled_dot_product_attention(q, k, v, mask)
    ref, _ = np_sdpa(q.numpy(), k.numpy(), v.numpy(), mask.numpy())
    assert out.shape == (2, 3, 4, 6)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12, atol=1e-12)
    out2 = F.scaled_dot_product_attention(q[0, 0], k[0], v[0])  # plain (L, E) matrices
    np.testing.assert_allclose(out2.numpy(), np_sdpa(q.numpy()[0, 0], k.numpy()[0],
                                                     v.numpy()[0])[0], atol=1e-12)
    # grouped-query attention: 4 query heads share 2 key/value heads
    q, k, v = randn(2, 4, 3, 8, seed=5), randn(2, 2, 5, 8, seed=6), randn(2, 2, 5, 8, seed=7)
    out = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    ref, _ = np_sdpa(q.numpy(), np.repeat(k.numpy(), 2, 1), np.repeat(v.numpy(), 2, 1))
    np.testing.assert_allclose(out.numpy(), ref, atol=1e-12)
    empty = F.scaled_dot_product_attention(randn(2, 0, 8), randn(2, 5, 8), randn(2, 5, 3))
    assert empty.shape == (2, 0, 3)
    no_keys = F.scaled_dot_product_attention(randn(2, 3, 8), randn(2, 0, 8), randn(2, 0, 3))
    assert no_keys.shape == (2, 3, 3) and np.all(no_keys.numpy() == 0)


def test_mha_empty_batch_and_sequences():
    mha = nn.MultiheadAttention(4, 2)
    out, w = mha(ember.randn(3, 0, 4), ember.randn(5, 0, 4), ember.randn(5, 0, 4))
    assert out.shape == (3, 0, 4) and w.shape == (0, 3, 5)
    out, w = mha(ember.randn(3, 2, 4), ember.randn(0, 2, 4), ember.randn(0, 2, 4))
    assert out.shape == (3, 2, 4) and w.shape == (2, 3, 0)
    np.testing.assert_allclose(numpy_of(out), np.broadcast_to(numpy_of(mha.out_proj.bias),
                                                              (3, 2, 4)))
    assert nn.TransformerEncoderLayer(4, 2, 8)(ember.randn(0, 2, 4)).shape == (0, 2, 4)


@pytest.mark.parametrize("name,case", SDPA_CASES, ids=[c[0] for c in SDPA_CASES])
def test_sdpa_gradcheck(name, case):
    q = randn(2, 3, 4, seed=1, requires_grad=True)
    k = randn(2, 5, 4, seed=2, requires_grad=True)
    v = randn(2, 5, 3, seed=3, requires_grad=True)
    mask = _mask(case.get("mask"), 3, 5)
    mask = None if mask is None else ember.from_numpy(mask)

    def fn(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, mask, is_causal=case.get("causal", False),
                                              scale=case.get("scale"))
    assert gradcheck(fn, (q, k, v))
    assert gradgradcheck(fn, (q, k, v))


def test_sdpa_dead_rows_have_zero_gradient():
    q, k, v = (randn(3, 4, seed=i, requires_grad=True) for i in range(3))
    mask = ember.ones(3, 3, dtype=ember.bool)
    mask[0] = False
    F.scaled_dot_product_attention(q, k, v, mask).sum().backward()
    assert np.all(np.isfinite(q.grad.numpy())) and np.all(q.grad.numpy()[0] == 0)
    assert np.all(np.isfinite(k.grad.numpy()))


def test_sdpa_dropout():
    ember.manual_seed(0)
    q, k, v = randn(2, 6, 4, seed=1), randn(2, 7, 4, seed=2), ember.ones(2, 7, 3).double()
    full = F.scaled_dot_product_attention(q, k, v)
    np.testing.assert_allclose(full.numpy(), 1.0)  # weights sum to one
    dropped = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5).numpy()
    assert not np.allclose(dropped, 1.0)
    assert abs(dropped.mean() - 1.0) < 0.35  # inverted dropout keeps the mean


@requires_torch
@pytest.mark.torch
@pytest.mark.parametrize("name,case", SDPA_CASES, ids=[c[0] for c in SDPA_CASES])
def test_sdpa_matches_torch(name, case):
    q, k, v = randn(2, 3, 4, 8, seed=1), randn(2, 3, 5, 8, seed=2), randn(2, 3, 5, 6, seed=3)
    mask = _mask(case.get("mask"), 4, 5)
    kw = {"is_causal": case.get("causal", False), "scale": case.get("scale")}
    out = F.scaled_dot_product_attention(q, k, v, None if mask is None else
                                         ember.from_numpy(mask), **kw)
    ref = torch.nn.functional.scaled_dot_product_attention(
        torch.from_numpy(q.numpy()), torch.from_numpy(k.numpy()), torch.from_numpy(v.numpy()),
        None if mask is None else torch.from_numpy(mask), **kw)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), atol=1e-12)


# ---- MultiheadAttention -------------------------------------------------------------
def _mha_params(m):
    return {k: v.detach().numpy() for k, v in m.named_parameters()}


def test_mha_matches_numpy():
    ember.manual_seed(0)
    mha = nn.MultiheadAttention(8, 2, dtype=ember.float64)
    with ember.no_grad():  # non-zero biases so they are checked too
        mha.in_proj_bias.copy_(randn(24, seed=9))
        mha.out_proj.bias.copy_(randn(8, seed=10))
    p = _mha_params(mha)
    q, k, v = randn(4, 3, 8, seed=1), randn(6, 3, 8, seed=2), randn(6, 3, 8, seed=3)
    kpm = np.zeros((3, 6), bool)
    kpm[1, 3:] = True
    am = np.random.default_rng(4).random((4, 6)) > 0.7
    am[:, 0] = False
    for mask_kw, ref_kw in [({}, {}),
                            ({"key_padding_mask": ember.from_numpy(kpm),
                              "attn_mask": ember.from_numpy(am)},
                             {"kpm": kpm, "attn_mask": am})]:
        out, w = mha(q, k, v, **mask_kw)
        ref, ref_w = np_mha(q.numpy(), k.numpy(), v.numpy(), p, 2, **ref_kw)
        np.testing.assert_allclose(numpy_of(out), ref, atol=1e-12)
        np.testing.assert_allclose(numpy_of(w), ref_w, atol=1e-12)
    # batch_first and unbatched forms give the same numbers
    mha.batch_first = True
    out_bf, _ = mha(q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1))
    mha.batch_first = False
    out_sf, w_sf = mha(q, k, v)
    np.testing.assert_allclose(numpy_of(out_bf).transpose(1, 0, 2), numpy_of(out_sf),
                               atol=1e-14)
    out_1, w_1 = mha(q[:, 1], k[:, 1], v[:, 1])
    np.testing.assert_allclose(numpy_of(out_1), numpy_of(out_sf)[:, 1], atol=1e-14)
    np.testing.assert_allclose(numpy_of(w_1), numpy_of(w_sf)[1], atol=1e-14)


def test_mha_weights_options_and_init():
    ember.manual_seed(0)
    mha = nn.MultiheadAttention(6, 3, kdim=4, vdim=5)
    assert [n for n, _ in mha.named_parameters()] == [
        "q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias", "out_proj.weight",
        "out_proj.bias"]
    assert mha.in_proj_weight is None and mha.k_proj_weight.shape == (6, 4)
    assert np.all(mha.in_proj_bias.detach().numpy() == 0)
    x, k, v = ember.randn(2, 3, 6), ember.randn(5, 3, 4), ember.randn(5, 3, 5)
    out, w = mha(x, k, v, average_attn_weights=False)
    assert out.shape == (2, 3, 6) and w.shape == (3, 3, 2, 5)
    np.testing.assert_allclose(numpy_of(w).sum(-1), 1.0, rtol=1e-5)
    assert mha(x, k, v, need_weights=False)[1] is None
    bound = np.sqrt(6 / (6 + 18))  # xavier_uniform_ of the packed (18, 6) in_proj_weight
    w_in = nn.MultiheadAttention(6, 3).in_proj_weight.detach().numpy()
    assert np.abs(w_in).max() <= bound
    extra = nn.MultiheadAttention(6, 2, add_bias_kv=True, add_zero_attn=True, bias=False)
    assert extra.bias_k.shape == (1, 1, 6) and extra.in_proj_bias is None
    out, w = extra(x, x, x)
    assert w.shape == (3, 2, 4)  # two extra key positions: bias_k and the zero key


def test_mha_dropout_and_eval():
    ember.manual_seed(0)
    mha = nn.MultiheadAttention(4, 2, dropout=0.5)
    x = ember.randn(5, 2, 4)
    a, wa = mha(x, x, x)
    b, wb = mha(x, x, x)
    assert not np.allclose(numpy_of(wa), numpy_of(wb))
    mha.eval()
    a, wa = mha(x, x, x)
    b, wb = mha(x, x, x)
    np.testing.assert_array_equal(numpy_of(a), numpy_of(b))
    np.testing.assert_allclose(numpy_of(wa).sum(-1), 1.0, rtol=1e-5)


def test_mha_gradcheck():
    ember.manual_seed(0)
    mha = nn.MultiheadAttention(4, 2, kdim=3, vdim=2, dtype=ember.float64)
    q, k, v = randn(3, 2, 4, seed=1), randn(2, 2, 3, seed=2), randn(2, 2, 2, seed=3)
    for t in (q, k, v):
        t.requires_grad_()
    kpm = ember.tensor([[False, False], [False, True]])

    def fn(q, k, v, *_):
        return mha(q, k, v, key_padding_mask=kpm)
    assert gradcheck(fn, (q, k, v, *mha.parameters()))
    assert gradgradcheck(fn, (q, k, v))


MHA_TORCH_CASES = [
    ("self", {}, {}),
    ("kdim-vdim", {"kdim": 3, "vdim": 5}, {}),
    ("bias-kv-zero-attn", {"add_bias_kv": True, "add_zero_attn": True}, {"kpm": True}),
    ("no-bias", {"bias": False}, {"attn": "bool"}),
    ("batch-first", {"batch_first": True}, {"kpm": True, "attn": "float"}),
    ("per-head-weights", {}, {"attn": "3d", "average_attn_weights": False}),
    ("no-weights", {}, {"kpm": True, "attn": "bool", "need_weights": False}),
    ("causal-hint", {}, {"attn": "causal", "is_causal": True, "need_weights": False}),
    ("unbatched", {}, {"unbatched": True, "kpm": True}),
]


@requires_torch
@pytest.mark.torch
@pytest.mark.filterwarnings("ignore:Support for mismatched key_padding_mask")
@pytest.mark.parametrize("name,ctor,call", MHA_TORCH_CASES, ids=[c[0] for c in MHA_TORCH_CASES])
def test_mha_matches_torch(name, ctor, call):
    torch.manual_seed(0)
    ref = torch.nn.MultiheadAttention(8, 2, dtype=torch.float64, **ctor)
    mha = nn.MultiheadAttention(8, 2, dtype=ember.float64, **ctor)
    state = ref.state_dict()
    if "in_proj_bias" in state:  # PyTorch starts biases at zero: make them count
        state["in_proj_bias"] = torch.randn(24, dtype=torch.float64)
        ref.load_state_dict(state)
    mha.load_state_dict({k: ember.from_numpy(v.numpy().copy()) for k, v in state.items()})
    assert list(mha.state_dict()) == list(state)
    L, S, N = 4, 6, 3
    rng = np.random.default_rng(1)
    q = rng.standard_normal((L, N, 8))
    k = rng.standard_normal((S, N, ctor.get("kdim", 8)))
    v = rng.standard_normal((S, N, ctor.get("vdim", 8)))
    if name == "self":
        k = v = q
        S = L
    if ctor.get("batch_first"):
        q, k, v = (a.transpose(1, 0, 2).copy() for a in (q, k, v))
    kw = {k_: call[k_] for k_ in ("average_attn_weights", "need_weights", "is_causal")
          if k_ in call}
    masks = {}
    if call.get("kpm"):
        kpm = np.zeros((N, S), bool)
        kpm[1, S // 2:] = True
        masks["key_padding_mask"] = kpm
    if call.get("attn") == "bool":
        am = rng.random((L, S)) > 0.7
        am[:, 0] = False
        masks["attn_mask"] = am
    elif call.get("attn") == "float":
        masks["attn_mask"] = rng.standard_normal((L, S))
    elif call.get("attn") == "3d":
        masks["attn_mask"] = rng.standard_normal((N * 2, L, S))
    elif call.get("attn") == "causal":
        masks["attn_mask"] = ~np.tril(np.ones((L, S), bool))
    if call.get("unbatched"):
        q, k, v = q[:, 0], k[:, 0], v[:, 0]
        masks["key_padding_mask"] = masks["key_padding_mask"][1]
        masks["key_padding_mask"][-1] = False
    qe, ke, ve = (ember.from_numpy(a).requires_grad_() for a in (q, k, v))
    qt, kt, vt = (torch.from_numpy(a).requires_grad_() for a in (q, k, v))
    if name == "self":
        ke = ve = qe
        kt = vt = qt
    out, w = mha(qe, ke, ve, **{m: ember.from_numpy(a) for m, a in masks.items()}, **kw)
    t_out, t_w = ref(qt, kt, vt, **{m: torch.from_numpy(a) for m, a in masks.items()}, **kw)
    np.testing.assert_allclose(numpy_of(out), t_out.detach().numpy(), atol=1e-12)
    if t_w is None:
        assert w is None
    else:
        np.testing.assert_allclose(numpy_of(w), t_w.detach().numpy(), atol=1e-12)
    g = rng.standard_normal(tuple(out.shape))
    (out * ember.from_numpy(g)).sum().backward()
    (t_out * torch.from_numpy(g)).sum().backward()
    np.testing.assert_allclose(qe.grad.numpy(), qt.grad.numpy(), atol=1e-10)
    for (n, p), tp in zip(mha.named_parameters(), ref.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), atol=1e-10, err_msg=n)


# ---- Transformer encoder --------------------------------------------------------------
ENCODER_CASES = [
    ("post-norm-relu", {}),
    ("pre-norm-gelu", {"norm_first": True, "activation": "gelu"}),
    ("batch-first-no-bias", {"batch_first": True, "bias": False}),
    ("callable-activation", {"activation": "tanh", "layer_norm_eps": 1e-3}),
]


def _activation(kw, lib):
    if kw.get("activation") == "tanh":
        return dict(kw, activation=lib.tanh)
    return kw


@requires_torch
@pytest.mark.torch
@pytest.mark.parametrize("name,kw", ENCODER_CASES, ids=[c[0] for c in ENCODER_CASES])
def test_encoder_matches_torch(name, kw):
    torch.manual_seed(0)
    t_layer = torch.nn.TransformerEncoderLayer(8, 2, 16, dtype=torch.float64,
                                               **_activation(kw, torch))
    ref = torch.nn.TransformerEncoder(t_layer, 2, norm=torch.nn.LayerNorm(8,
                                                                          dtype=torch.float64),
                                      enable_nested_tensor=False)
    layer = nn.TransformerEncoderLayer(8, 2, 16, dtype=ember.float64, **_activation(kw, ember))
    enc = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(8, dtype=ember.float64))
    state = ref.state_dict()
    assert list(enc.state_dict()) == list(state)
    enc.load_state_dict({k: ember.from_numpy(v.numpy().copy()) for k, v in state.items()})
    layer.load_state_dict({k[len("layers.0."):]: ember.from_numpy(v.numpy().copy())
                           for k, v in state.items() if k.startswith("layers.0.")})
    t_layer.load_state_dict({k[len("layers.0."):]: v for k, v in state.items()
                             if k.startswith("layers.0.")})
    for m in (ref, enc, layer, t_layer):
        m.eval()
    bf = kw.get("batch_first", False)
    L, N = 5, 3
    rng = np.random.default_rng(2)
    x = rng.standard_normal((N, L, 8) if bf else (L, N, 8))
    kpm = np.zeros((N, L), bool)
    kpm[2, 3:] = True
    causal = torch.nn.Transformer.generate_square_subsequent_mask(L, dtype=torch.float64)
    xe, xt = ember.from_numpy(x), torch.from_numpy(x)
    np.testing.assert_allclose(numpy_of(layer(xe)), t_layer(xt).detach().numpy(), atol=1e-12)
    cases = [({}, {}),
             ({"src_key_padding_mask": ember.from_numpy(kpm)},
              {"src_key_padding_mask": torch.from_numpy(kpm)}),
             ({"mask": ember.from_numpy(causal.numpy())}, {"mask": causal}),
             ({"mask": ember.from_numpy(causal.numpy()), "is_causal": True},
              {"mask": causal, "is_causal": True})]
    for ekw, tkw in cases:
        out, t_out = enc(xe, **ekw), ref(xt, **tkw)
        np.testing.assert_allclose(numpy_of(out), t_out.detach().numpy(), atol=1e-12)


def test_encoder_training_gradcheck_and_dropout():
    ember.manual_seed(0)
    layer = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, dtype=ember.float64)
    enc = nn.TransformerEncoder(layer, 2)
    assert enc.layers[0] is not layer and enc.layers[0] is not enc.layers[1]
    x = randn(3, 2, 4, seed=1, requires_grad=True)
    kpm = ember.tensor([[False, False, False], [False, False, True]])

    def fn(x, *_):
        return enc(x, src_key_padding_mask=kpm)
    assert gradcheck(fn, (x, *enc.parameters()))
    drop = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.5)
    xs = ember.randn(3, 2, 4)
    assert not np.allclose(numpy_of(drop(xs)), numpy_of(drop(xs)))
    drop.eval()
    np.testing.assert_array_equal(numpy_of(drop(xs)), numpy_of(drop(xs)))


DECODER_CASES = [
    ("post-norm", {}),
    ("pre-norm-gelu-batch-first", {"norm_first": True, "activation": "gelu",
                                   "batch_first": True}),
]


def _load_from_torch(module, ref):
    state = ref.state_dict()
    assert list(module.state_dict()) == list(state)
    module.load_state_dict({k: ember.from_numpy(v.numpy().copy()) for k, v in state.items()})


@requires_torch
@pytest.mark.torch
@pytest.mark.filterwarnings("ignore:Support for mismatched key_padding_mask")
@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
@pytest.mark.parametrize("name,kw", DECODER_CASES, ids=[c[0] for c in DECODER_CASES])
def test_transformer_matches_torch(name, kw):
    """The full encoder-decoder with masks, and a decoder stack alone."""
    torch.manual_seed(0)
    ref = torch.nn.Transformer(8, 2, 2, 2, 16, dtype=torch.float64, **kw)
    model = nn.Transformer(8, 2, 2, 2, 16, dtype=ember.float64, **kw)
    _load_from_torch(model, ref)
    ref.eval()
    model.eval()
    bf = kw.get("batch_first", False)
    S, L, N = 5, 4, 3
    rng = np.random.default_rng(3)
    src = rng.standard_normal((N, S, 8) if bf else (S, N, 8))
    tgt = rng.standard_normal((N, L, 8) if bf else (L, N, 8))
    tgt_mask = torch.nn.Transformer.generate_square_subsequent_mask(L, dtype=torch.float64)
    np.testing.assert_array_equal(nn.Transformer.generate_square_subsequent_mask(
        L, dtype=ember.float64).numpy(), tgt_mask.numpy())
    src_kpm = np.zeros((N, S), bool)
    src_kpm[1, 3:] = True
    tgt_kpm = np.zeros((N, L), bool)
    tgt_kpm[2, 3:] = True
    E, T = ember.from_numpy, torch.from_numpy
    out = model(E(src), E(tgt), tgt_mask=E(tgt_mask.numpy()),
                src_key_padding_mask=E(src_kpm), tgt_key_padding_mask=E(tgt_kpm),
                memory_key_padding_mask=E(src_kpm))
    t_out = ref(T(src), T(tgt), tgt_mask=tgt_mask, src_key_padding_mask=T(src_kpm),
                tgt_key_padding_mask=T(tgt_kpm), memory_key_padding_mask=T(src_kpm))
    np.testing.assert_allclose(numpy_of(out), t_out.detach().numpy(), atol=1e-12)
    memory = rng.standard_normal(src.shape)
    out = model.decoder(E(tgt), E(memory), tgt_mask=E(tgt_mask.numpy()), tgt_is_causal=True)
    t_out = ref.decoder(T(tgt), T(memory), tgt_mask=tgt_mask, tgt_is_causal=True)
    np.testing.assert_allclose(numpy_of(out), t_out.detach().numpy(), atol=1e-12)


def test_transformer_init_gradcheck_and_errors():
    ember.manual_seed(0)
    model = nn.Transformer(4, 2, 1, 1, 6, dropout=0.0, dtype=ember.float64)
    names = [n for n, _ in model.named_parameters()]
    assert "decoder.layers.0.multihead_attn.in_proj_weight" in names
    assert "decoder.norm.weight" in names and "encoder.norm.bias" in names
    w = model.decoder.layers[0].linear1.weight.detach().numpy()
    assert np.abs(w).max() <= np.sqrt(6 / (4 + 6))  # xavier_uniform_ on every matrix
    src = randn(3, 2, 4, seed=1, requires_grad=True)
    tgt = randn(2, 2, 4, seed=2, requires_grad=True)
    mask = nn.Transformer.generate_square_subsequent_mask(2, dtype=ember.float64)

    def fn(src, tgt, *_):
        return model(src, tgt, tgt_mask=mask)
    assert gradcheck(fn, (src, tgt, *model.decoder.layers[0].parameters()))
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        model(ember.zeros(3, 2, 4, dtype=ember.float64), ember.zeros(2, 3, 4,
                                                                     dtype=ember.float64))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal "
                                           "to d_model"):
        model(ember.zeros(3, 2, 4, dtype=ember.float64), ember.zeros(2, 2, 5,
                                                                     dtype=ember.float64))


# ---- errors --------------------------------------------------------------------------
def _z(L, *shape, dtype=None):
    return L.zeros(*shape) if dtype is None else L.zeros(*shape, dtype=dtype)


ERROR_CASES = [
    ("embed-heads", lambda L: L.nn.MultiheadAttention(6, 4), AssertionError,
     "embed_dim must be divisible by num_heads"),
    ("embed-zero", lambda L: L.nn.MultiheadAttention(0, 2), ValueError,
     "embed_dim and num_heads must be greater than 0, got embed_dim=0 and num_heads=2 "
     "instead"),
    ("query-rank", lambda L: L.nn.MultiheadAttention(4, 2)(_z(L, 4), _z(L, 4), _z(L, 4)),
     AssertionError, "query should be unbatched 2D or batched 3D tensor but received 1-D "
                     "query tensor"),
    ("key-rank", lambda L: L.nn.MultiheadAttention(4, 2)(_z(L, 3, 2, 4), _z(L, 3, 4),
                                                         _z(L, 3, 2, 4)),
     AssertionError, "For batched (3-D) `query`, expected `key` and `value` to be 3-D but "
                     "found 2-D and 3-D tensors respectively"),
    ("embed-dim", lambda L: L.nn.MultiheadAttention(4, 2)(_z(L, 3, 2, 5), _z(L, 3, 2, 5),
                                                          _z(L, 3, 2, 5)),
     AssertionError, "was expecting embedding dimension of 4, but got 5"),
    ("attn-mask-2d", lambda L: L.nn.MultiheadAttention(4, 2)(
        _z(L, 3, 2, 4), _z(L, 5, 2, 4), _z(L, 5, 2, 4), attn_mask=_z(L, 3, 4)),
     RuntimeError, "The shape of the 2D attn_mask is "),
    ("attn-mask-3d", lambda L: L.nn.MultiheadAttention(4, 2)(
        _z(L, 3, 2, 4), _z(L, 5, 2, 4), _z(L, 5, 2, 4), attn_mask=_z(L, 2, 3, 5)),
     RuntimeError, "The shape of the 3D attn_mask is "),
    ("kpm-dtype", lambda L: L.nn.MultiheadAttention(4, 2)(
        _z(L, 3, 2, 4), _z(L, 5, 2, 4), _z(L, 5, 2, 4),
        key_padding_mask=_z(L, 2, 5, dtype=L.int64)),
     AssertionError, "only bool and floating types of key_padding_mask are supported"),
    ("causal-without-mask", lambda L: L.nn.MultiheadAttention(4, 2)(
        _z(L, 3, 2, 4), _z(L, 3, 2, 4), _z(L, 3, 2, 4), is_causal=True),
     RuntimeError, "Need attn_mask if specifying the is_causal hint."),
    ("activation", lambda L: L.nn.TransformerEncoderLayer(4, 2, activation="swish"),
     RuntimeError, "activation should be relu/gelu, not swish"),
    ("sdpa-causal-and-mask", lambda L: L.nn.functional.scaled_dot_product_attention(
        _z(L, 2, 3, 4), _z(L, 2, 5, 4), _z(L, 2, 5, 4), _z(L, 3, 5), is_causal=True),
     RuntimeError, "Explicit attn_mask should not be set when is_causal=True"),
    ("sdpa-mask-dtype", lambda L: L.nn.functional.scaled_dot_product_attention(
        _z(L, 2, 3, 4), _z(L, 2, 5, 4), _z(L, 2, 5, 4), _z(L, 3, 5, dtype=L.int64)),
     RuntimeError, "Expected attn_mask dtype to be bool or float or to match query dtype, "
                   "but got attn_mask.dtype: long int and  query.dtype: float instead."),
    ("sdpa-dtypes", lambda L: L.nn.functional.scaled_dot_product_attention(
        _z(L, 2, 3, 4), _z(L, 2, 5, 4), _z(L, 2, 5, 4, dtype=L.float64)),
     RuntimeError, "Expected query, key, and value to have the same dtype, but got "
                   "query.dtype: float key.dtype: float and value.dtype: double instead."),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors(case):
    _, call, exc, message = case
    with pytest.raises(exc) as info:
        call(ember)
    assert message in str(info.value)


@requires_torch
@pytest.mark.torch
@pytest.mark.parametrize("case", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors_match_torch(case):
    _, call, exc, message = case
    with pytest.raises(exc) as info:
        call(torch)
    assert message in str(info.value)


def test_sdpa_shape_errors_name_the_sizes():
    with pytest.raises(RuntimeError, match=r"query.size\(-1\) \(4\) must equal "
                                           r"key.size\(-1\) \(3\)"):
        F.scaled_dot_product_attention(ember.zeros(2, 3, 4), ember.zeros(2, 5, 3),
                                       ember.zeros(2, 5, 4))
    with pytest.raises(RuntimeError, match=r"key.size\(-2\) \(5\) must equal "
                                           r"value.size\(-2\) \(4\)"):
        F.scaled_dot_product_attention(ember.zeros(2, 3, 4), ember.zeros(2, 5, 4),
                                       ember.zeros(2, 4, 4))
    with pytest.raises(RuntimeError, match="same batch size, but got 2 and 3"):
        nn.MultiheadAttention(4, 2)(ember.zeros(3, 2, 4), ember.zeros(5, 3, 4),
                                    ember.zeros(5, 3, 4))
