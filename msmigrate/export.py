"""``msmigrate export``: a converted MindSpore network -> a MindIR file, with proof.

    msmigrate export --ms torchvision.models:resnet18 --path converted/ --input 1,3,224,224 \\
        --ckpt resnet18.ckpt -o resnet18.mindir

builds the network (MODULE:CALLABLE, imported from ``--path``), loads the checkpoint
(every parameter the checkpoint does not fill and every checkpoint entry the network
does not use is an error), puts it in inference mode (``set_train(False)``), writes the
MindIR file with ``mindspore.export`` and then proves the file: it is read back with
``mindspore.load`` and run through ``nn.GraphCell`` on the same seeded random input,
and its output must equal the network's own output (``max|d| <= --atol``, 1e-5 by
default). Exit status: 0 when the file reproduces the network, 1 when it does not (or
MindSpore fails to build, load, export or run), 2 for usage errors (bad spec, shape,
missing checkpoint). Errors are one line, never a traceback.

The MindSpore work runs in a worker process (``python -m msmigrate.export _export-ms
JOB``) that never imports torch: the converted tree must depend on MindSpore and NumPy
only. The worker plumbing (job/status files, one-line errors) is msmigrate.verify's.

This module imports neither torch nor mindspore at import time.
"""
from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import os
import sys
import tempfile
import time
import types
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, List, Optional, Sequence, Union

from .verify import (InputSpec, VerifyUsageError, Verdict, _ArgParser, _build, _check_top_level, _flatten, _fmt,
                     _import_roots, _jsonable, _ms_leaf, _ms_to_np, _one_line, _parse_spec, _run_worker,
                     _TorchBlocker, add_input_arguments, cli_entry, compare_arrays, from_known_fields, make_inputs,
                     parse_input_spec, record_error, reported, run_worker_job)

__all__ = ["ExportResult", "export_mindir", "main_export", "mindir_path"]

DEFAULT_ATOL = 1e-5
MODES = ("graph", "pynative")
_MAX_LISTED = 200  # checkpoint mismatches listed one per line (all of them up to this many)


def mindir_path(out: Union[str, os.PathLike]) -> str:
    """The file ``mindspore.export(file_name=out, file_format="MINDIR")`` writes: MindSpore
    appends ``.mindir`` unless the name already ends with it."""
    out = os.path.abspath(os.fspath(out))
    return out if out.endswith(".mindir") else out + ".mindir"


@dataclass
class ExportResult(Verdict):
    spec: str = ""
    path: str = ""                  # the MindIR file written
    inputs: list = field(default_factory=list)   # [{"shape", "dtype"}]
    seed: int = 0
    mode: str = "graph"
    atol: float = DEFAULT_ATOL
    checkpoint: str = ""            # what was loaded, one line
    outputs: list = field(default_factory=list)  # [{"path", "shape", "max_abs", "passed", "note"}]
    error: Optional[str] = None     # one line
    error_detail: Optional[str] = None
    notes: list = field(default_factory=list)  # how the export went, one line each
    mismatches: list = field(default_factory=list)  # checkpoint names, one line each
    file_bytes: int = 0
    timings: dict = field(default_factory=dict)
    versions: dict = field(default_factory=dict)
    torch_imported: bool = False

    @property
    def passed(self) -> bool:
        return self.error is None and bool(self.outputs) and all(o["passed"] for o in self.outputs)

    @property
    def max_abs(self) -> Optional[float]:
        vals = [o["max_abs"] for o in self.outputs if o.get("max_abs") is not None]
        return max(vals) if vals else None

    def to_dict(self) -> dict:
        d = asdict(self)
        d.update(passed=self.passed, exit_code=self.exit_code, max_abs=self.max_abs)
        return _jsonable(d)

    @classmethod
    def from_dict(cls, d: dict) -> "ExportResult":
        return from_known_fields(cls, d)


# --------------------------------------------------------------------------- MindSpore side


def _load_checkpoint(ms: Any, net: Any, ckpt: str, result: ExportResult) -> bool:
    """load_checkpoint + load_param_into_net, strictly: MindSpore itself only warns about
    parameters it did not fill and checkpoint entries it did not use, so both lists are
    checked here. Returns False (result.error set) on any mismatch."""
    try:
        params = ms.load_checkpoint(ckpt)
    except Exception as e:  # noqa: BLE001
        record_error(result, f"cannot read checkpoint {ckpt}", e)
        return False
    try:
        not_loaded, unused = ms.load_param_into_net(net, params, strict_load=True)
    except Exception as e:  # noqa: BLE001  (e.g. a shape that does not fit)
        record_error(result, f"checkpoint {ckpt} does not fit the network", e)
        return False
    not_loaded, unused = list(not_loaded or ()), list(unused or ())
    if not_loaded or unused:
        result.error = (f"checkpoint {ckpt} does not match the network: {len(not_loaded)} network parameter(s) "
                        f"not in the checkpoint, {len(unused)} checkpoint entr{'y' if len(unused) == 1 else 'ies'} "
                        f"not used by the network")
        result.mismatches = ([f"not in the checkpoint: {n}" for n in not_loaded]
                             + [f"not used by the network: {n}" for n in unused])
        return False
    result.checkpoint = f"{ckpt} ({len(params)} entries, all loaded)"
    return True


@functools.lru_cache(maxsize=1)
def _runtime_deploy() -> types.ModuleType:
    """The emitted runtime's deployment section (templates/compat_parts/deploy.py) as a module of its own:
    converted programs and `msmigrate export` write MindIR through the same strict-then-lax export."""
    path = Path(__file__).resolve().parent / "templates" / "compat_parts" / "deploy.py"
    spec = importlib.util.spec_from_file_location("msmigrate._runtime_deploy", path)
    deploy = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(deploy)
    return deploy


def _ms_export(net: Any, inputs: list, file_name: str) -> Optional[str]:
    """mindspore.export(..., file_format="MINDIR"), as the converted programs' helper does it (strict syntax
    mode, then lax mode for a network that strict mode refuses, e.g. torchvision's `_log_api_usage_once(fn)`
    reading `fn.__module__`). Returns a note when lax mode was needed, or None. Either way the caller proves
    the file by reloading it."""
    strict_error = _runtime_deploy()._export_lax_fallback(net, inputs, file_name, "MINDIR")
    if strict_error is None:
        return None
    return f"exported in MindSpore's lax syntax mode (strict mode refused: {_one_line(strict_error, 200)})"


def _export_to(net: Any, inputs: list, out: str) -> Optional[str]:
    """mindspore.export into a temporary folder beside ``out``, then moved to ``out``:
    MindSpore chmods the folder it writes into to 0700 and the file to read-only, which
    the user's output folder and a later re-export should not get. Returns _ms_export's note."""
    parent = os.path.dirname(out)
    os.makedirs(parent, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=parent, prefix=".msmigrate-export-") as tmp:
        written = os.path.join(tmp, "model.mindir")
        note = _ms_export(net, inputs, written)
        if not os.path.isfile(written):
            raise RuntimeError(f"mindspore.export wrote no {written}")
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(written, 0o666 & ~umask)
        if os.path.exists(out):
            os.chmod(out, 0o600)  # an earlier export left it read-only
        os.replace(written, out)
    return note


def export_mindir(spec: str, path: Union[None, str, Sequence[str]], inputs_spec: Any, out: str,
                  ckpt: Optional[str] = None, mode: str = "graph", seed: int = 0,
                  atol: float = DEFAULT_ATOL, save_outputs: Optional[str] = None) -> ExportResult:
    """Build ``spec``, load ``ckpt``, export MindIR to ``out`` and check the reloaded file
    against the network on seeded inputs (see the module docstring). ``save_outputs``: an
    .npz to write the inputs (``in/I``), the network's outputs (``net/I``) and the reloaded
    file's outputs (``mindir/I``) to.

    Must run in a process that never imports torch. Raises :class:`VerifyUsageError` for
    a spec that cannot be located or bad inputs; everything MindSpore does wrong ends up
    in the returned result."""
    os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")  # before the first convolution (see verify._child_env)
    if mode not in MODES:
        raise VerifyUsageError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    specs = [parse_input_spec(s) for s in (inputs_spec if isinstance(inputs_spec, (list, tuple))
                                           and not all(isinstance(d, int) for d in inputs_spec)
                                           else [inputs_spec])]
    out = mindir_path(out)
    result = ExportResult(spec=spec, path=out, inputs=[{"shape": list(s.shape), "dtype": s.dtype} for s in specs],
                          seed=seed, mode=mode, atol=atol)
    t0 = time.perf_counter()
    import mindspore as ms

    result.versions["mindspore"] = ms.__version__
    result.timings["ms_import_s"] = time.perf_counter() - t0
    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)

    t1 = time.perf_counter()
    try:
        net = _build(spec, path, "mindspore")
    except VerifyUsageError:
        raise
    except Exception as e:  # noqa: BLE001
        return record_error(result, f"building {spec} failed", e)
    finally:
        result.torch_imported = "torch" in sys.modules
    result.timings["build_s"] = time.perf_counter() - t1
    if not isinstance(net, ms.nn.Cell):
        result.error = f"{spec} returned {type(net).__name__}, not a mindspore.nn.Cell"
        return result
    if ckpt:
        t2 = time.perf_counter()
        if not _load_checkpoint(ms, net, ckpt, result):
            return result
        result.timings["load_checkpoint_s"] = time.perf_counter() - t2
    else:
        result.checkpoint = "none (the network's own initial weights)"
    net.set_train(False)

    arrays = make_inputs(specs, seed=seed)
    inputs = [ms.Tensor(a) for a in arrays]
    leaf, to_np = _ms_leaf(ms), _ms_to_np(ms)
    stage = "running the network"
    try:
        t3 = time.perf_counter()
        expected = _flatten(net(*inputs), leaf, to_np)
        result.timings["run_net_s"] = time.perf_counter() - t3
        if not expected:
            raise VerifyUsageError(f"{spec} returned no tensor output: nothing to compare")
        stage = "mindspore.export"
        t4 = time.perf_counter()
        note = _export_to(net, inputs, out)
        if note:
            result.notes.append(note)
        result.timings["export_s"] = time.perf_counter() - t4
        result.file_bytes = os.path.getsize(out)
        stage = "reloading the MindIR file (mindspore.load + nn.GraphCell)"
        t5 = time.perf_counter()
        graph_cell = ms.nn.GraphCell(ms.load(out))
        got = _flatten(graph_cell(*inputs), leaf, to_np)
        result.timings["reload_run_s"] = time.perf_counter() - t5
    except VerifyUsageError:
        raise
    except Exception as e:  # noqa: BLE001
        return record_error(result, f"{stage} failed", e)
    for i, (p, want) in enumerate(expected):
        have = got[i][1] if i < len(got) else None
        c = compare_arrays(want, have, rtol=0.0)  # max|d| only: the tolerance here is absolute
        passed = c["max_abs"] is not None and c["max_abs"] <= atol and not c["note"]
        result.outputs.append({"path": p, "shape": c["shape_torch"], "dtype": c["dtype_torch"],
                               "max_abs": c["max_abs"], "passed": bool(passed),
                               "note": c["note"].replace("missing on the MindSpore side",
                                                         "missing from the MindIR output")})
    if save_outputs:
        import numpy as np

        np.savez(save_outputs, **{f"in/{i}": a for i, a in enumerate(arrays)},
                 **{f"net/{i}": a for i, (_, a) in enumerate(expected)},
                 **{f"mindir/{i}": a for i, (_, a) in enumerate(got)})
    for p, extra in got[len(expected):]:
        result.outputs.append({"path": p, "shape": list(extra.shape), "dtype": str(extra.dtype), "max_abs": None,
                               "passed": False, "note": "extra output in the MindIR file"})
    result.timings["total_s"] = time.perf_counter() - t0
    result.torch_imported = "torch" in sys.modules
    return result


# --------------------------------------------------------------------------- report


def format_report(r: ExportResult) -> str:
    lines = [f"msmigrate export: {r.spec} -> {r.path}",
             "inputs: " + "; ".join(InputSpec(tuple(i["shape"]), i["dtype"]).describe() for i in r.inputs)
             + f"   seed {r.seed}   mode {r.mode}"]
    if r.checkpoint:
        lines.append(f"checkpoint: {r.checkpoint}")
    if r.error:
        lines.append(f"ERROR: {r.error}")
        lines += [f"  {m}" for m in r.mismatches[:_MAX_LISTED]]
        if len(r.mismatches) > _MAX_LISTED:
            lines.append(f"  ... and {len(r.mismatches) - _MAX_LISTED} more")
    t = r.timings
    if "export_s" in t:
        size = f"{r.file_bytes / 2**20:.1f} MiB" if r.file_bytes >= 2**20 else f"{r.file_bytes} bytes"
        lines.append(f"exported in {t['export_s']:.2f} s ({size}); reloaded and run through nn.GraphCell in "
                     f"{t.get('reload_run_s', 0.0):.2f} s")
    lines += [f"note: {n}" for n in r.notes]
    for o in r.outputs:
        shape = "(" + ",".join(map(str, o["shape"])) + ")"
        verdict = "ok" if o["passed"] else "FAIL"
        note = f"  [{o['note']}]" if o["note"] else ""
        lines.append(f"  {o['path']:<10} {shape:<16} max|d| {_fmt(o['max_abs'])} (atol {r.atol:g})  {verdict}{note}")
    if r.passed:
        lines.append("RESULT: PASS (the MindIR file, reloaded through nn.GraphCell, reproduces the network's output)")
    else:
        lines.append("RESULT: FAIL" + ("" if r.error else
                                       " (the MindIR file does not reproduce the network's output)"))
    return "\n".join(lines)


# --------------------------------------------------------------------------- CLI


def _make_parser() -> argparse.ArgumentParser:
    p = _ArgParser(prog="msmigrate export",
                   description="Export a converted MindSpore network to MindIR and prove that the file, reloaded "
                               "with mindspore.load + nn.GraphCell, computes what the network computes.")
    p.add_argument("--ms", required=True, metavar="MODULE:CALLABLE",
                   help="MindSpore net factory, called with no arguments (e.g. torchvision.models:resnet18)")
    p.add_argument("--path", metavar="DIR", help="import root for --ms, e.g. the converted tree (default: cwd)")
    add_input_arguments(p, "1,3,224,224")
    p.add_argument("-o", "--out", required=True, metavar="FILE.mindir",
                   help="the MindIR file to write (.mindir is appended when the name lacks it)")
    p.add_argument("--ckpt", metavar="W.ckpt", help="MindSpore checkpoint to load first (e.g. from msmigrate weights)")
    p.add_argument("--mode", default="graph", choices=list(MODES),
                   help="MindSpore mode for building, running and exporting the network (default graph)")
    p.add_argument("--atol", type=float, default=DEFAULT_ATOL,
                   help=f"pass when max|network - reloaded file| <= ATOL (default {DEFAULT_ATOL:g})")
    p.add_argument("--seed", type=int, default=0, help="seed of the random input (default 0)")
    p.add_argument("--json", metavar="FILE", help="also write the result as JSON")
    p.add_argument("--save-outputs", metavar="FILE.npz",
                   help="write the input (in/I), the network's outputs (net/I) and the reloaded file's (mindir/I)")
    p.add_argument("--timeout", type=float, default=None, metavar="S", help="time limit for the worker, in seconds")
    return p


def main_export(argv: Optional[Sequence[str]] = None) -> int:
    """``msmigrate export`` entry point; returns the exit status (0 pass, 1 fail, 2 usage)."""
    return cli_entry("export", _main_export, argv)


def _main_export(argv: List[str]) -> int:
    args = _make_parser().parse_args(argv)
    _parse_spec(args.ms)
    if not args.inputs:
        raise VerifyUsageError("at least one --input SHAPE is required, e.g. --input 1,3,224,224")
    specs = [parse_input_spec(shape, dtype) for shape, dtype in args.inputs]
    if not args.atol >= 0:
        raise VerifyUsageError("--atol must be zero or positive")
    roots = _import_roots(args.path) or [os.getcwd()]
    _check_top_level(args.ms, roots, "mindspore")
    ckpt = None
    if args.ckpt:
        ckpt = os.path.abspath(args.ckpt)
        if not os.path.isfile(ckpt):
            raise VerifyUsageError(f"checkpoint {args.ckpt} does not exist" if not os.path.exists(ckpt)
                                   else f"checkpoint {args.ckpt} is not a file")
    out = mindir_path(args.out)
    if os.path.isdir(out):
        raise VerifyUsageError(f"output {out} is a directory")
    parent = os.path.dirname(out)
    if os.path.exists(parent) and not os.path.isdir(parent):
        raise VerifyUsageError(f"cannot write {out}: {parent} is not a directory")
    if out != os.path.abspath(args.out):
        print(f"msmigrate export: note: MindSpore names MindIR files *.mindir: writing {out}", file=sys.stderr)

    with tempfile.TemporaryDirectory(prefix="msmigrate-export-") as workdir:
        result_file = os.path.join(workdir, "export_result.json")
        rc, status, tail = _run_worker("_export-ms", {
            "spec": args.ms, "path": roots, "inputs": [asdict(s) for s in specs], "out": out, "ckpt": ckpt,
            "mode": args.mode, "seed": args.seed, "atol": args.atol, "result_file": result_file,
            "save_outputs": os.path.abspath(args.save_outputs) if args.save_outputs else None},
            workdir, args.timeout, module="msmigrate.export")
        if status and status.get("usage"):
            raise VerifyUsageError(status.get("message"))
        if status and status.get("ok") and os.path.exists(result_file):
            with open(result_file) as f:
                result = ExportResult.from_dict(json.load(f))
        else:
            msg = (status or {}).get("message") or f"the MindSpore worker failed: {tail}"
            result = ExportResult(spec=args.ms, path=out, seed=args.seed, mode=args.mode, atol=args.atol,
                                  inputs=[{"shape": list(s.shape), "dtype": s.dtype} for s in specs], error=msg)
    return reported(result, lambda r: print(format_report(r)), args.json)


# --------------------------------------------------------------------------- worker


def _export_job(job: dict) -> int:
    sys.meta_path.insert(0, _TorchBlocker())  # the converted tree must not need torch
    result = export_mindir(job["spec"], job["path"], job["inputs"], job["out"], ckpt=job["ckpt"],
                           mode=job["mode"], seed=job["seed"], atol=job["atol"], save_outputs=job.get("save_outputs"))
    with open(job["result_file"], "w") as f:
        json.dump(result.to_dict(), f)
    return result.exit_code


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "_export-ms":
        sys.exit(run_worker_job(sys.argv[1], sys.argv[2], {"_export-ms": _export_job}))
    sys.exit(main_export(sys.argv[1:]))
