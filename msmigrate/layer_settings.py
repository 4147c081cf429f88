"""Settings of a torch layer read on a layer the converter knows (`self.conv.padding`, `m.momentum` under
`isinstance(m, nn.BatchNorm2d)`) that MindSpore's layer holds in another form or not at all (measured on 2.10;
names MindSpore only spells differently are transformer.PARAM_RENAMES):

- a convolution's `padding`/`output_padding`: torch's tuple of one int per spatial dim; MindSpore's an int or
  (top, bottom, left, right) (a Conv1d's (0, 0, p, p); output_padding as less padding at the end):
  `_ms_compat.conv_setting(layer, name, dims)`;
- BatchNorm `momentum`: MindSpore keeps 1 - (1 - torch's): 0.30000000000000004 for 0.3;
  `_ms_compat.torch_momentum(v)` rounds it back to 15 digits (None, the cumulative average, stays None).
  Set (`m.momentum = 0.03`, timm's and YOLO's BatchNorm set-up) it changed nothing, silently: MindSpore's
  layer runs a primitive built with the momentum at construction; `_ms_compat.set_momentum(m, v)` builds it again;
- a convolution's `transposed`: known from its class;
- BatchNorm `num_batches_tracked`: the cumulative BatchNorm (momentum=None) counts its batches, MindSpore's own
  keeps no count: `_ms_compat.batches_tracked(layer, where)` raises MigrationError naming the line there;
- settings MindSpore's layer does not keep (BatchNorm `affine`/`track_running_stats`, LayerNorm
  `elementwise_affine`, a convolution's `padding_mode`, Embedding `sparse`/`scale_grad_by_freq`, Dropout `inplace`):
  a TODO that raises MigrationError at its line (a raw AttributeError before).
An RNN's `input_size` (and LSTM's `proj_size`) the helper layers keep themselves (_ms_compat.LSTM/GRU/RNN)."""
from __future__ import annotations

from typing import Optional

import libcst as cst

_CONV_DIMS = {f"torch.nn.{kind}{d}d": d for kind in ("Conv", "ConvTranspose") for d in (1, 2, 3)}
_NORMS = {f"torch.nn.BatchNorm{d}" for d in ("1d", "2d", "3d")} | {"torch.nn.SyncBatchNorm",
                                                                     "torch.nn.modules.batchnorm._BatchNorm"}
_NOT_KEPT = {
    **{(n, a): "MindSpore's BatchNorm keeps no such setting" for n in _NORMS
       for a in ("affine", "track_running_stats")},
    ("torch.nn.LayerNorm", "elementwise_affine"): "MindSpore's LayerNorm keeps no such setting",
    **{(n, "padding_mode"): "MindSpore's convolution keeps no padding_mode" for n in _CONV_DIMS},
    **{("torch.nn.Embedding", a): "MindSpore's Embedding keeps no such setting"
       for a in ("sparse", "scale_grad_by_freq")},
    ("torch.nn.Dropout", "inplace"): "MindSpore's Dropout keeps no inplace flag",
    **{(f"torch.nn.{p}{d}d", a): "MindSpore's pooling layer holds it in another form" for p in ("MaxPool", "AvgPool")
       for d in (1, 2, 3) for a in ("padding", "dilation")},
}


def _helper(tr, name: str, value: cst.BaseExpression, *extra: str) -> cst.Call:
    tr.uses_compat = True
    return cst.Call(func=cst.parse_expression(f"_ms_compat.{name}"),
                    args=[cst.Arg(value), *(cst.Arg(cst.parse_expression(e)) for e in extra)])


def read(tr, original: cst.Attribute, updated: cst.Attribute) -> Optional[cst.BaseExpression]:
    """torch's value of `layer.setting` (not an assignment target), or None where nothing changes."""
    if id(original) in tr._stores:
        return None
    attr = original.attr.value
    layer = tr._static_type(original.value)
    if layer is None:
        return None
    if attr in ("padding", "output_padding") and layer in _CONV_DIMS:
        tr._record(original, f"conv.{attr}", "_ms_compat.conv_setting", "converted",
                   "MindSpore holds it as an int or per side; torch's tuple of one int per spatial dim")
        return _helper(tr, "conv_setting", updated.value, repr(attr), str(_CONV_DIMS[layer]))
    if attr == "transposed" and layer in _CONV_DIMS:
        tr._record(original, "conv.transposed", "True/False", "converted", "known from the layer's class")
        return cst.Name(str("Transpose" in layer))
    if attr == "momentum" and layer in _NORMS:
        tr._record(original, "batchnorm.momentum", "_ms_compat.torch_momentum", "converted",
                   "MindSpore keeps 1 - (1 - momentum): rounded back to torch's value")
        return _helper(tr, "torch_momentum", updated)
    if attr == "num_batches_tracked" and layer in _NORMS:
        tr._record(original, "batchnorm.num_batches_tracked", "_ms_compat.batches_tracked", "converted",
                   "the cumulative BatchNorm (momentum=None) counts its batches; MindSpore's own BatchNorm keeps no "
                   "count: reading it there raises MigrationError naming the line")
        where = repr(f"{tr.module_name}:{tr._line(original)}")
        return _helper(tr, "batches_tracked", updated.value, where)
    if layer == "torch.nn.Embedding" and attr in _EMBEDDING_DEFAULTS and (
            attr != "sparse" or not tr.index.sparse_embeddings()):
        # awd-lstm-lm's embedded_dropout passes its Embedding's settings to F.embedding
        value, why = _EMBEDDING_DEFAULTS[attr]
        tr._record(original, f"{layer}.{attr}", value, "converted", why)
        if attr in ("max_norm", "norm_type"):
            return cst.parse_expression(f"getattr({cst.Module([]).code_for_node(updated.value)}, {attr!r}, {value})")
        return cst.Name(value)
    why = _NOT_KEPT.get((layer, attr))
    if why is not None:
        return tr._todo(original, f"{layer}.{attr}", why)
    return None


# settings of a converted Embedding that MindSpore's does not keep: torch's value, and why it is that one
_EMBEDDING_DEFAULTS = {
    "scale_grad_by_freq": ("False", "the conversion of torch.nn.Embedding refuses scale_grad_by_freq=True"),
    "sparse": ("False", "no Embedding of the project is built with sparse=True"),
    "max_norm": ("None", "_ms_compat.Embedding keeps max_norm; MindSpore's Embedding (built where none is given) "
                         "has none"),
    "norm_type": ("2.0", "_ms_compat.Embedding keeps norm_type; MindSpore's Embedding (built where no max_norm is "
                         "given) has torch's default"),
}


def store(tr, original: cst.Assign, updated: cst.Assign) -> Optional[cst.Expr]:
    """`bn.momentum = v` on a BatchNorm: `_ms_compat.set_momentum(bn, v)`."""
    if len(original.targets) != 1:
        return None
    target = original.targets[0].target
    if not (isinstance(target, cst.Attribute) and target.attr.value == "momentum"):
        return None
    if tr._static_type(target.value) not in _NORMS:
        return _store_on_unknown(tr, original, updated)
    tr._record(original, "batchnorm.momentum (set)", "_ms_compat.set_momentum", "converted",
               "MindSpore's BatchNorm runs a primitive built with its momentum: built again")
    owner = updated.targets[0].target.value
    where = cst.SimpleString(repr(f"{tr.module_name}:{tr._line(original)}"))   # a compiled graph refuses it
    return cst.Expr(_helper(tr, "set_momentum", owner).with_changes(
        args=[cst.Arg(owner), cst.Arg(updated.value), cst.Arg(where)]), semicolon=updated.semicolon)


def _store_on_unknown(tr, original: cst.Assign, updated: cst.Assign) -> Optional[cst.Expr]:
    """`m.momentum = v` where m is a name whose type the converter does not know (a loop over the BatchNorms a dict
    collected: swa's bn_update, `for module in momenta.keys(): module.momentum = b / (n + b)`): set at run time as
    set_momentum sets it when m is a BatchNorm, as written otherwise (`_ms_compat.set_momentum_if_norm`). Before, a
    BatchNorm's attribute changed and its primitive did not: its statistics moved at the old rate, silently.
    Not for `self`/`cls` (a class's own attribute) nor in a forward (graph code)."""
    target = original.targets[0].target
    owner = target.value
    if not isinstance(owner, cst.Name) or owner.value in ("self", "cls") or tr._in_forward():
        return None
    if tr._static_type(owner) is not None:
        return None     # a known layer of another kind, or a class of the program
    tr._record(original, "momentum (set)", "_ms_compat.set_momentum_if_norm", "converted",
               "the receiver's type is known at run time only: a BatchNorm's primitive is built again with the new "
               "momentum (set_momentum), anything else's attribute set as written")
    new_owner = updated.targets[0].target.value
    where = cst.SimpleString(repr(f"{tr.module_name}:{tr._line(original)}"))
    return cst.Expr(_helper(tr, "set_momentum_if_norm", new_owner).with_changes(
        args=[cst.Arg(new_owner), cst.Arg(updated.value), cst.Arg(where)]), semicolon=updated.semicolon)
