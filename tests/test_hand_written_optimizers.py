"""An optimizer the program writes itself: a torch.optim.Optimizer subclass whose step() loops over
param_groups, reads p.grad and self.state[p] and updates the parameters and its state in place (Lion, Adam
written out, an optimizer evaluating a closure, SGD with weight decay over two param groups under a StepLR,
an update function taking the parameter and its state as arguments as lion-pytorch's update_fn does).

The class is rebased on _ms_compat.HandWrittenOptimizer (msmigrate/hand_optimizers.py,
templates/compat_parts/user_optimizers.py): the converted train step hands it the gradients as p.grad and its
own step() runs on the host. Before, the class kept a placeholder construct and the converted program stopped
with MigrationError at its first step. Each program trains in torch and converted, PYNATIVE and GRAPH (the
step then runs op by op); the per-step losses and the final weights must agree."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")

from .parity.harness import load_converted, program_weights_match_torch  # noqa: E402

IMPORTS = '''
import math
import torch
from torch.optim import Optimizer
'''

HEAD = '''
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1) * 0.3)
x = torch.linspace(-1, 1, 24).reshape(6, 4)
y = torch.linspace(0, 1, 12).reshape(6, 2)
losses = []
'''

TRAIN = '''
for step in range(5):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    losses.append(loss.item())
'''

TAIL = '''
weights = list(model.parameters()) + [torch.tensor(losses)]
'''
# the optimizer's state tensors compared too, where the state has its moments under these names
STATE_TAIL = '''
weights += [opt.state[p][name] for p in model.parameters() for name in ('exp_avg', 'exp_avg_sq', 'buf', 'slow_param')
            if name in opt.state[p]]
'''

LION = IMPORTS + '''
class Lion(Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        defaults = dict(lr=lr, betas=betas, weight_decay=weight_decay)
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group['params']:
                if p.grad is None:
                    continue
                grad = p.grad
                state = self.state[p]
                if len(state) == 0:
                    state['exp_avg'] = torch.zeros_like(p)
                exp_avg = state['exp_avg']
                beta1, beta2 = group['betas']
                p.data.mul_(1 - group['lr'] * group['weight_decay'])
                update = exp_avg.clone().mul_(beta1).add(grad, alpha=1 - beta1).sign_()
                p.add_(update, alpha=-group['lr'])
                exp_avg.mul_(beta2).add_(grad, alpha=1 - beta2)
        return loss
'''

ADAM = IMPORTS + '''
class MyAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            beta1, beta2 = group['betas']
            for p in group['params']:
                if p.grad is None:
                    continue
                grad = p.grad
                state = self.state[p]
                if len(state) == 0:
                    state['step'] = 0
                    state['exp_avg'] = torch.zeros_like(p)
                    state['exp_avg_sq'] = torch.zeros_like(p)
                exp_avg, exp_avg_sq = state['exp_avg'], state['exp_avg_sq']
                state['step'] += 1
                bias_correction1 = 1 - beta1 ** state['step']
                bias_correction2 = 1 - beta2 ** state['step']
                exp_avg.lerp_(grad, 1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                denom = (exp_avg_sq.sqrt() / math.sqrt(bias_correction2)).add_(group['eps'])
                p.addcdiv_(exp_avg, denom, value=-group['lr'] / bias_correction1)
'''

CLOSURE = IMPORTS + '''
class ClosureMomentum(Optimizer):
    def __init__(self, params, lr=0.1, momentum=0.5):
        super().__init__(params, dict(lr=lr, momentum=momentum))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group['params']:
                if p.grad is None:
                    continue
                state = self.state[p]
                if 'buf' not in state:
                    state['buf'] = p.grad.clone()
                else:
                    state['buf'].mul_(group['momentum']).add_(p.grad)
                p.add_(state['buf'], alpha=-group['lr'])
        return loss
'''

DECAY = IMPORTS + '''
class DecaySGD(Optimizer):
    def __init__(self, params, lr=0.1, momentum=0.9, weight_decay=0.0):
        super().__init__(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group['params']:
                if p.grad is None:
                    continue
                d_p = p.grad
                if group['weight_decay'] != 0:
                    d_p = d_p.add(p, alpha=group['weight_decay'])
                state = self.state[p]
                buf = state.get('momentum_buffer')
                if buf is None:
                    buf = state['momentum_buffer'] = torch.clone(d_p).detach()
                else:
                    buf.mul_(group['momentum']).add_(d_p)
                p.add_(buf, alpha=-group['lr'])
'''

# lion-pytorch's shape: the update is a module-level function changing its arguments in place
UPDATE_FN = IMPORTS + '''
def update_fn(p, grad, exp_avg, lr, wd, beta1, beta2):
    p.data.mul_(1. - lr * wd)
    update = exp_avg.clone().mul_(beta1).add(grad, alpha=1. - beta1).sign_()
    p.add_(update, alpha=-lr)
    exp_avg.mul_(beta2).add_(grad, alpha=1. - beta2)


class FnLion(Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, weight_decay=weight_decay))
        self.update_fn = update_fn

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in filter(lambda p: p.grad is not None, group['params']):
                grad, lr, wd, beta1, beta2, state = p.grad, group['lr'], group['weight_decay'], *group['betas'], \\
                    self.state[p]
                if len(state) == 0:
                    state['exp_avg'] = torch.zeros_like(p)
                self.update_fn(p, grad, state['exp_avg'], lr, wd, beta1, beta2)
'''

# lion-pytorch's foreach Lion: the updates as torch._foreach_OP_ calls on lists of the parameters and their state
# tensors, each changed in place (templates/compat_parts/foreach_lists.py)
FOREACH = IMPORTS + '''
class ForeachLion(Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            lr, wd, beta1, beta2 = group['lr'], group['weight_decay'], *group['betas']
            params, grads, exp_avgs = [], [], []
            for p in filter(lambda p: p.grad is not None, group['params']):
                state = self.state[p]
                if len(state) == 0:
                    state['exp_avg'] = torch.zeros_like(p)
                params.append(p)
                grads.append(p.grad)
                exp_avgs.append(state['exp_avg'])
            if wd > 0.:
                torch._foreach_mul_(params, 1. - lr * wd)
            updates = [t.clone() for t in exp_avgs]
            torch._foreach_lerp_(updates, grads, 1. - beta1)
            torch._foreach_sign_(updates)
            torch._foreach_add_(params, updates, alpha=-lr)
            torch._foreach_lerp_(exp_avgs, grads, 1. - beta2)
'''

# an optimizer wrapper that is no Optimizer subclass (attention-is-all-you-need's ScheduledOptim): it sets
# param_groups' lr before each step of the Adam it holds (this converted before: coverage of the pattern)
SCHEDULED = '''
class ScheduledOptim():
    def __init__(self, optimizer, lr_mul, d_model, n_warmup_steps):
        self._optimizer = optimizer
        self.lr_mul = lr_mul
        self.d_model = d_model
        self.n_warmup_steps = n_warmup_steps
        self.n_steps = 0

    def step_and_update_lr(self):
        self._update_learning_rate()
        self._optimizer.step()

    def zero_grad(self):
        self._optimizer.zero_grad()

    def _get_lr_scale(self):
        d_model = self.d_model
        n_steps, n_warmup_steps = self.n_steps, self.n_warmup_steps
        return (d_model ** -0.5) * min(n_steps ** (-0.5), n_steps * n_warmup_steps ** (-1.5))

    def _update_learning_rate(self):
        self.n_steps += 1
        lr = self.lr_mul * self._get_lr_scale()
        for param_group in self._optimizer.param_groups:
            param_group['lr'] = lr
'''

SCHEDULED_TRAIN = '''
opt = ScheduledOptim(torch.optim.Adam(model.parameters(), betas=(0.9, 0.98), eps=1e-09), 2.0, 8, 3)
for step in range(5):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step_and_update_lr()
    losses.append(loss.item())
losses.append(opt._optimizer.param_groups[0]['lr'])
'''


# Lookahead (Zhang et al.): an Optimizer subclass that never calls Optimizer.__init__; it takes its base
# optimizer's param_groups, keeps slow weights in its state (`slow_param.copy_(fast.data)`, `slow += ...`, both in
# place on the state tensor) and every k steps pulls the weights towards them
LOOKAHEAD = '''
from collections import defaultdict


class Lookahead(Optimizer):
    def __init__(self, optimizer, k=3, alpha=0.5):
        self.optimizer = optimizer
        self.k = k
        self.alpha = alpha
        self.param_groups = self.optimizer.param_groups
        self.state = defaultdict(dict)
        self.fast_state = self.optimizer.state
        for group in self.param_groups:
            group["counter"] = 0

    def update(self, group):
        for fast in group["params"]:
            param_state = self.state[fast]
            if "slow_param" not in param_state:
                param_state["slow_param"] = torch.zeros_like(fast.data)
                param_state["slow_param"].copy_(fast.data)
            slow = param_state["slow_param"]
            slow += (fast.data - slow) * self.alpha
            fast.data.copy_(slow)

    def step(self, closure=None):
        loss = self.optimizer.step(closure)
        for group in self.param_groups:
            if group["counter"] == 0:
                self.update(group)
            group["counter"] += 1
            if group["counter"] >= self.k:
                group["counter"] = 0
        return loss

    def zero_grad(self):
        self.optimizer.zero_grad()
'''


PROGRAMS = {
    "lion": LION + HEAD + "opt = Lion(model.parameters(), lr=1e-2, weight_decay=0.1)\n" + TRAIN,
    "adam_bias_correction": ADAM + HEAD + "opt = MyAdam(model.parameters(), lr=0.02)\n" + TRAIN,
    "closure": CLOSURE + HEAD + '''
opt = ClosureMomentum(model.parameters(), lr=0.1)
for step in range(5):
    def closure():
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        return loss
    loss = opt.step(closure)
    losses.append(loss.item())
''',
    # a subclass whose step() hands its closure to the base's step() (both wrapped by HandWrittenOptimizer)
    "subclass_super_step": CLOSURE + '''
class Counted(ClosureMomentum):
    def step(self, closure=None):
        self.steps = getattr(self, 'steps', 0) + 1
        return super().step(closure)
''' + HEAD + '''
opt = Counted(model.parameters(), lr=0.1)
for step in range(5):
    def closure():
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        return loss
    loss = opt.step(closure)
    losses.append(loss.item())
losses.append(opt.steps)
''',
    # two param groups (weight decay in one, its own lr in the other), the lr halved by StepLR every 2 steps
    "two_groups_decay_steplr": DECAY + HEAD + '''
opt = DecaySGD([{'params': model[0].parameters(), 'weight_decay': 0.1},
                {'params': model[2].parameters(), 'lr': 0.05}], lr=0.1)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
for step in range(5):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    sched.step()
    losses.append(loss.item())
losses.append(opt.param_groups[0]['lr'])
losses.append(opt.param_groups[1]['lr'])
''',
    "foreach_lion": FOREACH + HEAD + "opt = ForeachLion(model.parameters(), lr=1e-2, weight_decay=0.1)\n" + TRAIN,
    "lookahead_sgd": IMPORTS + LOOKAHEAD + HEAD + """
opt = Lookahead(torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5), k=3, alpha=0.5)
""" + TRAIN + TRAIN,
    "update_function": UPDATE_FN + HEAD + "opt = FnLion(model.parameters(), lr=1e-2, weight_decay=0.1)\n" + TRAIN,
    # the optimizer's state_dict (its moments and step counts) loaded into a fresh optimizer that trains on
    "state_dict_resumed": ADAM + HEAD + '''
opt = MyAdam(model.parameters(), lr=0.02)
''' + TRAIN + '''
saved = opt.state_dict()
opt = MyAdam(model.parameters(), lr=0.5)
opt.load_state_dict(saved)
losses.append(saved['state'][0]['step'])
losses.append(opt.param_groups[0]['lr'])
''' + TRAIN,
}


@pytest.mark.parametrize("graph", [False, True], ids=["pynative", "graph"])
@pytest.mark.parametrize("shape", sorted(PROGRAMS))
def test_hand_written_optimizer_trains_as_in_torch(shape, graph):
    code, sites = program_weights_match_torch(PROGRAMS[shape] + TAIL + STATE_TAIL, graph, what=f"{shape}: ")
    assert "HandWrittenOptimizer" in code, code
    assert "Unconverted" not in code, code


@pytest.mark.parametrize("graph", [False, True], ids=["pynative", "graph"])
def test_optimizer_wrapper_trains_as_in_torch(graph):
    """ScheduledOptim: not an Optimizer subclass, it holds torch's Adam as self._optimizer, sets each param
    group's lr and steps it; zero_grad() delegates. Losses, weights and the last lr as torch's."""
    code, sites = program_weights_match_torch(IMPORTS + SCHEDULED + HEAD + SCHEDULED_TRAIN + TAIL, graph,
                                              what="ScheduledOptim: ")
    assert "Unconverted" not in code, code


def test_state_dict_has_torch_layout():
    """state_dict(): {'state': {index: {name: tensor or number}}, 'param_groups': [{hyper-parameters, 'params':
    [indices]}]}, as torch's, so a checkpoint holds the same entries."""
    src = ADAM + HEAD + "opt = MyAdam(model.parameters(), lr=0.02)\n" + TRAIN + '''
sd = opt.state_dict()
layout = sorted((k, sorted(v)) for k, v in sd['state'].items()), [sorted(g) for g in sd['param_groups']], \\
    [g['params'] for g in sd['param_groups']], [sd['state'][k]['step'] for k in sd['state']]
weights = [sd['state'][k][name] for k in sorted(sd['state']) for name in ('exp_avg', 'exp_avg_sq')]
'''
    mod, _, _ = load_converted(src)
    from .parity.harness import load_torch
    ref = load_torch(src)
    assert mod.layout == ref["layout"]
    import numpy as np
    for got, want in zip(mod.weights, ref["weights"]):
        np.testing.assert_allclose(got.asnumpy(), want.numpy(), rtol=1e-5, atol=1e-6)


_HELD = {}


def _apply_held_optimizer(grads):
    return _HELD["opt"](grads)


def test_compiled_call_refuses_naming_the_optimizer():
    """The optimizer called inside a graph compile_step did not prepare (a step of the program's own under
    ms.jit): compiling stops with MigrationError naming the class, never a graph that skips the update."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
    mod, _, _ = load_converted(LION + HEAD + "opt = Lion(model.parameters(), lr=1e-2)\n")
    grads = tuple(ms.ops.ones_like(p) for p in mod.opt.parameters)
    before = [p.asnumpy().copy() for p in mod.opt.parameters]
    _HELD["opt"] = mod.opt
    try:
        with pytest.raises(Exception) as err:
            ms.jit(_apply_held_optimizer)(grads)
    finally:
        _HELD.clear()
    assert type(err.value).__name__ == "MigrationError", err.value
    assert "Lion is an optimizer written in the program" in str(err.value), err.value
    for p, b in zip(mod.opt.parameters, before):
        assert (p.asnumpy() == b).all()


def test_sparse_check_reads_false():
    """AdaBelief's, RAdam's, Ranger's `grad = p.grad.data; if grad.is_sparse: raise RuntimeError(...)`: MindSpore's
    gradients are dense Tensors (no is_sparse: an AttributeError at the first step); read as False, the step runs
    (losses and weights as torch's)."""
    src = IMPORTS + '''
class Belief(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-16, weight_decay=0.0):
        super(Belief, self).__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    def step(self, closure=None):
        for group in self.param_groups:
            for p in group['params']:
                if p.grad is None:
                    continue
                grad = p.grad.data
                if grad.is_sparse:
                    raise RuntimeError('sparse gradients are not supported')
                state = self.state[p]
                beta1, beta2 = group['betas']
                if len(state) == 0:
                    state['step'] = 0
                    state['exp_avg'] = torch.zeros_like(p.data, memory_format=torch.preserve_format)
                    state['exp_avg_var'] = torch.zeros_like(p.data, memory_format=torch.preserve_format)
                exp_avg, exp_avg_var = state['exp_avg'], state['exp_avg_var']
                state['step'] += 1
                if group['weight_decay'] != 0:
                    grad = grad.add(p.data, alpha=group['weight_decay'])
                exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
                grad_residual = grad - exp_avg
                exp_avg_var.mul_(beta2).addcmul_(grad_residual, grad_residual, value=1 - beta2)
                denom = (exp_avg_var.sqrt() / math.sqrt(1 - beta2 ** state['step'])).add_(group['eps'])
                p.data.addcdiv_(exp_avg, denom, value=-group['lr'] / (1 - beta1 ** state['step']))
''' + HEAD + '''
opt = Belief(model.parameters(), lr=0.01, weight_decay=0.01)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=5)
for step in range(5):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    sched.step()
    losses.append(loss.item())
''' + TAIL
    code, sites = program_weights_match_torch(src, graph=False, what="is_sparse: ")
    assert "is_on_device(grad, 'sparse', 'is_sparse')" in code, code
