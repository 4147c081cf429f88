"""A program whose network builds a torch.distributions object (a VAE's Normal and its kl_divergence, a
reparameterised sample): converted, it set GRAPH mode, and MindSpore 2.10 runs a distribution object built in a
compiled graph through JIT Fallback, whose values come out right and whose gradients are zero (the weights never
moved: a silent lost gradient), or fails to compile ("The direct fv size is"). A value_and_grad made in GRAPH mode
is compiled even when called op by op, so the converted program now starts in PYNATIVE mode (transformer.py's
run header, ProjectIndex.reaches_distributions). The losses here are deterministic (log_prob, kl_divergence, an
rsample whose scale is 1e-7 of sigma): the weights after the steps must match torch's."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .harness import program_weights_match_torch  # noqa: E402

PROGRAM = '''
import torch
import torch.nn as nn
from torch.distributions import Normal, kl_divergence


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, y):
        h = self.fc(x)
        mu, sigma = h[:, :2], h[:, 2:].exp()
        q = Normal(mu, sigma)
        z = Normal(mu, sigma * 1e-7).rsample()
        return -q.log_prob(y).mean() + kl_divergence(q, Normal(torch.zeros_like(mu), torch.ones_like(sigma))).mean() \\
            + (z ** 2).mean()


net = Encoder()
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1) * 0.3)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.linspace(-1, 1, 12).reshape(3, 4)
y = torch.linspace(0, 1, 6).reshape(3, 2)
losses = []
for step in range(4):
    opt.zero_grad()
    loss = net(x, y)
    loss.backward()
    opt.step()
    losses.append(loss.item())
weights = list(net.parameters()) + [torch.tensor(losses)]
'''


@pytest.mark.parametrize("graph", [False, True], ids=["pynative", "graph"])
def test_step_building_distributions_trains_as_in_torch(graph):
    code, _ = program_weights_match_torch(PROGRAM, graph, what="distributions in the step: ")
    assert "ms.set_context(mode=ms.PYNATIVE_MODE)" in code, code


GAMMA_SRC = '''
import torch
from torch import nn
from torch.distributions import Beta, Gamma


def draw(a):
    return Gamma(a, torch.ones_like(a)).rsample()


class Net(nn.Module):
    def forward(self, a):
        d = Beta(a, a)
        return d.rsample((2,))
'''


def _line(src, text):
    return src.splitlines().index(text) + 1


def test_rsample_without_a_gradient_names_its_line():
    """Gamma/Beta/Dirichlet/Chi2/StudentT.rsample: MindSpore's gamma sampler has no gradient, so the conversion stops
    with MigrationError; it now names the original line of the rsample() call (converted as
    _ms_compat.rsample_at(dist, 'file:line', ...)), op by op and inside a compiled construct (there MindSpore runs
    the distribution in Python, and re-raised the message as its RuntimeError when the graph ran: compiling now
    stops with MigrationError naming the line, tests/parity/test_rsample_in_graph.py)."""
    import numpy as np
    import mindspore as ms
    from .harness import load_converted

    mod, code, _ = load_converted(GAMMA_SRC)
    a = ms.Tensor(np.float32([1.0, 2.0]))
    with pytest.raises(Exception) as err:
        mod.draw(a)
    assert type(err.value).__name__ == "MigrationError", err.value
    assert f"Gamma.rsample at __main__:{_line(GAMMA_SRC, '    return Gamma(a, torch.ones_like(a)).rsample()')}:" \
        in str(err.value), err.value
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        with pytest.raises(Exception) as err:
            mod.Net()(a)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert type(err.value).__name__ == "MigrationError", err.value
    assert f"rsample at __main__:{_line(GAMMA_SRC, '        return d.rsample((2,))')} inside a compiled graph" \
        in str(err.value), err.value
