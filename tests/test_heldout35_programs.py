"""Minimal reproductions of what bench/_rw_heldout35.py's programs (jacobgil/pytorch-grad-cam) needed, each
compared with torch in PYNATIVE and GRAPH mode.

- A backward() nested in an `if` of a function that steps no optimizer (the package's BaseCAM.forward calls
  backward(retain_graph=True) on the summed target scores under two `if`s (uses_gradients, detach), for the tensor hooks
  it fires and the .grad it fills) was left as written by every train-step rewrite (they look at the statements
  of a loop or function body, not into its blocks): the converted program stopped with MindSpore's
  AttributeError ("'Tensor' object has no attribute 'backward'"), naming no line of the original, and the
  report listed no site. Such a backward() is now a TODO that raises MigrationError naming the original
  line (msmigrate/leftover_backward.py); a receiver of unknown type that is no tensor (a program's own class with
  a backward method) still calls its own method.
- A file that names no torch but walks a model passed in through torch's Module dictionary (the package's
  utils/find_layers.py: iterating `m._modules.items()` and storing `m._modules[key] = replacement`) was
  left unconverted: AttributeError on a Cell (no `_modules`). Such a file is converted now (converter.py), its
  reads renamed `_cells` as in torch files, and a store `m._modules[name] = layer` is
  `_ms_compat.set_child(m, name, layer)`: a SequentialCell runs the list it keeps beside `_cells` (cell_list),
  so a store into `_cells` alone ran the old layer (AblationCAM's swapped layer, silently: a wrong heatmap).
- A NumPy integer (or integer array) used as a tensor index where the converter cannot see its type (an
  attribute: AblationLayer's `output[i, self.indices[i]] = ...`; a value handed in: ClassifierOutputTarget's
  indexing the output with the class it keeps, np.argmax's result) raised MindSpore's IndexError. The helper's
  ms.Tensor indexing reads them as torch does (templates/_ms_compat.py `_numpy_index`; names the converter
  knows hold NumPy values keep `_ms_compat.host_index`)."""
import numpy as np
import pytest

import mindspore as ms

from tests.parity.harness import load_converted, load_torch

HOOKED = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 3)
        self.head = nn.Linear(3, 2)

    def forward(self, x):
        return self.head(torch.relu(self.body(x)))


class Saliency:
    """the gradient reaching a layer's output, read through a tensor hook registered in a forward hook"""
    def __init__(self, model, layer, use_grads=True):
        self.model, self.use_grads, self.grads = model, use_grads, []
        hooked = layer
        hooked.register_forward_hook(self.keep)

    def keep(self, module, inputs, output):
        output.register_hook(lambda g: self.grads.append(g))

    def __call__(self, x, cls):
        self.grads = []
        out = self.model(x)
        if self.use_grads:
            score = sum([o[c] for c, o in zip(cls, out)])
            score.backward(retain_graph=True)
        return self.grads


class NumpyLayer:
    """a program's own class with a backward method (no tensor): called as written"""
    def backward(self, dout):
        return dout * 2


def saliency(x):
    torch.manual_seed(0)
    net = Net()
    return Saliency(net, net.body)(x, [0, 1])[0]


def own_backward(flag):
    layer, out = NumpyLayer(), None
    if flag:
        out = layer.backward(3.0)
    return out
'''


@pytest.mark.parametrize("graph", [False, True])
def test_nested_backward_outside_a_step_raises_naming_its_line(graph):
    """torch computes the hooked gradient; the conversion stops with MigrationError at the backward()'s line
    (not MindSpore's AttributeError, not an empty list of gradients); a non-tensor's backward still runs."""
    x = np.arange(8, dtype=np.float32).reshape(2, 4) / 8
    import torch
    t = load_torch(HOOKED)
    want = t["saliency"](torch.tensor(x))
    assert want.shape == (2, 3)
    mod, code, sites = load_converted(HOOKED, pynative=True)
    line = next(i for i, text in enumerate(HOOKED.splitlines(), 1) if "score.backward(retain_graph=True)" in text)
    assert any(s.api == "Tensor.backward" and s.status == "todo" and s.line == line for s in sites), sites
    ms.set_context(mode=ms.GRAPH_MODE if graph else ms.PYNATIVE_MODE)
    try:
        with pytest.raises(Exception) as err:
            mod.saliency(ms.Tensor(x))
        assert type(err.value).__name__ == "MigrationError", err.value
        assert f"Tensor.backward at __main__:{line} was not converted" in str(err.value), str(err.value)
        assert mod.own_backward(True) == t["own_backward"](True) == 6.0
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


WALKER = '''
def swap_child(model, old, new):
    """the first child that is `old`, anywhere below model, replaced by `new` (by name, in its parent)"""
    for name, child in model._modules.items():
        if child is old:
            model._modules[name] = new
            return True
        if swap_child(child, old, new):
            return True
    return False


def count_children(model):
    return sum(1 + count_children(child) for child in model._modules.values())
'''

SWAPPED = '''
import sys
import numpy as np
import torch
import torch.nn as nn
from walker import swap_child, count_children


class Halve(nn.Module):
    def forward(self, x):
        return x * 0.5


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
        self.last = nn.Tanh()

    def forward(self, x):
        return self.last(self.blocks(x))


torch.manual_seed(0)
net = Net()
x = torch.linspace(-1, 1, 8).reshape(2, 4)
with torch.no_grad():
    for layer in (net.blocks[0], net.blocks[2]):
        layer.weight.copy_(torch.linspace(-0.7, 0.9, layer.weight.numel()).reshape(layer.weight.shape))
        layer.bias.copy_(torch.linspace(-0.2, 0.3, layer.bias.numel()))
    before = net(x)
    assert swap_child(net, net.blocks[1], Halve())
    assert swap_child(net, net.last, Halve())
    after = net(x)
print("RESULT", count_children(net), np.asarray(before).round(6).tolist(), np.asarray(after).round(6).tolist())
'''


def _run(path, mode=None):
    import subprocess
    import sys
    import os
    src = path.read_text()
    if mode is not None:
        src = src.replace("import sys\\n", f"import sys\\nimport mindspore\\nmindspore.set_context(mode=mindspore.{mode})\\n", 1)
        path.write_text(src)
    env = dict(os.environ, PYTHONPATH=str(path.parent))
    p = subprocess.run([sys.executable, str(path)], cwd=path.parent, capture_output=True, text=True, env=env,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return next(line for line in p.stdout.splitlines() if line.startswith("RESULT"))


@pytest.mark.parametrize("mode", ["PYNATIVE_MODE", "GRAPH_MODE"])
def test_child_swapped_by_name_runs_in_a_sequential(tmp_path, mode):
    """A helper file that names no torch walks `model._modules` and swaps children by name (pytorch-grad-cam's
    utils/find_layers.py): it was left unconverted (AttributeError on a Cell: no `_modules`); converted, the
    store must reach what a SequentialCell runs (its cell_list), else the old ReLU would still run."""
    from msmigrate.converter import convert_tree
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "walker.py").write_text(WALKER.lstrip())
    (src / "main.py").write_text(SWAPPED.lstrip())
    want = _run(src / "main.py")
    convert_tree(src, out)
    assert "set_child" in (out / "walker.py").read_text()
    got = _run(out / "main.py", mode)
    assert got == want, (got, want)


NUMPY_INDEXES = '''
import numpy as np
import torch


class Chosen:
    """indexes kept on an object and handed in: their NumPy types are known only when the program runs"""
    def __init__(self, category):
        self.category = category
        self.indices = None

    def pick(self, out):
        return out[:, self.category]

    def lower(self, out):
        for i in range(out.shape[0]):
            out[i, self.indices[i]] = out.min() - 1.0
        return out


def fn(x):
    chosen = Chosen(np.argmax(x.detach().numpy()[0]))
    chosen.indices = np.array([2, 0], dtype=np.int32)
    return chosen.pick(x), chosen.lower(x.clone()), x[:, chosen.indices]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_numpy_integer_and_array_indexes_read_as_torch(graph):
    """torch reads a NumPy integer in an index as an int and a NumPy integer array as an index tensor
    (pytorch-grad-cam's AblationLayer `output[i, self.indices[i]] = ...`, ClassifierOutputTarget with
    np.argmax's class); MindSpore raised IndexError ('Unsupported Python object type ... numpy.int64')."""
    from tests.parity.harness import check_function
    x = (np.arange(12, dtype=np.float32).reshape(2, 6)[:, :3] * 0.37) % 1.3
    ms.set_context(mode=ms.GRAPH_MODE if graph else ms.PYNATIVE_MODE)
    try:
        check_function(NUMPY_INDEXES, [x], graph=False)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
