"""A lone backward() (`y.backward(); x.grad`, no optimizer) in a function that builds its layer first:
the layer's construction and what the program does to it before the forward (weights loaded, eval())
stay before the differentiated function, which closes over the layer (msmigrate/train_loop.py,
rewrite_function). Values and input gradients against torch, PyNative and GRAPH."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from msmigrate.registry import TODO  # noqa: E402

from .harness import _flat, assert_close, load_converted, load_torch, rnd  # noqa: E402

BUILT_HERE = '''
import torch
import torch.nn as nn


def input_grad(xv, g, sd):
    m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    m.load_state_dict(sd)
    m.eval()                       # BatchNorm: the running statistics, not the batch's
    x = torch.tensor(xv, requires_grad=True)
    y = m(x)
    (y * g).sum().backward()
    return y, x.grad
'''


def test_layer_set_up_before_the_lone_backward():
    import mindspore as ms
    import torch
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    sd = {k: v.detach().clone() for k, v in ref.state_dict().items()}
    sd["1.running_mean"] = torch.tensor([0.5, -1.0, 2.0, 0.0])
    sd["1.running_var"] = torch.tensor([2.0, 0.5, 1.5, 3.0])
    x, g = rnd(5, 3), rnd(5, 4, seed=1)
    t_y, t_grad = load_torch(BUILT_HERE)["input_grad"](x, torch.from_numpy(g), sd)
    mod, code, sites = load_converted(BUILT_HERE)
    assert not [s for s in sites if s.status == TODO], code
    # the layer is built, loaded and put in eval mode before the function value_and_grad differentiates
    assert code.index("set_train(False)") < code.index("def forward_fn"), code
    ms_sd = {k: ms.Tensor(v.numpy()) for k, v in sd.items()}
    for mode in (ms.PYNATIVE_MODE, ms.GRAPH_MODE):
        ms.set_context(mode=mode)
        try:
            y, grad = mod.input_grad(x, ms.Tensor(g), ms_sd)
        finally:
            ms.set_context(mode=ms.PYNATIVE_MODE)
        assert_close(y, t_y, 1e-5, 1e-5, f"output (mode {mode})")
        assert_close(grad, t_grad, 1e-5, 1e-5, f"input gradient (mode {mode})")
    assert _flat(t_grad)[0].shape == (5, 3)


SCRIPT_GLOBALS = '''
import torch
a = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
y = torch.atan(a)
z = y * 3
z.sum().backward()
a_grad = a.grad
'''


def test_script_globals_computed_by_the_differentiated_statements():
    """A lone backward() in a script's straight-line code: the names the differentiated statements bind (y, z)
    stay the module's globals, with torch's values (another module may import them), next to the gradient."""
    import torch

    import mindspore as ms

    t = load_torch(SCRIPT_GLOBALS)
    try:
        mod, code, sites = load_converted(SCRIPT_GLOBALS)
    finally:   # a converted script sets GRAPH_MODE at import, as the program would: later tests expect PyNative
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert not [s for s in sites if s.status == TODO], code
    for name in ("y", "z", "a_grad"):
        assert_close(getattr(mod, name), t[name], 1e-6, 1e-6, name)
