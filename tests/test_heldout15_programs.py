"""Constructs found by bench/real_world.py --set heldout15 (bench/_rw_heldout15.py: karpathy/pytorch-made,
karpathy/pytorch-normalizing-flows) in programs the converter was never run on, each reduced to a minimal torch
snippet of our own run against its conversion."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .parity.harness import program_weights_match_torch  # noqa: E402

# ------------------------------------------------------------------ the gradient with respect to a Variable input
VARIABLE_INPUT = """
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable


class Masked(nn.Linear):
    def __init__(self, n_in, n_out):
        super().__init__(n_in, n_out)
        self.register_buffer('mask', torch.ones(n_out, n_in))

    def forward(self, x):
        return F.linear(x, self.mask * self.weight, self.bias)


net = nn.Sequential(Masked(4, 6), nn.ReLU(), Masked(6, 4))
with torch.no_grad():
    net[0].weight.copy_(torch.linspace(-1, 1, 24).reshape(6, 4))
    net[0].bias.fill_(0.1)
    net[2].weight.copy_(torch.linspace(1, -0.5, 24).reshape(4, 6))
    net[2].bias.fill_(0.0)
    net[0].mask.copy_(torch.from_numpy((np.arange(24).reshape(6, 4) % 3 != 0).astype(np.float32)))
x = np.array([[1.0, 0.0, 1.0, 1.0]], dtype=np.float32)
weights = []
for k in range(4):
    xtr = Variable(torch.from_numpy(x), requires_grad=True)
    xtrhat = net(xtr)
    loss = xtrhat[0, k]
    loss.backward()
    weights.append(xtr.grad[0])
    depends = (xtr.grad[0].numpy() != 0).astype(np.uint8)
    weights.append(torch.from_numpy(depends.astype(np.float32)))
"""


@pytest.mark.parametrize("graph", [False, True])
def test_gradient_with_respect_to_a_variable_input(graph):
    """made.py's autoregressive check: per output k a fresh `Variable(torch.from_numpy(x), requires_grad=True)`,
    `net(xtr)[0, k].backward()`, `xtr.grad` read. The backward() and the `.grad` read already became
    mindspore.value_and_grad over xtr, but the Variable stayed a raising TODO ("requires_grad other than False"),
    so the program stopped there. Now the Variable is its data (the gradient is value_and_grad's): the gradients
    and the dependency pattern vs torch, PYNATIVE and GRAPH."""
    code, _ = program_weights_match_torch(VARIABLE_INPUT, graph)
    assert "xtr = ops.stop_gradient(ms.Tensor.from_numpy(x))" in code, code
    assert "Unconverted" not in code, code


# ------------------------------------------------------------------ forward swapped, forward() called explicitly
FLOWS = """
import torch
import torch.nn as nn


class Affine(nn.Module):
    def __init__(self, start):
        super().__init__()
        self.s = nn.Parameter(torch.tensor([[start, start + 0.3]]))
        self.t = nn.Parameter(torch.tensor([[-start, 0.2]]))

    def forward(self, x):
        return x * torch.exp(self.s) + self.t, torch.sum(self.s, dim=1)

    def backward(self, z):
        return (z - self.t) * torch.exp(-self.s), torch.sum(-self.s, dim=1)


class Inverse(Affine):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.forward, self.backward = self.backward, self.forward


class Chain(nn.Module):
    def __init__(self, flows):
        super().__init__()
        self.flows = nn.ModuleList(flows)

    def forward(self, x):
        log_det = torch.zeros(x.shape[0])
        for flow in self.flows:
            x, ld = flow.forward(x)
            log_det += ld
        return x, log_det

    def backward(self, z):
        log_det = torch.zeros(z.shape[0])
        for flow in self.flows[::-1]:
            z, ld = flow.backward(z)
            log_det += ld
        return z, log_det


model = Chain([Affine(0.1), Inverse(0.4), Affine(-0.2)])
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
x = torch.linspace(-1, 1, 12).reshape(6, 2)
for step in range(3):
    z, log_det = model(x)
    loss = (0.5 * z ** 2).sum() - log_det.sum()
    model.zero_grad()
    loss.backward()
    optimizer.step()
with torch.no_grad():
    back, back_ld = model.backward(torch.linspace(0, 1, 12).reshape(6, 2))
weights = list(model.parameters()) + [back, back_ld]
"""


@pytest.mark.parametrize("graph", [False, True])
def test_forward_swapped_in_init_and_called_by_name(graph):
    """nflib's flows: `flow.forward(x)` over `self.flows` (an nn.ModuleList) and an inverse flow swapping
    `self.forward, self.backward = self.backward, self.forward` in __init__. Before: the loop variable's
    `.forward(x)` stayed as written (AttributeError: the Cell defines construct), and the swap assigned `forward`,
    which a Cell's call never runs: the inverse flow silently computed the forward one. Now both name construct
    (a Cell's call runs the instance's `construct`, in PYNATIVE and GRAPH): the parameters after three Adam steps
    and the inverse pass vs torch."""
    code, _ = program_weights_match_torch(FLOWS, graph)
    assert "self.construct, self.backward = self.backward, self.construct" in code, code
    assert "x, ld = flow.construct(x)" in code, code


# ------------------------------------------------------------------ torch.lu_unpack(*A.lu())
LU_PARAMETRISED = """
import torch
import torch.nn as nn


class Mix(nn.Module):
    def __init__(self):
        super().__init__()
        Q = torch.nn.init.eye_(torch.empty(3, 3))
        M = torch.tensor([[1.0, 2.0, 0.5], [3.0, 1.0, 1.0], [0.5, 4.0, 2.0]])
        P, L, U = torch.lu_unpack(*(M @ Q).lu())
        self.P = P
        self.L = nn.Parameter(L)
        self.S = nn.Parameter(U.diag())
        self.U = nn.Parameter(torch.triu(U, diagonal=1))
        self.E = torch.lu_unpack(*Q.lu())[1]

    def forward(self, x):
        L = torch.tril(self.L, diagonal=-1) + torch.diag(torch.ones(3))
        W = self.P @ L @ (torch.triu(self.U, diagonal=1) + torch.diag(self.S)) + self.E
        return x @ W, torch.sum(torch.log(torch.abs(self.S)))


model = Mix()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.linspace(-1, 1, 12).reshape(4, 3)
for step in range(3):
    z, log_det = model(x)
    loss = (z ** 2).mean() - log_det
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
weights = list(model.parameters()) + [model.P, model.E]
"""


@pytest.mark.parametrize("graph", [False, True])
def test_lu_unpack_of_a_starred_lu(graph):
    """Glow's Invertible1x1Conv: `P, L, U = torch.lu_unpack(*Q.lu())` with Q from an nn.init initialiser. Before:
    `Q.lu()` stayed as written (Q's kind unknown: AttributeError, Tensor has no lu) and lu_unpack given *args was
    a TODO. Now an initialiser's result is a tensor and a composed record called with *args binds them through a
    lambda with torch's positional parameters. `nn.Parameter(U.diag())` was a Parameter over MindSpore's diagonal
    view of U, which the optimizer's ops.assign never changed (S stayed at its first value, silently); a Parameter
    made from a computed tensor now holds a copy (_ms_compat.parameter_data). The parameters after three SGD steps
    and P vs torch."""
    code, _ = program_weights_match_torch(LU_PARAMETRISED, graph)
    assert "Unconverted" not in code, code
    assert "_ms_compat.legacy_lu(Q" in code, code
    assert "self.S = ms.Parameter(_ms_compat.parameter_data(" in code, code


# ------------------------------------------------------------------ a 2-D boolean mask followed by a full slice
MASK_SLICE = """
import torch
import torch.nn as nn

model = nn.Linear(2, 10)
with torch.no_grad():
    model.weight.copy_(torch.linspace(-1, 1, 20).reshape(10, 2))
    model.bias.copy_(torch.linspace(0.5, -0.5, 10))
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
x = torch.linspace(-2, 2, 16).reshape(8, 2)


def select(inputs, widths, bound):
    inside = (inputs >= -bound) & (inputs <= bound)
    out = torch.zeros_like(inputs)
    out[~inside] = inputs[~inside]
    out[inside] = (widths[inside, :] ** 2).sum(-1)
    return out


for step in range(3):
    w = model(x).reshape(8, 2, 5)
    out = select(x, w, 1.0)
    loss = out.sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
weights = [model.weight, model.bias, out]
"""


@pytest.mark.parametrize("graph", [False, True])
def test_two_dimensional_mask_then_full_slice(graph):
    """The spline flows' `unnormalized_widths[inside_intvl_mask, :]` with a (N, D) mask of a (N, D, K) tensor:
    MindSpore 2.10 gives (n, D) instead of torch's (n, K) for `w[mask, :]` (silently; a later gather then
    failed). Now trailing full slices after an index that may be a tensor are dropped (`w[mask,]`): the
    parameters after three Adam steps and the selection vs torch."""
    code, _ = program_weights_match_torch(MASK_SLICE, graph)
    assert "widths[inside,]" in code, code


# ------------------------------------------------------------------ a step under an `if` reading the loss made before it
UNDER_IF = """\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    model = nn.Linear(4, 4)
    opt = torch.optim.Adam(model.parameters(), 1e-2)
    x = torch.linspace(0, 1, 32).reshape(8, 4)


    def run_epoch(split):
        for step in range(3):
            xbhat = torch.zeros_like(x)
            for s in range(2):
                xbhat += model(x)
            xbhat /= 2
            loss = F.binary_cross_entropy_with_logits(xbhat, x, reduction='sum')
            if split == 'train':
                opt.zero_grad()
                loss.backward()
                opt.step()


    run_epoch('train')
"""


def test_step_under_if_reading_the_loss_matches_torch():
    """pytorch-made's run_epoch: the logits summed over a loop of network calls, the loss computed from them by a
    library function, and `loss.backward()` under `if split == 'train':`. The step of the `if` alone would take the
    loss as a constant; it was a raising TODO naming the backward()'s line, then the group ran as written, its
    backward() differentiated from PyNative's record (taped_steps.py). That was because `xbhat /= 2` calls nothing
    and was taken for data; an augmented assignment to a computed value is now part of the step
    (train_loop._updates_computed), so the `if` gets a compiled step of its own holding the whole computation: the
    weights after three Adam steps as torch's."""
    import textwrap

    from tests.test_taped_backward import _FILL     # the same starting weights on both sides
    built = "model = nn.Linear(4, 4)\n"
    src = _FILL + textwrap.dedent(UNDER_IF).replace(built, built + "fill(model, 0)\n") \
        + "weights = [p.detach() for p in model.parameters()]\n"
    assert "fill(model, 0)" in src
    code, _ = program_weights_match_torch(src, graph=False)
    step = code.split("def forward_fn")[1].split("return loss")[0]
    assert "xbhat += model(x)" in step and "xbhat /= 2" in step and "tape_backward" not in code, code
