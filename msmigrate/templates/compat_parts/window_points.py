import math

import numpy as np
import mindspore as ms
from mindspore import ops


def window_points(m, dtype):
    """n = 0..m-1 for torch.signal.windows' formulas: float64 for a float64 window (torch computes in the
    window's dtype), float32 for the others (cast after; MindSpore's CPU exp/cos have no bfloat16 kernel)."""
    return ops.arange(m, dtype=ms.float64 if dtype == ms.float64 else ms.float32)


def general_cosine_window(m, a, sym=True, dtype=ms.float32):
    """torch.signal.windows.general_cosine (blackman: a = (0.42, 0.5, 0.08)) as torch computes it: k = linspace(0,
    (m - 1) * 2 pi / (m - 1 if sym else m), m) (torch's two-sided linspace, in the window's dtype: float64, else
    float32), then the sum over i of (-1)**i * a[i] * cos(i * k) in that order. Coefficients and points are tensors
    of that dtype: MindSpore 2.10 rounds a Python float meeting a float64 tensor to float32 (blackman's float64
    window was 1.5e-8 off, its ends -1.5e-8 for torch's -1.4e-17)."""
    if m <= 1:
        return ops.ones(m, dtype)
    work = np.float64 if dtype == ms.float64 else np.float32
    end = work((m - 1) * (2 * math.pi / (m - 1 if sym else m)))
    step = end / work(m - 1)
    j = np.arange(m)
    k = np.where(j < m // 2, step * j.astype(work), end - step * (m - 1 - j).astype(work)).astype(work)
    points, total = ms.Tensor(k), None
    for i, w in enumerate(a):
        term = ms.Tensor(np.array((-1) ** i * w, work)) * ops.cos(ms.Tensor(np.array(i, work)) * points)
        total = term if total is None else total + term
    return total.astype(dtype)
