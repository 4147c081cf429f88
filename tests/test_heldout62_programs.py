"""Minimal reproductions of what bench/_rw_heldout62.py's programs (facebookresearch/mae, lucidrains/byol-pytorch,
lucidrains/vector-quantize-pytorch) met, each run under torch and converted.

- einx.get_at with a literal description (vector-quantize-pytorch's ResidualVQ.get_codes_from_indices:
  `get_at('q [c] d, b n q -> q b n d', self.codebooks, indices)`, and `get_at('[c] d, b n -> b n d', codes,
  indices)`, `get_at('b n [c] d, b n -> b n d', codes, indices)` beside it): a TODO that raised MigrationError at
  its line. It is ops.gather along the bracketed axis, the axes the tensor shares with the index as batch
  dimensions, transposed into the output's order."""
import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

EINX_GET_AT = _FILL + '''
from einx import get_at
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.codebooks = nn.Parameter(torch.zeros(3, 5, 4))     # q c d
        self.proj = nn.Linear(4, 4)

    def forward(self, x, indices):
        # x: b n d; indices: b n q
        all_codes = get_at('q [c] d, b n q -> q b n d', self.codebooks, indices)
        first = get_at('[c] d, b n -> b n d', self.codebooks[0], indices[..., 0])
        per_position = self.proj(x)[:, :, None, :] + self.codebooks[1][None, None, :3, :]     # b n c d
        picked = get_at('b n [c] d, b n -> b n d', per_position, indices[..., 1] % 3)
        swapped = get_at('q d [c], n b q -> q d n b', self.codebooks.transpose(1, 2), indices.transpose(0, 1))
        return (all_codes.sum(0) * x).pow(2).mean() + (first - x).pow(2).mean() + picked.tanh().mean() \\
            + swapped.mean()


net = Net()
fill(net, 7)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.linspace(-1, 1, 2 * 6 * 4).reshape(2, 6, 4)
indices = torch.tensor([[[0, 4, 2], [1, 1, 3], [4, 0, 0], [2, 3, 1], [3, 2, 4], [0, 0, 0]],
                        [[1, 2, 3], [4, 4, 4], [0, 1, 2], [3, 0, 1], [2, 2, 2], [1, 3, 0]]])
seen = []
for _ in range(2):
    loss = net(x, indices)
    opt.zero_grad()
    loss.backward()
    opt.step()
    seen.append(loss.detach())
weights = [p.detach().reshape(-1) for p in net.parameters()] + seen
'''


@pytest.mark.parametrize("graph", [False, True])
def test_einx_get_at(graph):
    program_weights_match_torch(EINX_GET_AT, graph=graph)
