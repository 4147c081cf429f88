"""``msmigrate keras MODEL -o OUT [--keep-nhwc] [--path DIR] [--check]``."""
from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Optional, Sequence

import numpy as np

from .convert import KerasConversion, KerasConversionError


def keras_to_ms_layout(a: np.ndarray, keep_nhwc: bool) -> np.ndarray:
    """A Keras (channels-last) array in the layout the converted model uses at its boundary."""
    if a.ndim in (4, 5) and not keep_nhwc:
        return np.ascontiguousarray(np.moveaxis(a, -1, 1))
    return a


def convert_model(model, out_dir: str, keep_nhwc: bool = False, source: str = "") -> KerasConversion:
    """model.py + keras-report.md (this process) and model.ckpt (a MindSpore-only worker process)."""
    from .convert import convert_keras_model
    from .worker import write_checkpoint

    conv = convert_keras_model(model, out_dir, keep_nhwc=keep_nhwc, source=source)
    t0 = time.time()
    write_checkpoint(out_dir, conv.class_name, conv.weights)
    conv.seconds += time.time() - t0
    return conv


def convert_and_check(model, out_dir: str, keep_nhwc: bool = False, source: str = "", batch: int = 2,
                      seed: int = 0, modes=("pynative", "graph"), rtol: float = 1e-4):
    """convert_model() + check_conversion() with one MindSpore worker process: (conversion, check result)."""
    from .convert import convert_keras_model
    from .worker import write_checkpoint

    conv = convert_keras_model(model, out_dir, keep_nhwc=keep_nhwc, source=source)
    ins, outs = _reference_ms_layout(model, conv, batch, seed)
    t0 = time.time()
    res = write_checkpoint(out_dir, conv.class_name, conv.weights,
                           check={"inputs": ins, "refs": outs, "modes": modes, "rtol": rtol})
    conv.seconds += time.time() - t0
    return conv, res


def keras_reference(model, batch: int = 2, seed: int = 0):
    """Seeded inputs (Keras layout) and Keras' outputs for them, as numpy."""
    rng = np.random.default_rng(seed)
    vocab = [int(getattr(l, "input_dim", 0)) for l in model._flatten_layers(include_self=False, recursive=True)
             if type(l).__name__ == "Embedding"]
    xs = []
    for t in model.inputs:
        shape = (batch,) + tuple(t.shape[1:])
        if "int" in str(t.dtype):  # token ids, valid for every Embedding of the model
            xs.append(rng.integers(0, min(vocab) if vocab else 10, shape).astype(np.int32))
        else:
            xs.append(rng.standard_normal(shape).astype(np.float32))
    ys = model(xs if len(xs) > 1 else xs[0], training=False)
    ys = ys if isinstance(ys, (list, tuple)) else [ys]
    return xs, [np.asarray(_to_numpy(y)) for y in ys]


def _to_numpy(y):
    if hasattr(y, "detach"):
        return y.detach().cpu().numpy()
    return np.asarray(y)


def check_conversion(model, conv: KerasConversion, batch: int = 2, seed: int = 0, modes=("pynative", "graph"),
                     rtol: float = 1e-4) -> dict:
    from .worker import check_outputs

    ins, outs = _reference_ms_layout(model, conv, batch, seed)
    return check_outputs(conv.out_dir, ins, outs, modes=modes, rtol=rtol)


def _reference_ms_layout(model, conv: KerasConversion, batch: int, seed: int):
    xs, ys = keras_reference(conv.graph_model if conv.graph_model is not None else model, batch, seed)
    ins = [keras_to_ms_layout(x, conv.keep_nhwc) for x in xs]
    outs = [keras_to_ms_layout(y, conv.keep_nhwc) for y in ys]
    return ins, outs


def main_keras(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="msmigrate keras",
                                description="Convert a Keras 3 model to a MindSpore nn.Cell (model.py) and "
                                            "checkpoint (model.ckpt), with a per-layer report (keras-report.md).")
    p.add_argument("model", help="a .keras/.h5 file, a SavedModel directory, or MODULE:CALLABLE returning a model")
    p.add_argument("-o", "--out", required=True, help="output directory")
    p.add_argument("--path", help="directory to import MODULE from (MODULE:CALLABLE form)")
    p.add_argument("--keep-nhwc", action="store_true", help="the converted model takes channels-last (NHWC) inputs "
                   "like Keras and returns spatial outputs channels-last; it transposes once at each boundary "
                   "(default: NCHW in and out)")
    p.add_argument("--check", action="store_true", help="also run Keras and the converted model on a seeded random "
                   "input and compare (PyNative and GRAPH mode)")
    args = p.parse_args(list(argv))
    from .load import load_keras_model
    from .worker import WorkerError

    res = None
    try:
        model = load_keras_model(args.model, args.path)
        if args.check:
            conv, res = convert_and_check(model, args.out, keep_nhwc=args.keep_nhwc, source=args.model)
        else:
            conv = convert_model(model, args.out, keep_nhwc=args.keep_nhwc, source=args.model)
    except (KerasConversionError, WorkerError) as e:
        print(f"msmigrate keras: error: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - a bug or an unexpected model: one line, not a traceback
        print(f"msmigrate keras: error: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}",
              file=sys.stderr)
        return 1
    print(f"msmigrate keras: {len(conv.layers)} layers -> {conv.model_py} (class {conv.class_name}), "
          f"{conv.ckpt}, report {os.path.join(conv.out_dir, 'keras-report.md')} ({conv.seconds:.1f} s)")
    if res is not None:
        ok = True
        for mode, r in res.items():
            ok = ok and r.get("ok", False)
            detail = r.get("error") or f"max|d| {r['max_abs_diff']:.3g} (max|y| {r['max_abs_ref']:.3g})"
            print(f"msmigrate keras: check {mode}: {'pass' if r.get('ok') else 'FAIL'} {detail}")
        return 0 if ok else 1
    return 0
