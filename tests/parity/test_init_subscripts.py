"""Initialising part of a parameter (issue #12): `nn.init.zeros_(emb.weight[pad])`, `init.normal_(w[0])`,
`w[i].fill_(v)` under torch.no_grad(). MindSpore's `p[i]` is a view whose in-place fill does not reach
`p`, so these convert to an assignment into the subscript (init_subscripts.py). Deterministic fills must
equal torch's; random ones must have changed exactly their rows, with the right shape and bounds."""
from __future__ import annotations

import numpy as np
import pytest

from msmigrate.registry import TODO
from tests.parity.harness import load_converted, load_torch

OLD = 7.0   # every parameter starts as this constant, so untouched entries are known exactly

SRC = '''
import torch
import torch.nn as nn
from torch.nn import init

PAD = 2


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(6, 4)
        self.fc = nn.Linear(3, 8)
        self.w = nn.Parameter(torch.empty(5, 3))
        self.v = nn.Parameter(torch.empty(6, 3))
        self.ps = nn.ParameterList([nn.Parameter(torch.empty(2, 3)) for _ in range(2)])
        for p in (self.emb.weight, self.fc.weight, self.fc.bias, self.w, self.v, self.ps[0], self.ps[1]):
            nn.init.constant_(p, 7.0)
        # deterministic fills of part of a parameter
        nn.init.zeros_(self.emb.weight[PAD])
        init.ones_(tensor=self.emb.weight[0])
        torch.nn.init.constant_(self.fc.bias[:4], 1.5)
        nn.init.constant_(self.w[1:3, 0], val=-2.0)
        # random fills of part of a parameter
        nn.init.normal_(self.w[0], std=0.02)
        init.uniform_(self.emb.weight[4], -0.1, 0.1)
        nn.init.trunc_normal_(self.fc.weight[1:3], std=0.02, a=-0.04, b=0.04)
        nn.init.xavier_uniform_(self.fc.weight[4:8])
        # Tensor in-place fills on part of a parameter
        with torch.no_grad():
            self.v[0].fill_(3.0)
            self.v[1].zero_()
            self.v[2].normal_(0.0, 0.5)
            self.v[3].uniform_(-1.0, 1.0)
            self.emb.weight.data[5].zero_()
            self.w.data[4].fill_(4.0)
        # `.data` needs no no_grad (HF's `module.weight.data[module.padding_idx].zero_()`)
        self.v.data[5].fill_(-1.0)
        self.fc.weight.data[0].zero_()
        # an element of a ParameterList is a whole Parameter: filled as before, not replaced
        nn.init.zeros_(self.ps[1])


def part():
    t = torch.full((4, 3), 7.0)
    nn.init.ones_(t[1])
    init.constant_(t[:, 2], 0.5)
    return t


def unknown(w):
    nn.init.normal_(w[0])   # w may be a list of Parameters: the call form stays, and a tensor's view is refused
    return w


def make():
    return Net()
'''

# parameter -> (index of randomly filled entries, bound on their magnitude)
RANDOM = {
    "w": [((0,), 0.2)],
    "emb": [((4,), 0.1)],
    "fc.weight": [((slice(1, 3),), 0.04), ((slice(4, 8),), np.sqrt(6.0 / (4 + 3)))],
    "v": [((2,), 5.0), ((3,), 1.0)],
}


def test_init_subscripts_write_through():
    tnet = load_torch(SRC)["make"]()
    mod, code, sites = load_converted(SRC)
    todos = [(s.api, s.note) for s in sites if s.status == TODO]
    assert not todos, (todos, code)
    mnet = mod.make()
    torch_values = {"w": tnet.w, "v": tnet.v, "emb": tnet.emb.weight, "fc.weight": tnet.fc.weight,
                    "fc.bias": tnet.fc.bias}
    ms_values = {"w": mnet.w, "v": mnet.v, "emb": mnet.emb.embedding_table, "fc.weight": mnet.fc.weight,
                 "fc.bias": mnet.fc.bias}
    for name, t in torch_values.items():
        t = t.detach().numpy()
        m = ms_values[name].asnumpy()
        assert m.shape == t.shape and m.dtype == t.dtype, (name, m.shape, t.shape, m.dtype, t.dtype)
        fixed = np.ones(t.shape, dtype=bool)
        for index, bound in RANDOM.get(name, []):
            fixed[index] = False
            part = m[index]
            assert np.all(part != OLD), (name, index, part)                  # the fill reached the parameter
            assert np.all(np.abs(part) <= bound), (name, index, part)
            assert part.size == 1 or np.unique(part).size > 1, (name, index, part)   # random, not one value
        # the deterministic fills equal torch's, and every entry not filled keeps its old value
        np.testing.assert_array_equal(m[fixed], t[fixed], err_msg=name)
    assert (ms_values["emb"].asnumpy()[[0, 2, 5]] == [[1], [0], [0]]).all()
    assert (ms_values["v"].asnumpy()[[0, 1, 5]] == [[3], [0], [-1]]).all()
    assert (ms_values["fc.weight"].asnumpy()[0] == 0).all()
    assert isinstance(mnet.ps[1], type(mnet.w)) and (mnet.ps[1].asnumpy() == 0).all()
    np.testing.assert_array_equal(mnet.ps[0].asnumpy(), np.full((2, 3), OLD, np.float32))
    np.testing.assert_array_equal(mod.part().asnumpy(), load_torch(SRC)["part"]().numpy())


def test_unknown_subscript_is_loud():
    """`init.normal_(w[0])` with `w` unknown keeps the call form (right for a list of Parameters); on a
    tensor the view's fill would reach nothing, so it stops instead of silently keeping the row."""
    import mindspore as ms

    mod, code, sites = load_converted(SRC)
    assert "_ms_compat.normal_(w[0])" in code, code
    params = [ms.Parameter(ms.Tensor(np.full((2, 3), OLD, np.float32)), name=f"p{i}") for i in range(2)]
    assert (mod.unknown(params)[0].asnumpy() != OLD).all()
    with pytest.raises(mod._ms_compat.MigrationError, match="does not reach"):
        mod.unknown(ms.Tensor(np.full((4, 3), OLD, np.float32)))
