"""A second traced graph beside the main one: the decode step of a generating model, whose KV cache
is an explicit input and output (growing by one position per step).

The main graph (prefill) is written as the model class; the step becomes `DecodeStep`, a cell that
shares the model's members (same Parameter objects, no copy) and has its own construct. Both come
from torch.export of the same torch module, so the module tree and the checkpoint are one."""
from __future__ import annotations

from typing import List, Tuple

from .codegen import Generator, _ident
from .ops import NotConverted


def convert_step(model, step_module, args, dynamic_shapes, base: Generator) -> Tuple[Generator, List[str]]:
    """Export and convert the decode step; merge what it needs (cells, lifted constants) into `base`,
    the main graph's generator, so that base's module tree holds every member the step uses."""
    from .capture import export

    ep, notes = export(step_module, args, dynamic_shapes=dynamic_shapes, dynamic_batch=False)
    gen = Generator(step_module, ep, "DecodeStep")
    gen.convert()
    if gen.missing:
        return gen, notes
    for path, ctor in gen.cells.items():
        old = base.cells.get(path)
        if old is not None and old != ctor:
            raise NotConverted(f"module {path} is called with other settings in the decode step ({old} / {ctor})")
        base.cells[path] = ctor
    for key, val in gen.values.items():
        if key not in base.values:
            base.values[key] = val
            parent, _, name = key.rpartition(".")
            base.direct_keys.setdefault(parent, []).append(name)
        elif base.values[key] is not val and not (base.values[key].shape == val.shape
                                                    and bool((base.values[key] == val).all())):
            raise NotConverted(f"{key} holds other values in the decode step than in the prefill graph")
    return gen, notes


def step_source(gen: Generator, base: Generator) -> str:
    """`class DecodeStep(nn.Cell)`: the step's construct over the members of the model it is built from."""
    members = [k for k, _ in base._members("", base._tree_children(""), base.direct_keys.get("", []), 8)]
    lines = ["class DecodeStep(nn.Cell):",
             '    """One decoding step of the traced model: the new tokens (batch, 1), the attention mask over',
             "    all positions so far, and the KV cache of the positions before (key and value of each layer,",
             "    (batch, heads, past, head_dim)) -> (logits, the cache grown by one position). It holds the",
             '    members of the model it is built from (the same Parameters)."""',
             "",
             "    def __init__(self, net):",
             "        super().__init__(auto_prefix=False)  # the shared members keep the model's parameter names"]
    for k in members:
        lines.append(f"        self.{k} = net.{k}" if _ident(k) else f"        setattr(self, {k!r}, getattr(net, {k!r}))")
    lines.append("")
    lines += gen.construct_lines()
    return "\n".join(lines)


CREATE_STEP = '''def create_decode_step(net):
    """The decode-step cell sharing `net`'s parameters."""
    step = DecodeStep(net)
    step.set_train(False)
    return step


_DECODE_STEPS = {}   # id(net) -> (net, its DecodeStep)


def decode_step_of(net):
    """`net`'s DecodeStep, built once: in GRAPH mode it is then compiled once for all generate() calls."""
    if id(net) not in _DECODE_STEPS:
        _DECODE_STEPS[id(net)] = (net, create_decode_step(net))
    return _DECODE_STEPS[id(net)][1]


def decode_step_inputs(args):
    """GRAPH mode: placeholders for DecodeStep's inputs like `args` whose batch, sequence and cache-length
    dims are free, so one compiled graph serves every step: the new tokens (batch, 1), caches
    (batch, heads, length, head_dim), hidden states (batch, length, width), masks (batch, length)."""
    specs = []
    for i, x in enumerate(args):
        shape = [None, 1] if i == 0 else [None, x.shape[1], None, x.shape[3]] if x.ndim == 4 else \\
            [None, None, x.shape[2]] if x.ndim == 3 else [None] * x.ndim
        specs.append(Tensor(shape=shape, dtype=x.dtype))
    return specs'''


def step_code_used(gen: Generator) -> str:
    """The step's code, for pruning the runtime helpers model.py carries."""
    return "\n".join(c for _, _, c, _ in gen.lines) + "\n" + "\n".join(gen.cells.values())
