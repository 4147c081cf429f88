"""bench/real_world.py's verdict on a loss difference over its tolerance, judged against torch's own
float32 rounding (its float64 and native-kernel reference runs): the figures are the shapes measured
on aae (torch float32 strays from float64, the conversion does not), resnet_cifar (Adam amplifies
rounding; torch's own float32 runs drift as far) and pytorch-cifar's MobileNetV2 (3 ReLU inputs within
1e-6 of 0 on the other side at the first step, 5e-2 at the third loss: torch float64 taking those sides
gives the converted losses)."""
from __future__ import annotations

from bench.real_world import RTOL, judge


def _rec(losses, status="stopped"):
    return {"status": status, "error": None if status != "error" else "RuntimeError: boom", "losses": losses,
            "step_losses": losses, "values": {}}


def _refs(f64, native, kinks=None):
    calls = []
    refs = {"float64": f64, "native-kernels": native, "float64-kinks": kinks or _rec([], "error")}

    def references(variant):
        calls.append(variant)
        return refs[variant]
    return references, calls


def _kinks(losses, differ=3, margin=1.2e-6, mismatch=None):
    return dict(_rec(losses), kinks={"differ": differ, "margin": margin, "mismatch": mismatch, "unreplayed": 0,
                                     "replayed": 111, "recorded": 111})


# pytorch-cifar's MobileNetV2 through bench/real_world.py (torch float32, converted, torch float64)
MOBILENET = dict(t32=[2.2679856, 1.9031750, 1.5305862], ms=[2.2679844, 1.9037125, 1.4584286],
                 f64=[2.2679852, 1.9020225, 1.5365066], native=[2.2679853, 1.9026, 1.5224])


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


def test_relu_sides_within_rounding_of_zero_explain_the_drift():
    m = MOBILENET
    kinks = _kinks([x * (1 + 2e-6) for x in m["ms"]])
    references, calls = _refs(_rec(m["f64"]), _rec(m["native"]), kinks)
    status, worst, note = judge(_rec(m["t32"]), _rec(m["ms"]), references)
    assert status == "float32-noise" and worst > 1e-2, (status, note)
    assert "side at 3 ReLU inputs (within 1e-06 of 0) vs converted 2.0e-06" in note, note
    assert calls.count("float64-kinks") >= 1


def test_relu_sides_far_from_zero_are_a_different_computation():
    m = MOBILENET
    kinks = _kinks(m["ms"], differ=40, margin=3e-2)     # a converted ReLU that cuts at 0.5, say
    status, _, note = judge(_rec(m["t32"]), _rec(m["ms"]), _refs(_rec(m["f64"]), _rec(m["native"]), kinks)[0])
    assert status == "fail" and "within 3e-02 of 0" in note, note


def test_relu_sides_that_do_not_give_the_converted_losses_fail():
    m = MOBILENET
    kinks = _kinks([x * (1 + 1e-3) for x in m["ms"]])
    status, _, note = judge(_rec(m["t32"]), _rec(m["ms"]), _refs(_rec(m["f64"]), _rec(m["native"]), kinks)[0])
    assert status == "fail" and "vs converted 1.0e-03" in note, note


def test_relu_calls_that_do_not_line_up_fail_and_say_where():
    m = MOBILENET
    kinks = _kinks(m["ms"], mismatch="ReLU call 7: (4, 8) here, (4, 9) in the converted run")
    status, _, note = judge(_rec(m["t32"]), _rec(m["ms"]), _refs(_rec(m["f64"]), _rec(m["native"]), kinks)[0])
    assert status == "fail" and "ReLU call 7" in note, note


def test_no_relu_side_taken_against_its_sign_explains_nothing():
    m = MOBILENET
    kinks = _kinks(m["ms"], differ=0, margin=0.0)
    status, _, _ = judge(_rec(m["t32"]), _rec(m["ms"]), _refs(_rec(m["f64"]), _rec(m["native"]), kinks)[0])
    assert status == "fail"
