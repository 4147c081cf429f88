"""Parity of torch build probes that libraries read at import time (records in
msmigrate/mappings/package_probes.py): ROCm/XPU builds and torch.compile tracing, none of which a
converted program runs under."""
from __future__ import annotations

import sys

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("mindspore")

from .harness import load_converted, load_torch, no_todo  # noqa: E402

SRC = '''
import torch


def probes():
    hip = getattr(torch, "version").hip is not None
    xpu = hasattr(torch, "xpu") and torch.xpu.is_available()
    return [torch.version.hip, hip, xpu, torch.xpu.device_count(), torch.compiler.is_compiling(),
            torch.compiler.is_dynamo_compiling()]
'''


def test_build_probes_answer_as_a_cpu_torch():
    """A CPU torch (what the parity tests run) answers these as a converted program must: no ROCm, no
    XPU, not being compiled."""
    mod, code, sites = load_converted(SRC)
    no_todo(sites)
    assert mod.probes() == load_torch(SRC)["probes"]() == [None, False, False, 0, False, False]


PYTREE_SRC = '''
import torch.utils._pytree as torch_pytree


class Output(dict):
    pass


def register():
    torch_pytree.register_pytree_node(Output, lambda o: (list(o.values()), list(o.keys())),
                                      lambda v, c: Output(zip(c, v)), serialized_type_name="Output",
                                      flatten_with_keys_fn=torch_pytree._dict_flatten_with_keys)
    try:
        torch_pytree.register_pytree_node(Output, lambda o: ([], None), lambda v, c: Output())
        again = "registered twice"
    except ValueError as e:
        again = "ValueError"
    pairs, keys = torch_pytree._dict_flatten_with_keys({"a": 1, "b": 2})
    return again, [(str(k), repr(k), k.get({"a": 5, "b": 6}), v) for k, v in pairs], keys
'''


def test_pytree_registration():
    """transformers registers ModelOutput with torch's pytree while defining it: converted, the registration
    is kept, refused a second time, and _dict_flatten_with_keys gives torch's pairs."""
    mod, code, sites = load_converted(PYTREE_SRC)
    no_todo(sites)
    assert mod.register() == load_torch(PYTREE_SRC)["register"]()


PLACEMENTS_SRC = '''
from torch.distributed.tensor import Partial, Placement, Replicate, Shard


class Style:
    def __init__(self, input_layouts=None, output_layouts=None):
        self.input_layouts = input_layouts
        self.output_layouts = output_layouts


PLANS = {"colwise": Style(input_layouts=Replicate(), output_layouts=Shard(-1)), "grouped": Style(Shard(0))}


def describe():
    s, r, p = Shard(1), Replicate(), Partial("max")
    out = [repr(s), str(s), repr(r), str(r), repr(p), str(p), s.dim, p.reduce_op, Partial().reduce_op]
    out += [s == Shard(1), s == Shard(0), r == Replicate(), r == s, hash(s) == hash(Shard(dim=1))]
    out += [s.is_shard(), s.is_shard(1), s.is_shard(0), s.is_replicate(), r.is_replicate(), p.is_partial(),
            p.is_partial("max"), s.is_partial(), isinstance(s, Placement)]
    out += [repr(PLANS["colwise"].output_layouts), repr(PLANS["grouped"].input_layouts)]
    return out
'''


def test_dtensor_placements():
    """Tensor-parallel plans built while a library's modules are defined (transformers' parallel styles):
    the placements describe a layout as torch's do."""
    mod, code, sites = load_converted(PLACEMENTS_SRC)
    no_todo(sites)
    assert mod.describe() == load_torch(PLACEMENTS_SRC)["describe"]()


LIBRARY_SRC = '''
import torch


def _scaled(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return x * w + 1.0


def _scaled_fake(x, w):
    return torch.empty_like(x)


def _twice(x: torch.Tensor) -> torch.Tensor:
    return x * 2.0


def _twice_backward(ctx, grad):
    return grad * 2.0


torch.library.custom_op("msm_test::scaled", _scaled, mutates_args=(), schema="(Tensor x, Tensor w) -> Tensor")
torch.library.register_fake("msm_test::scaled", _scaled_fake)


@torch.library.custom_op("msm_test::plain", mutates_args=())
def plain(x: torch.Tensor) -> torch.Tensor:
    return x - 1.0


torch.library.custom_op("msm_test::twice", _twice, mutates_args=(), schema="(Tensor x) -> Tensor")
torch.library.register_autograd("msm_test::twice", _twice_backward)


def run(x, w):
    return torch.ops.msm_test.scaled(x, w), plain(x)
'''


def test_library_custom_op():
    """Operators a library registers on import: the module imports, an operator runs its implementation,
    one with a registered autograd formula stops with MigrationError naming its site."""
    import torch
    from .harness import _to_ms
    mod, code, sites = load_converted(LIBRARY_SRC)
    ref = load_torch(LIBRARY_SRC)
    x, w = np.arange(6, dtype=np.float32).reshape(2, 3), np.full((2, 3), 0.5, np.float32)
    want = [t.numpy() for t in ref["run"](torch.tensor(x), torch.tensor(w))]
    helper = sys.modules["_ms_compat"]
    op = helper.TORCH_LIBRARY_OPS["msm_test::scaled"]
    got = [op(_to_ms(x), _to_ms(w)).asnumpy(), mod.plain(_to_ms(x)).asnumpy()]
    for g, t in zip(got, want):
        np.testing.assert_allclose(g, t)
    with pytest.raises(helper.MigrationError, match="register_autograd at __main__:31"):
        helper.TORCH_LIBRARY_OPS["msm_test::twice"](_to_ms(x))
