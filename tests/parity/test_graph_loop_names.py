"""Names a loop of forward binds and code after the loop reads, as converted
(msmigrate/graph_branch_names.py): values and input gradients in GRAPH mode (and PyNative) against torch.

- `for i in range(n): ...` then `i` read after the loop, and a name the loop body binds read after it
  (pytorch/examples time_sequence_prediction: `output` of the first loop read by the second): GRAPH mode
  (MindSpore 2.10) stops compiling ("UnboundLocalError: The local variable 'output' defined in the 'for'
  loop body cannot be used outside of the loop body"); the same for `while`. Bound to None before the loop.
- a name an `if` inside a loop binds and the loop body reads after the `if` (`if j == 0: first = h`, read in
  every later iteration): bound to None before the outermost loop, not before the `if` (there it would
  overwrite, in the second iteration, what the first bound)."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .test_graph_safety import check_graph, rnd  # noqa: E402

SRC = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(1, 1)

    def forward(self, x, future=2):
        outputs = []
        for x_t in x.split(1, dim=1):
            output = self.fc(x_t)
            outputs += [output]
        for i in range(future):
            output = self.fc(output)
            outputs += [output]
        k = 0
        while k < 2:
            last = output * k
            k += 1
        for j in range(3):
            if j == 0:
                first = outputs[0]
            outputs[j] = outputs[j] + first
        return torch.cat(outputs, dim=1) * i + last


def make():
    return Net()
'''


def test_names_a_loop_binds_read_after_it_in_graph():
    code, _ = check_graph(SRC, rnd(2, 3), (2, 5))
    lines = [t.strip() for t in code.splitlines()]
    for name, loop in (("output", "for x_t in ops.split(x, 1, axis=1):"), ("i", "for i in range(future):"),
                       ("last", "while k < 2:"), ("first", "for j in range(3):")):
        assert lines.index(f"{name} = None") + 1 == lines.index(loop), (name, code)
    assert code.count("first = None") == 1, code
