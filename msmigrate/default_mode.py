"""torch modules start in training mode; MindSpore cells start in inference mode.

A program that never calls `model.train()` runs its Dropout and BatchNorm layers in training mode
under torch (batch statistics, random masks) and, converted as written, in inference mode under
MindSpore: other values, silently. A converted Cell whose behaviour depends on the mode (it builds a
Dropout/BatchNorm/RNN-with-dropout/attention layer, or reads `self.training`) therefore ends its
`__init__` with `self.set_train(True)`, torch's starting state; `model.eval()` (set_train(False))
later changes it as in torch. Cells of the project built inside it set their own mode the same way.
(tests/parity/test_default_mode.py::test_cells_start_in_training_mode)

A mode-dependent torch layer built anywhere else (`return nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3))` in a
function, `Wrap(nn.Dropout(0.5))`, a method other than `__init__`) is converted with `.set_train()` appended
(MindSpore's set_train returns the cell), so it too starts as torch's does; a statement `name = nn.X(...)` outside
a class is followed by `name.set_train(True)` instead (script_layer_start). A torch container built outside a
class (`nn.Sequential(norm, model)` in a function) trains too, its children keeping their modes: its own flag is set
with `.add_flags(training=True)`.
(tests/parity/test_default_mode.py::test_layers_built_outside_init_start_in_training_mode)"""
from __future__ import annotations

import re

import libcst as cst

from .callsite import code_of

# constructors and reads whose result depends on the mode (torch.nn names, as written in the source)
_MODE_DEPENDENT = re.compile(
    r"\b(Dropout[123]?d?|AlphaDropout|FeatureAlphaDropout|BatchNorm[123]d|SyncBatchNorm|InstanceNorm[123]d|"
    r"LazyBatchNorm[123]d|RNN|LSTM|GRU|MultiheadAttention|Transformer\w*)\s*\(|\bself\.training\b|"
    r"\bF\.dropout\w*\(|\bF\.batch_norm\(")
# the program sets the mode itself while building: its own choice stands
_SETS_MODE = re.compile(r"\bself\.(training\s*=(?!=)|train\s*\(|eval\s*\(|set_train\s*\()")

# the torch.nn layers whose behaviour depends on the mode, by their qualified name
_MODE_DEPENDENT_LAYER = re.compile(
    r"^torch\.nn\.(Dropout[123]?d?|AlphaDropout|FeatureAlphaDropout|BatchNorm[123]d|SyncBatchNorm|InstanceNorm[123]d|"
    r"LazyBatchNorm[123]d|RNN|LSTM|GRU|MultiheadAttention|Transformer\w*)$")

NOTE = "torch modules start in training mode (MindSpore cells: inference mode)"


def depends_on_mode(class_node: cst.ClassDef) -> bool:
    """The class builds or reads something whose behaviour depends on the training mode."""
    return _MODE_DEPENDENT.search(code_of(class_node)) is not None


def is_mode_dependent_layer(qualified_name: str) -> bool:
    """`torch.nn.BatchNorm1d`, `torch.nn.Dropout`...: a torch layer that behaves differently in training mode."""
    return _MODE_DEPENDENT_LAYER.match(qualified_name) is not None


def _not_converted(converted: cst.CSTNode, kind) -> bool:
    """The converted node is not of the kind a conversion gives, or holds a raising placeholder or a TODO comment
    (its text names MigrationError): no mode line is added to it."""
    code = code_of(converted) if isinstance(converted, kind) else ""
    return not code or "MigrationError" in code or "TODO" in code


def started_in_training_mode(converted: cst.BaseExpression):
    """The converted construction of a mode-dependent layer with `.set_train()` appended (torch's start state), or
    None where it was not converted to a construction (a TODO, a raising placeholder)."""
    if _not_converted(converted, cst.Call):
        return None
    return cst.Call(func=cst.Attribute(value=converted, attr=cst.Name("set_train")))


# torch containers: a new one's own flag is True (its children keep theirs)
CONTAINERS = frozenset({"torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict"})


def container_in_training_mode(converted: cst.BaseExpression):
    """`nn.SequentialCell(norm, model).add_flags(training=True)`: a new torch container trains, whatever its
    children's modes (torchattacks reads `nn.Sequential(norm, model).training` to put the model back in training
    mode); MindSpore's add_flags sets the container's own flag alone (set_train would switch its children too)."""
    if _not_converted(converted, cst.Call):
        return None
    return cst.Call(func=cst.Attribute(value=converted, attr=cst.Name("add_flags")),
                    args=[cst.Arg(keyword=cst.Name("training"), value=cst.Name("True"),
                                  equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                                        whitespace_after=cst.SimpleWhitespace("")))])


def with_training_init(class_node: cst.ClassDef) -> cst.ClassDef:
    """A mode-dependent Cell class without `__init__` gets one that starts it in training mode."""
    body = class_node.body
    if not isinstance(body, cst.IndentedBlock) or any(
            isinstance(st, cst.FunctionDef) and st.name.value == "__init__" for st in body.body):
        return class_node
    init = cst.parse_statement(
        "def __init__(self, *args, **kwargs):\n"
        "    super().__init__(*args, **kwargs)\n"
        f"    self.set_train(True)  # msmigrate: {NOTE}\n")
    stmts = list(body.body)
    at = 1 if stmts and isinstance(stmts[0], cst.SimpleStatementLine) and isinstance(
        stmts[0].body[0], cst.Expr) and isinstance(stmts[0].body[0].value, cst.SimpleString) else 0   # docstring
    rest = stmts[at:]
    if rest and isinstance(rest[0], (cst.FunctionDef, cst.ClassDef)) and not rest[0].leading_lines:
        rest[0] = rest[0].with_changes(leading_lines=[cst.EmptyLine()])
    return class_node.with_changes(body=body.with_changes(body=stmts[:at] + [init] + rest))


def start_in_training_mode(init: cst.FunctionDef) -> cst.FunctionDef:
    """`__init__` of a mode-dependent Cell with `self.set_train(True)` appended (torch's start state)."""
    body = init.body
    if not isinstance(body, cst.IndentedBlock) or not body.body or _SETS_MODE.search(code_of(init)):
        return init
    last = body.body[-1]
    if isinstance(last, cst.SimpleStatementLine) and any(isinstance(s, (cst.Return, cst.Raise)) for s in last.body):
        return init
    line = cst.SimpleStatementLine(
        body=[cst.Expr(cst.parse_expression("self.set_train(True)"))],
        trailing_whitespace=cst.TrailingWhitespace(whitespace=cst.SimpleWhitespace("  "),
                                                   comment=cst.Comment(f"# msmigrate: {NOTE}")))
    return init.with_changes(body=body.with_changes(body=list(body.body) + [line]))


# a torch.nn constructor as written (`nn.BatchNorm1d(`, `torch.nn.Sequential(`)
_NN_CONSTRUCTOR = re.compile(r"^(torch\.)?nn\.\w+$")


def is_script_layer_assignment(original: cst.SimpleStatementLine) -> bool:
    """`bn = nn.BatchNorm1d(3)`, `seq = nn.Sequential(..., nn.Dropout(), ...)`: a statement that script_layer_start
    follows with `name.set_train(True)`."""
    if len(original.body) != 1 or not isinstance(original.body[0], cst.Assign):
        return False
    assign = original.body[0]
    if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
        return False
    value = assign.value
    return isinstance(value, cst.Call) and _NN_CONSTRUCTOR.match(code_of(value.func)) is not None \
        and _MODE_DEPENDENT.search(code_of(value)) is not None


def script_layer_start(original: cst.SimpleStatementLine, converted: cst.CSTNode):
    """Outside a class, `bn = nn.BatchNorm1d(3)` (or an nn.Sequential holding one): torch's layer starts in
    training mode, MindSpore's in inference mode, so the converted line is followed by
    `bn.set_train(True)`. None where the statement is not such an assignment, or was not converted."""
    if not is_script_layer_assignment(original):
        return None
    if _not_converted(converted, cst.SimpleStatementLine):
        return None
    name = original.body[0].targets[0].target.value
    return cst.SimpleStatementLine(
        body=[cst.Expr(cst.parse_expression(f"{name}.set_train(True)"))],
        trailing_whitespace=cst.TrailingWhitespace(whitespace=cst.SimpleWhitespace("  "),
                                                   comment=cst.Comment(f"# msmigrate: {NOTE}")))
