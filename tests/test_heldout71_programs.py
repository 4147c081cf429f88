"""Minimal reproductions of what bench/_rw_heldout71.py's programs (amdegroot/ssd.pytorch,
LeeJunHyun/Image_Segmentation, Cadene/pretrained-models.pytorch) met, each run under torch and converted.

- A training function that binds a name only on a path the run never takes and reads it after its loop
  (Image_Segmentation's Solver.train: `best_unet = self.unet.state_dict()` only under `if unet_score >
  best_unet_score:`, then `del best_unet` after the epochs, an UnboundLocalError under torch when no epoch improved):
  graph_branch_names' pre-pass bound every such name to None before the loop, in every function, so the converted
  `del` went through and the program went on where the original stopped. A function that builds its compiled
  training step (`_ms_compat.compile_step`) runs on the host and is never compiled itself: it gets no such line now
  (graph_branch_names._Plans, builds_compiled_step), and raises UnboundLocalError where the original does."""
from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

# Solver.train's shape: the best model kept only when the score improves, `del`eted and read after the epochs
UNBOUND_AFTER_THE_LOOP = _FILL + '''
import torch.nn as nn


def train(net, opt, batches, best_score):
    losses = []
    for epoch in range(2):
        for x, y in batches:
            loss = ((net(x) - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        score = -float(losses[-1])
        if score > best_score:
            best_score = score
            best_epoch = epoch
            best = {k: v.clone() for k, v in net.state_dict().items()}
    outcome = []
    try:
        del best
        outcome.append(1.0)
    except UnboundLocalError:
        outcome.append(0.0)
    try:
        outcome.append(float(best_epoch))
    except UnboundLocalError:
        outcome.append(-1.0)
    return torch.stack(losses), torch.tensor(outcome)


net = nn.Linear(3, 2)
fill(net, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.linspace(-1, 1, 12).reshape(2, 2, 3)
batches = [(x[0], x[0, :, :2] * 2), (x[1], x[1, :, 1:] - 1)]
never, never_outcome = train(net, opt, batches, 100.0)
always, always_outcome = train(net, opt, batches, -100.0)
weights = [p.detach().reshape(-1) for p in net.parameters()] + [never, never_outcome, always, always_outcome]
'''


def test_name_bound_on_no_path_of_a_training_function_stays_unbound():
    """Before: `best = None` and `best_epoch = None` were written before the epochs: the `del` went through and
    `float(best_epoch)` met None (a TypeError where torch caught UnboundLocalError). Now both raise
    UnboundLocalError as under torch, and the run that does improve reads what it bound."""
    code, _ = program_weights_match_torch(UNBOUND_AFTER_THE_LOOP, graph=False)
    assert "best = None" not in code, code


# ssd.pytorch's Detect: a Function subclass with a forward of its instance, built in __init__ and called in forward
LEGACY_FUNCTION_CALLED = '''
import torch
import torch.nn as nn
from torch.autograd import Function


class TopScores(Function):
    def __init__(self, k):
        self.k = k

    def forward(self, scores):
        return scores.topk(self.k, dim=1)[0]


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.top = TopScores(2)

    def forward(self, x):
        return self.top(self.fc(x).softmax(dim=-1))


def run():
    return Head()(torch.ones(2, 4))
'''


def test_legacy_function_called_as_a_function_stops_as_torch_does():
    """Before: `self.top(...)` on the converted Function's instance was a TypeError ("'TopScores' object is not
    callable") naming no original line. Now MigrationError (a RuntimeError, as torch's refusal) with torch's words
    and the calling line, op by op."""
    import mindspore as ms
    import pytest

    from tests.parity.harness import load_converted, load_torch

    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward method"):
        load_torch(LEGACY_FUNCTION_CALLED)["run"]()
    ms.set_context(mode=ms.PYNATIVE_MODE)
    mod, code, _ = load_converted(LEGACY_FUNCTION_CALLED, pynative=True)
    with pytest.raises(mod._ms_compat.MigrationError,
                       match=r"TopScores\(\.\.\.\) called as a function at .*:\d+: Legacy autograd function with "
                             r"non-static forward method"):
        mod.run()


# ssd.pytorch's SSD: the phase it was built for kept as `self.phase`, read by forward
PHASE_ATTRIBUTE = _FILL + '''
import torch.nn as nn


class Head(nn.Module):
    def __init__(self, phase):
        super().__init__()
        self.phase = phase
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        y = self.fc(x)
        if self.phase == "test":
            return y.softmax(dim=-1)
        return y


train_net, test_net = Head("train"), Head("test")
fill(train_net, 1)
opt = torch.optim.SGD(train_net.parameters(), lr=0.1)
x = torch.linspace(-1, 1, 6).reshape(2, 3)
for _ in range(2):
    loss = train_net(x).pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
test_net.load_state_dict(train_net.state_dict())
test_net.eval()
with torch.no_grad():
    probs = test_net(x)
weights = [p.detach().reshape(-1) for p in train_net.parameters()] + [probs.reshape(-1)]
'''


def test_a_module_attribute_named_phase_is_the_programs_own():
    """Before: `self.phase` was MindSpore's Cell.phase, which set_train rewrites ('train' after the converted
    __init__'s set_train(True), 'predict' after eval()): the test network's forward returned the logits, not the
    probabilities. Now the module's own value (`self._torch_phase`) decides, as under torch."""
    code, _ = program_weights_match_torch(PHASE_ATTRIBUTE, graph=False)
    assert "self._torch_phase = phase" in code, code


# ssd.pytorch's SSD.forward: `self.priors.type(type(x.data))`, the class of a tensor as the type to cast to
TYPE_OF_A_TENSOR = '''
import torch


def run():
    x = torch.ones(2, 3)
    priors = torch.arange(6, dtype=torch.float64).reshape(3, 2) / 7
    counts = torch.arange(4)
    return priors.type(type(x.data)) * 3, counts.type(torch.Tensor) / 3
'''


def test_cast_to_the_class_of_a_tensor():
    """Before: `_ms_compat.tensor_type(priors, type(x.data))` raised TypeError ("type() expects a dtype, a tensor
    type or its name") where torch casts to its default tensor type, FloatTensor. Now float32, as torch."""
    import mindspore as ms
    import numpy as np

    from tests.parity.harness import load_converted, load_torch

    want = load_torch(TYPE_OF_A_TENSOR)["run"]()
    ms.set_context(mode=ms.PYNATIVE_MODE)
    mod, code, _ = load_converted(TYPE_OF_A_TENSOR, pynative=True)
    got = mod.run()
    for g, w in zip(got, want):
        assert g.dtype == ms.float32 and w.dtype.is_floating_point and w.dtype.itemsize == 4, (g.dtype, w.dtype)
        np.testing.assert_allclose(g.asnumpy(), w.numpy(), rtol=1e-6)


# NASNet-A-Mobile's CellStem1: a ModuleList filled by add_module with names and read by attribute
NAMED_MODULE_LIST = '''
import torch.nn as nn


class Stem(nn.Module):
    def __init__(self):
        super().__init__()
        self.path = nn.ModuleList()
        self.path.add_module('pad', nn.ZeroPad2d((0, 1, 0, 1)))
        self.path.add_module('avgpool', nn.AvgPool2d(1, stride=2, count_include_pad=False))
        self.path.add_module('conv', nn.Conv2d(2, 3, 1, bias=False))

    def forward(self, x):
        x = self.path.pad(x)
        x = self.path.avgpool(x)
        return self.path.conv(x) + len(self.path)
'''


def test_module_list_of_named_children_compiles():
    """Before: compiling stopped (KeyError '0': MindSpore's graph parser reads a CellList as the tuple of its
    entries, so `self.path.pad` has no meaning there; pm_nasnetamobile's GRAPH row). add_module with a name turns
    the list into _ms_compat.NamedModules, a Cell of attributes; outputs and gradients are torch's, compiled."""
    from tests.parity.harness import check_layer, rnd
    check_layer(NAMED_MODULE_LIST, [rnd(1, 2, 6, 6)], graph=True, grad=True, entry="Stem")
