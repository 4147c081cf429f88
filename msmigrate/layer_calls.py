"""`m(input=x)`, `loss(out, target=y)` where `m` holds a torch layer: torch names the first argument of every
layer's forward `input` (all 145 torch.nn Modules that have one) and, where it has one after `input` (the
losses), the second `target`, while the MindSpore Cell it becomes names them otherwise (Dense: x, losses:
logits/labels), so those keywords would be refused at run time. They become positional arguments, in torch's
order. Which layer a name or `self.X` holds is transformer._static_type's (layer_refs.py)."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from . import registry as R

# torch's forward parameters that stand at the same position in every layer that has them after `input`
_POSITIONS = {"input": 0, "target": 1}


def torch_layer(qname: Optional[str]) -> bool:
    """A mapped torch.nn class (`torch.nn.Linear`), not a function or nn.Parameter."""
    if not qname or not qname.startswith("torch.nn.") or qname.startswith("torch.nn.parameter."):
        return False
    last = qname.rsplit(".", 1)[-1]
    return last[:1].isupper() and last not in ("Parameter", "Buffer") and R.lookup(qname) is not None


def keyword_input(tr, original: cst.Call, updated: cst.Call) -> Optional[cst.Call]:
    """`m(input=x, ...)` / `m(x, target=y)` of a torch layer -> `m(x, ...)` / `m(x, y)`; None when the call is
    anything else."""
    if any(a.star for a in updated.args):
        return None
    positional = [a for a in updated.args if a.keyword is None]
    named = sorted((a for a in updated.args if a.keyword is not None and a.keyword.value in _POSITIONS),
                   key=lambda a: _POSITIONS[a.keyword.value])
    # they must continue the positional ones without a gap: `m(input=x, target=y)`, `m(x, target=y)`
    if not named or [_POSITIONS[a.keyword.value] for a in named] != list(
            range(len(positional), len(positional) + len(named))):
        return None
    if "input" not in [a.keyword.value for a in named] and not positional:
        return None
    if not isinstance(original.func, (cst.Name, cst.Attribute)) or not torch_layer(tr._static_type(original.func)):
        return None
    rest = [a for a in updated.args if a.keyword is not None and a not in named]
    args = positional + [a.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT) for a in named] + rest
    return updated.with_changes(args=[a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args])
