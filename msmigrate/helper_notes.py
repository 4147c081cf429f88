"""A comment at each helper's first use in a converted tree: why `_ms_compat.NAME` stands where a
MindSpore form might, so the user can decide to replace it where the difference does not matter.

The reasons are the differences the helper's docstring and its parity test document; a helper
without an entry here is described by the first sentence of its docstring. The comment goes on
its own line above the statement of the first use (file order, then line order); a converted file
where that line would not compile keeps its text unchanged.
"""
from __future__ import annotations

import ast
import functools
import io
import textwrap
import tokenize
from typing import Dict, Optional, Set

MARK = "(helper):"
WIDTH = 120

_OPTIMIZER = "torch's param_groups: frozen parameters left out, group['lr'] = x seen by a compiled step"
_ADAM = "torch's update (mindspore.experimental.optim.Adam adds eps before the bias correction)"
_SCHEDULER = "torch's formula, written into the lr Parameters between steps (nothing recompiles)"

WHY: Dict[str, str] = {
    # models
    "register_buffer": "torch saves persistent buffers: a Parameter with requires_grad=False",
    "modules": "torch's modules() skips the inner cells of MindSpore's own layers (cells_and_names() has them)",
    "named_parameters": "torch's names (LayerNorm weight/bias) and no buffers, unlike parameters_and_names()",
    "parameters": "no buffers (BatchNorm statistics, register_buffer), unlike Cell.get_parameters()",
    "module_apply": "torch's order: every sub-module, children first, then the module itself",
    "BatchNorm2d": "the class as a value: torch's momentum (MindSpore's is 1 - momentum), isinstance() works",
    "LayerNorm": "torch's normalized_shape, axes counted from the input's rank (MindSpore: begin_norm_axis)",
    "Sequential": "also runs children assigned as attributes, as subclasses of torch's Sequential do",
    "CrossEntropyLoss": "takes int64 class indices and probabilities (nn.CrossEntropyLoss: int32 indices)",
    "uniform_": "fills a Parameter or a plain Tensor, drawn from the initializers' own NumPy stream",
    "normal_": "fills a Parameter or a plain Tensor (param.data)",
    # checkpoints
    "state_dict": "also answers torch's names (Cell.state_dict: gamma, beta, moving_mean...); optimizers in "
                  "torch's layout",
    "load_state_dict": "takes torch's names and layouts and writes in place, so a compiled step sees the values",
    "save": "nested dicts, lists and numbers at exactly this path (save_checkpoint: flat, appends .ckpt)",
    "load": "reads torch.save files without torch or running pickled code, and MindSpore checkpoints",
    # training
    "compile_step": "compiled once per model and optimizer in GRAPH mode, not again each epoch; op by op in "
                    "PYNATIVE mode",
    "value_and_grad_reached": "ms.value_and_grad; op by op a parameter the loss did not use gets None, as torch's "
                              ".grad, and the optimizer skips it",
    "clip_grad_norm": "torch's scaling, max_norm / (total_norm + 1e-6), and the total norm returned",
    "set_device": "warns instead of raising once MindSpore's runtime has started",
    "Device": "torch.device as a string with .type and .index: MindSpore places tensors by its context",
    "backend": "torch.cuda's queries as properties of MindSpore's context (readable in GRAPH mode)",
    "Adam": _ADAM,
    "AdamW": _ADAM,
    # data
    "DataLoader": "torch's loop: len(), samplers, workers, collate, batches of mindspore Tensors",
    "transforms": "torchvision's results: PIL images through PIL, tensors [..., C, H, W] (dataset.vision: HWC)",
    "datasets": "reads torchvision's files and gives (PIL image, int label) samples",
}
for _name in ("SGD", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop"):
    WHY[_name] = _OPTIMIZER
for _name in ("StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "LambdaLR", "MultiplicativeLR",
              "LinearLR", "ConstantLR", "PolynomialLR", "SequentialLR", "ChainedScheduler", "ReduceLROnPlateau",
              "CosineAnnealingWarmRestarts", "CyclicLR", "OneCycleLR"):
    WHY[_name] = _SCHEDULER
del _name


@functools.lru_cache(maxsize=2)   # the same runtime for every tree a process converts (callers copy)
def _docstring_reasons(helper_source: str) -> Dict[str, str]:
    """name -> the first sentence of its docstring, for the helper's top-level definitions."""
    out = {}
    for node in ast.parse(helper_source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            doc = ast.get_docstring(node)
            if doc:
                text = " ".join(doc.split())
                first = text.split(". ")[0].rstrip(".")
                out.setdefault(node.name, first if len(first) <= 120 else first[:117] + "...")
    return out


def _first_uses(code: str, module: str, seen: Set[str]) -> Dict[int, list]:
    """{line of a statement's start: [helper names first used in that statement]} for names not in `seen`."""
    found: Dict[int, list] = {}
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return found
    start = None
    for i, tok in enumerate(tokens):
        if tok.type in (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
            if tok.type == tokenize.NEWLINE:
                start = None
            continue
        if start is None:
            start = tok.start[0]
        if tok.type == tokenize.NAME and tok.string == module and i + 2 < len(tokens) \
                and tokens[i + 1].string == "." and tokens[i + 2].type == tokenize.NAME \
                and (i == 0 or tokens[i - 1].string != "."):
            name = tokens[i + 2].string
            if name not in seen:
                seen.add(name)
                found.setdefault(start, []).append(name)
    return found


def _comment(name: str, module: str, why: str, indent: str) -> list:
    text = f"{module}.{name} {MARK} {why}"
    return [f"{indent}# {line}" for line in textwrap.wrap(text, WIDTH - len(indent) - 2)]


def _annotated(code: str, module: str) -> bool:
    """The file has these comments already (converted again)."""
    return any(line.lstrip().startswith(f"# {module}.") and MARK in line for line in code.split("\n"))


def annotate_first_uses(outputs: Dict[str, Optional[str]], helper_source: str, module: str) -> Dict[str, Optional[str]]:
    """`outputs` (path -> converted code) with a comment above each helper's first use in the tree."""
    reasons = dict(_docstring_reasons(helper_source))
    reasons.update(WHY)
    seen: Set[str] = set()
    result = dict(outputs)
    for rel in sorted(outputs):
        code = outputs[rel]
        if not code or module not in code or not rel.endswith(".py"):
            continue
        before = set(seen)
        uses = _first_uses(code, module, seen)
        if not uses or _annotated(code, module):   # annotated already: a second conversion
            continue
        lines = code.split("\n")
        for start in sorted(uses, reverse=True):
            line = lines[start - 1]
            indent = line[:len(line) - len(line.lstrip())]
            notes = [c for name in uses[start] if name in reasons
                     for c in _comment(name, module, reasons[name], indent)]
            lines[start - 1:start - 1] = notes
        text = "\n".join(lines)
        try:
            compile(text, rel, "exec", dont_inherit=True)
        except SyntaxError:
            seen = before   # this file stays as it is; a later file names these helpers first
            continue
        result[rel] = text
    return result
