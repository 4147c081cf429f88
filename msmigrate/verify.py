"""Numerical parity check: a torch model against its MindSpore conversion.

``msmigrate verify`` builds both models, copies the torch weights into the MindSpore
net, feeds identical seeded inputs and compares every output in PyNative and GRAPH
mode.  On failure it names the first divergent submodule, found by comparing
per-layer outputs recorded with torch forward hooks against MindSpore
``Cell.register_forward_hook`` outputs (PyNative only).

The two frameworks never share a process:

* :func:`record_torch` runs where torch is importable and writes one ``.npz``
  (state_dict, inputs, flattened outputs, per-layer inputs/outputs, JSON metadata);
* :func:`check_mindspore` runs in a process that never imports torch (checked, and
  ``import torch`` is blocked in the CLI's worker) and returns a :class:`VerifyResult`;
* :func:`main_verify` (the CLI) runs each side with ``sys.executable -m
  msmigrate.verify _record-torch|_check-ms`` so each gets a clean interpreter.

``--train N`` (:mod:`msmigrate.verify_train`) compares N optimizer steps instead: per-step
losses and final weights, with the training loop as msmigrate converts it.

Exit codes: 0 pass, 1 parity failure (including a MindSpore side that fails to build,
load weights or run), 2 usage/input errors (bad spec or shape, torch side that cannot
run); errors are one line, never a traceback.

This module imports neither torch nor mindspore at import time.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable, Optional, Sequence, Union

import numpy as np

from .terminal import result_table, rich_console

__all__ = [
    "InputSpec",
    "OutputDiff",
    "ModeResult",
    "LayerDivergence",
    "VerifyResult",
    "VerifyUsageError",
    "parse_input_spec",
    "make_inputs",
    "compare_arrays",
    "record_torch",
    "check_mindspore",
    "main_verify",
]

MODES = ("pynative", "graph")
DEFAULT_RTOL = 1e-4
DEFAULT_INT_HIGH = 10
NPZ_FORMAT = 1

_DTYPE_ALIASES = {
    "float32": "float32", "float": "float32", "f32": "float32", "fp32": "float32",
    "float16": "float16", "half": "float16", "f16": "float16", "fp16": "float16",
    "float64": "float64", "double": "float64", "f64": "float64", "fp64": "float64",
    "int64": "int64", "long": "int64", "i64": "int64",
    "int32": "int32", "int": "int32", "i32": "int32",
    "bool": "bool",
}


class VerifyUsageError(Exception):
    """Bad invocation or input (exit status 2)."""


class _SpecNotFound(VerifyUsageError):
    """MODULE:CALLABLE could not be located."""


# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class InputSpec:
    shape: tuple
    dtype: str = "float32"

    def describe(self) -> str:
        return f"({','.join(map(str, self.shape))}) {self.dtype}"


def _parse_dtype(text: str) -> str:
    key = str(text).strip().lower()
    if key.startswith("torch.") or key.startswith("np.") or key.startswith("numpy."):
        key = key.split(".", 1)[1]
    if key not in _DTYPE_ALIASES:
        raise VerifyUsageError(
            f"unknown dtype {text!r} (use one of float32, float16, float64, int32, int64, bool)")
    return _DTYPE_ALIASES[key]


def _parse_shape(text: str) -> tuple:
    if str(text).strip() in ("()", "scalar"):      # a 0-d tensor (a character index fed one at a time)
        return ()
    parts = [p.strip() for p in str(text).replace("x", ",").split(",")]
    if not parts or any(p == "" for p in parts):
        raise VerifyUsageError(f"bad input shape {text!r} (expected e.g. 2,3,64,64)")
    try:
        shape = tuple(int(p) for p in parts)
    except ValueError:
        raise VerifyUsageError(f"bad input shape {text!r} (expected e.g. 2,3,64,64)") from None
    if any(d < 0 for d in shape):
        # 0 is a size torch takes (TabTransformer's categories-only model called with a (6, 0) continuous input)
        raise VerifyUsageError(f"bad input shape {text!r}: dimensions must not be negative")
    _check_input_size(text, shape)
    return shape


MAX_INPUT_DIMS = 32                  # NumPy's limit
MAX_INPUT_ELEMENTS = 2 ** 26         # 256 MiB of float32 per input, held by torch and MindSpore at once
_INPUT_ELEMENTS_ENV = "MSMIGRATE_MAX_INPUT_ELEMENTS"


def _check_input_size(text: str, shape: tuple) -> None:
    """A mistyped shape (2,3,224,2240000) must not allocate gigabytes before anything is compared."""
    if len(shape) > MAX_INPUT_DIMS:
        raise VerifyUsageError(f"bad input shape {text!r}: {len(shape)} dimensions, at most {MAX_INPUT_DIMS}")
    raw = os.environ.get(_INPUT_ELEMENTS_ENV, "")
    limit = int(raw) if raw.isdigit() and int(raw) > 0 else MAX_INPUT_ELEMENTS
    numel = 1
    for d in shape:
        numel *= d
    if numel > limit:
        raise VerifyUsageError(f"input shape {text!r} has {numel} elements, more than the limit of {limit}; "
                               f"set {_INPUT_ELEMENTS_ENV} to raise it")


def parse_input_spec(obj: Any, dtype: Optional[str] = None) -> InputSpec:
    """``"2,3,64,64"``, ``"2,16:int64"``, ``((2, 16), "int64")``, ``(2, 3)``, a dict or an
    :class:`InputSpec` -> :class:`InputSpec`."""
    if isinstance(obj, InputSpec):
        return InputSpec(obj.shape, _parse_dtype(dtype or obj.dtype))
    if isinstance(obj, dict):
        return InputSpec(_parse_shape(",".join(map(str, obj["shape"])) or "()"),
                         _parse_dtype(dtype or obj.get("dtype", "float32")))
    if isinstance(obj, str):
        shape_text, _, dt = obj.partition(":")
        if dt and dtype and _parse_dtype(dt) != _parse_dtype(dtype):
            raise VerifyUsageError(f"input {obj!r} has two dtypes ({dt} and {dtype})")
        return InputSpec(_parse_shape(shape_text), _parse_dtype(dtype or dt or "float32"))
    if isinstance(obj, (tuple, list)):
        if len(obj) == 2 and isinstance(obj[0], (tuple, list)) and isinstance(obj[1], str):
            return parse_input_spec(",".join(map(str, obj[0])), dtype or obj[1])
        if all(isinstance(d, int) for d in obj) and obj:
            return parse_input_spec(",".join(map(str, obj)), dtype)
    raise VerifyUsageError(f"bad input spec {obj!r}")


def _normalize_inputs(inputs_spec: Any) -> list:
    if isinstance(inputs_spec, (str, InputSpec, dict)):
        inputs_spec = [inputs_spec]
    if (isinstance(inputs_spec, (tuple, list)) and inputs_spec
            and all(isinstance(d, int) for d in inputs_spec)):
        inputs_spec = [inputs_spec]
    specs = [parse_input_spec(s) for s in inputs_spec or ()]
    if not specs:
        raise VerifyUsageError("at least one input shape is required (--input 2,3,64,64)")
    return specs


def make_inputs(inputs_spec: Any, seed: int = 0, int_high: int = DEFAULT_INT_HIGH) -> list:
    """Seeded numpy inputs: standard normal floats, integers in ``[0, int_high)``,
    fair-coin booleans.  Pure numpy, so both sides could regenerate them."""
    rng = np.random.default_rng(seed)
    arrays = []
    for spec in _normalize_inputs(inputs_spec):
        if spec.dtype.startswith("float"):
            arrays.append(rng.standard_normal(spec.shape).astype(spec.dtype))
        elif spec.dtype == "bool":
            arrays.append(rng.random(spec.shape) < 0.5)
        else:
            arrays.append(rng.integers(0, int_high, size=spec.shape, dtype=spec.dtype))
    return arrays


# --------------------------------------------------------------------------- building


def _parse_spec(spec: str) -> tuple:
    if not isinstance(spec, str) or spec.count(":") != 1:
        raise _SpecNotFound(f"bad model spec {spec!r}: expected MODULE:CALLABLE, e.g. pkg.models:resnet18")
    mod, attr = spec.split(":")
    mod, attr = mod.strip(), attr.strip()
    ident = lambda s: all(p.isidentifier() for p in s.split("."))  # noqa: E731
    if not mod or not attr or not ident(mod) or not ident(attr):
        raise _SpecNotFound(f"bad model spec {spec!r}: expected MODULE:CALLABLE, e.g. pkg.models:resnet18")
    return mod, attr


def _import_roots(path: Union[None, str, Sequence[str]]) -> list:
    if path is None or path == "":
        return []
    paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
    out = []
    for p in paths:
        p = os.path.abspath(os.fspath(p))
        if not os.path.isdir(p):
            raise VerifyUsageError(f"import root {p} is not a directory")
        out.append(p)
    return out


def _build(spec: str, path: Union[None, str, Sequence[str]], side: str) -> Any:
    """Import MODULE:CALLABLE (``path`` prepended to sys.path) and call it with no args.

    Raises :class:`_SpecNotFound` when the module or callable cannot be located; any
    other exception from importing or calling propagates."""
    mod_name, attr = _parse_spec(spec)
    for root in reversed(_import_roots(path)):
        if root in sys.path:
            sys.path.remove(root)
        sys.path.insert(0, root)
    importlib.invalidate_caches()
    where = f" (import roots: {', '.join(_import_roots(path))})" if path else ""
    try:
        module = importlib.import_module(mod_name)
    except ModuleNotFoundError as e:
        parts = mod_name.split(".")
        prefixes = {".".join(parts[: i + 1]) for i in range(len(parts))}
        if e.name in prefixes:
            raise _SpecNotFound(f"{side}: cannot import module {mod_name!r}{where}: {e}") from None
        raise
    obj = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise _SpecNotFound(f"{side}: module {mod_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise _SpecNotFound(f"{side}: {spec} is not callable")
    return obj()


def _one_line(exc: BaseException, limit: int = 400) -> str:
    text = str(exc).strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not set(ln.strip()) <= set("-=")]
    msg = lines[0] if lines else ""
    msg = f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__
    msg = msg if len(msg) <= limit else msg[: limit - 3] + "..."
    from .extras import hint
    return msg + hint(exc)    # e.g. the CPU torchvision wheel to install


def _detail(exc: BaseException, limit: int = 8000) -> str:
    """The traceback (for --json's error_detail), its end kept when it is long."""
    import traceback

    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).rstrip()
    return text if len(text) <= limit else "..." + text[-limit:]


def reported(result: Any, print_report: Callable[[Any], None], json_path: Optional[str]) -> int:
    """A command's end: its report printed, its --json file written; returns its exit status."""
    print_report(result)
    write_json_result(json_path, result)
    return result.exit_code


def record_error(result: Any, what: str, exc: BaseException) -> Any:
    """`result` (a verify, verify --train or export result) failed at `what`: its one-line error and,
    for --json, the traceback. Returns `result`."""
    result.error = f"{what}: {_one_line(exc)}"
    result.error_detail = _detail(exc)
    return result


def _user_site(exc: BaseException) -> str:
    """" (at FILE:LINE)" for the innermost traceback frame in the user's code (not msmigrate, not an
    installed library, not the standard library); "" when there is none."""
    import sysconfig
    import traceback

    own = os.path.dirname(os.path.abspath(__file__))
    libs = {os.path.abspath(p) for p in (sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("purelib"),
                                         sysconfig.get_paths().get("platlib")) if p}
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        path = os.path.abspath(frame.filename)
        if frame.filename.startswith("<") or path.startswith(own) or any(path.startswith(p) for p in libs):
            continue
        return f" (at {frame.filename}:{frame.lineno})"
    return ""


# --------------------------------------------------------------------------- comparison


def _flatten(obj: Any, is_leaf: Callable[[Any], bool], to_np: Callable[[Any], np.ndarray],
             prefix: str = "out") -> list:
    """Tensors, tuples/lists/dicts of tensors -> [(path, ndarray)] in order; other leaves
    (None, Python numbers, strings) are skipped."""
    found = []

    def rec(o, p):
        if is_leaf(o):
            found.append((p, to_np(o)))
        elif isinstance(o, dict):
            for k, v in o.items():
                rec(v, f"{p}[{k!r}]")
        elif isinstance(o, (list, tuple)):
            for i, v in enumerate(o):
                rec(v, f"{p}[{i}]")

    rec(obj, prefix)
    return found


def compare_arrays(t: np.ndarray, m: Optional[np.ndarray], rtol: float) -> dict:
    """Compare a torch array ``t`` with a MindSpore array ``m``.

    Pass when ``max|t - m| <= rtol * max(1, max|t|)``.  ``max_rel`` is ``max|t - m| /
    max|t|`` (relative to the output's largest magnitude).  NaN at the same positions
    counts as equal; different NaN patterns or shapes fail."""
    t = np.asarray(t)
    res = {"shape_torch": list(t.shape), "dtype_torch": str(t.dtype), "shape_ms": None,
           "dtype_ms": None, "max_abs": None, "max_rel": None, "tol": None, "passed": False,
           "note": ""}
    if m is None:
        res["note"] = "missing on the MindSpore side"
        return res
    m = np.asarray(m)
    res["shape_ms"], res["dtype_ms"] = list(m.shape), str(m.dtype)
    work = np.complex128 if (np.iscomplexobj(t) or np.iscomplexobj(m)) else np.float64
    a = t.astype(work)
    finite_a = np.abs(a[np.isfinite(a)]) if a.size else np.zeros(0)
    scale = float(finite_a.max()) if finite_a.size else 0.0
    tol = rtol * max(1.0, scale)
    res["tol"] = tol
    if t.shape != m.shape:
        res["note"] = f"shape {tuple(t.shape)} vs {tuple(m.shape)}"
        return res
    b = m.astype(work)
    notes = []
    if t.dtype.kind != m.dtype.kind or (t.dtype.kind == "f" and t.dtype != m.dtype):
        notes.append(f"dtype {t.dtype} vs {m.dtype}")
    if a.size == 0:
        max_abs = 0.0
    else:
        nan_a, nan_b = np.isnan(a), np.isnan(b)
        same = (a == b) | (nan_a & nan_b)
        with np.errstate(invalid="ignore", over="ignore"):
            d = np.where(same, 0.0, np.abs(a - b))
        if np.isnan(d).any():
            notes.append("NaN mismatch")
            max_abs = math.inf
        else:
            max_abs = float(d.max())
            if math.isinf(max_abs):
                notes.append("inf mismatch")
    res["max_abs"] = max_abs
    res["max_rel"] = (max_abs / scale) if scale > 0 else max_abs
    res["passed"] = bool(max_abs <= tol)
    res["note"] = "; ".join(notes)
    return res


# --------------------------------------------------------------------------- results


def _jsonable(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    return x


def _unjson_float(x: Any) -> Any:
    return float(x) if isinstance(x, str) and x in ("nan", "inf", "-inf") else x


@dataclass
class OutputDiff:
    path: str
    shape_torch: list
    dtype_torch: str
    shape_ms: Optional[list]
    dtype_ms: Optional[str]
    max_abs: Optional[float]
    max_rel: Optional[float]
    tol: Optional[float]
    passed: bool
    note: str = ""


@dataclass
class ModeResult:
    mode: str
    status: str  # "pass" | "fail" | "error"
    outputs: list = field(default_factory=list)  # [OutputDiff]
    error: Optional[str] = None
    error_detail: Optional[str] = None
    seconds: Optional[float] = None  # first call, compile included


@dataclass
class LayerDivergence:
    name: str
    call: int
    type_torch: str
    type_ms: Optional[str]
    max_abs: Optional[float]
    max_rel: Optional[float]
    tol: Optional[float]
    inputs_differ: Optional[bool]  # None: could not tell
    index: int  # position in torch execution (completion) order
    output: str = ""  # which flattened output of the layer diverged
    note: str = ""

    def describe(self) -> str:
        call = f" (call {self.call + 1})" if self.call else ""
        if self.max_abs is not None:
            what = f"max|d| {_fmt(self.max_abs)} > tol {_fmt(self.tol)} (rel {_fmt(self.max_rel)})"
            if self.output and self.output != "out":
                what += f" at {self.output}"
            notes = [self.note] if self.note else []
        else:
            what, notes = (self.note or "differs"), []
        inp = {True: "inputs already differed", False: "inputs agree", None: "inputs not compared"}
        notes.insert(0, inp[self.inputs_differ])
        return (f"'{self.name}'{call} [torch {self.type_torch} / mindspore {self.type_ms or '?'}] "
                f"{what}; {'; '.join(notes)}")


class Verdict:
    """Base of the commands' result dataclasses: exit status 0 when `passed`, else 1."""

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1

    def to_dict(self) -> dict:
        return _jsonable(result_dict(self))


def from_known_fields(cls: Any, d: dict) -> Any:
    """An instance of the dataclass `cls` from the entries of `d` that are its fields (a --json file
    written by another version may have more)."""
    known = set(cls.__dataclass_fields__)
    return cls(**{k: v for k, v in d.items() if k in known})


@dataclass
class VerifyResult(Verdict):
    torch_spec: str = ""
    ms_spec: str = ""
    rtol: float = DEFAULT_RTOL
    seed: int = 0
    inputs: list = field(default_factory=list)  # [{"shape", "dtype"}]
    modes: list = field(default_factory=list)  # [ModeResult]
    divergence: Optional[LayerDivergence] = None
    localization: str = ""  # how the divergence search went, one line
    error: Optional[str] = None  # MindSpore side could not build / load weights
    error_detail: Optional[str] = None
    weights: str = ""  # msmigrate.weights' summary of the torch -> MindSpore weight mapping
    layers_compared: int = 0
    layers_missing_in_ms: list = field(default_factory=list)
    torch_imported_on_ms_side: bool = False
    launch_blocking: bool = False  # PyNative ran with mindspore.runtime.launch_blocking()
    versions: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)
    draws: list = field(default_factory=list)  # torch's random draws in the forward (msmigrate.draw_replay)
    draws_unrecorded: list = field(default_factory=list)  # where torch's generator moved outside them

    @property
    def passed(self) -> bool:
        return self.error is None and bool(self.modes) and all(m.status == "pass" for m in self.modes)

    @classmethod
    def from_dict(cls, d: dict) -> "VerifyResult":
        d = without_derived(d)
        modes = []
        for m in d.pop("modes", []):
            m = dict(m)
            m["outputs"] = [OutputDiff(**unjson_floats(o)) for o in m.get("outputs", [])]
            modes.append(ModeResult(**m))
        div = d.pop("divergence", None)
        r = from_known_fields(cls, d)
        r.modes = modes
        r.divergence = LayerDivergence(**unjson_floats(div)) if div else None
        return r


def result_dict(result) -> dict:
    """A result dataclass (verify, verify --train) as a dict with its derived `passed` and `exit_code`."""
    d = asdict(result)
    d["passed"] = result.passed
    d["exit_code"] = result.exit_code
    return d


def without_derived(d: dict) -> dict:
    """A result dict read back from --json, less the fields result_dict derives."""
    return {k: v for k, v in d.items() if k not in ("passed", "exit_code")}


def unjson_floats(x: dict) -> dict:
    """The values of a dict read back from --json with inf/nan restored."""
    return {k: _unjson_float(v) for k, v in x.items()}


def _fmt(x: Optional[float], fmt: str = ".2e") -> str:
    """A number for a report's table ("-" for none, nan and inf spelt out)."""
    if x is None:
        return "-"
    if isinstance(x, str):
        return x
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf"
    return format(x, fmt)


# --------------------------------------------------------------------------- torch side


def _torch_to_np(t: Any) -> np.ndarray:
    import torch

    if isinstance(t, np.ndarray):       # a NumPy output (`w.data.numpy()` returned by forward), as _ms_leaf takes
        return t.copy()
    t = t.detach().cpu()
    if t.dtype in (torch.bfloat16,) or str(t.dtype).startswith("torch.float8"):
        t = t.float()
    return t.numpy().copy()


class _TorchRecorder:
    """Forward pre-hooks and hooks on every named submodule; records, in completion
    order, each call's flattened inputs and outputs.  Identical arrays (same tensor,
    unchanged values) are stored once."""

    def __init__(self, model: Any):
        import torch

        self._torch = torch
        self.arrays: dict = {}
        self.layers: list = []
        self._seen: dict = {}  # id(tensor) -> (tensor, key, array)
        self._calls: dict = {}
        self._stack: dict = {}
        self._handles = []
        for name, mod in model.named_modules():
            if not name:
                continue
            self._handles.append(mod.register_forward_pre_hook(self._pre(name), with_kwargs=True))
            self._handles.append(mod.register_forward_hook(self._post(name)))

    def _store(self, t: Any) -> str:
        arr = _torch_to_np(t)
        hit = self._seen.get(id(t))
        if hit is not None and hit[2].shape == arr.shape and hit[2].dtype == arr.dtype \
                and np.array_equal(hit[2], arr, equal_nan=arr.dtype.kind in "fc"):
            return hit[1]
        key = f"L/{len(self.arrays)}"
        self.arrays[key] = arr
        self._seen[id(t)] = (t, key, arr)  # keep t alive so its id is not reused
        return key

    def _leaves(self, obj: Any, prefix: str) -> list:
        is_t = lambda o: isinstance(o, self._torch.Tensor)  # noqa: E731
        return _flatten(obj, is_t, lambda o: o, prefix)

    def _pre(self, name: str):
        def hook(module, args, kwargs):
            call = self._calls.get(name, 0)
            self._calls[name] = call + 1
            keys = [self._store(t) for _, t in self._leaves((tuple(args), dict(kwargs or {})), "in")]
            self._stack.setdefault(name, []).append((call, keys))
        return hook

    def _post(self, name: str):
        def hook(module, args, output):
            stack = self._stack.get(name) or [(self._calls.get(name, 1) - 1, None)]
            call, in_keys = stack.pop()
            leaves = self._leaves(output, "out")
            tp = type(module)
            self.layers.append({
                "name": name, "call": call, "type": tp.__name__,
                "type_full": f"{tp.__module__}.{tp.__qualname__}",
                "inputs": in_keys, "outputs": [self._store(t) for _, t in leaves],
                "out_paths": [p for p, _ in leaves],
            })
        return hook

    def close(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles = []
        self._seen = {}


def build_torch_model(spec: str, path: Any, seed: int) -> Any:
    """The torch model ``spec`` builds, with torch and NumPy seeded by ``seed`` first. Raises
    :class:`VerifyUsageError` when it cannot be built or is not a torch.nn.Module."""
    import torch

    torch.manual_seed(seed)
    np.random.seed(seed % (2 ** 32))
    try:
        model = _build(spec, path, "torch")
    except VerifyUsageError:
        raise
    except Exception as e:  # noqa: BLE001
        raise VerifyUsageError(f"torch: building {spec} failed: {_one_line(e)}") from None
    if not isinstance(model, torch.nn.Module):
        raise VerifyUsageError(f"torch: {spec} returned {type(model).__name__}, not a torch.nn.Module")
    return model


def record_torch(spec: str, path: Union[None, str, Sequence[str]], inputs_spec: Any,
                 out_npz: str, seed: int = 0, per_layer: bool = True,
                 int_high: int = DEFAULT_INT_HIGH) -> dict:
    """Build the torch model ``spec`` (MODULE:CALLABLE, ``path`` prepended to sys.path),
    ``eval()`` it, run it under ``no_grad`` on seeded inputs and save one ``.npz``:

    ``sd/<name>`` state_dict entries, ``in/<i>`` inputs, ``out/<i>`` flattened outputs,
    ``L/<k>`` per-layer arrays and ``meta`` (JSON: specs, key orders, output paths,
    per-layer records in torch completion order).  Returns the metadata dict.

    Raises :class:`VerifyUsageError` when the model cannot be located, built or run."""
    t0 = time.perf_counter()
    import torch

    t_import = time.perf_counter() - t0
    specs = _normalize_inputs(inputs_spec)
    t1 = time.perf_counter()
    model = build_torch_model(spec, path, seed)
    model.eval()
    t_build = time.perf_counter() - t1
    inputs = make_inputs(specs, seed, int_high)
    arrays: dict = {}
    sd_keys = []
    for k, v in model.state_dict().items():
        if isinstance(v, torch.Tensor):
            sd_keys.append(k)
            arrays[f"sd/{k}"] = _torch_to_np(v)
    for i, a in enumerate(inputs):
        arrays[f"in/{i}"] = a
    recorder = _TorchRecorder(model) if per_layer else None
    t2 = time.perf_counter()
    np.random.seed(seed % (2 ** 32))   # NumPy draws in forward: the MindSpore side reseeds alike
    from .draw_replay import TorchDraws
    draws = TorchDraws(torch, skip_dirs=[os.path.dirname(os.path.abspath(__file__))])
    try:
        with torch.no_grad(), draws:    # torch's random draws, replayed on the MindSpore side
            out = model(*[torch.from_numpy(a.copy()) for a in inputs])
    except Exception as e:  # noqa: BLE001
        raise VerifyUsageError(f"torch: forward of {spec} on inputs "
                               f"{', '.join(s.describe() for s in specs)} failed: {_one_line(e)}") from None
    finally:
        if recorder is not None:
            recorder.close()
    t_run = time.perf_counter() - t2
    flat = _flatten(out, lambda o: isinstance(o, (torch.Tensor, np.ndarray)), _torch_to_np)
    if not flat:
        raise VerifyUsageError(f"torch: {spec} returned no tensors ({type(out).__name__})")
    for i, (_, a) in enumerate(flat):
        arrays[f"out/{i}"] = a
    if recorder is not None:
        arrays.update(recorder.arrays)
    arrays.update({f"draw/{i}": a for i, a in enumerate(draws.arrays)})
    meta = {
        "format": NPZ_FORMAT,
        "torch_spec": spec,
        "torch_path": _import_roots(path),
        "seed": seed,
        "int_high": int_high,
        "inputs": [{"shape": list(s.shape), "dtype": s.dtype} for s in specs],
        "state_dict_keys": sd_keys,
        "outputs": [p for p, _ in flat],
        "per_layer": bool(per_layer),
        "layers": recorder.layers if recorder is not None else [],
        "draws": draws.draws,
        "draws_unrecorded": draws.unrecorded,
        "torch_version": torch.__version__,
        "timings": {"torch_import_s": t_import, "torch_build_s": t_build, "torch_run_s": t_run},
    }
    arrays["meta"] = np.array(json.dumps(meta))
    np.savez(out_npz, **arrays)
    return meta


# --------------------------------------------------------------------------- MindSpore side


def _importing_site() -> str:
    """Where the import being resolved was written: the first frame outside the import machinery and
    this module ("pkg/model.py:12 (pkg.model)"), so the message names the module that imported torch."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith("<frozen") and filename != __file__ and "importlib" not in filename:
            return f"{filename}:{frame.f_lineno} ({frame.f_globals.get('__name__', '?')})"
        frame = frame.f_back
    return "an unknown module"


class _TorchBlocker:
    """``sys.meta_path`` finder that refuses to import torch (MindSpore worker only)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "torch" or fullname.startswith("torch."):
            raise ImportError(f"msmigrate verify: the MindSpore side must not import torch: {_importing_site()} "
                              f"imports {fullname}")
        return None


def _assert_no_torch(where: str) -> None:
    if "torch" in sys.modules:
        raise RuntimeError(f"torch is imported in the MindSpore process ({where}); "
                           "check_mindspore must run in a process that never imports torch")


def _ms_leaf(ms: Any) -> Callable[[Any], bool]:
    return lambda o: isinstance(o, (ms.Tensor, np.ndarray))


def _ms_to_np(ms: Any) -> Callable[[Any], np.ndarray]:
    def conv(o):
        if isinstance(o, np.ndarray):
            return o
        if o.dtype == ms.bfloat16:
            o = o.astype(ms.float32)
        return o.asnumpy()
    return conv


def _compare_outputs(torch_flat: list, ms_flat: list, rtol: float) -> list:
    diffs = []
    for i, (p, t) in enumerate(torch_flat):
        m = ms_flat[i][1] if i < len(ms_flat) else None
        diffs.append(OutputDiff(path=p, **compare_arrays(t, m, rtol)))
    for p, m in ms_flat[len(torch_flat):]:
        diffs.append(OutputDiff(path=p, shape_torch=[], dtype_torch="-", shape_ms=list(m.shape),
                                dtype_ms=str(m.dtype), max_abs=None, max_rel=None, tol=None,
                                passed=False, note="extra output on the MindSpore side"))
    return diffs


def check_mindspore(spec: str, path: Union[None, str, Sequence[str]], npz: str,
                    modes: Iterable[str] = MODES, rtol: float = DEFAULT_RTOL,
                    localize: bool = True, launch_blocking: bool = False) -> VerifyResult:
    """Build the MindSpore net ``spec``, load the torch weights from ``npz`` (written by
    :func:`record_torch`) through ``msmigrate.weights.load_torch_state_dict``,
    ``set_train(False)``, run it on the recorded inputs in each mode and compare.
    On failure, localise the first divergent layer with PyNative forward hooks.

    ``launch_blocking=True`` calls ``mindspore.runtime.launch_blocking()`` before any op
    runs, so a PyNative op error is raised by the op (and cell) that caused it; by default
    PyNative errors surface asynchronously, possibly in a later cell (it only takes effect
    if no MindSpore op ran earlier in the process).

    Must run in a process that never imports torch (raises RuntimeError otherwise).
    Raises :class:`VerifyUsageError` when the spec cannot be located or the npz is bad;
    everything the converted net does wrong ends up in the returned result."""
    _assert_no_torch("before check_mindspore")
    modes = _normalize_modes(modes)
    with torch_record(npz) as (data, meta):
        return _check_loaded(spec, path, data, meta, modes, rtol, localize, launch_blocking)


@contextlib.contextmanager
def torch_record(npz: str, kind: Optional[str] = None):
    """(arrays, metadata) of a torch record (record_torch; kind "train": record_torch_train), closed
    after the with block. Raises VerifyUsageError when it cannot be read or is another record."""
    try:
        data = np.load(npz, allow_pickle=False)
        meta = json.loads(str(data["meta"]))
    except Exception as e:  # noqa: BLE001
        raise VerifyUsageError(f"cannot read torch record {npz}: {_one_line(e)}") from None
    try:
        if meta.get("format") != NPZ_FORMAT:
            raise VerifyUsageError(f"{npz}: unsupported record format {meta.get('format')!r}")
        if kind is not None and meta.get("kind") != kind:
            raise VerifyUsageError(f"{npz}: not a --{kind} record")
        yield data, meta
    finally:
        data.close()


def _check_loaded(spec, path, data, meta, modes, rtol, localize, launch_blocking) -> VerifyResult:
    result = VerifyResult(torch_spec=meta["torch_spec"], ms_spec=spec, rtol=rtol,
                          seed=meta["seed"], inputs=meta["inputs"])
    result.timings.update(meta.get("timings", {}))
    result.versions["torch"] = meta.get("torch_version")

    t0 = time.perf_counter()
    import mindspore as ms

    result.timings["ms_import_s"] = time.perf_counter() - t0
    result.versions["mindspore"] = ms.__version__
    if launch_blocking:
        ms.runtime.launch_blocking()
        result.launch_blocking = True
    _assert_no_torch("after import mindspore")

    t1 = time.perf_counter()
    np.random.seed(meta["seed"] % (2 ** 32))   # as the torch side: NumPy draws in __init__ match
    try:
        net = _build(spec, path, "mindspore")
    except _SpecNotFound:
        raise
    except VerifyUsageError:
        raise
    except Exception as e:  # noqa: BLE001
        result.error = f"building the MindSpore net {spec} failed: {_one_line(e)}{_user_site(e)}"
        result.error_detail = _detail(e)
        result.torch_imported_on_ms_side = "torch" in sys.modules
        return result
    result.timings["ms_build_s"] = time.perf_counter() - t1
    np.random.seed(meta["seed"] % (2 ** 32))
    draws = np.random.get_state()    # reseeded before the forward, as on the torch side: NumPy draws in forward match
    if "torch" in sys.modules:
        result.torch_imported_on_ms_side = True
        result.error = f"the MindSpore net {spec} imported torch"
        return result
    if not isinstance(net, ms.nn.Cell):
        result.error = f"{spec} returned {type(net).__name__}, not a mindspore.nn.Cell"
        return result

    from msmigrate.weights import WeightsMismatchError, load_torch_state_dict

    state = {k: data[f"sd/{k}"] for k in meta["state_dict_keys"]}
    t2 = time.perf_counter()
    try:
        report = load_torch_state_dict(net, state, strict=True)
        summary = getattr(report, "summary", None)
        result.weights = summary() if callable(summary) else ""
    except WeightsMismatchError as e:
        return record_error(result, "weights do not match", e)
    except Exception as e:  # noqa: BLE001
        return record_error(result, "loading the torch weights failed", e)
    result.timings["ms_load_weights_s"] = time.perf_counter() - t2
    net.set_train(False)

    inputs = [ms.Tensor(data[f"in/{i}"]) for i in range(len(meta["inputs"]))]
    torch_flat = [(p, data[f"out/{i}"]) for i, p in enumerate(meta["outputs"])]
    leaf, to_np = _ms_leaf(ms), _ms_to_np(ms)
    ms_modes = {"pynative": ms.PYNATIVE_MODE, "graph": ms.GRAPH_MODE}
    from .draw_replay import recorded_source, replaying
    replay = recorded_source(data, meta)    # torch's random draws in its forward, fed to the converted one
    result.draws, result.draws_unrecorded = meta.get("draws", []), meta.get("draws_unrecorded", [])
    for mode in modes:
        ms.set_context(mode=ms_modes[mode])
        np.random.set_state(draws)
        t = time.perf_counter()
        try:
            with replaying(ms, replay, bank=mode == "graph") as replayed:
                out = net(*inputs)
                ms_flat = _flatten(out, leaf, to_np)
        except Exception as e:  # noqa: BLE001
            error = replay.error if replay is not None and replay.error else _one_line(e)
            result.modes.append(ModeResult(mode=mode, status="error", error=error,
                                           error_detail=_detail(e), seconds=time.perf_counter() - t))
            continue
        if replayed.problem():
            result.modes.append(ModeResult(mode=mode, status="error", error=replayed.problem(),
                                           seconds=time.perf_counter() - t))
            continue
        diffs = _compare_outputs(torch_flat, ms_flat, rtol)
        status = "pass" if all(d.passed for d in diffs) else "fail"
        result.modes.append(ModeResult(mode=mode, status=status, outputs=diffs,
                                       seconds=time.perf_counter() - t))
    result.timings["ms_total_s"] = time.perf_counter() - t0

    py = next((m for m in result.modes if m.mode == "pynative"), None)
    if not result.passed and localize:
        if py is not None and py.status == "pass":
            result.localization = "PyNative agrees with torch: the failure is GRAPH-mode only"
        elif not meta.get("per_layer"):
            result.localization = "per-layer outputs were not recorded (per_layer=False)"
        else:
            t3 = time.perf_counter()
            ms.set_context(mode=ms.PYNATIVE_MODE)
            np.random.set_state(draws)
            with replaying(ms, replay):
                _localize(ms, net, inputs, meta, data, rtol, result)
            result.timings["ms_localize_s"] = time.perf_counter() - t3
    result.torch_imported_on_ms_side = "torch" in sys.modules
    _assert_no_torch("after check_mindspore")
    return result


def _normalize_modes(modes: Any) -> tuple:
    if isinstance(modes, str):
        modes = MODES if modes == "both" else modes.split(",")
    out = []
    for m in modes:
        m = str(m).strip().lower()
        if m == "both":
            out.extend(x for x in MODES if x not in out)
            continue
        if m not in MODES:
            raise VerifyUsageError(f"unknown mode {m!r} (use pynative, graph or both)")
        if m not in out:
            out.append(m)
    if not out:
        raise VerifyUsageError("no mode selected")
    return tuple(out)


def _localize(ms: Any, net: Any, inputs: list, meta: dict, data: Any, rtol: float,
              result: VerifyResult) -> None:
    """Run once in PyNative with pre/forward hooks on every named cell and find the first
    layer, in torch completion order, whose outputs differ while its inputs agree."""
    leaf, to_np = _ms_leaf(ms), _ms_to_np(ms)
    recs: dict = {}
    calls: dict = {}
    stack: list = []
    handles = []

    def pre(name):
        def hook(cell, args, kwargs):
            call = calls.get(name, 0)
            calls[name] = call + 1
            ins = [a for _, a in _flatten((tuple(args), dict(kwargs or {})), leaf, to_np, "in")]
            stack.append((name, call, ins))
        return hook

    def post(name):
        def hook(cell, args, output):
            for j in range(len(stack) - 1, -1, -1):
                if stack[j][0] == name:
                    _, call, ins = stack.pop(j)
                    break
            else:
                call, ins = calls.get(name, 1) - 1, None
            recs[(name, call)] = {"type": type(cell).__name__, "inputs": ins,
                                  "outputs": [a for _, a in _flatten(output, leaf, to_np)]}
        return hook

    ms_types = {}
    for name, cell in net.cells_and_names():
        if not name:
            continue
        ms_types[name] = type(cell).__name__
        handles.append(cell.register_forward_pre_hook(pre(name), with_kwargs=True))
        handles.append(cell.register_forward_hook(post(name)))
    raised = None
    try:
        net(*inputs)
    except Exception as e:  # noqa: BLE001
        raised = e
    finally:
        for h in handles:
            h.remove()

    def arrs(keys):
        return None if keys is None else [data[k] for k in keys]

    missing = []
    first_propagated = None
    compared = 0
    for idx, layer in enumerate(meta["layers"]):
        key = (layer["name"], layer["call"])
        rec = recs.get(key)
        if rec is None:
            if layer["name"] not in ms_types and layer["name"] not in missing:
                missing.append(layer["name"])
            continue
        compared += 1
        t_outs = arrs(layer["outputs"])
        bad = None
        if len(t_outs) != len(rec["outputs"]):
            bad = {"max_abs": None, "max_rel": None, "tol": None, "output": "",
                   "note": f"{len(t_outs)} output tensor(s) in torch vs {len(rec['outputs'])} in MindSpore"}
        else:
            for p, t, m in zip(layer["out_paths"], t_outs, rec["outputs"]):
                c = compare_arrays(t, m, rtol)
                if not c["passed"]:
                    bad = {"max_abs": c["max_abs"], "max_rel": c["max_rel"], "tol": c["tol"],
                           "output": p, "note": c["note"]}
                    break
        if bad is None:
            continue
        t_ins, m_ins = arrs(layer["inputs"]), rec["inputs"]
        if t_ins is None or m_ins is None or len(t_ins) != len(m_ins):
            inputs_differ = None
        else:
            inputs_differ = not all(compare_arrays(t, m, rtol)["passed"] for t, m in zip(t_ins, m_ins))
        div = LayerDivergence(name=layer["name"], call=layer["call"], type_torch=layer["type"],
                              type_ms=rec["type"], inputs_differ=inputs_differ, index=idx, **bad)
        if inputs_differ:
            first_propagated = first_propagated or div
            continue
        result.divergence = div
        break
    result.layers_compared = compared
    result.layers_missing_in_ms = missing
    n = len(meta["layers"])
    if raised is not None and stack:
        name, call, ins = stack[-1]
        sync = "" if result.launch_blocking else \
            " (PyNative errors surface asynchronously: the failing op may be in an earlier cell)"
        result.localization = (f"PyNative forward raised inside '{name}' "
                               f"({ms_types.get(name, '?')}){sync}: {_one_line(raised)}")
        if result.divergence is None:
            idx, layer = next(((i, ly) for i, ly in enumerate(meta["layers"])
                               if ly["name"] == name and ly["call"] == call), (-1, None))
            inputs_differ = None
            t_ins = arrs(layer["inputs"]) if layer is not None else None
            if t_ins is not None and len(t_ins) == len(ins):
                inputs_differ = not all(compare_arrays(t, m, rtol)["passed"] for t, m in zip(t_ins, ins))
            result.divergence = LayerDivergence(
                name=name, call=call, type_torch=layer["type"] if layer else "?", type_ms=ms_types.get(name),
                max_abs=None, max_rel=None, tol=None, inputs_differ=inputs_differ, index=idx,
                note="raised an exception")
    elif raised is not None:
        result.localization = f"PyNative forward raised outside any named cell: {_one_line(raised)}"
    elif result.divergence is not None:
        result.localization = (f"PyNative hooks: layer call {result.divergence.index + 1} of {n} "
                               f"in torch execution order is the first to diverge")
    elif first_propagated is not None:
        first_propagated.note = ((first_propagated.note + "; ") if first_propagated.note else "") + \
            "the divergence comes from code outside the named submodules " \
            "(e.g. functional ops in the model's own forward) before this layer"
        result.divergence = first_propagated
        result.localization = (f"PyNative hooks: no layer diverges with agreeing inputs; layer call "
                               f"{first_propagated.index + 1} of {n} is the first with a differing output")
    else:
        result.localization = (f"PyNative hooks: all {compared} matched layer calls (of {n}) agree; "
                               "the divergence is in code outside the named submodules")
    if missing:
        result.localization += f"; {len(missing)} torch module(s) have no MindSpore cell of that name"


# --------------------------------------------------------------------------- reporting


def _rows(result: VerifyResult) -> list:
    rows = []
    for m in result.modes:
        if m.status == "error":
            rows.append([m.mode, "-", "-", "-", "-", "-", f"ERROR: {m.error}"])
            continue
        for o in m.outputs:
            shape = "x".join(map(str, o.shape_torch)) or "()"
            if o.shape_ms is not None and o.shape_ms != o.shape_torch:
                shape += " vs " + ("x".join(map(str, o.shape_ms)) or "()")
            word = "ok" if o.passed else "FAIL"
            if o.note:
                word += f" ({o.note})"
            rows.append([m.mode, o.path, shape, _fmt(o.max_abs), _fmt(o.max_rel), _fmt(o.tol), word])
    return rows


def _draws_line(result: VerifyResult) -> str:
    from .draw_replay import summary

    text = summary(result.draws, result.draws_unrecorded)
    return f"random draws: {text}" if text else ""


def format_report(result: VerifyResult) -> str:
    """Plain-text report (the CLI uses rich instead when stdout is a terminal)."""
    lines = [f"msmigrate verify: torch {result.torch_spec} vs mindspore {result.ms_spec}",
             f"inputs: {'; '.join(InputSpec(tuple(i['shape']), i['dtype']).describe() for i in result.inputs)}"
             f"   seed {result.seed}   rtol {result.rtol:g}"]
    if result.weights:
        lines.append(f"weights: {result.weights}")
    if _draws_line(result):
        lines.append(_draws_line(result))
    if result.error:
        lines.append(f"ERROR: {result.error}")
    header = ["mode", "output", "shape", "max|d|", "rel", "tol", "result"]
    rows = _rows(result)
    if rows:
        table = [header] + rows
        widths = [max(len(r[i]) for r in table) for i in range(len(header) - 1)]
        for r in table:
            lines.append("  ".join(c.ljust(w) for c, w in zip(r[:-1], widths)) + "  " + r[-1])
    if result.divergence is not None:
        lines.append(f"first divergent layer (pynative): {result.divergence.describe()}")
    if result.localization and not result.passed:
        lines.append(f"localisation: {result.localization}")
    lines.append("RESULT: PASS" if result.passed else "RESULT: FAIL")
    return "\n".join(lines)


def _print_report(result: VerifyResult, stream: Any = None) -> None:
    stream = stream or sys.stdout
    con = rich_console(stream)
    if con is not None:
        con.print(f"[bold]msmigrate verify[/bold]: torch {result.torch_spec} vs mindspore {result.ms_spec}",
                  highlight=False)
        con.print("inputs: " + "; ".join(InputSpec(tuple(i["shape"]), i["dtype"]).describe()
                                         for i in result.inputs)
                  + f"   seed {result.seed}   rtol {result.rtol:g}", highlight=False)
        if result.weights:
            con.print(f"weights: {result.weights}", highlight=False, markup=False)
        if _draws_line(result):
            con.print(_draws_line(result), highlight=False, markup=False)
        if result.error:
            con.print("[red]ERROR[/red]: ", end="")
            con.print(result.error, highlight=False, markup=False)
        rows = _rows(result)
        if rows:
            con.print(result_table(["mode", "output", "shape", "max|d|", "rel", "tol", "result"], rows,
                                   right=("max|d|", "rel", "tol")))
        if result.divergence is not None:
            con.print("[yellow]first divergent layer (pynative)[/yellow]: ", end="", highlight=False)
            con.print(result.divergence.describe(), highlight=False, markup=False)
        if result.localization and not result.passed:
            con.print(f"localisation: {result.localization}", highlight=False, markup=False)
        con.print("[bold green]RESULT: PASS[/bold green]" if result.passed
                  else "[bold red]RESULT: FAIL[/bold red]")
        return
    print(format_report(result), file=stream)


# --------------------------------------------------------------------------- CLI


class _ArgParser(argparse.ArgumentParser):
    def error(self, message):  # one line, no usage block
        raise VerifyUsageError(message)


class _InputAction(argparse.Action):
    def __call__(self, parser, ns, values, option_string=None):
        items = list(getattr(ns, self.dest, None) or [])
        items.append([values, None])
        setattr(ns, self.dest, items)


def add_input_arguments(p: argparse.ArgumentParser, example: str) -> None:
    """--input SHAPE[:DTYPE] (repeated for several inputs) and --dtype of the preceding --input."""
    p.add_argument("--input", dest="inputs", action=_InputAction, metavar="SHAPE[:DTYPE]",
                   help=f"input shape, e.g. {example}; repeat for several inputs")
    p.add_argument("--dtype", action=_DtypeAction, metavar="DTYPE",
                   help="dtype of the preceding --input (float32 default; int64 for indices)")


class _DtypeAction(argparse.Action):
    def __call__(self, parser, ns, values, option_string=None):
        items = list(getattr(ns, "inputs", None) or [])
        if not items:
            raise VerifyUsageError("--dtype must follow the --input it applies to")
        if items[-1][1] is not None:
            raise VerifyUsageError(f"two --dtype values for input {items[-1][0]}")
        items[-1][1] = values
        setattr(ns, "inputs", items)


def _make_parser() -> argparse.ArgumentParser:
    p = _ArgParser(
        prog="msmigrate verify",
        description="Check that a MindSpore conversion computes what the torch model computes.")
    p.add_argument("--torch", required=True, metavar="MODULE:CALLABLE",
                   help="torch model factory, called with no arguments")
    p.add_argument("--torch-path", metavar="DIR", help="import root for --torch (default: cwd)")
    p.add_argument("--ms", metavar="MODULE:CALLABLE",
                   help="MindSpore net factory (default: same spec as --torch)")
    p.add_argument("--ms-path", metavar="DIR", help="import root for --ms (default: cwd)")
    add_input_arguments(p, "2,3,64,64")
    p.add_argument("--int-high", type=int, default=DEFAULT_INT_HIGH, metavar="N",
                   help=f"integer inputs are drawn from [0, N) (default {DEFAULT_INT_HIGH})")
    p.add_argument("--mode", default="both", choices=["both", "pynative", "graph"])
    p.add_argument("--rtol", type=float, default=DEFAULT_RTOL,
                   help="pass when max|d| <= rtol * max(1, max|y_torch|) (default 1e-4)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", metavar="FILE", help="also write the full result as JSON")
    p.add_argument("--no-per-layer", action="store_true",
                   help="do not record per-layer outputs (no localisation on failure)")
    p.add_argument("--timeout", type=float, default=None, metavar="S",
                   help="time limit for each side's process, in seconds")
    p.add_argument("--keep-temp", metavar="DIR",
                   help="write the torch record and worker files into DIR instead of a temp dir")
    t = p.add_argument_group(
        "training (--train)",
        "N optimizer steps in both frameworks from torch's initial weights on the same seeded batches; "
        "the MindSpore side runs the training loop as msmigrate converts it")
    t.add_argument("--train", type=int, nargs="?", const=5, default=None, metavar="N",
                   help="compare N training steps (default 5) instead of one forward pass")
    t.add_argument("--optimizer", metavar="SPEC",
                   help='torch.optim class and arguments without params, e.g. "SGD(lr=0.1, momentum=0.9)" '
                        '(default "SGD(lr=0.01)")')
    t.add_argument("--scheduler", metavar="SPEC",
                   help='torch.optim.lr_scheduler class and arguments without the optimizer, stepped once per '
                        'optimizer step, e.g. "StepLR(step_size=2, gamma=0.5)"')
    t.add_argument("--loss", choices=["cross_entropy", "mse"],
                   help="cross_entropy (default for 2-D outputs: integer targets) or mse (standard normal targets)")
    t.add_argument("--classes", type=int, metavar="K",
                   help="cross_entropy targets are drawn from [0, K) (default: the output's size 1)")
    t.add_argument("--eval-mode-dropout", action="store_true",
                   help="put Dropout layers in eval mode on both sides (their random masks cannot match)")
    t.add_argument("-q", "--quiet", action="store_true", help="no progress spinner")
    return p


def _check_top_level(spec: str, roots: list, side: str) -> None:
    """Fail fast (before starting any worker) when the spec's top-level module cannot be
    found; imports nothing."""
    import importlib.machinery
    import importlib.util

    top = _parse_spec(spec)[0].split(".")[0]
    try:
        found = importlib.machinery.PathFinder.find_spec(top, list(roots)) or importlib.util.find_spec(top)
    except (ImportError, ValueError):
        found = None
    if found is None:
        raise VerifyUsageError(f"{side}: cannot import module {top!r} (import roots: {', '.join(roots)})")


def _child_env() -> dict:
    env = dict(os.environ)
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = os.pathsep.join([pkg_parent] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.setdefault("GLOG_v", "3")  # MindSpore: errors only
    env.setdefault("PYTHONWARNINGS", "ignore")
    # MindSpore 2.10's oneDNN takes a ~100x slower convolution path on AVX-512 CPUs
    env.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")
    return env


def _run_worker(kind: str, job: dict, workdir: str, timeout: Optional[float],
                module: str = "msmigrate.verify") -> tuple:
    """Run ``python -m <module> <kind> <job.json>``; returns (rc, status dict|None,
    stderr tail)."""
    job_file = os.path.join(workdir, f"{kind.strip('_')}-job.json")
    status_file = os.path.join(workdir, f"{kind.strip('_')}-status.json")
    job = dict(job, status_file=status_file)
    with open(job_file, "w") as f:
        json.dump(job, f)
    cmd = [sys.executable, "-m", module, kind, job_file]
    try:
        proc = subprocess.run(cmd, env=_child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=timeout, text=True, errors="replace")
    except subprocess.TimeoutExpired:
        return None, None, f"timed out after {timeout:g} s"
    status = None
    if os.path.exists(status_file):
        with open(status_file) as f:
            status = json.load(f)
    tail = [ln for ln in (proc.stderr or "").splitlines() if ln.strip()]
    return proc.returncode, status, (tail[-1].strip() if tail else f"exit status {proc.returncode}")


def _worker_result(status: Optional[dict], result_file: str, result_type):
    """The result the MindSpore worker wrote to `result_file`, as `result_type` (from_dict); None when the
    worker did not finish. A usage error the worker reported is raised."""
    if status and status.get("usage"):
        raise VerifyUsageError(status.get("message"))
    if os.path.exists(result_file) and status and status.get("ok"):
        with open(result_file) as f:
            return result_type.from_dict(json.load(f))
    return None


def cli_entry(command: str, run: Callable[[list], int], argv: Optional[Sequence[str]]) -> int:
    """Runs a command's parsed main (`msmigrate verify`, `msmigrate export`): a usage error is one line and
    exit 2, Ctrl-C exit 130, --help exit 0."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return run(argv)
    except VerifyUsageError as e:
        print(f"msmigrate {command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"msmigrate {command}: interrupted", file=sys.stderr)
        return 130
    except SystemExit as e:  # --help
        return e.code if isinstance(e.code, int) else 0


def main_verify(argv: Optional[Sequence[str]] = None, train=None) -> int:
    """``msmigrate verify`` entry point; returns the exit status (0 pass, 1 fail, 2 usage). `train` runs
    ``--train N`` (msmigrate.verify_train.run_train_cli, which builds on this module: the caller passes it)."""
    return cli_entry("verify", lambda args: _main_verify(args, train), argv)


def _main_verify(argv: list, train=None) -> int:
    parser = _make_parser()
    args = parser.parse_args(argv)
    _parse_spec(args.torch)
    ms_spec = args.ms or args.torch
    _parse_spec(ms_spec)
    if not args.inputs:
        raise VerifyUsageError("at least one --input SHAPE is required, e.g. --input 2,3,64,64")
    specs = [parse_input_spec(shape, dtype) for shape, dtype in args.inputs]
    if not args.rtol > 0:
        raise VerifyUsageError("--rtol must be positive")
    if args.int_high < 1:
        raise VerifyUsageError("--int-high must be at least 1")
    torch_path = _import_roots(args.torch_path) or [os.getcwd()]
    ms_path = _import_roots(args.ms_path) or [os.getcwd()]
    _check_top_level(args.torch, torch_path, "torch")
    _check_top_level(ms_spec, ms_path, "mindspore")
    modes = _normalize_modes(args.mode)
    if args.train is not None:
        if train is None:
            raise VerifyUsageError("--train runs through `msmigrate verify --train N`")
        return train(args, specs)
    extra = [o for o, v in (("--optimizer", args.optimizer), ("--scheduler", args.scheduler), ("--loss", args.loss),
                            ("--classes", args.classes), ("--eval-mode-dropout", args.eval_mode_dropout)) if v]
    if extra:
        raise VerifyUsageError(f"{', '.join(extra)} only apply with --train N")

    if args.keep_temp:
        os.makedirs(args.keep_temp, exist_ok=True)
        tmp_ctx = None
        workdir = os.path.abspath(args.keep_temp)
    else:
        tmp_ctx = tempfile.TemporaryDirectory(prefix="msmigrate-verify-")
        workdir = tmp_ctx.name
    try:
        npz = os.path.join(workdir, "torch_record.npz")
        rc, status, tail = _run_worker("_record-torch", {
            "spec": args.torch, "path": torch_path, "inputs": [asdict(s) for s in specs],
            "out_npz": npz, "seed": args.seed, "per_layer": not args.no_per_layer,
            "int_high": args.int_high}, workdir, args.timeout)
        if rc != 0 or not status or not status.get("ok"):
            msg = (status or {}).get("message") or f"torch side failed: {tail}"
            raise VerifyUsageError(msg)

        result_file = os.path.join(workdir, "ms_result.json")
        rc, status, tail = _run_worker("_check-ms", {
            "spec": ms_spec, "path": ms_path, "npz": npz, "modes": list(modes), "rtol": args.rtol,
            "result_file": result_file}, workdir, args.timeout)
        result = _worker_result(status, result_file, VerifyResult)
        if result is None:
            msg = (status or {}).get("message") or f"MindSpore side failed: {tail}"
            result = VerifyResult(torch_spec=args.torch, ms_spec=ms_spec, rtol=args.rtol, seed=args.seed,
                                  inputs=[{"shape": list(s.shape), "dtype": s.dtype} for s in specs],
                                  error=msg)
    finally:
        if tmp_ctx is not None:
            tmp_ctx.cleanup()

    return reported(result, _print_report, args.json)


# --------------------------------------------------------------------------- workers


def run_worker_job(kind: str, job_file: str, handlers: dict) -> int:
    """The body of a worker process: read its job, run handlers[kind](job) (returns the exit
    code), and leave a status file the parent reads (ok, or the one-line reason)."""
    with open(job_file) as f:
        job = json.load(f)
    status_file = job.pop("status_file")

    def status(**kw):
        with open(status_file, "w") as f:
            json.dump(kw, f)

    try:
        if kind not in handlers:
            raise VerifyUsageError(f"unknown worker {kind}")
        code = handlers[kind](job)
        status(ok=True)
        return code
    except VerifyUsageError as e:
        status(ok=False, usage=True, message=str(e))
        return 2
    except Exception as e:  # noqa: BLE001
        status(ok=False, usage=False, message=f"{kind.strip('_')}: {_one_line(e)}")
        raise


def write_json_result(path: Optional[str], result) -> None:
    """--json FILE: the result as JSON; a file that cannot be written is a usage error."""
    if not path:
        return
    try:
        with open(path, "w") as f:
            json.dump(result.to_dict(), f, indent=2)
    except OSError as e:
        raise VerifyUsageError(f"cannot write {path}: {e.strerror}") from None


def _record_torch_job(job: dict) -> int:
    record_torch(job["spec"], job["path"], job["inputs"], job["out_npz"], seed=job["seed"],
                 per_layer=job["per_layer"], int_high=job["int_high"])
    return 0


def _check_ms_job(job: dict) -> int:
    sys.meta_path.insert(0, _TorchBlocker())
    result = check_mindspore(job["spec"], job["path"], job["npz"], modes=job["modes"],
                             rtol=job["rtol"], launch_blocking=True)
    with open(job["result_file"], "w") as f:
        json.dump(result.to_dict(), f)
    return result.exit_code


def _worker_main(kind: str, job_file: str) -> int:
    return run_worker_job(kind, job_file, {"_record-torch": _record_torch_job, "_check-ms": _check_ms_job})


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] in ("_record-torch", "_check-ms"):
        sys.exit(_worker_main(sys.argv[1], sys.argv[2]))
    from .verify_train import run_train_cli   # this module runs as __main__ here: no import cycle
    sys.exit(main_verify(sys.argv[1:], train=run_train_cli))
