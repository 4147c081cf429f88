"""Native MindSpore forms where a helper's difference from them cannot show in this converted tree.

Some helpers exist for a difference that only some trees can observe. After every file of a tree is
converted (before anything is written), a site is written in MindSpore's own one-line form when the
whole tree proves that difference absent:

- `for m in _ms_compat.modules(cell):` becomes `for _, m in cell.cells_and_names():`. The helper leaves
  out the inner cells of MindSpore's own layers (BatchNorm3d's bn2d, an RNN's inner rnn) and the cells
  standing for torch functions; cells_and_names() also skips empty containers. Native only when the
  loop body acts only through `isinstance(m, LAYER)` branches on leaf layers (LEAF_LAYERS and
  HELPER_LEAF_LAYERS: no inner cell, proved by tests/test_native_forms.py) and every layer the tree can build is such a leaf or a
  container (no other MindSpore layer, no helper class, no library outside MindSpore, NumPy and the
  standard library).
- `_ms_compat.register_buffer(self, "name", tensor)` becomes `self.name = ms.Parameter(tensor,
  name="name", requires_grad=False)`. The helper also marks the Parameter as a buffer, which only
  the helpers' parameters()/named_parameters() read: native when the tree keeps none of them and the
  tensor is one the line builds (never None, which torch takes as "no buffer").
"""
from __future__ import annotations

import ast
import re
import sys
from typing import Dict, Iterable, List, Optional, Set

import libcst as cst

# mindspore.nn layers built with no inner cell
LEAF_LAYERS = frozenset((
    "Conv1d", "Conv2d", "Conv3d", "Conv1dTranspose", "Conv2dTranspose", "Conv3dTranspose", "Dense",
    "BatchNorm1d", "BatchNorm2d", "LayerNorm", "GroupNorm", "Embedding", "ReLU", "ReLU6", "GELU", "SiLU",
    "Sigmoid", "Tanh", "LeakyReLU", "Softmax", "LogSoftmax", "Dropout", "Identity", "Flatten", "MaxPool1d",
    "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "PReLU"))
# the helper's layers of that kind (its Dense and Flatten are Keras layers, its AdaptiveAvgPool1d holds a 2-d pool)
HELPER_LEAF_LAYERS = frozenset(("BatchNorm1d", "BatchNorm2d", "Conv2d", "Dropout", "Embedding", "GELU", "GroupNorm",
                                "LayerNorm", "LeakyReLU", "ReLU", "ReLU6", "SiLU", "Sigmoid", "Tanh",
                                "any_batch"))   # any_batch: a namespace of the conv layers (subclasses, no inner cell)
CONTAINERS = frozenset(("Cell", "SequentialCell", "CellList", "CellDict"))
# helper functions that build no cell (read or write parameters, files, the module tree)
CELL_FREE_HELPERS = frozenset(("modules", "named_modules", "children", "named_children", "parameters",
                               "named_parameters", "register_buffer", "state_dict", "load_state_dict",
                               "save", "load", "MigrationError", "os",
                               "reduce_sum", "reduce_mean", "reduce_any", "reduce_logsumexp", "reduce_prod",
                               "reduce_nansum", "reduce_nanmean", "reduce_vector_norm", "reduce_norm", "reduce_std", "reduce_var",
                               "reduce_std_mean", "reduce_var_mean", "reduce_amax", "reduce_amin", "median_all",
                               "median_dim", "matmul", "mm", "bmm", "mv", "dot", "dense", "addmm", "baddbmm", "inner", "tensor_dot",
                               "precise_exp", "precise_log", "precise_expm1", "precise_log2", "precise_log10",
                               "precise_tanh", "leaky_relu", "manual_seed"))
_OWN_PARAMS = "_own_params"   # the helper that reads the buffer mark (module_tree section)


def _chain(node: ast.AST) -> Optional[List[str]]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id] + parts[::-1]
    return None


def _tree_modules(outputs: Dict[str, Optional[str]]) -> Set[str]:
    """Top-level names of the tree's own modules and packages."""
    return {rel.replace("\\", "/").split("/")[0].rsplit(".py", 1)[0] for rel in outputs}


def _plain_cells(trees: Iterable[ast.Module], local: Set[str], module: str) -> bool:
    """Every cell the tree can build is a leaf layer, a container or the project's own Cell."""
    allowed = LEAF_LAYERS | CONTAINERS
    known = {"mindspore", "numpy", module} | local | set(sys.stdlib_module_names)
    for tree in trees:
        nn_names: Set[str] = set()      # names bound to mindspore.nn
        ms_names: Set[str] = set()      # names bound to mindspore
        helper_names: Set[str] = set()  # names bound to the helper module
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    top = a.name.split(".")[0]
                    if top not in known:
                        return False
                    if a.name == "mindspore.nn":
                        if a.asname is None:
                            ms_names.add("mindspore")
                        else:
                            nn_names.add(a.asname)
                    elif a.name == "mindspore":
                        ms_names.add(a.asname or a.name)
                    elif a.name == module:
                        helper_names.add(a.asname or a.name)
                    elif a.name.startswith("mindspore.nn."):
                        return False   # a package of MindSpore's layers used as a module: not followed
            elif isinstance(node, ast.ImportFrom):
                name = node.module or ""
                if node.level == 0 and name.split(".")[0] not in known:
                    return False
                for a in node.names:
                    if name == "mindspore" and a.name == "nn":
                        nn_names.add(a.asname or "nn")
                    elif name == "mindspore.nn" and a.name not in allowed:
                        return False
                    elif name.startswith("mindspore.nn."):
                        return False
                    elif a.name == module:
                        helper_names.add(a.asname or a.name)
                    elif name == module and a.name not in CELL_FREE_HELPERS | HELPER_LEAF_LAYERS:
                        return False
        attribute_bases = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                attribute_bases.add(id(node.value))
                chain = _chain(node)
                if not chain:
                    continue
                if chain[0] in nn_names:
                    layer = chain[1]
                elif chain[0] in ms_names and len(chain) > 2 and chain[1] == "nn":
                    layer = chain[2]
                elif chain[0] in helper_names:
                    if chain[1] not in CELL_FREE_HELPERS | HELPER_LEAF_LAYERS:
                        return False
                    continue
                else:
                    continue
                if layer not in allowed:
                    return False
            elif isinstance(node, ast.Call) and any(k.arg == "activation" for k in node.keywords):
                chain = _chain(node.func)
                if chain and (chain[0] in nn_names or chain[0] in ms_names):
                    return False   # nn.Dense(..., activation=...) holds its activation cell
        for node in ast.walk(tree):
            # mindspore.nn or the helper module held as a value (getattr(nn, name)): any layer
            if isinstance(node, ast.Name) and node.id in nn_names | helper_names \
                    and isinstance(node.ctx, ast.Load) and id(node) not in attribute_bases:
                return False
    return True


_LEAF_CLASS = re.compile(r"^(nn|ms\.nn|mindspore\.nn|_ms_compat)\.(\w+)$")


def _leaf_class(node: cst.BaseExpression) -> bool:
    """MindSpore's (or the helper's) leaf layer class, or a tuple of them."""
    if isinstance(node, cst.Tuple):
        return bool(node.elements) and all(_leaf_class(e.value) for e in node.elements)
    found = _LEAF_CLASS.match(cst.Module(body=[]).code_for_node(node))
    return bool(found) and found.group(2) in (HELPER_LEAF_LAYERS if found.group(1) == "_ms_compat" else LEAF_LAYERS)


def _isinstance_of_leaf(test: cst.BaseExpression, var: str) -> bool:
    return isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance" \
        and len(test.args) == 2 and all(a.keyword is None and not a.star for a in test.args) \
        and isinstance(test.args[0].value, cst.Name) and test.args[0].value.value == var \
        and _leaf_class(test.args[1].value)


def _rebinds(loop: cst.For, var: str) -> bool:
    """`var` assigned (or deleted) in the loop's body."""
    code = cst.Module(body=[loop.with_changes(leading_lines=[])]).code
    try:
        body = ast.parse(code.lstrip()).body[0].body
    except (SyntaxError, IndexError, AttributeError):
        return True
    return any(isinstance(n, ast.Name) and n.id == var and not isinstance(n.ctx, ast.Load)
               for stmt in body for n in ast.walk(stmt))


def _guarded_by_leaf_isinstance(loop: cst.For, var: str) -> bool:
    """The loop body is one `if isinstance(var, LEAF): ... elif isinstance(var, LEAF): ...` chain."""
    body = loop.body.body if isinstance(loop.body, cst.IndentedBlock) else ()
    if len(body) != 1 or not isinstance(body[0], cst.If) or loop.orelse is not None:
        return False
    branch = body[0]
    while isinstance(branch, cst.If):
        if not _isinstance_of_leaf(branch.test, var):
            return False
        branch = branch.orelse
    return branch is None and not _rebinds(loop, var)


_TENSOR_CALL = re.compile(r"^(ops|mint|ms\.ops|ms\.mint|mindspore\.ops|mindspore\.mint)\.\w+$|^(ms|mindspore)\.Tensor$")


def _builds_tensor(node: cst.BaseExpression) -> bool:
    """The expression makes a new tensor: a MindSpore op call, or arithmetic on one with numbers."""
    if isinstance(node, cst.Call):
        return bool(_TENSOR_CALL.match(cst.Module(body=[]).code_for_node(node.func)))
    if isinstance(node, cst.BinaryOperation):
        sides = (node.left, node.right)
        return any(_builds_tensor(s) for s in sides) and all(
            _builds_tensor(s) or isinstance(s, (cst.Integer, cst.Float)) for s in sides)
    return False


class _Native(cst.CSTTransformer):
    def __init__(self, module: str, ms_alias: Optional[str], loops: bool, buffers: bool):
        self.module, self.ms_alias, self.loops, self.buffers = module, ms_alias, loops, buffers
        self.changed = False

    def _helper_call(self, node, name: str) -> bool:
        return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
            and isinstance(node.func.value, cst.Name) and node.func.value.value == self.module \
            and node.func.attr.value == name

    def leave_For(self, original: cst.For, updated: cst.For) -> cst.For:
        it = updated.iter
        if not (self.loops and self._helper_call(it, "modules") and len(it.args) == 1
                and it.args[0].keyword is None and not it.args[0].star and isinstance(updated.target, cst.Name)
                and _guarded_by_leaf_isinstance(updated, updated.target.value)):
            return updated
        self.changed = True
        cells = cst.Call(func=cst.Attribute(value=it.args[0].value, attr=cst.Name("cells_and_names")))
        target = cst.Tuple(elements=[cst.Element(cst.Name("_")), cst.Element(updated.target)], lpar=[], rpar=[])
        return updated.with_changes(target=target, iter=cells)

    def leave_SimpleStatementLine(self, original, updated):
        if not (self.buffers and self.ms_alias and len(updated.body) == 1 and isinstance(updated.body[0], cst.Expr)):
            return updated
        call = updated.body[0].value
        if not self._helper_call(call, "register_buffer"):
            return updated
        args = list(call.args)
        if len(args) == 4 and args[3].keyword is not None and args[3].keyword.value == "persistent" \
                and isinstance(args[3].value, cst.Name) and args[3].value.value == "True":
            args = args[:3]
        if len(args) != 3 or any(a.keyword is not None or a.star for a in args):
            return updated
        cell, name, tensor = (a.value for a in args)
        if not (isinstance(cell, cst.Name) and isinstance(name, cst.SimpleString)
                and re.fullmatch(r"[A-Za-z_]\w*", name.evaluated_value or "") and _builds_tensor(tensor)):
            return updated
        self.changed = True
        param = cst.parse_expression(f'{self.ms_alias}.Parameter(_, name={name.value}, requires_grad=False)')
        param = param.with_changes(args=[param.args[0].with_changes(value=tensor)] + list(param.args[1:]))
        assign = cst.Assign(targets=[cst.AssignTarget(cst.Attribute(value=cell, attr=cst.Name(name.evaluated_value)))],
                            value=param)
        return updated.with_changes(body=[assign])


def _ms_alias(tree: ast.Module) -> Optional[str]:
    for node in tree.body:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "mindspore":
                    return a.asname or a.name
    return None


def _drop_unused_import(code: str, module: str) -> str:
    """The helper module's import, when nothing in the file reads it any more."""
    lines = code.split("\n")
    pattern = re.compile(rf"^(from \.* import {module}|import {module})\s*$")
    rest = [ln for ln in lines if not pattern.match(ln)]
    if any(re.search(rf"\b{module}\b", ln) for ln in rest):
        return code
    return "\n".join(rest)


def _keeps(helper_source: str, roots: Set[str], name: str) -> bool:
    """The helper definitions `roots` need include `name`."""
    from .runtime_prune import kept_units
    return any(name in u.defines for u in kept_units(helper_source, roots))


def native_forms(outputs: Dict[str, Optional[str]], helper_source: str, module: str) -> Dict[str, Optional[str]]:
    """`outputs` (path -> converted code) with the sites above written natively where the tree allows."""
    from .runtime_prune import compat_references
    parsed: Dict[str, ast.Module] = {}
    roots: Set[str] = set()
    for rel, code in outputs.items():
        if not code or not rel.endswith(".py"):
            continue
        try:
            parsed[rel] = ast.parse(code)
        except SyntaxError:
            return outputs
        used = compat_references(code, module) if module in code else []
        if used is None:
            return outputs   # the helper module as a value: any helper may run
        roots.update(used)
    if "modules" not in roots and "register_buffer" not in roots:
        return outputs
    loops = "modules" in roots and _plain_cells(parsed.values(), _tree_modules(outputs), module)
    buffers = "register_buffer" in roots and not _keeps(helper_source, roots - {"register_buffer"}, _OWN_PARAMS)
    if not (loops or buffers):
        return outputs
    result = dict(outputs)
    for rel, tree in parsed.items():
        code = outputs[rel]
        if f"{module}.modules" not in code and f"{module}.register_buffer" not in code:
            continue
        native = _Native(module, _ms_alias(tree), loops, buffers)
        new = cst.parse_module(code).visit(native)
        if native.changed:
            result[rel] = _drop_unused_import(new.code, module)
    return result
