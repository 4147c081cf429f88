"""Rows of a tensor changed in place in a Cell's construct (msmigrate/cell_rows.py): `for row in x:
row.add_(1)`, `for t, m, s in zip(x, mean, std): t.sub_(m).div_(s)`, `for i, row in enumerate(x)`, `x[0].mul_(2)`.
torch's rows are views, so x changes; the converted rebinding of the row changed its copy only and x stayed as
it was, with no error (`x[i].op_()` was a raising TODO). Each layer runs in torch and converted (PYNATIVE with the parameters' gradients, GRAPH for values);
where the new x would not reach what torch changes, the conversion raises MigrationError naming the line."""
from __future__ import annotations

import re

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from msmigrate.registry import TODO  # noqa: E402

from tests.parity.harness import check_layer, load_converted  # noqa: E402

LAYERS = '''
import torch
from torch import nn


class RowsAdd(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 2)

    def forward(self, x):
        x = x * 1.0
        for row in x:
            row.add_(1)
        return self.lin(x)


class ZipNormalize(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.tensor([0.5, -1.0, 2.0, 0.0]))
        self.register_buffer("std", torch.tensor([2.0, 0.5, 1.0, 4.0]))
        self.lin = nn.Linear(3, 2)

    def forward(self, x):
        x = x.clone()
        for t, m, s in zip(x, self.mean, self.std):
            t.sub_(m).div_(s)
        return self.lin(x)


class EnumerateSome(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 2)

    def forward(self, x):
        x = x + 0
        for i, row in enumerate(x):
            if i % 2 == 0:
                continue
            row.mul_(3)
            row.add_(x[0])
        return self.lin(x)


class ListItems(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 2)

    def forward(self, x):
        feats = [self.lin(x) * 1.0, self.lin(x) * 2.0]
        for f in feats:
            f.mul_(0.5)
        return feats[0] + feats[1]


class ItemRows(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.shift = nn.Parameter(torch.tensor([0.5, -0.25, 1.0]))

    def forward(self, x):
        x = self.lin(x)
        x[0].mul_(2)
        x[-1].add_(x[0])
        for i in range(x.shape[0]):
            x[i].add_(self.shift)
        x[1].clamp_(min=-0.2)
        return x * 1.5


def make_item_rows():
    return ItemRows()


def make_rows_add():
    return RowsAdd()


def make_zip_normalize():
    return ZipNormalize()


class RowScaler(nn.Module):
    """no forward: its scale() runs in another Module's forward, so its rows are Cell code's"""
    def __init__(self):
        super().__init__()
        self.factor = 3.0

    def scale(self, x):
        x = x * 1.0
        for row in x:
            row.mul_(self.factor)
        return x


class CallsHelperModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.scaler = RowScaler()
        self.lin = nn.Linear(3, 2)

    def forward(self, x):
        return self.lin(self.scaler.scale(x))


def make_calls_helper_module():
    return CallsHelperModule()


def make_enumerate_some():
    return EnumerateSome()


def make_list_items():
    return ListItems()
'''


@pytest.mark.parametrize("entry", ["make_rows_add", "make_zip_normalize", "make_enumerate_some",
                                   "make_list_items", "make_item_rows", "make_calls_helper_module"])
def test_rows_changed_in_construct_match_torch(entry):
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    code, sites = check_layer(LAYERS, [x], entry=entry, grad=True, graph=True)
    assert "_ms_compat.row_replaced(" in code
    assert not [s for s in sites if s.status == TODO], code
    # a forward-less Module's method that another forward calls is Cell code too (not host code's write-back)
    assert "_ms_compat.row_replaced(" in code.split("def scale(")[1].split("class ")[0]


RAISING = {
    # a parameter: torch changes the caller's tensor too
    "parameter_rows": '''
    def forward(self, x):
        for row in x:
            row.add_(1)  # raises
        return x
''',
    # another name holds the tensor: torch's change reaches it
    "aliased_rows": '''
    def forward(self, x):
        x = x * 1.0
        y = x
        for row in x:
            row.add_(1)  # raises
        return y
''',
    # the row name rebound: torch's later in-place call changes the new tensor only
    "rebound_row": '''
    def forward(self, x):
        x = x * 1.0
        for row in x:
            row.add_(1)  # raises
            row = row * 2
            row.add_(1)
        return x
''',
    # not a row: a name holding a buffer's tensor, which torch changes for the next call too
    "buffer_through_a_name": '''
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.zeros(3))

    def forward(self, x):
        c = self.count
        c.add_(1)  # raises
        return x + c
''',
}


@pytest.mark.parametrize("shape", sorted(RAISING))
def test_rows_that_cannot_be_written_back_raise(shape):
    src = "import torch\nfrom torch import nn\n\n\nclass Net(nn.Module):" + RAISING[shape] + \
        "\n\nout = Net()(torch.ones(2, 3))\n"
    line = [i + 1 for i, t in enumerate(src.splitlines()) if t.endswith("# raises")][0]
    with pytest.raises(Exception) as err:
        load_converted(src)
    assert type(err.value).__name__ == "MigrationError", err.value
    assert re.search(rf":{line}\b", str(err.value)), (line, str(err.value))


# ------------------------------------------------------------------ a Module that overrides __call__ (no forward)
CALL_OVERRIDE = '''
import torch
from copy import deepcopy
from torch import nn


class Averages(nn.Module):
    """ema-pytorch's PostHocEMA: calls its models itself (__call__, no forward); synthesize() runs on the host"""
    def __init__(self):
        super().__init__()
        self.models = nn.ModuleList([nn.Linear(3, 2), nn.Linear(3, 2)])

    def params_of(self, model):
        for p in model.parameters():
            yield p

    @torch.no_grad()
    def synthesize(self, weights):
        out = deepcopy(self.models[0])
        for i, (model, weight) in enumerate(zip(self.models, weights)):
            for src, dst in zip(self.params_of(model), self.params_of(out)):
                if i == 0:
                    dst.zero_()
                dst.add_(src * weight)
        return out

    def __call__(self, x):
        return tuple(m(x) for m in self.models)


def make():
    return Averages()
'''


def test_methods_of_a_module_overriding_call_are_host_code():
    """A Module with __call__ and no forward runs only what __call__ reaches as its forward: its other methods
    (a model synthesized from others' parameters, changed in place in loops over generators) are host code,
    whose in-place changes are written into the parameters (before: each was taken for a row of a tensor in
    construct and raised MigrationError). The synthesized model's output is torch's."""
    import mindspore as ms
    import torch

    from msmigrate.weights import load_torch_state_dict
    from tests.parity.harness import load_torch

    torch.manual_seed(0)
    t_avg = load_torch(CALL_OVERRIDE)["make"]()
    mod, code, _ = load_converted(CALL_OVERRIDE)
    m_avg = mod.make()
    load_torch_state_dict(m_avg, {k: v.detach().numpy() for k, v in t_avg.state_dict().items()}, strict=True)
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    t_out = t_avg.synthesize([0.25, 0.75])(torch.from_numpy(x)).detach().numpy()
    m_out = m_avg.synthesize([0.25, 0.75])(ms.Tensor(x)).asnumpy()
    np.testing.assert_allclose(m_out, t_out, rtol=1e-5, atol=1e-6)
    assert "write_into(dst" in code, code
