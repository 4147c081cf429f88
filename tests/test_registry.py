"""Every mapping the registry ships names the parity test that proves it, and that
test exists: a mapping without a test is a guess."""
from __future__ import annotations

import ast
from pathlib import Path

from msmigrate.registry import all_mappings

ROOT = Path(__file__).resolve().parent.parent


def _test_functions(path: Path) -> set:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def test_every_mapping_names_an_existing_parity_test():
    cache = {}
    missing = []
    for m in all_mappings():
        if m.target is None and m.rule is None:
            continue  # an honest "no counterpart" record: it only produces a TODO
        if not m.test:
            missing.append(f"{m.source}: no test named")
            continue
        file, _, func = m.test.partition("::")
        path = ROOT / file
        if not path.exists():
            missing.append(f"{m.source}: {file} does not exist")
            continue
        if path not in cache:
            cache[path] = _test_functions(path)
        if func not in cache[path]:
            missing.append(f"{m.source}: {m.test} does not exist")
    assert not missing, "\n".join(missing)


def test_registry_is_substantial_and_sources_are_unique():
    sources = [m.source for m in all_mappings()]
    assert len(sources) == len(set(sources))
    assert len(sources) > 300


def test_trace_and_keras_registries_refuse_a_second_registration():
    """`@op` (trace) and `@handles` (Keras) raise on a name registered twice, as the records do."""
    import pytest

    from msmigrate.keras.convert import HANDLERS, handles
    from msmigrate.trace.ops import CONVERTERS, op

    taken_op, taken_layer = next(iter(CONVERTERS)), next(iter(HANDLERS))
    with pytest.raises(ValueError, match="duplicate trace op converter"):
        op(taken_op)(lambda e: None)
    with pytest.raises(ValueError, match="duplicate Keras layer handler"):
        handles(taken_layer)(lambda *a: None)
    assert CONVERTERS[taken_op].__name__ != "<lambda>" and HANDLERS[taken_layer].__name__ != "<lambda>"


def test_helper_targets_take_the_keywords_their_records_pass():
    """A record whose target is a runtime helper passes torch's keyword arguments on under their renamed names: each
    name must be one the helper takes (F.tanh(input=x) became precise_tanh(input=x), a TypeError for precise_tanh(x)
    that no TODO explained: the peer suite's nn_functional_tanh case 2). Rules write their own calls: left out."""
    import importlib.util
    import inspect
    import tempfile

    from msmigrate.converter import compat_source
    from msmigrate.torch_signatures import signature

    path = Path(tempfile.mkdtemp(prefix="msmigrate-registry-")) / "_ms_compat.py"
    path.write_text(compat_source(), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("_ms_compat_registry_check", path)
    helper = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(helper)
    wrong, checked = [], 0
    for m in all_mappings():
        if m.rule is not None or not (m.target or "").startswith("_ms_compat."):
            continue
        fn = getattr(helper, m.target.split(".", 1)[1], None)
        if not callable(fn):
            continue   # a class attribute path (keras.layers.Dense...) or a constant
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            continue
        if any(p.kind == p.VAR_KEYWORD for p in params.values()):
            continue
        torch_sig = signature(m.source)
        torch_names = {p[0] for p in torch_sig[0]} if torch_sig else None
        checked += 1
        for a in m.args:
            if a in m.drop or a in m.unsupported or (torch_names is not None and a not in torch_names):
                continue
            name = m.rename.get(a, a)
            if name not in params or params[name].kind == inspect.Parameter.POSITIONAL_ONLY:
                wrong.append(f"{m.source}: {a}= reaches {m.target} as {name}=, which it does not take "
                             f"({', '.join(params)})")
    assert checked > 100
    assert not wrong, "\n".join(wrong)
