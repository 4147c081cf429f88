"""The graph-capture route: `msmigrate trace` (torch.export -> readable MindSpore model.py + model.ckpt)."""
from .capture import CaptureError, export, load_builder
from .core import TraceResult, main_trace, trace_model

__all__ = ["CaptureError", "TraceResult", "export", "load_builder", "main_trace", "trace_model"]
