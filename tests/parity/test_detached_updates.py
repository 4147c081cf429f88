"""In-place updates through `x.detach()` (which shares x's storage in torch): `p.detach().zero_()` (zero_module
in diffusion models), `targ.detach().mul_(rate).add_(src, alpha=1 - rate)` (an EMA of the weights), and the same
chains on `.data`. detached_updates.py rewrites them as updates through `.data` before conversion; each case
runs on torch Parameters and on MindSpore Parameters holding the same values, and the parameters are compared
after the update. A chain whose later arguments read the changed tensor stays refused (a TODO that raises)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.parity.harness import load_converted, load_torch

SRC = '''
import torch
from torch import nn


def zero_all(params):
    for p in params:
        p.detach().zero_()


def scale_all(params, s):
    for p in params:
        p.detach().mul_(s)


def update_ema(target_params, source_params, rate=0.99):
    for targ, src in zip(target_params, source_params):
        targ.detach().mul_(rate).add_(src, alpha=1 - rate)


def ema_data(target_params, source_params, m):
    with torch.no_grad():
        for a, b in zip(target_params, source_params):
            a.data.mul_(m).add_((1 - m) * b.detach().data)


def clamp_shift(params):
    for p in params:
        p.detach().clamp_(-0.5, 0.5).sub_(0.25)


def reads_itself(params):
    for p in params:
        p.detach().mul_(2).add_(p)
'''

RNG = np.random.default_rng(7)
A = [RNG.standard_normal(s).astype(np.float32) for s in ((3, 4), (4,))]
B = [RNG.standard_normal(s).astype(np.float32) for s in ((3, 4), (4,))]


def _run(fn_name, *extra):
    import mindspore as ms
    import torch
    ns = load_torch(SRC)
    mod, code, _ = load_converted(SRC)
    t_a = [torch.nn.Parameter(torch.from_numpy(a.copy())) for a in A]
    t_b = [torch.nn.Parameter(torch.from_numpy(b.copy())) for b in B]
    m_a = [ms.Parameter(ms.Tensor(a.copy()), name=f"a{i}") for i, a in enumerate(A)]
    m_b = [ms.Parameter(ms.Tensor(b.copy()), name=f"b{i}") for i, b in enumerate(B)]
    n_lists = 2 if fn_name in ("update_ema", "ema_data") else 1
    ns[fn_name](*([t_a, t_b][:n_lists] + list(extra)))
    getattr(mod, fn_name)(*([m_a, m_b][:n_lists] + list(extra)))
    for t, m, a in zip(t_a, m_a, A):
        assert not np.allclose(t.detach().numpy(), a) or fn_name == "none", "torch changed nothing"
        np.testing.assert_allclose(m.asnumpy(), t.detach().numpy(), rtol=1e-6, atol=1e-6, err_msg=fn_name)
    return code


@pytest.mark.parametrize("fn_name, extra", [("zero_all", ()), ("scale_all", (2.5,)), ("update_ema", (0.9,)),
                                            ("ema_data", (0.75,)), ("clamp_shift", ())])
def test_detached_updates_change_the_parameters(fn_name, extra):
    code = _run(fn_name, *extra)
    todo_lines = [i for i, line in enumerate(code.splitlines()) if "msmigrate: TODO" in line]
    refused = code.splitlines().index("def reads_itself(params):")
    assert todo_lines and all(i > refused for i in todo_lines), code   # only reads_itself stays a TODO


def test_chain_reading_its_target_stays_refused():
    import mindspore as ms
    mod, code, _ = load_converted(SRC)
    helper = __import__("_ms_compat")
    with pytest.raises(helper.MigrationError, match=r"__main__:\d+"):
        mod.reads_itself([ms.Parameter(ms.Tensor(A[0].copy()), name="r")])
