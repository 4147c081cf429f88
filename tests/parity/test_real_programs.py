"""Parity of idioms found in real torch programs (GAN / CLIP style code): Module.apply init
functions, x.type(TensorType), optimizers over chained parameters. The converted program
runs in a subprocess where torch cannot be imported; its results are compared with torch's."""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from msmigrate.converter import compat_source  # noqa: E402

from .harness import convert_snippet, load_torch  # noqa: E402

SRC = '''
import itertools
import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable

seen = []


def weights_init(m):
    classname = m.__class__.__name__
    seen.append(classname)
    if classname.find("Conv") != -1:
        torch.nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif classname.find("BatchNorm2d") != -1:
        torch.nn.init.normal_(m.weight.data, 1.0, 0.02)
        torch.nn.init.constant_(m.bias.data, 0.0)
    elif classname.find("Linear") != -1:
        m.weight.data.normal_(0, 0.02)
        m.bias.data.fill_(0)


def init_checks(m):
    if isinstance(m, nn.Linear):
        nn.init.constant_(m.weight, 0.5)
        m.bias.data.fill_(1)
    elif type(m) == nn.Conv2d:
        m.weight.data.fill_(0.25)
    elif isinstance(m, nn.Embedding):
        m.weight.data.fill_(0.125)
    elif isinstance(m, nn.LayerNorm):
        nn.init.constant_(m.weight, 2.0)
        m.bias.data.zero_()
    elif isinstance(m, nn.BatchNorm2d):
        m.weight.data.fill_(3.0)


cuda = False
Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
LongTensor = torch.cuda.LongTensor if cuda else torch.LongTensor


def types(imgs, labels):
    a = Variable(imgs.type(Tensor))
    b = Variable(Tensor(np.random.RandomState(0).normal(0, 1, (2, 3))))
    c = LongTensor(labels)
    d = imgs.type(torch.float16)
    e = imgs.type("torch.LongTensor")
    f = a.type(torch.DoubleTensor)
    return [a, b, c, d, e, f], [a.type(), c.type(), imgs.type(), e.type()]


def train(x, w1, w2, steps=3):
    enc = nn.Sequential(nn.Linear(3, 4))
    dec = nn.Sequential(nn.Linear(4, 3))
    with torch.no_grad():
        enc[0].weight.copy_(torch.from_numpy(w1))
        dec[0].weight.copy_(torch.from_numpy(w2))
        enc[0].bias.fill_(0.1)
        dec[0].bias.fill_(-0.2)
    opt = torch.optim.Adam(itertools.chain(enc.parameters(), dec.parameters()), lr=0.01)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((dec(torch.tanh(enc(x))) - x) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().numpy() for p in itertools.chain(enc.parameters(), dec.parameters())]


def inplace():
    m = torch.empty(3, 3)
    m.fill_(float("-inf"))
    m.triu_(1)
    x = torch.tensor([7, -7, 5, 9])
    x.floor_divide_(2)
    y = torch.tensor([7.0, -7.0, 5.5])
    y.remainder_(3)
    f = torch.tensor([7.0, -7.0, 5.5])
    f.fmod_(3)
    z = torch.tensor([0, 3, -4], dtype=torch.int32)
    u = torch.tensor([0, 3, 250], dtype=torch.uint8)
    return [m, x, y, f, ~z, ~u, ~(z > 0), ~torch.tensor([True, False])]


def by_type():
    net = nn.Sequential(nn.Conv2d(1, 2, 3), nn.Linear(3, 3), nn.ReLU())
    kinds = []
    for m in net.modules():
        kinds.append([type(m) == nn.Conv2d, type(m) == nn.Linear, type(m) in (nn.Linear, nn.ReLU),
                      type(m) != nn.Conv2d])
    return kinds


def dcgan():
    net = nn.Sequential(nn.Conv2d(3, 64, 3), nn.BatchNorm2d(64), nn.ReLU(), nn.Flatten(), nn.Linear(64, 64))
    net.apply(weights_init)
    return {n: p.detach().numpy() for n, p in net.named_parameters()}, seen


def checks():
    net = nn.Sequential(nn.Embedding(5, 4), nn.LayerNorm(4), nn.Linear(4, 3))
    conv = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2))
    assert net.apply(init_checks) is net
    conv.apply(init_checks)
    out = {"net." + n: p.detach().numpy() for n, p in net.named_parameters()}
    out.update({"conv." + n: p.detach().numpy() for n, p in conv.named_parameters()})
    return out
'''

RUNNER = '''
import json, sys
sys.modules["torch"] = None          # the converted program must not need torch
import numpy as np
import mindspore as ms
import prog
params, seen = prog.dcgan()
checks = prog.checks()
out = {"seen": seen,
       "dcgan": {n: [float(v.mean()), float(v.std())] for n, v in ((k, np.asarray(p.asnumpy() if hasattr(p, "asnumpy") else p)) for k, p in params.items())},
       "checks": {n: np.asarray(p.asnumpy() if hasattr(p, "asnumpy") else p).tolist() for n, p in checks.items()}}
imgs = ms.Tensor(np.arange(6, dtype=np.float64).reshape(2, 3) * 1.5)
tensors, names = prog.types(imgs, [3, 1, 2])
out["types"] = {"names": names, "values": [t.asnumpy().tolist() for t in tensors],
                "dtypes": [str(t.asnumpy().dtype) for t in tensors]}
rng = np.random.default_rng(0)
X, W1, W2 = (rng.standard_normal(s).astype(np.float32) for s in ((5, 3), (4, 3), (3, 4)))
losses, trained = prog.train(ms.Tensor(X), W1, W2)
out["train"] = {"losses": losses, "params": [p.tolist() for p in trained]}
out["inplace"] = [[str(t.asnumpy().dtype), t.asnumpy().tolist()] for t in prog.inplace()]
out["by_type"] = prog.by_type()
print("RESULT" + json.dumps(out))
'''


@pytest.fixture(scope="module")
def results():
    code, sites = convert_snippet(SRC)
    tmp = Path(tempfile.mkdtemp(prefix="msmigrate-real-"))
    (tmp / "_ms_compat.py").write_text(compat_source(), encoding="utf-8")
    (tmp / "prog.py").write_text(code, encoding="utf-8")
    (tmp / "runner.py").write_text(RUNNER, encoding="utf-8")
    proc = subprocess.run([sys.executable, str(tmp / "runner.py")], cwd=tmp, capture_output=True, text=True,
                          timeout=600)
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT")]
    assert line, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(line[0][len("RESULT"):]), code


def test_module_apply_init(results):
    ms_out, code = results
    assert "module_apply" in code
    torch.manual_seed(0)
    ns = load_torch(SRC)
    params, seen = ns["dcgan"]()
    # fn sees the same modules, in the same order, under torch's class names
    assert ms_out["seen"] == seen
    assert set(ms_out["dcgan"]) == set(params)
    for name, value in params.items():
        if name == "0.bias":    # not initialised by fn: each framework's default init
            continue
        mean, std = ms_out["dcgan"][name]
        # two independent samples of n draws: their means differ by sigma*sqrt(2/n) and their standard
        # deviations by about sigma/sqrt(n) (one standard error); allow 5 of them (BatchNorm's 64 weights
        # at sigma 0.02 give 0.0125 for the std, so a wrong std such as the default 1.0 still fails)
        n, sigma = value.size, float(value.std())
        assert abs(mean - float(value.mean())) <= 5 * sigma * np.sqrt(2 / n) + 1e-7, (name, mean, value.mean())
        assert abs(std - sigma) <= 5 * sigma / np.sqrt(n) + 1e-7, (name, std, sigma)
    # deterministic inits through isinstance / type(m) == checks: identical values
    expected = ns["checks"]()
    assert set(ms_out["checks"]) == set(expected)
    for name, value in expected.items():
        if name == "conv.0.bias":   # not initialised by fn: random in both
            continue
        np.testing.assert_array_equal(np.asarray(ms_out["checks"][name], np.float32), value, err_msg=name)


import torch  # noqa: E402


def test_tensor_type(results):
    ms_out, code = results
    assert "tensor_type(" in code
    ns = load_torch(SRC)
    imgs = torch.from_numpy(np.arange(6, dtype=np.float64).reshape(2, 3) * 1.5)
    tensors, names = ns["types"](imgs, [3, 1, 2])
    assert ms_out["types"]["names"] == names
    assert ms_out["types"]["dtypes"] == [str(t.numpy().dtype) for t in tensors]
    for got, want in zip(ms_out["types"]["values"], tensors):
        np.testing.assert_allclose(np.asarray(got, np.float64), want.numpy().astype(np.float64), rtol=1e-6)


def test_adam_over_chained_networks(results):
    """Two Sequential networks both name their parameters 0.weight / 0.bias: one optimizer over
    itertools.chain of both trains them as torch does (GRAPH-mode train step)."""
    ms_out, code = results
    ns = load_torch(SRC)
    rng = np.random.default_rng(0)
    X, W1, W2 = (rng.standard_normal(s).astype(np.float32) for s in ((5, 3), (4, 3), (3, 4)))
    losses, trained = ns["train"](torch.from_numpy(X), W1, W2)
    np.testing.assert_allclose(ms_out["train"]["losses"], losses, rtol=1e-5, atol=1e-6)
    assert len(ms_out["train"]["params"]) == len(trained) == 4
    for got, want in zip(ms_out["train"]["params"], trained):
        np.testing.assert_allclose(np.asarray(got, np.float32), want, rtol=1e-4, atol=1e-6)


def test_inplace_rebinds(results):
    """CLIP's causal mask (fill_ then triu_), floor_divide_ / remainder_ / fmod_ (MindSpore's own
    in-place forms leave the tensor unchanged on CPU), ~ on integer and bool tensors."""
    ms_out, code = results
    assert "_ms_compat.invert(" in code and "ops.remainder(" in code
    want = load_torch(SRC)["inplace"]()
    assert len(ms_out["inplace"]) == len(want)
    for (dtype, got), w in zip(ms_out["inplace"], want):
        assert dtype == str(w.numpy().dtype), (dtype, w)
        np.testing.assert_array_equal(np.asarray(got), w.numpy())


def test_type_equality_outside_apply(results):
    """`type(m) == nn.Conv2d` in a modules() loop: the adapter class compares equal to the MindSpore class."""
    ms_out, _ = results
    assert ms_out["by_type"] == load_torch(SRC)["by_type"]()
