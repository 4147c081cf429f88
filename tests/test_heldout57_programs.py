"""Minimal reproductions of what bench/_rw_heldout57.py's programs (zhouhaoyi/Informer2020, thuml/Autoformer,
cure-lab/LTSF-Linear, rixwew/pytorch-fm) met, each run under torch and converted.

- A model built from a class picked out of a table and cast, in a method of a class that is no Module
  (Informer2020's Exp_Informer._build_model: `model_dict[self.args.model](...).float()`): the converter took the
  receiver for a tensor and wrote `.astype(ms.float32)` on the Cell (AttributeError naming no line of the
  original). Outside a Module class such a receiver is decided at run time (module_cast.py)."""
import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

TABLE_BUILT_MODEL = _FILL + '''
import torch.nn as nn


class Small(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.lin = nn.Linear(n, 2)

    def forward(self, x):
        return self.lin(x)


class Experiment(object):
    def __init__(self, name):
        self.name = name
        self.model = self._build_model()

    def _build_model(self):
        model_dict = {'small': Small}
        model = model_dict[self.name](3).float()
        return model


exp = Experiment('small')
net = exp.model
fill(net, 3)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
seen = []
for k in range(2):
    x = torch.linspace(-1, 1, 12).reshape(4, 3) * (k + 1)
    loss = net(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    seen.append(loss.detach())
weights = [p.detach().reshape(-1) for p in net.parameters()] + seen
'''


@pytest.mark.parametrize("graph", [False, True])
def test_model_from_a_table_cast_in_a_plain_class(graph):
    code, _ = program_weights_match_torch(TABLE_BUILT_MODEL, graph=graph)
    assert "cast_tensor_or_module(model_dict[self.name](3)" in code
