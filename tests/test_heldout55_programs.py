"""Minimal reproductions of what bench/_rw_heldout55.py's programs (yanx27/Pointnet_Pointnet2_pytorch,
fxia22/pointnet.pytorch, WangYueFt/dgcnn) met, each run under torch and converted.

- A tensor compared with a NumPy scalar (Pointnet_Pointnet2's test(): `for cat in np.unique(target.cpu()):`
  then `pred_choice[target == cat]`): MindSpore 2.10's `t == np.int64(1)` is the Python bool False (and `!=` True),
  not a tensor, and indexing by it raised IndexError. The helper's Tensor `==` and `!=` take a NumPy scalar as its
  Python number.
- A Python loop MindSpore unrolls past its call depth limit (Pointnet_Pointnet2's farthest_point_sample: `for i in
  range(npoint)`, 512 turns of indexed writes and masked copies, in the network's forward): GRAPH mode stopped with
  MigrationError ("Exceed function call depth limit 1000"). Such a network, or a step reaching it, runs op by op in
  GRAPH mode (graph_constants._too_deep), as it runs in torch."""
import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

PER_CLASS = '''
import numpy as np
import torch

target = torch.tensor([0, 2, 1, 2, 0, 2])
pred = torch.tensor([0, 1, 1, 2, 2, 2])
points = torch.arange(12.0).reshape(6, 2)
seen = []
for cat in np.unique(target):
    hits = pred[target == cat].eq(target[target == cat].long()).sum()
    seen.append(hits.float().reshape(1) / float(points[target == cat].size()[0]))
    seen.append((target != cat).sum().float().reshape(1))
weights = seen
'''


@pytest.mark.parametrize("graph", [False, True])
def test_tensor_compared_with_a_numpy_scalar(graph):
    program_weights_match_torch(PER_CLASS, graph=graph)


FARTHEST_POINTS = _FILL + '''
import torch.nn as nn


def farthest_point_sample(xyz, npoint):
    B, N, _ = xyz.shape
    centroids = torch.zeros(B, npoint, dtype=torch.long)
    distance = torch.ones(B, N) * 1e10
    farthest = torch.zeros(B, dtype=torch.long)
    batch_indices = torch.arange(B, dtype=torch.long)
    for i in range(npoint):
        centroids[:, i] = farthest
        centroid = xyz[batch_indices, farthest, :].view(B, 1, 3)
        dist = torch.sum((xyz - centroid) ** 2, -1)
        mask = dist < distance
        distance[mask] = dist[mask]
        farthest = torch.max(distance, -1)[1]
    return centroids


class Sampled(nn.Module):
    def __init__(self, npoint):
        super().__init__()
        self.npoint = npoint
        self.fc = nn.Linear(3, 4)

    def forward(self, xyz):
        idx = farthest_point_sample(xyz, self.npoint)
        picked = xyz[torch.arange(xyz.shape[0]).view(-1, 1).repeat(1, self.npoint), idx, :]
        return self.fc(picked).tanh().mean(), idx


net = Sampled(60)
fill(net, 7)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
seen = []
for k in range(2):
    xyz = torch.from_numpy(np.random.RandomState(k).randn(2, 80, 3).astype(np.float32))
    loss, idx = net(xyz)
    opt.zero_grad()
    loss.backward()
    opt.step()
    seen.append(loss.detach().reshape(1))
    seen.append(idx[:, :8].reshape(-1).float())
with torch.no_grad():
    seen.append(net(xyz)[0].reshape(1))      # the network called by itself (no step)
weights = [p.detach().reshape(-1) for p in net.parameters()] + seen
'''


@pytest.mark.parametrize("graph", [False, True])
def test_loop_unrolled_past_the_call_depth_runs_op_by_op(graph):
    """A sampling loop of 60 turns against a call depth limit lowered to 64 (MindSpore's default is 1000, which the
    program's 512 turns passed): the same refusal, "Exceed function call depth limit", in a fraction of the time."""
    import mindspore as ms

    depth = ms.get_context("max_call_depth")
    ms.set_context(max_call_depth=64)
    try:
        program_weights_match_torch(FARTHEST_POINTS, graph=graph)
    finally:
        ms.set_context(max_call_depth=depth)
