"""Minimal reproductions of what bench/_rw_heldout36.py's programs (eriklindernoren/PyTorch-GAN's CoGAN, PixelDA,
ClusterGAN, context encoder, UNIT, CycleGAN, DiscoGAN) needed, each compared with torch in PYNATIVE and GRAPH mode.

- An in-place call assigned back to its own receiver, `x = x.scatter_(dim, idx, 1.)` (ClusterGAN's sample_z builds
  its one-hot codes so), stayed a raising TODO ("outside a whole statement"): torch returns x itself, so the line
  is the whole-statement form `x.scatter_(...)` and is now rebound the same way, `x = <out-of-place form>`.
- `Variable(data, requires_grad=flag)` with a flag the program computes (sample_z's `req_grad` parameter, False at
  every call of the training loop) was a TODO that raised on every call, whatever the flag: it is now the tensor
  itself where the flag is false when the line runs, and a MigrationError naming the line where it is true
  (_ms_compat.variable_of; a literal True stays the converter's TODO).
- A slice with NumPy integer bounds (the context encoder's datasets.py masks `img[:, y1:y2, x1:x2]` after
  `y1, x1 = np.random.randint(0, n, 2)`) stopped with MindSpore's RuntimeError "Slice index type must be int, tensor
  or none" (naming no line of the original): the helper's Tensor indexing reads such bounds as ints, as torch
  does (templates/_ms_compat.py `_numpy_index`).
- An optimizer over `itertools.chain(...)` of networks sharing a layer (UNIT's two encoders and two generators
  share a block) is given those Parameters twice: torch (with a warning) updates such a Parameter once per
  occurrence in every step, its Adam state advanced each time; the converted optimizer stopped with MindSpore's
  ValueError on the state's duplicate name, naming no line. It now stops with a MigrationError naming the
  optimizer's line (compat_parts/optim.py `_trainable`): updating once would be a silent difference."""
import numpy as np
import pytest

import mindspore as ms

from tests.parity.harness import check_function, load_converted, load_torch

REBOUND = '''
import torch


def fn(idx, x):
    codes = torch.zeros(idx.shape[0], 5)
    codes = codes.scatter_(1, idx.unsqueeze(1), 1.)
    y = x * 2
    y = y.add_(3)
    return codes, y
'''


def test_inplace_call_assigned_to_its_receiver():
    idx = np.array([3, 0, 4, 0], np.int64)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    code, _ = check_function(REBOUND, [idx, x])
    assert "Unconverted" not in code, code


FLAGGED = '''
import numpy as np
import torch
from torch.autograd import Variable


def fn(x, wanted=False):
    z = Variable(x * 2, requires_grad=wanted)
    return z + 1


def asked(x):
    return fn(x, wanted=True)
'''


def test_variable_with_a_runtime_flag():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    code, _ = check_function(FLAGGED, [x])
    assert "variable_of" in code, code
    mod, _, _ = load_converted(FLAGGED)
    # a true flag: the leaf (_ms_compat.grad_leaf, tests/test_stop45_programs.py), refused inside a compiled graph
    np.testing.assert_array_equal(mod.asked(ms.Tensor(x)).asnumpy(), x * 2 + 1)
    with pytest.raises(Exception, match=r"Variable.* at .*:8"):
        ms.jit(mod.asked)(ms.Tensor(x))


MASKED = '''
import numpy as np
import torch


def fn(img):
    np.random.seed(3)
    top, left = np.random.randint(0, 4, 2)
    part = img[:, top:top + 3, left:left + 3]
    masked = img.clone()
    masked[:, top:top + 3, left:left + 3] = 1
    return masked, part
'''


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE])
def test_numpy_integer_slice_bounds(mode):
    """host code (a Dataset's __getitem__): run as written under either mode's context"""
    img = np.arange(2 * 7 * 7, dtype=np.float32).reshape(2, 7, 7)
    ms.set_context(mode=mode)
    try:
        check_function(MASKED, [img], graph=False)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


SHARED = '''
import itertools
import torch
import torch.nn as nn

shared = nn.Linear(3, 3)
first = nn.Sequential(nn.Linear(2, 3), shared)
second = nn.Sequential(nn.Linear(4, 3), shared)
optimizer = torch.optim.Adam(itertools.chain(first.parameters(), second.parameters()), lr=0.1)
print("built")
'''


def test_optimizer_given_a_shared_layer_twice_raises_naming_its_line(tmp_path):
    """torch steps a Parameter chained in twice twice per step (UNIT's encoders sharing a block); MindSpore's
    optimizer stopped with its ValueError on the state's duplicate name, naming no line of the original"""
    import os
    import subprocess
    import sys

    from msmigrate.converter import convert_tree
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "main.py").write_text(SHARED.lstrip())
    convert_tree(src, out)
    p = subprocess.run([sys.executable, "main.py"], cwd=out, capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=str(out)))
    assert p.returncode != 0 and "built" not in p.stdout
    assert "MigrationError: main.py:8: the optimizer is given the Parameter" in p.stderr, p.stderr[-2000:]
