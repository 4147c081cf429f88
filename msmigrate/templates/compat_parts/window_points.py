import mindspore as ms
from mindspore import ops


def window_points(m, dtype):
    """n = 0..m-1 for torch.signal.windows' formulas: float64 for a float64 window (torch computes in the
    window's dtype), float32 for the others (cast after; MindSpore's CPU exp/cos have no bfloat16 kernel)."""
    return ops.arange(m, dtype=ms.float64 if dtype == ms.float64 else ms.float32)
