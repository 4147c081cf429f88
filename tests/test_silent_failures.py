"""Never silently different: a converted program that reaches torch code msmigrate could not
convert stops with `_ms_compat.MigrationError` naming the original file and line, in every
context where Python can reach it (a call under `if __name__ == "__main__":`, a function called
from there, an `except` clause, `with`, a decorator, a base class, a default value, isinstance,
iteration, attributes, str()/format, comparisons, numbers...). Definitions that only hold the
unconverted code (also in a set or as a dict key, by identity) keep the module importable, and an
error that is not caused by the unconverted code is not swallowed.

Each program below is a minimal torch program written for this test; `# SITE` marks the line of
its one unconvertible construct (one is a TensorFlow program). All are converted together with the real converter, and run in
one interpreter without torch (a runner executes each with runpy, MindSpore is imported once);
a few also run as separate processes to prove the exit code."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from msmigrate.cli import EXIT_TODO, main
from tests.treeutil import write_tree

# the APIs used below have no MindSpore counterpart (CUDA streams, private torch._C hooks, custom
# op registration); test_sites_are_todo checks that the converter still reports each as a TODO

PROGRAMS = {
    "main_direct": """
        import torch

        if __name__ == "__main__":
            print("BEFORE")
            torch._C._jit_set_profiling_mode(False)  # SITE
            print("AFTER")
    """,
    "main_calls_function": """
        import torch


        def setup():
            torch._C._jit_set_profiling_mode(False)  # SITE


        if __name__ == "__main__":
            print("BEFORE")
            setup()
            print("AFTER")
    """,
    "value_in_function": """
        import torch


        def current():
            return torch.cuda.current_stream  # SITE


        def main():
            s = current()
            print("AFTER", s is None)


        if __name__ == "__main__":
            print("BEFORE")
            main()
    """,
    "grad_read_outside_a_step": """
        import argparse
        from dataclasses import dataclass

        import torch


        class Options:
            grad = 2


        @dataclass
        class Config:
            grad: int = 4


        def grad_total(model):
            return sum(float(p.grad.abs().sum()) for p in model.parameters())  # SITE


        def settings(opts):
            return opts.grad, cfg.grad


        parser = argparse.ArgumentParser()
        parser.add_argument("--grad", type=int, default=3)
        cfg = Config()

        if __name__ == "__main__":
            args = parser.parse_args([])
            model = torch.nn.Linear(2, 2)
            print("BEFORE", Options().grad, args.grad, *settings(args))
            print(grad_total(model))
            print("AFTER")
    """,
    "script_level": """
        import torch

        print("BEFORE")
        torch._C._jit_set_profiling_mode(False)  # SITE
        print("AFTER")
    """,
    "in_forward": """
        import torch
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(2, 2)

            def forward(self, x):
                torch.cuda.nvtx.range_push("fwd")  # SITE
                return self.fc(x)


        if __name__ == "__main__":
            net = Net()
            print("BEFORE")
            print("AFTER", net(torch.ones(1, 2)))
    """,
    "except_in_function": """
        import torch


        def risky(fail):
            try:
                if fail:
                    raise ValueError("boom")
                return 1
            except torch.cuda.CudaError:  # SITE
                return 0


        if __name__ == "__main__":
            print("BEFORE", risky(False))
            risky(True)
            print("AFTER")
    """,
    "except_tuple_at_main": """
        import torch

        if __name__ == "__main__":
            try:
                raise KeyError("k")
            except KeyError:
                print("BEFORE")
            try:
                raise ValueError("boom")
            except (KeyError, torch.cuda.CudaError):  # SITE
                print("AFTER")
    """,
    "except_alias": """
        import torch

        OOM = torch.cuda.CudaError  # SITE


        def risky():
            try:
                raise ValueError("boom")
            except OOM:
                return 0


        if __name__ == "__main__":
            print("BEFORE")
            risky()
            print("AFTER")
    """,
    "with_in_function": """
        import torch


        def run():
            with torch.cuda.stream(torch.cuda.Stream()):  # SITE
                y = torch.ones(2) * 2
            return y


        if __name__ == "__main__":
            print("BEFORE")
            print("AFTER", run())
    """,
    "with_alias": """
        import torch

        STREAM = torch.cuda.Stream  # SITE

        if __name__ == "__main__":
            print("BEFORE")
            with STREAM:
                print("AFTER")
    """,
    "async_with_alias": """
        import asyncio
        import torch

        STREAM = torch.cuda.Stream  # SITE


        async def work():
            async with STREAM:
                print("AFTER")


        if __name__ == "__main__":
            print("BEFORE")
            asyncio.run(work())
    """,
    "decorator": """
        import torch


        @torch.library.impl("demo::twice", "CPU")  # SITE
        def twice(x: torch.Tensor) -> torch.Tensor:
            return x * 2


        if __name__ == "__main__":
            print("BEFORE")
            print("AFTER", twice(torch.ones(2)))
    """,
    "base_class": """
        import torch


        class MyStream(torch.cuda.Stream):  # SITE
            def __init__(self):
                self.ready = True


        if __name__ == "__main__":
            print("BEFORE")
            s = MyStream()
            print("AFTER", s.ready)
    """,
    "base_class_attribute": """
        import torch


        class MyStream(torch.cuda.Stream):  # SITE
            pass


        if __name__ == "__main__":
            print("BEFORE")
            print("AFTER", MyStream.priority_range())
    """,
    "generic_base": """
        import torch


        class Pending(torch.futures.Future[int]):  # SITE
            pass


        if __name__ == "__main__":
            print("BEFORE")
            print("AFTER", Pending())
    """,
    "default_argument": """
        import torch


        def launch(x, stream=torch.cuda.Stream()):  # SITE
            return x


        if __name__ == "__main__":
            print("BEFORE", launch(1, stream=None))
            launch(2)
            print("AFTER")
    """,
    "default_in_expression": """
        import torch


        def shards(x, n=torch._C._cuda_getDeviceCount() + 1):  # SITE
            return x


        if __name__ == "__main__":
            print("BEFORE", shards(1, n=2))
            shards(2)
            print("AFTER")
    """,
    "lambda_default": """
        import torch

        has_stream = lambda s=torch.cuda.Stream(): s is not None  # SITE

        if __name__ == "__main__":
            print("BEFORE", has_stream(None))
            print("AFTER", has_stream())
    """,
    "isinstance_in_function": """
        import torch


        def is_stream(x):
            return isinstance(x, torch.cuda.Stream)  # SITE


        if __name__ == "__main__":
            print("BEFORE")
            print("AFTER", is_stream(3))
    """,
    "isinstance_alias": """
        import torch

        STREAM = torch.cuda.Stream  # SITE

        if __name__ == "__main__":
            print("BEFORE")
            print("AFTER", isinstance(3, STREAM))
    """,
    "issubclass_alias": """
        import torch

        STREAM = torch.cuda.Stream  # SITE

        if __name__ == "__main__":
            print("BEFORE")
            print("AFTER", issubclass(int, STREAM))
    """,
    "iteration": """
        import torch

        STREAM = torch.cuda.Stream  # SITE

        if __name__ == "__main__":
            print("BEFORE")
            for s in STREAM:
                print("AFTER", s)
    """,
    "attribute": """
        import torch

        STREAM = torch.cuda.Stream  # SITE

        if __name__ == "__main__":
            print("BEFORE")
            print("AFTER", STREAM.priority)
    """,
    "set_attribute": """
        import torch

        STREAM = torch.cuda.Stream  # SITE

        if __name__ == "__main__":
            print("BEFORE")
            STREAM.priority = 1
            print("AFTER")
    """,
    "fstring": """
        import torch

        STREAM = torch.cuda.Stream  # SITE

        if __name__ == "__main__":
            print("BEFORE")
            print(f"AFTER {STREAM}")
    """,
    "print_value": """
        import torch

        EVENT = torch.cuda.Event  # SITE

        if __name__ == "__main__":
            print("BEFORE")
            print(EVENT)
            print("AFTER")
    """,
    "format_percent": """
        import torch

        EVENT = torch.cuda.Event  # SITE

        if __name__ == "__main__":
            print("BEFORE")
            print("AFTER %s" % (EVENT,))
    """,
    "equality": """
        import torch

        STREAM = torch.cuda.Stream  # SITE

        if __name__ == "__main__":
            print("BEFORE")
            print("AFTER", STREAM == 3, STREAM != 3)
    """,
    "ordering": """
        import torch

        STREAM = torch.cuda.Stream  # SITE

        if __name__ == "__main__":
            print("BEFORE")
            print("AFTER", 3 < STREAM)
    """,
    # hashing is not a use: a placeholder is held in sets and as a dict key by identity, as the torch
    # object was (tests/test_placeholder_holding.py)
    "unary": """
        import torch

        STREAM = torch.cuda.Stream  # SITE

        if __name__ == "__main__":
            print("BEFORE")
            print("AFTER", -STREAM)
    """,
    "arithmetic": """
        import torch

        COUNT = torch._C._cuda_getDeviceCount  # SITE

        if __name__ == "__main__":
            print("BEFORE")
            print("AFTER", 2 * COUNT)
    """,
    "membership": """
        import torch

        STREAM = torch.cuda.Stream  # SITE

        if __name__ == "__main__":
            print("BEFORE")
            print("AFTER", 1 in STREAM)
    """,
    "subscript": """
        import torch

        STREAM = torch.cuda.Stream  # SITE

        if __name__ == "__main__":
            print("BEFORE")
            print("AFTER", STREAM[0])
    """,
    "int_conversion": """
        import torch

        COUNT = torch._C._cuda_getDeviceCount  # SITE

        if __name__ == "__main__":
            print("BEFORE")
            print("AFTER", list(range(COUNT)))
    """,
    "truth_value": """
        import torch

        COUNT = torch._C._cuda_getDeviceCount  # SITE

        if __name__ == "__main__":
            print("BEFORE")
            if COUNT:
                print("AFTER")
    """,
    "call_alias": """
        import torch

        STREAM = torch.cuda.Stream  # SITE

        if __name__ == "__main__":
            print("BEFORE")
            print("AFTER", STREAM())
    """,
    "definition_uses_placeholder": """
        import torch
        import torch.nn as nn

        LAYER = nn.Linear(torch._C._cuda_getDeviceCount(), 3)  # SITE

        if __name__ == "__main__":
            print("BEFORE")
            print("AFTER", LAYER(torch.ones(1, 2)))
    """,
    "tf_call_needs_rewriting": """
        import tensorflow as tf


        def total(x, axes):
            return tf.reduce_sum(x, *axes)  # SITE


        if __name__ == "__main__":
            print("BEFORE")
            print("AFTER", total([1.0, 2.0], [0]))
    """,
    "class_attribute": """
        import torch


        class Config:
            stream = torch.cuda.Stream  # SITE


        if __name__ == "__main__":
            print("BEFORE")
            Config.stream.synchronize()
            print("AFTER")
    """,
}

# an error that does not come from the unconverted code must surface as itself, as in torch
GENUINE_ERROR = {
    "genuine_error_in_definition": """
        import torch

        PAIR = (1 // 0, torch.cuda.Stream)  # SITE

        if __name__ == "__main__":
            print("AFTER")
    """,
}

# definitions that hold unconverted code but are never used: the program runs to the end
NEVER_REACHED = """
    from typing import Optional

    import torch
    import torch.nn as nn

    STREAM = torch.cuda.Stream
    PAIR = (torch.cuda.Stream, torch.cuda.Event)


    class MyStream(torch.cuda.Stream):
        pass


    class Pending(torch.futures.Future[int]):
        pass


    FutureOfInt = torch.futures.Future[int]


    @torch.library.custom_op("demo::twice", mutates_args=())
    def twice(x: torch.Tensor) -> torch.Tensor:
        return x * 2


    def launch(x, stream=torch.cuda.Stream(), other: Optional[torch.cuda.Stream] = None,
               third: torch.cuda.Event | None = None):
        return x


    def guarded(x):
        try:
            return x + 1
        except torch.cuda.CudaError:
            return 0


    class Net(nn.Module):
        def __init__(self, stream: Optional[torch.cuda.Stream] = None):
            super().__init__()
            self.fc = nn.Linear(2, 2)

        def forward(self, x):
            return self.fc(x)


    if __name__ == "__main__":
        print("OK", launch(1, stream=None), guarded(1), Net()(torch.ones(1, 2)).shape)
"""

_RUNNER = '''
import contextlib, io, json, runpy, sys, traceback
for blocked in ("torch", "tensorflow", "keras"):
    sys.modules[blocked] = None      # converted code must not need them
import _ms_compat                    # MindSpore once for all programs
results = {}
for name in sys.argv[1:]:
    out = io.StringIO()
    entry = {"error": None, "message": "", "trace": ""}
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(name + ".py", run_name="__main__")
    except BaseException as exc:     # noqa: BLE001 - recorded for the test to judge
        entry.update(error=type(exc).__name__, message=str(exc),
                     trace="".join(traceback.format_exception(exc)))
    entry["stdout"] = out.getvalue()
    results[name] = entry
print(json.dumps(results))
'''

# these also run as separate processes: the exit code itself is checked
SEPARATE = ("main_direct", "except_in_function", "default_argument")


def _site_line(source: str) -> int:
    lines = textwrap.dedent(source).splitlines()
    return next(i for i, ln in enumerate(lines, 1) if "# SITE" in ln)


def _without_torch(args, cwd: Path) -> subprocess.CompletedProcess:
    prelude = "import runpy, sys; sys.modules.update(torch=None, tensorflow=None, keras=None); "
    return subprocess.run([sys.executable, "-c", prelude + args], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    root = tmp_path_factory.mktemp("silent")
    src, out = root / "src", root / "out"
    files = {f"{n}.py": s for n, s in {**PROGRAMS, **GENUINE_ERROR}.items()}
    files["never_reached.py"] = NEVER_REACHED
    write_tree(src, files)
    assert main(["convert", str(src), "-o", str(out), "-q"]) == EXIT_TODO     # TODOs, no failed file
    report = json.loads((out / "msmigrate-report.json").read_text())
    assert report["summary"]["files"]["failed"] == 0, report["files"]
    (out / "run_all.py").write_text(_RUNNER)
    names = list(PROGRAMS) + list(GENUINE_ERROR) + ["never_reached"]
    r = subprocess.run([sys.executable, "run_all.py", *names], cwd=out, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    results = json.loads(r.stdout.strip().splitlines()[-1])
    return out, report, results


def test_sites_are_todo(converted):
    """Each marked site is still a TODO of the report at its original line (else this corpus
    no longer tests an unconvertible construct: pick another API)."""
    _, report, _ = converted
    todo = {(f["file"], s["line"]) for f in report["files"] for s in f["sites"] if s["status"] == "todo"}
    for name, source in {**PROGRAMS, **GENUINE_ERROR}.items():
        assert (f"{name}.py", _site_line(source)) in todo, (name, sorted(t for t in todo if t[0] == f"{name}.py"))


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_reaching_unconverted_code_raises(converted, name):
    out, _, results = converted
    res = results[name]
    code = (out / f"{name}.py").read_text()
    assert res["error"] == "MigrationError", (res, code)
    where = f"{name}:{_site_line(PROGRAMS[name])}"
    assert where in res["message"], (where, res["message"], code)
    assert "BEFORE" in res["stdout"], ("the program failed before reaching the site", res, code)
    assert "AFTER" not in res["stdout"], ("the program carried on past the site", res, code)


def test_except_clause_keeps_the_exception(converted):
    """The exception that reached the unconverted handler stays visible in the chain."""
    _, _, results = converted
    for name in ("except_in_function", "except_tuple_at_main", "except_alias"):
        assert "ValueError: boom" in results[name]["trace"], results[name]
    assert "1" in results["except_in_function"]["stdout"], "no exception passed: the handler is not reached"


def test_genuine_error_is_not_swallowed(converted):
    _, _, results = converted
    res = results["genuine_error_in_definition"]
    assert res["error"] == "ZeroDivisionError", res
    assert "AFTER" not in res["stdout"]


def test_definitions_alone_keep_the_program_running(converted):
    out, _, results = converted
    res = results["never_reached"]
    assert res["error"] is None, (res, (out / "never_reached.py").read_text())
    assert "OK 1 2 (1, 2)" in res["stdout"], res


@pytest.mark.parametrize("name", SEPARATE)
def test_exit_code_of_separate_process(converted, name):
    out, _, _ = converted
    r = _without_torch(f"sys.argv = [{name + '.py'!r}]; runpy.run_path({name + '.py'!r}, run_name='__main__')", out)
    assert r.returncode != 0, (r.stdout, r.stderr[-2000:])
    assert "MigrationError" in r.stderr and f"{name}:{_site_line(PROGRAMS[name])}" in r.stderr, r.stderr[-2000:]
    assert "AFTER" not in r.stdout


def test_clean_program_exits_zero(converted):
    out, _, _ = converted
    r = _without_torch("sys.argv = ['never_reached.py']; runpy.run_path('never_reached.py', run_name='__main__')",
                       out)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "OK 1 2 (1, 2)" in r.stdout


def test_second_conversion_changes_nothing(converted, tmp_path):
    """The rewritten sites (checked defaults, handlers, guarded definitions, string annotations)
    are stable: converting the output again gives the same code."""
    out, _, _ = converted
    again = tmp_path / "again"
    main(["convert", str(out), "-o", str(again), "-q"])
    for p in sorted(out.glob("*.py")):
        if p.name not in ("_ms_compat.py", "run_all.py"):
            assert (again / p.name).read_text() == p.read_text(), p.name


def test_main_block_runs_but_its_else_branch_defines():
    """Under `if __name__ == "__main__":` a name bound to unconverted code raises where it is
    bound (the block only runs as a program); its `else:` branch runs on import: a placeholder."""
    from msmigrate.converter import convert_code
    code, _, _ = convert_code(textwrap.dedent("""
        import torch
        if __name__ == "__main__":
            S = torch.cuda.Stream
        else:
            S = torch.cuda.Stream
    """), "prog")
    main_branch, else_branch = code.split("else:")
    assert "Unconverted('torch.cuda.Stream', 'prog:4'" in main_branch and ".reached()" in main_branch, code
    assert "Unconverted('torch.cuda.Stream', 'prog:6'" in else_branch and ".reached()" not in else_branch, code


def test_grad_read_outside_a_step_raises(converted):
    """`p.grad` read where no converted train step computes it: MigrationError at its line (not an
    AttributeError); the same read on an object that is no tensor (`Options().grad`) reads it, and one on a
    settings object (an argparse result, a dataclass instance, a parameter every call passes one) is no
    TODO at all (non_tensor_names.py)."""
    out, report, results = converted
    res = results["grad_read_outside_a_step"]
    assert res["error"] == "MigrationError" and "Tensor.grad at grad_read_outside_a_step:" in res["message"], res
    assert "BEFORE 2 3 3 4" in res["stdout"], res
    code = (out / "grad_read_outside_a_step.py").read_text()
    assert "# msmigrate: TODO Tensor.grad" in code
    todo = [s["line"] for f in report["files"] if f["file"] == "grad_read_outside_a_step.py" for s in f["sites"]
            if s["status"] == "todo"]
    assert todo == [_site_line(PROGRAMS["grad_read_outside_a_step"])], (todo, code)
    assert "args.grad" in code and "opts.grad" in code and "cfg.grad" in code, code


def test_grad_read_rewrite_matches_the_noted_node_not_its_id():
    """The reads are noted by id; a node the step rewrites dropped can hand its id to another node (CPython
    reuses the addresses of freed objects). Such a node, here `ms.GRAPH_MODE` under a noted id, stays as it is;
    the noted node itself is rewritten."""
    import libcst as cst

    from msmigrate import grad_reads

    module = cst.parse_module("ms.set_context(mode=ms.GRAPH_MODE)\nprint(p.grad)\n")
    graph_mode = module.body[0].body[0].value.args[0].value
    p_grad = module.body[1].body[0].value.args[0].value
    stranger = cst.parse_expression("q.grad")      # the node once noted under graph_mode's id
    tracked = {id(graph_mode): (1, "q.grad", stranger), id(p_grad): (2, "p.grad", p_grad)}
    rw = grad_reads._Rewrite(tracked, "prog")
    out = module.visit(rw).code
    assert "ms.set_context(mode=ms.GRAPH_MODE)" in out, out
    assert "_ms_compat.tensor_grad(p, 'prog:2')" in out, out
    assert rw.found == [(2, "p.grad")]
