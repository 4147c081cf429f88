"""Minimal reproductions of what bench/_rw_heldout38.py's programs (jettify/pytorch-optimizer's hand-written
optimizers) needed, each a small optimizer of ours trained two steps and compared with torch in PYNATIVE and GRAPH
mode (the parameters and the optimizer's state tensors).

- A state tensor changed in place inside an expression, `denom = (v.add_(eps).sqrt() / c).add_(eps)` with
  `v = state["v"]` (AdaBelief's denominator): the in-place call was a raising TODO (only a local tensor changed
  nowhere else could have its rebinding put before the statement). For a name whose tensor other holders share the
  new value is written into that tensor (`v = _ms_compat.write_into(v, ...)`) before the statement, so every holder
  sees it: allowed where the call is the first thing the statement evaluates.
- `x.norm(dim=1).add_(eps)`, and `.view(shape)` of it (AdamP's and SGDP's cosine similarity): a reduction's result
  is a new tensor nobody else holds, changed in place: its out-of-place form. It was a raising TODO.
- `torch.max(m, v, out=m)` with `m = state["m"]` (AMSGrad's running maximum in AdaBelief, AdaBound, NovoGrad,
  SWATS): a raising TODO (torch.max(x, y) may be a reduction over dim y, decided at run time). A tensor given as
  out= cannot take the (values, indices) tuple, so where out= names the input the call is the elementwise maximum;
  and the result is written into the state's tensor (a rebinding of m alone left the state unchanged).
- `for w in group["params"]: ... w.new(1)` (SWATS): the loop variable over a param group's parameters was of no
  known kind, so `w.new(1)` stayed as written (AttributeError of MindSpore's Parameter, naming no line). A loop
  over `group["params"]` of a `for group in self.param_groups` loop binds tensors.
- A chain of in-place calls on a name that its statement evaluates first, `d = (g.div_(c).mul_(v).sum() - b)`
  (Apollo) or `g = g.add_(a).add_(b)` (PID): a raising TODO (the second link's receiver is a call). Its links are
  now whole statements before it (`g.div_(c); g.mul_(v); d = (g.sum() - b)`), which the main pass converts.
- `d_p = p.grad.data` then `d_p.add(momentum, buf)` (SGDW's nesterov step, torch's legacy (Number, Tensor)
  overload): d_p was of no known kind, so the call stayed as written (TypeError in MindSpore, naming no line).
  `x.grad` of a tensor name is a tensor.
- `torch.mul(r, c, out=output)` where output is a parameter of the function (Adafactor's `_approx_sq_grad`, whose
  caller reads the tensor it passed): the rebinding `output = ...` left the caller's tensor unchanged, a silent
  difference. Outside graph code the result is now written into the caller's tensor (_ms_compat.write_into).
  `torch.rsqrt(v, out=u).mul_(g)` (Adafactor's unfactored step) was a raising TODO: it is the out= call, then the
  links on u."""
import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

_TRAIN = '''
net = torch.nn.Linear(3, 2)
fill(net, 1)
opt = Tiny(net.parameters())
x = torch.linspace(-1, 1, 12).reshape(4, 3)
for step in range(2):
    opt.zero_grad()
    loss = (net(x) - 0.25).pow(2).mean()
    loss.backward()
    opt.step()
weights = [p.detach() for p in net.parameters()] + [opt.state[p][k] for p in net.parameters() for k in KEYS]
'''


def _tiny_optimizer(keys):
    """The head of a hand-written optimizer of ours up to its loop over the param groups; keys: its state's."""
    return f"""from torch.optim import Optimizer

KEYS = {keys}


class Tiny(Optimizer):
    def __init__(self, params, lr=0.1):
        super().__init__(params, dict(lr=lr))

    def step(self, closure=None):
        for group in self.param_groups:
"""

STATE_CHANGED_IN_AN_EXPRESSION = _FILL + '''
''' + _tiny_optimizer('("v",)') + '''
            for p in group["params"]:
                state = self.state[p]
                if len(state) == 0:
                    state["v"] = torch.zeros_like(p.data)
                v = state["v"]
                v.mul_(0.5).addcmul_(p.grad, p.grad, value=0.5)
                denom = (v.add_(0.01).sqrt() / 2.0).add_(1e-3)
                p.data.addcdiv_(p.grad, denom, value=-group["lr"])
''' + _TRAIN


@pytest.mark.parametrize("graph", [False, True])
def test_state_tensor_changed_in_place_inside_an_expression(graph):
    code, _ = program_weights_match_torch(STATE_CHANGED_IN_AN_EXPRESSION, graph=graph)
    assert "v = _ms_compat.write_into(v, ops.add(v, 0.01))" in code, code


NORM_CHANGED_IN_PLACE = _FILL + '''
''' + _tiny_optimizer('()') + '''
            for p in group["params"]:
                g = p.grad.data.view(p.size(0), -1)
                scale = g.norm(dim=1).add_(0.5)
                shaped = g.norm(dim=1).view(-1, 1).add_(1.0)
                step = (g / shaped).view_as(p.data) * scale.mean()
                p.data.add_(step, alpha=-group["lr"])
''' + _TRAIN


@pytest.mark.parametrize("graph", [False, True])
def test_a_reduction_changed_in_place(graph):
    program_weights_match_torch(NORM_CHANGED_IN_PLACE, graph=graph)


RUNNING_MAXIMUM = _FILL + '''
''' + _tiny_optimizer('("sq", "top")') + '''
            for p in group["params"]:
                state = self.state[p]
                if len(state) == 0:
                    state["sq"] = torch.zeros_like(p.data)
                    state["top"] = torch.zeros_like(p.data)
                sq, top = state["sq"], state["top"]
                sq.mul_(0.5).addcmul_(p.grad, p.grad, value=0.5 if len(p.shape) > 1 else 2.0)
                torch.max(top, sq, out=top)
                p.data.addcdiv_(p.grad, top.sqrt().add(0.1), value=-group["lr"])
''' + _TRAIN


@pytest.mark.parametrize("graph", [False, True])
def test_running_maximum_into_the_state(graph):
    program_weights_match_torch(RUNNING_MAXIMUM, graph=graph)


NEW_OF_A_GROUP_PARAMETER = _FILL + '''
''' + _tiny_optimizer('("count",)') + '''
            for w in group["params"]:
                state = self.state[w]
                if len(state) == 0:
                    state["count"] = w.new(1).fill_(0)
                state["count"] = state["count"] + 1
                w.data.add_(w.grad * state["count"], alpha=-group["lr"])
''' + _TRAIN


@pytest.mark.parametrize("graph", [False, True])
def test_new_of_a_param_group_parameter(graph):
    code, _ = program_weights_match_torch(NEW_OF_A_GROUP_PARAMETER, graph=graph)
    assert "ops.zeros((1,), w.dtype)" in code, code


CHAIN_EVALUATED_FIRST = _FILL + '''
''' + _tiny_optimizer('("b",)') + '''
            for p in group["params"]:
                state = self.state[p]
                if len(state) == 0:
                    state["b"] = torch.ones_like(p.data)
                b = state["b"]
                g = p.grad.data.clone()
                g = g.add_(b, alpha=0.5).add_(p.data, alpha=0.1)
                moved = p.grad.data.clone()
                shift = (moved.div_(2.0).mul_(g).sum().mul(-0.5) - b.mul(g).sum())
                b.add_(shift * 0.01)
                p.data.add_(g, alpha=-group["lr"])
''' + _TRAIN


@pytest.mark.parametrize("graph", [False, True])
def test_inplace_chain_evaluated_first(graph):
    program_weights_match_torch(CHAIN_EVALUATED_FIRST, graph=graph)


LEGACY_ADD_OF_A_GRADIENT = _FILL + '''
''' + _tiny_optimizer('("buf",)') + '''
            for p in group["params"]:
                d_p = p.grad.data
                state = self.state[p]
                if "buf" not in state:
                    state["buf"] = torch.clone(d_p).detach()
                buf = state["buf"]
                buf.mul_(0.9).add_(d_p)
                d_p = d_p.add(0.9, buf)
                p.data.sub_(d_p * group["lr"])
''' + _TRAIN


@pytest.mark.parametrize("graph", [False, True])
def test_legacy_add_on_a_gradient(graph):
    program_weights_match_torch(LEGACY_ADD_OF_A_GRADIENT, graph=graph)


OUT_INTO_THE_CALLERS_TENSOR = _FILL + '''
from torch.optim import Optimizer

KEYS = ("sq",)


class Tiny(Optimizer):
    def __init__(self, params, lr=0.1):
        super().__init__(params, dict(lr=lr))

    def _scaled(self, a, b, output):
        torch.mul(a.rsqrt(), b, out=output)

    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                if len(state) == 0:
                    state["sq"] = torch.ones_like(p.data)
                update = p.grad ** 2 + 0.5
                sq = state["sq"]
                sq.mul_(0.5).add_(update, alpha=0.5)
                if p.dim() > 1:
                    self._scaled(sq, p.grad, update)
                else:
                    torch.rsqrt(sq, out=update).mul_(p.grad)
                p.data.add_(update, alpha=-group["lr"])
''' + _TRAIN


@pytest.mark.parametrize("graph", [False, True])
def test_out_into_the_callers_tensor(graph):
    program_weights_match_torch(OUT_INTO_THE_CALLERS_TENSOR, graph=graph)


def test_addcdiv_by_a_small_denominator():
    """`p.addcdiv_(m, v.sqrt().add_(eps), value=-lr)` where the gradient was 0 (a dead unit: m = v = 0, the
    denominator eps = 1e-8; examples/mnist.py's DiffGrad): MindSpore 2.10's ops.addcdiv gave nan there, and the
    converted network's weights became nan after one step. torch's formula is written out."""
    from tests.parity.harness import check_function
    src = '''
import torch


def fn(p, m, v):
    q = torch.addcdiv(p, m, v.sqrt().add(1e-8), value=-0.01)
    return q, p.addcdiv(m, v + 1e-8)
'''
    import numpy as np
    p = np.ones(4, np.float32)
    m = np.array([0.0, 1e-6, 0.5, 0.0], np.float32)
    v = np.array([0.0, 0.0, 1e-12, 0.25], np.float32)
    check_function(src, [p, m, v])
