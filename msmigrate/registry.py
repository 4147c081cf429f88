"""The one place that answers "what does torch API X become, and why".

Most mappings are declarative `Mapping` records; hard cases attach a small rule
function. The converter, the report and `msmigrate api` all read this registry.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, Optional, Tuple

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


def canonical(source: str) -> str:
    """The name the registry is keyed on for `source`: a canonical torch path that names the
    same object as a public one (torch.nn.modules.linear.Linear, torch.functional.einsum,
    torch._C._nn.gelu, torch._tensor.Tensor) becomes that public name. The table is generated
    from the installed torch (msmigrate/torch_aliases.py); a name with its own record stays."""
    from . import mappings  # noqa: F401
    from .torch_aliases import ALIASES

    if source in REGISTRY:
        return source
    return ALIASES.get(source, source)


def lookup(source: str) -> Optional[Mapping]:
    from . import mappings  # noqa: F401  (registers every record on first use)

    return REGISTRY.get(source) or REGISTRY.get(canonical(source))


def all_mappings() -> Registry:
    from . import mappings  # noqa: F401

    return REGISTRY
