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
- BatchNorm and LayerNorm `eps` set (`m.eps = 1e-3`, YOLOv5's and EfficientNet's set-up): MindSpore's layers run
  primitives built with eps at construction, so it changed nothing, silently; `_ms_compat.set_eps(m, v)` builds
  them again;
- Dropout `p` set on a known Dropout (`m.p = 0.3` under `isinstance(m, nn.Dropout)`): MindSpore's draws with a
  primitive built with the keep rate (only p=0 was read at each call): `_ms_compat.set_dropout_p(m, v)`;
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


# settings a layer's primitives are built with: the helper that builds them again, and why
_BUILT_IN = {"momentum": ("set_momentum", "MindSpore's BatchNorm runs a primitive built with its momentum: built again"),
             "eps": ("set_eps", "MindSpore's BatchNorm and LayerNorm run primitives built with their eps: built "
                                "again"),
             "p": ("set_dropout_p", "MindSpore's Dropout draws with a primitive built with its keep rate: built again")}
# the layers each setting is set on as above (`p` only where the layer is known: a name so short is set on much else)
_BUILT_ON = {"momentum": _NORMS, "eps": _NORMS | {"torch.nn.LayerNorm"}, "p": {"torch.nn.Dropout"}}


def store(tr, original: cst.Assign, updated: cst.Assign) -> Optional[cst.Expr]:
    """`bn.momentum = v` / `bn.eps = v` on a BatchNorm (eps on a LayerNorm too), `drop.p = v` on a Dropout:
    `_ms_compat.set_momentum(bn, v)` / `set_eps` / `set_dropout_p`."""
    if len(original.targets) != 1:
        return None
    target = original.targets[0].target
    if not (isinstance(target, cst.Attribute) and target.attr.value in _BUILT_IN):
        return None
    attr = target.attr.value
    if tr._static_type(target.value) not in _BUILT_ON[attr]:
        return None if attr == "p" else _store_on_unknown(tr, original, updated, attr)
    helper, why = _BUILT_IN[attr]
    tr._record(original, {"momentum": "batchnorm.momentum (set)", "eps": "norm.eps (set)", "p": "dropout.p (set)"}[attr],
               f"_ms_compat.{helper}", "converted", why)
    owner = updated.targets[0].target.value
    where = cst.SimpleString(repr(f"{tr.module_name}:{tr._line(original)}"))   # a compiled graph refuses it
    return cst.Expr(_helper(tr, helper, owner).with_changes(
        args=[cst.Arg(owner), cst.Arg(updated.value), cst.Arg(where)]), semicolon=updated.semicolon)


def _store_on_unknown(tr, original: cst.Assign, updated: cst.Assign, attr: str) -> Optional[cst.Expr]:
    """`m.momentum = v` where m is a name whose type the converter does not know (a loop over the BatchNorms a dict
    collected: swa's bn_update, `for module in momenta.keys(): module.momentum = b / (n + b)`): set at run time as
    set_momentum sets it when m is a BatchNorm, as written otherwise (`_ms_compat.set_momentum_if_norm`). Before, a
    BatchNorm's attribute changed and its primitive did not: its statistics moved at the old rate, silently.
    `m.eps = v` the same way (`set_eps_if_norm`; YOLOv5's initialize_weights under `type(m) is nn.BatchNorm2d`).
    Not for `self`/`cls` (a class's own attribute) nor in a forward (graph code)."""
    target = original.targets[0].target
    owner = target.value
    if not isinstance(owner, cst.Name) or owner.value in ("self", "cls") or tr._in_forward():
        return None
    if tr._static_type(owner) is not None:
        return None     # a known layer of another kind, or a class of the program
    helper = _BUILT_IN[attr][0] + "_if_norm"
    tr._record(original, f"{attr} (set)", f"_ms_compat.{helper}", "converted",
               f"the receiver's type is known at run time only: a BatchNorm's primitives are built again with the new "
               f"{attr} ({_BUILT_IN[attr][0]}), anything else's attribute set as written")
    new_owner = updated.targets[0].target.value
    where = cst.SimpleString(repr(f"{tr.module_name}:{tr._line(original)}"))
    return cst.Expr(_helper(tr, helper, new_owner).with_changes(
        args=[cst.Arg(new_owner), cst.Arg(updated.value), cst.Arg(where)]), semicolon=updated.semicolon)
