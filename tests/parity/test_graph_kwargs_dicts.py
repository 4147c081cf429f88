"""`dict(...)` built inside a compiled construct and forwarded with `**` (x-transformers'
TransformerWrapper: `kwargs = dict(**kwargs, pos=pos, ...)` then `self.attn_layers(x, **kwargs)`).

GRAPH mode (MindSpore 2.10) builds a dict() call by its Python fallback; with a value known only at run
time the call it feeds runs in the interpreter and fails ("Nested execution during JIT execution",
"dict() argument after ** must be a mapping, not tuple"). Converted: a dict display, or
_ms_compat.dict_merge (msmigrate/graph_idioms.py). Values and input gradients against torch."""
from __future__ import annotations

import types

import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .test_graph_safety import check_graph, rnd  # noqa: E402

KWARGS_SRC = '''
import torch
import torch.nn as nn


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x, offset=None, scale=1.0, shift=None, **kwargs):
        y = self.fc(x) * (offset + scale)
        return y if shift is None else y + shift


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Scaled()

    def run(self, x, **kwargs):
        kwargs = dict(**kwargs, offset=x.sum())          # run-time value next to the caller's keys
        return self.inner(x, **kwargs)

    def forward(self, x, **kwargs):
        plain = dict(offset=x.mean(), scale=2.0)         # keywords only
        merged = dict(shift=x[:, :3], **plain)           # keyword first, then a mapping
        return self.run(x) + self.run(x, scale=3.0) + self.inner(x, **merged)


def make():
    return Net()
'''


def test_dict_calls_forwarded_with_double_star_in_graph():
    code, _ = check_graph(KWARGS_SRC, rnd(2, 4), (2, 3))
    compiled_forms = ("_ms_compat.dict_merge(kwargs, offset=(_ms_compat.reduce_sum(x) if _ms_compat.is_tensor(x) "
                          "else x.sum()))",        # a merge: copy and update
                      "{'offset': _ms_compat.reduce_mean(x), 'scale': 2.0}",               # keywords only: a display
                      "_ms_compat.dict_merge({}, shift=x[:, :3], **plain)")
    missing = [form for form in compiled_forms if form not in code]
    assert not missing, (missing, code)


def test_dict_merge_keeps_dict_semantics():
    from .harness import load_converted
    mod, _, _ = load_converted(KWARGS_SRC)
    merge = mod._ms_compat.dict_merge
    assert list(merge({"a": 1, "b": 2}, c=3)) == ["a", "b", "c"]      # dict(**a, c=3)'s order
    assert merge({}, c=3) == {"c": 3}
    assert merge(types.MappingProxyType({"a": 1}), c=3) == {"a": 1, "c": 3}    # a mapping, not a dict
    with pytest.raises(TypeError, match="multiple values for keyword argument 'a'"):
        merge({"a": 1}, a=2)


DISPLAY_SRC = '''
import torch
import torch.nn as nn


class Shift(nn.Module):
    def forward(self, x, offset=0.0, scale=1.0):
        return x * scale + offset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.shift = Shift()

    def added(self, h, **kwargs):
        kw = {**kwargs, 'offset': h.sum()}           # kwargs empty in one call: the literal key kept
        return kw['offset'] * len(kw) + self.shift(h, **kw)

    def defaulted(self, h, **kwargs):
        kw = {'offset': h.mean(), **kwargs}          # the caller's offset wins over the literal one
        return self.shift(h, **kw) * len(kw)

    def forward(self, x):
        h = self.fc(x)
        both = {**{'scale': h.max()}, **{'offset': h.min()}}
        return (self.added(h) + self.added(h, scale=h.std()) + self.defaulted(h)
                + self.defaulted(h, offset=h[0, 0]) + self.shift(h, **both))


def make():
    return Net()
'''


def test_dict_displays_with_double_star_in_graph():
    """Measured before the rewrite, GRAPH mode (2.10): kw['offset'] was `((),)` with kwargs empty, a
    tensor in kwargs became a tuple, and the literal offset won over the caller's."""
    code, _ = check_graph(DISPLAY_SRC, rnd(2, 4), (2, 3))
    compiled_forms = ("_ms_compat.dict_union(kwargs, {'offset': (_ms_compat.reduce_sum(h) if _ms_compat.is_tensor(h) else "
                      "h.sum())})",
                      "_ms_compat.dict_union({'offset': (_ms_compat.reduce_mean(h) if _ms_compat.is_tensor(h) else "
                      "h.mean())}, kwargs)",
                      "_ms_compat.dict_union({'scale': ",)
    missing = [form for form in compiled_forms if form not in code]
    assert not missing, (missing, code)


def test_dict_union_keeps_display_semantics():
    from .harness import load_converted
    mod, _, _ = load_converted(DISPLAY_SRC)
    union = mod._ms_compat.dict_union
    assert list(union({"a": 1, "b": 2}, {"c": 3, "a": 4}).items()) == list({**{"a": 1, "b": 2}, "c": 3, "a": 4}.items())
    assert union({}, {"c": 3}) == {"c": 3} and union() == {}
    assert union(types.MappingProxyType({"a": 1}), {"a": 2}) == {"a": 2}     # a mapping, as `**m` takes


POP_SRC = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def run(self, h, **kwargs):
        scale = kwargs.pop('scale', 2.0)             # GRAPH mode (2.10) stopped compiling here
        mask = kwargs.pop('mask', None)
        out = h * scale if mask is None else h * scale * mask
        return out + len(kwargs)

    def forward(self, x):
        h = self.fc(x)
        parts = {'a': h, 'b': h * 2}
        a = parts.pop('a')
        return self.run(h) + self.run(h, scale=h.sum(), mask=h > 0, other=1) + a * len(parts) + parts['b']


def make():
    return Net()
'''


def test_dict_pops_in_graph():
    code, _ = check_graph(POP_SRC, rnd(2, 4), (2, 3))
    compiled_forms = ("scale = kwargs.get('scale', 2.0); kwargs = _ms_compat.dict_without(kwargs, 'scale')",
                      "a = parts['a']; parts = _ms_compat.dict_without(parts, 'a')")
    missing = [form for form in compiled_forms if form not in code]
    assert not missing, (missing, code)


UPDATE_SRC = '''
import torch
import torch.nn as nn


class Mix(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x, context=None, gain=None):
        y = self.fc(x) * context.sum(-1, keepdim=True)
        return y if gain is None else y * gain


class Counter:
    def __init__(self):
        self.n = 0

    def update(self, n=1):
        self.n += n


class Normed(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(4)
        self.fn = Mix()

    def forward(self, x, **kwargs):
        if "context" in kwargs:
            kwargs.update(context=self.norm(kwargs["context"]))
        else:
            kwargs.update(context=x, gain=2.0)       # an empty **kwargs, two keys
        extra = dict(gain=3.0)
        extra.update(gain=0.5)
        return self.fn(x, **kwargs) + self.fn(x, context=x, **extra)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Normed()
        self.counter = Counter()

    def forward(self, x):
        return self.block(x, context=x * 2) + self.block(x)


def make():
    return Net()


def count(c):
    c.update(n=2)
    return c.n
'''


def test_keyword_update_of_own_dict_in_graph():
    """`kwargs.update(context=...)` on construct's **kwargs (empty or not) and on a local dict: GRAPH mode
    refused the keyword form ("Got an unexpected keyword argument 'context'"); converted to update({...}),
    values and input gradients match torch in GRAPH and PyNative. update(n=2) of another object is kept."""
    code, _ = check_graph(UPDATE_SRC, rnd(2, 4), (2, 3))
    for form in ("kwargs.update({'context': self.norm(kwargs[\"context\"])})",
                 "kwargs.update({'context': x, 'gain': 2.0})", "extra.update({'gain': 0.5})", "c.update(n=2)"):
        assert form in code, (form, code)
