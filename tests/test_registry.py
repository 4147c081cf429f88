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
