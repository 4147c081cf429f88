"""Minimal reproductions of what bench/_rw_heldout28.py's programs (openai/improved-diffusion, lucidrains/
siren-pytorch, lucidrains/mlp-mixer-pytorch) needed, each compared with torch in PYNATIVE and GRAPH mode.

- A NumPy value on the left of an operator with a tensor (`np.sqrt(2.0 / np.pi) * (x + ...)`, improved-diffusion's
  approx_standard_normal_cdf in the vb term of its hybrid loss): NumPy's own operator converted the MindSpore
  tensor and returned an ndarray, so the next op refused it (`Tanh()(input=<class 'numpy.ndarray'>)`) or, where
  a host op took it, the value went on without its gradient. torch's Tensor sets `__array_priority__` so that
  NumPy defers to the tensor's reflected operator; _ms_compat sets the same on MindSpore's Tensor.
- Gradient checkpointing through a torch.autograd.Function (improved-diffusion's nn.py `checkpoint`:
  CheckpointFunction.forward runs the block under no_grad, backward runs it again and calls torch.autograd.grad
  over its inputs and parameters): `CheckpointFunction.apply` refused GRAPH mode and its backward's autograd.grad
  was a raising TODO, so a UNet with use_checkpoint=True could not train. Such a Function (that exact shape,
  msmigrate/checkpoint_functions.py) is now called as the function it recomputes, `f(*args[:length])`: the same
  values and gradients."""
import pytest

from tests.parity.harness import program_weights_match_torch
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

NUMPY_LEFT = _FILL + '''
import torch.nn as nn


def normal_cdf_tanh(x):
    return 0.5 * (1.0 + torch.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * torch.pow(x, 3))))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        y = self.fc(x)
        # NumPy scalars of several kinds on the left: float64, float32, int64, a comparison
        return (normal_cdf_tanh(y) + np.float32(0.5) * y - np.int64(2) / (y * y + 1.0)
                + np.log(2.0) - y) * (np.float64(0.0) < y).float()


model = Net()
fill(model, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.linspace(-1, 1, 8).reshape(2, 4)
losses = []
for step in range(3):
    opt.zero_grad()
    loss = (model(x) ** 2).mean() + (np.sqrt(3.0) - model(x)).abs().mean()
    loss.backward()
    opt.step()
    losses.append(loss.item())
with torch.no_grad():
    out = model(x)
weights = [p.detach() for p in model.parameters()] + [out, torch.tensor(losses)]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_numpy_value_on_the_left_of_a_tensor_operator(graph):
    code, _ = program_weights_match_torch(NUMPY_LEFT, graph=graph)
    assert "np.sqrt(2.0 / np.pi) *" in code, code


CHECKPOINTED = _FILL + '''
import torch.nn as nn


def run_saving_memory(fn, tensors, weights, enabled):
    if not enabled:
        return fn(*tensors)
    packed = tuple(tensors) + tuple(weights)
    return Recompute.apply(fn, len(tensors), *packed)


class Recompute(torch.autograd.Function):
    @staticmethod
    def forward(ctx, fn, count, *packed):
        ctx.fn = fn
        ctx.saved = packed[:count]
        ctx.weights = packed[count:]
        with torch.no_grad():
            result = ctx.fn(*ctx.saved)
        return result

    @staticmethod
    def backward(ctx, *grad_out):
        leaves = [t.detach().requires_grad_(True) for t in ctx.saved]
        with torch.enable_grad():
            result = ctx.fn(*leaves)
        grads = torch.autograd.grad(result, leaves + list(ctx.weights), grad_out, allow_unused=True)
        return (None, None) + grads


class Block(nn.Module):
    def __init__(self, use_checkpoint):
        super().__init__()
        self.norm = nn.GroupNorm(2, 4)
        self.proj = nn.Linear(4, 4)
        self.use_checkpoint = use_checkpoint

    def forward(self, x, emb):
        return run_saving_memory(self._forward, (x, emb), self.parameters(), self.use_checkpoint)

    def _forward(self, x, emb):
        h = self.norm(x).transpose(1, 2)
        return x + self.proj(torch.tanh(h) * emb[:, None, :]).transpose(1, 2)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Linear(1, 4)
        self.blocks = nn.ModuleList([Block(True), Block(False), Block(True)])

    def forward(self, x, t):
        emb = self.emb(t[:, None])
        for block in self.blocks:
            x = block(x, emb)
        return x


model = Net()
fill(model, 28)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
x = torch.linspace(-1, 1, 24).reshape(2, 4, 3)
t = torch.tensor([0.25, 0.75])
losses = []
for step in range(3):
    opt.zero_grad()
    loss = ((model(x, t) - 0.5) ** 2).mean()
    loss.backward()
    opt.step()
    losses.append(loss.item())
weights = [p.detach() for p in model.parameters()] + [torch.tensor(losses)]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_checkpointing_autograd_function_is_the_call_it_recomputes(graph):
    # the Function's own backward (never reached by this program's calls) keeps its raising TODO
    code, _ = program_weights_match_torch(CHECKPOINTED, graph=graph, todos=["torch.autograd.grad"])
    assert "_ms_compat.recomputed_call(fn, len(tensors), *packed)" in code, code
