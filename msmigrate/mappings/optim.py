"""torch.optim optimizers and torch.optim.lr_scheduler schedules -> the torch-style classes emitted
in _ms_compat (templates/compat_parts/optim.py).

The optimizers there are mindspore.experimental.optim classes (torch's param_groups, a learning-rate
Parameter per group, `optimizer(grads)` as the update), which the converted train step uses as
    grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)
The emitted subclasses take torch's arguments unchanged and add what converted code relies on
(measured against torch in tests/parity/test_optim.py):
- `model.parameters()` became `_ms_compat.parameters(model)` (or `model.get_parameters()`, which also
  yields BatchNorm's moving statistics, requires_grad=False; weight decay would change them): the call
  is rewritten to `model.trainable_params()`, and the helper drops non-trainable Parameters from any
  other form;
- `group['lr'] = x` writes into the group's Parameter: a float put in its place would be baked
  into a step compiled with mindspore.jit;
- Adam/AdamW are computed as torch does: mindspore.experimental.optim.Adam adds eps before the bias
  correction (loss off by 3% after 15 steps at eps=1e-3) and ignores amsgrad (13%).
The schedules are computed in Python floats with torch's formulas and written into those Parameters
between steps (mindspore.experimental's schedulers accumulate float32 rounding, 3.7e-5 relative
after 3000 ExponentialLR steps, take 13-22 ms per step, return Tensors from get_last_lr, and lack
OneCycleLR and momentum cycling).

Measured here, why not the classic mindspore.nn optimizers (MLP with BatchNorm, 8 steps, jit):
nn.SGD(weight_decay=0.1) skips the BatchNorm gamma/beta -> loss off by 0.74%; nn.Adam(eps=1e-3)
adds eps before the bias correction -> 1.8% (at eps=1e-8: 6e-7); their learning_rate Parameter can
be changed with ops.assign, but they have no param_groups for torch code to use.
Only ops.assign (or Tensor.copy_) into a Parameter reaches a step compiled earlier: set_data,
assign_value and load_param_into_net swap the Parameter's memory, the compiled step keeps reading
the old one, and later ops.assign calls no longer reach it either.
"""
from __future__ import annotations

import libcst as cst

from ..records import DIFFERENCE, mapping, rule

T = "tests/parity/test_optim.py"
O = "torch.optim."
S = "torch.optim.lr_scheduler."

# torch implementation switches with no effect on the numbers
_IMPL_FLAGS = ("foreach", "fused", "capturable", "differentiable")
_IMPL_NOTE = ("foreach/fused/capturable/differentiable (torch kernel choices) are dropped: MindSpore "
              "compiles the update itself; differentiating through the optimizer step is not supported")


class _TrainableParams(cst.CSTTransformer):
    """`m.get_parameters()` (converted `m.parameters()`) -> `m.trainable_params()`."""

    def leave_Call(self, original, updated):
        func = updated.func
        if isinstance(func, cst.Attribute) and func.attr.value == "get_parameters":
            args = [a.with_changes(keyword=cst.Name("recurse"))
                    if a.keyword is not None and a.keyword.value == "expand" else a for a in updated.args]
            return updated.with_changes(func=func.with_changes(attr=cst.Name("trainable_params")), args=args)
        if (isinstance(func, cst.Attribute) and func.attr.value == "parameters" and isinstance(func.value, cst.Name)
                and func.value.value == "_ms_compat" and updated.args):
            # `_ms_compat.parameters(m, ...)` (converted `m.parameters(...)`)
            rest = [a.with_changes(keyword=cst.Name("recurse")) if a.keyword is not None else a
                    for a in updated.args[1:]]
            return cst.Call(func=cst.Attribute(value=updated.args[0].value, attr=cst.Name("trainable_params")),
                            args=rest)
        return updated


def _optimizer_rule(ctx):
    b = ctx.bound
    if b.has("params"):
        arg = b.args["params"]
        b.args["params"] = arg.with_changes(value=arg.value.visit(_TrainableParams()))
    for flag in _IMPL_FLAGS:
        b.remove(flag)
    ctx.tr.uses_compat = True
    return None


_optimizer_rule.handles_starred = True  # the helper classes take torch's keywords: **config passes through


def _optimizer(name, args, note, test=None, test_file=T):
    target_args = tuple(a for a in args if a not in _IMPL_FLAGS)
    rule(O + name, "_ms_compat." + name, args=args, target_args=target_args,
         note=note + "; model.parameters() -> model.trainable_params() (get_parameters() also yields "
                     "BatchNorm's moving statistics); " + _IMPL_NOTE,
         test=f"{test_file}::{test or 'test_' + name.lower()}")(_optimizer_rule)


_P = ("params", "lr")
_optimizer("SGD", _P + ("momentum", "dampening", "weight_decay", "nesterov", "maximize", "foreach",
                        "differentiable", "fused"),
           "mindspore.experimental.optim.SGD (same numbers as torch; momentum may be cycled by OneCycleLR/CyclicLR)")
_optimizer("Adam", _P + ("betas", "eps", "weight_decay", "amsgrad", "foreach", "maximize", "capturable",
                         "differentiable", "fused", "decoupled_weight_decay"),
           "computed as torch computes it (mindspore.experimental.optim.Adam adds eps before the bias "
           "correction and ignores amsgrad)")
_optimizer("AdamW", _P + ("betas", "eps", "weight_decay", "amsgrad", "maximize", "foreach", "capturable",
                          "differentiable", "fused"),
           "computed as torch computes it: decoupled weight decay, default weight_decay=0.01 (MindSpore's "
           "nn.AdamWeightDecay has no bias correction)")
_optimizer("RMSprop", _P + ("alpha", "eps", "weight_decay", "momentum", "centered", "capturable", "foreach",
                            "maximize", "differentiable"),
           "mindspore.experimental.optim.RMSprop (same numbers; torch's alpha/eps, not nn.RMSProp's "
           "decay=0.9/epsilon=1e-10)")
_optimizer("Adagrad", _P + ("lr_decay", "weight_decay", "initial_accumulator_value", "eps", "foreach",
                            "maximize", "differentiable", "fused"),
           "mindspore.experimental.optim.Adagrad (same numbers)")
_optimizer("Adadelta", _P + ("rho", "eps", "weight_decay", "foreach", "capturable", "maximize", "differentiable"),
           "mindspore.experimental.optim.Adadelta (same numbers)")
_optimizer("Adamax", _P + ("betas", "eps", "weight_decay", "foreach", "maximize", "differentiable", "capturable"),
           "mindspore.experimental.optim.Adamax (same numbers)")
_optimizer("NAdam", _P + ("betas", "eps", "weight_decay", "momentum_decay", "decoupled_weight_decay", "foreach",
                          "maximize", "capturable", "differentiable"),
           "mindspore.experimental.optim.NAdam (same numbers; decoupled_weight_decay and maximize added by the "
           "helper)")
_optimizer("RAdam", _P + ("betas", "eps", "weight_decay", "decoupled_weight_decay", "foreach", "maximize",
                          "capturable", "differentiable"),
           "mindspore.experimental.optim.RAdam (same numbers; decoupled_weight_decay and maximize added by the "
           "helper)")
_optimizer("ASGD", _P + ("lambd", "alpha", "t0", "weight_decay", "foreach", "maximize", "differentiable",
                         "capturable"),
           "mindspore.experimental.optim.ASGD (same numbers; the averaged parameters are in .ax)")
_optimizer("Rprop", _P + ("etas", "step_sizes", "capturable", "foreach", "maximize", "differentiable"),
           "mindspore.experimental.optim.Rprop (same numbers)")
_optimizer("LBFGS", _P + ("max_iter", "max_eval", "tolerance_grad", "tolerance_change", "history_size",
                          "line_search_fn"),
           "torch's algorithm written in the helper (MindSpore 2.10 has none: mindspore.scipy.optimize's LBFGS is a "
           "functional minimizer with another line search and no lr/max_eval): two-loop recursion, first step "
           "lr * min(1, 1/|g|_1), strong_wolfe line search, torch's stopping rules; optimizer.step(closure) runs "
           "the converted closure, which returns (loss, gradients) (msmigrate/step_closure.py)",
           test_file="tests/parity/test_optim_closure.py")

mapping(O + "Optimizer", "mindspore.experimental.optim.Optimizer", args=("params", "defaults"),
        target_args=("params", "defaults"), status=DIFFERENCE,
        note="the base class of the converted optimizers (isinstance checks hold); a torch optimizer written "
             "by hand (step() changing p.grad-driven values in place) must be rewritten as "
             "construct(self, gradients) updating the Parameters with ops.assign",
        test=f"{T}::test_optimizer_base_and_namespace")
for _name, _why in (
        ("SparseAdam", "no sparse-gradient Adam in mindspore.experimental.optim"),
        ("Adafactor", "no Adafactor in mindspore.experimental.optim 2.10 (mindspore.nn.AdaFactor "
                      "follows the paper, not torch's variant)"),
        ("Muon", "no Muon optimizer in MindSpore 2.10")):
    mapping(O + _name, None, note=_why)

# torch.optim / torch.optim.lr_scheduler used as values (getattr(torch.optim, cfg.name))
mapping("torch.optim", "_ms_compat.optim_module", test=f"{T}::test_optimizer_base_and_namespace",
        note="a namespace holding the converted optimizers and lr_scheduler")
mapping("torch.optim.lr_scheduler", "_ms_compat.lr_scheduler_module", test=f"{T}::test_optimizer_base_and_namespace",
        note="a namespace holding the converted schedules")


# ------------------------------------------------------------------ schedules
_SCHED_NOTE = ("computed in Python floats with torch's formulas; each step() writes the learning rates into "
               "the optimizer's Parameters, which the compiled train step reads (no recompilation); "
               "get_last_lr() returns floats")


def _scheduler(name, args, test, note=""):
    mapping(S + name, "_ms_compat." + name, args=args + ("verbose",), target_args=args, drop=("verbose",),
            note=(note + "; " if note else "") + _SCHED_NOTE + "; verbose (removed in torch 2.7) is dropped",
            test=f"{T}::{test}")


_OPT = ("optimizer",)
_LAST = ("last_epoch",)
_scheduler("StepLR", _OPT + ("step_size", "gamma") + _LAST, "test_schedules")
_scheduler("MultiStepLR", _OPT + ("milestones", "gamma") + _LAST, "test_schedules")
_scheduler("ExponentialLR", _OPT + ("gamma",) + _LAST, "test_schedules")
_scheduler("CosineAnnealingLR", _OPT + ("T_max", "eta_min") + _LAST, "test_schedules")
_scheduler("LambdaLR", _OPT + ("lr_lambda",) + _LAST, "test_schedules",
           "lr_lambda gets torch's integer epoch")
_scheduler("MultiplicativeLR", _OPT + ("lr_lambda",) + _LAST, "test_schedules")
_scheduler("LinearLR", _OPT + ("start_factor", "end_factor", "total_iters") + _LAST, "test_schedules")
_scheduler("ConstantLR", _OPT + ("factor", "total_iters") + _LAST, "test_schedules")
_scheduler("PolynomialLR", _OPT + ("total_iters", "power") + _LAST, "test_schedules")
_scheduler("CosineAnnealingWarmRestarts", _OPT + ("T_0", "T_mult", "eta_min") + _LAST, "test_schedules",
           "step(epoch + i / iters) with fractional epochs works as in torch")
_scheduler("SequentialLR", _OPT + ("schedulers", "milestones") + _LAST, "test_sequential_and_chained")
mapping(S + "ChainedScheduler", "_ms_compat.ChainedScheduler", args=("schedulers", "optimizer"),
        target_args=("schedulers", "optimizer"), note=_SCHED_NOTE, test=f"{T}::test_sequential_and_chained")
_scheduler("ReduceLROnPlateau", _OPT + ("mode", "factor", "patience", "threshold", "threshold_mode", "cooldown",
                                        "min_lr", "eps"), "test_reduce_lr_on_plateau",
           "step(metric) takes a float or a 0-d Tensor")
_MOMENTUM_NOTE = ("cycle_momentum (on by default) cycles SGD's momentum or Adam/AdamW's beta1 through a "
                  "Parameter, as torch does; with another optimizer it raises MigrationError at construction "
                  "(pass cycle_momentum=False to keep momentum fixed)")
_scheduler("CyclicLR", _OPT + ("base_lr", "max_lr", "step_size_up", "step_size_down", "mode", "gamma", "scale_fn",
                               "scale_mode", "cycle_momentum", "base_momentum", "max_momentum") + _LAST,
           "test_cyclic_schedules", _MOMENTUM_NOTE)
_scheduler("OneCycleLR", _OPT + ("max_lr", "total_steps", "epochs", "steps_per_epoch", "pct_start",
                                 "anneal_strategy", "cycle_momentum", "base_momentum", "max_momentum", "div_factor",
                                 "final_div_factor", "three_phase") + _LAST,
           "test_cyclic_schedules", "not in mindspore.experimental; " + _MOMENTUM_NOTE)
for _base in ("LRScheduler", "_LRScheduler"):
    mapping(S + _base, "_ms_compat.LRScheduler", args=_OPT + _LAST, target_args=_OPT + _LAST,
            note="a subclass's get_lr() runs as in torch (self.last_epoch, self.base_lrs, group['lr'] as "
                 "Python floats)", test=f"{T}::test_custom_scheduler_subclass")


# torch.optim.swa_utils: weight averaging (SWA, EMA) -> templates/compat_parts/swa_utils.py
_SWA = "torch.optim.swa_utils."
_SWA_TEST = "tests/test_weight_averaging.py"
mapping(_SWA + "AveragedModel", "_ms_compat.AveragedModel",
        args=("model", "device", "avg_fn", "multi_avg_fn", "use_buffers"),
        target_args=("model", "device", "avg_fn", "multi_avg_fn", "use_buffers"),
        note="a Cell holding a deep copy of the model as `module`; update_parameters() writes the averages into its "
             "Parameters (ops.assign), as torch's in-place copy/lerp", test=f"{_SWA_TEST}::test_averaged_model")
for _name, _args in (("get_ema_multi_avg_fn", ("decay",)), ("get_swa_multi_avg_fn", ()),
                     ("get_ema_avg_fn", ("decay",)), ("get_swa_avg_fn", ())):
    mapping(_SWA + _name, f"_ms_compat.{_name}", args=_args, target_args=_args,
            test=f"{_SWA_TEST}::test_averaged_model")
mapping(_SWA + "update_bn", "_ms_compat.update_bn", args=("loader", "model", "device"),
        target_args=("loader", "model", "device"), status=DIFFERENCE,
        note="the cumulative average of the BatchNorm statistics over the loader, torch's; its batches run op by op "
             "(PYNATIVE) whatever the mode", test=f"{_SWA_TEST}::test_averaged_model")
