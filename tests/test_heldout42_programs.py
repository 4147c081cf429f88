"""Minimal reproductions of what bench/_rw_heldout42.py's programs (gordicaleksa/pytorch-original-transformer)
needed, each compared with torch in PYNATIVE and GRAPH mode.

- `t.scatter_(dim, index, number)` where the number is a name or an attribute, not a literal (the repository's
  label smoothing scatters `self.confidence_value`, a float, into a zeros tensor): torch takes a Python number
  there by its value overload. The conversion sliced it as a tensor src (`ops.slice(self.confidence_value, ...)`),
  a TypeError at the first call. A src that is no literal now goes through _ms_compat.scatter_src, which slices a
  tensor to index's shape and passes a number as a float.
- A training step whose loop variable is an object of the program's own class holding tensors in its attributes
  (torchtext's Batch, `.src` and `.trg`, read inside the step): in GRAPH mode the compiled step refused it
  (NotImplementedError: the python type cannot be converted to MindSpore type), a crash at the first step. Such
  an argument (an instance of a class that is not MindSpore's, NumPy's or a builtin, whose attributes are only
  tensors, arrays, numbers, strings or None, one a tensor at least) now enters the compiled step as an instance
  of a mindspore.jit_class with the same attributes (compat_parts/train.py _graph_record). A compiled step that
  writes one of its attributes is refused after the step (MigrationError): MindSpore's graph reads the value from
  before the write, and the program's object would not see it.
- Found while writing the previous reproduction (not in the repository's code): a forward output kept in an
  attribute of an object before the loss (`batch.out = model(batch.src)`, then the loss from `batch.out`) stayed
  outside the converted step's forward function (the step follows the loss's names, not attributes), so the loss
  was differentiated as a constant: PYNATIVE weights 0.09 from torch's after two Adam steps, no error. Such a
  statement (one that assigns an attribute the step's statements read, from a call) now makes the group unsound
  (train_loop.py _unsound), and the loop takes the taped route, which differentiates PyNative's record."""
import numpy as np
import pytest

from tests.parity.harness import check_function, check_layer, load_converted, program_weights_match_torch, rnd
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

SCATTER_NUMBER = '''
import torch
import torch.nn as nn


class Smoothed(nn.Module):
    def __init__(self, width, peak):
        super().__init__()
        self.width = width
        self.peak = peak

    def forward(self, ids, src):
        base = torch.zeros((ids.shape[0], self.width))
        base.fill_(0.05)
        base.scatter_(1, ids, self.peak)
        other = torch.zeros((ids.shape[0], self.width)).scatter(1, ids, src)
        return base, other


def make():
    return Smoothed(6, 0.75)
'''


@pytest.mark.parametrize("graph", [False, True])
def test_scatter_of_a_number_held_in_a_name(graph):
    ids = np.array([[1], [4], [0]], dtype=np.int64)
    src = rnd(4, 2, seed=1)     # larger than ids: torch reads src only where ids is
    code, _ = check_layer(SCATTER_NUMBER, [ids, src], graph=graph)
    assert "scatter_src" in code


SCATTER_FN = '''
import torch


def fn(x, ids, value):
    return torch.scatter(x, 0, ids, value), x.scatter(1, ids[:, :3].t(), value * 2)
'''


def test_scatter_of_a_number_argument():
    x = rnd(3, 4, seed=2)
    ids = np.array([[0, 2, 1, 0]], dtype=np.int64)
    check_function(SCATTER_FN, [x, ids, 1.5])


BATCH_OBJECT = _FILL + '''
import torch.nn as nn


class Pair:
    def __init__(self, seed):
        self.src = torch.arange(12.0).reshape(4, 3) * (0.1 * seed) - 0.5
        self.trg = torch.ones(4, 2) * (0.3 * seed)
        self.tag = "pair"


model = nn.Linear(3, 2)
fill(model, 5)
opt = torch.optim.Adam(model.parameters(), lr=0.05)
seen = []
for batch in [Pair(1), Pair(2)]:
    opt.zero_grad()
    loss = ((model(batch.src) - batch.trg) ** 2).mean()
    loss.backward()
    opt.step()
    seen.append(loss.detach())
weights = [p.detach() for p in model.parameters()] + seen
'''


@pytest.mark.parametrize("graph", [False, True])
def test_train_step_over_a_batch_object(graph):
    program_weights_match_torch(BATCH_OBJECT, graph=graph)


class _Holder:
    """a program's object handed to a compiled step"""


def test_a_compiled_step_writing_into_a_batch_object_is_refused():
    """a MindSpore graph reads the value from before such a write: refused after the step, not a silent old value"""
    import mindspore as ms

    mod, _, _ = load_converted(BATCH_OBJECT, pynative=True)
    compat = mod._ms_compat

    def step(batch):
        batch.src = batch.src * 2
        return batch.src.sum()

    holder = _Holder()
    holder.src = np.ones((2, 2), np.float32)     # an array enters as a Tensor
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        with pytest.raises(compat.MigrationError, match="writes _Holder.src"):
            compat.compile_step(step)(holder)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


ATTRIBUTE_OUTPUT = _FILL + '''
import torch.nn as nn


class Pair:
    def __init__(self, seed):
        self.src = torch.arange(12.0).reshape(4, 3) * (0.1 * seed) - 0.5
        self.trg = torch.ones(4, 2) * (0.3 * seed)


model = nn.Linear(3, 2)
fill(model, 5)
opt = torch.optim.Adam(model.parameters(), lr=0.05)
for batch in [Pair(1), Pair(2)]:
    opt.zero_grad()
    batch.out = model(batch.src)
    loss = ((batch.out - batch.trg) ** 2).mean()
    loss.backward()
    opt.step()
weights = [p.detach() for p in model.parameters()]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_forward_output_kept_in_an_attribute_keeps_its_gradient(graph):
    program_weights_match_torch(ATTRIBUTE_OUTPUT, graph=graph)
