"""Fine-tuning on the trace route: a traced training forward trained in MindSpore, step by step against torch.

The torch module to fine-tune is wrapped so that its forward returns the scalar loss (for a Hugging
Face model: `model(..., labels=...).loss`). It is traced in training mode (`trace_model(train=True)`):
the loss and everything before it become model.py's construct, torch's parameters are trainable
Parameters there, buffers and lifted constants are fixed, tied weights are one Parameter, frozen ones
stay frozen. Then the same optimizer with the same hyper-parameters runs the same batches from the same
weights on both sides:

- torch: `loss.backward()` and `optimizer.step()`;
- MindSpore, in a process that never imports torch, PYNATIVE and GRAPH: `ms.value_and_grad` of the
  network over its trainable Parameters and the `mindspore.experimental.optim` optimizer of the same
  name (torch's update rules; `nn.AdamWeightDecay` has no bias correction).

Each step's loss is compared (relative difference) and the first step's gradients, parameter by
parameter (by the torch names, which are the checkpoint keys).

    python -m msmigrate.trace.finetune OUT_DIR [--modes pynative,graph]

runs the MindSpore side on OUT_DIR (model.py, model.ckpt, finetune-io.npz, finetune.json) and prints
one JSON line."""
from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

OPTIMIZERS = ("sgd", "adamw")   # torch.optim.SGD / AdamW <-> mindspore.experimental.optim.SGD / AdamW
LOSS_RTOL = 1e-4                # per step, |loss_ms - loss_torch| / |loss_torch|
GRAD_RTOL = 1e-4                # first step, max|g_ms - g_torch| / max(1e-6, max|g_torch|), over all parameters


def torch_steps(loss_module, batches, optimizer: str, hp: dict):
    """Train `loss_module` (forward -> scalar loss) one optimizer step per batch, in training mode.
    Returns (the loss of each step, before its update; the first step's gradients by parameter name:
    zeros for a parameter the loss does not reach)."""
    import torch

    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer {optimizer!r}: one of {OPTIMIZERS}")
    params = [(n, p) for n, p in loss_module.named_parameters() if p.requires_grad]
    opt = {"sgd": torch.optim.SGD, "adamw": torch.optim.AdamW}[optimizer]([p for _, p in params], **hp)
    loss_module.train()
    losses, grads = [], {}
    for i, batch in enumerate(batches):
        opt.zero_grad()
        loss = loss_module(*batch)
        loss.backward()
        if i == 0:
            grads = {n: (p.grad if p.grad is not None else torch.zeros_like(p)).detach().numpy().copy()
                     for n, p in params}
        opt.step()
        losses.append(float(loss.detach()))
    return losses, grads


def finetune_check(loss_module, batches, out_dir, *, optimizer: str = "adamw", hp=None, modes=("pynative", "graph"),
                   validate: bool = False, dynamic_batch: bool = True, source: str = "", timeout: int = 1800) -> dict:
    """Trace `loss_module` (its forward returns the scalar loss) in training mode on batches[0] into
    out_dir, train a copy of it in torch on `batches`, and train model.py the same way in a torch-free
    process in each of `modes`. Returns {"torch": losses, mode: {"losses", "loss_rel_diff", "grad_rel_diff",
    "pass", ...}, "ok"}; "missing" (ops without a converter) or "error" when it cannot get that far."""
    from .core import trace_model

    hp = dict(hp or {})
    batches = [tuple(b) for b in batches]
    out = Path(out_dir)
    reference = copy.deepcopy(loss_module)   # trained by torch: the traced module keeps its initial weights
    res = trace_model(loss_module, batches[0], out, check=False, validate=validate, train=True,
                      dynamic_batch=dynamic_batch, source=source or type(loss_module).__name__)
    row = {"trace_ok": res.ok, "trace_pynative_diff": res.pynative_diff, "trace_seconds": res.seconds}
    if res.missing:
        row.update(ok=False, missing=[f"{op}: {why}" for op, why, _ in res.missing])
        return row
    if res.first_bad:
        row["first_bad"] = {k: res.first_bad.get(k) for k in ("node", "op", "max_abs_diff", "error")}
    losses, grads = torch_steps(reference, batches, optimizer, hp)
    row["torch"] = losses
    arrays = {f"b{s}_{i}": x.detach().numpy() for s, b in enumerate(batches) for i, x in enumerate(b)}
    arrays.update({f"g:{k}": v for k, v in grads.items()})
    np.savez(out / "finetune-io.npz", losses=np.array(losses, np.float64), **arrays)
    (out / "finetune.json").write_text(json.dumps({"optimizer": optimizer, "hp": hp, "steps": len(batches),
                                                   "inputs": len(batches[0])}))
    t0 = time.perf_counter()
    cmd = [sys.executable, "-m", "msmigrate.trace.finetune", str(out), "--modes", ",".join(modes)]
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    try:
        row.update(json.loads(r.stdout.strip().splitlines()[-1]))
    except Exception:  # noqa: BLE001 - the child died: its stderr says why
        row.update(ok=False, error=(r.stderr or r.stdout).strip()[-1500:])
    row["mindspore_seconds"] = round(time.perf_counter() - t0, 1)
    row["ok"] = bool(row.get("ok")) and res.ok
    return row


# ---------------------------------------------------------------- the MindSpore side (no torch)
def _load_model(out: Path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("traced_model", out / "model.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["traced_model"] = mod   # GRAPH mode reads construct's source through its module
    spec.loader.exec_module(mod)
    return mod


def ms_steps(mod, batches, optimizer: str, hp: dict):
    """model.py's network trained one step per batch in the current mode: (losses, first step's gradients
    by parameter name)."""
    import mindspore as ms
    from mindspore.experimental import optim

    net = mod.create_model()
    net.set_train(True)
    params = net.trainable_params()
    opt = {"sgd": optim.SGD, "adamw": optim.AdamW}[optimizer](params, **hp)
    grad_fn = ms.value_and_grad(net, None, opt.parameters)
    losses, first = [], {}
    for i, batch in enumerate(batches):
        loss, grads = grad_fn(*[ms.Tensor(x) for x in batch])
        if i == 0:
            first = {p.name: g.asnumpy() for p, g in zip(opt.parameters, grads)}
        opt(grads)
        losses.append(float(loss.asnumpy()))
    return losses, first


def compare_steps(losses, grads, ref_losses, ref_grads) -> dict:
    """Per-step relative loss differences and the first step's worst gradient difference (relative to
    the largest torch gradient); parameters trained on one side only are listed and fail the check."""
    rel = [abs(a - b) / max(abs(b), 1e-12) for a, b in zip(losses, ref_losses)]
    only_ms = sorted(set(grads) - set(ref_grads))
    only_torch = sorted(set(ref_grads) - set(grads))
    scale = max([float(np.abs(g).max()) for g in ref_grads.values() if g.size] + [1e-6])
    worst, where = 0.0, None
    for k in sorted(set(grads) & set(ref_grads)):
        a, b = grads[k], ref_grads[k]
        d = float(np.abs(a.astype(np.float64) - b).max()) if a.shape == b.shape else float("inf")
        if d >= worst:
            worst, where = d, k
    res = {"losses": losses, "loss_rel_diff": rel, "grad_max_abs_diff": worst, "grad_worst_param": where,
           "grad_rel_diff": worst / scale, "params": len(grads)}
    if only_ms or only_torch:
        res.update(trained_only_in_mindspore=only_ms[:10], trained_only_in_torch=only_torch[:10])
    res["pass"] = bool(len(losses) == len(ref_losses) and max(rel) <= LOSS_RTOL and worst / scale <= GRAD_RTOL
                       and not only_ms and not only_torch)
    return res


def run_finetune(out: Path, modes=("pynative", "graph")) -> dict:
    sys.modules["torch"] = None   # any torch import fails loudly
    mod = _load_model(out)
    import mindspore as ms

    spec = json.loads((out / "finetune.json").read_text())
    io = np.load(out / "finetune-io.npz")
    batches = [[io[f"b{s}_{i}"] for i in range(spec["inputs"])] for s in range(spec["steps"])]
    ref_grads = {k[2:]: io[k] for k in io.files if k.startswith("g:")}
    res = {}
    for mode in modes:
        ms.set_context(mode=ms.PYNATIVE_MODE if mode == "pynative" else ms.GRAPH_MODE)
        t0 = time.perf_counter()
        try:
            losses, grads = ms_steps(mod, batches, spec["optimizer"], spec["hp"])
            res[mode] = compare_steps(losses, grads, [float(x) for x in io["losses"]], ref_grads)
            res[mode]["seconds"] = round(time.perf_counter() - t0, 1)
        except Exception as exc:  # noqa: BLE001 - reported per mode
            res[mode] = {"error": f"{type(exc).__name__}: {str(exc).strip()[:600]}", "pass": False}
    res["ok"] = all(res[m]["pass"] for m in modes)
    return res


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    modes = ("pynative", "graph")
    if "--modes" in argv:
        modes = tuple(argv[argv.index("--modes") + 1].split(","))
    res = run_finetune(Path(argv[0]), modes)
    print(json.dumps(res))
    return 0 if res["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
