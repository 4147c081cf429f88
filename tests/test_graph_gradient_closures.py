"""graph_gradient_closures.py: a function higher_order_grad.py writes for torch.autograd.grad(create_graph=True)
inside a function takes the enclosing function's values it reads as arguments (MindSpore 2.10 mis-compiles two such
closures in one function: tests/parity/test_autograd.py::test_two_gradients_of_a_helper_through_losses_without_
second_derivative_kernels runs them). These check which names are passed, on the converted text alone."""
from __future__ import annotations

import re

from msmigrate.converter import convert_code

# a trainer's method: `self` and an options object read only through attributes stay closure cells (a plain
# object passed to a compiled function is refused); the tensors and a layer called in it are passed
PENALTY_METHOD = '''import torch
import torch.autograd as autograd
import torch.nn as nn


class Trainer:
    def __init__(self, net, opts):
        self.net, self.opts = net, opts
        self.head = nn.Linear(3, 1)

    def penalty(self, feats, y):
        head = self.head
        shift = lambda t: t - 1
        scale = torch.tensor(1.).requires_grad_()
        out = head(feats * scale * self.opts.gain) + shift(y)
        loss = (out ** 2).mean()
        g = autograd.grad(loss, [scale], create_graph=True)[0]
        return g ** 2
'''


def _signature_and_call(code: str, fn: str):
    sig = re.search(rf"def {fn}\(([^)]*)\):", code)
    call = re.search(rf"\.(?:grad|value_and_grad)\({fn}, grad_position=0\)\(([^\n]*)\)\n", code)
    assert sig and call, code
    return sig.group(1), call.group(1)


def test_values_passed_objects_and_lambdas_kept():
    code, _, _ = convert_code(PENALTY_METHOD)
    params, args = _signature_and_call(code, "_loss_of_scale")
    # head: a local bound to a layer, called; feats and y: the method's arguments; self (only its attributes read)
    # and shift (a lambda) are read from the method as before
    assert params == "scale, head, feats, y", code
    assert args == "ms.mutable(scale), head, feats, y", code


# a function's parameter read by the gradient's function, beside the module's imports
PENALTY_FUNCTION = '''import torch
import torch.autograd as autograd


def penalty(feats):
    scale = torch.tensor(1.).requires_grad_()
    loss = (feats * scale).pow(2).sum()
    g = autograd.grad(loss, [scale], create_graph=True)[0]
    return g
'''


def test_module_level_names_are_not_passed():
    """feats is the function's parameter: passed; the module's imports and globals are not."""
    code, _, _ = convert_code(PENALTY_FUNCTION)
    params, args = _signature_and_call(code, "_loss_of_scale")
    assert params == "scale, feats", code
    assert args == "ms.mutable(scale), feats", code
