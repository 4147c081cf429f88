"""Devices, seeds, determinism, mixed precision, TensorBoard logging, and what GRAPH mode
needs to know inside construct.

MindSpore chooses its device once for the whole program (mindspore.set_device /
set_context at the top of the main script) and moves no tensors, so torch's device
queries are answered from MindSpore's context by helpers in the emitted _ms_compat.py
(templates/compat_parts/runtime.py): on a CPU run `torch.cuda.is_available()` becomes
`_ms_compat.backend.on_accelerator`, False, and
`torch.device('cuda' if torch.cuda.is_available() else 'cpu')` is 'cpu'; the `.to(device)`
calls are removed by the tensor/module method records.

Torch switches set by assignment (`torch.backends.cudnn.benchmark = True`) are records
too: "drop" removes the statement, "expr:...{value}..." replaces it (see
TorchToMindSpore.leave_Assign).

GRAPH mode (checked with MindSpore 2.10 on CPU, default jit_syntax_level LAX; see
tests/parity/test_graph_safety.py): print() of tensors, `x[idx] = v` / `x[mask] = v`,
Python if/while/assert on tensor values, `.item()` in arithmetic and the rebinding that
replaces in-place methods all compile and match torch, values and gradients, so they are
kept as they are. `.asnumpy()` and `.tolist()` also run (through JIT fallback), but the
gradient of every expression their values reach is silently zero, so inside construct
they are flagged (CONSTRUCT_NOTES below; `.numpy()` there raises when compiled: host_draws.py).
An integer `.item()` used as a slice bound or a shape fails to compile (a data-dependent shape): that failure is loud.
"""
from __future__ import annotations

from ..callsite import UnsupportedSite
from ..records import DIFFERENCE, mapping, rule
from ..records import CONSTRUCT_NOTES

T = "tests/parity/test_devices.py"
G = "tests/parity/test_graph_safety.py"

_CONTEXT = "answered from MindSpore's context (the device chosen once for the program)"

# ------------------------------------------------------------------ devices
mapping("torch.device", "_ms_compat.Device", args=("type", "index"), target_args=("type", "index"),
        note="kept as the device string ('cpu', 'cuda:0') with .type/.index; MindSpore places tensors by "
             "mindspore.set_device, so the value only matters where the program inspects it; unlike torch, "
             "device == 'cpu' is True, and a MindSpore tensor's .device ('CPU', 'GPU:0') equals torch.device('cpu') / "
             "torch.device('cuda:0'); inside construct under GRAPH mode it is a plain string (no .type/.index)",
        test=f"{T}::test_device_values")
# `x.device.type`, `str(x.device)`, `x.is_cuda`: MindSpore's Tensor.device is 'CPU' (msmigrate/tensor_reads.py)
for _name, _target in (("device", "expr:_ms_compat.device_of({self})"),
                       ("is_cuda", "expr:_ms_compat.is_on_device({self}, 'cuda', 'is_cuda')"),
                       ("is_cpu", "expr:_ms_compat.is_on_device({self}, 'cpu', 'is_cpu')"),
                       # torch's other device kinds (dcgan: `input.is_cuda or input.is_xpu`): never MindSpore's
                       *((f"is_{_k}", f"expr:_ms_compat.is_on_device({{self}}, '{_k}', 'is_{_k}')")
                         for _k in ("xpu", "mps", "meta", "ipu", "maia", "mtia", "vulkan", "xla"))):
    mapping(f"Tensor.{_name}", _target, test="tests/test_first_rule_gaps.py::test_device_reads_answer_as_torch",
            note="MindSpore's Tensor.device is 'CPU' / 'GPU:0': read as torch's device ('cpu', 'cuda:0') with "
                 ".type and .index, is_cuda / is_cpu from it; another object's own attribute is read as written")
# `if grad.is_sparse: raise RuntimeError(...)` (AdaBelief, RAdam, Ranger's step()): a MindSpore Tensor is dense
mapping("Tensor.is_sparse", "expr:_ms_compat.is_on_device({self}, 'sparse', 'is_sparse')",
        test="tests/test_hand_written_optimizers.py::test_sparse_check_reads_false",
        note="False for a MindSpore Tensor (always dense; sparse tensors are COOTensor/CSRTensor, which torch.sparse "
             "code does not convert to); another object's own attribute is read as written")
mapping("torch.set_default_device", "_ms_compat.set_default_device", args=("device",), target_args=("device",),
        status=DIFFERENCE,
        note="kept as the value torch.get_default_device() reads back; MindSpore places tensors by "
             "mindspore.set_device (the device of the whole program), not by this setting",
        test=f"{T}::test_default_device")
mapping("torch.get_default_device", "_ms_compat.get_default_device",
        note="'cpu' unless set_default_device or a `with torch.device(...)` block chose another (a "
             "torch.device is also a context manager after conversion)", test=f"{T}::test_default_device")
mapping("torch.cuda.is_available", "expr:_ms_compat.backend.on_accelerator", status=DIFFERENCE,
        note="True when MindSpore runs on a GPU or Ascend (mindspore.get_context('device_target')), False on "
             "CPU", test=f"{T}::test_device_values")
mapping("torch.backends.cudnn.is_available", "expr:_ms_compat.backend.on_accelerator", status=DIFFERENCE,
        note="True when MindSpore runs on a GPU or Ascend", test=f"{T}::test_device_values")
for _name in ("is_available", "is_built"):
    mapping(f"torch.backends.mps.{_name}", "expr:False", note="MindSpore has no Apple MPS backend",
            test=f"{T}::test_device_values")
mapping("torch.cuda.device_count", "expr:_ms_compat.backend.device_count", status=DIFFERENCE,
        note="the accelerators of the kind MindSpore runs on; 0 on a CPU run", test=f"{T}::test_device_values")
mapping("torch.cuda.current_device", "expr:_ms_compat.backend.device_id",
        note="mindspore.get_context('device_id')", test=f"{T}::test_device_values")
mapping("torch.cuda.set_device", "_ms_compat.cuda_set_device", args=("device",), target_args=("device",),
        status=DIFFERENCE,
        note="mindspore.set_device(target, id) on an accelerator (MindSpore accepts it before its first "
             "operation; later it warns and keeps the device); nothing on CPU", test=f"{T}::test_device_values")
mapping("torch.cuda.device", "_ms_compat.cuda_device", args=("device",), target_args=("device",),
        status=DIFFERENCE,
        note="a `with` block choosing the device as torch.cuda.set_device does (nothing on CPU, nor for None or a "
             "negative index, torch's no-op); MindSpore keeps one device for the program, so leaving the block "
             "restores nothing", test=f"{T}::test_device_values")
mapping("torch.cuda.get_device_name", "_ms_compat.cuda_get_device_name", args=("device",),
        target_args=("device",), status=DIFFERENCE,
        note="the accelerator's name; on a CPU run the processor's name (torch raises there)",
        test=f"{T}::test_device_values")
for _name, _what in (("synchronize", "waits for queued device work (mindspore.runtime.synchronize)"),
                     ("empty_cache", "releases cached device memory (mindspore.runtime.empty_cache)")):
    mapping(f"torch.cuda.{_name}", f"_ms_compat.cuda_{_name}", args=("device",) if _name == "synchronize" else (),
            target_args=("device",) if _name == "synchronize" else (),
            note=f"{_what} on an accelerator; nothing to do on CPU", test=f"{T}::test_device_values")
for _name in ("memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
              "reset_peak_memory_stats"):
    mapping(f"torch.cuda.{_name}", f"_ms_compat.cuda_{_name}", args=("device",), target_args=("device",),
            note=f"mindspore.runtime.{_name} on an accelerator; 0 on a CPU run", test=f"{T}::test_device_values")

# `except torch.cuda.OutOfMemoryError:` around a training call (retry with checkpointing, a smaller batch)
for _src in ("torch.cuda.OutOfMemoryError", "torch.OutOfMemoryError"):
    mapping(_src, "_ms_compat.OutOfMemoryError", status=DIFFERENCE,
            note="a RuntimeError subclass, as torch's, that MindSpore never raises: it reports device memory "
                 "exhaustion as a plain RuntimeError, so an `except` of this class does not take the handler "
                 "and the program stops with MindSpore's error (on CPU torch never raises it either)",
            test=f"{T}::test_out_of_memory_handler")

# single-process multi-GPU replication: MindSpore runs one device per process (data parallel is
# msrun + mindspore.communication), so the wrapper goes and the network trains on the chosen device
for _src in ("torch.nn.DataParallel", "torch.nn.parallel.DataParallel"):
    mapping(_src, "_ms_compat.DataParallel", args=("module", "device_ids", "output_device", "dim"),
            target_args=("module", "device_ids", "output_device", "dim"), status=DIFFERENCE,
            note="runs the network itself, on the device MindSpore was given (one device per process), and keeps "
                 "it as `.module`; for several devices launch with msrun and reduce gradients with "
                 "nn.DistributedGradReducer. Its parameters keep the network's names (torch's state_dict of the "
                 "wrapper prefixes them with 'module.')",
            test=f"{T}::test_data_parallel")

# ------------------------------------------------------------------ seeds and determinism
_SEED_NOTE = ("mindspore.set_seed seeds every MindSpore random op; the random streams differ between "
              "frameworks: same seed, different numbers. NumPy's stream, which mindspore.set_seed reseeds, is left "
              "where it was once the program seeded it, as torch leaves it")
for _src in ("torch.cuda.manual_seed", "torch.cuda.manual_seed_all", "torch.cuda.random.manual_seed",
             "torch.cuda.random.manual_seed_all", "torch.random.manual_seed"):
    mapping(_src, "_ms_compat.manual_seed", args=("seed",), target_args=("seed",), status=DIFFERENCE,
            note=_SEED_NOTE, test=f"{T}::test_seeds")
mapping("torch.Generator", "mindspore.Generator", args=("device",), drop=("device",), status=DIFFERENCE,
        note="mindspore.Generator has manual_seed/seed/initial_seed/get_state/set_state; torch.rand, randn, "
             "randint, randperm, normal, bernoulli and multinomial given generator= draw from its own stream "
             "(_ms_compat.generator_draw, on the host), the data loaders and samplers too; other draws given one "
             "(nn.init, Tensor.uniform_...) come from the global seed (mindspore.set_seed)",
        test=f"{T}::test_seeds")
mapping("torch.use_deterministic_algorithms", "_ms_compat.set_deterministic", args=("mode", "warn_only"),
        target_args=("flag",), rename={"mode": "flag"}, drop=("warn_only",),
        note="mindspore.set_deterministic, which MindSpore accepts once per process (the helper keeps the "
             "first value and warns on a different one)", test=f"{T}::test_once_per_process_switches")
mapping("torch.are_deterministic_algorithms_enabled", "_ms_compat.deterministic_algorithms_enabled",
        note="whether MindSpore runs deterministically (mindspore.get_context('deterministic')), which "
             "use_deterministic_algorithms sets: torchmetrics picks its bincount by it",
        test=f"{T}::test_once_per_process_switches")
mapping("torch.backends.cudnn.deterministic", "expr:_ms_compat.set_deterministic({value})",
        note="the assignment becomes mindspore.set_deterministic (once per process)",
        test=f"{T}::test_once_per_process_switches")
for _flag, _why in (("torch.backends.cudnn.benchmark", "MindSpore selects its kernels itself"),
                    ("torch.backends.cudnn.enabled", "MindSpore selects its kernels itself"),
                    ("torch.backends.cudnn.allow_tf32", "TF32 on GPU: mindspore.device_context.gpu.op_precision"),
                    ("torch.backends.cuda.matmul.allow_tf32",
                     "TF32 on GPU: mindspore.device_context.gpu.op_precision")):
    mapping(_flag, "drop", note=f"a torch backend switch, removed: {_why}", test=f"{T}::test_backend_switches")
mapping("torch.set_num_threads", "_ms_compat.set_num_threads", args=("num",), target_args=("num",),
        note="mindspore.device_context.cpu.op_tuning.threads_num: MindSpore accepts it once per process",
        test=f"{T}::test_once_per_process_switches")
mapping("torch.set_float32_matmul_precision", "drop", args=("precision",),
        note="TF32 matmul precision switch: MindSpore on CPU computes float32 matmuls in float32",
        test=f"{T}::test_process_switches")
for _n in ("torch.set_grad_enabled", "torch.autograd.set_grad_enabled"):   # the second re-exports the first
    mapping(_n, "drop", args=("mode",),
            note="MindSpore records gradients only inside grad/value_and_grad, so switching them off is not needed",
            test=f"{T}::test_process_switches")
mapping("torch.get_default_dtype", "expr:ms.float32", note="MindSpore's default float type is float32",
        test=f"{T}::test_process_switches")


def _set_default_dtype(ctx):
    node = ctx.original.args[0].value if ctx.original.args else None
    qn = ctx.tr._torch_qname(node) if node is not None else None
    if qn in ("torch.float32", "torch.float"):
        return "drop"
    raise UnsupportedSite("MindSpore has no global default dtype (it is float32): pass dtype= where the "
                          "tensors are made")


rule("torch.set_default_dtype", None, args=("d",),
     note="set_default_dtype(torch.float32) is MindSpore's default and is removed; other dtypes have no "
          "global switch", test=f"{T}::test_process_switches")(_set_default_dtype)

# ------------------------------------------------------------------ mixed precision
_AMP_KEPT = ("kept as a context manager/decorator that does nothing (a plain `with` line goes away): MindSpore "
             "sets mixed precision on the network, net = mindspore.amp.auto_mixed_precision(net, 'O1'); "
             "without it the code runs in float32")
for _src in ("torch.autocast", "torch.amp.autocast", "torch.cuda.amp.autocast", "torch.cpu.amp.autocast"):
    # a plain `with torch.autocast(...):` line and the decorator are removed by the transformer
    # (DROPPED_CONTEXTS / DROPPED_DECORATORS); this record serves the other uses
    mapping(_src, "_ms_compat.autocast", status=DIFFERENCE, note=_AMP_KEPT, test=f"{T}::test_autocast",
            takes_torch_args=True)
for _src in ("torch.cuda.amp.custom_fwd", "torch.cuda.amp.custom_bwd", "torch.amp.custom_fwd",
             "torch.amp.custom_bwd"):
    mapping(_src, "identity", args=("fwd" if "fwd" in _src else "bwd",),
            note="autocast hint for autograd.Function; removed with autocast", test=f"{T}::test_autocast")
_SCALER_ARGS = ("init_scale", "growth_factor", "backoff_factor", "growth_interval", "enabled")
_SCALER_NOTE = ("a GradScaler with loss scaling off (float32 training needs none): scale(x) returns x, "
                "step(opt) calls opt.step() when there is one; the training-loop conversion folds "
                "scaler.scale(loss).backward()/scaler.step(opt) into the MindSpore train step. For float16 use "
                "mindspore.amp.DynamicLossScaler")
for _src in ("torch.cuda.amp.GradScaler", "torch.cpu.amp.GradScaler"):
    mapping(_src, "_ms_compat.GradScaler", args=_SCALER_ARGS, target_args=_SCALER_ARGS, status=DIFFERENCE,
            note=_SCALER_NOTE, test=f"{T}::test_grad_scaler")
mapping("torch.amp.GradScaler", "_ms_compat.GradScaler", args=("device",) + _SCALER_ARGS,
        target_args=_SCALER_ARGS, drop=("device",), status=DIFFERENCE, note=_SCALER_NOTE,
        test=f"{T}::test_grad_scaler")

# ------------------------------------------------------------------ logging
for _src in ("torch.utils.tensorboard.SummaryWriter", "torch.utils.tensorboard.writer.SummaryWriter"):
    mapping(_src, "_ms_compat.SummaryWriter",
            args=("log_dir", "comment", "purge_step", "max_queue", "flush_secs", "filename_suffix"),
            target_args=("log_dir", "comment", "purge_step", "max_queue", "flush_secs", "filename_suffix"),
            status=DIFFERENCE,
            note="writes scalars to log_dir/scalars.csv (wall_time,step,tag,value), histograms as statistics, "
                 "text/hparams as JSON lines, images as .npy; add_graph and other add_* do nothing. "
                 "mindspore.SummaryRecord runs on CPU but its files need MindInsight",
            test=f"{T}::test_summary_writer")

# ------------------------------------------------------------------ GRAPH mode inside construct
_FALLBACK = ("under GRAPH mode (ms.jit / GRAPH_MODE) MindSpore 2.10 runs this on the host (JIT fallback) and "
             "silently zeroes the gradient of every expression its value reaches; inside construct keep tensors "
             "(ops.stop_gradient(t) for a value that must not carry gradient)")
CONSTRUCT_NOTES["Tensor.numpy"] = (
    "a host read (_ms_compat.host_value, msmigrate/host_draws.py): runs in PYNATIVE mode; compiling a graph that "
    "reaches it (GRAPH mode, ms.jit) raises MigrationError naming this line, since MindSpore's JIT fallback "
    "would silently zero the gradient of every expression its value reaches; a train step calling the network "
    "runs op by op")
CONSTRUCT_NOTES["Tensor.tolist"] = _FALLBACK

# torch.accelerator (torch 2.6+): the generic form of torch.cuda's queries (pytorch/examples choose their
# device with `torch.accelerator.is_available()` / `current_accelerator()`)
_ACC = "tests/test_wider_programs.py::test_torch_accelerator_queries"
mapping("torch.accelerator.is_available", "expr:_ms_compat.backend.on_accelerator", status=DIFFERENCE,
        note="True when MindSpore runs on a GPU or Ascend, False on CPU", test=_ACC)
mapping("torch.accelerator.current_accelerator", "_ms_compat.current_accelerator", args=("check_available",),
        target_args=("check_available",), status=DIFFERENCE,
        note="the device MindSpore runs on ('cuda' for a GPU, 'npu' for Ascend) as a torch.device string; "
             "None on a CPU run", test=_ACC)
mapping("torch.accelerator.device_count", "expr:_ms_compat.backend.device_count", status=DIFFERENCE,
        note="the accelerators of the kind MindSpore runs on; 0 on a CPU run", test=_ACC)
for _name in ("current_device_index", "current_device_idx"):
    mapping(f"torch.accelerator.{_name}", "expr:_ms_compat.backend.device_id",
            note="mindspore.get_context('device_id')", test=_ACC)
mapping("torch.accelerator.synchronize", "_ms_compat.cuda_synchronize", args=("device",), target_args=("device",),
        note="waits for queued device work (mindspore.runtime.synchronize) on an accelerator; nothing on CPU",
        test=_ACC)
