"""ember.nn.functional: linear, bilinear, scaled_dot_product_attention and
multi_head_attention_forward."""
import math
import warnings

import ember
from ember.amp.policy import LOWER, WIDEST

from ._functional_common import _check_tensor, _check_tensors, autocast
from ._functional_dropout import dropout

__all__ = ["linear", "bilinear", "scaled_dot_product_attention",
           "multi_head_attention_forward"]


@autocast(LOWER, LOWER)
def linear(input, weight, bias=None):
    """y = x Wᵀ + b, with x (*, in_features), W (out_features, in_features)."""
    _check_tensors("linear", input=input, weight=weight)
    if bias is not None:
        _check_tensor(bias, "bias")
    if input.dim() == 0:
        raise RuntimeError("both arguments to linear need to be at least 1D, but they are 0D "
                           f"and {weight.dim()}D")
    if input.shape[-1] != weight.shape[-1]:
        cols = input.shape[-1]
        rows = input.numel() // cols if cols else 0
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{cols} and "
                           f"{weight.shape[-1]}x{weight.shape[0]})")
    if input.dim() == 2 and bias is not None:
        return ember.addmm(bias, input, weight.t())
    if input.dim() > 2:  # leading dims folded into one product (bias added by it)
        flat = input.reshape(-1, input.shape[-1])
        out = flat.mm(weight.t()) if bias is None else ember.addmm(bias, flat, weight.t())
        return out.view(*input.shape[:-1], weight.shape[0])
    out = input.matmul(weight.t())
    return out if bias is None else out + bias


@autocast(WIDEST, None)
def bilinear(input1, input2, weight, bias=None):
    """y_o = x1ᵀ W_o x2 + b_o, with W (out, in1, in2)."""
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError("bilinear(): input batch dimensions do not match: got "
                           f"{list(input1.shape[:-1])} and {list(input2.shape[:-1])}")
    o, i1, i2 = weight.shape
    if input1.shape[-1] != i1 or input2.shape[-1] != i2:
        raise RuntimeError(f"bilinear(): input sizes ({input1.shape[-1]}, {input2.shape[-1]})"
                           f" do not match the weight's ({i1}, {i2})")
    lead = input1.shape[:-1]
    x1 = input1.reshape(-1, i1)
    x2 = input2.reshape(-1, i2)
    t = x1.matmul(weight.permute(1, 0, 2).reshape(i1, o * i2)).reshape(-1, o, i2)
    out = (t * x2.unsqueeze(1)).sum(-1)
    if bias is not None:
        out = out + bias
    return out.reshape(*lead, o)


def _safe_softmax(scores):
    """Softmax over the last dim; a row that masks out every key gives
    zeros (as PyTorch's SDPA), with zero gradient rather than NaN."""
    dead = (scores.detach() == float("-inf")).all(-1, keepdim=True)
    if not bool(dead.any()):
        return scores.softmax(-1)
    return scores.masked_fill(dead, 0.0).softmax(-1).masked_fill(dead, 0.0)


def _attention(query, key, value, attn_mask, dropout_p, is_causal, scale, training=True):
    """(dropout(softmax(q kᵀ · scale + mask)) v, the attention weights).
    attn_mask: None, bool (True = may attend) or float (added)."""
    scores = (query * scale).matmul(key.transpose(-2, -1))
    masked = False
    if is_causal:
        length, source = query.shape[-2], key.shape[-2]
        allowed = ember.ones(length, source, dtype=ember.bool, device=query.device).tril()
        scores = scores.masked_fill(~allowed, float("-inf"))
        masked = True
    if attn_mask is not None:
        if attn_mask.dtype == ember.bool:
            scores = ember.where(attn_mask, scores, float("-inf"))
        else:
            scores = scores + attn_mask
        masked = True
    if scores.shape[-1] == 0:  # no keys: the output is all zeros, as a sum over nothing
        weights = scores
    else:
        weights = _safe_softmax(scores) if masked else scores.softmax(-1)
    if dropout_p > 0.0 and training:
        weights = dropout(weights, dropout_p, True)
    return weights.matmul(value), weights


def _dtype_word(dtype):
    return {ember.float32: "float", ember.float64: "double", ember.float16: "c10::Half",
            ember.bfloat16: "c10::BFloat16", ember.int64: "long int",
            ember.int32: "int"}.get(dtype, str(dtype).replace("ember.", ""))


@autocast(LOWER, LOWER)
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """softmax(Q Kᵀ · scale + mask) V over the last two dims, batch dims
    broadcast.  query (..., L, E), key (..., S, E), value (..., S, Ev);
    a bool attn_mask marks the pairs that may attend, a float one is
    added; is_causal masks keys after the query's position; scale
    defaults to 1/√E."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        _check_tensor(t, name)
        if t.dim() < 2:
            raise RuntimeError(f"scaled_dot_product_attention(): expected {name} to have at "
                               f"least 2 dimensions, but got {t.dim()}-D")
    if not query.dtype == key.dtype == value.dtype:
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {_dtype_word(query.dtype)} key.dtype: "
                           f"{_dtype_word(key.dtype)} and value.dtype: "
                           f"{_dtype_word(value.dtype)} instead.")
    if attn_mask is not None:
        _check_tensor(attn_mask, "attn_mask")
        if attn_mask.dtype != ember.bool and not attn_mask.is_floating_point():
            raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match "
                               f"query dtype, but got attn_mask.dtype: "
                               f"{_dtype_word(attn_mask.dtype)} and  query.dtype: "
                               f"{_dtype_word(query.dtype)} instead.")
        if is_causal:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not "
                               "be set when is_causal=True")
    if query.shape[-1] != key.shape[-1]:
        raise RuntimeError(f"scaled_dot_product_attention(): query.size(-1) ({query.shape[-1]})"
                           f" must equal key.size(-1) ({key.shape[-1]})")
    if key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"scaled_dot_product_attention(): key.size(-2) ({key.shape[-2]}) "
                           f"must equal value.size(-2) ({value.shape[-2]})")
    if enable_gqa and query.dim() >= 3:
        heads, kv_heads = query.shape[-3], key.shape[-3]
        if kv_heads == 0 or heads % kv_heads or value.shape[-3] != kv_heads:
            raise RuntimeError(f"Number of heads in key and value must divide the number of "
                               f"heads in query: query has {heads}, key {kv_heads}, value "
                               f"{value.shape[-3]}")
        if heads != kv_heads:
            key = key.repeat_interleave(heads // kv_heads, dim=-3)
            value = value.repeat_interleave(heads // kv_heads, dim=-3)
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1]) if query.shape[-1] else 1.0
    return _attention(query, key, value, attn_mask, dropout_p, is_causal, scale)[0]


def _mha_check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads):
    """PyTorch's rank checks; returns whether the input is batched."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError(f"For batched (3-D) `query`, expected `key` and `value` to be "
                                 f"3-D but found {key.dim()}-D and {value.dim()}-D tensors "
                                 f"respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError(f"For batched (3-D) `query`, expected `key_padding_mask` to be "
                                 f"`None` or 2-D but found {key_padding_mask.dim()}-D tensor "
                                 f"instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError(f"For batched (3-D) `query`, expected `attn_mask` to be "
                                 f"`None`, 2-D or 3-D but found {attn_mask.dim()}-D tensor "
                                 f"instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key` and `value` to "
                                 f"be 2-D but found {key.dim()}-D and {value.dim()}-D tensors "
                                 f"respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key_padding_mask` to "
                                 f"be `None` or 1-D but found {key_padding_mask.dim()}-D tensor "
                                 f"instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError(f"For unbatched (2-D) `query`, expected `attn_mask` to be "
                                     f"`None`, 2-D or 3-D but found {attn_mask.dim()}-D tensor "
                                     f"instead")
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                     f"{attn_mask.shape}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.dim()}-D query tensor")


def _additive_mask(mask, name, dtype):
    """A bool mask (True = masked out) as 0/-inf of dtype; float masks as they are."""
    if mask is None:
        return None
    if mask.dtype != ember.bool and not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {name} are supported")
    if mask.dtype == ember.bool:
        return ember.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(
            mask, float("-inf"))
    return mask


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """Multi-head attention on sequence-first input: query (L, N, E), key
    (S, N, kdim), value (S, N, vdim), or unbatched (L, E) …  Returns the
    output (L, N, E) and, when need_weights, the attention weights (N, L, S)
    averaged over heads — (N, heads, L, S) without average_attn_weights."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        _check_tensor(t, name)
    batched = _mha_check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    length, batch, embed_dim = query.shape
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if key_padding_mask is not None and attn_mask is not None and \
            key_padding_mask.dtype != attn_mask.dtype:
        warnings.warn("Support for mismatched key_padding_mask and attn_mask is deprecated. "
                      "Use same type for both instead.", stacklevel=2)
    key_padding_mask = _additive_mask(key_padding_mask, "key_padding_mask", query.dtype)
    # the is_causal hint replaces the mask where PyTorch's fused path would
    causal = bool(is_causal) and key_padding_mask is None and not need_weights
    attn_mask = None if causal else _additive_mask(attn_mask, "attn_mask", query.dtype)
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    if key.shape[1] != batch:
        raise RuntimeError(f"query and key must have the same batch size, but got "
                           f"{batch} and {key.shape[1]}")

    # input projections
    if use_separate_proj_weight:
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight "
                                     f"is None")
        b_q = b_k = b_v = None
        if in_proj_bias is not None:
            b_q, b_k, b_v = in_proj_bias.chunk(3)
        q = linear(query, q_proj_weight, b_q)
        k = linear(key, k_proj_weight, b_k)
        v = linear(value, v_proj_weight, b_v)
    else:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        w_q, w_k, w_v = in_proj_weight.chunk(3)
        b_q = b_k = b_v = None
        if in_proj_bias is not None:
            b_q, b_k, b_v = in_proj_bias.chunk(3)
        if key is value and query is key:  # self-attention: one matmul
            q, k, v = linear(query, in_proj_weight, in_proj_bias).chunk(3, -1)
        else:
            q, k, v = linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)

    source = key.shape[0]
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (length, source):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(length, source)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif tuple(attn_mask.shape) != (batch * num_heads, length, source):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should "
                               f"be {(batch * num_heads, length, source)}.")

    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key.")
        k = ember.cat([k, bias_k.repeat(1, batch, 1)])
        v = ember.cat([v, bias_v.repeat(1, batch, 1)])
        if attn_mask is not None:
            attn_mask = _allow_one_more_key(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _allow_one_more_key(key_padding_mask)
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k is set but bias_v is None" if bias_k is not None
                             else "bias_v is set but bias_k is None")

    # (len, N, E) -> (N·heads, len, head_dim)
    q = q.reshape(length, batch * num_heads, head_dim).transpose(0, 1)
    k = _static_or_heads(static_k, k, batch * num_heads, head_dim, "static_k")
    v = _static_or_heads(static_v, v, batch * num_heads, head_dim, "static_v")
    if add_zero_attn:
        zeros = ember.zeros(batch * num_heads, 1, head_dim, dtype=k.dtype, device=k.device)
        k, v = ember.cat([k, zeros], 1), ember.cat([v, zeros], 1)
        if attn_mask is not None:
            attn_mask = _allow_one_more_key(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _allow_one_more_key(key_padding_mask)
    source = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (batch, source):
            raise AssertionError(f"expecting key_padding_mask shape of {(batch, source)}, but "
                                 f"got {key_padding_mask.shape}")
        kpm = key_padding_mask.reshape(batch, 1, 1, source).expand(batch, num_heads, 1, source)
        kpm = kpm.reshape(batch * num_heads, 1, source)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm

    out, weights = _attention(q, k, v, attn_mask, dropout_p, causal, 1.0 / math.sqrt(head_dim),
                              training)
    out = out.transpose(0, 1).reshape(length * batch, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(length, batch,
                                                              out_proj_weight.shape[0])
    if not batched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    weights = weights.reshape(batch, num_heads, length, source)
    if average_attn_weights:
        weights = weights.mean(1)
    if not batched:
        weights = weights.squeeze(0)
    return out, weights


def _allow_one_more_key(mask):
    """An additive mask with a trailing 0 (attend) column for an appended key."""
    zeros = ember.zeros(*mask.shape[:-1], 1, dtype=mask.dtype, device=mask.device)
    return ember.cat([mask, zeros], -1)


def _static_or_heads(static, projected, rows, head_dim, name):
    if static is None:
        return projected.reshape(projected.shape[0], rows, head_dim).transpose(0, 1)
    if static.shape[0] != rows:
        raise AssertionError(f"expecting {name}.size(0) of {rows}, but got {static.shape[0]}")
    if static.shape[2] != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got "
                             f"{static.shape[2]}")
    return static


# ---- samples: argument lists every function here is tested with
# (tests/test_functional_samples.py: gradcheck and gradgradcheck in float64,
# contiguous and non-contiguous, CUDA against the CPU, and PyTorch's
# torch.nn.functional on the same values) -----------------------------------
from ember._ops.samples import S, T  # noqa: E402

SAMPLES = {
    "linear": [S(T(3, 4), T(5, 4), T(5)), S(T(2, 3, 4), T(5, 4))],
    "bilinear": [S(T(3, 4), T(3, 2), T(5, 4, 2), T(5))],
    "scaled_dot_product_attention": [
        S(T(2, 3, 4), T(2, 5, 4), T(2, 5, 4)),
        S(T(2, 4, 4), T(2, 4, 4), T(2, 4, 4), is_causal=True)],
    "multi_head_attention_forward": [
        S(T(3, 2, 4), T(5, 2, 4), T(5, 2, 4), 4, 2, T(12, 4), T(12), None, None, False, 0.0,
          T(4, 4), T(4), training=False)],
}
