"""Which torch convolution layers of a file provably see batched inputs only.

torch's Conv*d/ConvTranspose*d layers also take one unbatched sample, (C, *spatial); MindSpore's native layers
take batches only. The conv rule (mappings/layers.py) keeps the native layer where its input is proven batched
and otherwise emits _ms_compat.any_batch.<layer> (templates/_ms_compat.py), the same layer that runs an
unbatched sample as a batch of one.

The proofs rest on torch's BatchNorm2d/BatchNorm3d, which accept (N, C, H, W) / (N, C, D, H, W) only: what goes
into or comes out of one is batched, and so is everything linked to it through layers that keep the rank
(a conv layer's input and output are batched together).
- nn.Sequential(...): a conv of 2 or 3 spatial dims whose neighbours, up to a BatchNorm of its dims, are all
  rank-keeping layers (activations, dropout, pooling, conv layers of the same dims);
- a class's `self.conv = nn.Conv2d(...)` whose every use is `self.bn(self.conv(...))`, `self.conv(self.bn(...))`,
  or `h = self.conv(...)` followed by a statement `... = self.bn(h)`, self.bn a BatchNorm of its dims.
A 1-d conv has no such anchor (torch's BatchNorm1d also takes (N, C): an unbatched (C, L) fits it).
"""
from __future__ import annotations

from typing import Callable, Dict, Iterator, List, Optional, Set

import libcst as cst

from .fast_visit import children

CONV_DIMS = {f"torch.nn.{n}{d}d": d for d in (1, 2, 3) for n in ("Conv", "ConvTranspose")}
_BATCH_NORMS = {f"torch.nn.{n}{d}d": d for d in (2, 3) for n in ("BatchNorm", "LazyBatchNorm")}
# layers whose output has their input's rank whatever it is
_RANK_KEEPING = {f"torch.nn.{n}" for n in (
    "ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Sigmoid", "Tanh", "Hardswish",
    "Hardsigmoid", "Hardtanh", "Softplus", "Softsign", "Tanhshrink", "LogSigmoid", "Identity", "Dropout",
    "AlphaDropout")}


def _rank_keeping(qname: Optional[str], dims: int) -> bool:
    if qname in _RANK_KEEPING or CONV_DIMS.get(qname or "") == dims or _BATCH_NORMS.get(qname or "") == dims:
        return True
    return qname in {f"torch.nn.{n}{dims}d" for n in ("MaxPool", "AvgPool", "Dropout")}


def _children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    return iter(children(node))


def _parents(root: cst.CSTNode) -> Dict[int, cst.CSTNode]:
    out: Dict[int, cst.CSTNode] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        for child in _children(node):
            out[id(child)] = node
            stack.append(child)
    return out


def _walk(root: cst.CSTNode, kind) -> Iterator[cst.CSTNode]:
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, kind):
            yield node
        stack.extend(_children(node))


def _self_attr(node) -> Optional[str]:
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        return node.attr.value
    return None


def _sequential_proofs(module: cst.Module, qname: Callable) -> Set[int]:
    proven: Set[int] = set()
    for seq in _walk(module, cst.Call):
        if qname(seq.func) != "torch.nn.Sequential":
            continue
        elems: List[Optional[str]] = []
        for a in seq.args:
            ok = a.keyword is None and not a.star and isinstance(a.value, cst.Call)
            elems.append(qname(a.value.func) if ok else None)
        for i, a in enumerate(seq.args):
            dims = CONV_DIMS.get(elems[i] or "")
            if dims not in (2, 3):
                continue
            for step in (1, -1):
                j = i + step
                while 0 <= j < len(elems) and _rank_keeping(elems[j], dims):
                    if _BATCH_NORMS.get(elems[j] or "") == dims:
                        proven.add(id(a.value))
                        break
                    j += step
    return proven


def _class_proofs(cls: cst.ClassDef, qname: Callable) -> Set[int]:
    """Conv layers held as `self.name` whose every use is next to a BatchNorm of its dims."""
    convs: Dict[str, List[cst.Call]] = {}
    norms: Dict[str, Set[int]] = {}
    for assign in _walk(cls, cst.Assign):
        if len(assign.targets) != 1 or not isinstance(assign.value, cst.Call):
            continue
        name = _self_attr(assign.targets[0].target)
        if name is None:
            continue
        q = qname(assign.value.func)
        if q in CONV_DIMS:
            convs.setdefault(name, []).append(assign.value)
        elif q in _BATCH_NORMS:
            norms.setdefault(name, set()).add(_BATCH_NORMS[q])
        else:
            norms.setdefault(name, set()).add(0)   # bound to something else too
    if not convs:
        return set()
    parents = _parents(cls)
    stores = {id(a.targets[0].target) for a in _walk(cls, cst.Assign) if len(a.targets) == 1}

    def norm_call(node, dims) -> bool:
        return isinstance(node, cst.Call) and norms.get(_self_attr(node.func) or "") == {dims}

    def next_statement(stmt):
        body = parents.get(id(parents.get(id(stmt))))
        if not isinstance(body, cst.IndentedBlock):
            return None
        items = list(body.body)
        i = next((k for k, s in enumerate(items) if s is parents.get(id(stmt))), None)
        return items[i + 1] if i is not None and i + 1 < len(items) else None

    def batched_use(use: cst.Attribute, dims: int) -> bool:
        call = parents.get(id(use))
        if not (isinstance(call, cst.Call) and call.func is use and len(call.args) == 1):
            return False
        if norm_call(call.args[0].value, dims):                   # self.conv(self.bn(x))
            return True
        arg = parents.get(id(call))
        if isinstance(arg, cst.Arg) and norm_call(parents.get(id(arg)), dims):   # self.bn(self.conv(x))
            return True
        assign = parents.get(id(call))                             # h = self.conv(x); y = self.bn(h)
        if isinstance(assign, cst.Assign) and len(assign.targets) == 1 \
                and isinstance(assign.targets[0].target, cst.Name):
            h = assign.targets[0].target.value
            following = next_statement(assign)
            line = following.body[0] if isinstance(following, cst.SimpleStatementLine) else None
            value = getattr(line, "value", None)
            return (norm_call(value, dims) and len(value.args) == 1 and isinstance(value.args[0].value, cst.Name)
                    and value.args[0].value.value == h)
        return False

    proven: Set[int] = set()
    for name, calls in convs.items():
        dims = {CONV_DIMS[qname(c.func)] for c in calls}
        if len(dims) != 1 or dims & {1} or name in norms:
            continue
        d = dims.pop()
        uses = [a for a in _walk(cls, cst.Attribute) if _self_attr(a) == name and id(a) not in stores]
        if uses and all(batched_use(u, d) for u in uses):
            proven.update(id(c) for c in calls)
    return proven


def batched_convs(module: cst.Module, qname: Callable[[cst.BaseExpression], Optional[str]]) -> Set[int]:
    """The ids of the torch conv-layer constructor calls of `module` whose input is provably batched."""
    proven = _sequential_proofs(module, qname)
    for cls in _walk(module, cst.ClassDef):
        proven |= _class_proofs(cls, qname)
    return proven
