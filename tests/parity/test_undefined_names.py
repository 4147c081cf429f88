"""A name a forward reads and its module never defines, on a branch not taken (lucidrains'
linear-attention-transformer at ab7693e: LocalAttention's `if shared_qk:` fills TOKEN_SELF_ATTN_VALUE, which the
file never defines). torch never looks it up; MindSpore's GRAPH parser resolved it anyway and stopped compiling
with "NameError: The name ... is not defined, or not supported in graph mode", naming no line of the program. The
name is now read through _ms_compat.undefined_name (msmigrate/undefined_names.py): an untaken branch computes
as torch does in every mode; a taken one raises NameError, as Python does, which is also a MigrationError
naming the original line."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")

from .harness import load_converted, load_torch  # noqa: E402

SRC = '''
import torch
from torch import nn


class Local(nn.Module):
    def __init__(self, shared=False):
        super().__init__()
        self.shared = shared

    def forward(self, x):
        shared = self.shared
        y = x * 2
        if shared:
            y = y.masked_fill(y > 0, SELF_VALUE)
        return y + 1
'''
LINE = SRC.splitlines().index("            y = y.masked_fill(y > 0, SELF_VALUE)") + 1
MODES = ["pynative", "jit", "graph_mode"]


def _run(net, x, mode):
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph_mode" else ms.PYNATIVE_MODE)
    try:
        return (ms.jit(net) if mode == "jit" else net)(x)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


@pytest.mark.parametrize("mode", MODES)
def test_an_undefined_name_on_a_branch_not_taken_computes_as_torch(mode):
    mod, code, _ = load_converted(SRC)
    assert "_ms_compat.undefined_name('SELF_VALUE'" in code, code
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    want = load_torch(SRC)["Local"]()(torch.from_numpy(x)).numpy()
    got = _run(mod.Local(), ms.Tensor(x), mode)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_an_undefined_name_on_a_branch_taken_raises_name_error_naming_the_line(mode):
    with pytest.raises(NameError):
        load_torch(SRC)["Local"](True)(torch.ones(2, 3))
    mod, _, _ = load_converted(SRC)
    with pytest.raises(NameError) as err:
        _run(mod.Local(True), ms.Tensor(np.ones((2, 3), np.float32)), mode)
    assert type(err.value).__name__ == "UndefinedName" and isinstance(err.value, mod._ms_compat.MigrationError)
    assert "'SELF_VALUE' is not defined" in str(err.value) and f":{LINE} " in str(err.value), err.value


def test_defined_names_are_left_as_written():
    from msmigrate.undefined_names import undefined_reads
    assert undefined_reads(SRC.replace("        shared = self.shared", "        shared = self.shared\n"
                                       "        SELF_VALUE = 5.0")) == {}
    assert undefined_reads("from m import *\n" + SRC) == {}
    assert undefined_reads("def f():\n    return len(__name__)\n") == {}


def test_a_refusal_handed_back_as_a_plain_name_error_is_raised_again_as_the_raising_helpers(tmp_path):
    # raised on MindSpore's analysis threads while a graph compiles, a refusal can come back as a plain NameError
    # carrying its text (CI, under xdist), to the Cell.compile hook of whichever converted tree installed it last
    # (here a second helper, as in a process importing two converted trees): it raises the refusal again, of the
    # class of the helper named in the trace
    import importlib.util
    import shutil
    mod, _, _ = load_converted(SRC)
    helper = mod._ms_compat
    shutil.copy(helper.__file__, tmp_path / "_ms_compat.py")
    hooks = ms.nn.Cell.compile, ms.nn.Cell.compile_and_run
    spec = importlib.util.spec_from_file_location("other_ms_compat", tmp_path / "_ms_compat.py")
    other = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(other)      # installs its own hook
        assert ms.nn.Cell.compile is other._compile_for_constants
        text = "name 'X' is not defined (m:3 reads it; the program never defines it)"
        with pytest.raises(NameError) as err:
            other.raise_at_original_line(NameError(f"UndefinedName: {text}\n\nAt:\n  {helper.__file__}(20): "
                                                   "undefined_name\n  x.py(3): f"))
        assert type(err.value) is helper.UndefinedName and str(err.value) == text
        assert other.raise_at_original_line(NameError("name 'y' is not defined")) is None   # Python's own: left
        with pytest.raises(NameError) as err:
            _run(mod.Local(True), ms.Tensor(np.ones((2, 3), np.float32)), "graph_mode")
        assert isinstance(err.value, helper.UndefinedName) and f":{LINE} " in str(err.value), err.value
    finally:
        ms.nn.Cell.compile, ms.nn.Cell.compile_and_run = hooks
