"""Channel-wise dropout: nn.Dropout1d/2d/3d and F.dropout1d/2d/3d.

MindSpore's Dropout2d/Dropout3d take one input rank each (4-D, 5-D); torch also takes
unbatched input and, for dropout2d, any rank >= 2. The helpers follow torch's rules."""
from __future__ import annotations

from ..records import mapping

T = "tests/parity/test_channel_dropout.py"
_NOTE = ("one draw per (sample, channel) with torch 2.13's rank rules (unbatched input; a 3-D input to "
         "dropout2d is (N, C, L)); the random stream differs from torch's")

for _d in ("1d", "2d", "3d"):
    mapping(f"torch.nn.Dropout{_d}", f"_ms_compat.Dropout{_d}", args=("p", "inplace"), target_args=("p",),
            drop=("inplace",), note=_NOTE, test=f"{T}::test_channel_dropout_layers")
    mapping(f"torch.nn.functional.dropout{_d}", f"_ms_compat.dropout{_d}", args=("input", "p", "training", "inplace"),
            target_args=("input", "p", "training"), drop=("inplace",), note=_NOTE,
            test=f"{T}::test_channel_dropout_functions")
