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


class Tied(nn.Module):
    """nanoGPT-style weight tying through a ModuleDict entry."""

    def __init__(self):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(wte=nn.Embedding(11, 4)))
        self.lm_head = nn.Linear(4, 11, bias=False)
        self.transformer.wte.weight = self.lm_head.weight

    def forward(self, idx):
        return self.lm_head(self.transformer.wte(idx))

    def get_num_params(self):
        return ([n for n, _ in self.named_parameters()], self.transformer.wte.weight is self.lm_head.weight,
                sum(p.numel() for p in self.parameters()) - self.transformer.wte.weight.numel())


def make_tied():
    return Tied()


def tied_info(m):
    return m.get_num_params()


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


class Aliased(Net):
    def forward(self, x):
        scales = self.scales
        return x * scales[0]


def make_aliased():
    return Aliased()


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


def child_names(model):
    return ([n for n, _ in model.named_children()], [n for n, _ in model.bn3.named_children()],
            len(list(model.children())), len(list(model.modules())))


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

VALUES_SRC = '''
import torch
import torch.nn as nn
import torch.nn.functional as F

ACTS = ["relu", "silu", "gelu", "tanh", "sigmoid"]


class Net(nn.Module):
    def __init__(self, act="silu", layer_act="ReLU", norm="LayerNorm"):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act_layer = getattr(nn, layer_act)(inplace=False)
        self.fixed = getattr(nn, "Tanh")()
        self.norm = getattr(nn, norm)(4, eps=1e-5)
        self.act = getattr(F, act)

    def forward(self, x):
        y = self.act(self.fc(x))
        y = self.act_layer(y) + self.fixed(y)
        y = self.norm(y)
        if hasattr(F, "silu"):
            y = y + getattr(F, "silu")(y)
        if hasattr(F, "no_such_function"):
            y = y * 100.0
        return y


def make():
    return Net()


def names():
    public = [n for n in dir(F) if not n.startswith("_")]
    return (len(public), "relu" in public, hasattr(torch, "compile"), hasattr(nn, "Linear"),
            hasattr(F, "frobnicate"), [hasattr(F, a) for a in ACTS + ["nope"]], getattr(F, "nope", None) is None,
            getattr(nn, "NoSuchLayer", "default"), len(dir(nn)))


def apply_all(x):
    out = [getattr(F, a)(x) for a in ACTS]
    out.append(getattr(torch, "tanh")(x))
    out.append(getattr(F, "relu")(x, inplace=False))
    return out


@torch.no_grad()
def twice(x):
    return x * 2


@torch.no_grad
def thrice(x):
    return x * 3


class Evaluator:
    @torch.no_grad()
    def up(self, x):
        return x + 1

    @torch.inference_mode()
    def down(self, x):
        return x - 1

    @torch.no_grad
    def same(self, x):
        return x


def gradient_switches(x, train):
    ctx = torch.enable_grad if train else torch.no_grad
    with ctx():
        y = x * 5
    guard = torch.no_grad()
    with guard:
        y = y + 1
    deco = torch.inference_mode()
    return deco(double)(y)


def double(v):
    return v * 2


def dynamic(name):
    return getattr(torch, name)


def default_dtype_zeros():
    f = torch.get_default_dtype
    return torch.zeros(2, dtype=f()).numpy().dtype.name
'''

SNIPPETS = {"gpt": GPT_SRC, "params": PARAMS_SRC, "inspect": INSPECT_SRC, "values": VALUES_SRC}


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
    tied = g["make_tied"]()
    out["states"]["tied"] = {k: v.detach().numpy().copy() for k, v in tied.state_dict().items()}
    out["tied_logits"] = tied(torch.from_numpy(idx)).detach().numpy()
    out["tied_info"] = g["tied_info"](tied)

    torch.manual_seed(0)
    p = _load(PARAMS_SRC)
    model = p["make"]()
    out["states"]["params"] = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    x = rng.standard_normal((2, 3)).astype(np.float32)
    out["inputs"]["params"] = x
    out["params_out"] = model(torch.from_numpy(x)).detach().numpy()
    out["params_info"] = p["info"](model)
    out["params_aliased"] = p["make_aliased"]()(torch.from_numpy(x)).detach().numpy()
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
    out["inspect_children"] = i["child_names"](model)
    out["inspect_count"] = i["count"](model)
    out["inspect_timm"] = [_signature(grp["params"]) for grp in i["timm_groups"](model)]
    out["inspect_hf"] = [_signature(grp) for grp in i["hf_groups"](model)]
    out["inspect_kinds"] = i["kinds"](model)
    _values_torch(out, rng)
    return out


def _values_torch(out, rng):
    v = _load(VALUES_SRC)
    torch.manual_seed(0)
    model = v["make"]()
    out["states"]["values"] = {k: t.detach().numpy().copy() for k, t in model.state_dict().items()}
    x = rng.standard_normal((2, 4)).astype(np.float32)
    out["inputs"]["values"] = x
    tx = torch.from_numpy(x)
    out["values_out"] = model(tx).detach().numpy()
    out["values_names"] = v["names"]()
    out["values_apply"] = [a.numpy() for a in v["apply_all"](tx)]
    ev = v["Evaluator"]()
    out["values_decorated"] = [a.numpy() for a in (v["twice"](tx), v["thrice"](tx), ev.up(tx), ev.down(tx),
                                                    ev.same(tx), v["gradient_switches"](tx, True),
                                                    v["gradient_switches"](tx, False))]
    out["values_dynamic"] = [v["dynamic"]("tanh")(tx).numpy(), v["dynamic"]("float32") is torch.float32]
    out["values_dtype"] = v["default_dtype_zeros"]()


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
    # weight tying through a ModuleDict entry (self.transformer.wte.weight = self.lm_head.weight): tied in
    # MindSpore too (the embedding's table is the head's weight), torch's names and counts
    assert tuple(m["tied_info"]) == tuple(t["tied_info"]) and t["tied_info"][1] is True
    for mode in ("pynative", "graph"):
        np.testing.assert_allclose(m[f"tied_logits_{mode}"], t["tied_logits"], rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------------------ 3. inspection
def test_named_parameters_and_modules_are_torchs(run):
    t, m = run["torch"], run["ms"]
    assert tuple(m["gpt_names"]) == tuple(t["gpt_names"])
    assert m["inspect_names"] == t["inspect_names"]
    assert m["inspect_modules"] == t["inspect_modules"]
    assert tuple(m["inspect_children"]) == tuple(t["inspect_children"])
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
    # read through a local alias (not rewritten to .params): right in PYNATIVE, refused in GRAPH mode,
    # where the Parameters would be constants (zero gradients)
    np.testing.assert_allclose(m["params_aliased_pynative"], t["params_aliased"], rtol=1e-6)
    assert m["params_aliased_graph"][0] == "MigrationError" and ".params" in m["params_aliased_graph"][1]
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
        if target.startswith("_ms_compat."):   # a helper Cell (nn.Mish: a float64 input in float64)
            ms_class = getattr(compat, target.rsplit(".", 1)[1]).ms_class
            assert issubclass(ms_class, msnn.Cell) and ms_class.__name__ == target.rsplit(".", 1)[1], torch_name
        else:
            ms_class = getattr(msnn, target.rsplit(".", 1)[1])
        assert isinstance(cls, compat.TorchClass) and cls.ms_class is ms_class, torch_name
        assert issubclass(ms_class, cls), torch_name
        checked += 1
    assert checked >= 18


# ------------------------------------------------------------------------------ 4./5. torch as a value
def test_torch_as_value(run):
    """getattr(nn, name)() / getattr(F, name) (literal and run-time names), hasattr/dir with torch's
    answers, @torch.no_grad()/@torch.no_grad/@torch.inference_mode() and gradient switches as values."""
    t, m = run["torch"], run["ms"]
    _no_todo(run["sites"]["values"])
    code = (run["work"] / "values_ms.py").read_text()
    assert "hasattr" not in code.split("def names")[0], code   # literal hasattr resolved while converting
    np.testing.assert_allclose(m["values_out_pynative"], t["values_out"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(m["values_out_graph"], t["values_out"], rtol=1e-5, atol=1e-5)
    assert tuple(m["values_names"]) == tuple(t["values_names"])
    assert t["values_names"][:5] == (160, True, True, True, False)
    for got, want in zip(m["values_apply"], t["values_apply"]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert len(m["values_apply"]) == len(t["values_apply"])
    for got, want in zip(m["values_decorated"], t["values_decorated"]):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(m["values_dynamic"][0], t["values_dynamic"][0], rtol=1e-6, atol=1e-6)
    assert m["values_dynamic"][1] is True and t["values_dynamic"][1] is True


def test_dynamic_name_without_conversion_raises_naming_the_site(run):
    """A run-time name torch has but msmigrate cannot convert one-to-one raises MigrationError naming
    the original file and line; a name torch lacks raises AttributeError, as on torch."""
    m = run["ms"]
    kind, message = m["values_unconvertible"]
    line = VALUES_SRC.splitlines().index("    return getattr(torch, name)") + 1
    assert kind == "MigrationError" and "torch.stft" in message and f"__main__:{line}" in message, message
    assert m["values_missing"][0] == "AttributeError"
    with pytest.raises(AttributeError):
        _load(VALUES_SRC)["dynamic"]("frobnicate")


def test_emitted_module_names_are_imported(run):
    """Code emitted for torch.get_default_dtype used as a value refers to `ms`: the file imports it (it
    ran above without a NameError, with torch's answer)."""
    t, m = run["torch"], run["ms"]
    assert m["values_dtype"] == t["values_dtype"] == "float32"
    from msmigrate.module_refs import unbound_roots
    import libcst as cst
    assert unbound_roots(cst.parse_module("import mindspore as ms\nx = ms.float32\ny = ops.relu\n")) == {"ops"}
    assert unbound_roots(cst.parse_module("from m import *\ny = ops.relu\n")) == set()
    code, _, _ = convert_code("import torch\n\ndef f():\n    return torch.get_default_dtype\n")
    assert "import mindspore as ms" in code and "lambda: ms.float32" in code, code


def test_runtime_table_targets_refuse_what_torch_alone_takes():
    """getattr(F, name) with a run-time name returns the registry's target itself; where the record drops
    trailing arguments (inplace=) or refuses some (out=), the target must not take them, so passing them
    fails loudly (TypeError) instead of landing in another parameter."""
    import importlib
    import inspect as pyinspect

    from msmigrate import registry as R
    from msmigrate.torch_namespace import NAMESPACES, one_to_one

    checked = 0
    for ns in NAMESPACES:
        for name, entry in one_to_one(ns).items():
            m = R.lookup(f"{ns}.{name}")
            target = entry if isinstance(entry, str) else entry[0]
            extra = tuple(m.drop) + tuple(m.unsupported)
            if not extra or not target.startswith("mindspore."):
                continue
            assert isinstance(entry, tuple) == bool(set(m.drop) & set(m.args)), entry
            module, _, attr = target.rpartition(".")
            fn = getattr(importlib.import_module(module), attr)
            params = list(pyinspect.signature(fn).parameters.values())
            if isinstance(entry, tuple):
                continue   # called through _ms_compat.TorchPositions: only the first positions reach it
            if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
                # MindSpore's generated ops (`lt(*args, **kwargs)`) check their arguments when called
                # (ops.lt(x, y, out=z) raises TypeError, below)
                checked += 1
                continue
            assert not set(extra) & {p.name for p in params}, (target, extra)
            checked += 1
    assert checked >= 10
    import mindspore as ms
    x = ms.Tensor(np.ones(2, np.float32))
    with pytest.raises(TypeError):
        ms.ops.lt(x, x, out=x)
