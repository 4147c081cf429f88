"""nn.Module machinery, parameters and buffers, nn.init, and torch's compiler and
telemetry hooks that have no meaning in MindSpore."""
from __future__ import annotations

import re

import libcst as cst

from ..callsite import UnsupportedSite
from ..records import DIFFERENCE, mapping, rule

T = "tests/parity/test_module_api.py"

mapping("torch.nn.Module", "mindspore.nn.Cell",
        note="forward() becomes construct(); a new Module is in train mode, a new Cell in eval mode: a Cell "
             "that builds Dropout/BatchNorm/RNN/attention layers or reads self.training ends __init__ with "
             "set_train(True) (msmigrate/default_mode.py)", test=f"{T}::test_cell_conversion")
# torch's calls that allocate a new tensor: a Parameter made from one holds storage of its own already
_FRESH = re.compile(r"^torch\.(zeros|ones|full|empty|randn|rand|randint|normal|eye|tensor|Tensor|FloatTensor|"
                    r"DoubleTensor|LongTensor|as_tensor|from_numpy|zeros_like|ones_like|full_like|empty_like|"
                    r"randn_like|rand_like|randint_like|arange|linspace|logspace|randperm)$")


def _fresh(tr, node: cst.BaseExpression) -> bool:
    """The original data expression is a call allocating a new tensor (not a view of another one)."""
    return isinstance(node, cst.Call) and bool(_FRESH.match(tr._torch_qname(node.func) or ""))


def _empty_parameter(ctx):
    """nn.Parameter() with no data: torch's empty float32 Parameter (mindspore.Parameter requires a value);
    data computed from another tensor (not a fresh factory call) through _ms_compat.parameter_data, which gives the
    Parameter storage of its own (compat_parts/parameter_storage.py); otherwise the record's renaming."""
    b = ctx.bound
    if b.has("data") and ctx.code("data") != "None":
        original = ctx.original.args[0].value if ctx.original.args and ctx.original.args[0].keyword is None \
            and not ctx.original.args[0].star else None
        for a in ctx.original.args:
            if a.keyword is not None and a.keyword.value == "data":
                original = a.value
        if original is not None and not _fresh(ctx.tr, original) and not isinstance(
                original, (cst.Integer, cst.Float, cst.List, cst.Tuple)):
            b.set("data", f"_ms_compat.parameter_data({ctx.code('data')})", positional=b.positional.get("data", True))
            ctx.tr.uses_compat = True
        return None
    grad = f", requires_grad={ctx.code('requires_grad')}" if b.has("requires_grad") else ""
    return ctx.expr(f"ms.Parameter(ops.zeros(0, ms.float32){grad})")


for _p in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
    rule(_p, "mindspore.Parameter", args=("data", "requires_grad"), target_args=("default_input",),
         rename={"data": "default_input"},
         note="named after the attribute it is assigned to; Parameter() with no data is an empty float32 one, as "
              "torch's", test=f"{T}::test_parameter_and_buffers")(_empty_parameter)

# ------------------------------------------------------------ Module methods
# A Cell's own sub-cells and Parameters by attribute name, under MindSpore's names for torch's dicts (Beta-VAE's
# weight_init: `for block in self._modules: for m in self._modules[block]: ...`). The transformer renames the
# attribute where it is read; a store to it stays as written.
for _attr, _target in (("_modules", "_cells"), ("_parameters", "_params")):
    mapping(f"Module.{_attr}", f"expr:{{self}}.{_target}",
            note=f"a Cell's own sub-cells / Parameters by name (torch's Module.{_attr}, MindSpore's Cell.{_target})",
            test="tests/test_module_internals.py::test_modules_and_parameters_by_name")
T_OWN_TRAIN = "tests/test_heldout60_programs.py::test_train_overridden_by_a_layer"


def _overrides_train(ctx) -> bool:
    """A Module class of the project defines train(self, mode) (loralib's merge in eval()), and this call is not
    `super().train(mode)` inside one: _ms_compat.train_mode (compat_parts/train_overrides.py) calls it."""
    receiver = ctx.receiver_code() or ""
    return bool(getattr(ctx.tr.index, "overrides_train", False)) and receiver != "super()"


def _eval(ctx):
    if _overrides_train(ctx):
        ctx.tr.uses_compat = True
        return ctx.expr(f"_ms_compat.train_mode({ctx.receiver_code()}, False)")
    return ctx.expr(f"{ctx.receiver_code()}.set_train(False)")


rule("Module.eval", None, note="Cell.training defaults to False; where the project's Module classes override "
     "train(mode), _ms_compat.train_mode calls each cell's own train() as torch's eval() does",
     test=f"{T}::test_module_methods")(_eval)


def _train(ctx):
    mode = ctx.code("mode")
    if _overrides_train(ctx):
        ctx.tr.uses_compat = True
        return ctx.expr(f"_ms_compat.train_mode({ctx.receiver_code()}, {mode or 'True'})")
    return ctx.expr(f"{ctx.receiver_code()}.set_train({mode or 'True'})")


rule("Module.train", None, args=("mode",), test=f"{T}::test_module_methods")(_train)
mapping("Module.parameters", "_ms_compat.parameters", args=("recurse",), target_args=("cell", "recurse"),
        note="torch's parameters: no buffers (Cell.get_parameters() also yields BatchNorm's moving statistics "
             "and persistent buffers)", test=f"{T}::test_module_methods")
mapping("Module.named_parameters", "_ms_compat.named_parameters", args=("prefix", "recurse", "remove_duplicate"),
        target_args=("cell", "prefix", "recurse", "remove_duplicate"),
        note="torch's names (LayerNorm/BatchNorm weight and bias, Embedding weight where MindSpore says "
             "gamma, beta, embedding_table), no buffers: name-based grouping (weight decay) keeps its meaning",
        test=f"{T}::test_module_methods")
mapping("Module.modules", "_ms_compat.modules", target_args=("cell",), test=f"{T}::test_module_methods",
        note="the cell itself and every sub-cell, depth first, as torch's modules()")
mapping("Module.apply", "_ms_compat.module_apply", args=("fn",), target_args=("cell", "fn"),
        test="tests/parity/test_real_programs.py::test_module_apply_init",
        note="fn sees each cell under torch's class name (Dense as Linear) with torch's attribute names "
             "(BatchNorm/LayerNorm weight, bias, running_mean, Embedding weight), so class-name and isinstance "
             "tests in init functions select the same layers and their writes reach the parameters; "
             "a receiver that is no Cell keeps its own apply()")
mapping("Module.named_modules", "_ms_compat.named_modules", args=("memo", "prefix", "remove_duplicate"),
        target_args=("cell", "memo", "prefix", "remove_duplicate"),
        note="torch's module paths (the inner cells of MindSpore's own layers are not listed)",
        test=f"{T}::test_module_methods")
mapping("Module.children", "_ms_compat.children", target_args=("cell",), test=f"{T}::test_module_methods",
        note="the direct sub-cells torch's module has (not the inner cells of MindSpore's own layers)")
mapping("Module.named_children", "_ms_compat.named_children", target_args=("cell",),
        note="the direct sub-cells torch's module has (not the inner cells of MindSpore's own layers)",
        test=f"{T}::test_module_methods")
# Module.state_dict / Module.load_state_dict: see mappings/checkpoints.py
mapping("Module.register_buffer", "_ms_compat.register_buffer", args=("name", "tensor", "persistent"),
        target_args=("cell", "name", "tensor", "persistent"),
        note="persistent buffers become Parameters with requires_grad=False so checkpoints keep them",
        test=f"{T}::test_parameter_and_buffers")
mapping("Module.register_parameter", "expr:setattr({self}, {name}, {param})", args=("name", "param"),
        test=f"{T}::test_parameter_and_buffers")
mapping("Module.add_module", "_ms_compat.add_module", args=("name", "module"),
        target_args=("cell", "name", "module"),
        note="insert_child_to_cell, and a SequentialCell also runs the new child", test=f"{T}::test_module_methods")
mapping("Module.register_module", "_ms_compat.add_module", args=("name", "module"),
        target_args=("cell", "name", "module"), note="torch's alias of add_module",
        test=f"{T}::test_buffers_and_lookups")
mapping("Module.named_buffers", "_ms_compat.named_buffers", args=("prefix", "recurse", "remove_duplicate"),
        target_args=("cell", "prefix", "recurse", "remove_duplicate"), status=DIFFERENCE,
        note="register_buffer's tensors (persistent ones are Parameters here) and norm layers' running statistics "
             "under torch's names; MindSpore's BatchNorm keeps no num_batches_tracked, which is not listed",
        test=f"{T}::test_buffers_and_lookups")
mapping("Module.buffers", "_ms_compat.buffers", args=("recurse",), target_args=("cell", "recurse"), status=DIFFERENCE,
        note="as named_buffers: no num_batches_tracked of a BatchNorm", test=f"{T}::test_buffers_and_lookups")
mapping("Module.get_parameter", "_ms_compat.get_parameter", args=("target",), target_args=("cell", "target"),
        note="by torch's parameter names (weight for gamma...)", test=f"{T}::test_buffers_and_lookups")
mapping("Module.get_buffer", "_ms_compat.get_buffer", args=("target",), target_args=("cell", "target"),
        note="by torch's buffer names (running_mean for moving_mean)", test=f"{T}::test_buffers_and_lookups")
mapping("Module.get_submodule", "_ms_compat.get_submodule", args=("target",), target_args=("cell", "target"),
        note="torch's module paths", test=f"{T}::test_buffers_and_lookups")
mapping("Module.requires_grad_", "_ms_compat.module_requires_grad_", args=("requires_grad",),
        target_args=("cell", "requires_grad"),
        note="a Cell has no requires_grad_: the flag of each of torch's parameters (not the buffers), the module "
             "returned", test="tests/parity/test_autograd_scripts.py::test_module_requires_grad_")
mapping("Module.zero_grad", "drop", args=("set_to_none",),
        note="MindSpore returns gradients from grad/value_and_grad; nothing accumulates", test=f"{T}::test_module_methods")

# ------------------------------------------------------------ nn.init
_INIT = {
    "kaiming_normal_": ("tensor", "a", "mode", "nonlinearity", "generator"),
    "kaiming_uniform_": ("tensor", "a", "mode", "nonlinearity", "generator"),
    "xavier_uniform_": ("tensor", "gain", "generator"),
    "xavier_normal_": ("tensor", "gain", "generator"),
    "normal_": ("tensor", "mean", "std", "generator"),
    "uniform_": ("tensor", "a", "b", "generator"),
    "trunc_normal_": ("tensor", "mean", "std", "a", "b", "generator"),
    "constant_": ("tensor", "val"),
    "zeros_": ("tensor",),
    "ones_": ("tensor",),
    "orthogonal_": ("tensor", "gain", "generator"),
}
# a layer's own parameter (`m.weight`, `self.fc.bias`, BatchNorm's `m.gamma`): MindSpore's initializer
# inline, `p.set_data(initializer(HeNormal(...), p.shape, p.dtype))`; these draw the values the helper
# draws (same initializer, same stream: tests/parity/test_module_api.py::test_init_native_is_the_helper)
_INIT_NATIVE = {
    "kaiming_normal_": ("HeNormal(negative_slope={a}, mode={mode}, nonlinearity={nonlinearity})",
                        {"a": "0", "mode": "'fan_in'", "nonlinearity": "'leaky_relu'"}),
    "kaiming_uniform_": ("HeUniform(negative_slope={a}, mode={mode}, nonlinearity={nonlinearity})",
                         {"a": "0", "mode": "'fan_in'", "nonlinearity": "'leaky_relu'"}),
    "xavier_uniform_": ("XavierUniform(gain={gain})", {"gain": "1.0"}),
    "normal_": ("Normal(sigma={std}, mean={mean})", {"mean": "0.0", "std": "1.0"}),
    "constant_": ("Constant({val})", {}),
    "zeros_": ("Zero()", {}),
    "ones_": ("One()", {}),
}
_LAYER_PARAM = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*\.(weight|bias|gamma|beta|embedding_table)$")


def _native_init(name):
    template, defaults = _INIT_NATIVE[name]

    def convert(ctx):
        p = ctx.code("tensor")
        if p is None or not _LAYER_PARAM.match(p) or p.startswith("self.") and p.count(".") == 1 \
                or any(a not in defaults and a not in ("tensor", "generator", "val")
                       for a in ctx.bound.args):
            return None   # a tensor that may not be a Parameter (x.data, self.w): the helper handles both
        values = {a: ctx.code(a) or d for a, d in defaults.items()}
        if name == "constant_":
            values["val"] = ctx.code("val")
        init = "ms.common.initializer"
        made = f"{init}.{template.format(**values)}"
        return ctx.expr(f"{p}.set_data({init}.initializer({made}, {p}.shape, {p}.dtype))")
    convert.__name__ = convert.__qualname__ = f"init_{name}"
    return convert


for _name, _args in _INIT.items():
    _targs = ("param",) + _args[1:]   # the helpers name the tensor `param`: `tensor=w` becomes `param=w`
    _record = dict(args=_args, target_args=_targs[:-1] if _targs[-1] == "generator" else _targs,
                   drop=("generator",), rename={"tensor": "param"}, test=f"{T}::test_init",
                   note="set_data with a mindspore.common.initializer of the same distribution (inline on a "
                        "layer's parameter, m.weight; _ms_compat for other tensors, which have no set_data)")
    if _name in _INIT_NATIVE:
        rule(f"torch.nn.init.{_name}", f"_ms_compat.{_name}", **_record)(_native_init(_name))
    else:
        mapping(f"torch.nn.init.{_name}", f"_ms_compat.{_name}", **_record)
# torch's deprecated aliases without the underscore (init.kaiming_normal, init.constant...: old code such as
# pytorch-cifar's utils.init_params) call the `_` form with the same arguments and warn: converted as that form
for _name in ("kaiming_normal_", "kaiming_uniform_", "xavier_uniform_", "xavier_normal_", "normal_", "uniform_",
              "constant_", "orthogonal_"):
    _args = tuple(a for a in _INIT[_name] if a != "generator")
    _record = dict(args=_args, target_args=("param",) + _args[1:], rename={"tensor": "param"},
                   test=f"{T}::test_init",
                   note=f"torch's deprecated alias of {_name}, converted as {_name}")
    if _name in _INIT_NATIVE:
        rule(f"torch.nn.init.{_name[:-1]}", f"_ms_compat.{_name}", **_record)(_native_init(_name))
    else:
        mapping(f"torch.nn.init.{_name[:-1]}", f"_ms_compat.{_name}", **_record)
mapping("torch.nn.init.calculate_gain", "_ms_compat.calculate_gain", args=("nonlinearity", "param"),
        target_args=("nonlinearity", "param"), test=f"{T}::test_init")

# ------------------------------------------------------------ compiler, telemetry, checks
mapping("torch.jit.is_scripting", "expr:False", note="no TorchScript in MindSpore", test=f"{T}::test_jit_hints")
mapping("torch.jit.is_tracing", "expr:False", note="no TorchScript in MindSpore", test=f"{T}::test_jit_hints")
mapping("torch._C._get_tracing_state", "expr:None", test=f"{T}::test_jit_hints")
mapping("torch.jit.annotate", "expr:{the_value}", args=("the_type", "the_value"), drop=("the_type",), test=f"{T}::test_jit_hints")
mapping("torch.jit.Final", "typing.Final", test=f"{T}::test_jit_hints")
for _n in ("torch.jit.unused", "torch.jit.ignore", "torch.jit.export", "torch.jit.script", "torch.compile"):
    mapping(_n, "identity", args=("obj",), note="compiler hint removed; MindSpore compiles with GRAPH_MODE or @mindspore.jit",
            status=DIFFERENCE, test=f"{T}::test_jit_hints")
mapping("torch.fx.wrap", "drop", args=("fn_or_name",), note="torch.fx registration; nothing to do in MindSpore",
        test=f"{T}::test_jit_hints")
mapping("torch._assert", "drop", args=("condition", "message"), status=DIFFERENCE,
        note="runtime check removed (not expressible inside a compiled MindSpore graph); shapes are checked by the ops",
        test=f"{T}::test_jit_hints")
mapping("torch._C._log_api_usage_once", "drop", args=("event",), note="torch telemetry", test=f"{T}::test_jit_hints")
mapping("torch.ops.load_library", "_ms_compat.load_torch_library", args=("path",),
        note="torch C++ extensions cannot load into MindSpore; raises OSError like a failed load",
        test=f"{T}::test_jit_hints")
mapping("torch.manual_seed", "_ms_compat.manual_seed", args=("seed",), status=DIFFERENCE,
        note="mindspore.set_seed; random streams differ between frameworks: same seed, different numbers. NumPy's "
             "stream, which mindspore.set_seed reseeds, is left where it was once the program seeded it, as "
             "torch leaves it", test=f"{T}::test_jit_hints")


# checkpoint()'s own keywords; every other keyword goes to the function (non-reentrant mode)
_CHECKPOINT_OWN = ("use_reentrant", "context_fn", "determinism_check", "debug", "early_stop", "preserve_rng_state")


def _checkpoint(ctx):
    b = ctx.bound
    fn = b.value("function")
    if fn is None:
        raise UnsupportedSite("no function given")
    if any(a.star == "**" for a in b.starred):
        raise UnsupportedSite("checkpoint(function, **kwargs): checkpoint's own keywords (use_reentrant, ...) "
                              "cannot be told from the function's")
    # in source order: `checkpoint(fn, *features)` (a DenseNet layer's concatenated inputs) stays `fn(*features)`
    rest = [b.args[n] for n in b.order if n != "function" and n not in _CHECKPOINT_OWN]
    rest = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) if i == len(rest) - 1 else a
            for i, a in enumerate(rest)]
    return cst.Call(func=ctx.render("_ms_compat.recomputed"), args=[cst.Arg(fn), *rest])


_checkpoint.handles_starred = True


rule("torch.utils.checkpoint.checkpoint", None, args=("function",), status=DIFFERENCE,
     note="the function called with its arguments (checkpoint's own use_reentrant/preserve_rng_state/... "
          "dropped): the same values and gradients, activations kept in memory (Cell.recompute() trades compute "
          "for memory). torch's backward runs the function again, so a BatchNorm in training mode inside it "
          "updates its running statistics twice per step: where a gradient is recorded the function runs a "
          "second time, its result unused (_ms_compat.recomputed). torch's reentrant mode gives no gradient when "
          "no input requires grad; MindSpore does",
     test="tests/parity/test_recompute.py::test_checkpoint")(_checkpoint)
mapping("torch.utils.checkpoint.checkpoint_sequential", "_ms_compat.checkpoint_sequential",
        args=("functions", "segments", "input", "use_reentrant", "preserve_rng_state"), target_args=("functions", "segments", "input"),
        drop=("use_reentrant", "preserve_rng_state"), status=DIFFERENCE,
        note="runs the functions (a SequentialCell or a list of cells) in order on input, without recomputation: "
             "the same values and gradients, activations kept in memory",
        test="tests/parity/test_recompute.py::test_checkpoint_sequential")

# (torch.utils.data.Dataset / IterableDataset as base classes: see mappings/data.py)
mapping("torch.onnx.register_custom_op_symbolic", "drop", args=("symbolic_name", "symbolic_fn", "opset_version"),
        note="ONNX exporter registration; MindSpore exports MindIR with mindspore.export", test=f"{T}::test_jit_hints")

# ------------------------------------------------------------ torch modules as objects (re-exports)
for _src, _dst in (("torch.nn", "mindspore.nn"), ("torch.nn.functional", "mindspore.ops"), ("torch", "mindspore")):
    mapping(_src, _dst, note="the module itself, re-exported by a project module",
            test="tests/test_convert_tree.py::test_tree_conversion_contract")

# ------------------------------------------------------------ gradient switches used as values
for _n in ("torch.no_grad", "torch.inference_mode", "torch.enable_grad", "torch.autograd.no_grad"):
    mapping(_n, "_ms_compat.no_grad",
            note="used as a value or called outside `with`/a decorator: a context manager and decorator that does "
                 "nothing, as the converted `with torch.no_grad():` (MindSpore records gradients only inside "
                 "grad/value_and_grad)", test="tests/parity/test_idioms.py::test_torch_as_value")
