"""Capture a torch model as an ATen graph (torch.export), keeping high-level ops whole."""
from __future__ import annotations

import importlib
import sys
import traceback
from pathlib import Path
from typing import Optional

from .ops import CONVERTERS


class CaptureError(Exception):
    """torch.export could not capture the model; the message names the construct and its source line."""


def load_builder(spec: str, path: Optional[str] = None):
    """`pkg.module:function` (or a class) -> the callable, with `path` put first on sys.path."""
    if ":" not in spec:
        raise CaptureError(f"--torch wants MODULE:CALLABLE (e.g. pkg.models:build), got {spec!r}")
    mod_name, attr = spec.split(":", 1)
    if path:
        sys.path.insert(0, str(Path(path).resolve()))
    mod = importlib.import_module(mod_name)
    obj = mod
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def _user_frame(exc: BaseException, roots) -> Optional[str]:
    """The innermost traceback frame in the user's code (not torch, not this package)."""
    frames = traceback.extract_tb(exc.__traceback__)
    cause = exc.__cause__ or exc.__context__
    while cause is not None:
        frames += traceback.extract_tb(cause.__traceback__)
        cause = cause.__cause__ or cause.__context__
    best = None
    for f in frames:
        fn = f.filename.replace("\\", "/")
        if "/torch/" in fn or "/msmigrate/trace/" in fn or "site-packages" in fn or fn.startswith("<"):
            continue
        if roots and not any(fn.startswith(str(r)) for r in roots):
            continue
        best = f"{f.filename}:{f.lineno}: {f.line}"
    return best


def _construct_kind(text: str) -> str:
    low = text.lower()
    if "data-dependent" in low or "data dependent" in low or "guardondatadependent" in low:
        return ("data-dependent control flow or shape (a Python `if`/`for`/size computed from tensor "
                "values; rewrite it with torch.where/torch.cond or make it static)")
    if "unsupported" in low:
        return "a construct torch.export does not support"
    if "constraint" in low and "dim" in low:
        return "a batch size the model fixes (dynamic batch refused)"
    return "an error while running the model under torch.export"


def _exportable_experts(model) -> list:
    """Hugging Face mixture-of-experts models default to a grouped matmul over tokens sorted by expert
    (an opaque custom op on data-dependent offsets); switch them to `batched_mm`, which gathers each
    token's expert weights (the same sums; transformers' own exporters do this)."""
    notes = []
    for name, m in model.named_modules():
        can = getattr(type(m), "_can_set_experts_implementation", None)
        config = getattr(m, "config", None)
        if not callable(can) or config is None or not hasattr(m, "set_experts_implementation"):
            continue
        current = getattr(config, "_experts_implementation", None)
        if current in (None, "batched_mm") or not can():
            continue
        m.set_experts_implementation("batched_mm")
        notes.append(f"{name or 'model'}: experts implementation {current!r} -> 'batched_mm' for export")
    return notes


def export(model, args, dynamic_batch: bool = True, roots=(), dynamic_shapes=None, train: bool = False):
    """torch.export the model in eval mode (`train`: in training mode, the forward a fine-tuning step
    runs: dropout kept, BatchNorm on batch statistics); returns (ExportedProgram, notes). Tries `dynamic_shapes`
    (torch.export's form, e.g. batch and sequence dims of token ids) or else a dynamic batch dim first,
    and falls back to a static one if torch refuses it."""
    import torch

    model = model.train(train)
    notes = _exportable_experts(model)
    ep = None
    if dynamic_shapes is not None:
        try:
            ep = torch.export.export(model, tuple(args), dynamic_shapes=dynamic_shapes)
            notes.append(f"exported with dynamic dims {dynamic_shapes}")
        except Exception as exc:  # refused: fall back to a dynamic batch, then to static shapes
            first = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
            notes.append(f"dynamic dims refused by torch.export ({first})")
    if ep is not None:
        dynamic_batch = False
    if dynamic_batch and all(isinstance(a, torch.Tensor) and a.ndim > 0 and a.shape[0] > 1 for a in args):
        batch = torch.export.Dim("batch")
        shapes = tuple({0: batch} for _ in args)
        try:
            ep = torch.export.export(model, tuple(args), dynamic_shapes=shapes)
            notes.append("batch dimension exported as dynamic (torch.export.Dim)")
        except Exception as exc:  # refused: fall back to the traced batch size
            first = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
            notes.append(f"dynamic batch refused by torch.export ({first}); batch fixed at {args[0].shape[0]}")
    if dynamic_batch and ep is None and not any("dynamic" in n for n in notes):
        notes.append("batch of 1 traced: exported with a fixed batch (torch specialises size-1 dims)")
    if ep is None:
        try:
            ep = torch.export.export(model, tuple(args))
        except Exception as exc:
            text = f"{type(exc).__name__}: {exc}"
            where = _user_frame(exc, roots)
            lines = [line for line in text.strip().splitlines() if line.strip()][:12]
            raise CaptureError(f"torch.export could not capture the model: {_construct_kind(text)}\n"
                               + (f"  at {where}\n" if where else "")
                               + "  torch says: " + "\n    ".join(lines)) from exc
    table = torch.export.default_decompositions()
    for key in list(table.keys()):
        if str(key) in CONVERTERS:   # kept whole: the registry converts it as one op
            table.pop(key)
    ep = ep.run_decompositions(table)
    return ep, notes
