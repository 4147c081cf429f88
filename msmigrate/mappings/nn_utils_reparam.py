"""torch.nn.utils.weight_norm / spectral_norm / remove_weight_norm / remove_spectral_norm -> the helpers in
templates/compat_parts/weight_reparam.py (parametrize.* and parametrizations.* -> compat_parts/parametrize.py,
rnn packing -> compat_parts/rnn_packing.py): the cell gets torch's parameters (weight_g/weight_v; weight_orig with
the buffers weight_u/weight_v, under torch's state_dict names, so torch weights load) and its class a `weight`
property deriving the weight from them (PyNative and GRAPH mode, gradients included). Proven by
tests/parity/test_nn_utils_reparam.py (torch's weights loaded, outputs, gradients and the power-iteration
buffers compared in training and eval mode). On a Conv1d/Conv1dTranspose, whose MindSpore weight has an extra
axis 2, the new parameters keep torch's 3-D shapes and dim means torch's axis (wav2vec2's weight_norm(dim=2))."""
from __future__ import annotations

from ..callsite import UnsupportedSite
from ..records import DIFFERENCE, mapping, rule

T = "tests/parity/test_nn_utils_reparam.py"
U = "torch.nn.utils."

mapping(U + "weight_norm", "_ms_compat.weight_norm", args=("module", "name", "dim"),
        target_args=("module", "name", "dim"), test=f"{T}::test_weight_norm",
        note="weight = weight_g * weight_v / ||weight_v|| recomputed at every read of the weight (a class property "
             "instead of torch's forward pre-hook); parameters weight_g/weight_v as in torch's state_dict")
mapping(U + "remove_weight_norm", "_ms_compat.remove_weight_norm", args=("module", "name"),
        target_args=("module", "name"), test=f"{T}::test_weight_norm",
        note="the derived weight becomes a Parameter again, as torch")
mapping(U + "spectral_norm", "_ms_compat.spectral_norm", args=("module", "name", "n_power_iterations", "eps", "dim"),
        target_args=("module", "name", "n_power_iterations", "eps", "dim"), status=DIFFERENCE,
        test=f"{T}::test_spectral_norm",
        note="weight = weight_orig / (u . W v); in training mode the read of the weight first runs the power "
             "iterations on the buffers weight_u/weight_v, as torch's pre-hook before each forward (the built-in "
             "layers read it once per forward; Conv3d twice, advancing them twice; so does reading "
             "module.weight outside forward in training mode). Their random start values come from MindSpore's "
             "generator, not torch's: load torch's weight_u/weight_v (msmigrate weights) for the same values")
mapping(U + "remove_spectral_norm", "_ms_compat.remove_spectral_norm", args=("module", "name"),
        target_args=("module", "name"), test=f"{T}::test_spectral_norm",
        note="the current normalized weight (no power iteration) becomes a Parameter again, as torch")

P = "torch.nn.utils.parametrize."
T_P = "tests/parity/test_nn_utils_reparam.py::test_parametrize"
mapping(P + "register_parametrization", "_ms_compat.register_parametrization",
        args=("module", "tensor_name", "parametrization", "unsafe"),
        target_args=("module", "tensor_name", "parametrization", "unsafe"), test=T_P,
        note="the tensor becomes a property computing the parametrization cells (a converted nn.Module, its "
             "right_inverse used as torch does) from cell.parametrizations.<name>.original (or original0, "
             "original1... when right_inverse returns a tuple); torch's state_dict names")
mapping(P + "is_parametrized", "_ms_compat.is_parametrized", args=("module", "tensor_name"),
        target_args=("module", "tensor_name"), test=T_P)
mapping(P + "remove_parametrizations", "_ms_compat.remove_parametrizations",
        args=("module", "tensor_name", "leave_parametrized"),
        target_args=("module", "tensor_name", "leave_parametrized"), test=T_P,
        note="the parametrized value (or the single original, leave_parametrized=False) becomes a Parameter again")
mapping("torch.nn.utils.parametrizations.weight_norm", "_ms_compat.parametrizations_weight_norm",
        args=("module", "name", "dim"), target_args=("module", "name", "dim"), test=T_P,
        note="register_parametrization with torch's _WeightNorm: parameters parametrizations.<name>.original0 (g) "
             "and original1 (v), as torch")
mapping("torch.nn.utils.parametrizations.spectral_norm", "_ms_compat.parametrizations_spectral_norm",
        args=("module", "name", "n_power_iterations", "eps", "dim"),
        target_args=("module", "name", "n_power_iterations", "eps", "dim"), status=DIFFERENCE, test=T_P,
        note="register_parametrization with torch's _SpectralNorm: parametrizations.<name>.original and the buffers "
             "parametrizations.<name>.0._u/_v; power iterations in training mode, as torch. Their random start "
             "comes from MindSpore's generator, not torch's: load torch's _u/_v (msmigrate weights) to match")
mapping("torch.nn.utils.parametrizations.orthogonal", "_ms_compat.parametrizations_orthogonal",
        args=("module", "name", "orthogonal_map", "use_trivialization"),
        target_args=("module", "name", "orthogonal_map", "use_trivialization"),
        unsupported={"use_trivialization": "use_trivialization=False assigns through geqrf, which is not converted"},
        unsupported_ok={"use_trivialization": ("True",)}, test=f"{T}::test_orthogonal",
        note="torch's _Orthogonal (matrix_exp through _ms_compat.linalg_matrix_exp, cayley through ops.matrix_solve, "
             "householder reflections as matmuls: ops.orgqr has no gradient) with the buffer base = the QR-orthogonalized weight; "
             "parametrizations.<name>.original and .0.base as torch. A non-square weight's base is completed with "
             "random columns from MindSpore's generator, not torch's: load torch's base to match")

R = "torch.nn.utils.rnn."
T_R = "tests/parity/test_nn_utils_reparam.py::test_rnn_packing"
_PACKED = ("a PackedSequence holding the padded batch and the lengths; MindSpore's LSTM/GRU/RNN take it and run "
           "with seq_length, which computes torch's packed results; .data/.batch_sizes/.sorted_indices are torch's. "
           "PyNative only: compiling packing in GRAPH mode or ms.jit stops with MigrationError")


def _with_where(target: str, args):
    """`target(<the arguments as written>, where='module:line')`: packing refuses a compiled graph naming the line."""
    def convert(ctx):
        b = ctx.bound
        if b.starred or any(n not in args for n in b.order):
            raise UnsupportedSite("the packing call's arguments are bound by torch's names here")
        parts = [b.code(n) if b.positional[n] else f"{n}={b.code(n)}" for n in b.order]
        where = f"{ctx.tr.module_name}:{ctx.tr._line(ctx.original)}"
        return ctx.expr(f"{target}({', '.join(parts + [f'where={where!r}'])})")
    return convert


_PACK_ARGS = ("input", "lengths", "batch_first", "enforce_sorted")
rule(R + "pack_padded_sequence", "_ms_compat.pack_padded_sequence", args=_PACK_ARGS, test=T_R,
     note=_PACKED)(_with_where("_ms_compat.pack_padded_sequence", _PACK_ARGS))
rule(R + "pack_sequence", "_ms_compat.pack_sequence", args=("sequences", "enforce_sorted"), test=T_R,
     note=_PACKED)(_with_where("_ms_compat.pack_sequence", ("sequences", "enforce_sorted")))
mapping(R + "pad_packed_sequence", "_ms_compat.pad_packed_sequence",
        args=("sequence", "batch_first", "padding_value", "total_length"),
        target_args=("sequence", "batch_first", "padding_value", "total_length"), test=T_R,
        note="(padded, lengths int64) in the original batch order, as torch")
mapping(R + "unpad_sequence", "_ms_compat.unpad_sequence", args=("padded_sequences", "lengths", "batch_first"),
        target_args=("padded_sequences", "lengths", "batch_first"), test=T_R)
mapping(R + "unpack_sequence", "_ms_compat.unpack_sequence", args=("packed_sequences",),
        target_args=("packed_sequences",), test=T_R)
mapping(R + "invert_permutation", "_ms_compat.invert_permutation", args=("permutation",),
        target_args=("permutation",), test="tests/parity/test_nn_utils_reparam.py::test_packed_sequence_from_fields",
        note="the inverse permutation (argsort), in the input's dtype; None stays None")
mapping(R + "PackedSequence", "_ms_compat.PackedSequence",
        args=("data", "batch_sizes", "sorted_indices", "unsorted_indices"),
        target_args=("data", "batch_sizes", "sorted_indices", "unsorted_indices"),
        test="tests/parity/test_nn_utils_reparam.py::test_packed_sequence_from_fields",
        note="the type (isinstance checks) and torch's constructor: (data, batch_sizes, sorted_indices, "
             "unsorted_indices) read back as given and unpacked into the padded batch for pad_packed_sequence "
             "and the recurrent cells; .to(dtype)/.double()/... cast the data, devices are dropped")
