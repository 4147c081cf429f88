"""Bad input gets a clear one-line error (or a one-line report entry) and a non-zero exit, never a
traceback, and the source tree is byte-identical afterwards."""
from __future__ import annotations

import json
import os
import pickle
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pytest

from msmigrate.cli import main
from tests.treeutil import tree_digest

OK_PY = "import torch\nimport torch.nn as nn\n\nlayer = nn.Linear(2, 3)\n"




def _run(capsys, *argv):
    capsys.readouterr()
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err, err
    return rc, out, err


def _report(out: Path) -> dict:
    rep = json.loads((out / "msmigrate-report.json").read_text())
    return {f["file"]: f for f in rep["files"]}


@pytest.fixture
def src(tmp_path):
    d = tmp_path / "src"
    d.mkdir()
    (d / "ok.py").write_text(OK_PY)
    return d


def _convert_one_bad(tmp_path, capsys, src, name):
    before = tree_digest(src)
    out = tmp_path / "out"
    rc, _, err = _run(capsys, "convert", src, "-o", out)
    assert rc == 1, "a file that could not be converted gives exit 1"
    assert tree_digest(src) == before, "the source tree must not change"
    files = _report(out)
    assert files["ok.py"]["status"] == "converted"
    warn = [ln for ln in err.splitlines() if name in ln]
    assert len(warn) == 1 and warn[0].startswith("msmigrate: warning:"), err
    return out, files[name], warn[0]


def test_syntax_error(tmp_path, capsys, src):
    (src / "broken.py").write_text("import torch\ndef f(:\n    pass\n")
    out, entry, warn = _convert_one_bad(tmp_path, capsys, src, "broken.py")
    assert entry["status"] == "failed" and "not valid Python" in entry["reason"]
    assert (out / "broken.py").read_bytes() == (src / "broken.py").read_bytes()
    # a single bad file given directly: same, one line
    single = tmp_path / "single"
    rc, _, err = _run(capsys, "convert", src / "broken.py", "-o", single / "broken.py")
    assert rc == 1 and len(err.strip().splitlines()) == 1 and "not valid Python" in err


def test_non_utf8(tmp_path, capsys, src):
    (src / "latin.py").write_bytes(b"# caf\xe9\nimport torch\n")
    out, entry, _ = _convert_one_bad(tmp_path, capsys, src, "latin.py")
    assert entry["status"] == "failed" and "UTF-8" in entry["reason"]
    assert (out / "latin.py").read_bytes() == b"# caf\xe9\nimport torch\n"


def test_bom_file_converts(tmp_path, capsys, src):
    (src / "bom.py").write_bytes(b"\xef\xbb\xbf" + OK_PY.encode())
    before = tree_digest(src)
    out = tmp_path / "out"
    rc, _, err = _run(capsys, "convert", src, "-o", out, "-q")
    assert rc == 0, err
    assert tree_digest(src) == before
    assert _report(out)["bom.py"]["status"] == "converted"
    text = (out / "bom.py").read_text(encoding="utf-8-sig")
    assert "nn.Dense(2, 3)" in text and "import torch" not in text


def test_binary_named_py(tmp_path, capsys, src):
    blob = bytes(range(256)) * 4
    (src / "blob.py").write_bytes(blob)
    out, entry, _ = _convert_one_bad(tmp_path, capsys, src, "blob.py")
    assert entry["status"] == "failed" and "binary" in entry["reason"]
    assert (out / "blob.py").read_bytes() == blob


def test_huge_file(tmp_path, capsys, src):
    big = ("import torch\n" + "x = torch.zeros(1)  # padding padding padding padding\n" * 120_000).encode()
    assert len(big) > 5 * 2**20
    (src / "huge.py").write_bytes(big)
    out, entry, _ = _convert_one_bad(tmp_path, capsys, src, "huge.py")
    assert entry["status"] == "failed" and "larger than 5 MiB" in entry["reason"]
    assert (out / "huge.py").read_bytes() == big, "copied unchanged"


def test_symlinks_and_loops_not_followed(tmp_path, capsys, src):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text(OK_PY)
    (src / "link_file.py").symlink_to(outside / "secret.py")
    (src / "link_dir").symlink_to(outside, target_is_directory=True)
    (src / "self_loop.py").symlink_to("self_loop.py")           # a link to itself
    (src / "sub").mkdir()
    (src / "sub" / "up").symlink_to("..", target_is_directory=True)  # a directory loop
    (src / "dangling.py").symlink_to(tmp_path / "nowhere.py")
    before = tree_digest(src)
    out = tmp_path / "out"
    rc, _, err = _run(capsys, "convert", src, "-o", out)
    assert rc == 1
    assert tree_digest(src) == before
    files = _report(out)
    for name in ("link_file.py", "link_dir", "self_loop.py", str(Path("sub/up")), "dangling.py"):
        assert files[name]["status"] == "failed" and "symbolic link" in files[name]["reason"], (name, files)
        assert sum(1 for ln in err.splitlines() if ln.startswith(f"msmigrate: warning: {name}:")) == 1, err
    assert not any(p.is_symlink() for p in out.rglob("*"))
    assert not (out / "link_dir").exists() and not (out / "link_file.py").exists()


def test_fifo_named_py_is_not_read(tmp_path, capsys, src):
    """A directory entry that cannot be read like a file (it would block forever on open)."""
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    os.mkfifo(src / "pipe.py")
    out, entry, warn = _convert_one_bad(tmp_path, capsys, src, "pipe.py")
    assert entry["status"] == "failed" and "not a regular file" in entry["reason"]
    assert not (out / "pipe.py").exists()


def test_unreadable_file(tmp_path, capsys, src, monkeypatch):
    p = src / "secret.py"
    p.write_text(OK_PY)
    os.chmod(p, 0)
    try:
        if os.geteuid() == 0 if hasattr(os, "geteuid") else False:
            # root reads chmod 000 files: simulate the permission error where the converter reads
            real = Path.read_bytes

            def read_bytes(self):
                if self.name == "secret.py":
                    raise PermissionError(13, "Permission denied", str(self))
                return real(self)

            monkeypatch.setattr(Path, "read_bytes", read_bytes)
        out, entry, warn = _convert_one_bad(tmp_path, capsys, src, "secret.py")
        assert entry["status"] == "failed" and "unreadable" in entry["reason"]
        assert "Permission denied" in warn
    finally:
        os.chmod(p, 0o644)


def test_out_equal_inside_or_around_src(tmp_path, capsys, src):
    before = tree_digest(tmp_path)
    for argv in (["convert", src, "-o", src],
                 ["convert", src, "-o", src / "inside"],
                 ["convert", src, "-o", src / "inside", "--force"],
                 ["convert", src, "-o", tmp_path, "--force"],            # SRC inside OUT
                 ["convert", src / "ok.py", "-o", src, "--force"],       # would overwrite the file
                 ["convert", src / "ok.py", "-o", src / "ok.py"],
                 ["convert", tmp_path / "missing", "-o", tmp_path / "o"]):
        rc, out, err = _run(capsys, *argv)
        assert rc == 2, argv
        assert len(err.strip().splitlines()) == 1 and err.startswith("msmigrate: error:"), (argv, err)
    assert tree_digest(tmp_path) == before


def test_existing_non_empty_out(tmp_path, capsys, src):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    before = tree_digest(src)
    rc, _, err = _run(capsys, "convert", src, "-o", out)
    assert rc == 2 and "--force" in err and len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]
    rc, _, err = _run(capsys, "convert", src, "-o", out, "--force", "-q")
    assert rc == 0 and (out / "keep.txt").read_text() == "mine" and (out / "ok.py").exists()
    assert tree_digest(src) == before


# ---------------------------------------------------------------------------------------------------- weights

class _Evil:
    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _weights(capsys, *argv):
    return _run(capsys, "weights", *argv)


def test_pickle_that_runs_code_is_refused(tmp_path, capsys):
    marker = tmp_path / "PWNED"
    legacy = tmp_path / "evil.pth"
    legacy.write_bytes(pickle.dumps({"w": _Evil(marker)}, protocol=2))
    zipped = tmp_path / "evil_zip.pth"
    with zipfile.ZipFile(zipped, "w") as z:
        z.writestr("archive/data.pkl", pickle.dumps({"w": _Evil(marker)}, protocol=2))
        z.writestr("archive/version", "3\n")
    before = tree_digest(tmp_path)
    for f in (legacy, zipped):
        rc, out, err = _weights(capsys, f, "-o", tmp_path / "x.ckpt")
        assert rc == 2 and len(err.strip().splitlines()) == 1, err
        assert "system" in err
    assert not marker.exists(), "nothing from the pickle may run"
    assert not (tmp_path / "x.ckpt").exists()
    assert tree_digest(tmp_path) == before


def _good_weights(tmp_path):
    torch = pytest.importorskip("torch")
    sd = {"fc.weight": torch.arange(12, dtype=torch.float32).reshape(4, 3), "fc.bias": torch.zeros(4)}
    pth = tmp_path / "good.pth"
    torch.save(sd, pth)
    from safetensors.numpy import save_file

    st = tmp_path / "good.safetensors"
    save_file({k: v.numpy() for k, v in sd.items()}, str(st))
    lightning = tmp_path / "lightning.ckpt"          # Lightning's .ckpt is a torch.save file
    torch.save({"epoch": 3, "state_dict": sd}, lightning)
    return pth, st, lightning


def test_truncated_and_corrupt_weights(tmp_path, capsys):
    pth, st, lightning = _good_weights(tmp_path)
    rc, out, err = _weights(capsys, lightning, "-o", tmp_path / "l.ckpt")
    assert rc == 0, err                              # a torch .ckpt is read
    bad = tmp_path / "bad"
    bad.mkdir()
    cases = {}
    for f in (pth, st, lightning):
        data = f.read_bytes()
        for kind, blob in (("half", data[: len(data) // 2]), ("head", data[:10]),
                           ("flipped", data[:40] + bytes(b ^ 0xFF for b in data[40:200]) + data[200:])):
            p = bad / f"{kind}_{f.name}"
            p.write_bytes(blob)
            cases[p.name] = p
    noise = bad / "noise.ckpt"
    noise.write_bytes(np.random.default_rng(0).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    cases["noise.ckpt"] = noise
    (bad / "empty.pth").write_bytes(b"")
    cases["empty.pth"] = bad / "empty.pth"
    before = tree_digest(bad), pth.read_bytes(), st.read_bytes(), lightning.read_bytes()
    for name, p in cases.items():
        rc, out, err = _weights(capsys, p, "-o", tmp_path / "o" / "x.ckpt")
        if rc == 0:
            # a flip that only hit tensor bytes still reads; anything structural must fail
            assert name.startswith("flipped_"), (name, out)
            continue
        assert rc == 2, (name, rc, err)
        assert len(err.strip().splitlines()) == 1 and err.startswith("msmigrate weights: error:"), (name, err)
    assert (tree_digest(bad), pth.read_bytes(), st.read_bytes(), lightning.read_bytes()) == before


def test_mindspore_ckpt_as_input(tmp_path, capsys):
    ms = pytest.importorskip("mindspore")
    ck = tmp_path / "model.ckpt"
    ms.save_checkpoint([{"name": "w", "data": ms.Tensor(np.ones((2, 2), np.float32))}], str(ck))
    before = tree_digest(tmp_path)
    rc, out, err = _weights(capsys, ck, "-o", tmp_path / "again.ckpt")
    assert rc == 2 and len(err.strip().splitlines()) == 1
    assert "not a torch checkpoint" in err and "MindSpore .ckpt" in err
    half = tmp_path / "half.ckpt"
    half.write_bytes(ck.read_bytes()[:20])
    before = tree_digest(tmp_path)
    rc, out, err = _weights(capsys, half, "-o", tmp_path / "again.ckpt")
    assert rc == 2 and len(err.strip().splitlines()) == 1
    assert tree_digest(tmp_path) == before


_NET = """
import mindspore.nn as nn


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(3, 4)
        self.head = nn.Dense(4, 2)

    def construct(self, x):
        return self.head(self.fc(x))


def make():
    return Net()
"""


def test_state_dict_that_does_not_fit(tmp_path, capsys):
    pytest.importorskip("mindspore")
    from safetensors.numpy import save_file

    moddir = tmp_path / "netpkg"
    moddir.mkdir()
    mod = f"badfit_{os.getpid()}"
    (moddir / f"{mod}.py").write_text(textwrap.dedent(_NET))
    st = tmp_path / "w.safetensors"
    save_file({"fc.weight": np.zeros((5, 3), np.float32),       # wrong shape
               "fc.bias": np.zeros(4, np.float32),
               "junk.weight": np.zeros(7, np.float32)}, str(st))  # unexpected; head.* missing
    before = tree_digest(tmp_path)
    rc, out, err = _weights(capsys, st, "-o", tmp_path / "n.ckpt", "--net", f"{mod}:make", "--path", moddir)
    assert rc == 1, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    for name in ("fc.weight", "junk.weight", "head.weight", "head.bias"):
        assert name in lines[0], (name, lines[0])
    assert "4 mismatches" in lines[0]
    assert not (tmp_path / "n.ckpt").exists()
    assert tree_digest(tmp_path) == before
