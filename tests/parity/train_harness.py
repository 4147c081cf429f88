"""Training parity: a torch snippet's optimizer (and learning-rate schedule) against its
msmigrate conversion, over several real training steps.

The snippet is ordinary torch source defining
    make_model()                 -> nn.Module (MODEL_SRC below is a small MLP with BatchNorm)
    make_optimizer(model)        -> a torch.optim optimizer
    make_scheduler(opt)          -> optional, a torch.optim.lr_scheduler schedule
    scheduler_step(sched, loss)  -> optional, how the schedule steps (default: sched.step())
The harness converts it (harness.load_converted), copies the torch initial weights into the converted
model (msmigrate.weights), and runs `steps` steps on the same fixed batches: in torch with
zero_grad/backward/step/scheduler, and in MindSpore with the converter's train-step contract

    grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)
    @mindspore.jit
    def train_step(*batch): (loss, aux), grads = grad_fn(*batch); optimizer(grads); return loss, aux

in PyNative and under mindspore.jit (modes "pynative", "jit"; "graph" is the jit step with GRAPH_MODE
set globally, as converted programs do), the schedule stepped eagerly between steps. It asserts that the
per-step losses and the final weights agree (relative difference <= rtol) and that the learning
rates seen after every step (param_groups[i]['lr'], get_last_lr()) match. The loss is computed with
plain ops (MSE, or cross-entropy from log-softmax) so it does not depend on the loss mappings.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence

import mindspore as ms
import numpy as np
from mindspore import ops  # _ms_loss runs inside mindspore.jit, which cannot compile an import

from .harness import load_converted, load_torch

MODEL_SRC = '''
import torch
import torch.nn as nn


def make_model():
    # BatchNorm first: after a Linear (with or without a ReLU between) some gradient entries are 0 in
    # exact arithmetic (BatchNorm removes the batch mean) and only rounding noise in practice, which
    # Adam-like and sign-based (Rprop) optimizers blow up to whole steps of random sign in either framework
    return nn.Sequential(nn.BatchNorm1d(6), nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
'''


def batches(steps: int, batch: int = 8, features: int = 6, classes: int = 3, loss: str = "mse", seed: int = 0):
    """Fixed (x, y) numpy batches: y is a float target (mse) or class indices (ce)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(steps):
        x = rng.standard_normal((batch, features)).astype(np.float32)
        if loss == "mse":
            y = rng.standard_normal((batch, classes)).astype(np.float32)
        else:
            y = rng.integers(0, classes, size=(batch,)).astype(np.int32)
        out.append((x, y))
    return out


def _torch_loss(out, y, loss):
    import torch
    if loss == "mse":
        return ((out - y) ** 2).mean()
    logp = out - torch.logsumexp(out, dim=1, keepdim=True)
    return -(logp.gather(1, y.long().reshape(-1, 1))).mean()


def _ms_loss(out, y, loss):
    if loss == "mse":
        return ((out - y) ** 2).mean()
    logp = out - ops.logsumexp(out, 1, True)
    onehot = ops.one_hot(y, out.shape[1], 1.0, 0.0)
    return -(logp * onehot).sum(1).mean()


def _lrs(opt) -> List[float]:
    return [float(g["lr"]) for g in opt.param_groups]


def run_torch(ns: dict, data, loss: str):
    import torch
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny tensors: extra threads only wait on each other
    try:
        return _run_torch(ns, data, loss)
    finally:
        torch.set_num_threads(threads)


def _run_torch(ns: dict, data, loss: str):
    import torch
    torch.manual_seed(0)
    model = ns["make_model"]()
    init = {k: v.detach().cpu().numpy().copy() for k, v in model.state_dict().items()}
    model.train()
    opt = ns["make_optimizer"](model)
    sched = ns["make_scheduler"](opt) if "make_scheduler" in ns else None
    losses, lrs, last = [], [], []
    for x, y in data:
        opt.zero_grad()
        value = _torch_loss(model(torch.from_numpy(x)), torch.from_numpy(y), loss)
        value.backward()
        opt.step()
        if sched is not None:
            if "scheduler_step" in ns:
                ns["scheduler_step"](sched, value)
            else:
                sched.step()
            if hasattr(sched, "get_last_lr"):
                last.append([float(v) for v in sched.get_last_lr()])
        losses.append(float(value.item()))
        lrs.append(_lrs(opt))
    final = {k: v.detach().cpu().numpy() for k, v in model.state_dict().items()}
    return init, losses, lrs, last, final


def run_mindspore(mod, init: Dict[str, np.ndarray], data, loss: str, jit: bool):
    from msmigrate.weights import load_torch_state_dict

    model = mod.make_model()
    load_torch_state_dict(model, init, strict=True)
    model.set_train(True)
    opt = mod.make_optimizer(model)
    sched = mod.make_scheduler(opt) if hasattr(mod, "make_scheduler") else None

    def forward_fn(x, y):
        out = model(x)
        return _ms_loss(out, y, loss), out

    grad_fn = ms.value_and_grad(forward_fn, None, opt.parameters, has_aux=True)

    def train_step(*batch):
        (value, aux), grads = grad_fn(*batch)
        opt(grads)
        return value, aux

    step = ms.jit(train_step) if jit else train_step
    losses, lrs, last = [], [], []
    for x, y in data:
        value, _ = step(ms.Tensor(x), ms.Tensor(y))
        if sched is not None:
            if hasattr(mod, "scheduler_step"):
                mod.scheduler_step(sched, value)
            else:
                sched.step()
            if hasattr(sched, "get_last_lr"):
                got = sched.get_last_lr()
                assert all(isinstance(v, float) for v in got), f"get_last_lr() returned {got!r}, torch returns floats"
                last.append(list(got))
        losses.append(float(value.asnumpy()))
        lrs.append(_lrs(opt))
    return model, opt, losses, lrs, last


def _final_by_ms_name(model, torch_final: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    from msmigrate.weights import convert_state_dict
    mapped, _ = convert_state_dict(model, torch_final, strict=False)
    return mapped


def check_training(torch_src: str, steps: int = 5, loss: str = "mse", rtol: float = 1e-4, atol: float = 1e-6,
                   modes: Sequence[str] = ("pynative", "jit"), model_src: Optional[str] = MODEL_SRC,
                   lr_rtol: float = 1e-6):
    """Train the snippet's model in torch and, converted, in MindSpore (see the module docstring).
    Returns (converted code, sites, the torch per-step learning rates)."""
    src = (model_src or "") + torch_src
    ns = load_torch(src)
    mod, code, sites = load_converted(src)
    data = batches(steps, loss=loss)
    init, t_losses, t_lrs, t_last, t_final = run_torch(ns, data, loss)
    for mode in modes:
        # "graph": GRAPH_MODE set globally, as converted programs do, with the jit step
        ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
        try:
            model, opt, m_losses, m_lrs, m_last = run_mindspore(mod, init, data, loss, jit=(mode != "pynative"))
        finally:
            ms.set_context(mode=ms.PYNATIVE_MODE)
        np.testing.assert_allclose(np.array(m_lrs), np.array(t_lrs), rtol=lr_rtol, atol=0,
                                   err_msg=f"{mode}: param_groups[i]['lr'] after each step")
        if t_last:
            np.testing.assert_allclose(np.array(m_last), np.array(t_last), rtol=lr_rtol, atol=0,
                                       err_msg=f"{mode}: get_last_lr() after each step")
        np.testing.assert_allclose(m_losses, t_losses, rtol=rtol, atol=atol, err_msg=f"{mode}: per-step loss")
        expected = _final_by_ms_name(model, t_final)
        params = model.parameters_dict()
        assert expected and set(expected) <= set(params), (sorted(expected), sorted(params))
        for name, value in expected.items():
            np.testing.assert_allclose(params[name].asnumpy(), value, rtol=rtol, atol=atol,
                                       err_msg=f"{mode}: final value of {name}")
    return code, sites, t_lrs
