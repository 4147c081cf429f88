"""Minimal reproductions of what bench/_rw_heldout49.py's programs (dragen1860/MAML-Pytorch,
clovaai/CutMix-PyTorch) met, each run under torch and converted.

- MAML's meta-step (meta.py Meta.forward): per task, a loss of a network run functionally from its parameter
  list, `torch.autograd.grad(loss, net.parameters())` in a loop, fast weights by `list(map(lambda p: p[1] - lr *
  p[0], zip(grad, params)))`, the query loss through them summed over the tasks, then `backward()` of that sum and
  the outer optimizer's step: a gradient of a gradient, over a loop. torch.autograd.grad is converted where its
  output is computed from its inputs by straight-line statements of one function; here it is not, and the converted
  program stops at the first inner gradient with MigrationError naming the original line (not converted:
  a conversion would differentiate the whole meta-step as one function of the parameters)."""
import pytest

MAML_STEP = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Functional(nn.Module):
    def __init__(self):
        super().__init__()
        self.vars = nn.ParameterList([nn.Parameter(torch.linspace(-0.5, 0.5, 12).reshape(3, 4)),
                                      nn.Parameter(torch.zeros(3))])

    def forward(self, x, vars=None):
        if vars is None:
            vars = self.vars
        return F.linear(x, vars[0], vars[1])

    def parameters(self):
        return self.vars


net = Functional()
outer = torch.optim.Adam(net.parameters(), lr=1e-2)
x = torch.linspace(-1, 1, 24).reshape(2, 3, 4)
y = torch.tensor([[0, 1, 2], [2, 1, 0]])
total = 0
for i in range(2):
    loss = F.cross_entropy(net(x[i]), y[i])
    grad = torch.autograd.grad(loss, net.parameters())
    fast = list(map(lambda p: p[1] - 0.4 * p[0], zip(grad, net.parameters())))
    total = total + F.cross_entropy(net(x[i], fast), y[i])
outer.zero_grad()
total.backward()
outer.step()
weights = [p.detach() for p in net.parameters()]
'''


def test_maml_meta_step_runs_under_torch():
    from tests.parity.harness import load_torch
    ns = load_torch(MAML_STEP)
    assert len(ns["weights"]) == 2


def test_maml_meta_step_stops_at_the_inner_gradient():
    """The inner torch.autograd.grad in the task loop (meta.py:86 in the bench): MigrationError naming the line
    (the snippet's line of `torch.autograd.grad`), not a wrong gradient."""
    from tests.parity.harness import load_converted
    line = MAML_STEP.splitlines().index("    grad = torch.autograd.grad(loss, net.parameters())") + 1
    with pytest.raises(Exception, match=r"MigrationError|torch\.autograd\.grad at \S+:%d" % line) as err:
        load_converted(MAML_STEP, pynative=True)
    assert "torch.autograd.grad at" in str(err.value) and (":%d " % line) in str(err.value)
