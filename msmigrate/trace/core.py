"""`msmigrate trace`: the graph-capture route from a torch model to a MindSpore model.py + model.ckpt."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional

import numpy as np

from .capture import CaptureError, export
from .check import max_diff, tolerance
from .codegen import Generator, record_torch, validate_nodes


@dataclass
class TraceResult:
    out_dir: Path
    ok: bool = False
    missing: List[tuple] = field(default_factory=list)
    nodes: List[dict] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    first_bad: Optional[dict] = None
    pynative_diff: Optional[float] = None
    tol: Optional[float] = None
    check: Optional[dict] = None
    step_diff: Optional[float] = None
    seconds: dict = field(default_factory=dict)


def trace_model(model, args, out_dir, *, source: str = "", dynamic_batch: bool = True, mindir: bool = False,
                check: bool = True, roots=(), validate: bool = True, dynamic_shapes=None,
                generate: bool = False, decode=None, train: bool = False) -> TraceResult:
    """Export `model` on example `args`, write out_dir/model.py, model.ckpt, trace-report.md
    (and model.mindir); validate node by node; with `check`, rerun the written model in a process
    without torch, PYNATIVE and GRAPH (and the MindIR). `decode` = (step module, step args, dynamic
    shapes): a second graph, the decode step with its KV cache as input and output (see kvcache.py);
    `generate` (True, or "seq2seq" for an encoder-decoder) then emits a generate() that prefills with
    the model and decodes with the step. `train`: trace the training-mode forward (for fine-tuning, see
    finetune.py; dropout with p > 0 is then refused, as its random masks cannot match torch's)."""
    import torch

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    res = TraceResult(out)
    model = model.train(train)
    args = tuple(args)
    with torch.no_grad():
        y = model(*args)
    t0 = time.perf_counter()
    ep, notes = export(model, args, dynamic_batch=dynamic_batch, roots=roots, dynamic_shapes=dynamic_shapes,
                       train=train)
    res.seconds["export"] = round(time.perf_counter() - t0, 1)
    res.notes += notes
    gen = Generator(model, ep, type(model).__name__)
    gen.convert()
    res.missing = gen.missing
    header = (f"MindSpore model traced from {source or type(model).__name__} by `msmigrate trace`.\n\n"
              f"create_model() builds the network and loads model.ckpt (next to this file), whose parameter names\n"
              f"are the torch state_dict keys. Depends on MindSpore and NumPy only.")
    if gen.missing:
        _write_report(res, gen, source)
        return res
    step_gen, step_extra = None, ""
    if decode is not None:
        step_gen = _trace_step(model, decode, gen, res)
        if step_gen is not None and step_gen.missing:
            res.missing = [(op, f"{why} (decode step)", where) for op, why, where in step_gen.missing]
            _write_report(res, gen, source)
            return res
        if step_gen is not None:
            from .kvcache import step_code_used

            step_extra = step_code_used(step_gen)
    code = gen.source(header, step_extra)
    if step_gen is not None:
        from .kvcache import CREATE_STEP, step_source

        code += "\n\n" + step_source(step_gen, gen) + "\n\n\n" + CREATE_STEP + "\n"
    if generate:  # a causal LM: decoding on top of the traced forward (and decode step, when traced)
        from .generate_src import GENERATE, GENERATE_KV, GENERATE_SEQ2SEQ

        if generate == "seq2seq" and step_gen is None:
            raise CaptureError("the decode step of the encoder-decoder was not traced: no generate() to write")
        code += "\n\n" + (GENERATE_SEQ2SEQ if generate == "seq2seq" else GENERATE_KV if step_gen is not None
                           else GENERATE)
    (out / "model.py").write_text(code, encoding="utf-8")
    import mindspore as ms

    ms.set_context(mode=ms.PYNATIVE_MODE)
    ckpt = {k: v.detach().cpu().numpy() for k, v in gen.values.items()}
    ms.save_checkpoint([{"name": k, "data": ms.Tensor(v)} for k, v in ckpt.items()], str(out / "model.ckpt"))
    flat_y = y[0] if isinstance(y, (tuple, list)) else y
    step_io = {}
    if step_gen is not None:
        with torch.no_grad():
            step_y = decode[0](*decode[1])
        flat_in = [a for x in decode[1] for a in (x if isinstance(x, (tuple, list)) else (x,))]
        step_io = {f"s{i}": a.detach().numpy() for i, a in enumerate(flat_in)}
        step_io["sy"] = step_y[0].detach().numpy()
    np.savez(out / "trace-io.npz", **{f"x{i}": a.detach().numpy() for i, a in enumerate(args)},
             y=flat_y.detach().numpy(), dynamic=np.array(any("as dynamic" in n for n in res.notes)), **step_io)
    ns = {"__file__": str(out / "model.py"), "__name__": "traced_model"}
    exec(compile(code, str(out / "model.py"), "exec"), ns)  # noqa: S102 - the model we just wrote
    net = ns["create_model"]()
    res.seconds["generate"] = round(time.perf_counter() - t0 - res.seconds["export"], 1)
    t0 = time.perf_counter()
    if validate:
        recorded = record_torch(ep, args)
        res.nodes = validate_nodes(gen, recorded, ns, net)
        res.first_bad = next((r for r in res.nodes if not r["ok"]), None)
    got = net(*[ms.Tensor(a.detach().numpy()) for a in args])
    got = got[0] if isinstance(got, (tuple, list)) else got
    yy = flat_y.detach().numpy()
    res.tol = tolerance(yy)
    res.pynative_diff = max_diff(got.asnumpy(), yy)
    res.ok = res.pynative_diff <= res.tol
    if step_gen is not None:
        step = ns["create_decode_step"](net)
        got = step(*[ms.Tensor(step_io[f"s{i}"]) for i in range(len(step_io) - 1)])[0].asnumpy()
        res.step_diff = max_diff(got, step_io["sy"])
        res.notes.append(f"decode step (KV cache in and out), PyNative in the tracing process: logits max|d| "
                         f"{_fmt(res.step_diff)}")
        res.ok = res.ok and res.step_diff <= 1e-4 * max(1.0, float(np.abs(step_io["sy"]).max()))
    res.seconds["validate"] = round(time.perf_counter() - t0, 1)
    if check:
        t0 = time.perf_counter()
        res.check = check_in_subprocess(out, mindir=mindir)
        res.seconds["check"] = round(time.perf_counter() - t0, 1)
        res.ok = res.ok and bool(res.check.get("ok"))
    _write_report(res, gen, source)
    return res


def _trace_step(model, decode, gen, res):
    """Export and convert the decode step (kvcache.convert_step); None, with a note, when torch.export
    refuses it (generate() then reruns the whole sequence each step)."""
    from .kvcache import convert_step
    from .ops import NotConverted

    try:
        step_gen, notes = convert_step(model, *decode, gen)
    except (CaptureError, NotConverted) as exc:
        res.notes.append(f"decode step not traced ({str(exc).splitlines()[0][:200]}): generate() reruns the "
                         f"whole sequence each step")
        return None
    res.notes += [f"decode step: {n}" for n in notes]
    return step_gen


def id_range(model) -> int:
    """How many token ids the model's input embedding holds: HF's get_input_embeddings(), else the
    smallest nn.Embedding of the model (ids drawn below it index every table), else 2."""
    import torch

    get = getattr(model, "get_input_embeddings", None)
    if callable(get):
        try:
            emb = get()
        except Exception:  # noqa: BLE001 - a model without a text embedding
            emb = None
        if isinstance(emb, torch.nn.Embedding):
            return int(emb.num_embeddings)
    sizes = [m.num_embeddings for m in model.modules() if isinstance(m, torch.nn.Embedding)]
    return int(min(sizes)) if sizes else 2


def padding_mask(dims, left=False):
    """An attention mask of ones whose row i (i >= 1) ends (or, left, starts) with padding zeros: 3*i of
    them, at most all but one position, so every row keeps a token."""
    import torch

    mask = torch.ones(dims, dtype=torch.long)
    seq = dims[-1]
    for i in range(1, dims[0] if len(dims) > 1 else 0):
        n = min(3 * i, seq - 1)
        if left:
            mask[i, ..., :n] = 0
        else:
            mask[i, ..., seq - n:] = 0
    return mask


def example_inputs(model, specs, seed: int = 0):
    """The tracing inputs from `--input SHAPE[:KIND]` specs. KIND: none (float normal), int64/long/ids
    (token ids drawn over the whole vocabulary of the model's input embedding), mask (an attention mask
    with right padding), mask_left (left padding, as decoder LMs are batched for generation)."""
    import torch

    g = torch.Generator().manual_seed(seed)
    args = []
    for spec in specs:
        shape, _, kind = spec.partition(":")
        dims = tuple(int(s) for s in shape.split(",") if s)
        if kind in ("int64", "long", "ids"):
            args.append(torch.randint(0, id_range(model), dims, generator=g))
        elif kind in ("mask", "mask_left"):
            args.append(padding_mask(dims, left=kind == "mask_left"))
        elif kind in ("", "float", "float32"):
            args.append(torch.randn(*dims, generator=g))
        else:
            raise ValueError(f"--input {spec}: unknown kind {kind!r} (float, int64/ids, mask, mask_left)")
    return args


def check_in_subprocess(out: Path, mindir: bool = False, timeout: int = 1800) -> dict:
    """Run out/model.py in a fresh process that never imports torch (PYNATIVE, GRAPH, MindIR)."""
    cmd = [sys.executable, "-m", "msmigrate.trace.check", str(out)] + (["--mindir"] if mindir else [])
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    try:
        return json.loads(r.stdout.strip().splitlines()[-1])
    except Exception:  # noqa: BLE001
        return {"ok": False, "error": (r.stderr or r.stdout).strip()[-800:]}


def _fmt(d):
    return "inf" if d is None or d == float("inf") else f"{d:.2e}"


def _write_report(res: TraceResult, gen: Generator, source: str) -> None:
    lines = [f"# msmigrate trace report: {source or gen.class_name}", ""]
    if res.missing:
        lines += ["**Not converted**: the graph has ops without a MindSpore converter:", ""]
        for op, why, where in res.missing:
            lines.append(f"- `{op}`: {why}" + (f" (at {where})" if where else ""))
        lines.append("")
    for n in res.notes:
        lines.append(f"- {n}")
    if res.pynative_diff is not None:
        lines.append(f"- whole model, PyNative, in the tracing process: max|d| {_fmt(res.pynative_diff)} "
                     f"(tolerance {res.tol:.1e}) -> {'pass' if res.pynative_diff <= res.tol else 'FAIL'}")
    if res.check:
        c = res.check
        for mode in ("pynative", "graph", "mindir", "mindir_batch1", "step_pynative", "step_graph"):
            if mode in c:
                m = c[mode]
                lines.append(f"- torch-free process, {mode}: " + (f"max|d| {_fmt(m.get('max_abs_diff'))} -> "
                             f"{'pass' if m.get('pass') else 'FAIL'}" if "error" not in m else f"ERROR {m['error']}"))
        if "error" in c:
            lines.append(f"- torch-free check failed: {c['error']}")
        if "mindir_dynamic_error" in c:
            lines.append(f"- MindIR with a dynamic batch failed, exported with a fixed batch: {c['mindir_dynamic_error']}")
    lines.append("- checkpoint: parameter names are the torch state_dict keys (BatchNorm/LayerNorm/Embedding/"
                 "Linear cells are written with torch's names: weight, bias, running_mean, running_var, "
                 "num_batches_tracked), plus non-persistent buffers and lifted constants of the graph")
    for k, other in gen.tied:
        lines.append(f"- tied parameters: `{k}` is `{other}` in torch (one tensor); the MindSpore model holds one "
                     f"Parameter for both (named `{other}`; training updates both uses, as in torch)")
    if gen.lines:
        from collections import Counter

        forms = Counter()
        names = set(gen.var.values())
        for node, var, code, _mod in gen.lines:
            form = re.sub(r"self(\.\w+|\[\d+\])+", "self.<member>", code)
            form = re.sub(r"(?<![\w.])[A-Za-z_]\w*", lambda m: "x" if m.group(0) in names else m.group(0), form)
            form = re.sub(r"(?<![\w.])-?\d+(\.\d+)?(e-?\d+)?", "n", form)
            form = form if var is not None else f"{form} (alias, no op)"
            forms[(str(node.target), form if len(form) < 70 else form[:67] + "...")] += 1
        lines += ["", "## Ops", "", "| ATen op | MindSpore form | count |", "|---|---|---|"]
        for (op, form), n in sorted(forms.items()):
            lines.append(f"| `{op}` | `{form}` | {n} |")
    if res.first_bad:
        b = res.first_bad
        lines += ["", f"**First diverging node**: `{b['node']}` ({b['op']}, {b['module']}): "
                  f"max|d| {_fmt(b['max_abs_diff'])} > {b['tol']:.1e} {b.get('error', '')}", ""]
    if res.nodes:
        lines += ["", "## Node by node", "", "Each emitted expression run (PyNative) on the torch inputs of its "
                  "node, against torch's output.", "",
                  "| node | ATen op | MindSpore | max abs diff | ok |", "|---|---|---|---|---|"]
        for r in res.nodes:
            code = r["code"].replace("|", "\\|")
            if len(code) > 90:
                code = code[:87] + "..."
            lines.append(f"| {r['node']} | `{r['op']}` | `{code}` | {_fmt(r['max_abs_diff'])} | "
                         f"{'yes' if r['ok'] else 'NO ' + r.get('error', '')[:80]} |")
    (res.out_dir / "trace-report.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main_trace(argv=None) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="msmigrate trace",
                                description="Capture a torch model with torch.export and write a MindSpore model.py "
                                            "(+ model.ckpt, trace-report.md).")
    p.add_argument("--torch", required=True, help="MODULE:CALLABLE returning the torch model (e.g. pkg.models:build)")
    p.add_argument("--path", default=None, help="directory put first on sys.path to import MODULE")
    p.add_argument("--input", required=True, action="append",
                   help="input shape, e.g. 2,3,224,224 (repeat for several inputs, in forward's order); suffix :int64 for "
                        "token ids over the model's vocabulary, :mask / :mask_left for an attention mask with "
                        "padding")
    p.add_argument("-o", "--out", required=True, help="output directory")
    p.add_argument("--mindir", action="store_true", help="also export model.mindir and check it through nn.GraphCell")
    p.add_argument("--static-batch", action="store_true", help="do not try a dynamic batch dimension")
    p.add_argument("--no-check", action="store_true", help="skip the torch-free PYNATIVE/GRAPH check")
    p.add_argument("--train", action="store_true", help="trace the training-mode forward, for fine-tuning (make "
                   "forward return the loss; dropout must be 0; see msmigrate/trace/finetune.py)")
    a = p.parse_args(argv)
    import torch

    from .capture import load_builder

    try:
        builder = load_builder(a.torch, a.path)
    except (CaptureError, ImportError, AttributeError) as exc:
        print(f"msmigrate trace: error: cannot load {a.torch}: {exc}", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    model = builder()
    try:
        args = example_inputs(model, a.input)
    except ValueError as exc:
        print(f"msmigrate trace: error: {exc}", file=sys.stderr)
        return 2
    try:
        res = trace_model(model, args, a.out, source=a.torch, dynamic_batch=not a.static_batch, mindir=a.mindir,
                          check=not a.no_check, roots=[Path(a.path).resolve()] if a.path else (), train=a.train)
    except CaptureError as exc:
        print(f"msmigrate trace: error: {exc}", file=sys.stderr)
        return 1
    return print_outcome("msmigrate trace", res, f"{res.out_dir / 'model.py'}, model.ckpt, trace-report.md"
                         + (", model.mindir" if a.mindir else ""))


def print_outcome(prog: str, res: TraceResult, written: str) -> int:
    """The end of a trace command: the nodes without a converter (exit status 1), or what was `written`, the
    PyNative difference, the first diverging node and the torch-free check (0 when it all passed)."""
    if res.missing:
        print(f"{prog}: {len(res.missing)} graph node(s) without a converter:", file=sys.stderr)
        for op, why, where in res.missing[:20]:
            print(f"  {op}: {why}" + (f" at {where}" if where else ""), file=sys.stderr)
        return 1
    print(f"{prog}: wrote {written}")
    print(f"{prog}: PyNative max|d| {_fmt(res.pynative_diff)} (tolerance {res.tol:.1e})")
    if res.first_bad:
        b = res.first_bad
        print(f"{prog}: first diverging node {b['node']} ({b['op']}): {_fmt(b['max_abs_diff'])} "
              f"{b.get('error', '')}", file=sys.stderr)
    if res.check:
        print(f"{prog}: torch-free check: " + json.dumps(res.check))
    return 0 if res.ok else 1
