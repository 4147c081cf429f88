"""bench/real_world.py's verdict on a loss difference over its tolerance, judged against torch's own
float32 rounding (its float64 and native-kernel reference runs): the figures are the shapes measured
on aae (torch float32 strays from float64, the conversion does not) and resnet_cifar (Adam amplifies
rounding; torch's own float32 runs drift as far)."""
from __future__ import annotations

from bench.real_world import RTOL, judge


def _rec(losses, status="stopped"):
    return {"status": status, "error": None if status != "error" else "RuntimeError: boom", "losses": losses,
            "step_losses": losses, "values": {}}


def _refs(f64, native):
    calls = []

    def references():
        calls.append(1)
        return {"float64": f64, "native-kernels": native}
    return references, calls


def test_within_tolerance_needs_no_reference_run():
    references, calls = _refs(_rec([1.0]), _rec([1.0]))
    status, worst, _ = judge(_rec([0.66, 0.67]), _rec([0.66, 0.67 * (1 + RTOL / 2)]), references)
    assert status == "pass" and worst < RTOL and not calls


def test_torch_float32_strays_from_float64_and_the_conversion_does_not():
    torch32 = _rec([0.6627, 0.6414 * (1 + 5e-4)])
    f64 = _rec([0.6627, 0.6414])
    status, worst, note = judge(torch32, _rec([0.6627, 0.6414 * (1 + 1e-7)]), _refs(f64, torch32)[0])
    assert status == "pass" and worst > RTOL
    assert "vs torch float64 1.0e-07" in note and "up to 5.0e-04" in note, note


def test_drift_within_torchs_own_float32_runs_is_float32_noise():
    f64 = _rec([2.402, 2.2526])
    torch32, native = _rec([2.402, 2.2526 * (1 + 3e-4)]), _rec([2.402, 2.2526 * (1 - 2e-3)])
    status, worst, note = judge(torch32, _rec([2.402, 2.2526 * (1 + 1e-3)]), _refs(f64, native)[0])
    assert status == "float32-noise" and worst > RTOL, (status, note)


def test_drift_beyond_torchs_own_float32_runs_fails():
    f64 = _rec([2.402, 2.2526])
    torch32, native = _rec([2.402, 2.2526 * (1 + 3e-4)]), _rec([2.402, 2.2526 * (1 - 2e-3)])
    status, _, note = judge(torch32, _rec([2.402, 2.2526 * (1 + 1e-2)]), _refs(f64, native)[0])
    assert status == "fail" and "vs torch float64 1.0e-02" in note, note


def test_a_first_loss_off_fails_whatever_the_drift():
    f64 = _rec([2.402, 2.2526])
    torch32, native = _rec([2.402, 2.2526 * (1 + 3e-4)]), _rec([2.402 * (1 + 5e-3), 2.2526 * (1 - 5e-2)])
    status, _, _ = judge(torch32, _rec([2.402 * (1 + 1e-3), 2.2526 * (1 + 1e-3)]), _refs(f64, native)[0])
    assert status == "fail"


def test_no_float64_reference_keeps_the_failure_and_says_why():
    status, _, note = judge(_rec([1.0, 1.0]), _rec([1.0, 1.01]), _refs(_rec([], "error"), _rec([1.0, 1.0]))[0])
    assert status == "fail" and "no float64 reference: RuntimeError: boom" in note, note
