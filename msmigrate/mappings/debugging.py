"""Debugging and profiling: torch.profiler, anomaly detection, module and tensor hooks.

Checked with MindSpore 2.10 on CPU (tests/parity/test_debugging.py):
- mindspore.profiler.profile / schedule / tensorboard_trace_handler / ProfilerActivity exist and
  run on CPU; the schedule has torch's wait/warmup/active/repeat/skip_first rule, step() and
  step_num. MindSpore calls on_trace_ready with its ProfilerInterface class (not the profiler),
  starts profiling at construction (torch at `with`/start()), writes results only when a
  handler analyses them, and its profiler object has no key_averages/export_chrome_trace:
  _ms_compat.Profile (templates/compat_parts/debugging.py) closes those gaps.
- no public record_function: mindspore.profiler.mstx ranges are Ascend-only.
- Cell.register_forward_hook / register_forward_pre_hook / register_backward_hook /
  register_backward_pre_hook and Tensor.register_hook have torch's signatures and return a
  handle with remove(). Cell hooks fire in PYNATIVE mode only: under GRAPH mode they are
  silently never called. A Tensor hook inside a compiled graph changes the gradient but its
  Python side effects (appending to a list) do not happen.
- no anomaly mode: mindspore.amp.all_finite(grads) / ops.isfinite check values by hand.
"""
from __future__ import annotations

from ..records import DIFFERENCE, mapping
from ..records import DROPPED_CONTEXTS

T = "tests/parity/test_debugging.py"

# ------------------------------------------------------------------ torch.profiler
_PROFILE_ARGS = ("activities", "schedule", "on_trace_ready", "record_shapes", "profile_memory", "with_stack",
                 "with_flops", "with_modules", "experimental_config", "execution_trace_observer", "acc_events",
                 "use_cuda", "custom_trace_id_callback")
_PROFILE_NOTE = ("_ms_compat.Profile, a mindspore.profiler.profile that starts at `with`/start() as torch's does "
                 "and calls on_trace_ready with itself. Results are MindSpore's: a <host>_<pid>_<time>_ascend_ms "
                 "folder under the tensorboard_trace_handler directory (./ms_profiler without one) holding "
                 "ASCEND_PROFILER_OUTPUT/trace_view.json and FRAMEWORK/cpu_op_*.csv; key_averages().table() lists "
                 "MindSpore kernels (MatMul, BiasAdd...) not aten:: ops, with host times only on CPU; "
                 "export_chrome_trace copies trace_view.json (a JSON event list, no 'traceEvents' key). "
                 "record_shapes/profile_memory/with_stack take effect on Ascend only; with_flops/with_modules "
                 "have no counterpart")
for _src in ("torch.profiler.profile", "torch.profiler.profiler.profile"):
    mapping(_src, "_ms_compat.Profile", args=_PROFILE_ARGS, drop=("experimental_config", "execution_trace_observer",
                                                                  "custom_trace_id_callback"),
            status=DIFFERENCE, note=_PROFILE_NOTE, test=f"{T}::test_profiler_schedule_and_handler")
mapping("torch.autograd.profiler.profile", "_ms_compat.Profile",
        args=("enabled", "use_cuda", "use_device", "record_shapes", "with_flops", "profile_memory", "with_stack",
              "with_modules", "use_kineto", "use_cpu", "experimental_config", "acc_events",
              "custom_trace_id_callback"),
        drop=("use_kineto", "use_cpu", "experimental_config", "custom_trace_id_callback"), status=DIFFERENCE,
        note="the legacy autograd profiler: " + _PROFILE_NOTE, test=f"{T}::test_autograd_profiler_table")
mapping("torch.profiler.schedule", "mindspore.profiler.schedule",
        args=("wait", "warmup", "active", "repeat", "skip_first", "skip_first_wait"),
        unsupported={"skip_first_wait": "mindspore.profiler.schedule has no skip_first_wait"},
        unsupported_ok={"skip_first_wait": ("0", "False")},
        note="the same wait/warmup/active/repeat/skip_first cycle (keyword arguments in both)",
        test=f"{T}::test_profiler_schedule_and_handler")
mapping("torch.profiler.tensorboard_trace_handler", "_ms_compat.tensorboard_trace_handler",
        args=("dir_name", "worker_name", "use_gzip"), target_args=("dir_name", "worker_name", "use_gzip"),
        status=DIFFERENCE,
        note="MindSpore analyses the recording into dir_name/<worker>_<pid>_<time>_ascend_ms "
             "(ASCEND_PROFILER_OUTPUT/trace_view.json for chrome://tracing or Perfetto, MindStudio Insight), "
             "not torch's <worker>.pt.trace.json for TensorBoard's profiler plugin; use_gzip has no counterpart",
        test=f"{T}::test_profiler_schedule_and_handler")
for _src in ("torch.profiler.ProfilerActivity", "torch.autograd.ProfilerActivity"):
    mapping(_src, "_ms_compat.ProfilerActivity", note="CPU as in torch; CUDA means the accelerator MindSpore runs on",
            test=f"{T}::test_profiler_schedule_and_handler")
    mapping(f"{_src}.CPU", "_ms_compat.ProfilerActivity.CPU", note="mindspore.profiler.ProfilerActivity.CPU",
            test=f"{T}::test_profiler_schedule_and_handler")
    mapping(f"{_src}.CUDA", "_ms_compat.ProfilerActivity.CUDA", status=DIFFERENCE,
            note="becomes mindspore.profiler.ProfilerActivity.GPU, or .NPU on Ascend, when the profiler starts; "
                 "dropped on a CPU run", test=f"{T}::test_profiler_schedule_and_handler")
_RANGE_NOTE = ("profiler ranges are not carried over: MindSpore 2.10 has no public record_function "
               "(mindspore.profiler.mstx.range_start/range_end mark ranges on Ascend only); a `with` line is "
               "removed, other uses become _ms_compat.record_function, which marks nothing")
for _src in ("torch.profiler.record_function", "torch.autograd.profiler.record_function"):
    mapping(_src, "_ms_compat.record_function", args=("name", "args"), target_args=("name", "args"),
            status=DIFFERENCE, note=_RANGE_NOTE, test=f"{T}::test_profiler_schedule_and_handler")
    DROPPED_CONTEXTS[_src] = _RANGE_NOTE
mapping("torch.profiler.ProfilerAction", None,
        note="a custom schedule callable must return mindspore.profiler.schedule.ProfilerAction members "
             "(NONE, WARM_UP, RECORD, RECORD_AND_SAVE)")
mapping("torch.autograd.profiler.emit_nvtx", None,
        note="NVTX ranges for Nsight: MindSpore has none; profile with mindspore.profiler.profile")

# ------------------------------------------------------------------ anomaly detection
_ANOMALY = ("MindSpore 2.10 has no anomaly mode (no backward traceback, no NaN check per op): removed. To find "
            "NaN/Inf, check values yourself: mindspore.amp.all_finite(grads) on the gradients in the train step, "
            "ops.isfinite(t).all() on a tensor, or dump the suspect layers' tensors (msmigrate dump-config)")
mapping("torch.autograd.set_detect_anomaly", "drop", args=("mode", "check_nan"), status=DIFFERENCE,
        note=_ANOMALY, test=f"{T}::test_anomaly_detection_removed")
mapping("torch.autograd.detect_anomaly", "drop", args=("check_nan",), status=DIFFERENCE, note=_ANOMALY,
        test=f"{T}::test_anomaly_detection_removed")
mapping("torch.is_anomaly_enabled", "expr:False", note="MindSpore has no anomaly mode",
        test=f"{T}::test_anomaly_detection_removed")
for _src in ("torch.autograd.detect_anomaly", "torch.autograd.set_detect_anomaly",
             "torch.autograd.anomaly_mode.detect_anomaly", "torch.autograd.anomaly_mode.set_detect_anomaly"):
    DROPPED_CONTEXTS[_src] = _ANOMALY

# ------------------------------------------------------------------ hooks
_GRAPH = ("MindSpore calls Cell hooks in PYNATIVE mode only: under GRAPH mode (set at the top of converted "
          "programs) the hook is silently never called, so the helper warns; switch to "
          "ms.set_context(mode=ms.PYNATIVE_MODE) while you need it. ")
mapping("Module.register_forward_hook", "_ms_compat.register_forward_hook",
        args=("hook", "prepend", "with_kwargs", "always_call"),
        target_args=("cell", "hook"), status=DIFFERENCE,
        note=_GRAPH + "Same signature hook(cell, args, output); a returned value replaces the output; "
                      "handle.remove() works", test=f"{T}::test_forward_hooks_capture_and_modify")
mapping("Module.register_forward_pre_hook", "_ms_compat.register_forward_pre_hook",
        args=("hook", "prepend", "with_kwargs"), target_args=("cell", "hook"), status=DIFFERENCE,
        note=_GRAPH + "Same signature hook(cell, args); a returned value replaces the inputs",
        test=f"{T}::test_forward_hooks_capture_and_modify")
mapping("Module.register_full_backward_hook", "_ms_compat.register_backward_hook", args=("hook", "prepend"),
        target_args=("cell", "hook"), status=DIFFERENCE,
        note=_GRAPH + "Cell.register_backward_hook: hook(cell, grad_input, grad_output), called while "
                      "mindspore.grad/value_and_grad differentiate through the cell; prepend is ignored",
        test=f"{T}::test_backward_hooks_see_torch_gradients")
mapping("Module.register_backward_hook", "_ms_compat.register_backward_hook", args=("hook",),
        target_args=("cell", "hook"), status=DIFFERENCE,
        note=_GRAPH + "torch's deprecated hook reported the gradients of the module's last operation; "
                      "MindSpore's has register_full_backward_hook's meaning (gradients of the cell's inputs "
                      "and outputs)", test=f"{T}::test_backward_hooks_see_torch_gradients")
mapping("Module.register_full_backward_pre_hook", "_ms_compat.register_backward_pre_hook",
        args=("hook", "prepend"), target_args=("cell", "hook"), status=DIFFERENCE,
        note=_GRAPH + "Cell.register_backward_pre_hook: hook(cell, grad_output)",
        test=f"{T}::test_backward_hooks_see_torch_gradients")
mapping("Tensor.register_hook", "method:register_hook", args=("hook",), target_args=("hook",),
        status=DIFFERENCE,
        note="hook(grad) -> None or a new gradient, applied while mindspore.grad/value_and_grad run. Inside a "
             "GRAPH-mode (compiled) step the returned gradient is used, but the hook's Python side effects "
             "(storing grad in a list or dict, print) do not happen: run in PYNATIVE mode to inspect gradients. "
             "Under GRAPH mode a lambda written inside the register_hook call fails to compile (\"Parse Lambda "
             "Function Fail\"): define the hook with def. Parameter hooks (gradient clipping) hold in compiled "
             "steps too",
        test=f"{T}::test_tensor_hook_gradients")
for _src in ("torch.nn.modules.module.register_module_forward_hook",
             "torch.nn.modules.module.register_module_forward_pre_hook",
             "torch.nn.modules.module.register_module_full_backward_hook"):
    mapping(_src, None, note="MindSpore has no global Cell hooks: register the hook on each cell "
                             "(for _, c in net.cells_and_names(): c.register_forward_hook(hook))")
