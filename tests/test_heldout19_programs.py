"""Constructs found by bench/real_world.py --set heldout19 (bench/_rw_heldout19.py: sfujim/TD3, pranz24/pytorch-soft-
actor-critic) in programs the converter was never run on, each reduced to a minimal torch snippet of our own run
against its conversion (PYNATIVE and GRAPH)."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .parity.harness import program_weights_match_torch  # noqa: E402

_NETS = """
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def fixed(net, scale):
    with torch.no_grad():
        for i, p in enumerate(net.parameters()):
            p.copy_(torch.linspace(-scale, 0.8 * scale, p.numel()).reshape(p.shape) * (1 + 0.1 * i))
    return net


class Buffer(object):
    def __init__(self, n):
        rows = np.arange(n * 3, dtype=np.float64).reshape(n, 3)
        self.state = np.sin(rows)
        self.target = np.cos(rows[:, :1])
        self.size = n

    def sample(self, batch_size):
        ind = np.random.randint(0, self.size, size=batch_size)
        return torch.FloatTensor(self.state[ind]), torch.FloatTensor(self.target[ind])
"""

# ------------------------------------------------------------------ a replay buffer's sample() read by two steps
TWO_STEPS = _NETS + """

class Agent(object):
    def __init__(self):
        self.critic = fixed(nn.Linear(6, 1), 0.4)
        self.actor = fixed(nn.Linear(3, 3), 0.3)
        self.critic_optimizer = torch.optim.Adam(self.critic.parameters(), lr=1e-2)
        self.actor_optimizer = torch.optim.Adam(self.actor.parameters(), lr=1e-2)

    def train(self, replay_buffer, batch_size):
        state, target = replay_buffer.sample(batch_size)
        critic_loss = F.mse_loss(self.critic(torch.cat([state, state * 2], 1)), target)
        self.critic_optimizer.zero_grad()
        critic_loss.backward()
        self.critic_optimizer.step()
        actor_loss = -self.critic(torch.cat([state, self.actor(state)], 1)).mean()
        self.actor_optimizer.zero_grad()
        actor_loss.backward()
        self.actor_optimizer.step()


np.random.seed(0)
agent = Agent()
buffer = Buffer(20)
for it in range(3):
    agent.train(buffer, 4)
after = torch.from_numpy(np.random.rand(3))      # the host generator's state after the steps
weights = [*agent.critic.parameters(), *agent.actor.parameters(), after]
"""


@pytest.mark.parametrize("graph", [False, True])
def test_replay_buffer_sample_is_data_for_both_steps(graph):
    """TD3/DDPG's `state, ... = replay_buffer.sample(batch_size)` (np.random.randint indices) read by the critic's
    step and again by the actor's: the sampling statement went into the first step's forward (in GRAPH mode drawn
    once, at compile time) and the second step recomputed it to carry a gradient (`state + (state_recomputed -
    stop_gradient(state_recomputed))`), drawing a second batch from the host generator: every later batch differed
    from torch's (OurDDPG's losses 3e-1 off, SAC's ReplayMemory crashed adding its NumPy arrays). A method that a
    plain class of the project defines drawing with numpy.random or random, called on a bare name, now makes the
    steps' data, as `next(it)` does: sampled once, outside both steps. Weights after three iterations and the host
    generator's next draw vs torch."""
    code, _ = program_weights_match_torch(TWO_STEPS, graph)
    assert "_recomputed" not in code, code
    head = code.index("def train(self, replay_buffer, batch_size):")
    assert code.index("replay_buffer.sample(batch_size)", head) < code.index("def forward_fn", head), code


# ------------------------------------------------------------------ an update under an `if` in a method
DELAYED = _NETS + """

class Agent(object):
    def __init__(self):
        self.critic = fixed(nn.Linear(3, 1), 0.4)
        self.actor = fixed(nn.Linear(3, 3), 0.3)
        self.critic_optimizer = torch.optim.Adam(self.critic.parameters(), lr=1e-2)
        self.actor_optimizer = torch.optim.Adam(self.actor.parameters(), lr=1e-2)
        self.total_it = 0

    def train(self, state, target):
        self.total_it += 1
        critic_loss = F.mse_loss(self.critic(state), target)
        self.critic_optimizer.zero_grad()
        critic_loss.backward()
        self.critic_optimizer.step()
        if self.total_it % 2 == 0:
            actor_loss = -self.critic(self.actor(state)).mean()
            self.actor_optimizer.zero_grad()
            actor_loss.backward()
            self.actor_optimizer.step()


agent = Agent()
for it in range(4):
    state = torch.linspace(-1, 1.5, 12).reshape(4, 3) * (it + 1)
    agent.train(state, torch.sin(state[:, :1]))
weights = [*agent.critic.parameters(), *agent.actor.parameters()]
"""


@pytest.mark.parametrize("graph", [False, True])
def test_delayed_update_under_if_in_a_method(graph):
    """TD3's delayed actor update, `if self.total_it % self.policy_freq == 0: actor_loss = ...;
    actor_loss.backward(); self.actor_optimizer.step()` after the critic's step at the top of train(): the `if` was
    no loop's, so its backward() stayed as written, no site and no TODO (AttributeError: 'Tensor' object has no
    attribute 'backward'). It is now a train step of its own inside the `if`, the method's arguments (`state`, a
    new batch at each call) its inputs. Weights after four iterations (two actor updates) vs torch."""
    code, _ = program_weights_match_torch(DELAYED, graph)
    assert "def train_step(state)" in code, code
    assert ".backward()" not in code, code


# ------------------------------------------------------------------ a requires_grad attribute given to an optimizer
TEMPERATURE = _NETS + """

class Agent(object):
    def __init__(self, tune):
        self.policy = fixed(nn.Linear(3, 2), 0.5)
        self.policy_optim = torch.optim.Adam(self.policy.parameters(), lr=1e-2)
        self.alpha = 0.2
        self.tune = tune
        if self.tune is True:
            self.target_entropy = -2.0
            self.log_alpha = torch.zeros(1, requires_grad=True)
            self.alpha_optim = torch.optim.Adam([self.log_alpha], lr=1e-1)

    def update(self, state):
        log_pi = F.log_softmax(self.policy(state), -1).sum(1, keepdim=True)
        policy_loss = (self.alpha * log_pi - log_pi.exp()).mean()
        self.policy_optim.zero_grad()
        policy_loss.backward()
        self.policy_optim.step()
        if self.tune:
            alpha_loss = -(self.log_alpha * (log_pi + self.target_entropy).detach()).mean()
            self.alpha_optim.zero_grad()
            alpha_loss.backward()
            self.alpha_optim.step()
            self.alpha = self.log_alpha.exp()
        else:
            alpha_loss = torch.tensor(0.)
        return alpha_loss


agent = Agent(True)
for it in range(3):
    agent.update(torch.linspace(-1, 1, 12).reshape(4, 3) * (it + 1))
weights = [*agent.policy.parameters(), agent.log_alpha, agent.alpha]
"""


@pytest.mark.parametrize("graph", [False, True])
def test_requires_grad_attribute_trained_by_its_own_optimizer(graph):
    """SAC's automatic entropy tuning: `self.log_alpha = torch.zeros(1, requires_grad=True)` given to
    `Adam([self.log_alpha])`, its loss reading log_pi (computed by the policy before the `if`) only detached. The
    leaf was converted to a plain `ops.zeros(1)` (MigrationError: the optimizer is given a Tensor that is no
    Parameter), and its update, under an `if` of the method, was no site. The attribute is now a Parameter as in
    torch (trained_tensors.py, `self.<attr>` targets), the `if` a step of its own whose loss reaches it, log_pi a
    constant of that step (read only under ops.stop_gradient: torch's detach). Policy weights, log_alpha and alpha
    after three updates vs torch."""
    code, _ = program_weights_match_torch(TEMPERATURE, graph)
    assert "self.log_alpha = ms.Parameter(" in code, code
    assert "def train_step(log_pi" in code, code


# ------------------------------------------------------------------ a network's own sample() is no replay buffer's
NETWORK_SAMPLE = _NETS + """

class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(3, 1)
        with torch.no_grad():
            self.l.weight.copy_(torch.tensor([[0.3, -0.2, 0.4]]))
            self.l.bias.fill_(0.1)

    def sample(self, z):
        return torch.tanh(self.l(z))


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(1, 1)
        with torch.no_grad():
            self.l.weight.fill_(0.7)
            self.l.bias.fill_(-0.2)

    def forward(self, x):
        return self.l(x)


np.random.seed(0)
gen = Generator()
disc = Discriminator()
opt_g = torch.optim.Adam(gen.parameters(), lr=1e-2)
opt_d = torch.optim.Adam(disc.parameters(), lr=1e-2)
buffer = Buffer(20)
for it in range(3):
    state, target = buffer.sample(4)
    fake = gen.sample(state)
    d_loss = F.mse_loss(disc(fake.detach()), target)
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
    g_loss = -disc(fake).mean()
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
after = torch.from_numpy(np.random.rand(3))
weights = [*gen.parameters(), *disc.parameters(), after]
"""


@pytest.mark.parametrize("graph", [False, True])
def test_network_sample_method_still_carries_the_gradient(graph):
    """The replay-buffer rule above keys on the method's name (`sample`, which the program's plain Buffer class
    defines with np.random): a network's own `gen.sample(state)` (a name the module uses as a network:
    `gen.parameters()`) stays in the steps, recomputed by the generator's step for its gradient, while
    `buffer.sample(4)` is drawn once. Weights of both networks after three iterations and the host generator's next
    draw vs torch."""
    code, _ = program_weights_match_torch(NETWORK_SAMPLE, graph)
    assert "fake_recomputed" in code, code
