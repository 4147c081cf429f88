"""Minimal reproductions of what bench/_rw_heldout65.py's programs (facebookresearch/ijepa, state-spaces/s4,
gordicaleksa/pytorch-GAT) met, each run under torch and converted.

- An update under an `if` at the top of a function that is no loop's, reading the loss computed before the `if`
  (pytorch-GAT's training_script_cora.main_loop, called once per phase: `loss = crit(gat(data)[0]...)` then
  `if phase == LoopPhase.TRAIN: optimizer.zero_grad(); loss.backward(); optimizer.step()`): a TODO raising
  MigrationError (a step of the `if` alone would take the loss as a constant). As in a loop body
  (step_choice.guarded_update), the statements before the `if` are now copied into both branches when its test is
  fixed, the first branch a step of its own; a docstring and `global` declarations (main_loop's `global
  BEST_VAL_PERF, ...`) stay above the split.
- An Enum member passed to a compiled step (the same main_loop's `phase`, an input of its step): in GRAPH mode
  MindSpore cannot type it ("The python type <enum 'LoopPhase'> cannot be converted to MindSpore type", naming no
  line, raised where the gradient's zeros_like meets it). Such a step runs op by op, as a step calling a host helper
  does (compat_parts/train.py's StepCell).
- An in-place method on a parameter the function uses for nothing else (I-JEPA's ViT init, `def rescale(param,
  layer_id): param.div_(math.sqrt(2.0 * layer_id))` called with `layer.attn.proj.weight.data`): a TODO raising
  MigrationError. The new value is now written into the caller's tensor (_ms_compat.write_argument), which raises
  MigrationError naming the line where a graph compiles or a recorded gradient goes through the write.
- An augmented assignment to a parameter the function uses for nothing else (I-JEPA's MaskCollator:
  `def constrain_mask(mask, tries=0): for k in range(N): mask *= acceptable_regions[k]`): MindSpore's `*=` makes a
  new tensor, so the caller's mask stayed whole: every encoder mask kept the full block where torch's leaves out
  the predicted blocks (silently: 49 patches against torch's 16 to 22, the losses still within 1e-4). Only a
  parameter annotated `Tensor` was written into the caller's tensor (augmented_argument); one whose every use is
  such an assignment now is too (inplace_arguments.augmented_only).
- A composed record bound to a name (s4's `_c2r = torch.view_as_real`, `_r2c = torch.view_as_complex`): the name of
  its template's first call was the value (`ops.stack`, `ops.Complex`), marked a difference in the report but
  computing something else (SSMKernelDiag's C came out (1, 1, 16, 32) where torch's is (1, 16, 32, 2)). It is now
  the template as a lambda of torch's positional parameters (mappings/compose.py's value_form), or a TODO.
  `contract = torch.einsum` (the same module) was a TODO raising where the name was bound: it is now
  _ms_compat.torch_einsum, whose pairwise matmuls take complex operands on their real and imaginary parts
  (compat_parts/einops.py's _einsum_matmul: MindSpore 2.10 cannot differentiate a complex product).
- torch.diag_embed of a complex tensor (s4's nplr: `V @ torch.diag_embed(W) @ V.conj().transpose(-1, -2)`):
  MindSpore's kernel refuses complex input (TypeError naming no line); _ms_compat.diag_embed builds it on the parts.
- A `@torch.no_grad()` method changing its module's state, called by the first forward inside the train step (s4's
  SSMKernelDPLR._setup_C: `self.C.copy_(...)`, `self.l_kernel = ...`): the decorator was dropped (its results made
  constants) and the writes ran while the step's gradient was recorded: RuntimeError "A leaf tensor that requires
  grad is being used in an inplace operator" (naming no line). Such a function is now decorated
  `_ms_compat.unrecorded_state`, which runs it under mindspore._no_grad (no_grad_values.changes_self_state).
- torch.einsum in a module making complex values (S4D's kernel: `torch.einsum('hn, hnl -> hl', C, torch.exp(K))`
  of complex tensors): the expanded broadcast product was a plain `*`, which MindSpore 2.10 cannot differentiate
  for complex operands ("For 'Mul', gradient not support for complex type currently", naming no line). In such a
  module the product goes through _ms_compat.times, as the module's own `*` does (complex_operators.py). A Python
  complex times a real tensor (`1j * self.A_imag`) was a complex Mul too: times/over now take it on the parts; and
  in code a Cell's construct runs the literal itself is _ms_compat.imaginary_tensor(1.0), since MindSpore's graph
  parser refuses a complex constant ("Unsupported Constant type : 1j", naming no line)."""
import numpy as np
import pytest

from tests.parity.harness import program_weights_match_torch
from tests.parity.test_torch_runtime import _both
from tests.test_taped_backward import _FILL     # the same starting weights on both sides

# pytorch-GAT's training_script_cora: a main loop made by a function, called for each phase
PHASE_LOOP = _FILL + '''
import enum

import torch.nn as nn


class LoopPhase(enum.Enum):
    TRAIN = 0,
    VAL = 1,


BEST_VAL_LOSS = 10.0


def get_main_loop(net, crit, optimizer, x, y, train_idx, val_idx):
    def main_loop(phase, epoch=0):
        """One phase's pass."""
        global BEST_VAL_LOSS
        if phase == LoopPhase.TRAIN:
            net.train()
        else:
            net.eval()
        idx = train_idx if phase == LoopPhase.TRAIN else val_idx
        scores = net(x).index_select(0, idx)
        loss = crit(scores, y.index_select(0, idx))
        if phase == LoopPhase.TRAIN:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        accuracy = torch.sum(torch.eq(torch.argmax(scores, dim=-1), y.index_select(0, idx)).long()).item() / len(idx)
        if phase == LoopPhase.VAL and loss.item() < BEST_VAL_LOSS:
            BEST_VAL_LOSS = loss.item()
        return loss.detach(), accuracy
    return main_loop


net = nn.Sequential(nn.Linear(4, 6), nn.ELU(), nn.Linear(6, 3))
fill(net, 2)
x = torch.linspace(-1, 1, 24).reshape(6, 4)
y = torch.tensor([0, 1, 2, 1, 0, 2])
optimizer = torch.optim.Adam(net.parameters(), lr=0.05, weight_decay=5e-4)
main_loop = get_main_loop(net, nn.CrossEntropyLoss(), optimizer, x, y, torch.arange(0, 4), torch.arange(4, 6))
seen = []
for epoch in range(3):
    loss, acc = main_loop(phase=LoopPhase.TRAIN, epoch=epoch)
    seen.append(loss)
    with torch.no_grad():
        loss, acc = main_loop(phase=LoopPhase.VAL, epoch=epoch)
    seen.append(loss)
weights = [p.detach().reshape(-1) for p in net.parameters()] + seen + [torch.tensor([BEST_VAL_LOSS])]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_update_under_an_if_of_a_phase_function_reading_the_loss_before_it(graph):
    """Before: the backward() was a TODO raising MigrationError at the `loss.backward()` line; the GRAPH run of the
    split step then met the Enum argument (NotImplementedError naming no line). Now the weights, the losses of
    both phases and the global the VAL phase sets are torch's."""
    code, _ = program_weights_match_torch(PHASE_LOOP, graph=graph)
    assert "global BEST_VAL_LOSS" in code and "Unconverted" not in code, code


# I-JEPA's VisionTransformer.fix_init_weight: a nested helper dividing the tensor it is given, in place
RESCALED_INIT = _FILL + '''
import math

import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
        fill(self, 4)
        self.fix_init_weight()

    def fix_init_weight(self):
        def rescale(param, layer_id):
            param.div_(math.sqrt(2.0 * layer_id))

        for layer_id, layer in enumerate(self.blocks):
            rescale(layer.weight.data, layer_id + 1)

    def forward(self, x):
        for b in self.blocks:
            x = torch.tanh(b(x))
        return x


net = Net()
initial = [p.detach().clone().reshape(-1) for p in net.parameters()]
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.linspace(-1, 1, 8).reshape(2, 4)
seen = []
for _ in range(2):
    loss = net(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    seen.append(loss.detach())
weights = initial + [p.detach().reshape(-1) for p in net.parameters()] + seen
'''


@pytest.mark.parametrize("graph", [False, True])
def test_in_place_rescale_of_a_weight_passed_to_a_helper(graph):
    """Before: `param.div_(...)` raised MigrationError (a TODO: the parameter is used for nothing else, so its
    rebinding would leave the caller's weight unchanged). Now the weight the helper is given is divided as in torch:
    the initial weights, the trained ones and the losses are torch's."""
    code, _ = program_weights_match_torch(RESCALED_INIT, graph=graph)
    assert "write_argument" in code, code


# S4D's kernel (models/s4/s4d.py's S4DKernel.forward): complex parameters and an einsum of complex tensors
COMPLEX_EINSUM = _FILL + '''
import math

import torch.nn as nn


class Kernel(nn.Module):
    def __init__(self, H=3, N=4):
        super().__init__()
        self.C = nn.Parameter(torch.zeros(H, N // 2, 2))
        self.log_dt = nn.Parameter(torch.zeros(H))
        self.log_A_real = nn.Parameter(torch.zeros(H, N // 2))
        self.A_imag = nn.Parameter(torch.zeros(H, N // 2))

    def forward(self, L):
        dt = torch.exp(self.log_dt)
        C = torch.view_as_complex(self.C)
        A = -torch.exp(self.log_A_real) + 1j * self.A_imag
        dtA = A * dt.unsqueeze(-1)
        K = dtA.unsqueeze(-1) * torch.arange(L, device=A.device)
        C = C * (torch.exp(dtA) - 1.) / A
        K = 2 * torch.einsum('hn, hnl -> hl', C, torch.exp(K)).real
        return K


kernel = Kernel()
fill(kernel, 5)
opt = torch.optim.SGD(kernel.parameters(), lr=0.05)
seen = []
for _ in range(2):
    loss = kernel(6).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    seen.append(loss.detach())
weights = [p.detach().reshape(-1) for p in kernel.parameters()] + seen
'''


@pytest.mark.parametrize("graph", [False, True])
def test_einsum_of_complex_tensors_is_differentiated(graph):
    """Before: the einsum's broadcast product was a plain `*` of complex tensors, whose gradient MindSpore 2.10 does
    not have (TypeError naming no line when the step ran). Now it goes through _ms_compat.times: the weights and
    losses are torch's."""
    code, _ = program_weights_match_torch(COMPLEX_EINSUM, graph=graph)
    assert "_ms_compat.times(ops.expand_dims(C, 1)" in code, code


# I-JEPA's MaskCollator._sample_block_mask: a nested helper narrowing the mask it is given
CONSTRAINED_MASK = '''
import torch


def fn(regions):
    def constrain_mask(mask, tries=0):
        N = max(int(len(regions) - tries), 0)
        for k in range(N):
            mask *= regions[k]

    mask = torch.zeros((4, 4), dtype=torch.int32)
    mask[1:4, 0:3] = 1
    constrain_mask(mask)
    kept = torch.nonzero(mask.flatten())
    total = torch.zeros(2)
    bump(total, 3.0)
    return kept.squeeze(), mask, total


def bump(total, k):
    total += k
'''


def test_augmented_assignment_to_a_parameter_used_for_nothing_else():
    """Before: the caller's mask stayed as it was (silently): 9 patches kept where torch keeps 5. Now it is
    narrowed as in torch, and `total += k` of a helper reaches the caller's tensor."""
    regions = np.ones((2, 4, 4), np.int32)
    regions[0, 1, :] = 0
    regions[1, :, 2] = 0
    t_out, m_out, code, _ = _both(CONSTRAINED_MASK, regions)
    assert "augmented_argument" in code, code
    for t, m in zip(t_out, m_out):
        np.testing.assert_array_equal(m.asnumpy(), t.numpy())
    assert len(t_out[0]) == 4


# s4's models/s4/s4.py: torch's complex views bound to names at module level, called elsewhere
COMPLEX_VIEWS_AS_VALUES = '''
import torch

_c2r = torch.view_as_real
_r2c = torch.view_as_complex


def fn(x):
    z = _r2c(x)
    w = _c2r(z * z)
    return w, z.imag
'''


def test_composed_functions_bound_to_names():
    """Before: `_c2r = torch.view_as_real` became `_c2r = ops.stack` and `_r2c = torch.view_as_complex`
    `ops.Complex` (the first call of their conversions' templates), silently something else (s4's SSMKernelDiag
    got a C of shape (1, 1, 16, 32) where torch's is (1, 16, 32, 2)). A composed record used as a value is its
    template as a lambda of torch's positional parameters (or a TODO)."""
    x = np.linspace(-1, 1, 12).astype(np.float32).reshape(3, 2, 2)
    t_out, m_out, code, _ = _both(COMPLEX_VIEWS_AS_VALUES, x)
    assert "_c2r = (lambda _ms_input:" in code, code
    for t, m in zip(t_out, m_out):
        np.testing.assert_allclose(m.asnumpy(), t.numpy(), rtol=1e-6)


# s4's SSMKernelDiag (models/s4/s4.py): `contract = torch.einsum` at module level, log_vandermonde_naive's
# `contract('... n, ... n l -> ... l', v, vandermonde_matrix)` of complex tensors
EINSUM_BOUND = _FILL + '''
import torch.nn as nn

contract = torch.einsum


class Vandermonde(nn.Module):
    def __init__(self):
        super().__init__()
        self.C = nn.Parameter(torch.zeros(3, 4, 2))
        self.x = nn.Parameter(torch.zeros(3, 4, 2))

    def forward(self, L):
        v = torch.view_as_complex(self.C).unsqueeze(0).expand(2, 3, 4)    # '...' of two dimensions here, one below
        x = torch.view_as_complex(self.x) * 0.3
        vandermonde_matrix = torch.exp(x.unsqueeze(-1) * torch.arange(L).to(x))
        return 2 * contract('... n, ... n l -> ... l', v, vandermonde_matrix).real


net = Vandermonde()
fill(net, 6)
opt = torch.optim.Adam(net.parameters(), lr=0.05)
seen = []
for _ in range(2):
    loss = net(5).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    seen.append(loss.detach())
weights = [p.detach().reshape(-1) for p in net.parameters()] + seen
'''


@pytest.mark.parametrize("graph", [False, True])
def test_einsum_bound_to_a_name_of_complex_tensors(graph):
    """Before: `contract = torch.einsum` was a TODO raising MigrationError where the name was bound (only calls of
    torch.einsum were converted); its helper's products were complex matmuls MindSpore cannot differentiate. It is
    _ms_compat.torch_einsum, whose pairwise matmuls take complex operands on their parts; '...' covering two
    dimensions in one operand and one in the other is broadcast as torch does (einops refused it: ValueError)."""
    code, _ = program_weights_match_torch(EINSUM_BOUND, graph=graph)
    assert "contract = _ms_compat.torch_einsum" in code, code


# s4's nplr (models/s4/s4.py): the DPLR initialization rebuilds a matrix from complex eigenpairs
COMPLEX_DIAG_EMBED = '''
import torch


def fn(re, im):
    W = torch.complex(re, im)
    V = torch.complex(re.unsqueeze(-1) * im, im.unsqueeze(-1) + re)
    AP = V @ torch.diag_embed(W) @ V.conj().transpose(-1, -2)
    return torch.view_as_real(AP), torch.diag_embed(re, offset=1)
'''


def test_diag_embed_of_a_complex_tensor():
    """Before: MindSpore's diag_embed refused the complex input (TypeError naming no line). It is now built on the
    real and imaginary parts (_ms_compat.diag_embed)."""
    re = np.array([0.5, -1.0, 2.0], np.float32)
    im = np.array([1.0, 0.25, -0.5], np.float32)
    t_out, m_out, _, _ = _both(COMPLEX_DIAG_EMBED, re, im)
    for t, m in zip(t_out, m_out):
        np.testing.assert_allclose(m.asnumpy(), t.numpy(), rtol=1e-5, atol=1e-6)


# s4's SSMKernelDPLR._step_state_linear: `contract('r h n, r h m, ... h m -> ... h n', P, Q, state)`, a letter of size
# 1 in one operand against its size in another
EINSUM_SIZE_ONE = '''
import torch

contract = torch.einsum


def fn(p, x, y):
    return contract('r h n, r h m, ... h m -> ... h n', p, x, y)
'''


def test_einsum_broadcasts_a_letter_of_size_one():
    """Before: the helper's plan took each letter's size from one operand and reshaped the other to it (ValueError:
    "proposed_shape ... is invalid", naming no line). Operands are now broadcast to each letter's largest size."""
    rng = np.random.RandomState(0)
    p, x, y = rng.randn(1, 1, 4), rng.randn(1, 3, 4), rng.randn(2, 1, 4)
    t_out, m_out, _, _ = _both(EINSUM_SIZE_ONE, *(a.astype(np.float32) for a in (p, x, y)))
    assert tuple(t_out.shape) == (2, 3, 4)
    np.testing.assert_allclose(m_out.asnumpy(), t_out.numpy(), rtol=1e-5, atol=1e-6)


# s4's SSMKernelDPLR: a kernel that sets itself up on its first forward, in a no_grad method changing its state
STATE_SET_UP_UNDER_NO_GRAD = _FILL + '''
import torch.nn as nn


class Kernel(nn.Module):
    def __init__(self):
        super().__init__()
        self.C = nn.Parameter(torch.zeros(4))
        self.w = nn.Parameter(torch.zeros(4))
        self.register_buffer('l_kernel', torch.tensor(0))

    @torch.no_grad()
    def _setup_C(self, L):
        if self.l_kernel.item() == 0:
            self.C.copy_(self.C * 0.5 + 0.25)
            self.l_kernel = self.l_kernel + L

    def forward(self, x):
        if self.l_kernel.item() == 0:
            self._setup_C(x.shape[-1])
        return torch.tanh(x @ (self.C * self.w))


net = Kernel()
fill(net, 7)
opt = torch.optim.Adam(net.parameters(), lr=0.05)
x = torch.linspace(-1, 1, 8).reshape(2, 4)
seen = []
for _ in range(3):
    loss = net(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    seen.append(loss.detach())
weights = [p.detach().reshape(-1) for p in net.parameters()] + seen + [net.l_kernel.reshape(-1).float()]
'''


@pytest.mark.parametrize("graph", [False, True])
def test_no_grad_method_changing_state_inside_a_step(graph):
    """Before: the decorator was dropped and the method's writes ran while the step's gradient was recorded:
    RuntimeError "A leaf tensor that requires grad is being used in an inplace operator" (naming no line). The method
    now runs with MindSpore's recording off (_ms_compat.unrecorded_state): the weights and losses are torch's."""
    code, _ = program_weights_match_torch(STATE_SET_UP_UNDER_NO_GRAD, graph=graph)
    assert "@_ms_compat.unrecorded_state" in code, code
