"""`nn.Sequential(*layers)(x)` in a forward: a container built and called at each call (g-mlp-pytorch's gMLP runs
its layers so). In GRAPH mode a SequentialCell built inside a compiled construct is a constant of the graph:
its layers' gradients come out 0 and their outputs are not those of the trained parameters (a silent loss of
training). The call becomes `_ms_compat.run_in_order(layers, x)` (templates/compat_parts/nn_extra.py), each
layer applied in turn, in PYNATIVE and GRAPH alike."""
from __future__ import annotations

from typing import Optional

import libcst as cst

HELPER = "run_in_order"


def immediate_call(tr, original: cst.Call, updated: cst.Call) -> Optional[cst.Call]:
    """`nn.Sequential(...)(x)` in graph code (construct, or what it calls): `_ms_compat.run_in_order(layers, x)`;
    else None."""
    inner = original.func
    if not (isinstance(inner, cst.Call) and isinstance(updated.func, cst.Call) and tr._in_graph_code()
            and tr._torch_qname(inner.func) == "torch.nn.Sequential"):
        return None
    if len(updated.args) != 1 or updated.args[0].keyword is not None or updated.args[0].star:
        return None
    layers = updated.func.args
    if any(a.keyword is not None or a.star == "**" for a in layers):
        return None
    if len(layers) == 1 and layers[0].star == "*":
        seq: cst.BaseExpression = layers[0].value      # `nn.Sequential(*layers)`: the list itself
    else:
        seq = cst.Tuple([cst.StarredElement(a.value) if a.star else cst.Element(a.value) for a in layers])
    tr.uses_compat = True
    return cst.Call(func=tr._render_template(f"_ms_compat.{HELPER}"),
                    args=[cst.Arg(seq), cst.Arg(updated.args[0].value)])
