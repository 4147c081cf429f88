"""Availability probes of torch in converted code (msmigrate/package_probes.py): a library that picks
its backend at import time, as transformers' is_torch_available() does, keeps its torch branch once
converted, in a process where torch cannot be imported."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from msmigrate.converter import convert_tree
from tests.treeutil import write_tree

pytest.importorskip("torch")
pytest.importorskip("mindspore")

LIB = {
    "mylib/__init__.py": """\
        from .probe import is_torch_available, probes
        if is_torch_available():
            from .model import Model
        else:
            Model = None
        """,
    "mylib/probe.py": """\
        import importlib.metadata
        import importlib.util
        from importlib.util import find_spec


        def _is_package_available(pkg_name):
            spec = importlib.util.find_spec(pkg_name)
            if spec is None:
                return False, "N/A"
            return True, importlib.metadata.version(pkg_name)


        def is_torch_available():
            ok, v = _is_package_available("torch")
            return ok and tuple(int(p) for p in v.split(".")[:2]) >= (2, 6)


        def probes():
            return {"torch": _is_package_available("torch")[0], "torch.nn": find_spec("torch.nn") is not None,
                    "numpy": _is_package_available("numpy"), "json": find_spec("json") is not None,
                    "missing": find_spec("no_such_package_msmigrate") is None,
                    "torch_dependent": _is_package_available("needs_torch_msm")[0]}
        """,
    "mylib/model.py": """\
        import torch


        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(3, 2)

            def forward(self, x):
                return torch.relu(self.fc(x))


        def n_params():
            return sum(p.numel() for p in Model().parameters())
        """,
}


# an installed library that requires torch (as accelerate does): not converted, so not found converted
SITE = {
    "needs_torch_msm/__init__.py": "import torch\n",
    "needs_torch_msm-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: needs_torch_msm\nVersion: 1.0\n"
                                              "Requires-Dist: torch>=2.0\nRequires-Dist: pytest; extra == 'test'\n",
}

RUN = """
import json, sys
if sys.argv[1] == "blocked":
    sys.modules["torch"] = None
import mylib
from mylib import model
print(json.dumps({"probes": mylib.probes(), "model": mylib.Model is not None and int(model.n_params())}))
"""


def _run(root, mode):
    r = subprocess.run([sys.executable, "-c", RUN, mode], cwd=root, capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(root.parent / "site")})
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_converted_library_sees_torch(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    write_tree(src, LIB)
    write_tree(tmp_path / "site", SITE)
    convert_tree(src, out, jobs=1)
    probe = (out / "mylib" / "probe.py").read_text()
    assert "_ms_compat.find_spec(pkg_name)" in probe and "_ms_compat.package_version(pkg_name)" in probe
    assert 'find_spec("json")' in probe and "_ms_compat.find_spec(\"json\")" not in probe, \
        "a literal name of another package is probed as written"
    original, converted = _run(src, "torch"), _run(out, "blocked")
    assert original["probes"].pop("torch_dependent") and not converted["probes"].pop("torch_dependent"), \
        "a torch library outside the converted tree is reported missing"
    assert original["probes"]["torch"] and converted == original, (original, converted)
    assert converted["model"] == 8, "the torch branch: the converted model is built"
