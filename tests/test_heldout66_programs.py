"""Minimal reproductions of what bench/_rw_heldout66.py's programs (pmixer/SASRec.pytorch,
gusye1234/LightGCN-PyTorch, meijieru/crnn.pytorch) met, each run under torch and converted.

- BCEWithLogitsLoss (mean) over a number of elements that changes from batch to batch (SASRec's loss over the
  positions `np.where(pos != 0)` picks): MindSpore 2.10's kernel gradient kept dividing by the element count of its
  first call in the process (a batch of 8 after one of 5 got 8/5 of torch's gradient; the loss itself right, so only
  the training drifted). _ms_compat.binary_cross_entropy_with_logits takes the kernel's elementwise loss and reduces
  it itself.
- A coalesced sparse matrix's `indices()` and `values()` (LightGCN's edge dropout): MindSpore's COOTensor holds them
  as attributes (TypeError "'Tensor' object is not callable"); in a file that builds sparse matrices they are
  _ms_compat.sparse_or_indices / sparse_or_values. Built inside a compiled step, the new matrix is MindSpore's own
  COOTensor (a graph builds no subclass of it: AttributeError "'Tensor' object has no attribute 'indices'").
- A project module's import name rebound to the model it builds (crnn.pytorch's `crnn = crnn.CRNN(...)`): the name
  stayed the module in the import table, so `crnn.parameters()` and the rest were left as written; any imported
  name a module-level assignment binds to a computed value leaves the table now (not torch's alone).
- torch.autograd.Variable as a type (crnn.pytorch's averager: `isinstance(v, Variable)`): it was its call's target,
  ops.stop_gradient (TypeError from isinstance); as a type it is mindspore.Tensor."""
import numpy as np
import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

# a mean over the picked positions, their number changing from batch to batch
BCE_OF_PICKED = _FILL + '''
import torch
import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 3)
        self.fc = nn.Linear(3, 1)

    def forward(self, seq):
        h = self.fc(self.emb(torch.LongTensor(seq))).squeeze(-1)
        return h, -h


net = Scorer()
fill(net, 0)
crit = nn.BCEWithLogitsLoss()
opt = torch.optim.SGD(net.parameters(), lr=0.5)
rng = np.random.RandomState(0)
for step in range(4):
    seq, pos = rng.randint(0, 10, (2, 5)), rng.randint(0, 2, (2, 5))
    pos_logits, neg_logits = net(seq)
    opt.zero_grad()
    indices = np.where(pos != 0)
    loss = crit(pos_logits[indices], torch.ones(pos_logits.shape)[indices])
    loss += crit(neg_logits[indices], torch.zeros(neg_logits.shape)[indices])
    loss.backward()
    opt.step()

weights = [p.detach() for p in net.parameters()]
'''


def test_bce_with_logits_mean_over_a_changing_number_of_elements():
    program_weights_match_torch(BCE_OF_PICKED, graph=False)


# a coalesced sparse matrix's indices() and values() (LightGCN's edge dropout: the kept entries of
# `x.indices().t()` and `x.values()` make a new torch.sparse.FloatTensor); a dict's values() in the same file
SPARSE_EDGES = _FILL + '''
import torch
import torch.nn as nn

rows = torch.tensor([0, 1, 2, 3, 0, 2, 1, 3, 3])
cols = torch.tensor([1, 0, 3, 2, 2, 0, 3, 1, 0])
graph = torch.sparse.FloatTensor(torch.stack([rows, cols]), torch.linspace(0.2, 1.0, 9), torch.Size([4, 4]))
graph = graph.coalesce()
keep = torch.from_numpy(np.array([1, 0, 1, 1, 0, 1, 1, 1, 0], bool))


def dropped(x):
    size = x.size()
    index = x.indices().t()
    values = x.values()
    index = index[keep]
    values = values[keep] / 0.7
    return torch.sparse.FloatTensor(index.t(), values, size)


emb = nn.Embedding(4, 3)
fill(emb, 0)
opt = torch.optim.SGD(emb.parameters(), lr=0.1)
sizes = {'a': 1.0, 'b': 2.0}
for step in range(3):
    out = torch.sparse.mm(dropped(graph), emb.weight)
    loss = (out ** 2).sum() * sum(sizes.values())
    opt.zero_grad()
    loss.backward()
    opt.step()

weights = [p.detach() for p in emb.parameters()] + [graph.values(), graph.indices().float()]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_indices_and_values_of_a_sparse_matrix(graph):
    """[True]: the matrix is built inside the compiled step, as MindSpore's own COOTensor there"""
    code, _ = program_weights_match_torch(SPARSE_EDGES, graph=graph)
    assert "sparse_or_indices(" in code and "sparse_or_values(" in code, code


# a module of the project imported under a name the program then binds to the model the module builds
# (crnn.pytorch's train.py: `import models.crnn as crnn`, then `crnn = crnn.CRNN(...)`, `crnn.parameters()`)
MODULE_NAME_REBOUND = '''
import torch
import torch.nn as nn

import netdefs as netdefs

netdefs = netdefs.Net()
netdefs.apply(netdefs.init_weights)
opt = torch.optim.SGD(netdefs.parameters(), lr=0.1)
x = torch.linspace(-1.0, 1.0, 12).reshape(4, 3)
for step in range(3):
    netdefs.train()
    netdefs.zero_grad()
    loss = (netdefs(x) ** 2).mean()
    loss.backward()
    opt.step()
netdefs.eval()

weights = [p.detach() for p in netdefs.parameters()]
'''

NETDEFS = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(x)

    def init_weights(self, m):
        if isinstance(m, nn.Linear):
            with torch.no_grad():
                m.weight.copy_(torch.linspace(-0.5, 0.5, 6).reshape(2, 3))
                m.bias.fill_(0.1)
'''


def test_project_module_name_rebound_to_its_model(tmp_path):
    import importlib
    import sys

    import mindspore as ms

    from msmigrate.cli import main as cli_main
    from tests.parity.harness import assert_close

    src = tmp_path / "src"
    src.mkdir()
    (src / "h66_rebound.py").write_text(MODULE_NAME_REBOUND)
    (src / "netdefs.py").write_text(NETDEFS)
    out = tmp_path / "out"
    assert cli_main(["convert", str(src), "-o", str(out), "-q"]) == 0
    code = (out / "h66_rebound.py").read_text()
    assert "netdefs.trainable_params()" in code and "netdefs.set_train(True)" in code, code
    weights = []
    for where in (src, out):
        sys.path.insert(0, str(where))
        try:
            weights.append(importlib.import_module("h66_rebound").weights)
        finally:
            sys.path.remove(str(where))
            for name in ("netdefs", "h66_rebound", "_ms_compat"):
                sys.modules.pop(name, None)
            ms.set_context(mode=ms.PYNATIVE_MODE)
    want, got = weights
    assert len(got) == len(want) == 2
    for g, w in zip(got, want):
        assert_close(g, w.detach(), rtol=1e-5, atol=1e-6, what="rebound module name")


# torch.autograd.Variable as a type (crnn.pytorch's utils.averager.add: `if isinstance(v, Variable): ...`): every
# tensor is one since torch 0.4; the call's target, ops.stop_gradient, made isinstance raise TypeError
VARIABLE_TYPE = """
import torch
from torch.autograd import Variable


def fn(x):
    v = Variable(x * 2)
    if isinstance(v, Variable):
        return v.sum() + 1
    return v.sum()
"""


def test_variable_as_a_type():
    from tests.parity.test_torch_runtime import _both

    t_out, m_out, code, _ = _both(VARIABLE_TYPE, np.arange(6, dtype=np.float32))
    assert "isinstance(v, ms.Tensor)" in code, code
    assert float(m_out.asnumpy()) == float(t_out) == 31.0
