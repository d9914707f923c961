"""TransformerEncoderLayer and TransformerEncoder, with PyTorch's
submodule names (self_attn, linear1, linear2, norm1, norm2, dropout,
dropout1, dropout2; layers.<i> in the encoder) so PyTorch state_dicts
load into them."""
import copy

import ember

from .. import functional as F
from .attention import MultiheadAttention
from .container import ModuleList
from .layers import Dropout, LayerNorm, Linear
from .module import Module

__all__ = ["TransformerEncoderLayer", "TransformerEncoder"]


def _activation_fn(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    if callable(activation):
        return activation
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _generate_square_subsequent_mask(size, device=None, dtype=None):
    """(size, size) float mask: 0 on and below the diagonal, -inf above."""
    dtype = dtype or ember.get_default_dtype()
    return ember.full((size, size), float("-inf"), dtype=dtype, device=device).triu(1)


def _is_causal_mask(mask, is_causal, size):
    """PyTorch's rule: an explicit is_causal wins; otherwise a mask equal to
    the square subsequent mask counts as causal."""
    if is_causal is not None:
        return bool(is_causal)
    if mask is None or mask.dim() != 2 or tuple(mask.shape) != (size, size):
        return False
    causal = _generate_square_subsequent_mask(size, device=mask.device, dtype=mask.dtype) \
        if mask.is_floating_point() else ~ember.ones(size, size, dtype=ember.bool).tril()
    return bool(ember.equal(mask, causal))


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with dropout, a
    residual connection and LayerNorm (after the block, or before it with
    norm_first)."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu",
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation_fn(activation)
        self.batch_first = batch_first

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoder(Module):
    """num_layers copies of encoder_layer applied in turn, then norm."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        if not isinstance(encoder_layer, Module):
            raise TypeError(f"encoder_layer must be a Module, not "
                            f"{type(encoder_layer).__name__}")
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm
        # accepted for PyTorch programs: padded positions are computed, not skipped
        self.enable_nested_tensor, self.mask_check = enable_nested_tensor, mask_check

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        if not isinstance(src, ember.Tensor):
            raise TypeError(f"src must be a Tensor, not {type(src).__name__}")
        first = self.layers[0] if len(self.layers) else None
        batch_first = getattr(first, "batch_first", False)
        seq_len = src.shape[1 if batch_first and src.dim() == 3 else 0]
        is_causal = _is_causal_mask(mask, is_causal, seq_len)
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, is_causal=is_causal,
                           src_key_padding_mask=src_key_padding_mask)
        return output if self.norm is None else self.norm(output)
