"""Check a traced model in a process that never imports torch:

    python -m msmigrate.trace.check OUT_DIR [--mindir]

loads OUT_DIR/model.py, runs create_model() on the recorded input (trace-io.npz) in PYNATIVE and
GRAPH mode (and, with --mindir, exports model.mindir and runs it through nn.GraphCell), and prints
one JSON line with max|d| against torch's recorded output."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np


def tolerance(want) -> float:
    """1e-4 relative to torch's largest finite magnitude, 1e-4 at the least."""
    finite = np.abs(want[np.isfinite(want)])
    return 1e-4 * max(1.0, float(finite.max()) if finite.size else 1.0)


def max_diff(got, want) -> float:
    """max|got - want|; equal infinities and a nan where torch has one (softmax over a slice of all -inf) count
    as equal, any other nan as an infinite difference."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    with np.errstate(invalid="ignore"):
        diff = np.where((got == want) | (np.isnan(got) & np.isnan(want)), 0.0, np.abs(got - want))
    return float(np.nan_to_num(diff, nan=np.inf).max()) if diff.size else 0.0


def run_check(out: Path, mindir: bool = False) -> dict:
    sys.modules["torch"] = None  # any torch import fails loudly
    spec = importlib.util.spec_from_file_location("traced_model", out / "model.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["traced_model"] = mod  # GRAPH mode reads the source of construct through its module
    spec.loader.exec_module(mod)
    import mindspore as ms

    io = np.load(out / "trace-io.npz")
    xs = [io[f"x{i}"] for i in range(len([k for k in io.files if k.startswith("x")]))]
    y = io["y"]
    tol = tolerance(y)
    res = {"tol": tol}
    ms.set_context(mode=ms.PYNATIVE_MODE)
    net = mod.create_model()
    inputs = [ms.Tensor(x) for x in xs]

    def compare(out_):
        out_ = out_[0] if isinstance(out_, (tuple, list)) else out_
        d = max_diff(out_.asnumpy(), y)
        return {"max_abs_diff": d, "pass": bool(d <= tol)}

    for mode in ("pynative", "graph"):
        ms.set_context(mode=ms.PYNATIVE_MODE if mode == "pynative" else ms.GRAPH_MODE)
        try:
            res[mode] = compare(net(*inputs))
        except Exception as exc:  # noqa: BLE001
            res[mode] = {"error": f"{type(exc).__name__}: {str(exc).strip()[:300]}", "pass": False}
    if "sy" in io.files and hasattr(mod, "create_decode_step"):
        res.update(_check_step(mod, net, io))
    if mindir:
        ms.set_context(mode=ms.GRAPH_MODE)
        dynamic = bool(io["dynamic"]) if "dynamic" in io.files else False
        if dynamic and len(xs[0]) > 1:
            # batch exported as dynamic by torch.export: export the MindIR with a free batch dim too,
            # and run it on the first sample alone as well
            try:
                specs = [ms.Tensor(shape=[None] + list(x.shape[1:]), dtype=t.dtype) for x, t in zip(xs, inputs)]
                ms.export(net, *specs, file_name=str(out / "model"), file_format="MINDIR")
                graph = ms.nn.GraphCell(ms.load(str(out / "model.mindir")))
                one = graph(*[ms.Tensor(x[:1]) for x in xs])
                one = one[0] if isinstance(one, (tuple, list)) else one
                d1 = max_diff(one.asnumpy(), y[:1])
                res["mindir_batch1"] = {"max_abs_diff": d1, "pass": bool(d1 <= tol)}
            except Exception as exc:  # noqa: BLE001 - fall back to a fixed batch
                res["mindir_dynamic_error"] = f"{type(exc).__name__}: {str(exc).strip()[:200]}"
                dynamic = False
        try:
            if not dynamic:
                ms.export(net, *inputs, file_name=str(out / "model"), file_format="MINDIR")
            graph = ms.nn.GraphCell(ms.load(str(out / "model.mindir")))
            res["mindir"] = compare(graph(*inputs))
        except Exception as exc:  # noqa: BLE001
            res["mindir"] = {"error": f"{type(exc).__name__}: {str(exc).strip()[:300]}", "pass": False}
    res["ok"] = all(res[m]["pass"] for m in ("pynative", "graph", "mindir", "mindir_batch1", "step_pynative",
                                            "step_graph") if m in res)
    return res


def _check_step(mod, net, io) -> dict:
    """The decode step (KV cache in and out) on the recorded step inputs, PYNATIVE and GRAPH (with the
    batch and cache length dynamic, as generate() compiles it): its logits against torch's."""
    import mindspore as ms

    xs = [ms.Tensor(io[f"s{i}"]) for i in range(len([k for k in io.files if k[0] == "s" and k[1:].isdigit()]))]
    y = io["sy"]
    tol = tolerance(y)
    res = {}
    for mode in ("pynative", "graph"):
        ms.set_context(mode=ms.PYNATIVE_MODE if mode == "pynative" else ms.GRAPH_MODE)
        try:
            step = mod.create_decode_step(net)
            if mode == "graph":
                step.set_inputs(*mod.decode_step_inputs(xs))
            d = max_diff(step(*xs)[0].asnumpy(), y)
            res[f"step_{mode}"] = {"max_abs_diff": d, "pass": bool(d <= tol)}
        except Exception as exc:  # noqa: BLE001
            res[f"step_{mode}"] = {"error": f"{type(exc).__name__}: {str(exc).strip()[:300]}", "pass": False}
    return res


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    out = Path(argv[0])
    res = run_check(out, mindir="--mindir" in argv)
    print(json.dumps(res))
    return 0 if res["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
