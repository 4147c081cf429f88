"""Locals of forward that GRAPH mode refuses or silently cuts the gradient at, as converted: values
and input gradients in GRAPH mode (and PyNative) against torch.

- a name bound only inside an `if` of forward and read after it (x-transformers' memory tokens:
  `if has_mem: every = self.every` ... `if has_mem: if exists(every): ...`): GRAPH mode refuses the
  name ("not defined in false branch"); msmigrate/graph_branch_names.py binds it to None first.
- `self.mask = self.mask.to(dtype=x.dtype, device=x.device) if self.mask is not None else None` in
  a method forward calls (CLIP's attention block): stored on self inside construct the mask is a run-time object,
  and every value computed from it has a zero gradient in GRAPH mode (only a warning);
  msmigrate/graph_attr_casts.py makes it a local of construct.
- `a ^ b` on two bools (x-transformers: `assert not (self.cross_attend ^ exists(context))`): GRAPH mode's
  BitXor takes integers only; _ms_compat.xor (msmigrate/graph_idioms.py), checked here on bools, ints
  and bool tensors.
- `n, device = x.shape[1], x.device` (x-transformers' positional embedding): in GRAPH mode the device
  poisons the tuple, and `torch.arange(n)` fails ("expect a type, but got AbstractNegligible"); one
  assignment per name (msmigrate/graph_idioms.py); a starred shape takes the names the others leave
  (`b, c, h, w, device = *img.shape, img.device`, lucidrains' diffusion).
- `x.ndim in {2, 3}` (x-transformers): GRAPH mode has no set expression; a tuple display
  (msmigrate/graph_idioms.py).
- a comprehension with two `for`s in forward or a function it calls (x-transformers' layer execution
  order): GRAPH mode takes one per comprehension; nested ones, flattened (msmigrate/graph_idioms.py).
- `[a for a in (1, 2) if a]` is [1] in GRAPH mode (a plain value as a comprehension's condition, silently);
  the condition becomes bool(a) (msmigrate/graph_idioms.py).
- `for i in range(n): ...` then `i` read after the loop, and a name the loop body binds read after it
  (pytorch/examples time_sequence_prediction: `output` of the first loop read by the second): GRAPH mode
  stops compiling ("UnboundLocalError: The local variable 'output' defined in the 'for' loop body cannot be
  used outside of the loop body"); the same for `while`. Bound to None before the loop
  (msmigrate/graph_branch_names.py). A name an `if` inside a loop binds and the loop body reads after the
  `if` (`if j == 0: first = h`, read in every later iteration) is bound before the outermost loop, not
  before the `if` (there it would overwrite, in the second iteration, what the first bound)."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .test_graph_safety import check_graph, rnd  # noqa: E402

SRC = '''
import torch
import torch.nn as nn


def exists(v):
    return v is not None


def execute_order(blocks, size):
    return tuple(i for b in blocks for i in range(b * size, (b + 1) * size))


class Net(nn.Module):
    def __init__(self, mask):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.num_mem = 2
        self.every = 3
        self.attn_mask = mask
        self.cross = False

    def forward(self, x):
        assert not (self.cross ^ exists(self.every)) or self.every == 3, "flags disagree"
        assert x.ndim in {2, 3} and x.shape[0] not in {0}
        has_mem = self.num_mem > 0
        if has_mem:
            every = self.every
            if exists(every):
                x = x * every
        if self.num_mem > 5:
            extra = 1.0
        elif self.num_mem > 1:
            extra = 2.0
        h = self.attend(x)
        if has_mem:
            if exists(every):
                h = h / every
        flip = ((x > 0) ^ (h > 0)).float()
        order = execute_order((1, 0), 2)
        flip = flip * sum([a * b for a in (1, 2) if a for b in order if b > 0]) + flip[:, list(order)]
        n, device = x.shape[1], x.device
        rows, cols, device, k = *x.shape, x.device, 2
        flip = flip * (rows * cols + k)
        flip = flip + torch.arange(n, device=device).float()
        return h * extra * (self.every ^ 1) + flip

    def attend(self, x):
        self.attn_mask = self.attn_mask.to(dtype=x.dtype, device=x.device) if self.attn_mask is not None else None
        return self.fc(x) + self.attn_mask * 2 + self.attn_mask


def make():
    return Net(torch.arange(8, dtype=torch.float64).reshape(2, 4) / 8)
'''


def test_branch_names_and_attribute_recast_in_graph():
    code, sites = check_graph(SRC, rnd(2, 4), (2, 4))
    assert "every = None\n" in code and "extra = None\n" in code, code
    assert "_ms_compat.xor(self.cross, exists(self.every))" in code and "_ms_compat.xor(self.every, 1)" in code
    assert "attn_mask = self.attn_mask.astype(x.dtype)" in code and "+ attn_mask * 2 + attn_mask" in code, code
    assert "x.ndim in (2, 3) and x.shape[0] not in (0,)" in code, code
    assert "return tuple(_ms_compat.flatten([[i for i in range(b * size, (b + 1) * size)] for b in blocks]))" \
        in code, code
    assert "for a in (1, 2) if bool(a)" in code, code
    assert "n = x.shape[1]; device = _ms_compat.device_of(x)" in code, code
    assert "rows, cols = x.shape; device = _ms_compat.device_of(x); k = 2" in code, code
    recast = [s for s in sites if s.api == "Module.__setattr__ (in forward)"]
    assert len(recast) == 1 and recast[0].status == "converted-with-difference", recast


LOOP_SRC = '''
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
    code, _ = check_graph(LOOP_SRC, rnd(2, 3), (2, 5))
    lines = [t.strip() for t in code.splitlines()]
    for name, loop in (("output", "for x_t in ops.split(x, 1, axis=1):"), ("i", "for i in range(future):"),
                       ("last", "while k < 2:"), ("first", "for j in range(3):")):
        assert lines.index(f"{name} = None") + 1 == lines.index(loop), (name, code)
    assert code.count("first = None") == 1, code


HELPER_LOOP_SRC = '''
import torch
import torch.nn as nn


def refine(x, iters=3):
    for _ in range(iters):
        x = torch.tanh(x) + 0.25
        bins = (x > 0.5).sum(dim=-1)
    return x, bins


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h, bins = refine(self.fc(x))
        return h * (bins.float()[:, None] + 1) + self.pick(h)

    def pick(self, h):
        for j in range(2):
            if j == 1:
                last = h * 3
        return last


def make():
    return Net()
'''


def test_names_a_loop_binds_in_a_helper_construct_calls_in_graph():
    """vector-quantize's kmeans: `for _ in range(num_iters): ... bins = ...` then `return means, bins`, in a
    function construct calls (and a method of the Cell): GRAPH mode refused it ("define variable 'bins' before
    'for'"); bound to None before the loop, the unrolled loop binds it on every path torch takes."""
    code, _ = check_graph(HELPER_LOOP_SRC, rnd(2, 4), (2, 4))
    lines = [t.strip() for t in code.splitlines()]
    assert lines.index("bins = None") + 1 == lines.index("for _ in range(iters):"), code
    assert lines.index("last = None") + 1 == lines.index("for j in range(2):"), code


BRANCH_LOOP_SRC = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, looped):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.looped = looped

    def forward(self, x):
        if not self.looped:
            x, gate = self.step(x)
        else:
            for _ in range(2):
                x, gate = self.step(x)
        return x * gate

    def step(self, x):
        h = self.fc(x)
        return x + h.tanh(), h.sigmoid()


def make():
    return Net(True)
'''


def test_a_name_one_branch_binds_and_the_other_binds_in_a_loop_in_graph():
    """x-transformers' TransformerWrapper: `if not looped: x, inter = f(x)` / `else: for ...: x, inter =
    f(x)`, inter read after the `if`. The else path binds it only inside a loop, so GRAPH mode refused it
    ("The local variable 'gate' defined in the 'for' loop body cannot be used outside of the loop body");
    the `if` does not bind it on every path: bound to None before the `if`."""
    code, _ = check_graph(BRANCH_LOOP_SRC, rnd(2, 4), (2, 4))
    lines = [t.strip() for t in code.splitlines()]
    assert lines.index("gate = None") + 1 == lines.index("if not self.looped:"), code
