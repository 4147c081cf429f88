"""An optimizer a module keeps in an attribute (`self.optimizer = optim.Adam(self.parameters())`: minimalRL's
agents, a layer that trains itself). torch's optimizer is no submodule; a MindSpore optimizer is a Cell, and a
Cell attribute registers it, so the converted module's state_dict() listed the optimizer's moments and step
(`optimizer.exp_avg.fc.weight`...) and its parameters were renamed under it. It is now set as a plain attribute
(`object.__setattr__`): the same keys as torch, and the same training."""
import pytest

from tests.parity.harness import load_converted, load_torch, program_weights_match_torch
from tests.test_taped_backward import _FILL

AGENT = _FILL + '''
import torch.nn as nn
import torch.optim as optim


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.out = nn.Linear(2, 1)
        self.optimizer = optim.Adam(self.parameters(), lr=0.05)

    def forward(self, x):
        return self.out(torch.tanh(self.fc(x)))

    def train_net(self, x):
        loss = ((self(x) - 1.0) ** 2).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


agent = Agent()
fill(agent, 3)
x = torch.linspace(-1, 1, 12).reshape(4, 3)
losses = [agent.train_net(x) for _ in range(3)]
keys = sorted(agent.state_dict().keys())
names = [n for n, _ in agent.named_parameters()]
weights = [p.detach() for p in agent.parameters()] + [torch.tensor(losses)]
'''


@pytest.mark.parametrize("graph", [False, True], ids=["pynative", "graph"])
def test_module_holding_its_optimizer_trains_as_torch(graph):
    code, _ = program_weights_match_torch(AGENT, graph)
    assert 'object.__setattr__(self, "optimizer"' in code, code


def test_module_holding_its_optimizer_lists_torch_keys():
    mod, _, _ = load_converted(AGENT, pynative=True)
    ref = load_torch(AGENT)
    assert mod.keys == ref["keys"] == ["fc.bias", "fc.weight", "out.bias", "out.weight"]
    assert mod.names == ref["names"]
