"""`msmigrate convert --deps NAME`: a small torch package written here (installed into a temporary
directory on PYTHONPATH, not from PyPI) is converted with a project that uses it; the converted
project imports the converted copy in a process that cannot import torch, computes what the torch
project computes, and `msmigrate weights` fills it from the torch checkpoint."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("mindspore")

REPO = Path(__file__).resolve().parent.parent

LIBRARY = {
    "tinylib/__init__.py": """
        from .models import TinyNet, tiny_net
        """,
    "tinylib/layers.py": """
        import torch
        from torch import nn


        class ConvBNAct(nn.Module):
            def __init__(self, cin, cout):
                super().__init__()
                self.conv = nn.Conv2d(cin, cout, 3, padding=1, bias=False)
                self.bn = nn.BatchNorm2d(cout)
                self.act = nn.ReLU()

            def forward(self, x):
                return self.act(self.bn(self.conv(x)))
        """,
    "tinylib/models.py": """
        import torch
        from torch import nn
        from tinylib.layers import ConvBNAct


        class TinyNet(nn.Module):
            def __init__(self, num_classes=10):
                super().__init__()
                self.stem = ConvBNAct(3, 8)
                self.block = nn.Sequential(ConvBNAct(8, 8), ConvBNAct(8, 16))
                self.pool = nn.AdaptiveAvgPool2d(1)
                self.fc = nn.Linear(16, num_classes)

            def forward(self, x):
                x = self.block(self.stem(x))
                return self.fc(torch.flatten(self.pool(x), 1))


        def tiny_net(num_classes=10):
            return TinyNet(num_classes)
        """,
}
PROJECT = {
    "model.py": """
        import torch
        import tinylib
        from tinylib.models import tiny_net


        def build():
            return tiny_net(num_classes=5)


        def build_direct():
            return tinylib.TinyNet(num_classes=5)


        def predict(net, x):
            with torch.no_grad():
                return torch.softmax(net(x), dim=1)
        """,
    # no torch here: it still has to import _ms_compat (the sys.path bootstrap) before tinylib
    "app.py": """
        from tinylib import tiny_net


        def make():
            return tiny_net(num_classes=3)
        """,
}

NO_TORCH = "import sys\nfor _m in ('torch', 'torchvision'):\n    sys.modules[_m] = None\n"


def _write(root: Path, files: dict) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")


def _env(*paths) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(p) for p in paths] + [str(REPO)])
    env.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")
    return env


def _msmigrate(args, env):
    return subprocess.run([sys.executable, "-m", "msmigrate.cli", *args], capture_output=True, text=True,
                          env=env, timeout=600)


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("deps")
    site = tmp / "site"           # stands for site-packages: the library is importable only from here
    _write(site, LIBRARY)
    _write(tmp / "proj", PROJECT)
    out = tmp / "out"
    env = _env(site)
    res = _msmigrate(["convert", str(tmp / "proj"), "-o", str(out), "--deps", "tinylib", "-q"], env)
    return tmp, site, out, env, res


def test_convert_with_deps(converted):
    tmp, site, out, env, res = converted
    assert res.returncode == 0, res.stdout + res.stderr
    lib = out / "_deps" / "tinylib"
    assert {"__init__.py", "layers.py", "models.py"} <= {p.name for p in lib.glob("*.py")}
    models = (lib / "models.py").read_text()
    assert "import torch" not in models and "nn.Cell" in models
    assert "from tinylib.layers import ConvBNAct" in models          # its own imports are kept
    assert (out / "app.py").read_text().startswith("import _ms_compat\nfrom tinylib import tiny_net")
    code = (out / "model.py").read_text()
    assert "import tinylib" in code and "from tinylib.models import tiny_net" in code
    assert code.index("import _ms_compat") < code.index("import tinylib")    # the bootstrap comes first
    assert "_deps" in (out / "_ms_compat.py").read_text()
    report = json.loads((out / "msmigrate-report.json").read_text())
    (dep,) = report["dependencies"]
    assert dep["name"] == "tinylib" and dep["output"] == "_deps/tinylib"
    assert dep["files"] == 3 and dep["converted_files"] == 2   # __init__.py needs no change
    assert dep["todo"] == 0 and dep["sites"] > 10
    sites = {s["api"]: s for f in report["files"] for s in f["sites"]}
    assert sites["tinylib.models.tiny_net"]["status"] == "converted"
    assert "--deps" in sites["tinylib.TinyNet"]["note"]
    assert "Converted dependencies" in (out / "msmigrate-report.md").read_text()
    assert (out / "_deps" / "tinylib-msmigrate-report" / "msmigrate-report.md").exists()


def test_converted_project_runs_without_torch_and_takes_torch_weights(converted):
    tmp, site, out, env, res = converted
    assert res.returncode == 0
    sys.path.insert(0, str(site))
    try:
        from tinylib import tiny_net  # noqa: the torch original, for reference values
    finally:
        sys.path.remove(str(site))
    torch.manual_seed(0)
    tnet = tiny_net(num_classes=5).eval()
    x = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)
    with torch.no_grad():
        want = torch.softmax(tnet(torch.from_numpy(x)), dim=1).numpy()
    torch.save(tnet.state_dict(), tmp / "tiny.pth")
    np.save(tmp / "x.npy", x)
    # weights: names follow the converted dependency's modules
    w = _msmigrate(["weights", str(tmp / "tiny.pth"), "-o", str(tmp / "tiny.ckpt"), "--net", "model:build",
                    "--path", str(out)], env)
    assert w.returncode == 0, w.stdout + w.stderr
    script = NO_TORCH + textwrap.dedent(f"""
        import numpy as np, mindspore as ms
        import app
        assert type(app.make()).__mro__[1] is ms.nn.Cell
        import model, tinylib
        assert tinylib.__file__.startswith({str(out / "_deps")!r}), tinylib.__file__
        for build in (model.build, model.build_direct):
            net = build()
            missing, unused = ms.load_param_into_net(net, ms.load_checkpoint({str(tmp / "tiny.ckpt")!r}))
            assert not missing and not unused, (missing, unused)
            net.set_train(False)
            out = model.predict(net, ms.Tensor(np.load({str(tmp / "x.npy")!r}))).asnumpy()
            np.save({str(tmp / "got.npy")!r}, out)
        print("ok")
        """)
    # the original library stays on PYTHONPATH: the bootstrap puts the converted copy first
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=str(out),
                         env=_env(site, out), timeout=600)
    assert run.returncode == 0 and "ok" in run.stdout, run.stdout + run.stderr
    np.testing.assert_allclose(np.load(tmp / "got.npy"), want, rtol=1e-4, atol=1e-5)


def test_unknown_dependency_is_a_usage_error(tmp_path):
    (tmp_path / "p.py").write_text("import torch\n")
    res = _msmigrate(["convert", str(tmp_path / "p.py"), "-o", str(tmp_path / "o"), "--deps", "no_such_pkg_xyz"],
                     _env())
    assert res.returncode == 2 and "no_such_pkg_xyz" in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "o").exists()


def test_torchvision_precedence(tmp_path):
    """With --deps torchvision, msmigrate's own records still convert the APIs they cover
    (transforms); other torchvision names stay and refer to the converted copy."""
    from msmigrate.converter import convert_tree

    (tmp_path / "train.py").write_text(textwrap.dedent("""
        import torch
        import torchvision
        from torchvision import transforms
        from torchvision.models import resnet18

        net = torchvision.models.resnet50(num_classes=10)
        small = resnet18()
        tf = transforms.Compose([transforms.ToTensor()])
        """).lstrip())
    tree = convert_tree(tmp_path, None, dry_run=True, jobs=1, deps=["torchvision"])
    code = tree.outputs["train.py"]
    assert "_ms_compat.transforms.Compose([_ms_compat.transforms.ToTensor()])" in code
    assert "net = torchvision.models.resnet50(num_classes=10)" in code and "small = resnet18()" in code
    assert code.index("import _ms_compat") < code.index("import torchvision")
    sites = {s.api: s for s in tree.sites}
    assert sites["torchvision.models.resnet50"].status == "converted" and "--deps" in sites[
        "torchvision.models.resnet50"].note
    assert sites["torchvision.transforms.ToTensor"].target.startswith("_ms_compat.")
    # without --deps the same names are visible TODOs
    plain = convert_tree(tmp_path, None, dry_run=True, jobs=1)
    assert {s.api for s in plain.sites if s.status == "todo"} >= {"torchvision.models.resnet50"}
    # ... whose note names the option that converts them
    todo = next(s for s in plain.sites if s.api == "torchvision.models.resnet50")
    assert "msmigrate convert --deps torchvision" in todo.note, todo.note


def test_converting_the_output_again_changes_nothing(converted):
    """The converted project keeps `import tinylib`: a second conversion (no --deps) sees the converted
    copy in _deps/ and leaves every file as it is."""
    from msmigrate.converter import convert_tree

    tmp, site, out, env, res = converted
    assert res.returncode == 0
    again = convert_tree(out, None, dry_run=True, jobs=1)
    assert again.outputs == {}, sorted(again.outputs)
    assert not [s for s in again.sites if s.status == "todo"]


def test_a_dependency_converted_again_comes_from_the_cache(tmp_path):
    """A package converted before with the same sources and the same msmigrate is copied from the cache
    (msmigrate/deps_cache.py); a changed source file, --no-cache or a damaged entry converts it again."""
    site = tmp_path / "site"
    _write(site, LIBRARY)
    _write(tmp_path / "proj", PROJECT)
    env = dict(_env(site), MSMIGRATE_CACHE_DIR=str(tmp_path / "cache"))

    def convert(n, *extra):
        out = tmp_path / f"out{n}"
        res = _msmigrate(["convert", str(tmp_path / "proj"), "-o", str(out), "--deps", "tinylib", "-q", *extra], env)
        assert res.returncode == 0, res.stdout + res.stderr
        dep = json.loads((out / "msmigrate-report.json").read_text())["dependencies"][0]
        return out / "_deps" / "tinylib", dep

    first, dep1 = convert(1)
    entries = [p for p in (tmp_path / "cache" / "deps").iterdir() if not p.name.startswith(".")]
    assert len(entries) == 1 and dep1["files"] == 3 and dep1["converted_files"] == 2, (entries, dep1)
    # mark the cached copy: a conversion that copies from the cache carries the mark
    cached = entries[0] / "package" / "models.py"
    cached.write_text(cached.read_text() + "# cached copy\n")
    second, dep2 = convert(2)
    assert (second / "models.py").read_text().endswith("# cached copy\n") and dep2 == dep1, dep2
    assert (second.parent / "tinylib-msmigrate-report" / "msmigrate-report.md").exists()
    assert not (convert(3, "--no-cache")[0] / "models.py").read_text().endswith("# cached copy\n")
    # a changed source of the package: converted again, the change in the output
    (site / "tinylib" / "layers.py").write_text((site / "tinylib" / "layers.py").read_text() + "\nEXTRA = 1\n")
    fourth, dep4 = convert(4)
    assert "EXTRA = 1" in (fourth / "layers.py").read_text()
    assert not (fourth / "models.py").read_text().endswith("# cached copy\n")
    # an entry without its figures is no entry: converted again and stored whole again
    newest = max((tmp_path / "cache" / "deps").iterdir(), key=lambda e: e.stat().st_mtime)
    (newest / "meta.json").unlink()
    assert "EXTRA = 1" in (convert(5)[0] / "layers.py").read_text()
    assert (newest / "meta.json").exists()


def test_cache_key_takes_msmigrate_as_the_process_found_it(tmp_path, monkeypatch):
    """msmigrate's part of the cache key is taken once per process (the convert command takes it when it starts):
    a file of msmigrate edited while a conversion runs must not key what the code loaded before converted."""
    from msmigrate import deps_cache as DC

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "a.py").write_text("x = 1\n")
    monkeypatch.setattr(DC, "_MSMIGRATE_DIGEST", ["as loaded"])
    first = DC.key(pkg, [])
    assert DC.key(pkg, []) == first
    monkeypatch.setattr(DC, "_MSMIGRATE_DIGEST", ["edited since"])
    assert DC.key(pkg, []) != first
    monkeypatch.setattr(DC, "_MSMIGRATE_DIGEST", [])
    digest = DC.msmigrate_digest()
    assert DC._MSMIGRATE_DIGEST == [digest] and DC.msmigrate_digest() == digest
