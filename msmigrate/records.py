"""The record types of the knowledge base: `Mapping`, the `Registry` holding them, and the tables
that mapping modules fill besides records (adapters, construct notes, dropped contexts).

The knowledge (msmigrate/mappings/) imports only this module (and the small rule API in
callsite.py); the engine reads the loaded records through msmigrate/registry.py, which imports
the mappings. So knowledge never imports the engine (tests/test_import_cycles.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, Optional, Set, Tuple

# Site statuses, as they appear in the report.
CONVERTED = "converted"
DIFFERENCE = "converted-with-difference"
TODO = "todo"


@dataclass(frozen=True)
class Mapping:
    """How one torch API becomes MindSpore code.

    source      qualified torch name ("torch.nn.Conv2d") or, for tensor methods,
                "Tensor.view"; for Module methods "Module.eval".
    target      dotted MindSpore name ("mindspore.nn.Conv2d", "mindspore.ops.flatten"),
                a helper emitted into the output ("_ms_compat.kaiming_normal_"),
                "method:NAME" (keep the receiver, call NAME on it),
                "drop" (the call disappears), "identity" (call(x) -> x),
                "expr:TEMPLATE" (a Python expression with {0}, {1}, {name}, {self} slots),
                or None: no MindSpore counterpart (the site becomes a TODO).
    args        the source API's parameter names in positional order, so
                positional arguments can be recognised by name.
    target_args the target's positional parameter names; a bound argument stays
                positional only while it sits at the same position here.
    rename      source argument name -> target argument name.
    drop        source arguments that have no meaning in MindSpore (inplace, device...).
    transforms  source argument name -> expression template over {v} (e.g. "1 - {v}").
    values      source argument name -> {source literal: target literal}.
    extra       target keyword arguments always added, as source code.
    unsupported source argument name -> why; the site is a TODO when it is given with
                a value other than `unsupported_ok` allows.
    unsupported_values source argument name -> literal values (source code) that have no
                counterpart (e.g. BatchNorm momentum=None); other values convert.
    as_method   for "method:"/"function" targets from tensor methods: receiver handling.
    note        what differs; shown in the report and by `msmigrate api`.
    status      CONVERTED or DIFFERENCE (a semantic difference the user should know).
    rule        a function for the hard cases: rule(site) -> None (site edited in place).
    tensor_only for methods: only rewrite when the receiver is known to be a tensor
                (names like `add`, `sum`, `copy` also belong to lists, sets, numpy).
    test        the parity test that proves this mapping ("tests/parity/...::test_x").
    takes_torch_args  the target accepts the source's whole signature (a helper taking torch's parameters,
                with no meaning for some): a call with *args/**kwargs passes them through unchanged.
    kwonly      keyword arguments the record translates besides `args` (torch's keyword-only parameters the target
                takes under the same name and meaning, or that the rule reads): any argument the record does not
                name is a TODO unless it carries torch's default (argument_check.py).
    """

    source: str
    target: Optional[str]
    args: Tuple[str, ...] = ()
    target_args: Tuple[str, ...] = ()
    rename: Dict[str, str] = field(default_factory=dict)
    drop: Tuple[str, ...] = ()
    transforms: Dict[str, str] = field(default_factory=dict)
    values: Dict[str, Dict[str, str]] = field(default_factory=dict)
    extra: Dict[str, str] = field(default_factory=dict)
    unsupported: Dict[str, str] = field(default_factory=dict)
    unsupported_ok: Dict[str, Tuple[str, ...]] = field(default_factory=dict)
    unsupported_values: Dict[str, Tuple[str, ...]] = field(default_factory=dict)
    note: str = ""
    status: str = CONVERTED
    rule: Optional[Callable] = None
    tensor_only: bool = False
    test: str = ""
    takes_torch_args: bool = False
    kwonly: Tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        if self.source.startswith("Tensor."):
            return "tensor method"
        if self.source.startswith("Module."):
            return "module method"
        return "api"


class Registry:
    def __init__(self) -> None:
        self._by_source: Dict[str, Mapping] = {}

    def add(self, mapping: Mapping) -> Mapping:
        if mapping.source in self._by_source:
            raise ValueError(f"duplicate mapping for {mapping.source}")
        self._by_source[mapping.source] = mapping
        return mapping

    def extend(self, mappings: Iterable[Mapping]) -> None:
        for m in mappings:
            self.add(m)

    def get(self, source: str) -> Optional[Mapping]:
        return self._by_source.get(source)

    def __contains__(self, source: str) -> bool:
        return source in self._by_source

    def __iter__(self):
        return iter(sorted(self._by_source.values(), key=lambda m: m.source))

    def __len__(self) -> int:
        return len(self._by_source)


REGISTRY = Registry()


def mapping(source: str, target: Optional[str], **kw) -> Mapping:
    """Declare a mapping record and add it to the registry."""
    return REGISTRY.add(Mapping(source, target, **kw))


def rule(source: str, target: Optional[str] = None, **kw):
    """Decorator: declare a mapping whose conversion needs code."""

    def deco(fn: Callable) -> Callable:
        REGISTRY.add(Mapping(source, target, rule=fn, **kw))
        return fn

    return deco


def name_registry(table: Dict[str, Callable], what: str):
    """A decorator factory filling `table` (name -> function), refusing a name registered twice: the trace
    route's `@op` and the Keras converter's `@handles` (a second registration would replace the first
    silently)."""
    def register(*names: str):
        def deco(fn: Callable) -> Callable:
            for n in names:
                if n in table:
                    raise ValueError(f"duplicate {what} for {n!r}: {table[n].__name__} and {fn.__name__}")
                table[n] = fn
            return fn
        return deco
    return register


def canonical(source: str) -> str:
    """The name the registry is keyed on for `source`: a canonical torch path that names the
    same object as a public one (torch.nn.modules.linear.Linear, torch.functional.einsum,
    torch._C._nn.gelu, torch._tensor.Tensor) becomes that public name. The table is generated
    from the installed torch (msmigrate/torch_aliases.py); a name with its own record stays."""
    from .torch_aliases import ALIASES

    while source.startswith("torch.torch."):   # the torch module is its own attribute: torch.torch.tril
        source = source[len("torch."):]
    if source in REGISTRY:
        return source
    return ALIASES.get(source, source)


def lookup(source: str) -> Optional[Mapping]:
    """The record for `source` among those registered so far (rules run once all are: msmigrate.registry)."""
    return REGISTRY.get(source) or REGISTRY.get(canonical(source))


# The helper module converted code imports (`import _ms_compat`).
COMPAT = "_ms_compat"

# Tables besides the records, read by the transformer:
# torch layer classes passed around as values get an adapter with torch's signature
# (filled by msmigrate.mappings.adapters).
ADAPTERS: Dict[str, str] = {}

# torch objects (module-level instances) whose _ms_compat record is written with torch's methods: a method called
# on one (`constraints.positive.check(x)`) converts the object and keeps the call (filled by the mappings that
# define such objects, e.g. msmigrate.mappings.torch_distributions).
METHOD_OWNERS: Set[str] = set()

# torch values whose converted value has these attributes with torch's meaning: `torch.float32.itemsize` reads
# the attribute of the converted value (filled by the mappings that define the values, e.g. mappings.dtypes).
VALUE_ATTRS: Dict[str, Set[str]] = {}

# API -> why it is a GRAPH-mode hazard inside construct (it still converts; the site is
# reported as a difference with this note and the note is written above the statement).
# Filled by msmigrate.mappings.devices.
CONSTRUCT_NOTES: Dict[str, str] = {}

# torch classes whose record converts their construction only (a rule building another layer), used as types
# (isinstance/issubclass): the MindSpore class their converted instances derive from, and the record's note
# (filled by the mappings, e.g. msmigrate.mappings.layers' torch.nn.RNNBase).
TYPE_TARGETS: Dict[str, tuple] = {}

# Context managers that only matter to torch's autograd/device machinery.
DROPPED_CONTEXTS = {
    "torch.no_grad": "MindSpore records gradients only inside grad/value_and_grad, so no_grad() is not needed",
    "torch.inference_mode": "MindSpore records gradients only inside grad/value_and_grad",
    "torch.enable_grad": "MindSpore computes gradients through grad/value_and_grad",
    "torch.set_grad_enabled": "MindSpore computes gradients through grad/value_and_grad",
    "torch.autograd.set_grad_enabled": "MindSpore computes gradients through grad/value_and_grad",
    "torch.autograd.enable_grad": "MindSpore computes gradients through grad/value_and_grad",
    "torch.autograd.no_grad": "MindSpore records gradients only inside grad/value_and_grad",
    "torch.autograd.profiler.record_function": "profiler ranges are not carried over",
    "torch.profiler.record_function": "profiler ranges are not carried over",
    **{_ac: "mixed precision in MindSpore is set on the network: net = mindspore.amp.auto_mixed_precision(net, "
             "'O1'); without it this code runs in float32"
       for _ac in ("torch.cuda.amp.autocast", "torch.autocast", "torch.amp.autocast", "torch.cpu.amp.autocast")},
}
# Decorators that are torch compiler hints: removed, the function is kept.
DROPPED_DECORATORS = {
    "torch.jit.unused", "torch.jit.ignore", "torch.jit.export", "torch.jit.script",
    "torch.jit.script_if_tracing", "torch.jit._script_if_tracing", "torch.fx.wrap",
    "torch.no_grad", "torch.inference_mode", "torch.enable_grad", "torch.compile",
    "torch._dynamo.disable", "torch.compiler.disable", "torch.autograd.no_grad",
    "torch.jit._overload_method", "torch.jit._overload",
    "torch.cuda.amp.autocast", "torch.autocast", "torch.amp.autocast", "torch.cpu.amp.autocast",
    "torch.cuda.amp.custom_fwd", "torch.cuda.amp.custom_bwd", "torch.amp.custom_fwd", "torch.amp.custom_bwd",
}

# properties that MindSpore's Tensor has with torch's meaning: reading them is no site
# (`device` is a string in MindSpore; the `device=` arguments it feeds are dropped by their own records)
# (not `device`: MindSpore's is 'CPU', read through mappings/devices.py's record)
SAME_MEANING_PROPERTIES = frozenset({"shape", "dtype", "ndim", "T", "data", "itemsize", "nbytes"})
# readable on a Parameter (what `self.weight` usually is), not on a computed MindSpore tensor
PARAMETER_PROPERTIES = frozenset({"requires_grad"})

# how the transformer converts `x.requires_grad` (unmapped_tensor_api.py); the census answers with these
REQUIRES_GRAD_STORE_TEST = "tests/parity/test_autograd_scripts.py::test_requires_grad_store"
REQUIRES_GRAD_STORE_NOTE = (
    "a Parameter keeps the flag; on another tensor False is ops.stop_gradient (rebinding the name) and True "
    "changes nothing: what gets a gradient is what mindspore.grad/value_and_grad is given (as for "
    "torch.tensor(..., requires_grad=True)); a computed tensor is not refused as torch refuses it")


REQUIRES_GRAD_READ_TEST = "tests/parity/test_requires_grad_reads.py::test_requires_grad_read_in_a_train_step_and_under_no_grad"
REQUIRES_GRAD_READ_NOTE = (
    "a Parameter's flag; on a computed tensor (PyNative) whether a gradient is being recorded now (inside "
    "grad/value_and_grad): torch's answer for a tensor computed from trainable weights in a train step, and outside "
    "one under no_grad; torch answers False for a tensor of data only (or under no_grad) inside a train step and "
    "True in a forward outside one without no_grad, where this reads True and False; compiled, the same answer "
    "is decided while compiling (the converted train step, a Cell called directly), and a graph of the "
    "program's own ms.jit / ms.grad raises MigrationError naming the line")


