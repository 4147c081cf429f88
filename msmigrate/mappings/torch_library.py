"""torch.library custom operators (registered while libraries' modules are imported)."""
from __future__ import annotations

from ..callsite import UnsupportedSite
from ..records import DIFFERENCE, rule

_T = "tests/parity/test_build_probes.py::test_library_custom_op"


def _with_site(target: str):
    """The call with its arguments as written, plus where= (the original file and line) for the message of
    the MigrationError the helper raises."""
    def rule_fn(ctx):
        b = ctx.bound
        if b.starred:
            raise UnsupportedSite("*args/**kwargs")
        parts = [b.code(n) if b.positional.get(n) else f"{n}={b.code(n)}" for n in b.order]
        parts.append(f"where={ctx.tr.module_name + ':' + str(ctx.tr._line(ctx.original))!r}")
        return ctx.expr(f"{target}({', '.join(parts)})")
    return rule_fn


for _src, _target, _args, _note in (
        ("custom_op", "library_custom_op", ("name", "fn"),
         "the operator runs its converted Python implementation; with an autograd formula registered it "
         "stops with MigrationError when called (the formula is not converted)"),
        ("register_fake", "library_register_fake", ("op", "fn"),
         "kept on the operator: a fake implementation only serves torch's tracing"),
        ("register_autograd", "library_register_autograd", ("op", "backward"),
         "not converted: the operator then stops with MigrationError when called")):
    rule(f"torch.library.{_src}", f"_ms_compat.{_target}", args=_args, status=DIFFERENCE, note=_note,
         test=_T)(_with_site(f"_ms_compat.{_target}"))
