"""torch's ModuleList keeps None entries (a norm configured off, as x-transformers' layers hold
[pre_norm, post_branch_norm, post_main_norm]); the converted list keeps them too."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .harness import check_function, check_layer, no_todo, rnd  # noqa: E402

SRC = '''
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, pre_norm, post_norm):
        super().__init__()
        pre = nn.LayerNorm(4) if pre_norm else None
        post = nn.LayerNorm(4) if post_norm else None
        self.norms = nn.ModuleList([pre, post, None])
        self.layers = nn.ModuleList([nn.Linear(4, 4)])

    def forward(self, x):
        pre, post, extra = self.norms
        if pre is not None:
            x = pre(x)
        x = self.layers[0](x)
        if post is not None:
            x = post(x)
        return x * len(self.norms) + (extra is None)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block(True, False), Block(False, True)])

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x


def make():
    return Net()
'''


def test_module_list_keeps_none_entries():
    """None entries keep their index, unpack and count as in torch; the weights load by torch's names."""
    code, sites = check_layer(SRC, [rnd(2, 4)], graph=False, grad=True)
    no_todo(sites)
    assert "_ms_compat.ModuleList([pre, post, None])" in code and "nn.CellList([nn.Dense(4, 4)])" in code


PARAM_SRC = '''
import torch
from torch import tensor


def max_neg_value(tensor):
    return -torch.finfo(tensor.dtype).max


def fn(x):
    return tensor([1.0, 2.0, 3.0]) + x * (max_neg_value(x) / 1e38)
'''


def test_parameter_named_like_a_torch_import():
    """`def max_neg_value(tensor)` next to `from torch import tensor`: inside, `tensor` is the argument."""
    code, sites = check_function(PARAM_SRC, [rnd(3)], graph=False)
    no_todo(sites)
    assert "finfo(tensor.dtype)" in code


EINSUM_SRC = '''
import torch
from torch import einsum


def fn(q, k, v):
    kv_eq = 'b j d' if k.ndim == 3 else 'b h j d'
    sim = einsum(f'b h i d, {kv_eq} -> b h i j', q, k)
    out = einsum(f'b h i j, {kv_eq} -> b h i d', sim.softmax(dim=-1), v)
    lead = '...'
    return out, torch.einsum(f'{lead}ij,{lead}jk', q[:, 0], k.transpose(-1, -2))
'''


def test_einsum_equation_built_at_run_time():
    """x-transformers' einsum(f'b h i d, {kv_einsum_eq} -> b h i j', q, k): the equation is read when it
    runs (spaces, '...' and the implicit output as torch reads them), while compiling in GRAPH mode
    (ops.constexpr: string methods and its MigrationError do not compile); values and gradients."""
    code, sites = check_function(EINSUM_SRC, [rnd(2, 2, 3, 4), rnd(2, 5, 4, seed=1), rnd(2, 5, 4, seed=2)],
                                 grad=True, graph=True, rtol=1e-4, atol=1e-5)
    no_todo(sites)
    assert "_ms_compat.torch_einsum(f'b h i d, {kv_eq} -> b h i j', q, k)" in code


PARTIAL_SRC = '''
import torch
import torch.nn.functional as F
from functools import partial


def fn(x):
    softmax_fn = partial(F.softmax, dim=-1)
    attn = partial(softmax_fn, dtype=torch.float32)
    return attn(x), partial(F.log_softmax, dim=0)(x), partial(F.gelu, approximate="tanh")(x)
'''


def test_partial_of_a_function_converted_by_a_rule():
    """partial(F.softmax, dim=-1) (x-transformers' attention function): the keywords are translated as in
    a call (dim -> axis), also where the rule writes them positionally (log_softmax)."""
    code, sites = check_function(PARTIAL_SRC, [rnd(2, 3)], graph=False)
    no_todo(sites)
    assert "partial(_ms_compat.softmax, axis=-1)" in code and "partial(_ms_compat.log_softmax, axis=0)" in code


STORE_SRC = '''
import torch
import torch.nn as nn


class Intermediates:
    values = None


class Attend(nn.Module):
    def forward(self, q):
        return q * 2, Intermediates()


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.attend = Attend()

    def forward(self, q):
        out, intermediates = self.attend(q)
        intermediates.values = out + 1
        return out


def make():
    return Attention()
'''


def test_store_of_a_method_name_on_a_value_taken_for_a_tensor():
    """x-transformers' `intermediates.values = orig_values` (a dataclass the converter may take for a tensor):
    storing under a torch.Tensor method's name only sets a Python attribute, in both frameworks."""
    import torch
    from msmigrate.torch_tensor_names import TENSOR_ATTRIBUTES
    from msmigrate.unmapped_tensor_api import TENSOR_DATA_ATTRIBUTES

    assert TENSOR_DATA_ATTRIBUTES - {"names"} == {n for n in TENSOR_ATTRIBUTES
                                                 if not callable(getattr(torch.Tensor, n, None))}
    code, sites = check_layer(STORE_SRC, [rnd(3)], graph=False)
    no_todo(sites)
