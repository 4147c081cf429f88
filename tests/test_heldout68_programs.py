"""Minimal reproductions of what bench/_rw_heldout68.py's programs (thuml/Time-Series-Library,
dreamquark-ai/tabnet, kekmodel/FixMatch-pytorch) met, each run under torch and converted.

- `exp.train(setting)` on an object the converter cannot type (Time-Series-Library's run.py: `Exp =
  Exp_Long_Term_Forecast` in one branch of many, `exp = Exp(args)`, then `exp.train(setting)`, the experiment
  class's own training loop): the call was taken for torch's Module.train and became `exp.set_train(setting)`
  (AttributeError, naming no line of the program). A `.train(arg)` on a receiver of unknown type whose argument is
  no True/False literal is now _ms_compat.train_of: an nn.Cell's mode (torch's ValueError for a mode that is no
  bool), any other object's own train() (transformer._train_of_unknown, compat_parts/train_overrides.py)."""
import numpy as np
import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

# Time-Series-Library's run.py: an experiment object, chosen by a branch, whose train(setting) trains its model
EXPERIMENT_TRAIN = _FILL + '''
import torch.nn as nn


class ExpForecast:
    def __init__(self, width):
        self.model = nn.Sequential(nn.Linear(3, width), nn.BatchNorm1d(width), nn.Tanh(), nn.Linear(width, 2))
        fill(self.model, 4)

    def train(self, setting):
        opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.model.train()
        x = torch.linspace(-1, 1, 12).reshape(4, 3)
        for i in range(3):
            opt.zero_grad()
            loss = ((self.model(x * (i + 1)) - 0.5) ** 2).mean()
            loss.backward()
            opt.step()
        self.setting = setting
        return self.model


task = "forecast"
if task == "forecast":
    Exp = ExpForecast
else:
    Exp = None
exp = Exp(5)
setting = "forecast_5"
model = exp.train(setting)
evaluating = False
model.train(evaluating)      # a Cell's mode from a variable
with torch.no_grad():
    out = model(torch.linspace(0, 1, 6).reshape(2, 3))
weights = [p.detach().reshape(-1) for p in model.parameters()] + [out.reshape(-1)] \\
    + [torch.tensor([float(len(exp.setting)), float(model.training)])]
'''


def test_train_of_an_object_of_unknown_type():
    """Before: `exp.set_train(setting)`, AttributeError ('ExpForecast' object has no attribute 'set_train'). Now
    the experiment's own train(setting) runs (its loop's losses and weights torch's), and the model's
    `.train(evaluating)` sets the mode (the eval-mode output torch's)."""
    code, _ = program_weights_match_torch(EXPERIMENT_TRAIN, graph=False)
    assert "_ms_compat.train_of(exp, setting)" in code and "_ms_compat.train_of(model, evaluating)" in code, code
