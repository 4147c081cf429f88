"""The libcst pass that turns one torch file into MindSpore code.

Names are resolved through each file's import table (whatever alias a file used),
then through the project index (re-exports inside the project). Each torch site is
looked up in the registry; what cannot be converted becomes a visible TODO: a
comment with the original code, a report entry, and a placeholder that raises only
when that code is reached."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from . import registry as R
from . import python_sequences as PS
from . import taped_steps as TS
from . import argument_backward as AB
from .records import (ADAPTERS as _ADAPTERS, COMPAT, CONSTRUCT_NOTES, DROPPED_CONTEXTS, METHOD_OWNERS,  # noqa: F401
                      DROPPED_DECORATORS, VALUE_ATTRS)
from . import recorded_leaves as RLV
from .callsite import (BoundCall, RuleContext, UnsupportedSite, apply_mapping, code_of, emit_call,
                       fill_template, parse_expr)
from .project_index import TORCH_SUBMODULES, ProjectIndex, is_torch_name, resolve_head, resolve_relative
from .deps import NOTE as DEPENDENCY_NOTE, is_dependency_name, needs_bootstrap
from .graph_device_unpacks import split_device_unpack
from .graph_scalars import float_rounding_graph_safe, percent_format_graph_safe, rounding_name
from .graph_idioms import (INT_DIVISIONS, exact_type_test, all_any_graph_safe, callable_graph_safe, dict_call_graph_safe,
                           dict_display_graph_safe, int_division_graph_safe, map_lambda_as_generator, map_name_as_generator,
                           map_partial_as_generator, power_graph_safe, set_membership_as_tuple, single_for_comprehension,
                           comprehension_condition_as_bool, training_loop_functions, xor_graph_safe, reduce_graph_safe,
                           keyword_update_as_display, keyword_updates,
                           CONSUMERS as WHOLE_CONSUMERS)
from .sites import Site, shorten
from .census import is_plain_value, rule_note
from . import train_loop as TL
from . import import_rebinds as IRB
from . import data_writes as DW
from . import hand_optimizers as HO
from . import step_choice as SC
from . import lightning_clears as LZ
from . import sparse_products as SPP
from . import held_steps as HS
from . import checkpoint_functions as CKF
from . import step_closure as SCL
from . import grad_carry as GC
from . import cell_rows as CR
from . import mixed_narrowing as MN
from . import higher_order_grad as HOG
from . import same_branches as SB
from . import no_grad_values as NG
from . import diagonal_fill as DF
from . import non_tensor_names as NT
from . import param_data_update as PDU
from . import grad_reads as GR
from . import held_items as HI
from . import graph_gradient_closures as GGC
from .scope_names import all_params as _all_params
from . import graph_loop_lambdas as LL
from . import graph_stored_lambdas as SL
from . import unmapped_tensor_api as UT
from . import param_containers as PC
from . import module_refs as MR
from . import torch_namespace as TN
from . import format_values as FV
from . import sequential_calls as SQ
from . import placeholders as PH
from . import out_argument as OA
from .fresh_out_tuples import fresh_out_tuples
from . import module_cast as MC
from . import batched_convs as BC
from . import default_mode as DM
from . import partial_rules as PR
from . import inplace_values as IV
from . import graph_pops as GP
from . import graph_iters as GI
from . import graph_objects as GO
from . import fstring_quotes as FSQ
from . import graph_records as GRD
from . import graph_state as GS
from .graph_attr_casts import _self_attr
from . import graph_mutations as GM
from . import graph_aliases as GA
from . import layer_calls as LC
from . import layer_refs as LR
from . import untyped_methods as UM
from . import hf_return_tensors as HF
from . import host_draws as HD
from . import stepped_slices as SSL
from . import tensor_reads as DR
from . import inplace_arguments as IA
from . import inplace_views as IVW
from . import aug_aliases as AA
from . import argument_check as AC
from . import inplace_holders as IH
from . import range_indices as RI
from . import numpy_indices as NI
from . import complex_operators as CO
from . import conv1d_weights as CW
from . import layer_settings as LS
from . import leftover_backward as LB

# imports that make a module a distributed (DDP) program: its train steps average gradients
_DISTRIBUTED = ("torch.distributed", "torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed",
                "torch.utils.data.distributed", "torch.utils.data.DistributedSampler", "torch.multiprocessing.spawn")

# Parameter names of norm/embedding layers that MindSpore names differently.
PARAM_RENAMES = {
    "batchnorm": {"weight": "gamma", "bias": "beta", "running_mean": "moving_mean",
                  "running_var": "moving_variance"},
    "affine_norm": {"weight": "gamma", "bias": "beta"},
    "layernorm": {"weight": "gamma", "bias": "beta", "eps": "epsilon"},
    "embedding": {"weight": "embedding_table", "num_embeddings": "vocab_size", "embedding_dim": "embedding_size"},
    "prelu": {"weight": "w"},
    "linear": {"in_features": "in_channels", "out_features": "out_channels"},
    "conv": {"groups": "group"},
    "leaky_relu": {"negative_slope": "alpha"},
    "rnn": {"bias": "has_bias"},    # torch's flag (a bool); MindSpore's RNNs hold it as has_bias
}
LAYER_FAMILY = {
    **{f"torch.nn.BatchNorm{d}": "batchnorm" for d in ("1d", "2d", "3d")},
    "torch.nn.SyncBatchNorm": "batchnorm",
    # their base: MindSpore's BatchNorm1d/2d share theirs too (_BatchNorm), with these names
    "torch.nn.modules.batchnorm._BatchNorm": "batchnorm",
    "torch.nn.LayerNorm": "layernorm", "torch.nn.GroupNorm": "affine_norm",
    "torch.nn.LeakyReLU": "leaky_relu", **{f"torch.nn.{r}": "rnn" for r in ("LSTM", "GRU", "RNN")},
    # _ms_compat.InstanceNorm*d keep MindSpore's InstanceNorm names: gamma/beta/moving_mean/moving_variance
    **{f"torch.nn.InstanceNorm{d}": "batchnorm" for d in ("1d", "2d", "3d")},
    "torch.nn.Embedding": "embedding", "torch.nn.PReLU": "prelu",
    "torch.nn.Linear": "linear",
    **{f"torch.nn.Conv{d}": "conv" for d in ("1d", "2d", "3d")},
    **{f"torch.nn.ConvTranspose{d}": "conv" for d in ("1d", "2d", "3d")},
}
# Settings of torch.compile's machinery, set by assignment (`torch._dynamo.config.cache_size_limit = n`):
# converted code never runs under torch.compile (torch.compile is the identity), so they change nothing.
COMPILER_CONFIGS = ("torch._dynamo.config.", "torch._inductor.config.", "torch.compiler.config.")
COMPILER_CONFIG_NOTE = "a torch.compile setting, removed: converted code does not run under torch.compile"
NON_TENSOR_METHOD_RESULTS = {"size", "dim", "item", "tolist", "numpy", "asnumpy", "ndimension", "numel",
                             "nelement", "is_contiguous", "stride", "data_ptr", "element_size",
                             "get_device", "parameters", "named_parameters", "modules",
                             "named_modules", "children", "state_dict", "eval", "train"}
NON_TENSOR_ANNOTATIONS = {"int", "bool", "str", "float", "list", "dict", "tuple", "List", "Dict",
                          "Tuple", "Sequence", "Callable", "Optional[int]", "Optional[bool]",
                          "Optional[str]", "Optional[float]"}


# the containers whose items are modules, iterated in order (a ModuleDict iterates its keys)
_MODULE_SEQUENCES = ("torch.nn.ModuleList", "torch.nn.Sequential", "torch.nn.modules.container.ModuleList",
                     "torch.nn.modules.container.Sequential")


def _basic_index(node: cst.BaseExpression) -> bool:
    """An index element that selects by position: a slice, an int literal, None, `...`."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, (cst.Integer, cst.Ellipsis)) or (isinstance(node, cst.Name) and node.value == "None")


def _without_trailing_full_slices(sub: cst.Subscript) -> cst.Subscript:
    """`w[mask, :]` as `w[mask,]` (the same selection in torch and NumPy: trailing full slices select what an index
    leaves out). MindSpore 2.10 miscounts the dimensions a boolean mask of two or more dimensions covers when a
    slice follows it: `w[mask, :]` of a (6, 1, 5) w and a (6, 1) mask gives (4, 1) instead of torch's (4, 5),
    silently (nflib's spline flows: `unnormalized_widths[inside_intvl_mask, :]`). Only where an element before the
    slices may be an array or tensor index (not a slice, an int literal, None or `...`)."""
    elems = list(sub.slice)
    if len(elems) < 2:
        return sub
    end = len(elems)
    while end > 0:
        s = elems[end - 1].slice
        if not (isinstance(s, cst.Slice) and s.lower is None and s.upper is None and s.step is None):
            break
        end -= 1
    if end == len(elems) or end == 0:
        return sub
    if any(isinstance(e.slice, cst.Index) and isinstance(e.slice.value, cst.Ellipsis) for e in elems[:end]):
        # after `...` the trailing slices place what comes before them, counted from the end: `dirs[..., None, :]`
        # is (H, W, 1, 3) where `dirs[..., None]` is (H, W, 3, 1) (nerf-pytorch's get_rays, silently)
        return sub
    if all(isinstance(e.slice, cst.Slice) or (isinstance(e.slice, cst.Index) and (
            _basic_index(e.slice.value) or code_of(e.slice.value).strip() in ("np.newaxis", "numpy.newaxis")))
           for e in elems[:end]):
        return sub
    if any(isinstance(e.slice, cst.Index) and e.slice.star is not None for e in elems[:end]):
        return sub    # `x[*idx, :]`: the count of the unpacked elements is unknown
    kept = elems[:end]
    # one element keeps its comma: `w[idx,]` indexes with idx itself where idx may be a tuple (`w[idx]` would
    # spread it over the dimensions)
    kept[-1] = kept[-1].with_changes(comma=cst.Comma() if len(kept) == 1 else cst.MaybeSentinel.DEFAULT)
    return sub.with_changes(slice=kept)


# `x *= y` -> torch's Tensor.__imul__ (the name the report gives a refused augmented write)
_AUG_DUNDER = {"AddAssign": "add", "SubtractAssign": "sub", "MultiplyAssign": "mul", "DivideAssign": "truediv",
               "FloorDivideAssign": "floordiv", "ModuloAssign": "mod", "PowerAssign": "pow",
               "MatrixMultiplyAssign": "matmul", "BitAndAssign": "and", "BitOrAssign": "or", "BitXorAssign": "xor",
               "LeftShiftAssign": "lshift", "RightShiftAssign": "rshift"}


# in-place fills whose value depends on the receiver's shape and dtype alone: on a slice, as a statement, the
# slice's copy is filled and written back (`x[:, c].uniform_(-e, e)`, fast_adversarial's per-channel random start)
_SLICE_FILLS = frozenset(("uniform_", "normal_"))
# arithmetic in place on a basic slice, as a statement: an assignment of the slice and the value to the slice
# (`E[..., a:b, c:d].add_(out_patch)`, SwinIR's tiled test), MindSpore's indexing giving a copy
_SLICE_ARITHMETIC = {"add_": "+", "sub_": "-", "mul_": "*", "div_": "/"}


def _basic_slice_of_name(sub: cst.Subscript) -> bool:
    """`E[..., a:b, 0]`: a name's (or an attribute chain's) basic slice, each index an Ellipsis, None, an integer
    literal or a slice, with no call anywhere: in torch a view (advanced indexing gives a copy, which its in-place
    change leaves E as it is), its expressions safe to evaluate twice."""
    head = sub.value
    while isinstance(head, cst.Attribute):
        head = head.value
    if not isinstance(head, cst.Name):
        return False
    for element in sub.slice:
        part = element.slice
        if isinstance(part, cst.Index):
            if element.slice.star or not isinstance(part.value, (cst.Ellipsis, cst.Integer)) and not (
                    isinstance(part.value, cst.Name) and part.value.value == "None"):
                return False
        elif isinstance(part, cst.Slice):
            if any(isinstance(n, (cst.Call, cst.NamedExpr, cst.Await, cst.Yield, cst.Subscript))
                   for bound in (part.lower, part.upper, part.step) if bound is not None
                   for n in _walk(bound)):
                return False
        else:
            return False
    return True


def _walk(node: cst.CSTNode):
    yield node
    for child in node.children:
        yield from _walk(child)


# attributes of MindSpore's Cell that its own methods rewrite, under which a torch module keeps a value of its own:
# in a class that becomes a Cell the module's `self.<name>` is renamed (Transformer._cell_owned_attribute)
CELL_OWNED_ATTRIBUTES = {"phase": "_torch_phase"}

class _Imports(cst.CSTVisitor):
    """The import statements of a piece of code (not those inside nested functions/classes)."""

    def __init__(self) -> None:
        self.found: list = []

    def visit_Import(self, node) -> None:
        self.found.append(node)

    def visit_ImportFrom(self, node) -> None:
        if not isinstance(node.names, cst.ImportStar):
            self.found.append(node)

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    @classmethod
    def collect(cls, node) -> list:
        v = cls()
        TL.walk(node, v)   # read-only: no libcst rebuild of the tree
        return v.found


@dataclass
class FunctionContext:
    name: str
    in_cell: bool
    tensors: Set[str] = field(default_factory=set)
    cells: Set[str] = field(default_factory=set)
    others: Set[str] = field(default_factory=set)
    containers: Set[str] = field(default_factory=set)   # names bound to a list/dict/set display (a slice is a copy)
    class_names: Dict[str, str] = field(default_factory=dict)   # `classname = m.__class__.__name__`
    layers: Dict[str, str] = field(default_factory=dict)        # `emb = nn.Embedding(...)`: name -> torch class


@dataclass
class ClassContext:
    name: str
    is_cell: bool
    attr_types: Dict[str, str] = field(default_factory=dict)
    mode_dependent: bool = False     # builds Dropout/BatchNorm... or reads self.training (default_mode.py)
    layer_family: Optional[str] = None   # a subclass of a torch layer: PARAM_RENAMES for `self.weight`
    forward_methods: Optional[Set[str]] = None   # what its forward runs (graph_state.forward_methods); None: any
    hand_optimizer: bool = False     # a torch Optimizer subclass with its own step() (hand_optimizers.py)
    # its methods that return a torch layer or container they build -> its torch name (module_returning_methods)
    module_methods: Dict[str, str] = field(default_factory=dict)
    # `self.perm` where every binding in the class is a NumPy value (numpy_indices.py)
    numpy_attributes: Set[str] = field(default_factory=set)


# tensor classes whose call makes a tensor (the legacy typed constructors)
TENSOR_CLASS_CALLS = frozenset("torch." + n + "Tensor" for n in (
    "", "Float", "Double", "Half", "BFloat16", "Long", "Int", "Short", "Char", "Byte", "Bool"))



# an augmented assignment's operator as the operator module names it (augmented_in_place)
_STATE_AUG = {cst.AddAssign: "add", cst.SubtractAssign: "sub", cst.MultiplyAssign: "mul", cst.DivideAssign: "truediv",
              cst.FloorDivideAssign: "floordiv", cst.ModuloAssign: "mod", cst.PowerAssign: "pow"}

def _attributes_in(node: cst.CSTNode) -> List[cst.Attribute]:
    found: List[cst.Attribute] = []

    class _Attributes(cst.CSTVisitor):
        def visit_Attribute(self, attr: cst.Attribute) -> None:
            found.append(attr)

    node.visit(_Attributes())
    return found


def _keyed_by_string(sub: cst.Subscript) -> bool:
    """`state['slow'].copy_(v)`: a string key reads a dict's tensor, no slice of one: its copy_ stays in place
    (an assignment `state['slow'] = v` would make the entry the very tensor v, a Parameter changed later)."""
    return len(sub.slice) == 1 and isinstance(sub.slice[0].slice, cst.Index) and isinstance(
        sub.slice[0].slice.value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))

# torch functions and Tensor methods that give a tuple of tensors whose length the arguments decide
# methods of a train step (train_loop.py finds each as a statement of its own)
_STEP_METHODS = frozenset({"backward", "step", "zero_grad"})


def _split_step_calls(line) -> Optional[List[cst.SimpleStatementLine]]:
    """`opt_a.step(); opt_b.step()`, `optimizer.zero_grad(); loss.backward()`: one statement per line, so the
    train-step analysis sees each call (the line's comment stays on its last statement). None: no such line."""
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) < 2 or not any(
            isinstance(st, cst.Expr) and isinstance(st.value, cst.Call) and isinstance(st.value.func, cst.Attribute)
            and st.value.func.attr.value in _STEP_METHODS for st in line.body):
        return None
    out = []
    for k, st in enumerate(line.body):
        last = k == len(line.body) - 1
        out.append(cst.SimpleStatementLine(
            body=[st.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)],
            leading_lines=line.leading_lines if k == 0 else [],
            trailing_whitespace=line.trailing_whitespace if last else cst.TrailingWhitespace()))
    return out


_TUPLE_RESULTS = ("split", "chunk", "unbind", "tensor_split", "hsplit", "vsplit", "dsplit", "split_with_sizes")


def _numpy_read(node: cst.BaseExpression) -> bool:
    """`x.numpy()` as written (an operand of a tensor's arithmetic: an array torch takes as a tensor)."""
    return isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute) \
        and node.func.attr.value == "numpy"


RECORDED_NOTE = ("no train step holds this backward() and nothing steps an optimizer after it: MindSpore's PyNative "
                 "autograd runs it on the graph recorded since _ms_compat.record_autograd (torch's .grad of the "
                 "inputs that require it, the Cell backward hooks on the way); PYNATIVE mode only, GRAPH mode "
                 "raises MigrationError; a Parameter's .grad stays refused")
RECORDED_MODE_WHY = ("PYNATIVE_MODE: a backward() outside a train step runs on PyNative's recorded graph "
                     "(_ms_compat.autograd_backward); GRAPH mode records none")


class TorchToMindSpore(cst.CSTTransformer):

    def __init__(self, module_name: str, is_package: bool, index: ProjectIndex,
                 compat_import: Optional[Tuple[int, str]]):
        super().__init__()
        self.module_name = module_name
        self.is_package = is_package
        self.index = index
        # (relative level, name) for `from . import _ms_compat`; level 0 = absolute import
        self.compat_import = compat_import
        self.sites: List[Site] = []
        self.stmt_lines: Dict[int, int] = {}   # id(statement) -> line, from msmigrate.lines
        self._stmt_line: List[int] = []
        self.uses_compat = False
        self.complex_operators = False       # `*`, `/` through _ms_compat.times/over (complex_operators.py)
        self.need: Set[str] = set()          # "ms", "nn", "ops", or a module to `import`
        self.names = {"ms": "ms", "nn": "nn", "ops": "ops"}
        self._funcs: List[FunctionContext] = []
        self._classes: List[ClassContext] = []
        # an attribute's object (`x.tensors.dtype`: x.tensors): a read, where a target or a call's function is none
        self._receivers: Set[int] = set()
        self._record_writes: Dict[int, bool] = {}     # `inter.f = v` in graph code: unshared? (graph_records.py)
        self._none_tests: Set[str] = set()
        self._class_attr_types: Dict[str, Dict[str, str]] = {}
        self._import_time = 0                # >0 while in decorators/defaults/annotations
        self._annotation = 0                 # >0 inside a type annotation
        self._type_refs: Set[int] = set()    # class references used as types (isinstance, bases)
        self._base_refs: Set[int] = set()    # class references used as base classes
        self._bound_values: Set[int] = set()  # what an assignment binds (`Tensor = torch.Tensor`, an IfExp's branches)
        self._skip: Set[int] = set()         # ids of nodes handled by their parent
        self._call_funcs: Set[int] = set()   # ids of the called expressions (`f` of `f(x)`)
        self._deleted: Set[int] = set()      # ids of `del` targets
        self.dispatched: Set[int] = set()    # branches of run-time method choices already written (untyped_methods)
        self._skip_calls: Set[int] = set()   # calls handled by their statement (with-items, decorators)
        self._dict_reads: Set[int] = set()   # `M.__dict__[name]` over a torch module (torch_namespace.py)
        # ids of NEW nodes (placeholders of dropped calls, rebinding calls) -> the node itself: holding the
        # node keeps its id from being reused by a later node once the placeholder is freed (a docstring
        # after a dropped `torch.fx.wrap(...)` statement went away with it, depending on memory layout)
        self._dropped: Dict[int, cst.CSTNode] = {}   # placeholder nodes for dropped calls
        self._removed_stmts: Set[int] = set()  # ids of original statements that went away
        self._current_original_stmt = None
        self._inplace_stmt_calls: Set[int] = set()  # `x.op_(...)` calls that are whole statements
        self._stmt_calls: Set[int] = set()          # every call that is a whole statement (its value unused)
        self._inplace_values: Set[int] = set()      # those of them whose value is used (inplace_values.py)
        self._row_todos: Set[Tuple[str, int]] = set()   # (api, line) of rows' in-place calls left raising
        self._cell_rows: Dict[int, Set[str]] = {}   # id(loop as written) -> its rows changed in Cell code (cell_rows.py)
        self._view_conflicts: Dict[int, str] = {}   # in place through a view another name reads (inplace_views.py)
        self._view_names: Dict[int, Tuple[str, str]] = {}   # ... and the view's and its base's names
        self._view_repacks: Dict[int, str] = {}   # in place on a name unpacked from a base read after (inplace_views.py)
        self._pending_repacks: List[str] = []     # ... their `base = _ms_compat.repacked(...)` lines, for the statement
        self._arg_refusals: Dict[int, str] = {}     # calls changing a tensor the caller reads after (inplace_callers.py)
        # (class or None, function) -> its parameters whose changes are written into the caller's tensor (the same)
        self._arg_write_backs: Dict[Tuple[Optional[str], str], Set[str]] = {}
        self._hoisted_inplace: List[Tuple[str, cst.BaseExpression]] = []   # their rebindings, this statement
        self._graph_pops: Set[int] = set()          # `h.pop()` on a local list in a Cell (graph_pops.py)
        self._graph_pops_refused: Dict[int, bool] = {}   # pops GRAPH mode gets wrong: refused there
        self._graph_guarded_pops: Dict[int, cst.Call] = {}   # `h.pop(0) if h else None`: its IfExp
        self._graph_iters: Set[int] = set()         # `it = iter(xs)` read by next() only (graph_iters.py)
        self._graph_nexts: Set[int] = set()
        self._graph_copies: Set[int] = set()        # `mems.copy()` rebinding a popped argument
        # `acc.append(h)` on an argument (graph_mutations.py), on a list another holder shares (graph_aliases.py):
        # (refusing helper, what)
        self._graph_changes_refused: Dict[int, Tuple[str, str]] = {}
        self._graph_dict_pops: Set[int] = set()     # `v = kwargs.pop('k', d)` (graph_mutations.py)
        self._graph_keyword_updates: Set[int] = set()    # `kwargs.update(k=v)` (graph_idioms.py)
        self._rebinds: Dict[int, cst.CSTNode] = {}   # converted calls whose statement becomes `x = ...`
        self._out_stmt_calls: Set[int] = set()       # `torch.f(..., out=c)` calls that are whole statements
        self._out_targets: Dict[int, Tuple[cst.CSTNode, cst.CSTNode]] = {}   # their converted calls -> (c, call)
        self._fresh_out_tuples: Dict[int, str] = {}   # `torch.sort(x, out=out)`, out fresh tensors: -> 'out'
        self._slice_copies: Dict[int, Optional[Tuple[cst.CSTNode, cst.CSTNode]]] = {}  # `x[i].copy_(v)` -> `x[i] = v`
        # `x[i].uniform_(a, b)` -> `x[i] = _ms_compat.uniform_(x[i], a, b)`: the slice's copy filled, written back
        self._slice_fills: Dict[int, Optional[Tuple[cst.CSTNode, cst.CSTNode]]] = {}
        self._module_tensors: Set[str] = set()  # module-level names bound to tensors (scripts)
        self._module_others: Set[str] = set()   # and to instances of the project's plain classes (no Modules)
        self._module_cells: Set[str] = set()    # and to modules (`seq = Sequence()`: seq.double() casts a model)
        self._comments: List[List[str]] = []  # TODO comments per enclosing statement
        # isinstance() narrowing per block: name -> torch class, or the tuple of the test's torch classes where
        # they rename parameters differently (mixed_narrowing.py)
        self._narrow: List[Dict[str, object]] = []
        self._pending_narrow: Dict[int, Dict[str, object]] = {}
        # names last bound to a list or tuple literal (`kinds = [nn.Conv2d, nn.BatchNorm2d]`), for `type(m) in kinds`
        self._literal_lists: Dict[str, cst.BaseExpression] = {}
        self._stores: Set[int] = set()       # ids of assignment targets (`m.bias = v`)
        self.touched = False                  # the file uses torch at all
        # training-loop rewriting (msmigrate/train_loop.py)
        self.optimizers: Set[str] = set()     # expressions bound to torch.optim constructors
        self._stepped_closures: Dict[int, SCL.SteppedClosure] = {}   # step_closure.stepped_closures
        self.closure_only_optimizers: Set[str] = set()   # bound to torch.optim.LBFGS (step needs a closure)
        # expressions bound to project classes wrapping an optimizer -> (its attribute, the methods stepping it)
        self.optimizer_wrappers: Dict[str, Tuple[str, Tuple[str, ...]]] = {}
        self._scopes: List[dict] = []         # per function/module: read counts, bound names, loops
        self._out_lines: Dict[int, int] = {}  # id(converted statement) -> source line
        self._out_nodes: List[cst.CSTNode] = []  # those statements, held so that their ids stay theirs
        self._hoist: Dict[int, List[cst.BaseStatement]] = {}  # id(original loop) -> step defs to put before it
        self.train_steps = 0
        self._taped = False      # a backward() differentiated from PyNative's record (taped_steps.py)
        self._records_autograd = False   # a backward() run by PyNative's autograd (recorded_backward.py)
        # torch.no_grad() kept as mindspore._no_grad(): set on the second conversion of a taped file (converter.py);
        # "outside_cells": a module a taped file imports, whose Cell code may compile (GRAPH refuses _no_grad)
        self.keep_no_grad = False
        self._taped_outer: Dict[int, str] = {}   # id(function or loop) -> the optimizer its tape_step steps
        self._host_functions: Set[str] = set()   # module functions making NumPy data (train_loop)
        self._clearing_functions: Set[str] = set()   # module functions clearing gradients (train_loop)
        self._backward_methods: Dict[str, int] = {}     # methods calling backward() on a parameter (train_loop)
        self._drawing_functions: Set[str] = set()   # those of them that call NumPy
        self._drawing_objects: Set[str] = set()     # instances of classes drawing with NumPy (train_loop)
        self._todo_count = 0
        self._loop_nodes: List[cst.CSTNode] = []   # the enclosing loops (original nodes), innermost last
        self._outer_steps: Dict[int, tuple] = {}   # id(original loop) -> (OuterStep, summed gradients) to apply
        self._deferred_ifs: Set[int] = set()     # id(update `if`) whose branches the enclosing loop gives steps
        self._elifs: Set[int] = set()   # id(an `if` that is another's `elif`)
        # of those, `if split == "train": <update>` alone (guarded_update) -> its raising TODOs where no split holds it
        self._guarded_ifs: Dict[int, TL.Rewrite] = {}
        self._grad_writers: Dict[str, bool] = {}   # the module's functions by name -> writes a .grad (train_loop)
        self._stmt_kinds: List[str] = []      # placeholders.DEFINE/RUN/MAIN per enclosing statement
        self._placeholder_names: Set[str] = set()  # module-level names bound to placeholders
        self.batched_convs: Set[int] = set()   # conv-layer calls whose input is provably batched
        info = index.modules.get(module_name)
        self._imports: Dict[str, str] = info.imports if info is not None else {}
        self._file_imports: Dict[str, str] = dict(self._imports)   # the table before any rebinding (_rebind_import)

    # ----------------------------------------------------------------- helpers
    def _line(self, node: cst.CSTNode) -> int:
        """Line of the statement being converted (sites are reported per statement)."""
        return self._stmt_line[-1] if self._stmt_line else 0

    def _dotted(self, node: cst.CSTNode) -> Optional[str]:
        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, cst.Attribute):
            inner = self._dotted(node.value)
            return f"{inner}.{node.attr.value}" if inner else None
        return None

    def _qname_any(self, node: cst.CSTNode) -> Optional[str]:
        """Absolute qualified name of an imported name (through the file's imports and
        project re-exports), or None for local names and expressions.

        Resolution uses the file's import table from the project pre-pass instead of
        libcst's scope analysis, which costs more than the whole conversion."""
        dotted = self._dotted(node)
        full = None if dotted is None else resolve_head(dotted, self._imports)
        return None if full is None else self.index.resolve_alias(full)

    def _torch_qname(self, node: cst.CSTNode) -> Optional[str]:
        name = self._qname_any(node)
        if name is not None and self._is_param(node):
            return None     # `def max_neg_value(tensor)` next to `from torch import tensor`: the argument
        if name is not None and self._is_rebound(node):
            return None     # `optim = torch.optim.Adam(...)` in the function: its local (import_rebinds.py)
        if name is None or not (is_torch_name(name) or is_dependency_name(self.index, name)):
            return None
        if name.split(".", 1)[0] in self.index.local_tops:
            return None
        return R.canonical(name)   # torch.nn.modules.linear.Linear -> torch.nn.Linear

    def render(self, target: str) -> cst.BaseExpression:
        """Code for a target name, recording the import it needs."""
        if target.startswith("mindspore.nn."):
            self.need.add("nn")
            return parse_expr(self.names["nn"] + target[len("mindspore.nn"):])
        if target.startswith("mindspore.ops."):
            self.need.add("ops")
            return parse_expr(self.names["ops"] + target[len("mindspore.ops"):])
        if target == "mindspore":   # the module itself (`torch` re-exported, hasattr(torch, ..))
            self.need.add("ms")
            return cst.Name(self.names["ms"])
        if target.startswith("mindspore."):
            self.need.add("ms")
            return parse_expr(self.names["ms"] + target[len("mindspore"):])
        if target.startswith(COMPAT + "."):
            self.uses_compat = True
            return parse_expr(target)
        if target.startswith(("ops.", "nn.")):
            # a record naming MindSpore's module by the converter's own alias (Variable's `ops.stop_gradient`,
            # the target a rule's calls write): that import, never a module of the program's named `ops`
            return self.render("mindspore." + target)
        if "." in target:
            self.need.add("import:" + target.rsplit(".", 1)[0])
        return parse_expr(target)

    def _record(self, node: cst.CSTNode, api: str, target: str, status: str, note: str = "") -> None:
        self.touched = True
        if status != R.TODO and api in CONSTRUCT_NOTES and self._in_forward():
            # works in PyNative but is a GRAPH-mode hazard inside construct: report and code say so
            status, note = R.DIFFERENCE, CONSTRUCT_NOTES[api]
            if self._comments:
                self._comments[-1].append(f"# msmigrate: NOTE {api}: {note}")
        m = R.lookup(api) if status != R.TODO else None
        self.sites.append(Site(self._line(node), api, target, status, note, shorten(code_of(node)),
                               m.test if m is not None else ""))

    def _todo(self, node: cst.CSTNode, api: str, why: str, call_args: Optional[cst.Call] = None) -> cst.BaseExpression:
        """Replace a site with a placeholder that raises when reached; keep the original
        visible in a TODO comment above its statement."""
        original = shorten(code_of(node), 150)
        line = self._line(node)
        self._record(node, api, "", R.TODO, why)
        self._todo_count += 1
        if self._comments:
            self._comments[-1].append(f"# msmigrate: TODO {api}: {why}. Original: {original}")
        self.uses_compat = True
        where = f"{self.module_name}:{line}"
        ph = PH.placeholder(api, where, why)
        if PH.lazy_site(self._stmt_kinds, bool(self._funcs), self._import_time > 0):
            if call_args is not None:   # its arguments, for a rewrite that can still convert it (higher_order_grad)
                self.__dict__.setdefault("_lazy_calls", {})[where] = call_args
            return ph     # a definition run on import: the module imports, using the name raises
        if call_args is not None:
            # keep the arguments visible; calling the placeholder raises
            return call_args.with_changes(func=ph)
        return PH.reached(ph)

    def _in_cell_method(self) -> bool:
        return bool(self._funcs) and self._funcs[-1].in_cell

    def _in_forward(self) -> bool:
        """Inside a Module's forward (or a helper it calls, by name): sub-module calls
        there return tensors; in __init__ they build things."""
        return self._in_cell_method() and self._funcs[-1].name not in ("__init__", "reset_parameters",
                                                                        "_init_weights", "init_weights")

    def _in_record_method(self) -> bool:
        """In a method (not __init__) of a record class built as a dict in compiled graphs (graph_records.py)."""
        return bool(self._classes and self._funcs) and self._funcs[0].name != "__init__" \
            and not self._classes[-1].is_cell and self.index.is_graph_record_class(self.module_name,
                                                                                   self._classes[-1].name)

    def _in_module_forward(self) -> bool:
        """Inside a Module's forward itself (its other methods may train: forward-forward's Layer.train)."""
        return self._in_forward() and self._funcs[-1].name in ("forward", "construct")

    # ----------------------------------------------------------- statements
    def _push_comments(self, node=None) -> None:
        self._comments.append([])
        line = self.stmt_lines.get(id(node)) if node is not None else None
        self._stmt_line.append(line if line is not None else (self._stmt_line[-1] if self._stmt_line else 0))

    def _pop_comment_list(self) -> List[str]:
        self._stmt_line.pop()
        return self._comments.pop()

    def _pop_comments(self, node):
        comments = self._pop_comment_list()
        if not comments or not hasattr(node, "leading_lines"):
            return node
        seen = []
        for c in comments:
            if c not in seen:
                seen.append(c)
        lines = list(node.leading_lines) + [cst.EmptyLine(comment=cst.Comment(c)) for c in seen]
        return node.with_changes(leading_lines=lines)

    def visit_SimpleStatementLine(self, node) -> None:
        self._push_comments(node)
        self._line_of_stmt = self._line(node)
        self._statements_on_line = len(node.body)   # `a.fill_(v); a.add_(w)`: inplace_chains.py's split
        # `bn = nn.BatchNorm1d(3)` outside a class: followed by `bn.set_train(True)` (default_mode.py)
        self._layer_start_stmt = not self._classes and DM.is_script_layer_assignment(node)

    def leave_SimpleStatementLine(self, original, updated):
        repacks, self._pending_repacks = self._pending_repacks, []
        result = self._leave_line(original, updated)
        if not repacks or isinstance(result, cst.RemovalSentinel):
            return result
        # `gij = _ms_compat.repacked((gi, gj), 'T')` after a statement changing gj in place (inplace_views.py)
        lines = list(result.nodes) if isinstance(result, cst.FlattenSentinel) else [result]
        for code in dict.fromkeys(repacks):     # one line for the names of one unpacking
            line = cst.parse_statement(code + "\n")
            self._out_lines[id(line)] = self._line_of_stmt
            self._out_nodes.append(line)
            lines.append(line)
        return cst.FlattenSentinel(lines)

    def _leave_line(self, original, updated):
        self._layer_start_stmt = False
        result = self._leave_simple_statement(original, updated)
        if isinstance(result, cst.SimpleStatementLine) and self._in_graph_code():
            result = GM.tuple_of_changes(result) or result     # `a.append(i), b.append(j)`: graph_mutations.py
        result = self._parameter_value_change(result)   # `module.weight.data.mul_(s)`
        hoisted, self._hoisted_inplace = self._hoisted_inplace, []
        aliased = self._alias_rebinds.get(id(original)) if isinstance(result, cst.SimpleStatementLine) else None
        if aliased:     # the names aliasing the augmented one follow its in-place change (aug_aliases.py)
            self.uses_compat = True
            lines = (IV.with_rebindings(result, hoisted) if hoisted else [result]) + [
                cst.parse_statement(f"{alias} = _ms_compat.inplace_alias({name}, {alias})") for name, alias in aliased]
            for line in lines:
                self._out_lines[id(line)] = self._line_of_stmt
                self._out_nodes.append(line)
            return cst.FlattenSentinel(lines)
        if hoisted:
            lines = IV.with_rebindings(result, hoisted)
            for line in lines:
                self._out_lines[id(line)] = self._line_of_stmt
                self._out_nodes.append(line)
            return cst.FlattenSentinel(lines)
        start = None if self._classes else DM.script_layer_start(original, result)
        if start is not None:   # `bn = nn.BatchNorm1d(3)` outside a class: torch's training mode (default_mode.py)
            for line in (result, start):
                self._out_lines[id(line)] = self._line_of_stmt
                self._out_nodes.append(line)
            return cst.FlattenSentinel([result, start])
        lines = _split_step_calls(result)   # `opt.zero_grad(); loss.backward(); opt.step()` on one line
        if lines is not None:
            for line in lines:
                self._out_lines[id(line)] = self._line_of_stmt
                self._out_nodes.append(line)
            return cst.FlattenSentinel(lines)
        if isinstance(result, cst.CSTNode):     # module level too: straight-line train steps
            self._out_lines[id(result)] = self._line_of_stmt
            self._out_nodes.append(result)
        return result

    def _leave_simple_statement(self, original, updated):
        self._current_original_stmt = original
        if not updated.body and id(original) in getattr(self, "_owner_checks", {}) \
                and id(original) not in self._kept_clears:
            # torch clears that module's .grad only: the same as a fresh step's where it owns the optimizer's all
            self._pop_comment_list()
            self.uses_compat = True
            module, optimizer = self._owner_checks[id(original)]
            where = f"{self.module_name}:{self._line_of_stmt}"
            return cst.parse_statement(f"_ms_compat.clears_all_gradients({module}, {optimizer}, {where!r})\n"
                                       ).with_changes(leading_lines=updated.leading_lines)
        if not updated.body and id(original) in getattr(self, "_kept_clears", ()):
            # `optimizer.zero_grad()` outside a train step, which empties the gradients a loop clearing none sums
            # (_ms_compat.grad_sum: grad_carry.py); elsewhere it goes, nothing accumulating in MindSpore
            self._pop_comment_list()
            module = self._module_clears.get(id(original))
            if module is not None:  # torch clears that module's .grad only: its entries of the held sums
                self.uses_compat = True
                where = f"{self.module_name}:{self._line_of_stmt}"
                return cst.parse_statement(f"_ms_compat.clear_module_grads({module}, {where!r})\n").with_changes(
                    leading_lines=updated.leading_lines)
            return original.with_changes(leading_lines=updated.leading_lines)
        if not updated.body or _self_assignment(original, updated):
            return self._finish_removed(updated)
        if not self._funcs and not self._classes and self._comments[-1]:
            self._placeholder_names.update(PH.bound_placeholders(updated))
        if (self._comments[-1] and PH.lazy_site(self._stmt_kinds, bool(self._funcs), False)
                and self._needs_import_guard(updated)):
            return self._guard_import_time(updated)
        return self._pop_comments(updated)

    @staticmethod
    def _is_placeholder(node) -> bool:
        return (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                and node.func.attr.value == "Unconverted")

    def _needs_import_guard(self, stmt: cst.SimpleStatementLine) -> bool:
        """A placeholder nested inside a module/class-level expression would fail at
        import; a bare `X = placeholder` or a removed call would not."""
        if len(stmt.body) != 1:
            return True
        small = stmt.body[0]
        if isinstance(small, (cst.Assign, cst.Expr, cst.AnnAssign)) and self._is_placeholder(small.value):
            return False
        if isinstance(small, cst.Pass):
            return False
        return "Unconverted(" in code_of(small)

    def _guard_import_time(self, stmt: cst.SimpleStatementLine):
        """A module- or class-level definition whose value uses a placeholder inside an
        expression runs inside try/except: importing the module still works and the names
        it defines become placeholders that raise (naming the site) when used. Only a
        definition is guarded, and only failures caused by a placeholder are caught."""
        where = f"{self.module_name}:{self._line_of_stmt}"
        comments = self._pop_comment_list()
        lines = list(stmt.leading_lines) + [cst.EmptyLine(comment=cst.Comment(c)) for c in dict.fromkeys(comments)]
        guarded = PH.guarded_definition(stmt, where, lines)
        if guarded is None:
            return stmt.with_changes(leading_lines=lines)
        self.uses_compat = True
        return guarded

    def _finish_removed(self, updated):
        comments = self._pop_comment_list()
        if not comments:
            self._removed_stmts.add(id(self._current_original_stmt))
        if comments:
            # keep the explanation even if the statement went away
            return updated.with_changes(body=[cst.Pass()], leading_lines=list(updated.leading_lines) + [
                cst.EmptyLine(comment=cst.Comment(c)) for c in comments])
        return cst.RemovalSentinel.REMOVE

    def visit_If(self, node: cst.If) -> None:
        self._push_comments(node)
        if isinstance(node.orelse, cst.If):
            self._elifs.add(id(node.orelse))
        narrow = self._isinstance_narrowing(node.test)
        if narrow:
            self._pending_narrow[id(node.body)] = narrow

    def leave_If(self, original, updated):
        same = SB.merged(updated, original.test)   # `if self.gpu_mode: <a>.cuda() else: <a>`: one once converted
        if same is not None:
            updated = self._pop_comments(updated)
            if id(original) in self._elifs:     # `elif gpu: <a> else: <a>`: the chain's `else: <a>`
                return cst.Else(body=updated.body.with_changes(body=SB.merged(updated.with_changes(
                    leading_lines=[]), original.test)), leading_lines=list(updated.leading_lines))
            return cst.FlattenSentinel(SB.merged(updated, original.test))
        if SB.emptied(updated, original.test) and id(original) not in self._elifs:   # `if gpu: model.cuda()`
            self._pop_comment_list()
            return cst.RemovalSentinel.REMOVE
        updated = updated.with_changes(test=self._graph_safe_test(original.test, updated.test))
        updated = self._step_under_if(original, updated)
        return self._pop_comments(updated)

    def _step_under_if(self, original, updated):
        """`if i % n_critic == 0: ...; loss.backward(); opt.step()` in a loop: a train step of its
        own, defined in the `if`; the names the enclosing loops bind are its per-iteration inputs."""
        loops = self._scopes[-1]["loops"]
        if not loops or self._in_forward() or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        updated = self._loop_higher_order_grads(updated, original)
        if SC.branch_updates(updated) and original in getattr(self._loop_nodes[-1].body, "body", ()):
            # DINO's `if fp16_scaler is None: <update> else: <scaled update>` in a loop body: the loop splits it
            # (step_choice.update_branches) or, failing that, gives each branch its step (_branch_steps)
            self._deferred_ifs.add(id(updated))
            return updated
        per_iteration = set().union(*(bound for _, bound in loops))
        outer = [st for lp in self._loop_nodes[-len(loops):] if isinstance(lp.body, cst.IndentedBlock)
                 for st in lp.body.body]
        todo = TL.step_reading_outer_network_values(updated, outer, self._loop_info())
        if todo is not None and self._in_loop_body(original) and not isinstance(updated.orelse, cst.If):
            # made's `if split == 'train': <update>` reading the loss computed before it: the loop splits on
            # the test (step_choice.guarded_update) or, failing that, the update stays this TODO (_branch_steps)
            self._deferred_ifs.add(id(updated))
            self._guarded_ifs[id(updated)] = todo
            return updated
        if todo is not None:
            return self._apply_rewrite(updated, todo)
        return self._branch_step(updated, outer, per_iteration)

    def _in_loop_body(self, original) -> bool:
        """A statement of the innermost loop's body, or of a `with` there that the conversion drops
        (`with torch.set_grad_enabled(phase == 'train'):` around the forward and its update, as in torch's
        fine-tuning tutorial): a statement of the loop's body once converted."""
        body = getattr(self._loop_nodes[-1].body, "body", ())
        if original in body:
            return True
        for st in body:
            if isinstance(st, cst.With) and original in getattr(st.body, "body", ()) and all(
                    item.asname is None and (self._torch_qname(item.item.func) if isinstance(item.item, cst.Call)
                                             else self._torch_qname(item.item)) in DROPPED_CONTEXTS
                    for item in st.items):
                return True
        return False

    def _branch_step(self, branch, outer, per_iteration):
        rw = TL.step_reading_outer_network_values(branch, outer, self._loop_info()) or TL.rewrite_loop(
            branch, self._loop_info(), extra_per_iteration=per_iteration, inline_defs=True)
        return branch if rw is None else self._apply_rewrite(branch, rw)

    def _split_reason(self, branch, before, per_iteration):
        """Why the branch, with the statements before its `if` copied in (update_branches), gets no step
        (a gradient changer before its step): the reason its TODO gives. None: no such reason."""
        whole = branch.with_changes(body=branch.body.with_changes(body=list(before) + list(branch.body.body)))
        rw = TL.rewrite_loop(whole, self._loop_info(), extra_per_iteration=per_iteration, inline_defs=True)
        return rw.problems[0][1] if rw is not None and rw.problems and not rw.steps else None

    def _branch_steps(self, loop, per_iteration, loops):
        """The loop's deferred update `if`s that no split took: each branch a step of its own (a raising TODO
        where it reads the loss computed before the `if`), the else branch included."""
        if not isinstance(loop.body, cst.IndentedBlock):
            return loop
        outer = list(loop.body.body) + [st for lp in self._loop_nodes[-len(loops):] if loops
                                         and isinstance(lp.body, cst.IndentedBlock) for st in lp.body.body]
        body = []
        for st in loop.body.body:
            if id(st) in self._guarded_ifs:     # no split held it: its TODO, as found where the `if` was left
                body.append(self._apply_rewrite(st, self._guarded_ifs[id(st)]))
                continue
            if id(st) in self._deferred_ifs:
                done = []
                for branch in (st, st.orelse):
                    why = self._split_reason(branch, body, per_iteration)
                    if why is None:
                        done.append(self._branch_step(branch, outer, per_iteration))
                        continue
                    stmts = list(branch.body.body)
                    backs = [i for i, x in enumerate(stmts) if TL._method(TL._stmt_call(x), "backward") is not None]
                    done.append(self._apply_rewrite(branch, TL.Rewrite(branch, [], set(), [], [(i, why) for i in backs])))
                st = st.with_changes(body=done[0].body, orelse=done[1])
            body.append(st)
        return loop.with_changes(body=loop.body.with_changes(body=body))

    def visit_IndentedBlock(self, node) -> None:
        self._narrow.append(self._pending_narrow.pop(id(node), {}))

    def leave_IndentedBlock(self, original, updated):
        self._narrow.pop()
        if not updated.body:
            return updated.with_changes(body=[cst.SimpleStatementLine(body=[cst.Pass()])])
        return updated

    def visit_For(self, node) -> None:
        self._push_comments(node)
        self._skip.add(id(node.target))
        UT.track_tuple_names(self, [node.target], None)     # a loop variable is no (values, indices) result
        self._track_module_loop_variable(node)
        self._track_param_group_loop(node)
        self._scopes[-1]["loops"].append((id(node), TL.assigns(node)))
        self._loop_nodes.append(node)

    def _track_param_group_loop(self, node: cst.For) -> None:
        """`for group in self.param_groups: for w in group["params"]:` (a hand-written optimizer's step): w is a
        parameter, a tensor, whatever its name: `w.new(1)` is converted as a tensor's legacy constructor (left as
        written it was an AttributeError of MindSpore's Parameter, naming no line)."""
        if not (self._funcs and isinstance(node.target, cst.Name)):
            return
        it = node.iter
        if not (isinstance(it, cst.Subscript) and isinstance(it.value, cst.Name) and len(it.slice) == 1
                and isinstance(it.slice[0].slice, cst.Index)
                and isinstance(it.slice[0].slice.value, cst.SimpleString)
                and it.slice[0].slice.value.evaluated_value == "params"):
            return
        group = it.value.value
        for outer in self._loop_nodes:
            if (isinstance(outer, cst.For) and isinstance(outer.target, cst.Name) and outer.target.value == group
                    and isinstance(outer.iter, cst.Attribute) and outer.iter.attr.value == "param_groups"):
                ctx = self._funcs[-1]
                ctx.others.discard(node.target.value)
                ctx.cells.discard(node.target.value)
                ctx.tensors.add(node.target.value)
                return

    def _track_module_loop_variable(self, node: cst.For) -> None:
        """`for flow in self.flows:` (or `self.flows[::-1]`) over an nn.ModuleList / nn.Sequential attribute: the
        loop variable is a module, so `flow.forward(x)` names its construct (nflib's NormalizingFlow)."""
        if not (self._funcs and self._classes and isinstance(node.target, cst.Name)):
            return
        it = node.iter
        if isinstance(it, cst.Subscript) and len(it.slice) == 1 and isinstance(it.slice[0].slice, cst.Slice):
            it = it.value
        if not (isinstance(it, cst.Attribute) and isinstance(it.value, cst.Name) and it.value.value == "self"):
            return
        if self._classes[-1].attr_types.get(it.attr.value) in _MODULE_SEQUENCES:
            ctx = self._funcs[-1]
            name = node.target.value
            ctx.tensors.discard(name)
            ctx.others.discard(name)
            ctx.cells.add(name)
            entry = self._classes[-1].attr_types.get(f"{it.attr.value}[*]")
            if entry is not None:     # every entry of one layer class (PC.sequence_entry_types): `emb.weight`
                ctx.layers[name] = entry
            # a module, but any module of the list: what calling it returns is not known to be a tensor (a block
            # may return a tuple of records)
            ctx.__dict__.setdefault("any_module_calls", set()).add(name)

    def leave_For(self, original, updated):
        params = PC.iterated(self, original.iter, updated.iter)   # `for p in self.plist` (ParameterList)
        if params is not None:
            updated = updated.with_changes(iter=params)
        updated = self._parameter_value_changes(updated)
        rows = self._cell_rows.pop(id(original), None)
        if rows:    # rows of a tensor changed in place in Cell code: written back (cell_rows.py)
            updated = CR.write_back(updated, original, rows, set(self._scopes[-1]["bound"]), COMPAT)
            self.uses_compat = True
        updated = self._rows_written_back(updated)
        if "rows_in_place" not in code_of(updated.iter):
            updated = self._data_dependent_loop(original, updated)
        return self._leave_loop(original, updated)

    def leave_Del(self, original: cst.Del, updated: cst.Del):
        """`del mask` of local names in Cell code: `mask = None`. MindSpore's GRAPH parser refuses the statement
        ("Unsupported statement 'Delete'", naming no line; lucidrains' LocalAttention frees its masks so); the name
        no longer holds the value, and only a path on which Python raises UnboundLocalError now reads None (as for
        graph_branch_names.py).
        `del self.cache` there (vit-pytorch's Extractor.clear, which forward calls) is `self.cache = None` the same
        way; its target is a store, never guarded as a read of state (graph_state.py)."""
        target = original.target
        if (isinstance(target, cst.Subscript) and isinstance(target.value, cst.Attribute)
                and target.value.attr.value == "_parameters" and len(target.slice) == 1
                and isinstance(target.slice[0].slice, cst.Index) and isinstance(updated.target, cst.Subscript)
                and isinstance(updated.target.value, cst.Attribute) and not self._in_cell_code()):
            # `del self.module._parameters[name_w]` (awd-lstm-lm's WeightDrop): refused on MindSpore's own layers
            # (compat_parts/layer_settings.py del_parameter)
            owner = code_of(updated.target.value.value).strip()
            key = code_of(updated.target.slice[0].slice.value).strip()
            where = f"{self.module_name}:{self._line(original)}"
            self._record(original, "del Module._parameters[name]", "_ms_compat.del_parameter", R.CONVERTED,
                         "as written on a Cell of the program; MigrationError on one of MindSpore's layers, which "
                         "computes with the parameter objects it built")
            self.uses_compat = True
            return cst.Expr(cst.parse_expression(f"_ms_compat.del_parameter({owner}, {key}, {where!r})"))
        names = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
        if not self._in_cell_code() or not names or \
                not all(isinstance(n, cst.Name) or _self_attr(n) is not None for n in names):
            return updated
        return cst.Assign(targets=[cst.AssignTarget(n.deep_clone()) for n in names], value=cst.Name("None"))

    def _data_dependent_loop(self, original: cst.For, updated: cst.For) -> cst.For:
        """`for e in torch.unique(idx)` in Cell code: the iterable through `_ms_compat.loop_rows` with its line, which
        refuses a compiled loop over a tensor whose length the data decides (compat_parts/data_dependent_loops.py)."""
        it = original.iter
        if not (self._in_cell_code() and self._is_tensor_expr(it)):
            return updated
        if isinstance(it, cst.Call) and isinstance(it.func, (cst.Name, cst.Attribute)) and \
                (it.func.value if isinstance(it.func, cst.Name) else it.func.attr.value) in _TUPLE_RESULTS:
            return updated    # `for part in x.split(1, dim=1)`: a tuple of as many parts as the arguments say
        self.uses_compat = True
        where = cst.Arg(cst.SimpleString(repr(f"{self.module_name}:{self._line(original)}")))
        return updated.with_changes(iter=cst.Call(func=cst.parse_expression(f"{COMPAT}.loop_rows"),
                                                  args=[cst.Arg(updated.iter), where]))

    def _rows_written_back(self, updated: cst.For) -> cst.For:
        """`for t, m, s in zip(x, mean, std): t.sub_(m)`, its in-place call now a `_ms_compat.write_into(t, ...)`
        (inplace_holders.py): where x is a tensor, torch's t is a view of x's row and MindSpore's a copy, so
        each iterable that may be a tensor (a name, an attribute, a subscript) is iterated through
        `_ms_compat.rows_in_place`, which writes each row back into it (it passes anything else through)."""
        targets = IH.target_names(updated.target)
        if not targets or not IH.writes_into(updated.body, targets, COMPAT):
            return updated

        def wrap(it: cst.BaseExpression) -> cst.BaseExpression:
            if not isinstance(it, (cst.Name, cst.Attribute, cst.Subscript)):
                return it
            self.uses_compat = True
            return cst.Call(func=cst.parse_expression(f"{COMPAT}.rows_in_place"), args=[cst.Arg(it)])

        it, target = updated.iter, updated.target
        if isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value in ("zip", "enumerate"):
            # which target each argument feeds: `for t, m in zip(x, mean)`, `for i, t in enumerate(x)`
            parts = [el.value for el in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else []
            if it.func.value == "enumerate":
                parts = [parts[1]] if len(parts) == 2 else []
            fed = parts if len(parts) == len(it.args) or it.func.value == "enumerate" else []

            def written(i: int) -> bool:
                return not fed or i < len(fed) and IH.writes_into(updated.body, IH.target_names(fed[i]), COMPAT)

            args = [a.with_changes(value=wrap(a.value)) if a.keyword is None and not a.star
                    and (it.func.value == "zip" or i == 0) and written(i) else a for i, a in enumerate(it.args)]
            return updated.with_changes(iter=it.with_changes(args=args))
        return updated.with_changes(iter=wrap(it))

    def _parameter_value_changes(self, updated):
        """`for p in model.parameters(): p.data.clamp_(-c, c)` (weight clipping): an ops.assign of each new
        value (param_data_update.py); the placeholders' TODO sites become converted sites."""
        done = PDU.rewrite(updated, self.names["ms"])
        if done is None or set(done[1]) & self._row_todos:   # rows of a tensor (cell_rows.py) raise as they are
            return updated
        updated, resolved = done
        self._assigned_sites(set(resolved), "the parameter's new value assigned to it (in-place methods may change "
                             "nothing)", "tests/test_train_loop.py::test_weight_clipping_after_the_step")
        return updated

    def _parameter_value_change(self, st):
        """One statement `module.weight.data.mul_(s)`: an ops.assign of the new value
        (param_data_update.rewrite_statement); its TODO site becomes a converted site."""
        done = PDU.rewrite_statement(st, self.names["ms"]) if isinstance(st, cst.SimpleStatementLine) else None
        if done is None:
            return st
        st, resolved = done
        if re.search(r"\.grad\b", code_of(st)):     # `p.grad.data.clamp_(-c, c)`: the gradient changed in place
            st = GR.note_gradient_writes(self, st, resolved[1])
        self._assigned_sites({resolved}, "the tensor's new value assigned to it (in-place methods may change nothing)",
                             "tests/parity/test_library_idioms_timm.py::test_library_idioms")
        return st

    def _assigned_sites(self, resolved, note, test):
        """The TODO sites of the placeholders `resolved` ((api, line)) became `ms.ops.assign` statements."""
        for s in self.sites:
            if s.status == R.TODO and (s.api, s.line) in resolved:
                s.status, s.target, s.note, s.test = R.CONVERTED, "mindspore.ops.assign", note, test
                self._todo_count -= 1
        self.need.add("ms")

    def leave_CompFor(self, original, updated):
        params = PC.iterated(self, original.iter, updated.iter)
        return updated if params is None else updated.with_changes(iter=params)

    def visit_While(self, node) -> None:
        self._push_comments(node)
        self._scopes[-1]["loops"].append((id(node), TL.assigns(node)))
        self._loop_nodes.append(node)

    def leave_While(self, original, updated):
        updated = updated.with_changes(test=self._graph_safe_test(original.test, updated.test))
        return self._leave_loop(original, updated)

    def _leave_loop(self, original, updated):
        """A loop whose body holds a torch training step gets a MindSpore train step
        (msmigrate/train_loop.py); its definitions go before the outermost enclosing loop
        that does not rebind what they use, so the step compiles once."""
        if id(original) in self._taped_outer:      # the step after a loop of taped backward()s
            updated = TS.taped_step_in(updated, self._taped_outer.pop(id(original)))
        scope = self._scopes[-1]
        loops = scope["loops"]
        loops.pop()
        self._loop_nodes.pop()
        before = self._hoist.pop(id(original), [])
        rw = None
        if not self._in_module_forward():   # a backward() inside construct is no training loop
            updated = self._loop_higher_order_grads(updated, original)
            updated = self._outer_accumulation_step(original, updated)
            updated = self._step_choice(original, updated, loops, TL.update_choice(updated, self._loop_info())
                                        or SC.update_branches(updated)
                                        or SC.guarded_update(updated, self._guarded_ifs))
            updated = self._branch_steps(updated, set().union(TL.assigns(original), *(b for _, b in loops)), loops)
            outer = TL.outer_accumulation(self._loop_nodes[-1], original, self._loop_info()) if loops else None
            # PGD's attack loop: the enclosing body clears the parameters' gradients it adds before stepping
            attack = TL.attack_enclosure(self._loop_nodes[-1], original, self._loop_info()) if loops else None
            enclosing = self._loop_nodes[-1] if loops else scope["node"]
            # losses no step here holds, the step in the enclosing function or loop: taped (taped_steps.py)
            taped_for = None if outer is not None else TL.taped_outer_step(enclosing, original, self._loop_info())
            # `loss = model(next(loader))`: the batch read in a statement of its own (hoist_data_arguments)
            updated = TL.with_data_arguments_hoisted(updated, self._loop_info())
            # the loop as written: its zero_grad() calls are gone from `updated` (no MindSpore counterpart)
            # taping (taped_steps.py) is the last resort: a step per branch of a fixed test first
            rw = TL.rewrite_loop(updated, self._loop_info(), outer_step=outer, original=original, attack_marks=attack,
                                 leftover=self._leftover_grads.get(id(original)),
                                 held_for=self._held_loops.get(id(original)), taped_for=taped_for, tape=False)
            if rw is not None and rw.taped and taped_for is not None and not rw.problems:
                self._taped_outer[id(enclosing)] = taped_for
            if rw is not None and rw.problems and not rw.steps and id(original) not in self._leftover_grads:
                chosen = self._step_choice(original, updated, loops, SC.network_choice(updated))
                if chosen is not updated:
                    updated = chosen
                    rw = TL.rewrite_loop(updated, self._loop_info(), outer_step=outer, original=original, attack_marks=attack)
                else:
                    rw = TL.rewrite_loop(updated, self._loop_info(), outer_step=outer, original=original, attack_marks=attack,
                                         leftover=self._leftover_grads.get(id(original)),
                                         held_for=self._held_loops.get(id(original)))
            elif rw is not None and rw.problems and id(original) not in self._leftover_grads:
                rw = TL.rewrite_loop(updated, self._loop_info(), outer_step=outer, original=original, attack_marks=attack,
                                     leftover=self._leftover_grads.get(id(original)),
                                     held_for=self._held_loops.get(id(original)))
            if rw is not None and rw.accumulator is not None:
                self._outer_steps[id(self._loop_nodes[-1])] = (outer, rw.accumulator)
        if rw is not None:
            updated = self._apply_rewrite(updated, rw)
            if rw.steps:
                # every name the step's definitions bind (`grad_fn = ...` too): a later step in this scope (a GAN's
                # generator step after its critic loop) must not rebind a name the earlier step's closure reads
                scope["bound"] |= {d.name.value if isinstance(d, cst.FunctionDef) else n for d in rw.defs
                                   for n in ([None] if isinstance(d, cst.FunctionDef) else TL.assigns(d))}
                # hoist past enclosing loops that leave the closures alone
                target = None
                for loop_id, bound in reversed(loops):
                    if bound & rw.closures:
                        break
                    target = loop_id
                if target is not None:
                    self._hoist.setdefault(target, []).extend(rw.defs)
                else:
                    before = before + rw.defs
        updated = self._pop_comments(updated)
        if before:
            return cst.FlattenSentinel(list(before) + [updated])
        return updated

    def _step_choice(self, original, updated, loops, split):
        """A loop whose train step an `if` chooses, split into one `if` holding the step in each branch
        (train_loop.update_choice: the update; step_choice.network_choice: the forward computation): each
        branch rewritten as a loop body, or split again on another such `if` inside it. The loop as it was
        (its backward() a TODO) unless every branch gets a sound step."""
        if split is None:
            return updated
        per_iteration = set().union(TL.assigns(original), *(bound for _, bound in loops))
        plan = self._choice_plan(split, per_iteration, depth=0)
        return updated if plan is None else self._apply_choice(plan)

    def _choice_plan(self, split, per_iteration, depth):
        """(split, [(branch, its Rewrite or the plan of its own split)]), None where a branch gets no sound
        step. Nothing is reported before every branch has one (the rewrites are applied by _apply_choice)."""
        choice = split.body.body[0]
        plans = []
        for branch in (choice, choice.orelse):
            if ".backward(" not in code_of(branch.body):
                plans.append((branch, None))   # guarded_update's other branch: no update, as written
                continue
            rw = TL.rewrite_loop(branch, self._loop_info(), extra_per_iteration=per_iteration, inline_defs=True)
            if rw is not None and rw.steps and not rw.problems:
                plans.append((branch, rw))
                continue
            inner = None
            if depth < 3:       # word_language_model: the update chosen by one flag, the network call by another
                inner = (TL.update_choice(branch, self._loop_info()) or SC.update_branches(branch)
                         or SC.network_choice(branch))
            sub = None if inner is None else self._choice_plan(inner, per_iteration, depth + 1)
            if sub is None:
                return None
            plans.append((branch, sub))
        return split, plans

    def _apply_choice(self, plan):
        split, plans = plan
        done = [branch if sub is None else self._apply_rewrite(branch, sub) if isinstance(sub, TL.Rewrite)
                else self._apply_choice(sub) for branch, sub in plans]
        choice = done[0].with_changes(orelse=done[1])
        return split.with_changes(body=split.body.with_changes(body=[choice] + list(split.body.body[1:])))

    def _outer_accumulation_step(self, original, updated):
        """The loop around a loop of micro steps (train_loop.outer_accumulation): its step applies the
        gradients the inner loop summed."""
        pending = self._outer_steps.pop(id(original), None)
        if pending is None:
            return updated
        step, acc = pending
        updated, steps = TL.apply_outer_step(updated, step, acc, self._loop_info())
        for st in steps:
            self._site_at(st, "Optimizer.step", f"{step.optimizer}({acc})", R.CONVERTED,
                          "the gradients summed over the inner loop's micro steps, applied once")
        return updated

    def _higher_order_grads(self, updated: cst.FunctionDef) -> cst.FunctionDef:
        """torch.autograd.grad placeholders in the body that higher_order_grad.py can write as
        the gradient of a function (a gradient penalty): converted, their TODO sites dropped."""
        if not isinstance(updated.body, cst.IndentedBlock):
            return updated
        # a function's locals: nothing around its body reads them
        body = self._higher_order_grads_in(list(updated.body.body), frozenset())
        return updated if body is None else updated.with_changes(body=updated.body.with_changes(body=body))

    def _higher_order_grads_in(self, stmts, outside=None):
        """The statements with HOG's rewrites (None when nothing changed); their TODO sites resolved. outside: the
        names the code around them reads (None: not known)."""
        body, done = HOG.rewrite_block(stmts, self.names["ms"], getattr(self, "_lazy_calls", None),
                                       getattr(self, "_random_functions", frozenset()), outside)
        if not done:
            return None
        lines = {int(w.rsplit(":", 1)[1]) for w in done if ":" in w and w.rsplit(":", 1)[1].isdigit()}
        # api -> (target, note, test) of the sites the rewrite resolved
        resolved = {
            HOG.API: ("mindspore.ops.GradOperation",
                      "the gradient of a function of the inputs (the statements from inputs to outputs); "
                      "differentiable again inside a train step",
                      "tests/test_train_loop.py::test_gradient_penalty_matches_torch"),
            HOG.VARIABLE: ("identity",
                           "requires_grad=True: the tensor itself; torch.autograd.grad with respect to it became "
                           "the gradient of a function of it (mindspore.ops.GradOperation)",
                           "tests/test_train_loop.py::test_gradient_penalty_in_the_loop_matches_torch")}
        for s in self.sites:
            if s.status == R.TODO and s.api in resolved and s.line in lines:
                s.status = R.DIFFERENCE
                s.target, s.note, s.test = resolved[s.api]
                self._todo_count -= 1
        self.need.add("ms")
        return body

    def _loop_higher_order_grads(self, updated, original=None):
        """A gradient penalty written in the loop (or `if`) body itself: converted there, before the
        train-step rewrite takes the statements into its forward function."""
        if not isinstance(updated.body, cst.IndentedBlock):
            return updated
        body = self._higher_order_grads_in(list(updated.body.body), self._reads_around(original))
        return updated if body is None else updated.with_changes(body=updated.body.with_changes(body=body))

    def _reads_around(self, original):
        """The names the enclosing function (or module) reads outside `original` (a loop or `if`, as written), and
        that an `else` of it reads (the body alone is rewritten); None when not known."""
        if original is None or not self._scopes:
            return None
        around: Dict[str, int] = {}
        for n in TL.reads(self._scopes[-1]["node"]):
            around[n] = around.get(n, 0) + 1
        for n in TL.reads(original.body):
            around[n] = around.get(n, 0) - 1
        return frozenset(n for n, c in around.items() if c > 0)

    def _train_step_function(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        """backward()/step() at the top level of a function body (a per-batch step function), or a closure
        passed to optimizer.step(closure) (step_closure.py)."""
        closure = self._stepped_closures.get(id(original))
        if closure is not None:
            rw = SCL.rewrite(original, updated, closure, self._loop_info())
            if rw is not None:
                return self._apply_rewrite(updated, rw)
        updated = self._function_update_ifs(updated)
        summing_fns = getattr(self, "_summing_functions", {})
        summing = id(original) in summing_fns     # clears no gradients (grad_carry.py)
        rw = TL.rewrite_function(updated, self._loop_info(), summing=summing,
                                 leftover=summing_fns.get(id(original)), original=original)
        if rw is None and isinstance(updated.body, cst.IndentedBlock) \
                and any(SC.branch_updates(st) for st in updated.body.body):
            return self._function_update_branches(updated)
        return updated if rw is None else self._apply_rewrite(updated, rw)

    def _function_update_ifs(self, updated: cst.FunctionDef) -> cst.FunctionDef:
        """An update under an `if` (its else, if any, updating nothing) at the top of a function body that is no loop's (TD3's delayed actor
        update `if self.total_it % self.policy_freq == 0: actor_loss = ...; actor_loss.backward();
        self.actor_optimizer.step()`, after the critic's step at the function's top): a train step of its own,
        defined in the `if`, as an `if` in a loop body gets (_step_under_if); a branch reading a network value
        computed before it keeps its raising TODO. Left alone, its backward() was no site at all."""
        if self._scopes[-1]["loops"] or self._in_forward() or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        body = list(updated.body.body)
        changed = False
        for k, st in enumerate(body):
            if not (isinstance(st, cst.If) and isinstance(st.body, cst.IndentedBlock)
                    and (st.orelse is None or (isinstance(st.orelse, cst.Else)
                                               and not SC._has_backward(getattr(st.orelse.body, "body", ()))))
                    and SC._has_backward(st.body.body)
                    and any(TL._method(TL._stmt_call(x), "step") is not None for x in st.body.body)):
                continue
            # the function's parameters and the names its statements bind before the `if` are the step's inputs
            # (closed over, a compiled step would keep the values of its first call)
            bound = {x.name.value for x in (*updated.params.params, *updated.params.kwonly_params,
                                            *updated.params.posonly_params)}
            for x in body[:k]:
                bound |= TL.assigns(x)
            if TL.step_reading_outer_network_values(st, body[:k], self._loop_info()) is not None:
                # pytorch-GAT's main_loop: `loss = crit(gat(data)...)` then `if phase == TRAIN: <update>`, the
                # function called for each phase: split on the test as a loop body is (step_choice.guarded_update);
                # a docstring and `global` declarations (main_loop's `global BEST_VAL_PERF, ...`) stay above it
                head = 0
                while head < k and SC.declaration(body[head]):
                    head += 1
                split = SC.guarded_update(updated.with_changes(body=updated.body.with_changes(body=body[head:])),
                                          {id(st)})
                plan = None if split is None else self._choice_plan(split, bound - {"self"}, 0)
                if plan is not None:
                    done = self._apply_choice(plan)
                    return done.with_changes(body=done.body.with_changes(body=body[:head] + list(done.body.body)))
            new = self._branch_step(st, body[:k], bound - {"self"})
            if new is not st:
                body[k] = new
                changed = True
        return updated.with_changes(body=updated.body.with_changes(body=body)) if changed else updated

    def _function_update_branches(self, updated: cst.FunctionDef) -> cst.FunctionDef:
        """DINO's update `if` in a per-batch function (no loop around it): split as in a loop
        (step_choice.update_branches), or each branch given its step (a raising TODO where it reads the loss
        computed before the `if`)."""
        per_call = TL.data_params(updated)
        split = SC.update_branches(updated)
        plan = None if split is None else self._choice_plan(split, per_call, depth=0)
        if plan is not None:
            return self._apply_choice(plan)
        for st in updated.body.body:
            if SC.branch_updates(st):
                self._deferred_ifs.add(id(st))
        return self._branch_steps(updated, per_call, [])

    def _parameter_names(self, scope_node: cst.CSTNode) -> Set[str]:
        """Names the scope itself binds to a parameter made by hand, `w = nn.Parameter(torch.zeros(3))` (not in
        nested functions or classes): a loss computed from them reaches trained parameters with no network call."""
        names: Set[str] = set()
        owner = self

        class _Assigns(cst.CSTVisitor):
            def visit_FunctionDef(self, node) -> bool:
                return False

            def visit_ClassDef(self, node) -> bool:
                return False

            def visit_Assign(self, node: cst.Assign) -> None:
                if (len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name)
                        and isinstance(node.value, cst.Call)
                        and owner._qname_any(node.value.func) in ("torch.nn.Parameter", "torch.nn.parameter.Parameter")):
                    names.add(node.targets[0].target.value)

        body = scope_node.body if isinstance(scope_node, (cst.Module, cst.IndentedBlock)) else []
        for st in body:
            st.visit(_Assigns())
        # `self.log_alpha = nn.Parameter(...)` in a method of the class (SAC's temperature, made a Parameter by
        # trained_tensors.py): a loss reading `self.log_alpha` reaches it
        if self._classes and self._funcs:
            names |= self._self_parameters.get(self._classes[-1].name, set())
        return names

    def _hand_made_self_parameters(self, module: cst.Module) -> Dict[str, Set[str]]:
        """class name -> `self.<attr>` its methods bind to nn.Parameter(...) (at any depth of their bodies)."""
        owner = self
        found: Dict[str, Set[str]] = {}
        for cls in module.body:
            if not isinstance(cls, cst.ClassDef):
                continue
            attrs: Set[str] = set()

            class _V(cst.CSTVisitor):
                def visit_Assign(self, node: cst.Assign) -> None:
                    t = node.targets[0].target if len(node.targets) == 1 else None
                    if (isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == "self"
                            and isinstance(node.value, cst.Call) and owner._qname_any(node.value.func)
                            in ("torch.nn.Parameter", "torch.nn.parameter.Parameter")):
                        attrs.add("self." + t.attr.value)
            cls.visit(_V())
            if attrs:
                found[cls.name.value] = attrs
        return found

    def _loop_info(self) -> TL.LoopInfo:
        scope = self._scopes[-1]
        return TL.LoopInfo(ms=self.names["ms"], module=self.module_name, optimizers=self.optimizers,
                           read_counts=scope["reads"],
                           loop_reads=scope["loop_reads"], parameter_names=self._parameter_names(scope["node"]),
                           taken=scope["bound"],
                           host_functions=self._host_functions | self.index.host_sampling_calls()
                           | self._network_like,
                           drawing_functions=self._drawing_functions, drawing_objects=self._drawing_objects,
                           closure_only=self.closure_only_optimizers, optimizer_wrappers=self.optimizer_wrappers,
                           wrapper_step_methods=self.index.wrapper_step_methods(), keep_grads=self.index.reads_grads(),
                           forward_stores=self.index.forward_stored_attributes(),
                           grad_writers=self._grad_writers,
                           clearing_functions=self._clearing_functions,
                           backward_methods=self._backward_methods,
                           optimizer_grad_methods=self.index.optimizer_grad_methods(),
                           lazy_calls=getattr(self, "_lazy_calls", {}),
                           record_fields=self.index.graph_record_fields(),
                           module_names={"_ms_compat", "ops", "nn", "np", *self._imports},
                           data_methods=self.index.data_methods(self.module_name, self._classes[-1].name)
                           if self._classes else set(),
                           distributed=any(q.startswith(_DISTRIBUTED) for q in self._imports.values())
                           or any(site.api.startswith(_DISTRIBUTED) for site in self.sites))

    def _apply_rewrite(self, updated, rw: TL.Rewrite):
        """Report a train-step rewrite's sites, turn its leftover backward()s into TODOs, and
        note what the file now needs (mindspore, _ms_compat, the run header)."""
        body = list(updated.body.body)
        for idx, api, target, note in rw.sites:
            self._site_at(body[idx], api, target, R.DIFFERENCE if api == "Tensor.backward" else R.CONVERTED, note)
        result = rw.loop
        if rw.resolved:     # placeholders (p.data.add_) a hand-written update in the step now does
            kept = [s for s in self.sites if not (s.status == R.TODO and (s.api, s.line) in set(rw.resolved))]
            self._todo_count -= len(self.sites) - len(kept)
            self.sites = kept
        if rw.problems:
            result = self._todo_statements(result, body, rw.problems)
        if rw.steps:
            self.train_steps += 1
            self.need.add("ms")
            self.uses_compat = True
        if rw.kept_grads:       # the module's `.grad` reads read what a step kept (grad_reads.py)
            self._keeps_grads = True
        if rw.taped:            # the run header starts PyNative's record (taped_steps.py)
            self._taped = True
        return result

    def _site_at(self, stmt, api: str, target: str, status: str, note: str) -> None:
        line = self._out_lines.get(id(stmt), self._stmt_line[-1] if self._stmt_line else 0)
        self.touched = True
        m = R.lookup(api)
        self.sites.append(Site(line, api, target, status, note, shorten(code_of(stmt).strip()),
                               m.test if m is not None else ""))

    @staticmethod
    def _recorded_backward(stmt) -> bool:
        """`y.backward(...)` alone on its line, whose arguments Tensor.backward takes (autograd_backward's call)."""
        return (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
                and isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, cst.Call)
                and isinstance(stmt.body[0].value.func, cst.Attribute)
                and stmt.body[0].value.func.attr.value == "backward"
                and not any(a.star for a in stmt.body[0].value.args))

    def _reads_recorded_gradients(self, body) -> bool:
        """The backward()'s gradients are what the module reads itself, elsewhere (Module hooks it registers, an
        input's `.grad` another method reads), and nothing in the module steps an optimizer or reads `.grad` in
        the backward()'s own scope (those stay TODOs: a step elsewhere, a parameter's gradient)."""
        scope = "".join(code_of(st) for st in body)
        info = self.index.modules.get(self.module_name)
        # `.grad` read in the scope only of names the module marks as inputs needing a gradient (an attack's
        # `delta.requires_grad = True`): no Parameter's (tensor_grad refuses a Parameter's all the same)
        readers = re.findall(r"([\w.\])]+)\.grad\b", scope)
        inputs_only = bool(readers) and all(r in self._marked_leaves for r in readers)
        return not ((".grad" in scope and not inputs_only) or "step(" in scope or info is None or info.calls_step
                    or not (info.registers_hooks or info.reads_grad))

    def _recorded_call(self, stmt, line: int, helper: str, note: str, original: str, test: str):
        """`y.backward(...)` as `_ms_compat.<helper>('module:line', y, ...)`, run on PyNative's recorded graph."""
        where = f"{self.module_name}:{line}"
        self.sites.append(Site(line, "Tensor.backward", f"{COMPAT}.{helper}", R.DIFFERENCE, note, original, test))
        self.uses_compat = self._records_autograd = True
        call = stmt.body[0].value
        return stmt.with_changes(body=[cst.Expr(call.with_changes(
            func=cst.parse_expression(f"{COMPAT}.{helper}"),
            args=[cst.Arg(cst.SimpleString(repr(where))), cst.Arg(call.func.value), *call.args]))])

    def _todo_statements(self, loop, body, problems):
        """backward() calls the rewrite could not place: a TODO that raises when reached."""
        new_body = list(loop.body.body)
        for idx, why in problems:
            stmt = body[idx]
            try:
                pos = new_body.index(stmt)
            except ValueError:
                continue
            line = self._out_lines.get(id(stmt), 0)
            original = shorten(code_of(stmt).strip(), 150)
            if self._recorded_backward(stmt) and line in self.index.argument_backward_lines(self.module_name):
                # a backward() of a loss the function was handed (a loss scaler's __call__): into the .grad
                new_body[pos] = self._recorded_call(stmt, line, "backward_to_grads", AB.NOTE, original, AB.TEST)
                continue
            if why == TL.NO_STEP_WHY and self._recorded_backward(stmt) and self._reads_recorded_gradients(body):
                # no step after it in its function: the program reads .grad or backward hooks (recorded_backward)
                new_body[pos] = self._recorded_call(stmt, line, "autograd_backward", RECORDED_NOTE, original, "")
                continue
            self.sites.append(Site(line, "Tensor.backward", "", R.TODO, why, original, ""))
            self._todo_count += 1
            self.uses_compat = True
            where = f"{self.module_name}:{line}"
            new_body[pos] = cst.parse_statement(
                f"{COMPAT}.Unconverted('Tensor.backward', {where!r}, {why!r})()\n").with_changes(
                leading_lines=list(stmt.leading_lines) + [cst.EmptyLine(comment=cst.Comment(
                    f"# msmigrate: TODO Tensor.backward: {why}. Original: {original}"))])
        return loop.with_changes(body=loop.body.with_changes(body=new_body))

    def visit_IfExp(self, node):
        UM.mark_dispatched(self, node)

    def leave_IfExp(self, original, updated):
        updated = updated.with_changes(test=self._graph_safe_test(original.test, updated.test))
        if id(original) in self._graph_guarded_pops:    # `mems.pop(0) if mems else None`: graph_pops.py
            call, scope = self._graph_guarded_pops[id(original)], self._scopes[-1]
            popping, popped, lines = GP.guarded_rebindings(
                call.func.value.value, set(scope["reads"]) | scope["bound"] | scope["shadows"],
                GP.pop_index(call), cst.Module([]).code_for_node(updated.test))
            self._hoisted_inplace.extend((name, cst.parse_expression(code)) for name, code in lines)
            updated = updated.with_changes(test=cst.Name(popping), body=cst.Name(popped))
        return updated

    def leave_Assert(self, original, updated):
        return updated.with_changes(test=self._graph_safe_test(original.test, updated.test))

    def leave_Raise(self, original: cst.Raise, updated: cst.Raise):
        """`raise NotImplemented('...')` (NotImplemented, not NotImplementedError: RepDistiller's pretrain.py): in
        Python 3 calling NotImplemented raises TypeError there. Written as that TypeError: a train step holding it
        in a branch it never takes compiles in GRAPH mode (MindSpore parses the branch: "Unsupported exception
        type")."""
        exc = updated.exc
        if not (isinstance(exc, cst.Call) and isinstance(exc.func, cst.Name) and exc.func.value == "NotImplemented"
                and "NotImplemented" not in self._imports and not self._shadowed("NotImplemented")):
            return updated
        return updated.with_changes(exc=cst.parse_expression('TypeError("\'NotImplementedType\' object is not '
                                                             'callable")'), cause=None)

    def _graph_safe_test(self, original, updated):
        """Inside construct, a condition mixing a tensor and a Python value with and/or
        (`while y.abs().max() < 10 and i < 5:`) does not compile in GRAPH mode (MindSpore
        2.10: the two branches of `and` have different types). A condition only needs the
        truth of each operand, so the tensor operands become bool(...): exact in PyNative,
        compiles in GRAPH mode."""
        if not self._in_forward():
            return updated
        leaves: List[cst.BaseExpression] = []
        has_boolop = self._bool_leaves(original, leaves)
        kinds = [self._tensorish(leaf) for leaf in leaves]
        if not has_boolop or not any(kinds) or all(kinds):
            return updated
        return self._wrap_bool(original, updated)

    def _bool_leaves(self, node, out) -> bool:
        if isinstance(node, cst.BooleanOperation):
            self._bool_leaves(node.left, out)
            self._bool_leaves(node.right, out)
            return True
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            return self._bool_leaves(node.expression, out)
        out.append(node)
        return False

    def _wrap_bool(self, original, updated):
        if isinstance(original, cst.BooleanOperation) and isinstance(updated, cst.BooleanOperation):
            return updated.with_changes(left=self._wrap_bool(original.left, updated.left),
                                        right=self._wrap_bool(original.right, updated.right))
        if (isinstance(original, cst.UnaryOperation) and isinstance(original.operator, cst.Not)
                and isinstance(updated, cst.UnaryOperation)):
            return updated.with_changes(expression=self._wrap_bool(original.expression, updated.expression))
        if isinstance(original, (cst.BooleanOperation, cst.UnaryOperation)) or not self._tensorish(original):
            return updated
        inner = updated.with_changes(lpar=[], rpar=[]) if hasattr(updated, "lpar") else updated
        return cst.Call(func=cst.Name("bool"), args=[cst.Arg(value=inner)])

    def _tensorish(self, node) -> bool:
        """A tensor, or a comparison/method result computed from one (original code)."""
        if isinstance(node, cst.Comparison):
            return self._tensorish(node.left) or any(self._tensorish(c.comparator) for c in node.comparisons)
        if (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                and self._torch_qname(node.func) is None):
            if node.func.attr.value in NON_TENSOR_METHOD_RESULTS:
                return False
            return self._tensorish(node.func.value) or self._is_tensor_expr(node)
        if isinstance(node, cst.BinaryOperation):
            return self._tensorish(node.left) or self._tensorish(node.right)
        if isinstance(node, cst.UnaryOperation) and not isinstance(node.operator, cst.Not):
            return self._tensorish(node.expression)
        return self._is_tensor_expr(node)

    def visit_Try(self, node) -> None:
        self._push_comments(node)

    def leave_Try(self, original, updated):
        return self._pop_comments(updated)

    def visit_ExceptHandler(self, node) -> None:
        # the handler's type is evaluated only when an exception reaches it: an unconverted
        # type raises MigrationError there (chained to that exception), and nothing happens otherwise
        self._push_comments(node)

    def leave_ExceptHandler(self, original, updated):
        checked = PH.checked_handler(updated, self._placeholder_names)
        if checked is not updated:
            self.uses_compat = True
        return self._pop_comments(checked)

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite, cst.BaseCompoundStatement)):
            self._stmt_kinds.append(PH.statement_kind(node, not self._funcs and not self._classes))
        elif isinstance(node, cst.Else):
            self._stmt_kinds.append(PH.NOT_MAIN if self._stmt_kinds[-1:] == [PH.MAIN] else PH.RUN)
        return super().on_visit(node)

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode):
        result = super().on_leave(original, updated)
        if isinstance(original, (cst.SimpleStatementLine, cst.SimpleStatementSuite, cst.BaseCompoundStatement,
                                 cst.Else)):
            self._stmt_kinds.pop()
        return result

    def _grad_mode_of(self, calls) -> Optional[bool]:
        """The grad mode torch runs a `with` body or a decorated function in, from its context managers
        (no_grad/inference_mode: False, enable_grad: True, set_grad_enabled(<literal>)); None: unchanged."""
        mode = None
        for call in calls:
            qn = self._torch_qname(call.func if isinstance(call, cst.Call) else call)
            if qn in NG.NO_GRAD_CONTEXTS:
                mode = False
            elif qn in ("torch.enable_grad", "torch.autograd.enable_grad", "torch.autograd.grad_mode.enable_grad"):
                mode = True
            elif qn in ("torch.set_grad_enabled", "torch.autograd.grad_mode.set_grad_enabled") and isinstance(
                    call, cst.Call) and len(call.args) == 1 and code_of(call.args[0].value).strip() in ("True", "False"):
                mode = code_of(call.args[0].value).strip() == "True"
        return mode

    def lexical_grad_mode(self) -> Optional[bool]:
        """torch.is_grad_enabled() here, as far as the enclosing `with`s and decorators of this function tell
        (None: torch's default, or a caller's mode, at run time)."""
        for mode in reversed(getattr(self, "_grad_modes", [])):
            if mode is not None:
                return None if mode == "def" else mode
        return None

    def visit_With(self, node) -> None:
        self.__dict__.setdefault("_grad_modes", []).append(self._grad_mode_of([i.item for i in node.items]))
        self._push_comments(node)
        for item in node.items:
            call = item.item
            qn = self._torch_qname(call.func) if isinstance(call, cst.Call) else None
            if qn in DROPPED_CONTEXTS and item.asname is None:
                self._skip_calls.add(id(call))

    def leave_With(self, original: cst.With, updated: cst.With):
        self._grad_modes.pop()
        kept = []
        dropped_notes = []
        for orig_item, item in zip(original.items, updated.items):
            call = orig_item.item
            qn = self._torch_qname(call.func) if isinstance(call, cst.Call) else self._torch_qname(call)
            if qn in DROPPED_CONTEXTS and orig_item.asname is None:
                if self._keeps_no_grad(self._in_cell_code()) and qn in NG.NO_GRAD_CONTEXTS:
                    # PyNative's tape records what runs outside it (taped_steps.py)
                    self.need.add("ms")
                    self._record(orig_item, qn, "mindspore._no_grad", R.CONVERTED, TS.NO_GRAD_NOTE)
                    kept.append(item.with_changes(item=cst.parse_expression(f"{self.names['ms']}._no_grad()")))
                    continue
                dropped_notes.append((qn, DROPPED_CONTEXTS[qn], orig_item))
                continue
            kept.append(item)
        if not dropped_notes:
            updated = updated.with_changes(items=kept)      # (no_grad items kept as mindspore._no_grad())
            checks = GO.entered_objects_checked(self, original, updated)   # `with ctx:` in construct
            return cst.FlattenSentinel([*checks, self._pop_comments(updated)]) if checks \
                else self._pop_comments(updated)
        for qn, why, orig_item in dropped_notes:
            m = R.lookup(qn)
            self._record(orig_item, qn, "(removed)", m.status if m is not None else R.CONVERTED, why)
        if kept:
            kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return self._pop_comments(updated.with_changes(items=kept))
        comments = self._pop_comment_list()
        body = updated.body
        if isinstance(body, cst.IndentedBlock):
            stmts = list(body.body)
            if stmts and id(original) in getattr(self, "_training_withs", ()) and any(
                    qn in NG.NO_GRAD_CONTEXTS for qn, _, _ in dropped_notes):
                returned = NG.block_returns_without_gradient(stmts)   # msmigrate/no_grad_values.py
                if not all(a.deep_equals(b) for a, b in zip(returned, stmts)):
                    self.uses_compat = True
                    stmts = returned
                rebinds = [] if NG.ends_in_return(stmts) else NG.constant_rebinds(stmts)
                if rebinds:
                    self.uses_compat = True
                    stmts += rebinds
            if stmts:
                extra = [cst.EmptyLine(comment=cst.Comment(c)) for c in comments]
                stmts[0] = stmts[0].with_changes(
                    leading_lines=list(updated.leading_lines) + extra + list(stmts[0].leading_lines))
                return cst.FlattenSentinel(stmts)
        return updated

    def _is_param(self, node: cst.CSTNode) -> bool:
        """Whether the head name of `node` (`tensor` in `tensor.dtype`) is a parameter of the innermost
        function that binds it, so not the import of that name."""
        while isinstance(node, cst.Attribute):
            node = node.value
        return isinstance(node, cst.Name) and any(node.value in scope.get("params", ()) for scope in self._scopes)

    def _is_rebound(self, node: cst.CSTNode) -> bool:
        """Whether the head name of `node` is one an enclosing function binds to a value of its own, so its
        local there and not the import (msmigrate/import_rebinds.py)."""
        while isinstance(node, cst.Attribute):
            node = node.value
        return isinstance(node, cst.Name) and any(node.value in scope.get("rebound", ()) for scope in self._scopes)

    def _shadowed(self, name: str) -> bool:
        """An imported name that the enclosing functions or the module also bind as a parameter
        or by assignment: what it holds there is not known to be the import."""
        return any(name in scope.get("shadows", ()) for scope in self._scopes)

    def _push_scope(self, node) -> None:
        counts: Dict[str, int] = {}
        for n in TL.reads(node):
            counts[n] = counts.get(n, 0) + 1
        bound = TL.assigns(node)
        # names this scope binds other than by an import: where they equal an imported name
        # (`def batchify(data, bsz)` next to `import data`; `model = model.RNNModel(...)`)
        # the name may not be the import any more (see _shadowed)
        imported = {a.asname.name.value for imp in _Imports.collect(node) for a in imp.names
                    if a.asname is not None and isinstance(a.asname.name, cst.Name)}   # `import x as y`
        self._scopes.append({"node": node, "reads": counts, "loop_reads": TL.loop_bound_reads(node), "bound": bound,
                             "loops": [],
                             "shadows": bound - imported,
                             "held": IH.held_names(node),    # `for p in net.parameters(): p.mul_(2)`
                             "module_tensors": IH.module_tensor_names(node),   # `for k, v in m.state_dict().items()`
                             "numpy": NI.numpy_names(node, self._numpy_aliases()),   # `pos = np.random.choice(..)`
                             "sequences": PS.sequence_names(node),      # `returns = deque()`
                             "lists": PS.list_names(node)})     # `a_lst = []` filled with append

    def _innermost_holds(self, name: str, kind: str) -> bool:
        """Whether the innermost scope that binds `name` lists it under `kind` (python_sequences.py)."""
        for scope in reversed(self._scopes):
            if name in scope[kind]:
                return True
            if name in scope["bound"]:
                return False
        return False

    def python_sequence(self, name: str) -> bool:
        """`name` holds a deque or a range here, by the innermost scope that binds it."""
        return self._innermost_holds(name, "sequences")

    def python_list(self, name: str) -> bool:
        """`name` may hold a list filled here (`a_lst = []`), by the innermost scope that binds it."""
        return self._innermost_holds(name, "lists")

    def _numpy_aliases(self) -> Set[str]:
        return {a for a, q in self._imports.items() if q == "numpy" or q.startswith("numpy.")}

    def _numpy_values(self) -> Set[str]:
        """The names holding a NumPy value here: each by the innermost scope that binds it."""
        seen: Set[str] = set()
        numpy: Set[str] = set()
        for scope in reversed(self._scopes):
            numpy |= scope["numpy"] - seen
            seen |= scope["bound"] | scope["numpy"]
        if self._classes and self._funcs:
            numpy |= self._classes[-1].numpy_attributes     # `self.perm`, in a method of the class
        return numpy

    def visit_Module(self, node: cst.Module) -> None:
        self._push_scope(node)
        # names the module marks as leaves needing a gradient (`x.requires_grad = True`, `x.requires_grad_()`: the
        # converted marks make them leaves of PyNative's recorded graph): inputs, not Parameters
        # (_reads_recorded_gradients)
        self._marked_leaves = RLV.marked_names(node.code)
        self._leaf_factories = RLV.factory_names(node.code)    # `d = zeros_like(x, requires_grad=True)`, d.grad read
        self._sparse_file = SPP.builds_sparse(node, self.index)   # sparse matrices built or multiplied (sparse_products.py)
        self._none_tests = GRD.none_tests(node)      # `def exists(v): return v is not None` (graph_records.py)
        self._training_withs = NG.training_withs(node)
        self._stepped_closures = SCL.stepped_closures(node)   # `def closure(): ...; opt.step(closure)`
        self._random_functions = HOG.drawing_functions(node)   # what a gradient's function may not run again
        # micro-batch loops whose gradients another method's step() applies (held_steps.py)
        self._held_loops, held_clears = HS.held_gradient_loops(node)
        self._recompute_fns = CKF.recompute_functions(node)     # checkpointing Functions (checkpoint_functions.py)
        self._grad_writers = TL.grad_writers(node)   # functions handed the network before a step (_gradient_changers)
        # loops whose first step reads another step's .grad; the zero_grad() calls that empty a loop's held sum
        self._module_clears: Dict[int, str] = {}     # kept `model.zero_grad()`: id -> the module's code
        self._owner_checks: Dict[int, Tuple[str, str]] = {}   # `model.zero_grad()` beside a fresh step
        self._leftover_grads, self._kept_clears = GC.leftover_gradients(node, self.stmt_lines, self._held_loops,
                                                                        self._module_clears, self._owner_checks)
        self._kept_clears = set(self._kept_clears) | held_clears | TL.grad_method_clears(
            node, self.index.optimizer_grad_methods())   # SAM's opt.zero_grad(): p.grad its methods read
        # step functions clearing no gradients: they apply the sum since the optimizer's zero_grad(), kept
        self._summing_functions, loops, kept = GC.summing_step_functions(
            node, self.stmt_lines, lambda name: self.index.clearing_callers(name, self.module_name),
            self._module_clears)
        self._kept_clears = set(self._kept_clears) | kept | LZ.kept_zero_grads(
            node, lambda dotted: resolve_head(dotted, self._imports))     # a LightningModule's optimizers
        if self.index.has_argument_backward():     # a loss scaler's backward() fills .grad (argument_backward.py)
            clears = AB.kept_clears(node, self.stmt_lines, self.index.argument_backward_lines(self.module_name))
            self._module_clears.update(clears)
            self._kept_clears |= set(clears)
        for loop_id, why in loops.items():      # a per-epoch function's loop: what its callers clear
            self._leftover_grads.setdefault(loop_id, why)
        numpy_names = {a for a, q in self._imports.items() if q == "numpy" or q.startswith("numpy.")}
        self._drawing_functions = TL.host_functions(node, numpy_names)
        self._host_functions = self._drawing_functions | TL.data_functions(node, TL.network_names(node)) | {
            n for n in self.index.imported_drawing_functions(self._imports)
            if n.split(".")[0] not in self._drawing_functions}   # another module's draws: data for the step too
        self._self_parameters = self._hand_made_self_parameters(node)
        # names used as networks (`model.parameters()`, `model.eval()`): a host-drawing method name of a plain class
        # called on one (`model.sample(n)` of a VAE) is no replay buffer's draw (train_loop._is_data_call's `!name`)
        self._network_like = {"!" + n for n in re.findall(
            r"\b([A-Za-z_]\w*)\.(?:parameters|named_parameters|state_dict|forward|eval|zero_grad|modules|children)\(",
            node.code)} if self.index.host_sampling_methods() else set()
        self._clearing_functions = TL.clearing_functions(node)   # `def reset_grad(): opt.zero_grad()`
        self._backward_methods = TL.backward_methods(node)   # `def backward(self, loss): loss.backward()`
        # `balancer = Balancer(...)` of a project class with its own backward(): `balancer.backward(...)` is its
        # method, no tensor's (train_loop.OWN_BACKWARD_OBJECTS)
        self._own_backward_objects = self._own_backward_objects_of(node)
        TL.OWN_BACKWARD_OBJECTS.clear()
        TL.OWN_BACKWARD_OBJECTS.update(self._own_backward_objects)
        # Python's random too: a replay buffer's `random.sample(self.buffer, n)` inside a compiled step is drawn
        # once, at compile time (minimalRL's DQN trained on one batch)
        random_names = {a for a, q in self._imports.items() if q == "random" or q.startswith("random.")}
        self._drawing_objects = TL.drawing_objects(node, numpy_names | random_names, self._drawing_functions)
        self._namespaces = NT.Namespaces(node)     # settings objects: their `.grad` is no tensor's
        self._fresh_out_tuples = fresh_out_tuples(node, self._torch_qname)   # `out = (torch.empty(2), ...)`
        self._torch_heads = {a for a, q in self._imports.items() if is_torch_name(q)}
        # `emb = nn.Embedding(..)`: its parameter renames; `m = nn.Linear(..)`: `m(input=x)` (layer_calls.py)
        self.batched_convs = BC.batched_convs(node, self._torch_qname)   # native conv layers (batched_convs.py)
        # `model = Net()` of a class of this module: "class:Net" (`model.emb.weight` renamed by Net's attribute types)
        module_classes = {c.name.value for c in node.body if isinstance(c, cst.ClassDef)}
        module_layer_calls: Dict[str, cst.Call] = {}
        self._module_layers = LR.module_layers(
            node, lambda f: "class:" + f.value if isinstance(f, cst.Name) and f.value in module_classes
            else self._torch_qname(f),
            lambda qn: qn.startswith("class:") or qn in LAYER_FAMILY or LC.torch_layer(qn), module_layer_calls)
        # `net = nn.Sequential(...)` / `net = make(4)` at the top level: net[1]'s type (PC.sequence_entry_types)
        self._module_entries: Dict[str, str] = {}
        for name, call in module_layer_calls.items():
            self._module_entries.update(PC.sequence_entry_types(self, name, self._module_layers[name], call))
        cell_classes = {c.name.value for c in node.body if isinstance(c, cst.ClassDef)
                        and self.index.is_cell_class(self.module_name, c.name.value)}
        self._graph_functions = GP.graph_functions(node, self._torch_heads, cell_classes, TL.reads)
        self._cell_functions = GP.graph_functions(node, set(), cell_classes, TL.reads)   # host_draws.py
        self._training_loops = training_loop_functions(node) - self._cell_functions   # graph_idioms.py
        # `def update_fn(p, grad, exp_avg)` of a hand-written optimizer: its arguments change in place
        self._optimizer_helpers = HO.helper_functions(node, self._torch_qname) \
            - self._graph_functions - self._cell_functions - self._training_loops
        self._escaping_functions = IA.escaping_functions(node)   # top-level functions used as values
        self._state_reads = GS.module_state_reads(node, cell_classes)   # `if self.state is None`: graph_state.py
        self._device_stores = DR.store_targets(node)   # `x.device = d` is no read (tensor_reads.py)
        self._alias_rebinds = AA.alias_rebinds(node)   # `d_loss = d_real; d_loss += x`: aug_aliases.py
        self._view_conflicts.update(IVW.conflicting_calls(node, set(), self._view_names, self._view_repacks))   # `c = a.view(6); c.add_(2)` at the top
        values = IV.hoistable_calls(node, self._scopes[-1]["bound"], self._is_torch_call)   # `z = x.add_(1)` at the top level too
        self._inplace_values |= values
        self._inplace_stmt_calls |= values

    def _graph_list_rewrites(self, node, local, params, rebound, refuse, iterators: bool = True) -> None:
        """Pops (graph_pops.py) and iter()/next() (graph_iters.py) GRAPH mode computes otherwise."""
        pops, guarded = GP.pops_to_rewrite(node, local)
        shared = GA.shared_changes(node) if refuse else {}   # `m = l; l.append(x)`: graph_aliases.py
        # a pop rewritten as a rebinding (`l = l[:-1]`) would not reach the other holder: refused instead
        pops -= set(shared)
        guarded = {k: c for k, c in guarded.items() if id(c) not in shared}
        self._graph_copies |= GP.list_copies(node, rebound)
        self._graph_pops |= pops
        self._graph_guarded_pops.update(guarded)
        if refuse:
            self._graph_pops_refused.update(GP.refused_pops(
                node, self._graph_pops | {id(c) for c in guarded.values()}, params, rebound))
            self._graph_changes_refused.update(
                {k: (GM.ARGUMENT_CHANGE, what) for k, what in GM.refused_changes(node).items()})
            for k, what in shared.items():
                self._graph_changes_refused.setdefault(k, (GM.SHARED_CHANGE, what))
            fields = self.index.graph_record_fields()
            if fields:      # `inter.layer_type = t`: graph_records.py
                self._record_writes.update(GRD.field_writes(node, params, fields, self._none_tests))
            self._graph_dict_pops |= GM.own_dict_pops(node, set(shared))
            self._graph_keyword_updates |= keyword_updates(node)
        if not iterators:
            return
        iters, nexts = GI.graph_iterators(node, params)
        self._graph_iters |= iters
        self._graph_nexts |= nexts

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        mode = self._grad_mode_of([d.decorator for d in node.decorators])     # @torch.no_grad()
        self.__dict__.setdefault("_grad_modes", []).append("def" if mode is None else mode)
        self._push_comments(node)
        self._push_scope(node.body)
        # `optim = torch.optim.Adam(...)` in the function next to `import torch.optim as optim`: import_rebinds.py
        self._scopes[-1]["rebound"] = IRB.rebound_names(node.body) & set(self._imports)
        self._scopes[-1]["shadows"] |= {p.name.value for p in _all_params(node.params)}
        self._scopes[-1]["params"] = {p.name.value for p in _all_params(node.params)}
        self._scopes[-1]["function"] = node      # as written (cell_rows.py)
        if not self._funcs and not self._classes and node.name.value in self._optimizer_helpers:
            self._scopes[-1]["held"] |= self._scopes[-1]["params"]     # hand_optimizers.py
        self._scopes[-1]["mutated_only"] = IA.mutated_only(node, self._scopes[-1]["params"])   # inplace_arguments.py
        self._scopes[-1]["unpacked_params"] = IA.unpacked_params(node, self._scopes[-1]["params"])
        self._scopes[-1]["tensor_params"] = IA.tensor_params(node, self._imports)   # `x: Tensor` (augmented writes)
        self._scopes[-1]["augmented_only"] = IA.augmented_only(node, self._scopes[-1]["params"])
        if not self._funcs and not self._classes and node.name.value in self._optimizer_helpers:
            self._scopes[-1]["mutated_only"] = set()    # written into the caller's tensor instead
        elif not self._funcs and not self._classes and node.name.value in self._escaping_functions:
            # `partial(f, ...)`, `self.fn = f`: callers inplace_callers.py cannot see (inplace_arguments.py)
            self._scopes[-1]["escaped_changes"] = IA.changed_params(node, self._scopes[-1]["params"]) \
                - self._scopes[-1]["mutated_only"]
        elif not self._funcs and (self._classes[-1].name if self._classes else None, node.name.value) \
                in self._arg_write_backs:
            # a caller reads the tensor it passed, changed here, and this returns something else (timm's Mixup
            # `lam = self._mix_batch(x)`): the changes are written into the caller's tensor (inplace_callers.py)
            self._scopes[-1]["escaped_changes"] = self._arg_write_backs[
                (self._classes[-1].name if self._classes else None, node.name.value)] \
                - self._scopes[-1]["mutated_only"]
        if self._scopes[-1]["mutated_only"]:
            # only the caller sees the change (`def rescale(param, k): param.div_(k)`, the ViTs' fix_init_weight):
            # the new value is written into the caller's tensor (_ms_compat.write_argument), as for a function passed
            # on (inplace_arguments.py); it raises MigrationError naming the line where a graph compiles or a
            # recorded gradient would go through the write
            self._scopes[-1]["escaped_changes"] = set(self._scopes[-1].get("escaped_changes", ())) \
                | self._scopes[-1]["mutated_only"]
        self._view_conflicts.update(IVW.conflicting_calls(node.body, self._scopes[-1]["params"], self._view_names,
                                                          self._view_repacks))
        # `res.append(c.mul_(k))`: `c = c * k` goes before the statement (inplace_values.py)
        # a name other holders share is written into (inplace_holders.py), outside graph code
        top = self._funcs[0].name if self._funcs else node.name.value
        graph = (self._classes and self._classes[-1].is_cell or not self._classes and top in self._cell_functions)
        values = IV.hoistable_calls(node, self._scopes[-1]["bound"] | self._scopes[-1]["shadows"], self._is_torch_call,
                                    shared=frozenset() if graph else frozenset(self._scopes[-1]["held"]))
        self._inplace_values |= values
        self._inplace_stmt_calls |= values
        if self._classes and self._classes[-1].is_cell:   # `ops.cat((x, h.pop()))`: msmigrate/graph_pops.py
            params = {p.name.value for p in _all_params(node.params)}
            rebound = GP.rebound_params(node, params)    # `mems = mems.copy() if mems else [None] * n`
            self._graph_list_rewrites(node, (self._scopes[-1]["bound"] - params) | rebound, params, rebound,
                                      node.name.value != "__init__")
        elif (node.name.value in self._graph_functions and not self._funcs and not self._classes
              or set(TL.reads(node.body)) & self._torch_heads):   # a helper of construct or of a train step
            params = {p.name.value for p in _all_params(node.params)}
            rebound = GP.rebound_params(node, params)
            # a training loop's `next(data_iter)` runs in Python (graph_iters.training_loop)
            self._graph_list_rewrites(node, GP.fresh_lists(node) | rebound, params, rebound, True,
                                      iterators=not GI.training_loop(node))
        self._skip.add(id(node.name))           # `def _assert(...)` defines, it does not refer
        for p in (list(node.params.params) + list(node.params.kwonly_params)
                  + list(node.params.posonly_params)):
            self._skip.add(id(p.name))
        for p in (node.params.star_arg, node.params.star_kwarg):
            if isinstance(p, cst.Param):
                self._skip.add(id(p.name))
        in_cell = bool(self._classes) and self._classes[-1].is_cell
        ctx = FunctionContext(node.name.value, in_cell)
        params = list(node.params.params) + list(node.params.kwonly_params) + list(node.params.posonly_params)
        for i, p in enumerate(params):
            pname = p.name.value
            if pname in ("self", "cls"):
                continue
            ann = code_of(p.annotation.annotation).strip() if p.annotation else ""
            if "Tensor" in ann:
                ctx.tensors.add(pname)
            elif ann and ann in NON_TENSOR_ANNOTATIONS:
                ctx.others.add(pname)
            elif in_cell and node.name.value in ("forward", "construct", "_forward_impl", "_forward"):
                default = code_of(p.default).strip() if p.default else None
                if default in (None, "None"):
                    ctx.tensors.add(pname)
            elif not self._classes and not self._funcs and p in node.params.params:
                # a top-level function every call of which passes a layer attribute here (`embedded_dropout(
                # self.encoder, ...)`): `embed.weight` is that layer's (project_index.parameter_layer)
                layer = self.index.parameter_layer(f"{self.module_name}.{node.name.value}", i, pname)
                if layer is not None:
                    ctx.layers[pname] = layer
        self._funcs.append(ctx)

    def _keeps_no_grad(self, in_cell_code: bool) -> bool:
        """torch.no_grad() here kept as mindspore._no_grad() (keep_no_grad)."""
        return self.keep_no_grad is True or self.keep_no_grad == "outside_cells" and not in_cell_code

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        self._grad_modes.pop()
        cell_code = self._in_cell_code()    # (this function's own body: its decorators below)
        if id(original.body) in self._taped_outer:      # the step after a loop of taped backward()s
            updated = TS.taped_step_in(updated, self._taped_outer.pop(id(original.body)))
        if not self._in_module_forward():
            # any function but a Module's forward may hold a step or a lone backward() (a TODO); a
            # Module's other methods too: on a second pass they are methods of a Cell and get this anyway
            updated = self._train_step_function(original, updated)
        updated = self._higher_order_grads(updated)
        ctx = self._funcs.pop()
        self._scopes.pop()
        new_decorators = []
        no_grad = None      # the last grad-mode decorator, the outermost: no_grad/inference_mode or not
        for orig_dec, dec in zip(original.decorators, updated.decorators):
            target = orig_dec.decorator
            qn = self._torch_qname(target.func if isinstance(target, cst.Call) else target)
            if qn in DROPPED_DECORATORS and self._keeps_no_grad(cell_code) and qn in NG.NO_GRAD_CONTEXTS:
                self.need.add("ms")     # PyNative's tape records what runs outside it (taped_steps.py)
                self._record(orig_dec, qn, "mindspore._no_grad", R.CONVERTED, TS.NO_GRAD_NOTE)
                new_decorators.append(dec.with_changes(
                    decorator=cst.parse_expression(f"{self.names['ms']}._no_grad()")))
                continue
            if qn in DROPPED_DECORATORS and qn in NG.NO_GRAD_CONTEXTS and NG.changes_self_state(original):
                # a no_grad method changing its module's state (s4's _setup_C, called by the first forward inside
                # the train step): run with MindSpore's recording off (no_grad_values.py unrecorded_state)
                if no_grad is None:
                    no_grad = orig_dec
                self.uses_compat = True
                self._record(orig_dec, qn, f"{COMPAT}.unrecorded_state", R.CONVERTED, NG.NO_GRAD_STATE_NOTE)
                new_decorators.append(dec.with_changes(decorator=parse_expr(f"{COMPAT}.unrecorded_state")))
                continue
            if qn in DROPPED_DECORATORS:
                if qn in NG.NO_GRAD_CONTEXTS and no_grad is None:
                    no_grad = orig_dec
                why = NG.NO_GRAD_RESULTS_NOTE if qn in NG.NO_GRAD_CONTEXTS else DROPPED_CONTEXTS.get(
                    qn, "torch compiler/autograd hint; MindSpore needs no counterpart here")
                self._record(orig_dec, qn, "(removed)", R.CONVERTED, why)
                continue
            new_decorators.append(dec)
        updated = updated.with_changes(decorators=new_decorators)
        if no_grad is not None:     # @torch.no_grad(): its results carry no gradient (no_grad_values.py)
            updated, changed = NG.results_without_gradient(updated)
            self.uses_compat = self.uses_compat or changed
        # a mixin's forward too (vit-pytorch's `class DistillMixin:` before ViT in DistillableViT's bases): the
        # Cell's construct would otherwise be the base's, called with the mixin's arguments
        mixin = len(self._classes) == 1 and not self._classes[-1].is_cell and len(self._funcs) == 0 \
            and self.index.is_cell_mixin(self.module_name, self._classes[-1].name)
        if (ctx.in_cell or mixin) and original.name.value == "forward":
            self._record(original.name, "Module.forward", "construct", R.CONVERTED,
                         "nn.Cell runs construct()")
            updated = updated.with_changes(name=cst.Name("construct"))
        if ctx.in_cell and original.name.value == "__init__" and self._classes[-1].mode_dependent \
                and len(self._funcs) == 0:
            updated = DM.start_in_training_mode(updated)
        updated = PH.checked_defaults(updated)
        return self._pop_comments(updated)

    def visit_Decorator(self, node) -> None:
        self._push_comments(node)       # a TODO comment stands above its own decorator line
        self._import_time += 1
        target = node.decorator
        func = target.func if isinstance(target, cst.Call) else target
        qn = self._torch_qname(func)
        if qn in DROPPED_DECORATORS or self._unconverted_decorator(qn):
            # dropped, or replaced whole by leave_Decorator (one TODO for the decorator)
            self._skip.add(id(func))
            if isinstance(target, cst.Call):
                self._skip_calls.add(id(target))

    def leave_Decorator(self, original, updated):
        self._import_time -= 1
        target = original.decorator
        qn = self._torch_qname(target.func if isinstance(target, cst.Call) else target)
        if qn not in DROPPED_DECORATORS and self._unconverted_decorator(qn):
            # applying an unconverted decorator must not break import: wrap instead
            why = "no MindSpore counterpart for this decorator; the decorated function raises when called"
            self._record(original, qn, "", R.TODO, why)
            if self._comments:
                self._comments[-1].append(f"# msmigrate: TODO {qn}: {why}. Original: @{shorten(code_of(target), 120)}")
            self.uses_compat = True
            return self._pop_comments(updated.with_changes(decorator=parse_expr(
                f"{COMPAT}.unconverted_decorator({qn!r}, {self.module_name + ':' + str(self._line(original))!r})")))
        ph = PH.find_placeholder(updated.decorator) if self._comments[-1] else None
        if ph is not None:
            # a decorator that holds unconverted code: applying it on import must not fail
            updated = updated.with_changes(decorator=parse_expr(
                f"{COMPAT}.unconverted_decorator({PH.api_of(ph)!r}, {self.module_name + ':' + str(self._line(original))!r})"))
        return self._pop_comments(updated)

    def _unconverted_decorator(self, qn) -> bool:
        """A decorator of torch's family that no record converts; not one of a dependency converted with the project
        (`--deps timm`: timm's `@register_model` is the converted timm's, as its other names are)."""
        return bool(qn) and R.lookup(qn) is None and not is_dependency_name(self.index, qn)

    def visit_Param(self, node) -> None:
        self._import_time += 1

    def leave_Param(self, original, updated):
        self._import_time -= 1
        if updated.default is not None and self._comments and self._comments[-1]:
            updated = updated.with_changes(default=PH.single_default(updated.default))
        return updated

    def leave_Lambda(self, original, updated):
        return PH.checked_lambda(updated)

    def visit_Annotation(self, node) -> None:
        self._import_time += 1
        self._annotation += 1

    def leave_Annotation(self, original, updated):
        self._import_time -= 1
        self._annotation -= 1
        if self._comments and self._comments[-1] and PH.find_placeholder(updated.annotation) is not None:
            # Python evaluates an annotation but never runs it: the original stays as a string
            return updated.with_changes(annotation=cst.SimpleString(repr(code_of(original.annotation).strip())))
        return updated

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._push_comments(node)
        self._skip.add(id(node.name))
        is_cell = self.index.is_cell_class(self.module_name, node.name.value)
        for b in node.bases:
            self._type_refs.add(id(b.value))
            self._base_refs.add(id(b.value))
        reached = None
        if is_cell:     # no forward here nor in a subclass: what other forwards do not call runs on the host
            subclassed = self.index.is_subclassed(self.module_name, node.name.value)
            reached = GS.forward_methods(node, None if subclassed else self.index.forward_called_methods())
        ctx = ClassContext(node.name.value, is_cell, mode_dependent=is_cell and DM.depends_on_mode(node),
                           forward_methods=reached)
        for b in node.bases:   # a subclass of a torch layer reads its parameters by torch's names
            ctx.layer_family = ctx.layer_family or LAYER_FAMILY.get(self._torch_qname(b.value) or "")
        ctx.hand_optimizer = not self._classes and HO.is_hand_written(node, self._torch_qname)
        if is_cell and self._numpy_aliases():
            ctx.numpy_attributes = NI.numpy_attributes(node, self._numpy_aliases())
        if is_cell:
            ctx.module_methods = self._module_returning_methods(node)
        for b in node.bases:    # what a base class of this file binds its attributes to (`self.drop = nn.Dropout()`)
            if isinstance(b.value, cst.Name) and b.value.value != node.name.value:
                for attr, held in self._class_attr_types.get(b.value.value, {}).items():
                    ctx.attr_types.setdefault(attr, held)     # this class's own bindings replace them
        self._class_attr_types[node.name.value] = ctx.attr_types
        self._classes.append(ctx)

    def leave_ClassDef(self, original, updated):
        ctx = self._classes.pop()
        if ctx.mode_dependent:
            updated = DM.with_training_init(updated)
        updated = self._hand_written_optimizer(original, updated)
        updated = self._class_decorators(original, updated)
        return self._pop_comments(updated)

    def _class_decorators(self, original, updated):
        """torch's decorators of a class (timm's `@torch.jit.script class SpaceToDepthJit(object)`): visit_Decorator
        leaves a dropped one as written for its function's leave_FunctionDef, which a class never reaches, so the
        converted module named torch at import (a NameError, in no report). A compiler hint is removed, as on a
        function; a grad-mode or autocast decorator, which means nothing on a class in MindSpore, is a TODO whose
        placeholder raises where the class is used."""
        decorators = []
        for orig_dec, dec in zip(original.decorators, updated.decorators):
            target = orig_dec.decorator
            qn = self._torch_qname(target.func if isinstance(target, cst.Call) else target)
            if qn not in DROPPED_DECORATORS:
                decorators.append(dec)
            elif qn in NG.NO_GRAD_CONTEXTS or qn in DROPPED_CONTEXTS:
                why = "a grad-mode or autocast decorator of a class has no MindSpore counterpart; the class raises " \
                      "when used"
                self._record(orig_dec, qn, "", R.TODO, why)
                self.uses_compat = True
                decorators.append(dec.with_changes(decorator=parse_expr(
                    f"{COMPAT}.unconverted_decorator({qn!r}, "
                    f"{self.module_name + ':' + str(self._line(orig_dec))!r})")))
            else:
                self._record(orig_dec, qn, "(removed)", R.CONVERTED,
                             "torch compiler hint on a class; MindSpore needs no counterpart here")
        return updated.with_changes(decorators=decorators)

    def _hand_written_optimizer(self, original, updated):
        """A torch.optim.Optimizer subclass written in the program (its step() reads p.grad and changes the
        parameters in place): MindSpore's Optimizer base applies an update through construct(gradients), which
        the class lacks. It is rebased on _ms_compat.HandWrittenOptimizer (compat_parts/user_optimizers.py):
        torch's param_groups, state and state_dict, and `optimizer(grads)` makes the gradients p.grad and runs
        the program's own step() on the host."""
        if not any(code_of(b.value).strip().endswith("experimental.optim.Optimizer") for b in updated.bases):
            return updated
        methods = {st.name.value: st for st in original.body.body if isinstance(st, cst.FunctionDef)}
        if "step" not in methods or "construct" in methods or "__call__" in methods:
            return updated
        line = self.stmt_lines.get(id(methods["step"]), self._line(original))
        self.sites.append(Site(line, "torch.optim.Optimizer", "_ms_compat.HandWrittenOptimizer", R.CONVERTED,
                               f"{original.name.value}.step() runs on the host, op by op, with each gradient as "
                               "p.grad (a train step reaching it runs op by op in GRAPH mode too)",
                               f"class {original.name.value}(Optimizer)", HO.TEST))
        self.uses_compat = True
        bases = [b.with_changes(value=parse_expr(f"{COMPAT}.HandWrittenOptimizer"))
                 if code_of(b.value).strip().endswith("experimental.optim.Optimizer") else b for b in updated.bases]
        return updated.with_changes(bases=bases)

    # --------------------------------------------------------------- imports
    def visit_Import(self, node) -> bool:
        return False

    def visit_ImportFrom(self, node) -> bool:
        return False

    def _is_foreign_torch(self, dotted: str) -> bool:
        if is_dependency_name(self.index, dotted):
            return False   # --deps: the import stays and finds the converted copy
        top = dotted.split(".", 1)[0]
        if any(dotted == m or dotted.startswith(m + ".") for m in TORCH_SUBMODULES):
            return top not in self.index.local_tops   # `from safetensors.torch import save_file`
        return top in _TOPS and top not in self.index.local_tops

    def _restore_imports(self, original) -> None:
        """A module-level import binding again a torch name that an earlier statement of the module rebound
        (`N, F = 600, 24` and then `import torch.nn.functional as F`): from here on the name is the import again
        (_rebind_import dropped it from the table)."""
        if self._funcs or self._classes or isinstance(original.names, cst.ImportStar):
            return
        for alias in original.names:
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            else:
                local = code_of(alias.name).strip().split(".", 1)[0]
            if local in self._file_imports and local not in self._imports:
                self._imports = {**self._imports, local: self._file_imports[local]}
                if is_torch_name(self._file_imports[local]):
                    self._torch_heads = self._torch_heads | {local}

    def leave_Import(self, original: cst.Import, updated: cst.Import):
        self._restore_imports(original)
        keep, reexports = [], []
        for alias in updated.names:
            dotted = code_of(alias.name).strip()
            if self._is_foreign_torch(dotted):
                self.touched = True
                local = alias.asname.name.value if alias.asname else dotted.split(".", 1)[0]
                if f"{self.module_name}.{local}" in self.index.star_exports:   # named in __all__
                    reexports.append(self._reexport(local, dotted if alias.asname else local, original))
                continue
            if is_dependency_name(self.index, dotted) and needs_bootstrap(self.index, self.module_name):
                self.uses_compat = True   # _ms_compat puts the converted dependencies on sys.path
            keep.append(alias)
        if reexports:
            return cst.FlattenSentinel(([_with_names(updated, keep)] if keep else []) + reexports)
        return _with_names(updated, keep)

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom):
        self._restore_imports(original)
        if not updated.relative and updated.module is not None and \
                is_dependency_name(self.index, code_of(updated.module).strip()):
            self.uses_compat = self.uses_compat or needs_bootstrap(self.index, self.module_name)   # sys.path
            return updated
        if updated.relative or updated.module is None or not self._is_foreign_torch(code_of(updated.module).strip()):
            mixed = self._drop_torch_names_of_neutral_package(original, updated)
            if mixed is not None:
                return mixed
            return self._drop_project_torch_aliases(updated)
        dotted = code_of(updated.module).strip()
        self.touched = True
        # names other project modules import from here must stay defined
        keep = []
        if not isinstance(updated.names, cst.ImportStar):
            for alias in updated.names:
                local = (alias.asname.name.value if alias.asname else code_of(alias.name).strip())
                if f"{self.module_name}.{local}" in self.index.imported_names:
                    keep.append(self._reexport(local, f"{dotted}.{code_of(alias.name).strip()}", original))
        if keep:
            return cst.FlattenSentinel(keep)
        return cst.RemovalSentinel.REMOVE

    def _drop_torch_names_of_neutral_package(self, original: cst.ImportFrom, updated: cst.ImportFrom):
        """`from transformers import BertConfig, BertModel`: a package neutral at its top whose torch names
        (project_index.is_torch_name) are sites where used; those names leave the import (re-exported ones are
        assigned their conversion), the rest stay. None when the import names none."""
        if updated.relative or updated.module is None or isinstance(updated.names, cst.ImportStar):
            return None
        dotted = code_of(updated.module).strip()
        if dotted.split(".", 1)[0] in self.index.local_tops or is_dependency_name(self.index, dotted):
            return None
        torch_names = [a for a in updated.names if is_torch_name(f"{dotted}.{code_of(a.name).strip()}")]
        if not torch_names:
            return None
        self.touched = True
        reexports = []
        for alias in torch_names:
            local = alias.asname.name.value if alias.asname else code_of(alias.name).strip()
            if f"{self.module_name}.{local}" in self.index.imported_names:
                reexports.append(self._reexport(local, f"{dotted}.{code_of(alias.name).strip()}", original))
        rest = _with_names(updated, [a for a in updated.names if a not in torch_names])
        stmts = ([] if isinstance(rest, cst.RemovalSentinel) else [rest]) + reexports
        if not stmts:
            return cst.RemovalSentinel.REMOVE
        return cst.FlattenSentinel(stmts) if len(stmts) > 1 else stmts[0]

    def _drop_project_torch_aliases(self, updated: cst.ImportFrom):
        """`from .common import nn, F` where common re-exports torch modules: every use
        was converted to MindSpore names, so these imports go."""
        if isinstance(updated.names, cst.ImportStar):
            return updated
        level = len(updated.relative)
        mod = code_of(updated.module).strip() if updated.module is not None else None
        base = resolve_relative(self.module_name, self.is_package, level, mod) if level else \
            self.index.sibling(self.module_name, mod or "")
        if base.split(".", 1)[0] not in self.index.local_tops:
            return updated
        keep = []
        for alias in updated.names:
            name = code_of(alias.name).strip()
            resolved = self.index.resolve_alias(f"{base}.{name}")
            if is_torch_name(resolved) and resolved.split(".", 1)[0] not in self.index.local_tops:
                self.touched = True
                continue
            keep.append(alias)
        return _with_names(updated, keep)

    def _reexport(self, local: str, qn: str, node) -> cst.Assign:
        m = R.lookup(qn)
        if m is not None and m.target and not m.target.startswith(("expr:", "drop", "identity", "method:")):
            value = self.render(_ADAPTERS.get(qn, m.target))
            self._record(node, qn, m.target, m.status, (m.note + "; " if m.note else "") + "re-exported name")
        else:
            value = self._todo(node, qn, (m.note if m is not None and m.note else "no MindSpore mapping known")
                               + "; re-exported by this module")
        return cst.Assign(targets=[cst.AssignTarget(target=cst.Name(local))], value=value)

    # ---------------------------------------------------------- expressions
    def visit_Attribute(self, node: cst.Attribute) -> None:
        UT.mark_field_receiver(self, node)      # `r.sort(-1).indices`: r is a tensor
        self._skip.add(id(node.value))
        self._receivers.add(id(node.value))
        self._skip.add(id(node.attr))

    def visit_Call(self, node: cst.Call) -> None:
        self._skip.add(id(node.func))
        self._call_funcs.add(id(node.func))
        UM.mark_dispatched(self, node)
        TN.visit_call(self, node)   # getattr/hasattr/dir over a torch module
        if isinstance(node.func, cst.Name) and node.func.value in ("isinstance", "issubclass") and len(node.args) == 2:
            t = node.args[1].value
            for e in (t.elements if isinstance(t, cst.Tuple) else []):
                self._type_refs.add(id(e.value))
            self._type_refs.add(id(t))

    def visit_NameItem(self, node) -> None:     # global/nonlocal names
        self._skip.add(id(node.name))

    def visit_AsName(self, node) -> None:       # `except E as name`, `with x as name`
        self._skip.add(id(node.name))

    def visit_CompFor(self, node) -> None:      # comprehension targets
        self._skip.add(id(node.target))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._skip.add(id(node.keyword))

    def leave_Name(self, original: cst.Name, updated: cst.Name):
        if id(original) in self._skip:
            return updated
        qn = self._torch_qname(original)
        if qn is None:
            return self._nullcontext_reference(original) or updated
        return self._convert_reference(original, updated, qn)

    def _nullcontext_reference(self, original) -> Optional[cst.BaseExpression]:
        """`ctx = partial(autocast, ...) if f32 else nullcontext` then `with ctx():` in compiled code: the
        class entered there must be a jit_class (_ms_compat.nullcontext, compat_parts/runtime.py)."""
        if self._in_graph_code() and self._qname_any(original) == "contextlib.nullcontext":
            self.uses_compat = True
            return self._render_template("_ms_compat.nullcontext")
        return None

    def leave_FormattedStringExpression(self, original, updated):
        return FV.field(self, original, updated)       # f"{loss:.4f}" of a 0-d tensor: format_values.py

    def leave_FormattedString(self, original, updated):
        # a field quoting the f-string's own quote (a TODO's reason): a concatenation (fstring_quotes.py)
        return FSQ.readable(original, updated) if updated is not original else updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute):
        renamed = self._cell_owned_attribute(original, updated)
        if renamed is not None:
            return renamed
        result = self._leave_attribute(original, updated)
        if result is updated and (id(original) not in self._skip or id(original) in self._receivers) and (
                self._in_graph_code() or self._in_record_method()
                or original.attr.value in GRD.DICT_ATTRS):   # a record's field: graph_records.py
            result = GRD.field_read(self, original, updated) or result
        result = GS.wrap_read(self, original, result)   # graph_state.py
        return GR.track(self, original, result)   # `x.grad`: see leave_Module

    def _cell_owned_attribute(self, original: cst.Attribute, updated: cst.Attribute):
        """`self.phase` in a module's own methods (ssd.pytorch's SSD: `self.phase = phase` in __init__, `if self.phase
        == "test":` in forward): `phase` is a property of MindSpore's Cell that set_train rewrites ('train' or
        'predict', also the set_train(True) a converted __init__ ends with), so the program's value was replaced
        and forward took the other branch, silently. In a class that becomes a Cell the program's attribute is
        `self._torch_phase` (CELL_OWNED_ATTRIBUTES); a read from outside the class (`net.phase`) still reaches
        MindSpore's property."""
        if not (self._classes and self._classes[-1].is_cell and self._funcs
                and isinstance(original.value, cst.Name) and original.value.value == "self"
                and original.attr.value in CELL_OWNED_ATTRIBUTES):
            return None
        return updated.with_changes(attr=cst.Name(CELL_OWNED_ATTRIBUTES[original.attr.value]))

    def _own_plain_attribute(self, original: cst.Attribute) -> bool:
        """`self._modules` in a class that is no Module (transformers' `_LazyModule(ModuleType)` keeps a set under
        that name): the class's own attribute, not torch's Module dictionary."""
        return (isinstance(original.value, cst.Name) and original.value.value == "self" and bool(self._classes)
                and not self._classes[-1].is_cell)

    def _leave_attribute(self, original: cst.Attribute, updated: cst.Attribute):
        device = DR.device_read(self, original, updated)     # `x.device.type`, `x.is_cuda`: tensor_reads.py
        if device is not None:
            return device
        if original.attr.value == "_buffers" and id(original) not in self._stores \
                and not self._own_plain_attribute(original):
            # torch's dictionary of a module's buffers: register_buffer's Parameters are in none of the Cell's
            # (thop's `m._buffers.pop("total_ops")` after its count): a view that holds them (layer_settings.py)
            self.uses_compat = True
            return cst.Call(func=cst.parse_expression(f"{COMPAT}.module_buffers"), args=[cst.Arg(updated.value)])
        internal = R.REGISTRY.get(f"Module.{original.attr.value}") if original.attr.value in _MODULE_INTERNALS else None
        if internal is not None and id(original) not in self._stores and not self._own_plain_attribute(original):
            # `self._modules` / `self._parameters`: the record's attribute (mappings/module_api.py)
            self._record(original, internal.source, internal.target, internal.status, internal.note)
            self.sites[-1].test = internal.test
            return updated.with_changes(attr=cst.Name(internal.target.rsplit(".", 1)[1]))
        forward = self._forward_reference(original, updated)     # `ema.forward` passed as a function
        if forward is not None:
            return forward
        if id(original) in self._skip:
            # a receiver or an assignment target (`self.transformer.wte.weight = ...`, `m.weight.numel()`):
            # no reference of its own, but a layer's parameter keeps MindSpore's name there too;
            # `x.topk(2).values.sum()`: the field of a converted (values, indices) call is still its index
            return UT.named_tuple_field(self, original, updated) or self._rename_param_attr(original, updated)
        qn = self._torch_qname(original)
        if qn is not None:
            return self._convert_reference(original, updated, qn)
        null = self._nullcontext_reference(original)     # `contextlib.nullcontext` in compiled code
        if null is not None:
            return null
        todo = UT.attribute_read(self, original, updated)   # `x.grad_fn` on a tensor, no record: a TODO
        if todo is not None:
            return todo
        return self._rename_param_attr(original, updated)

    def _forward_reference(self, original: cst.Attribute, updated: cst.Attribute):
        """`model.forward` read, not called (DiT's sample.py: `diffusion.p_sample_loop(model.forward_with_cfg, ...)`,
        `ddim_sample_loop(model.forward, ...)`): a Cell has no forward, so a module's is its construct (which, as torch's
        forward, runs no hooks), and a receiver of unknown type goes through _ms_compat.forward_of, as the call
        `layer.forward(x)` does. None where it is something else (called, stored, a tensor's or another object's)."""
        if original.attr.value != "forward" or id(original) in self._call_funcs or id(original) in self._stores \
                or self._torch_qname(original) is not None:
            return None
        kind = self._receiver_kind(original.value)
        if kind == "module":
            self._record(original, "Module.forward", "construct", R.CONVERTED, "nn.Cell runs construct()")
            return updated.with_changes(attr=cst.Name("construct"))
        if kind == "unknown":
            self.uses_compat = True
            self._record(original, "Module.forward", f"{COMPAT}.forward_of", R.CONVERTED,
                         "receiver of unknown type: an nn.Cell's construct() (MindSpore's Cells have no forward), "
                         "any other object's forward")
            return cst.Call(func=cst.parse_expression(f"{COMPAT}.forward_of"), args=[cst.Arg(updated.value)])
        return None

    def _helper_object_method(self, original: cst.Call, updated: cst.Call, qn: str):
        """A method called on a torch object whose _ms_compat record has torch's methods (records.METHOD_OWNERS:
        `constraints.positive.check(x)`, `identity_transform.inv(y)`): the object converted, the call kept. None
        for any other owner (then the call is a TODO)."""
        owner_qn = qn.rpartition(".")[0]
        owner = R.lookup(owner_qn)
        if not isinstance(original.func, cst.Attribute) or not isinstance(updated.func, cst.Attribute) \
                or owner is None or owner.source not in METHOD_OWNERS:
            return None
        receiver = self._convert_reference(original.func.value, updated.func.value, owner_qn)
        self.uses_compat = True
        return updated.with_changes(func=updated.func.with_changes(value=receiver))

    def _convert_reference(self, original, updated, qn: str):
        """A torch name used as a value (a base class, an annotation, a dtype, a
        layer class passed around)."""
        m = R.lookup(qn)
        owner_qn, _, attr = qn.rpartition(".")
        if m is None and attr in VALUE_ATTRS.get(owner_qn, ()) and isinstance(original, cst.Attribute):
            # `torch.float32.itemsize`: the attribute of the converted value
            return updated.with_changes(value=self._convert_reference(original.value, updated.value, owner_qn))
        if (m is None or m.target is None and m.rule is None) and is_dependency_name(self.index, qn):
            self._record(original, qn, qn, R.CONVERTED, DEPENDENCY_NOTE)
            return updated
        if id(original) in self._type_refs and qn in R.TYPE_TARGETS:
            # `issubclass(type(m), torch.nn.RNNBase)` (awd-lstm-lm's WeightDrop): the MindSpore base of the layers
            # the record converts the class's instances to
            target, note = R.TYPE_TARGETS[qn]
            self._record(original, qn, target, R.CONVERTED, note)
            return self.render(target)
        value_form = getattr(m.rule, "value_form", None) if m is not None else None
        if value_form is not None:
            # a composed record (mappings/compose.py) used as a value (s4's `_c2r = torch.view_as_real`): the name of
            # its template's first call (ops.stack) computes something else; the template as a lambda, or a TODO
            text = value_form()
            if text is None:
                return self._todo(original, qn, "used as a value; only calls of it can be converted")
            self._record(original, qn, text, m.status, (m.note + "; " if m.note else "")
                         + "used as a value: the conversion as a function of torch's positional arguments")
            return self._render_template(text)
        if m is None or m.target is None:
            why = m.note if m is not None and m.note else (rule_note(qn) or "no MindSpore mapping known")
            return self._todo(original, qn, why)
        if m.target.startswith(("expr:", "drop", "identity", "method:")) or m.rule is not None and m.target is None:
            if m.target.startswith("expr:") and "{" not in m.target:
                if is_plain_value(qn):   # torch.__version__, torch.channels_last: the value itself
                    self._record(original, qn, m.target[5:], m.status, m.note)
                    return self._render_template(m.target[5:])    # records the imports it needs
                # the record describes a call without arguments (torch.cuda.is_available()): the function
                # itself, used as a value, is one that computes the same
                self._record(original, qn, f"lambda: {m.target[5:]}", m.status, m.note)
                return self._render_template(f"(lambda: {m.target[5:]})")   # records the import it needs
            return self._todo(original, qn, "used as a value; only calls of it can be converted")
        target = m.target
        adapter = _ADAPTERS.get(qn)
        if adapter and self._annotation == 0 and id(original) not in self._type_refs:
            # a layer class passed around (norm_layer=nn.BatchNorm2d) keeps torch's
            # signature through an adapter subclass, since its call site is elsewhere
            self._record(original, qn, adapter, R.CONVERTED,
                         f"passed as a value: {adapter} takes torch's arguments and builds {target}")
            return self.render(adapter)
        status = m.status
        note = m.note
        if adapter and id(original) in self._base_refs:
            # a subclass of a torch layer calls super().__init__ with torch's arguments
            self._record(original, qn, adapter, R.CONVERTED,
                         f"subclassed: {adapter} takes torch's arguments and builds {target}")
            return self.render(adapter)
        if self._annotation or id(original) in self._type_refs:
            self._record(original, qn, target, status, note)
            return self.render(target)
        if qn in _BOUND_CONSTRUCTORS and id(original) in self._bound_values:
            # `Tensor = torch.Tensor`, then `Tensor(n, c, h, w)` elsewhere: mindspore.Tensor would take the sizes
            # for data, dtype and shape; the helper builds as torch's constructor and is a type for isinstance
            target = _BOUND_CONSTRUCTORS[qn]
            self._record(original, qn, target, R.CONVERTED,
                         f"bound to a name: called, {target} builds as {qn}(...) does; as a type it matches tensors")
            self.uses_compat = True
            return self.render(target)
        if qn in _FACTORY_VALUES and not self._annotation:
            # `init_fn = uniform_init if ... else torch.zeros`, then `init_fn(n, d)`: torch's sizes one by one would
            # reach ops.zeros' dtype; the helper takes torch's arguments (compat_parts/factory_values.py)
            target = _FACTORY_VALUES[qn]
            self._record(original, qn, target, R.CONVERTED, f"used as a value: {target} takes torch's arguments")
            self.uses_compat = True
            return self.render(target)
        if m.args and (m.rename or m.transforms or m.drop or m.extra or m.rule):
            status = R.DIFFERENCE
            note = (note + "; " if note else "") + "used as a value: arguments given elsewhere are not translated"
        self._record(original, qn, target, status, note)
        return self.render(target)

    def _rename_param_attr(self, original: cst.Attribute, updated: cst.Attribute):
        attr = original.attr.value
        weight_read = CW.read(self, original, updated)   # `conv1d.weight.shape`: torch's 3-D (conv1d_weights.py)
        if weight_read is not None:
            return weight_read
        setting = LS.read(self, original, updated)   # `conv.padding`, `bn.momentum`: layer_settings.py
        if setting is not None:
            return setting
        if attr in _CONV1D_TUPLES and id(original) not in self._stores \
                and self._static_type(original.value) in _CONV1D_LAYERS:
            # MindSpore's 1-d convolutions run a 2-d one: kernel_size (1, k) where torch has (k,)
            self._record(original, f"conv1d.{attr}", f"{attr}[1:]", R.CONVERTED,
                         f"MindSpore's 1-d convolution holds {attr} as a 2-d one's (1, n): its last entry is torch's")
            return cst.Subscript(value=updated, slice=[cst.SubscriptElement(
                slice=cst.Slice(lower=cst.Integer("1"), upper=None))])
        if attr in _CONV1D_TUPLES and id(original) not in self._stores and id(original) not in self._call_funcs \
                and self._static_type(original.value) is None and (
                    self._receiver_kind(original.value) == "module" or isinstance(original.value, cst.Attribute)
                    and self._receiver_kind(original.value) == "unknown"):
            # a layer whose class is not known here (encodec's SConv1d: `self.conv.conv.kernel_size[0]`, the
            # convolution built through a normalization function): a MindSpore 1-d convolution's (1, n) would
            # give 1 for torch's n; the helper drops the leading 1 there only (layer_settings.py conv1d_tuple)
            self._record(original, f"conv1d.{attr}", "_ms_compat.conv1d_tuple", R.CONVERTED,
                         f"a layer of a class known at run time only: a MindSpore 1-d convolution's {attr} is a 2-d "
                         "one's (1, n), torch's (n,)")
            self.uses_compat = True
            return cst.Call(func=cst.parse_expression(f"{COMPAT}.conv1d_tuple"),
                            args=[cst.Arg(updated.value), cst.Arg(cst.SimpleString(repr(attr)))])
        if attr not in _RENAMED_ATTRS:
            return updated
        family = self._layer_family(original.value)
        if self._unknown_norm_names(original):
            return self._unknown_norm_attr(original, updated)
        if family is None:
            return self._mixed_param_attr(original, updated)
        new = PARAM_RENAMES[family].get(attr)
        if not new:
            return updated
        if family == "batchnorm" and self._static_type(original.value) == "torch.nn.BatchNorm3d":
            # MindSpore's BatchNorm3d keeps its parameters on the BatchNorm2d it runs (bn2d); torch on itself
            self._record(original, f"{family}.{attr}", f"bn2d.{new}", R.CONVERTED,
                         f"MindSpore's BatchNorm3d keeps this parameter on its inner bn2d, as {new}")
            return updated.with_changes(value=cst.Attribute(value=updated.value, attr=cst.Name("bn2d")),
                                        attr=cst.Name(new))
        self._record(original, f"{family}.{attr}", new, R.CONVERTED,
                     f"MindSpore names this parameter {new}")
        return updated.with_changes(attr=cst.Name(new))

    def _unknown_norm_names(self, original: cst.BaseExpression) -> List[str]:
        """`teacher[1][0].running_mean` where the layer's class is not known here: only torch's norm layers have
        the name, and MindSpore's name it moving_*; a user's module may keep its own, so [MindSpore's name, torch's]
        for the name the cell has, chosen at run time (as written: MindSpore's AttributeError, naming no original
        line; stored, a new attribute beside the statistics). The owner is read twice: only a chain of names,
        attributes and constant items, which calls nothing. Empty: not such a read."""
        if not (isinstance(original, cst.Attribute) and original.attr.value in _NORM_ONLY_ATTRS
                and _plain_chain(original.value) and not self._mixed_names(original)
                and self._layer_family(original.value) is None):
            return []
        return [PARAM_RENAMES["batchnorm"][original.attr.value], original.attr.value]

    def _unknown_norm_attr(self, original: cst.Attribute, updated: cst.Attribute):
        if id(original) in self._stores:   # set by leave_Assign / leave_AugAssign
            return updated
        new = PARAM_RENAMES["batchnorm"][original.attr.value]
        self._record(original, f"batchnorm.{original.attr.value}", f"{new} / {original.attr.value}", R.CONVERTED,
                     f"the layer's class is not known here: MindSpore's norm layers name this {new}, chosen at "
                     "run time by the name the cell has")
        return MN.chosen_attribute(updated.value, [new, original.attr.value])

    def _mixed_names(self, original: cst.Attribute) -> List[str]:
        """The names `m.attr` has across the classes of a mixed isinstance() narrowing of `m` (mixed_narrowing.py;
        empty: one name for all)."""
        if not (isinstance(original.value, cst.Name) and original.attr.value in _RENAMED_ATTRS):
            return []
        classes = MN.narrowed_classes(self._narrow, original.value.value)
        return [] if classes is None else MN.names_by_class(classes, original.attr.value, LAYER_FAMILY, PARAM_RENAMES)

    def _mixed_param_attr(self, original: cst.Attribute, updated: cst.Attribute):
        """`m.bias` where `isinstance(m, (nn.BatchNorm2d, nn.Linear))`: the name the cell has, chosen at run time
        (an assignment target: leave_Assign's setattr)."""
        names = self._mixed_names(original)
        if not names or id(original) in self._stores:
            return updated
        self._record(original, f"mixed.{original.attr.value}", " / ".join(names), R.CONVERTED,
                     "the classes of the isinstance() test name this parameter differently in MindSpore: the name "
                     "the cell has, chosen at run time")
        return MN.chosen_attribute(updated.value, names)

    def _layer_family(self, node: cst.BaseExpression) -> Optional[str]:
        if isinstance(node, cst.Name) and node.value == "self" and self._classes and self._classes[-1].layer_family:
            return self._classes[-1].layer_family
        t = self._static_type(node)
        if t is None and isinstance(node, cst.Attribute):
            # `model.pos_emb.weight` where model's class is not known here, or its class's `pos_emb` is (a setter
            # stores a parameter too): every class of the project that sets `self.pos_emb` sets one torch layer
            # family (an Embedding, or a subclass of one), so MindSpore's name is that family's
            families = {LAYER_FAMILY.get(q) for q in self.index.attribute_torch_layers(node.attr.value)}
            return families.pop() if len(families) == 1 and None not in families else None
        return LAYER_FAMILY.get(t) if t else None

    def _known_owner(self, node: cst.BaseExpression) -> bool:
        """`self` in a class, or a name/attribute whose type this module knows: its own attribute types decide."""
        if isinstance(node, cst.Name) and node.value == "self" and self._classes:
            return True
        return self._static_type(node) is not None

    def _static_type(self, node: cst.BaseExpression) -> Optional[str]:
        if isinstance(node, cst.Name):
            for narrow in reversed(self._narrow):
                if node.value in narrow:
                    found = narrow[node.value]
                    return found if isinstance(found, str) else None    # several classes: no one type
            return LR.name_layer(self, node.value)
        if isinstance(node, cst.Attribute):
            owner = node.value
            if isinstance(owner, cst.Name) and owner.value == "self" and self._classes:
                return self._classes[-1].attr_types.get(node.attr.value)
            if (isinstance(owner, cst.Attribute) and isinstance(owner.value, cst.Name) and owner.value.value == "self"
                    and self._classes):   # an entry of a ModuleDict attribute (PC.dict_entry_types)
                entry = self._classes[-1].attr_types.get(f"{owner.attr.value}.{node.attr.value}")
                if entry is not None:
                    return entry
            owner_t = self._static_type(owner)
            if owner_t and owner_t.startswith("class:"):
                return self._class_attr_types.get(owner_t[6:], {}).get(node.attr.value)
        if (isinstance(node, cst.Subscript) and isinstance(node.value, cst.Attribute) and self._classes
                and isinstance(node.value.value, cst.Name) and node.value.value.value == "self"):
            i = PC.constant_index(node)     # an entry of a Sequential/ModuleList attribute (PC.sequence_entry_types)
            found = self._classes[-1].attr_types.get(f"{node.value.attr.value}[{i}]") if i is not None else None
            return found or self._classes[-1].attr_types.get(f"{node.value.attr.value}[*]")
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Attribute):
            # `model.down[1]` outside the class: an entry of the Sequential attribute of an instance of a class of
            # the program
            owner_t = self._static_type(node.value.value)
            i = PC.constant_index(node)
            if i is not None and owner_t and owner_t.startswith("class:"):
                return self._class_attr_types.get(owner_t[6:], {}).get(f"{node.value.attr.value}[{i}]")
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and self._funcs \
                and LR.name_layer(self, node.value.value) in ("torch.nn.Sequential", "torch.nn.ModuleList"):
            i = PC.constant_index(node)     # an entry of a function's own Sequential (PC.sequence_entry_types)
            owner = next((c for c in reversed(self._funcs) if node.value.value in c.layers), None)
            if i is not None and owner is not None:
                return owner.layers.get(f"{node.value.value}[{i}]")
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) \
                and LR.name_layer(self, node.value.value) in ("torch.nn.Sequential", "torch.nn.ModuleList") \
                and not any(node.value.value in c.layers for c in self._funcs):
            i = PC.constant_index(node)     # an entry of a top-level Sequential (`student[1].running_mean`)
            if i is not None:
                return self._module_entries.get(f"{node.value.value}[{i}]")
        return None

    def _class_name_of(self, node: cst.BaseExpression) -> Optional[str]:
        """`m.__class__.__name__`, `type(m).__name__` or a local holding it -> "m"."""
        if isinstance(node, cst.Name):
            return self._funcs[-1].class_names.get(node.value) if self._funcs else None
        if isinstance(node, cst.Attribute) and node.attr.value == "__name__":
            owner = node.value
            if (isinstance(owner, cst.Attribute) and owner.attr.value == "__class__"
                    and isinstance(owner.value, cst.Name)):
                return owner.value.value
            if (isinstance(owner, cst.Call) and isinstance(owner.func, cst.Name) and owner.func.value == "type"
                    and len(owner.args) == 1 and isinstance(owner.args[0].value, cst.Name)):
                return owner.args[0].value.value
        return None

    def _class_name_narrowing(self, test: cst.BaseExpression) -> Dict[str, str]:
        """weight-init code that tests the class name (pytorch/examples' DCGAN):
        `classname.find('BatchNorm') != -1`, `'BatchNorm' in classname`,
        `classname.startswith('BatchNorm')`: narrowed like isinstance() when every torch.nn
        layer whose name matches renames its parameters alike."""
        obj = text = None
        how = "in"
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            op, right = test.comparisons[0].operator, test.comparisons[0].comparator
            left = test.left
            if isinstance(op, cst.In) and isinstance(left, cst.SimpleString):
                obj, text = self._class_name_of(right), left.evaluated_value
            elif (isinstance(left, cst.Call) and isinstance(left.func, cst.Attribute)
                  and left.func.attr.value == "find" and len(left.args) == 1
                  and isinstance(left.args[0].value, cst.SimpleString)
                  and (isinstance(op, cst.NotEqual) and code_of(right).strip() in ("-1", "- 1")
                       or isinstance(op, cst.GreaterThanEqual) and code_of(right).strip() == "0")):
                obj, text = self._class_name_of(left.func.value), left.args[0].value.evaluated_value
        elif (isinstance(test, cst.Call) and isinstance(test.func, cst.Attribute)
              and test.func.attr.value == "startswith" and len(test.args) == 1
              and isinstance(test.args[0].value, cst.SimpleString)):
            obj, text, how = self._class_name_of(test.func.value), test.args[0].value.evaluated_value, "start"
        if obj is None or not isinstance(text, str) or not text:
            return {}
        matched = [q for q in LAYER_FAMILY
                   if (q.rsplit(".", 1)[-1].startswith(text) if how == "start" else text in q.rsplit(".", 1)[-1])]
        fams = {LAYER_FAMILY[q] for q in matched}
        if fams and fams <= {"batchnorm", "affine_norm", "layernorm"}:
            fams = {"affine_norm"} if len(fams) > 1 else fams
        if len(fams) != 1:
            return {}
        fam = fams.pop()
        return {obj: next(k for k, v in LAYER_FAMILY.items() if v == fam)}

    @staticmethod
    def _isinstance_alternatives(test: cst.BaseExpression) -> Optional[cst.Call]:
        """`isinstance(m, A) or isinstance(m, (B, C)) or ...` of one name: `isinstance(m, (A, B, C))`; else None."""
        calls, pending = [], [test]
        while pending:
            t = pending.pop(0)
            if isinstance(t, cst.BooleanOperation) and isinstance(t.operator, cst.Or) and not t.lpar:
                pending[:0] = [t.left, t.right]
            elif (isinstance(t, cst.Call) and isinstance(t.func, cst.Name) and t.func.value == "isinstance"
                  and len(t.args) == 2 and not any(a.star or a.keyword for a in t.args)
                  and isinstance(t.args[0].value, cst.Name)):
                calls.append(t)
            else:
                return None
        if len(calls) < 2 or len({c.args[0].value.value for c in calls}) != 1:
            return None
        types = [e.value for c in calls for e in (c.args[1].value.elements if isinstance(c.args[1].value, cst.Tuple)
                                                  else [cst.Element(c.args[1].value)])]
        return calls[0].with_changes(args=[calls[0].args[0], cst.Arg(cst.Tuple([cst.Element(e) for e in types]))])

    def _type_test(self, test: cst.BaseExpression) -> Optional[cst.Call]:
        """`type(m) in (A, B)` / `type(m) in kinds` (a name bound to a list literal) / `type(m) == A` / `type(m) is
        A`: the isinstance() call that narrows m as they do (grad-cam's FullGrad: `type(layer) in
        bias_target_layers and layer.bias is not None`); `issubclass(m.__class__, A)` / `issubclass(type(m), A)`
        too (swa's bn_update: `issubclass(module.__class__, torch.nn.modules.batchnorm._BatchNorm)`); else None."""
        if (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "issubclass"
                and len(test.args) == 2 and all(a.keyword is None and not a.star for a in test.args)
                and test.func.value not in self._imports and not self._shadowed("issubclass")):
            of, types = test.args[0].value, test.args[1].value
            obj = None
            if isinstance(of, cst.Attribute) and of.attr.value == "__class__" and isinstance(of.value, cst.Name):
                obj = of.value
            elif (isinstance(of, cst.Call) and isinstance(of.func, cst.Name) and of.func.value == "type"
                  and len(of.args) == 1 and isinstance(of.args[0].value, cst.Name)):
                obj = of.args[0].value
            if obj is None:
                return None
            return cst.Call(func=cst.Name("isinstance"), args=[cst.Arg(obj), cst.Arg(types)])
        if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
            return None
        left, target = test.left, test.comparisons[0]
        if not (isinstance(left, cst.Call) and isinstance(left.func, cst.Name) and left.func.value == "type"
                and len(left.args) == 1 and isinstance(left.args[0].value, cst.Name)):
            return None
        types = target.comparator
        if isinstance(target.operator, cst.In):
            if isinstance(types, cst.Name):
                types = self._literal_lists.get(types.value)
            if not isinstance(types, (cst.List, cst.Tuple, cst.Set)) or not types.elements:
                return None
            types = cst.Tuple([cst.Element(e.value) for e in types.elements])
        elif not isinstance(target.operator, (cst.Equal, cst.Is)):
            return None
        return cst.Call(func=cst.Name("isinstance"), args=[cst.Arg(left.args[0].value), cst.Arg(types)])

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        # `isinstance(m, nn.BatchNorm2d) and m.bias is not None`: the operands after the test see m narrowed
        self._narrow.append(self._isinstance_narrowing(node) if isinstance(node.operator, cst.And) else {})

    def leave_BooleanOperation(self, original, updated):
        self._narrow.pop()
        return updated

    def _isinstance_narrowing(self, test: cst.BaseExpression) -> Dict[str, str]:
        by_name = self._class_name_narrowing(test)
        if by_name:
            return by_name
        as_isinstance = self._type_test(test)
        if as_isinstance is not None:
            return self._isinstance_narrowing(as_isinstance)
        if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name)
                and test.func.value == "isinstance" and len(test.args) == 2):
            # `isinstance(m, X) and ...`
            if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
                return self._isinstance_narrowing(test.left)
            # `isinstance(m, nn.BatchNorm3d) or isinstance(m, nn.BatchNorm2d)` (3D-ResNets' DenseNet): as
            # isinstance(m, (nn.BatchNorm3d, nn.BatchNorm2d))
            joined = self._isinstance_alternatives(test)
            return self._isinstance_narrowing(joined) if joined is not None else {}
        obj, types = test.args[0].value, test.args[1].value
        if not isinstance(obj, cst.Name):
            return {}
        elems = [e.value for e in types.elements] if isinstance(types, cst.Tuple) else [types]
        fams = set()
        for e in elems:
            qn = self._torch_qname(e)
            if qn is not None:
                fams.add(LAYER_FAMILY.get(qn, qn))
            elif isinstance(e, cst.Name) and e.value in self._class_attr_types:
                fams.add("class:" + e.value)
            else:
                return {}
        if fams and fams <= {"batchnorm", "affine_norm", "layernorm"}:
            fams = {"affine_norm"} if len(fams) > 1 else fams   # weight/bias rename alike
        if len(fams) != 1:
            # several families (BatchNorm2d and Linear): each parameter access chooses by the cell (mixed_narrowing.py)
            torch_classes = tuple(q for q in (self._torch_qname(e) for e in elems) if q is not None)
            return {obj.value: torch_classes} if any(LAYER_FAMILY.get(q) in PARAM_RENAMES for q in torch_classes) \
                else {}
        fam = fams.pop()
        if fam in PARAM_RENAMES:
            exact = {self._torch_qname(e) for e in elems}
            if len(exact) == 1:   # the class itself: a Conv2d holds no Conv1d's (1, k) kernel_size (timm's init)
                return {obj.value: exact.pop()}
            if exact & set(_CLASS_SPECIFIC_READS):   # (Conv1d, Conv2d): each read chooses by the cell
                return {obj.value: tuple(sorted(exact))}
            # any member of the family: pick a representative torch name
            rep = next(k for k, v in LAYER_FAMILY.items() if v == fam)
            return {obj.value: rep}
        return {obj.value: fam}

    def visit_Assign(self, node: cst.Assign) -> None:
        # `r = torch.add(a, b, out=c)` can become `r = c = ops.cast(ops.add(a, b), c.dtype)`, and
        # `v, i = torch.mode(x, 1, out=o)` `v, i = o = ...`
        if OA.is_out_statement(node.value) and all(OA.plain_target(t.target) for t in node.targets):
            self._out_stmt_calls.add(id(node.value))
        call = node.value
        if (len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) and isinstance(call, cst.Call)
                and isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name)
                and call.func.value.value == node.targets[0].target.value and call.func.attr.value.endswith("_")
                and not call.func.attr.value.endswith("__") and (self._funcs or not self._classes)):
            # `x = x.scatter_(...)`: torch returns x itself, so the statement is the whole-statement form
            # `x.scatter_(...)` (visit_Expr), rebound the same way: `x = <out-of-place form>`
            self._inplace_stmt_calls.add(id(call))
        value = node.value
        while isinstance(value, cst.IfExp):     # `Tensor = torch.cuda.FloatTensor if cuda else torch.Tensor`
            self._bound_values.add(id(value.body))
            value = value.orelse
        self._bound_values.add(id(value))
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            name = node.targets[0].target.value
            if isinstance(node.value, (cst.List, cst.Tuple)):
                self._literal_lists[name] = node.value
            else:
                self._literal_lists.pop(name, None)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._skip.add(id(node.target))
        self._stores.add(id(node.target))
        # the plain names a tuple target binds (`N, F = 600, 24`) are stores too, never an import's reads
        for name in IRB.target_names(node.target):
            self._skip.add(id(name))
            self._stores.add(id(name))

    def visit_AugAssign(self, node) -> None:
        self._skip.add(id(node.target))
        self._stores.add(id(node.target))

    def visit_Del(self, node) -> None:
        self._deleted.add(id(node.target))
        for e in node.target.elements if isinstance(node.target, cst.Tuple) else ():
            self._deleted.add(id(e.value))

    def leave_AugAssign(self, original: cst.AugAssign, updated: cst.AugAssign):
        refused = self._view_write(original, updated)
        if refused is not None:
            return refused
        UT.track_tuple_names(self, [original.target], None)
        self._track_augmented_tensor(original)
        if isinstance(original.target, cst.Subscript) and isinstance(updated.target, cst.Subscript) \
                and self._receiver_kind(original.target.value) != "other":
            # `dots[:, :, k - 1::k] += mask`: the read through every_nth, then the store (stepped_slices.py)
            stepped = SSL.augmented(updated.target, updated.operator, updated.value, COMPAT)
            if stepped is not None:
                self.uses_compat = True
                return stepped.with_changes(semicolon=updated.semicolon)
        updated = GS.wrap_augmented(self, original, updated)   # `self.acc += y` kept across calls: graph_state.py
        op = _STATE_AUG.get(type(updated.operator))
        if self._classes and self._classes[-1].hand_optimizer and self._funcs and isinstance(updated.target, cst.Name) \
                and op is not None:
            # `slow += (fast - slow) * alpha` on a state tensor in a hand-written optimizer: torch changes the
            # tensor the state holds, MindSpore's `+=` makes a new one (user_optimizers.py's augmented_in_place)
            self.uses_compat = True
            return cst.Assign(targets=[cst.AssignTarget(updated.target)], semicolon=updated.semicolon,
                              value=cst.Call(func=self._render_template(f"{COMPAT}.augmented_in_place"), args=[
                                  cst.Arg(updated.target), cst.Arg(cst.SimpleString(repr(op))), cst.Arg(updated.value)]))
        argument = self._augmented_argument(original, updated, op) or self._augmented_holder(original, updated, op)
        if argument is not None:
            return argument
        if id(original) in self._graph_changes_refused:   # `l += [x]` on a shared list: graph_aliases.py
            self.uses_compat = True
            return updated.with_changes(value=GM.refuse_in_graph(
                self, original, updated.value, self._graph_changes_refused[id(original)]))
        if (type(updated.operator) in _INT_DIVISION_OF_AUG and isinstance(updated.target, cst.Name)
                and self._in_compiled_arithmetic() and not self._is_tensor_expr(original.target)
                and not self._is_tensor_expr(original.value)):
            # `n //= d` on ints: `n = _ms_compat.floordiv(n, d)` (msmigrate/graph_idioms.py)
            safe = int_division_graph_safe(updated.target, _INT_DIVISION_OF_AUG[type(updated.operator)](),
                                           updated.value, COMPAT)
            if safe is not None:
                self.uses_compat = True
                return cst.Assign(targets=[cst.AssignTarget(updated.target)], value=safe, semicolon=updated.semicolon)
        if self.complex_operators and not self._known_no_tensors(original.target, original.value):
            plain = CO.augmented(updated, COMPAT)   # `z *= x`, z complex: complex_operators.py
            if plain is not None:
                self.uses_compat = True
                return plain
        mixed = self._mixed_names(original.target) if isinstance(original.target, cst.Attribute) else []
        names = mixed or self._unknown_norm_names(original.target)
        if not names:
            return updated
        # `m.bias += v` under a mixed isinstance() narrowing: setattr(m, <name>, getattr(m, <name>) + v)
        self._record(original, f"{'mixed' if mixed else 'batchnorm'}.{original.target.attr.value}",
                     " / ".join(names), R.CONVERTED,
                     ("the classes of the isinstance() test name this parameter differently in MindSpore"
                      if mixed else "the layer's class is not known here: MindSpore's norm layers name it "
                      + names[0]) + ": updated under the name the cell has, chosen at run time")
        obj = updated.target.value
        op = cst.BinaryOperation(left=MN.chosen_attribute(obj, names),
                                 operator=_BINARY_OF_AUG[type(updated.operator)](), right=updated.value)
        return MN.chosen_assignment(updated.target, names, op)

    def _augmented_argument(self, original: cst.AugAssign, updated: cst.AugAssign, op: Optional[str]):
        """`total += x` on a parameter declared a tensor (`total: Tensor`) of a function outside Cell code (whisper's
        GreedyDecoder.update: `sum_logprobs += current_logprobs * ...`): torch's `+=` changes the caller's tensor,
        MindSpore's makes a new one (the caller's stayed as it was, silently). `total = _ms_compat.augmented_argument(total, 'add', x,
        where)`: on a tensor the new value written into the caller's tensor (write_argument: MigrationError naming
        the line where a gradient is being recorded or a graph compiles), anything else Python's own `+=`."""
        if op is None or not (self._funcs and self._scopes and isinstance(original.target, cst.Name)):
            return None
        name = original.target.value
        # a parameter used for nothing else (`def constrain_mask(mask): mask *= region`, I-JEPA's MaskCollator): the
        # rebinding would be a dead store and the caller's tensor unchanged, in Cell code too (write_argument raises
        # MigrationError naming the line where a graph compiles or a gradient is recorded)
        only = name in self._scopes[-1].get("augmented_only", ())
        if name in ("self", "cls") or not only and (name not in self._scopes[-1].get("tensor_params", ())
                                                    or self._in_cell_code()):
            return None
        self.uses_compat = True
        where = f"{self.module_name}:{self._line(original)}"
        self._record(original, f"augmented assignment {code_of(original.operator).strip()}",
                     f"{COMPAT}.augmented_argument", R.CONVERTED,
                     f"`{name} {code_of(original.operator).strip()} ...` on a parameter: torch changes the caller's "
                     "tensor; the new value is written into it (_ms_compat.write_argument: MigrationError where a "
                     "gradient is being recorded); a value of another type as Python's own augmented assignment")
        value = cst.Call(func=self._render_template(f"{COMPAT}.augmented_argument"), args=[
            cst.Arg(updated.target), cst.Arg(cst.SimpleString(repr(op))), cst.Arg(updated.value),
            cst.Arg(cst.SimpleString(repr(where)))])
        return cst.Assign(targets=[cst.AssignTarget(updated.target)], value=value, semicolon=updated.semicolon)

    def _augmented_holder(self, original: cst.AugAssign, updated: cst.AugAssign, op: Optional[str]):
        """`v *= d` on a name holding a tensor others hold too (`for k, v in ema.state_dict().items(): v *= d`,
        YOLOv5's and timm's model EMAs): torch's augmented assignment changes that tensor, as `v.mul_(d)` would;
        MindSpore's makes a new one, and the EMA's weights stayed as they were, silently. For a name a loop binds to
        a module's own tensors (inplace_holders.module_tensor_names), outside Cell code: `v =
        _ms_compat.augmented_in_place(v, 'mul', d)` (a value of another type: Python's own augmented assignment)."""
        if op is None or not (self._scopes and isinstance(original.target, cst.Name)) or self._in_cell_code():
            return None
        name = original.target.value
        if name not in self._scopes[-1].get("module_tensors", ()) or self._receiver_kind(original.target) == "other":
            return None
        if "grad" in {a.attr.value for a in _attributes_in(original.value)}:
            return None     # `p -= lr * p.grad`: a hand-written update, which the train step takes (manual_update.py)
        self.uses_compat = True
        self._record(original, "Tensor.__i" + op.rstrip("_") + "__", f"{COMPAT}.augmented_in_place", R.CONVERTED,
                     f"`{name} {code_of(original.operator).strip()} ...` on a tensor other holders share (a loop over "
                     "a state_dict, parameters or a list): the new value is written into it, as torch's augmented "
                     "assignment changes it; a value of another type as Python's own")
        value = cst.Call(func=self._render_template(f"{COMPAT}.augmented_in_place"), args=[
            cst.Arg(updated.target), cst.Arg(cst.SimpleString(repr(op))), cst.Arg(updated.value)])
        return cst.Assign(targets=[cst.AssignTarget(updated.target)], value=value, semicolon=updated.semicolon)

    def visit_AnnAssign(self, node) -> None:
        self._skip.add(id(node.target))

    def _torch_target(self, original: cst.Assign):
        for t in original.targets:
            qn = self._torch_qname(t.target)
            if qn is not None:
                return qn, t.target
        return None

    def leave_BinaryOperation(self, original: cst.BinaryOperation, updated: cst.BinaryOperation):
        if isinstance(updated.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.Divide)):
            # `rhos * (td - v).numpy()`: torch's tensor takes the array as a tensor; MindSpore's Mul refuses it
            for side, other in (("left", "right"), ("right", "left")):
                if _numpy_read(getattr(original, side)) and not _numpy_read(getattr(original, other)) \
                        and self._is_tensor_expr(getattr(original, other)):
                    self.need.add("ms")
                    wrapped = cst.Call(func=cst.parse_expression(f"{self.names['ms']}.Tensor"),
                                       args=[cst.Arg(getattr(updated, side).with_changes(lpar=[], rpar=[]))])
                    updated = updated.with_changes(**{side: wrapped})
        if isinstance(updated.operator, cst.BitXor) and self._in_forward():   # msmigrate/graph_idioms.py
            self.uses_compat = True
            return xor_graph_safe(updated, COMPAT)
        if isinstance(updated.operator, cst.Modulo) and self._in_forward():
            safe = percent_format_graph_safe(updated, COMPAT)   # `"%d" % x.shape[0]`: msmigrate/graph_scalars.py
            if safe is not None:
                self.uses_compat = True
                return safe
        if type(updated.operator) in INT_DIVISIONS and self._in_compiled_arithmetic() \
                and not self._is_tensor_expr(original.left) and not self._is_tensor_expr(original.right):
            safe = int_division_graph_safe(updated.left, updated.operator, updated.right, COMPAT)
            if safe is not None:   # `n % 97` on ints above 2**24: msmigrate/graph_idioms.py
                self.uses_compat = True
                return safe.with_changes(lpar=updated.lpar, rpar=updated.rpar)
        if isinstance(updated.operator, cst.Power) and self._in_graph_code() \
                and not self._is_tensor_expr(original.left):   # `n ** -1` on ints: msmigrate/graph_idioms.py
            safe = power_graph_safe(updated, COMPAT)
            if safe is not None:
                self.uses_compat = True
                return safe
        if isinstance(updated.operator, cst.MatrixMultiply) and not all(
                self._receiver_kind(e) == "other" or UM.numpy_call(self, e) for e in (original.left, original.right)):
            # `a @ b` of tensors or of values that may be ones: torch's zeros when the contracted dim is empty
            # (compat_parts/empty_products.py; `@` itself for anything else)
            m = R.lookup("Tensor.__matmul__")
            self._record(original, m.source, m.target, m.status, m.note)
            left, right = (code_of(e.with_changes(lpar=[], rpar=[])).strip() for e in (updated.left, updated.right))
            # a sparse matrix's `@` (sparse_products.py)
            return SPP.retarget(self, self._render_template(f"{m.target}({left}, {right})")).with_changes(
                lpar=updated.lpar, rpar=updated.rpar)
        if self.complex_operators and not self._known_no_tensors(original.left, original.right):
            call = CO.operator(updated, COMPAT, in_cell=self._in_cell_code())   # `z * x`, z complex: complex_operators.py
            if call is not None:
                self.uses_compat = True
                return call
        return updated

    def _known_no_tensors(self, *operands) -> bool:
        """Every operand known not to be a tensor (`4 * 3 / 2`, `"ab" * 2`)."""
        for e in operands:
            if isinstance(e, cst.BinaryOperation):
                e = [e.left, e.right]
            elif isinstance(e, cst.UnaryOperation):
                e = [e.expression]
            else:
                if self._receiver_kind(e) != "other":
                    return False
                continue
            if not self._known_no_tensors(*e):
                return False
        return True

    def leave_Comparison(self, original: cst.Comparison, updated: cst.Comparison):
        # `type(x) in (tuple, list)`: as isinstance() and hasattr(), which GRAPH mode folds (graph_idioms.py)
        exact = exact_type_test(updated, lambda n: n in self._imports or self._shadowed(n), COMPAT)
        if exact is not None:
            self.uses_compat = True
            return exact.with_changes(lpar=updated.lpar or exact.lpar, rpar=updated.rpar or exact.rpar)
        return updated

    def leave_ComparisonTarget(self, original: cst.ComparisonTarget, updated: cst.ComparisonTarget):
        if isinstance(updated.operator, (cst.Is, cst.IsNot)) and code_of(updated.comparator).startswith("_ms_compat.") \
                and (self._torch_qname(original.comparator) or "").startswith("torch.nn."):
            # `type(m) is nn.ReLU`: the class as a value is the helper's (module_tree.TorchClass), whose == answers
            # for MindSpore's class and its any_batch form; `is` would always be False
            op = cst.Equal() if isinstance(updated.operator, cst.Is) else cst.NotEqual()
            return updated.with_changes(operator=op.with_changes(
                whitespace_before=updated.operator.whitespace_before,
                whitespace_after=updated.operator.whitespace_after))
        if self._in_graph_code():   # `x in {2, 3}`: msmigrate/graph_idioms.py
            return set_membership_as_tuple(updated) or updated
        return updated

    def leave_UnaryOperation(self, original: cst.UnaryOperation, updated: cst.UnaryOperation):
        # `~x` on an integer tensor is bitwise in torch, a logical not in MindSpore
        if isinstance(updated.operator, cst.BitInvert) and self._is_tensor_expr(original.expression):
            m = R.lookup("Tensor.__invert__")
            self._record(original, m.source, "_ms_compat.invert", m.status, m.note)
            self.uses_compat = True
            return self._render_template(f"_ms_compat.invert({code_of(updated.expression).strip()})")
        return updated

    def visit_Subscript(self, node: cst.Subscript) -> None:
        TN.visit_subscript(self, node)      # `datasets.__dict__[name]`: torch_namespace.py

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript):
        by_name = TN.leave_subscript(self, original, updated)
        if by_name is not None:
            return by_name
        if id(original) not in self._skip:   # `conv1d.weight[:, 0, :]` read: conv1d_weights.py
            updated = CW.subscript(self, original, updated) or updated
        params = PC.subscript(self, original, updated)   # `self.plist[i]` (ParameterList/Dict)
        if params is not None:
            return params
        # Dataset[T] -> object: the generic parameters of a base that became `object` go
        if (isinstance(updated.value, cst.Name) and updated.value.value == "object"
                and self._torch_qname(original.value) is not None):
            return updated.value
        if self._receiver_kind(original.value) != "other":   # `w[mask, :]`: w[mask]
            updated = _without_trailing_full_slices(updated)
        updated = self._tensor_slice_bounds(original, updated)
        # `x[:, 1::2]` read from a tensor of three or more axes: its gradient (stepped_slices.py)
        if self._receiver_kind(original.value) != "other" and id(original) not in self._stores \
                and id(original) not in self._deleted:
            stepped = SSL.read(updated, COMPAT)
            if stepped is not None:
                self.uses_compat = True
                return stepped
        # `x[range(n), y]` (range_indices.py): not on a value known to be no tensor
        if self._receiver_kind(original.value) != "other" and not any("range" in s["bound"] for s in self._scopes):
            updated = RI.listed(updated) or updated
        # `x[i, pos[0]]`, pos a NumPy array (numpy_indices.py)
        kind = self._receiver_kind(original.value)
        if kind != "other":
            aliases = self._numpy_aliases()
            host = NI.wrapped(updated, aliases, self._numpy_values(), COMPAT, kind == "tensor") if aliases else None
            if host is not None:
                self.uses_compat = True
                return host
        return updated

    def _tensor_slice_bounds(self, original: cst.Subscript, updated: cst.Subscript) -> cst.Subscript:
        """PaLM's train.py: `start = torch.randint(0, n - seq_len, (1,))` then `data[start: start + seq_len + 1]`.
        torch takes a one-element integer tensor as a slice bound (Tensor.__index__); MindSpore's indexing refuses
        one of shape (1,) ("Only integer scalar tensors can be converted to a scalar index"). A bound known to be
        a tensor is read through its __index__(), torch's conversion (an error for a float tensor or one of several
        elements). Not in a Module's forward, nor in a loop calling backward() (a statement a train step takes,
        both compiled in GRAPH mode, which has no such conversion of a traced tensor)."""
        if self._in_forward() or len(original.slice) != len(updated.slice) \
                or any(TL._calls_method(loop, "backward") for loop in self._loop_nodes):
            return updated
        elements = list(updated.slice)
        changed = False
        for k, (o, u) in enumerate(zip(original.slice, updated.slice)):
            if not (isinstance(o.slice, cst.Slice) and isinstance(u.slice, cst.Slice)):
                continue
            parts = {}
            for part in ("lower", "upper", "step"):
                ob, ub = getattr(o.slice, part), getattr(u.slice, part)
                if ob is not None and ub is not None and self._tensorish(ob):
                    value = ub if isinstance(ub, (cst.Name, cst.Attribute, cst.Subscript, cst.Call)) else \
                        ub.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
                    parts[part] = cst.Call(func=cst.Attribute(value=value, attr=cst.Name("__index__")))
            if parts:
                elements[k] = u.with_changes(slice=u.slice.with_changes(**parts))
                changed = True
        return updated.with_changes(slice=elements) if changed else updated

    def _view_write(self, original, updated):
        """`rows = s[1:]; rows[0] = v` / `tail *= 2` with the other name read after: torch writes through the
        shared memory, MindSpore's slice is a copy in a graph (and `*=` rebinds in both modes), so the other
        name would keep its values, silently; refused here (inplace_views.py), the statement raising when run."""
        why = self._view_conflicts.get(id(original))
        if why is None:
            return None
        root = original.target if isinstance(original, cst.AugAssign) else \
            next(t.target for t in original.targets if not isinstance(t.target, cst.Name))
        while isinstance(root, cst.Subscript):
            root = root.value
        names = self._view_names[id(original)]
        if self._funcs and set(names) & self._funcs[-1].containers:
            return None   # `part = items[1:]; part[0] = x`: a list's slice is a copy in Python too
        kinds = {self._receiver_kind(cst.parse_expression(n)) for n in names}
        if "other" in kinds or "tensor" not in kinds and not self._in_cell_code():
            return None   # a NumPy array's slice is a view as in torch: the converted code writes through it too
        api = "Tensor.__setitem__" if isinstance(original, cst.Assign) or root is not original.target \
            else "Tensor.__i" + _AUG_DUNDER.get(type(original.operator).__name__, "op") + "__"
        return updated.with_changes(value=self._todo(original, api, why))

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign):
        refused = self._view_write(original, updated)
        if refused is not None:
            return refused
        self._rebind_import(original)
        if self._stores_into_item(original):
            # `rows[k] = value`: torch drops the value's leading size-1 dimensions first, which MindSpore refuses;
            # _ms_compat's Tensor.__setitem__ does it (_unit_dims_off), so the module imports the helper
            self.uses_compat = True
        child = self._child_store(original, updated)
        if child is not None:
            return child
        out = self._leave_assign(original, updated)
        if isinstance(out, cst.Assign) and RLV.is_leaf_factory(original, getattr(self, "_leaf_factories", set())):
            out = out.with_changes(value=RLV.wrap(out.value))   # unwrapped at the end where nothing records
        held = self._held_optimizer(original, out)
        return held if held is not None else out

    def _stores_into_item(self, original: cst.Assign) -> bool:
        """A store `x[index] = value` into what may be a tensor, of a value that may be one (no literal number,
        string or constant)."""
        value = original.value
        if isinstance(value, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString,
                              cst.FormattedString)) or isinstance(value, cst.Name) and value.value in (
                                  "True", "False", "None"):
            return False
        return any(isinstance(t.target, cst.Subscript) and self._receiver_kind(t.target.value) != "other"
                   for t in original.targets)

    def _child_store(self, original: cst.Assign, updated: cst.Assign) -> Optional[cst.Expr]:
        """`model._modules[name] = layer` (a child swapped by name): `_ms_compat.set_child(model, name, layer)`,
        which keeps a SequentialCell's list of the cells it runs in step (the read `model._modules` alone is
        renamed `_cells`: a store into it would leave the old layer running in a SequentialCell)."""
        if len(original.targets) != 1 or len(updated.targets) != 1:
            return None
        target, done = original.targets[0].target, updated.targets[0].target
        if not (isinstance(target, cst.Subscript) and isinstance(target.value, cst.Attribute)
                and target.value.attr.value == "_modules" and len(target.slice) == 1
                and isinstance(target.slice[0].slice, cst.Index) and not self._own_plain_attribute(target.value)
                and isinstance(done, cst.Subscript) and isinstance(done.value, cst.Attribute)):
            return None
        self._record(original, "Module._modules", f"{COMPAT}.set_child", R.CONVERTED,
                     "a child stored by name (`m._modules[name] = layer`): into the Cell's _cells, a "
                     "SequentialCell's list of the cells it runs rebuilt from it")
        self.sites[-1].test = "tests/test_heldout35_programs.py::test_child_swapped_by_name_runs_in_a_sequential"
        self.uses_compat = True
        return cst.Expr(cst.Call(func=cst.parse_expression(f"{COMPAT}.set_child"), args=[
            cst.Arg(done.value.value), cst.Arg(done.slice[0].slice.value), cst.Arg(updated.value)]))

    def _rebind_import(self, original: cst.Assign) -> None:
        """`import torch.optim as optim` and then, in the module body, `optim = torch.optim.Adam(...)` (g-mlp's
        train.py): from that statement on the name holds the optimizer, not the module, so `optim.step()` is its
        step and the statement an assignment. A module-level statement that binds an imported name (torch's, or a
        module of the project's own) to a computed value (a call, an operation: anything but a name or attribute, which may alias the module on)
        drops the name from this file's import table for the statements after it (the target included; the
        value, already converted, read the import). msmigrate/import_rebinds.py."""
        if self._funcs or self._classes:
            return      # a function's own binding: local to all of it (visit_FunctionDef's "rebound")
        # any import, a module of the project's own too (crnn.pytorch's train.py: `import models.crnn as crnn`,
        # then `crnn = crnn.CRNN(...)`: `crnn.parameters()` is the model's, not the module's)
        names = [n for n in IRB.rebinds_at_module_level(original) if self._imports.get(n)]
        if names:
            self._imports = {a: q for a, q in self._imports.items() if a not in names}
            self._torch_heads = self._torch_heads - set(names)

    def _held_optimizer(self, original: cst.Assign, out) -> Optional[cst.Expr]:
        """`self.optimizer = optim.Adam(self.parameters())` in a module's method (an RL agent, a layer that trains
        itself): torch's optimizer is no submodule, but a MindSpore optimizer is a Cell, and a Cell attribute
        registers it: the module's parameters and state would list its moments (and rename its parameters
        `optimizer.fc.weight`). It is set as a plain attribute instead."""
        if not (self._classes and self._classes[-1].is_cell and self._funcs and isinstance(out, cst.Assign)
                and len(original.targets) == 1 and isinstance(original.value, cst.Call)):
            return None
        target = original.targets[0].target
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                and target.value.value == "self"):
            return None
        qn = self._torch_qname(original.value.func) or ""
        if not (qn.startswith("torch.optim.") and "lr_scheduler" not in qn and qn.rsplit(".", 1)[-1][:1].isupper()):
            return None
        held = cst.parse_expression(f'object.__setattr__(self, "{target.attr.value}", x)')
        return cst.Expr(held.with_changes(args=[*held.args[:2], cst.Arg(out.value)]))

    def _leave_assign(self, original: cst.Assign, updated: cst.Assign):
        if id(original) in self._record_writes:     # a record's field in graph code: graph_records.py
            return GRD.field_write(self, original, updated, self._record_writes[id(original)])
        updated = CW.stored_value(self, original, updated) or updated   # `conv1d.weight.data = t`: conv1d_weights.py
        whole = (DW.whole_store(self, original, updated) or DW.rows_store(self, original, updated)
                 or DW.data_store(self, original, updated))   # data_writes.py
        if whole is not None:
            return whole
        setting = LS.store(self, original, updated)   # `bn.momentum = 0.03`, `bn.eps = 1e-3`: layer_settings.py
        if setting is not None:
            return setting
        # `r = x.topk(2)` then `r.values`: r holds a plain (values, indices) tuple (unmapped_tensor_api.py)
        UT.track_tuple_names(self, [t.target for t in original.targets], updated.value)
        out_target = self._out_targets.get(id(updated.value))
        if out_target is not None and out_target[1] is updated.value:   # out= also rebinds its name
            return updated.with_changes(targets=[*updated.targets, cst.AssignTarget(target=out_target[0])])
        if id(original) in self._graph_dict_pops:   # `v = kwargs.pop('k', d)`: graph_mutations.py
            split = GM.split_dict_pop(updated, COMPAT)
            if split is not None:
                self.uses_compat = True
                return split
        if id(original) in self._graph_changes_refused:   # `cache['k'] = v` on an argument: graph_mutations.py
            self.uses_compat = True
            updated = updated.with_changes(value=GM.refuse_in_graph(
                self, original, updated.value, self._graph_changes_refused[id(original)]))
        todo = UT.attribute_store(self, original)   # `x.grad_fn = g` on a tensor: a TODO (requires_grad: a helper)
        if todo is not None:
            return todo
        for t in updated.targets:
            ph = PH.find_placeholder(t.target)
            if ph is not None:   # `a, x.requires_grad, c = z`: a TODO stored into (a call is no target): raises
                return cst.Expr(value=PH.reached(ph))
        target = original.targets[0].target if len(original.targets) == 1 else None
        mixed = self._mixed_names(target) if isinstance(target, cst.Attribute) else []
        names = mixed or self._unknown_norm_names(target)   # `layers[1].running_mean = v`, its class not known
        if names:       # `m.bias = v` under isinstance(m, (nn.BatchNorm2d, nn.Linear)): mixed_narrowing.py
            self._record(original, f"{'mixed' if mixed else 'batchnorm'}.{target.attr.value}", " / ".join(names),
                         R.CONVERTED, ("the classes of the isinstance() test name this parameter differently in "
                                       "MindSpore" if mixed else "the layer's class is not known here: MindSpore's "
                                       "norm layers name it " + names[0]) + ": set under the name the cell has, "
                         "chosen at run time")
            return MN.chosen_assignment(updated.targets[0].target, names, updated.value)
        hit = self._torch_target(original)
        if hit is not None:
            qn, node = hit
            m = R.lookup(qn)
            if m is not None and m.target is not None and len(original.targets) == 1 and (
                    m.target == "drop" or m.target.startswith("expr:")):
                # a torch switch set by assignment: its record says what the statement becomes
                if m.target == "drop":
                    self._record(original, qn, "(removed)", m.status, m.note)
                    return cst.RemovalSentinel.REMOVE
                text = m.target[5:].replace("{value}", code_of(updated.value).strip())
                self._record(original, qn, shorten(text, 60), m.status, m.note)
                return cst.Expr(value=self._render_template(text))
            if qn.startswith(("torch.backends.", "torch.cuda.")):
                self._record(original, qn, "(removed)", R.CONVERTED,
                             "a torch backend switch; MindSpore has no counterpart to set")
                return cst.RemovalSentinel.REMOVE
            if qn.startswith(COMPILER_CONFIGS):
                self._record(original, qn, "(removed)", R.CONVERTED, COMPILER_CONFIG_NOTE)
                return cst.RemovalSentinel.REMOVE
            return cst.Expr(value=self._todo(original, qn, "assigns a torch global setting"))
        value = original.value
        is_tensor = self._is_tensor_expr(value)
        layer = self._torch_qname(value.func) if isinstance(value, cst.Call) else None
        built = MC.constructed_then_moved(value)
        if layer is None and built is not None and LC.torch_layer(self._torch_qname(built.func)):
            # `criterion = nn.CrossEntropyLoss().cuda()`: the layer itself (its later `.half()` casts a module)
            layer = self._torch_qname(built.func)
        wrapper = self._optimizer_wrapper(value)
        if wrapper is not None:      # ScheduledOptim(torch.optim.Adam(...), ...): stepped through its methods
            self.optimizer_wrappers.update((code_of(t.target).strip(), wrapper) for t in original.targets)
        if layer and layer.startswith("torch.optim.") and ".lr_scheduler." not in layer:
            self.optimizers.update(code_of(t.target).strip() for t in original.targets)
            if layer == "torch.optim.LBFGS":
                self.closure_only_optimizers.update(code_of(t.target).strip() for t in original.targets)
        cell_call = self._is_cell_call(value)
        numpy_made = UM.numpy_call(self, value)
        for t in original.targets:
            tgt = t.target
            names = []
            if isinstance(tgt, cst.Name):
                names = [tgt.value]
            elif isinstance(tgt, (cst.Tuple, cst.List)):
                names = [e.value.value for e in tgt.elements if isinstance(e.value, cst.Name)]
            if self._funcs:
                ctx = self._funcs[-1]
                owner = self._class_name_of(value) if not isinstance(value, cst.Name) else None
                for n in names:
                    if owner is not None and isinstance(tgt, cst.Name):
                        ctx.class_names[n] = owner
                    else:
                        ctx.class_names.pop(n, None)
                if (isinstance(tgt, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List))
                        and len(tgt.elements) == len(value.elements)):
                    for te, ve in zip(tgt.elements, value.elements):
                        if isinstance(te.value, cst.Name):
                            if self._is_tensor_expr(ve.value):
                                ctx.tensors.add(te.value.value)
                            else:
                                ctx.tensors.discard(te.value.value)
                    if self._classes:
                        self._self_attr_types(tgt, value, layer, is_tensor, cell_call)
                    continue
                for n in names:
                    # the latest binding decides: `net = DDP(net)` with an unknown DDP makes `net` unknown
                    # again (a second pass, where the wrapper may be gone, must not decide differently)
                    ctx.tensors.discard(n)
                    ctx.cells.discard(n)
                    ctx.layers.pop(n, None)
                    for stale in [k for k in ctx.layers if k.startswith(n + "[")]:
                        del ctx.layers[stale]     # the entries of the Sequential the name held before
                    ctx.others.discard(n)
                    if numpy_made and isinstance(tgt, cst.Name):
                        ctx.others.add(n)   # `arr = np.ones(3)`: arr.repeat/transpose are NumPy's (untyped_methods)
                    ctx.containers.discard(n)
                    if isinstance(tgt, cst.Name) and isinstance(value, (cst.List, cst.ListComp, cst.Dict, cst.DictComp,
                                                                        cst.Set, cst.SetComp)):
                        ctx.containers.add(n)   # `items = [1, 2]`: its slice is a copy (inplace_views.py)
                    if isinstance(tgt, cst.Name) and isinstance(value, cst.ListComp) and isinstance(value.elt, cst.Call):
                        entry = self._torch_qname(value.elt.func)
                        if entry is not None and R.lookup(entry) is not None:
                            # `embs = [nn.Embedding(1, d) for i in range(4)]`: the entries of nn.ModuleList(embs)
                            # (segment-anything's PromptEncoder, `self.point_embeddings[0].weight`)
                            ctx.layers[f"{n}[*]"] = entry
                    if isinstance(tgt, cst.Name) and (self._plain_instance(value) or layer in _PLAIN_NN_RESULTS):
                        ctx.others.add(n)   # `trainer = Trainer(...)`: trainer.train() is its own
                    if (layer in LAYER_FAMILY or LC.torch_layer(layer)) and isinstance(tgt, cst.Name):
                        # its parameters by torch's names (_rename_param_attr), `m(input=x)` (layer_calls.py)
                        ctx.layers[n] = layer
                        # `net = nn.Sequential(nn.Embedding(...), ...)`: net[0]'s type (`net[0].weight`, PaLM's tie)
                        ctx.layers.update(PC.sequence_entry_types(self, n, layer, value))
                    elif isinstance(tgt, cst.Name) and self._module_class_call(value):
                        ctx.layers[n] = "class:" + value.func.value    # `net.emb.weight`: the class's attributes
                    if is_tensor or layer in _TENSOR_FACTORIES:   # nn.Parameter(...) is a tensor
                        ctx.tensors.add(n)
                    elif (layer and layer not in _PLAIN_NN_RESULTS) or cell_call:
                        ctx.cells.add(n)
            elif not self._classes:   # a script's top level: `label = torch.full(...)`, `seq = Sequence()`
                for n in names:
                    self._module_tensors.discard(n)
                    self._module_cells.discard(n)
                    self._module_others.discard(n)
                    if isinstance(tgt, cst.Name) and (self._plain_instance(value) or layer in _PLAIN_NN_RESULTS):
                        self._module_others.add(n)
                    if is_tensor and isinstance(tgt, (cst.Name, cst.Tuple, cst.List)):
                        self._module_tensors.add(n)     # `_, pred = torch.max(out, 1)`: as in a function
                    elif isinstance(tgt, cst.Name) and (cell_call or layer in LAYER_FAMILY or (
                            layer and layer.startswith("torch.nn.") and layer not in _TENSOR_FACTORIES
                            and layer not in _PLAIN_NN_RESULTS
                            and layer.rsplit(".", 1)[-1][:1].isupper())):
                        self._module_cells.add(n)
            if self._classes:
                self._self_attr_types(tgt, value, layer, is_tensor, cell_call)
        if self._in_graph_code():   # `b, *axis, device = *x.shape, x.device`: graph_device_unpacks.py
            return split_device_unpack(updated) or updated
        return updated

    def _module_returning_methods(self, node: cst.ClassDef) -> Dict[str, str]:
        """Methods of the class whose every return gives a torch layer or container the method builds: `return
        nn.Sequential(*layers)`, or a name it bound to one (`block = nn.Sequential()`, add_module calls, `return
        block`: pytorch-classification's ResNeXt.block). `self.stage = self.block(...)` then holds a module."""
        found: Dict[str, str] = {}
        if not isinstance(node.body, cst.IndentedBlock):
            return found
        for fn in node.body.body:
            if not isinstance(fn, cst.FunctionDef) or not isinstance(fn.body, cst.IndentedBlock):
                continue
            made: Dict[str, str] = {}
            returns: List[Optional[str]] = []
            for st in fn.body.body:
                small = st.body[0] if isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1 else None
                if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                        and isinstance(small.targets[0].target, cst.Name):
                    name = small.targets[0].target.value
                    made.pop(name, None)
                    if isinstance(small.value, cst.Call):
                        q = self._torch_qname(small.value.func) or ""
                        if q.startswith("torch.nn.") and q.rsplit(".", 1)[-1][:1].isupper() and R.lookup(q):
                            made[name] = q
                elif isinstance(small, cst.Return) and small.value is not None:
                    v = small.value
                    q = None
                    if isinstance(v, cst.Name):
                        q = made.get(v.value)
                    elif isinstance(v, cst.Call):
                        q = self._torch_qname(v.func) or ""
                        q = q if q.startswith("torch.nn.") and q.rsplit(".", 1)[-1][:1].isupper() and R.lookup(q) \
                            else None
                    returns.append(q)
            # a return nested in a compound statement (or a nested function's): not followed, the method left out
            every: List[cst.Return] = []

            class _Returns(cst.CSTVisitor):
                def visit_Return(self, r: cst.Return) -> None:
                    every.append(r)
            fn.body.visit(_Returns())
            if returns and all(returns) and len(set(returns)) == 1 and len(every) == len(returns):
                found[fn.name.value] = returns[0]
        return found

    def _self_attr_types(self, tgt, value, layer, is_tensor, cell_call) -> None:
        """`self.x = ...` in a class: what self.x holds (a tensor, a torch layer, a Module class of the project), for
        the calls of its methods (`self.net.forward(x)` is `self.net.construct(x)`). A tuple of targets bound to a
        tuple of values (`self.eval_net, self.target_net = Net(), Net()`) element by element."""
        if isinstance(tgt, (cst.Tuple, cst.List)):
            if isinstance(value, (cst.Tuple, cst.List)) and len(tgt.elements) == len(value.elements):
                for te, ve in zip(tgt.elements, value.elements):
                    v = ve.value
                    self._self_attr_types(te.value, v, self._torch_qname(v.func) if isinstance(v, cst.Call) else None,
                                          self._is_tensor_expr(v), self._is_cell_call(v))
            return
        if not (isinstance(tgt, cst.Attribute) and isinstance(tgt.value, cst.Name) and tgt.value.value == "self"):
            return
        if layer in _TENSOR_FACTORIES or is_tensor:
            self._classes[-1].attr_types[tgt.attr.value] = "tensor"
        elif layer and R.lookup(layer) is not None:   # an unmapped call tells nothing
            types = self._classes[-1].attr_types
            for stale in [k for k in types if k.startswith(tgt.attr.value + "[")]:
                del types[stale]    # entries of what the attribute held before
            types[tgt.attr.value] = layer
            # `self.transformer = nn.ModuleDict(dict(wte=nn.Embedding(...)))`: self.transformer.wte's type
            types.update(PC.dict_entry_types(self, tgt.attr.value, layer, value))
            # `self.net = nn.Sequential(..., nn.BatchNorm2d(c))`: self.net[-1]'s type
            types.update(PC.sequence_entry_types(self, tgt.attr.value, layer, value))
        elif cell_call and isinstance(value.func, cst.Name):
            self._classes[-1].attr_types[tgt.attr.value] = "class:" + value.func.value
        elif (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
              and isinstance(value.func.value, cst.Name) and value.func.value.value == "self"
              and value.func.attr.value in self._classes[-1].module_methods):
            # `self.stage_1 = self.block(...)`, a method of the class returning the container it builds
            self._classes[-1].attr_types[tgt.attr.value] = self._classes[-1].module_methods[value.func.attr.value]

    def _track_augmented_tensor(self, node: cst.AugAssign) -> None:
        """`acc += (pred == y).float().mean()`: from here on `acc` holds a tensor (a number plus a tensor is one),
        whatever it was bound to before (`acc = 0.0`): `f"{acc / i:.6f}"` formats it through format_value."""
        if not isinstance(node.target, cst.Name) or not self._tensorish(node.value):
            return
        name = node.target.value
        if self._funcs:
            self._funcs[-1].tensors.add(name)
            self._funcs[-1].others.discard(name)
        elif not self._classes:
            self._module_tensors.add(name)
            self._module_others.discard(name)

    def _module_class_call(self, node: cst.BaseExpression) -> bool:
        """`Net(...)` of a Module class this file defined above (its attribute types are known)."""
        return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) \
            and node.func.value in self._class_attr_types \
            and not (self._funcs and node.func.value in self._scopes[-1]["bound"])

    def _plain_instance(self, node: cst.BaseExpression) -> bool:
        """`Trainer(...)` of a project class that is surely no Module (ProjectIndex.is_plain_class)."""
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name)):
            return False
        if self._funcs and node.func.value in self._scopes[-1]["bound"]:
            return False    # the function binds the name itself: not the class
        return self.index.is_plain_class(self.module_name, node.func.value)

    def _optimizer_wrapper(self, node: cst.BaseExpression):
        """(attribute, methods) when `node` builds a project class that wraps an optimizer
        (ProjectIndex.optimizer_wrapper), else None."""
        if not isinstance(node, cst.Call):
            return None
        try:
            name = code_of(node.func).strip()
        except Exception:   # noqa: BLE001 - an expression code_of cannot render is no class name
            return None
        if not re.fullmatch(r"[A-Za-z_][\w.]*", name):
            return None
        return self.index.optimizer_wrapper(self.module_name, name)

    def _is_cell_call(self, node: cst.BaseExpression) -> bool:
        """`Net(...)` for a project Module class, also followed by `.to(...)`/`.cuda()`/`.cpu()`/`.train()`/
        `.eval()`, which return the module itself (and disappear or stay as they are in the output)."""
        if not isinstance(node, cst.Call):
            return False
        if isinstance(node.func, cst.Name):
            return self.index.is_cell_class(self.module_name, node.func.value)
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in ("to", "cuda", "cpu", "train", "eval"):
            recv = node.func.value
            if isinstance(recv, cst.Name):
                return bool(self._funcs) and recv.value in self._funcs[-1].cells
            return self._is_cell_call(recv)
        return False

    def _is_tensor_expr(self, node: cst.BaseExpression) -> bool:
        if isinstance(node, cst.Name):
            if not self._funcs and not self._classes:
                return node.value in self._module_tensors
            return bool(self._funcs) and node.value in self._funcs[-1].tensors
        if isinstance(node, cst.Call):
            func = node.func
            qn = self._torch_qname(func)
            if qn in ("torch.autograd.Variable", "torch.autograd.variable.Variable"):
                return True   # Variable(x) is the tensor x since torch 0.4
            if qn in TENSOR_CLASS_CALLS:
                return True   # `torch.Tensor([[1., 2.]])`, `torch.LongTensor(3)`: a tensor made by its class
            if qn and qn.startswith("torch.nn.init.") and qn.endswith("_") and not qn.rsplit(".", 1)[-1].startswith("_"):
                return True   # `Q = torch.nn.init.orthogonal_(torch.randn(d, d))`: an initialiser returns its tensor
            if qn:
                last = qn.rsplit(".", 1)[-1]
                return last[:1].islower() and not qn.startswith(("torch.nn.init", "torch.cuda", "torch.distributed", "torch.jit", "torch.backends",
                                                                  "torch.device"))
            if isinstance(func, cst.Attribute):
                if func.attr.value in NON_TENSOR_METHOD_RESULTS:
                    return False
                recv = func.value
                if isinstance(recv, cst.Attribute) and isinstance(recv.value, cst.Name) and recv.value.value == "self":
                    return self._in_forward()
                if isinstance(recv, cst.Name) and recv.value == "self":
                    return self._in_forward()
                return self._is_tensor_expr(recv)
            if isinstance(func, cst.Name) and self._funcs and func.value in self._funcs[-1].cells:
                return func.value not in self._funcs[-1].__dict__.get("any_module_calls", ())
            if isinstance(func, cst.Name) and func.value == "next" and _first_parameter(node) \
                    and not self._shadowed("next") and "next" not in self._imports:
                return True   # `weight = next(self.parameters()).data` (awd-lstm-lm's init_hidden): a parameter
            return False
        if isinstance(node, cst.BinaryOperation):
            return self._is_tensor_expr(node.left) or self._is_tensor_expr(node.right)
        if isinstance(node, cst.UnaryOperation):
            return self._is_tensor_expr(node.expression)
        if isinstance(node, cst.Subscript):
            return self._is_tensor_expr(node.value)
        if isinstance(node, cst.IfExp):
            return self._is_tensor_expr(node.body) or self._is_tensor_expr(node.orelse)
        if isinstance(node, cst.Attribute) and node.attr.value in ("T", "mT", "data", "real", "imag"):
            return self._is_tensor_expr(node.value)
        if isinstance(node, cst.Attribute) and node.attr.value == "grad" and isinstance(node.value, cst.Name):
            return self._is_tensor_expr(node.value)   # `d_p = p.grad.data` of a param group's parameter
        if (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self"
                and self._classes):
            return self._classes[-1].attr_types.get(node.attr.value) == "tensor"
        return False

    def _is_autograd_function(self, node: cst.BaseExpression) -> bool:
        """`Fn` in `Fn.apply(...)`: a class of this file or an imported project class deriving from
        torch.autograd.Function."""
        if not isinstance(node, (cst.Name, cst.Attribute)):
            return False
        qname = self._qname_any(node)
        if qname is None and isinstance(node, cst.Name):
            qname = f"{self.module_name}.{node.value}"
        return qname is not None and self.index.is_autograd_function(qname)

    def _own_backward_objects_of(self, module: cst.Module) -> Set[str]:
        """Names the module binds (anywhere, `name = C(...)`) to an object of a project class that is no Module and
        defines backward() itself (ProjectIndex.own_backward_class): encodec's `balancer = Balancer(weights)`."""
        found: Set[str] = set()
        owner = self

        class _V(cst.CSTVisitor):
            def visit_Assign(self, node: cst.Assign) -> None:
                if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
                        and isinstance(node.value, cst.Call):
                    qn = owner._qname_any(node.value.func)
                    if qn is None and isinstance(node.value.func, cst.Name):
                        qn = f"{owner.module_name}.{node.value.func.value}"   # a class of this module
                    if qn is not None and owner.index.own_backward_class(qn):
                        found.add(node.targets[0].target.value)
        module.visit(_V())
        return found

    def _receiver_kind(self, node: cst.BaseExpression) -> str:
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.List,
                             cst.Dict, cst.Set, cst.Tuple, cst.Integer, cst.Float, cst.ListComp,
                             cst.DictComp, cst.SetComp)):
            return "other"
        if isinstance(node, cst.Name) and node.value in getattr(self, "_own_backward_objects", ()) \
                and not self._shadowed(node.value):
            return "other"   # an object of a project class with its own backward() (encodec's Balancer)
        if isinstance(node, cst.Name):
            # `self` outside any class (a decorator's wrapper, `def inner(self, *args)`: x-transformers'
            # eval_decorator) is a parameter of unknown type like any other
            if node.value == "self" and self._classes:
                # never a tensor; a module only inside a Module subclass (a converted file's
                # nn.Cell classes are not torch Modules, so a second pass leaves them alone),
                # or inside a mixin that Module subclasses of the project derive from
                if self._classes and not self._classes[-1].is_cell and len(self._classes) == 1 \
                        and self.index.is_cell_mixin(self.module_name, self._classes[-1].name):
                    return "module"
                return "module" if self._classes and self._classes[-1].is_cell else "other"
            if self._funcs:
                ctx = self._funcs[-1]
                if node.value in ctx.tensors:
                    return "tensor"
                if node.value in ctx.cells:
                    return "module"
                if node.value in ctx.others:
                    return "other"
            elif not self._classes and node.value in self._module_tensors:
                return "tensor"
            elif not self._classes and node.value in self._module_cells:
                return "module"
            elif not self._classes and node.value in self._module_others:
                return "other"
            if self._qname_any(node) is not None and not self._shadowed(node.value):
                return "other"   # an imported module or object that is not torch
            return "tensor" if id(node) in UT.field_receivers(self) else "unknown"
        if isinstance(node, cst.Attribute) and self._qname_any(node) is not None:
            if self._project_global(self._qname_any(node)):
                return "unknown"   # `recipe.net`: a variable of a module of the project (a network, a tensor)
            return "other"   # an attribute of an imported module (np.random, ms.numpy)
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "super":
            return "module" if self._classes and self._classes[-1].is_cell else "other"
        if isinstance(node, cst.Call) and LC.torch_layer(self._torch_qname(node.func)):
            return "module"    # `nn.Conv2d(...).double()`
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
            t = self._classes[-1].attr_types.get(node.attr.value) if self._classes else None
            if t == "tensor":
                return "tensor"
            if t:
                return "module"
        if self._is_tensor_expr(node):
            return "tensor"
        if isinstance(node, cst.Attribute) and node.attr.value == "data" \
                and self._receiver_kind(node.value) in ("tensor", "unknown"):
            return "tensor"     # `std.data.new(...)`: a tensor's data in torch code (a Dataset's is `self.data`)
        if id(node) in UT.field_receivers(self):
            return "tensor"     # `r.topk(2).values`: only a tensor's method has that result
        return "unknown"

    def _project_global(self, qname: str) -> bool:
        """`M.name` where M is a module of the converted project and name a variable its top level binds (no
        class, no function, no submodule of it): a value of the program's own, of a type known only there."""
        module, _, name = qname.rpartition(".")
        info = self.index.modules.get(module)
        return (info is not None and name in info.variables and name not in info.classes
                and f"{module}.{name}" not in self.index.modules)

    _LEGACY_TYPE_CODE = re.compile(r"_ms_compat\.(Float|Double|Half|Long|Int|Short|Byte|Char|Bool|BFloat16)Tensor")

    def _legacy_isinstance(self, original: cst.Call, updated: cst.Call) -> Optional[cst.BaseExpression]:
        """`isinstance(x, torch.FloatTensor)` (`torch.cuda.FloatTensor`, a tuple of them): the legacy types are
        _ms_compat objects that a compiled graph's isinstance does not take (3D-ResNets' `isinstance(out.data,
        torch.cuda.FloatTensor)` in a shortcut stopped GRAPH compilation): `_ms_compat.legacy_isinstance(x, T, ...)`,
        x a MindSpore tensor of one of their dtypes, in Python and in a graph."""
        if not (isinstance(original.func, cst.Name) and original.func.value == "isinstance" and len(updated.args) == 2
                and not any(a.star or a.keyword for a in updated.args)) or self._shadowed("isinstance"):
            return None
        t = updated.args[1].value
        types = [e.value for e in t.elements] if isinstance(t, cst.Tuple) else [t]
        if not types or any(isinstance(e, cst.StarredElement) for e in types) or not all(
                self._LEGACY_TYPE_CODE.fullmatch(cst.Module([]).code_for_node(e)) for e in types):
            return None
        self.uses_compat = True
        return cst.Call(func=self._render_template("_ms_compat.legacy_isinstance"),
                        args=[updated.args[0].with_changes(comma=cst.MaybeSentinel.DEFAULT),
                              *[cst.Arg(e) for e in types]])

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        in_order = SQ.immediate_call(self, original, updated)   # `nn.Sequential(*layers)(x)`: sequential_calls.py
        if in_order is not None:
            return in_order
        updated = LC.keyword_input(self, original, updated) or updated    # `m(input=x)` of a torch layer
        updated = CW.copy_value(self, original, updated) or updated   # `conv1d.weight.copy_(t)`: conv1d_weights.py
        asked = HF.converted(self, original, updated)   # `tokenizer(texts, return_tensors="pt")`: hf_return_tensors.py
        if asked is not None:
            return asked
        result = (PC.call(self, original, updated) or TN.leave_call(self, original, updated)
                  or TN.eval_call(self, original, updated) or TN.dict_items_call(self, original)
                  or self._leave_call(original, updated))
        result = HD.wrap(self, original, result)     # `np.random.normal(...)` in construct: host_draws.py
        if result is updated and id(original) in self._graph_keyword_updates:   # GRAPH mode: graph_idioms.py
            result = keyword_update_as_display(updated)
        if result is updated and self._in_graph_code():   # `LayerIntermediates(...)` in construct: graph_objects.py
            plain = GO.plain_class(self, original.func)
            if plain is not None:
                result = (GRD.construction(self, original, updated) or GO.record_as_tuple(self, original, updated)
                          or GO.refuse_in_graph(self, original, result, plain))
        if result is updated:       # `isinstance(x, LayerIntermediates)` of a record class: graph_records.py
            result = GRD.isinstance_call(self, original, updated) or result
        if result is updated:       # `isinstance(x, torch.cuda.FloatTensor)`: also compiled
            result = self._legacy_isinstance(original, updated) or result
        if result is updated and (self._in_graph_code() or self._in_record_method()):
            result = (GRD.method_call(self, original, updated) or GRD.copy_call(self, original, updated)
                      or result)     # `nt.decompose()`, `copy(inter)`: graph_records.py
        if result is updated:       # `"{:.4f}".format(loss)` of a 0-d tensor: format_values.py
            result = FV.format_call(self, original, updated) or updated
        if id(original) in self._graph_pops and result is updated:
            scope = self._scopes[-1]
            tmp, lines = GP.rebindings(original.func.value.value,
                                       set(scope["reads"]) | scope["bound"] | scope["shadows"],
                                       GP.pop_index(original))
            self._hoisted_inplace.extend((name, cst.parse_expression(code)) for name, code in lines)
            result = cst.Name(tmp)
        elif id(original) in self._graph_copies and result is updated:
            result = cst.Call(func=self._render_template("_ms_compat.list_copy"), args=[cst.Arg(updated.func.value)])
        elif id(original) in self._graph_iters and result is updated:
            result = cst.Call(func=self._render_template("_ms_compat.graph_iter"), args=[updated.args[0]])
        elif id(original) in self._graph_nexts and result is updated:
            scope = self._scopes[-1]
            default = cst.Module([]).code_for_node(updated.args[1].value) if len(updated.args) > 1 else None
            tmp, lines = GI.next_rebindings(original, default,
                                            set(scope["reads"]) | scope["bound"] | scope["shadows"])
            self._hoisted_inplace.extend((name, cst.parse_expression(code)) for name, code in lines)
            result = cst.Name(tmp)
        elif id(original) in self._graph_pops_refused and result is updated:
            result = GP.refuse_in_graph(self, original, result, self._graph_pops_refused[id(original)])
        if id(original) in self._inplace_values and id(result) in self._rebinds:
            # its rebinding goes before the statement (leave_SimpleStatementLine); the call reads x
            self._rebinds.pop(id(result))
            self._hoisted_inplace.append((original.func.value.value, result))
            result = cst.Name(original.func.value.value)
        if result is not updated and updated.lpar and hasattr(result, "lpar") and not result.lpar:
            # `(x\n .repeat(2)\n .to(device))`: the parentheses that make a multi-line
            # expression legal belong to the outer call; keep them on its replacement
            result = result.with_changes(lpar=updated.lpar, rpar=updated.rpar)
        if result is not updated and getattr(self, "_grad_reads", None):
            # a mapping that wrote its call anew (`(c * p.grad).norm(p=2)` -> reduce_vector_norm(...)): the
            # `.grad` reads inside stay noted (grad_reads.py); left as written, MindSpore has no .grad
            result = GR.carry(self, updated, result)
        return SPP.retarget(self, result)   # a product of a sparse matrix: sparse_products.py

    def _leave_call(self, original: cst.Call, updated: cst.Call):
        if id(original) in self._skip_calls:
            return updated
        if id(original) in self._arg_refusals:   # the callee changes an argument in place (inplace_callers.py)
            return self._todo(original, "argument changed in place", self._arg_refusals[id(original)], updated)
        if id(original) in self._graph_changes_refused:   # a list/dict argument changed: graph_mutations.py
            self.uses_compat = True
            return GM.refuse_in_graph(self, original, updated, self._graph_changes_refused[id(original)])
        func = original.func
        qn = self._torch_qname(func)
        if qn is not None:
            return self._convert_api_call(original, updated, qn)
        rounding = rounding_name("int" if isinstance(func, cst.Name) and func.value == "int" and not self._shadowed("int")
                                 and "int" not in self._imports else self._qname_any(func))
        if rounding is not None and self._in_compiled_arithmetic():   # float32 in GRAPH: msmigrate/graph_scalars.py
            where = f"{self.module_name}:{self._line(original)}"
            safe = float_rounding_graph_safe(original, updated, rounding, COMPAT, where, self._is_tensor_expr)
            if safe is not None:
                self.uses_compat = True
                return safe
        if self._qname_any(func) == "contextlib.nullcontext":   # entered in a compiled step: runtime.py
            return updated.with_changes(func=self._render_template("_ms_compat.nullcontext"))
        if self._qname_any(func) == "functools.reduce" and self._in_graph_code():
            safe = reduce_graph_safe(updated, COMPAT)             # GRAPH mode: msmigrate/graph_idioms.py
            if safe is not None:
                self.uses_compat = True
                return safe
        if isinstance(func, cst.Attribute) and self._qname_any(func) != "functools.partial":
            return self._convert_method_call(original, updated)
        if isinstance(func, cst.Name) and func.value == "partial" or \
                isinstance(func, cst.Attribute) and func.attr.value == "partial":
            result = self._convert_partial(original, updated)
            if (isinstance(result, cst.Call) and result.func.deep_equals(updated.func)
                    and self._qname_any(original.func) == "functools.partial"):   # compiled: graph_builtins.py
                result = result.with_changes(func=self._render_template("_ms_compat.partial"))
            return result
        if isinstance(func, cst.Name) and func.value == "map" and (self._in_forward() or self._in_cell_code()) \
                and "map" not in self._imports and not self._shadowed("map"):
            first = original.args[0].value if original.args else None
            if isinstance(first, cst.Call) and self._qname_any(first.func) == "functools.partial":
                return map_partial_as_generator(updated, "_map_item") or updated   # msmigrate/graph_idioms.py
            return map_lambda_as_generator(updated) or map_name_as_generator(updated, "_map_item") \
                or updated   # GRAPH mode: msmigrate/graph_idioms.py
        if isinstance(func, cst.Name) and func.value == "callable" and "callable" not in self._imports \
                and not self._shadowed("callable"):
            safe = callable_graph_safe(updated, COMPAT)           # GRAPH mode: msmigrate/graph_idioms.py
            if safe is not None:
                self.uses_compat = True
                return safe
        if DR.is_builtin_abs_of_tensor(self, original):   # `abs(z)`: real for a complex tensor, tensor_reads.py
            return DR.builtin_abs(self, original, updated)
        if isinstance(func, cst.Name) and func.value in ("all", "any", "round") and self._in_forward() \
                and func.value not in self._imports and not self._shadowed(func.value):
            safe = all_any_graph_safe(updated, COMPAT)            # GRAPH mode: msmigrate/graph_idioms.py
            if safe is not None:
                self.uses_compat = True
                return safe
        if isinstance(func, cst.Name) and func.value == "pow" and self._in_graph_code() \
                and "pow" not in self._imports and not self._shadowed("pow") \
                and not (original.args and self._is_tensor_expr(original.args[0].value)):
            safe = power_graph_safe(updated, COMPAT)              # GRAPH mode: msmigrate/graph_idioms.py
            if safe is not None:
                self.uses_compat = True
                return safe
        if isinstance(func, cst.Name) and func.value == "dict" and self._in_graph_code() \
                and "dict" not in self._imports and not self._shadowed("dict"):
            safe = dict_call_graph_safe(updated, COMPAT)          # GRAPH mode: msmigrate/graph_idioms.py
            if safe is not None:
                self.uses_compat = self.uses_compat or isinstance(safe, cst.Call)
                return safe
        if isinstance(func, cst.Name) and func.value in WHOLE_CONSUMERS and len(updated.args) == 1 \
                and not updated.args[0].keyword and not updated.args[0].star and self._in_graph_code() \
                and func.value not in self._imports and not self._shadowed(func.value):
            nested = single_for_comprehension(updated.args[0].value, COMPAT)   # msmigrate/graph_idioms.py
            if nested is not None:
                self.uses_compat = True
                return updated.with_changes(args=[updated.args[0].with_changes(value=nested)])
        return updated

    def _in_compiled_arithmetic(self) -> bool:
        """In GRAPH code, not in a training loop's own statements (msmigrate/graph_idioms.py)."""
        return self._in_graph_code() and (bool(self._classes) or self._funcs[0].name not in self._training_loops)

    def _in_graph_code(self) -> bool:
        """In construct, or in a module-level function that construct (or a train step) may call."""
        return self._in_forward() or bool(self._funcs) and not self._classes \
            and self._funcs[0].name in self._graph_functions

    def leave_Dict(self, original: cst.Dict, updated: cst.Dict):
        if self._in_graph_code():   # `{**a, ...}`: msmigrate/graph_idioms.py
            safe = dict_display_graph_safe(updated, COMPAT)
            if safe is not None:
                self.uses_compat = True
                return safe
            return updated
        return self._class_keyed(original, updated, "ClassKeyed")

    def leave_Set(self, original: cst.Set, updated: cst.Set):
        return updated if self._in_graph_code() else self._class_keyed(original, updated, "ClassSet")

    def _class_keyed(self, original, updated, helper: str):
        """`{nn.Conv2d: count_conv, ...}` looked up by `type(m)`: a cell the converter builds as the helper's
        any_batch form has a class of its own, which plain hashing would not find (no counting hook, silently);
        compat_parts/module_tree.py's ClassKeyed/ClassSet look such a class up as the layer torch's code names."""
        keys = [e.key if isinstance(e, cst.DictElement) else e.value for e in original.elements
                if isinstance(e, (cst.DictElement, cst.Element))]
        for key in keys:
            qn = self._torch_qname(key) or ""
            if qn.startswith("torch.nn.") and not qn.startswith("torch.nn.functional.") \
                    and qn.rsplit(".", 1)[-1][:1].isupper():
                return cst.Call(func=self._render_template(f"{COMPAT}.{helper}"), args=[cst.Arg(updated)])
        return updated

    def leave_CompIf(self, original: cst.CompIf, updated: cst.CompIf):
        if self._in_graph_code() and not self._shadowed("bool"):   # msmigrate/graph_idioms.py
            return comprehension_condition_as_bool(updated) or updated
        return updated

    def leave_ListComp(self, original: cst.ListComp, updated: cst.ListComp):
        if self._in_graph_code():   # two `for`s: msmigrate/graph_idioms.py
            nested = single_for_comprehension(updated, COMPAT)
            if nested is not None:
                self.uses_compat = True
                return nested
        return updated

    def _convert_api_call(self, original: cst.Call, updated: cst.Call, qn: str):
        if id(original) in self._out_stmt_calls:
            rebound = OA.convert(self, original, updated, qn)
            if rebound is not None:
                return rebound
        m = R.lookup(qn)
        owner_qn, _, attr = qn.rpartition(".")
        if m is None and attr in VALUE_ATTRS.get(owner_qn, ()) and isinstance(original, cst.Attribute):
            # `torch.float32.itemsize`: the attribute of the converted value
            return updated.with_changes(value=self._convert_reference(original.value, updated.value, owner_qn))
        if (m is None or m.target is None and m.rule is None) and is_dependency_name(self.index, qn):
            self._record(original, qn, qn, R.CONVERTED, DEPENDENCY_NOTE)   # records first, then --deps
            return updated
        if m is None:
            method = self._helper_object_method(original, updated, qn)
            if method is not None:
                return method
            return self._todo(original, qn, rule_note(qn) or "no MindSpore mapping known", updated)
        if m.target is None and m.rule is None:
            return self._todo(original, qn, m.note or "no MindSpore counterpart", updated)
        try:
            result = self._apply(original, updated, m, qn, receiver=None)
        except UnsupportedSite as exc:
            return self._todo(original, qn, str(exc), updated)
        if DM.is_mode_dependent_layer(qn) and isinstance(original, cst.Call) and self._layer_needs_start(qn):
            return DM.started_in_training_mode(result) or result
        if qn in DM.CONTAINERS and isinstance(original, cst.Call) and not self._classes \
                and not getattr(self, "_layer_start_stmt", False):
            return DM.container_in_training_mode(result) or result
        return result

    def _layer_needs_start(self, qn: str) -> bool:
        """A mode-dependent torch layer built here would start in MindSpore's inference mode: not inside the
        `__init__` of a Cell that ends by setting its own mode, nor in a statement followed by
        `name.set_train(True)`, nor in a forward (default_mode.py)."""
        if getattr(self, "_layer_start_stmt", False) or self._in_module_forward():
            return False
        cls = self._classes[-1] if self._classes else None
        in_init = cls is not None and len(self._funcs) == 1 and self._funcs[-1].name == "__init__"
        return not (in_init and cls.is_cell and cls.mode_dependent)

    def _apply(self, original, updated, m: R.Mapping, api: str, receiver: Optional[cst.BaseExpression]):
        params = m.args
        bound = BoundCall(updated, params, receiver)
        pending = AC.check(m, bound, original if isinstance(original, cst.Call) else None)   # argument_check.py
        if bound.starred and receiver is None and api in _ADAPTERS:
            # *args/**kwargs: the adapter class takes torch's arguments at run time
            self._record(original, api, _ADAPTERS[api], R.CONVERTED,
                         f"called with *args/**kwargs: {_ADAPTERS[api]} takes torch's arguments and builds {m.target}")
            return updated.with_changes(func=self.render(_ADAPTERS[api]))
        if bound.starred and m.takes_torch_args and m.rule is None and not m.unsupported:
            # the helper takes torch's parameters: torch's *args/**kwargs mean the same to it
            self._record(original, api, m.target.split(".")[-1] if m.target else api, m.status, m.note)
            return updated.with_changes(func=self.render(m.target))
        if bound.starred and (m.rename or m.transforms or m.drop or m.rule) and not (
                m.rule is not None and getattr(m.rule, "handles_starred", False)) \
                and not _starred_keeps_positions(updated, m, receiver) \
                and not _starred_binds_as_torch(m, receiver):
            # a rule marked handles_starred reads bound.starred itself
            raise UnsupportedSite("*args/**kwargs cannot be translated argument by argument")
        notes: List[str] = []
        target = m.target
        if m.rule is not None:
            result = m.rule(RuleContext(self, bound, original, receiver))
            AC.finish(m, bound, pending, passed_on=not isinstance(result, cst.BaseExpression))
            if isinstance(result, cst.BaseExpression):
                self._record(original, api, shorten(code_of(result), 60), m.status, m.note)
                return result
            if isinstance(result, str):
                target = result
        notes += apply_mapping(bound, m)
        for _added in list(m.extra.values()) + [v for t in m.values.values() for v in t.values()]:
            self._render_template(_added)  # record the imports (ms./nn./ops.) that added code needs
        note = "; ".join([m.note] + notes) if notes else m.note
        if target == "drop":
            node = cst.Name("None")
            self._dropped[id(node)] = node
            self._record(original, api, "(removed)", m.status, note)
            return node
        if target == "identity":
            self._record(original, api, "(removed)", m.status, note)
            if receiver is not None:
                return receiver
            first = bound.order[0] if bound.order else None
            if first is None:
                raise UnsupportedSite("nothing to pass through")
            return bound.value(first)
        if target.startswith("expr:"):
            rc = code_of(receiver).strip() if receiver is not None else None
            if rc is not None and ("\n" in rc or not isinstance(
                    receiver, (cst.Name, cst.Attribute, cst.Call, cst.Subscript))):
                rc = f"({rc})"
            text = fill_template(target[5:], bound, rc)
            self._record(original, api, shorten(text, 60), m.status, note)
            return self._render_template(text)
        if target.startswith("method:"):
            name = target[7:]
            func = updated.func.with_changes(attr=cst.Name(name)) if isinstance(updated.func, cst.Attribute) \
                else cst.Attribute(value=receiver, attr=cst.Name(name))
            out = emit_call(bound, func, m.target_args)
            self._record(original, api, "." + name, m.status, note)
            return out
        func = self.render(target)
        leading = [receiver] if receiver is not None else None
        out = emit_call(bound, func, m.target_args, leading)
        self._record(original, api, target, m.status, note)
        return out

    def _render_template(self, text: str) -> cst.BaseExpression:
        # templates use ms./nn./ops./_ms_compat. names: record the imports they need
        for prefix, key in (("ms.", "ms"), ("nn.", "nn"), ("ops.", "ops")):
            if prefix in text:
                self.need.add(key)
        if COMPAT + "." in text:
            self.uses_compat = True
        return parse_expr(text)

    def _convert_method_call(self, original: cst.Call, updated: cst.Call):
        func = original.func
        name = func.attr.value
        if name == "add_module" and self._classes and isinstance(func.value, cst.Name) and func.value.value == "self" \
                and len(original.args) == 2 and isinstance(original.args[0].value, cst.SimpleString):
            # `self.add_module('bn', nn.BatchNorm2d(c))` (timm's ConvBN): self.bn holds that layer, as an assignment
            v = original.args[1].value
            self._self_attr_types(cst.Attribute(value=cst.Name("self"), attr=cst.Name(
                original.args[0].value.evaluated_value)), v, self._torch_qname(v.func) if isinstance(v, cst.Call)
                else None, self._is_tensor_expr(v), self._is_cell_call(v))
        if name == "backward":
            return LB.note(self, original, updated)     # the training-loop rewrite (train_loop.py) decides
        chained = UT.property_receiver(self, original, updated)   # `x.grad.zero_()` on a tensor x
        if chained is not None:
            return chained
        if name == "rsample" and not any(a.star for a in updated.args):
            # dist.rsample(...) with its line: a distribution that cannot build one here stops with MigrationError
            # naming it (compat_parts/distributions.py's rsample_at)
            where = cst.Arg(cst.SimpleString(repr(f"{self.module_name}:{self._line(original)}")))
            self.uses_compat = True
            return updated.with_changes(func=cst.parse_expression(f"{COMPAT}.rsample_at"),
                                        args=[cst.Arg(updated.func.value), where, *updated.args])
        if name == "apply" and isinstance(func.value, cst.Name) and func.value.value in self._recompute_fns:
            # a Function that only checkpoints: the call it recomputes, differentiated as any call
            self.uses_compat = True
            return updated.with_changes(func=cst.parse_expression(f"{COMPAT}.recomputed_call"))
        if name == "apply" and self._is_autograd_function(func.value):
            # Fn.apply(...) of a torch.autograd.Function subclass (_ms_compat.Function.apply), with its line: a
            # graph compiling the call stops with MigrationError naming it (compat_parts/autograd.py)
            where = cst.Arg(cst.SimpleString(repr(f"{self.module_name}:{self._line(original)}")))
            self.uses_compat = True
            return updated.with_changes(func=cst.parse_expression(f"{COMPAT}.function_apply"),
                                        args=[cst.Arg(updated.func.value), where, *updated.args])
        tm = R.lookup("Tensor." + name)
        mm = R.lookup("Module." + name)
        if tm is None and mm is None:
            if name == "forward":
                kind = self._receiver_kind(func.value)
                if kind == "module":
                    self._record(original, "Module.forward", "construct", R.CONVERTED, "nn.Cell runs construct()")
                    return updated.with_changes(func=updated.func.with_changes(attr=cst.Name("construct")))
                if kind == "unknown":
                    # `layer.forward(x)` on a layer of unknown type (taken from a model's Sequential by a loop):
                    # a Cell's construct, any other object's own forward (compat_parts/module_tree.py)
                    self.uses_compat = True
                    self._record(original, "Module.forward", f"{COMPAT}.forward_of", R.CONVERTED,
                                 "receiver of unknown type: an nn.Cell's construct() (MindSpore's Cells have no "
                                 "forward), any other object's forward")
                    return updated.with_changes(func=cst.Call(func=cst.parse_expression(f"{COMPAT}.forward_of"),
                                                              args=[cst.Arg(updated.func.value)]))
            todo = UT.method_call(self, original, updated)   # `x.frexp()` on a tensor, no record: a TODO
            return updated if todo is None else todo
        kind = self._receiver_kind(func.value)
        if kind == "other":
            return updated
        m = None
        if kind == "tensor":
            m = tm if tm is not None else mm   # .parameters()/.train() are no tensor methods
        elif kind == "module":
            m = mm
        else:  # unknown receiver: only names that are distinctly torch's
            if all(r is None or AC.foreign_keywords(r, original) for r in (tm, mm)):
                return updated  # a keyword torch's method does not take: another object's method (argument_check.py)
            own_train = _train_of_unknown(self, original, updated, name)
            if own_train is not None:
                return own_train
            cast = MC.untyped_call_receiver(self, original, updated)   # `build_model(sd).float()`
            if cast is not None:
                return cast
            if isinstance(func.value, cst.Name) and func.value.value in self.names.values():
                # `ops.neg(x)`: the MindSpore module the output refers to as ops/nn/ms (a second pass),
                # or the file's own object of that name (torch/_inductor's `ops`): no tensor either way
                return updated
            if name == "numel" and tm is not None and not original.args and any(
                    q == "torch" or q.startswith("torch.") for q in self._imports.values()):
                # (a file importing no torch, such as converted output, names MindSpore's numel)
                # `shape.numel()` of a torch.Size: a tuple once converted (size_numel.py)
                self.uses_compat = True
                self._record(original, "Tensor.numel", "_ms_compat.numel", R.CONVERTED,
                             "receiver of unknown type: a tensor's numel(), or the product of a shape's sizes (a "
                             "torch.Size is a tuple in MindSpore)")
                return cst.Call(func=cst.parse_expression("_ms_compat.numel"), args=[cst.Arg(updated.func.value)])
            if tm is not None and not tm.tensor_only:
                m = tm
            elif mm is not None and not mm.tensor_only:
                m = mm
            elif tm is not None and tm.tensor_only and _has_torch_keywords(original):
                m = tm
            elif tm is not None and name in UM.EMPTY_SAFE and UM.tensor_comparison(self, func.value):
                m = tm      # `(x > 0).sum()`: the empty-safe reduction (templates/compat_parts/empty_reductions.py)
            elif tm is not None and name in UM.DIFFERING:   # `x.repeat(2, 1)`: decided at run time
                return UM.dispatch(self, original, updated, tm) or updated
        if m is None:
            return updated
        if m is mm and _beyond_positional(original, m.args):
            return updated      # not torch's method: the program's own (forward-forward's Layer.train(x_pos, x_neg))
        api = m.source
        if id(original) in self._view_conflicts or IVW.chained_view_receiver(original):   # inplace_views.py
            return self._todo(original, api, self._view_conflicts.get(id(original), IVW.WHY_CHAIN), updated)
        if id(original) in self._view_repacks:   # `gi, gj = gij.T; gj.clamp_(...)`: gij made again after the statement
            self.uses_compat = True
            self._pending_repacks.append(self._view_repacks[id(original)])
        if (name == "register_buffer" and original.args and isinstance(original.args[0].value, cst.SimpleString)
                and self._classes):
            self._classes[-1].attr_types[original.args[0].value.evaluated_value] = "tensor"
        if id(original) in self._stmt_calls and m is tm:     # `old.data.lerp_(new, w)`: data_writes.py
            written = DW.write_through_data(self, original, updated) or DW.write_under_no_grad(self, original, updated)
            if written is not None:
                return written
        if id(original) in self._inplace_stmt_calls and m is tm:
            rebound = self._rebind_inplace(original, updated)
            if rebound is not None:
                return rebound
        if m.target is None and m.rule is None:
            return self._todo(original, api, m.note or "no MindSpore counterpart", updated)
        if id(original) in self._slice_copies and kind in ("tensor", "unknown"):
            held = self._held_item_copy(original, updated, api)     # `ema[name].copy_(v)`: held_items.py
            if held is not None:
                return held
            self._record(original, api, "x[...] = src", R.CONVERTED, "a slice's copy_ statement is an assignment to "
                         "the slice (in place; broadcasts and casts like torch)")
            # the converted call kept with its value: an id is unique only while its node lives
            self._slice_copies[id(updated)] = (updated, updated.args[0].value)
            return updated
        if name.endswith("_") and not name.endswith("__") and isinstance(func.value, cst.Subscript) \
                and id(original) in self._stmt_calls and m is tm:
            row = self._cell_row_item(original, updated)     # `x[0].mul_(2)` in construct: cell_rows.py
            if row is not None:
                return row
        if id(original) in self._slice_fills and kind in ("tensor", "unknown") and m is tm:
            try:
                part = cst.Call(func=cst.Attribute(value=updated.func.value, attr=cst.Name("copy")))
                filled = self._apply(original, updated.with_changes(func=updated.func.with_changes(value=part)), m,
                                     api, receiver=part)
            except UnsupportedSite as exc:
                return self._todo(original, api, str(exc), updated)
            if isinstance(filled, cst.Call):
                # the fill's value depends on the slice's shape and dtype only: drawn for a copy of the slice
                # and written back by the statement (leave_Expr), MindSpore's setitem writing in place
                self._slice_fills[id(filled)] = (filled, updated.func.value)
                return filled
        if name.endswith("_") and not name.endswith("__") and isinstance(func.value, cst.Subscript) \
                and not (name == "copy_" and _keyed_by_string(func.value)):
            held = self._held_item_change(original, updated, name, m)     # `shadow[k].mul_(d)`: held_items.py
            if held is not None:
                return held
            if (name in _SLICE_ARITHMETIC and id(original) in self._stmt_calls and m is tm
                    and len(original.args) == 1 and original.args[0].keyword is None and not original.args[0].star
                    and _basic_slice_of_name(original.func.value)):
                op = _SLICE_ARITHMETIC[name]
                self._record(original, api, f"x[...] = x[...] {op} value", R.CONVERTED,
                             "in place on a basic slice, as a statement: the slice assigned its sum (difference, "
                             "product, quotient) with the value, MindSpore's indexing giving a copy")
                sub = code_of(updated.func.value).strip()
                value = cst.parse_expression(f"{sub} {op} ({code_of(updated.args[0].value).strip()})")
                self._slice_fills[id(value)] = (value, updated.func.value)   # written back by leave_Expr
                return value
            return self._todo(original, api, "in place on a slice: MindSpore indexing returns a copy, so the "
                              "original would not change; assign instead (x[...] = value)", updated)
        try:
            return self._apply(original, updated, m, api, receiver=updated.func.value)
        except UnsupportedSite as exc:
            return self._todo(original, api, str(exc), updated)

    def _convert_partial(self, original: cst.Call, updated: cst.Call):
        """functools.partial(nn.BatchNorm2d, eps=1e-3, momentum=0.01): translate the
        bound keywords as if they were a call of the layer."""
        qp = self._qname_any(original.func)
        if qp not in ("functools.partial", None) or not original.args:
            return updated
        first = original.args[0].value
        qn = self._torch_qname(first)
        if qn is None:
            return updated
        null = PR.null_context(self, original, updated, qn)   # partial(torch.amp.autocast, ...): partial_rules.py
        if null is not None:
            self.uses_compat = True
            return null
        m = R.lookup(qn)
        if m is not None and m.rule is not None and qn not in _ADAPTERS:
            return PR.convert(self, original, updated, qn, m) or updated   # partial(F.softmax, dim=-1)
        if m is None or not m.target or m.target.startswith(("expr:", "drop", "identity", "method:")) or m.rule:
            return updated
        if qn in _ADAPTERS:
            return updated  # already the adapter: it takes torch's arguments, here and where it is called
        # build a pseudo call of the layer with the remaining arguments
        inner = cst.Call(func=first, args=updated.args[1:])
        try:
            bound = BoundCall(inner, m.args)
            apply_mapping(bound, m)
            call = emit_call(bound, self.render(m.target), m.target_args)
        except UnsupportedSite:
            return updated
        self._record(original, qn, m.target, m.status, (m.note + "; " if m.note else "") + "inside functools.partial")
        first_arg = updated.args[0].with_changes(value=call.func)
        return updated.with_changes(args=[first_arg] + list(call.args))

    def _is_torch_call(self, call: cst.Call) -> bool:
        return self._torch_qname(call.func) is not None

    def visit_Expr(self, node: cst.Expr) -> None:
        # `x.add_(y)` as a whole statement can become `x = ops.add(x, y)`; so can `nn.functional.relu_(x)`
        call = node.value
        if isinstance(call, cst.Call):
            self._stmt_calls.add(id(call))
        if (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                and (isinstance(call.func.value, cst.Name) or self._is_torch_call(call)) and call.func.attr.value.endswith("_")
                and not call.func.attr.value.endswith("__") and (self._funcs or not self._classes)):
            self._inplace_stmt_calls.add(id(call))
        if OA.is_out_statement(call):
            self._out_stmt_calls.add(id(call))
        if (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "copy_"
                and isinstance(call.func.value, cst.Subscript) and len(call.args) == 1 and not call.args[0].keyword
                and not call.args[0].star and not _keyed_by_string(call.func.value)):
            self._slice_copies[id(call)] = None
        if (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                and call.func.attr.value in _SLICE_FILLS and isinstance(call.func.value, cst.Subscript)
                and not any(a.star for a in call.args) and not _keyed_by_string(call.func.value)):
            self._slice_fills[id(call)] = None

    def leave_Expr(self, original, updated):
        out_target = self._out_targets.get(id(updated.value))
        if out_target is not None and out_target[1] is updated.value:   # `torch.add(a, b, out=c)` -> `c = ...`
            return cst.Assign(targets=[cst.AssignTarget(target=out_target[0])],
                              value=updated.value)
        if id(updated.value) in self._dropped:
            return cst.RemovalSentinel.REMOVE
        copied = self._slice_copies.get(id(updated.value))
        if copied is not None and copied[0] is updated.value:   # MindSpore's setitem writes in place
            return cst.Assign(targets=[cst.AssignTarget(target=updated.value.func.value)], value=copied[1])
        filled = self._slice_fills.get(id(updated.value))
        if filled is not None and filled[0] is updated.value:   # `x[i] = _ms_compat.uniform_(x[i], a, b)`
            return cst.Assign(targets=[cst.AssignTarget(target=filled[1])], value=updated.value)
        if isinstance(original.value, cst.Call) and isinstance(updated.value, (cst.Name, cst.Attribute)):
            return cst.RemovalSentinel.REMOVE   # `model.to(device)` became `model`: nothing left to do
        if id(updated.value) in self._rebinds:
            target = original.value.func.value
            if isinstance(target, cst.Subscript):   # `x[0].mul_(2)`: x rebound (_cell_row_item)
                target = target.value
            return cst.Assign(targets=[cst.AssignTarget(target=cst.Name(target.value))], value=updated.value)
        if (self._in_graph_code() and isinstance(original.value, cst.Call)
                and original.value.deep_equals(updated.value) and isinstance(original.value.func, cst.Attribute)
                and not self._is_tensor_expr(original.value.func.value)):   # `l.sort()`: graph_mutations.py
            params = self._scopes[-1].get("params", set()) if self._scopes else set()
            store = GM.sort_remove_as_slice_store(updated, COMPAT, params)
            if store is not None:
                self.uses_compat = self.uses_compat or "list_removed" in code_of(store.value)
                return store
        return updated

    def _held_item_change(self, original: cst.Call, updated: cst.Call, name: str, m):
        """`C[k].op_(args)` outside Cell code, C's kind unseen: `_ms_compat.item_in_place(C, k, <C[k].op(args)>)`
        (msmigrate/held_items.py); None where it is no such entry or op (the TODO as before)."""
        from .inplace_forms import needs_cast_back, out_of_place

        found = HI.item(original.func.value)
        form = out_of_place(name)
        if found is None or form is None or self._in_cell_code() or not m.source.startswith("Tensor."):
            return None
        out = self._apply_out_of_place(original, updated, name, form[0], form[1])
        if out is None:
            return None
        if needs_cast_back(name):   # a bool result: torch keeps the entry's dtype
            x = code_of(updated.func.value).strip()
            out = self._render_template(f"ops.cast({code_of(out).strip()}, {x}.dtype)")
        held = HI.item(updated.func.value)
        site = self.sites[-1]
        site.api, site.status, site.note = "Tensor." + name, R.DIFFERENCE, HI.NOTE
        self.uses_compat = True
        return HI.wrapped(COMPAT, held[0], held[1], out)

    def _held_item_copy(self, original: cst.Call, updated: cst.Call, api: str):
        """`C[k].copy_(src)` as a statement outside Cell code, k a name (a dict's key, a list's index: C's kind
        unseen, C no tensor the converter knows): `_ms_compat.item_in_place(C, k, src)` (held_items.py); None
        otherwise (the assignment `C[k] = src`, MindSpore's setitem writing into the tensor)."""
        found = HI.item(original.func.value)
        if found is None or not isinstance(found[1], (cst.Name, cst.Attribute)) or self._in_cell_code() \
                or self._receiver_kind(found[0]) == "tensor":
            return None
        held = HI.item(updated.func.value)
        self._record(original, api, f"{COMPAT}.{HI.HELPER}({HI.describe(*held)}, src)", R.DIFFERENCE, HI.NOTE)
        self.uses_compat = True
        return HI.wrapped(COMPAT, held[0], held[1], updated.args[0].value)

    def _apply_out_of_place(self, original: cst.Call, updated: cst.Call, name: str, m, receiver_first: bool,
                            receiver: Optional[cst.BaseExpression] = None) -> Optional[cst.BaseExpression]:
        """`x.op_(args)` converted as its out-of-place record m (`x.op(args)`, or `op(x, args)` where the record
        is torch.op); receiver: x where it is not the call's own (`x` of `x.data.op_`). None where m refuses it."""
        receiver = updated.func.value if receiver is None else receiver
        if receiver_first:
            plain = updated.with_changes(func=cst.Name(name[:-1]), args=[cst.Arg(receiver)] + list(updated.args))
        else:
            plain = updated.with_changes(func=updated.func.with_changes(attr=cst.Name(name[:-1])))
        try:
            out = self._apply(original, plain, m, m.source, receiver=None if receiver_first else receiver)
        except UnsupportedSite:
            return None
        return GR.carry(self, updated, out)     # `mu.add_(p.grad)`: the read stays noted (grad_reads.py)

    def _rebind_inplace(self, original: cst.Call, updated: cst.Call):
        """`x.add_(y)` statement on a local tensor -> `x = <converted x.add(y)>`. Exact
        unless another name refers to the same tensor (it would not see the change)."""
        name = original.func.attr.value
        scope = self._scopes[-1] if self._funcs and self._scopes else None
        if scope is not None and original.func.value.value not in scope["shadows"] | scope["bound"]:
            return None   # a name of an enclosing scope: `x = ...` would make it local (UnboundLocalError)
        row_why = self._cell_row_change(original)     # `for row in x: row.add_(1)` in construct
        if row_why is not None:
            self._row_todos.add(("Tensor." + name, self._line(original)))
            return self._todo(original, "Tensor." + name, row_why, updated)
        if name in ("fill_", "zero_") and self._receiver_kind(original.func.value) == "tensor":
            # `label.fill_(0)` -> `label = ops.full_like(label, 0)`: graph-safe, and a train step
            # (train_loop.py) sees which value of `label` each loss reads
            x = code_of(updated.func.value).strip()
            values = [code_of(a.value).strip() for a in updated.args if a.keyword is None]
            if name == "zero_" and not updated.args:
                out = self._render_template(f"ops.zeros_like({x})")
            elif name == "fill_" and len(values) == 1 and len(updated.args) == 1:
                out = self._render_template(f"ops.full_like({x}, {values[0]})")
            else:
                return None
            self._record(original, "Tensor." + name, shorten(code_of(out), 60), R.DIFFERENCE,
                         f"in place -> rebinding `{x} = ...`, a new tensor of the same shape and dtype; other "
                         f"references to the same tensor do not see the change")
            out = self._written_into_holder(original, out)
            self._rebinds[id(out)] = out
            return out
        if name == "fill_diagonal_" and self._receiver_kind(original.func.value) in ("tensor", "unknown"):
            out = DF.rebinding(self, original, updated)              # msmigrate/diagonal_fill.py
            if out is not None:
                out = self._written_into_holder(original, out)
                self._rebinds[id(out)] = out
                return out
        from .inplace_forms import needs_cast_back, out_of_place

        found = out_of_place(name)   # the Tensor.op record, or torch.op with the receiver first
        if found is None:
            return None
        m, receiver_first = found
        kind = self._receiver_kind(original.func.value)
        if kind != "tensor" and not (kind == "unknown" and R.lookup("Module." + name) is None):
            return None   # an untyped local (`x = preds.pred_x_start`): clamp_/detach_ are tensor-only names
        out = self._apply_out_of_place(original, updated, name, m, receiver_first)
        if out is None:
            return None
        if needs_cast_back(name):   # a bool result: torch keeps x's dtype
            x = code_of(updated.func.value).strip()
            out = self._render_template(f"ops.cast({code_of(out).strip()}, {x}.dtype)")
        # the site is recorded as the in-place API, converted with a difference
        site = self.sites[-1]
        site.api = "Tensor." + name
        site.status = R.DIFFERENCE
        site.note = (f"in place -> rebinding `{original.func.value.value} = ...` (MindSpore's in-place arithmetic "
                     f"does not change the tensor on CPU); other references to the same tensor do not see the change")
        out = self._written_into_holder(original, out)
        self._rebinds[id(out)] = out
        return out

    def _in_cell_code(self) -> bool:
        """In what a Cell's construct runs, or a module function it calls by name."""
        reached = self._classes[-1].forward_methods if self._classes else None
        return (self._in_forward() and (reached is None or self._funcs[0].name in reached)
                or bool(self._funcs) and not self._classes and self._funcs[0].name in self._cell_functions)

    def _cell_row_change(self, original: cst.Call) -> Optional[str]:
        """`row.add_(1)` in Cell code where a loop binds row to a row of a tensor (cell_rows.py): None where
        the loop will write the new row back (recorded for leave_For) or it is no such row; else why not (also
        for a name holding an attribute's tensor, `c = self.count; c.add_(1)`)."""
        x = original.func.value.value
        scope = self._scopes[-1] if self._scopes else {}
        if x not in scope.get("held", ()) or original.func.attr.value in ("detach_", "requires_grad_") \
                or not self._in_cell_code():
            return None
        loop = CR.binding_loop(self._loop_nodes, x)
        if loop is None:    # `c = self.count; c.add_(1)`
            return CR.attribute_problem(scope.get("function"), x)
        why = CR.problem(scope.get("function"), loop, x, scope.get("params", set()), scope.get("held", set()))
        if why is None:
            self._cell_rows.setdefault(id(loop), set()).add(x)
        return why

    def _cell_row_item(self, original: cst.Call, updated: cst.Call):
        """`x[0].mul_(2)` as a statement in Cell code: `x = _ms_compat.row_replaced(x, 0, <x[0].mul(2)>)`, out
        of place as cell_rows.py writes rows back; a raising TODO where the new x would not reach what torch
        changes; None for other subscripts (slices: the TODO as before)."""
        found = CR.item_row(original, self._loop_nodes) if self._in_cell_code() else None
        if found is None:
            return None
        x, idx = found
        name = original.func.attr.value
        scope = self._scopes[-1] if self._scopes else {}
        why = CR.item_problem(scope.get("function"), original, x, scope.get("params", set()), scope.get("held", set()))
        if why is not None:
            return self._todo(original, "Tensor." + name, why, updated)
        from .inplace_forms import out_of_place

        found_form = out_of_place(name)
        if found_form is None:
            return None
        m, receiver_first = found_form
        out = self._apply_out_of_place(original, updated, name, m, receiver_first)
        if out is None:
            return None
        site = self.sites[-1]
        site.api, site.status = "Tensor." + name, R.DIFFERENCE
        site.note = (f"in place on row {idx} of `{x}`: `{x}` rebound to its copy with that row replaced, out of "
                     "place (_ms_compat.row_replaced); other references to the old tensor do not see the change")
        self.uses_compat = True
        value = cst.parse_expression(f"{COMPAT}.row_replaced({x}, {idx}, {code_of(out).strip()})")
        self._rebinds[id(value)] = value
        return value

    def _written_into_holder(self, original: cst.Call, out: cst.BaseExpression) -> cst.BaseExpression:
        """`p.mul_(0.5)` where p came from a loop over parameters, a dict entry, an attribute: the new value is
        written into the tensor the other holders share (msmigrate/inplace_holders.py), outside the code a Cell's
        construct runs (there an in-place write would change a tensor an op saved for the backward pass; a row
        a loop takes from a tensor is written back out of place: cell_rows.py)."""
        x = original.func.value.value
        in_cell_code = self._in_cell_code()
        if in_cell_code and self.sites and self.sites[-1].api == "Tensor." + original.func.attr.value \
                and any(x in rows for rows in self._cell_rows.values()):
            self.sites[-1].note = (f"in place on a row of a tensor: the new row `{x}` is written back into the "
                                   "tensor out of place after the statement (_ms_compat.row_replaced)")
        if self._scopes and x in self._scopes[-1].get("escaped_changes", ()) \
                and original.func.attr.value not in ("detach_", "requires_grad_"):
            # a parameter of a function passed on as a value (ema-pytorch's `partial(inplace_lerp, ...)`), or
            # whose caller reads it after and gets another value back (inplace_callers.py): the new value goes into
            # the caller's tensor itself, where no graph compiles and no recorded gradient goes through the write
            # (else MigrationError at run time: inplace_arguments.py)
            self.uses_compat = True
            where = f"{self.module_name}:{self._line(original)}"
            if self.sites and self.sites[-1].api == "Tensor." + original.func.attr.value:
                self.sites[-1].note = (f"in place on the caller's tensor `{x}`: the out-of-place value written into "
                                       "it (_ms_compat.write_argument), which raises MigrationError where a "
                                       "graph compiles or a recorded gradient goes through it")
            return cst.Call(func=parse_expr(f"{COMPAT}.write_argument"),
                            args=[cst.Arg(cst.Name(x)), cst.Arg(out), cst.Arg(cst.SimpleString(repr(where)))])
        if in_cell_code and self._scopes and x in self._scopes[-1].get("unpacked_params", ()) \
                and original.func.attr.value not in ("detach_", "requires_grad_"):
            # `k_cache, v_cache = kv_cache; k_cache.index_copy_(1, positions, xk)` in a forward (gemma's attention
            # filling the caller's kv cache): written into the caller's tensor (copy_, which PyNative differentiates)
            # where no graph compiles; in a compiled graph the rebinding alone (inplace_arguments.py)
            self.uses_compat = True
            if self.sites and self.sites[-1].api == "Tensor." + original.func.attr.value:
                self.sites[-1].note = (f"in place on `{x}`, unpacked from a parameter: the new value is written "
                                       "into the caller's tensor where no graph compiles "
                                       "(_ms_compat.write_unrecorded); in a compiled graph only this function sees it")
            return cst.Call(func=parse_expr(f"{COMPAT}.write_unrecorded"), args=[cst.Arg(cst.Name(x)), cst.Arg(out)])
        if not self._scopes or x not in self._scopes[-1].get("held", ()) or in_cell_code \
                or original.func.attr.value in ("detach_", "requires_grad_"):   # no new values
            return out
        self.uses_compat = True
        if self.sites and self.sites[-1].api == "Tensor." + original.func.attr.value:
            self.sites[-1].note = (f"in place: the out-of-place value written into the tensor `{x}` holds "
                                   f"(_ms_compat.write_into), which the other holders share")
        # the converted value as a node, not re-parsed code: its `p.grad` reads stay tracked (grad_reads.py)
        args = [cst.Arg(cst.Name(x)), cst.Arg(out)]
        if original.func.attr.value in _RESHAPING_IN_PLACE:     # `feature.t_()`: x's own shape changes
            args.append(cst.Arg(cst.Name("True"), keyword=cst.Name("reshapes"), equal=cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))))
        return cst.Call(func=parse_expr(f"{COMPAT}.write_into"), args=args)

    # ------------------------------------------------------------- module
    def leave_Module(self, original: cst.Module, updated: cst.Module):
        # torch.autograd.grad in a script's straight-line code: the gradient of a function, as in a def
        hog = self._higher_order_grads_in(list(updated.body), frozenset())   # the defs' reads are its statements'
        if hog is not None:
            updated = updated.with_changes(body=hog)
        found = TL.rewrite_module(updated, self._loop_info())   # backward() in straight-line code
        if found is not None:
            updated = updated.with_changes(body=list(self._apply_rewrite(*found).body.body))
        updated = self._main_block_steps(updated)
        if self.train_steps:
            if self._imports.get("os") != "os":
                self.need.add("import:os")
            updated = self._with_run_header(updated)
        elif self._records_autograd:    # a backward() run by PyNative's autograd (recorded_backward.py)
            updated = self._with_header(updated, [self._record_statement()])
        if self._records_autograd:
            updated = updated.visit(RLV.RecordedMarks()).visit(RLV.UnwrappedWithoutBackward())
            updated = updated.visit(RLV.GradCallsUnmarking())
        else:     # a factory's flag wrapped for a recorded graph no backward() here records
            updated = updated.visit(RLV.Unwrapped())
        updated = GR.rewrite(self, updated)    # `x.grad` reads no train step took: raise on a tensor
        updated = LB.rewrite(self, updated)    # backward() no train step took: raise on a tensor
        updated = SL.rewrite(updated, self._names_a_cell_class)    # `LambdaLayer(lambda x: ...)`: its own line
        updated = LL.rewrite(updated)    # lambdas in `for` loops, which GRAPH mis-compiles: hoisted
        updated = GGC.lift(updated)     # a gradient's function takes the values it read as closure cells
        if self.touched:
            self._need_unbound_roots(updated)
        return self._add_imports(original, updated)

    def _names_a_cell_class(self, name: str) -> bool:
        """`name` (as a call's callee) is a Module class of the project: defined in this file, or imported."""
        qname = self._imports.get(name)
        return (self.index.is_cell_class(self.module_name, name) if qname is None
                else self.index.resolve_alias(qname) in self.index.cell_classes)

    def _main_block_steps(self, module: cst.Module) -> cst.Module:
        """backward() in the straight-line code of `if __name__ == "__main__":`: the same rewrite as at
        the top level (a step, or mindspore.value_and_grad over the tensors whose .grad is read), or a
        TODO that raises (test_train_loop.py::test_backward_under_main_without_a_loop)."""
        body = list(module.body)
        for i, st in enumerate(body):
            if not (isinstance(st, cst.If) and PH._is_main_test(st.test) and isinstance(st.body, cst.IndentedBlock)):
                continue
            found = TL.rewrite_statements(list(st.body.body), self._loop_info())
            if found is not None:
                stmts = list(self._apply_rewrite(*found).body.body)
                body[i] = st.with_changes(body=st.body.with_changes(body=stmts))
        return module.with_changes(body=body)

    def _need_unbound_roots(self, module: cst.Module) -> None:
        """Whatever emitted name (ms./nn./ops./mindspore./_ms_compat.) the converted code uses without
        an import gets one (msmigrate/module_refs.py), whichever path emitted it."""
        for root in MR.unbound_roots(module):
            if root == COMPAT:
                self.uses_compat = True
            elif root == "mindspore":
                self.need.add("import:mindspore")
            else:
                self.need.add({v: k for k, v in self.names.items()}.get(root, root))

    def _with_run_header(self, module: cst.Module) -> cst.Module:
        """A program with a converted train step chooses its mode and device once, at the top."""
        ms_name = self.names["ms"]
        mode, why = "GRAPH_MODE", "GRAPH_MODE compiles the train step (fast); PYNATIVE_MODE runs op by op (debugging)"
        if self._taped:
            mode, why = "PYNATIVE_MODE", TS.MODE_WHY
        elif self._records_autograd:
            mode, why = "PYNATIVE_MODE", RECORDED_MODE_WHY
        elif self.index.reaches_recorded_backward(self.module_name):
            mode, why = "PYNATIVE_MODE", ("PYNATIVE_MODE: a module imported runs a backward() outside a train step on "
                                          "PyNative's recorded graph (_ms_compat.autograd_backward); GRAPH mode "
                                          "records none")
        elif self.index.reaches_autograd_function(self.module_name):
            mode, why = "PYNATIVE_MODE", ("PYNATIVE_MODE: a custom autograd.Function (here or in a module imported) "
                                          "runs its backward op by op (a Cell's bprop, PYNATIVE mode only)")
        elif self.index.reaches_sequence_packing(self.module_name):
            mode, why = "PYNATIVE_MODE", ("PYNATIVE_MODE: a forward (here or in a module imported) packs sequences "
                                          "(PackedSequence orders rows by the lengths' values, op by op only)")
        elif self.index.reaches_cell_hooks(self.module_name):
            mode, why = "PYNATIVE_MODE", ("PYNATIVE_MODE: a Module hook is registered (here or in a module "
                                          "imported); MindSpore calls Cell hooks in PYNATIVE mode only")
        elif self.index.reaches_distributions(self.module_name):
            # MindSpore 2.10 runs a distribution object built in a compiled graph through JIT Fallback: its values
            # come out right, its gradients zero (a value_and_grad made in GRAPH mode compiles even when called op
            # by op), so the mode is chosen before the program makes its grad_fn
            mode, why = "PYNATIVE_MODE", ("PYNATIVE_MODE: torch.distributions objects (here or in a module imported) "
                                          "pass no gradient inside a compiled graph (op by op, they do)")
        elif self.index.reaches_data_row_loops(self.module_name):
            mode, why = "PYNATIVE_MODE", ("PYNATIVE_MODE: a forward (here or in a module imported) loops over a tensor "
                                          "whose length the data decides (torch.unique, nonzero), which a compiled "
                                          "graph cannot unroll")
        elif self.index.reaches_layers_built_in_forward(self.module_name):
            mode, why = "PYNATIVE_MODE", ("PYNATIVE_MODE: a forward (here or in a module imported) builds a layer with "
                                          "drawn weights at each call, as torch does (a compiled graph would build "
                                          "it once)")
        elif self.index.reaches_objects_built_in_forward(self.module_name):
            mode, why = "PYNATIVE_MODE", ("PYNATIVE_MODE: a forward (here or in a module imported) builds an object of "
                                          "a class of the program, which a compiled graph refuses "
                                          "(_ms_compat.graph_object); op by op it is the object torch builds")
        elif self.index.reaches_lists_in_forward(self.module_name):
            mode, why = "PYNATIVE_MODE", ("PYNATIVE_MODE: a forward (here or in a module imported) turns a tensor into "
                                          "a Python list (.tolist()) whose values shape it; a compiled graph runs "
                                          "them through JIT fallback, which fails on what they shape")
        elif self.index.reaches_host_results(self.module_name):
            mode, why = "PYNATIVE_MODE", ("PYNATIVE_MODE: a forward (here or in a module imported) calls SciPy or NumPy "
                                          "on a tensor's values (_ms_compat.host_result), which a compiled graph "
                                          "refuses (its result would reach the graph with no gradient)")
        elif self.index.reaches_host_reads(self.module_name):
            mode, why = "PYNATIVE_MODE", ("PYNATIVE_MODE: a forward (here or in a module imported) reads a tensor on "
                                          "the host (.numpy(), _ms_compat.host_value), which a compiled graph refuses: "
                                          "a call of the network outside the train step runs op by op, as torch's")
        elif self.index.reaches_argument_writes(self.module_name):
            mode, why = "PYNATIVE_MODE", ("PYNATIVE_MODE: a function (here or in a module imported) changes its "
                                          "caller's tensor in place (_ms_compat.write_argument), which a compiled "
                                          "graph refuses")
        header = [
            cst.parse_statement(f"{ms_name}.set_context(mode={ms_name}.{mode})\n").with_changes(
                leading_lines=[cst.EmptyLine()] + [cst.EmptyLine(comment=cst.Comment(c)) for c in (
                    "# msmigrate: " + why,
                    "# msmigrate: the device comes from MS_DEVICE_TARGET (CPU, GPU or Ascend)")]),
            cst.parse_statement(f"{COMPAT}.set_device(os.environ.get('MS_DEVICE_TARGET', 'CPU'))\n"),
            *([cst.parse_statement(f"{COMPAT}.open_tape()\n").with_changes(leading_lines=[cst.EmptyLine(
                comment=cst.Comment("# msmigrate: PyNative records the operations from here: a backward() of a "
                                    "loss built before its step is differentiated from that record"))])]
              if self._taped else []),
            *([self._record_statement()] if self._records_autograd and not self._taped else []),
            # oneDNN in MindSpore 2.10 picks a reference convolution on AVX-512 CPUs (100x slower);
            # read at the first convolution, so setting it here is in time
            cst.parse_statement("os.environ.setdefault('ONEDNN_MAX_CPU_ISA', 'AVX2')\n").with_changes(
                leading_lines=[cst.EmptyLine(comment=cst.Comment(
                    "# msmigrate: MindSpore's CPU convolutions are ~100x slower with oneDNN's AVX-512 path"))]),
        ]
        return self._with_header(module, header)

    @staticmethod
    def _record_statement() -> cst.BaseStatement:
        return cst.parse_statement(f"{COMPAT}.record_autograd()\n").with_changes(leading_lines=[cst.EmptyLine(
            comment=cst.Comment("# msmigrate: PyNative records the operations' graph from here: a backward() "
                                "outside a train step runs on it (_ms_compat.autograd_backward)"))])

    def _with_header(self, module: cst.Module, header: list) -> cst.Module:
        """The module with `header` after its leading imports (the run header, or record_autograd alone)."""
        body = list(module.body)
        pos = 0
        # after the last import before the first definition or block: Beta-VAE's solver.py calls
        # warnings.filterwarnings() between `import warnings` and `import os` (the header reads os, ms, _ms_compat)
        for i, st in enumerate(body):
            if isinstance(st, cst.SimpleStatementLine):
                if all(isinstance(x, (cst.Import, cst.ImportFrom)) for x in st.body):
                    pos = i + 1
                elif i == 0 and isinstance(st.body[0], cst.Expr):
                    pos = 1   # the docstring
            elif not isinstance(st, (cst.If, cst.Try)):     # (`try: import x` and its fallbacks go on)
                break
        if self._imports.get("os") == "os" and not any(
                isinstance(st, cst.SimpleStatementLine) and any(
                    isinstance(x, cst.Import) and any(code_of(a).strip() == "os" for a in x.names) for x in st.body)
                for st in body[:pos]):
            # the program imports os only after a definition (nerf-pytorch-like drivers: `def f(): ...` then
            # `import os`): the header reads it before that import ran
            header.insert(0, cst.parse_statement("import os\n"))
        self._header_codes = [code_of(st).strip() for st in header]     # (_add_imports keeps them after it)
        return module.with_changes(body=body[:pos] + header + body[pos:])

    def _header_before(self, body: list, pos: int) -> list:
        """The run header's statements (_with_run_header) where they stand before the imports they read, which go
        to `pos` (counted without the header: where the first torch import stood, in a program that sets
        sys.modules entries between `import sys` and `import torch`): moved to follow that place, so that they
        follow the imports; the body unchanged where they do not stand before it."""
        codes = getattr(self, "_header_codes", None)
        if not codes:
            return body
        n = len(codes)
        for i in range(min(pos, len(body))):
            if code_of(body[i]).strip() == codes[0]:
                if [code_of(st).strip() for st in body[i:i + n]] == codes:
                    return body[:i] + body[i + n:pos + n] + body[i:i + n] + body[pos + n:]
                break
        return body

    def _add_imports(self, original: cst.Module, updated: cst.Module):
        # names the file already imports (a converted file converted again) are not added twice
        have = self._imports
        self.need = {n for n in self.need if not (
            (n in ("nn", "ops") and have.get(self.names[n]) == f"mindspore.{n}")
            or (n == "ms" and have.get(self.names["ms"]) == "mindspore")
            or (n.startswith("import:") and have.get(n[7:].split(".")[0]) == n[7:].split(".")[0]))}
        if self.uses_compat and COMPAT in have:
            self.uses_compat = False
        lines = []
        if "ms" in self.need:
            lines.append("import mindspore as ms" if self.names["ms"] == "ms" else f"import mindspore as {self.names['ms']}")
        mods = sorted(k for k in ("nn", "ops") if k in self.need)
        if mods:
            lines.append("from mindspore import " + ", ".join(
                m if self.names[m] == m else f"{m} as {self.names[m]}" for m in mods))
        for n in sorted(self.need):
            if n.startswith("import:"):
                lines.append("import " + n[7:])
        if self.uses_compat:
            if self.compat_import is None or self.compat_import[0] == 0:
                lines.append(f"import {COMPAT}")
            else:
                if len(self.compat_import) > 2 and self.compat_import[2]:   # a package's file run as a script too
                    lines.append(f"if __package__:\n    from . import {COMPAT}\nelse:\n    import {COMPAT}")
                else:
                    lines.append(f"from {'.' * self.compat_import[0]} import {COMPAT}")
        if not lines:
            return updated
        new_stmts = [cst.parse_statement(l + "\n") for l in lines]
        body = list(updated.body)
        pos = 0
        # after the docstring and __future__ imports
        while pos < len(body):
            st = body[pos]
            if isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1:
                s = st.body[0]
                if pos == 0 and isinstance(s, cst.Expr) and isinstance(s.value, (cst.SimpleString, cst.ConcatenatedString)):
                    pos += 1
                    continue
                if isinstance(s, cst.ImportFrom) and s.module is not None and code_of(s.module).strip() == "__future__":
                    pos += 1
                    continue
            break
        # where the first torch import stood, if it stood among the leading imports
        first = self._first_torch_import_index(original)
        if first is not None and first > pos:
            removed_before = sum(1 for st in original.body[:first] if id(st) in self._removed_stmts)
            pos = min(first - removed_before, len(body))
            new_stmts[0] = new_stmts[0].with_changes(leading_lines=original.body[first].leading_lines)
        body = self._header_before(body, pos)
        return updated.with_changes(body=body[:pos] + new_stmts + body[pos:])

    def _first_torch_import_index(self, module: cst.Module) -> Optional[int]:
        for i, st in enumerate(module.body):
            if not isinstance(st, cst.SimpleStatementLine):
                if not isinstance(st, (cst.If, cst.Try)):
                    return None   # imports end here
                continue
            for small in st.body:
                if isinstance(small, cst.Import) and any(
                        self._is_foreign_torch(code_of(a.name).strip())
                        or is_dependency_name(self.index, code_of(a.name).strip()) for a in small.names):
                    return i
                if isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative \
                        and (self._is_foreign_torch(code_of(small.module).strip())
                             or is_dependency_name(self.index, code_of(small.module).strip())):
                    return i
        return None


def _self_assignment(original, updated) -> bool:
    """`x, y = x.to(device), y.to(device)` became `x, y = x, y`: nothing left to do."""
    if len(updated.body) != 1 or not isinstance(updated.body[0], cst.Assign) or len(updated.body[0].targets) != 1:
        return False
    a = updated.body[0]
    norm = lambda n: code_of(n).replace(" ", "").strip("()")   # noqa: E731
    return norm(a.targets[0].target) == norm(a.value) and code_of(original) != code_of(updated)


def _with_names(stmt, keep):
    """An import statement with only the aliases in `keep` (removed when none are left)."""
    if len(keep) == len(stmt.names):
        return stmt
    if not keep:
        return cst.RemovalSentinel.REMOVE
    keep[-1] = keep[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return stmt.with_changes(names=keep)


def _has_torch_keywords(call: cst.Call) -> bool:
    return any(a.keyword is not None and a.keyword.value in ("dim", "keepdim", "dtype", "device")
               for a in call.args)


def _train_of_unknown(tr, original: cst.Call, updated: cst.Call, name: str):
    """`obj.train(arg)` on a receiver of unknown type, its one argument no True/False literal: torch's
    Module.train(mode) or the program's own train method of any other object (Time-Series-Library's run.py:
    `exp = Exp(args); exp.train(setting)`, an experiment class with a train(setting) loop), told apart at run
    time by _ms_compat.train_of (compat_parts/train_overrides.py). `.train()` and `.train(False)` stay
    set_train. None where this is not such a call."""
    if name != "train" or len(original.args) != 1 or original.args[0].star:
        return None
    arg = original.args[0]
    if arg.keyword is not None and arg.keyword.value != "mode":
        return None
    if isinstance(arg.value, cst.Name) and arg.value.value in ("True", "False"):
        return None
    tr.uses_compat = True
    tr._record(original, "Module.train", f"{COMPAT}.train_of", R.CONVERTED,
               "receiver of unknown type: an nn.Cell's training mode (torch's Module.train), any other object's "
               "own train()")
    return cst.Call(func=cst.parse_expression(f"{COMPAT}.train_of"),
                    args=[cst.Arg(updated.func.value), *updated.args])


def _beyond_positional(call: cst.Call, params) -> bool:
    """More positional arguments than torch's method takes: a method of the program's own of that name."""
    if any(a.star for a in call.args):
        return False
    return sum(a.keyword is None for a in call.args) > len(params)


_TOPS = {"torch", "torchvision", "torchaudio", "torchtext", "torchdata", "functorch", "timm",
         "pytorch_lightning", "lightning", "torchmetrics"}

# calls whose result assigned to self.X makes X a tensor attribute (parameters, buffers)
# in-place methods changing the tensor's own shape (every holder of it sees the new shape)
_RESHAPING_IN_PLACE = {"t_", "transpose_", "swapdims_", "swapaxes_", "squeeze_", "unsqueeze_"}
# torch classes whose MindSpore class is no constructor of torch's arguments: bound to a name, the helper that is
_BOUND_CONSTRUCTORS = {"torch.Tensor": "_ms_compat.Tensor"}
# torch factories used as values, called elsewhere with torch's arguments (compat_parts/factory_values.py)
_FACTORY_VALUES = {"torch.zeros": "_ms_compat.zeros_factory_value", "torch.ones": "_ms_compat.ones_factory_value",
                   "torch.empty": "_ms_compat.empty_factory_value"}
_TENSOR_FACTORIES = {"torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.Tensor",
                     "torch.nn.Buffer", "torch.nn.parameter.Buffer"}
# torch.nn calls whose result is a plain object, no module: `packed.double()` is the object's own cast
_PLAIN_NN_RESULTS = {"torch.nn.utils.rnn.PackedSequence", "torch.nn.utils.rnn.pack_padded_sequence",
                     "torch.nn.utils.rnn.pack_sequence"}

# torch.nn.Module's dictionaries of its own children and parameters, by name: MindSpore's Cell keeps the same
# ordered name -> object dictionaries under these names
_MODULE_INTERNALS = ("_modules", "_parameters")     # torch Module dicts read by attribute: records Module._modules...
_RENAMED_ATTRS = {a for table in PARAM_RENAMES.values() for a in table}
# torch names only its norm layers give their members (weight and bias are every layer's)
_NORM_ONLY_ATTRS = ("running_mean", "running_var")


def _plain_chain(node: cst.BaseExpression) -> bool:
    """`a`, `a.b`, `a[1][0].c`, `a['k']`: reading it calls nothing, so reading it twice is reading it once."""
    while True:
        if isinstance(node, cst.Name):
            return True
        if isinstance(node, cst.Attribute):
            node = node.value
            continue
        if isinstance(node, cst.Subscript) and len(node.slice) == 1 \
                and isinstance(node.slice[0].slice, cst.Index) \
                and isinstance(node.slice[0].slice.value, (cst.Integer, cst.SimpleString, cst.Name)):
            node = node.value
            continue
        return False
_CONV1D_LAYERS = ("torch.nn.Conv1d", "torch.nn.ConvTranspose1d")
# layers whose attribute reads convert unlike the rest of their family's (kernel_size[1:], bn2d.gamma)
_CLASS_SPECIFIC_READS = _CONV1D_LAYERS + ("torch.nn.BatchNorm3d",)
_CONV1D_TUPLES = ("kernel_size", "stride", "dilation")
_INT_DIVISION_OF_AUG = {cst.FloorDivideAssign: cst.FloorDivide, cst.ModuloAssign: cst.Modulo}
_BINARY_OF_AUG = {getattr(cst, n + "Assign"): getattr(cst, n) for n in (
    "Add", "Subtract", "Multiply", "Divide", "FloorDivide", "Modulo", "Power", "MatrixMultiply", "LeftShift",
    "RightShift", "BitAnd", "BitOr", "BitXor")}


def _first_parameter(call: cst.Call) -> bool:
    """`next(m.parameters())` / `next(iter(m.parameters()))` (or buffers()): the call's argument is a module's
    parameter iterator."""
    if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return False
    arg = call.args[0].value
    if isinstance(arg, cst.Call) and isinstance(arg.func, cst.Name) and arg.func.value == "iter" and len(arg.args) == 1:
        arg = arg.args[0].value
    return (isinstance(arg, cst.Call) and not arg.args and isinstance(arg.func, cst.Attribute)
            and arg.func.attr.value in ("parameters", "buffers"))


def _starred_binds_as_torch(m: R.Mapping, receiver) -> bool:
    """`torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, **train_opt['scheduler'])` (basicsr's
    setup_schedulers): a record whose only change of the arguments is dropping parameters that torch's own
    signature no longer has (the schedules' verbose, removed in torch 2.7), onto a target taking torch's
    parameters under the same names in the same order: starred values bind to the same parameters on both sides,
    whatever they are (a dropped name among them is refused by torch and by the target alike, with TypeError).
    Anything with a renaming, a transform, a value table, an extra, a rule or a receiver still cannot be
    translated argument by argument."""
    if receiver is not None or not m.drop or m.rule is not None or m.rename or m.transforms or m.values \
            or m.extra or m.unsupported or m.unsupported_values:
        return False
    params, open_ = AC.torch_params(m.source)
    if params is None or open_ or any(d in params for d in m.drop) or any(p[2] != "p" for p in params.values()):
        return False
    return tuple(m.target_args) == tuple(params)


def _starred_keeps_positions(call, m: R.Mapping, receiver) -> bool:
    """`x.transpose(*self.dims)` (PatchTST's Transpose): one `*args` and nothing else by keyword, for a record whose
    only change of the arguments is a renaming that keeps every position (torch's dim0, dim1 are ops.swapaxes'
    axis0, axis1, right after the input): the starred values land on the same parameters on both sides, whatever
    their number, so they pass through as they are. Anything else (values, transforms, drops, a rule, an argument
    without a counterpart, `**kwargs`, a keyword) still cannot be translated argument by argument."""
    if not isinstance(call, cst.Call) or m.rule is not None or m.transforms or m.drop or m.values or m.extra \
            or m.unsupported or m.unsupported_values:
        return False
    args = list(call.args)
    if sum(1 for a in args if a.star) != 1 or any(a.star == "**" or a.keyword is not None for a in args):
        return False
    lead = 1 if receiver is not None else 0
    renamed = [m.rename.get(a, a) for a in m.args]
    return tuple(m.target_args[lead:lead + len(renamed)]) == tuple(renamed) and len(m.target_args) == lead + len(
        renamed)
