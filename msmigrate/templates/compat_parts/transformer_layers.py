"""torch.nn.Transformer and its encoder/decoder layers, with torch's arguments, forward
signatures and sub-layer names (self_attn, linear1, norm1, layers.0..., encoder.norm), so
that a torch state_dict loads by name. MindSpore's own nn.Transformer* name their layers
differently (dense1), take no bias= and accept only relu/gelu as the activation.

The attention is _ms_compat.MultiheadAttention (torch's mask conventions: bool True =
masked, float masks added). In eval mode a TransformerEncoder that torch would run on its
nested-tensor fast path (batch_first, even head count, relu/gelu, post-norm, bias, a
left-aligned src_key_padding_mask and no mask) returns 0 at the padded positions (before its
final norm), as torch does under no_grad; torch computes those positions when gradients
are enabled in eval mode.
"""
import copy

import numpy as np
import mindspore as ms
from mindspore import nn, ops


def _gelu_exact(x):
    return ops.gelu(x, approximate="none")


def _transformer_activation(activation):
    """torch takes 'relu', 'gelu' or any callable (a function or a module)."""
    if isinstance(activation, str):
        if activation == "relu":
            return ops.relu
        if activation == "gelu":
            return _gelu_exact
        raise RuntimeError(f"activation should be relu/gelu, not {activation}")
    return activation


def _clones(cell, n):
    """n independent copies, as torch's _get_clones (copy.deepcopy)."""
    return nn.CellList([copy.deepcopy(cell) for _ in range(n)])


class _TransformerLayer(nn.Cell):
    """What torch's encoder and decoder layers share: their sub-layers, created in torch's order (the
    decoder layer's cross-attention, third norm and dropout included: n_blocks 3), and the self-attention
    and feed-forward blocks."""

    def __init__(self, d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
                 norm_first, bias, n_blocks):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first)
        if n_blocks == 3:
            self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                     batch_first=batch_first)
        self.linear1 = nn.Dense(d_model, dim_feedforward, has_bias=bias)
        self.dropout = nn.Dropout(p=dropout)
        self.linear2 = nn.Dense(dim_feedforward, d_model, has_bias=bias)
        self.norm_first = norm_first
        for i in range(1, n_blocks + 1):
            setattr(self, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias))
        for i in range(1, n_blocks + 1):
            setattr(self, f"dropout{i}", nn.Dropout(p=dropout))
        self.activation = _transformer_activation(activation)
        self.batch_first = batch_first

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _feed_forward(self, x):
        # torch's _ff_block before its last dropout (dropout2 in the encoder layer, dropout3 in the decoder's)
        return self.linear2(self.dropout(self.activation(self.linear1(x))))


class TransformerEncoderLayer(_TransformerLayer):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
                         norm_first, bias, 2)
        # the layer qualifies for torch's nested-tensor fast path (TransformerEncoder.__init__'s checks)
        relu_or_gelu = activation in ("relu", "gelu") or activation is ops.relu or activation is ops.gelu or \
            isinstance(activation, (nn.ReLU, nn.GELU))
        self.fast_path_layout = (not norm_first) and batch_first and bool(bias) and relu_or_gelu and nhead % 2 == 0

    def construct(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        # is_causal is only a hint in torch: src_mask carries the causal mask (and must be given)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _ff_block(self, x):
        return self.dropout2(self._feed_forward(x))


class TransformerDecoderLayer(_TransformerLayer):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
                         norm_first, bias, 3)

    def construct(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                  memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                need_weights=False, is_causal=is_causal)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        return self.dropout3(self._feed_forward(x))


class TransformerEncoder(nn.Cell):
    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.use_nested_tensor = bool(enable_nested_tensor) and isinstance(encoder_layer, TransformerEncoderLayer) \
            and encoder_layer.fast_path_layout
        self.mask_check = mask_check

    def construct(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                         is_causal=bool(is_causal))
        if self.use_nested_tensor and not self.training and src.ndim == 3 and src_key_padding_mask is not None \
                and mask is None:
            output = self._zero_padding(output, src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


    def _zero_padding(self, output, key_padding_mask):
        """torch's nested-tensor path: padded positions come back as 0 when the mask is left aligned
        (every sequence's tokens first, its padding after)."""
        keep = (key_padding_mask.astype(ms.float32) == 0).astype(output.dtype)    # (N, S)
        zeroed = output * keep.expand_dims(-1)
        if not self.mask_check:
            return zeroed
        aligned = (keep[:, :-1] >= keep[:, 1:]).all()
        return ops.where(aligned, zeroed, output)


class TransformerDecoder(nn.Cell):
    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def construct(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                  memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        output = tgt
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


def generate_square_subsequent_mask(sz, device=None, dtype=None):
    """torch.nn.Transformer.generate_square_subsequent_mask: float (sz, sz), -inf above the diagonal."""
    return ms.Tensor(np.triu(np.full((sz, sz), -np.inf, np.float32), 1), ms.float32 if dtype is None else dtype)


class Transformer(nn.Cell):
    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation="relu", custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first,
                      bias)
        self.encoder = custom_encoder if custom_encoder is not None else TransformerEncoder(
            TransformerEncoderLayer(*layer_args), num_encoder_layers, LayerNorm(d_model, eps=layer_norm_eps, bias=bias))
        self.decoder = custom_decoder if custom_decoder is not None else TransformerDecoder(
            TransformerDecoderLayer(*layer_args), num_decoder_layers, LayerNorm(d_model, eps=layer_norm_eps, bias=bias))
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def construct(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                  tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                  memory_is_causal=False):
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    generate_square_subsequent_mask = staticmethod(generate_square_subsequent_mask)
