"""A train step chosen by an `if` on a value fixed for the iteration (msmigrate/step_choice.py):
pytorch/examples word_language_model's `if args.model == 'Transformer': output = model(data) else:
hidden = repackage_hidden(hidden); output, hidden = model(data, hidden)` before backward(), reduced to a
snippet run against its conversion (per-step losses and final weights, GRAPH and PYNATIVE)."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from msmigrate.registry import TODO  # noqa: E402

from .test_train_loop import _batches, run_both  # noqa: E402

CHOSEN_NETWORK = """
import torch
import torch.nn as nn

KIND = "{kind}"


class Recurrent(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(4, 5)
        self.head = nn.Linear(5, 3)

    def forward(self, x, hidden):
        out, hidden = self.rnn(x, hidden)
        return self.head(out), hidden

    def init_hidden(self, n):
        return (torch.zeros(1, n, 5), torch.zeros(1, n, 5))


class Feedforward(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(torch.tanh(x)) * 2.0


def detached(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(detached(v) for v in h)


def make():
    model = Feedforward() if KIND == "ff" else Recurrent()
    return {{"model": model, "optimizer": torch.optim.SGD(model.parameters(), lr=0.5)}}


def train(objs, batches):
    model, optimizer = objs["model"], objs["optimizer"]
    criterion = nn.CrossEntropyLoss()
    if KIND != "ff":
        hidden = model.init_hidden(2)
    losses = []
    for x, y in batches:
        optimizer.zero_grad()
        if KIND == "ff":
            output = model(x.view(3, 2, 4))
            output = output.view(-1, 3)
        else:
            hidden = detached(hidden)
            output, hidden = model(x.view(3, 2, 4), hidden)
            output = output.view(-1, 3)
        loss = criterion(output, y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
"""


@pytest.mark.parametrize("kind", ["lstm", "ff"])
def test_network_call_chosen_by_a_fixed_flag(kind):
    """One train step per branch, under the program's own test; the recurrent branch carries its hidden
    state across steps (detached before the step, an input and an output of it): losses as torch's."""
    code, sites, _ = run_both(CHOSEN_NETWORK.format(kind=kind), _batches(n=4),
                              modes=("graph", "pynative") if kind == "lstm" else ("pynative",))
    assert not [s for s in sites if s.status == TODO], [s for s in sites if s.status == TODO]
    assert code.count("train_step = _ms_compat.compile_step(train_step)") == 2, code
    # the detach runs before the step that reads the state, not after it
    assert code.index("hidden = detached(hidden)") < code.index("loss, hidden, output = train_step(x, hidden, y)")


def test_choice_read_after_a_call_that_may_change_it_is_taped():
    """`model.eval()` before `if model.training:` may change the test's value: written at the top of the body
    it could take the other branch, so no step per branch. The group runs as written, its backward()
    differentiated from PyNative's record (taped_steps.py; its runs against torch: tests/test_taped_backward.py).
    (The program itself takes the feed-forward call on the recurrent model, torch's TypeError: converted only.)"""
    from .parity.harness import convert_snippet

    src = CHOSEN_NETWORK.format(kind="lstm").replace(
        '        optimizer.zero_grad()\n        if KIND == "ff":',
        '        optimizer.zero_grad()\n        model.train()\n        if model.training:')
    assert "if model.training:" in src
    code, sites = convert_snippet(src)
    assert "_ms_compat.tape_backward(loss)" in code and "compile_step" not in code, code
    assert not [s for s in sites if s.status == TODO], code
