"""Minimal reproductions of what bench/_rw_heldout55.py's programs (yanx27/Pointnet_Pointnet2_pytorch,
fxia22/pointnet.pytorch, WangYueFt/dgcnn) met, each run under torch and converted.

- A tensor compared with a NumPy scalar (Pointnet_Pointnet2's test(): `for cat in np.unique(target.cpu()):`
  then `pred_choice[target == cat]`): MindSpore 2.10's `t == np.int64(1)` is the Python bool False (and `!=` True),
  not a tensor, and indexing by it raised IndexError. The helper's Tensor `==` and `!=` take a NumPy scalar as its
  Python number."""
import pytest

from tests.parity.harness import program_weights_match_torch

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
