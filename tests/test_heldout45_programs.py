"""Minimal reproductions of what bench/_rw_heldout45.py's programs (facebookresearch/mixup-cifar10,
uoguelph-mlrg/Cutout, Po-Hsun-Su/pytorch-ssim, davidtvs/pytorch-lr-finder) needed, each compared with torch in
PYNATIVE and GRAPH mode.

- `map(Variable, (a, b))`: torch's Variable passed as a value. Its record's target is `ops.stop_gradient` (the
  form the rule's calls write), and a target used as a value got the import of its module as written: an
  `import ops` beside `from mindspore import ops`, ModuleNotFoundError when the converted file is imported (the
  whole of mixup-cifar10's train.py). A target written with the converter's own `ops`/`nn` alias now renders
  through that alias."""
import numpy as np

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

VARIABLE_AS_VALUE = _FILL + '''
from torch.autograd import Variable
import torch.nn as nn

net = nn.Linear(3, 2)
fill(net, 4)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
batches = [(torch.linspace(-1, 1, 12).reshape(4, 3), torch.tensor([0, 1, 1, 0]))] * 2
for xs, ys in batches:
    xs, ys = map(Variable, (xs, ys))
    loss = nn.functional.cross_entropy(net(xs), ys)
    opt.zero_grad()
    loss.backward()
    opt.step()
weights = [p.detach() for p in net.parameters()]
'''


def test_variable_passed_as_a_value():
    for graph in (False, True):
        code, _ = program_weights_match_torch(VARIABLE_AS_VALUE, graph=graph)
        assert "import ops\n" not in code and "map(ops.stop_gradient" in code, code


def _run_tree(out, mode="PYNATIVE_MODE", modules=()):
    """stdout of the converted tree's main.py run in this process in `mode` (its mode line set to it), with the
    tree's own _ms_compat; the process's modules and mode given back after"""
    import contextlib
    import io
    import sys
    import types

    import mindspore as ms
    code = (out / "main.py").read_text().replace("mode=ms.GRAPH_MODE", f"mode=ms.{mode}")
    name = f"main45_{abs(hash(str(out)))}_{mode}"     # a module: MindSpore's graph parser reads its globals
    saved = {k: sys.modules.pop(k) for k in ("_ms_compat", *modules) if k in sys.modules}
    sys.path.insert(0, str(out))
    buf = io.StringIO()
    try:
        main = sys.modules[name] = types.ModuleType(name)
        main.__file__ = str(out / "main.py")
        with contextlib.redirect_stdout(buf):
            exec(compile(code, main.__file__, "exec"), main.__dict__)
    finally:
        sys.path.remove(str(out))
        for k in ("_ms_compat", name, *modules):
            sys.modules.pop(k, None)
        sys.modules.update(saved)
        ms.set_context(mode=ms.PYNATIVE_MODE)
    return buf.getvalue()


def _run_torch(src, module):
    """stdout of the torch tree's main.py run in this process"""
    import contextlib
    import io
    import runpy
    import sys

    sys.path.insert(0, str(src))
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            runpy.run_path(str(src / "main.py"), run_name="__main__")
    finally:
        sys.path.remove(str(src))
        sys.modules.pop(module, None)
    return buf.getvalue()


SHOP = _FILL + '''
import torch.nn as nn

net = nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.5), nn.Linear(4, 2))
fill(net, 5)
'''

USER = '''
import torch
import shop45 as shop

shop.net.train()
shop.net.eval()
print("OUT", float(shop.net(torch.linspace(-1, 1, 6).reshape(2, 3)).sum()))
'''


def test_method_of_a_network_held_by_another_module(tmp_path):
    """`shop.net.eval()` where net is a variable of a module of the project (mixup's train.py imported by a
    script that trains its `net`): the receiver was taken for an attribute of an imported library and the
    call kept as torch's (AttributeError: no train/eval on a Cell); it is now a receiver of unknown type, whose
    train()/eval() are Module's (set_train), as on a local of unknown type"""
    from msmigrate.converter import convert_tree
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "shop45.py").write_text(SHOP.lstrip())
    (src / "main.py").write_text(USER.lstrip())
    convert_tree(src, out)
    assert "shop.net.set_train(False)" in (out / "main.py").read_text()
    want = float(_run_torch(src, "shop45").split()[-1])
    for mode in ("PYNATIVE_MODE", "GRAPH_MODE"):
        got = float(_run_tree(out, mode, ("shop45",)).split("OUT")[-1].split()[0])
        assert np.isclose(got, want, rtol=1e-5, atol=1e-6), (mode, got, want)

DRAWS_BESIDE_WORKERS = _FILL + '''
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

np.random.seed(0)


class Rows(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return np.full(3, i / 8.0, np.float32), np.float32(i % 2)


net = nn.Linear(3, 1)
fill(net, 6)
opt = torch.optim.SGD(net.parameters(), lr=0.5)
loader = DataLoader(Rows(), batch_size=4, num_workers=2)
for _ in range(2):
    for xs, ys in loader:
        lam = np.random.beta(1.0, 1.0)
        loss = lam * ((net(xs).squeeze(1) - ys) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
weights = [p.detach() for p in net.parameters()]
'''


def test_worker_seed_leaves_numpy_stream_alone():
    """A DataLoader with workers drew each epoch's worker seed from NumPy's global stream, so a seeded
    program's own np.random draws between batches (mixup's lam) were other numbers than torch's, silently;
    the seed is drawn from MindSpore's default generator now, as torch draws it from its own"""
    for graph in (False, True):
        program_weights_match_torch(DRAWS_BESIDE_WORKERS, graph=graph)


NOISE_MODULE = '''
import numpy as np
import torch


def blend(x, y):
    lam = np.random.beta(1.0, 1.0)
    return lam * x + (1 - lam) * x.flip(0), lam
'''

NOISE_USER = _FILL + '''
import torch.nn as nn
import noise45 as noise

np.random.seed(0)
net = nn.Linear(3, 1)
fill(net, 7)
opt = torch.optim.SGD(net.parameters(), lr=0.5)
xs, ys = torch.linspace(-1, 1, 12).reshape(4, 3), torch.tensor([0.0, 1.0, 1.0, 0.0])
for _ in range(3):
    mixed, lam = noise.blend(xs, ys)
    loss = lam * ((net(mixed).squeeze(1) - ys) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("OUT", " ".join(str(float(v)) for p in net.parameters() for v in p.detach().reshape(-1)))
'''


def _outputs(text):
    return np.array([float(v) for v in text.split("OUT")[-1].split()])


def test_draw_of_another_module_stays_out_of_the_step(tmp_path):
    """`mixed, lam = recipe.mixup_data(x, y, ...)` in a script's training loop, mixup_data being a function of
    another module of the project that draws np.random.beta: the converter took it for part of the loss and
    compiled it into the step, where GRAPH mode drew lam once, at compile time, and reused it (silently other
    losses). A module function that calls NumPy is data for the step wherever it is called from now
    (ProjectIndex.imported_drawing_functions), as it was in its own module"""
    from msmigrate.converter import convert_tree
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "noise45.py").write_text(NOISE_MODULE.lstrip())
    (src / "main.py").write_text(NOISE_USER.lstrip())
    convert_tree(src, out)
    assert "GRAPH_MODE" in (out / "main.py").read_text()
    want = _outputs(_run_torch(src, "noise45"))
    for mode in ("GRAPH_MODE", "PYNATIVE_MODE"):
        got = _outputs(_run_tree(out, mode, ("noise45",)))
        assert np.allclose(got, want, rtol=1e-5, atol=1e-6), (mode, got, want)
