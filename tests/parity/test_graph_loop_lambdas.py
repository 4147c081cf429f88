"""A lambda called where it is written inside a `for` loop (msmigrate/graph_loop_lambdas.py): the converter's own
IIFEs (Tensor.scatter_add_ -> `(lambda _ms_index: ops.tensor_scatter_elements(...))(index)`, vector-quantize's
kmeans) and the program's. Compiled, MindSpore 2.10 returns None for the whole function (or stops with "have
return node!") when a loop body defines a lambda; hoisted in front of the loop, with the function's names it
reads passed in, the graph computes torch's values and gradients."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")

from .harness import assert_close, check_function, load_converted, load_torch, rnd  # noqa: E402

SRC = '''
import torch


def kmeans(samples, means):
    for _ in range(3):
        buckets = torch.cdist(samples, means).argmin(dim=-1)
        new_means = torch.zeros_like(means)
        new_means.scatter_add_(0, buckets[:, None].expand(-1, samples.shape[1]), samples)
        counts = torch.bincount(buckets, minlength=means.shape[0]).clamp(min=1)
        means = new_means / counts[:, None]
    return means


def smooth(x, w):
    for k in range(3):
        if k > 0:
            x = (lambda t, s: torch.tanh(t * s * w) + k)(x, s=0.5)   # a keyword: passed by position
    return x
'''


def _points():
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0], [4.0, 4.0], [-4.0, 4.0]], np.float32)
    samples = (centres[rng.integers(0, 3, 24)] + 0.3 * rng.standard_normal((24, 2))).astype(np.float32)
    return samples, samples[[0, 5, 9]].copy()


def test_converted_scatter_add_in_a_loop_compiles_to_torchs_values():
    code, _ = check_function(SRC, list(_points()), entry="kmeans")       # PyNative, then ms.jit (GRAPH)
    loop = code[code.index("def kmeans"):code.index("def smooth")]
    assert loop.index("= lambda _ms_index") < loop.index("for _ in range(3)"), loop


def test_programs_own_lambda_in_a_loop_values_and_gradients_in_graph():
    x, w = rnd(2, 3, seed=1), rnd(2, 3, seed=2)
    check_function(SRC, [x, w], entry="smooth", grad=True)              # values (both modes), PyNative grads
    _graph_gradients_match(SRC, "smooth", x, w)


def _graph_gradients_match(src, entry, x, w):
    """The gradients of sum(entry(x, w)) with respect to both arguments, compiled (ms.jit), vs torch's."""
    torch = pytest.importorskip("torch")
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    load_torch(src)[entry](tx, tw).sum().backward()
    mod, _, _ = load_converted(src)

    def total(a, b):
        return getattr(mod, entry)(a, b).sum()
    grads = ms.jit(ms.grad(total, grad_position=(0, 1)))(ms.Tensor(x), ms.Tensor(w))
    assert_close(list(grads), [tx.grad, tw.grad], what="GRAPH gradient")


def test_a_cell_whose_construct_loops_over_a_lambda_in_graph_mode():
    src = SRC + '''

class Cluster(torch.nn.Module):
    def forward(self, samples, means):
        return kmeans(samples, means)
'''
    samples, means = _points()
    want = load_torch(src)["Cluster"]()(torch_tensor(samples), torch_tensor(means))
    mod, _, _ = load_converted(src)
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        got = mod.Cluster()(ms.Tensor(samples), ms.Tensor(means))
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    assert got is not None
    assert_close(got, want, what="GRAPH Cell")


def torch_tensor(a):
    import torch
    return torch.from_numpy(a)


# ------------------------------------------------------------------ a lambda handed on as a value in a loop
PASSED = '''
import torch


def apply(t, fn):
    return fn(t)


def scaled(x, w):
    scale = w.sum()
    for k in range(3):
        x = apply(x, lambda t: torch.tanh(t * scale))          # reads a name the loop leaves alone
        x = apply(x, lambda t: t * (k + 1) + w)                 # reads the loop's own k: a factory of it
    return x


def in_comprehension(x, w):
    for k in range(2):
        x = torch.stack([apply(x * j, lambda t: t + w * j) for j in range(2)]).sum(0)       # reads the comp's j
        x = torch.stack([(lambda t: torch.sin(t) * j)(x) for j in range(1, 3)]).sum(0)     # called where written
    return x


def untyped(x, scales):
    total = 0
    for s in scales:
        total = total + (x * s).pow(2).mean()                   # a method on an untyped value: on_tensor's lambdas
    return total
'''


def test_lambdas_passed_in_a_loop_move_in_front_and_compute_torchs_values_in_graph():
    x, w = rnd(2, 3, seed=3), rnd(2, 3, seed=4)
    code, _ = check_function(PASSED, [x, w], entry="scaled", grad=True)   # values (both modes), PyNative grads
    fn = code[code.index("def scaled"):code.index("def in_comprehension")]
    loop = fn.index("for k in range(3)")
    assert fn.index("= lambda t: _ms_compat.precise_tanh") < loop and fn.index("= lambda k: (lambda t:") < loop, fn
    _graph_gradients_match(PASSED, "scaled", x, w)


def test_untyped_method_in_a_loop_of_a_compiled_function_is_not_none():
    torch = pytest.importorskip("torch")
    x = rnd(2, 3, seed=5)
    want = load_torch(PASSED)["untyped"](torch.tensor(x), (1.0, 2.0)).item()
    mod, _, _ = load_converted(PASSED)
    code = open(mod.__file__).read()
    assert "_ms_compat.on_tensor" in code, code      # the construct under test is emitted
    def run(a):
        return mod.untyped(a, (1.0, 2.0))
    got = ms.jit(run)(ms.Tensor(x))
    assert got is not None
    assert_close(np.asarray(got.asnumpy()), np.asarray(want, np.float32))


def test_lambdas_in_a_comprehension_in_a_loop_values_and_gradients_in_graph():
    """A comprehension in a loop with a lambda in it returns None compiled, as a loop body does; outside loops
    it compiles right (and stays as written)."""
    x, w = rnd(2, 3, seed=6), rnd(2, 3, seed=7)
    code, _ = check_function(PASSED, [x, w], entry="in_comprehension", grad=True)
    fn = code[code.index("def in_comprehension"):code.index("def untyped")]
    assert "lambda" not in fn[fn.index("for k in range(2)"):], fn
    _graph_gradients_match(PASSED, "in_comprehension", x, w)
