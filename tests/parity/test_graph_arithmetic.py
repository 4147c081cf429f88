"""Python arithmetic on plain numbers inside a compiled construct, as converted (msmigrate/graph_idioms.py):
values and input gradients in GRAPH mode (and PyNative) against torch.

- `n ** -1` / pow(n, -1) on two Python ints: GRAPH mode (MindSpore 2.10) gives the int 0 where Python gives
  the float (measured: `x * self.dim ** -1` was `x * 0`, silently); converted to _ms_compat.power.
- `round(v)`: GRAPH mode stops compiling ("Cast failed, original value: 2, type: Int64Imm", no line named);
  converted to _ms_compat.round_even (ties to even, as Python and torch round).
- `a // b` / `a % b` (and `//=`, `%=`) on two Python ints: GRAPH mode takes the quotient through float32, wrong
  from about 2**24 on (measured: `(2**24 + 1) % 97` was 97, `3 * (2**24 + 1) // 7` one too many, silently);
  converted to _ms_compat.floordiv / mod."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .test_graph_safety import check_graph, rnd  # noqa: E402

POWER_SRC = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.dim = dim
        self.p = -2

    def forward(self, x):
        h = self.fc(x)
        n = x.shape[-1]
        grow = 0
        for i in range(3):
            grow = grow + 2 ** i                      # a non-negative int power stays an int
        return (h * self.dim ** -1 + n ** self.p + pow(n, -1) + (-2) ** -1 + h ** 2 * 2 ** -2
                + h * n ** -0.5 + grow)


def make():
    return Net()
'''


def test_int_to_negative_int_power_in_graph():
    code, _ = check_graph(POWER_SRC, rnd(2, 4), (2, 4))
    compiled_forms = ("_ms_compat.power(self.dim, -1)", "_ms_compat.power(n, self.p)", "_ms_compat.power(n, -1)",
                      "_ms_compat.power((-2), -1)", "h ** 2", "n ** -0.5")
    missing = [form for form in compiled_forms if form not in code]
    assert not missing, (missing, code)


def test_power_keeps_python_semantics():
    from .harness import load_converted
    mod, _, _ = load_converted(POWER_SRC)
    power = mod._ms_compat.power
    for base, exp in ((4, -1), (-3, -3), (2, 3), (2.0, -1), (True, -1), (4, 0.5), (-8, 2)):
        got, want = power(base, exp), base ** exp
        assert got == want and type(got) is type(want), (base, exp, got, want)
    with pytest.raises(ZeroDivisionError):
        power(0, -1)


ROUND_SRC = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, scale=1.5):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.scale = scale

    def forward(self, x):
        h = self.fc(x)
        n = round(x.shape[-1] * self.scale)           # 6.0 -> 6
        ties = round(2.5) * 100 + round(3.5) * 10 + round(-2.5)
        return h[:, :3] * n + ties + round(x.shape[0] / 3) + round(float(x.shape[1]) - 0.5)


def make():
    return Net()
'''


def test_round_in_graph():
    code, _ = check_graph(ROUND_SRC, rnd(2, 4), (2, 3))
    assert "_ms_compat.round_even(2.5)" in code and "_ms_compat.round_even(x.shape[0] / 3)" in code, code


def test_round_even_keeps_python_semantics():
    from .harness import load_converted
    mod, _, _ = load_converted(ROUND_SRC)
    round_even = mod._ms_compat.round_even
    for value in (2.5, 3.5, -2.5, -0.4, 0.5, 1.5, 2.6, -3.7, 7, -7, 1e6 + 0.5):
        got, want = round_even(value), round(value)
        assert got == want and type(got) is type(want), (value, got, want)
    import mindspore as ms
    with pytest.raises(TypeError, match="__round__"):     # as torch: a Tensor has no __round__
        round_even(ms.Tensor(1.5))


BIG_INT_SRC = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, n=2 ** 24 + 1):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.n = n

    def forward(self, x):
        h = self.fc(x)
        rest = self.n % 97                              # 0 (GRAPH, before: 97)
        over = self.n * 3 // 7 - 7190235                # 0 (GRAPH, before: 1)
        seed = (2 ** 24 + 1) * x.shape[0]
        seed //= 97
        seed %= 1000                                    # 345922 % 1000 = 922
        label = "%d rows" % x.shape[0]                 # formatting: _ms_compat.percent_format
        return h * (rest + 1) + over + seed + h % 2 + (-self.n) // 2 ** 20


def make():
    return Net()
'''


def test_int_floordiv_and_mod_above_2_24_in_graph():
    code, _ = check_graph(BIG_INT_SRC, rnd(2, 4), (2, 4))
    for form in ("_ms_compat.mod(self.n, 97)", "_ms_compat.floordiv(self.n * 3, 7)", "seed = _ms_compat.floordiv(seed, 97)",
                 "seed = _ms_compat.mod(seed, 1000)", 'label = _ms_compat.percent_format("%d rows", x.shape[0])',
                 "h % 2",
                 "_ms_compat.floordiv(-self.n, 2 ** 20)"):
        assert form in code, (form, code)


def test_floordiv_and_mod_keep_python_semantics():
    import random
    from .harness import load_converted
    mod, _, _ = load_converted(BIG_INT_SRC)
    floordiv, remainder = mod._ms_compat.floordiv, mod._ms_compat.mod
    rng = random.Random(0)
    pairs = [(7, 2), (-7, 2), (7, -2), (-7, -2), (0, 5), (True, 2), (2 ** 62, 1), (2 ** 30 - 1, 2 ** 30)]
    pairs += [(rng.randrange(-2 ** 62, 2 ** 62), rng.choice((1, -1)) * rng.randrange(1, 2 ** rng.randrange(2, 62)))
              for _ in range(200)]
    for a, b in pairs + [(7.5, 2), (-7.5, 0.5), (2.0, -3)]:
        assert (floordiv(a, b), remainder(a, b)) == (a // b, a % b), (a, b)
        assert type(floordiv(a, b)) is type(a // b) and type(remainder(a, b)) is type(a % b), (a, b)
    with pytest.raises(ZeroDivisionError):
        floordiv(3, 0)
