"""The light install: `pip install msmigrate` is the converter alone, the frameworks come with extras.

The converter's commands run in a Python where torch, torchvision, MindSpore, TensorFlow, Keras and JAX cannot
be imported (a `sys.meta_path` finder installed by a `sitecustomize.py` on PYTHONPATH, so worker processes are
blocked too, and every attempt is logged): nothing may even try to import them. Commands that need a framework
stop with one line naming the extra; `trace` and `verify` print one line, never a traceback, when the user's
model fails. torchvision imports in the created venv (scripts/setup.sh installs it).
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "torch_project"
FRAMEWORKS = ("torch", "torchvision", "mindspore", "tensorflow", "keras", "jax")

BLOCKER = '''\
import importlib.abc, os, sys
BLOCKED = {blocked!r}
class _Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            with open(os.environ["BLOCK_LOG"], "a") as fh:
                fh.write(name + "\\n")
            raise ModuleNotFoundError("blocked by the test: " + name, name=name)
sys.meta_path.insert(0, _Blocker())
'''


def _blocked_env(tmp_path: Path) -> dict:
    site = tmp_path / "blocker"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BLOCKER.format(blocked=FRAMEWORKS))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), str(ROOT)]), BLOCK_LOG=str(tmp_path / "log"))
    return env


def _msmigrate(args, env, cwd=None):
    return subprocess.run([sys.executable, "-m", "msmigrate", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=600)


def test_converter_commands_import_no_framework(tmp_path):
    env = _blocked_env(tmp_path)
    log = Path(env["BLOCK_LOG"])
    probe = subprocess.run([sys.executable, "-c", "import torch"], env=env, capture_output=True, text=True)
    assert probe.returncode != 0 and "blocked by the test" in probe.stderr   # the blocker works
    log.unlink()

    out, single = tmp_path / "out", tmp_path / "single" / "models_ms.py"
    runs = [["convert", str(EXAMPLE), "-o", str(out), "-j", "2"],
            ["convert", str(EXAMPLE / "tinynet" / "models.py"), "-o", str(single)],
            ["convert", str(EXAMPLE), "--check"], ["scan", str(EXAMPLE), "--json"], ["api", "nn.Conv2d"], ["census"],
            ["dump-config", "--layers", "conv1", "--path", str(tmp_path / "dumps"), "-o", str(tmp_path / "d.json")]]
    # one interpreter for all commands (the workers of `convert -j 2` are blocked too: they inherit the finder)
    code = ("import sys\nfrom msmigrate.cli import main\n"
            f"for args in {runs!r}:\n    print('RC', main(args), flush=True)\n")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert [ln for ln in r.stdout.splitlines() if ln.startswith("RC ")] == [f"RC {rc}" for rc in (0, 0, 1, 0, 0, 0, 0)], r.stdout   # --check: 1, files would change
    assert "0 TODO" in r.stdout and "mindspore" in (out / "tinynet" / "models.py").read_text()
    assert "mindspore" in single.read_text() and "torch.nn.Conv2d -> mindspore.nn.Conv2d" in r.stdout
    assert "conv1" in (tmp_path / "d.json").read_text()
    # no module of the converter tried to import a framework, not even behind a try/except
    assert not log.exists() or log.read_text() == "", log.read_text()


def test_every_converter_module_imports_without_frameworks(tmp_path):
    env = _blocked_env(tmp_path)
    code = textwrap.dedent("""\
        import importlib, pkgutil, msmigrate
        for m in pkgutil.walk_packages(msmigrate.__path__, "msmigrate."):
            # the emitted runtimes (templates/, trace's runtime source) are MindSpore programs by design
            if ".templates" in m.name or m.name in ("msmigrate.__main__", "msmigrate.trace.runtime_src"):
                continue
            importlib.import_module(m.name)
        print("ok")
    """)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
    log = Path(env["BLOCK_LOG"])
    assert not log.exists() or log.read_text() == "", log.read_text()


def test_missing_framework_is_one_line_naming_the_extra(tmp_path):
    env = _blocked_env(tmp_path)
    cases = [
        ["weights", "model.pth", "-o", "model.ckpt"],
        ["verify", "--torch", "m:build", "--ms", "m:build", "--input", "1,4"],
        ["trace", "--torch", "m:build", "--input", "1,4", "-o", str(tmp_path / "tr")],
        ["export", "--ms", "m:build", "--input", "1,4", "-o", str(tmp_path / "x.mindir")],
    ]
    for args in cases:
        r = _msmigrate(args, env, cwd=tmp_path)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and "msmigrate[verify]" in lines[0] and "not installed" in lines[0], (args, r.stderr)
    r = _msmigrate(["keras", "model.keras", "-o", str(tmp_path / "k")], env, cwd=tmp_path)
    assert r.returncode == 2 and "msmigrate[keras]" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "tr").exists() and not (tmp_path / "k").exists()


def test_trace_and_verify_report_a_failing_model_in_one_line(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("mindspore")
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "m.py").write_text("import torch\n\n\ndef build():\n    raise RuntimeError('no such layer here')\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("MSMIGRATE_TRACEBACK", None)
    r = _msmigrate(["trace", "--torch", "m:build", "--path", str(proj), "--input", "1,4", "-o",
                    str(tmp_path / "tr")], env)
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout
    line = r.stderr.strip().splitlines()[-1]
    assert "RuntimeError: no such layer here" in line and f"{proj / 'm.py'}:5" in line, line
    r = _msmigrate(["verify", "--torch", "m:build", "--torch-path", str(proj), "--ms", "m:build", "--ms-path",
                    str(proj), "--input", "1,4"], env)
    assert r.returncode != 0 and "no such layer here" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout


def test_pyproject_base_and_extras():
    import tomllib

    from msmigrate.extras import NEEDS

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]

    def names(reqs):
        return {r.split(";")[0].split("[")[0].split("<")[0].split(">")[0].split("=")[0].strip() for r in reqs}

    assert names(project["dependencies"]) == {"libcst", "numpy", "rich", "safetensors"}
    assert "numpy<2" in project["dependencies"]
    extras = project["optional-dependencies"]
    assert {"mindspore", "torch"} <= names(extras["verify"])
    assert "keras" in names(extras["keras"]) and "tensorflow-cpu" in names(extras["tensorflow"])
    assert "pytest" in names(extras["dev"])
    # every extra a command's error names exists
    assert {extra for needs in NEEDS.values() for _, extra in needs} <= set(extras)


def test_torchvision_imports():
    """torchvision (installed by scripts/setup.sh test) imports and runs its C++ ops next to this torch."""
    import importlib.util

    if importlib.util.find_spec("torchvision") is None:
        pytest.skip("torchvision is not installed (scripts/setup.sh test installs it)")
    code = textwrap.dedent("""\
        import torch, torchvision
        boxes = torch.tensor([[0., 0., 10., 10.], [1., 1., 10., 10.], [20., 20., 30., 30.]])
        scores = torch.tensor([0.9, 0.8, 0.7])
        print(torchvision.ops.nms(boxes, scores, 0.5).tolist())
        print(torchvision.models.resnet18(num_classes=3)(torch.zeros(1, 3, 32, 32)).shape)
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    if r.returncode != 0 and "torchvision::nms does not exist" in r.stderr:
        import torch

        if torch.version.cuda is None:
            pytest.skip("torchvision here is PyPI's wheel built for CUDA torch, next to torch's CPU build: its C++ "
                        "ops cannot load. Install the CPU wheel: pip install torchvision==0.28.0 --index-url "
                        "https://download.pytorch.org/whl/cpu (scripts/setup.sh does when it can reach it)")
    assert r.returncode == 0, r.stderr
    # boxes 0 and 1 overlap with IoU 0.81 > 0.5: the lower-scored one is suppressed
    assert r.stdout.splitlines() == ["[0, 2]", "torch.Size([1, 3])"]


def test_torchvision_mismatch_error_names_the_fix():
    from msmigrate.extras import one_line_error
    from msmigrate.verify import _one_line

    try:
        raise RuntimeError("operator torchvision::nms does not exist")
    except RuntimeError as exc:
        for line in (one_line_error("trace", exc), _one_line(exc)):
            assert "\n" not in line and "torchvision::nms does not exist" in line
            assert "torchvision==0.28.0 --index-url https://download.pytorch.org/whl/cpu" in line
