"""Parity harness: run a torch snippet and its msmigrate-converted MindSpore form on
the same inputs and compare values (and gradients where asked).

A snippet is ordinary torch source. For functions it defines `fn(*inputs)`; for
layers it defines `make()` returning an nn.Module (its weights are copied into
the converted Cell with msmigrate.weights). The converted source is written to a
temporary module (MindSpore's GRAPH mode reads source code) next to the emitted
_ms_compat.py helper, imported, and run in PyNative and, unless disabled, GRAPH mode.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
import sys
import tempfile
from pathlib import Path
from typing import Callable, List, Optional, Sequence

import numpy as np

from msmigrate.converter import compat_source, convert_code

_TMP = Path(tempfile.mkdtemp(prefix="msmigrate-parity-"))
(_TMP / "_ms_compat.py").write_text(compat_source(), encoding="utf-8")
sys.path.insert(0, str(_TMP))


def convert_snippet(torch_src: str):
    """Convert a snippet; the result must not import torch. Returns (code, sites)."""
    code, sites, _ = convert_code(torch_src)
    assert not re.search(r"^\s*(import torch|from torch)", code, re.M), code
    return code, sites


def load_converted(torch_src: str, pynative: bool = False):
    """Convert a snippet and import it as a module. Returns (module, code, sites). pynative: the converted
    program's own mode line (`ms.set_context(mode=ms.GRAPH_MODE)`, written for a training program) set to
    PYNATIVE_MODE in the imported copy, so importing it does not switch the process to GRAPH mode."""
    code, sites = convert_snippet(torch_src)
    run = code      # what is imported; `code`, returned, is the conversion as written
    if pynative:
        run = re.sub(r"\bset_context\(mode=(\w+)\.GRAPH_MODE\)", r"set_context(mode=\1.PYNATIVE_MODE)", code)
    name = "ms_snippet_" + hashlib.sha1(run.encode()).hexdigest()[:16]
    path = _TMP / f"{name}.py"
    if not path.exists():
        path.write_text(run, encoding="utf-8")
    importlib.invalidate_caches()
    helper = sys.modules.get("_ms_compat")
    if helper is None or Path(getattr(helper, "__file__", "") or "").parent != _TMP:
        # not a converted tree's helper (only what that tree uses) imported or on sys.path before: the whole one
        spec = importlib.util.spec_from_file_location("_ms_compat", _TMP / "_ms_compat.py")
        helper = importlib.util.module_from_spec(spec)
        sys.modules["_ms_compat"] = helper
        spec.loader.exec_module(helper)
    mod = importlib.import_module(name)
    return mod, code, sites


def load_torch(torch_src: str) -> dict:
    ns: dict = {}
    exec(compile(torch_src, "<torch snippet>", "exec"), ns)
    return ns


def _flat(out) -> List[np.ndarray]:
    if isinstance(out, (tuple, list)):
        res = []
        for o in out:
            res.extend(_flat(o))
        return res
    if out is None:
        return []
    if hasattr(out, "detach"):
        return [out.detach().cpu().numpy()]
    if hasattr(out, "asnumpy"):
        return [out.asnumpy()]
    return [np.asarray(out)]


def assert_close(ms_out, torch_out, rtol=1e-5, atol=1e-5, what="output"):
    a, b = _flat(ms_out), _flat(torch_out)
    assert len(a) == len(b), f"{what}: {len(a)} MindSpore values vs {len(b)} torch values"
    for i, (x, y) in enumerate(zip(a, b)):
        assert x.shape == y.shape, f"{what}[{i}]: shape {x.shape} vs torch {y.shape}"
        if y.dtype == np.bool_ or np.issubdtype(y.dtype, np.integer):
            np.testing.assert_array_equal(x, y, err_msg=f"{what}[{i}]")
        else:
            np.testing.assert_allclose(x.astype(np.float64), y.astype(np.float64), rtol=rtol, atol=atol,
                                       err_msg=f"{what}[{i}]")


def _to_torch(a):
    import torch
    return torch.from_numpy(np.array(a))


def _to_ms(a):
    import mindspore as ms
    return ms.Tensor(np.array(a))


def check_function(torch_src: str, inputs: Sequence, entry: str = "fn", rtol=1e-5, atol=1e-5,
                   grad: bool = False, graph: bool = True, kwargs: Optional[dict] = None):
    """Run `entry` from the torch snippet and from its conversion on the same inputs.
    With grad=True also compare d(sum(out * w))/d(float inputs)."""
    import mindspore as ms
    import torch

    kwargs = kwargs or {}
    tfn = load_torch(torch_src)[entry]
    mod, code, sites = load_converted(torch_src)
    mfn = getattr(mod, entry)
    t_in = [_to_torch(a) if isinstance(a, np.ndarray) else a for a in inputs]
    m_in = [_to_ms(a) if isinstance(a, np.ndarray) else a for a in inputs]
    t_out = tfn(*t_in, **kwargs)
    m_out = mfn(*m_in, **kwargs)
    assert_close(m_out, t_out, rtol, atol, "pynative")
    if graph:
        jitted = ms.jit(mfn)
        assert_close(jitted(*m_in, **kwargs), t_out, rtol, atol, "graph")
    if grad:
        float_idx = [i for i, a in enumerate(inputs)
                     if isinstance(a, np.ndarray) and np.issubdtype(a.dtype, np.floating)]
        outs = _flat(t_out)
        rng = np.random.default_rng(1)
        weights = [rng.standard_normal(o.shape).astype(np.float32) for o in outs]
        t_req = [t.clone().requires_grad_(True) if i in float_idx else t for i, t in enumerate(t_in)]
        t_res = tfn(*t_req, **kwargs)
        t_res = t_res if isinstance(t_res, (tuple, list)) else [t_res]
        loss = sum((r * torch.from_numpy(w)).sum() for r, w in zip(t_res, weights))
        loss.backward()
        t_grads = [t_req[i].grad for i in float_idx]

        def objective(*xs):
            res = mfn(*xs, **kwargs)
            res = res if isinstance(res, (tuple, list)) else [res]
            total = 0
            for r, w in zip(res, weights):
                total = total + (r * ms.Tensor(w)).sum()
            return total
        m_grads = ms.grad(objective, grad_position=tuple(float_idx))(*m_in)
        if len(float_idx) == 1:
            m_grads = (m_grads,)
        assert_close(list(m_grads), t_grads, rtol, atol, "gradient")
    return code, sites


def check_layer(torch_src: str, inputs: Sequence, entry: str = "make", rtol=1e-5, atol=1e-5,
                train: bool = False, graph: bool = True, grad: bool = False,
                call: Optional[Callable] = None):
    """Build the torch layer and its converted Cell, copy the weights, compare outputs
    (eval mode, or train mode with train=True, e.g. BatchNorm batch statistics)."""
    import mindspore as ms
    import torch
    from msmigrate.weights import load_torch_state_dict

    torch.manual_seed(0)
    tnet = load_torch(torch_src)[entry]()
    mod, code, sites = load_converted(torch_src)
    mnet = getattr(mod, entry)()
    sd = {k: v.detach().cpu().numpy() for k, v in tnet.state_dict().items()}
    load_torch_state_dict(mnet, sd, strict=True)
    tnet.train(train)
    mnet.set_train(train)
    t_in = [_to_torch(a) if isinstance(a, np.ndarray) else a for a in inputs]
    m_in = [_to_ms(a) if isinstance(a, np.ndarray) else a for a in inputs]
    run_t = (lambda net, xs: call(net, *xs)) if call else (lambda net, xs: net(*xs))
    t_out = run_t(tnet, t_in)
    m_out = run_t(mnet, m_in)
    assert_close(m_out, t_out, rtol, atol, "pynative")
    if grad:
        loss_w = [np.random.default_rng(2).standard_normal(o.shape).astype(np.float32) for o in _flat(t_out)]
        tnet.zero_grad()
        t_res = _as_list(run_t(tnet, t_in))
        sum((r * torch.from_numpy(w)).sum() for r, w in zip(t_res, loss_w)).backward()
        t_grads = {k: p.grad.numpy() for k, p in tnet.named_parameters() if p.grad is not None}
        params = mnet.trainable_params()

        def objective(*xs):
            res = _as_list(run_t(mnet, xs))
            total = 0
            for r, w in zip(res, loss_w):
                total = total + (r * ms.Tensor(w)).sum()
            return total
        m_grads = ms.grad(objective, grad_position=None, weights=params)(*m_in)
        # compare through the same name mapping the weights use: by value order of torch names
        from msmigrate.weights import convert_state_dict
        mapped, _ = convert_state_dict(mnet, {k: v for k, v in t_grads.items()}, strict=False)
        for p, g in zip(params, m_grads):
            if p.name in mapped:
                np.testing.assert_allclose(g.asnumpy(), mapped[p.name], rtol=max(rtol, 1e-4), atol=max(atol, 1e-4),
                                           err_msg=f"gradient of {p.name}")
    if graph:
        ms.set_context(mode=ms.GRAPH_MODE)
        try:
            g_net = getattr(mod, entry)()
            load_torch_state_dict(g_net, sd, strict=True)
            g_net.set_train(train)
            assert_close(run_t(g_net, m_in), t_out, rtol, atol, "graph")
        finally:
            ms.set_context(mode=ms.PYNATIVE_MODE)
    return code, sites


def _as_list(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


def site_statuses(sites) -> dict:
    return {s.api: s.status for s in sites}


def rnd(*shape, seed=0, scale=1.0):
    """Reproducible float32 normal samples for parity inputs."""
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def no_todo(sites):
    """Every site of a snippet converted: none left as a TODO."""
    from msmigrate.registry import TODO

    todos = [(s.api, s.note) for s in sites if s.status == TODO]
    assert not todos, todos


def program_weights_match_torch(src: str, graph: bool, what: str = "", todos: Sequence[str] = ()):
    """Converts and runs the training program `src` (its steps compiled when `graph`: the source gets a comment,
    so it is imported again), runs it in torch, and compares the tensors each side lists in its `weights`
    global; no site may be left a TODO but those of the APIs in `todos` (sites the program never reaches), each
    of which must be. Returns the converted code and its sites."""
    import mindspore as ms

    if graph:
        src = src + "# GRAPH\n"
    ms.set_context(mode=ms.GRAPH_MODE if graph else ms.PYNATIVE_MODE)
    try:
        mod, code, sites = load_converted(src, pynative=not graph)
        # the program ran in the mode asked for: its mode line (if any) said so
        assert graph or not re.search(r"mode=\w+\.GRAPH_MODE", open(mod.__file__).read())
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    ref = load_torch(src)
    assert len(mod.weights) == len(ref["weights"])
    for i, (got, want) in enumerate(zip(mod.weights, ref["weights"])):
        assert_close(got, want.detach(), rtol=1e-5, atol=2e-5, what=f"{what}parameter {i} (graph={graph})")
    if todos:
        from msmigrate.registry import TODO
        assert sorted(s.api for s in sites if s.status == TODO) == sorted(todos), sites
    else:
        no_todo(sites)
    return code, sites
