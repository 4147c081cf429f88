"""Random draws made inside a model's forward, aligned between torch and its conversion.

A forward that draws (a diffusion model's `torch.randint` timesteps and `torch.randn_like` noise) cannot be
compared with its conversion unless both see the same numbers. Used by `msmigrate verify` and the real-world
bench; no import of torch or MindSpore at import time.

Torch side, :class:`TorchDraws` (a context manager around the forward): torch's random functions and in-place
random fills are wrapped so every draw is recorded (API, the file:line of the call in the user's code, the value)
while torch's own generator still makes it, so the forward computes what it always computes. A draw that reaches
torch's generator some other way (F.dropout(training=True), a function bound by name before the patch) is detected
by the generator's state changing between recorded draws, and reported.

MindSpore side, :func:`install`: the mindspore.ops random functions converted code calls (ops.randn, randint,
randn_like, bernoulli...) and the converted in-place fills (_ms_compat.normal_...) are replaced by functions that
hand each draw to ``source(op, kind, template, params)`` at run time, in program order, in PyNative and inside
compiled graphs alike: the draw is a Custom "pyfunc" op marked ``side_effect_io`` (ordered like print) whose output is
what the source returns for a template of the draw's shape and dtype. :class:`RecordedDraws` is verify's source: the
k-th draw of the converted model is torch's k-th draw, checked for kind and shape. A compiled forward that verify
calls once takes torch's draws from a Parameter instead (:class:`BankDraws`): MindSpore cannot run a pyfunc op in a
graph that also holds values it interprets at run time (JIT fallback, e.g. a tensor's `.device`)."""
from __future__ import annotations

import os
import sys
import traceback
from typing import Any, Callable, Optional

import numpy as np

# torch API -> the kind of numbers it draws (what the converted draw must also be)
TORCH_FUNCTIONS = {"randn": "normal", "randn_like": "normal", "normal": "normal", "rand": "uniform",
                   "rand_like": "uniform", "randint": "integer", "randint_like": "integer", "randperm": "permutation",
                   "bernoulli": "bernoulli", "multinomial": "multinomial", "poisson": "poisson"}
# torch.Tensor methods (in-place fills: the filled tensor is the draw)
TORCH_METHODS = {"normal_": "normal", "uniform_": "uniform", "random_": "integer", "bernoulli_": "bernoulli",
                 "bernoulli": "bernoulli", "multinomial": "multinomial", "exponential_": "exponential",
                 "log_normal_": "log_normal", "cauchy_": "cauchy", "geometric_": "geometric"}
# mindspore.ops function -> kind; and _ms_compat's converted in-place fills -> kind
MS_OPS = {"randn": "normal", "randn_like": "normal", "standard_normal": "normal", "normal": "normal",
          "rand": "uniform", "rand_like": "uniform", "uniform": "uniform", "randint": "integer",
          "randint_like": "integer", "bernoulli": "bernoulli", "multinomial": "multinomial", "shuffle": "permutation"}
MS_FILLS = {"normal_": "normal", "uniform_": "uniform", "random_": "integer", "bernoulli_": "bernoulli",
            "exponential_": "exponential", "log_normal_": "log_normal", "cauchy_": "cauchy", "geometric_": "geometric"}

_HERE = os.path.abspath(__file__)


def user_site(skip_dirs=()) -> str:
    """file:line of the innermost frame of the running stack outside this module, `skip_dirs` and the standard
    library ("?" when there is none)."""
    import sysconfig

    std = sysconfig.get_paths().get("stdlib") or "\0"
    skip = tuple(os.path.abspath(d) + os.sep for d in skip_dirs)
    for frame in reversed(traceback.extract_stack()[:-1]):
        path = os.path.abspath(frame.filename)
        if frame.filename.startswith("<") or path == _HERE or path.startswith(skip) or path.startswith(std):
            continue
        return f"{frame.filename}:{frame.lineno}"
    return "?"


# --------------------------------------------------------------------------- torch side


class TorchDraws:
    """Records torch's random draws while the with block runs (see the module docstring).

    ``draws``: [{"api", "kind", "where", "shape", "dtype"}]; ``arrays``: their values; ``unrecorded``: where the
    generator moved without a recorded draw (one line each)."""

    def __init__(self, torch: Any, skip_dirs=()):
        self.torch = torch
        self.skip_dirs = (os.path.dirname(torch.__file__), *skip_dirs)
        self.draws: list = []
        self.arrays: list = []
        self.unrecorded: list = []
        self._undo: list = []
        self._depth = 0
        self._state = None

    def __enter__(self) -> "TorchDraws":
        torch = self.torch
        for name, kind in TORCH_FUNCTIONS.items():
            if hasattr(torch, name):
                self._wrap(torch, name, f"torch.{name}", kind, inplace=False)
        for name, kind in TORCH_METHODS.items():
            if hasattr(torch.Tensor, name):
                self._wrap(torch.Tensor, name, f"Tensor.{name}", kind, inplace=name.endswith("_"))
        self._state = torch.get_rng_state()
        return self

    def __exit__(self, *exc) -> None:
        while self._undo:
            owner, name, value = self._undo.pop()
            setattr(owner, name, value)
        if exc[0] is None:
            self._check_generator("after the last recorded draw" if self.draws else "in the forward")
        return None

    def _check_generator(self, when: str) -> None:
        state = self.torch.get_rng_state()
        if not self.torch.equal(state, self._state):
            self.unrecorded.append(f"{when} (near {user_site(self.skip_dirs)})")
        self._state = state

    def _wrap(self, owner: Any, name: str, api: str, kind: str, inplace: bool) -> None:
        original = getattr(owner, name)
        recorder = self

        def drawn(*args, **kwargs):
            if recorder._depth:
                return original(*args, **kwargs)
            recorder._check_generator(f"before {api}")
            recorder._depth += 1
            try:
                out = original(*args, **kwargs)
            finally:
                recorder._depth -= 1
            value = args[0] if inplace else out
            if isinstance(value, recorder.torch.Tensor):
                arr = value.detach().cpu()
                arr = (arr.float() if arr.dtype == recorder.torch.bfloat16 else arr).numpy().copy()
                recorder.draws.append({"api": api, "kind": kind, "where": user_site(recorder.skip_dirs),
                                       "shape": list(arr.shape), "dtype": str(arr.dtype)})
                recorder.arrays.append(arr)
            recorder._state = recorder.torch.get_rng_state()
            return out

        self._undo.append((owner, name, original))
        setattr(owner, name, drawn)


def describe(draws: list, limit: int = 4) -> str:
    """"torch.randint at f.py:12, torch.randn_like at f.py:20" (the first `limit`, then how many more)."""
    parts = [f"{d['api']} at {d['where']}" for d in draws[:limit]]
    if len(draws) > limit:
        parts.append(f"{len(draws) - limit} more")
    return ", ".join(parts)


# --------------------------------------------------------------------------- MindSpore side


class ReplayError(Exception):
    """The converted model's draws do not line up with torch's."""


class RecordedDraws:
    """verify's source: the converted model's k-th draw is torch's k-th draw (same kind, same shape)."""

    def __init__(self, draws: list, arrays: list):
        self.draws, self.arrays = draws, arrays
        self.pos = 0
        self.error: Optional[str] = None

    def reset(self) -> None:
        self.pos, self.error = 0, None

    def __call__(self, op: str, kind: str, template: np.ndarray, params: np.ndarray) -> np.ndarray:
        k = self.pos
        self.pos += 1
        if self.error is not None:
            raise ReplayError(self.error)
        if k >= len(self.draws):
            return self._fail(f"the converted model's random draw {k + 1} ({op}) has no counterpart: torch's "
                              f"forward drew {len(self.draws)} time(s) ({describe(self.draws)})")
        rec, value = self.draws[k], self.arrays[k]
        if rec["kind"] != kind:
            return self._fail(f"random draw {k + 1}: the converted model calls {op} ({kind} numbers) where torch "
                              f"called {rec['api']} ({rec['kind']}) at {rec['where']}")
        if kind == "permutation":   # ops.shuffle(x) of torch.randperm(n): x in torch's order
            if value.ndim != 1 or not template.shape or value.shape[0] != template.shape[0]:
                return self._fail(f"random draw {k + 1}: {op} shuffles {template.shape[:1]} rows but torch's "
                                  f"{rec['api']} at {rec['where']} drew {list(value.shape)}")
            return template[value.astype(np.int64)]
        if tuple(value.shape) != tuple(template.shape):
            return self._fail(f"random draw {k + 1}: the converted model's {op} draws shape {list(template.shape)} "
                              f"where torch's {rec['api']} at {rec['where']} drew {list(value.shape)}")
        return value

    def _fail(self, message: str):
        self.error = message
        raise ReplayError(message)

    def problem(self) -> Optional[str]:
        """After a forward: why the draws did not line up (None when every draw was replayed)."""
        if self.error is not None:
            return self.error
        if self.pos < len(self.draws):
            missed = self.draws[self.pos]
            return (f"the converted model made {self.pos} of torch's {len(self.draws)} random draws: draw "
                    f"{self.pos + 1} ({missed['api']} at {missed['where']}) has no counterpart")
        return None


def install(ms: Any, source: Callable, compat_modules=(), takers: Optional[dict] = None) -> Callable[[], None]:
    """Replace mindspore.ops' random functions (and the in-place fills of each `_ms_compat` module in
    `compat_modules`) by draws from ``source(op, kind, template, params) -> ndarray``; returns the undo function.
    `takers` (see replay_functions) draws inside graphs some other way.

    Install before a graph that draws is compiled: the compiled graph keeps the replaying ops."""
    undo = []
    for op, fn in replay_functions(ms, source, takers).items():
        undo.append((ms.ops, op, getattr(ms.ops, op)))
        setattr(ms.ops, op, fn)
    for compat in compat_modules:
        for name, kind in MS_FILLS.items():
            if hasattr(compat, name) and hasattr(compat, "_assign"):
                undo.append((compat, name, getattr(compat, name)))
                setattr(compat, name, _fill(ms, compat, source, name, kind))

    def restore():
        while undo:
            owner, name, value = undo.pop()
            setattr(owner, name, value)
    return restore


def pyfunc_takers(ms: Any, source: Callable) -> dict:
    """{op: take(template, params)}: a Custom "pyfunc" op that asks ``source`` when it runs (ordered: side_effect_io).
    MindSpore cannot run it inside a graph that also holds values it interprets at run time (JIT fallback: its
    AnyType kernel graphs need a PrimitivePy); BankDraws has no such limit."""
    ops = ms.ops
    zeros_like = ops.zeros_like

    def zero_grads(template, params, out, dout):    # a draw does not depend on its template
        return zeros_like(template), zeros_like(params)

    def custom(op, kind):
        def pyfunc(template, params):
            out = source(f"ops.{op}", kind, template, params)
            return np.ascontiguousarray(np.asarray(out).astype(template.dtype).reshape(template.shape))
        prim = ops.Custom(pyfunc, out_shape=lambda s, p: s, out_dtype=lambda d, p: d, func_type="pyfunc",
                          bprop=zero_grads)
        prim.add_prim_attr("side_effect_io", True)     # draws run in program order, as torch's do
        return prim
    return {op: custom(op, kind) for op, kind in MS_OPS.items()}


class BankDraws:
    """Torch's recorded draws for a compiled graph (verify's GRAPH run, where the forward runs once): all of them,
    flattened in order, in a Parameter the graph reads from at an offset held in a second Parameter and advanced by
    each draw (Parameter updates keep program order). Plain MindSpore ops: any graph, gradients unaffected. The
    per-draw kind and shape checks are PyNative's (RecordedDraws); here the numbers taken are counted."""

    def __init__(self, ms: Any, arrays: list):
        flat = [np.asarray(a, np.float64).ravel() for a in arrays]
        self.total = int(sum(f.size for f in flat))
        self.bank = ms.Parameter(ms.Tensor(np.concatenate(flat + [np.zeros(1)])), name="msmigrate_draw_bank",
                                 requires_grad=False)
        self.offset = ms.Parameter(ms.Tensor(0, ms.int64), name="msmigrate_draw_offset", requires_grad=False)
        self.ms = ms

    def taken(self) -> int:
        return int(self.offset.asnumpy())

    def takers(self) -> dict:
        ms, ops = self.ms, self.ms.ops
        bank, offset, i64, tensor = self.bank, self.offset, ms.int64, ms.Tensor
        gather, arange, reshape, assign_add = ops.gather, ops.arange, ops.reshape, ops.assign_add

        def take(template, params):
            n = template.size
            start = offset + 0          # read before the update below
            assign_add(offset, tensor(n, i64))
            return reshape(gather(bank, start + arange(n, dtype=i64), 0), template.shape).astype(template.dtype)

        def take_permutation(x, params):
            n = x.shape[0]
            start = offset + 0
            assign_add(offset, tensor(n, i64))
            return gather(x, gather(bank, start + arange(n, dtype=i64), 0).astype(i64), 0)
        return {op: take_permutation if kind == "permutation" else take for op, kind in MS_OPS.items()}


def replay_functions(ms: Any, source: Callable, takers: Optional[dict] = None) -> dict:
    """{name: a stand-in for mindspore.ops.<name>} (MS_OPS) whose draws come from ``source(op, kind, template,
    params)`` when they run (params: [low, high] for integers, else unused), or from `takers` ({op: take(template,
    params)}, BankDraws.takers) when given."""
    ops = ms.ops
    zeros, zeros_like, tensor = ops.zeros, ops.zeros_like, ms.Tensor
    prims = takers if takers is not None else pyfunc_takers(ms, source)
    f32, i64, i32 = ms.float32, ms.int64, ms.int32
    none = tensor(np.zeros(1, np.float32))
    p_randn, p_rand, p_std, p_normal = prims["randn"], prims["rand"], prims["standard_normal"], prims["normal"]
    p_randn_like, p_rand_like, p_uniform = prims["randn_like"], prims["rand_like"], prims["uniform"]
    p_randint, p_randint_like, p_bernoulli = prims["randint"], prims["randint_like"], prims["bernoulli"]
    p_multinomial, p_shuffle = prims["multinomial"], prims["shuffle"]

    # written for MindSpore's graph parser too: closures only, no module globals
    def randn(*size, dtype=None, seed=None):
        shape = size[0] if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
        return p_randn(zeros(shape, f32 if dtype is None else dtype), none)

    def rand(*size, dtype=None, seed=None):
        shape = size[0] if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
        return p_rand(zeros(shape, f32 if dtype is None else dtype), none)

    def standard_normal(shape, seed=None):
        return p_std(zeros(shape, f32), none)

    def normal(shape, mean, stddev, seed=None):
        return p_normal(zeros(shape, f32), none)

    def randn_like(input, seed=None, *, dtype=None):
        return p_randn_like(zeros_like(input) if dtype is None else zeros(input.shape, dtype), none)

    def rand_like(input, seed=None, *, dtype=None):
        return p_rand_like(zeros_like(input) if dtype is None else zeros(input.shape, dtype), none)

    def uniform(shape, minval, maxval, seed=None, dtype=f32):
        return p_uniform(zeros(shape, dtype), none)

    # integer draws carry no gradient: without stop_gradient, a compiled step's backward sums the adjoints of a
    # draw its users give (an index's int64 zeros, a true division's float32: `self.sqrtab[_ts]` and
    # `model(x, _ts / n_T)`, minDiffusion's DDPM) to feed the Custom op's bprop, and AddN refuses the mixed types
    stop = ops.stop_gradient

    def randint(low, high, size, seed=None, *, dtype=None):
        return stop(p_randint(zeros(size, i64 if dtype is None else dtype), tensor([low, high], i64)))

    def randint_like(input, low, high, seed=None, *, dtype=None):
        return stop(p_randint_like(zeros(input.shape, input.dtype if dtype is None else dtype),
                                   tensor([low, high], i64)))

    def bernoulli(input, p=0.5, seed=None):
        return p_bernoulli(zeros_like(input), none)

    def multinomial(input, num_samples, replacement=True, seed=None):
        return stop(p_multinomial(zeros(input.shape[:-1] + (num_samples,), i32), none))

    def shuffle(x, seed=None):
        return p_shuffle(x, none)

    local = locals()
    return {op: local[op] for op in MS_OPS}


_GRAPH_FILLS = {"normal_": "standard_normal", "uniform_": "rand"}   # a fill the helper also draws inside a graph


def _fill(ms: Any, compat: Any, source: Callable, name: str, kind: str) -> Callable:
    """A converted in-place fill (x.normal_() -> _ms_compat.normal_(x)): a host draw; inside a compiled graph (the
    helper's normal_/uniform_ of a plain tensor draw there) the replaying op install() put in mindspore.ops, whose
    value is torch's draw itself (its mean and std, or bounds, already applied)."""
    def fill(x, *args, **kwargs):
        if name in _GRAPH_FILLS and not isinstance(x, ms.Parameter) and compat._compiling(compat._draw_probe):
            value = getattr(ms.ops, _GRAPH_FILLS[name])(tuple(x.shape)).astype(x.dtype)
            x.copy_(value)
            return value
        template = np.zeros(tuple(x.shape), ms.dtype_to_nptype(x.dtype))
        value = source(f"_ms_compat.{name}", kind, template, np.zeros(1, np.float32))
        return compat._assign(x, ms.Tensor(np.asarray(value).astype(template.dtype)))
    return fill


def compat_modules() -> list:
    """The converted projects' `_ms_compat` helper modules already imported (their fills are replayed too)."""
    return [m for n, m in list(sys.modules.items())
            if m is not None and (n == "_ms_compat" or n.endswith("._ms_compat")) and hasattr(m, "MigrationError")]


class replaying:
    """with replaying(ms, source): the forward inside draws from `source` (reset first); nothing when source is None.
    bank=True (a compiled forward): the draws come from a BankDraws of the same record, `self.bank`."""

    def __init__(self, ms: Any, source: Optional[RecordedDraws], bank: bool = False):
        self.ms, self.source, self._undo = ms, source, None
        self.bank = BankDraws(ms, source.arrays) if bank and source is not None else None

    def __enter__(self):
        if self.source is not None:
            self.source.reset()
            takers = self.bank.takers() if self.bank is not None else None
            self._undo = install(self.ms, self.source, compat_modules(), takers)
        return self

    def problem(self) -> Optional[str]:
        """After the forward: why its draws did not line up with torch's (None when they did)."""
        if self.source is None:
            return None
        if self.bank is None:
            return self.source.problem()
        taken, total = self.bank.taken(), self.bank.total
        if taken == total:
            return None
        return (f"the compiled model took {taken} random numbers where torch's forward drew {total} "
                f"({describe(self.source.draws)}); run PyNative for the draw that differs")

    def __exit__(self, *exc):
        if self._undo is not None:
            self._undo()
        return None


def recorded_source(data: Any, meta: dict) -> Optional[RecordedDraws]:
    """verify's replay source from a torch record (None when torch's forward drew nothing)."""
    draws = meta.get("draws") or []
    if not draws:
        return None
    return RecordedDraws(draws, [data[f"draw/{i}"] for i in range(len(draws))])


def summary(draws: list, unrecorded: list) -> str:
    """One report line about the forward's random draws ("" when it drew none)."""
    parts = []
    if draws:
        parts.append(f"{len(draws)} in torch's forward, replayed in order on the MindSpore side ({describe(draws)})")
    if unrecorded:
        parts.append("torch's generator also moved outside the replayed APIs, so those draws are not aligned: "
                     + "; ".join(unrecorded[:3]))
    return "; ".join(parts)
