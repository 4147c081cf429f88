"""`msmigrate dump-config`: a MindSpore dump configuration for chosen layers, and the
offline comparison of the dumped tensors with torch's.

MindSpore (GRAPH mode; checked with 2.10 on CPU) writes the inputs/outputs of the kernels a
JSON file selects when the environment variable MINDSPORE_DUMP_CONFIG names that file at
import time. Kernels carry scoped names such as
`Default/layer1-SequentialCell/0-Block/conv-Conv2d/Conv2D-op0` (cell attribute name, a dash,
the cell's class, per level). With `dump_mode: 1` the `kernels` list selects them; each entry
is a full kernel name, an operator type (`Conv2D`), or `name-regex(RE)`, where RE must match
the WHOLE name (a prefix alone matches nothing: MindSpore then warns "Unused Kernel in json").
A torch layer path `layer1.0` therefore becomes `name-regex(Default/layer1-[^/]+/0-[^/]+/.*)`.

The dumps land in `<path>/rank_0/<net_name>/<graph_id>/<iteration>/` as
`<OpType>.<full name with / as _>.<task>.<stream>.<timestamp>.output.<i>.<format>.<dtype>.npy`,
and `<path>/rank_0/execution_order/ms_execution_order_graph_<graph_id>.csv` lists the kernels
in the order they ran: a layer's output is the output of the last kernel of the first
contiguous run of its kernels. (MindSpore 2.10 can name a kernel of a later block with the
scope of an earlier block of the same class: in Sequential(Block, Block) the second block's
residual Add is `.../0-Block/Add-op1`, so the dump of `layer1.0` also holds that tensor.)

Scopes exist only where the network runs as a Cell graph: `net(x)` under GRAPH mode (the
natural pass to compare with torch), `Model.train`, `TrainOneStepCell` (there the scope is
e.g. `Default/network-WithLossCell/_backbone-Net`: pass it as --scope). Inside a converted
train step (value_and_grad of a Python function) MindSpore 2.10 names the kernels
`Default/Conv2D-op0`, without the layer path, so layers cannot be selected there.
"""
from __future__ import annotations

import argparse
import csv
import glob
import json
import os
import re
import sys
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence

_RE_SPECIAL = set(".^$*+?()[]{}|\\")


def _escape(text: str) -> str:
    """Escape for MindSpore's (std::regex, ECMAScript) patterns; '-' stays as it is."""
    return "".join("\\" + c if c in _RE_SPECIAL else c for c in text)


def layer_pattern(layer: str, scope: str = "Default") -> str:
    """The regular expression (whole-name match) for the kernels inside a torch layer path."""
    parts = [p for p in layer.split(".") if p]
    if not parts:
        raise ValueError(f"empty layer name {layer!r}")
    body = "/".join(_escape(p) + "-[^/]+" for p in parts)
    return f"{_escape(scope.rstrip('/'))}/{body}/.*"


def build_config(layers: Sequence[str], path: str, net_name: str = "Net", iteration: str = "0",
                 inputs: bool = False, outputs: bool = True, scope: str = "Default", grads: bool = False,
                 saved_data: str = "tensor") -> dict:
    """The dump configuration (dump_mode 1 with the layers' kernels; dump_mode 0, every
    kernel, when no layer is given). grads=True also selects the layers' gradient kernels
    (scope Gradients/<scope>/...)."""
    if not (inputs or outputs):
        raise ValueError("choose inputs, outputs or both")
    kernels: List[str] = []
    for layer in layers:
        kernels.append(f"name-regex({layer_pattern(layer, scope)})")
        if grads:
            kernels.append(f"name-regex(Gradients/{layer_pattern(layer, scope)})")
    return {
        "common_dump_settings": {
            "dump_mode": 1 if kernels else 0,
            "path": os.path.abspath(path),          # MindSpore requires an absolute path
            "net_name": net_name,
            "iteration": str(iteration),
            "saved_data": saved_data,
            "input_output": 0 if (inputs and outputs) else (1 if inputs else 2),
            "kernels": kernels,
            "support_device": [0, 1, 2, 3, 4, 5, 6, 7],
        },
        "e2e_dump_settings": {"enable": True, "trans_flag": True},
    }


def usage(config_file: str, cfg: dict, layers: Sequence[str]) -> str:
    c = cfg["common_dump_settings"]
    layer_arg = ",".join(layers) or "LAYER,..."
    return f"""How to use {config_file}:
  1. export MINDSPORE_DUMP_CONFIG={os.path.abspath(config_file)}
     (set it before `import mindspore`; dumps are written in GRAPH mode only:
      ms.set_context(mode=ms.GRAPH_MODE), which converted programs set at the top)
  2. run the converted network as a Cell, e.g. an evaluation pass `out = net(x)`; the tensors go to
     {c['path']}/rank_0/{c['net_name']}/<graph>/<iteration>/*.npy
     ("iteration": "{c['iteration']}" counts every graph run in the process; "all" keeps each run)
  3. save torch's activations for the same input and layers:
       from msmigrate.dump_config import save_torch_activations
       save_torch_activations(torch_model, x_numpy, [{', '.join(repr(l) for l in layers)}], "torch_acts.npz")
  4. compare: msmigrate dump-config --layers {layer_arg} --path {c['path']} --compare torch_acts.npz
Inside a converted train step (value_and_grad of a function) kernel names carry no layer path, so
dump an evaluation pass; under TrainOneStepCell/Model.train pass the wrapper scope with --scope."""


# ------------------------------------------------------------------ reading dumps back
def _graph_orders(rank_dir: Path) -> Dict[str, List[str]]:
    orders = {}
    for f in sorted((rank_dir / "execution_order").glob("ms_execution_order_graph_*.csv")):
        gid = f.stem.rsplit("_", 1)[-1]
        with open(f, newline="") as fh:
            rows = [r[0] for r in csv.reader(fh) if r]
        orders[gid] = [r for r in rows[1:] if r]
    return orders


def layer_tensor(dump_path: str, layer: str, scope: str = "Default", net_name: Optional[str] = None,
                 iteration: Optional[str] = None, which: str = "output", rank: int = 0):
    """The dumped output (or, which="input", first input) of a torch layer path: the tensor of
    the layer's last kernel in execution order (first kernel for inputs), see the module notes. iteration None takes
    the first iteration folder holding it."""
    import numpy as np

    rank_dir = Path(dump_path) / f"rank_{rank}"
    pat = re.compile(layer_pattern(layer, scope))
    nets = [net_name] if net_name else sorted(p.name for p in rank_dir.iterdir()
                                              if p.is_dir() and p.name not in ("execution_order", "graphs")
                                              and not p.name.startswith("."))
    for gid, order in _graph_orders(rank_dir).items():
        hits = [i for i, n in enumerate(order) if pat.fullmatch(n)]
        if not hits:
            continue
        # the first contiguous run of the layer's kernels: MindSpore 2.10 can give a later
        # block's kernel the scope of an earlier block of the same class (in layer1 =
        # Sequential(Block, Block) the second residual Add is named 0-Block/Add-op1)
        end = hits[0]
        while end + 1 < len(order) and pat.fullmatch(order[end + 1]):
            end += 1
        kernel = order[end] if which == "output" else order[hits[0]]
        flat = kernel.replace("/", "_")
        for net in nets:
            iters = sorted((p.name for p in (rank_dir / net / gid).glob("*") if p.is_dir()), key=int) \
                if (rank_dir / net / gid).is_dir() else []
            for it in ([str(iteration)] if iteration is not None else iters):
                hits = glob.glob(str(rank_dir / net / gid / it / f"*.{glob.escape(flat)}.*.{which}.0.*.npy"))
                if hits:
                    return np.load(sorted(hits)[0])
    raise FileNotFoundError(f"no dumped {which} for layer {layer!r} (pattern {pat.pattern}) under {rank_dir}")


def save_torch_activations(model, inputs, layers: Iterable[str], path: str) -> Dict[str, "object"]:
    """Run a torch model once (eval mode, no grad) and save the outputs of `layers` (dotted
    paths, as for --layers) to an .npz file. Returns the arrays."""
    import numpy as np
    import torch

    acts = {}
    mods = dict(model.named_modules())
    handles = []
    for name in layers:
        def hook(module, args, output, name=name):
            out = output[0] if isinstance(output, (tuple, list)) else output
            acts[name] = out.detach().cpu().numpy()
        handles.append(mods[name].register_forward_hook(hook))
    xs = inputs if isinstance(inputs, (tuple, list)) else (inputs,)
    model.eval()
    try:
        with torch.no_grad():
            model(*[torch.as_tensor(np.asarray(x)) for x in xs])
    finally:
        for h in handles:
            h.remove()
    np.savez(path, **acts)
    return acts


def compare(dump_path: str, torch_npz: str, layers: Sequence[str], scope: str = "Default",
            net_name: Optional[str] = None, iteration: Optional[str] = None) -> List[dict]:
    """Max absolute difference between each layer's dumped output and torch's."""
    import numpy as np

    ref = np.load(torch_npz)
    rows = []
    for layer in layers:
        row = {"layer": layer}
        try:
            got = layer_tensor(dump_path, layer, scope, net_name, iteration)
        except FileNotFoundError as exc:
            row["error"] = str(exc)
            rows.append(row)
            continue
        want = ref[layer] if layer in ref.files else None
        if want is None:
            row["error"] = f"{torch_npz} has no array {layer!r}"
        elif got.shape != want.shape:
            row["error"] = f"shape {got.shape} vs torch {want.shape}"
        else:
            row["max_abs_diff"] = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))))
            row["shape"] = got.shape
        rows.append(row)
    return rows


# ------------------------------------------------------------------ command line
def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(
        prog="msmigrate dump-config",
        description="Write a MindSpore dump configuration (MINDSPORE_DUMP_CONFIG) for chosen layers, "
                    "or (--compare) compare the dumped tensors with torch's.")
    p.add_argument("--layers", default="", help="torch layer paths, comma-separated (conv1,layer1.0); "
                                                "none: dump every kernel")
    p.add_argument("--path", default="dumps", help="where MindSpore writes the dumps (default: dumps)")
    p.add_argument("-o", "--out", default="dump.json", help="the configuration file (default: dump.json)")
    p.add_argument("--iteration", default="0", help='iteration(s) to dump: "0", "0|5", "0-3" or "all" (default 0)')
    p.add_argument("--net-name", default="Net", help="folder name under rank_0 (default: Net)")
    p.add_argument("--scope", default="Default",
                   help="the network's scope in kernel names (default: Default; under TrainOneStepCell e.g. "
                        "Default/network-WithLossCell/_backbone-Net)")
    p.add_argument("--inputs", action="store_true", help="dump the kernels' inputs")
    p.add_argument("--outputs", action="store_true", help="dump the kernels' outputs (the default)")
    p.add_argument("--grads", action="store_true", help="also dump the layers' gradient kernels")
    p.add_argument("--compare", metavar="TORCH_NPZ",
                   help="compare the dumps under --path with torch activations saved by "
                        "msmigrate.dump_config.save_torch_activations")
    args = p.parse_args(argv)
    layers = [l.strip() for l in args.layers.split(",") if l.strip()]
    if args.compare:
        if not layers:
            print("msmigrate dump-config: error: --compare needs --layers", file=sys.stderr)
            return 2
        rows = compare(args.path, args.compare, layers, args.scope,
                       iteration=None if args.iteration in ("0", "all") else args.iteration)
        bad = 0
        for r in rows:
            if "error" in r:
                bad += 1
                print(f"{r['layer']}: {r['error']}")
            else:
                print(f"{r['layer']}: shape {tuple(r['shape'])}, max |MindSpore - torch| = {r['max_abs_diff']:.3g}")
        return 1 if bad else 0
    try:
        cfg = build_config(layers, args.path, args.net_name, args.iteration, inputs=args.inputs,
                           outputs=args.outputs or not args.inputs, scope=args.scope, grads=args.grads)
    except ValueError as exc:
        print(f"msmigrate dump-config: error: {exc}", file=sys.stderr)
        return 2
    Path(args.out).write_text(json.dumps(cfg, indent=2) + "\n", encoding="utf-8")
    print(f"msmigrate: wrote {args.out}")
    print(usage(args.out, cfg, layers))
    return 0


if __name__ == "__main__":
    sys.exit(main())
