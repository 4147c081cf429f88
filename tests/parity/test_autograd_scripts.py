"""Parity of torch autograd as scripts write it at their top level (the form of PaConvert's per-API programs):
`x.requires_grad = flag` on a tensor name, a custom Function's apply in a lone backward(), a Function whose ctx
turns off materialized gradients, a loop that never clears the gradients, and two converted scripts with equal
train steps run in one process. Each runs real torch and the converted program and compares the values."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from msmigrate.registry import TODO  # noqa: E402

from .harness import assert_close, load_converted, load_torch  # noqa: E402


@pytest.fixture(autouse=True)
def _restore_mode():
    """The converted scripts choose MindSpore's mode (GRAPH, or PYNATIVE for a custom Function)."""
    import mindspore as ms
    mode = ms.get_context("mode")
    yield
    ms.set_context(mode=mode)


def _run_both(src, names):
    mod, code, sites = load_converted(src)
    ref = load_torch(src)
    for n in names:
        assert_close(getattr(mod, n), ref[n].detach() if hasattr(ref[n], "detach") else ref[n], what=n)
    return mod, code, sites


REQUIRES_GRAD_SRC = '''
import torch
x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
x.requires_grad = True
c = torch.tensor([[2.0, 3.0, -1.0], [0.5, 1.0, 4.0]])
c.requires_grad = False
y = (x * x * c).sum()
y.backward()
result = x.grad
'''

HESSIAN_SRC = '''
import torch

def func(a):
    return 2 * torch.sum(a * a * a)

x = torch.tensor([[0.5, -1.0], [1.5, 0.25]])
h = torch.autograd.functional.hessian(func, x)
hessian = h[:]
hessian.requires_grad = False
hessian = torch.flatten(hessian)
'''


def test_requires_grad_store():
    """`x.requires_grad = True` before a lone backward(): x.grad is the gradient; `= False` on a tensor is
    ops.stop_gradient (values unchanged); both are converted sites, not TODOs."""
    mod, code, sites = _run_both(REQUIRES_GRAD_SRC, ["result"])
    assert "_ms_compat.set_requires_grad(x, True)" in code and "c = _ms_compat.set_requires_grad(c, False)" in code
    import mindspore as ms
    # (the script sets no mode; _ms_compat.hessian runs op by op, as in a fresh process)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    _, h_code, h_sites = _run_both(HESSIAN_SRC, ["hessian"])
    assert "hessian = _ms_compat.set_requires_grad(hessian, False)" in h_code
    stores = [s for s in sites + h_sites if s.api == "Tensor.requires_grad"]
    assert len(stores) == 3 and all(s.status != TODO for s in stores)
    # False cuts the gradient of what is computed from the tensor afterwards, as torch's detached leaf
    helper = __import__("_ms_compat")
    t = ms.Tensor(np.array([1.0, 2.0], np.float32))
    assert_close(ms.grad(lambda a: (helper.set_requires_grad(a * 1, False) * a).sum())(t), t.asnumpy())
    p = ms.Parameter(t, name="p")
    assert helper.set_requires_grad(p, False) is p and p.requires_grad is False


FUNCTION_SRC = '''
import torch
from torch.autograd import Function

class ScaledTanh(Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.tanh(x)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, y = ctx.saved_tensors
        return dy * (1 - y * y) * 3 + x

data = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], dtype=torch.float64, requires_grad=True)
z = ScaledTanh.apply(data)
z.sum().backward()
result = data.grad
'''


def test_function_apply_in_a_lone_backward():
    """The class is closed over by the differentiated function, not passed to value_and_grad as an argument
    (MindSpore 2.10 PYNATIVE raised AttributeError: type object has no attribute '__code__')."""
    _, code, _ = _run_both(FUNCTION_SRC, ["result", "z"])   # z: a script name stays defined after the step
    assert "def forward_fn(data):" in code


MATERIALIZE_SRC = '''
import torch
from torch.autograd import Function

class TwoOutputs(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 3, x * x

    @staticmethod
    def backward(ctx, g_triple, g_square):
        seen.append(g_square is None)
        out = g_triple * 3
        if g_square is not None:
            out = out + g_square * 2
        return out

seen = []
x = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64, requires_grad=True)
TwoOutputs.apply(x)[0].sum().backward()
result = x.grad
square_was_none = seen[0]
'''


def test_unused_output_gradient_is_none_without_materialized_grads():
    mod, _, _ = _run_both(MATERIALIZE_SRC, ["result"])
    assert mod.square_was_none is True and load_torch(MATERIALIZE_SRC)["square_was_none"] is True


UNCLEARED_SRC = '''
import torch
torch.manual_seed(0)
lin = torch.nn.Linear(3, 2)
with torch.no_grad():
    lin.weight.copy_(torch.tensor([[0.2, -0.4, 0.1], [0.3, 0.5, -0.2]]))
    lin.bias.copy_(torch.tensor([0.1, -0.1]))
inp = torch.tensor([[1.0, 2.0, -1.0], [0.5, -0.5, 2.0]])
opt = torch.optim.SGD(lin.parameters(), lr=0.1, momentum=0.5)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
for epoch in range(5):
    loss = (lin(inp) ** 2).mean()
    loss.backward()
    opt.step()
    sched.step()
weight = lin.weight
bias = lin.bias
'''


def test_loop_without_zero_grad_applies_the_growing_sum():
    """No zero_grad() in the loop: torch's .grad keeps every iteration's gradients, each step applies the sum."""
    _, code, sites = _run_both(UNCLEARED_SRC, ["weight", "bias"])
    assert "opt(accum_grads)" in code
    assert not [s for s in sites if s.status == TODO]
    cleared = UNCLEARED_SRC.replace("    loss.backward()", "    opt.zero_grad()\n    loss.backward()")
    _, code, _ = _run_both(cleared, ["weight", "bias"])
    assert "accum_grads" not in code


CLEARED_BY_A_FUNCTION_SRC = '''
import torch
lin = torch.nn.Linear(3, 2)
with torch.no_grad():
    lin.weight.copy_(torch.tensor([[0.2, -0.4, 0.1], [0.3, 0.5, -0.2]]))
    lin.bias.copy_(torch.tensor([0.1, -0.1]))
inp = torch.tensor([[1.0, 2.0, -1.0], [0.5, -0.5, 2.0]])
opt = torch.optim.SGD(lin.parameters(), lr=0.1, momentum=0.5)

def reset_grad():
    opt.zero_grad()

for epoch in range(4):
    loss = (lin(inp) ** 2).mean()
    reset_grad()
    loss.backward()
    opt.step()
weight = lin.weight
bias = lin.bias
'''


def test_loop_cleared_by_a_function_of_the_module_applies_each_step_its_own_gradients():
    """The loop clears through a function of the module (yunjey's GAN tutorial: `reset_grad()` calling both
    optimizers' zero_grad()): each step applies its own gradients, as torch does. Was taken for a loop
    clearing nothing: the held sum grew across the steps (2.2e-3 off torch by the third loss), silently."""
    _, code, sites = _run_both(CLEARED_BY_A_FUNCTION_SRC, ["weight", "bias"])
    assert "grad_sum" not in code, code
    assert not [s for s in sites if s.status == TODO]


TWO_SCRIPTS_SRC = '''
import torch
lin = torch.nn.Linear(2, 1)
with torch.no_grad():
    lin.weight.copy_(torch.tensor([[{w}, 0.5]]))
    lin.bias.copy_(torch.tensor([0.0]))
inp = torch.tensor([[1.0, 2.0]])
opt = torch.optim.SGD(lin.parameters(), lr={lr})
out = lin(inp)
loss = torch.mean(out)
loss.backward()
opt.step()
result = lin.weight
'''


def test_equal_steps_of_two_scripts_in_one_process():
    """Two scripts whose train steps have equal code (equal lines too) run in one process: each step
    reads its own script's model and optimizer (the compiled steps were kept per code alone)."""
    import mindspore as ms
    for w, lr in (("0.25", "0.1"), ("-1.5", "0.7")):
        src = TWO_SCRIPTS_SRC.format(w=w, lr=lr)
        _run_both(src, ["result"])
    assert ms.get_context("mode") == ms.GRAPH_MODE


MODULE_REQUIRES_GRAD_SRC = '''
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 2)
        self.register_buffer("scale", torch.tensor([1.0, 2.0]))

net = Net()
same = net.requires_grad_(False) is net
frozen = [p.requires_grad for p in net.parameters()]
net.fc.requires_grad_(True)
thawed = [p.requires_grad for p in net.parameters()]
buffer_flag = net.scale.requires_grad
'''


def test_module_requires_grad_():
    """Module.requires_grad_ sets the flag of the parameters, the buffers stay without one; it returns the module."""
    mod, code, _ = load_converted(MODULE_REQUIRES_GRAD_SRC)
    ref = load_torch(MODULE_REQUIRES_GRAD_SRC)
    assert "_ms_compat.module_requires_grad_(net, False)" in code
    for name in ("same", "frozen", "thawed", "buffer_flag"):
        assert getattr(mod, name) == ref[name], name
    assert ref["frozen"] == [False, False] and ref["thawed"] == [True, True]
