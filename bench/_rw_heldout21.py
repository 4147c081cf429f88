"""The `heldout21` set of bench/real_world.py (`--set heldout21`): reinforcement-learning programs the converter was
never run on, converted as a new user would convert them and run as they are, against a small environment of ours
that stands in for gym / gymnasium (none is installed; the programs only reset, step and read `spec`).

    python bench/real_world.py --mirrors /work/.mirror --set heldout21 [--only ex_reinforce,mrl_ppo]

- pytorch/examples, reinforcement_learning/:
  - ex_reinforce: reinforce.py as it is (--seed 7 --log-interval 1): a Categorical policy sampled in
    `select_action`, each action's log-probability appended to `policy.saved_log_probs` during the episode, the
    returns normalised and the loss `torch.cat(policy_loss).sum()` built in `finish_episode()` after it, one
    backward() and Adam's step there.
  - ex_actor_critic: actor_critic.py the same way: a two-headed network, `SavedAction(log_prob, value)`
    namedtuples kept during the episode, `F.smooth_l1_loss(value, torch.tensor([R]))` per step, the policy and
    value losses stacked and summed after it.
- seungeunrho/minimalRL (one file per algorithm, each run as it is):
  - mrl_reinforce: REINFORCE.py: `pi.put_data((r, prob[a]))` during the episode, then in `train_net` one
    backward() per kept probability (the gradients add up) and one step after the loop.
  - mrl_actor_critic, mrl_ppo, mrl_vtrace, mrl_ppo_lstm (CartPole): losses recomputed in the training method from
    batched transitions (make_batch), PPO's clipped ratio over K epochs, V-trace's clipped importance weights, an
    LSTM policy with its hidden state kept in the transitions.
  - mrl_dqn: a replay buffer sampled with random.sample, a target network loaded from the Q network's
    state_dict, epsilon-greedy actions by random.random().
  - mrl_ddpg, mrl_sac, mrl_ppo_continuous (Pendulum): Ornstein-Uhlenbeck noise, soft target updates by
    `param_target.data.copy_(...)`, SAC's `log_alpha` (a tensor with requires_grad=True optimised by its own
    Adam) and rsample + tanh.

The environments (the data writer puts gym.py and gymnasium.py beside each program): CartPole-v1 (the classic
cart-pole equations, Euler steps of 0.02 s, terminated past 2.4 or 12 degrees, truncated at 500 steps) and
Pendulum-v1 (a torque-driven pendulum, reward -(theta^2 + 0.1 thetadot^2 + 0.001 u^2), truncated at 200 steps),
each started from a NumPy RandomState (seed 0, or reset(seed=...)). Dropout is off (the runner's); the
runner aligns the sampled actions across the frameworks.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

from pathlib import Path

EXAMPLES = "pytorch+examples@77f55b912142e11fcfdf5b530231fb9c52f181e8"
MINIMAL_RL = "seungeunrho+minimalRL@c8efed8481e3cd40e9739cfde220a55522555b57"

# our stand-in for gym / gymnasium: only what the programs call
_ENVIRONMENTS = '''
"""A stand-in for gym / gymnasium written by bench/_rw_heldout21.py: CartPole-v1 and Pendulum-v1."""
import math
from types import SimpleNamespace

import numpy as np


class _Space:
    def __init__(self, shape=None, n=None, low=None, high=None):
        self.shape, self.n, self.low, self.high = shape, n, low, high


class CartPole:
    def __init__(self, max_episode_steps=500):
        self.max_steps = max_episode_steps
        self.rng = np.random.RandomState(0)
        self.spec = SimpleNamespace(reward_threshold=475.0, id="CartPole-v1", max_episode_steps=max_episode_steps)
        self.observation_space = _Space(shape=(4,))
        self.action_space = _Space(n=2, shape=())

    def reset(self, seed=None, options=None):
        if seed is not None:
            self.rng = np.random.RandomState(seed)
        self.state = self.rng.uniform(-0.05, 0.05, size=4)
        self.t = 0
        return self.state.astype(np.float32), {}

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state
        force = 10.0 if int(action) == 1 else -10.0
        cos, sin = math.cos(theta), math.sin(theta)
        total_mass, pole_mass_length = 1.1, 0.05
        temp = (force + pole_mass_length * theta_dot ** 2 * sin) / total_mass
        theta_acc = (9.8 * sin - cos * temp) / (0.5 * (4.0 / 3.0 - 0.1 * cos ** 2 / total_mass))
        x_acc = temp - pole_mass_length * theta_acc * cos / total_mass
        x, x_dot = x + 0.02 * x_dot, x_dot + 0.02 * x_acc
        theta, theta_dot = theta + 0.02 * theta_dot, theta_dot + 0.02 * theta_acc
        self.state = np.array([x, x_dot, theta, theta_dot])
        self.t += 1
        terminated = bool(abs(x) > 2.4 or abs(theta) > 12 * 2 * math.pi / 360)
        return self.state.astype(np.float32), 1.0, terminated, self.t >= self.max_steps, {}

    def render(self):
        return None

    def close(self):
        return None


class Pendulum:
    def __init__(self, max_episode_steps=200, autoreset=False):
        self.max_steps = max_episode_steps
        self.rng = np.random.RandomState(0)
        self.spec = SimpleNamespace(reward_threshold=None, id="Pendulum-v1", max_episode_steps=max_episode_steps)
        self.observation_space = _Space(shape=(3,))
        self.action_space = _Space(shape=(1,), low=np.array([-2.0], np.float32), high=np.array([2.0], np.float32))

    def _observation(self):
        return np.array([math.cos(self.theta), math.sin(self.theta), self.theta_dot], dtype=np.float32)

    def reset(self, seed=None, options=None):
        if seed is not None:
            self.rng = np.random.RandomState(seed)
        self.theta, self.theta_dot = self.rng.uniform([-math.pi, -1.0], [math.pi, 1.0])
        self.t = 0
        return self._observation(), {}

    def step(self, action):
        u = float(np.clip(np.asarray(action, dtype=np.float64).reshape(-1)[0], -2.0, 2.0))
        angle = ((self.theta + math.pi) % (2 * math.pi)) - math.pi
        reward = -(angle ** 2 + 0.1 * self.theta_dot ** 2 + 0.001 * u ** 2)
        self.theta_dot = float(np.clip(self.theta_dot + (3 * 10.0 / 2 * math.sin(self.theta) + 3.0 * u) * 0.05,
                                       -8.0, 8.0))
        self.theta = self.theta + self.theta_dot * 0.05
        self.t += 1
        return self._observation(), reward, False, self.t >= self.max_steps, {}

    def render(self):
        return None

    def close(self):
        return None


def make(name, render_mode=None, max_episode_steps=None, autoreset=False, **kwargs):
    if name.startswith("CartPole"):
        return CartPole(max_episode_steps or 500)
    if name.startswith("Pendulum"):
        return Pendulum(max_episode_steps or 200, autoreset)
    raise ValueError(f"no environment {name} in this stand-in")
'''


def _environments(root):
    """gym.py and gymnasium.py in the program's directory (RUN/SIDE/x/prog), where `import gym` finds them."""
    prog = Path(root).parent / "x" / "prog"
    prog.mkdir(parents=True, exist_ok=True)
    for name in ("gym.py", "gymnasium.py"):
        (prog / name).write_text(_ENVIRONMENTS.lstrip(), encoding="utf-8")


_EX = "reinforcement_learning/"
# (name, repo, directory of the program in the repo, script, args, data); a trailing comma: the file alone
PROGRAMS = [
    ("ex_reinforce", EXAMPLES, _EX + "reinforce.py,", "reinforce.py", ["--seed", "7", "--log-interval", "1"],
     _environments),
    ("ex_actor_critic", EXAMPLES, _EX + "actor_critic.py,", "actor_critic.py", ["--seed", "7", "--log-interval", "1"],
     _environments),
    ("mrl_reinforce", MINIMAL_RL, "REINFORCE.py,", "REINFORCE.py", [], _environments),
    ("mrl_actor_critic", MINIMAL_RL, "actor_critic.py,", "actor_critic.py", [], _environments),
    ("mrl_ppo", MINIMAL_RL, "ppo.py,", "ppo.py", [], _environments),
    ("mrl_vtrace", MINIMAL_RL, "vtrace.py,", "vtrace.py", [], _environments),
    ("mrl_ppo_lstm", MINIMAL_RL, "ppo-lstm.py,", "ppo-lstm.py", [], _environments),
    ("mrl_dqn", MINIMAL_RL, "dqn.py,", "dqn.py", [], _environments),
    ("mrl_ddpg", MINIMAL_RL, "ddpg.py,", "ddpg.py", [], _environments),
    ("mrl_sac", MINIMAL_RL, "sac.py,", "sac.py", [], _environments),
    ("mrl_ppo_continuous", MINIMAL_RL, "ppo-continuous.py,", "ppo-continuous.py", [], _environments),
]

DEPS: dict = {}

DRIVERS: dict = {}
