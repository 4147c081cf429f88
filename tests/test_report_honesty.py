"""The report is honest: it lists every file of the tree, its converted rate counts only converted sites,
says how many of them a parity test that exists proves, counts files that failed against the rate, and
requirements-mindspore.txt names every third-party package the converted code imports."""
from __future__ import annotations

import ast
import json
from pathlib import Path

from msmigrate.cli import main
from tests.treeutil import write_tree

ROOT = Path(__file__).resolve().parent.parent

TREE = {
    "pkg/__init__.py": "from .model import Net\n",
    "pkg/utils.py": "def helper(x):\n    return x\n",
    "pkg/model.py": """\
        import json
        import os

        import scipy.signal
        import torch
        import torch.nn as nn
        import yaml
        from PIL import Image
        from sklearn.metrics import accuracy_score
        from tqdm import tqdm

        from . import utils
        from pkg.utils import helper


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 3)
                self.bn = nn.BatchNorm1d(3)

            def forward(self, x):
                return torch.frobnicate(self.bn(self.fc(x)))

            def report(self, x):
                import wandb
                wandb.log({"w": self.bn.weight.sum().item()})
                return self.forward(x)
        """,
    "train.py": """\
        import local_tool
        import torch

        x = torch.ones(2, 4)
        """,
    "local_tool.py": "VALUE = 1\n",
    "bad.py": "import torch\ndef broken(:\n    return torch.relu(torch.ones(2))\n",
    "notes/README.txt": "not python\n",
}


def _convert(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    write_tree(src, TREE)
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 1
    return src, out, json.loads((out / "msmigrate-report.json").read_text())


def test_the_summary_line_counts_the_files_that_failed(tmp_path, capsys):
    src, out = tmp_path / "src", tmp_path / "out"
    write_tree(src, {"ok.py": "import torch\nx = torch.ones(2)\n", "bad.py": TREE["bad.py"]})
    assert main(["convert", str(src), "-o", str(out)]) == 1
    printed = capsys.readouterr()
    assert "(100.0% converted, " in printed.out       # ok.py's one site
    assert "1 failed (33.3% converted counting the 2 torch uses in them)" in printed.out, printed.out
    assert "bad.py: " in printed.err and "(copied unchanged)" in printed.err


def _test_exists(test: str) -> bool:
    file, _, func = test.partition("::")
    path = ROOT / file
    return bool(func) and path.is_file() and func in {
        n.name for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.FunctionDef)}


def test_report_lists_every_file_and_counts_honestly(tmp_path):
    src, out, report = _convert(tmp_path)
    every = sorted(str(p.relative_to(src)) for p in src.rglob("*") if p.is_file())
    by_file = {f["file"]: f for f in report["files"]}
    assert sorted(by_file) == every
    assert by_file["notes/README.txt"]["status"] == "copied"
    assert by_file["bad.py"]["status"] == "failed"
    assert by_file["pkg/utils.py"]["status"] == "unchanged"
    assert by_file["pkg/model.py"]["status"] == "converted"
    md = (out / "msmigrate-report.md").read_text()
    html = (out / "msmigrate-report.html").read_text()
    for rel in every:
        assert f"| `{rel}` |" in md, rel
        assert f"<code>{rel}</code>" in html, rel

    s = report["summary"]
    sites = [x for f in report["files"] for x in f["sites"]]
    converted = [x for x in sites if x["status"] != "todo"]
    assert s["sites"] == len(sites) and s["todo"] == len(sites) - len(converted) >= 1
    assert s["converted_total"] == s["converted"] + s["converted_with_difference"] == len(converted)
    assert s["conversion_rate"] == round(len(converted) / len(sites), 4) < 1
    proven = [x for x in converted if _test_exists(x["test"])]
    assert s["proven"] == len(proven) and s["unproven"] == len(converted) - len(proven)
    assert 0 < s["proven"] < s["converted_total"], "this tree has converted sites no test proves"
    assert s["proven_rate"] == round(len(proven) / len(sites), 4)
    assert s["files"] == {"converted": 2, "unchanged": 3, "copied": 1, "failed": 1, "total": 7}
    # bad.py could not be converted: its torch references count against the rate
    assert s["torch_refs_in_failed_files"] == 2   # torch.relu, torch.ones
    assert s["conversion_rate_with_failed_files"] == round(len(converted) / (len(sites) + 2), 4)
    assert set(report["meaning"]) >= {"converted", "todo", "proven", "conversion_rate", "files"}
    assert f"**{s['proven']} ({s['proven'] / len(sites) * 100:.1f}% of all sites)**" in md
    assert "TODO, not converted" in md and "## Every file" in md
    assert 'data-key="rate-proven"' in html


def test_requirements_list_every_third_party_import(tmp_path):
    _, out, _ = _convert(tmp_path)
    lines = (out / "requirements-mindspore.txt").read_text().splitlines()
    reqs = [ln for ln in lines if ln and not ln.startswith("#")]
    assert reqs[:2] == ["mindspore==2.10.0", "numpy<2  # MindSpore's PyNative mode breaks with numpy 2"]
    # pillow: the program's own `from PIL import Image`, and the _ms_compat helper's module-level import
    assert reqs[2:] == ["pillow", "pyyaml", "scikit-learn", "scipy", "tqdm", "wandb"], reqs
    # bad.py was copied unchanged and still imports torch: said, not required
    assert "# torch" in lines
