"""Minimal reproductions of real-code constructs found this stop, each compared with torch.

- A dict or set display keyed by torch classes and looked up by a module's exact class (thop's
  `register_hooks[type(m)]`, applied to every module through Module.apply): a conv the converter cannot prove
  batched is built as the helper's any_batch subclass, whose class is no key of the converted dict, so the
  layer got no counting hook and its MACs were silently missing (heldout43's thop_cnn). Such displays are
  `_ms_compat.ClassKeyed` / `ClassSet` now, which look a cell's class up as the layer torch's code names
  (compat_parts/module_tree.py); an apply() view of such a cell compares and hashes as that layer too. The same
  for torch's Sequential as a key: the value is the helper `_ms_compat.Sequential`, a direct call builds
  MindSpore's SequentialCell (thop's `nn.Sequential: zero_ops`: its two counter buffers were never popped).
- A write through a view or an alias (`rows = s[1:]; rows[0] = v`, `tail *= 2`, `c = s; c[0] += 1`) with the other
  name read after: torch changes the shared memory, MindSpore's slice is a copy in GRAPH mode and `*=` rebinds
  the name in both modes, so the other name kept its values, silently. Such a write is refused at its line now
  (inplace_views.py's statement events; transformer._view_write), as the in-place methods already were.
- A program binding `ops`, `ms` or `nn` itself (thop's driver: `for key, (ops, params) in ...`) rebound the
  converter's `from mindspore import nn, ops`: every later `ops.relu` an AttributeError on the program's value.
  Where the converted module imports such a name, the program's own binding is renamed and the module converted
  again (own_names.py: `ops` -> `ops_`), its class attributes, keyword names and parameters of that name left as
  they are.
- A module function that only a Module's __init__ calls (MoCo-style `fill(self.encoder_q, seed)` writing the
  weights with `p.copy_` over `module.parameters()`) was taken for code a construct runs, and its in-place
  writes over the parameter "rows" were refused; what only __init__ and the weight-init methods call now
  converts as host code (graph_pops.graph_functions).
- `torch.einsum("nc,ck->nk", [q, k])`, the operands as one list (torch's older form, MoCo's): a TODO; the
  operands are written out now (mappings/torch_functions._einsum).
- Adam with betas=(0.0, 0.9), a NumPy-built batch in the loop, a Sequential a module function returns: see each
  test's docstring."""
from tests.parity.harness import load_converted, load_torch, program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

CLASS_KEYED = '''
import torch
import torch.nn as nn

RULE = {nn.Conv2d: "conv", nn.Linear: "linear", nn.BatchNorm2d: "bn"}
RULE.update({nn.Sequential: "seq"})
KINDS = {nn.Conv2d, nn.ReLU}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 4, 3)
        self.c2 = nn.Conv2d(4, 4, 3, groups=2)
        self.act = nn.ReLU()
        self.fc = nn.Sequential(nn.Linear(4, 2))

    def forward(self, x):
        return self.fc(self.c2(self.act(self.c1(x))).mean(dim=(2, 3)))


def names():
    net = Net()
    seen = []

    def visit(m):
        kind = type(m)
        if kind in RULE:
            seen.append(RULE[kind] + ":" + str(RULE.get(kind)) + ":" + str(kind == nn.Conv2d))
    net.apply(visit)
    direct = [RULE.get(type(m), "-") for m in net.modules()]
    members = [type(m) in KINDS for m in net.modules()]
    return seen + direct + [str(b) for b in members]
'''


def test_dict_keyed_by_torch_classes_finds_every_layer():
    mod, code, _ = load_converted(CLASS_KEYED)
    assert "_ms_compat.any_batch.Conv2d" in code, code   # the case: a conv class of the helper's own
    expected = load_torch(CLASS_KEYED)["names"]()
    assert expected.count("conv:conv:True") == 2 and "seq" in expected
    assert mod.names() == expected, code


VIEW_WRITES = '''
import numpy as np
import torch


def row_written(a):
    s = torch.zeros(3, 2) + a
    rows = s[1:]
    rows[0] = 0.0
    return s


def tail_scaled(a):
    s = torch.zeros(3, 2) + a
    tail = s[:, 1:]
    tail *= 2
    return s


def alias_written(a):
    s = torch.zeros(3, 2) + a
    c = s
    c[0] += 1
    return s


def base_written(a):
    s = torch.zeros(3, 2) + a
    first = s[0]
    s[0] = 7.0
    return first


def list_slice(a):
    items = [1, 2, 3]
    part = items[1:]
    part[0] = 9
    return a * sum(items)


def view_alone(a):
    s = torch.zeros(3, 2) + a
    rows = s[1:]
    rows[0] = 0.0
    rows *= 3
    return rows


def numpy_rows(a):
    dims = np.array([2, 3, 4, 5])
    hw = dims[-2:]
    for i in range(hw.size):
        hw[i] = hw[i] * 2
    return a * float(dims.sum())


class Net(torch.nn.Module):
    def forward(self, x):
        s = x * 2
        tail = s[:, 1:]
        tail += 1
        return s
'''


def test_write_through_a_view_is_refused_where_the_other_name_is_read():
    """`rows = s[1:]; rows[0] = v` with `s` read after: torch writes through shared memory; MindSpore's slice is
    a copy in a graph and `*=` rebinds the name in both modes, so `s` kept its values (silently, in GRAPH). The
    write is refused at its line (in a module's forward also where the names' types are not known); a Python
    list's slice (a copy in Python too), a NumPy array's (a view, written through as in the original) and a view
    nobody else reads still convert and compute torch's values."""
    import sys

    import mindspore as ms
    import numpy as np
    import pytest
    import torch

    from tests.parity.harness import assert_close

    a = np.arange(6, dtype=np.float32).reshape(3, 2)
    mod, code, _ = load_converted(VIEW_WRITES)
    ns = load_torch(VIEW_WRITES)
    lines = VIEW_WRITES.splitlines()
    for name, text in (("row_written", "rows[0] = 0.0"), ("tail_scaled", "tail *= 2"),
                       ("alias_written", "c[0] += 1"), ("base_written", "s[0] = 7.0"), ("Net", "tail += 1")):
        line = next(i for i, t in enumerate(lines, 1) if text in t)
        with pytest.raises(sys.modules["_ms_compat"].MigrationError, match=rf" at \S+:{line}\b"):
            (mod.Net() if name == "Net" else getattr(mod, name))(ms.Tensor(a))
    for name in ("list_slice", "view_alone", "numpy_rows"):
        assert_close(getattr(mod, name)(ms.Tensor(a)), ns[name](torch.from_numpy(a.copy())), what=name)


OWN_OPS = '''
import torch
import torch.nn as nn

TABLE = {"a": (3, 4), "b": (5, 6)}
total = 0
for key, (ops, ms) in TABLE.items():
    total += ops * ms


class Net(nn.Module):
    ops = 2

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return torch.relu(self.fc(x)) * self.ops


def scaled(ops=1):
    return ops + total


def run():
    net = Net()
    with torch.no_grad():
        net.fc.weight.fill_(0.5)
        net.fc.bias.fill_(-0.25)
        y = net(torch.ones(3, 4))
    return [scaled(ops=3), float(y.sum()), float(torch.tanh(torch.ones(2)).sum())]
'''


def test_program_binding_ops_itself():
    mod, code, _ = load_converted(OWN_OPS)
    # `ms` stays: this conversion imports no `ms` (only nn and ops)
    assert "(ops_, ms)" in code and "    ops = 2" in code and "def scaled(ops=1)" in code, code
    assert mod.run() == load_torch(OWN_OPS)["run"](), code


BUILT_BY_INIT = _FILL + '''
import torch.nn as nn
import torch.nn.functional as F


class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(3, 4)
        self.k = nn.Linear(3, 4)
        fill(self.q, 1)
        fill(self.k, 2)

    def forward(self, x):
        q, k = F.normalize(self.q(x), dim=1), self.k(x)
        return torch.einsum("nc,nc->n", [q, k]) + torch.einsum("nc,mc->nm", (q, k)).sum(1)


def run():
    net = Pair()
    x = torch.linspace(-1, 1, 6).reshape(2, 3)
    return net(x)
'''


def test_function_only_init_calls_and_einsum_of_a_list():
    from tests.parity.harness import assert_close
    mod, code, _ = load_converted(BUILT_BY_INIT)
    assert "TODO" not in code, code
    assert_close(mod.run(), load_torch(BUILT_BY_INIT)["run"]())


ADAM_BETA1_ZERO = _FILL + '''
import torch.nn as nn

net = nn.Linear(3, 2)
fill(net, 1)
opt = torch.optim.Adam(net.parameters(), lr=0.05, betas=(0.0, 0.9))
x = torch.linspace(-1, 1, 12).reshape(4, 3)
for it in range(3):
    loss = (net(x) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
weights = list(net.parameters())
'''


def test_adam_with_first_beta_zero_in_graph_mode():
    """betas=(0.0, 0.9), as GAN trainers write: the optimizer's log(beta1) was math.log(0), a ValueError while
    the train step compiled (compat_parts/optim.py's _log: -inf now, so 1 - beta1 ** t is 1 as in torch)."""
    program_weights_match_torch(ADAM_BETA1_ZERO, graph=True)


BATCH_BUILT_IN_NUMPY = _FILL + '''
import torch.nn as nn
import torch.nn.functional as F

net = nn.Sequential(nn.Embedding(9, 4), nn.Flatten(), nn.Linear(20, 2))
fill(net, 3)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
rng = np.random.RandomState(1)
for it in range(3):
    lengths = rng.randint(2, 6, 3)
    tokens = np.zeros((3, 5), dtype=np.int64)
    for i, n in enumerate(lengths):
        tokens[i, :n] = rng.randint(1, 9, n)
    tokens = torch.from_numpy(tokens)
    loss = F.cross_entropy(net(tokens), torch.tensor([0, 1, 1]))
    opt.zero_grad()
    loss.backward()
    opt.step()
weights = list(net.parameters())
'''


def test_batch_built_in_a_numpy_array_in_the_loop():
    """`tokens = np.zeros(...)`, rows written in a loop, then `torch.from_numpy(tokens)`: the NumPy array was taken
    for a step value (the loss reads `tokens`) and its row writes, kept out, refused the step. A statement calling
    only NumPy's module is data now (train_loop.is_source)."""
    code, _ = program_weights_match_torch(BATCH_BUILT_IN_NUMPY, graph=True)
    assert "def forward_fn" in code, code


MADE_BY_A_FUNCTION = _FILL + '''
import torch.nn as nn


def make(width):
    return nn.Sequential(nn.Linear(3, width), nn.BatchNorm1d(width), nn.ReLU())


teacher, student = make(4), make(2)
fill(student, 2)
student.train()
student(torch.linspace(-1, 1, 12).reshape(4, 3))
stats = [float(student[1].running_mean.sum()), float(student[1].running_var.sum())]


def counted():
    return student[1].num_batches_tracked
'''


def test_entries_of_a_sequential_a_module_function_returns():
    """`teacher, student = make(8), make(4)` where make() returns an nn.Sequential: `student[1].running_mean` kept
    torch's name (AttributeError: MindSpore's moving_mean); the entries' types now come through the function's
    return and the tuple assignment (layer_refs.returned_layers). Its `num_batches_tracked`, which MindSpore's
    BatchNorm does not keep, stops with MigrationError naming the line (layer_settings, _ms_compat.batches_tracked)."""
    import sys

    import numpy as np
    import pytest

    mod, code, _ = load_converted(MADE_BY_A_FUNCTION)
    ns = load_torch(MADE_BY_A_FUNCTION)
    np.testing.assert_allclose(mod.stats, ns["stats"], rtol=1e-5, err_msg=code)
    line = next(i for i, t in enumerate(MADE_BY_A_FUNCTION.splitlines(), 1) if "num_batches_tracked" in t)
    with pytest.raises(sys.modules["_ms_compat"].MigrationError, match=rf" at \S+:{line}\b"):
        mod.counted()


ACCUMULATION_WITH_AMP_SWITCH = _FILL + '''
import torch.nn as nn
import torch.nn.functional as F


class Finder:
    def __init__(self, net, amp_backend="none"):
        self.net, self.amp_backend = net, amp_backend
        self.opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
        self.scaler = torch.cuda.amp.GradScaler(enabled=False)

    def run(self, batches, accum=2):
        for step in range(len(batches) // accum):
            self.opt.zero_grad()
            for i in range(accum):
                x, y = batches[step * accum + i]
                if self.amp_backend == "torch":
                    with torch.autocast("cpu"):
                        loss = F.cross_entropy(self.net(x), y) / accum
                else:
                    loss = F.cross_entropy(self.net(x), y) / accum
                if self.amp_backend == "torch":
                    self.scaler.scale(loss).backward()
                elif self.amp_backend == "apex" and hasattr(self.opt, "_amp_stash"):
                    loss.backward()
                else:
                    loss.backward()
            if self.amp_backend == "torch":
                self.scaler.step(self.opt)
                self.scaler.update()
            else:
                self.opt.step()


net = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3))
fill(net, 2)
rng = np.random.RandomState(0)
batches = [(torch.from_numpy(rng.randn(5, 4).astype(np.float32)), torch.from_numpy(rng.randint(0, 3, 5)))
           for _ in range(6)]
Finder(net).run(batches)
weights = list(net.parameters())
'''


def test_accumulation_whose_update_an_amp_switch_chooses():
    """Gradient accumulation over an inner loop whose backward() and step are chosen by the same setting
    (pytorch-lr-finder's `if self.amp_backend == "torch": ... elif ...: ... else: loss.backward()`, heldout45):
    no loop held a plain update, and the backward() was a raising TODO. The loop is written once per branch of
    the setting's test (loop_unswitch.py; an `elif` split again), each copy converted as the accumulation it is."""
    code, _ = program_weights_match_torch(ACCUMULATION_WITH_AMP_SWITCH, graph=True)
    assert "accumulate_grads" in code, code


ACCUMULATING_METHOD_WITH_AMP_SWITCH = _FILL + '''
import torch.nn as nn
import torch.nn.functional as F


class Finder:
    def __init__(self, net, amp_backend=None):
        self.net, self.amp_backend = net, amp_backend
        self.scaler = torch.cuda.amp.GradScaler(enabled=False)
        self.opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)

    def train_batch(self, batches, accum):
        self.opt.zero_grad()
        for i in range(accum):
            x, y = next(batches)
            loss = F.cross_entropy(self.net(x), y) / accum
            if self.amp_backend == "torch":
                self.scaler.scale(loss).backward()
            else:
                loss.backward()
        if self.amp_backend == "torch":
            self.scaler.step(self.opt)
            self.scaler.update()
        else:
            self.opt.step()


net = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3))
fill(net, 2)
rng = np.random.RandomState(0)
batches = iter([(torch.from_numpy(rng.randn(5, 4).astype(np.float32)), torch.from_numpy(rng.randint(0, 3, 5)))
                for _ in range(4)])
finder = Finder(net)
for _ in range(2):
    finder.train_batch(batches, 2)
weights = list(net.parameters())
'''


def test_accumulating_method_whose_update_an_amp_switch_chooses():
    """The same switch in a trainer's method run once per update, with no loop around the accumulation in it
    (pytorch-lr-finder's `_train_batch`): the method body is written once per branch (loop_unswitch.py), and each
    branch's loop of backward()s is taped and its step applies the tape (train_loop.taped_outer_step finds the
    loop in the branch, taped_steps.taped_step_in steps each branch). The scaler's branch (`scaler.step(opt)`, not
    taped) stays a raising TODO, which this program never reaches."""
    code, _ = program_weights_match_torch(ACCUMULATING_METHOD_WITH_AMP_SWITCH, graph=False,
                                          todos=("Tensor.backward",))   # the scaler's branch, not reached
    assert "tape_step" in code, code


SCHEDULER_KEYS_RESTORED = '''
import copy

import torch
import torch.nn as nn


def keys():
    net = nn.Linear(2, 2)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    before = copy.deepcopy(opt.state_dict())
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    with_scheduler = copy.deepcopy(opt.state_dict())
    attached = "initial_lr" in opt.param_groups[0]
    opt.load_state_dict(before)
    detached = "initial_lr" in opt.param_groups[0]
    opt.load_state_dict(with_scheduler)
    return [attached, detached, "initial_lr" in opt.param_groups[0], opt.param_groups[0]["initial_lr"]]
'''


def test_optimizer_state_restores_the_scheduler_keys():
    """An optimizer's load_state_dict takes torch's saved groups whole: the `initial_lr` a scheduler added goes
    when the state saved before it is loaded (pytorch-lr-finder's reset(), then "Optimizer already has a scheduler
    attached to it" on the next range_test) and comes back with a state saved after
    (compat_parts/checkpoints.py _SCHEDULER_KEYS)."""
    mod, code, _ = load_converted(SCHEDULER_KEYS_RESTORED)
    assert mod.keys() == load_torch(SCHEDULER_KEYS_RESTORED)["keys"]() == [True, False, True, 0.1], code
