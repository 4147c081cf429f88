"""Deployment: torch.onnx.export, torch.jit.trace / save / load, torch.export.

MindSpore writes a deployable graph with mindspore.export(net, *inputs, file_name=...,
file_format="MINDIR" or "ONNX"): the network is compiled on the example inputs and
written with its weights. A MindIR file is read back with mindspore.load and run with
nn.GraphCell (or MindSpore Lite); an ONNX file by any ONNX runtime.

Where torch differs
    torch.jit.trace returns a compiled copy of the module; MindSpore compiles the network
    itself (GRAPH_MODE or mindspore.jit), so jit_trace returns the network unchanged and
    only remembers the example inputs, which jit_save needs to write the file.
    torch.jit.save / torch.export.save write MindIR, not TorchScript: only MindSpore
    (mindspore.load + nn.GraphCell, MindSpore Lite) reads the file, whatever its name.
    mindspore.export appends ".mindir" / ".onnx" to a name without that suffix; these
    helpers write at exactly the path the program gives (or into a writable binary file
    object), so the rest of the program finds the file where it expects it.
"""
import os
import shutil
import tempfile

import mindspore as ms   # _export_lax_fallback also serves `msmigrate export` (msmigrate/export.py)


def _example_inputs(args):
    """torch's example `args`: one tensor, or a tuple/list of them (a trailing dict holds
    keyword inputs, which mindspore.export cannot take)."""
    if isinstance(args, list):
        args = tuple(args)
    if not isinstance(args, tuple):
        args = (args,)
    if args and isinstance(args[-1], dict):
        if args[-1]:
            raise MigrationError("keyword inputs cannot be exported: mindspore.export takes positional inputs only")
        args = args[:-1]
    # mindspore.export needs Tensors; numpy arrays and numbers are wrapped
    return tuple(ms.Tensor(a) if isinstance(a, (np.ndarray, np.generic)) else a for a in args)


def _no_extras(**given):
    """Arguments MindIR/ONNX files have no room for (keyword inputs, extra files): None or empty only."""
    for name, value in given.items():
        if value:
            raise MigrationError(f"{name}= cannot be exported with mindspore.export (positional tensor inputs only, "
                                 f"no extra files)")


def _export_lax_fallback(net, inputs, file_name, file_format):
    """mindspore.export compiles in strict syntax mode, which refuses plain Python that GRAPH
    mode runs through its fallback (e.g. reading fn.__module__ for logging); such a network is
    exported again in lax mode (MS_DEV_JIT_SYNTAX_LEVEL=2), as GRAPH mode would run it.
    Returns strict mode's refusal when the lax export was needed, else None."""
    level = ms.get_context("jit_syntax_level")
    try:
        ms.export(net, *inputs, file_name=file_name, file_format=file_format)
        return None
    except Exception as exc:
        if "strict mode" not in str(exc):
            raise
        strict_error = exc
    finally:
        ms.set_context(jit_syntax_level=level)  # a failed export leaves STRICT set
    old = os.environ.get("MS_DEV_JIT_SYNTAX_LEVEL")
    os.environ["MS_DEV_JIT_SYNTAX_LEVEL"] = "2"
    try:
        ms.export(net, *inputs, file_name=file_name, file_format=file_format)
    finally:
        ms.set_context(jit_syntax_level=level)
        if old is None:
            os.environ.pop("MS_DEV_JIT_SYNTAX_LEVEL", None)
        else:
            os.environ["MS_DEV_JIT_SYNTAX_LEVEL"] = old
    return strict_error


def _write_graph(net, inputs, f, file_format, training=False):
    """mindspore.export into a temporary folder, then to exactly `f` (path or binary file)."""
    suffix = {"MINDIR": ".mindir", "ONNX": ".onnx"}[file_format]
    was_training = net.training if isinstance(net, nn.Cell) else None
    if was_training is not None:
        net.set_train(training)
        # MindSpore 2.10 caches the graph it compiled for an earlier export of this network and
        # fails converting it again (ONNX: "i: 3 out of range: 3 ... BiasAdd"): compile afresh
        cache = getattr(net, "compile_cache", None)
        if isinstance(cache, set):
            cache.difference_update([p for p in cache if str(p).startswith("export")])
    try:
        with tempfile.TemporaryDirectory(prefix="ms-export-") as tmp:
            written = os.path.join(tmp, "model" + suffix)
            _export_lax_fallback(net, inputs, written, file_format)
            if hasattr(f, "write"):
                with open(written, "rb") as src:
                    shutil.copyfileobj(src, f)
            else:
                target = os.fspath(f)
                if os.path.exists(target):
                    os.remove(target)  # MindSpore writes its files read-only; replace like torch does
                shutil.copyfile(written, target)
    finally:
        if was_training is not None:
            net.set_train(was_training)


def onnx_export(model, args, f, kwargs=None):
    """torch.onnx.export(model, args, f): an ONNX file written by MindSpore's exporter, in
    inference mode like torch's default (training=TrainingMode.EVAL). Input/output names,
    dynamic axes and the opset version are MindSpore's own."""
    _no_extras(kwargs=kwargs)
    _write_graph(model, _example_inputs(args), f, "ONNX", training=False)


def jit_trace(model, example_inputs=None, example_kwarg_inputs=None):
    """torch.jit.trace: the network itself (compile it with GRAPH_MODE or mindspore.jit);
    the example inputs and train/eval mode are remembered for jit_save."""
    _no_extras(example_kwarg_inputs=example_kwarg_inputs)
    if example_inputs is not None and isinstance(model, nn.Cell):
        # object.__setattr__: a plain Python attribute, not registered as a Cell attribute
        object.__setattr__(model, "_msmigrate_example", (_example_inputs(example_inputs), model.training))
    return model


def jit_save(m, f, _extra_files=None):
    """torch.jit.save(traced, f): writes MindIR (see the module note) at exactly `f`."""
    _no_extras(_extra_files=_extra_files)
    example = getattr(m, "_msmigrate_example", None) if isinstance(m, nn.Cell) else None
    if example is None:
        raise MigrationError(
            "jit_save needs example inputs to compile the network: trace it first with jit_trace(net, inputs), "
            "or call mindspore.export(net, *inputs, file_name=..., file_format='MINDIR')")
    _write_graph(m, example[0], f, "MINDIR", training=example[1])


def jit_load(f, _extra_files=None):
    """torch.jit.load(f): a MindIR file (written by jit_save or mindspore.export) as a
    callable nn.GraphCell. mindspore.load only reads names ending in .mindir, so other
    names (model.pt) and file objects go through a temporary copy."""
    _no_extras(_extra_files=_extra_files)
    with tempfile.TemporaryDirectory(prefix="ms-load-") as tmp:
        path = os.path.join(tmp, "model.mindir")
        if hasattr(f, "read"):
            with open(path, "wb") as dst:
                shutil.copyfileobj(f, dst)
        elif os.fspath(f).endswith(".mindir"):
            path = os.fspath(f)
        else:
            shutil.copyfile(os.fspath(f), path)
        with open(path, "rb") as fh:
            if fh.read(4) == b"PK\x03\x04":
                raise MigrationError(
                    f"{f} is a TorchScript archive written by PyTorch: MindSpore cannot load it. Re-export the "
                    f"converted network (jit_save / mindspore.export), or convert its state_dict with msmigrate weights")
        return nn.GraphCell(ms.load(path))


class ExportedProgram:
    """What torch.export.export / torch.export.load return: .module() gives the network
    (an nn.GraphCell after export_load)."""

    def __init__(self, net, example_inputs=None, training=False):
        self._net, self.example_inputs, self._training = net, example_inputs, training

    def module(self):
        return self._net

    def __call__(self, *args):
        return self._net(*args)


def export_program(mod, args=(), kwargs=None):
    """torch.export.export(mod, args): the network and its example inputs (nothing is
    compiled until export_save)."""
    if kwargs:
        raise MigrationError("keyword inputs cannot be exported: mindspore.export takes positional inputs only")
    return ExportedProgram(mod, _example_inputs(args), mod.training if isinstance(mod, nn.Cell) else False)


def export_save(ep, f, extra_files=None):
    """torch.export.save(ep, f): writes MindIR at exactly `f`."""
    _no_extras(extra_files=extra_files)
    if ep.example_inputs is None:  # a loaded program: already a compiled graph
        raise MigrationError("a loaded program cannot be saved again; save the file you loaded it from")
    _write_graph(ep.module(), ep.example_inputs, f, "MINDIR", training=ep._training)


def export_load(f, extra_files=None):
    """torch.export.load(f): the MindIR file as an ExportedProgram whose .module() is an nn.GraphCell."""
    _no_extras(extra_files=extra_files)
    return ExportedProgram(jit_load(f))
