"""Python as real projects write it: containers nested the GPT-2 way, ParameterList/ParameterDict,
code that inspects the model by name and class (weight-decay groups), torch used as a value.

Each snippet is converted once; the converted modules run in ONE fresh interpreter where
`import torch` fails (tests/parity/idioms_driver.py), with weights and inputs from the torch
snippet run here; the values they return are compared with torch's below."""
from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("mindspore")

from msmigrate.converter import compat_source, convert_code  # noqa: E402
from msmigrate.registry import TODO  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

# ------------------------------------------------------------------------------ snippets
GPT_SRC = '''
import torch
import torch.nn as nn
from torch.nn import functional as F


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.ln_1 = nn.LayerNorm(c)
        self.attn = nn.ModuleDict(dict(c_attn=nn.Linear(c, c), c_proj=nn.Linear(c, c)))
        self.mlp = nn.Sequential(nn.Linear(c, 2 * c), nn.GELU(), nn.Linear(2 * c, c))

    def forward(self, x):
        x = x + self.attn.c_proj(F.relu(self.attn["c_attn"](self.ln_1(x))))
        return x + self.mlp(x)


class GPT(nn.Module):
    def __init__(self, vocab=11, block_size=8, c=4, n_layer=2):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab, c),
            wpe=nn.Embedding(block_size, c),
            drop=nn.Dropout(0.0),
            h=nn.ModuleList([Block(c) for _ in range(n_layer)]),
            ln_f=nn.LayerNorm(c),
        ))
        self.heads = nn.ModuleList([nn.ModuleDict({"out": nn.Linear(c, vocab, bias=False)}),
                                    nn.Sequential(nn.ModuleList([nn.Linear(c, c)]))])

    def forward(self, idx):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer["ln_f"](x)
        for name, layer in self.transformer.items():
            if name == "ln_f":
                x = layer(x)
        x = x + self.heads[1][0][0](x)
        return self.heads[0]["out"](x)

    def configure_optimizers(self, weight_decay, learning_rate):
        # the minGPT pattern, written anew: decay by module class and parameter name
        decay, no_decay = set(), set()
        whitelist = (torch.nn.Linear, )
        blacklist = (torch.nn.LayerNorm, torch.nn.Embedding)
        for mn, m in self.named_modules():
            for pn, p in m.named_parameters():
                fpn = f"{mn}.{pn}" if mn else pn
                if pn.endswith("bias"):
                    no_decay.add(fpn)
                elif pn.endswith("weight") and isinstance(m, whitelist):
                    decay.add(fpn)
                elif pn.endswith("weight") and isinstance(m, blacklist):
                    no_decay.add(fpn)
        param_dict = {pn: p for pn, p in self.named_parameters()}
        assert len(decay & no_decay) == 0, decay & no_decay
        assert len(param_dict.keys() - (decay | no_decay)) == 0, param_dict.keys() - (decay | no_decay)
        groups = [
            {"params": [param_dict[pn] for pn in sorted(decay)], "weight_decay": weight_decay},
            {"params": [param_dict[pn] for pn in sorted(no_decay)], "weight_decay": 0.0},
        ]
        return torch.optim.AdamW(groups, lr=learning_rate)


def make():
    return GPT()


def names(model):
    return [n for n, _ in model.named_parameters()], [n for n, _ in model.named_modules()]


def groups(model):
    opt = model.configure_optimizers(0.1, 1e-3)
    return [[p for p in g["params"]] for g in opt.param_groups]
'''

PARAMS_SRC = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.scales = nn.ParameterList([nn.Parameter(torch.ones(3) * (i + 1)) for i in range(2)])
        self.scales.append(nn.Parameter(torch.full((3,), 0.5)))
        self.table = nn.ParameterDict({"a": nn.Parameter(torch.ones(3)), "b": nn.Parameter(torch.zeros(3))})
        self.table["c"] = nn.Parameter(torch.full((3,), 2.0))
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        y = self.fc(x) * self.scales[0] + self.scales[-1]
        for s in self.scales:
            y = y * s
        for i, s in enumerate(self.scales):
            y = y + s * i
        y = y + self.table["a"] * self.table["c"]
        for k, v in self.table.items():
            y = y + v
        for v in self.table.values():
            y = y - v * 0.5
        return y * len(self.scales) + len(self.table)


def make():
    return Net()


def info(m):
    return ([n for n, _ in m.named_parameters()], len(m.scales), len(m.table), list(m.table.keys()),
            [tuple(p.shape) for p in m.scales], "b" in m.table, "z" in m.table)


def train(m, x, steps):
    opt = torch.optim.SGD(m.parameters(), lr=0.01)
    for _ in range(steps):
        opt.zero_grad()
        loss = (m(x) ** 2).mean()
        loss.backward()
        opt.step()
    return loss
'''

INSPECT_SRC = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(7, 4)
        self.conv = nn.Conv2d(3, 4, 3, bias=False)
        self.bn = nn.BatchNorm2d(4)
        self.bn3 = nn.BatchNorm3d(2)
        self.frozen_bn = nn.BatchNorm1d(4, affine=False)
        self.norm = nn.LayerNorm(4)
        self.gn = nn.GroupNorm(2, 4)
        self.act = nn.PReLU()
        self.head = nn.Linear(4, 2)
        self.register_buffer("mask", torch.ones(4))
        self.gain = nn.Parameter(torch.ones(1))


def make():
    return Net()


def names(model):
    return [n for n, _ in model.named_parameters()]


def module_names(model):
    return [n for n, _ in model.named_modules()]


def count(model):
    return sum(p.numel() for p in model.parameters()), len(list(model.parameters())), \\
        tuple(next(model.parameters()).shape)


def timm_groups(model, weight_decay=1e-5):
    # timm's rule, written anew: 1-d parameters and biases are not decayed
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        if param.dim() < 2 or name.endswith(".bias"):
            no_decay.append(param)
        else:
            decay.append(param)
    return [{"params": no_decay, "weight_decay": 0.0}, {"params": decay, "weight_decay": weight_decay}]


def hf_groups(model):
    # the Hugging Face rule, written anew: no decay for norm layers and biases, found by class and name
    norm_layers = [nn.LayerNorm, nn.BatchNorm2d, nn.GroupNorm]

    def parameter_names(module):
        out = []
        for child_name, child in module.named_children():
            out += [f"{child_name}.{n}" for n in parameter_names(child)
                    if not isinstance(child, tuple(norm_layers))]
        out += [n for n, _ in module.named_parameters(recurse=False)]
        return out

    decay = [n for n in parameter_names(model) if "bias" not in n]
    groups = [
        {"params": [p for n, p in model.named_parameters() if n in decay], "weight_decay": 0.1},
        {"params": [p for n, p in model.named_parameters() if n not in decay], "weight_decay": 0.0},
    ]
    opt = torch.optim.AdamW(groups, lr=1e-3)
    return [g["params"] for g in opt.param_groups]


def kinds(model):
    linear = nn.Linear
    norms = (nn.LayerNorm, nn.BatchNorm2d)
    return [isinstance(model.head, linear), isinstance(model.norm, norms), isinstance(model.bn, norms),
            isinstance(model.conv, linear), issubclass(type(model.head), linear), isinstance(model.act, nn.ReLU)]
'''

SNIPPETS = {"gpt": GPT_SRC, "params": PARAMS_SRC, "inspect": INSPECT_SRC}


def _signature(params):
    """Which parameters a group holds, by value (the same tensors in torch and MindSpore after the
    weights were copied): a sorted list of (shape, rounded sum, rounded sum of squares)."""
    out = []
    for p in params:
        a = p.detach().numpy() if hasattr(p, "detach") else p.asnumpy()
        out.append((tuple(a.shape), round(float(a.sum()), 4), round(float((a * a).sum()), 4)))
    return sorted(out)


# ------------------------------------------------------------------------------ running both sides
@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """Convert every snippet, run the torch side here, the converted side in one torch-free process."""
    work = tmp_path_factory.mktemp("idioms")
    (work / "_ms_compat.py").write_text(compat_source(), encoding="utf-8")
    sites = {}
    for name, src in SNIPPETS.items():
        code, found, _ = convert_code(src)
        (work / f"{name}_ms.py").write_text(code, encoding="utf-8")
        sites[name] = found
    torch_side = _torch_side()
    states = {k: v for k, v in torch_side.pop("states").items()}
    with open(work / "inputs.pkl", "wb") as f:
        pickle.dump({"states": states, "inputs": torch_side["inputs"]}, f)
    proc = subprocess.run([sys.executable, str(HERE / "idioms_driver.py"), str(work), str(ROOT)],
                          capture_output=True, text=True, timeout=600, cwd=work)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    with open(work / "results.pkl", "rb") as f:
        ms_side = pickle.load(f)
    return {"sites": sites, "torch": torch_side, "ms": ms_side, "work": work}


def _load(src):
    ns: dict = {}
    exec(compile(src, "<torch snippet>", "exec"), ns)
    return ns


def _torch_side():
    out = {"states": {}, "inputs": {}}
    rng = np.random.default_rng(0)

    torch.manual_seed(0)
    g = _load(GPT_SRC)
    model = g["make"]()
    out["states"]["gpt"] = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    idx = rng.integers(0, 11, size=(2, 5)).astype(np.int64)
    out["inputs"]["gpt"] = idx
    out["gpt_logits"] = model(torch.from_numpy(idx)).detach().numpy()
    out["gpt_names"] = g["names"](model)
    out["gpt_groups"] = [_signature(grp) for grp in g["groups"](model)]

    torch.manual_seed(0)
    p = _load(PARAMS_SRC)
    model = p["make"]()
    out["states"]["params"] = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    x = rng.standard_normal((2, 3)).astype(np.float32)
    out["inputs"]["params"] = x
    out["params_out"] = model(torch.from_numpy(x)).detach().numpy()
    out["params_info"] = p["info"](model)
    model.zero_grad()
    (model(torch.from_numpy(x)) ** 2).mean().backward()
    out["params_grads"] = {n: q.grad.numpy().copy() for n, q in model.named_parameters()}
    loss = p["train"](model, torch.from_numpy(x), 3)
    out["params_loss"] = float(loss.detach())
    out["params_trained"] = {n: q.detach().numpy().copy() for n, q in model.named_parameters()}

    torch.manual_seed(0)
    i = _load(INSPECT_SRC)
    model = i["make"]()
    with torch.no_grad():   # distinct values everywhere, so that group signatures tell parameters apart
        for k, q in enumerate(model.parameters()):
            q.copy_(torch.from_numpy(rng.standard_normal(tuple(q.shape)).astype(np.float32)))
        for name, b in model.named_buffers():
            if b.is_floating_point():
                b.copy_(torch.from_numpy(rng.uniform(0.5, 1.5, tuple(b.shape)).astype(np.float32)))
    out["states"]["inspect"] = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    out["inspect_names"] = i["names"](model)
    out["inspect_modules"] = i["module_names"](model)
    out["inspect_count"] = i["count"](model)
    out["inspect_timm"] = [_signature(grp["params"]) for grp in i["timm_groups"](model)]
    out["inspect_hf"] = [_signature(grp) for grp in i["hf_groups"](model)]
    out["inspect_kinds"] = i["kinds"](model)
    return out


def _no_todo(sites):
    todos = [(s.api, s.note) for s in sites if s.status == TODO]
    assert not todos, todos


# ------------------------------------------------------------------------------ 1. nested containers
def test_gpt_layout(run):
    """nn.ModuleDict holding a ModuleList/Sequential/ModuleDict (GPT-2's transformer.h): converts, runs
    in PYNATIVE and GRAPH mode with torch's values, parameter names stay torch's for the checkpoint."""
    t, m = run["torch"], run["ms"]
    _no_todo(run["sites"]["gpt"])
    code = (run["work"] / "gpt_ms.py").read_text()
    assert "nn.CellDict" not in code and "_ms_compat.ModuleDict(dict(" in code, code
    np.testing.assert_allclose(m["gpt_logits_pynative"], t["gpt_logits"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(m["gpt_logits_graph"], t["gpt_logits"], rtol=1e-5, atol=1e-5)
    # MindSpore's own parameter names follow torch's paths (renamed leaves aside): checkpoints map
    assert "transformer.h.0.attn.c_attn.weight" in m["gpt_ms_param_names"]
    assert "transformer.h.1.mlp.2.bias" in m["gpt_ms_param_names"]
    assert "heads.1.0.0.weight" in m["gpt_ms_param_names"]
    assert m["gpt_load_report_ok"]


# ------------------------------------------------------------------------------ 3. inspection
def test_named_parameters_and_modules_are_torchs(run):
    t, m = run["torch"], run["ms"]
    assert tuple(m["gpt_names"]) == tuple(t["gpt_names"])
    assert m["inspect_names"] == t["inspect_names"]
    assert m["inspect_modules"] == t["inspect_modules"]
    assert tuple(m["inspect_count"]) == tuple(t["inspect_count"])


def test_weight_decay_groups_match_torch(run):
    """minGPT's configure_optimizers (class + name), timm's (dim < 2, .bias) and Hugging Face's
    (norm classes via named_children, "bias" in name): the same parameters in each group."""
    t, m = run["torch"], run["ms"]
    _no_todo(run["sites"]["inspect"])
    assert m["gpt_groups"] == t["gpt_groups"]
    assert [len(g) for g in t["gpt_groups"]] == [len(g) for g in m["gpt_groups"]] and all(t["gpt_groups"])
    assert m["inspect_timm"] == t["inspect_timm"]
    assert m["inspect_hf"] == t["inspect_hf"]
    assert all(t["inspect_hf"]) and all(t["inspect_timm"])


def test_isinstance_against_torch_classes(run):
    t, m = run["torch"], run["ms"]
    assert t["inspect_kinds"] == [True, True, True, False, True, False]
    assert m["inspect_kinds"] == t["inspect_kinds"]


# ------------------------------------------------------------------------------ 2. parameter containers
def test_parameter_containers(run):
    t, m = run["torch"], run["ms"]
    _no_todo(run["sites"]["params"])
    np.testing.assert_allclose(m["params_out_pynative"], t["params_out"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(m["params_out_graph"], t["params_out"], rtol=1e-5, atol=1e-5)
    info = m["params_info"]
    assert list(info[0]) == t["params_info"][0]   # scales.0 .. scales.2, table.a .. table.c: torch's names
    assert tuple(info[1:4]) == (3, 3, ["a", "b", "c"]) == tuple(t["params_info"][1:4])
    assert [tuple(s) for s in info[4]] == t["params_info"][4] and info[5:] == t["params_info"][5:]
    assert m["params_ms_param_names"] == sorted(t["params_info"][0])
    for mode in ("pynative", "graph"):
        grads = m[f"params_grads_{mode}"]
        assert set(grads) == set(t["params_grads"])
        for name, g in t["params_grads"].items():
            assert np.abs(g).max() > 0, name
            np.testing.assert_allclose(grads[name], g, rtol=1e-4, atol=1e-5, err_msg=f"{mode} {name}")
    # a converted train step (GRAPH mode) moves every parameter as torch's SGD does
    assert abs(m["params_loss"] - t["params_loss"]) < 1e-4 * max(1.0, abs(t["params_loss"]))
    for name, v in t["params_trained"].items():
        np.testing.assert_allclose(m["params_trained"][name], v, rtol=1e-4, atol=1e-5, err_msg=name)


def test_adapter_classes_answer_for_what_direct_calls_build():
    """An adapter (a torch layer class used as a value) answers isinstance() for the class that a
    direct call of the torch layer converts to (the registry's target)."""
    import importlib.util

    import msmigrate.mappings  # noqa: F401  (fills the registry and the adapter table)
    from msmigrate import registry as R
    from msmigrate.transformer import _ADAPTERS

    import mindspore.nn as msnn

    spec = importlib.util.spec_from_loader("ms_compat_adapters", loader=None)
    compat = importlib.util.module_from_spec(spec)
    exec(compile(compat_source(), "_ms_compat.py", "exec"), compat.__dict__)
    checked = 0
    for torch_name, adapter in _ADAPTERS.items():
        target = R.lookup(torch_name).target
        cls = getattr(compat, adapter.split(".", 1)[1])
        if torch_name in ("torch.nn.Sequential", "torch.nn.ModuleDict") or "InstanceNorm" in torch_name:
            continue
        ms_class = getattr(msnn, target.rsplit(".", 1)[1])
        assert isinstance(cls, compat.TorchClass) and cls.ms_class is ms_class, torch_name
        assert issubclass(ms_class, cls), torch_name
        checked += 1
    assert checked >= 18
