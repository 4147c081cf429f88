"""OpInfo parity: one-API torch programs generated from torch's own OpInfo database, converted and compared.

For each op in `torch.testing._internal.common_methods_invocations.op_db` (optionally `--ops`/`--limit`), the
first `--samples` float32 CPU sample inputs (`op.sample_inputs('cpu', torch.float32)`) become one-API calls
written as real code writes them: `torch.NAME(x, ...)`, `x.NAME(...)`, `F.NAME(...)`, `torch.linalg.NAME(...)`...
with the sample's args/kwargs as literals and its tensors loaded from a saved .npz. One module per op holds all
its cases (one function each); torch runs them for the expected values, `msmigrate convert` converts the whole
tree once, and a process in which `import torch` fails runs the converted cases. Each case is classified:

  pass           values (rtol 1e-3, atol 1e-4, NaN = NaN), shape and dtype class (bool/int/float/complex) agree
  todo           it fails, and it says so: MigrationError raised, or the report has a TODO on the case's lines
  noted          it fails, and the report's note on one of its lines states a difference (counted apart from todo)
  silent         it runs but differs, or crashes with another error and no TODO: a first-rule defect
  convert_error  the converter failed on the op's file (or a torch-free process could not import it)

Random ops (dropout, bernoulli, rand*_like...) and uninitialised ones (empty*) compare shape and dtype only.
Cases torch itself rejects, or whose arguments have no literal form (callables...), are not counted.

Bench-only dependency: the OpInfo database imports `expecttest` (`pip install expecttest`); it is not a
dependency of msmigrate.

    python bench/opinfo_parity.py [--ops add,nn.functional.relu] [--limit N] [--samples 3] [--json out.json]
"""
from __future__ import annotations

import argparse
import collections
import importlib.util
import itertools
import json
import math
import os
import pickle
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "bench" / "_work" / "opinfo"
RTOL, ATOL = 1e-3, 1e-4
SHAPE_ONLY = ("empty", "new_empty", "empty_like", "empty_strided", "empty_permuted", "new_empty_strided",
              "bernoulli", "multinomial", "normal", "rand_like", "randn_like", "randint_like", "randint",
              "uniform", "cauchy", "exponential", "geometric", "log_normal", "nn.functional.dropout",
              "nn.functional.dropout2d", "nn.functional.dropout3d", "nn.functional.alpha_dropout",
              "nn.functional.feature_alpha_dropout", "nn.functional.rrelu", "nn.functional.gumbel_softmax",
              "nn.functional.fractional_max_pool2d", "nn.functional.fractional_max_pool3d")
# namespaces: OpInfo name prefix -> how the call is written in the generated program
PREFIXES = (("nn.functional.", "F.", "nn.functional"), ("linalg.", "torch.linalg.", "linalg"),
            ("special.", "torch.special.", "special"), ("fft.", "torch.fft.", "fft"),
            ("masked.", "torch.masked.", "masked"), ("signal.windows.", "torch.signal.windows.", "signal"),
            ("sparse.", "torch.sparse.", "sparse"))


class Unrepresentable(Exception):
    pass


# ------------------------------------------------------------------ generation (the torch process)
class CaseWriter:
    def __init__(self, case_id: str):
        self.case_id, self.arrays, self.lines = case_id, {}, []

    def tensor(self, t) -> str:
        import torch
        if t.layout != torch.strided or t.is_quantized or t.dtype in (torch.bfloat16, torch.float16):
            raise Unrepresentable(f"tensor {t.layout} {t.dtype}")
        name = f"t{len(self.arrays)}"
        self.arrays[f"{self.case_id}_{name}"] = t.detach().cpu().resolve_conj().resolve_neg().numpy().copy()
        self.lines.append(f"    {name} = torch.tensor(_D[{self.case_id + '_' + name!r}])")
        return name

    def lit(self, v) -> str:
        import torch
        if isinstance(v, torch.Tensor):
            return self.tensor(v)
        if v is None or isinstance(v, (bool, str)):
            return repr(v)
        if isinstance(v, int):
            return repr(v)
        if isinstance(v, float):
            return repr(v) if math.isfinite(v) else f"float({str(v)!r})"
        if isinstance(v, complex):
            return repr(v)
        if isinstance(v, torch.dtype):
            return str(v)
        if isinstance(v, torch.Size):
            return repr(tuple(v))
        if isinstance(v, torch.device):
            return repr(str(v))
        if isinstance(v, torch.memory_format):
            return str(v)
        if v is Ellipsis:
            return "..."
        if isinstance(v, slice):
            return f"slice({self.lit(v.start)}, {self.lit(v.stop)}, {self.lit(v.step)})"
        if isinstance(v, tuple):
            items = [self.lit(x) for x in v]
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        if isinstance(v, list):
            return "[" + ", ".join(self.lit(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{" + ", ".join(f"{k!r}: {self.lit(x)}" for k, x in v.items()) + "}"
        raise Unrepresentable(type(v).__name__)


def random_kwargs(kwargs) -> bool:
    """A dropout probability above 0 (scaled_dot_product_attention's dropout_p) draws random numbers."""
    return any(k.startswith("dropout") and isinstance(v, float) and v > 0 for k, v in kwargs.items())


def call_forms(op):
    """[(namespace, template)] for an op: template has {args} after the callee (method: {self} first)."""
    import torch
    import torch.nn.functional as F  # noqa: F401
    name = op.name
    if name.startswith("_") or name in ("T", "H", "mT", "mH"):
        return []
    for prefix, written, ns in PREFIXES:
        if name.startswith(prefix):
            short = name[len(prefix):]
            owner = {"nn.functional": torch.nn.functional, "linalg": torch.linalg, "special": torch.special,
                     "fft": torch.fft, "masked": getattr(torch, "masked", None),
                     "signal": getattr(getattr(getattr(torch, "signal", None), "windows", None), "__dict__", None)
                     and torch.signal.windows, "sparse": torch.sparse}[ns]
            if owner is not None and hasattr(owner, short):
                return [(ns, f"{written}{short}({{args}})")]
            return []
    forms = []
    if hasattr(torch, name) and callable(getattr(torch, name)):
        forms.append(("torch", f"torch.{name}({{args}})"))
    if op.method_variant is not None and hasattr(torch.Tensor, name):
        forms.append(("Tensor", f"{{self}}.{name}({{rest}})"))
    return forms


def generate(ops, samples: int, src: Path):
    """Writes src/<module>.py + .npz per op; returns the case table and runs torch for the expected values."""
    import torch
    cases = []  # dicts: module, case, op, ns, first, last (lines), shape_only
    src.mkdir(parents=True)
    skipped = collections.Counter()
    for idx, op in enumerate(ops):
        forms = call_forms(op)
        if not forms:
            skipped["no call form"] += 1
            continue
        try:
            sample_list = list(itertools.islice(op.sample_inputs("cpu", torch.float32), samples))
        except Exception as e:  # noqa: BLE001 - a sample generator torch cannot run here
            skipped[f"sample_inputs: {type(e).__name__}"] += 1
            continue
        mod = f"op{idx:03d}_" + "".join(c if c.isalnum() else "_" for c in
                                         op.name + ("_" + op.variant_test_name if op.variant_test_name else ""))
        body = ["import os", "import numpy as np", "import torch", "import torch.nn.functional as F", "",
                "_D = np.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "
                f"{mod + '.npz'!r}))", ""]
        arrays = {}
        for si, sample in enumerate(sample_list):
            for ns, template in forms:
                cid = f"c{si}_{ns.replace('.', '_')}"
                w = CaseWriter(cid)
                try:
                    inp = sample.input
                    if ns == "Tensor":
                        if not isinstance(inp, torch.Tensor):
                            raise Unrepresentable("method on a non-tensor")
                        selfname = w.lit(inp)
                        rest = [w.lit(a) for a in sample.args] + [f"{k}={w.lit(v)}" for k, v in sample.kwargs.items()]
                        call = template.format(self=selfname, rest=", ".join(rest))
                    else:
                        args = [w.lit(inp)] + [w.lit(a) for a in sample.args] + \
                            [f"{k}={w.lit(v)}" for k, v in sample.kwargs.items()]
                        call = template.format(args=", ".join(args))
                except Unrepresentable as e:
                    skipped[f"unrepresentable {e}"] += 1
                    continue
                first = len(body) + 1
                body += [f"def {cid}():"] + w.lines + [f"    return {call}", ""]
                arrays.update(w.arrays)
                cases.append(dict(module=mod, case=cid, op=op.name, ns=ns, first=first, last=len(body),
                                  shape_only=op.name in SHAPE_ONLY or random_kwargs(sample.kwargs), call=call))
        if not any(c["module"] == mod for c in cases):
            continue
        (src / f"{mod}.py").write_text("\n".join(body) + "\n")
        np.savez(src / f"{mod}.npz", **arrays)
    return cases, skipped


def to_numpy(v, depth=0):
    """A result as plain numpy/python values: tensors of either framework, sequences, numbers."""
    if depth > 5:
        return ("<deep>",)
    if hasattr(v, "asnumpy"):
        return np.asarray(v.asnumpy())
    if type(v).__module__.startswith("torch") and hasattr(v, "detach") and hasattr(v, "numpy"):
        v = v.detach()
        if v.is_conj():
            v = v.resolve_conj()
        if v.is_neg():
            v = v.resolve_neg()
        return np.asarray(v.numpy())
    if isinstance(v, (tuple, list)):
        return [to_numpy(x, depth + 1) for x in v]
    if isinstance(v, (bool, int, float, complex, np.number, np.bool_)):
        return np.asarray(v)
    if v is None:
        return None
    if type(v).__name__ == "Size":
        return [np.asarray(x) for x in v]
    return ("<type>", type(v).__name__)


def run_module(path: Path, names, done=None, before_case=None):
    """{case: ('ok', value) | ('err', type, message)} for the named case functions of one module file.
    done: results already known (skipped); before_case(name, results so far) runs before each case."""
    out = dict(done or {})
    try:
        spec = importlib.util.spec_from_file_location(path.stem, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    except BaseException as e:  # noqa: BLE001 - recorded as the result of every case
        return {n: out.get(n, ("err", type(e).__name__, str(e)[:400])) for n in names}
    for n in names:
        if n in out:
            continue
        if before_case:
            before_case(n, out)
        try:
            out[n] = ("ok", to_numpy(getattr(mod, n)()))
        except BaseException as e:  # noqa: BLE001 - recorded, classified later
            out[n] = ("err", type(e).__name__, str(e)[:400])
    return out


# ------------------------------------------------------------------ the torch-free runner (a subprocess)
def block_torch():
    class _Block:
        def find_spec(self, name, path=None, target=None):
            if name == "torch" or name.startswith("torch."):
                raise ImportError(f"torch is not available in the converted program ({name})")
            return None
    sys.meta_path.insert(0, _Block())


def runner_main(out_dir: Path, res_dir: Path, modules):
    block_torch()
    sys.path.insert(0, str(out_dir))
    table = json.loads((res_dir.parent / "cases.json").read_text())
    by_mod = collections.defaultdict(list)
    for c in table:
        by_mod[c["module"]].append(c["case"])
    for m in modules:
        part = res_dir / f"{m}.part"   # the cases done before a crash of this module (resumed after it)
        done = pickle.loads(part.read_bytes()) if part.exists() else {}

        def before_case(name, results, m=m, part=part):
            part.write_bytes(pickle.dumps(results))
            (res_dir / "current").write_text(f"{m}:{name}")
        res = run_module(out_dir / f"{m}.py", by_mod[m], done, before_case)
        with open(res_dir / f"{m}.pkl", "wb") as f:
            pickle.dump(res, f)


# ------------------------------------------------------------------ comparison and classification
def kind(a) -> str:
    k = np.asarray(a).dtype.kind
    return {"b": "bool", "i": "int", "u": "int", "f": "float", "c": "complex"}.get(k, k)


def compare(exp, got, shape_only=False):
    """'' when equal, else what differs."""
    if exp is None or got is None:
        return "" if exp is got else f"None vs {type(got).__name__}"
    if isinstance(exp, tuple) or isinstance(got, tuple):
        return "" if exp == got else f"type {exp} vs {got}"
    if isinstance(exp, list) or isinstance(got, list):
        if not (isinstance(exp, list) and isinstance(got, list)):
            return "structure (sequence vs tensor)"
        if len(exp) != len(got):
            return f"length {len(exp)} vs {len(got)}"
        for e, g in zip(exp, got):
            d = compare(e, g, shape_only)
            if d:
                return d
        return ""
    e, g = np.asarray(exp), np.asarray(got)
    if kind(e) != kind(g):
        return f"dtype {e.dtype} vs {g.dtype}"
    if e.shape != g.shape:
        return f"shape {e.shape} vs {g.shape}"
    if shape_only or e.size == 0:
        return ""
    if kind(e) in ("float", "complex"):
        ok = np.allclose(g, e, rtol=RTOL, atol=ATOL, equal_nan=True)
    else:
        ok = np.array_equal(g, e)
    return "" if ok else "values"


def classify(case, expected, got, sites):
    """(class, detail) of one case."""
    lines = [s for s in sites if case["first"] <= s["line"] <= case["last"]]
    todo = [s for s in lines if s["status"] == "todo"]
    noted = [s for s in lines if s["status"] == "converted-with-difference" and s["note"]]
    if got[0] == "ok":
        diff = compare(expected, got[1], case["shape_only"])
        if not diff:
            return "pass", ""
        detail = diff
    else:
        if got[1] == "MigrationError":
            return "todo", got[2][:120]
        detail = f"{got[1]}: {got[2][:120]}"
    if todo:
        return "todo", todo[0]["api"] + ": " + todo[0]["note"][:100]
    if noted:
        return "noted", detail
    return "silent", detail


def torch_expected(work: Path, cases):
    """{(module, case): run_module's result} of the generated torch programs in work/src, run here by torch."""
    import torch
    by_mod = collections.defaultdict(list)
    for c in cases:
        by_mod[c["module"]].append(c["case"])
    expected = {}
    torch.manual_seed(0)
    for m, names in by_mod.items():
        for n, r in run_module(work / "src" / f"{m}.py", names).items():
            expected[(m, n)] = r
    with open(work / "expected.pkl", "wb") as f:
        pickle.dump(expected, f)
    return expected


def convert_run_classify(work: Path, cases, expected, script: Path):
    """Converts work/src into work/out, runs every case torch-free (`script --runner`, resuming after a case
    that kills the process) and classifies them: (results, convert seconds, run seconds), None when the
    conversion wrote no report. expected: {(module, case): run_module's result under torch}."""
    by_mod = collections.defaultdict(list)
    for c in cases:
        by_mod[c["module"]].append(c["case"])
    t1 = time.time()
    conv = subprocess.run([sys.executable, "-m", "msmigrate", "convert", str(work / "src"), "-o", str(work / "out"),
                           "-q", "-j", "2"], cwd=ROOT, capture_output=True, text=True)
    if not (work / "out" / "msmigrate-report.json").exists():
        print(conv.stdout[-3000:], conv.stderr[-3000:])
        return None
    report = json.loads((work / "out" / "msmigrate-report.json").read_text())
    files = {Path(f["file"]).stem: f for f in report["files"]}
    t_conv = time.time() - t1

    t2 = time.time()
    todo_mods = [m for m in by_mod if files.get(m, {}).get("status") in ("converted", "unchanged")]
    env = dict(os.environ, ONEDNN_MAX_CPU_ISA="AVX2", PYTHONPATH="")
    while todo_mods:
        cur = work / "res" / "current"
        cur.unlink(missing_ok=True)
        try:
            subprocess.run([sys.executable, str(script), "--work", str(work), "--runner",
                            *todo_mods], env=env, cwd=work, timeout=max(300, 10 * len(todo_mods)),
                           capture_output=True)
        except subprocess.TimeoutExpired:
            pass
        done = [m for m in todo_mods if (work / "res" / f"{m}.pkl").exists()]
        rest = [m for m in todo_mods if m not in done]
        dead_mod, _, dead_case = cur.read_text().partition(":") if cur.exists() else ("", "", "")
        if rest and dead_mod in rest:  # the process died in this case: recorded, the module resumes after it
            part = work / "res" / f"{dead_mod}.part"
            partial = pickle.loads(part.read_bytes()) if part.exists() else {}
            partial[dead_case] = ("err", "ProcessDied", "the runner process died (crash or timeout)")
            part.write_bytes(pickle.dumps(partial))
        elif rest and len(rest) == len(todo_mods):
            print("runner made no progress; stopping")
            break
        todo_mods = rest
    t_run = time.time() - t2

    results = []
    for c in cases:
        m = c["module"]
        exp = expected[(m, c["case"])]
        if exp[0] != "ok":
            cls, detail = "torch_rejects", exp[1]
        elif files.get(m, {}).get("status") not in ("converted", "unchanged"):
            cls, detail = "convert_error", files.get(m, {}).get("reason", "no output")[:120]
        else:
            pk = work / "res" / f"{m}.pkl"
            got = pickle.loads(pk.read_bytes()).get(c["case"]) if pk.exists() else ("err", "NotRun", "")
            cls, detail = classify(c, exp[1], got, files[m].get("sites", []))
        results.append(dict(c, cls=cls, detail=detail))
    return results, t_conv, t_run


def bench_args(argv, doc: str, what: str, what_help: str, show: int, work: Path = WORK):
    """The options both parity benches take (`--ops`/`--modules` is `what`); the runner's too."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument(f"--{what}", default="", help=what_help)
    ap.add_argument("--limit", type=int, default=0, help=f"only the first N (after --{what})")
    ap.add_argument("--samples", type=int, default=3, help="sample inputs per entry")
    ap.add_argument("--work", default=str(work))
    ap.add_argument("--json", default="", help="write every case's result here")
    ap.add_argument("--show", type=int, default=show, help="failure classes to print")
    ap.add_argument("--runner", nargs="*", help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def run_bench(work: Path, generated, t0: float, script: Path, args, label: str = "namespace"):
    """After generate(): the torch results, the conversion, the torch-free run and the tables. Returns
    (exit code, results)."""
    cases, skipped = generated
    (work / "res").mkdir(parents=True)
    (work / "cases.json").write_text(json.dumps(cases))
    expected = torch_expected(work, cases)
    t_gen = time.time() - t0

    ran = convert_run_classify(work, cases, expected, script)
    if ran is None:
        return 2, []
    results, t_conv, t_run = ran
    summarize(results, skipped, args.show, label)
    print(f"seconds: generate+torch {t_gen:.0f}, convert {t_conv:.0f}, run {t_run:.0f}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0, results


def main(argv=None):
    args = bench_args(argv, __doc__, "ops", "comma-separated OpInfo names (default: all)", 25)
    work = Path(args.work)
    if args.runner is not None:
        return runner_main(work / "out", work / "res", args.runner)

    t0 = time.time()
    warnings.filterwarnings("ignore")
    from torch.testing._internal.common_methods_invocations import op_db
    ops = list(op_db)
    if args.ops:
        wanted = set(args.ops.split(","))
        ops = [o for o in ops if o.name in wanted or f"{o.name}.{o.variant_test_name}" in wanted]
    if args.limit:
        ops = ops[:args.limit]
    shutil.rmtree(work, ignore_errors=True)
    return run_bench(work, generate(ops, args.samples, work / "src"), t0, Path(__file__).resolve(), args)[0]


CLASSES = ("pass", "todo", "noted", "silent", "convert_error")


def summarize(results, skipped, show, label="namespace"):
    counted = [r for r in results if r["cls"] != "torch_rejects"]
    by_ns = collections.defaultdict(collections.Counter)
    for r in counted:
        by_ns[r["ns"]][r["cls"]] += 1
        by_ns["ALL"][r["cls"]] += 1
    print(f"{label:14s} {'cases':>6s} " + " ".join(f"{c:>13s}" for c in CLASSES) + "   pass%")
    for ns in sorted(by_ns, key=lambda n: (n == "ALL", n)):
        cnt = by_ns[ns]
        total = sum(cnt.values())
        print(f"{ns:14s} {total:6d} " + " ".join(f"{cnt[c]:13d}" for c in CLASSES) +
              f"   {100 * cnt['pass'] / max(total, 1):5.1f}")
    print(f"not counted: torch rejects {sum(r['cls'] == 'torch_rejects' for r in results)}; "
          f"not generated: {sum(skipped.values())} ({', '.join(f'{k}: {v}' for k, v in skipped.most_common(6))})")
    fails = collections.Counter()
    example = {}
    for r in counted:
        if r["cls"] in ("silent", "noted", "convert_error"):
            key = (r["cls"], r["ns"], r["op"], r["detail"].split(":")[0][:60])
            fails[key] += 1
            example.setdefault(key, r["call"][:90] + "  | " + r["detail"][:100])
    print(f"\ntop failure classes (class, {label}, op, what):")
    for key, n in fails.most_common(show):
        print(f"  {n:3d}  {key[0]:7s} {key[1]:13s} {key[2]:28s} {key[3]}\n        e.g. {example[key]}")
    reasons = collections.Counter(r["detail"].split(":")[0][:50] for r in counted if r["cls"] == "silent")
    print("\nsilent failures by kind: " + ", ".join(f"{k}: {v}" for k, v in reasons.most_common(12)))


if __name__ == "__main__":
    sys.exit(main())
