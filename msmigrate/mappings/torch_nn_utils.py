"""torch.nn.utils computations on tensors and parameters -> the helpers in
templates/compat_parts/nn_utils.py (clip_grad_norm_/clip_grad_value_ are training-step records in
training.py). Proven by tests/parity/test_nn_utils.py.

weight_norm / spectral_norm (and their remove_*), parametrize/parametrizations and the rnn packing functions
are in nn_utils_reparam.py."""
from __future__ import annotations

from ..records import mapping

T = "tests/parity/test_nn_utils.py"

mapping("torch.nn.utils.parameters_to_vector", "_ms_compat.parameters_to_vector", args=("parameters",),
        target_args=("parameters",), note="ops.cat of the flattened parameters, in order",
        test=f"{T}::test_parameter_vectors")
mapping("torch.nn.utils.vector_to_parameters", "_ms_compat.vector_to_parameters", args=("vec", "parameters"),
        target_args=("vec", "parameters"), note="slices written with Parameter.set_data, in order",
        test=f"{T}::test_parameter_vectors")
mapping("torch.nn.utils.get_total_norm", "_ms_compat.get_total_norm",
        args=("tensors", "norm_type", "error_if_nonfinite", "foreach"),
        target_args=("tensors", "norm_type", "error_if_nonfinite", "foreach"),
        note="the norm of the per-tensor norms, as torch", test=f"{T}::test_total_norm")
mapping("torch.nn.utils.fuse_conv_bn_weights", "_ms_compat.fuse_conv_bn_weights",
        args=("conv_w", "conv_b", "bn_rm", "bn_rv", "bn_eps", "bn_w", "bn_b", "transpose"),
        target_args=("conv_w", "conv_b", "bn_rm", "bn_rv", "bn_eps", "bn_w", "bn_b", "transpose"),
        note="returns two Parameters, as torch", test=f"{T}::test_fuse_bn_weights")
mapping("torch.nn.utils.fuse_linear_bn_weights", "_ms_compat.fuse_linear_bn_weights",
        args=("linear_w", "linear_b", "bn_rm", "bn_rv", "bn_eps", "bn_w", "bn_b"),
        target_args=("linear_w", "linear_b", "bn_rm", "bn_rv", "bn_eps", "bn_w", "bn_b"),
        note="returns two Parameters, as torch", test=f"{T}::test_fuse_bn_weights")
mapping("torch.nn.utils.rnn.pad_sequence", "_ms_compat.pad_sequence",
        args=("sequences", "batch_first", "padding_value", "padding_side"),
        target_args=("sequences", "batch_first", "padding_value", "padding_side"),
        note="pads and stacks with ops.full/ops.cat/ops.stack", test=f"{T}::test_pad_sequence")

mapping("torch.nn.utils.fuse_conv_bn_eval", "_ms_compat.fuse_conv_bn_eval", args=("conv", "bn", "transpose"),
        target_args=("conv", "bn", "transpose"),
        note="a deep copy of the Conv cell with BatchNorm's moving statistics and gamma/beta folded in (a bias "
             "Parameter added when the conv had none)", test=f"{T}::test_fuse_bn_eval")
mapping("torch.nn.utils.fuse_linear_bn_eval", "_ms_compat.fuse_linear_bn_eval", args=("linear", "bn"),
        target_args=("linear", "bn"),
        note="a deep copy of the Dense cell with BatchNorm's moving statistics and gamma/beta folded in",
        test=f"{T}::test_fuse_bn_eval")
for _name in ("convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"):
    mapping(f"torch.nn.utils.{_name}", "identity", args=("module", "memory_format"),
            note="a memory layout change only (the values stay); MindSpore tensors have no memory format",
            test=f"{T}::test_fuse_bn_eval")
mapping("torch.nn.utils.skip_init", "_ms_compat.skip_init", args=("module_cls",), target_args=("module_cls",),
        note="builds the cell; torch leaves the parameters uninitialised (the program writes them before use), "
             "the cell has its initial values there", test=f"{T}::test_fuse_bn_eval")
