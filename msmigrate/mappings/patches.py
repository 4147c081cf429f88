"""Sliding patches: F.unfold / F.fold and nn.Unfold / nn.Fold (im2col / col2im)."""
from __future__ import annotations

from ..records import mapping

T = "tests/parity/test_patches.py"
_UNFOLD = ("kernel_size", "dilation", "padding", "stride")
_FOLD = ("output_size",) + _UNFOLD
_NOTE = ("ops.unfold/ops.fold take batched input only and fold wants output_size as a tensor: the helper "
         "also takes torch's unbatched form")

mapping("torch.nn.functional.unfold", "_ms_compat.unfold", args=("input",) + _UNFOLD,
        target_args=("input",) + _UNFOLD, note=_NOTE, test=f"{T}::test_unfold_fold_functions")
mapping("torch.nn.functional.fold", "_ms_compat.fold", args=("input",) + _FOLD,
        target_args=("input",) + _FOLD, note=_NOTE, test=f"{T}::test_unfold_fold_functions")
mapping("torch.nn.Unfold", "_ms_compat.Unfold", args=_UNFOLD, target_args=_UNFOLD,
        note="MindSpore's nn.Unfold extracts patches in another layout (TF's extract_patches): a Cell over "
             "ops.unfold with torch's arguments and output", test=f"{T}::test_unfold_fold_layers")
mapping("torch.nn.Fold", "_ms_compat.Fold", args=_FOLD, target_args=_FOLD,
        note="a Cell over ops.fold with torch's arguments", test=f"{T}::test_unfold_fold_layers")
