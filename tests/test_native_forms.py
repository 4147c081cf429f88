"""MindSpore's own forms where the tree shows no helper difference (msmigrate/native_forms.py):
`for m in model.modules()` over leaf layers becomes cells_and_names(), register_buffer a non-trainable
Parameter; a tree where the helper's difference can show keeps the helper."""
from __future__ import annotations

import importlib.util

import mindspore as ms
from mindspore import nn

from msmigrate.converter import compat_source, convert_tree
from msmigrate.native_forms import CONTAINERS, HELPER_LEAF_LAYERS, LEAF_LAYERS, native_forms
from tests.parity.harness import load_converted
from tests.treeutil import write_tree

MODEL = '''
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self, width=4):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, width, 3), nn.BatchNorm2d(width), nn.ReLU())
        self.heads = nn.ModuleList([nn.Linear(width, 2), nn.Linear(width, 3)])
        self.register_buffer("scale", torch.ones(2) * 3.0)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.constant_(m.weight, 0.5)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.bias, 0.25)
            elif isinstance(m, (nn.Linear, nn.Conv1d)):
                nn.init.zeros_(m.bias)
        for m in self.modules():
            print(type(m).__name__)
'''

# converted code (as the converter writes it) for the pass alone
CONVERTED = '''import mindspore as ms
from mindspore import nn, ops
import _ms_compat


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.norm = nn.{layer}(4)
        _ms_compat.register_buffer(self, "scale", ops.ones(2) * 3.0)
        for m in _ms_compat.modules(self):
            if isinstance(m, nn.BatchNorm2d):
                m.gamma.set_data(ops.ones(4))
{more}'''


def _pass(layer="BatchNorm2d", more="", imports="from mindspore import nn, ops"):
    code = CONVERTED.format(layer=layer, more=more).replace("from mindspore import nn, ops", imports)
    return native_forms({"net.py": code}, compat_source(), "_ms_compat")["net.py"]


def test_leaf_layers_list_the_cells_the_helper_lists():
    # the proof behind LEAF_LAYERS: for each, MindSpore's cells_and_names() and the helper's torch
    # modules() give the same cells (no inner cell of MindSpore's own), for MindSpore's class and the
    # helper's adapter of the same name
    mod, _, _ = load_converted("import torch\n")
    import _ms_compat as helper
    args = {"Conv1d": (2, 2, 3), "Conv2d": (2, 2, 3), "Conv3d": (2, 2, 3), "Conv1dTranspose": (2, 2, 3),
            "Conv2dTranspose": (2, 2, 3), "Conv3dTranspose": (2, 2, 3), "Dense": (2, 2), "BatchNorm1d": (2,),
            "BatchNorm2d": (2,), "LayerNorm": ((2,),), "GroupNorm": (1, 2), "Embedding": (4, 2),
            "MaxPool1d": (2,), "MaxPool2d": (2,), "AvgPool1d": (2,), "AvgPool2d": (2,),
            "AdaptiveAvgPool1d": (1,), "AdaptiveAvgPool2d": (1,)}
    # any_batch: the helper's namespace of MindSpore's conv layers taking an unbatched sample too
    convs = {k for k in args if k.startswith("Conv")}
    for owner, names in ((nn, LEAF_LAYERS), (helper, HELPER_LEAF_LAYERS - {"any_batch"}), (helper.any_batch, convs)):
        for name in sorted(names):
            cell = getattr(owner, name)(*args.get(name, ()))
            assert [c for _, c in cell.cells_and_names()] == list(helper.modules(cell)) == [cell], (owner, name)
    # the helper's AdaptiveAvgPool1d runs a 2-d pool of its own: not a leaf
    pool = helper.AdaptiveAvgPool1d(1)
    assert len([c for _, c in pool.cells_and_names()]) > len(list(helper.modules(pool)))
    # a non-empty container: the same; BatchNorm3d (its inner bn2d): not
    seq = nn.SequentialCell(nn.Dense(2, 2), nn.CellList([nn.ReLU()]))
    assert [c for _, c in seq.cells_and_names()] == list(helper.modules(seq))
    bn3 = nn.BatchNorm3d(2)
    assert len([c for _, c in bn3.cells_and_names()]) > len(list(helper.modules(bn3)))
    assert {"SequentialCell", "CellList"} <= CONTAINERS


def test_tree_of_leaf_layers_gets_native_forms(tmp_path):
    src = tmp_path / "src"
    write_tree(src, {"net.py": MODEL})
    out = tmp_path / "out"
    convert_tree(src, out, jobs=1)
    code = (out / "net.py").read_text()
    assert "for _, m in self.cells_and_names():" in code
    assert 'self.scale = ms.Parameter(ops.ones(2) * 3.0, name="scale", requires_grad=False)' in code
    assert code.count("_ms_compat.modules(self)") == 1, "a loop that sees every cell keeps the helper"
    # the converted model: the native loop initialised every layer the helper's loop would have
    spec = importlib.util.spec_from_file_location("native_forms_net", out / "net.py")
    mod = importlib.util.module_from_spec(spec)
    import _ms_compat as helper
    mod._ms_compat = helper
    code_native = code.replace("import _ms_compat\n", "")
    exec(compile(code_native, str(out / "net.py"), "exec"), mod.__dict__)
    net = mod.Net()
    assert float(net.body[0].weight.asnumpy().min()) == float(net.body[0].weight.asnumpy().max()) == 0.5
    assert all(float(abs(h.bias.asnumpy()).max()) == 0 for h in net.heads)
    assert net.body[1].beta.asnumpy().tolist() == [0.25] * 4
    assert isinstance(net.scale, ms.Parameter) and not net.scale.requires_grad
    assert net.scale.asnumpy().tolist() == [3.0, 3.0] and "scale" in net.parameters_dict()


def test_a_difference_the_tree_can_show_keeps_the_helper():
    native = _pass()
    assert "for _, m in self.cells_and_names():" in native and "self.scale = ms.Parameter(" in native
    assert "_ms_compat" not in native, "nothing reads the helper module any more: its import goes"
    assert "cells_and_names" in _pass(imports="from mindspore import nn\nimport mindspore.ops as ops")
    # a library outside MindSpore, NumPy and the standard library may build any layer
    assert "_ms_compat.modules(self)" in _pass(imports="from mindspore import nn, ops\nimport mindcv")
    # BatchNorm3d holds a BatchNorm2d of its own: the loop would reach it
    assert "for m in _ms_compat.modules(self):" in _pass(layer="BatchNorm3d")
    # nn held as a value: any layer may be built
    assert "_ms_compat.modules(self)" in _pass(more="        self.act = getattr(nn, 'ReLU')()\n")
    # the helpers' parameters() leave buffers out by their mark: register_buffer stays
    kept = _pass(more="        self.n = len(list(_ms_compat.parameters(self)))\n")
    assert '_ms_compat.register_buffer(self, "scale"' in kept and "cells_and_names" in kept
    # a tensor the line does not build may be None (no buffer in torch)
    assert "_ms_compat.register_buffer(self, \"b\", x)" in _pass(
        more='        x = None\n        _ms_compat.register_buffer(self, "b", x)\n')
    # a statement outside the isinstance branches (it sees every cell), or the loop variable rebound
    set_gamma = "                m.gamma.set_data(ops.ones(4))\n"
    for extra in ("            print(m)\n", "                m = None\n"):
        code = CONVERTED.format(layer="BatchNorm2d", more="").replace(set_gamma, set_gamma + extra)
        assert "_ms_compat.modules(self)" in native_forms({"n.py": code}, compat_source(), "_ms_compat")["n.py"]
