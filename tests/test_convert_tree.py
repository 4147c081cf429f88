"""Converting files and project trees: the CLI contract, imports and aliases,
TODO placeholders, the report, and the guarantees (source untouched, output parses,
converted code runs without torch)."""
from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path


from msmigrate.cli import main
from msmigrate.converter import convert_code
from tests.treeutil import tree_digest, write_tree

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "torch_project"






def _run_without_torch(code: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run Python in a fresh interpreter where `import torch` fails."""
    prelude = "import sys; sys.modules['torch'] = None\n"
    return subprocess.run([sys.executable, "-c", prelude + code], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


PROJECT = {
    "pkg/__init__.py": "from .models import Net\n",
    "pkg/common.py": """\
        from torch import nn  # re-exported to the rest of the project
        import torch.nn.functional as F
        """,
    "pkg/base.py": """\
        import torch.nn as tnn


        class Base(tnn.Module):
            def helper(self, x):
                return x
        """,
    "pkg/models.py": """\
        # a comment that must survive
        import torch
        from .common import nn, F
        from .base import Base


        class Net(Base):
            \"\"\"Docstring kept.\"\"\"

            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 3)  # trailing comment kept
                self.items = []
                self.items.append(1)

            def forward(self, x):
                y = F.relu(self.fc(x))
                return torch.flatten(y, 1)

            def unknown(self, x):
                return torch.frobnicate(x)
        """,
    "pkg/data.txt": "not python\n",
    "pkg/register.py": """\
        import torch
        import os

        HOME = os.path.join(torch.hub.frobnicate_home(), "x")
        """,
}


def test_tree_conversion_contract(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    write_tree(src, PROJECT)
    before = tree_digest(src)
    rc = main(["convert", str(src), "-o", str(out), "-q"])
    assert rc == 1, "unconverted torch sites must give exit code 1"
    assert tree_digest(src) == before, "the source tree must not change"
    assert (out / "pkg" / "data.txt").read_text() == "not python\n"
    for p in out.rglob("*.py"):
        ast.parse(p.read_text(encoding="utf-8"))
        assert "import torch" not in p.read_text(encoding="utf-8"), p
    models = (out / "pkg" / "models.py").read_text()
    assert "# a comment that must survive" in models
    assert "# trailing comment kept" in models
    assert "class Net(Base):" in models
    assert "def construct(self, x):" in models, "forward becomes construct through a project base class"
    assert "nn.Dense(4, 3)" in models
    assert "self.items.append(1)" in models, "list methods are not torch sites"
    assert "msmigrate: TODO torch.frobnicate" in models
    base = (out / "pkg" / "base.py").read_text()
    assert "(nn.Cell)" in base
    assert (out / "pkg" / "_ms_compat.py").exists(), "the helper is written into the package"
    report = json.loads((out / "msmigrate-report.json").read_text())
    summary = report["summary"]
    assert summary["todo"] >= 2 and summary["converted"] + summary["converted_with_difference"] >= 5
    assert "nn = nn" not in (out / "pkg" / "common.py").read_text()
    apis = {s["api"] for f in report["files"] for s in f["sites"]}
    assert "torch.nn.Linear" in apis and "torch.frobnicate" in apis
    assert not any(s["api"].endswith(".append") for f in report["files"] for s in f["sites"])
    assert {r["api"] for r in summary["most_frequent_unconverted"]} >= {"torch.frobnicate"}
    md = (out / "msmigrate-report.md").read_text()
    assert "torch.frobnicate" in md and "conversion rate" in md
    # converted package imports and runs without torch; the TODO raises only when reached
    r = _run_without_torch(textwrap.dedent("""
        import numpy as np, mindspore as ms
        import pkg
        from pkg import register   # module-level torch code must not break import
        net = pkg.Net()
        y = net(ms.Tensor(np.ones((2, 4), np.float32)))
        print("shape", y.shape)
        try:
            net.unknown(1)
        except Exception as e:
            print("raised", type(e).__name__, "torch.frobnicate" in str(e))
        try:
            register.HOME + "y"
        except Exception as e:
            print("home raised", type(e).__name__)
    """), out)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "shape (2, 3)" in r.stdout
    assert "raised MigrationError True" in r.stdout
    assert "home raised MigrationError" in r.stdout


def test_second_pass_is_noop(tmp_path):
    src, out, out2 = tmp_path / "src", tmp_path / "out", tmp_path / "out2"
    write_tree(src, PROJECT)
    main(["convert", str(src), "-o", str(out), "-q"])
    (out / "msmigrate-report.json").unlink()
    (out / "msmigrate-report.md").unlink()
    main(["convert", str(out), "-o", str(out2), "-q"])
    for p in out.rglob("*.py"):
        assert (out2 / p.relative_to(out)).read_text() == p.read_text(), p


def test_usage_errors(tmp_path, capsys):
    src = tmp_path / "src"
    write_tree(src, {"a.py": "import torch\n"})
    assert main(["convert", str(src), "-o", str(src / "inside")]) == 2
    assert main(["convert", str(src), "-o", str(src)]) == 2
    assert main(["convert", str(tmp_path / "missing"), "-o", str(tmp_path / "o")]) == 2
    out = tmp_path / "full"
    out.mkdir()
    (out / "x").write_text("x")
    assert main(["convert", str(src), "-o", str(out)]) == 2
    assert main(["convert", str(src), "-o", str(out), "--force", "-q"]) == 0
    assert main(["bogus"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err


def test_single_file_and_clean_exit(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("import torch.nn as nn\n\nclass M(nn.Module):\n    def forward(self, x):\n        return x\n")
    out = tmp_path / "o" / "m.py"
    assert main(["convert", str(f), "-o", str(out), "-q"]) == 0
    text = out.read_text()
    assert "class M(nn.Cell):" in text and "def construct" in text


def test_bad_files_are_copied_and_reported(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    write_tree(src, {"ok.py": "import torch\nx = torch.float32\n", "broken.py": "def f(:\n    pass\n"})
    (src / "latin.py").write_bytes(b"# \xe9\xe8\nimport torch\n")
    (src / "bin.py").write_bytes(b"\x00\x01\x02")
    rc = main(["convert", str(src), "-o", str(out), "-q"])
    assert rc == 1
    report = json.loads((out / "msmigrate-report.json").read_text())
    status = {f["file"]: (f["status"], f["reason"]) for f in report["files"]}
    assert status["broken.py"][0] == "failed" and "not valid Python" in status["broken.py"][1]
    assert status["latin.py"][0] == "failed" and "UTF-8" in status["latin.py"][1]
    assert status["bin.py"][0] == "failed"
    assert (out / "broken.py").read_text() == "def f(:\n    pass\n"
    assert (out / "latin.py").read_bytes() == b"# \xe9\xe8\nimport torch\n"
    assert "ms.float32" in (out / "ok.py").read_text()


ALIASES = """
import torch as T
import torch.nn as tnn
from torch.nn import functional as Fn
from torch import Tensor, nn as n2

class M(tnn.Module):
    def __init__(self):
        super().__init__()
        self.c = n2.Conv2d(1, 2, 3)

    def forward(self, x: Tensor) -> Tensor:
        return Fn.relu(T.flatten(self.c(x), 1))
"""


def test_aliases_resolve_by_qualified_name():
    code, sites, _ = convert_code(ALIASES)
    apis = [s.api for s in sites]
    for api in ("torch.nn.Module", "torch.nn.Conv2d", "torch.nn.functional.relu", "torch.flatten", "torch.Tensor"):
        assert api in apis, (api, apis)
    assert "import torch" not in code and "tnn." not in code and "Fn." not in code and "T.flatten" not in code
    assert all(s.status != "todo" for s in sites), [s for s in sites if s.status == "todo"]


def test_example_project_converts_runs_and_matches(tmp_path):
    """The bundled example: convert, convert weights, verify in both modes."""
    out = tmp_path / "ms"
    rc = main(["convert", str(EXAMPLE), "-o", str(out), "-q"])
    assert rc in (0, 1)
    weights = tmp_path / "w.pth"
    subprocess.run([sys.executable, "save_weights.py", str(weights)], cwd=EXAMPLE, check=True)
    ckpt = tmp_path / "w.ckpt"
    assert main(["weights", str(weights), "-o", str(ckpt), "--net", "tinynet.models:tiny_resnet",
                 "--path", str(out)]) == 0
    r = subprocess.run([sys.executable, "-m", "msmigrate.cli", "verify", "--torch", "tinynet.models:tiny_resnet",
                        "--torch-path", str(EXAMPLE), "--ms", "tinynet.models:tiny_resnet", "--ms-path", str(out),
                        "--input", "2,3,32,32"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PASS" in r.stdout


def test_api_lookup(capsys):
    assert main(["api", "nn.Conv2d"]) == 0
    out = capsys.readouterr().out
    assert "mindspore.nn.Conv2d" in out and "pad_mode" in out and "proven by" in out
    assert main(["api", "torch.nn.BatchNorm2d"]) == 0
    assert "1 - momentum" in capsys.readouterr().out
    assert main(["api", "torch.frobnicate"]) == 1


def test_module_dtype_cast_of_submodule(tmp_path):
    """`self.vocoder.float()` on a sub-module (a Module through a base class in another file) casts the
    module's parameters: no Cell method does that, so _ms_compat.module_cast does; `.float()` on a
    tensor stays a cast. The second conversion of the output changes nothing (transformers' qwen2_5_omni:
    the second pass no longer knew the attribute was a module and turned `.float()` into astype)."""
    src, out, out2 = tmp_path / "src" / "pkg", tmp_path / "out" / "pkg", tmp_path / "out2" / "pkg"
    write_tree(src, {
        "__init__.py": "",
        "parts.py": """\
            import torch.nn as nn

            class PreTrained(nn.Module):
                def forward(self, x):
                    return x.float() * 2
            """,
        "model.py": """\
            import torch
            from torch import nn
            from .parts import PreTrained

            class Vocoder(PreTrained):
                pass

            class Net(PreTrained):
                def __init__(self):
                    super().__init__()
                    self.vocoder = Vocoder()
                    self.vocoder.float()

                def forward(self, x):
                    if self.vocoder.training:
                        self.vocoder.half()
                    return self.vocoder(x).double()
            """,
    })
    main(["convert", str(src), "-o", str(out), "-q"])
    code = (out / "model.py").read_text()
    assert "_ms_compat.module_cast(self.vocoder, ms.float32)" in code, code
    assert "_ms_compat.module_cast(self.vocoder, ms.float16)" in code, code
    assert "self.vocoder(x).astype(ms.float64)" in code, code
    assert "x.astype(ms.float32) * 2" in (out / "parts.py").read_text()
    for r in ("msmigrate-report.json", "msmigrate-report.md", "msmigrate-report.html"):
        (out / r).unlink(missing_ok=True)
    main(["convert", str(out), "-o", str(out2), "-q"])
    for p in out.rglob("*.py"):
        assert (out2 / p.relative_to(out)).read_text() == p.read_text(), p


def test_slow_file_is_copied_and_reported(tmp_path, monkeypatch):
    """A file whose conversion runs past the per-file time limit is copied unchanged and reported as
    failed with the reason; the other files are converted (one file cannot hold up a tree)."""
    import time
    from msmigrate import converter

    real = converter.convert_code

    def slow_on_one(source, *args, **kwargs):
        if "SLOW" in source:
            time.sleep(30)
        return real(source, *args, **kwargs)

    monkeypatch.setattr(converter, "convert_code", slow_on_one)
    src, out = tmp_path / "src", tmp_path / "out"
    write_tree(src, {"slow.py": "import torch\nSLOW = torch.float32\n", "ok.py": "import torch\nx = torch.float32\n"})
    t = time.perf_counter()
    tree = converter.convert_tree(src, out, jobs=1, time_limit=1.0)
    assert time.perf_counter() - t < 20
    status = {f.rel: f for f in tree.files}
    assert status["slow.py"].status == "failed" and "time limit" in status["slow.py"].reason
    assert (out / "slow.py").read_text() == "import torch\nSLOW = torch.float32\n"
    assert status["ok.py"].status == "converted" and "ms.float32" in (out / "ok.py").read_text()


WALK_SRC = '''
@decorate(first)
def f(a, b=default, *args, key: Ann = kdefault, **kw) -> Ret:
    y = a if cond else b
    z = [g(v) for v in items if v > lim]
    w = {k: h(k) for k in keys}
    s = f"{fmt!r:>{width}}"
    q = lambda t: t + bias
    try:
        r = call(a, kw=b)[idx].attr
    except (Err, Other) as e:
        handle(e)
    for i, (j, k) in enumerate(pairs):
        acc[i] += j * k
    with ctx(a) as m, other() as n:
        out = m(n)
    while (t := step()) is not None:
        del t
    return y, z, w, s, q, r, out

class C(Base, metaclass=Meta):
    attr: int = value
    def method(self):
        import os.path as osp
        from x import y as yy
        return osp
'''


def test_analysis_walk_matches_libcst_visit():
    """train_loop.walk (the analyses' fast read-only walk) sees the names libcst's visit sees, in the
    same order: the step's parameters follow the order in which names are first read."""
    import libcst as cst
    from msmigrate import train_loop as TL
    from msmigrate.transformer import _Imports

    module = cst.parse_module(WALK_SRC)
    nodes = [module] + list(module.body) + [module.body[0].body, module.body[1].body]
    fast = [(TL.reads(n), TL.assigns(n), [id(i) for i in _Imports.collect(n)]) for n in nodes]
    real_walk = TL.walk
    try:
        TL.walk = lambda node, visitor: node.visit(visitor)   # libcst's own traversal
        slow = [(TL.reads(n), TL.assigns(n), [id(i) for i in _Imports.collect(n)]) for n in nodes]
    finally:
        TL.walk = real_walk
    assert fast == slow
    reads = TL.reads(module.body[0])
    assert reads.index("decorate") < reads.index("default")
    body_reads = TL.reads(module.body[0].body)
    assert body_reads.index("a") < body_reads.index("cond")  # a if cond
    assert "a" not in reads and "f" not in reads      # a def reads its free names: not its parameters, its name
    assert {"y", "z", "w", "s", "q", "r", "e", "i", "j", "k", "m", "n", "out", "t"} <= TL.assigns(module.body[0].body)
    assert TL.assigns(module) == {"f", "C"}   # nested definitions bind their own names


def test_dropped_calls_never_take_other_statements_along():
    """A dropped call (`torch.fx.wrap(...)`) leaves a placeholder node whose id marks its statement for
    removal; once that placeholder was freed, a later node could get the same id and its statement (a
    docstring in torchvision's video/swin_transformer.py) was removed too, depending on memory layout."""
    src = "import torch\nimport torch.fx\n\n" + "".join(
        f'torch.fx.wrap("f{i}")\n\n\nclass C{i}(torch.nn.Module):\n    """doc{i}"""\n\n'
        f'    def forward(self, x):\n        torch.fx.wrap("g")\n        "note{i}"\n        return x\n\n\n'
        for i in range(300))
    code = convert_code(src)[0]
    assert "torch.fx.wrap" not in code
    missing = [i for i in range(300) if f'"""doc{i}"""' not in code or f'"note{i}"' not in code]
    assert not missing, missing


def test_second_pass_keeps_mindspore_names_and_numpy_results():
    """Two second-pass changes found on torch's own sources: `.asnumpy()` (the converted `.numpy()`)
    returns a NumPy array, so `.flatten()` on it stays NumPy's; and a file's own object named like the
    emitted modules (torch/_inductor's `ops` handler) is no tensor: `ops.neg(self)` is left alone,
    not turned into `ops.neg(ops, self)` (and `ops.neg(ops, ops, self)` on the next pass)."""
    src = textwrap.dedent('''\
        import numpy as np
        import torch

        def unpack(tensor):
            return tensor.view(torch.uint8).numpy().flatten()

        class Value:
            def __neg__(self):
                return ops.neg(self)

        ops = make_handler()
        ''')
    code = convert_code(src)[0]
    assert ".asnumpy().flatten()" in code and "return ops.neg(self)" in code, code
    assert convert_code(code)[0] == code


def test_latest_binding_decides_a_name_kind():
    """Found on torch's own distributed tests: `net = Net().to(rank)` is the module (`.to` returns it), and
    a later `net = wrap(net)` by an unknown call makes `net` unknown again — else the first pass (where
    `.to(rank)` is still there) and the second pass (where it is gone) decided differently on `net(x).sum()`."""
    src = textwrap.dedent('''\
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(2, 2)

            def forward(self, x):
                return self.fc(x)

        def run(x, rank, wrap):
            net = Net().to(rank)
            y = net(x).sum()
            net = wrap(net)
            z = net(x).sum()
            return y, z
        ''')
    code = convert_code(src)[0]
    assert "net = Net()\n" in code and "y = _ms_compat.reduce_sum(net(x))" in code, code
    # net is unknown again: its .sum() is chosen at run time (the empty-safe reduction on a tensor)
    assert "z = _ms_compat.on_tensor(net(x), lambda _ms_r: _ms_compat.reduce_sum(_ms_r), lambda _ms_r: _ms_r.sum())" \
        in code, code
    assert convert_code(code)[0] == code


def test_second_pass_module_methods_and_parameters():
    """Two second-pass changes found on transformers: a lone backward() in a Module method other than
    forward (reformer's backward_pass, inside `with torch.enable_grad()`) is a TODO on the first pass already,
    as it is once the class is a Cell; and `p = nn.Parameter(p)` keeps `p` a tensor (`p.detach()` converts)."""
    src = textwrap.dedent('''\
        import torch
        from torch import nn

        class Block(nn.Module):
            def backward_pass(self, x, g):
                with torch.enable_grad():
                    y = self.f(x)
                    y.backward(g, retain_graph=True)
                return x

        def load(p: torch.Tensor):
            if not isinstance(p, nn.Parameter):
                p = nn.Parameter(p)
            return p.detach() if isinstance(p, nn.Parameter) else p
        ''')
    code = convert_code(src)[0]
    assert "_ms_compat.Unconverted('Tensor.backward'" in code and "ops.stop_gradient(p)" in code, code
    assert convert_code(code)[0] == code


def test_a_converter_error_whose_message_fails_fails_its_file_only():
    """libcst's ParserSyntaxError can fail to format its own message (IndexError in its context): the file
    is reported failed with the class name; before, the exception escaped the worker and stopped the tree."""
    from msmigrate.converter import _first_line

    class Broken(Exception):
        def __str__(self):
            raise IndexError("list index out of range")

    assert _first_line(Broken()) == "(no message)"
    assert _first_line(ValueError("first\nsecond")) == "first"
