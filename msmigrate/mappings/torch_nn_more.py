"""More parameter-free torch.nn layers -> the mindspore.nn / mindspore.mint.nn Cell of the same meaning
(CELU, SELU, Softshrink, Hardshrink, Threshold, Softmin, Softmax2d, GLU, PixelShuffle, PixelUnshuffle, Unflatten,
ChannelShuffle, ZeroPad1d/3d, ReflectionPad3d, ReplicationPad3d, UpsamplingNearest2d).

Constructor arguments checked against MindSpore 2.10's signatures; `inplace` is dropped (MindSpore has no in-place
activation). Proven by tests/parity/test_torch_nn_more.py (outputs on the same inputs, PyNative and ms.jit).
"""
from __future__ import annotations

import libcst as cst

from ..callsite import UnsupportedSite, code_of
from ..records import mapping, rule

T = "tests/parity/test_torch_nn_more.py::test_layers"
N = "torch.nn."

mapping(N + "CELU", "_ms_compat.CELU", args=("alpha", "inplace"), target_args=("alpha",), drop=("inplace",), test=T,
        note="nn.CELU's kernel computes a float64 input in float32: a Cell around _ms_compat.celu (torch's formula "
             "in float64 then)")
mapping(N + "SELU", "_ms_compat.SELU", args=("inplace",), drop=("inplace",), test=T,
        note="scale * elu(x, alpha) with torch's constants (templates/compat_parts/nn_extra.py): the gradient of "
             "MindSpore 2.10's nn.SeLU is wrong for negative inputs on CPU (mint.nn.SELU has no CPU kernel)")
for _name in ("Softshrink", "Hardshrink"):
    mapping(N + _name, f"mindspore.mint.nn.{_name}", args=("lambd",), target_args=("lambd",), test=T)
mapping(N + "Threshold", "mindspore.nn.Threshold", args=("threshold", "value", "inplace"),
        target_args=("threshold", "value"), drop=("inplace",), test=T)
mapping(N + "Softmax2d", "_ms_compat.Softmax2d", test=T,
        note="_ms_compat.softmax over dim -3 (templates/compat_parts/softmax_slices.py): a slice of all -inf gives "
             "torch's nan, where MindSpore 2.10's softmax gives 0 and garbage in the slices after it")
mapping(N + "GLU", "mindspore.nn.GLU", args=("dim",), target_args=("axis",), rename={"dim": "axis"}, test=T)
mapping(N + "PixelShuffle", "mindspore.nn.PixelShuffle", args=("upscale_factor",), target_args=("upscale_factor",),
        test=T)
mapping(N + "PixelUnshuffle", "mindspore.nn.PixelUnshuffle", args=("downscale_factor",),
        target_args=("downscale_factor",), test=T)
mapping(N + "Unflatten", "mindspore.nn.Unflatten", args=("dim", "unflattened_size"),
        target_args=("axis", "unflattened_size"), rename={"dim": "axis"}, test=T)
mapping(N + "ChannelShuffle", "mindspore.nn.ChannelShuffle", args=("groups",), target_args=("groups",), test=T)
for _name in ("ZeroPad1d", "ZeroPad3d"):
    # mint.nn.ZeroPad1d/3d have no CPU kernel (ConstantPadND); nn.ConstantPad1d/3d refuse torch's other lengths
    mapping(N + _name, f"_ms_compat.{_name}", args=("padding",), target_args=("padding",),
            note="zeros concatenated (_ms_compat.pad_constant, templates/compat_parts/nn_extra.py): any even-length "
                 "padding, as torch, and torch's flat tuple as .padding", test=T)
mapping(N + "ReplicationPad3d", "mindspore.nn.ReplicationPad3d", args=("padding",), target_args=("padding",), test=T)
# ReflectionPad3d: _ms_compat's MirrorPad Cell with the 1d/2d ones (mappings/layers.py)


def _upsampling(ctx):
    """mint's upsampling Cells take scale_factor as a pair of floats (an int is refused), size as a pair."""
    b = ctx.bound
    size = b.value("size")
    if isinstance(size, cst.Integer):
        b.set("size", f"({size.value}, {size.value})")
    sf = b.code("scale_factor")
    if sf in (None, "None"):
        return None
    try:
        value = float(sf)
    except ValueError:
        node = b.value("scale_factor")
        if not isinstance(node, (cst.Tuple, cst.List)):
            raise UnsupportedSite(f"scale_factor={sf}: only a number or a tuple written out is translated")
        b.set("scale_factor", "(" + ", ".join(f"float({code_of(e.value).strip()})" for e in node.elements) + ")")
        return None
    b.set("scale_factor", f"({value}, {value})")
    return None


# (mint.nn.UpsamplingBilinear2d has no CPU kernel for a scale_factor: _ms_compat.UpsamplingBilinear2d, mappings/tensor_nn_extra.py)
rule(N + "UpsamplingNearest2d", "mindspore.mint.nn.UpsamplingNearest2d", args=("size", "scale_factor"),
     target_args=("size", "scale_factor"), test=T, note="scale_factor passed as a pair of floats")(_upsampling)


def _softmin(ctx):
    if not ctx.bound.has("dim"):
        ctx.bound.set("dim", "None")     # torch's implicit dim, chosen by the layer from the input's rank
    ctx.bound.rename("dim", "axis")
    return None


rule(N + "Softmin", "_ms_compat.Softmin", args=("dim",), target_args=("axis",), test=T,
     note="without dim (deprecated in torch) the dim follows torch's rule from the input's rank (0 for 0-, 1-, "
          "3-D, else 1); _ms_compat.softmin (templates/compat_parts/"
          "softmax_slices.py): a slice of all +inf gives torch's nan, where MindSpore 2.10's gives 0 and garbage "
          "in the slices after it")(_softmin)
# LPPool1d/2d/3d: mappings/tensor_nn_extra.py

# recurrent cells: the same parameter names and shapes (weight_ih, weight_hh, bias_ih, bias_hh)
_CELL_NOTE = ("MindSpore's cell with torch's arguments (templates/compat_parts/recurrent.py): hx optional "
              "(zeros, as torch), an unbatched input (features,) is a batch of one")
mapping(N + "RNNCell", "_ms_compat.RNNCell", args=("input_size", "hidden_size", "bias", "nonlinearity", "device",
                                                    "dtype"),
        target_args=("input_size", "hidden_size", "bias", "nonlinearity"), drop=("device", "dtype"),
        note=_CELL_NOTE, test=T)
for _name in ("LSTMCell", "GRUCell"):
    mapping(N + _name, f"_ms_compat.{_name}", args=("input_size", "hidden_size", "bias", "device", "dtype"),
            target_args=("input_size", "hidden_size", "bias"), drop=("device", "dtype"), note=_CELL_NOTE, test=T)
