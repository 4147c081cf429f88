"""The canonical-path alias table is data computed from the installed torch: regenerating it
must give the committed file, and every alias names the same object as its public name."""
from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from msmigrate.registry import canonical, lookup
from msmigrate.torch_aliases import ALIASES

ROOT = Path(__file__).resolve().parent.parent
torch = pytest.importorskip("torch")


def _imported(dotted: str):
    """What `from MODULE import NAME` gives for a canonical path (the longest importable module)."""
    parts = dotted.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for p in parts[i:]:
            obj = getattr(obj, p)
        return obj
    raise ImportError(dotted)


def _attribute(dotted: str):
    """What `torch.a.b` names in code: attribute access, importing submodules only where needed
    (torch.nn.parallel.data_parallel is a function there, not the submodule of that name)."""
    parts = dotted.split(".")
    obj = importlib.import_module(parts[0])
    for i, p in enumerate(parts[1:], 1):
        if not hasattr(obj, p):
            importlib.import_module(".".join(parts[:i + 1]))
        obj = getattr(obj, p)
    return obj


def test_alias_table_has_no_drift():
    res = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_torch_aliases.py"), "--check"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def test_every_alias_is_the_same_object():
    # in a fresh interpreter: other tests of the session patch torch functions (seeds) in place
    assert len(ALIASES) > 300
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from tests.test_torch_aliases import ALIASES, "
            "_imported, _attribute; wrong = [k for k, v in ALIASES.items() if _imported(k) is not _attribute(v)]; "
            "print(wrong[:10]); sys.exit(1 if wrong else 0)")
    root = Path(__file__).resolve().parent.parent
    r = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr[-2000:]


@pytest.mark.parametrize("path,public", [
    ("torch.nn.modules.linear.Linear", "torch.nn.Linear"),
    ("torch.nn.modules.conv.Conv2d", "torch.nn.Conv2d"),
    ("torch.nn.modules.loss.MSELoss", "torch.nn.MSELoss"),
    ("torch.nn.modules.loss.CrossEntropyLoss", "torch.nn.CrossEntropyLoss"),
    ("torch.nn.modules.batchnorm.BatchNorm2d", "torch.nn.BatchNorm2d"),
    ("torch.nn.modules.module.Module", "torch.nn.Module"),
    ("torch.nn.modules.Linear", "torch.nn.Linear"),
    ("torch.functional.einsum", "torch.einsum"),
    ("torch.functional.split", "torch.split"),
    ("torch.functional.norm", "torch.norm"),
    ("torch._C._nn.gelu", "torch.nn.functional.gelu"),
    ("torch._C._nn.linear", "torch.nn.functional.linear"),
    ("torch.nn.parameter.Parameter", "torch.nn.Parameter"),
    ("torch._tensor.Tensor", "torch.Tensor"),
    ("torch.optim.adam.Adam", "torch.optim.Adam"),
    ("torch.utils.data.dataloader.DataLoader", "torch.utils.data.DataLoader"),
    ("torch.distributions.normal.Normal", "torch.distributions.Normal"),
    ("torch.distributions.studentT.StudentT", "torch.distributions.StudentT"),
    ("torch.distributions.kl.kl_divergence", "torch.distributions.kl_divergence"),
    ("torch.distributions.transforms.ExpTransform", "torch.distributions.ExpTransform"),
])
def test_canonical_paths_resolve_to_the_public_record(path, public):
    m, pub = lookup(path), lookup(public)
    assert pub is not None and m is not None, path
    # the public record itself, or a record of its own with the same target (Parameter has both)
    assert m is pub or (m.target, m.rule) == (pub.target, pub.rule), (m, pub)
    assert canonical(path) in (path, public)


def test_tensor_function_is_not_the_tensor_class():
    assert canonical("torch.tensor") == "torch.tensor"
    assert lookup("torch._tensor.Tensor").source == "torch.Tensor"


def test_api_command_answers_for_canonical_paths():
    res = subprocess.run([sys.executable, "-m", "msmigrate.cli", "api", "torch.nn.modules.loss.MSELoss"],
                         capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    assert "torch.nn.modules.loss.MSELoss is torch.nn.MSELoss" in res.stdout
    assert "torch.nn.MSELoss -> _ms_compat.MSELoss" in res.stdout     # float64 kept (MindSpore: float32)
