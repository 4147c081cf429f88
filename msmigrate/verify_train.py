"""``msmigrate verify --train N``: N optimizer steps in torch and in the converted MindSpore code.

The inference check (:mod:`msmigrate.verify`) proves the converted network computes the same
outputs; this one proves it *trains* the same, with the optimizer, schedule and loss as the
converter writes them:

1. a short torch training loop is generated for each optimizer/scheduler spec
   (:func:`torch_train_source`: ``torch.optim.<SPEC>(model.parameters(), ...)``, an optional
   ``lr_scheduler.<SPEC>(optimizer, ...)`` stepped once per optimizer step, ``F.cross_entropy`` or
   ``F.mse_loss``, ``loss.backward()``/``optimizer.step()``);
2. the torch worker builds the model, generates seeded numpy batches (inputs of the ``--input``
   shapes, targets for the loss), runs that loop from torch's initial weights and records the
   per-step losses, learning rates and final state_dict;
3. the parent converts the same loop with :func:`msmigrate.converter.convert_code` into a package
   next to the emitted ``_ms_compat.py`` (so the registry's optimizer, scheduler and loss mappings
   and the converter's train step — ``value_and_grad`` over ``optimizer.parameters`` and
   ``optimizer(grads)``, compiled by ``compile_step`` — are what runs);
4. the MindSpore worker (never imports torch) builds the converted net, loads torch's initial
   weights, runs the converted loop in PYNATIVE and GRAPH mode and compares per-step losses,
   learning rates and the final parameters (BatchNorm's moving statistics included).

Pass rule (like ``verify``): ``|d| <= rtol * max(1, |torch value|)`` for each loss and each
parameter tensor (``max|d| <= rtol * max(1, max|w_torch|)``); learning rates within ``rtol``
relative.  Exit codes: 0 pass, 1 fail, 2 usage errors (bad spec, torch side cannot train).

Two things cannot match between frameworks and are said so: Dropout masks (random streams differ;
``--eval-mode-dropout`` puts the layers in eval mode on both sides), and parameters whose exact
gradient is zero (a conv bias followed by BatchNorm): their gradient is float rounding noise, which
Adam/RMSprop/Adagrad scale to full-size steps.  The torch side finds those from the first step's
gradients (max|g| <= 1e-6 of the largest); a difference in them, or in the running mean of the
BatchNorm they feed, is reported as "not judged" instead of failing.

Nothing here imports torch or mindspore at import time.
"""
from __future__ import annotations

import ast
import copy
import importlib
import importlib.util
import json
import math
import os
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from .terminal import result_table, rich_console, spinner
from .verify import (DEFAULT_INT_HIGH, DEFAULT_RTOL, MODES, NPZ_FORMAT, InputSpec, VerifyUsageError,
                     _build, _check_top_level, _detail, _fmt, _import_roots, _jsonable, _normalize_inputs,
                     _normalize_modes, _one_line, _parse_spec, _run_worker, _TorchBlocker, _worker_result,
                     build_torch_model, compare_arrays, make_inputs, record_error, result_dict, run_worker_job,
                     reported, torch_record, unjson_floats, Verdict, from_known_fields, without_derived)

__all__ = ["TrainConfig", "StepDiff", "ParamDiff", "TrainModeResult", "TrainConfigResult",
           "TrainVerifyResult", "parse_optim_spec", "torch_train_source", "convert_train_source",
           "verify_train", "format_train_report"]

DEFAULT_STEPS = 5
DEFAULT_OPTIMIZER = "SGD(lr=0.01)"
LOSSES = ("cross_entropy", "mse")
PKG = "_msmigrate_train_check"      # the package the converted loops are written into
WORST = 3                           # parameters named in the final-weights line
_LOSS_CALL = {"cross_entropy": "F.cross_entropy", "mse": "F.mse_loss"}


# --------------------------------------------------------------------------- specs


@dataclass(frozen=True)
class TrainConfig:
    """One optimizer (and optional scheduler) to train with, as torch expressions without the
    first argument: ``"SGD(lr=0.1, momentum=0.9)"``, ``"StepLR(step_size=2, gamma=0.5)"``."""
    optimizer: str = DEFAULT_OPTIMIZER
    scheduler: Optional[str] = None

    def describe(self) -> str:
        return self.optimizer + (f" + {self.scheduler}" if self.scheduler else "")


_PREFIXES = {
    "optimizer": (("torch", "optim"), ("optim",)),
    "scheduler": (("torch", "optim", "lr_scheduler"), ("optim", "lr_scheduler"), ("lr_scheduler",)),
}


def _dotted(node: ast.AST) -> Optional[tuple]:
    if isinstance(node, ast.Name):
        return (node.id,)
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return None if inner is None else inner + (node.attr,)
    return None


def parse_optim_spec(text: str, kind: str = "optimizer", steps: Optional[int] = None) -> str:
    """``"SGD(lr=0.1, momentum=0.9)"``, ``"torch.optim.AdamW(lr=1e-3)"`` or ``"Adam"`` -> the canonical
    ``"Name(args)"`` (arguments after the parameters / optimizer, which verify supplies).

    A OneCycleLR without ``total_steps`` or ``epochs`` gets ``total_steps=steps``.
    Raises :class:`VerifyUsageError` on anything else."""
    what = f"--{kind} {text!r}"
    try:
        node = ast.parse(str(text).strip(), mode="eval").body
    except SyntaxError:
        raise VerifyUsageError(f"bad {what}: expected e.g. "
                               + ("SGD(lr=0.1, momentum=0.9)" if kind == "optimizer" else
                                  "StepLR(step_size=2, gamma=0.5)")) from None
    call = node if isinstance(node, ast.Call) else ast.Call(func=node, args=[], keywords=[])
    name = _dotted(call.func)
    if not name:
        raise VerifyUsageError(f"bad {what}: expected a torch.optim{'.lr_scheduler' if kind == 'scheduler' else ''}"
                               f" class name with its arguments")
    prefix, cls = name[:-1], name[-1]
    if prefix and prefix not in _PREFIXES[kind]:
        raise VerifyUsageError(f"bad {what}: {'.'.join(name)} is not in torch.optim"
                               + (".lr_scheduler" if kind == "scheduler" else ""))
    if not cls[:1].isupper():
        raise VerifyUsageError(f"bad {what}: {cls} is not a torch.optim class name")
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        raise VerifyUsageError(f"bad {what}: *args / **kwargs are not supported")
    keywords = list(call.keywords)
    if kind == "scheduler" and cls == "OneCycleLR" and steps \
            and not {"total_steps", "epochs"} & {k.arg for k in keywords} and len(call.args) < 2:
        keywords.append(ast.keyword(arg="total_steps", value=ast.Constant(int(steps))))
    args = [ast.unparse(a) for a in call.args] + [f"{k.arg}={ast.unparse(k.value)}" for k in keywords]
    return f"{cls}({', '.join(args)})"


def _spec_parts(spec: str) -> tuple:
    """Canonical ``"Name(a, b=1)"`` -> ("Name", "a, b=1")."""
    name, _, rest = spec.partition("(")
    return name, rest[:-1] if rest.endswith(")") else rest


def torch_train_source(config: TrainConfig, loss: str, n_inputs: int) -> str:
    """The torch training loop that runs on the torch side and, converted, on the MindSpore side.

    ``train(model, batches)`` returns (losses, learning rates), one per optimizer step."""
    if loss not in LOSSES:
        raise VerifyUsageError(f"unknown loss {loss!r} (use {' or '.join(LOSSES)})")
    o_name, o_args = _spec_parts(config.optimizer)
    xs = [f"x{i}" for i in range(n_inputs)]
    lines = [
        '"""msmigrate verify --train: the torch training loop, run as is by torch and converted',
        'by msmigrate for MindSpore."""',
        "import torch",
        "import torch.nn.functional as F",
        "",
        "",
        "def train(model, batches):",
        f"    optimizer = torch.optim.{o_name}({', '.join(['model.parameters()'] + ([o_args] if o_args else []))})",
    ]
    plateau = False
    if config.scheduler:
        s_name, s_args = _spec_parts(config.scheduler)
        plateau = s_name == "ReduceLROnPlateau"
        lines.append(f"    scheduler = torch.optim.lr_scheduler.{s_name}"
                     f"({', '.join(['optimizer'] + ([s_args] if s_args else []))})")
    lines += [
        "    losses = []",
        "    lrs = []",
        f"    for {', '.join(xs + ['y'])} in batches:",
        '        lrs.append(float(optimizer.param_groups[0]["lr"]))',
        "        optimizer.zero_grad()",
        f"        out = model({', '.join(xs)})",
        f"        loss = {_LOSS_CALL[loss]}(out, y)",
        "        loss.backward()",
        "        optimizer.step()",
        "        losses.append(loss.item())",
    ]
    if config.scheduler:
        lines.append("        scheduler.step(losses[-1])" if plateau else "        scheduler.step()")
    lines += ["    return losses, lrs", ""]
    return "\n".join(lines)


class ConversionProblem(Exception):
    """The converter could not convert the training loop (a TODO site)."""


def convert_train_source(source: str, module: str = f"{PKG}.cfg") -> str:
    """Convert a loop written by :func:`torch_train_source` as the converter converts a file inside
    a package (``from . import _ms_compat``).  Raises :class:`ConversionProblem` naming each TODO."""
    from . import mappings  # noqa: F401  (registers the mappings)
    from .converter import convert_code
    from .registry import TODO

    code, sites, _ = convert_code(source, module, False, compat_import=(1, "_ms_compat"))
    todos = [s for s in sites if s.status == TODO]
    if todos:
        raise ConversionProblem("; ".join(f"{s.api}: {s.note or 'no MindSpore mapping'}" for s in todos))
    return code


def _assigned(code: str, name: str) -> str:
    """The right-hand side of ``name = ...`` in converted code (what the registry produced)."""
    for line in code.splitlines():
        s = line.strip()
        if s.startswith(f"{name} = "):
            return s[len(name) + 3:]
    return ""


# --------------------------------------------------------------------------- results


@dataclass
class StepDiff:
    step: int
    loss_torch: Optional[float]
    loss_ms: Optional[float]
    rel: Optional[float]  # |d| / max(1, |torch loss|)
    lr_torch: Optional[float]
    lr_ms: Optional[float]
    passed: bool
    note: str = ""


@dataclass
class ParamDiff:
    name: str  # torch state_dict key
    ms_name: str
    max_abs: Optional[float]
    max_rel: Optional[float]  # max|d| / max|w_torch|
    tol: Optional[float]
    passed: bool
    note: str = ""
    judged: bool = True
    rel: Optional[float] = None  # max|d| / max(1, max|w_torch|): passes when <= rtol  # False: differs, but cannot match (rounding-noise gradient); see note

    def label(self) -> str:
        return self.name if self.ms_name in ("", self.name) else f"{self.name} ({self.ms_name})"


@dataclass
class TrainModeResult:
    mode: str
    status: str  # "pass" | "fail" | "error"
    steps: list = field(default_factory=list)  # [StepDiff]
    params_compared: int = 0
    params_failed: int = 0
    max_rel: Optional[float] = None  # over all judged tensors: max|d| / max(1, max|w_torch|)
    worst: list = field(default_factory=list)  # [ParamDiff], worst first
    error: Optional[str] = None
    error_detail: Optional[str] = None
    seconds: Optional[float] = None
    notes: list = field(default_factory=list)  # [str] things seen that do not decide the verdict


@dataclass
class TrainConfigResult:
    optimizer: str
    scheduler: Optional[str] = None
    ms_optimizer: str = ""  # what the converter wrote for them
    ms_scheduler: str = ""
    modes: list = field(default_factory=list)  # [TrainModeResult]
    error: Optional[str] = None
    error_detail: Optional[str] = None

    @property
    def passed(self) -> bool:
        return self.error is None and bool(self.modes) and all(m.status == "pass" for m in self.modes)

    def describe(self) -> str:
        return TrainConfig(self.optimizer, self.scheduler).describe()


@dataclass
class TrainVerifyResult(Verdict):
    torch_spec: str = ""
    ms_spec: str = ""
    steps: int = DEFAULT_STEPS
    rtol: float = DEFAULT_RTOL
    seed: int = 0
    inputs: list = field(default_factory=list)  # [{"shape", "dtype"}]
    loss: str = ""
    classes: Optional[int] = None
    output_shape: list = field(default_factory=list)
    dropout: list = field(default_factory=list)  # [{"name", "type", "p"}] torch modules with p > 0
    eval_mode_dropout: bool = False
    configs: list = field(default_factory=list)  # [TrainConfigResult]
    weights: str = ""
    error: Optional[str] = None
    error_detail: Optional[str] = None
    torch_imported_on_ms_side: bool = False
    versions: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.error is None and bool(self.configs) and all(c.passed for c in self.configs)

    def config(self, optimizer: str, scheduler: Optional[str] = None) -> TrainConfigResult:
        """The result for a spec as given (canonicalised like the CLI does)."""
        o = parse_optim_spec(optimizer, "optimizer", self.steps)
        s = parse_optim_spec(scheduler, "scheduler", self.steps) if scheduler else None
        for c in self.configs:
            if c.optimizer == o and c.scheduler == s:
                return c
        raise KeyError(TrainConfig(o, s).describe())

    def to_dict(self) -> dict:
        d = result_dict(self)
        for c, cd in zip(self.configs, d["configs"]):
            cd["passed"] = c.passed
        return _jsonable(d)

    @classmethod
    def from_dict(cls, d: dict) -> "TrainVerifyResult":
        d = without_derived(d)
        fix = unjson_floats
        configs = []
        for c in d.pop("configs", []):
            c = dict(c)
            c.pop("passed", None)
            modes = []
            for m in c.pop("modes", []):
                m = fix(dict(m))
                m["steps"] = [StepDiff(**fix(s)) for s in m.get("steps", [])]
                m["worst"] = [ParamDiff(**fix(p)) for p in m.get("worst", [])]
                modes.append(TrainModeResult(**m))
            configs.append(TrainConfigResult(**c, modes=modes))
        r = from_known_fields(cls, d)
        r.configs = configs
        return r


# --------------------------------------------------------------------------- torch side


def _targets(loss: str, out_shape: tuple, classes: Optional[int], seed: int, step: int) -> np.ndarray:
    rng = np.random.default_rng([seed, step, 1])
    if loss == "cross_entropy":
        return rng.integers(0, classes, size=(out_shape[0],) + tuple(out_shape[2:]), dtype=np.int64)
    return rng.standard_normal(out_shape).astype(np.float32)


def _dropout_layers(model: Any) -> list:
    import torch

    kinds = (torch.nn.Dropout, torch.nn.Dropout1d, torch.nn.Dropout2d, torch.nn.Dropout3d,
             torch.nn.AlphaDropout, torch.nn.FeatureAlphaDropout)
    found = []
    for name, m in model.named_modules():
        p = getattr(m, "p", None)
        if name and isinstance(m, kinds) and p:
            found.append({"name": name, "type": type(m).__name__, "p": float(p)})
        elif name and isinstance(p, float) and p > 0 and "dropout" in type(m).__name__.lower():
            found.append({"name": name, "type": type(m).__name__, "p": float(p)})
    return found


NOISE_GRAD = 1e-6  # a gradient this small against the largest one is float rounding, not signal


def _noise_gradients(model: Any, batch: list, loss: str, eval_dropout: list, seed: int) -> tuple:
    """Parameters whose first-step gradient is rounding noise, e.g. a conv bias followed by
    BatchNorm (the normalisation cancels it: the exact gradient is zero).  Adam, RMSprop and
    Adagrad divide by the gradient's own magnitude and turn that noise into full-size steps that
    no two frameworks can reproduce.  Also the BatchNorm running means fed by such a parameter's
    module.  Returns ({param: max|g| / largest max|g|}, {running_mean key: param})."""
    import torch
    import torch.nn.functional as F

    m = copy.deepcopy(model).train()
    for name in eval_dropout:
        m.get_submodule(name).eval()
    outputs, bn_inputs, keep, handles = {}, {}, [], []

    def output_of(name):
        def hook(mod, args, out):
            outputs[name] = id(out)
            keep.append(out)  # alive until the end, so ids stay unique
        return hook

    def input_of(name):
        def hook(mod, args):
            bn_inputs[name] = id(args[0]) if args else None
        return hook

    for name, mod in m.named_modules():
        if not name:
            continue
        handles.append(mod.register_forward_hook(output_of(name)))
        if isinstance(mod, torch.nn.modules.batchnorm._BatchNorm) and mod.track_running_stats:
            handles.append(mod.register_forward_pre_hook(input_of(name)))
    torch.manual_seed(seed)
    xs = [torch.from_numpy(a.copy()) for a in batch]
    try:
        out = m(*xs[:-1])
        (F.cross_entropy(out, xs[-1]) if loss == "cross_entropy" else F.mse_loss(out, xs[-1])).backward()
    finally:
        for h in handles:
            h.remove()
    grads = {n: float(p.grad.abs().max()) for n, p in m.named_parameters() if p.grad is not None and p.numel()}
    top = max(grads.values(), default=0.0)
    if not top > 0:
        return {}, {}
    noise = {n: g / top for n, g in grads.items() if g <= NOISE_GRAD * top}
    fed = {}
    for bn, in_id in bn_inputs.items():
        for n in noise:
            owner = n.rpartition(".")[0]
            if in_id is not None and outputs.get(owner) == in_id:
                fed[f"{bn}.running_mean"] = n
    return noise, fed


def _import_file(path: str, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def record_torch_train(spec: str, path: Union[None, str, Sequence[str]], inputs_spec: Any, configs: list,
                       out_npz: str, workdir: str, steps: int = DEFAULT_STEPS, loss: Optional[str] = None,
                       classes: Optional[int] = None, seed: int = 0, int_high: int = DEFAULT_INT_HIGH,
                       eval_mode_dropout: bool = False) -> dict:
    """Torch side: build ``spec``, draw the batches, write each config's training loop to
    ``workdir/torch_train_<i>.py``, run it from the same initial weights and save one ``.npz``
    (``sd0/`` initial state_dict, ``batch/<step>/<j>`` inputs then target, ``c<i>/sd/`` final
    state_dicts, ``meta`` JSON with losses, learning rates and the loop sources).

    Raises :class:`VerifyUsageError` when the model or a config cannot be built or trained."""
    t0 = time.perf_counter()
    import torch

    specs = _normalize_inputs(inputs_spec)
    configs = [TrainConfig(**c) if isinstance(c, dict) else c for c in configs]
    model = build_torch_model(spec, path, seed)
    t_build = time.perf_counter() - t0

    arrays: dict = {}
    sd_keys = []
    for k, v in model.state_dict().items():
        if isinstance(v, torch.Tensor):
            sd_keys.append(k)
            arrays[f"sd0/{k}"] = v.detach().cpu().numpy().copy()

    # the output shape decides the loss and the targets: probe a copy in eval mode, no grad
    batch_inputs = [make_inputs(specs, [seed, s], int_high) for s in range(steps)]
    probe = copy.deepcopy(model).eval()
    try:
        with torch.no_grad():
            out = probe(*[torch.from_numpy(a.copy()) for a in batch_inputs[0]])
    except Exception as e:  # noqa: BLE001
        raise VerifyUsageError(f"torch: forward of {spec} on inputs "
                               f"{', '.join(s.describe() for s in specs)} failed: {_one_line(e)}") from None
    del probe
    if not isinstance(out, torch.Tensor) or not out.is_floating_point():
        raise VerifyUsageError(f"torch: --train needs a model that returns one float tensor; {spec} returned "
                               f"{type(out).__name__ if not isinstance(out, torch.Tensor) else out.dtype}")
    out_shape = tuple(out.shape)
    if loss is None:
        loss = "cross_entropy" if out.ndim == 2 else "mse"
    if loss == "cross_entropy":
        if out.ndim < 2:
            raise VerifyUsageError(f"--loss cross_entropy needs (batch, classes, ...) outputs; {spec} returns "
                                   f"shape {out_shape} (use --loss mse)")
        classes = classes or out_shape[1]
        if not 1 <= classes <= out_shape[1]:
            raise VerifyUsageError(f"--classes {classes}: the model returns {out_shape[1]} class scores")
    else:
        classes = None
    batches = []
    for s in range(steps):
        batch = list(batch_inputs[s]) + [_targets(loss, out_shape, classes, seed, s)]
        for j, a in enumerate(batch):
            arrays[f"batch/{s}/{j}"] = a
        batches.append(batch)
    dropout = _dropout_layers(model)
    try:
        noise, noise_fed = _noise_gradients(model, batches[0], loss,
                                            [d["name"] for d in dropout] if eval_mode_dropout else [], seed)
    except Exception as e:  # noqa: BLE001
        raise VerifyUsageError(f"torch: training step of {spec} failed: {_one_line(e)}") from None

    meta_configs = []
    t_train = time.perf_counter()
    for i, cfg in enumerate(configs):
        source = torch_train_source(cfg, loss, len(specs))
        src_file = os.path.join(workdir, f"torch_train_{i}.py")
        with open(src_file, "w") as f:
            f.write(source)
        what = f"torch: {cfg.describe()}"
        try:
            loop = _import_file(src_file, f"_msmigrate_torch_train_{i}")
        except Exception as e:  # noqa: BLE001
            raise VerifyUsageError(f"{what}: {_one_line(e)}") from None
        m = copy.deepcopy(model)
        m.train()
        if eval_mode_dropout:
            for d in dropout:
                m.get_submodule(d["name"]).eval()
        torch.manual_seed(seed)
        tb = [tuple(torch.from_numpy(a.copy()) for a in b) for b in batches]
        try:
            losses, lrs = loop.train(m, tb)
        except Exception as e:  # noqa: BLE001  (a bad keyword, an optimizer torch does not have...)
            raise VerifyUsageError(f"{what} failed: {_one_line(e)}") from None
        for k, v in m.state_dict().items():
            if isinstance(v, torch.Tensor):
                arrays[f"c{i}/sd/{k}"] = v.detach().cpu().numpy().copy()
        meta_configs.append({"optimizer": cfg.optimizer, "scheduler": cfg.scheduler, "source": source,
                             "losses": [float(x) for x in losses], "lrs": [float(x) for x in lrs],
                             "sd_keys": [k for k, v in m.state_dict().items() if isinstance(v, torch.Tensor)]})
    meta = {
        "format": NPZ_FORMAT, "kind": "train", "torch_spec": spec, "seed": seed, "steps": steps,
        "inputs": [{"shape": list(s.shape), "dtype": s.dtype} for s in specs], "n_inputs": len(specs),
        "loss": loss, "classes": classes, "output_shape": list(out_shape), "state_dict_keys": sd_keys,
        "dropout": dropout, "eval_mode_dropout": bool(eval_mode_dropout), "configs": meta_configs,
        "noise_gradients": noise, "noise_fed": noise_fed,
        "torch_version": torch.__version__,
        "timings": {"torch_build_s": t_build, "torch_train_s": time.perf_counter() - t_train},
    }
    arrays["meta"] = np.array(json.dumps(meta))
    np.savez(out_npz, **arrays)
    return meta


# --------------------------------------------------------------------------- conversion (parent)


def write_ms_package(meta: dict, workdir: str) -> list:
    """Convert every config's loop into ``workdir/_msmigrate_train_check/cfg<i>.py`` next to the
    emitted ``_ms_compat.py``.  Returns per config ``{"module", "ms_optimizer", "ms_scheduler",
    "error"}``."""
    from .converter import compat_source

    pkg = os.path.join(workdir, PKG)
    os.makedirs(pkg, exist_ok=True)
    with open(os.path.join(pkg, "__init__.py"), "w") as f:
        f.write('"""Training loops converted by msmigrate verify --train."""\n')
    with open(os.path.join(pkg, "_ms_compat.py"), "w") as f:
        f.write(compat_source())
    out = []
    for i, c in enumerate(meta["configs"]):
        entry = {"module": f"{PKG}.cfg{i}", "ms_optimizer": "", "ms_scheduler": "", "error": None}
        try:
            code = convert_train_source(c["source"], entry["module"])
        except ConversionProblem as e:
            entry["error"] = f"the converter left a TODO in the training loop: {e}"
        except Exception as e:  # noqa: BLE001
            entry["error"] = f"converting the training loop failed: {_one_line(e)}"
        else:
            with open(os.path.join(pkg, f"cfg{i}.py"), "w") as f:
                f.write(code)
            entry["ms_optimizer"] = _assigned(code, "optimizer")
            entry["ms_scheduler"] = _assigned(code, "scheduler")
        out.append(entry)
    return out


# --------------------------------------------------------------------------- MindSpore side


def _compare_steps(meta_cfg: dict, losses: list, lrs: list, rtol: float) -> list:
    rows = []
    for s, lt in enumerate(meta_cfg["losses"]):
        lm = float(losses[s]) if s < len(losses) else None
        rt = meta_cfg["lrs"][s] if s < len(meta_cfg["lrs"]) else None
        rm = float(lrs[s]) if s < len(lrs) else None
        notes = []
        if lm is None:
            rel, ok = None, False
            notes.append("missing on the MindSpore side")
        elif math.isnan(lt) and math.isnan(lm):
            rel, ok = 0.0, True
        else:
            d = abs(lt - lm)
            rel = d / max(1.0, abs(lt)) if math.isfinite(d) else math.inf
            ok = bool(rel <= rtol)
        if rt is not None and rm is not None and not abs(rt - rm) <= rtol * abs(rt):
            ok = False
            notes.append(f"learning rate {rm:.6g} vs torch {rt:.6g}")
        rows.append(StepDiff(step=s + 1, loss_torch=lt, loss_ms=lm, rel=rel, lr_torch=rt, lr_ms=rm,
                             passed=ok, note="; ".join(notes)))
    return rows


def _compare_weights(net: Any, final: dict, rtol: float, mode: TrainModeResult, meta: dict) -> None:
    from .weights import convert_state_dict

    noise, fed = meta.get("noise_gradients", {}), meta.get("noise_fed", {})

    arrays, report = convert_state_dict(net, final, strict=False)
    current = {p.name: p for p in net.get_parameters()}
    diffs = []
    for ms_name, key in report.loaded:
        p = current.get(ms_name)
        m = None if p is None else p.asnumpy()
        c = compare_arrays(arrays[ms_name], m, rtol)
        d = ParamDiff(name=key, ms_name=ms_name, max_abs=c["max_abs"], max_rel=c["max_rel"],
                      tol=c["tol"], passed=c["passed"], note=c["note"],
                      rel=None if c["max_abs"] is None else c["max_abs"] / c["tol"] * rtol)
        if not d.passed and key in noise and d.max_abs is not None and math.isfinite(d.max_abs):
            d.judged = False
            d.note = f"gradient is rounding noise ({_fmt(noise[key])} of the largest)"
        diffs.append(d)
    # a BatchNorm running mean follows the noisy bias before it, but only that bias's difference
    # is excused: if the bias matched, the running mean must match too
    excused = {d.name for d in diffs if not d.judged}
    for d in diffs:
        if not d.passed and fed.get(d.name) in excused and d.max_abs is not None and math.isfinite(d.max_abs):
            d.judged = False
            d.note = f"fed by {fed[d.name]}, whose gradient is rounding noise"
    for ms_name, shape, looked in report.missing:
        diffs.append(ParamDiff(name=looked, ms_name=ms_name, max_abs=None, max_rel=None, tol=None,
                               passed=False, note="not in torch's final state_dict"))

    def badness(p: ParamDiff) -> float:
        if not p.judged:
            return -1.0
        return math.inf if p.rel is None or math.isnan(p.rel) else p.rel

    diffs.sort(key=badness, reverse=True)
    mode.params_compared = len(diffs)
    mode.params_failed = sum(not p.passed and p.judged for p in diffs)
    rels = [p.rel for p in diffs if p.rel is not None and p.judged]
    mode.max_rel = max(rels) if rels else None
    mode.worst = diffs[:max(WORST, mode.params_failed if mode.params_failed <= 8 else WORST)]
    mode.worst += [p for p in diffs if not p.judged]


def check_mindspore_train(spec: str, path: Union[None, str, Sequence[str]], npz: str, package: list,
                          workdir: str, modes: Any = MODES, rtol: float = DEFAULT_RTOL) -> TrainVerifyResult:
    """MindSpore side: for each config and mode, build ``spec``, load torch's initial weights, run
    the converted loop (``package`` entries from :func:`write_ms_package`, importable from
    ``workdir``) on the recorded batches and compare.  Must run where torch is never imported."""
    if "torch" in sys.modules:
        raise RuntimeError("torch is imported in the MindSpore process; check_mindspore_train must run in a "
                           "process that never imports torch")
    modes = _normalize_modes(modes)
    with torch_record(npz, "train") as (data, meta):
        return _check_train_loaded(spec, path, data, meta, package, workdir, modes, rtol)


def _check_train_loaded(spec, path, data, meta, package, workdir, modes, rtol) -> TrainVerifyResult:
    result = TrainVerifyResult(
        torch_spec=meta["torch_spec"], ms_spec=spec, steps=meta["steps"], rtol=rtol, seed=meta["seed"],
        inputs=meta["inputs"], loss=meta["loss"], classes=meta["classes"], output_shape=meta["output_shape"],
        dropout=meta["dropout"], eval_mode_dropout=meta["eval_mode_dropout"])
    result.timings.update(meta.get("timings", {}))
    result.versions["torch"] = meta.get("torch_version")
    t0 = time.perf_counter()
    import mindspore as ms

    result.versions["mindspore"] = ms.__version__
    ms_modes = {"pynative": ms.PYNATIVE_MODE, "graph": ms.GRAPH_MODE}
    sd0 = {k: data[f"sd0/{k}"] for k in meta["state_dict_keys"]}
    batches_np = [[data[f"batch/{s}/{j}"] for j in range(meta["n_inputs"] + 1)] for s in range(meta["steps"])]
    if workdir not in sys.path:
        sys.path.insert(0, workdir)
    from .weights import WeightsMismatchError, load_torch_state_dict

    def fresh_net():
        net = _build(spec, path, "mindspore")
        if "torch" in sys.modules:
            raise _Fatal(f"the MindSpore net {spec} imported torch")
        if not isinstance(net, ms.nn.Cell):
            raise _Fatal(f"{spec} returned {type(net).__name__}, not a mindspore.nn.Cell")
        try:
            report = load_torch_state_dict(net, sd0, strict=True)
        except WeightsMismatchError as e:
            raise _Fatal(f"weights do not match: {_one_line(e)}", _detail(e)) from None
        except Exception as e:  # noqa: BLE001
            raise _Fatal(f"loading the torch weights failed: {_one_line(e)}", _detail(e)) from None
        result.weights = report.summary()
        net.set_train(True)
        if meta["eval_mode_dropout"]:
            cells = dict(net.cells_and_names())
            for d in meta["dropout"]:
                if d["name"] in cells:
                    cells[d["name"]].set_train(False)
        return net

    try:
        for i, (mc, entry) in enumerate(zip(meta["configs"], package)):
            cfg = TrainConfigResult(optimizer=mc["optimizer"], scheduler=mc["scheduler"],
                                    ms_optimizer=entry["ms_optimizer"], ms_scheduler=entry["ms_scheduler"])
            result.configs.append(cfg)
            if entry["error"]:
                cfg.error = entry["error"]
                continue
            try:
                loop = importlib.import_module(entry["module"])
            except Exception as e:  # noqa: BLE001
                record_error(cfg, "importing the converted training loop failed", e)
                continue
            final = {k: data[f"c{i}/sd/{k}"] for k in mc["sd_keys"]}
            for mode in modes:
                try:
                    net = fresh_net()
                except (VerifyUsageError, _Fatal):  # a spec that cannot be found: exit 2
                    raise
                except Exception as e:  # noqa: BLE001
                    raise _Fatal(f"building the MindSpore net {spec} failed: {_one_line(e)}", _detail(e)) from None
                ms.set_context(mode=ms_modes[mode])
                ms.set_seed(meta["seed"])
                mr = TrainModeResult(mode=mode, status="pass")
                t = time.perf_counter()
                names = {id(p): p.name for p in net.get_parameters()}
                try:
                    batches = [tuple(ms.Tensor(a) for a in b) for b in batches_np]
                    losses, lrs = loop.train(net, batches)
                except Exception as e:  # noqa: BLE001
                    mr.status, mr.error, mr.error_detail = "error", _one_line(e), _detail(e)
                    mr.seconds = time.perf_counter() - t
                    cfg.modes.append(mr)
                    continue
                mr.seconds = time.perf_counter() - t
                renamed = [(names[id(p)], p.name) for p in net.get_parameters()
                           if id(p) in names and names[id(p)] != p.name]
                if renamed:
                    mr.notes.append(f"the converted training loop renamed {len(renamed)} parameter(s) of the net "
                                    f"(e.g. {renamed[0][0]} -> {renamed[0][1]}): a checkpoint saved after "
                                    f"training carries these names")
                mr.steps = _compare_steps(mc, losses, lrs, rtol)
                _compare_weights(net, final, rtol, mr, meta)
                if not all(s.passed for s in mr.steps) or mr.params_failed:
                    mr.status = "fail"
                cfg.modes.append(mr)
    except _Fatal as e:
        result.error, result.error_detail = e.args[0], (e.args[1] if len(e.args) > 1 else None)
    result.timings["ms_total_s"] = time.perf_counter() - t0
    result.torch_imported_on_ms_side = "torch" in sys.modules
    return result


class _Fatal(Exception):
    """The MindSpore net cannot be built or loaded: no config can run."""


# --------------------------------------------------------------------------- library API


def _as_configs(configs: Any) -> list:
    if configs is None:
        configs = [TrainConfig()]
    if isinstance(configs, (str, TrainConfig)):
        configs = [configs]
    out = []
    for c in configs:
        if isinstance(c, str):
            c = TrainConfig(c)
        elif isinstance(c, (tuple, list)):
            c = TrainConfig(*c)
        elif isinstance(c, dict):
            c = TrainConfig(**c)
        out.append(c)
    return out


def verify_train(torch_spec: str, ms_spec: Optional[str] = None, inputs: Any = None, *,
                 configs: Any = None, torch_path: Union[None, str, Sequence[str]] = None,
                 ms_path: Union[None, str, Sequence[str]] = None, steps: int = DEFAULT_STEPS,
                 loss: Optional[str] = None, classes: Optional[int] = None, modes: Any = "both",
                 rtol: float = DEFAULT_RTOL, seed: int = 0, int_high: int = DEFAULT_INT_HIGH,
                 eval_mode_dropout: bool = False, timeout: Optional[float] = None,
                 keep_temp: Optional[str] = None,
                 progress: Optional[Callable[[str], None]] = None) -> TrainVerifyResult:
    """Train ``torch_spec`` and its conversion ``ms_spec`` for ``steps`` optimizer steps with each of
    ``configs`` (``TrainConfig``, ``"SGD(lr=0.1)"``, or ``(optimizer, scheduler)`` pairs) and compare.

    All configs run in one torch process and one MindSpore process.  Raises
    :class:`VerifyUsageError` for bad arguments or a torch side that cannot train; everything the
    MindSpore side does wrong ends up in the result."""
    say = progress or (lambda msg: None)
    _parse_spec(torch_spec)
    ms_spec = ms_spec or torch_spec
    _parse_spec(ms_spec)
    specs = _normalize_inputs(inputs)
    if not isinstance(steps, int) or steps < 1:
        raise VerifyUsageError("--train needs a positive number of steps")
    if loss is not None and loss not in LOSSES:
        raise VerifyUsageError(f"unknown --loss {loss!r} (use {' or '.join(LOSSES)})")
    if classes is not None and classes < 1:
        raise VerifyUsageError("--classes must be at least 1")
    if not rtol > 0:
        raise VerifyUsageError("--rtol must be positive")
    cfgs = []
    for c in _as_configs(configs):
        cfgs.append(TrainConfig(parse_optim_spec(c.optimizer, "optimizer", steps),
                                parse_optim_spec(c.scheduler, "scheduler", steps) if c.scheduler else None))
    modes = _normalize_modes(modes)
    torch_roots = _import_roots(torch_path) or [os.getcwd()]
    ms_roots = _import_roots(ms_path) or [os.getcwd()]
    _check_top_level(torch_spec, torch_roots, "torch")
    _check_top_level(ms_spec, ms_roots, "mindspore")

    if keep_temp:
        os.makedirs(keep_temp, exist_ok=True)
        tmp_ctx, workdir = None, os.path.abspath(keep_temp)
    else:
        tmp_ctx = tempfile.TemporaryDirectory(prefix="msmigrate-verify-train-")
        workdir = tmp_ctx.name
    try:
        npz = os.path.join(workdir, "torch_train.npz")
        say(f"torch: training {len(cfgs)} configuration(s) for {steps} steps")
        rc, status, tail = _run_worker("_record-torch-train", {
            "spec": torch_spec, "path": torch_roots, "inputs": [asdict(s) for s in specs],
            "configs": [asdict(c) for c in cfgs], "out_npz": npz, "workdir": workdir, "steps": steps,
            "loss": loss, "classes": classes, "seed": seed, "int_high": int_high,
            "eval_mode_dropout": eval_mode_dropout}, workdir, timeout, module="msmigrate.verify_train")
        if rc != 0 or not status or not status.get("ok"):
            raise VerifyUsageError((status or {}).get("message") or f"torch side failed: {tail}")
        with np.load(npz, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
        say("converting the training loop(s) with msmigrate")
        package = write_ms_package(meta, workdir)

        say(f"mindspore: training in {' and '.join(m.upper() for m in modes)} mode")
        result_file = os.path.join(workdir, "ms_train_result.json")
        rc, status, tail = _run_worker("_check-ms-train", {
            "spec": ms_spec, "path": ms_roots, "npz": npz, "package": package, "workdir": workdir,
            "modes": list(modes), "rtol": rtol, "result_file": result_file}, workdir, timeout,
            module="msmigrate.verify_train")
        result = _worker_result(status, result_file, TrainVerifyResult)
        if result is None:
            result = TrainVerifyResult(
                torch_spec=torch_spec, ms_spec=ms_spec, steps=steps, rtol=rtol, seed=seed,
                inputs=meta["inputs"], loss=meta["loss"], classes=meta["classes"],
                output_shape=meta["output_shape"], dropout=meta["dropout"], eval_mode_dropout=eval_mode_dropout,
                configs=[TrainConfigResult(optimizer=c.optimizer, scheduler=c.scheduler) for c in cfgs],
                error=(status or {}).get("message") or f"MindSpore side failed: {tail}")
    finally:
        if tmp_ctx is not None:
            tmp_ctx.cleanup()
    return result


# --------------------------------------------------------------------------- reporting


def _header(result: TrainVerifyResult) -> list:
    loss = result.loss + (f" ({result.classes} classes)" if result.classes else "")
    lines = [f"msmigrate verify --train {result.steps}: torch {result.torch_spec} vs mindspore {result.ms_spec}",
             f"inputs: {'; '.join(InputSpec(tuple(i['shape']), i['dtype']).describe() for i in result.inputs)}"
             f"   seed {result.seed}   rtol {result.rtol:g}   loss {loss}"]
    if result.weights:
        lines.append(f"initial weights (torch's): {result.weights}")
    if result.dropout:
        where = ", ".join(f"{d['name']} ({d['type']} p={d['p']:g})" for d in result.dropout)
        if result.eval_mode_dropout:
            lines.append(f"note: Dropout layers in eval mode on both sides (--eval-mode-dropout): {where}")
        else:
            lines.append(f"note: the model has Dropout with p>0 ({where}): the two frameworks draw different "
                         f"random masks, so the runs are not comparable; use --eval-mode-dropout to put these "
                         f"layers in eval mode on both sides (functional dropout in forward is not covered)")
    return lines


def _step_rows(m: TrainModeResult) -> list:
    rows = []
    for s in m.steps:
        word = "ok" if s.passed else "FAIL"
        if s.note:
            word += f" ({s.note})"
        rows.append([m.mode, str(s.step), _fmt(s.lr_torch, ".4g"), _fmt(s.loss_torch, ".7g"), _fmt(s.loss_ms, ".7g"),
                     _fmt(s.rel), word])
    return rows


def _weights_line(m: TrainModeResult) -> str:
    if m.status == "error":
        return f"{m.mode}: ERROR: {m.error}"
    word = "ok" if not m.params_failed else f"FAIL ({m.params_failed} of {m.params_compared} differ)"
    judged = [p for p in m.worst if p.judged]
    worst = ", ".join(f"{p.label()} {_fmt(p.rel)}" + ("" if p.passed else " FAIL")
                      + (f" [{p.note}]" if p.note else "") for p in judged)
    text = f"final weights ({m.mode}): {m.params_compared} tensors, max rel d {_fmt(m.max_rel)}: {word}; " \
           f"worst: {worst or '-'}"
    excused = [p for p in m.worst if not p.judged]
    if excused:
        text += (f"; not judged ({len(excused)}): "
                 + ", ".join(f"{p.label()} {_fmt(p.rel)} [{p.note}]" for p in excused))
    return text


_STEP_HEADER = ["mode", "step", "lr", "torch loss", "mindspore loss", "rel d", "result"]


def format_train_report(result: TrainVerifyResult) -> str:
    """Plain-text report (the CLI uses rich instead when stdout is a terminal)."""
    lines = _header(result)
    if result.error:
        lines.append(f"ERROR: {result.error}")
    n = len(result.configs)
    for k, c in enumerate(result.configs, 1):
        lines.append("")
        lines.append(f"[{k}/{n}] optimizer {c.optimizer}" + (f"   scheduler {c.scheduler}" if c.scheduler else ""))
        if c.ms_optimizer:
            lines.append(f"  converted: optimizer = {c.ms_optimizer}"
                         + (f"; scheduler = {c.ms_scheduler}" if c.ms_scheduler else ""))
        if c.error:
            lines.append(f"  ERROR: {c.error}")
        rows = [r for m in c.modes for r in _step_rows(m)]
        if rows:
            table = [_STEP_HEADER] + rows
            widths = [max(len(r[i]) for r in table) for i in range(len(_STEP_HEADER) - 1)]
            for r in table:
                lines.append("  " + "  ".join(x.ljust(w) for x, w in zip(r[:-1], widths)) + "  " + r[-1])
        for m in c.modes:
            lines.append("  " + _weights_line(m))
            lines.extend(f"  note ({m.mode}): {n}" for n in m.notes)
        if not result.error:
            lines.append("  " + ("PASS" if c.passed else "FAIL"))
    lines.append("")
    done = sum(c.passed for c in result.configs)
    lines.append(f"RESULT: {'PASS' if result.passed else 'FAIL'} ({done}/{n} configurations)")
    lines.extend(_footnotes(result))
    return "\n".join(lines)


def _footnotes(result: TrainVerifyResult) -> list:
    notes = ["(rel d: |loss difference| / max(1, |torch loss|), and per weight tensor max|d| / max(1, max|w_torch|); "
             "each passes when <= rtol)"]
    if any(not p.judged for c in result.configs for m in c.modes for p in m.worst):
        notes.append("(not judged: a parameter whose exact gradient is zero, e.g. a conv bias followed by "
                     "BatchNorm, gets float rounding noise as its gradient; Adam, RMSprop and Adagrad scale that "
                     "noise to full-size steps, so its values, and the running mean of the BatchNorm it feeds, "
                     "cannot agree between frameworks; bias=False before BatchNorm avoids it)")
    return notes


def print_train_report(result: TrainVerifyResult, stream: Any = None) -> None:
    stream = stream or sys.stdout
    con = rich_console(stream)
    if con is not None:
        from rich.markup import escape
        for line in _header(result):
            con.print(line, highlight=False, markup=False)
        if result.error:
            con.print("[red]ERROR[/red]: " + escape(result.error), highlight=False)
        n = len(result.configs)
        for k, c in enumerate(result.configs, 1):
            con.print()
            con.print(f"[bold][{k}/{n}] optimizer {escape(c.optimizer)}[/bold]"
                      + (f"   scheduler [bold]{escape(c.scheduler)}[/bold]" if c.scheduler else ""),
                      highlight=False)
            if c.ms_optimizer:
                con.print("  converted: optimizer = " + c.ms_optimizer
                          + (f"; scheduler = {c.ms_scheduler}" if c.ms_scheduler else ""),
                          highlight=False, markup=False)
            if c.error:
                con.print("  [red]ERROR[/red]: " + escape(c.error), highlight=False)
            rows = [r for m in c.modes for r in _step_rows(m)]
            if rows:
                con.print(result_table(_STEP_HEADER, rows, right=[h for h in _STEP_HEADER
                                                                 if h not in ("mode", "result")]))
            for m in c.modes:
                style = "green" if m.status == "pass" else "red"
                con.print(f"  [{style}]" + escape(_weights_line(m)) + f"[/{style}]", highlight=False)
                for n in m.notes:
                    con.print(f"  [yellow]note ({m.mode})[/yellow]: " + escape(n), highlight=False)
            if not result.error:
                con.print("  [bold green]PASS[/bold green]" if c.passed else "  [bold red]FAIL[/bold red]")
        done = sum(c.passed for c in result.configs)
        con.print()
        con.print(f"[bold green]RESULT: PASS[/bold green] ({done}/{n} configurations)" if result.passed
                  else f"[bold red]RESULT: FAIL[/bold red] ({done}/{n} configurations)", highlight=False)
        for line in _footnotes(result):
            con.print(line, highlight=False, markup=False, style="dim")
        return
    print(format_train_report(result), file=stream)


# --------------------------------------------------------------------------- CLI glue


def run_train_cli(args: Any, specs: list) -> int:
    """``msmigrate verify --train``: called by :func:`msmigrate.verify._main_verify` (passed by cli.py) with its parsed
    arguments; returns the exit status (VerifyUsageError propagates: exit 2)."""
    quiet = getattr(args, "quiet", False)
    status = None if quiet else spinner("verify --train")
    try:
        result = verify_train(
            args.torch, args.ms or args.torch, specs,
            configs=[TrainConfig(args.optimizer or DEFAULT_OPTIMIZER, args.scheduler)],
            torch_path=args.torch_path, ms_path=args.ms_path, steps=args.train, loss=args.loss,
            classes=args.classes, modes=args.mode, rtol=args.rtol, seed=args.seed, int_high=args.int_high,
            eval_mode_dropout=args.eval_mode_dropout, timeout=args.timeout, keep_temp=args.keep_temp,
            progress=(lambda msg: status.update(msg)) if status is not None else None)
    finally:
        if status is not None:
            status.stop()
    return reported(result, print_train_report, args.json)


# --------------------------------------------------------------------------- workers


def _record_torch_train_job(job: dict) -> int:
    record_torch_train(job["spec"], job["path"], job["inputs"], job["configs"], job["out_npz"],
                       job["workdir"], steps=job["steps"], loss=job["loss"], classes=job["classes"],
                       seed=job["seed"], int_high=job["int_high"], eval_mode_dropout=job["eval_mode_dropout"])
    return 0


def _check_ms_train_job(job: dict) -> int:
    sys.meta_path.insert(0, _TorchBlocker())
    result = check_mindspore_train(job["spec"], job["path"], job["npz"], job["package"], job["workdir"],
                                   modes=job["modes"], rtol=job["rtol"])
    with open(job["result_file"], "w") as f:
        json.dump(result.to_dict(), f)
    return result.exit_code


def _worker_main(kind: str, job_file: str) -> int:
    return run_worker_job(kind, job_file, {"_record-torch-train": _record_torch_train_job,
                                           "_check-ms-train": _check_ms_train_job})


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] in ("_record-torch-train", "_check-ms-train"):
        sys.exit(_worker_main(sys.argv[1], sys.argv[2]))
    print("usage: msmigrate verify --train N ... (this module runs the --train workers)", file=sys.stderr)
    sys.exit(2)
