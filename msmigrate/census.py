"""API census: every public name of torch's main namespaces, and what msmigrate does with it.

The names come from torch itself (each namespace's `__all__` and public attributes), generated into
msmigrate/torch_api_surface.py so that the converter and this census need no torch; torch.Tensor's names
are msmigrate/torch_tensor_names.py's list. Every name is exactly one of:
  converted      a registry record converts it (its `test` names the proving parity test, which may be missing)
  todo           no conversion: a registry record with target None, or a census rule below; the converter
                 emits a visible TODO for it, with the rule's reason and what to write instead
  out-of-scope   internal, CUDA-only, deprecated alias, typing helper...: the converter still emits a TODO
                 when a program uses it (never copied through), with this reason
  unaccounted    none of the above (the census test requires 0)
tests/test_census.py regenerates the surface from the installed torch and fails when it drifts.
Regenerate: python -m msmigrate.census --regenerate (needs torch)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Dict, Iterator, List, Optional, Tuple

CONVERTED, TODO, OUT_OF_SCOPE, UNACCOUNTED = "converted", "todo", "out-of-scope", "unaccounted"

# the namespaces the census covers, in report order ("torch.Tensor" comes from torch_tensor_names)
NAMESPACES = ("torch", "torch.Tensor", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.nn.utils",
              "torch.linalg", "torch.fft", "torch.special", "torch.distributions", "torch.autograd", "torch.optim",
              "torch.optim.lr_scheduler", "torch.utils.data", "torch.amp", "torch.signal", "torch.signal.windows")


@dataclass(frozen=True)
class Rule:
    """A group of names with no mapping record, as data: names of `namespace` (a regex over the namespace,
    matched whole) whose name matches `name` (regex, whole) and, when given, whose kind is `kind`
    (module/class/function/value) or whose origin module matches `origin` (regex, prefix)."""
    namespace: str
    name: str
    status: str
    reason: str
    instead: str = ""
    kind: str = ""
    origin: str = ""

    def matches(self, ns: str, name: str, kind: str, origin: str) -> bool:
        return (re.fullmatch(self.namespace, ns) is not None and re.fullmatch(self.name, name) is not None
                and (not self.kind or self.kind == kind)
                and (not self.origin or re.match(self.origin, origin or "") is not None))


ANY = r".*"
INTERNAL = "internal to torch (private name or implementation helper), not part of the model-writing API"
# The last rules: what is left of a namespace is one TODO group (namespace regex, reason, what to write
# instead), after every rule above.
_REST_OF_NAMESPACE: Tuple[Tuple[str, str, str], ...] = (
    (r"torch\.distributions",
     "this torch.distributions name has no mapping record (the other distributions, transforms, constraints, "
     "kl_divergence and register_kl have one, under torch.distributions and their defining modules)",
     "mindspore.nn.probability.distribution (Normal, Bernoulli, Categorical...) with explicit parameters"),
    (r"torch\.signal(\.windows)?", "window functions have no mapping records",
     "numpy/scipy.signal.windows computed once and wrapped with ms.Tensor(...)"),
    (r"torch\.fft", "this FFT function has no mapping record",
     "mindspore.ops.fft / ops.ifft / ops.rfft (MindSpore 2.x) where available, or numpy.fft on .asnumpy()"),
    (r"torch\.linalg", "this torch.linalg function has no mapping record",
     "mindspore.ops (ops.matrix_inverse, ops.svd, ops.qr, ops.norm...) or mindspore.mint.linalg"),
    (r"torch\.special", "this torch.special function has no mapping record",
     "mindspore.ops (ops.erf, ops.lgamma, ops.digamma, ops.xlogy...) or scipy.special on values"),
    (r"torch\.autograd", "autograd graph machinery has no mapping record",
     "ms.grad / ms.value_and_grad / ms.ops.GradOperation over a function; custom backward via "
     "nn.Cell.bprop"),
    (r"torch\.amp", "torch.amp has no mapping record here",
     "mindspore.amp.auto_mixed_precision(net, 'O1') and mindspore.amp.DynamicLossScaler"),
    (r"torch\.optim(\.lr_scheduler)?", "this optimizer/scheduler has no mapping record",
     "the nearest mindspore.nn optimizer / mindspore.experimental.optim(.lr_scheduler) class, checked by "
     "`msmigrate verify --train`"),
    (r"torch\.utils\.data", "this data utility has no mapping record",
     "mindspore.dataset (GeneratorDataset, samplers, .batch/.shuffle/.map)"),
    (r"torch\.nn\.utils", "this torch.nn.utils helper has no mapping record",
     "mindspore.ops.clip_by_global_norm / ms.Parameter manipulation by hand"),
    (r"torch\.nn\.init", "this initializer has no mapping record",
     "mindspore.common.initializer (initializer(Normal(...), shape)) and param.set_data(...)"),
    (r"torch\.nn\.functional", "this functional op has no mapping record",
     "the mindspore.ops / mindspore.mint.nn.functional function of the same name where it exists"),
    (r"torch\.nn", "this torch.nn layer/class has no mapping record",
     "the mindspore.nn / mindspore.mint.nn Cell of the same name where it exists, as a Cell subclass"),
    (r"torch(\.Tensor)?", "no mapping record",
     "the mindspore.ops / ms.Tensor method of the same name where it exists; check values with "
     "`msmigrate verify`"),
)

# Names the broad rules below leave over, each group with its own reason and what to write instead (before this
# table they fell to their namespace's "no mapping record" row)
_NAMED_LEFTOVERS: Tuple[Rule, ...] = (
    Rule(r"torch", r"(batch_norm_(backward_elemt|backward_reduce|elemt|gather_stats|gather_stats_with_counts|stats|"
                   r"update_stats)|native_(batch_norm|group_norm|norm)|convolution|lstm|gru|rnn_relu|rnn_tanh|"
                   r"embedding_bag)", TODO,
         "an ATen kernel entry point exposed at torch's top level, undocumented: its positional arguments are the "
         "C++ schema's (flattened weights, flags), not the documented layer's or functional's",
         "the documented form, which converts: nn.BatchNorm*/F.batch_norm, nn.GroupNorm, torch.norm, F.conv*d, "
         "nn.LSTM/nn.GRU/nn.RNN, F.embedding_bag / nn.EmbeddingBag"),
    Rule(r"torch", r"(ccol_indices|col_indices|crow_indices|indices|row_indices|values)_copy|dsmm|hsmm", TODO,
         "sparse/nested tensor layouts are not converted", "mindspore.COOTensor / mindspore.CSRTensor, or keep "
         "the tensor dense"),
    Rule(r"torch", r"jagged", TODO, "the nested (jagged) tensor layout is not converted",
         "a padded dense tensor and a mask, or a list of tensors"),
    Rule(r"torch", r"StorageBase|legacy_contiguous_format", TODO,
         "memory layout / storage / pointer API: MindSpore tensors expose no storage, strides or pointers",
         "work on values (ms.Tensor(numpy_array), .asnumpy(), ops.reshape) instead of the memory layout"),
    Rule(r"torch", r"choose_qparams_optimized|per_(channel|tensor)_(affine|symmetric)", TODO,
         "torch quantization has no counterpart the converter can emit",
         "MindSpore Golden Stick (mindspore_gs) for quantization-aware training / post-training quantization"),
    Rule(r"torch", r"bit|bits\d+x\d+", TODO, "a packed sub-byte dtype torch has no arithmetic for (only storage "
         "and views); MindSpore has no counterpart", "uint8 tensors and explicit shifts/masks (ops.bitwise_and, "
         "ops.right_shift)"),
    Rule(r"torch(\.amp)?", r".*autocast.*", TODO,
         "torch's autocast state machinery (nesting counters, cache, per-device dtypes): MindSpore's mixed "
         "precision is set on the network, not toggled as global state",
         "mindspore.amp.auto_mixed_precision(net, 'O1'/'O2') once, and a LossScaler in the train step"),
    Rule(r"torch", r"(is_anomaly_check_nan_enabled|set_anomaly_enabled)", OUT_OF_SCOPE,
         "autograd anomaly detection (a debugging switch): no effect on the values computed",
         "nothing; to find a NaN, check ops.isfinite(...) on the loss or gradients"),
    Rule(r"torch", r"is_inference_mode_enabled", TODO,
         "a query of torch's inference_mode state, which MindSpore has no counterpart for (no global grad mode "
         "outside PyNative's recording)", "a flag of the program's own where it decides something"),
    Rule(r"torch", r"(AcceleratorError|FatalError)", TODO,
         "torch's own runtime exception type: MindSpore raises RuntimeError/ValueError/TypeError",
         "`except RuntimeError` (and the MindSpore error the failing call raises)"),
    Rule(r"torch", r"(default_generator|thread_safe_generator)", TODO,
         "torch's global random Generator object (its state is not MindSpore's)",
         "ms.set_seed(seed) for the global stream, or mindspore.Generator(); draws then differ from torch's"),
    Rule(r"torch", r"(get_device|get_device_module)", TODO,
         "a device query: a MindSpore tensor has no device index; the context's device_target is where it runs",
         "ms.get_context('device_target') (and ms.get_context('device_id'))"),
    Rule(r"torch", r"histogramdd", TODO, "no MindSpore counterpart for a multi-dimensional histogram",
         "numpy.histogramdd(x.asnumpy(), ...) wrapped with ms.Tensor (no gradient: torch gives none either)"),
    Rule(r"torch", r"lobpcg", TODO, "no MindSpore counterpart for the LOBPCG eigensolver",
         "torch.linalg.eigh, which converts (a dense problem), or scipy.sparse.linalg.lobpcg on values"),
    Rule(r"torch(\.Tensor)?", r"(hash_tensor|slice_inverse)", TODO,
         "a torch 2.x kernel with no MindSpore counterpart (hash_tensor: an xor reduction of the bits; "
         "slice_inverse: functionalization's scatter of a slice)",
         "for hash_tensor a hash of x.asnumpy().tobytes(); for slice_inverse ops.tensor_scatter_update"),
    Rule(r"torch\.Tensor", r"(eig|lstsq|solve|symeig|reinforce)", OUT_OF_SCOPE,
         "removed from torch (deprecated since 1.9): calling it raises RuntimeError in torch itself",
         "torch.linalg.eig / lstsq / solve / eigh, which convert"),
    Rule(r"torch\.Tensor", r"resize", TODO,
         "deprecated (torch warns): resizes the tensor in place, reallocating its storage",
         "x.reshape(...) where the element count is kept, or a new tensor (ops.zeros(...)) where it is not"),
    Rule(r"torch\.Tensor", r"(name|grad_dtype)", TODO,
         "autograd bookkeeping torch keeps on a tensor (name: None unless a graph tool sets it; grad_dtype: the "
         "dtype its .grad is cast to)", "nothing for name; for grad_dtype cast the gradients MindSpore returns "
         "(g.astype(...)) in the train step"),
    Rule(r"torch\.Tensor", r"index", TODO,
         "functorch's first-class dimensions (x.index(dims)): no MindSpore counterpart",
         "ordinary indexing and ops.transpose/reshape with the positions written out"),
    Rule(r"torch\.nn", r"Container", OUT_OF_SCOPE,
         "a deprecated base class (torch warns when it is built): nn.Module under another name",
         "nn.Module, which converts to nn.Cell"),
    Rule(r"torch\.nn", r"Uninitialized(Buffer|Parameter)", TODO,
         "lazy modules' placeholders: their shape is decided at the first call; a MindSpore Parameter needs it at "
         "construction", "the non-lazy layer with its sizes written out"),
    Rule(r"torch\.nn", r"RNNCellBase", TODO,
         "the base class of torch's RNN cells (its weight_ih/weight_hh layout and reset_parameters); MindSpore's "
         "cells have no public common base", "nn.RNNCell / nn.LSTMCell / nn.GRUCell, which convert, or a Module of your own"),
    Rule(r"torch\.nn", r"LinearCrossEntropyOptions", TODO,
         "the chunking options of torch 2.13's linear_cross_entropy (a memory optimization)",
         "F.linear then F.cross_entropy, which convert (the full logits are materialized)"),
    Rule(r"torch\.nn\.functional", r"(grouped_mm|scaled_grouped_mm|scaled_mm)", TODO,
         "torch's grouped and scaled (float8) matmul kernels for CUDA: no MindSpore CPU counterpart",
         "ops.matmul per group (ops.split, then ops.cat), scales applied as multiplications"),
    Rule(r"torch\.nn\.utils", r"clip_grads_with_norm_", TODO,
         "scales the .grad of each parameter in place by a total norm the program computed; a MindSpore "
         "gradient is a value the grad function returns, not a field of the parameter",
         "ops.clip_by_global_norm(grads, max_norm) on the gradients in the train step (clip_grad_norm_ there "
         "converts)"),
    Rule(r"torch\.linalg", r"ldl_factor_ex", TODO, "no MindSpore counterpart for the LDL factorization",
         "scipy.linalg.ldl on values, or torch.linalg.cholesky (converts) for a positive-definite matrix"),
    Rule(r"torch\.distributions", r"Wishart", TODO, "no mindspore.nn.probability counterpart for the Wishart "
         "distribution", "a sampler of your own from MultivariateNormal draws (which convert): sum of outer "
         "products, df of them"),
    Rule(r"torch\.distributions", r"(CorrCholeskyTransform|biject_to|transform_to)", TODO,
         "constraint registries and the correlation-Cholesky bijection: no mindspore.nn.probability counterpart",
         "the transform written out (ExpTransform, SigmoidTransform... convert) for the one constraint used"),
    Rule(r"torch\.optim", r"swap_in_optimizer_params_and_state", TODO,
         "an internal-ish helper that swaps an optimizer's parameters and state between tensors; MindSpore "
         "optimizers hold Parameters by name", "rebuild the optimizer over the new parameters"),
    Rule(r"torch\.optim\.lr_scheduler", r"(inf|bisect_right|ref|annotations|EPOCH_DEPRECATION_WARNING)",
         OUT_OF_SCOPE, "a standard-library name the scheduler module imports for its own code (math.inf, "
         "bisect.bisect_right, weakref.ref, __future__.annotations) or a warning text: not a torch API",
         "math.inf / bisect.bisect_right / weakref.ref from the standard library"),
    Rule(r"torch\.utils\.data", r"(DFIterDataPipe|DataChunk|IterDataPipe|MapDataPipe|argument_validation|"
                                r"functional_datapipe|guaranteed_datapipes_determinism|runtime_validation|"
                                r"runtime_validation_disabled)", TODO,
         "DataPipes (deprecated in torch, moved out to torchdata): no converted counterpart",
         "a Dataset or a generator, which convert (mindspore.dataset.GeneratorDataset)"),
)

# first matching rule wins; rules only apply to names without a registry record
RULES: Tuple[Rule, ...] = (
    # --- out of scope ----------------------------------------------------------------------------------
    Rule(ANY, r"_.*", OUT_OF_SCOPE, INTERNAL),
    Rule(ANY, r"(.*_notes|common_args|factory_common_args|multi_dim_common|"   # docstring fragments of torch.fft/special
              r"TYPE_CHECKING|BroadcastingList\d|handle_torch_function|has_torch_function.*|"
              r"assert_int_or_pair|factory_kwargs|GRID_SAMPLE_.*|boolean_dispatch)", OUT_OF_SCOPE,
         "a documentation string, typing flag or argument helper of torch's own code, not a model API"),
    Rule(r"torch", r"(ArgumentSpec|CompleteArgumentSpec|BenchmarkExecutionStats|ThroughputBenchmark|Capsule|"
                   r"DeepCopyMemoTable|CallStack|PyTorchFileReader|PyTorchFileWriter|LockingLogger|LoggerBase|"
                   r"NoopLogger|USE_GLOBAL_DEPS|USE_RTLD_GLOBAL_WITH_LIBTORCH|PRIVATE_OPS|classproperty|"
                   r"compiled_with_cxx11_abi|prepare_multiprocessing_environment|get_file_path|"
                   r"merge_type_from_type_comment|parse_type_comment|unify_type_list|TracingState|ExecutionPlan|"
                   r"StaticModule|LiteScriptModule|CompilationUnit|Script.*|fork|wait|Gradient|BufferDict|"
                   r"ModuleDict|ParameterDict|JITException|AVG|SUM)", OUT_OF_SCOPE,
         "TorchScript / C++ runtime object or build flag exposed at torch's top level, not a model API",
         "for TorchScript: ms.jit; `msmigrate export` writes MindIR"),
    Rule(r"torch\.nn\.init", r"(eye|dirac|sparse)", OUT_OF_SCOPE,
         "deprecated alias (torch warns when it is called) of the initializer with a trailing underscore",
         "the `_` form (nn.init.normal_ ...)"),
    Rule(r"torch\.nn\.utils", r"clip_grad_norm", OUT_OF_SCOPE,
         "deprecated alias (torch warns when it is called) of clip_grad_norm_", "nn.utils.clip_grad_norm_"),
    Rule(r"torch", r"(matrix_rank|eig|symeig|lstsq|solve)", OUT_OF_SCOPE,
         "removed from torch (deprecated since 1.9): calling it raises RuntimeError in torch itself",
         "torch.linalg.matrix_rank / eig / eigh / lstsq / solve, which convert"),
    Rule(r"torch\.autograd", r"variable", OUT_OF_SCOPE,
         "removed from torch: torch.autograd.variable(...) raises RuntimeError in torch itself", "torch.tensor(...)"),
    Rule(r"torch\.autograd", r"NestedIOFunction", OUT_OF_SCOPE,
         "a legacy base class torch keeps only for backward compatibility: in torch 2.x neither calling an instance "
         "nor Fn.apply(...) of a subclass works (AttributeError in torch itself, "
         "tests/parity/test_autograd.py::test_legacy_function_fails_in_torch)",
         "a torch.autograd.Function subclass with static forward(ctx, ...) / backward(ctx, ...), which converts"),
    Rule(r"torch\.autograd", r"(ProfilerConfig|ProfilerEvent|ProfilerState|DeviceType|kineto_available)",
         OUT_OF_SCOPE, "the autograd profiler's C++ state types and build probe: they describe profiling runs "
         "(timings), not what a model computes", "mindspore.Profiler for profiling"),
    Rule(r"torch\.autograd", r"(is_multithreading_enabled|set_multithreading_enabled|is_view_replay_enabled|"
                             r"enforce_grad_layout_policy)", OUT_OF_SCOPE,
         "autograd engine configuration (threads, view replay, gradient memory layout): no effect on the values "
         "computed", "nothing; MindSpore's autodiff has no such switches"),
    Rule(r"torch\.nn", r"Lazy.*", TODO,
         "lazy modules infer their input size at the first call; a MindSpore Cell needs it at construction",
         "the non-lazy layer with in_features / in_channels / num_features written out"),
    Rule(ANY, ANY, OUT_OF_SCOPE, "a Python module torch imports for its own code (typing, math, warnings...), "
         "not a torch API", kind="module", origin=r"(?!torch)"),
    Rule(ANY, ANY, OUT_OF_SCOPE, "a typing/standard-library name torch's module imports for its annotations",
         origin=r"(typing|collections|types|builtins|abc|enum|functools|dataclasses|contextlib|numbers|"
                r"typing_extensions|itertools|operator)(\.|$)"),
    Rule(ANY, r"(.*_)?(cuda|cudnn|nccl|mps|xpu|mkldnn|mkl|miopen|mtia|hip|fbgemm|vulkan|ipu|hpu|xla|ort|meta|"
              r"privateuse1|cudagraph|maia)(_.*|\d.*)?", OUT_OF_SCOPE,
         "backend/device specific (CUDA, cuDNN, MPS, XPU, oneDNN...): MindSpore chooses its kernels by "
         "device_target", "ms.set_context(device_target=...)"),
    Rule(ANY, ANY, OUT_OF_SCOPE, "a sub-namespace object: its names are judged one by one (the censused "
         "namespaces have their own rows; a name elsewhere converts only by its own record, otherwise "
         "it is a TODO where used)",
         kind="module"),
    Rule(ANY, r"(.*quantiz.*|q_.*|.*_per_channel.*|.*_per_tensor.*|int_repr|qscheme|.*qint.*|.*quint.*|"
              r"dequantize|.*packed.*|.*fake_quant.*|.*fbgemm.*|.*qnnpack.*|QUInt.*|QInt.*)", TODO,
         "torch quantization has no counterpart the converter can emit",
         "MindSpore Golden Stick (mindspore_gs) for quantization-aware training / post-training quantization"),
    Rule(ANY, r"(.*sparse.*|.*_csr.*|.*_csc.*|.*_bsr.*|.*_bsc.*|.*_coo.*|crow_indices|ccol_indices|"
              r"col_indices|row_indices|coalesce|is_coalesced|indices|values|dense_dim|sparse_dim|"
              r"smm|sspaddmm|hspmm|saddmm|_nnz|.*nested.*|to_padded_tensor)", TODO,
         "sparse/nested tensor layouts are not converted",
         "mindspore.COOTensor / mindspore.CSRTensor, or keep the tensor dense"),
    Rule(ANY, r"(.*storage.*|.*Storage|data_ptr|const_data_ptr|mutable_data_ptr|untyped_storage|.*stride.*|"
              r"is_contiguous|as_strided.*|is_set_to|set_|share_memory_|is_shared|pin_memory|is_pinned|"
              r"record_stream|element_size|nbytes|itemsize|storage_offset|dim_order|is_inference|"
              r"is_non_overlapping_and_dense|.*_dlpack.*|from_file|frombuffer|from_numpy|"
              r"_use_cudnn_ctc_loss|new_.*storage.*|resize_.*|resize_as_.*)", TODO,
         "memory layout / storage / pointer API: MindSpore tensors expose no storage, strides or pointers",
         "work on values (ms.Tensor(numpy_array), .asnumpy(), ops.reshape) instead of the memory layout"),
    Rule(r"torch", r"(jit|compile|compiler|import_ir_module.*|.*script.*|.*_jit_.*|export|fx|.*onnx.*|"
              r".*graph.*|Graph.*|cond|while_loop|vmap|func|functional_call|library|.*Library.*|.*dispatch.*|"
              r".*Dispatch.*|"
              r"_refs|.*_ops.*|ops|Tag|.*Symbol.*|.*Sym.*|sym_.*|SymInt|SymFloat|SymBool|.*guard.*|"
              r".*dynamo.*|.*inductor.*|.*lazy.*)", TODO,
         "torch's compilers, tracers and dispatch machinery have no source-level counterpart",
         "MindSpore compiles with ms.jit / set_context(mode=ms.GRAPH_MODE); `msmigrate export` writes MindIR"),
    Rule(ANY, r"(.*distributed.*|.*[Dd]istributed.*|.*rpc.*|.*Rpc.*|.*RRef.*|.*pipeline.*)", TODO,
         "distributed APIs outside torch.distributed's converted set",
         "mindspore.communication and ms.set_auto_parallel_context"),
    Rule(ANY, r"(.*deterministic.*|.*num_threads.*|.*num_interop_threads.*|set_flush_denormal|"
              r".*warn.*|.*Warning.*|.*float32_matmul_precision.*|.*printoptions.*|.*config.*|.*show.*|"
              r"parse_ir|parse_schema|.*_vital.*|vitals_enabled|read_vitals|set_vital|.*overrides.*|"
              r"typename|.*hub.*|.*testing.*|.*__config__.*|.*version.*|has_.*|.*_build.*)", OUT_OF_SCOPE,
         "process/runtime configuration or environment introspection, no effect on what a model computes",
         "ms.set_context / ms.set_deterministic where a setting is needed"),
    Rule(r"torch(\.Tensor)?", r"(.*_)", TODO,
         "an in-place variant with no record of its own (as a statement whose out-of-place form has a "
         "record, the converter rebinds x = <converted op>; anywhere else it is a TODO)",
         "the out-of-place form assigned back (x = op(x)): in-place arithmetic is not reliable on MindSpore CPU "
         "PyNative"),
    Rule(r"torch(\.Tensor)?", r"(.*complex.*|.*conj.*|is_conj|resolve_conj|resolve_neg|is_neg|chalf|"
              r"cfloat|cdouble|view_as_real.*|view_as_complex.*|polar|angle|real|imag|adjoint|H|mH)", TODO,
         "complex-number API with no record", "mindspore.ops.real/imag/conj/angle or ops.Complex where "
                                              "the CPU kernel exists"),
    Rule(r"torch(\.Tensor)?", r"(.*(float|half|int|long|short|double|bool|byte|char|bfloat16|bits)\d*(_.*)?|"
              r"float8_.*|int\d|uint\d+|e4m3.*|e5m2.*|cfloat|cdouble|chalf|complex\d*)", TODO,
         "a dtype or dtype-cast with no record", "x.astype(ms.<dtype>) and the mindspore dtype of the same "
                                                 "width (ms.float32, ms.int64...)", kind="value"),
    Rule(ANY, r"(Tensor|.*Tensor|Size|device|dtype|layout|memory_format|finfo|iinfo|Generator|Stream|Event|"
              r"DeviceObjType|.*Type|.*Type_|Argument|.*Schema.*|.*Future.*|.*Node|Block|Value|Use|"
              r"AliasDb|.*Method|.*Function.*|.*Hook.*|.*Handle|.*Context|ConcreteModuleType.*|.*Module.*Type.*|"
              r"ErrorReport|FileCheck|IODescriptor|.*Interface.*|.*Pass.*|.*Operator.*|Code|.*Config.*|"
              r"dtype_.*|.*Pickler.*|.*Unpickler.*|.*Class.*|.*Mode|.*Key.*|.*Set.*|.*Info)", TODO,
         "a torch type object with no record (type checks, annotations, runtime objects)",
         "the MindSpore type (ms.Tensor, ms.dtype.*, tuple for Size) or drop the annotation",
         kind="class"),
    Rule(r"torch\.Tensor", r"(cpu|cuda|to|xpu|ipu|mtia|hpu|device|is_cuda|is_cpu|is_mps|is_xpu|is_meta|"
                           r"is_quantized|is_mkldnn|is_vulkan|is_ipu|is_mtia|is_maia|get_device|pin_memory|"
                           r"is_sparse|is_sparse_csr|layout|grad_fn|output_nr|_version|retains_grad|"
                           r"register_post_accumulate_grad_hook|apply_|map_|map2_|module_load|"
                           r"smm|volatile|names|refine_names|rename|rename_|align_as|align_to|has_names|"
                           r"is_leaf|retain_grad|register_hook|requires_grad_|backward|grad|"
                           r"as_subclass|new_tensor|new_empty_strided|type|is_inference)", TODO,
         "a torch.Tensor device/autograd-graph/named-tensor method with no record",
         "MindSpore computes gradients functionally (ms.grad / ms.value_and_grad); devices via set_context"),
    *_NAMED_LEFTOVERS,
    *(Rule(namespace, ANY, TODO, reason, instead) for namespace, reason, instead in _REST_OF_NAMESPACE),
)


# names outside the censused namespaces, by dotted path (for `msmigrate api` and the converter's TODO notes)
PATH_RULES: Tuple[Tuple[str, str, str, str], ...] = (
    (r"torch(\.\w+)*\._\w*(\..*)?", OUT_OF_SCOPE, INTERNAL, ""),
    (r"torch\.(cuda|backends|mps|xpu|mtia|cpu)(\..*)?", OUT_OF_SCOPE,
     "backend/device specific: MindSpore chooses its kernels by device_target", "ms.set_context(device_target=...)"),
    (r"torch\.(ao\..*|quantization(\..*)?|nn\.(quantized|quantizable|qat|intrinsic)(\..*)?)", TODO,
     "torch quantization has no counterpart the converter can emit",
     "MindSpore Golden Stick (mindspore_gs) for quantization-aware training / post-training quantization"),
    (r"torch\.(jit|fx|compiler|_dynamo|export|onnx|library)(\..*)?", TODO,
     "torch's compilers, tracers and dispatch machinery have no source-level counterpart",
     "ms.jit / set_context(mode=ms.GRAPH_MODE); `msmigrate export` writes MindIR"),
)


@dataclass(frozen=True)
class Entry:
    namespace: str
    name: str
    status: str           # CONVERTED, TODO, OUT_OF_SCOPE or UNACCOUNTED
    reason: str = ""
    instead: str = ""
    record: str = ""      # the registry record's source, when one exists
    target: str = ""
    test: str = ""
    test_exists: bool = False

    @property
    def qualname(self) -> str:
        return f"{self.namespace}.{self.name}"


@lru_cache(maxsize=None)
def surface() -> Dict[str, Dict[str, Tuple[str, str]]]:
    """namespace -> {name: (kind, origin)} as committed (no torch needed)."""
    from .torch_api_surface import SURFACE
    from .torch_tensor_names import TENSOR_ATTRIBUTES

    out = {ns: dict(names) for ns, names in SURFACE.items()}
    out["torch.Tensor"] = {n: ("attribute", "") for n in TENSOR_ATTRIBUTES}
    return out


def is_plain_value(name: str) -> bool:
    """Whether a torch name is a plain value (torch.channels_last, torch.__version__) rather than a
    function: the census kind where it lists the name, else dunders and constants from other libraries."""
    ns, _, leaf = name.rpartition(".")
    if ns == "torch.version":
        return True   # a module of constants (cuda, hip, git_version), which the surface does not list
    kind = surface().get(ns, {}).get(leaf, (None, ""))[0]
    if kind is not None:
        return kind == "value"
    return leaf.startswith("__") or not name.startswith("torch")


def record_keys(ns: str, name: str, origin: str = "") -> List[str]:
    """The registry sources under which a record for this name may be filed."""
    if ns == "torch.Tensor":
        return ["Tensor." + name]
    keys = [f"{ns}.{name}"]
    if origin.startswith("torch.") and origin not in keys:
        keys.append(origin)
    return keys


def classify(ns: str, name: str, kind: str = "", origin: str = "", keys: Optional[List[str]] = None) -> Entry:
    from .proof import names_existing_test
    from .registry import lookup

    for key in (record_keys(ns, name, origin) if keys is None else keys):
        m = lookup(key)
        if m is None:
            continue
        if m.target is None and m.rule is None:
            return Entry(ns, name, TODO, m.note or "no MindSpore counterpart (registry record)", "", m.source)
        return Entry(ns, name, CONVERTED, m.note, "", m.source, m.target or f"rule {m.rule.__name__}",
                     m.test, names_existing_test(m.test))
    if ns == "torch.Tensor" and name == "requires_grad":
        # converted by the transformer (unmapped_tensor_api.py), with no registry record: a record would make the
        # property "mapped" and leave its reads as written; not counted as converted until a record holds it
        from .records import REQUIRES_GRAD_READ_NOTE, REQUIRES_GRAD_READ_TEST, REQUIRES_GRAD_STORE_NOTE

        return Entry(ns, name, TODO, "no registry record: the transformer converts a read to "
                     f"_ms_compat.requires_grad_of ({REQUIRES_GRAD_READ_NOTE}; {REQUIRES_GRAD_READ_TEST}) and "
                     f"`x.requires_grad = True/False` to set_requires_grad ({REQUIRES_GRAD_STORE_NOTE})",
                     "nothing for a Parameter's flag; elsewhere check the branch it guards")
    if ns == "torch.Tensor":
        from .records import PARAMETER_PROPERTIES, SAME_MEANING_PROPERTIES

        if name in SAME_MEANING_PROPERTIES or name in PARAMETER_PROPERTIES:
            return Entry(ns, name, TODO, "read as written, no registry record or parity test: MindSpore's Tensor "
                         "(or Parameter) has this property (records.SAME_MEANING_PROPERTIES)",
                         "nothing where the meaning is the same; check the values where it matters")
    removed = _removed_by_transformer(f"{ns}.{name}")
    if removed:
        return Entry(ns, name, TODO, removed, "nothing, where it is used as a `with` context or decorator")
    for r in RULES:
        if r.matches(ns, name, kind, origin):
            return Entry(ns, name, r.status, r.reason, r.instead)
    return Entry(ns, name, UNACCOUNTED)


def _removed_by_transformer(qualname: str) -> str:
    """Context managers and decorators the transformer removes by its own tables (not by a registry record,
    so with no parity test): counted as TODO, since any other use of the name is one."""
    from .records import DROPPED_CONTEXTS, DROPPED_DECORATORS

    if qualname not in DROPPED_CONTEXTS and qualname not in DROPPED_DECORATORS:
        return ""
    why = DROPPED_CONTEXTS.get(qualname, "a torch compiler/autograd hint")
    return (f"removed by the converter as a `with` context or decorator ({why}); no registry record or parity "
            f"test, and any other use is a TODO")


def entries() -> Iterator[Entry]:
    s = surface()
    for ns in NAMESPACES:
        for name in sorted(s.get(ns, {})):
            kind, origin = s[ns][name]
            yield classify(ns, name, kind, origin)


def table(all_entries: Optional[List[Entry]] = None) -> List[Dict[str, object]]:
    """One row per namespace: public names, converted with/without an existing parity test, TODO,
    out of scope, unaccounted."""
    rows = []
    all_entries = list(entries()) if all_entries is None else all_entries
    for ns in NAMESPACES:
        es = [e for e in all_entries if e.namespace == ns]
        rows.append({"namespace": ns, "public": len(es),
                     "converted_tested": sum(e.status == CONVERTED and e.test_exists for e in es),
                     "converted_untested": sum(e.status == CONVERTED and not e.test_exists for e in es),
                     "todo": sum(e.status == TODO for e in es),
                     "out_of_scope": sum(e.status == OUT_OF_SCOPE for e in es),
                     "unaccounted": sum(e.status == UNACCOUNTED for e in es)})
    return rows


COLUMNS = ("public", "converted_tested", "converted_untested", "todo", "out_of_scope", "unaccounted")
HEADERS = ("public", "converted+test", "converted, no test", "TODO", "out of scope", "unaccounted")


def format_table(rows: List[Dict[str, object]]) -> str:
    lines = ["| namespace | " + " | ".join(HEADERS) + " |", "|---|" + "---:|" * len(HEADERS)]
    total = {c: 0 for c in COLUMNS}
    for r in rows:
        lines.append(f"| {r['namespace']} | " + " | ".join(str(r[c]) for c in COLUMNS) + " |")
        for c in COLUMNS:
            total[c] += r[c]
    lines.append("| **total** | " + " | ".join(str(total[c]) for c in COLUMNS) + " |")
    return "\n".join(lines)


# --- answering `msmigrate api NAME` -----------------------------------------------------------------------

@lru_cache(maxsize=None)
def _index() -> Dict[str, Tuple[str, str, str, str]]:
    """every censused public path and canonical path -> (namespace, name, kind, origin)."""
    out: Dict[str, Tuple[str, str, str, str]] = {}
    s = surface()
    for ns in NAMESPACES:
        for name, (kind, origin) in s.get(ns, {}).items():
            out.setdefault(f"{ns}.{name}", (ns, name, kind, origin))
    for ns in NAMESPACES:   # canonical paths second: a public path always wins
        for name, (kind, origin) in s.get(ns, {}).items():
            if origin.startswith("torch."):
                out.setdefault(origin, (ns, name, kind, origin))
    return out


def rule_note(api: str) -> Optional[str]:
    """For a torch name with no registry record: the census rule's reason and what to write instead, as the
    converter's TODO note ("Tensor.frexp" or "torch.linalg.matrix_exp"); None when the census does not list it."""
    top = api.split(".", 1)[0]
    if top == "einx":
        # einx is framework-neutral (no torch inside, no MindSpore backend): --deps would not help
        return ("no MindSpore mapping known; einx has no MindSpore backend: only its element-wise operations with "
                "a literal description of plain axes are converted (msmigrate/mappings/einx.py)")
    if top not in ("torch", "Tensor") and "." in api:
        # torchvision.models.resnet101, timm.create_model: a package built on torch, converted with the project
        return (f"no MindSpore mapping known; {top} is a library built on torch: convert it with the project "
                f"(msmigrate convert --deps {top})")
    hit = _index().get("torch." + api if api.startswith("Tensor.") else api)
    if hit is None:
        e = find(api)
        if e is None:
            return _unlisted_rule_note(api)
        if e.status == CONVERTED:
            return None
        label = "out of scope" if e.status == OUT_OF_SCOPE else "no conversion"
        return f"{label}: {e.reason}" + (f"; write instead: {e.instead}" if e.instead else "")
    ns, name, kind, origin = hit
    for r in RULES:
        if r.matches(ns, name, kind, origin):
            label = "out of scope" if r.status == OUT_OF_SCOPE else "no conversion"
            return f"{label}: {r.reason}" + (f"; write instead: {r.instead}" if r.instead else "")
    return None


def _unlisted_rule_note(api: str) -> Optional[str]:
    """A name the census does not list (torch.sparse.mm, torch.utils.dlpack.to_dlpack): the no-conversion rule of
    its own name, else of the namespace holding it (torch.sparse); out-of-scope rules are not borrowed."""
    ns, _, name = api.rpartition(".")
    parent_ns, _, parent = ns.rpartition(".")
    for r_ns, r_name in ((ns, name), (parent_ns, parent)):
        for r in RULES:
            # the rest-of-namespace rules (name ANY) say nothing more than "no record"
            if r.status == TODO and r.name != ANY and not r.kind and not r.origin and r.matches(r_ns, r_name, "", ""):
                return f"no conversion: {r.reason}" + (f"; write instead: {r.instead}" if r.instead else "")
    return None


def find(name: str) -> Optional[Entry]:
    """The census entry for a public path ("torch.nn.MSELoss", "torch.Tensor.view") or a canonical one
    ("torch.nn.modules.loss.MSELoss"); None when the census does not list the name."""
    if name.startswith("Tensor."):
        name = "torch." + name
    hit = _index().get(name)
    if hit is not None:
        return classify(*hit)
    ns, _, leaf = name.rpartition(".")
    from .registry import lookup

    if lookup(name) is not None:   # a record outside the censused namespaces comes first
        return classify(ns, leaf, keys=[name])
    for pattern, status, reason, instead in PATH_RULES:
        if re.fullmatch(pattern, name):
            return Entry(ns, leaf, status, reason, instead)
    return None


def public_paths(name: str) -> List[str]:
    """Registry sources worth looking up for `name`: its public path when `name` is a canonical path."""
    hit = _index().get(name)
    if hit is None:
        return []
    return record_keys(hit[0], hit[1], hit[3])


def describe(e: Entry) -> str:
    lines = [f"{e.qualname}: {e.status}"]
    if e.record:
        lines.append(f"  registry record: {e.record}")
    if e.reason:
        lines.append(f"  why: {e.reason}")
    if e.instead:
        lines.append(f"  write instead: {e.instead}")
    if e.status in (TODO, OUT_OF_SCOPE) and not e.reason.startswith("removed by the converter"):
        lines.append("  the converter leaves a `# msmigrate: TODO` and code that raises MigrationError where it "
                     "is used")
    return "\n".join(lines)


# --- generation (needs torch) -----------------------------------------------------------------------------

def _kind_origin(public: str, obj) -> Tuple[str, str]:
    import inspect

    if inspect.ismodule(obj):
        return "module", obj.__name__
    kind = "class" if inspect.isclass(obj) else "function" if callable(obj) else "value"
    if kind == "value":
        return kind, ""
    mod, qual = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not isinstance(mod, str) or not isinstance(qual, str) or "<" in qual:
        return kind, ""
    origin = f"{mod}.{qual}"
    return kind, ("" if origin == public else origin)


def current_surface() -> Dict[str, Dict[str, Tuple[str, str]]]:
    """From the installed torch: each namespace's `__all__` plus its public attributes."""
    import importlib
    import warnings

    out: Dict[str, Dict[str, Tuple[str, str]]] = {}
    for ns in NAMESPACES:
        if ns == "torch.Tensor":
            continue
        mod = importlib.import_module(ns)
        listed = set(getattr(mod, "__all__", ()))
        names = listed | {n for n in dir(mod) if not n.startswith("_")}
        table_: Dict[str, Tuple[str, str]] = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for n in sorted(names):
                try:
                    obj = getattr(mod, n)
                except Exception:   # a name listed in __all__ that the module does not define
                    table_[n] = ("value", "")
                    continue
                kind, origin = _kind_origin(f"{ns}.{n}", obj)
                if kind == "module" and n not in listed:
                    # a submodule is an attribute only once something imported it (torch.onnx, nn.utils.prune):
                    # not part of a stable surface; its names are judged by their own path
                    continue
                table_[n] = (kind, origin)
        out[ns] = table_
    return out


def drift(installed: Dict[str, Dict[str, Tuple[str, str]]],
          committed: Dict[str, Dict[str, Tuple[str, str]]]) -> Dict[str, Tuple[List[str], List[str]]]:
    """namespace -> (names torch has that the census lacks, names the census lists that torch no longer has)."""
    out = {}
    for ns in sorted(set(installed) | set(committed)):
        new = sorted(set(installed.get(ns, ())) - set(committed.get(ns, ())))
        gone = sorted(set(committed.get(ns, ())) - set(installed.get(ns, ())))
        if new or gone:
            out[ns] = (new, gone)
    return out


def write_surface(path=None) -> str:
    import textwrap
    from pathlib import Path

    import torch

    data = current_surface()
    version = torch.__version__.split("+")[0]
    path = Path(path or Path(__file__).with_name("torch_api_surface.py"))
    lines = ['"""The public names of torch\'s main namespaces (kind, canonical origin when it differs), as data.',
             f"Generated from torch {version} by `python -m msmigrate.census --regenerate`; do not edit by hand.",
             'tests/test_census.py regenerates it from the installed torch and fails when it drifts."""',
             "", f'TORCH_VERSION = "{version}"', "",
             "# (namespace, name) -> (kind, origin). Each line names its namespace: a name that two namespaces",
             "# export (torch.conv1d, torch.nn.functional.conv1d) stands on two lines that differ.",
             "_NAMES = {"]
    for ns, names in data.items():
        for n, (kind, origin) in names.items():
            lines.append(f"    ({ns!r}, {n!r}): ({kind!r}, {origin!r}),")
    lines += ["}", "", "# namespace -> {name: (kind, origin)}",
              "SURFACE = {namespace: {} for namespace in (",
              *textwrap.wrap(", ".join(repr(ns) for ns in data) + ",", 116, initial_indent="    ",
                             subsequent_indent="    ", break_long_words=False, break_on_hyphens=False),
              ")}",
              "for (_namespace, _name), _kind_origin in _NAMES.items():",
              "    SURFACE[_namespace][_name] = _kind_origin"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return f"{sum(len(v) for v in data.values())} names from torch {version} written to {path}"


def main(argv: Optional[List[str]] = None) -> int:
    import argparse
    import json

    p = argparse.ArgumentParser(prog="msmigrate census",
                                description="Every public name of torch's main namespaces and what msmigrate does "
                                            "with it (converted / TODO / out of scope).")
    p.add_argument("--json", action="store_true", help="print every entry as JSON")
    p.add_argument("--list", metavar="STATUS", choices=(CONVERTED, TODO, OUT_OF_SCOPE, UNACCOUNTED, "untested"),
                   help="list the names with this status (untested: converted without an existing parity test)")
    p.add_argument("--namespace", help="only this namespace (e.g. torch.linalg)")
    p.add_argument("--regenerate", action="store_true", help="rewrite torch_api_surface.py from the installed torch")
    args = p.parse_args(argv)
    if args.regenerate:
        from .torch_signatures import write_signatures

        print(write_surface())
        print(write_signatures())   # torch's parameter lists for the records (argument_check.py)
        return 0
    es = [e for e in entries() if not args.namespace or e.namespace == args.namespace]
    if args.json:
        print(json.dumps([e.__dict__ for e in es], indent=1))
        return 0
    if args.list:
        for e in es:
            if (args.list == "untested" and e.status == CONVERTED and not e.test_exists) or e.status == args.list:
                extra = e.record if e.status == CONVERTED else e.reason
                print(f"{e.qualname}\t{extra}")
        return 0
    rows = table(es)
    print(format_table([r for r in rows if r["public"]]))
    return 1 if any(r["unaccounted"] for r in rows) else 0


if __name__ == "__main__":   # pragma: no cover - a maintenance command
    import sys

    sys.exit(main())
