"""Minimal reproductions of what bench/_rw_heldout28.py's programs (openai/improved-diffusion, lucidrains/
siren-pytorch, lucidrains/mlp-mixer-pytorch) needed, each compared with torch in PYNATIVE and GRAPH mode.

- A NumPy value on the left of an operator with a tensor (`np.sqrt(2.0 / np.pi) * (x + ...)`, improved-diffusion's
  approx_standard_normal_cdf in the vb term of its hybrid loss): NumPy's own operator converted the MindSpore
  tensor and returned an ndarray, so the next op refused it (`Tanh()(input=<class 'numpy.ndarray'>)`) or, where
  a host op took it, the value went on without its gradient. torch's Tensor sets `__array_priority__` so that
  NumPy defers to the tensor's reflected operator; _ms_compat sets the same on MindSpore's Tensor."""
import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

NUMPY_LEFT = _FILL + '''
import torch.nn as nn


def approx_standard_normal_cdf(x):
    return 0.5 * (1.0 + torch.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * torch.pow(x, 3))))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        y = self.fc(x)
        # NumPy scalars of several kinds on the left: float64, float32, int64, a comparison
        return (approx_standard_normal_cdf(y) + np.float32(0.5) * y - np.int64(2) / (y * y + 1.0)
                + np.log(2.0) - y) * (np.float64(0.0) < y).float()


model = Net()
fill(model, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.linspace(-1, 1, 8).reshape(2, 4)
losses = []
for step in range(3):
    opt.zero_grad()
    loss = (model(x) ** 2).mean() + (np.sqrt(3.0) - model(x)).abs().mean()
    loss.backward()
    opt.step()
    losses.append(loss.item())
with torch.no_grad():
    out = model(x)
weights = [p.detach() for p in model.parameters()] + [out, torch.tensor(losses)]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_numpy_value_on_the_left_of_a_tensor_operator(graph):
    code, _ = program_weights_match_torch(NUMPY_LEFT, graph=graph)
    assert "np.sqrt(2.0 / np.pi) *" in code, code
