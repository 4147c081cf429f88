import mindspore as ms
from mindspore import ops


def window_points(m, dtype):
    """n = 0..m-1 for torch.signal.windows' formulas, in float64 whatever the window's dtype (the formula's result
    is cast to it after): MindSpore 2.10's CPU float32 exp is ~1e-6 off (torch's ~1e-7), float64 then a cast
    rounds to torch's float32 values; MindSpore's CPU exp/cos have no bfloat16 kernel either."""
    return ops.arange(m, dtype=ms.float64)
