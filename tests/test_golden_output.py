"""Golden output: the converted text of the training corpus (examples/training/) and the README's
before/after sample, compared verbatim, so a reviewer sees every change of the output's style.

The example project's golden files live with the helper-pruning tests (tests/test_runtime_pruning.py).
Each training program's conversion (made once, by tests/test_training_corpus.py, which calls
`compare_with_golden`) is compared with tests/golden/training/PROGRAM/; the helper module is compared by
the names it defines (its text is the runtime's, reviewed where it is written). Regenerate after an
intended change with MSMIGRATE_UPDATE_GOLDEN=1 and review the diff."""
from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest

from msmigrate.converter import convert_tree

ROOT = Path(__file__).resolve().parent.parent
TRAINING = ROOT / "examples" / "training"
GOLDEN = Path(__file__).parent / "golden" / "training"
PROGRAMS = sorted(p.name for p in TRAINING.iterdir() if p.is_dir())


def _defined(source: str) -> list:
    names = set()
    for n in ast.parse(source).body:
        if isinstance(n, (ast.FunctionDef, ast.ClassDef)):
            names.add(n.name)
        elif isinstance(n, ast.Assign):
            names.update(t.id for t in n.targets if isinstance(t, ast.Name))
    return sorted(names)


def converted_files(out: Path) -> dict:
    """The converted tree's Python files by relative path, the helper module as the names it defines."""
    files = {p.relative_to(out).as_posix(): p.read_text(encoding="utf-8")
             for p in sorted(out.rglob("*.py")) if p.name != "_ms_compat.py"}
    helper = out / "_ms_compat.py"
    if helper.exists():
        files["_ms_compat.definitions.txt"] = "\n".join(_defined(helper.read_text(encoding="utf-8"))) + "\n"
    return files


def compare_with_golden(out: Path, program: str) -> None:
    """The conversion of examples/training/PROGRAM in `out` against tests/golden/training/PROGRAM."""
    golden_dir = GOLDEN / program
    files = converted_files(out)
    if os.environ.get("MSMIGRATE_UPDATE_GOLDEN"):
        for rel, text in files.items():
            (golden_dir / rel).parent.mkdir(parents=True, exist_ok=True)
            (golden_dir / rel).write_text(text, encoding="utf-8")
    golden = {p.relative_to(golden_dir).as_posix(): p.read_text(encoding="utf-8")
              for p in sorted(golden_dir.rglob("*")) if p.is_file()}
    if not golden:
        pytest.fail(f"no golden files in {golden_dir}: run with MSMIGRATE_UPDATE_GOLDEN=1")
    assert sorted(files) == sorted(golden)
    for rel in files:
        assert files[rel] == golden[rel], f"{rel} differs from {golden_dir / rel} (MSMIGRATE_UPDATE_GOLDEN=1 to accept)"


def test_every_training_program_has_golden_files():
    """tests/test_training_corpus.py compares each program it converts; none may lack golden files."""
    assert PROGRAMS and all(any((GOLDEN / p).rglob("*.py")) for p in PROGRAMS), PROGRAMS


def test_readme_before_after_sample_is_real_output(tmp_path):
    """The README's "Before and after" shows what `msmigrate convert` writes for its input, verbatim."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Before and after", 1)[1]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)[:2]
    assert len(blocks) == 2, "the README's before/after section needs two python blocks"
    before, after = blocks
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text(before, encoding="utf-8")
    convert_tree(tmp_path / "src", tmp_path / "out", jobs=1)
    assert (tmp_path / "out" / "train.py").read_text(encoding="utf-8") == after
