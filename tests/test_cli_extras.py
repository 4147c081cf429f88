"""Look-ups and dry runs: `msmigrate scan`, `convert --diff`, `convert --check`, `-q/-v`."""
from __future__ import annotations

import json
from pathlib import Path

from msmigrate.cli import main
from tests.treeutil import tree_digest, write_tree

PROJECT = {
    "pkg/__init__.py": "",
    "pkg/models.py": """\
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 3)

            def forward(self, x):
                return torch.flatten(self.fc(x), 1)

            def odd(self, x):
                return torch.frobnicate(x)
        """,
    "pkg/plain.py": "X = 1\n",
}






def test_scan_table_json_and_verbose(tmp_path, capsys):
    src = tmp_path / "src"
    write_tree(src, PROJECT)
    before = tree_digest(tmp_path)
    assert main(["scan", str(src)]) == 0
    out = capsys.readouterr().out
    assert "torch API" in out and "mapping" in out
    line = next(ln for ln in out.splitlines() if ln.startswith("torch.nn.Linear "))
    assert "mindspore.nn.Dense" in line and line.split()[1] == "1" and line.rstrip().endswith("yes")
    frob = next(ln for ln in out.splitlines() if ln.startswith("torch.frobnicate "))
    assert frob.rstrip().endswith("NO")
    assert "nothing written" in out
    assert main(["scan", str(src), "--json", "-v"]) == 0
    inv = json.loads(capsys.readouterr().out)
    apis = {r["api"]: r for r in inv["apis"]}
    assert apis["torch.nn.Linear"]["sites"] == 1 and apis["torch.nn.Linear"]["mapping"] is True
    assert apis["torch.frobnicate"]["todo"] == 1 and apis["torch.frobnicate"]["mapping"] is False
    # converted by the converter's own rule (no record): not listed as unmapped
    assert apis["Module.forward"]["how"] == "rule" and apis["Module.forward"]["mapping"] is True
    assert inv["summary"]["apis_without_mapping"] == 1
    assert inv["summary"]["files_using_torch"] == 1 and inv["summary"]["todo"] == 1
    assert inv["todo_sites"] == [{"file": str(Path("pkg/models.py")), "line": 14, "api": "torch.frobnicate",
                                  "note": inv["todo_sites"][0]["note"]}]
    assert main(["scan", str(src), "-v"]) == 0
    assert f"{Path('pkg/models.py')}:14: TODO torch.frobnicate" in capsys.readouterr().out
    assert main(["scan", str(src / "pkg" / "models.py"), "-q"]) == 0   # a single file
    assert "torch.nn.Linear" in capsys.readouterr().out
    assert main(["scan", str(tmp_path / "missing")]) == 2
    assert "Traceback" not in capsys.readouterr().err
    assert tree_digest(tmp_path) == before, "scan writes nothing"


def test_convert_diff_writes_nothing(tmp_path, capsys):
    src = tmp_path / "src"
    write_tree(src, PROJECT)
    before = tree_digest(tmp_path)
    assert main(["convert", str(src), "--diff", "-q"]) == 0
    out = capsys.readouterr().out
    assert "--- a/pkg/models.py" in out and "+++ b/pkg/models.py" in out
    assert "-import torch\n" in out and "+from mindspore import" in out
    assert "-        return torch.flatten(self.fc(x), 1)" in out
    assert "plain.py" not in out, "unchanged files are not in the diff"
    assert tree_digest(tmp_path) == before, "--diff must not write anything"
    # even with -o given, nothing is written
    assert main(["convert", str(src), "-o", str(tmp_path / "out"), "--diff", "-q"]) == 0
    capsys.readouterr()
    assert not (tmp_path / "out").exists()


def test_convert_check_for_ci(tmp_path, capsys):
    src, out = tmp_path / "src", tmp_path / "out"
    write_tree(src, PROJECT)
    before = tree_digest(tmp_path)
    assert main(["convert", str(src), "--check"]) == 1
    err = capsys.readouterr().err
    assert f"would convert {Path('pkg/models.py')}" in err and "nothing written" in err
    assert tree_digest(tmp_path) == before
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 1        # TODO site -> 1
    for r in ("json", "md", "html"):
        (out / f"msmigrate-report.{r}").unlink()
    assert main(["convert", str(out), "--check", "-q"]) == 0, "converted code (and its helper) is already done"
    assert capsys.readouterr().err == ""
    assert main(["convert", str(src), "--check", "--diff", "-q"]) == 1
    assert "+++ b/pkg/models.py" in capsys.readouterr().out


def test_convert_quiet_and_verbose(tmp_path, capsys):
    src = tmp_path / "src"
    write_tree(src, PROJECT)
    assert main(["convert", str(src), "-o", str(tmp_path / "o1"), "-q"]) == 1
    o = capsys.readouterr()
    assert o.out == "" and o.err == ""
    assert main(["convert", str(src), "-o", str(tmp_path / "o2"), "-v"]) == 1
    out = capsys.readouterr().out
    assert "torch sites" in out and "msmigrate-report.html" in out
    assert f"{Path('pkg/models.py')}:14: TODO torch.frobnicate" in out
    assert main(["convert", str(src), "-q", "-v", "-o", str(tmp_path / "o3")]) == 2   # exclusive
    assert main(["convert", str(src)]) == 2                                          # no -o, no dry run
    assert "Traceback" not in capsys.readouterr().err


def test_report_names_trace_route_for_classes_with_todos(tmp_path, capsys):
    src = tmp_path / "src"
    write_tree(src, PROJECT)
    assert main(["convert", str(src), "-o", str(tmp_path / "out"), "-q"]) == 1
    report = json.loads((tmp_path / "out" / "msmigrate-report.json").read_text())
    assert report["trace_route"] == [{
        "file": str(Path("pkg/models.py")), "class": "Net", "line": 5, "todo": 1,
        "command": f"msmigrate trace --torch pkg.models:Net --path {src} --input SHAPE -o net_traced/"}]
    md = (tmp_path / "out" / "msmigrate-report.md").read_text()
    assert "the graph-capture route" in md and "pkg.models:Net" in md


def test_one_command_table_drives_usage_and_dispatch():
    """`python -m msmigrate` prints a usage line and text naming every command of cli.COMMANDS (trace, hf
    and dump-config included), and an unknown command lists the same names."""
    import subprocess
    import sys

    from msmigrate.cli import COMMANDS

    r = subprocess.run([sys.executable, "-m", "msmigrate", "--help"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    first, *body = r.stdout.splitlines()
    assert first == "usage: msmigrate {" + ",".join(COMMANDS) + "} ...", first
    for name in ("convert", "trace", "hf", "dump-config", "census", "keras"):
        assert name in COMMANDS and any(line.startswith(f"  {name} ") for line in body), name
    r = subprocess.run([sys.executable, "-m", "msmigrate", "nope"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "unknown command 'nope'" in r.stderr and "dump-config" in r.stderr, r.stderr
