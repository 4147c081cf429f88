"""Feature probes of torch with a fallback (msmigrate/torch_feature_probes.py) and torch.compiler.disable
used as a value (mappings/compiler_hints.py): the converted module imports without torch and computes
what the original computes."""
from __future__ import annotations

import sys

import pytest

from msmigrate.converter import convert_tree
from tests.treeutil import write_tree

torch = pytest.importorskip("torch")
pytest.importorskip("mindspore")

LIB = {
    "probelib/__init__.py": """\
        import torch
        import torch.nn.functional as F


        def nullwrap(fn=None):
            return (lambda f: f) if fn is None else fn


        # converts as a value: the probe is the name itself
        disable = getattr(getattr(torch, "compiler", None), "disable", None) or nullwrap
        # no conversion: the program's fallback (None here) is taken
        HAS_PROPS = hasattr(getattr(torch._C, "_CudaDeviceProperties", None), "L2_cache_size")
        # a name torch lacks: the default, as on torch
        MISSING = getattr(torch, "no_such_name_msm", "fallback")
        act = getattr(F, "relu", None)
        try:   # a torch.compile setting: removed (converted code never runs under torch.compile)
            torch._dynamo.config.cache_size_limit = 1_000
            HAS_DYNAMO = True
        except AttributeError:
            HAS_DYNAMO = False


        @disable
        def plus_one(x):
            return x + 1


        def twice(x):
            return torch.compiler.disable(plus_one)(x) * 2 + torch._dynamo.disable(recursive=False)(plus_one)(x)


        def values():
            x = torch.tensor([-1.0, 2.0])
            return {"plus": plus_one(x).tolist(), "twice": twice(x).tolist(), "act": act(x).tolist(),
                    "missing": MISSING, "disable_is_callable": callable(disable),
                    "has_dynamo": HAS_DYNAMO}
        """,
}

def _load(root):
    """probelib from `root`, imported here (the converted one names no torch: checked on its code)."""
    sys.path.insert(0, str(root))
    try:
        import probelib
        return {"values": probelib.values(), "has_props": probelib.HAS_PROPS}
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m == "probelib" or m.startswith("probelib.")]:
            del sys.modules[name]


def test_feature_probes(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    write_tree(src, LIB)
    result = convert_tree(src, out, jobs=1)
    code = (out / "probelib" / "__init__.py").read_text()
    assert "disable = _ms_compat.compiler_disable or nullwrap" in code, code
    assert 'hasattr(None, "L2_cache_size")' in code, code
    assert "cache_size_limit" not in code, code
    assert "TODO" not in code and "Unconverted" not in code, code
    taken = [s for s in result.sites if s.target == "(getattr default)"]
    assert [s.api for s in taken] == ["torch._C._CudaDeviceProperties"] and taken[0].line == 12, taken
    assert taken[0].status == "converted-with-difference"
    assert not [ln for ln in code.splitlines() if "torch" in ln.split("#")[0]], code
    original, converted = _load(src), _load(out)
    assert converted["has_props"] is False
    assert converted["values"] == original["values"], (original, converted)
    assert converted["values"]["twice"] == [0.0, 9.0]


def test_compiler_disable_runs_the_function():
    """The runtime helper alone: the function itself, or a decorator that returns it."""
    from msmigrate.converter import compat_source
    ns = {}
    exec(compile(compat_source(), "_ms_compat.py", "exec"), ns)
    fn = lambda x: x + 1   # noqa: E731
    assert ns["compiler_disable"](fn) is fn
    assert ns["compiler_disable"](recursive=False)(fn) is fn
    assert ns["compiler_disable"](None, reason="why")(fn) is fn
