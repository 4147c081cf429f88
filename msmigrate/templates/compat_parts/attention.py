"""Attention with torch's semantics: F.scaled_dot_product_attention, F.multi_head_attention_forward.

Built from ordinary mindspore.ops calls (PyNative and GRAPH mode, gradients included).
"""
import math

import mindspore as ms
from mindspore import ops
from mindspore.ops.function.nn_func import multi_head_attention_forward as _ms_multi_head_attention_forward


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """torch.nn.functional.scaled_dot_product_attention.

    attn_mask: bool (True = take part) or float (added to the scores), broadcast to (..., L, S);
    is_causal: top-left aligned lower-triangular mask, combined with attn_mask as torch does;
    scale: defaults to 1/sqrt(E); enable_gqa: key/value heads are repeated to the query's;
    dropout_p > 0 drops attention weights whatever the training mode, as torch's function does.
    Rows where every key is masked give zeros (and zero gradients), as torch 2.13 does.
    float16/bfloat16 inputs are computed in float32 and the result rounded once to their dtype, as torch's CPU
    kernels accumulate in float32 (MindSpore's CPU BatchMatMul/Tile have no bfloat16 kernel, and its float16
    matmul/softmax round every intermediate)."""
    if query.dtype in (ms.float16, ms.bfloat16):
        low = query.dtype
        if attn_mask is not None and attn_mask.dtype != ms.bool_:
            attn_mask = attn_mask.astype(ms.float32)
        return scaled_dot_product_attention(query.astype(ms.float32), key.astype(ms.float32),
                                            value.astype(ms.float32), attn_mask, dropout_p, is_causal, scale,
                                            enable_gqa).astype(low)
    if enable_gqa and key.shape[-3] != query.shape[-3]:
        key = ops.repeat_interleave(key, query.shape[-3] // key.shape[-3], -3)
        value = ops.repeat_interleave(value, query.shape[-3] // value.shape[-3], -3)
    scale_factor = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = ops.matmul(query, ops.swapaxes(key, -2, -1)) * scale_factor
    neg_inf = float("-inf")
    if is_causal:
        causal = ops.tril(ops.ones((query.shape[-2], key.shape[-2]), ms.float32)) > 0
        scores = ops.masked_fill(scores, ops.logical_not(causal), neg_inf)
    if attn_mask is not None:
        if attn_mask.dtype == ms.bool_:
            scores = ops.masked_fill(scores, ops.logical_not(attn_mask), neg_inf)
        else:
            scores = scores + attn_mask.astype(scores.dtype)
    # a row with no key left would be 0/0 in softmax: torch returns zeros there
    empty = scores.max(axis=-1, keepdims=True) == neg_inf
    weights = _softmax_kernel(ops.masked_fill(scores, empty, 0.0), -1)   # compat_parts/softmax_slices.py
    weights = ops.masked_fill(weights, empty, 0.0)
    if dropout_p > 0.0:
        weights = ops.dropout(weights, p=dropout_p)
    return ops.matmul(weights, value)


class SDPBackend:
    """torch.nn.attention.SDPBackend's names: torch chooses among kernels that compute the same values."""
    ERROR, MATH, FLASH_ATTENTION, EFFICIENT_ATTENTION, CUDNN_ATTENTION, OVERRIDEABLE = -1, 0, 1, 2, 3, 4


class sdpa_kernel(_NullContext):
    """torch.nn.attention.sdpa_kernel / torch.backends.cuda.sdp_kernel: which of torch's kernels may run.
    scaled_dot_product_attention here has one implementation, so the choice changes nothing."""


class BlockMask:
    """torch.nn.attention.flex_attention.BlockMask, as a type only (annotations, isinstance). Block masks
    are made by flex attention's create_block_mask, which MindSpore has no counterpart of (its calls stay
    TODO sites): no value of a converted program is one, so isinstance(x, BlockMask) is False."""

    def __init__(self, *args, **kwargs):
        raise MigrationError("torch.nn.attention.flex_attention.BlockMask cannot be built: flex attention has "
                             "no MindSpore counterpart")


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """torch.nn.functional.multi_head_attention_forward: MindSpore's own (ops.function.nn_func), which takes no
    need_weights (torch returns (output, None) without them) and computes in the dtype it is given (the query's
    here). A bool key_padding_mask next to a float attn_mask becomes -inf/0 first, as torch combines the pair."""
    if attn_mask is not None and key_padding_mask is not None:
        if key_padding_mask.dtype == ms.bool_ and attn_mask.dtype != ms.bool_:
            key_padding_mask = ops.masked_fill(ops.zeros(key_padding_mask.shape, attn_mask.dtype),
                                               key_padding_mask, float("-inf"))
    out, weights = _ms_multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                                     in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight,
                                                     out_proj_bias, training, key_padding_mask, attn_mask,
                                                     use_separate_proj_weight, q_proj_weight, k_proj_weight,
                                                     v_proj_weight, static_k, static_v, average_attn_weights,
                                                     is_causal, False, False, query.dtype)
    if need_weights:
        return out, weights
    return out, None
