"""A fast whole-project pre-pass (stdlib `ast`): module names, which classes are
Modules (directly or through project classes in other files), and torch names
re-exported by project modules. The libcst pass then converts one file at a time."""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, FrozenSet, Iterable, Iterator, List, Optional, Set, Tuple

from .argument_backward import argument_backward_lines
from . import graph_records as GR

# Packages whose code needs torch; a project's own copy of one of them is local.
TORCH_ECOSYSTEM = (
    "torch", "torchvision", "torchaudio", "torchtext", "torchdata", "functorch",
    "timm", "pytorch_lightning", "lightning", "torchmetrics",
)

# torch.autograd.Function under its public and canonical names
_AUTOGRAD_FUNCTIONS = ("torch.autograd.Function", "torch.autograd.function.Function")

# torch.nn classes a user class can inherit from and still be a Module.
_MODULE_BASE_PREFIXES = ("torch.nn.",)
# PyTorch Lightning's LightningModule, a Module (mappings/lightning.py)
_LIGHTNING_MODULES = frozenset(p + n for p in ("pytorch_lightning.", "lightning.pytorch.", "lightning.")
                               for n in ("LightningModule", "core.LightningModule", "core.module.LightningModule"))


# torch-only modules of framework-neutral packages (safetensors.numpy needs no torch), and einops,
# which has no MindSpore backend (msmigrate/mappings/einops.py translates its calls), and einx (mappings/einx.py:
# its element-wise calls with literal descriptions; the rest TODOs).
TORCH_SUBMODULES = ("safetensors.torch", "einops", "einx")


# Hugging Face transformers is framework-neutral at its top (configs, tokenizers work without torch), but its
# models, Trainer, pipelines, data collators and schedules are torch code: names of those are torch names
# (TF* and Flax* classes are not), so their uses are sites, not copied through unseen.
_HF_TORCH_NAMES = re.compile(
    r"(?!TF|Flax)(\w*(Model|ModelMixin|LMHead\w*)|\w+For[A-Z]\w*|AutoModel\w*|\w*Trainer|pipeline|PreTrainedModel"
    r"|GenerationMixin|DataCollator\w*|default_data_collator|AdamW|Adafactor|get_\w*schedule\w*)")


def _hf_torch_name(qname: str) -> bool:
    """transformers.BertModel, transformers.models.bert.modeling_bert.BertLayer: torch; transformers.BertConfig,
    transformers.AutoTokenizer, transformers.TFBertModel: not."""
    parts = qname.split(".")
    if len(parts) < 2:
        return False
    if any(p == "modeling_utils" or (p.startswith("modeling_") and not p.startswith(("modeling_tf_", "modeling_flax_")))
           for p in parts[1:-1]):
        return True
    return any(_HF_TORCH_NAMES.fullmatch(p) for p in parts[1:])     # BertModel.from_pretrained too


def is_torch_name(qname: str) -> bool:
    top = qname.split(".", 1)[0]
    if top == "transformers":
        return _hf_torch_name(qname)
    return top in TORCH_ECOSYSTEM or any(qname == m or qname.startswith(m + ".") for m in TORCH_SUBMODULES)


@dataclass
class ModuleInfo:
    name: str                     # dotted module name as the project imports it
    path: Path
    is_package: bool              # an __init__.py
    imports: Dict[str, str] = field(default_factory=dict)   # local name -> absolute qualified name
    classes: Dict[str, List[str]] = field(default_factory=dict)  # class name -> absolute base names
    parse_error: Optional[str] = None
    stars: List[str] = field(default_factory=list)      # modules this one `from M import *`s (absolute)
    all_names: Optional[List[str]] = None              # its literal `__all__`, if any
    defined: Set[str] = field(default_factory=set)     # names its top level binds itself (def, class, =)
    variables: Set[str] = field(default_factory=set)   # of those, the names bound by an assignment (`net = ...`)
    # its module-level functions that make data on the host (call NumPy or from_numpy: mixup's np.random.beta), as
    # train_loop.host_functions finds them in the module converted: called from another module's loop, data too
    drawing_functions: Set[str] = field(default_factory=set)
    # `Pair = namedtuple("Pair", ...)` / `NamedTuple("Pair", [...])` at the top level: name -> the factory
    named_tuples: Dict[str, str] = field(default_factory=dict)
    # class name -> (attribute, methods): classes wrapping an optimizer (ScheduledOptim, NoamOpt) whose methods
    # call `self.<attribute>.step()` (optimizer_wrapper_methods)
    optimizer_wrappers: Dict[str, Tuple[str, Tuple[str, ...]]] = field(default_factory=dict)
    # methods other than step() of its torch Optimizer subclasses that read `p.grad` (SAM's first_step /
    # second_step): a loop calling one after backward() hands them the gradients (optimizer_grad_methods)
    optimizer_grad_methods: Set[str] = field(default_factory=set)
    builds_sparse: bool = False   # names a torch sparse constructor or product (sparse_products.py)
    overrides_train: bool = False   # defines train(self, mode): a Module's own (mappings/module_api.py _eval)
    # its module-level functions calling a tensor-only method on a parameter (ProjectIndex.serves_torch_code)
    tensor_method_functions: Set[str] = field(default_factory=set)
    reads_autograd_grad: bool = False   # calls torch.autograd.grad (grad_helpers.py: a helper other modules call)
    # class name -> its data methods (_data_methods): a one-hot of labels built from its arguments alone, no network,
    # no other method of self
    data_methods: Dict[str, Set[str]] = field(default_factory=dict)
    reads_grad: bool = False      # reads some `x.grad` (a gradient logged): the project's steps keep theirs
    # its classes defining a method named backward (encodec's loss Balancer: `balancer.backward(losses, output)` is
    # that method's call, not torch's Tensor.backward): ProjectIndex.own_backward_class
    backward_classes: Set[str] = field(default_factory=set)
    # in a module that clears gradients (zero_grad(), `p.grad = None`): the names it calls (grad_carry.py)
    calls_when_clearing: Set[str] = field(default_factory=set)
    # a forward (or a module-level function next to a class) calls a torch function whose converted helper runs
    # in Python on the values (PACKING_CALLS): a compiled graph cannot run it, so a program reaching it runs PYNATIVE
    packs_sequences: bool = False
    # calls x.register_forward_hook(...) or another Module hook registration (MindSpore calls Cell hooks in
    # PYNATIVE mode only)
    registers_hooks: bool = False
    calls_step: bool = False      # some `x.step(...)` (an optimizer, a scaler, a scheduler): recorded_backward.py
    # calls backward(), steps nothing and reads .grad or registers hooks: its backward() runs on PyNative's recorded
    # graph (recorded_backward.py, as TorchToMindSpore._reads_recorded_gradients judges it), PYNATIVE mode only
    records_backward: bool = False
    # lines of its backward()s of a loss handed to their function (a loss scaler's __call__): run on PyNative's
    # recorded graph into the parameters' .grad (argument_backward.py), PYNATIVE mode only
    argument_backward_lines: FrozenSet[int] = frozenset()
    # a call of torch.distributions (Normal(...), kl_divergence...) anywhere in the module: built in a compiled
    # graph, a distribution is a Python object no gradient flows through, so a program reaching one runs PYNATIVE
    builds_distributions: bool = False
    # a forward builds a layer with randomly drawn weights (`nn.Linear(4, 2)(x)`, `nn.Embedding(5, 3)(ids)`): torch
    # draws a fresh layer per call; a compiled graph builds it once, at compile time (the same weights every step),
    # or cannot build it at all (an initializer object in construct), so a program reaching one runs PYNATIVE
    builds_layers_in_forward: bool = False
    # a forward turns a tensor into a Python list (`lengths.tolist()`): the values shape the computation (loop
    # counts, slice bounds: the image-captioning decoders); in a compiled graph they run through JIT fallback,
    # which fails on what they shape or zeroes gradients, so a program reaching one runs PYNATIVE
    lists_in_forward: bool = False
    # a forward loops over a tensor whose length the data decides (`for e in torch.unique(idx)`, a mixture of
    # experts): a compiled graph cannot unroll it (compat_parts/data_dependent_loops.py), so a program reaching one
    # runs PYNATIVE
    loops_over_data_rows: bool = False
    # a forward calls a host library on a tensor (DETR's `linear_sum_assignment(c[i])`, `np.sqrt(h.sum().item())`):
    # converted to _ms_compat.host_result (host_draws.py), computed op by op and refused by a compiled graph (its
    # value would reach the graph with no gradient), so a program reaching one runs PYNATIVE
    host_results_in_forward: bool = False
    # a forward (or another method of a Module but its initialisers) reads a tensor on the host, `t.numpy()`
    # (nlp-tutorial's attention maps returned as `w.data.numpy()` beside the logits): _ms_compat.host_value
    # (host_draws.py), which a compiled graph refuses. A train step reaching it runs op by op in either mode; a
    # plain call of the network (the predictions after training) is compiled in GRAPH mode and stops there, where
    # torch runs on, so a program reaching one runs PYNATIVE
    host_reads_in_forward: bool = False
    # the classes ("" for the module's own functions) of functions this module calls that change a parameter by an
    # in-place method call standing as a statement and never return it (timm's Mixup._mix_batch): inplace_callers.py
    # writes such a change into the caller's tensor (_ms_compat.write_argument), which a compiled graph refuses
    argument_write_owners: Set[str] = field(default_factory=set)
    # the names this module calls (`f(...)`, `x.f(...)`): whether a program builds such a class (`Mixup(...)`)
    called_names: Set[str] = field(default_factory=set)
    # `Pair = collections.namedtuple("Pair", ["h", "x"])` with literal fields and no defaults: name -> fields
    named_tuple_fields: Dict[str, Tuple[str, ...]] = field(default_factory=dict)
    # attribute names read on anything but `self` (not on a torch op's (values, indices) result), names in
    # getattr(x, "name"), and the names isinstance() tests against: how a record's fields may be reached
    attribute_reads: Set[str] = field(default_factory=set)
    # top-level dataclasses / plain argument-storing classes (graph_records.py), and what the module does that
    # could tell such a record's graph dict from the object
    record_classes: Dict[str, "GR.RecordClass"] = field(default_factory=dict)
    record_uses: Optional["GR.RecordUses"] = None
    # `self.A = <call>` in the methods of its classes: A -> the qualified names called ("" for any other value),
    # so that `model.pos_emb.weight` in another function knows pos_emb is an Embedding (ProjectIndex.attribute_layers)
    self_attr_values: Dict[str, Set[str]] = field(default_factory=dict)
    # calls of named functions: the function's qualified name -> per call, its arguments (position or keyword ->
    # the attribute A of a `self.A` argument, None for anything else): what a function's parameter holds where
    # every call passes a layer attribute (ProjectIndex.parameter_layer: awd-lstm-lm's
    # `embedded_dropout(self.encoder, ...)`)
    call_arguments: Dict[str, List[Dict[object, Optional[str]]]] = field(default_factory=dict)
    # an Embedding built with sparse= other than False (or through **kwargs): `embed.sparse` is not known False
    sparse_embeddings: bool = False
    # class name -> its methods that draw with the host's generators (`np.random.randint`, `random.sample`): a
    # replay buffer's sample() (ProjectIndex.host_sampling_methods)
    host_sampling_methods: Dict[str, Set[str]] = field(default_factory=dict)
    # attribute names a forward of its classes stores on self (`self.last_loss = F.cross_entropy(...)`, llama2.c):
    # a train step reading one from the model after calling it (`loss = model.last_loss`) runs op by op, because a
    # compiled graph reads such an attribute as a constant (ProjectIndex.forward_stored_attributes)
    forward_stores: Set[str] = field(default_factory=set)
    # the qualified names a forward calls (_forward_built_names): project classes among them build objects there
    forward_built_names: Set[str] = field(default_factory=set)
    # the method names a forward (or another method of a class with one) calls on any value (_forward_method_calls)
    forward_method_calls: Set[str] = field(default_factory=set)


def _forward_stores(classes: List[ast.ClassDef]) -> Set[str]:
    """The attributes `self.A = value` stores in a method named forward of these classes (values other than None)."""
    found: Set[str] = set()
    for c in classes:
        for f in c.body:
            if not (isinstance(f, ast.FunctionDef) and f.name == "forward"):
                continue
            for n in ast.walk(f):
                if isinstance(n, ast.Assign) and not (isinstance(n.value, ast.Constant) and n.value.value is None):
                    for t in n.targets:
                        for e in (t.elts if isinstance(t, ast.Tuple) else [t]):
                            if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) \
                                    and e.value.id == "self":
                                found.add(e.attr)
    return found


def _host_sampling_methods(node: ast.ClassDef, resolve) -> Set[str]:
    """The methods of a class that call a draw of NumPy's or Python's random module (by their qualified names), or
    the builtin next() (makemore's InfiniteDataLoader.next(): `next(self.data_iter)` of a DataLoader's iterator, a
    fresh iter() on StopIteration): what they return is the step's data, as `next(it)` is."""
    found: Set[str] = set()
    for fn in node.body:
        if not isinstance(fn, ast.FunctionDef) or fn.name.startswith("__"):
            continue
        for n in ast.walk(fn):
            if isinstance(n, ast.Call):
                q = resolve(n.func) or ""
                if q.startswith(("numpy.random.", "random.")) or _advances_own_iterator(n):
                    found.add(fn.name)
                    break
    return found


def _advances_own_iterator(call: ast.Call) -> bool:
    """`next(self.data_iter)` or `next(iter(self.loader))`: the builtin next() of an iterator the object holds."""
    if not (isinstance(call.func, ast.Name) and call.func.id == "next" and call.args):
        return False
    arg = call.args[0]
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and arg.func.id == "iter" and arg.args:
        arg = arg.args[0]
    while isinstance(arg, (ast.Attribute, ast.Subscript)):
        arg = arg.value
    return isinstance(arg, ast.Name) and arg.id == "self"


def module_name_for(root: Path, path: Path) -> Tuple[str, bool]:
    """Dotted module name of `path`, for a tree rooted at `root`.

    If `root` is itself a package (has __init__.py) its own name is the first part,
    so `torchvision/models/resnet.py` is `torchvision.models.resnet`."""
    rel = path.relative_to(root)
    parts = list(rel.with_suffix("").parts)
    is_pkg = parts[-1] == "__init__"
    if is_pkg:
        parts = parts[:-1]
    if (root / "__init__.py").exists():
        parts = [root.name] + parts
    return ".".join(parts), is_pkg


def resolve_relative(current_module: str, is_package: bool, level: int, name: Optional[str]) -> str:
    pkg = current_module.split(".") if is_package else current_module.split(".")[:-1]
    if level > 1:
        pkg = pkg[: len(pkg) - (level - 1)]
    base = ".".join(p for p in pkg if p)
    if name:
        return f"{base}.{name}" if base else name
    return base


def resolve_head(dotted: str, imports: Dict[str, str]) -> Optional[str]:
    """`a.b.c` with its head `a` replaced by what a file's import table binds it to (local name ->
    qualified name); None where the file imports no `a` (a local name)."""
    head, _, rest = dotted.partition(".")
    full = imports.get(head)
    if full is None:
        return None
    return full + ("." + rest if rest else "")


def _dotted(node: ast.AST) -> Optional[str]:
    """`a.b.c` of an ast expression as its dotted text, the base of `Generic[T]` as `Generic`; None
    for anything else. (callsite.dotted_name is the same for libcst nodes.)"""
    parts: List[str] = []
    while not isinstance(node, ast.Name):
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
        elif not isinstance(node, ast.Subscript):   # Generic[T] style bases
            return None
        node = node.value
    return ".".join([node.id] + parts[::-1])


# `p.grad` read (not assigned, not autograd's `.grad(...)`)
_TORCH_NAMED = re.compile(r"\b(torch|torchvision|torchaudio|torchtext|functorch|timm)\b")   # converter's _TORCH_WORD
_GRAD_READ = re.compile(r"\.grad\b(?!\s*(\(|=(?!=)))")


# what clears gradients (train_loop._CLEARS_GRADS), and a called name (`f(`, `obj.f(`)
_CLEARS_GRADS = re.compile(r"\.zero_grad\(|\.grad\s*=\s*None\b|\.grad(\.data)?\.zero_\(")
_CALLED = re.compile(r"(\w+)\s*\(")


def _drawing_functions(tree: ast.Module, imports: Dict[str, str]) -> Set[str]:
    """The module-level functions calling NumPy (under a name the module imports it as) or from_numpy
    (train_loop.host_functions of the same module, read by the modules that import it)."""
    numpy_names = {a for a, q in imports.items() if q == "numpy" or q.startswith("numpy.")}
    found: Set[str] = set()
    for st in tree.body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                isinstance(n, ast.Call) and (_dotted(n.func) or "").split(".")[0] in numpy_names
                or isinstance(n, ast.Call) and (_dotted(n.func) or "").endswith("from_numpy")
                for n in ast.walk(st)):
            found.add(st.name)
    return found


def _scan_module(info: ModuleInfo, source: str) -> None:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError) as exc:
        info.parse_error = str(exc)
        return
    except (RecursionError, MemoryError):   # nesting too deep for Python's own parser
        info.parse_error = "nested too deeply for Python's parser"
        return
    info.reads_grad = bool(_GRAD_READ.search(source))
    info.tensor_method_functions = _tensor_method_functions(tree)
    info.reads_autograd_grad = bool(re.search(r"\bautograd\s*\.\s*grad\s*\(", source))
    from .sparse_products import SPARSE_NAMES
    info.builds_sparse = bool(SPARSE_NAMES.search(source))
    info.overrides_train = bool(_OWN_TRAIN.search(source))
    if _CLEARS_GRADS.search(source):
        info.calls_when_clearing = set(_CALLED.findall(source))
    imports = info.imports
    classes = []
    # imports and classes are statements: walk statement bodies only, not expressions
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    imports[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    imports[top] = top
        elif isinstance(node, ast.ImportFrom):
            base = resolve_relative(info.name, info.is_package, node.level, node.module) if node.level else (node.module or "")
            for alias in node.names:
                if alias.name == "*":
                    info.stars.append(base)
                    continue
                imports[alias.asname or alias.name] = f"{base}.{alias.name}" if base else alias.name
        else:
            if isinstance(node, ast.ClassDef):
                classes.append(node)
            for attr in ("body", "orelse", "finalbody", "handlers"):
                stack.extend(getattr(node, attr, ()) or ())
    _scan_top_level(info, tree)
    info.backward_classes = {c.name for c in classes if any(
        isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name == "backward" for f in c.body)}
    _scan_named_tuples(info, tree)
    info.drawing_functions = _drawing_functions(tree, imports)
    info.packs_sequences = bool(classes) and _forward_calls(tree, imports, PACKING_CALLS)
    info.registers_hooks = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                               and n.func.attr in HOOK_REGISTRATIONS for n in ast.walk(tree))
    info.calls_step = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "step"
                          for n in ast.walk(tree))
    info.records_backward = not info.calls_step and (info.registers_hooks or info.reads_grad) and any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "backward"
        for n in ast.walk(tree))
    info.argument_backward_lines = argument_backward_lines(tree) if ".backward(" in source else frozenset()
    info.builds_distributions = _calls_under(tree, imports, "torch.distributions.")
    info.builds_layers_in_forward = bool(classes) and _forward_builds_drawn_layer(tree, imports)
    info.forward_built_names = _forward_built_names(tree, imports, info.name) if classes else set()
    info.lists_in_forward = any(
        isinstance(f, ast.FunctionDef) and f.name == "forward" and any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "tolist"
            for n in ast.walk(f)) for c in classes for f in c.body)
    info.loops_over_data_rows = bool(classes) and _forward_loops_over_data_rows(tree, imports)
    info.host_results_in_forward = bool(classes) and _forward_host_results(tree, imports)
    info.host_reads_in_forward = _forward_host_reads(classes)
    info.argument_write_owners = _argument_write_owners(tree)
    info.called_names = {n.func.id if isinstance(n.func, ast.Name) else n.func.attr for n in ast.walk(tree)
                         if isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute))}
    info.attribute_reads = _attribute_reads(tree)
    info.forward_stores = _forward_stores(classes)
    info.forward_method_calls = _forward_method_calls(classes)
    info.data_methods = {c.name: found for c in classes if (found := _data_methods(c))}
    def resolve(node: ast.AST) -> Optional[str]:
        d = _dotted(node)
        return (resolve_head(d, imports) or d) if d else None
    info.record_classes = GR.scan_record_classes(tree, resolve)
    info.self_attr_values = _self_attr_values(classes, resolve)
    info.call_arguments = _call_arguments(tree, resolve)
    info.sparse_embeddings = _sparse_embeddings(tree, resolve)
    info.record_uses = GR.scan_uses(tree, resolve)
    for node in classes:
        bases = []
        for b in node.bases:
            d = _dotted(b)
            if not d:
                continue
            imported = resolve_head(d, imports)
            bases.append(imported if imported is not None else f"{info.name}.{d}")
        info.classes.setdefault(node.name, bases)
        sampling = _host_sampling_methods(node, resolve)
        if sampling:
            info.host_sampling_methods[node.name] = sampling
        wrapped = optimizer_wrapper_methods(node)
        if wrapped is not None:
            info.optimizer_wrappers.setdefault(node.name, wrapped)
        if any(b in ("torch.optim.Optimizer", "torch.optim.optimizer.Optimizer") for b in bases):
            info.optimizer_grad_methods |= optimizer_grad_methods(node)


def _forward_method_calls(classes: List[ast.ClassDef]) -> Set[str]:
    """The names of the methods called on any value (`x.NAME(...)`) by the methods other than __init__ of the classes
    that define forward or __call__: what a compiled forward may run of another class."""
    names: Set[str] = set()
    for cls in classes:
        methods = [f for f in cls.body if isinstance(f, ast.FunctionDef)]
        if not any(f.name in ("forward", "__call__") for f in methods):
            continue
        for fn in methods:
            if fn.name != "__init__":
                names |= {n.func.attr for n in ast.walk(fn)
                          if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    return names


SETTER = "=param"   # `self.A = value` in a method other than __init__, value its parameter (a setter)


def _self_attr_values(classes: List[ast.ClassDef], resolve) -> Dict[str, Set[str]]:
    """`self.A = f(...)` (also annotated, or one of several targets) in the classes' methods: A -> the names f
    resolves to; "" for a value that is no call, or a call of something unnamed; SETTER for a method's parameter
    stored outside __init__ (transformers' `set_input_embeddings(self, value): self.shared = value`)."""
    out: Dict[str, Set[str]] = {}
    for cls in classes:
        setters = set()
        for fn in cls.body:
            if isinstance(fn, ast.FunctionDef) and fn.name != "__init__":
                params = {a.arg for a in fn.args.args[1:] + fn.args.kwonlyargs}
                setters |= {id(n) for n in ast.walk(fn) if isinstance(n, ast.Assign)
                            and isinstance(n.value, ast.Name) and n.value.id in params}
        for node in ast.walk(cls):
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                targets, value = [node.target], node.value
            elif isinstance(node, ast.AugAssign):
                targets, value = [node.target], None
            else:
                continue
            for t in targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    called = resolve(value.func) if isinstance(value, ast.Call) else None
                    out.setdefault(t.attr, set()).add(SETTER if id(node) in setters else called or "")
    return out


_EMBEDDINGS = {"torch.nn.Embedding": 6, "torch.nn.modules.sparse.Embedding": 6, "torch.nn.Embedding.from_pretrained": 5,
               "torch.nn.modules.sparse.Embedding.from_pretrained": 5}     # -> the position of `sparse`


def _sparse_embeddings(tree: ast.AST, resolve) -> bool:
    """An Embedding built here with sparse= other than a literal False (or with **kwargs)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
            position = _EMBEDDINGS.get(resolve(node.func) or "")
            if position is None:
                continue
            if len(node.args) > position or any(isinstance(a, ast.Starred) for a in node.args):
                return True
            for k in node.keywords:
                if k.arg is None or k.arg == "sparse" and not (isinstance(k.value, ast.Constant)
                                                               and k.value.value is False):
                    return True
    return False


def _call_arguments(tree: ast.AST, resolve) -> Dict[str, List[Dict[object, Optional[str]]]]:
    """Each call of a plain name or dotted name: its qualified name -> per call, position or keyword -> the A of a
    `self.A` argument (None for any other argument); a call with *args or **kwargs has no entry of positions."""
    out: Dict[str, List[Dict[object, Optional[str]]]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, (ast.Name, ast.Attribute)):
            continue
        name = resolve(node.func)
        if not name:
            continue
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            out.setdefault(name, []).append({"*": None})
            continue
        args: Dict[object, Optional[str]] = {}
        for i, a in enumerate(node.args):
            args[i] = a.attr if isinstance(a, ast.Attribute) and isinstance(a.value, ast.Name) \
                and a.value.id == "self" else None
        for k in node.keywords:
            v = k.value
            args[k.arg] = v.attr if isinstance(v, ast.Attribute) and isinstance(v.value, ast.Name) \
                and v.value.id == "self" else None
        out.setdefault(name, []).append(args)
    return out


def optimizer_grad_methods(node: ast.ClassDef) -> Set[str]:
    """The methods of an Optimizer subclass, other than step() and dunders, that read `.grad` (SAM's
    first_step/second_step): each applies the gradients of the backward() before its call."""
    found: Set[str] = set()
    for fn in node.body:
        if isinstance(fn, ast.FunctionDef) and fn.name != "step" and not fn.name.startswith("__") \
                and any(isinstance(n, ast.Attribute) and n.attr == "grad" for n in ast.walk(fn)):
            found.add(fn.name)
    return found


def optimizer_wrapper_methods(node: ast.ClassDef) -> Optional[Tuple[str, Tuple[str, ...]]]:
    """(attribute, methods) where methods of the class call `self.<attribute>.step()` (no closure) on one
    attribute whose name says optimizer: a learning-rate wrapper around a torch optimizer, stepped through its
    own method (`optimizer.step_and_update_lr()`). None for other classes."""
    attrs: Set[str] = set()
    methods: List[str] = []
    for fn in node.body:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for call in ast.walk(fn):
            f = call.func if isinstance(call, ast.Call) else None
            if (isinstance(f, ast.Attribute) and f.attr == "step" and not call.args and not call.keywords
                    and isinstance(f.value, ast.Attribute) and isinstance(f.value.value, ast.Name)
                    and f.value.value.id == "self" and re.search(r"optim|(^|_)opt", f.value.attr, re.I)):
                attrs.add(f.value.attr)
                if fn.name not in methods:
                    methods.append(fn.name)
    if len(attrs) != 1:
        return None
    return attrs.pop(), tuple(methods)


# torch.nn.utils.rnn's packing: the converted PackedSequence orders rows by the lengths' values (NumPy)
PACKING_CALLS = frozenset(f"torch.nn.utils.rnn.{n}" for n in (
    "pack_padded_sequence", "pack_sequence", "pad_packed_sequence", "PackedSequence", "unpack_sequence"))


HOOK_REGISTRATIONS = frozenset(("register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
                                "register_full_backward_pre_hook", "register_backward_hook"))


def _forward_calls(tree: ast.Module, imports: Dict[str, str], qualified: frozenset) -> bool:
    """A `forward` method, or a module-level function (a helper forward may call), calls one of `qualified`
    (through the module's imports: `rnn_utils.pack_padded_sequence`, `nn.utils.rnn.pack_sequence`)."""
    def calls(fn: ast.AST) -> bool:
        for node in ast.walk(fn):
            d = _dotted(node.func) if isinstance(node, ast.Call) else None
            if d is not None and resolve_head(d, imports) in qualified:
                return True
        return False
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and calls(node):
            return True
        if isinstance(node, ast.ClassDef) and any(
                isinstance(f, ast.FunctionDef) and f.name == "forward" and calls(f) for f in node.body):
            return True
    return False


def _calls_under(tree: ast.Module, imports: Dict[str, str], prefix: str) -> bool:
    """Anything in the module calls a name under `prefix` (through the module's imports: `Normal(...)` after
    `from torch.distributions import Normal`, `D.Categorical(...)`)."""
    for node in ast.walk(tree):
        d = _dotted(node.func) if isinstance(node, ast.Call) else None
        if d is not None and (resolve_head(d, imports) or "").startswith(prefix):
            return True
    return False


# torch.nn layers whose weights are drawn at random when built (a LayerNorm's, a PReLU's are constants)
_DRAWN_LAYER = re.compile(r"torch\.nn\.(Lazy)?(Linear|Bilinear|Conv\w*|ConvTranspose\w*|Embedding\w*|RNN\w*|LSTM\w*|"
                          r"GRU\w*|MultiheadAttention|Transformer\w*)")


def _forward_call_names(tree: ast.Module) -> Iterator[str]:
    """The dotted callee of each call in the `forward` methods of the module's classes."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        for f in node.body:
            if isinstance(f, ast.FunctionDef) and f.name == "forward":
                for call in ast.walk(f):
                    d = _dotted(call.func) if isinstance(call, ast.Call) else None
                    if d is not None:
                        yield d


def _forward_builds_drawn_layer(tree: ast.Module, imports: Dict[str, str]) -> bool:
    """A `forward` method calls a torch.nn layer constructor whose weights are drawn (_DRAWN_LAYER)."""
    return any(_DRAWN_LAYER.fullmatch(resolve_head(d, imports) or "") for d in _forward_call_names(tree))


def _forward_built_names(tree: ast.Module, imports: Dict[str, str], module: str) -> Set[str]:
    """The qualified names a `forward` method calls (`Mask(B, L)`, `masking.Mask(...)`): the classes of the
    project among them are objects built in a forward (ProjectIndex.reaches_objects_built_in_forward)."""
    return {resolve_head(d, imports) or f"{module}.{d}" for d in _forward_call_names(tree)
            if d.split(".")[0] != "self"}


def _forward_host_results(tree: ast.Module, imports: Dict[str, str]) -> bool:
    """A `forward` method calls what host_draws.py makes `_ms_compat.host_result`: a SciPy function given a value
    that is not a literal, or a NumPy function given a tensor's `.item()`."""
    def host_result(call: ast.Call) -> bool:
        d = _dotted(call.func)
        full = (resolve_head(d, imports) or "") if d else ""
        if full.startswith("scipy."):
            return not all(isinstance(a, ast.Constant) for a in call.args + [k.value for k in call.keywords])
        return full.startswith("numpy.") and any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "item" and not n.args
            for a in call.args for n in ast.walk(a))

    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and any(
                isinstance(f, ast.FunctionDef) and f.name == "forward" and any(
                    isinstance(c, ast.Call) and host_result(c) for c in ast.walk(f)) for f in node.body):
            return True
    return False


# a Module's methods that build it rather than run in its forward (transformer._in_forward)
_INITIALISERS = ("__init__", "reset_parameters", "_init_weights", "init_weights")


def _forward_host_reads(classes) -> bool:
    """A class with a `forward` calls `x.numpy()` in a method that runs in its forward (any but its initialisers:
    Bi-LSTM(Attention)'s attention_net, which forward calls): what host_draws.py makes `_ms_compat.host_value`."""
    for node in classes:
        methods = [f for f in node.body if isinstance(f, ast.FunctionDef)]
        if not any(f.name == "forward" for f in methods):
            continue
        for f in methods:
            if f.name not in _INITIALISERS and any(
                    isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == "numpy"
                    and not c.args and not c.keywords for c in ast.walk(f)):
                return True
    return False


def _argument_write_owners(tree: ast.Module) -> Set[str]:
    """ModuleInfo.argument_write_owners: as inplace_callers.py's Callee judges it (statement_changes, no return of
    the parameter), less its check that the caller reads its tensor afterwards (a program that might write runs
    PYNATIVE: slower, never refused)."""
    from . import registry  # noqa: F401  (rebinds reads the records)
    from .inplace_arguments import rebinds

    called = {n.func.id if isinstance(n.func, ast.Name) else n.func.attr for n in ast.walk(tree)
              if isinstance(n, ast.Call) and (isinstance(n.func, ast.Name) or (
                  isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
                  and n.func.value.id == "self"))}

    def writes(fn) -> bool:
        params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs} - {"self", "cls"}
        returned = {n.value.id for n in ast.walk(fn) if isinstance(n, ast.Return) and isinstance(n.value, ast.Name)}
        for st in ast.walk(fn):
            call = st.value if isinstance(st, ast.Expr) else None
            while isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and rebinds(call.func.attr):
                call = call.func.value
                if isinstance(call, ast.Name) and call.id in params and call.id not in returned:
                    return True
        return False

    owners: Set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in called and writes(node):
            owners.add("")
        elif isinstance(node, ast.ClassDef) and any(
                isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name in called and writes(f)
                for f in node.body):
            owners.add(node.name)
    return owners


def dependency_write_owners(roots: Iterable[Path]) -> Set[str]:
    """The classes of the --deps packages (directories or single files) with a method that may write a parameter's
    in-place change into its caller's tensor (_argument_write_owners), less those deriving from a class named
    `...Module` (a network's): timm's Mixup, which a project's training script builds."""
    owners: Set[str] = set()
    for root in roots:
        for path in ([root] if root.is_file() else sorted(root.rglob("*.py"))):
            try:
                text = path.read_text(encoding="utf-8")
                if not re.search(r"\.\w+_\(", text):
                    continue
                tree = ast.parse(text)
            except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
                continue
            networks = {c.name for c in tree.body if isinstance(c, ast.ClassDef) and any(
                (_dotted(b) or "").endswith("Module") for b in c.bases)}
            owners |= _argument_write_owners(tree) - networks - {""}
    return owners


# torch functions (and Tensor methods) whose result's length the data decides
_DATA_LENGTH = ("unique", "unique_consecutive", "nonzero", "argwhere", "masked_select")


def _forward_loops_over_data_rows(tree: ast.Module, imports: Dict[str, str]) -> bool:
    """A `forward` method loops over a _DATA_LENGTH call's result, directly or through a name it assigned."""
    def data_length(node) -> bool:
        if not isinstance(node, ast.Call):
            return False
        d = _dotted(node.func)
        full = (resolve_head(d, imports) or "") if d else ""
        if full.startswith("torch.") and full.rsplit(".", 1)[-1] in _DATA_LENGTH:
            return True
        return isinstance(node.func, ast.Attribute) and node.func.attr in _DATA_LENGTH and not full

    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        for f in node.body:
            if not (isinstance(f, ast.FunctionDef) and f.name == "forward"):
                continue
            held = {t.id for a in ast.walk(f) if isinstance(a, ast.Assign) and data_length(a.value)
                    for t in a.targets if isinstance(t, ast.Name)}
            for loop in ast.walk(f):
                if isinstance(loop, ast.For) and (data_length(loop.iter) or isinstance(loop.iter, ast.Name)
                                                  and loop.iter.id in held):
                    return True
    return False


_TUPLE_FACTORIES = ("collections.namedtuple", "typing.NamedTuple", "typing_extensions.NamedTuple")


def _scan_named_tuples(info: ModuleInfo, tree: ast.Module) -> None:
    """Top-level `Name = namedtuple(...)` (or typing's functional `NamedTuple(...)`) of this module."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            d = _dotted(node.value.func)
            factory = resolve_head(d, info.imports) if d else None
            if factory in _TUPLE_FACTORIES:
                info.named_tuples[node.targets[0].id] = factory
                fields = _namedtuple_fields(node.value) if factory == "collections.namedtuple" else None
                if fields is not None:
                    info.named_tuple_fields[node.targets[0].id] = fields


def _namedtuple_fields(call: ast.Call) -> Optional[Tuple[str, ...]]:
    """The literal fields of `namedtuple("P", ["a", "b"])` / `namedtuple("P", "a b")`; None with defaults=,
    rename= or fields computed."""
    if len(call.args) != 2 or call.keywords:
        return None
    spec = call.args[1]
    if isinstance(spec, ast.Constant) and isinstance(spec.value, str):
        return tuple(spec.value.replace(",", " ").split())
    names = _literal_names(spec)
    return tuple(names) if names is not None else None


# torch ops whose result is a (values, indices) named tuple: `x.topk(2).indices` reads no project record
_TORCH_RECORD_OPS = frozenset({"min", "max", "sort", "topk", "median", "mode", "kthvalue", "cummax", "cummin",
                               "aminmax", "slogdet", "frexp", "lu_unpack", "histogram"})


def _attribute_reads(tree: ast.Module) -> Set[str]:
    reads: Set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load):
            recv = n.value
            if isinstance(recv, ast.Name) and recv.id == "self":
                continue
            if isinstance(recv, ast.Call) and isinstance(recv.func, ast.Attribute) \
                    and recv.func.attr in _TORCH_RECORD_OPS:
                continue
            reads.add(n.attr)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("getattr", "hasattr") \
                and len(n.args) >= 2 and isinstance(n.args[1], ast.Constant) and isinstance(n.args[1].value, str):
            reads.add(n.args[1].value)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "isinstance" \
                and len(n.args) == 2:
            reads.update(x.id if isinstance(x, ast.Name) else x.attr for x in ast.walk(n.args[1])
                         if isinstance(x, (ast.Name, ast.Attribute)))
    return reads


def _literal_names(node: ast.AST) -> Optional[List[str]]:
    if isinstance(node, (ast.List, ast.Tuple)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return [e.value for e in node.elts]
    return None


def _scan_top_level(info: ModuleInfo, tree: ast.Module) -> None:
    """What `from <this module> import *` hands out: the names its top level binds, and `__all__`
    when it is a literal list (`__all__ = [...]`, `__all__ += [...]`)."""
    stack = list(tree.body)
    while stack:
        node = stack.pop(0)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            info.defined.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        if n.id == "__all__" and node.value is not None:
                            names = _literal_names(node.value)
                            if isinstance(node, ast.AugAssign):
                                info.all_names = (info.all_names or []) + (names or [])
                            elif names is not None:
                                info.all_names = names
                        else:
                            info.defined.add(n.id)
                            info.variables.add(n.id)
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            for attr in ("body", "orelse", "finalbody", "handlers"):
                stack.extend(getattr(node, attr, ()) or ())
        elif isinstance(node, ast.ExceptHandler):
            stack.extend(node.body)


def _torch_star_exports(base: str) -> Dict[str, str]:
    """What `from torch.nn import *` binds, as far as msmigrate knows torch: the registry's names directly
    under `base` and the submodules its records live in (torch itself is not needed)."""
    import builtins

    from .registry import all_mappings

    out: Dict[str, str] = {}
    for m in all_mappings():
        if m.source.startswith(base + "."):
            head = m.source[len(base) + 1:].split(".", 1)[0]
            if head.startswith("_") or (hasattr(builtins, head) and not (
                    base == "torch" and head in _TORCH_ALL_BUILTINS)):
                continue   # a Python builtin stays one unless torch's own __all__ rebinds it
            out.setdefault(head, f"{base}.{head}")
    return out


# a method train(self, mode...): torch's Module.train overridden (loralib's layers)
_OWN_TRAIN = re.compile(r"^[ \t]+def\s+train\(\s*self\s*,\s*mode\b", re.M)


# builtin names that torch.__all__ (torch 2.13) rebinds on `from torch import *`
_TORCH_ALL_BUILTINS = frozenset({"abs", "all", "any", "bool", "compile", "complex", "float", "int", "max", "min",
                                 "pow", "range", "round", "sum"})


# methods of torch tensors that Python's own values and NumPy arrays do not have as methods (an ndarray's `size` and
# `ndim` are attributes, its casts are astype)
_TENSOR_ONLY_METHODS = frozenset({
    "size", "topk", "view_as", "expand_as", "t", "unsqueeze", "permute", "masked_fill", "masked_fill_",
    "index_select", "contiguous", "detach", "cpu", "cuda", "numpy", "zero_", "mul_", "add_", "div_", "sub_",
    "clamp_", "new_zeros", "new_ones", "new_full", "type_as", "float", "long", "dim", "numel", "narrow",
    "backward", "requires_grad_",
    # and methods only torch modules have (MAE's util/lr_decay.py: `for n, p in model.named_parameters()` in
    # param_groups_lrd, a file that names no torch)
    "named_parameters", "named_buffers", "named_modules", "named_children", "register_buffer",
    "register_forward_hook", "register_forward_pre_hook"})


# what a data method may call on its parameters (train_loop._DATA_METHODS' calls, reading a batch)
_PARAM_DATA_METHODS = frozenset({"view", "reshape", "contiguous", "t", "transpose", "permute", "size", "narrow", "to",
                                 "long", "float", "int", "clone", "detach", "squeeze", "unsqueeze", "flatten",
                                 "cuda", "cpu", "numel", "dim"})


def _data_methods(cls: ast.ClassDef) -> Set[str]:
    """Methods of the class that compute data from their arguments: nothing of self (no `self.G(x)`, no
    `self.helper(...)`), no call of a parameter, and on a parameter only the calls that read a batch
    (`labels.size(0)`, `labels.long()`); what they call otherwise is a library's (torch.zeros, np.arange).
    StarGAN's label2onehot: its value, computed outside a step, carries no gradient."""
    found: Set[str] = set()
    for fn in cls.body:
        if not isinstance(fn, ast.FunctionDef) or fn.name.startswith("__") or fn.name == "forward" \
                or fn.decorator_list or not fn.args.args:
            continue
        me = fn.args.args[0].arg
        params = {a.arg for a in fn.args.posonlyargs + fn.args.args[1:] + fn.args.kwonlyargs}
        ok = True
        for node in ast.walk(fn):
            if isinstance(node, (ast.FunctionDef, ast.Lambda, ast.Yield, ast.YieldFrom)) and node is not fn:
                ok = False
            elif isinstance(node, ast.Name) and node.id == me:   # nothing of self: no network it holds
                ok = False
            elif isinstance(node, ast.Call):
                f = node.func
                head = f
                while isinstance(head, (ast.Attribute, ast.Subscript, ast.Call)):
                    head = head.func if isinstance(head, ast.Call) else head.value
                name = head.id if isinstance(head, ast.Name) else None
                if name is None or name == me:
                    ok = False
                elif name in params and not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                                             and f.attr in _PARAM_DATA_METHODS):
                    ok = False
            if not ok:
                break
        if ok:
            found.add(fn.name)
    return found


def _calls_tensor_method_on_parameter(fn: ast.FunctionDef, method: bool) -> bool:
    """fn calls a tensor-only method on one of its parameters, or on an entry or attribute of one
    (`target[0].size(0)`, `outputs[0].data.max(...)`); a method's first parameter (self) is no tensor."""
    args = fn.args.posonlyargs + fn.args.args
    params = {a.arg for a in (args[1:] if method else args) + fn.args.kwonlyargs}
    for node in ast.walk(fn):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in _TENSOR_ONLY_METHODS):
            continue
        head = node.func.value
        while isinstance(head, (ast.Subscript, ast.Attribute)):
            head = head.value
        if isinstance(head, ast.Name) and head.id in params:
            return True
    return False


def _tensor_method_functions(tree: ast.Module) -> Set[str]:
    """The module-level functions that call a tensor-only method on one of their parameters, and the classes with
    a method that does (siamese-triplet's metrics.py: `AccumulatedAccuracyMetric.__call__(self, outputs, target,
    loss)` calls `target[0].size(0)` and `.cpu()`, in a file that names no torch)."""
    found: Set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and _calls_tensor_method_on_parameter(node, method=False):
            found.add(node.name)
        elif isinstance(node, ast.ClassDef) and any(
                isinstance(fn, ast.FunctionDef) and not any(isinstance(d, ast.Name) and d.id == "staticmethod"
                                                            for d in fn.decorator_list)
                and _calls_tensor_method_on_parameter(fn, method=True) for fn in node.body):
            found.add(node.name)
    return found


class ProjectIndex:
    def __init__(self, root: Path, files: Iterable[Path], sources: Optional[Dict[Path, str]] = None):
        self.root = root
        self.modules: Dict[str, ModuleInfo] = {}
        self.by_path: Dict[Path, ModuleInfo] = {}
        for path in files:
            name, is_pkg = module_name_for(root, path)
            info = ModuleInfo(name, path, is_pkg)
            src = sources.get(path) if sources else None
            if src is None:
                try:
                    src = path.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError) as exc:
                    info.parse_error = str(exc)
                    src = None
            if src is not None:
                _scan_module(info, src)
            self.modules[name] = info
            self.by_path[path] = info
        self.local_tops: Set[str] = {n.split(".")[0] for n in self.modules if n}
        self.star_exports: Set[str] = set()   # "module.name" that a star import of a project module brings in
        self._resolve_sibling_imports()
        self._resolve_star_imports()
        # every absolute name some project module imports (to keep re-exported names alive)
        self.imported_names: Set[str] = {v for info in self.modules.values() for v in info.imports.values()}
        # names a star import takes through `__all__` must stay bound in the converted module
        self.imported_names |= self.star_exports
        self.cell_classes: Set[str] = self._cell_closure()
        # a sparse matrix built in one module may be multiplied in another (sparse_products.py)
        self.builds_sparse = any(info.builds_sparse for info in self.modules.values())
        # a Module class overrides train(mode): eval() and train() call it (compat_parts/train_overrides.py)
        self.overrides_train = any(info.overrides_train for info in self.modules.values())
        self.cell_mixins: Set[str] = self._cell_mixins()
        # modules a program that records PyNative's operations from its start imports (converter.py's second
        # phase): their torch.no_grad() regions outside Cell code are kept as mindspore._no_grad()
        self.recorded_imports: frozenset = frozenset()

    def _exports(self, info: ModuleInfo) -> Dict[str, str]:
        """name -> absolute qualified name of what `from <info> import *` binds: `__all__` when given,
        otherwise every public name (its imports, torch modules included, and its own definitions)."""
        own = {n: f"{info.name}.{n}" for n in info.defined}
        if info.all_names is not None:
            return {n: info.imports.get(n, own.get(n, f"{info.name}.{n}")) for n in info.all_names}
        out = {n: q for n, q in info.imports.items() if not n.startswith("_")}
        out.update({n: q for n, q in own.items() if not n.startswith("_")})
        return out

    def sibling(self, module_name: str, dotted: str) -> str:
        """`dotted` as an absolute import of module `module_name` finds it: a module of the same directory when that
        directory is no package (scripts beside their modules, run from there: practical-pytorch's
        char-rnn-classification/train.py does `from data import *`), named here with the directory's prefix
        (`char-rnn-classification.data`); otherwise `dotted` as written."""
        info = self.modules.get(module_name)
        if info is None or info.is_package or "." not in module_name:
            return dotted
        prefix = module_name.rsplit(".", 1)[0]
        if prefix in self.modules:      # a package (its __init__.py): absolute imports are absolute
            return dotted
        parts = dotted.split(".")
        for i in range(len(parts), 0, -1):
            head = ".".join(parts[:i])
            if head in self.modules:
                return dotted
            if f"{prefix}.{head}" in self.modules:
                return f"{prefix}.{dotted}"
        return dotted

    def _resolve_sibling_imports(self) -> None:
        """Absolute imports of a module beside the importing one in a directory that is no package (sibling()):
        the import table and the star imports name the project module."""
        for info in self.modules.values():
            if info.is_package or "." not in info.name or info.name.rsplit(".", 1)[0] in self.modules:
                continue
            for local, qn in list(info.imports.items()):
                info.imports[local] = self.sibling(info.name, qn)
            info.stars = [self.sibling(info.name, base) for base in info.stars]

    def _resolve_star_imports(self) -> None:
        """`from .parts import *`: the names it binds join the importing module's import table (star
        imports of star imports too), so `nn`, `F`, `torch` re-exported that way resolve to torch."""
        starring = [info for info in self.modules.values() if info.stars]
        for _ in range(8):   # chains of star imports; a fixed point comes fast
            changed = False
            for info in starring:
                for base in info.stars:
                    src = self.modules.get(base)
                    if src is None and is_torch_name(base) and base.split(".", 1)[0] not in self.local_tops:
                        exports = _torch_star_exports(base)   # `from torch.nn import *`
                    elif src is None or src is info:
                        continue
                    else:
                        exports = self._exports(src)
                    for name, qn in exports.items():
                        if name in info.defined or name in info.imports:
                            continue
                        if qn == f"{info.name}.{name}":
                            # the starred module imported this name from this one (PyTorch-VAE's models/__init__
                            # star-imports vanilla_vae, which did `from models import BaseVAE`): it rebinds the
                            # name to what it already is; another star import of this module binds it
                            continue
                        info.imports[name] = qn
                        if src is not None and src.all_names is not None:
                            self.star_exports.add(f"{src.name}.{name}")
                        changed = True
            if not changed:
                break

    def reaches_torch(self, info: ModuleInfo) -> bool:
        """The module gets a torch name through the project (`from .common import nn`, a star import)."""
        for qn in info.imports.values():
            if qn.split(".", 1)[0] in self.local_tops:
                resolved = self.resolve_alias(qn)
                if is_torch_name(resolved) and resolved.split(".", 1)[0] not in self.local_tops:
                    return True
        return False

    def derives_from_torch_code(self, info: ModuleInfo, depth: int = 0) -> bool:
        """A class of the module derives from a project class whose module uses torch (torchattacks'
        `class VANILA(Attack)` in a file that names no torch: its methods get tensors and call their methods,
        `images.clone().detach()`), directly or through such classes of modules that name no torch either."""
        if depth > 8:
            return False
        for bases in info.classes.values():
            for base in bases:
                mod, _, cls = self.resolve_alias(base).rpartition(".")
                other = self.modules.get(mod)
                if other is None or other is info or cls not in other.classes:
                    continue
                if self._names_torch(other) or self.derives_from_torch_code(other, depth + 1):
                    return True
        return False

    def serves_torch_code(self, info: ModuleInfo) -> bool:
        """A function of the module calls, on one of its parameters, a method only torch tensors have
        (`target.size(0)`, `output.topk(k, 1)`: pytorch-classification's utils/eval.py accuracy(), a file that names no
        torch) and a module that names torch imports that function (directly, or through a package's re-export) or the
        module itself, or a package re-exports it (timm's utils/__init__.py: `from .metrics import accuracy`, which
        its users call as `timm.utils.accuracy(output, target)`; a library converted by --deps has no importer that
        names torch): it is handed tensors, and its calls are torch's, converted like any torch file's."""
        functions = info.tensor_method_functions
        if not functions:
            return False
        # the function imported, or the module itself (`import util.lr_decay as lrd`, then lrd.param_groups_lrd)
        wanted = {f"{info.name}.{f}" for f in functions} | {info.name}
        for other in self.modules.values():
            if other is info or not (self._names_torch(other) or other.is_package):
                continue
            if any(self.resolve_alias(qn) in wanted for qn in other.imports.values()):
                return True
        return False

    def _names_torch(self, info: ModuleInfo) -> bool:
        cache = self.__dict__.setdefault("_names_torch_cache", {})
        if info.name not in cache:
            try:
                text = info.path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = ""
            cache[info.name] = _TORCH_NAMED.search(text) is not None or self.reaches_torch(info)
        return cache[info.name]

    def resolve_alias(self, qname: str, depth: int = 0) -> str:
        """Follow project re-exports: `pkg.common.nn.Conv2d` -> `torch.nn.Conv2d`
        when `pkg/common.py` did `from torch import nn`."""
        if depth > 8:
            return qname
        parts = qname.split(".")
        for i in range(len(parts) - 1, 0, -1):
            mod = ".".join(parts[:i])
            info = self.modules.get(mod)
            if info is None:
                continue
            target = info.imports.get(parts[i])
            if target is None:
                return qname
            resolved = ".".join([target] + parts[i + 1:])
            if resolved == qname:
                return qname
            return self.resolve_alias(resolved, depth + 1)
        return qname

    def _cell_closure(self) -> Set[str]:
        classes: Dict[str, List[str]] = {}
        for info in self.modules.values():
            for cname, bases in info.classes.items():
                classes[f"{info.name}.{cname}"] = [self.resolve_alias(b) for b in bases]
        cells: Set[str] = set()
        changed = True
        while changed:
            changed = False
            for cname, bases in classes.items():
                if cname in cells:
                    continue
                for b in bases:
                    if b.startswith(_MODULE_BASE_PREFIXES) or b in cells or b in _LIGHTNING_MODULES:
                        cells.add(cname)
                        changed = True
                        break
        return cells

    def _cell_mixins(self) -> Set[str]:
        """The project's classes that are no Module but are bases of one (transformers' mixins beside
        nn.Module): their `self` is a Module whenever it exists, so self.named_children() is the Module's."""
        mixins: Set[str] = set()
        for info in self.modules.values():
            for cname, bases in info.classes.items():
                if f"{info.name}.{cname}" not in self.cell_classes:
                    continue
                for b in bases:
                    resolved = self.resolve_alias(b)
                    if resolved not in self.cell_classes and self._is_project_class(resolved):
                        mixins.add(resolved)
        return mixins

    def _is_project_class(self, qname: str) -> bool:
        module, _, name = qname.rpartition(".")
        info = self.modules.get(module)
        return info is not None and name in info.classes

    def is_subclassed(self, module: str, class_name: str) -> bool:
        """A class of the project names it among its bases."""
        if "_subclassed" not in self.__dict__:
            self._subclassed = {self.resolve_alias(b) for info in self.modules.values()
                                for bases in info.classes.values() for b in bases}
        return f"{module}.{class_name}" in self._subclassed

    def is_cell_mixin(self, module: str, class_name: str) -> bool:
        return f"{module}.{class_name}" in self.cell_mixins

    def data_methods(self, module: str, cls: str) -> Set[str]:
        """`self.<name>` for the data methods of class `cls` of `module` (ModuleInfo.data_methods)."""
        info = self.modules.get(module)
        return {f"self.{m}" for m in (info.data_methods.get(cls, ()) if info else ())}

    def forward_stored_attributes(self) -> Set[str]:
        """The attribute names some forward of the project's classes stores on self (ModuleInfo.forward_stores);
        gathered once per project (every loop of every file asks)."""
        if "_forward_stored" not in self.__dict__:
            self._forward_stored = set().union(*(info.forward_stores for info in self.modules.values()))
        return self._forward_stored

    def forward_called_methods(self) -> Set[str]:
        """The method names some class with a forward calls outside its __init__ (ModuleInfo.forward_method_calls):
        a Module without a forward may run those in another Module's compiled forward."""
        if "_forward_called" not in self.__dict__:
            self._forward_called = set().union(*(info.forward_method_calls for info in self.modules.values()))
        return self._forward_called

    def reads_grads(self) -> bool:
        """Some module reads `x.grad` (train_loop._keeps_grads)."""
        return any(info.reads_grad for info in self.modules.values())

    def clearing_callers(self, name: str, module: str) -> List[str]:
        """Modules other than `module` that call `name` and clear gradients (grad_carry.summing_step_functions)."""
        return sorted(m for m, info in self.modules.items() if m != module and name in info.calls_when_clearing)

    def wrapper_step_methods(self) -> Dict[str, str]:
        """method name -> wrapped attribute, over the project's optimizer wrappers: the methods that step the
        wrapped optimizer, where every wrapper having that method wraps the same attribute (a loop that takes the
        wrapper as a parameter, `optimizer.step_and_update_lr()`, is recognised by the method; `step`, which an
        optimizer has too, is told apart at run time: train_loop._wrapper_step)."""
        if "_wrapper_step_methods" not in self.__dict__:
            found: Dict[str, Set[str]] = {}
            for info in self.modules.values():
                for attribute, methods in info.optimizer_wrappers.values():
                    for m in methods:
                        found.setdefault(m, set()).add(attribute)
            self._wrapper_step_methods = {m: next(iter(a)) for m, a in found.items() if len(a) == 1}
        return self._wrapper_step_methods

    def host_sampling_methods(self) -> Set[str]:
        """Names of methods that plain classes of the project (no Module: is_plain_class) define drawing with the
        host's generators (a replay buffer's `sample(batch_size)`: `np.random.randint` indices, `random.sample`).
        A call of one on an object that is no network (`replay_buffer.sample(batch_size)`) makes the step's data, as
        `next(it)` does: run inside a compiled step it would draw once, at compile time, and an earlier step's
        statement recomputed by a later step (train_loop._handed_over) would draw twice."""
        if "_host_sampling_methods" not in self.__dict__:
            self._host_sampling_methods = {
                m for name, info in self.modules.items() for cls, methods in info.host_sampling_methods.items()
                if self.is_plain_class(name, cls) for m in methods}
        return self._host_sampling_methods

    def attribute_cells(self, attr: str) -> bool:
        """Whether some project class assigns `self.<attr>` a call of anything but a plain project class (a
        network, or something not known): `self.<attr>.sample(...)` may then compute through parameters."""
        made = self.attribute_layers(attr)
        if not made:
            return True
        for q in made:
            module, _, cls = q.rpartition(".")
            if not q or not self.is_plain_class(module, cls):
                return True
        return False

    def imported_drawing_functions(self, imports: Dict[str, str]) -> Set[str]:
        """The call names under which a module with these imports (local name -> qualified name) reaches the
        drawing functions of other modules of the project: `recipe.mixup_data` after `import train as recipe`,
        `mixup_data` after `from train import mixup_data`."""
        found: Set[str] = set()
        for local, qname in imports.items():
            info = self.modules.get(qname)
            if info is not None:
                found |= {f"{local}.{f}" for f in info.drawing_functions}
                continue
            module, _, name = qname.rpartition(".")
            info = self.modules.get(module)
            if info is not None and name in info.drawing_functions:
                found.add(local)
        return found

    def host_sampling_calls(self) -> Set[str]:
        """The calls of host_sampling_methods that make data, as train_loop's host set holds them: `*.sample` for a
        receiver that is a bare name other than self (`replay_buffer.sample(...)`: a function's parameter or a
        local), `self.memory.sample` where every value the project's classes give `self.memory` is a plain class."""
        methods = self.host_sampling_methods()
        if not methods:
            return set()
        attrs = {a for info in self.modules.values() for a in info.self_attr_values}
        return {f"*.{m}" for m in methods} | {f"self.{a}.{m}" for a in attrs if not self.attribute_cells(a)
                                              for m in methods}

    def optimizer_grad_methods(self) -> Set[str]:
        """The project's optimizer methods other than step() that read `.grad` (ModuleInfo.optimizer_grad_methods)."""
        return {m for info in self.modules.values() for m in info.optimizer_grad_methods}

    def optimizer_wrapper(self, module: str, name: str) -> Optional[Tuple[str, Tuple[str, ...]]]:
        """(attribute, stepping methods) of the project class `name` (as module `module` reads it) when it wraps
        an optimizer (optimizer_wrapper_methods), else None."""
        info = self.modules.get(module)
        head, _, rest = name.partition(".")
        full = info.imports.get(head) if info is not None else None
        qname = self.resolve_alias((full + ("." + rest if rest else "")) if full else f"{module}.{name}")
        owner, _, cls = qname.rpartition(".")
        owner_info = self.modules.get(owner)
        return owner_info.optimizer_wrappers.get(cls) if owner_info is not None else None

    def attribute_layers(self, attr: str) -> Set[str]:
        """What the project's classes assign to `self.<attr>`, across all modules (qualified names of the calls,
        project re-exports followed; "" for anything else): one torch layer class says what `x.<attr>` is where
        x's own class is not known (`model.pos_emb.weight` in a function given the model)."""
        cache = self.__dict__.setdefault("_attribute_layers", {})
        if attr not in cache:
            found: Set[str] = set()
            for info in self.modules.values():
                found |= {self.resolve_alias(q) if q and q != SETTER else ""
                          for q in info.self_attr_values.get(attr, ())}
            cache[attr] = found
        return cache[attr]

    def attribute_torch_layers(self, attr: str) -> Set[str]:
        """attribute_layers, with a project subclass of a torch layer as that layer, and without what setters store
        (`self.shared = value` outside __init__ keeps the kind __init__ built): `module.shared.weight` in
        transformers' _init_weights, where T5's set_input_embeddings stores a parameter and BART's shared is a
        ScaledWordEmbedding(nn.Embedding)."""
        cache = self.__dict__.setdefault("_attribute_torch_layers", {})    # asked at every such read: once each
        if attr not in cache:
            found: Set[str] = set()
            for info in self.modules.values():
                for q in info.self_attr_values.get(attr, ()):
                    if q != SETTER:     # a class of the same module is named as written
                        q = f"{info.name}.{q}" if q in info.classes else q
                        found.add(self.torch_layer_base(self.resolve_alias(q)) if q else "")
            cache[attr] = found
        return cache[attr]

    def torch_layer_base(self, qname: str, depth: int = 0) -> str:
        """The torch.nn class a project class derives from (through project classes), or qname itself."""
        if qname.startswith("torch.") or depth > 8:
            return qname
        module, _, cls = qname.rpartition(".")
        info = self.modules.get(module)
        for base in (info.classes.get(cls, ()) if info is not None else ()):
            found = self.torch_layer_base(self.resolve_alias(base), depth + 1)
            if found.startswith("torch.nn."):
                return found
        return qname

    def parameter_layer(self, function: str, position: int, name: str) -> Optional[str]:
        """The torch layer class a top-level function's parameter holds when every call of the function in the
        project passes it a `self.A` attribute that the project's classes set to one torch layer class only
        (attribute_layers): awd-lstm-lm's `embedded_dropout(self.encoder, ...)`, whose `embed.weight` is the
        Embedding's embedding_table. None where a call passes anything else, or the function is never called."""
        calls = [c for info in self.modules.values() for q, found in info.call_arguments.items()
                 if self.resolve_alias(q) == function for c in found]
        if not calls:
            return None
        layers: Set[str] = set()
        for args in calls:
            attr = args.get(position, args.get(name)) if "*" not in args else None
            if attr is None:
                return None
            layers |= self.attribute_layers(attr)
        return layers.pop() if len(layers) == 1 and "" not in layers else None

    def sparse_embeddings(self) -> bool:
        """An Embedding of the project built with sparse= other than False: `embed.sparse` may be True."""
        return any(info.sparse_embeddings for info in self.modules.values())

    def own_backward_class(self, qname: str) -> bool:
        """A project class that is surely no Module (is_plain_class) and defines backward() itself: its objects'
        `x.backward(...)` is that method, never torch's Tensor.backward."""
        qname = self.resolve_alias(qname)
        owner, _, name = qname.rpartition(".")
        info = self.modules.get(owner)
        return info is not None and name in info.backward_classes and self.is_plain_class(owner, name)

    def is_cell_class(self, module: str, class_name: str) -> bool:
        return f"{module}.{class_name}" in self.cell_classes

    def is_plain_class(self, module: str, class_name: str, depth: int = 0) -> bool:
        """A project class that is surely no Module: its bases are `object` or such classes of the project (a
        trainer's own train()/parameters() are its methods, not torch's)."""
        qname = self.resolve_alias(f"{module}.{class_name}")
        if depth > 20 or not self._is_project_class(qname) or qname in self.cell_classes or qname in self.cell_mixins:
            return False
        owner, _, name = qname.rpartition(".")
        for base in self.modules[owner].classes[name]:
            resolved = self.resolve_alias(base)
            if resolved in ("object", "builtins.object") or (
                    resolved == f"{owner}.object" and "object" not in self.modules[owner].defined):
                continue    # the builtin (a base name the module does not bind is read as the module's)
            b_module, _, b_name = resolved.rpartition(".")
            if not self.is_plain_class(b_module, b_name, depth + 1):
                return False
        return True

    def reaches_autograd_function(self, module: str) -> bool:
        """Whether `module` or a project module it imports (transitively) defines a torch.autograd.Function
        subclass: its backward runs op by op, so a program importing one starts in PYNATIVE mode."""
        return self._reaches(module, "autograd_function",
                             lambda mod, info: any(self.is_autograd_function(f"{mod}.{c}") for c in info.classes))

    def record_as_tuple(self, module: str, name: str) -> Optional[Tuple[str, ...]]:
        """The fields of the project's `name = collections.namedtuple(...)` of `module` where no module of the
        project reads one of them as an attribute (nor `_asdict`/`_replace`/`_fields`, nor tests isinstance
        against it): built in a compiled graph as a plain tuple, nothing of the project tells the two apart.
        None otherwise."""
        info = self.modules.get(module)
        fields = info.named_tuple_fields.get(name) if info is not None else None
        if fields is None:
            return None
        reached = set(fields) | {"_asdict", "_replace", "_fields", "_field_defaults", name}
        if any(reached & m.attribute_reads for m in self.modules.values()):
            return None
        return fields

    def graph_record(self, module: str, name: str) -> Optional["GR.RecordClass"]:
        """The record class `name` of `module` where nothing in the project tells its graph dict from the object
        (graph_records.py); None otherwise."""
        qname = self.resolve_alias(f"{module}.{name}")
        owner, _, cls = qname.rpartition(".")
        info = self.modules.get(owner)
        record = info.record_classes.get(cls) if info is not None else None
        if record is None or not self.is_plain_class(owner, cls) or cls not in self.graph_reached_names():
            return None
        names = set(record.fields) | set(record.methods)
        like_dict = bool(set(record.fields) & GR.DICT_ATTRS)    # `values`: a computed getattr would be silent
        for m in self.modules.values():
            uses = m.record_uses
            if uses is None or uses.introspects or cls in uses.class_refs \
                    or names & (uses.stored | uses.named) or like_dict and uses.dynamic_getattr:
                return None
        return record

    def graph_reached_names(self) -> Set[str]:
        """The names graph code may call, by name across the project: those called in a Module's methods, and
        what the module-level functions of those names call, transitively (GR._graph_calls)."""
        if "_graph_reached_cache" not in self.__dict__:
            uses = [m.record_uses for m in self.modules.values() if m.record_uses is not None]
            reached = set().union(*(u.forward_calls for u in uses))
            grown = True
            while grown:
                more = set().union(*(calls for u in uses for name, calls in u.function_calls.items()
                                     if name in reached))
                grown = not more <= reached
                reached |= more
            self._graph_reached_cache = reached
        return self._graph_reached_cache

    def _graph_records(self) -> Dict[Tuple[str, str], "GR.RecordClass"]:
        if "_graph_records_cache" not in self.__dict__:
            self._graph_records_cache = {
                (mod, cls): rec for mod, info in self.modules.items() for cls in info.record_classes
                for rec in [self.graph_record(mod, cls)] if rec is not None}
        return self._graph_records_cache

    def graph_record_fields(self) -> Set[str]:
        return {f for rec in self._graph_records().values() for f in rec.fields}

    def graph_record_method_owner(self, method: str) -> Optional[Tuple[str, str]]:
        """(module, class) of the one record class with this method; None for none or several."""
        owners = [key for key, rec in self._graph_records().items() if method in rec.methods]
        return owners[0] if len(owners) == 1 else None

    def is_graph_record_class(self, module: str, name: str) -> bool:
        return (module, name) in self._graph_records()

    def local_name_for(self, module: str, target: Tuple[str, str]) -> Optional[str]:
        """The name `module` binds to the class `target` (defined there or imported by name)."""
        owner, cls = target
        if owner == module:
            return cls
        info = self.modules.get(module)
        for local, full in (info.imports.items() if info is not None else ()):
            if self.resolve_alias(full) == f"{owner}.{cls}":
                return local
        return None

    def reaches_sequence_packing(self, module: str) -> bool:
        """Whether `module` or a project module it imports (transitively) packs sequences in a forward
        (ModuleInfo.packs_sequences): a program importing one starts in PYNATIVE mode."""
        return self._reaches(module, "sequence_packing", lambda mod, info: info.packs_sequences)

    def reaches_cell_hooks(self, module: str) -> bool:
        """Whether `module` or a project module it imports (transitively) registers a Module hook
        (ModuleInfo.registers_hooks): MindSpore calls Cell hooks in PYNATIVE mode only, so a program importing
        one starts in PYNATIVE mode."""
        return self._reaches(module, "cell_hooks", lambda mod, info: info.registers_hooks)

    def reaches_recorded_backward(self, module: str) -> bool:
        """Whether a project module `module` imports (transitively), not `module` itself, runs a backward() on
        PyNative's recorded graph (ModuleInfo.records_backward: an attack's evaluation beside a training script): a
        program importing one
        starts in PYNATIVE mode, where that backward() runs (in GRAPH mode it raises MigrationError)."""
        # (the module's own backward(): the converter's own judgement, TorchToMindSpore._records_autograd)
        if getattr(self, "deps_argument_backward", False):   # a --deps package's loss scaler (argument_backward.py)
            return True
        return self._reaches(module, "recorded_backward", lambda mod, info: mod != module and (
            info.records_backward or bool(info.argument_backward_lines)))

    def has_argument_backward(self) -> bool:
        """Some module runs a backward() of a loss handed to its function (argument_backward.py): the project's
        zero_grad() calls outside train steps stay."""
        return getattr(self, "deps_argument_backward", False) or any(
            info.argument_backward_lines for info in self.modules.values())

    def argument_backward_lines(self, module: str) -> FrozenSet[int]:
        info = self.modules.get(module)
        return info.argument_backward_lines if info is not None else frozenset()

    def reaches_distributions(self, module: str) -> bool:
        """Whether `module` or a project module it imports (transitively) builds a torch.distributions object
        (ModuleInfo.builds_distributions): a program importing one starts in PYNATIVE mode."""
        return self._reaches(module, "distributions", lambda mod, info: info.builds_distributions)

    def reaches_layers_built_in_forward(self, module: str) -> bool:
        """Whether `module` or a project module it imports (transitively) builds a layer with drawn weights in a
        forward (ModuleInfo.builds_layers_in_forward): a program importing one starts in PYNATIVE mode."""
        return self._reaches(module, "forward_layers", lambda mod, info: info.builds_layers_in_forward)

    def reaches_objects_built_in_forward(self, module: str) -> bool:
        """Whether `module` or a project module it imports (transitively) builds, in a forward, an object of a
        plain class of the project that stays an object (no record a compiled graph keeps as a dict or tuple:
        graph_objects.py refuses it when compiled, Informer's `TriangularCausalMask(B, L)`): a program importing one
        starts in PYNATIVE mode."""
        from .graph_objects import plain_object_class

        return self._reaches(module, "forward_objects", lambda mod, info: any(
            plain_object_class(self, self.resolve_alias(q)) for q in info.forward_built_names))

    def reaches_lists_in_forward(self, module: str) -> bool:
        """Whether `module` or a project module it imports (transitively) turns a tensor into a Python list in a
        forward (ModuleInfo.lists_in_forward): a program importing one starts in PYNATIVE mode."""
        return self._reaches(module, "forward_lists", lambda mod, info: info.lists_in_forward)

    def reaches_host_results(self, module: str) -> bool:
        """Whether `module` or a project module it imports (transitively) calls a host library on a tensor in a
        forward (ModuleInfo.host_results_in_forward): a program importing one starts in PYNATIVE mode."""
        return self._reaches(module, "host_results", lambda mod, info: info.host_results_in_forward)

    def reaches_host_reads(self, module: str) -> bool:
        """Whether `module` or a project module it imports (transitively) reads a tensor on the host in a forward
        (ModuleInfo.host_reads_in_forward): a program importing one starts in PYNATIVE mode."""
        return self._reaches(module, "host_reads", lambda mod, info: info.host_reads_in_forward)

    def reaches_argument_writes(self, module: str) -> bool:
        """Whether `module` or a project module it imports (transitively) has a function that may write a
        parameter's in-place change into its caller's tensor (ModuleInfo.argument_write_owners): one of the module
        itself, or a method of a class that is no Module and that one of those modules builds (`Mixup(...)`: timm's
        models import timm.data, whose Mixup a training script builds, a sampling script not). A program reaching
        one starts in PYNATIVE mode, where the write is made (timm's Mixup, inside a train step's forward)."""
        cache = self.__dict__.setdefault("_reaches_argument_writes", {})
        if module not in cache:
            reached = [m for m in self.imported_modules([module]) | {module} if m in self.modules]
            called = set().union(*(self.modules[m].called_names for m in reached))
            cache[module] = any((not owner or (owner in called and not self.is_cell_class(m, owner)))
                                for m in reached for owner in self.modules[m].argument_write_owners) \
                or bool(called & getattr(self, "deps_write_owners", set()))     # a --deps package's (Mixup)
        return cache[module]

    def reaches_data_row_loops(self, module: str) -> bool:
        """Whether `module` or a project module it imports (transitively) loops over a tensor whose length the data
        decides in a forward (ModuleInfo.loops_over_data_rows): a program importing one starts in PYNATIVE mode."""
        return self._reaches(module, "data_row_loops", lambda mod, info: info.loops_over_data_rows)

    def imported_modules(self, modules: Iterable[str]) -> Set[str]:
        """The project modules that `modules` import, transitively (packages of a dotted import included), not
        `modules` themselves unless one imports another."""
        found: Set[str] = set()
        todo = [t for m in modules for t in self._imported_by_one(m)]
        while todo:
            mod = todo.pop()
            if mod in found:
                continue
            found.add(mod)
            todo.extend(self._imported_by_one(mod))
        return found

    def _imported_by_one(self, module: str) -> List[str]:
        info = self.modules.get(module)
        if info is None:
            return []
        names = []
        for target in list(info.imports.values()) + list(info.stars):
            parts = target.split(".")
            names.extend(".".join(parts[:k]) for k in range(1, len(parts) + 1) if ".".join(parts[:k]) in self.modules)
        return names

    def _reaches(self, module: str, what: str, holds) -> bool:
        cache = self.__dict__.setdefault("_reaches_" + what, {})
        if module not in cache:
            seen, todo, found = set(), [module], False
            while todo and not found:
                mod = todo.pop()
                info = self.modules.get(mod)
                if mod in seen or info is None:
                    continue
                seen.add(mod)
                found = holds(mod, info)
                todo.extend(self._imported_by_one(mod))
            cache[module] = found
        return cache[module]

    def is_autograd_function(self, qname: str) -> bool:
        """Whether the project class `qname` ("pkg.ops.MyFn") derives from torch.autograd.Function,
        directly or through project classes: its `.apply(...)` is Function.apply, not Module.apply."""
        seen: Set[str] = set()
        todo = [qname]
        while todo:
            q = self.resolve_alias(todo.pop())
            if q in _AUTOGRAD_FUNCTIONS:
                return True
            mod, _, cname = q.rpartition(".")
            info = self.modules.get(mod)
            if q in seen or info is None or cname not in info.classes:
                continue
            seen.add(q)
            todo.extend(info.classes[cname])
        return False

    def package_root_depth(self, path: Path) -> Optional[int]:
        """How many package levels sit above `path` inside the tree (0: the file is
        in the top package's own directory); None for a loose script."""
        info = self.by_path.get(path)
        if info is None:
            return None
        d = path.parent
        if not (d / "__init__.py").exists():
            return None
        depth = 0
        while d != self.root and (d.parent / "__init__.py").exists():
            d = d.parent
            depth += 1
        if d == self.root and (self.root / "__init__.py").exists():
            return depth
        # the top package lies below root
        return depth

    def helper_dir(self, path: Path) -> Path:
        """Directory where this file's `_ms_compat.py` lives (top package dir, or the
        script's own dir)."""
        d = path.parent
        if not (d / "__init__.py").exists():
            return d
        while d != self.root and (d.parent / "__init__.py").exists():
            d = d.parent
        return d
