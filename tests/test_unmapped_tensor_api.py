"""Nothing torch-shaped is copied through unseen: a torch.Tensor method or property with no mapping record,
on a value known to be a tensor, is a TODO site (comment, report entry, code that raises MigrationError
naming the site); values that are not tensors keep their methods; `.values`/`.indices` of the
(values, indices) results become [0]/[1] and compute what torch computes."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap

import numpy as np

from msmigrate.cli import main
from msmigrate.converter import convert_code
from msmigrate.torch_tensor_names import TENSOR_ATTRIBUTES, TORCH_VERSION, current_names
from tests.parity.harness import check_function
from tests.treeutil import write_tree

CATCH_ALL = '''\
import numpy as np
import torch


def f(x: torch.Tensor, items, table: dict):
    y = x.data_ptr()
    w = x.chalf()
    x.as_strided_((2, 6), (6, 1))
    g = x.grad_fn
    leaf = x.is_leaf
    x.requires_grad = len(items) > 0
    x.requires_grad = True
    x.grad.zero_()
    arr = np.zeros(3)
    a = arr.cumprod()
    b = arr.take([0])
    items.append(1)
    n = list(table.values())
    s = x.shape, x.dtype, x.ndim, x.T
    return x.view(2, 6), x.abs().sum().item()
'''


def test_torch_tensor_names_match_the_installed_torch():
    import torch

    assert torch.__version__.split("+")[0] == TORCH_VERSION, (
        f"torch {torch.__version__} installed, names were taken from {TORCH_VERSION}: "
        "run python -m msmigrate.torch_tensor_names")
    assert sorted(TENSOR_ATTRIBUTES) == current_names(), "run python -m msmigrate.torch_tensor_names"


def test_unmapped_tensor_methods_and_properties_are_todo_sites():
    code, sites, _ = convert_code(CATCH_ALL)
    todo = {s.api for s in sites if s.status == "todo"}
    # x.grad has a record (the straight-line backward() and train-step rewrites read it); a read they do not
    # take over is a TODO of its own (msmigrate/grad_reads.py: raises MigrationError on a tensor)
    assert todo == {"Tensor.data_ptr", "Tensor.chalf", "Tensor.as_strided_", "Tensor.grad_fn", "Tensor.is_leaf",
                    "Tensor.requires_grad", "Tensor.grad"}, (todo, code)
    assert "Tensor.grad_fn" in todo and "Tensor.is_leaf" in todo   # reads of unmapped properties
    # a flag written out is a converted store (tests/parity/test_autograd_scripts.py), a computed one a TODO
    assert "_ms_compat.set_requires_grad(x, True)" in code, code
    for api in todo:
        assert f"# msmigrate: TODO {api}:" in code, code
    # mapped methods still convert; NumPy arrays, lists, dicts and MindSpore-equivalent properties stay
    assert {"Tensor.view", "Tensor.abs", "Tensor.sum", "Tensor.item"} <= {s.api for s in sites if s.status != "todo"}
    for kept in ("arr.cumprod()", "arr.take([0])", "items.append(1)", "list(table.values())",
                 "x.shape, x.dtype, x.ndim, x.T"):
        assert kept in code, (kept, code)
    assert "x.data_ptr()" not in code.replace("Original: x.data_ptr()", ""), code
    # a second pass over the output finds nothing new to convert
    assert convert_code(code)[0] == code


def test_unmapped_tensor_method_raises_naming_the_site(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    write_tree(src, {"mod.py": """\
        import torch


        def mantissa(x: torch.Tensor):
            offset = x.storage_offset()
            return offset
        """})
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 1
    report = json.loads((out / "msmigrate-report.json").read_text())
    [site] = [s for f in report["files"] for s in f["sites"] if s["status"] == "todo"]
    assert site["api"] == "Tensor.storage_offset" and site["line"] == 5
    code = textwrap.dedent("""
        import sys
        sys.modules['torch'] = None
        import numpy as np, mindspore as ms, mod, _ms_compat
        try:
            mod.mantissa(ms.Tensor(np.ones(3, np.float32)))
        except _ms_compat.MigrationError as e:
            print("raised", e)
    """)
    r = subprocess.run([sys.executable, "-c", code], cwd=out, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "raised Tensor.storage_offset at mod:5" in r.stdout, r.stdout


NAMED_FIELDS = '''
import torch
def fn(x: torch.Tensor):
    return (x.max(dim=1).values, x.min(1).indices, torch.max(x, 0).values, torch.sort(x, dim=1).indices,
            torch.sort(x, 1, descending=True).values, x.topk(2).values, x.topk(2, dim=0).indices,
            torch.mode(x, 1).values, x.mode(0).indices)
'''


NAMED_FIELD_NAMES = '''
import torch
def fn(x: torch.Tensor):
    r = x.topk(2, dim=0, largest=False)
    s = torch.sort(x, 1)
    m = x.max(1)
    out = (r.values, r.indices, s.values, s.indices, m.values, m.indices)
    m = x.sum(1)             # rebound to a tensor: no field reads of it follow
    return out + (m,)
'''


UNTYPED_NAMED_FIELDS = '''
import torch
def scaled(t):
    return t * 0.5
def fn(r):
    # r has no annotation: only a tensor method has the named fields read here
    return (r.sort(-1).indices, r.sort(-1, descending=True).values, r.max(-1).values, r.min(dim=0).indices,
            r.topk(2).values.sum(), r.cummax(0).values, r.cummin(0).indices, r.kthvalue(2, 0).values,
            r.median(1).values, scaled(r).softmax(-1).max(-1).values, scaled(r).topk(3).indices)
'''


def test_named_tuple_fields_of_untyped_receivers():
    """`r.sort(-1).indices` with r of no known type, `f(x).softmax(-1).max(-1).values`: MindSpore's
    sort/topk/max return a plain tuple (and int32 indices), so the field is [0] / [1] of the converted call,
    also where the receiver is typed at run time; values and dtypes as torch's, PyNative and GRAPH."""
    x = np.random.default_rng(0).permutation(20).reshape(4, 5).astype(np.float32)  # no ties: same indices
    code, sites = check_function(UNTYPED_NAMED_FIELDS, [x])
    fields = re.findall(r"\.(?:values|indices)\b", code)
    as_written = re.findall(r"(?:else r|_ms_r)\.\w+\([^()]*\)\.(?:values|indices)\b", code)
    assert len(fields) == len(as_written) == 3, code    # only in the branches for what is no MindSpore tensor
    # sort/topk/kthvalue or `.indices`: decided while converting; max/median `.values` (a pandas Series' max
    # has one too): at run time, the field read in each branch
    assert "is_tensor(r) else r.sort" not in code and "r.max(-1).values" in code, code


def test_named_tuple_fields_of_names():
    """`r = x.topk(2)` then `r.values` / `r.indices`: r holds the converted plain tuple, the fields are [0] / [1]."""
    x = np.random.default_rng(0).permutation(20).reshape(4, 5).astype(np.float32)  # no ties: same indices
    code, sites = check_function(NAMED_FIELD_NAMES, [x], graph=False)
    fields = [s for s in sites if s.api.startswith("torch.return_types.")]
    assert len(fields) == 6 and all(s.status == "converted" for s in fields), sites
    assert ".values" not in code and ".indices" not in code, code


def test_named_tuple_fields_become_indices():
    x = np.random.default_rng(0).permutation(20).reshape(4, 5).astype(np.float32)  # no ties: same indices
    code, sites = check_function(NAMED_FIELDS, [x], graph=False)
    fields = [s for s in sites if s.api.startswith("torch.return_types.")]
    assert len(fields) == 9 and all(s.status == "converted" for s in fields), sites
    assert ".values" not in code and ".indices" not in code, code
