"""Parity of torch's random state, dtype-promotion and autocast queries, set_default_tensor_type, the top-level
GradScaler and torch.utils.data's ChainDataset/StackDataset (records in msmigrate/mappings/torch_runtime.py,
helpers in templates/compat_parts/torch_runtime.py). torch runs on the same inputs; random state is proven by
what it promises: restoring it replays the same draws."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from msmigrate.registry import DIFFERENCE, TODO, lookup
from tests.parity.harness import load_converted, load_torch


def _both(src, *args):
    """The snippet's fn(*args) run by torch and by its conversion (numpy inputs become each one's tensors)."""
    import mindspore as ms
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_out = load_torch(src)["fn"](*[torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args])
    mod, code, sites = load_converted(src)
    m_out = mod.fn(*[ms.Tensor(a) if isinstance(a, np.ndarray) else a for a in args])
    assert not [s for s in sites if s.status == TODO], code
    return t_out, m_out, code, sites


def _np(v):
    return v.detach().numpy() if hasattr(v, "detach") else v.asnumpy()


def _dtype(d) -> str:
    return str(d).replace("torch.", "").lower().replace("bool_", "bool")


def _statuses(sites, api):
    return {s.status for s in sites if s.api == api}


RNG_SRC = '''
import torch


def fn(n):
    state = torch.get_rng_state()
    a, b, c = torch.rand(n), torch.randn(n), torch.randint(0, 1000, (n,))
    torch.set_rng_state(state)
    a2, b2, c2 = torch.rand(n), torch.randn(n), torch.randint(0, 1000, (n,))
    d = torch.rand(n)
    torch.random.set_rng_state(state)
    a3 = torch.rand(n)
    torch.manual_seed(3)
    s1 = torch.get_rng_state()
    e1 = torch.rand(n)
    torch.manual_seed(3)
    same = bool((torch.get_rng_state() == s1).all()) and bool((torch.rand(n) == e1).all())
    return state, (a, b, c), (a2, b2, c2), d, a3, same
'''


def test_rng_state_replays_draws():
    t_out, m_out, code, sites = _both(RNG_SRC, 64)
    for out in (t_out, m_out):
        state, first, replay, later, again, same = out
        assert same   # a seeded program's states and draws repeat run to run
        assert _dtype(state.dtype) == "uint8"
        for x, y in zip(first, replay):
            np.testing.assert_array_equal(_np(x), _np(y))
        np.testing.assert_array_equal(_np(first[0]), _np(again))
        assert not np.array_equal(_np(first[0]), _np(later))   # the stream goes on after the replay
        assert 0.3 < _np(first[0]).mean() < 0.7 and abs(_np(first[1]).mean()) < 0.4
    assert [_dtype(v.dtype) for v in m_out[1]] == [_dtype(v.dtype) for v in t_out[1]]
    for api in ("torch.get_rng_state", "torch.set_rng_state", "torch.random.set_rng_state"):
        assert _statuses(sites, api) == {DIFFERENCE}, (api, code)
    import sys

    import mindspore as ms
    with pytest.raises(ValueError, match="get_rng_state"):   # a torch state cannot be replayed
        sys.modules["_ms_compat"].set_rng_state(ms.Tensor(np.zeros(5056, np.uint8)))


SEED_SRC = '''
import torch


def fn(n):
    torch.manual_seed(n)
    first = torch.initial_seed()
    s = torch.seed()
    return first, s, torch.initial_seed(), torch.random.initial_seed(), torch.random.seed() != s
'''


def test_seed_functions():
    t_out, m_out, code, sites = _both(SEED_SRC, 1234)
    for first, s, after, after2, fresh in (t_out, m_out):
        assert first == 1234 and isinstance(s, int) and after == after2 == s and fresh
    for api in ("torch.initial_seed", "torch.seed", "torch.random.initial_seed", "torch.random.seed"):
        assert _statuses(sites, api) == {DIFFERENCE}, (api, code)


DTYPE_SRC = '''
import torch

DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16, torch.bfloat16,
          torch.float32, torch.float64, torch.complex64, torch.complex128]


def fn(x, i, b):
    promoted = [[torch.promote_types(p, q) for q in DTYPES] for p in DTYPES]
    castable = [[torch.can_cast(p, q) for q in DTYPES] for p in DTYPES]
    zero_f64, zero_i64 = x[0, 0].double(), i[0, 0]
    results = [torch.result_type(x, i), torch.result_type(i, 2.5), torch.result_type(i, 7), torch.result_type(b, 7),
               torch.result_type(b, True), torch.result_type(x, zero_f64), torch.result_type(i, zero_f64),
               torch.result_type(zero_i64, 2.5), torch.result_type(zero_i64, zero_f64), torch.result_type(b, i),
               torch.result_type(x.half(), zero_f64), torch.result_type(i.to(torch.int8), zero_i64),
               torch.result_type(2, 3.5), torch.result_type(b, 1.5), torch.result_type(x, 1j)]
    shapes = [torch.broadcast_shapes((2, 1), (3,)), torch.broadcast_shapes(4, (3, 1)),
              torch.broadcast_shapes((5, 1, 3)),
              torch.broadcast_shapes(x.shape, (1, 1, 4), [2, 1, 1])]
    return promoted, castable, results, shapes
'''


def test_dtype_queries():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    i = rng.integers(0, 9, (3, 4)).astype(np.int64)
    b = x > 0
    t_out, m_out, code, sites = _both(DTYPE_SRC, x, i, b)
    (tp, tc, tr, ts), (mp, mc, mr, ms_) = t_out, m_out
    assert [[_dtype(d) for d in row] for row in mp] == [[_dtype(d) for d in row] for row in tp]
    assert mc == tc
    assert [_dtype(d) for d in mr] == [_dtype(d) for d in tr]
    assert [tuple(s) for s in ms_] == [tuple(s) for s in ts]
    for api in ("torch.promote_types", "torch.can_cast", "torch.result_type", "torch.broadcast_shapes"):
        assert _statuses(sites, api) == {lookup(api).status}, api


AUTOCAST_SRC = '''
import torch


def fn():
    return (torch.is_autocast_enabled(), torch.is_autocast_enabled("cpu"), torch.is_autocast_cpu_enabled(),
            torch.get_autocast_dtype("cpu"), torch.get_autocast_dtype("cuda"), torch.get_autocast_cpu_dtype(),
            torch.get_autocast_gpu_dtype())
'''


def test_autocast_queries():
    t_out, m_out, code, sites = _both(AUTOCAST_SRC)
    assert list(m_out[:3]) == list(t_out[:3]) == [False, False, False]
    assert [_dtype(d) for d in m_out[3:]] == [_dtype(d) for d in t_out[3:]] == ["bfloat16", "float16", "bfloat16",
                                                                                  "float16"]


SCALER_SRC = '''
import torch


class Opt:
    def __init__(self):
        self.steps = 0

    def step(self):
        self.steps += 1


def fn(x):
    scaler = torch.GradScaler()
    scaler2 = torch.GradScaler("cuda", 1024.0, growth_interval=10)
    opt = Opt()
    y = scaler.scale(x * 2)
    scaler.unscale_(opt)
    scaler.step(opt)
    scaler2.step(opt)
    scaler.update()
    return y, [opt.steps, scaler.get_scale(), scaler2.is_enabled()]
'''


def test_grad_scaler_top_level():
    """torch's CPU build: a GradScaler for "cuda" disables itself, as the converted one is (no loss scaling)."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (t_y, t_rest), (m_y, m_rest), code, sites = _both(SCALER_SRC, x)
    np.testing.assert_array_equal(_np(m_y), _np(t_y))
    assert m_rest == t_rest
    assert _statuses(sites, "torch.GradScaler") == {DIFFERENCE}


DEFAULT_TYPE_SRC = '''
import torch


def fn(x):
    torch.set_default_tensor_type(torch.FloatTensor)
    torch.set_default_tensor_type("torch.FloatTensor")
    y = torch.ones(3) * 0.1
    return y.dtype == torch.float32, x * y
'''


def test_set_default_tensor_type():
    x = np.linspace(-1, 1, 3).astype(np.float32)
    (t_f, t_y), (m_f, m_y), code, sites = _both(DEFAULT_TYPE_SRC, x)
    assert t_f and m_f and "set_default_tensor_type" not in code
    np.testing.assert_allclose(_np(m_y), _np(t_y), rtol=1e-6)
    _, _, todo_code, todo_sites = None, None, *load_converted(
        "import torch\ndef g():\n    torch.set_default_tensor_type(torch.DoubleTensor)\n")[1:]
    assert _statuses(todo_sites, "torch.set_default_tensor_type") == {TODO}, todo_code


DATA_SRC = '''
import numpy as np
import torch
from torch.utils.data import ChainDataset, IterableDataset, StackDataset
import torch.utils.data.dataset as dsm


class Stream(IterableDataset):
    def __init__(self, start, n):
        self.start, self.n = start, n

    def __iter__(self):
        for k in range(self.n):
            yield self.start + k

    def __len__(self):
        return self.n


def fn(a, b):
    chain = ChainDataset([Stream(0, 3), Stream(10, 2)])
    chain2 = dsm.ChainDataset([Stream(5, 1)])
    pairs = StackDataset(list(a), list(b))
    named = dsm.StackDataset(x=list(a), y=list(b))
    return (list(chain), len(chain), list(chain2), len(pairs), [tuple(float(v) for v in pairs[k]) for k in range(3)],
            {k: float(v) for k, v in named[1].items()}, len(named))
'''


def test_chain_stack_datasets():
    a = np.arange(3, dtype=np.float32)
    b = np.arange(3, dtype=np.float32) * 10
    t_out, m_out, code, sites = _both(DATA_SRC, a, b)
    assert m_out == t_out
    for api in ("torch.utils.data.ChainDataset", "torch.utils.data.StackDataset"):
        assert _statuses(sites, api), (api, code)


PRINT_SRC = '''
import torch


def fn(x):
    torch.set_printoptions(precision=2)
    short = str(x)
    torch.set_printoptions(8, 2000, 4, 100, 'full', False)
    full = str(x)
    torch.set_printoptions(profile="short", sci_mode=True)
    preset = str(x)
    torch.set_printoptions(profile="default")
    return short, full, preset
'''


def test_set_printoptions():
    """The digits shown and the elements summarised follow the options, as torch's printing does (the frame
    around the numbers is each library's own)."""
    import re

    x = np.array([1.23456789, 2.5, 1e-6] + [0.0] * 1997, np.float32)
    saved = np.get_printoptions()
    try:
        (t_short, t_full, t_preset), (m_short, m_full, m_preset), code, sites = _both(PRINT_SRC, x)
    finally:
        np.set_printoptions(**saved)
        import torch
        torch.set_printoptions(profile="default")
    assert _statuses(sites, "torch.set_printoptions") == {DIFFERENCE}
    for t, m in ((t_short, m_short), (t_full, m_full), (t_preset, m_preset)):
        # the first number as printed, the elements shown (summarised with '...' or not)
        assert re.search(r"1\.2\d*", t).group() == re.search(r"1\.2\d*", m).group(), (t[:60], m[:60])
        assert ("..." in t) == ("..." in m)
    assert "1.23456788" in m_full and "e-" not in m_full       # precision 8, sci_mode=False, threshold 2000
