"""argument_check.py: a mapped call's argument that its record does not handle is a TODO naming the argument and
the line (never copied through to MindSpore unseen), unless it carries torch's default, when it is dropped; torch's
signatures come from the installed torch as data (torch_signatures.py), checked here against it."""
from __future__ import annotations

import sys

import numpy as np
import pytest

from tests.parity.harness import load_converted, load_torch, no_todo

UNHANDLED = """
import torch
import torch.nn as nn


def build():
    return nn.InstanceNorm2d(4, affine=True, bias=False)


def clip():
    return nn.Hardtanh(min_value=-0.5)
"""


def test_an_argument_the_record_does_not_handle_is_a_todo_naming_it_and_its_line():
    """torch 2.13's InstanceNorm2d(bias=False) (no bias Parameter) and Hardtanh's old min_value= keyword: before,
    both went through to MindSpore as written (a TypeError at construction naming no line of the original)."""
    mod, code, sites = load_converted(UNHANDLED)
    todo = {s.api: s.note for s in sites if s.status == "todo"}
    assert "argument bias=False" in todo.get("torch.nn.InstanceNorm2d", ""), (todo, code)
    assert "argument min_value=-0.5" in todo.get("torch.nn.Hardtanh", ""), (todo, code)
    error = sys.modules["_ms_compat"].MigrationError
    lines = UNHANDLED.splitlines()
    for fn, text in ((mod.build, "InstanceNorm2d(4"), (mod.clip, "Hardtanh(")):
        line = next(i for i, t in enumerate(lines, 1) if text in t)
        with pytest.raises(error, match=rf"at \S+:{line}\b"):
            fn()(np.zeros((1, 4, 2, 2), np.float32))


DEFAULTS = """
import torch
import torch.nn as nn


def run(x):
    norm = nn.InstanceNorm2d(4, affine=True, bias=True)
    clip = nn.Hardtanh(-0.5, 0.5, min_value=None, max_value=None)
    return norm(x), clip(x), x.float(memory_format=torch.preserve_format), torch.group_norm(x, 2, cudnn_enabled=True)
"""


def test_an_argument_carrying_torchs_default_is_dropped():
    """The same keywords with torch's defaults are the calls without them (before: the same TypeError)."""
    import mindspore as ms
    import torch

    mod, code, sites = load_converted(DEFAULTS)
    no_todo(sites)
    assert "bias=True" not in code and "min_value" not in code and "cudnn_enabled" not in code, code
    x = np.random.default_rng(0).standard_normal((2, 4, 3, 3)).astype(np.float32)
    expected = load_torch(DEFAULTS)["run"](torch.from_numpy(x))
    got = mod.run(ms.Tensor(x))
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g.asnumpy(), e.detach().numpy(), rtol=1e-5, atol=1e-5)


READ_BY_RULES = """
import torch


def run(x, y):
    return torch.add(x, y, alpha=2), torch.sum(x, dim=1, keepdim=True), x.to(device='cpu', dtype=torch.float64)
"""


def test_an_argument_a_rule_reads_is_handled():
    """torch.add's rule reads alpha= (not in its record's args): no false alarm."""
    import mindspore as ms
    import torch

    mod, code, sites = load_converted(READ_BY_RULES)
    no_todo(sites)
    x, y = (np.random.default_rng(s).standard_normal((2, 3)).astype(np.float32) for s in (1, 2))
    expected = load_torch(READ_BY_RULES)["run"](torch.from_numpy(x), torch.from_numpy(y))
    for g, e in zip(mod.run(ms.Tensor(x), ms.Tensor(y)), expected):
        np.testing.assert_allclose(g.asnumpy(), e.numpy(), rtol=1e-6)
        assert str(g.dtype).lower() == str(e.dtype).replace("torch.", "")


FOREIGN = """
import torch


def frame_sum(frame):
    return frame.sum(numeric_only=True)
"""


def test_a_keyword_torch_does_not_take_leaves_another_objects_method_as_written():
    """`frame.sum(numeric_only=True)` on a receiver of unknown type is not torch's sum (torch has no such keyword):
    the call stays as written, not a TODO."""
    _, code, sites = load_converted(FOREIGN)
    no_todo(sites)
    assert "frame.sum(numeric_only=True)" in code, code


def test_every_record_with_a_torch_source_has_its_signature():
    """The committed signatures cover each record whose torch source torch can describe: regenerate with
    `python -m msmigrate.census --regenerate` after adding a record."""
    pytest.importorskip("torch")
    from msmigrate.torch_signature_data import SIGNATURES
    from msmigrate.torch_signatures import current_signatures, record_sources

    installed = current_signatures(record_sources())
    missing = sorted(set(installed) - set(SIGNATURES))
    assert not missing, f"records without a committed torch signature (regenerate): {missing[:20]}"
    drifted = sorted(s for s in installed if SIGNATURES.get(s) != installed[s])
    assert not drifted, f"signatures that differ from the installed torch (regenerate): {drifted[:20]}"


NUMPY_IMAGE = """
import numpy as np
import torch


def to_chw(image):
    return image.transpose(2, 0, 1)
"""


def test_more_positional_arguments_than_torchs_method_takes_leave_another_objects_method_as_written():
    """`image.transpose(2, 0, 1)` on a receiver of unknown type is NumPy's (torch's transpose takes two dims): the
    call stays as written, not a TODO for its tensor branch."""
    mod, code, sites = load_converted(NUMPY_IMAGE)
    no_todo(sites)
    assert "image.transpose(2, 0, 1)" in code, code
    assert mod.to_chw(np.zeros((4, 5, 3))).shape == (3, 4, 5)


VARARGS = """
import torch


def run(x):
    return x.flip(0, 1), torch.zeros(2, 3), x.tile(2, 1), x.permute(1, 0)
"""


def test_a_lone_int_list_parameter_takes_varargs_as_in_torch():
    """torch's argument parser takes x.flip(0, 1) as x.flip((0, 1)) (a lone int-list parameter): no extra positional
    argument to refuse."""
    import mindspore as ms
    import torch

    mod, code, sites = load_converted(VARARGS)
    no_todo(sites)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for g, e in zip(mod.run(ms.Tensor(x)), load_torch(VARARGS)["run"](torch.from_numpy(x))):
        np.testing.assert_array_equal(g.asnumpy(), e.numpy())
