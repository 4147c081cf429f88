"""Minimal reproductions of real-code constructs found this stop, each compared with torch.

- A layer chosen by its exact class, `type(layer) in kinds and layer.bias is not None` with `kinds = [nn.Conv2d,
  nn.BatchNorm2d]` (jacobgil/pytorch-grad-cam's FullGrad): the access after the test was left `layer.bias`, which a
  MindSpore BatchNorm2d does not have (it holds beta): an AttributeError naming no line of the program. A `type(m) in
  LIST` / `type(m) == C` test narrows m as isinstance() does, and the operands after a test joined by `and` see the
  narrowing (before, only an `if`'s body did): the access chooses the name the cell has."""
import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

EXACT_CLASS_TESTS = _FILL + '''
import torch.nn as nn


def with_bias(layer):
    kinds = [nn.Conv2d, nn.BatchNorm2d]
    if type(layer) in kinds and layer.bias is not None:
        return True
    return False


def bias_of(layer):
    if isinstance(layer, nn.BatchNorm2d) and layer.bias is not None:
        return layer.bias * 2 + layer.running_mean
    if type(layer) == nn.Conv2d:
        return layer.bias + 1
    return None


net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Conv2d(3, 2, 1, bias=False))
fill(net, 3)
weights = [bias_of(m) for m in net.modules() if with_bias(m)]
'''


@pytest.mark.parametrize("graph", [False])
def test_exact_class_tests_narrow_the_layer(graph):
    code, _ = program_weights_match_torch(EXACT_CLASS_TESTS, graph=graph)
    assert "hasattr(layer, 'beta')" in code, code
