"""torch's "do not compile this" hints used as values (`disable = torch.compiler.disable`,
`torch.compiler.disable(fn)`): MindSpore compiles only what GRAPH mode or @mindspore.jit is asked to,
so the function itself runs (templates/compat_parts/compiler_hints.py). As decorators they are
dropped (transformer.DROPPED_DECORATORS)."""
from __future__ import annotations

from ..records import mapping

_T = "tests/test_torch_feature_probes.py::test_compiler_disable_runs_the_function"
for _name in ("torch.compiler.disable", "torch._dynamo.disable"):
    mapping(_name, "_ms_compat.compiler_disable", args=("fn", "recursive", "reason"),
            target_args=("fn", "recursive", "reason"),
            note="a compiler hint: the function is returned as is (converted code is compiled only where "
                 "GRAPH mode or @mindspore.jit asks for it)", test=_T)
