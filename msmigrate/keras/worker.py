"""MindSpore side of ``msmigrate keras``: runs in its own process, which never imports keras or torch.

``_write-ckpt``: build the emitted model.py, load the converted weights by name (every parameter must be
present with its exact shape, and every converted tensor must be used), save model.ckpt.
``_check``: load create_model() and compare its outputs with Keras' recorded ones in PyNative and GRAPH mode.
"""
from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile
from typing import Dict, List, Optional, Sequence

import numpy as np

from ..verify import _run_worker, run_worker_job


class _Blocker:
    """``sys.meta_path`` finder that refuses keras/torch/tensorflow in the MindSpore worker."""

    def find_spec(self, fullname, path=None, target=None):
        top = fullname.split(".")[0]
        if top in ("torch", "keras", "tensorflow"):
            raise ImportError(f"msmigrate keras: the MindSpore side must not import {fullname}")
        return None


def _load_module(out_dir: str):
    path = os.path.join(out_dir, "model.py")
    name = f"_msm_keras_model_{abs(hash(path))}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # GRAPH mode reads construct()'s source through the module
    spec.loader.exec_module(mod)
    return mod


def _write_ckpt_job(job: dict) -> int:
    import mindspore as ms

    mod = _load_module(job["out_dir"])
    net = getattr(mod, job["class_name"])()
    data = np.load(job["weights_npz"])
    problems: List[str] = []
    used = set()
    for name, p in net.parameters_and_names():
        pname = p.name
        if pname not in data.files:
            problems.append(f"no converted value for parameter {pname}")
            continue
        v = data[pname]
        if tuple(v.shape) != tuple(p.shape):
            problems.append(f"{pname}: converted shape {tuple(v.shape)} != parameter shape {tuple(p.shape)}")
            continue
        p.set_data(ms.Tensor(v.astype(np.float32)))
        used.add(pname)
    unused = sorted(set(data.files) - used)
    if unused:
        problems.append(f"converted tensors not used by the network: {unused[:5]}")
    if problems:
        raise RuntimeError("; ".join(problems[:5]))
    ms.save_checkpoint(net, os.path.join(job["out_dir"], "model.ckpt"))
    if job.get("check"):  # --check: compare in the same process (one MindSpore start instead of two)
        return _check_job(job["check"])
    return 0


def _check_job(job: dict) -> int:
    import mindspore as ms

    mod = _load_module(job["out_dir"])
    data = np.load(job["npz"])
    inputs = [ms.Tensor(data[f"in{i}"]) for i in range(job["n_in"])]
    refs = [data[f"out{i}"] for i in range(job["n_out"])]
    result: Dict[str, dict] = {}
    for mode in job["modes"]:
        ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
        net = mod.create_model()
        try:
            ys = net(*inputs)
        except Exception as e:  # noqa: BLE001
            result[mode] = {"ok": False, "error": f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"}
            continue
        ys = list(ys) if isinstance(ys, (tuple, list)) else [ys]
        diffs, scale = [], 0.0
        ok = len(ys) == len(refs)
        for y, r in zip(ys, refs):
            y = y.asnumpy()
            if y.shape != r.shape:
                ok = False
                diffs.append(float("inf"))
                continue
            d = float(np.max(np.abs(y.astype(np.float64) - r))) if r.size else 0.0
            diffs.append(d)
            scale = max(scale, float(np.max(np.abs(r))) if r.size else 0.0)
            ok = ok and d <= job["rtol"] * max(1.0, float(np.max(np.abs(r))) if r.size else 0.0)
        result[mode] = {"ok": bool(ok), "max_abs_diff": max(diffs) if diffs else 0.0, "max_abs_ref": scale}
    with open(job["result_file"], "w") as f:
        json.dump(result, f)
    return 0


def _worker_main(kind: str, job_file: str) -> int:
    sys.meta_path.insert(0, _Blocker())
    return run_worker_job(kind, job_file, {"_write-ckpt": _write_ckpt_job, "_check": _check_job})


class WorkerError(RuntimeError):
    pass


def _run(kind: str, job: dict, workdir: str, timeout: Optional[float]) -> None:
    rc, status, tail = _run_worker(kind, job, workdir, timeout, module="msmigrate.keras.worker")
    if rc != 0 or not status or not status.get("ok"):
        msg = (status or {}).get("message") or tail
        raise WorkerError(f"MindSpore worker ({kind.strip('_')}) failed: {msg}")


def _check_spec(tmp: str, out_dir: str, inputs, refs, modes, rtol) -> dict:
    npz = os.path.join(tmp, "io.npz")
    arrays = {f"in{i}": (np.asarray(a, np.int32) if np.issubdtype(np.asarray(a).dtype, np.integer)
                         else np.asarray(a, np.float32)) for i, a in enumerate(inputs)}
    arrays.update({f"out{i}": np.asarray(r) for i, r in enumerate(refs)})
    np.savez(npz, **arrays)
    return {"out_dir": os.path.abspath(out_dir), "npz": npz, "n_in": len(inputs), "n_out": len(refs),
            "modes": list(modes), "rtol": rtol, "result_file": os.path.join(tmp, "result.json")}


def write_checkpoint(out_dir: str, class_name: str, weights: Dict[str, np.ndarray],
                     timeout: Optional[float] = 900, check: Optional[dict] = None):
    """Write ``out_dir/model.ckpt`` from converted weights (in a MindSpore-only process).

    ``check``: {"inputs", "refs", "modes", "rtol"}: also compare outputs in that process; returns the
    check_outputs() result then, else the checkpoint path."""
    with tempfile.TemporaryDirectory(prefix="msm-keras-") as tmp:
        npz = os.path.join(tmp, "weights.npz")
        np.savez(npz, **weights)
        job = {"out_dir": os.path.abspath(out_dir), "class_name": class_name, "weights_npz": npz}
        if check:
            job["check"] = _check_spec(tmp, out_dir, check["inputs"], check["refs"],
                                       check.get("modes", ("pynative", "graph")), check.get("rtol", 1e-4))
        _run("_write-ckpt", job, tmp, timeout)
        if check:
            with open(job["check"]["result_file"]) as f:
                return json.load(f)
    return os.path.join(out_dir, "model.ckpt")


def check_outputs(out_dir: str, inputs: Sequence[np.ndarray], refs: Sequence[np.ndarray],
                  modes=("pynative", "graph"), rtol: float = 1e-4, timeout: Optional[float] = 900) -> dict:
    """Run create_model() on ``inputs`` (MindSpore layout) in each mode; compare with ``refs``.

    Returns {mode: {"ok", "max_abs_diff", "max_abs_ref"} or {"ok": False, "error"}}. Pass criterion:
    max|d| <= rtol * max(1, max|ref|) for every output.
    """
    with tempfile.TemporaryDirectory(prefix="msm-keras-") as tmp:
        job = _check_spec(tmp, out_dir, inputs, refs, modes, rtol)
        _run("_check", job, tmp, timeout)
        with open(job["result_file"]) as f:
            return json.load(f)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] in ("_write-ckpt", "_check"):
        sys.exit(_worker_main(sys.argv[1], sys.argv[2]))
    print("usage: python -m msmigrate.keras.worker _write-ckpt|_check JOB.json", file=sys.stderr)
    sys.exit(2)
