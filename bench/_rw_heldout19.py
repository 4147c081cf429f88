"""The `heldout19` set of bench/real_world.py (`--set heldout19`): two reinforcement-learning repositories the
converter was never run on, converted as a new user would convert them: their own training scripts run unedited
against a small synthetic `gym` package of ours written beside them, and their agents updated a few times by short
drivers (our code, the repositories' modules) on replay buffers of synthetic transitions.

    python bench/real_world.py --mirrors /work/.mirror --set heldout19 [--only td3_main,sac_train]

- sfujim/TD3: main.py itself (--policy TD3, OurDDPG and DDPG) on our `gym` (FILES below: a three-dimensional
  point environment, a Box action space of two dimensions seeded by `env.action_space.seed`), a few random start
  steps then the agent's train(replay_buffer, batch_size) at every step on utils.ReplayBuffer (np.random.randint
  indices); eval_policy's episodes, --save_model's torch.save of the state_dicts and optimizers. The agents: target
  networks by copy.deepcopy and `target_param.data.copy_(tau * param.data + (1 - tau) * target_param.data)`, two
  Adam optimizers (DDPG's critic with weight_decay), TD3's delayed actor update, torch.min of the twin critics and
  the clipped target noise `(torch.randn_like(action) * policy_noise).clamp(...)` (aligned by the runner).
  td3_train: a driver training TD3.TD3 four iterations, then save(), load() into a new agent, and one more
  iteration of each from the same batch (its optimizers' restored state).
- pranz24/pytorch-soft-actor-critic: main.py itself (Gaussian policy, automatic entropy tuning) on our `gym`, with
  its SummaryWriter; sac_train: a driver updating sac.SAC (GaussianPolicy: Normal(mean, std).rsample(), tanh
  squashing and its log-probability correction; QNetwork twin critics; hard_update/soft_update through
  `.data.copy_`; the entropy temperature `log_alpha = torch.zeros(1, requires_grad=True)`, a bare leaf tensor with
  its own Adam) via update_parameters on replay_memory.ReplayMemory (random.sample), then save_checkpoint /
  load_checkpoint; sac_deterministic: the DeterministicPolicy variant (its noise `self.noise.normal_(0., std=0.1)`
  written into a plain tensor attribute, clamped).

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

TD3 = "sfujim+TD3@34770ccdcb51df6f6c7d85c1ba7e40d71b940d16"
SAC = "pranz24+pytorch-soft-actor-critic@c1805660b3961694be54079a355155a5cad492f5"
_TD3_FILES = "TD3.py,DDPG.py,OurDDPG.py,utils.py,main.py"
_SAC_FILES = "sac.py,model.py,replay_memory.py,utils.py"
_TD3_ARGS = ["--env", "Point-v0", "--start_timesteps", "12", "--max_timesteps", "60", "--batch_size", "8",
             "--eval_freq", "14", "--save_model"]

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("td3_main", TD3, _TD3_FILES, "main.py", ["--policy", "TD3", *_TD3_ARGS], None),
    ("ourddpg_main", TD3, _TD3_FILES, "main.py", ["--policy", "OurDDPG", *_TD3_ARGS], None),
    ("ddpg_main", TD3, _TD3_FILES, "main.py", ["--policy", "DDPG", *_TD3_ARGS], None),
    ("td3_train", TD3, "TD3.py,utils.py", "driver.py", [], None),
    ("sac_main", SAC, _SAC_FILES + ",main.py", "main.py",
     ["--env-name", "Point-v0", "--batch_size", "8", "--start_steps", "10", "--num_steps", "60", "--hidden_size",
      "32", "--automatic_entropy_tuning", "1"], None),
    ("sac_train", SAC, _SAC_FILES, "driver.py", [], None),
    ("sac_deterministic", SAC, _SAC_FILES, "driver.py", [], None),
]

DEPS: dict = {}

# Our synthetic `gym`: the API the two main.py use (make, seed, reset, step, action_space.sample/seed/high/low,
# observation_space.shape, _max_episode_steps), numpy only.
_GYM = '''
import numpy as np


class Box:
    def __init__(self, low, high, shape):
        self.shape = shape
        self.low = np.full(shape, low, dtype=np.float32)
        self.high = np.full(shape, high, dtype=np.float32)
        self._rng = np.random.RandomState(0)

    def seed(self, seed=None):
        self._rng = np.random.RandomState(seed)
        return [seed]

    def sample(self):
        return self._rng.uniform(self.low, self.high).astype(np.float32)


class PointEnv:
    """A point pushed by a two-dimensional action; the episode ends after 8 steps or when it leaves the box."""
    _max_episode_steps = 8

    def __init__(self):
        self.observation_space = Box(-np.inf, np.inf, (3,))
        self.action_space = Box(-1.0, 1.0, (2,))
        self._rng = np.random.RandomState(0)
        self._state = np.zeros(3)
        self._t = 0

    def seed(self, seed=None):
        self._rng = np.random.RandomState(seed)
        return [seed]

    def reset(self):
        self._state = self._rng.uniform(-1.0, 1.0, 3)
        self._t = 0
        return self._state.copy()

    def step(self, action):
        a = np.clip(np.asarray(action, dtype=np.float64), -1.0, 1.0)
        push = np.array([a[0], a[1], a[0] * a[1]])
        self._state = 0.9 * self._state + 0.3 * push + 0.05 * self._rng.standard_normal(3)
        self._t += 1
        reward = float(-np.sum(self._state ** 2) - 0.1 * np.sum(a ** 2))
        done = self._t >= self._max_episode_steps or bool(np.abs(self._state).max() > 1.2)
        return self._state.copy(), reward, done, {}

    def close(self):
        pass


def make(name):
    return PointEnv()
'''

# Files written beside a program (real_world.prepare), by program name.
FILES = {name: {"gym/__init__.py": _GYM} for name in ("td3_main", "ourddpg_main", "ddpg_main", "sac_main")}

_SAC_DRIVER = '''
import argparse
import numpy as np
import torch
from sac import SAC
from replay_memory import ReplayMemory

POLICY = "{policy}"


class Box:
    def __init__(self, low, high):
        self.low, self.high = np.asarray(low, np.float32), np.asarray(high, np.float32)
        self.shape = self.low.shape


args = argparse.Namespace(gamma=0.99, tau=0.05, alpha=0.2, policy=POLICY, target_update_interval=1,
                          automatic_entropy_tuning=True, cuda=False, hidden_size=32, lr=3e-3)
space = Box([-2.0, -1.0], [2.0, 1.0])
agent = SAC(3, space, args)
memory = ReplayMemory(100, 7)
rng = np.random.RandomState(3)
for _ in range(40):
    memory.push(rng.randn(3), rng.uniform(-1, 1, 2) * space.high, float(rng.randn()), rng.randn(3),
                float(rng.rand() > 0.1))
updates = 0
per_update = 3 if POLICY == "Gaussian" else 2
for _ in range(6 // per_update):
    q1, q2, pi, ent, alpha = agent.update_parameters(memory, 8, updates)
    updates += 1
    print("update", q1, q2, pi, ent, alpha)
print("VALUE q1_loss", q1)
print("VALUE q2_loss", q2)
print("VALUE policy_loss", pi)
print("VALUE alpha_loss", ent)
print("VALUE alpha", alpha)
target = sum(float(p.sum()) for p in agent.critic_target.parameters())
print("VALUE critic_target", target)
state = np.array([0.3, -0.2, 0.5])
print("VALUE eval_action", float(np.sum(agent.select_action(state, evaluate=True) * [1.0, 3.0])))
agent.save_checkpoint("point", ckpt_path="sac_ckpt")
other = SAC(3, space, args)
other.load_checkpoint("sac_ckpt", evaluate=True)
print("VALUE loaded_action", float(np.sum(other.select_action(state, evaluate=True) * [1.0, 3.0])))
print("VALUE loaded_target", sum(float(p.sum()) for p in other.critic_target.parameters()))
'''

# Drivers: our own code, through the repositories' modules.
DRIVERS = {
    "td3_train": '''
import numpy as np
import torch
import TD3
import utils

state_dim, action_dim, max_action = 3, 2, 2.0
rng = np.random.RandomState(5)
buffer = utils.ReplayBuffer(state_dim, action_dim, max_size=64)
for _ in range(80):     # wraps around max_size
    buffer.add(rng.randn(state_dim), rng.uniform(-max_action, max_action, action_dim), rng.randn(state_dim),
               float(rng.randn()), float(rng.rand() < 0.1))
agent = TD3.TD3(state_dim, action_dim, max_action, policy_noise=0.2 * max_action, noise_clip=0.5 * max_action)
for it in range(4):     # critic at every iteration, actor and targets at every second: six backward()
    agent.train(buffer, batch_size=8)
state = np.array([0.1, -0.4, 0.7])
print("VALUE action", float(np.sum(agent.select_action(state) * [1.0, 2.0])))
print("VALUE actor_target", sum(float(p.sum()) for p in agent.actor_target.parameters()))
print("VALUE critic_target", sum(float(p.sum()) for p in agent.critic_target.parameters()))
q1, q2 = agent.critic(torch.FloatTensor(state.reshape(1, -1)), torch.FloatTensor([[0.5, -0.5]]))
print("VALUE q1", float(q1))
print("VALUE q2", float(q2))
agent.save("td3_point")
other = TD3.TD3(state_dim, action_dim, max_action)
other.load("td3_point")
print("VALUE loaded_action", float(np.sum(other.select_action(state) * [1.0, 2.0])))
print("VALUE loaded_target", sum(float(p.sum()) for p in other.critic_target.parameters()))
print("VALUE adam_steps", float(other.critic_optimizer.state_dict()["state"][0]["step"]))
''',
    "sac_train": _SAC_DRIVER.replace("{policy}", "Gaussian"),
    "sac_deterministic": _SAC_DRIVER.replace("{policy}", "Deterministic"),
}
