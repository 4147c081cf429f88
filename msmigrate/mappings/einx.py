"""einx's element-wise operations (add, subtract, multiply, where, less...) with a literal description.

einx has no MindSpore backend: called on MindSpore tensors it stops with einx's BackendResolutionError, which
names no line of the original. msmigrate counts einx as torch code (project_index.TORCH_SUBMODULES): every einx
call is a site. An element-wise call whose description is a string literal of plain axis names, `1` and one
leading anonymous `...` (lucidrains' x-transformers: `einx.subtract('j, i -> i j', k_pos, q_pos)`,
`einx.where('b n, b n d, -> b n d', mask, out, 0.)`, `einx.multiply('b n, b', loss, w)`) is written out where
it stands: each operand indexed with None where it lacks an output axis (ops.transpose first where its axes come
in another order), then the MindSpore operation, broadcasting as einx does; GRAPH mode compiles it as any other
code. An expression without `->` takes the input whose axes hold all the others' as its output, as einx does.
`einx.get_at` with a literal description of plain axes whose first operand has one bracketed axis
(vector-quantize-pytorch's codebook lookups: `get_at('q [c] d, b n q -> q b n d', self.codebooks, indices)`,
`get_at('[c] d, b n -> b n d', codes, indices)`) is `ops.gather` along that axis, the axes the two operands share
as its batch dimensions (each operand transposed so they lead, in the output's order), then transposed into the
output's order. Everything else of einx (rearrange, reductions, other bracketed forms, composed axes `(b s)`,
descriptions built at run time) is a TODO that raises MigrationError naming the line. einx itself checks that equal axis names have equal
lengths; the written-out code broadcasts a length-1 axis where einx would refuse it (a program that runs under
torch never has one)."""
from __future__ import annotations

import re
from typing import List, Optional, Tuple

import libcst as cst

from ..callsite import UnsupportedSite, code_of, literal_string, operand_code
from ..records import rule

T = "tests/test_heldout61_programs.py"

# einx's element-wise functions -> the MindSpore operation of their operands (torch's semantics: true division,
# bool results of comparisons, torch.where's broadcasting)
_OPS = {
    "add": ("ops.add", 2), "subtract": ("ops.sub", 2), "multiply": ("ops.mul", 2), "true_divide": ("ops.div", 2),
    "divide": ("ops.div", 2), "floor_divide": ("ops.floor_divide", 2), "maximum": ("ops.maximum", 2),
    "minimum": ("ops.minimum", 2), "less": ("ops.less", 2), "less_equal": ("ops.less_equal", 2),
    "greater": ("ops.greater", 2), "greater_equal": ("ops.greater_equal", 2), "equal": ("ops.equal", 2),
    "not_equal": ("ops.not_equal", 2), "logical_and": ("ops.logical_and", 2), "logical_or": ("ops.logical_or", 2),
    "where": ("ops.where", 3),
}
_AXIS = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ELLIPSIS = "..."


def _side(text: str) -> List[str]:
    """`b n d` -> ['b', 'n', 'd']; '' -> [] (a scalar); `1` an axis of length one; `...` first only."""
    tokens = text.split()
    for i, t in enumerate(tokens):
        if t == _ELLIPSIS and i == 0:
            continue
        if t != "1" and not _AXIS.match(t):
            raise UnsupportedSite(f"einx description {text.strip()!r}: only plain axis names, 1 and a leading "
                                  f"'...' are converted (composed or bracketed axes are not)")
    named = [t for t in tokens if t not in ("1", _ELLIPSIS)]
    if len(set(named)) != len(named):
        raise UnsupportedSite(f"einx description {text.strip()!r}: an axis named twice in one operand")
    return tokens


def parse(description: str, n_inputs: int) -> Tuple[List[List[str]], List[str]]:
    """The operands' axes and the output's, as einx reads an element-wise description."""
    left, arrow, right = description.partition("->")
    inputs = [_side(s) for s in left.split(",")]
    if len(inputs) != n_inputs:
        raise UnsupportedSite(f"einx description {description!r} names {len(inputs)} operands, the call passes "
                              f"{n_inputs}")
    if arrow:
        if "," in right:
            raise UnsupportedSite(f"einx description {description!r}: more than one output")
        out = _side(right)
    else:
        # einx: the output is the input whose axes hold every other input's
        names = [set(a for a in s if a != "1") for s in inputs]
        whole = set().union(*names)
        candidates = [s for s, n in zip(inputs, names) if n == whole]
        if not candidates:
            raise UnsupportedSite(f"einx description {description!r}: no input holds every axis (einx needs `->`)")
        out = [a for a in candidates[0] if a != "1"]
    out_named = [a for a in out if a not in ("1", _ELLIPSIS)]
    if len(set(out_named)) != len(out_named):
        raise UnsupportedSite(f"einx description {description!r}: an output axis named twice")
    for s in inputs:
        missing = [a for a in s if a not in ("1", _ELLIPSIS) and a not in out_named]
        if missing:
            raise UnsupportedSite(f"einx description {description!r}: input axes {missing} are not in the output "
                                  f"(an element-wise operation keeps every axis)")
        if _ELLIPSIS in s and _ELLIPSIS not in out:
            raise UnsupportedSite(f"einx description {description!r}: '...' in an input, not in the output")
    return inputs, out


def operand(code: str, axes: List[str], out: List[str]) -> str:
    """The operand's code with its axes in the output's order and None where it lacks an output axis."""
    if not axes:
        return code      # a scalar: a Python number or a 0-d tensor, broadcast as it is
    named = [a for a in axes if a not in ("1", _ELLIPSIS)]
    out_named = [a for a in out if a not in ("1", _ELLIPSIS)]
    ellipsis = _ELLIPSIS in axes
    if "1" in axes:
        raise UnsupportedSite("einx description: an operand with a `1` axis")
    order = sorted(named, key=out_named.index)
    if order != named:
        if ellipsis:
            raise UnsupportedSite("einx description: axes after '...' in another order than the output's")
        code = f"ops.transpose({code}, ({', '.join(str(named.index(a)) for a in order)}{',' * (len(order) == 1)}))"
    index = []
    for a in out:
        if a == _ELLIPSIS:
            index.append("...")
        elif a in named:
            index.append(":")
        else:
            index.append("None")
    if _ELLIPSIS in out and not ellipsis:
        # the operand's axes align with the output's last ones: broadcasting adds the ellipsis' dimensions
        index = index[index.index("...") + 1:]
    if all(i == ":" for i in index) or (index and index[0] == "..." and all(i == ":" for i in index[1:])):
        return code
    return f"{operand_code(cst.parse_expression(code))}[{', '.join(index)}]"


def _elementwise(name: str):
    target, arity = _OPS[name]

    def fn(ctx):
        call = ctx.bound.call
        args = list(call.args)
        if any(a.star for a in args):
            raise UnsupportedSite("einx call with *args/**kwargs")
        keywords = [a for a in args if a.keyword is not None]
        if keywords:
            raise UnsupportedSite(f"einx keyword argument(s) {', '.join(a.keyword.value for a in keywords)}")
        if not args:
            raise UnsupportedSite("einx call without a description")
        description = literal_string(args[0].value)
        if description is None:
            raise UnsupportedSite("einx description that is not a string literal")
        operands = args[1:]
        if len(operands) != arity:
            raise UnsupportedSite(f"einx.{name} with {len(operands)} operands (takes {arity})")
        inputs, out = parse(description, len(operands))
        codes = [operand(code_of(a.value).strip(), axes, out) for a, axes in zip(operands, inputs)]
        if not any(inputs):
            raise UnsupportedSite(f"einx description {description!r}: scalars only")
        return ctx.expr(f"{target}({', '.join(codes)})")
    fn.handles_starred = True
    fn.__name__ = fn.__qualname__ = f"einx_{name}"
    return fn


_NOTE = ("einx has no MindSpore backend: a literal description of plain axes is written out where it stands "
         "(operands indexed with None and transposed into the output's order, then {target}); other descriptions "
         "are TODOs. A length-1 axis broadcasts where einx would refuse unequal lengths")
for _name, (_target, _arity) in _OPS.items():
    for _src in (f"einx.{_name}",):
        rule(_src, _target, note=_NOTE.format(target=_target),
             test=f"{T}::test_einx_elementwise")(_elementwise(_name))


_BRACKET = re.compile(r"^\[([A-Za-z_][A-Za-z0-9_]*)\]$")


def parse_get_at(description: str) -> Tuple[List[str], int, List[str], List[str]]:
    """`'q [c] d, b n q -> q b n d'` -> (['q', 'c', 'd'], 1, ['b', 'n', 'q'], ['q', 'b', 'n', 'd']): the tensor's
    axes with the position of its one bracketed axis, the index operand's axes and the output's. Plain axis names
    only (no `...`, `1` or composed axes); every output axis comes from exactly the operands' unbracketed axes."""
    left, arrow, right = description.partition("->")
    if not arrow or "," in right:
        raise UnsupportedSite(f"einx.get_at description {description!r}: one output after '->' is converted")
    sides = left.split(",")
    if len(sides) != 2:
        raise UnsupportedSite(f"einx.get_at description {description!r}: a tensor and one index operand are "
                              f"converted")
    tensor, where = [], None
    for i, token in enumerate(sides[0].split()):
        bracket = _BRACKET.match(token)
        if bracket:
            if where is not None:
                raise UnsupportedSite(f"einx.get_at description {description!r}: more than one bracketed axis")
            where = i
            tensor.append(bracket.group(1))
        elif _AXIS.match(token):
            tensor.append(token)
        else:
            raise UnsupportedSite(f"einx.get_at description {description!r}: only plain axis names and one "
                                  f"bracketed axis are converted")
    if where is None:
        raise UnsupportedSite(f"einx.get_at description {description!r}: no bracketed axis in the first operand")
    index, out = sides[1].split(), right.split()
    for token in index + out:
        if not _AXIS.match(token):
            raise UnsupportedSite(f"einx.get_at description {description!r}: only plain axis names are converted "
                                  f"in the index and the output")
    kept = tensor[:where] + tensor[where + 1:]
    for axes in (tensor, index, out):
        if len(set(axes)) != len(axes):
            raise UnsupportedSite(f"einx.get_at description {description!r}: an axis named twice in one operand")
    if tensor[where] in index or tensor[where] in out or sorted(set(kept) | set(index)) != sorted(out):
        raise UnsupportedSite(f"einx.get_at description {description!r}: the output's axes are not the "
                              f"operands' unbracketed axes")
    return tensor, where, index, out


def _transposed(code: str, axes: List[str], order: List[str]) -> str:
    if axes == order:
        return code
    perm = ", ".join(str(axes.index(a)) for a in order)
    return f"ops.transpose({code}, ({perm}{',' * (len(order) == 1)}))"


@rule("einx.get_at", "ops.gather", note="einx has no MindSpore backend: a literal description with one bracketed "
      "axis of the first operand is ops.gather along it, the axes shared with the index operand as batch "
      "dimensions, transposed into the output's order; other descriptions are TODOs",
      test="tests/test_heldout62_programs.py::test_einx_get_at")
def einx_get_at(ctx):
    call = ctx.bound.call
    args = list(call.args)
    if any(a.star or a.keyword is not None for a in args):
        raise UnsupportedSite("einx.get_at with *args, **kwargs or keyword arguments")
    if len(args) != 3:
        raise UnsupportedSite(f"einx.get_at with {len(args) - 1} operands (a tensor and one index are converted)")
    description = literal_string(args[0].value)
    if description is None:
        raise UnsupportedSite("einx description that is not a string literal")
    tensor, where, index, out = parse_get_at(description)
    bracket = tensor[where]
    shared = [a for a in out if a in tensor and a in index]
    rest = [a for a in out if a in tensor and a not in index]
    only_index = [a for a in out if a in index and a not in tensor]
    x = _transposed(code_of(args[1].value).strip(), tensor, shared + [bracket] + rest)
    i = _transposed(code_of(args[2].value).strip(), index, shared + only_index)
    batch = len(shared)
    gathered = f"ops.gather({x}, {i}, {batch}{f', batch_dims={batch}' if batch else ''})"
    return ctx.expr(_transposed(gathered, shared + only_index + rest, out))
einx_get_at.handles_starred = True
