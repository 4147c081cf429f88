"""Star imports: a file that gets `torch`, `nn`, `F` through `from .parts import *` is converted and
counted like any other, with and without `__all__` in the module it star-imports."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from msmigrate.cli import main
from tests.treeutil import write_tree

PARTS = """\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    def act(x):
        return F.relu(x)
    """
ALL = '\n__all__ = ["torch", "nn", "F", "act"]\n'
MODEL = """\
    from .parts import *


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)

        def forward(self, x):
            y = F.relu(self.fc(x))
            return torch.cat([y, act(x)[:, :3]], dim=1)
    """


def _torch_reference(src, x):
    code = textwrap.dedent("""
        import sys, numpy as np, torch
        sys.path.insert(0, sys.argv[1])
        from pkg.model import Net
        torch.manual_seed(0)
        net = Net()
        x = torch.tensor(np.load(sys.argv[2]))
        np.savez(sys.argv[3], w=net.fc.weight.detach().numpy(), b=net.fc.bias.detach().numpy(),
                 y=net(x).detach().numpy())
    """)
    np.save(src.parent / "x.npy", x)
    subprocess.run([sys.executable, "-c", code, str(src), str(src.parent / "x.npy"), str(src.parent / "ref.npz")],
                   check=True, timeout=300)
    return src.parent / "ref.npz"


@pytest.mark.parametrize("with_all", [False, True], ids=["no __all__", "__all__"])
def test_star_imported_torch_names_convert_and_compute_what_torch_computes(tmp_path, with_all):
    src, out = tmp_path / "src", tmp_path / "out"
    write_tree(src, {"pkg/__init__.py": "", "pkg/parts.py": textwrap.dedent(PARTS) + (ALL if with_all else ""),
                     "pkg/model.py": MODEL})
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 0
    model = (out / "pkg" / "model.py").read_text()
    assert "class Net(nn.Cell):" in model and "nn.Dense(4, 3)" in model and "_ms_compat.cat(" in model, model
    assert "from .parts import *" in model
    report = json.loads((out / "msmigrate-report.json").read_text())
    by_file = {f["file"]: f for f in report["files"]}
    assert by_file["pkg/model.py"]["status"] == "converted"
    apis = {s["api"] for s in by_file["pkg/model.py"]["sites"]}
    assert {"torch.nn.Module", "torch.nn.Linear", "torch.nn.functional.relu", "torch.cat"} <= apis, apis
    assert "Tensor.relu" not in apis, "F.relu must not be taken for a tensor method"

    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    ref = _torch_reference(src, x)
    code = textwrap.dedent("""
        import sys
        sys.modules['torch'] = None
        sys.path.insert(0, sys.argv[1])
        import numpy as np, mindspore as ms
        from pkg.model import Net
        r = np.load(sys.argv[2])
        net = Net()
        net.fc.weight.set_data(ms.Tensor(r["w"]))
        net.fc.bias.set_data(ms.Tensor(r["b"]))
        y = net(ms.Tensor(np.load(sys.argv[3]))).asnumpy()
        print("maxdiff", float(np.abs(y - r["y"]).max()))
    """)
    r = subprocess.run([sys.executable, "-c", code, str(out), str(ref), str(tmp_path / "x.npy")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    diff = float(r.stdout.split("maxdiff")[1])
    assert diff < 1e-5, r.stdout


def test_star_import_from_torch_resolves_through_the_registry():
    from msmigrate.converter import convert_code

    code, sites, _ = convert_code(textwrap.dedent("""\
        from torch.nn import *


        class Net(Module):
            def __init__(self):
                super().__init__()
                self.fc = Linear(4, 3)

            def forward(self, x):
                return functional.relu(self.fc(x)), max(1, 2)
        """))
    assert "class Net(nn.Cell):" in code and "nn.Dense(4, 3)" in code and "ops.relu(" in code, code
    assert "max(1, 2)" in code, "a builtin torch.nn does not rebind stays the builtin"
    assert {"torch.nn.Module", "torch.nn.Linear", "torch.nn.functional.relu"} <= {s.api for s in sites}
