"""Module parity: one-layer torch programs generated from torch's own ModuleInfo database, converted and compared.

For each module class in `torch.testing._internal.common_modules.module_db` (optionally `--modules`/`--limit`),
the first `--samples` float32 CPU samples (`module_inputs_func(...)`: constructor and forward arguments) become
programs written as a user writes them:

    m = nn.Conv2d(3, 4, 3, stride=2)
    m.load_state_dict(_sd('s0_'))        # torch's state_dict (names, layouts) from a saved .npz
    m.eval()
    t0 = torch.tensor(_D['c0_eval_t0'])
    return m(t0)

Each sample gives up to three cases: `eval` (forward in eval mode), `train` (forward in train mode, for the
classes whose ModuleInfo says train and eval differ; it also returns the module's buffers after the forward,
e.g. BatchNorm's running statistics) and `grad` (eval mode; the gradient of (y * g).sum(), or of a scalar
output, with respect to the first floating-point input, read from its .grad). The cases run under torch for
the expected values, `msmigrate convert` converts the tree, a process in which `import torch` fails runs them,
and each is classified as bench/opinfo_parity.py does (pass / todo / noted / silent / convert_error).

Random modules (fractional max pools; train mode with dropout > 0) compare shape and dtype only. Samples
whose arguments have no literal form (a module passed to a constructor, a callable) are not generated.

Bench-only dependency: the ModuleInfo database imports `expecttest`; it is not a dependency of msmigrate.

    python bench/module_parity.py [--modules nn.Conv2d,nn.LSTM] [--limit N] [--samples 3] [--json out.json]
"""
from __future__ import annotations

import collections
import shutil
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from opinfo_parity import CaseWriter, Unrepresentable, bench_args, run_bench, runner_main  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "bench" / "_work" / "modules"
RANDOM_MODULES = ("nn.FractionalMaxPool2d", "nn.FractionalMaxPool3d", "nn.RReLU", "nn.Dropout", "nn.Dropout1d",
                  "nn.Dropout2d", "nn.Dropout3d", "nn.AlphaDropout", "nn.FeatureAlphaDropout")
# family of a module class: the first pattern its name contains
FAMILIES = (("Lazy", "lazy"), ("ConvTranspose", "conv"), ("Conv", "conv"), ("Pool", "pooling"),
            ("Norm", "normalization"), ("Loss", "loss"), ("Pad", "padding"), ("Cell", "recurrent"),
            ("RNN", "recurrent"), ("GRU", "recurrent"), ("LSTM", "recurrent"), ("Transformer", "transformer"),
            ("Attention", "transformer"), ("Linear", "linear"), ("Bilinear", "linear"), ("Embedding", "linear"))


def family(name: str) -> str:
    return next((f for pat, f in FAMILIES if pat in name), "activation")


def uses_dropout(kwargs, args) -> bool:
    """A constructor argument named dropout*/p above 0 (or a float positional in a transformer layer)."""
    return any(k.startswith("dropout") and isinstance(v, float) and v > 0 for k, v in kwargs.items()) or \
        any(isinstance(a, float) and a > 0 for a in args[3:4])


def materialize(mod, forward):
    """A lazy module's parameters get their shapes from a first forward."""
    import torch
    lazy = any(isinstance(p, torch.nn.parameter.UninitializedParameter) for p in mod.parameters())
    if lazy:
        with torch.no_grad():
            mod(*forward.args, **forward.kwargs)
    return lazy


def first_float(t) -> bool:
    import torch
    return isinstance(t, torch.Tensor) and t.is_floating_point()


def sample_cases(info, si, sample, train_sample, mod_name):
    """[(case dict, code lines, arrays)] of one sample; raises Unrepresentable."""
    import torch
    cls_name = info.name  # nn.Conv2d
    torch.manual_seed(si)
    ctor = sample.constructor_input
    ctor_w = CaseWriter(f"s{si}_ctor")
    ctor_args = [ctor_w.lit(a) for a in ctor.args] + [f"{k}={ctor_w.lit(v)}" for k, v in ctor.kwargs.items()]
    if ctor_w.arrays:
        raise Unrepresentable("tensor constructor argument")
    mod = info.module_cls(*ctor.args, **ctor.kwargs)
    lazy = materialize(mod, sample.forward_input)
    state = {f"s{si}_sd_{k}": v.detach().numpy().copy() for k, v in mod.state_dict().items()}
    # buffers a train-mode forward updates (running statistics); not the counter num_batches_tracked, which
    # only momentum=None reads and programs rarely do
    buffers = [k for k, _ in mod.named_buffers() if not k.endswith("num_batches_tracked")]
    out = []
    modes = ["eval", "grad"] + (["train"] if info.train_and_eval_differ and train_sample is not None else [])
    for mode in modes:
        smp = train_sample if mode == "train" else sample
        cid = f"c{si}_{mode}"
        w = CaseWriter(cid)
        fwd_args = [w.lit(a) for a in smp.forward_input.args] + \
            [f"{k}={w.lit(v)}" for k, v in smp.forward_input.kwargs.items()]
        lines = [f"    m = {cls_name}({', '.join(ctor_args)})"]
        if lazy:
            lines += w.lines + [f"    m({', '.join(fwd_args)})"]
        if state:
            lines.append(f"    m.load_state_dict(_sd('s{si}_sd_'))")
        lines.append("    m.train()" if mode == "train" else "    m.eval()")
        if not lazy:
            lines += w.lines
        call = f"m({', '.join(fwd_args)})"
        lines.append(f"    y = {call}")
        ret = "y"
        if mode == "grad":
            x = smp.forward_input.args[0] if smp.forward_input.args else None
            if not first_float(x):
                continue
            mod.eval()
            y = mod(*smp.forward_input.args, **smp.forward_input.kwargs)
            y0 = y[0] if isinstance(y, (tuple, list)) else y
            if not (isinstance(y0, torch.Tensor) and y0.is_floating_point()):
                continue
            t0 = next(i for i, ln in enumerate(lines) if ln.startswith("    t0 = torch.tensor("))
            lines[t0] = lines[t0][:-1] + ", requires_grad=True)"
            yexpr = "y[0]" if isinstance(y, (tuple, list)) else "y"
            if y0.dim() == 0:
                lines.append(f"    {yexpr}.backward()")
            else:  # the output's cotangent g, made before the forward as a program makes its targets
                w.arrays[f"{cid}_g"] = torch.randn(y0.shape, generator=torch.Generator().manual_seed(si)).numpy()
                lines.insert(-1, f"    g = torch.tensor(_D[{cid + '_g'!r}])")
                lines.append(f"    ({yexpr} * g).sum().backward()")
            ret = "y, t0.grad"
        elif mode == "train" and buffers:
            ret = "y, [" + ", ".join(f"m.{b}" for b in buffers) + "]"
        lines.append(f"    return {ret}")
        random = cls_name in RANDOM_MODULES or (mode == "train" and uses_dropout(ctor.kwargs, ctor.args))
        out.append((dict(module=mod_name, case=cid, op=cls_name, ns=family(cls_name), mode=mode,
                         shape_only=random, call=f"{cls_name}({', '.join(ctor_args)})"[:70] + f" {mode}"),
                    lines, {**w.arrays, **ctor_w.arrays}))
    return out, state


def generate(infos, samples: int, src: Path):
    """Writes src/<module>.py + .npz per module class; returns the case table."""
    import torch
    cases = []
    src.mkdir(parents=True)
    skipped = collections.Counter()
    for idx, info in enumerate(infos):
        try:
            evals = info.module_inputs_func(info, device="cpu", dtype=torch.float32, requires_grad=False,
                                            training=False)[:samples]
            trains = info.module_inputs_func(info, device="cpu", dtype=torch.float32, requires_grad=False,
                                             training=True)[:samples]
        except Exception as e:  # noqa: BLE001 - a sample generator torch cannot run here
            skipped[f"module_inputs_func: {type(e).__name__}"] += 1
            continue
        mod_name = f"m{idx:03d}_" + info.name.replace(".", "_")
        body = ["import os", "import numpy as np", "import torch", "import torch.nn as nn", "",
                "_D = np.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "
                f"{mod_name + '.npz'!r}))", "", "",
                "def _sd(prefix):",
                "    return {k[len(prefix):]: torch.tensor(v) for k, v in _D.items() if k.startswith(prefix)}", ""]
        arrays = {}
        for si, sample in enumerate(evals):
            train_sample = trains[si] if si < len(trains) else None
            try:
                made, state = sample_cases(info, si, sample, train_sample, mod_name)
            except Unrepresentable as e:
                skipped[f"unrepresentable {e}"] += 1
                continue
            except Exception as e:  # noqa: BLE001 - torch rejects the sample here
                skipped[f"torch: {type(e).__name__}"] += 1
                continue
            arrays.update(state)
            for case, lines, arr in made:
                body.append("")
                case["first"] = len(body) + 1
                body += [f"def {case['case']}():"] + lines
                case["last"] = len(body)
                arrays.update(arr)
                cases.append(case)
        if not any(c["module"] == mod_name for c in cases):
            continue
        (src / f"{mod_name}.py").write_text("\n".join(body) + "\n")
        np.savez(src / f"{mod_name}.npz", **arrays)
    return cases, skipped


def main(argv=None):
    args = bench_args(argv, __doc__, "modules", "comma-separated ModuleInfo names, e.g. nn.Conv2d (default: all)", 30,
                      WORK)
    work = Path(args.work)
    if args.runner is not None:
        return runner_main(work / "out", work / "res", args.runner)

    t0 = time.time()
    warnings.filterwarnings("ignore")
    from torch.testing._internal.common_modules import module_db
    infos = [i for i in module_db if not args.modules or i.name in args.modules.split(",")]
    if args.limit:
        infos = infos[:args.limit]
    shutil.rmtree(work, ignore_errors=True)
    rc, results = run_bench(work, generate(infos, args.samples, work / "src"), t0, Path(__file__).resolve(), args,
                            label="family")
    counted = [r for r in results if r["cls"] != "torch_rejects"]
    by_mode = collections.defaultdict(collections.Counter)
    per_class = collections.defaultdict(collections.Counter)
    for r in counted:
        by_mode[r["mode"]][r["cls"]] += 1
        per_class[r["op"]][r["cls"]] += 1
    print("by mode: " + "; ".join(f"{m} {c['pass']}/{sum(c.values())} pass" for m, c in sorted(by_mode.items())))
    print("module classes with every case passing: "
          f"{sum(c['pass'] == sum(c.values()) for c in per_class.values())}/{len(per_class)}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
