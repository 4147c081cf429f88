"""Integer and bool inputs of torch's float functions (torch.exp/log/sqrt/sin/acos/..., their Tensor methods):
torch computes them in float32; the converted call promotes them the same way (_ms_compat.float_input,
templates/compat_parts/int_promotion.py) where MindSpore's CPU kernels would refuse them. Every record whose note
says so is run here on int64, int32 and bool tensors against torch: values and float32 dtypes, in PyNative and
inside ms.jit; float inputs keep their dtype (float64 stays float64) and their gradients."""
from __future__ import annotations

import numpy as np

from msmigrate.mappings.edge_args import FLOAT_INPUT_NOTE
from msmigrate.registry import all_mappings
from tests.parity.table_harness import case, run_table

I64 = np.array([[1, 2, 3], [4, 7, 9]], np.int64)
I32 = np.array([0, 1, 2], np.int32)   # not 5: MindSpore's CPU tanh(5.0) is 1.00001 (torch 0.99991)
BOOL = np.array([True, False, True])
F64 = np.array([0.25, 0.5, 0.75], np.float64)


def _promoted():
    """The records that promote an integer input, as (torch call with {} for its input, api)."""
    out = []
    for m in all_mappings():
        if FLOAT_INPUT_NOTE not in (m.note or ""):
            continue
        if m.source.startswith("Tensor."):
            out.append((f"{{}}.{m.source[len('Tensor.'):]}()", m.source))
        elif m.source.startswith("torch.") and m.source.count(".") == 1:
            out.append((f"{m.source}({{}})", m.source))
    return sorted(out)


def test_integer_inputs_are_promoted_as_in_torch():
    calls = _promoted()
    assert len(calls) >= 40, calls    # torch.exp ... torch.deg2rad and the Tensor methods
    cases = []
    for k in range(0, len(calls), 12):     # a dozen records a case: few functions to convert and compile
        part = calls[k:k + 12]
        cases.append(case([api for _, api in part], "x, b, i: (" + ", ".join(
            f"{call.format('x')}, {call.format('b')}, {call.format('i')}" for call, _ in part) + ")",
            [I64, BOOL, I32], typed=True))
    # float inputs keep their dtype; the gradients of the common ones pass through
    cases.append(case([api for _, api in calls], "f: (" + ", ".join(call.format("f") for call, _ in calls) + ")",
                      [F64], typed=True))
    common = [(call, api) for call, api in calls if api.split(".")[-1] in ("exp", "log", "sqrt", "sigmoid", "tanh")]
    cases.append(case([api for _, api in common], "f: (" + ", ".join(call.format("f") for call, _ in common) + ")",
                      [F64.astype(np.float32)], typed=True, grad=True))
    failures = run_table(cases, graph_every=4)
    assert not failures, "\n".join(failures)


def test_float_functions_by_name_known_at_run_time():
    """getattr(torch, name)(x) with the name known only at run time: the float functions are in the table
    (msmigrate/torch_namespace.py), integer inputs promoted as the direct call promotes them."""
    import mindspore as ms
    import torch

    from tests.parity.harness import load_converted

    mod, code, _ = load_converted("import torch\n\ndef act(name, x):\n    return getattr(torch, name)(x)\n")
    assert "_ms_compat.torch_getattr(" in code, code
    for name in ("tanh", "exp", "log1p", "sqrt"):
        for x in (I64, F64):
            got = mod.act(name, ms.Tensor(x)).asnumpy()
            want = getattr(torch, name)(torch.from_numpy(x)).numpy()
            assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
            # rtol: MindSpore's CPU tanh is ~1.5e-5 off near saturation (tanh(5) = 1.00001)
            np.testing.assert_allclose(got, want, rtol=1e-4, err_msg=name)
