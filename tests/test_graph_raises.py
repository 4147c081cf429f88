"""No `raise MigrationError` where a compiled graph can reach it.

MindSpore's graph parser (GRAPH mode, ms.jit, the converted train step) refuses a `raise` of any but Python's own
exception types: a runtime helper holding `raise MigrationError(...)` (on any branch, even one that never runs)
stops compiling with "RuntimeError: Unsupported exception type: MigrationError", naming no line of the original.
Helpers that compiled code can call raise through a constexpr instead (`_raise_migration_error`,
`_refuse_compiled`, or a constexpr of their own), which runs in Python as the graph compiles.

This test reads every runtime source with `ast`: each function holding `raise MigrationError` must be a constexpr
or be listed in HOST_SIDE below with the reason no compiled graph parses it. A new raise in a helper fails here
until it is classified; an entry whose function no longer raises fails too, so the table cannot drift."""
from __future__ import annotations

import ast
from pathlib import Path

TEMPLATES = Path(__file__).resolve().parents[1] / "msmigrate" / "templates"

_INIT = "a layer's constructor: Cells are built on the host, before any graph compiles"
_KERAS = "keras_train runs a model op by op (only its optimizer updates are compiled, and they raise nothing)"
_DEPLOY = "export and loading run on the host, around a model, not inside one"
_OPTIM = "the optimizer's host-side step()/set-up, around the compiled train step (train.py compile_step)"
_GUARDED = ("reached only past a compile guard (`if _compiling(_draw_probe): _refuse_compiled(...)`), which stops "
            "a compiling graph first, so the graph never parses this function")

# "file:qualified name" -> why no compiled graph parses it
HOST_SIDE = {
    "graph_objects.py:_rebuilt": "on the host: what a compiled Cell returned, after the graph ran",
    # PyTorch Lightning's Trainer runs its loop on the host (fit switches to PYNATIVE; training_step runs op by op)
    "lightning.py:_pl_refuse": "on the host: the Trainer's and LightningModule's refusals, outside any graph",
    "lightning.py:Trainer._step_schedulers": "on the host: the Trainer steps schedulers between batches",
    "lightning.py:Trainer._restored": "on the host: validate/test/predict load a checkpoint before their loop",
    "lightning.py:ModelCheckpoint._save": "on the host: a callback run by the Trainer between epochs",
    "lightning.py:_PLManualSteps.zero_grad": "on the host: manual optimization's training_step runs op by op (fit "
                                             "switches to PYNATIVE; the tape records it)",
    "lightning.py:_PLManualSteps.step": "on the host: manual optimization's training_step runs op by op",
    "network_read_before_step.py:_network_read_before_step_refused": "on the host: the check is a statement of the "
                                                                      "loop, before the train step's call",
    "replayed_forward.py:_forward_run_again_refused": "on the host: forward_run_again returns before it inside a "
                                                      "compiled graph (_compiling)",
    "taped_backward.py:tape_backward": "on the host: a taped backward() stands in the program's own code, run op by "
                                       "op (it raises where no PyNative record is open)",
    "taped_backward.py:tape_step": "on the host: the taped optimizer step stands in the program's own code",
    "recorded_backward.py:autograd_backward": "on the host: a backward() left in the program's own code outside a "
                                              "train step; inside a compiled graph it stops at _refuse_compiled first",
    "recorded_backward.py:_recorded_gradient": "the checks of autograd_backward and backward_to_grads: on the host; "
                                               "inside a compiled graph it stops at _refuse_compiled first",
    "recorded_backward.py:backward_to_grads": "on the host: a backward() of a loss handed to a function (a loss "
                                              "scaler's __call__); a compiled graph stops at _recorded_gradient's "
                                              "_refuse_compiled first",
    "layer_settings.py:_TorchBuffers.keys": "on the host: a listing of `module._buffers`, program code outside any "
                                            "construct (a view object a graph does not build)",
    "unused_params.py:_grads_of_reached": "runs op by op only: in GRAPH mode it returns the plain value_and_grad first",
    "unused_params.py:wrong_second_order": "runs op by op only: called by value_and_grad_reached's recording (run "
                                            "by _grads_of_reached, op by op) and tape_step, on a PyNative record",
    "unused_params.py:_held_back": "on the host: for a None gradient, which only an op-by-op step gives (a compiled "
                                   "step's gradients come from the plain value_and_grad), or around a compiled step",
    "checkpoints.py:_load_optimizer_state": "optimizer.load_state_dict, on the host",
    "checkpoints.py:_decode": "torch.load's reading of a checkpoint file, on the host",
    "checkpoints.py:_UnrebuiltOptimizer._refuse": "a use of the optimizer object torch.load gave back (its step(), "
                                                  "attributes), program code on the host: no Cell holds one",
    "train.py:_record_writes_refused": "on the host, after a compiled train step returned (StepCell.__call__)",
    "optim.py:_trainable": _OPTIM,
    "graph_constants.py:raise_at_original_line": "on the host, where Cell.compile/compile_and_run failed",
    "_ms_compat.py:_refuse_unreached": "init fills (fill_part) run on the host when a model is built",
    "_ms_compat.py:conv_transpose_padding": "a ConvTranspose constructor's argument (mappings/layers.py)",
    "_ms_compat.py:upsample_scale": "an nn.Upsample constructor's argument (mappings/layers.py)",
    "_ms_compat.py:upsample_mode": "an nn.Upsample constructor's argument (mappings/layers.py)",
    "_ms_compat.py:Embedding.__init__": _INIT,
    "_ms_compat.py:_batch_norm.BatchNorm.__init__": _INIT,
    "_ms_compat.py:_instance_norm.InstanceNorm.__init__": _INIT,
    "_ms_compat.py:LSTM.__init__": _INIT,
    "_ms_compat.py:_resized_on_host": "resize_'s body: resize_ refuses a compiling graph first (_pynative_only)",
    "_ms_compat.py:_conv_mode_pads": "called by the Conv1d/2d/3d constructors only (" + _INIT + ")",
    "attention.py:BlockMask.__init__": "a type only: create_block_mask stays a TODO, so no converted code builds one",
    "autograd.py:_FunctionCall.bprop": "built by _function_call only, op by op: Function.apply and "
                                       "function_apply refuse a compiling graph first",
    "autograd.py:_function_call": _GUARDED + " (Function.apply, function_apply)",
    "autograd.py:_unless_graph_mode": _GUARDED + " (_second_order_transform)",
    "autograd.py:_sum_output": "hessian's body: " + _GUARDED,
    "autograd.py:_check_hessian": "hessian's body: " + _GUARDED,
    "autograd.py:vjp": _GUARDED + " (@_op_by_op_transform)",
    "autograd.py:jvp": _GUARDED + " (@_op_by_op_transform)",
    "autograd.py:_hessian_product": "vhp/hvp's body: " + _GUARDED,
    "checkpoints.py:_read_ms_checkpoint": "checkpoint loading, on the host",
    "checkpoints.py:_read_torch_file": "checkpoint loading, on the host",
    "cumulative_batch_norm.py:_cumulative_batch_norm.CumulativeBatchNorm.__init__": _INIT,
    "data.py:_tv_pad": "a data transform: the input pipeline runs on the host",
    "data.py:transforms.ToDtype.__init__": "a data transform: the input pipeline runs on the host",
    "data.py:transforms.RandomRotation.__call__": "a data transform: the input pipeline runs on the host",
    "debugging.py:Profile._require_trace": "the profiler is driven from the host",
    "debugging.py:Profile.export_chrome_trace": "the profiler is driven from the host",
    "deploy.py:_example_inputs": _DEPLOY,
    "deploy.py:_no_extras": _DEPLOY,
    "deploy.py:jit_save": _DEPLOY,
    "deploy.py:jit_load": _DEPLOY,
    "deploy.py:export_program": _DEPLOY,
    "deploy.py:export_save": _DEPLOY,
    "distributed.py:init_process_group": "process-group set-up, on the host",
    "distributed.py:convert_sync_batchnorm": "rebuilds a model's layers, on the host",
    "distributed.py:SyncBatchNorm.__init__": "builds a layer, on the host",
    "distributions.py:_dist_no_rsample": (
        "a Distribution object inside a graph runs through MindSpore's Python fallback when the graph runs "
        "(measured, Gamma(...).rsample() in an ms.jit construct), where a raise arrives as a RuntimeError; "
        "rsample_at refuses a compiling graph first (" + _GUARDED + "), so only op by op reaches it"),
    "grad_reads.py:_no_grad_kept": _GUARDED + " (tensor_grad)",
    "keras_train.py:_keras_activation": _KERAS,
    "keras_train.py:Layer.__init__": _KERAS,
    "keras_train.py:Layer.add_weight": _KERAS,
    "keras_train.py:_keras_set": _KERAS,
    "keras_train.py:_check_channels_last": _KERAS,
    "keras_train.py:BatchNormalization.__init__": _KERAS,
    "keras_train.py:KerasEmbedding.__init__": _KERAS,
    "keras_train.py:_Recurrent.__init__": _KERAS,
    "keras_train.py:KerasGRU.__init__": _KERAS,
    "keras_train.py:MultiHeadAttention.__init__": _KERAS,
    "keras_train.py:LayerNormalization.__init__": _KERAS,
    "keras_train.py:Model.call": _KERAS,
    "keras_train.py:Model.load_weights": _KERAS,
    "keras_train.py:Model.fit": _KERAS,
    "keras_train.py:Loss.__init__": _KERAS,
    "keras_train.py:_loss_get": _KERAS,
    "keras_train.py:_metric_get": _KERAS,
    "keras_train.py:Optimizer.__init__": _KERAS,
    "keras_train.py:Optimizer.apply_gradients": _KERAS,
    "keras_train.py:Optimizer.minimize": _KERAS,
    "keras_train.py:_optimizer_get": _KERAS,
    "keras_train.py:_initializer_of.make": _KERAS,
    "keras_train.py:mnist_load_data": "reads a file on the host before any model runs",
    "keras_train.py:MeanErrorMetric.update_state": "metrics update on the host (NumPy), outside any graph",
    "layer_settings.py:_momentum_rebuilt": _GUARDED + " (set_momentum)",
    "lazy_layers.py:_lazy_conv.LazyConv.__init__": _INIT,
    "lazy_layers.py:_lazy_conv_transpose.LazyConvTranspose.__init__": _INIT,
    "transposed_conv_layers.py:_conv_transpose_layer.ConvTranspose.__init__": _INIT,
    "lazy_layers.py:_lazy_conv_transpose.LazyConvTranspose._build": "a lazy layer builds in its Python __call__ "
                                                                     "(construct raises ValueError before built)",
    "module_cast.py:_cells_cast": _GUARDED + " (module_cast)",
    "module_tree.py:_refuse_while_compiling": (
        "runs in Python: MindSpore calls a Cell's __getitem__/__iter__ while it compiles (measured: "
        "`pl = self.plist; pl[1]` in an ms.jit construct stops with this MigrationError)"),
    "optim.py:_TorchOptimizer.step": _OPTIM,
    "optim.py:_group_added": _OPTIM + " (add_param_group on a built optimizer)",
    "optim.py:stepped_optimizer": _OPTIM,
    "optim.py:clear_module_grads": _OPTIM + " (model.zero_grad(), grad_carry.py)",
    "optim.py:clears_all_gradients": _OPTIM + " (grad_carry.py)",
    "user_optimizers.py:give_gradients": _OPTIM + " (SAM's first_step/second_step after a converted grad_step)",
    "user_optimizers.py:_closure_gives_gradients.stepped.with_gradients":
        "a hand-written optimizer's step() runs on the host (user_optimizers.py: compile_step runs a step reaching "
        "one op by op, a compiled call of it refuses)",
    "optim.py:closure_loss_and_grads": _OPTIM + " (step(closure), step_closure.py)",
    "optim.py:_cycled_momentum": "an LR scheduler's set-up, on the host",
    "rnn_packing.py:PackedSequence.__init__": (
        "packing runs op by op only: pack_padded_sequence refuses a compiling graph first, and a PackedSequence "
        "built directly from torch's fields needs host reads (asnumpy) no graph compiles"),
}


def _is_constexpr(fn: ast.AST) -> bool:
    for dec in getattr(fn, "decorator_list", ()):
        target = dec.func if isinstance(dec, ast.Call) else dec
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name.endswith("constexpr"):
            return True
    return False


def _raises_migration_error(node: ast.Raise) -> bool:
    exc = node.exc
    if isinstance(exc, ast.Call):
        exc = exc.func
    return isinstance(exc, ast.Name) and exc.id == "MigrationError"


def migration_raises():
    """{"file:qualname": (constexpr?, [lines])} for every function of the runtime holding `raise MigrationError`."""
    found = {}
    sources = [TEMPLATES / "_ms_compat.py"] + sorted((TEMPLATES / "compat_parts").glob("*.py"))
    assert len(sources) > 50, sources
    for path in sources:
        tree = ast.parse(path.read_text(encoding="utf-8"))

        def walk(node, names, fn):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    inner = child if not isinstance(child, ast.ClassDef) else fn
                    walk(child, names + [child.name], inner)
                    continue
                if isinstance(child, ast.Raise) and _raises_migration_error(child):
                    key = f"{path.name}:{'.'.join(names)}"
                    entry = found.setdefault(key, (fn is not None and _is_constexpr(fn), []))
                    entry[1].append(child.lineno)
                walk(child, names, fn)
        walk(tree, [], None)
    return found


def test_no_migration_error_raise_where_a_graph_compiles():
    found = migration_raises()
    unclassified = {key: lines for key, (constexpr, lines) in found.items()
                    if not constexpr and key not in HOST_SIDE}
    assert not unclassified, (
        "`raise MigrationError` in runtime helpers that are neither a constexpr nor classified as host-side "
        "(a compiled graph reaching them stops with 'Unsupported exception type: MigrationError'): raise through "
        f"_raise_migration_error / _refuse_compiled, or add a reason to HOST_SIDE: {unclassified}")


def test_host_side_table_has_no_stale_entries():
    found = migration_raises()
    stale = sorted(key for key in HOST_SIDE if key not in found or found[key][0])
    assert not stale, f"HOST_SIDE entries that no longer raise MigrationError (remove them): {stale}"


def test_the_scan_sees_the_known_constexpr_raises():
    # the scanner itself: constexprs that raise MigrationError are found and recognised as such
    found = migration_raises()
    for key in ("_ms_compat.py:_raise_migration_error", "host_draws.py:_refuse_compiled",
                "nn_extra.py:_interpolate_factor", "torch_einsum.py:_torch_einsum_pattern",
                "factory_kwargs.py:_factory_keys", "float8_casts.py:_float8_on_cpu"):
        assert found.get(key, (False,))[0], (key, found.get(key))
