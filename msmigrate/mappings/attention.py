"""Attention: F.scaled_dot_product_attention and the nn.Transformer family."""
from __future__ import annotations

from ..registry import DIFFERENCE, mapping

T = "tests/parity/test_attention.py"
_SDPA_ARGS = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa")

mapping("torch.nn.functional.scaled_dot_product_attention", "_ms_compat.scaled_dot_product_attention",
        args=_SDPA_ARGS, target_args=_SDPA_ARGS,
        note="composed from matmul/softmax (bool or float attn_mask, is_causal, scale, enable_gqa; fully masked "
             "rows give zeros as in torch); dropout_p > 0 draws from MindSpore's random stream",
        test=f"{T}::test_sdpa")
