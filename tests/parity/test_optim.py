"""Parity of torch.optim optimizers and torch.optim.lr_scheduler schedules with their conversions
(records in msmigrate/mappings/optim.py, helpers in templates/compat_parts/optim.py).

Every case trains the same small MLP (BatchNorm1d, Linear, ReLU, Linear) for several steps in torch
and, converted, in MindSpore (PyNative and mindspore.jit), and compares the per-step losses, the
learning rates after every step and the final weights (train_harness.check_training).
"""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from msmigrate.registry import CONVERTED, DIFFERENCE, TODO  # noqa: E402

from .harness import load_converted  # noqa: E402
from .train_harness import MODEL_SRC, check_training  # noqa: E402

OK = (CONVERTED, DIFFERENCE)
BOTH = ("pynative", "jit")
# the schedules are plain Python between steps: what matters is that the compiled step sees the
# learning rates they write, so most schedule cases run the jit step only (runtime stays modest)
JIT = ("jit",)
ALL = ("pynative", "jit", "graph")  # graph: GRAPH_MODE set globally, as converted programs do


def optimizer_src(expr: str, extra: str = "") -> str:
    return f"\nimport torch.optim as optim\n{extra}\n\ndef make_optimizer(model):\n    return {expr}\n"


def assert_no_todo(sites, *apis):
    todos = [(s.api, s.note) for s in sites if s.status == TODO]
    assert not todos, todos
    seen = {s.api: s.status for s in sites}
    for api in apis:
        assert seen.get(api) in OK, (api, seen)


def cases(*exprs, both=(0,), graph=()):
    """Parametrize optimizer expressions: those at the `both` positions train in PyNative and under
    jit, those at the `graph` positions also with GRAPH_MODE set globally, the others under jit only
    (the MindSpore update code is the same; runtime stays modest)."""
    return [pytest.param(e, ALL if i in graph else BOTH if i in both else JIT, id=e) for i, e in enumerate(exprs)]


def run_optimizer(expr, modes, steps=5, loss="mse", extra=""):
    code, sites, _ = check_training(optimizer_src(expr, extra), steps=steps, loss=loss, modes=modes)
    name = expr.split("(")[0].split(".")[-1]
    assert_no_todo(sites, "torch.optim." + name)
    return code


# ------------------------------------------------------------------ optimizers
@pytest.mark.parametrize("expr,modes", cases(
    "optim.SGD(model.parameters(), lr=0.1)",
    "optim.SGD(model.parameters(), 0.1, 0.9)",
    "optim.SGD(model.parameters(), lr=0.1, momentum=0.9, dampening=0.1, weight_decay=1e-2)",
    "optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4, foreach=False)",
    "optim.SGD(model.parameters(), lr=0.01, maximize=True)",
    "torch.optim.SGD(model.parameters())",
))
def test_sgd(expr, modes):
    code = run_optimizer(expr, modes)
    assert "model.trainable_params()" in code and "foreach" not in code, code


@pytest.mark.parametrize("expr,loss", [
    ("optim.Adam(model.parameters(), lr=1e-2)", "mse"),
    ("optim.Adam(model.parameters(), lr=1e-2, eps=1e-3, weight_decay=0.1)", "ce"),
    ("optim.Adam(model.parameters(), lr=1e-2, betas=(0.8, 0.5), amsgrad=True)", "mse"),
    ("optim.Adam(model.parameters(), 1e-2, maximize=True, foreach=False, capturable=False)", "mse"),
    ("optim.Adam(model.parameters(), lr=1e-2, weight_decay=0.1, decoupled_weight_decay=True)", "mse"),
])
def test_adam(expr, loss):
    # msmigrate's own Adam (not a MindSpore class): every case in both modes
    run_optimizer(expr, ALL if loss == "ce" else BOTH, steps=6, loss=loss)


@pytest.mark.parametrize("expr,modes", cases(
    "optim.AdamW(model.parameters(), lr=1e-2)",
    "optim.AdamW(model.parameters(), lr=2e-2, betas=(0.9, 0.9), weight_decay=0.5, amsgrad=True, fused=None)",
    both=(0, 1),
))
def test_adamw(expr, modes):
    run_optimizer(expr, modes, steps=6)


@pytest.mark.parametrize("expr,modes", cases(
    "optim.RMSprop(model.parameters())",
    "optim.RMSprop(model.parameters(), lr=1e-2, alpha=0.9, eps=1e-6, weight_decay=0.1, momentum=0.9, centered=True)",
))
def test_rmsprop(expr, modes):
    run_optimizer(expr, modes)


@pytest.mark.parametrize("expr,modes", cases(
    "optim.Adagrad(model.parameters())",
    "optim.Adagrad(model.parameters(), lr=0.1, lr_decay=0.1, weight_decay=0.1, initial_accumulator_value=0.1)",
))
def test_adagrad(expr, modes):
    run_optimizer(expr, modes)


@pytest.mark.parametrize("expr,modes", cases(
    "optim.Adadelta(model.parameters())",
    "optim.Adadelta(model.parameters(), lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.1)",
))
def test_adadelta(expr, modes):
    run_optimizer(expr, modes)


@pytest.mark.parametrize("expr,modes", cases(
    "optim.Adamax(model.parameters())",
    "optim.Adamax(model.parameters(), lr=1e-2, betas=(0.8, 0.9), weight_decay=0.1)",
))
def test_adamax(expr, modes):
    run_optimizer(expr, modes)


@pytest.mark.parametrize("expr,modes", cases(
    "optim.NAdam(model.parameters(), lr=1e-2)",
    "optim.NAdam(model.parameters(), lr=1e-2, weight_decay=0.1, momentum_decay=1e-2)",
    "optim.NAdam(model.parameters(), lr=1e-2, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)",
    both=(0,), graph=(2,),
))
def test_nadam(expr, modes):
    run_optimizer(expr, modes)


@pytest.mark.parametrize("expr,modes", cases(
    "optim.RAdam(model.parameters(), lr=1e-2)",
    # beta2=0.9 reaches the rectified update (rho_t > 5) from the third step
    "optim.RAdam(model.parameters(), lr=1e-2, betas=(0.9, 0.9), weight_decay=0.1)",
    "optim.RAdam(model.parameters(), lr=1e-2, betas=(0.9, 0.9), weight_decay=0.1, decoupled_weight_decay=True)",
    both=(0,), graph=(2,),
))
def test_radam(expr, modes):
    run_optimizer(expr, modes, steps=7)


@pytest.mark.parametrize("expr,modes", cases(
    "optim.ASGD(model.parameters())",
    "optim.ASGD(model.parameters(), lr=0.05, lambd=0.01, alpha=0.5, t0=2, weight_decay=0.1)",
))
def test_asgd(expr, modes):
    run_optimizer(expr, modes)


@pytest.mark.parametrize("expr,modes", cases(
    "optim.Rprop(model.parameters())",
    "optim.Rprop(model.parameters(), lr=0.02, etas=(0.3, 1.5), step_sizes=(1e-4, 0.05))",
))
def test_rprop(expr, modes):
    run_optimizer(expr, modes)


PARAM_GROUPS = [
    # per-group lr / weight_decay; BatchNorm's parameters are in no group and must not move
    '''optim.SGD([{"params": model[1].parameters(), "lr": 0.05, "weight_decay": 0.1},
                  {"params": model[3].parameters()}], lr=0.1, momentum=0.9)''',
    # the usual decay / no-decay split; MindSpore's named parameters also list BatchNorm's moving
    # statistics (ndim 1, requires_grad=False): the optimizer must leave them out
    '''optim.AdamW(split(model), lr=1e-2)''',
    # frozen first Linear
    '''optim.Adam(filter(lambda p: p.requires_grad, freeze_first(model).parameters()), lr=1e-2)''',
    # torch 2.x accepts named parameters
    '''optim.SGD(model.named_parameters(), lr=0.1, momentum=0.5)''',
    '''optim.RMSprop([{"params": model[1].parameters(), "lr": 1e-3}, {"params": model[0].parameters()},
                      {"params": model[3].parameters(), "momentum": 0.5}], lr=1e-2)''',
]
GROUP_HELPERS = '''
def split(model):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if p.ndim == 1:
            no_decay.append(p)
        else:
            decay.append(p)
    return [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}]


def freeze_first(model):
    for p in model[1].parameters():
        p.requires_grad = False
    return model
'''


@pytest.mark.parametrize("expr", PARAM_GROUPS, ids=["sgd-groups", "adamw-decay-split", "frozen", "named",
                                                    "rmsprop-groups"])
def test_param_groups(expr):
    modes = BOTH if expr == PARAM_GROUPS[0] else JIT
    code, sites, _ = check_training(optimizer_src(expr, GROUP_HELPERS), steps=4, modes=modes)
    assert_no_todo(sites)


def test_config_kwargs_pass_through():
    """optim.X(params, **config): the helper classes take torch's keywords, so they pass unchanged."""
    code = run_optimizer("optim.SGD(model.parameters(), **CONFIG)", JIT,
                         extra='CONFIG = {"lr": 0.1, "momentum": 0.9, "nesterov": True}')
    assert "_ms_compat.SGD(model.trainable_params(), **CONFIG)" in code, code


def test_optimizer_base_and_namespace():
    """torch.optim.Optimizer (isinstance) and the torch.optim / lr_scheduler modules used as values."""
    src = optimizer_src('getattr(torch.optim, "Adam")(model.parameters(), lr=1e-2)') + '''

def make_scheduler(opt):
    assert isinstance(opt, torch.optim.Optimizer)
    return getattr(torch.optim.lr_scheduler, "StepLR")(opt, 2, gamma=0.5)
'''
    code, sites, _ = check_training(src, steps=4)
    assert_no_todo(sites, "torch.optim", "torch.optim.lr_scheduler", "torch.optim.Optimizer")
    assert "_ms_compat.optim_module" in code and "ms.experimental.optim.Optimizer" in code, code


# ------------------------------------------------------------------ schedules
def schedule_src(optimizer: str, scheduler: str, step: str = "", extra: str = "") -> str:
    src = optimizer_src(optimizer, extra) + f"\n\ndef make_scheduler(opt):\n    return {scheduler}\n"
    if step:
        src += f"\n\ndef scheduler_step(sched, loss):\n    {step}\n"
    return src


SGD = "optim.SGD(model.parameters(), lr=0.1, momentum=0.9)"
LR = "torch.optim.lr_scheduler."
SCHEDULES = [
    (LR + "StepLR(opt, step_size=2, gamma=0.5)", ""),
    (LR + "MultiStepLR(opt, milestones=[2, 5, 5], gamma=0.3)", ""),
    (LR + "MultiStepLR(opt, (3, 6))", ""),
    (LR + "ExponentialLR(opt, gamma=0.8)", ""),
    (LR + "CosineAnnealingLR(opt, T_max=4, eta_min=0.01)", ""),
    (LR + "LambdaLR(opt, lambda epoch: 0.5 ** (epoch // 2))", ""),
    (LR + "LambdaLR(opt, lr_lambda=[lambda e: 1.0 / (e + 1)])", ""),
    (LR + "MultiplicativeLR(opt, lambda epoch: 0.9)", ""),
    (LR + "LinearLR(opt, start_factor=0.25, total_iters=4)", ""),
    (LR + "ConstantLR(opt, factor=0.5, total_iters=3)", ""),
    (LR + "PolynomialLR(opt, total_iters=6, power=2.0)", ""),
    (LR + "CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2, eta_min=0.001)", ""),
    # torch's documented pattern: step(epoch + i / iters) with fractional epochs
    ("start(" + LR + "CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2))",
     'COUNT["i"] += 1\n    sched.step(COUNT["i"] / 3)'),
]
COUNTER = '''
COUNT = {"i": 0}


def start(sched):
    COUNT["i"] = 0
    return sched
'''


def _api(expr):
    return LR + expr.split(LR)[1].split("(")[0]


@pytest.mark.parametrize("scheduler,step", SCHEDULES, ids=[f"{_api(s).split('.')[-1]}{i}"
                                                           for i, (s, _) in enumerate(SCHEDULES)])
def test_schedules(scheduler, step):
    code, sites, lrs = check_training(schedule_src(SGD, scheduler, step, COUNTER), steps=9, modes=JIT)
    assert_no_todo(sites, _api(scheduler))
    assert len({round(v[0], 9) for v in lrs}) > 1, "the schedule should change the learning rate"


CYCLIC = [
    (SGD, "OneCycleLR(opt, max_lr=0.5, total_steps=10)"),
    ("optim.SGD(model.parameters(), lr=0.1)", "OneCycleLR(opt, max_lr=[0.3], total_steps=10, pct_start=0.4)"),
    ("optim.Adam(model.parameters(), lr=1e-2)",
     "OneCycleLR(opt, max_lr=0.05, total_steps=10, anneal_strategy='linear', three_phase=True)"),
    ("optim.AdamW(model.parameters())", "OneCycleLR(opt, 0.05, epochs=2, steps_per_epoch=5, cycle_momentum=False)"),
    (SGD, "CyclicLR(opt, base_lr=0.01, max_lr=0.2, step_size_up=2, mode='triangular2')"),
    ("optim.Adam(model.parameters(), lr=1e-2)",
     "CyclicLR(opt, 0.001, 0.05, step_size_up=2, step_size_down=3, mode='exp_range', gamma=0.9)"),
    ("optim.RMSprop(model.parameters(), momentum=0.5)",
     "CyclicLR(opt, 0.001, 0.01, step_size_up=3, scale_fn=lambda x: 0.8 ** x, cycle_momentum=False)"),
]


@pytest.mark.parametrize("optimizer,scheduler", CYCLIC, ids=[f"{o.split('(')[0]}-{s.split('(')[0]}{i}"
                                                             for i, (o, s) in enumerate(CYCLIC)])
def test_cyclic_schedules(optimizer, scheduler):
    """OneCycleLR/CyclicLR, including momentum (SGD) and beta1 (Adam) cycling, under jit too."""
    modes = JIT if "cycle_momentum=False" in scheduler else ALL if "OneCycleLR" in scheduler else BOTH
    code, sites, _ = check_training(schedule_src(optimizer, "torch.optim.lr_scheduler." + scheduler), steps=10,
                                    modes=modes)
    assert_no_todo(sites, "torch.optim.lr_scheduler." + scheduler.split("(")[0])


def test_cycle_momentum_needs_runtime_momentum():
    """An optimizer that compiles momentum into its update cannot have it cycled: a clear error."""
    from _ms_compat import MigrationError  # emitted next to the converted snippets
    src = MODEL_SRC + schedule_src("optim.RMSprop(model.parameters(), momentum=0.5)",
                                   "torch.optim.lr_scheduler.CyclicLR(opt, 0.001, 0.01)")
    mod, code, sites = load_converted(src)
    opt = mod.make_optimizer(mod.make_model())
    with pytest.raises(MigrationError, match="cycle_momentum=False"):
        mod.make_scheduler(opt)


SEQUENTIAL = [
    ("SequentialLR(opt, [LinearLR(opt, start_factor=0.1, total_iters=3), CosineAnnealingLR(opt, T_max=5)], "
     "milestones=[3])"),
    "SequentialLR(opt, [ConstantLR(opt, 0.5, total_iters=2), MultiStepLR(opt, [4, 6], 0.5)], [2])",
    "SequentialLR(opt, [LinearLR(opt, 0.2, total_iters=2), ExponentialLR(opt, 0.9), StepLR(opt, 2)], [2, 5])",
    "ChainedScheduler([ExponentialLR(opt, gamma=0.9), StepLR(opt, step_size=3, gamma=0.5)])",
]


@pytest.mark.parametrize("scheduler", SEQUENTIAL, ids=["warmup-cosine", "constant-multistep", "three", "chained"])
def test_sequential_and_chained(scheduler):
    extra = "from torch.optim.lr_scheduler import *"
    src = schedule_src("optim.Adam(model.parameters(), lr=1e-2)", scheduler, extra=extra)
    src = src.replace(extra, "from torch.optim.lr_scheduler import (SequentialLR, ChainedScheduler, LinearLR, "
                             "CosineAnnealingLR, ConstantLR, MultiStepLR, ExponentialLR, StepLR)")
    code, sites, _ = check_training(src, steps=9, modes=JIT)
    assert_no_todo(sites, "torch.optim.lr_scheduler." + scheduler.split("(")[0])


PLATEAU = [
    ("ReduceLROnPlateau(opt, patience=1, factor=0.5)", "sched.step(1.0)"),
    ("ReduceLROnPlateau(opt, 'max', factor=0.5, patience=0, threshold=0.5, threshold_mode='abs', cooldown=1, "
     "min_lr=0.02)", "sched.step(loss.item())"),
    ("ReduceLROnPlateau(opt, mode='min', factor=0.2, patience=0, threshold=0.0, min_lr=[0.001], eps=1e-3)",
     "sched.step(-loss)"),
]


@pytest.mark.parametrize("scheduler,step", PLATEAU, ids=["constant-metric", "max-abs-cooldown", "tensor-metric"])
def test_reduce_lr_on_plateau(scheduler, step):
    src = schedule_src(SGD, "torch.optim.lr_scheduler." + scheduler, step)
    code, sites, lrs = check_training(src, steps=8, modes=JIT)
    assert_no_todo(sites, "torch.optim.lr_scheduler.ReduceLROnPlateau")
    assert lrs[-1][0] < lrs[0][0], lrs


CUSTOM = '''

class Warmup(torch.optim.lr_scheduler.LRScheduler):
    def __init__(self, optimizer, warmup, last_epoch=-1):
        self.warmup = warmup
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [base * min(1.0, (self.last_epoch + 1) / self.warmup) for base in self.base_lrs]


class Halving(torch.optim.lr_scheduler._LRScheduler):
    def get_lr(self):
        if self.last_epoch == 0:
            return [group["lr"] for group in self.optimizer.param_groups]
        return [group["lr"] * 0.5 for group in self.optimizer.param_groups]
'''


@pytest.mark.parametrize("scheduler", ["Warmup(opt, 4)", "Halving(opt)"])
def test_custom_scheduler_subclass(scheduler):
    src = schedule_src("optim.Adam(model.parameters(), lr=1e-2)", scheduler, extra=CUSTOM)
    code, sites, lrs = check_training(src, steps=6, modes=JIT)
    assert_no_todo(sites, "torch.optim.lr_scheduler.LRScheduler" if "Warm" in scheduler
                   else "torch.optim.lr_scheduler._LRScheduler")
    assert len({v[0] for v in lrs}) > 2


def test_manual_lr_edit_reaches_compiled_step():
    """`group['lr'] = ...` between steps (a hand-written schedule) is seen by the jit-compiled step."""
    src = optimizer_src("optim.SGD([{'params': model[1].parameters()}, {'params': model[3].parameters()}], "
                        "lr=0.1, momentum=0.9)") + '''

def make_scheduler(opt):
    return opt


def scheduler_step(opt, loss):
    for group in opt.param_groups:
        group["lr"] = group["lr"] * 0.5
    opt.param_groups[1]["lr"] = 0.3
    LOG.append(f"lr {opt.param_groups[0]['lr']:.5f}")  # torch code formats it: a float, not a Tensor


LOG = []
'''
    code, sites, lrs = check_training(src, steps=5, modes=ALL)
    assert lrs[-1] == [0.1 * 0.5 ** 5, 0.3], lrs
    mod, _, _ = load_converted(MODEL_SRC + src)
    assert mod.LOG[-1] == "lr 0.00313" and len(mod.LOG) == 15, mod.LOG  # the three runs
