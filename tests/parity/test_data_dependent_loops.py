"""A mixture of experts routed by top-k (rasbt/LLMs-from-scratch's Qwen3 MoE feed-forward: a loop over
torch.unique of the chosen experts, nonzero rows, index_add_ of each expert's output). Compiled, MindSpore 2.10
unrolls a loop over a tensor while compiling, and the length of torch.unique's result is known only when the graph
runs: it stopped with an error naming no line of the program (an IndexError of StridedSlice in Qwen3's verify, a
TypeError in its train step), returned None for this small one, or compiled without end. The loop's iterable now
goes through _ms_compat.loop_rows with its line (compat_parts/data_dependent_loops.py): PyNative computes as
torch; compiling stops with MigrationError naming the loop's line. A loop over a tensor of known length still
compiles and computes as torch."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")

from .harness import check_layer, load_converted  # noqa: E402

MOE = '''
import torch
from torch import nn


class MoE(nn.Module):
    def __init__(self, dim=8, experts=4, k=2):
        super().__init__()
        self.k = k
        self.dim = dim
        self.gate = nn.Linear(dim, experts, bias=False)
        self.experts = nn.ModuleList([nn.Linear(dim, dim) for _ in range(experts)])

    def forward(self, x):
        scores = self.gate(x)
        top_scores, top_idx = torch.topk(scores, self.k, dim=-1)
        probs = torch.softmax(top_scores, dim=-1)
        out = torch.zeros(x.shape[0], self.dim, dtype=x.dtype)
        chosen = torch.unique(top_idx)
        for e in chosen:
            eid = int(e.item())
            mask = top_idx == eid
            rows = mask.any(dim=-1).nonzero(as_tuple=False).squeeze(-1)
            y = self.experts[eid](x.index_select(0, rows))
            w = torch.where(mask[rows], probs[rows], torch.zeros_like(probs[rows])).sum(-1)
            out.index_add_(0, rows, y * w.unsqueeze(-1))
        return out


def make():
    return MoE()
'''
LINE = MOE.splitlines().index("        for e in chosen:") + 1

ROWS = '''
import torch
from torch import nn


class Rows(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        total = torch.zeros(4)
        for row in self.fc(x):
            total = total + row.relu()
        return total


def make():
    return Rows()
'''


def test_a_mixture_of_experts_computes_as_torch_op_by_op():
    """Also called in GRAPH mode: its forward reads `e.item()` on the host, so the cell runs op by op there
    (graph_constants.reads_on_host, heldout51; before, it stopped with MigrationError naming the loop's line)."""
    x = np.random.default_rng(0).standard_normal((6, 8)).astype(np.float32)
    check_layer(MOE, [x], graph=True, grad=True)


def test_a_loop_over_unique_experts_compiled_raises_migration_error_naming_the_line():
    mod, code, _ = load_converted(MOE)
    assert f"_ms_compat.loop_rows(chosen, '__main__:{LINE}')" in code, code
    net = mod.MoE()
    x = ms.Tensor(np.random.default_rng(0).standard_normal((6, 8)).astype(np.float32))
    with pytest.raises(Exception) as err:
        ms.jit(net)(x)
    assert type(err.value).__name__ == "MigrationError", err.value
    assert f"the loop at __main__:{LINE} runs over a tensor whose length the data decides" in str(err.value)


def test_a_loop_over_a_tensor_of_known_length_still_compiles():
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    code, _ = check_layer(ROWS, [x], graph=True, grad=True)
    assert "_ms_compat.loop_rows(self.fc(x), " in code, code


PROGRAM = MOE.replace("\n\ndef make():\n    return MoE()\n", "") + '''

net = MoE()
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1) * 0.3)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.linspace(-1, 1, 48).reshape(6, 8)
losses = []
for step in range(3):
    opt.zero_grad()
    loss = (net(x) ** 2).mean()
    loss.backward()
    opt.step()
    losses.append(loss.item())
weights = list(net.parameters()) + [torch.tensor(losses)]
'''


def test_a_program_training_a_mixture_of_experts_starts_op_by_op_and_trains_as_torch():
    from .harness import program_weights_match_torch
    code, _ = program_weights_match_torch(PROGRAM, True, what="mixture of experts: ")
    assert "ms.set_context(mode=ms.PYNATIVE_MODE)" in code and "loops over a tensor whose length" in code, code
