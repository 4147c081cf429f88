"""Deployment: torch.onnx.export, torch.jit.trace/save/load, torch.export.export/save/load.

MindSpore writes deployable graphs with mindspore.export (MindIR or ONNX) and reads MindIR
back with mindspore.load + nn.GraphCell. The emitted helpers live in
templates/compat_parts/deploy.py. (torch.jit.script is a compiler hint mapped to the
network itself in mappings/module_api.py.)"""
from __future__ import annotations

from ..records import DIFFERENCE, mapping

T = "tests/parity/test_deploy.py"

_MINDIR = ("writes MindIR (mindspore.export, file_format='MINDIR') at exactly the path given, whatever its suffix: "
           "only MindSpore reads it back (mindspore.load + nn.GraphCell, MindSpore Lite), not PyTorch")

mapping("torch.onnx.export", "_ms_compat.onnx_export",
        # positional order of torch 1.x (after f everything is keyword-only since torch 2.5)
        args=("model", "args", "f", "export_params", "verbose", "training", "input_names", "output_names",
              "operator_export_type", "opset_version", "do_constant_folding", "dynamic_axes",
              "keep_initializers_as_inputs", "custom_opsets", "export_modules_as_functions", "autograd_inlining",
              "kwargs", "dynamo", "external_data", "dynamic_shapes", "custom_translation_table", "report", "optimize",
              "verify", "profile", "dump_exported_program", "artifacts_dir", "fallback"),
        target_args=("model", "args", "f"),
        drop=("export_params", "verbose", "input_names", "output_names", "opset_version", "dynamic_axes",
              "keep_initializers_as_inputs", "dynamo", "external_data", "dynamic_shapes", "custom_translation_table",
              "report", "optimize", "verify", "profile", "dump_exported_program", "artifacts_dir", "fallback",
              "training", "operator_export_type", "do_constant_folding", "custom_opsets",
              "export_modules_as_functions", "autograd_inlining"),
        unsupported={"kwargs": "keyword inputs cannot be exported: mindspore.export takes positional inputs only"},
        unsupported_ok={"kwargs": ("None", "{}")},
        status=DIFFERENCE,
        note="mindspore.export(net, *args, file_format='ONNX') in inference mode, written at exactly the path given "
             "(or into the file object); input/output names, dynamic axes and the opset version are MindSpore's own "
             "(dropped), so an ONNX consumer that looks inputs up by name needs MindSpore's names",
        test=f"{T}::test_onnx_export")

mapping("torch.jit.trace", "_ms_compat.jit_trace",
        args=("func", "example_inputs", "optimize", "check_trace", "check_inputs", "check_tolerance", "strict",
              "_force_outplace", "_module_class", "_compilation_unit", "example_kwarg_inputs", "_store_inputs"),
        target_args=("model", "example_inputs"), rename={"func": "model"},
        drop=("optimize", "check_trace", "check_inputs", "check_tolerance", "strict", "_force_outplace",
              "_module_class", "_compilation_unit", "_store_inputs"),
        unsupported={"example_kwarg_inputs": "keyword example inputs cannot be exported"},
        unsupported_ok={"example_kwarg_inputs": ("None",)},
        status=DIFFERENCE,
        note="returns the network itself, not a compiled copy (compile with GRAPH_MODE or mindspore.jit); the "
             "example inputs are remembered so jit_save can write MindIR",
        test=f"{T}::test_jit_trace_save_load")
mapping("torch.jit.save", "_ms_compat.jit_save", args=("m", "f", "_extra_files"), target_args=("m", "f"),
        unsupported={"_extra_files": "extra files are not stored in MindIR"}, unsupported_ok={"_extra_files": ("None",)},
        status=DIFFERENCE, note=_MINDIR + "; the network must come from jit_trace (its example inputs compile it)",
        test=f"{T}::test_jit_trace_save_load")
mapping("torch.jit.load", "_ms_compat.jit_load", args=("f", "map_location", "_extra_files", "_restore_shapes"),
        target_args=("f",), drop=("map_location", "_restore_shapes"),
        unsupported={"_extra_files": "extra files are not stored in MindIR"}, unsupported_ok={"_extra_files": ("None",)},
        status=DIFFERENCE,
        note="nn.GraphCell(mindspore.load(f)): reads MindIR (written by jit_save or mindspore.export), not a "
             "TorchScript archive written by PyTorch (that raises, naming msmigrate weights); inference only",
        test=f"{T}::test_jit_trace_save_load")

mapping("torch.export.export", "_ms_compat.export_program",
        args=("mod", "args", "kwargs", "dynamic_shapes", "strict", "preserve_module_call_signature",
              "prefer_deferred_runtime_asserts_over_guards"),
        target_args=("mod", "args", "kwargs"),
        drop=("dynamic_shapes", "strict", "preserve_module_call_signature",
              "prefer_deferred_runtime_asserts_over_guards"),
        status=DIFFERENCE,
        note="an ExportedProgram holding the network and its example inputs; .module() returns the network itself "
             "(nothing is compiled until export_save); dynamic_shapes is dropped",
        test=f"{T}::test_torch_export_save_load")
mapping("torch.export.save", "_ms_compat.export_save",
        args=("ep", "f", "extra_files", "opset_version", "pickle_protocol"), target_args=("ep", "f"),
        drop=("opset_version", "pickle_protocol"),
        unsupported={"extra_files": "extra files are not stored in MindIR"}, unsupported_ok={"extra_files": ("None",)},
        status=DIFFERENCE, note=_MINDIR, test=f"{T}::test_torch_export_save_load")
mapping("torch.export.load", "_ms_compat.export_load", args=("f", "extra_files", "expected_opset_version"),
        target_args=("f",), drop=("expected_opset_version",),
        unsupported={"extra_files": "extra files are not stored in MindIR"}, unsupported_ok={"extra_files": ("None",)},
        status=DIFFERENCE,
        note="reads MindIR; .module() of the result is an nn.GraphCell (inference only)",
        test=f"{T}::test_torch_export_save_load")
