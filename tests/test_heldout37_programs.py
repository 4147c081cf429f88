"""Minimal reproductions of what bench/_rw_heldout37.py's programs (yunjey/pytorch-tutorial,
utkuozbulak/pytorch-cnn-visualizations) needed, each compared with torch in PYNATIVE and GRAPH mode.

- `torch.autograd.Variable(h)` of a computed tensor is a new leaf in torch: no gradient flows back through it into
  h. The conversion wrote the data itself (an identity), so a train step whose loss passes through
  `Variable(encoder(x))` differentiated the encoder too and its optimizer moved weights torch leaves as they are
  (a silent difference, no TODO). Variable(data) is now `ops.stop_gradient(data)`.
- torch's LSTM takes its state (h, c) as a list too (the language model detaches its states between steps with a
  list comprehension, `[s.detach() for s in states]`, and hands the list back to the LSTM); MindSpore's LSTM
  refuses anything but a tuple (TypeError, 'hx' must be Tuple). The helper LSTM now takes a list as the tuple."""
import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

CUT_BY_VARIABLE = _FILL + '''
import torch.nn as nn
from torch.autograd import Variable

encoder = nn.Linear(3, 4)
head = nn.Linear(4, 1)
fill(encoder, 1)
fill(head, 2)
params = list(encoder.parameters()) + list(head.parameters())
opt = torch.optim.SGD(params, lr=0.3)
x = torch.linspace(-1, 1, 15).reshape(5, 3)
for step in range(2):
    opt.zero_grad()
    code = Variable(encoder(x))
    loss = (head(code) - 0.5).pow(2).mean()
    loss.backward()
    opt.step()
weights = [p.detach() for p in params]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_variable_of_a_computed_tensor_cuts_the_gradient(graph):
    code, _ = program_weights_match_torch(CUT_BY_VARIABLE, graph=graph)
    assert "ops.stop_gradient(encoder(x))" in code, code


LSTM_LIST_STATE = _FILL + '''
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 4, 1, batch_first=True)
        self.out = nn.Linear(4, 2)

    def forward(self, x, states):
        y, (h, c) = self.lstm(x, states)
        return self.out(y).sum(), (h, c)


def detach(states):
    return [s.detach() for s in states]


model = Tagger()
fill(model, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.linspace(-1, 1, 24).reshape(2, 4, 3)
states = (torch.zeros(1, 2, 4), torch.zeros(1, 2, 4))
for step in range(2):
    states = detach(states)
    loss, states = model(x, states)
    opt.zero_grad()
    loss.backward()
    opt.step()
weights = [p.detach() for p in model.parameters()] + [states[0].detach()]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_lstm_state_given_as_a_list(graph):
    program_weights_match_torch(LSTM_LIST_STATE, graph=graph)


LAYER_BY_LAYER = _FILL + '''
import torch.nn as nn


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2))

    def forward(self, x):
        for part in self.body._modules.values():
            x = part.forward(x)
        return x


def relevances(model, x):
    """each layer's output, one layer at a time, as LRP walks a model"""
    outs = [x]
    for layer in list(model._modules['body']):
        outs.append(layer.forward(outs[-1].detach()))
    return outs[1:]


model = Stack()
fill(model, 6)
opt = torch.optim.SGD(model.parameters(), lr=0.2)
x = torch.linspace(-1, 1, 12).reshape(4, 3)
for step in range(2):
    opt.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
weights = [p.detach() for p in model.parameters()] + relevances(model, x)
'''


@pytest.mark.parametrize("graph", [False, True])
def test_forward_called_on_a_layer_of_unknown_type(graph):
    code, _ = program_weights_match_torch(LAYER_BY_LAYER, graph=graph)
    assert "forward_of(layer)" in code, code
