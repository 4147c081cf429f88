"""Attention: F.scaled_dot_product_attention and the nn.Transformer family."""
from __future__ import annotations

from ..callsite import UnsupportedSite
from ..records import DIFFERENCE, mapping, rule

T = "tests/parity/test_attention.py"
_SDPA_ARGS = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa")

mapping("torch.nn.functional.scaled_dot_product_attention", "_ms_compat.scaled_dot_product_attention",
        args=_SDPA_ARGS, target_args=_SDPA_ARGS,
        note="composed from matmul/softmax (bool or float attn_mask, is_causal, scale, enable_gqa; fully masked "
             "rows give zeros as in torch; float16/bfloat16 computed in float32 and rounded once, as torch's CPU "
             "kernels accumulate); dropout_p > 0 draws from MindSpore's random stream",
        test=f"{T}::test_sdpa")

_MHA_ARGS = ("query", "key", "value", "embed_dim_to_check", "num_heads", "in_proj_weight", "in_proj_bias", "bias_k",
             "bias_v", "add_zero_attn", "dropout_p", "out_proj_weight", "out_proj_bias", "training",
             "key_padding_mask", "need_weights", "attn_mask", "use_separate_proj_weight", "q_proj_weight",
             "k_proj_weight", "v_proj_weight", "static_k", "static_v", "average_attn_weights", "is_causal")
mapping("torch.nn.functional.multi_head_attention_forward", "_ms_compat.multi_head_attention_forward",
        args=_MHA_ARGS, target_args=_MHA_ARGS,
        note="MindSpore's own function (ops.function.nn_func), with torch's need_weights=False answered (output, "
             "None) and a bool key_padding_mask next to a float attn_mask combined as torch does; dropout_p > 0 "
             "draws from MindSpore's random stream",
        test=f"{T}::test_multi_head_attention_forward")

# ------------------------------------------------------------------ the nn.Transformer family
_LAYER_ARGS = ("d_model", "nhead", "dim_feedforward", "dropout", "activation", "layer_norm_eps", "batch_first",
               "norm_first", "bias", "device", "dtype")
_TR_NOTE = ("_ms_compat class with torch's arguments, forward signature and sub-layer names (state_dict keys load "
            "by name); activation 'relu'/'gelu' or any callable. In eval mode an encoder that torch runs on its "
            "nested-tensor fast path (batch_first, even nhead, left-aligned src_key_padding_mask, no mask...) "
            "returns 0 at padded positions as torch does under no_grad; torch in eval mode WITH gradients "
            "enabled computes those positions")
for _name in ("TransformerEncoderLayer", "TransformerDecoderLayer"):
    mapping(f"torch.nn.{_name}", f"_ms_compat.{_name}", args=_LAYER_ARGS, target_args=_LAYER_ARGS[:-2],
            drop=("device", "dtype"), status=DIFFERENCE, note=_TR_NOTE, test=f"{T}::test_transformer_layers")
mapping("torch.nn.TransformerEncoder", "_ms_compat.TransformerEncoder",
        args=("encoder_layer", "num_layers", "norm", "enable_nested_tensor", "mask_check"),
        target_args=("encoder_layer", "num_layers", "norm", "enable_nested_tensor", "mask_check"),
        status=DIFFERENCE, note=_TR_NOTE + "; enable_nested_tensor only chose torch's fast path",
        test=f"{T}::test_transformer_stacks")
mapping("torch.nn.TransformerDecoder", "_ms_compat.TransformerDecoder",
        args=("decoder_layer", "num_layers", "norm"), target_args=("decoder_layer", "num_layers", "norm"),
        note=_TR_NOTE, test=f"{T}::test_transformer_stacks")
_TRANSFORMER_ARGS = ("d_model", "nhead", "num_encoder_layers", "num_decoder_layers", "dim_feedforward", "dropout",
                     "activation", "custom_encoder", "custom_decoder", "layer_norm_eps", "batch_first",
                     "norm_first", "bias", "device", "dtype")
mapping("torch.nn.Transformer", "_ms_compat.Transformer", args=_TRANSFORMER_ARGS,
        target_args=_TRANSFORMER_ARGS[:-2], drop=("device", "dtype"), status=DIFFERENCE, note=_TR_NOTE,
        test=f"{T}::test_transformer")
mapping("torch.nn.Transformer.generate_square_subsequent_mask", "_ms_compat.generate_square_subsequent_mask",
        args=("sz", "device", "dtype"), target_args=("sz",), drop=("device",),
        note="float (sz, sz) mask, -inf above the diagonal", test=f"{T}::test_transformer")

# ------------------------------------------------------------------ choosing torch's attention kernel
# torch picks among kernels that compute the same attention (flash, memory-efficient, math, cuDNN);
# _ms_compat.scaled_dot_product_attention has one implementation, so the choice changes nothing
_KERNEL_NOTE = ("a context manager that changes nothing: the converted scaled_dot_product_attention has one "
                "implementation (torch's backends compute the same values)")
mapping("torch.nn.attention.SDPBackend", "_ms_compat.SDPBackend", note="the backend names, as values",
        test=f"{T}::test_sdpa_kernel_choice")
for _member in ("ERROR", "MATH", "FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "OVERRIDEABLE"):
    mapping(f"torch.nn.attention.SDPBackend.{_member}", f"_ms_compat.SDPBackend.{_member}",
            test=f"{T}::test_sdpa_kernel_choice")
mapping("torch.nn.attention.sdpa_kernel", "_ms_compat.sdpa_kernel", args=("backends", "set_priority"),
        target_args=("backends", "set_priority"), note=_KERNEL_NOTE, test=f"{T}::test_sdpa_kernel_choice")
_SDP_KERNEL_ARGS = ("enable_flash", "enable_math", "enable_mem_efficient", "enable_cudnn")
mapping("torch.backends.cuda.sdp_kernel", "_ms_compat.sdpa_kernel", args=_SDP_KERNEL_ARGS,
        target_args=_SDP_KERNEL_ARGS, note=_KERNEL_NOTE, test=f"{T}::test_sdpa_kernel_choice")

# ------------------------------------------------------------------ flex attention's block mask, as a type
_BLOCK_MASK_NOTE = ("the type only (annotations, isinstance): block masks come from create_block_mask (flex "
                    "attention), which has no MindSpore counterpart, so no converted value is one and isinstance "
                    "answers False; building one directly is a TODO")


@rule("torch.nn.attention.flex_attention.BlockMask", "_ms_compat.BlockMask", note=_BLOCK_MASK_NOTE,
      test=f"{T}::test_block_mask_type")
def _block_mask(ctx):
    raise UnsupportedSite("flex attention's BlockMask has no MindSpore counterpart")
