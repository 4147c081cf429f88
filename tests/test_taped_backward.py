"""A backward() whose loss was built before its train step could hold it is differentiated from PyNative's record of
the operations (msmigrate/taped_steps.py, templates/compat_parts/taped_backward.py): REINFORCE's log-probabilities
saved during the rollout, minimalRL's one backward() per kept probability before one step, an actor and a critic
stepped on one backward(), PPO's advantages filled on the host from the network's values. Each program's weights
after training are compared with torch's (parameters torch changed must change: no gradient is lost), and a
parameter the loss never reaches stays where torch leaves it (AdamW's decay skips it)."""
import re
import sys

import pytest

from tests.parity.harness import load_converted, program_weights_match_torch

_FILL = '''
import numpy as np
import torch


def fill(module, seed):
    """The same starting weights on both sides."""
    rng = np.random.RandomState(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.from_numpy(rng.uniform(-0.5, 0.5, tuple(p.shape)).astype(np.float32)))
'''

_ENV = _FILL + '''


class Env:
    """A fixed walk of observations; the reward is 1 for action 1."""
    def __init__(self):
        self.rng = np.random.RandomState(0)

    def reset(self):
        self.t = 0
        return self.rng.randn(4).astype(np.float32)

    def step(self, a):
        self.t += 1
        return self.rng.randn(4).astype(np.float32), float(a == 1), self.t >= 4
'''

REINFORCE = _ENV + '''
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 2)
        self.unused = nn.Linear(2, 2)
        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        return F.softmax(self.fc2(torch.tanh(self.fc1(x))), dim=1)


policy = Policy()
fill(policy, 0)
optimizer = torch.optim.AdamW(policy.parameters(), lr=1e-2, weight_decay=0.1)
env = Env()


def select_action(state):
    probs = policy(torch.from_numpy(state).unsqueeze(0))
    action = int(probs.argmax())
    policy.saved_log_probs.append(torch.log(probs[0, action]))
    return action


def finish_episode(gamma=0.9):
    R = 0
    returns = []
    for r in policy.rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = returns - returns.mean()
    policy_loss = []
    for log_prob, R in zip(policy.saved_log_probs, returns):
        policy_loss.append(-log_prob * R)
    optimizer.zero_grad()
    loss = torch.stack(policy_loss).sum() + 0.1 * policy.saved_log_probs[0] ** 2
    loss.backward()
    optimizer.step()
    del policy.rewards[:]
    del policy.saved_log_probs[:]


for episode in range(3):
    state, done = env.reset(), False
    while not done:
        action = select_action(state)
        state, reward, done = env.step(action)
        policy.rewards.append(reward)
    finish_episode()

weights = [p.detach() for p in policy.parameters()]
'''

PER_ITEM = _ENV + '''
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(1)


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.data = []
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 2)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=1e-2)

    def forward(self, x):
        return F.softmax(self.fc2(F.relu(self.fc1(x))), dim=0)

    def put_data(self, item):
        self.data.append(item)

    def train_net(self):
        R = 0
        self.optimizer.zero_grad()
        for r, prob in self.data[::-1]:
            R = r + 0.9 * R
            loss = -torch.log(prob) * R
            loss.backward()
        self.optimizer.step()
        self.data = []


pi = Policy()
fill(pi, 1)
pi.optimizer = torch.optim.Adam(pi.parameters(), lr=1e-2)
env = Env()
for episode in range(3):
    s, done = env.reset(), False
    while not done:
        prob = pi(torch.from_numpy(s))
        a = int(torch.argmax(prob))
        s, r, done = env.step(a)
        pi.put_data((r, prob[a]))
    pi.train_net()

weights = [p.detach() for p in pi.parameters()]
'''

ACTOR_CRITIC = _ENV + '''
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(2)
actor = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
critic = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
fill(actor, 2)
fill(critic, 3)
actor_opt = torch.optim.SGD(actor.parameters(), lr=0.05, momentum=0.9)
critic_opt = torch.optim.Adam(critic.parameters(), lr=1e-2)
env = Env()
saved = []


def act(state):
    x = torch.from_numpy(state)
    probs = F.softmax(actor(x), dim=-1)
    a = int(probs.argmax())
    saved.append((torch.log(probs[a]), critic(x)))
    return a


for episode in range(3):
    state, done, rewards = env.reset(), False, []
    while not done:
        state, r, done = env.step(act(state))
        rewards.append(r)
    policy_losses, value_losses = [], []
    R = 0.0
    for (log_prob, value), r in zip(saved[::-1], rewards[::-1]):
        R = r + 0.9 * R
        advantage = R - value.item()
        policy_losses.append(-log_prob * advantage)
        value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))
    actor_opt.zero_grad()
    critic_opt.zero_grad()
    loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
    loss.backward()
    actor_opt.step()
    critic_opt.step()
    saved.clear()

weights = [p.detach() for p in actor.parameters()] + [p.detach() for p in critic.parameters()]
'''

PPO_ADVANTAGES = _FILL + '''
import torch.nn as nn

v = nn.Linear(3, 1)
pi = nn.Linear(3, 2)
fill(v, 4)
fill(pi, 5)
opt = torch.optim.Adam(list(v.parameters()) + list(pi.parameters()), lr=1e-2)
s = torch.from_numpy(np.random.RandomState(0).randn(5, 3).astype(np.float32))
r = torch.from_numpy(np.random.RandomState(1).rand(5, 1).astype(np.float32))

for i in range(3):
    td_target = r + 0.9 * v(s)
    delta = td_target - v(s)
    delta = delta.detach().numpy()
    advantage_lst = []
    advantage = 0.0
    for delta_t in delta[::-1]:
        advantage = 0.9 * 0.95 * advantage + delta_t[0]
        advantage_lst.append([advantage])
    advantage_lst.reverse()
    advantage = torch.tensor(advantage_lst, dtype=torch.float)
    logp = torch.log_softmax(pi(s), dim=1)[:, :1]
    loss = -(logp * advantage).mean() + ((v(s) - td_target.detach()) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()

weights = [p.detach() for p in v.parameters()] + [p.detach() for p in pi.parameters()]
'''


@pytest.mark.parametrize("src,steps", [(REINFORCE, 1), (PER_ITEM, 1), (ACTOR_CRITIC, 1), (PPO_ADVANTAGES, 1)],
                         ids=["saved_log_probs", "per_item_backward", "actor_critic_two_optimizers",
                              "ppo_host_advantages"])
def test_taped_programs_train_as_torch(src, steps):
    code, sites = program_weights_match_torch(src, graph=False)
    assert "tape_backward(" in code and "tape_step(" in code and "_ms_compat.open_tape()" in code, code
    assert "mode=ms.PYNATIVE_MODE" in code
    taped = [s for s in sites if s.target == "_ms_compat.tape_backward"]
    assert len(taped) == steps, sites


def test_two_optimizers_step_in_one_tape_step():
    code, _ = program_weights_match_torch(ACTOR_CRITIC, graph=False)
    assert "tape_step(actor_opt, critic_opt)" in code and "critic_opt.step()" not in code, code


def test_graph_mode_stops_at_the_backward(tmp_path):
    """Forced into GRAPH mode (its mode line edited), the converted program stops with MigrationError at the
    backward(), naming the original file and line: a compiled graph records nothing for the tape."""
    import subprocess

    from msmigrate.converter import convert_tree
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text(REINFORCE, encoding="utf-8")
    convert_tree(tmp_path / "src", tmp_path / "out")
    script = tmp_path / "out" / "train.py"
    code = script.read_text(encoding="utf-8")
    assert "mode=ms.PYNATIVE_MODE" in code and "_ms_compat.tape_backward(loss)" in code
    script.write_text(code.replace("mode=ms.PYNATIVE_MODE", "mode=ms.GRAPH_MODE"), encoding="utf-8")
    line = 1 + next(i for i, text in enumerate(REINFORCE.splitlines()) if text.strip() == "loss.backward()")
    r = subprocess.run([sys.executable, "train.py"], cwd=tmp_path / "out", capture_output=True, text=True,
                       timeout=300)
    assert r.returncode != 0
    assert re.search(rf"MigrationError: train(\.py)?:{line}: backward\(\) of a loss computed before its train "
                     r"step .*PYNATIVE_MODE", r.stderr), r.stderr[-2000:]


def test_tensor_of_a_deque_or_range():
    src = '''
import torch
from collections import deque


def returns_of(rewards, gamma=0.5):
    R = 0.0
    returns = deque()
    for r in rewards[::-1]:
        R = r + gamma * R
        returns.appendleft(R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + 1e-6)     # bound again after the conversion
    return returns, torch.tensor(range(3))


out = returns_of([1.0, 0.0, 2.0])
'''
    import numpy as np
    mod, code, _ = load_converted(src, pynative=True)
    assert re.search(r"ms\.Tensor\(list\(returns\)\)", code) and "ms.Tensor(list(range(3)))" in code, code
    ns = {}
    exec(src, ns)
    for got, want in zip(mod.out, ns["out"]):
        np.testing.assert_allclose(got.asnumpy(), want.numpy(), rtol=1e-6)
        assert str(want.dtype).split(".")[-1] == str(got.dtype).lower(), (got.dtype, want.dtype)


MIXED = _FILL + '''
import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 1)

    def forward(self, x):
        return self.fc(x)


net = Scorer()
fill(net, 0)
opt = torch.optim.SGD(net.parameters(), lr=0.1)


def replay(inputs):                    # a loss summed from values kept before the step: taped
    kept = []
    for x in inputs:
        kept.append(net(x).sum())
    total = sum(kept)
    opt.zero_grad()
    total.backward()
    opt.step()


pairs = torch.arange(12, dtype=torch.float32).reshape(2, 2, 3) / 10
for step in range(3):                  # a plain step: its forward unpacks a tensor and indexes it by an int
    pair = pairs[step % 2]
    opt.zero_grad()
    first, second = pair
    loss = ((net(first) - net(second)) ** 2 + net(pair[0]) * 0.5).sum()
    loss.backward()
    opt.step()
replay([pairs[0, 0], pairs[1, 1]])
weights = [p.detach() for p in net.parameters()]
'''


def test_plain_step_in_a_program_that_keeps_a_tape():
    """A program with a taped backward() records from its start (open_tape), so its plain train steps take their
    gradients inside that recording: MindSpore 2.10 then refused a plain int index there (`first, second = pair`,
    `pair[0]`: TypeError '... but got 0 with type int'; nerf-pytorch's render `rays_o, rays_d = rays` under a
    driver's step). The same index as a one-element tuple passes; values compared with torch."""
    code, sites = program_weights_match_torch(MIXED, graph=False)
    assert "_ms_compat.open_tape()" in code and "tape_step(" in code, code
