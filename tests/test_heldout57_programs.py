"""Minimal reproductions of what bench/_rw_heldout57.py's programs (zhouhaoyi/Informer2020, thuml/Autoformer,
cure-lab/LTSF-Linear, rixwew/pytorch-fm) met, each run under torch and converted.

- A model built from a class picked out of a table and cast, in a method of a class that is no Module
  (Informer2020's Exp_Informer._build_model: `model_dict[self.args.model](...).float()`): the converter took the
  receiver for a tensor and wrote `.astype(ms.float32)` on the Cell (AttributeError naming no line of the
  original). Outside a Module class such a receiver is decided at run time (module_cast.py); so is the class of a
  module picked from a table (Autoformer's and LTSF-Linear's `model_dict[self.args.model].Model(self.args).float()`).
- An embedding table sized by a NumPy integer (pytorch-fm's FeaturesEmbedding: `nn.Embedding(sum(field_dims),
  embed_dim)` with field_dims a NumPy array): MindSpore's Embedding takes a Python int only (TypeError naming no
  line of the original); a size computed by a call or read from an array is written `int(value)`.
- The weight of each entry of a ModuleList built by a comprehension of one layer class (pytorch-fm's
  FieldAwareFactorizationMachine: `for embedding in self.embeddings: nn.init.xavier_uniform_(embedding.weight.data)`):
  the loop variable's class was unknown, `.weight` stayed (AttributeError of MindSpore's Embedding, whose table is
  embedding_table); such a list's entries, looped over or indexed, have that class (param_containers.py).
- Two list appends written as one tuple statement in forward (pytorch-fm's InnerProductNetwork and
  AttentionalFactorizationMachine: `row.append(i), col.append(j)`): GRAPH mode dropped the appends, the lists stayed
  empty (`x[:, row]` stopped compiling); each call is its own statement on the line (graph_mutations.py).
- A roll by a shift read from a tensor in forward (Autoformer's time_delay_agg_training: `torch.roll(values,
  -int(index[i]), -1)`, index from torch.topk): GRAPH mode's mindspore.numpy.roll takes constant shifts only
  (the compiled step stopped); such a roll is a gather of the rolled positions (_ms_compat.roll_by)."""
import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

TABLE_BUILT_MODEL = _FILL + '''
import types

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
models = types.SimpleNamespace(Small=Small)
other = {'small': models}['small'].Small(3).float()
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
fill(other, 3)
weights = [p.detach().reshape(-1) for p in net.parameters()] + seen + [other(x)]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_model_from_a_table_cast_in_a_plain_class(graph):
    code, _ = program_weights_match_torch(TABLE_BUILT_MODEL, graph=graph)
    assert "cast_tensor_or_module(model_dict[self.name](3)" in code
    assert "cast_tensor_or_module({'small': models}['small'].Small(3)" in code


NUMPY_SIZED_EMBEDDING = _FILL + '''
import torch.nn as nn


class Features(nn.Module):
    def __init__(self, field_dims, embed_dim):
        super().__init__()
        self.embedding = nn.Embedding(sum(field_dims), embed_dim)
        self.first = nn.Embedding(field_dims[0], embed_dim, padding_idx=0)
        self.offsets = np.array((0, *np.cumsum(field_dims)[:-1]), dtype=np.int64)

    def forward(self, x):
        x2 = x + x.new_tensor(self.offsets).unsqueeze(0)
        return self.embedding(x2).sum(dim=1) + self.first(x[:, 0])


net = Features(np.array([3, 4]), 2)
fill(net, 5)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
seen = []
for k in range(2):
    x = torch.tensor([[0, 1], [2, 3], [1, 0]])
    loss = net(x).pow(2).mean() * (k + 1)
    opt.zero_grad()
    loss.backward()
    opt.step()
    seen.append(loss.detach())
weights = [p.detach().reshape(-1) for p in net.parameters()] + seen
'''


@pytest.mark.parametrize("graph", [False, True])
def test_embedding_sized_by_a_numpy_integer(graph):
    code, _ = program_weights_match_torch(NUMPY_SIZED_EMBEDDING, graph=graph)
    assert "nn.Embedding(int(sum(field_dims))" in code


LIST_OF_EMBEDDINGS = _FILL + '''
import torch.nn as nn


class FieldAware(nn.Module):
    def __init__(self, n, fields, embed_dim):
        super().__init__()
        self.num_fields = fields
        self.embeddings = nn.ModuleList([nn.Embedding(n, embed_dim) for _ in range(fields)])
        for embedding in self.embeddings:
            nn.init.xavier_uniform_(embedding.weight.data)

    def forward(self, x):
        xs = [self.embeddings[i](x) for i in range(self.num_fields)]
        return xs[0][:, 1] * xs[1][:, 0] + self.embeddings[1].weight.sum()


net = FieldAware(5, 2, 3)
fill(net, 6)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
seen = []
for k in range(2):
    x = torch.tensor([[0, 4], [2, 3], [1, 0]])
    loss = net(x).pow(2).mean() * (k + 1)
    opt.zero_grad()
    loss.backward()
    opt.step()
    seen.append(loss.detach())
weights = [p.detach().reshape(-1) for p in net.parameters()] + seen
'''


@pytest.mark.parametrize("graph", [False, True])
def test_weight_of_each_entry_of_a_list_of_embeddings(graph):
    code, _ = program_weights_match_torch(LIST_OF_EMBEDDINGS, graph=graph)
    assert "xavier_uniform_(embedding.embedding_table.data)" in code


TUPLE_OF_APPENDS = _FILL + '''
import torch.nn as nn


class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)

    def forward(self, x):
        x = self.lin(x)
        num_fields = x.shape[1]
        row, col = list(), list()
        for i in range(num_fields - 1):
            for j in range(i + 1, num_fields):
                row.append(i), col.append(j)
        return torch.sum(x[:, row] * x[:, col], dim=2)


net = Inner()
fill(net, 7)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
seen = []
for k in range(2):
    x = torch.linspace(-1, 1, 2 * 3 * 2).reshape(2, 3, 2) * (k + 1)
    loss = net(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    seen.append(loss.detach())
weights = [p.detach().reshape(-1) for p in net.parameters()] + seen
'''


@pytest.mark.parametrize("graph", [False, True])
def test_list_appends_written_as_one_tuple(graph):
    code, _ = program_weights_match_torch(TUPLE_OF_APPENDS, graph=graph)
    assert "row.append(i); col.append(j)" in code


ROLL_BY_VALUE = _FILL + '''
import torch.nn as nn


class Delays(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(5, 5)

    def forward(self, x):
        values = self.lin(x)
        index = torch.topk(torch.mean(values, dim=0), 2, dim=-1)[1]
        agg = torch.zeros_like(values)
        for i in range(2):
            agg = agg + torch.roll(values, -int(index[i]), -1) * (i + 1)
        return agg + torch.roll(values, 1, 0)


net = Delays()
fill(net, 8)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
seen = []
for k in range(2):
    x = torch.linspace(-1, 1, 3 * 5).reshape(3, 5) * (k + 1)
    loss = net(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    seen.append(loss.detach())
weights = [p.detach().reshape(-1) for p in net.parameters()] + seen
'''


@pytest.mark.parametrize("graph", [False, True])
def test_roll_by_a_shift_read_from_a_tensor(graph):
    code, _ = program_weights_match_torch(ROLL_BY_VALUE, graph=graph)
    assert "_ms_compat.roll_by(values, -int(index[i]), -1)" in code
