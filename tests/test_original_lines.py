"""A TODO and a MigrationError name the original line of the statement left unconverted (the first rule: a
converted program computes what the original computes, or stops naming the original file and line).

msmigrate/lines.py pairs the converted module's statements with the source's. Pre-passes rewrite statements
before the pairing (inplace_chains.py splits `m.mul_(b).add_(g, alpha=a)` into two statements on its line):
before, each split shifted the pairing by one statement and, once it ran past the end of a block, every later
statement took the line of the block's first statement; in an AdaBelief-style optimizer the amsgrad branch's
TODO named the `for p in group['params']` line, not the `torch.max(..., out=...)` statement."""
from __future__ import annotations

import re

from msmigrate.converter import convert_code
from msmigrate.registry import TODO

BELIEF = '''import math
import torch
from torch.optim import Optimizer


class Belief(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-16, amsgrad=False):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, amsgrad=amsgrad))

    def step(self, closure=None):
        for group in self.param_groups:
            for p in group['params']:
                if p.grad is None:
                    continue
                grad = p.grad.data
                state = self.state[p]
                beta1, beta2 = group['betas']
                if len(state) == 0:
                    state['step'] = 0
                    state['exp_avg'] = torch.zeros_like(p.data)
                    state['exp_avg_var'] = torch.zeros_like(p.data)
                    if group['amsgrad']:
                        state['max_exp_avg_var'] = torch.zeros_like(p.data)
                exp_avg, exp_avg_var = state['exp_avg'], state['exp_avg_var']
                state['step'] += 1
                exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
                grad_residual = grad - exp_avg
                exp_avg_var.mul_(beta2).addcmul_(grad_residual, grad_residual, value=1 - beta2)
                if group['amsgrad']:
                    max_exp_avg_var = state['max_exp_avg_var']
                    torch.max(max_exp_avg_var, exp_avg_var.add_(group['eps']), out=max_exp_avg_var)
                    denom = (max_exp_avg_var.sqrt() / math.sqrt(1 - beta2 ** state['step'])).add_(group['eps'])
                else:
                    denom = exp_avg_var.add_(group['eps']).sqrt().add_(group['eps'])
                p.data.addcdiv_(exp_avg, denom, value=-group['lr'] / (1 - beta1 ** state['step']))
'''


def _line_of(src: str, text: str) -> int:
    return next(i for i, line in enumerate(src.splitlines(), 1) if text in line)


def test_todo_in_optimizer_branch_names_its_own_line():
    code, sites, _ = convert_code(BELIEF)
    todos = {(s.api, s.line) for s in sites if s.status == TODO}
    amsgrad = _line_of(BELIEF, "torch.max(max_exp_avg_var")
    # the in-place add inside torch.max's arguments stays a TODO (the other branch's, first in its statement, and
    # torch.max(..., out=) itself are converted: tests/test_heldout38_programs.py)
    assert todos == {("Tensor.add_", amsgrad)}, todos
    # the MigrationError the converted program raises names the same line
    labels = set(re.findall(r"Unconverted\('Tensor\.add_', '[^']*:(\d+)'", code))
    assert labels == {str(amsgrad)}, labels


def test_statements_after_a_split_chain_keep_their_lines():
    """Every converted site after three chains split in one block names its own line."""
    src = '''import torch


def f(m, v, g, b):
    m.mul_(b).add_(g, alpha=1 - b)
    v.mul_(b).addcmul_(g, g, value=1 - b)
    m.mul_(b).add_(g)
    return torch.frobnicate_unknown(m, v)
'''
    code, sites, _ = convert_code(src)
    got = {s.line for s in sites if s.api == "torch.frobnicate_unknown"}
    assert got == {_line_of(src, "frobnicate_unknown")}, [(s.api, s.line) for s in sites]
