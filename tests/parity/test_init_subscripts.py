"""Initialising part of a parameter (issue #12): `nn.init.zeros_(emb.weight[pad])`, `init.normal_(w[0])`,
`w[i].fill_(v)` under torch.no_grad(). MindSpore's `p[i]` is a view whose in-place fill does not reach
`p`, so these convert to an assignment into the subscript (init_subscripts.py). Deterministic fills must
equal torch's; random ones must have changed exactly their rows, with the right shape and bounds."""
from __future__ import annotations

import numpy as np
import pytest

from msmigrate.registry import TODO
from tests.parity.harness import check_function, load_converted, load_torch

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
    nn.init.normal_(w[0])   # w may be a list of Parameters or a tensor: decided when it runs
    return w


def own_zeros_(tensor):   # an init wrapper of the project's own, as transformers.initialization has
    if not getattr(tensor, "_is_initialized", False):
        return init.zeros_(tensor)
    return tensor


def own_normal_(tensor, mean=0.0, std=1.0):
    return init.normal_(tensor, mean=mean, std=std)


def init_weights(module):   # an argument: its type is not known where its rows are filled
    if isinstance(module, nn.Embedding):
        own_zeros_(module.weight[module.padding_idx])
        own_normal_(module.weight[4], std=0.02)
        nn.init.ones_(module.weight[0])
        w = module.weight
        w.data[1].fill_(-2.0)


def applied():
    emb = nn.Embedding(3000, 16, padding_idx=3)   # large: an in-place copy into a view fails (InplaceCopy)
    nn.init.constant_(emb.weight, 7.0)
    emb.apply(init_weights)
    return emb.weight


def untyped(w, ps, i):
    nn.init.zeros_(w[i])
    init.constant_(w[i + 1], -3.0)
    init.ones_(ps[i])
    with torch.no_grad():
        w[3].fill_(2.5)
        ps[1][0].zero_()
    w.data[5].fill_(-1.0)
    own_zeros_(w[0, 1])
    own_zeros_(w[1:3, 2])
    row = nn.init.constant_(w[2], 0.25)   # the fill's value used
    return w, ps, row


def untyped_parameters():
    lin = nn.Linear(3, 6)
    ps = nn.ParameterList([nn.Parameter(torch.full((2,), 7.0)), nn.Parameter(torch.full((3, 2), 7.0))])
    nn.init.constant_(lin.weight, 7.0)
    w, ps, row = untyped(lin.weight, ps, 0)
    return w, ps[0], ps[1], row


def copies(dst, src):
    with torch.no_grad():
        dst.copy_(src[1])   # an object's in-place method: dst is filled, not src's row
    return dst, src


def plain_init(t):   # no `_` mark: its caller's row is a view the fill does not reach in MindSpore
    nn.init.zeros_(t)


def through_plain_init(w):
    plain_init(w[1])
    return w


def untyped_tensors():
    w, ps, row = untyped(torch.full((6, 3), 7.0), [torch.full((2,), 7.0), torch.full((3, 2), 7.0)], 0)
    return w, ps[0], ps[1], row


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


def test_unknown_subscript_writes_through():
    """`init.normal_(w[0])` with `w` unknown: filled through _ms_compat.fill_part, right for a list of
    Parameters (the element is filled) and for a tensor (its row is filled and assigned back)."""
    import mindspore as ms

    mod, code, sites = load_converted(SRC)
    assert "_ms_compat.fill_part(w, 0, _ms_compat.normal_)" in code, code
    params = [ms.Parameter(ms.Tensor(np.full((2, 3), OLD, np.float32)), name=f"p{i}") for i in range(2)]
    got = mod.unknown(params)
    assert (got[0].asnumpy() != OLD).all() and (got[1].asnumpy() == OLD).all()
    got = mod.unknown(ms.Tensor(np.full((4, 3), OLD, np.float32))).asnumpy()
    assert (got[0] != OLD).all() and np.unique(got[0]).size == 3 and (got[1:] == OLD).all(), got


def test_fills_of_untyped_subscripts_match_torch():
    """Fills of a subscript of an argument (nn.init, Tensor methods under no_grad and on .data, an own
    init wrapper): on a Parameter with a ParameterList, and on a plain tensor with a list of tensors,
    every value equals torch's."""
    import mindspore as ms
    import torch

    torch_ns = load_torch(SRC)
    mod, code, sites = load_converted(SRC)
    assert not [s for s in sites if s.status == TODO], code
    for name in ("untyped_parameters", "untyped_tensors"):
        want = [t.detach().numpy() for t in torch_ns[name]()]
        got = [t.asnumpy() for t in getattr(mod, name)()]
        for w, g in zip(want, got):
            np.testing.assert_array_equal(g, w, err_msg=name)
    a, b = np.zeros(3, np.float32), np.arange(6, dtype=np.float32).reshape(2, 3)
    want = [t.numpy() for t in torch_ns["copies"](torch.tensor(a), torch.tensor(b))]
    got = [t.asnumpy() for t in mod.copies(ms.Tensor(a), ms.Tensor(b))]
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)


def test_own_init_wrapper_on_a_row_writes_through():
    """transformers' `_init_weights(module)`: `init.zeros_(module.weight[module.padding_idx])` through the
    library's own init wrapper, on a table large enough that an in-place copy into a view fails."""
    torch_ns = load_torch(SRC)
    mod, code, sites = load_converted(SRC)
    assert "_ms_compat.fill_part(module.embedding_table, module.padding_idx, own_zeros_)" in code, code
    want = torch_ns["applied"]().detach().numpy()
    got = mod.applied().asnumpy()
    assert (got[3] == 0).all() and (want[3] == 0).all()
    assert (got[0] == 1).all() and (got[1] == -2).all() and (got[2] == OLD).all()
    assert (np.abs(got[4]) < 0.2).all() and np.unique(got[4]).size > 1, got[4]
    rest = np.ones(len(want), bool)
    rest[4] = False
    np.testing.assert_array_equal(got[rest], want[rest])


def test_fill_of_a_view_out_of_sight_is_loud():
    """`plain_init(w[1])` filling its argument with nn.init.zeros_: nothing marks the call as a fill,
    so the view reaches the helper, whose copy would not reach `w`; it stops instead of keeping the row.
    A tensor of its own is still filled in place, also in a compiled function (ms.jit)."""
    import mindspore as ms

    mod, code, sites = load_converted(SRC)
    with pytest.raises(mod._ms_compat.MigrationError, match="does not reach"):
        mod.through_plain_init(ms.Tensor(np.full((4, 3), OLD, np.float32)))
    own = ms.Tensor(np.full((2, 3), OLD, np.float32))
    mod.plain_init(own)
    assert (own.asnumpy() == 0).all()
    check_function("import torch\ndef fn(x):\n    y = x * 1\n    y.fill_(2.0)\n    return y + x\n",
                   [np.ones((2, 3), np.float32)])
