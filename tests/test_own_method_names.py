"""Methods of the program's own named like nn.Module's (train, parameters): a call on an instance of a project
class that is surely no Module, or with more positional arguments than torch's method takes, is the program's
method and stays as written; nn.Module's own calls are still converted."""
from __future__ import annotations

from tests.parity.harness import convert_snippet

SRC = '''
import torch
import torch.nn as nn


class Base(object):
    pass


class Trainer(Base):
    def __init__(self, model):
        self.model = model

    def train(self):
        self.model.train()
        return "trained"

    def parameters(self):
        return {"lr": 0.1}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def train(self, x_pos, x_neg):
        return x_pos - x_neg


def go(m):
    t = Trainer(m)
    done = t.train()
    lr = t.parameters()["lr"]
    m.train()
    net = Net()
    diff = net.train(torch.ones(2), torch.zeros(2))
    net.eval()
    return done, lr, diff


top = Trainer(Net())
top.train()
'''


def test_own_methods_stay_and_module_methods_convert():
    code, _ = convert_snippet(SRC)
    assert "done = t.train()" in code and 't.parameters()["lr"]' in code, code
    assert "top.train()" in code, code
    assert "diff = net.train(ops.ones(2), ops.zeros(2))" in code, code
    assert "self.model.set_train(True)" in code and "m.set_train(True)" in code and "net.set_train(False)" in code, code


def test_own_methods_run():
    from tests.parity.harness import load_converted

    mod = load_converted(SRC)[0]
    done, lr, diff = mod.go(mod.Net())
    assert (done, lr) == ("trained", 0.1)
    assert diff.asnumpy().tolist() == [1.0, 1.0]
