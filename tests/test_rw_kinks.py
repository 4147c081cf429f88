"""bench/_rw_runner.py's float64-kinks reference: the converted side records each ReLU's side (x > 0) in call
order; torch's float64 run then follows it, value x * side and derivative side, counting the inputs that
took the recorded side against their own sign and how close to 0 they were."""
from __future__ import annotations

import numpy as np
import pytest

from bench import _rw_runner as runner


@pytest.fixture
def fresh_runner():
    saved = dict(runner.KINKS), runner.STATE["kinks"]
    runner.KINKS.update(sides=[], next=0, differ=0, margin=0.0, mismatch=None, unreplayed=0)
    yield runner
    runner.restore()
    runner.KINKS.clear()
    runner.KINKS.update(saved[0])
    runner.STATE["kinks"] = saved[1]


def test_the_converted_sides_recorded_then_followed_by_torch_in_float64(fresh_runner, tmp_path):
    import mindspore as ms
    from mindspore import nn, ops
    import torch
    import torch.nn.functional as F
    x32 = np.array([[2.0, -1.0, 3e-7, -1e-7], [0.5, -0.5, 1.0, -2.0]], np.float32)
    runner.record_kinks(ms, nn, ops)
    out = ops.relu(ms.Tensor(x32))
    nn.ReLU()(ms.Tensor(-x32))
    assert np.array_equal(out.asnumpy(), np.maximum(x32, 0))
    path = tmp_path / "kinks.npz"
    runner.save_kinks(path)
    runner.restore()

    # float64 inputs where rounding put two near 0 on the other side: 3e-7 -> -2e-7, -1e-7 -> 4e-7
    x64 = x32.astype(np.float64)
    x64[0, 2], x64[0, 3] = -2e-7, 4e-7
    runner.KINKS.update(sides=[], next=0)
    runner.STATE["kinks"] = str(path)
    runner.replay_kinks(torch, F)
    x = torch.tensor(x64, requires_grad=True)
    y = F.relu(x)
    y.sum().backward()
    converted_side = x32 > 0
    assert np.array_equal(y.detach().numpy(), x64 * converted_side)
    assert np.array_equal(x.grad.numpy(), converted_side.astype(np.float64))
    assert runner.KINKS["differ"] == 2 and runner.KINKS["margin"] == pytest.approx(4e-7 / 2.0)
    z = torch.tensor(-x64)
    torch.nn.ReLU(inplace=True)(z)           # nn.ReLU goes through F.relu; in place too
    assert np.array_equal(z.numpy(), -x64 * (-x32 > 0))
    assert runner.KINKS["differ"] == 4 and runner.KINKS["next"] == 2 and not runner.KINKS["mismatch"]
    assert np.array_equal(F.relu(torch.tensor([-1.0, 1.0])).numpy(), [0.0, 1.0])    # past the record: plain
    assert runner.KINKS["unreplayed"] == 1


def test_a_call_of_another_shape_stops_the_replay_and_says_where(fresh_runner, tmp_path):
    import torch
    import torch.nn.functional as F
    runner.KINKS["sides"] = [((2, 3), np.packbits(np.ones((2, 3), bool))), ((4,), np.packbits(np.ones(4, bool)))]
    runner.save_kinks(tmp_path / "kinks.npz")
    runner.STATE["kinks"] = str(tmp_path / "kinks.npz")
    runner.replay_kinks(torch, F)
    F.relu(torch.ones(2, 3, dtype=torch.float64))
    out = F.relu(torch.tensor([-1.0, 2.0, 3.0], dtype=torch.float64))
    assert runner.KINKS["mismatch"] == "ReLU call 1: (3,) here, (4,) in the converted run"
    assert np.array_equal(out.numpy(), [0.0, 2.0, 3.0])     # its own ReLU from then on
