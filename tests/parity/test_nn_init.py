"""torch.nn.init with every keyword (tensor=, gain=, a=, mode=, nonlinearity=, generator=...) and the
structured initialisers (eye_, dirac_, sparse_): torch and the converted program fill tensors of the same
shape; deterministic ones must be equal, random ones must have torch's distribution (mean, spread, bounds).
One converted snippet per test, many cases each."""
from __future__ import annotations

import math

import numpy as np

from msmigrate.registry import TODO
from tests.parity.harness import load_converted, load_torch

N_ROWS, N_COLS = 256, 512   # 131k samples: the std is known to ~0.2%

# name -> the initialiser call on `w` (a (N_ROWS, N_COLS) tensor), with keywords
RANDOM_CASES = {
    "normal_kw": "nn.init.normal_(tensor=w, mean=1.5, std=2.0)",
    "normal_gen": "nn.init.normal_(w, 0.0, 0.5, generator=None)",
    "uniform_kw": "nn.init.uniform_(tensor=w, a=-3.0, b=1.0)",
    "xavier_uniform_kw": "nn.init.xavier_uniform_(tensor=w, gain=nn.init.calculate_gain('tanh'))",
    "xavier_normal_kw": "nn.init.xavier_normal_(tensor=w, gain=2.0)",
    "kaiming_uniform_kw": "nn.init.kaiming_uniform_(tensor=w, a=0.2, mode='fan_out', nonlinearity='leaky_relu')",
    "kaiming_normal_kw": "nn.init.kaiming_normal_(tensor=w, mode='fan_in', nonlinearity='relu')",
    "kaiming_normal_selu": "nn.init.kaiming_normal_(w, nonlinearity='selu', mode='fan_out')",
    "trunc_normal_kw": "nn.init.trunc_normal_(tensor=w, mean=0.5, std=1.0, a=-1.0, b=1.5)",
    "sparse_kw": "nn.init.sparse_(tensor=w, sparsity=0.25, std=0.1)",
    # an initialiser held as a value (a table of them) is called with torch's keywords, generator= included
    "normal_ref_gen": "{'f': nn.init.normal_}['f'](w, mean=1.0, std=0.5, generator=torch.Generator().manual_seed(3))",
    "trunc_normal_ref_gen": "{'f': nn.init.trunc_normal_}['f'](w, std=0.5, a=-1.0, b=1.0, generator=None)",
}
BOUNDED = {"uniform_kw", "xavier_uniform_kw", "kaiming_uniform_kw", "trunc_normal_kw", "trunc_normal_ref_gen"}

EXACT_CASES = {
    "constant_kw": ("(3, 5)", "nn.init.constant_(tensor=w, val=2.5)"),
    "zeros_kw": ("(3, 5)", "nn.init.zeros_(tensor=w)"),
    "ones_kw": ("(3, 5)", "nn.init.ones_(tensor=w)"),
    "eye_square": ("(4, 4)", "nn.init.eye_(w)"),
    "eye_wide_kw": ("(3, 6)", "nn.init.eye_(tensor=w)"),
    "dirac_1d": ("(4, 3, 5)", "nn.init.dirac_(w)"),
    "dirac_2d_groups": ("(6, 2, 3, 3)", "nn.init.dirac_(tensor=w, groups=2)"),
    "dirac_3d": ("(2, 4, 3, 3, 3)", "nn.init.dirac_(w, 1)"),
    "gain_leaky": ("(1,)", "w.fill_(nn.init.calculate_gain('leaky_relu', 0.2))"),
    "gain_selu": ("(1,)", "w.fill_(nn.init.calculate_gain(nonlinearity='selu'))"),
}

LAYER_SRC = '''
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(400, 300)
        nn.init.kaiming_uniform_(tensor=self.fc.weight, a=math.sqrt(5), mode="fan_in")
        nn.init.constant_(tensor=self.fc.bias, val=0.25)
    def forward(self, x):
        return self.fc(x)
def make():
    return Net()
'''


def _snippet() -> str:
    lines = ["import math", "import torch", "import torch.nn as nn"]
    for name, call in RANDOM_CASES.items():
        lines += [f"def r_{name}():", f"    w = torch.empty({N_ROWS}, {N_COLS})", f"    {call}", "    return w"]
    for name, (shape, call) in EXACT_CASES.items():
        lines += [f"def e_{name}():", f"    w = torch.empty{shape}", f"    {call}", "    return w"]
    return "\n".join(lines) + "\n"


def _no_todo(sites, code):
    todos = [(s.api, s.note) for s in sites if s.status == TODO]
    assert not todos, (todos, code)


def _same_distribution(name, m, t):
    n, sd = t.size, t.std()
    assert abs(m.mean() - t.mean()) < 6 * sd / math.sqrt(n) + 1e-6, (name, m.mean(), t.mean())
    assert abs(m.std() / sd - 1) < 0.015, (name, m.std(), sd)
    if name in BOUNDED:
        lo, hi = t.min(), t.max()
        span = hi - lo
        assert m.min() >= lo - 1e-3 * span and m.max() <= hi + 1e-3 * span, (name, m.min(), m.max(), lo, hi)
        assert m.min() <= lo + 1e-2 * span and m.max() >= hi - 1e-2 * span, (name, m.min(), m.max(), lo, hi)


def test_random_init_keywords():
    import torch

    src = _snippet()
    tns = load_torch(src)
    mod, code, sites = load_converted(src)
    _no_todo(sites, code)
    torch.manual_seed(0)
    for name in RANDOM_CASES:
        t = tns[f"r_{name}"]().numpy().astype(np.float64)
        m = getattr(mod, f"r_{name}")().asnumpy().astype(np.float64)
        assert m.shape == t.shape, name
        if name.startswith("sparse"):
            # exactly ceil(sparsity * rows) zeros in every column, N(0, std) elsewhere
            zeros = (m == 0).sum(axis=0)
            np.testing.assert_array_equal(zeros, (t == 0).sum(axis=0))
            assert zeros[0] == math.ceil(0.25 * N_ROWS)
            assert abs(m[m != 0].std() / t[t != 0].std() - 1) < 0.015, name
            continue
        _same_distribution(name, m, t)


def test_structured_init():
    src = _snippet()
    tns = load_torch(src)
    mod, code, sites = load_converted(src)
    _no_todo(sites, code)
    for name in EXACT_CASES:
        t = tns[f"e_{name}"]().numpy()
        m = getattr(mod, f"e_{name}")().asnumpy()
        assert m.dtype == t.dtype and m.shape == t.shape, (name, m.dtype, t.dtype, m.shape, t.shape)
        np.testing.assert_allclose(m, t, rtol=1e-6, err_msg=name)
    apis = {s.api for s in sites}
    assert {"torch.nn.init.eye_", "torch.nn.init.dirac_", "torch.nn.init.sparse_"} <= apis, apis


def test_init_keywords_on_a_layer():
    """`tensor=self.fc.weight` on a Parameter: set_data with torch's distribution."""
    import torch

    src = "import math\n" + LAYER_SRC
    torch.manual_seed(0)
    tnet = load_torch(src)["make"]()
    mod, code, sites = load_converted(src)
    _no_todo(sites, code)
    mnet = mod.make()
    np.testing.assert_array_equal(mnet.fc.bias.asnumpy(), 0.25)
    t = tnet.fc.weight.detach().numpy().astype(np.float64)
    m = mnet.fc.weight.asnumpy().astype(np.float64)
    bound = 1 / math.sqrt(400)   # kaiming_uniform_ with a=sqrt(5): U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    assert -bound <= m.min() < -0.98 * bound and 0.98 * bound < m.max() <= bound
    assert abs(m.std() / t.std() - 1) < 0.02
