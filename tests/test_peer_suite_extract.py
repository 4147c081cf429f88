"""bench/peer_api_suite.py: the extraction of one-API cases from a per-API test file (ast only, nothing run),
and the comparison rules, on a test file written here in the peer's layout."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

_BENCH = Path(__file__).resolve().parent.parent / "bench" / "peer_api_suite.py"
_spec = importlib.util.spec_from_file_location("peer_api_suite", _BENCH)
P = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(P)

SOURCE = '''
import textwrap
from apibase import APIBase


class ShapeOnlyAPIBase(APIBase):
    def compare(self, name, a, b, *args, **kwargs):
        assert a.shape == b.shape


obj = APIBase("torch.Tensor.neg")
obj_random = ShapeOnlyAPIBase("torch.nn.functional.dropout")


def test_case_1():
    pytorch_code = textwrap.dedent(
        """
        import torch
        result = torch.tensor([1., -2.]).neg()
        """
    )
    obj.run(pytorch_code, ["result"], rtol=1e-4, check_dtype=False)


def _test_case_2():
    pytorch_code = textwrap.dedent("""
        import torch
        result = torch.tensor([1]).neg()
    """)
    obj.run(pytorch_code, ["result"])


def test_case_3():
    code = "import torch\\ny = torch.ones(2)\\n"
    obj.run(code)
    obj_random.run(code, ["y"], unsupport=False)


def test_case_4():
    pytorch_code = build()   # no literal program: counted apart
    obj.run(pytorch_code, ["result"])
'''


def test_extract_cases():
    cases, counts = P.extract("test_Tensor_neg", SOURCE)
    assert [c["case"] for c in cases] == ["Tensor_neg__case_1", "Tensor_neg__case_3_0", "Tensor_neg__case_3_1"]
    first = cases[0]
    assert first["code"].startswith("\nimport torch\nresult = torch.tensor([1., -2.]).neg()")
    assert (first["names"], first["rtol"], first["check_dtype"], first["ns"]) == (["result"], 1e-4, False, "Tensor")
    assert cases[1]["names"] == [] and not cases[1]["custom_compare"]      # runs without error, nothing compared
    assert cases[2]["custom_compare"] and cases[2]["api"] == "torch.nn.functional.dropout"
    assert cases[2]["ns"] == "nn.functional"
    assert counts["disabled by the peer (_test_case_N)"] == 1 and counts["program with no literal form"] == 1


def test_namespaces():
    assert [P.namespace(a) for a in ("torch.addmm", "torch.nn.Linear", "torch.linalg.norm", "torch.cuda.is_available",
                                     "torch.utils.data.DataLoader", "torch.distributions.Normal")] == \
        ["torch", "nn", "linalg", "other", "utils.data", "distributions"]


def test_compare_rules():
    case = {"custom_compare": False}
    f32 = ("T", np.array([1.0, 2.0], np.float32), "float32", False)
    assert P.compare(f32, ("T", np.array([1.0, 2.0000001], np.float32), "float32", None), case, 1e-6, 0.0) == ""
    assert P.compare(f32, ("T", np.array([1.0, 2.001], np.float32), "float32", None), case, 1e-6, 0.0) == "values"
    i64 = ("T", np.array([1, 2]), "int64", False)
    assert P.compare(i64, ("T", np.array([1, 2], np.int32), "int32", None), case, 1e-6, 0.0) == "dtype int64 vs int32"
    assert P.compare(i64, ("T", np.array([1, 2], np.int32), "int32", None), dict(case, check_dtype=False), 1e-6, 0) == ""
    assert P.compare(("S", "int", 3), ("S", "float", 3.0), case, 1e-6, 0.0).startswith("type int")
    seq = ("Q", [("S", "int", 2), ("S", "int", 3)])
    assert P.compare(seq, ("Q", [("S", "int", 2)]), case, 1e-6, 0.0) == "length 2 vs 1"
    assert P.compare(f32, seq, case, 1e-6, 0.0) == "type tensor vs sequence"
    shape_only = dict(case, custom_compare=True)
    assert P.compare(f32, ("T", np.array([7.0, 8.0], np.float32), "float32", None), shape_only, 1e-6, 0.0) == ""
    assert P.snapshot((1, 2.5, None)) == ("Q", [("S", "int", 1), ("S", "float", 2.5), ("S", "NoneType", None)])


def test_torch_switches_put_back_after_a_case():
    """A case that makes bfloat16 the default tensor type or turns gradients off must not reach the next case
    of the same worker (the full run's 123 'bfloat16 vs float32' cases were that leak)."""
    import warnings

    import torch
    restore = P.torch_switches(torch)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # set_default_tensor_type is deprecated
            torch.set_default_tensor_type(torch.BFloat16Tensor)
        torch.set_grad_enabled(False)
        assert torch.tensor([1.5]).dtype == torch.bfloat16 and not torch.is_grad_enabled()
    finally:
        restore()
    assert torch.tensor([1.5]).dtype == torch.float32 and torch.ones(2).dtype == torch.float32
    assert torch.is_grad_enabled()
    assert torch.tensor([1.5], requires_grad=True).sin().requires_grad


def test_ms_switches_put_back_after_a_case():
    """A converted train step's `ms.set_context(mode=ms.GRAPH_MODE)` must not turn the worker's later converted
    programs into GRAPH-mode runs."""
    import mindspore as ms
    before = ms.get_context("mode")
    restore = P.ms_switches(ms)
    try:
        ms.set_context(mode=ms.GRAPH_MODE if before != ms.GRAPH_MODE else ms.PYNATIVE_MODE)
        assert ms.get_context("mode") != before
    finally:
        restore()
    assert ms.get_context("mode") == before


def test_dtype_objects_of_both_frameworks_compare_by_name():
    """torch.float16 and ms.float16 (a mindspore typing.Float, not a `Type` by class name) are one dtype;
    float16 against ms.float32 differs."""
    import mindspore as ms
    import torch
    c = dict(custom_compare=False)
    for t, m in ((torch.float16, ms.float16), (torch.bfloat16, ms.bfloat16), (torch.int64, ms.int64),
                 (torch.bool, ms.bool_), (torch.complex64, ms.complex64)):
        assert P.snapshot(m)[0] == "dtype"
        assert P.compare(P.snapshot(t), P.snapshot(m), c, 1e-6, 0) == ""
    assert P.compare(P.snapshot(torch.float16), P.snapshot(ms.float32), c, 1e-6, 0) != ""


def test_a_case_comparing_nothing_is_counted_apart_from_pass():
    """A case naming no value (no compared names, or only objects with no value form: a module, an empty list)
    passed by merely running; it is 'nothing_compared', out of the pass rate, not 'pass'."""
    case = dict(case="c", api="torch.nn.Linear", ns="nn", names=[], custom_compare=False)
    entry = {"status": "converted", "sites": []}
    ran = ("ok", {})
    assert P.classify(case, ("ok", {}), ran, entry)[0] == "nothing_compared"
    objects = dict(case, names=["model", "hooks"])
    exp = ("ok", {"model": ("O", "Linear"), "hooks": ("Q", [])})
    got = ("ok", {"model": ("O", "Dense"), "hooks": ("Q", [])})
    assert P.classify(objects, exp, got, entry)[0] == "nothing_compared"
    # one value among them is compared: an ordinary pass or failure
    valued = dict(case, names=["model", "y"])
    exp_v = ("ok", {"model": ("O", "Linear"), "y": ("T", np.ones(2, np.float32), "float32", False)})
    assert P.classify(valued, exp_v, ("ok", dict(exp_v[1])), entry)[0] == "pass"
    bad = ("ok", {"model": ("O", "Dense"), "y": ("T", np.zeros(2, np.float32), "float32", False)})
    assert P.classify(valued, exp_v, bad, entry)[0] == "silent"
    # a converted run that fails is a failure whatever the case compares
    assert P.classify(case, ("ok", {}), ("err", "TypeError", "x"), entry)[0] == "silent"
    results = [dict(cls="nothing_compared", ns="nn", loose=False, custom_compare=False, grad_differs="", api="a",
                    detail=""), dict(cls="pass", ns="nn", loose=True, custom_compare=False, grad_differs="", api="b",
                                      detail="")]
    import collections
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        P.summarize(results, collections.Counter(), 5)
    text = out.getvalue()
    assert "nothing compared (ran; no value named to compare) 1" in text, text
    all_row = next(line for line in text.splitlines() if line.startswith("ALL"))
    assert all_row.split()[1] == "1" and "100.0" in all_row, all_row    # one counted case, and it passed
