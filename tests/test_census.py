"""The API census (msmigrate/census.py): every public name of torch's main namespaces, as generated from the
installed torch, is converted by a registry record, a TODO with a reason and what to write instead, or out of
scope with a reason; none is unaccounted, `msmigrate api` answers for each, and a census TODO reaches the
converter as a visible TODO."""
from __future__ import annotations

import contextlib
import io

import pytest

from msmigrate import census as C
from msmigrate.cli import main
from msmigrate.converter import convert_code
from msmigrate.registry import TODO as SITE_TODO, lookup
from msmigrate.torch_api_surface import SURFACE, TORCH_VERSION


def _api(name: str):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["api", name])
    return rc, out.getvalue() + err.getvalue()


def test_census_matches_installed_torch():
    torch = pytest.importorskip("torch")
    from msmigrate.torch_tensor_names import TENSOR_ATTRIBUTES, current_names

    assert torch.__version__.split("+")[0] == TORCH_VERSION
    changed = C.drift(C.current_surface(), SURFACE)
    assert not changed, ("torch's public surface differs from msmigrate/torch_api_surface.py (new, gone): "
                         f"{changed}; regenerate with python -m msmigrate.census --regenerate and classify "
                         f"the new names")
    assert set(current_names()) == set(TENSOR_ATTRIBUTES)


def test_drift_reports_a_name_the_census_lacks():
    committed = {"torch.fft": dict(SURFACE["torch.fft"])}
    installed = {"torch.fft": dict(committed["torch.fft"], fft_new_thing=("function", ""))}
    del installed["torch.fft"]["fft"]
    assert C.drift(installed, committed) == {"torch.fft": (["fft_new_thing"], ["fft"])}
    assert C.drift(committed, committed) == {}


def test_every_name_accounted_for_and_converted_only_by_a_record():
    entries = list(C.entries())
    assert len(entries) > 2000
    assert [e.qualname for e in entries if e.status == C.UNACCOUNTED] == []
    for e in entries:
        assert e.status in (C.CONVERTED, C.TODO, C.OUT_OF_SCOPE)
        if e.status == C.CONVERTED:
            m = lookup(e.record)
            assert m is not None and (m.target is not None or m.rule is not None), e
        else:
            assert e.reason, e
    rows = C.table(entries)
    assert {r["namespace"] for r in rows} == set(C.NAMESPACES)
    assert all(r["unaccounted"] == 0 for r in rows)
    assert sum(r["public"] for r in rows) == len(entries)
    # a record whose named test is missing counts as converted without a test
    view = C.find("torch.Tensor.view")
    assert view.status == C.CONVERTED and view.record == "Tensor.view" and view.test_exists


def test_no_census_name_falls_to_its_namespace_catch_all():
    """Every TODO or out-of-scope name has a reason of its own group (census._NAMED_LEFTOVERS and the rules before
    it), not its namespace's "no mapping record" row: a name torch adds gets one when the surface is regenerated."""
    catch_all = {reason for _, reason, _ in C._REST_OF_NAMESPACE}
    assert [e.qualname for e in C.entries() if e.reason in catch_all] == []
    lstm = C.find("torch.lstm")
    assert lstm.status == C.TODO and "nn.LSTM" in lstm.instead and "ATen kernel" in lstm.reason
    assert C.find("torch.optim.lr_scheduler.bisect_right").status == C.OUT_OF_SCOPE


def test_rules_classify_known_groups():
    assert C.find("torch.cuda").status == C.OUT_OF_SCOPE
    assert C.find("torch.cudnn_convolution").status == C.OUT_OF_SCOPE
    assert C.find("torch._C").status == C.OUT_OF_SCOPE
    assert C.find("torch.backends.opt_einsum.enabled").status == C.OUT_OF_SCOPE
    assert C.find("torch.cuda.amp.GradScaler").status == C.CONVERTED   # its record comes before the rule
    q = C.find("torch.quantize_per_tensor")
    assert q.status == C.TODO and "mindspore_gs" in q.instead
    assert C.find("torch.nn.functional.Optional").status == C.OUT_OF_SCOPE   # a typing name it imports
    # names that merely contain a backend's letters are not backend-specific
    assert C.find("torch.msort").status != C.OUT_OF_SCOPE
    assert C.find("torch.searchsorted").status != C.OUT_OF_SCOPE
    # torch.trace is the matrix trace and linalg.cond the condition number, not torch.jit.trace / torch.cond
    assert "compilers" not in C.find("torch.trace").reason
    assert "compilers" not in C.find("torch.linalg.cond").reason
    assert "compilers" in C.find("torch.cond").reason
    # a property converted by the transformer with no record is not counted as converted; its answer says how
    grad_flag = C.find("torch.Tensor.requires_grad")
    assert grad_flag.status == C.TODO and "requires_grad_of" in grad_flag.reason
    device = C.find("torch.Tensor.device")      # 'CPU' in MindSpore: a record reads it as torch's device
    assert device.status == C.CONVERTED and device.record == "Tensor.device" and device.test_exists
    shape = C.find("torch.Tensor.shape")
    assert shape.status == C.CONVERTED and shape.record == "Tensor.shape" and shape.test_exists


def test_api_answers_every_census_name():
    refused = []
    for e in C.entries():
        rc, out = _api(e.qualname)
        if rc != 0 or "no mapping for" in out:
            refused.append(e.qualname)
    assert refused == []


def test_api_tensor_method_and_canonical_path():
    rc, out = _api("torch.Tensor.view")
    assert rc == 0 and out.startswith("Tensor.view -> method:view") and "test_shape_methods" in out
    rc, out = _api("torch.nn.modules.loss.MSELoss")
    assert rc == 0 and out.startswith("torch.nn.modules.loss.MSELoss is torch.nn.MSELoss\n")
    # _ms_compat's MSELoss: torch's nan for the mean of an empty batch (mindspore.nn.MSELoss gives inf)
    assert "\ntorch.nn.MSELoss -> _ms_compat.MSELoss\n" in out and "test_losses.py" in out
    rc, out = _api("torch.linalg.ldl_factor_ex")
    assert rc == 0 and "todo" in out and "write instead: scipy.linalg.ldl" in out
    # a Module attribute the converter renames answers from its record, under torch's full path too
    rc, out = _api("torch.nn.Module._modules")
    assert rc == 0 and out.startswith("Module._modules -> expr:{self}._cells") and "test_module_internals" in out
    rc, out = _api("torch.not_a_torch_name")
    assert rc != 0 and "no mapping for" in out


def test_census_todo_reaches_the_converter():
    src = ("import torch\n\n\ndef f(x: torch.Tensor):\n    a = torch.linalg.ldl_factor_ex(x)\n"
           "    b = x.data_ptr()\n    return torch.quantize_per_tensor(a, 0.1, 0, torch.quint8), b\n")
    code, sites, _ = convert_code(src)
    todo = {s.api: s.note for s in sites if s.status == SITE_TODO}
    assert "no MindSpore counterpart for the LDL factorization" in todo["torch.linalg.ldl_factor_ex"]
    assert "mindspore_gs" in todo["torch.quantize_per_tensor"]
    assert "Tensor.data_ptr" in todo
    assert "# msmigrate: TODO torch.linalg.ldl_factor_ex" in code
    assert "_ms_compat.Unconverted('torch.linalg.ldl_factor_ex'" in code


def test_unlisted_name_takes_the_rule_of_its_name_or_namespace():
    """torch.sparse.sum and torch.utils.dlpack.to_dlpack are no census rows: their TODO gives the sparse-layout and
    storage reasons (the rule of the namespace, of the name), not a bare 'no mapping known'."""
    src = ("import torch\nimport torch.utils.dlpack\n\n\ndef f(a, b):\n    return torch.sparse.sum(a), "
           "torch.utils.dlpack.to_dlpack(a)\n")
    code, sites, _ = convert_code(src)
    todo = {s.api: s.note for s in sites if s.status == SITE_TODO}
    assert "sparse/nested tensor layouts are not converted" in todo["torch.sparse.sum"], todo
    assert "memory layout / storage / pointer API" in todo["torch.utils.dlpack.to_dlpack"], todo


def test_census_command_prints_the_table():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(["census"])
    text = out.getvalue()
    assert rc == 0
    assert "| torch.nn.functional |" in text and "| **total** |" in text
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["census", "--list", "out-of-scope", "--namespace", "torch.nn.functional"])
    assert "torch.nn.functional.Optional\t" in out.getvalue()


def test_contexts_the_transformer_removes_are_not_counted_as_converted():
    # a context the transformer drops by its own table counts as converted only through a registry record
    # whose parity test exists; without one it is a TODO saying it is removed
    from msmigrate.proof import names_existing_test
    from msmigrate.transformer import DROPPED_CONTEXTS
    for name in list(DROPPED_CONTEXTS):
        e = C.find(name)
        if e is None:
            continue
        if e.status == C.CONVERTED:
            assert e.record and e.test_exists and names_existing_test(e.test), name
        else:
            assert e.status == C.TODO and e.reason.startswith("removed by the converter") and not e.record, name
    assert C.find("torch.no_grad").status == C.CONVERTED     # mapped to _ms_compat.no_grad (value and decorator)


