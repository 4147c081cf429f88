"""Peer API suite: the one-API programs of PaConvert's per-API tests, run by torch and, converted, torch-free.

PaConvert (a torch -> Paddle converter) keeps one test file per torch API (tests/test_*.py, ~1,900 files):
functions `test_case_N()` assign a torch program to `pytorch_code` and call
`obj.run(pytorch_code, ["result", ...], rtol=..., atol=..., check_value=..., check_dtype=..., ...)`.
This bench reads those files at run time from a bare mirror of the repository (nothing of it is copied here),
extracts every case with `ast` (no test file is executed; programs built by the peer's tests/*_helper.py
string templates, as the optimizer and lr_scheduler files do, are made by calling those templates), and:

  1. writes each case's program as its own module in a tree and runs it with torch (worker processes, a
     timeout per case), keeping the compared names' values (tensors as NumPy with their dtype name and
     requires_grad; Python scalars, sequences and dicts kept);
  2. converts the whole tree once with `msmigrate convert`;
  3. runs each converted module in worker processes where `import torch` fails, and compares like the peer:
     values with the case's rtol/atol (default rtol 1e-6, atol 0) and also at a looser rtol 1e-4/atol 1e-5,
     shape, exact dtype name (int64 vs int32 fails), Python scalar types; `requires_grad` is reported apart.

Classes (as bench/opinfo_parity.py): pass / todo (MigrationError, or a TODO in the report for the module) /
noted (the report's note states a difference) / silent (differs, or another error with no TODO: a first-rule
defect) / convert_error / torch_error (torch itself fails: not counted) / nothing_compared (the case names no value
to compare, or only objects with no value form, and the converted program ran: not counted in the pass rate). Cases named `_test_case_N` (disabled
by the peer) are skipped and counted apart; files whose test class overrides the comparison (random APIs...)
are compared on shape and dtype only, and counted apart.

    python bench/peer_api_suite.py --mirror /work/.mirror/PaddlePaddle+PaConvert/repo \
        [--files test_addmm,test_Tensor_abs] [--limit N] [--every K] [--json out.json] [--work DIR] [-j 2]
"""
from __future__ import annotations

import argparse
import ast
import collections
import json
import os
import pickle
import re
import shutil
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from opinfo_parity import block_torch  # noqa: E402 - the same torch-free import hook

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "bench" / "_work" / "peer_api"
LOOSE_RTOL, LOOSE_ATOL = 1e-4, 1e-5
CASE_TIMEOUT = 40          # seconds one case may run in a worker
RUN_KEYS = ("rtol", "atol", "check_value", "check_dtype", "check_shape", "check_stop_gradient", "unsupport")


# ------------------------------------------------------------------ extraction (ast only, nothing executed)
def mirror_tests(mirror: str, pattern: str = r"tests/test_\w+\.py"):
    """{file stem: source} of the mirror's tests/test_*.py at HEAD (or the files matching pattern)."""
    names = subprocess.run(["git", "--git-dir", mirror, "ls-tree", "--name-only", "HEAD", "tests/"],
                           capture_output=True, text=True, check=True).stdout.split()
    names = sorted(n for n in names if re.fullmatch(pattern, n))
    batch = subprocess.run(["git", "--git-dir", mirror, "cat-file", "--batch"],
                           input="".join(f"HEAD:{n}\n" for n in names).encode(), capture_output=True, check=True).stdout
    out, pos = {}, 0
    for n in names:
        header_end = batch.index(b"\n", pos)
        size = int(batch[pos:header_end].split()[2])
        out[Path(n).stem] = batch[header_end + 1:header_end + 1 + size].decode("utf-8", "replace")
        pos = header_end + 1 + size + 1
    return out


def _string_value(node):
    """The text of `"..."` or `textwrap.dedent("...")`, else None."""
    if isinstance(node, ast.Call) and node.args and isinstance(node.func, (ast.Attribute, ast.Name)) and \
            (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) == "dedent":
        node = node.args[0]
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            import textwrap
            return textwrap.dedent(node.value)
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _generated_program(node, generators):
    """The program of `textwrap.dedent(generate_x(<literals>))`, where generate_x is one of the peer's
    tests/*_helper.py functions (optimizer_helper, lr_scheduler_helper: string templates that wrap one
    constructor call in a fixed training program), else None. Only these template functions run, on
    literal arguments; no test file is executed."""
    if not (isinstance(node, ast.Call) and node.args and
            (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) == "dedent"):
        return None
    inner = node.args[0]
    if not (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id in generators):
        return None
    try:
        args = [ast.literal_eval(a) for a in inner.args]
        kwargs = {k.arg: ast.literal_eval(k.value) for k in inner.keywords}
    except (ValueError, TypeError, SyntaxError):
        return None
    import textwrap
    return textwrap.dedent(generators[inner.func.id](*args, **kwargs))


def _generators(tree, helpers):
    """{name: function} for `from <x>_helper import generate_...` in a test file, loaded from the mirror's
    tests/<x>_helper.py text."""
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module in (helpers or {}):
            space: dict = {}
            exec(compile(helpers[node.module], node.module + ".py", "exec"), space)
            for alias in node.names:
                if alias.name.startswith("generate_") and callable(space.get(alias.name)):
                    out[alias.asname or alias.name] = space[alias.name]
    return out


def _testers(tree):
    """{object name: (api, custom compare)} for module-level `obj = APIBase("torch.x")` (or a subclass)."""
    subclasses = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and any(
                isinstance(b, ast.Name) and (b.id == "APIBase" or b.id in subclasses) for b in node.bases):
            subclasses.add(node.name)
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                isinstance(node.value.func, ast.Name) and node.value.func.id in subclasses | {"APIBase"}:
            api = node.value.args[0].value if node.value.args and isinstance(node.value.args[0], ast.Constant) \
                else "?"
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out[t.id] = (str(api), node.value.func.id != "APIBase")
    return out


def extract(stem: str, source: str, helpers: dict | None = None):
    """(cases, counts): one dict per `obj.run(code, names, ...)` in a test_case_N function; helpers:
    {module: source} of the peer's tests/*_helper.py whose generate_* templates some files' programs use."""
    counts = collections.Counter()
    try:
        tree = ast.parse(source)
    except SyntaxError:
        counts["file does not parse"] += 1
        return [], counts
    testers = _testers(tree)
    generators = _generators(tree, helpers)
    cases = []
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef) or not re.fullmatch(r"_*test_case_\w+", fn.name):
            continue
        if fn.name.startswith("_"):
            counts["disabled by the peer (_test_case_N)"] += 1
            continue
        strings, runs = {}, []
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                text = _string_value(node.value)
                if text is None and generators:
                    text = _generated_program(node.value, generators)
                if text is not None:
                    strings[node.targets[0].id] = (node.lineno, text)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "run" \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id in testers:
                runs.append(node)
        if not runs:
            counts["no obj.run call"] += 1
        for i, call in enumerate(sorted(runs, key=lambda c: c.lineno)):
            code_arg = call.args[0] if call.args else next(
                (k.value for k in call.keywords if k.arg == "pytorch_code"), None)
            code = strings.get(code_arg.id, (0, None))[1] if isinstance(code_arg, ast.Name) else \
                _string_value(code_arg) if code_arg is not None else None
            try:
                names_node = call.args[1] if len(call.args) > 1 else next(
                    (k.value for k in call.keywords if k.arg == "compared_tensor_names"), None)
                names = ast.literal_eval(names_node) if names_node is not None else None
                opts = {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg in RUN_KEYS}
            except (ValueError, TypeError, SyntaxError):
                counts["arguments with no literal form"] += 1
                continue
            if code is None:
                counts["program with no literal form"] += 1
                continue
            api, custom = testers[call.func.value.id]
            suffix = f"_{i}" if len(runs) > 1 else ""
            cases.append(dict(case=f"{stem[len('test_'):]}__{fn.name[len('test_'):]}{suffix}", file=stem, api=api,
                              ns=namespace(api), code=code, names=list(names or []),
                              custom_compare=custom, **opts))
    return cases, counts


def namespace(api: str) -> str:
    for prefix, ns in (("torch.Tensor.", "Tensor"), ("torch.nn.functional.", "nn.functional"),
                       ("torch.nn.", "nn"), ("torch.optim.", "optim"), ("torch.linalg.", "linalg"),
                       ("torch.fft.", "fft"), ("torch.special.", "special"),
                       ("torch.distributions.", "distributions"), ("torch.utils.data.", "utils.data"),
                       ("torch.autograd.", "autograd")):
        if api.startswith(prefix):
            return ns
    if re.fullmatch(r"torch\.\w+", api):
        return "torch"
    return "other"


# ------------------------------------------------------------------ values: one framework-free snapshot
def snapshot(v, depth=0):
    """A picklable picture of a value: ('T', array, dtype, requires_grad) for a tensor of either framework,
    ('N', array) a NumPy array, ('S', type, value) a Python scalar/str/None, ('Q', [..]) a list/tuple,
    ('D', keys, values) a dict, ('dtype', name), ('O', type name) anything else."""
    if depth > 6:
        return ("O", "deep")
    mod = type(v).__module__ or ""
    if mod.startswith("torch") and hasattr(v, "detach") and hasattr(v, "dtype"):
        import torch
        t = v.detach()
        if t.layout != torch.strided:
            t = t.to_dense()
        if t.is_conj():
            t = t.resolve_conj()
        if t.is_neg():
            t = t.resolve_neg()
        name = str(t.dtype).replace("torch.", "")
        if t.dtype in (torch.bfloat16, torch.float16) or t.is_quantized:
            t = (t.dequantize() if t.is_quantized else t).float()
        return ("T", np.asarray(t.cpu().numpy()), name, bool(v.requires_grad))
    if hasattr(v, "asnumpy") and "mindspore" in sys.modules and isinstance(v, sys.modules["mindspore"].Tensor):
        # a Parameter too (its class is made at run time, outside the mindspore package)
        import mindspore as ms
        name = str(v.dtype).lower()
        t = v.astype(ms.float32) if name in ("bfloat16", "float16") else v
        return ("T", np.asarray(t.asnumpy()), name, getattr(v, "requires_grad", None))
    if isinstance(v, np.ndarray):
        return ("N", v.copy())
    if v is None or isinstance(v, (bool, int, float, complex, str, np.number, np.bool_)):
        plain = next((t for t in (bool, int, float, complex, str) if type(v) is t), None)  # subclasses: as a value
        if plain or v is None:
            return ("S", type(v).__name__, v)
        if isinstance(v, (np.number, np.bool_)):
            return ("S", type(v).__name__, v.item())
        base = next(t for t in (bool, int, float, complex, str) if isinstance(v, t))
        return ("S", type(v).__name__, base(v))   # a subclass's value, picklable without its module
    if isinstance(v, (list, tuple)):   # torch.Size included
        return ("Q", [snapshot(x, depth + 1) for x in v])
    if isinstance(v, dict):
        return ("D", snapshot(list(v.keys()), depth + 1), snapshot(list(v.values()), depth + 1))
    if type(v).__name__ in ("dtype", "Type") or (mod.startswith("mindspore") and (
            "dtype" in mod or any(b.__name__ == "Type" for b in type(v).__mro__))):   # ms.float16 is a typing.Float
        return ("dtype", str(v).replace("torch.", "").lower())
    return ("O", type(v).__name__)


def compare(exp, got, c, rtol, atol):
    """'' when got matches exp under the case's checks, else what differs."""
    check_value = c.get("check_value", True) and not c["custom_compare"]
    check_dtype = c.get("check_dtype", True)
    if got[:2] == ("O", "Unconverted"):
        return "an Unconverted placeholder stands for the value"
    if exp[0] == "O":
        return ""   # an object with no value form (a module, a generator...): the program ran
    if exp[0] == "Q" or exp[0] == "D":
        if got[0] != exp[0]:
            return f"type {'sequence' if exp[0] == 'Q' else 'dict'} vs {describe(got)}"
        if exp[0] == "D":
            return compare(exp[1], got[1], c, rtol, atol) or compare(exp[2], got[2], c, rtol, atol)
        if len(exp[1]) != len(got[1]):
            return f"length {len(exp[1])} vs {len(got[1])}"
        for e, g in zip(exp[1], got[1]):
            d = compare(e, g, c, rtol, atol)
            if d:
                return d
        return ""
    if exp[0] == "S":
        if got[0] != "S" or got[1] != exp[1]:
            return f"type {exp[1]} vs {describe(got)}"
        if check_value and exp[2] != got[2] and not (
                isinstance(exp[2], (float, complex)) and np.allclose(got[2], exp[2], rtol, atol, equal_nan=True)):
            return "values"
        return ""
    if exp[0] == "dtype":
        return "" if got == exp else f"dtype object {exp[1]} vs {describe(got)}"
    if exp[0] != got[0]:
        return f"type {describe(exp)} vs {describe(got)}"
    e, g = exp[1], got[1]
    if exp[0] == "T" and check_dtype and exp[2] != got[2]:
        return f"dtype {exp[2]} vs {got[2]}"
    if exp[0] == "N" and check_dtype and e.dtype != g.dtype:
        return f"dtype {e.dtype} vs {g.dtype}"
    if c.get("check_shape", True) is False:
        e, g = e.reshape(-1), g.reshape(-1)
    if e.shape != g.shape:
        return f"shape {e.shape} vs {g.shape}"
    if not check_value or e.size == 0:
        return ""
    try:
        ok = np.allclose(g, e, rtol=rtol, atol=atol, equal_nan=True) if e.dtype.kind in "fc" or g.dtype.kind in "fc" \
            else np.array_equal(g, e)
    except TypeError:
        ok = np.array_equal(g, e)
    return "" if ok else "values"


def describe(s):
    return {"T": "tensor", "N": "ndarray", "Q": "sequence", "D": "dict", "dtype": "dtype"}.get(s[0], None) or \
        (s[1] if s[0] in ("S", "O") else s[0])


# ------------------------------------------------------------------ workers (torch side / torch-free side)
class CaseTimeout(BaseException):
    pass


def _alarm(signum, frame):
    raise CaseTimeout(f"the case ran over {CASE_TIMEOUT} s")


def torch_switches(torch):
    """A function that puts back torch's process-wide switches as they are now: a case's
    `torch.set_default_tensor_type(torch.BFloat16Tensor)` or `set_grad_enabled(False)` would otherwise reach
    every later case of the same worker (its tensors made bfloat16, its gradients off)."""
    dtype, grad = torch.get_default_dtype(), torch.is_grad_enabled()
    device, threads = torch.get_default_device(), torch.get_num_threads()
    deterministic, anomaly = torch.are_deterministic_algorithms_enabled(), torch.is_anomaly_enabled()

    def restore():
        torch.set_default_dtype(dtype)   # also the default tensor type (FloatTensor for float32 on CPU)
        torch.set_default_device(device)
        torch.set_grad_enabled(grad)
        torch.set_num_threads(threads)
        torch.use_deterministic_algorithms(deterministic)
        torch.set_anomaly_enabled(anomaly)
    return restore


def ms_switches(ms):
    """The same for MindSpore: a converted program's `ms.set_context(mode=ms.GRAPH_MODE)` (the train-step form)
    must not turn the worker's later programs into GRAPH-mode runs. (ms.set_deterministic cannot be undone:
    MindSpore refuses a second call; it changes no CPU result here.)"""
    mode = ms.get_context("mode")
    return lambda: ms.set_context(mode=mode)


def worker_main(side: str, work: Path, queue_file: Path):
    """Runs the listed cases one by one, writing res/<side>/<case>.pkl; `current` names the case running."""
    import random
    table = {c["case"]: c for c in json.loads((work / "cases.json").read_text())}
    queue = queue_file.read_text().split()
    res = work / "res" / side
    src = work / ("src" if side == "torch" else "out")
    if side == "ms":
        block_torch()
        sys.path.insert(0, str(src))
        import mindspore as ms
        ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
        seed = ms.set_seed
        restore = ms_switches(ms)
    else:
        import torch
        torch.set_num_threads(1)
        seed = torch.manual_seed
        restore = torch_switches(torch)
    scratch = work / "scratch" / queue_file.stem
    scratch.mkdir(parents=True, exist_ok=True)
    os.chdir(scratch)
    signal.signal(signal.SIGALRM, _alarm)
    devnull = open(os.devnull, "w")
    conf = work / "reuse.json"
    reused = json.loads(conf.read_text()) if conf.exists() else None
    for name in queue:
        if (res / f"{name}.pkl").exists():
            continue
        if reused and (Path(reused["prev"]) / "res" / side / f"{name}.pkl").exists() and reusable(
                Path(reused["prev"]), work, name, side, reused["helper_same"]):   # done by the earlier run meanwhile
            shutil.copyfile(Path(reused["prev"]) / "res" / side / f"{name}.pkl", res / f"{name}.pkl")
            continue
        (queue_file.with_suffix(".current")).write_text(name)
        c = table[name]
        path = src / f"{name}.py"
        restore()
        random.seed(0)
        np.random.seed(0)
        seed(0)
        module = types.ModuleType("peer_case")   # a real module: pickling, dataclasses and hooks look it up
        module.__file__ = str(path)
        sys.modules["peer_case"] = module
        ns = module.__dict__
        stdout = sys.stdout
        sys.stdout = devnull
        signal.alarm(CASE_TIMEOUT)
        try:
            exec(compile(path.read_text(), str(path), "exec"), ns)
            out = ("ok", {n: snapshot(ns[n]) if n in ns else ("missing",) for n in c["names"]})
        except BaseException as e:  # noqa: BLE001 - recorded and classified later
            if isinstance(e, KeyboardInterrupt):
                raise
            out = ("err", type(e).__name__, str(e)[:300])
        finally:
            signal.alarm(0)
            sys.stdout = stdout
        ns.clear()
        tmp = res / f"{name}.tmp"
        tmp.write_bytes(pickle.dumps(out))
        tmp.rename(res / f"{name}.pkl")
    queue_file.with_suffix(".current").unlink(missing_ok=True)


def run_side(side: str, work: Path, names, jobs: int):
    """Runs every case on one side in `jobs` worker processes; a worker that dies or hangs is restarted after
    its current case, which is recorded as ProcessDied."""
    res = work / "res" / side
    res.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, ONEDNN_MAX_CPU_ISA="AVX2", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONPATH=str(ROOT) if side == "torch" else "", GLOG_v="3")
    queues = [names[k::jobs] for k in range(jobs)]
    procs = {}

    def start(k):
        qf = work / "queues" / f"{side}{k}.txt"
        qf.parent.mkdir(exist_ok=True)
        qf.write_text("\n".join(queues[k]))
        procs[k] = (subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--work", str(work),
                                      "--worker", side, str(qf)], env=env, cwd=work,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True),
                    time.time(), None)
    for k in range(jobs):
        if queues[k]:
            start(k)
    while procs:
        time.sleep(0.5)
        for k, (p, t0, last) in list(procs.items()):
            cur_file = work / "queues" / f"{side}{k}.current"
            cur = cur_file.read_text() if cur_file.exists() else None
            if cur != last:
                procs[k] = (p, time.time(), cur)
                continue
            hung = time.time() - t0 > CASE_TIMEOUT + 60 + (60 if cur is None else 0)
            if p.poll() is None and not hung:
                continue
            try:   # the worker and what its cases started (a compiler run by cpp_extension...)
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
            left = [n for n in queues[k] if not (res / f"{n}.pkl").exists()]
            if cur and cur in left:
                (res / f"{cur}.pkl").write_bytes(pickle.dumps(
                    ("err", "ProcessDied", "the worker died or hung in this case")))
                left.remove(cur)
            elif left and p.returncode not in (0, None):
                print(f"{side} worker {k} failed outside a case (rc {p.returncode}); {len(left)} cases not run")
                left = []
            del procs[k]
            if left:
                queues[k] = left
                start(k)


def reusable(prev: Path, work: Path, name: str, side: str, helper_same: bool) -> bool:
    """Whether the earlier run's result of this case stands: same program text (the converted side: and the same
    helper where it imports it); a program runs the same way twice (seeded)."""
    tree = "src" if side == "torch" else "out"
    old, new = prev / tree / f"{name}.py", work / tree / f"{name}.py"
    if not old.exists():
        return False
    text = new.read_text()
    return text == old.read_text() and (helper_same or "_ms_compat" not in text)


def reuse(prev: Path, work: Path, names, side: str):
    """Copies the earlier results that stand (reusable); returns (copied, the names left: the changed programs
    first, then the unchanged ones the earlier run has no result for yet, which the workers copy when it has)."""
    helper = "out/_ms_compat.py"
    helper_same = side == "torch" or ((prev / helper).exists() and (prev / helper).read_bytes() ==
                                      (work / helper).read_bytes())
    (work / "reuse.json").write_text(json.dumps({"prev": str(prev), "helper_same": helper_same}))
    (work / "res" / side).mkdir(parents=True, exist_ok=True)
    copied, changed, waiting = 0, [], []
    for name in names:
        if not reusable(prev, work, name, side, helper_same):
            changed.append(name)
        elif (prev / "res" / side / f"{name}.pkl").exists():
            shutil.copyfile(prev / "res" / side / f"{name}.pkl", work / "res" / side / f"{name}.pkl")
            copied += 1
        else:
            waiting.append(name)
    return copied, changed + waiting


def converted_files(work: Path, jobs: int, again: bool):
    """{case: its report entry} after `msmigrate convert` of the whole tree (kept from before unless `again`);
    None, with the converter's output printed, where it wrote no report."""
    report = work / "out" / "msmigrate-report.json"
    if again or not report.exists():
        cmd = [sys.executable, "-m", "msmigrate", "convert", str(work / "src"), "-o", str(work / "out"), "-q",
               "-j", str(jobs)]
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if not report.exists():
            print(done.stdout[-3000:], done.stderr[-3000:])
            return None
    return {Path(f["file"]).stem: f for f in json.loads(report.read_text())["files"]}


# ------------------------------------------------------------------ classification and the summary
def holds_a_value(s) -> bool:
    """Whether comparing snapshot s compares anything: a tensor, array, scalar or dtype, or a sequence/dict holding
    one; an object with no value form (a module, a generator: ('O', ...)) and an empty sequence compare nothing."""
    if s[0] in ("T", "N", "S", "dtype"):
        return True
    if s[0] == "Q":
        return any(holds_a_value(x) for x in s[1])
    if s[0] == "D":
        return holds_a_value(s[1]) or holds_a_value(s[2])
    return False


def compares_nothing(c, exp) -> bool:
    """A case whose torch run names no compared value (no names, or only objects with no value form): its
    converted run passing says only that it ran, so it is counted apart from the pass rate."""
    return exp[0] == "ok" and not any(holds_a_value(exp[1][n]) for n in c["names"] if n in exp[1])


def classify(c, exp, got, file_entry):
    """(class, detail, loose pass, requires_grad: 'differs' / 'unknown' / '') of one case."""
    if exp[0] != "ok":
        return "torch_error", f"{exp[1]}: {exp[2][:100]}", False, ""
    if not file_entry or file_entry.get("status") not in ("converted", "unchanged"):
        return "convert_error", (file_entry or {}).get("reason", "no output")[:120], False, ""
    if got[0] == "ok" and compares_nothing(c, exp):
        return "nothing_compared", "the case names no value to compare: it ran, nothing more is known", False, ""
    sites = file_entry.get("sites", [])
    todo = [s for s in sites if s["status"] == "todo"]
    noted = [s for s in sites if s["status"] == "converted-with-difference" and s["note"]]
    loose, grad = False, ""
    if got[0] == "ok":
        strict = dict(rtol=c.get("rtol", 1e-6), atol=c.get("atol", 0.0))
        diff = ""
        for n in c["names"]:
            e, g = exp[1][n], got[1].get(n, ("missing",))
            if g[0] == "missing":
                diff = f"NameMissing: {n} is not defined after the converted program"
                break
            diff = compare(e, g, c, **strict)
            if diff:
                break
        loose = all(got[1].get(n, ("missing",))[0] != "missing" and not compare(
            exp[1][n], got[1][n], c, max(strict["rtol"], LOOSE_RTOL), max(strict["atol"], LOOSE_ATOL))
            for n in c["names"])
        pairs = [(exp[1][n], got[1][n]) for n in c["names"] if exp[1][n][0] == "T" and got[1].get(n, ("",))[0] == "T"]
        # MindSpore keeps requires_grad on Parameters only: a plain tensor's flag is unknown (None)
        grad = "differs" if any(g[3] is not None and bool(g[3]) != e[3] for e, g in pairs) else \
            "unknown" if any(g[3] is None and e[3] for e, g in pairs) else ""
        if not diff:
            return "pass", "", True, grad
        detail = diff
    else:
        if got[1] == "MigrationError":
            return "todo", got[2][:120], False, ""
        detail = f"{got[1]}: {got[2][:120]}"
    if todo:
        return "todo", todo[0]["api"] + ": " + todo[0]["note"][:100], loose, grad
    if noted:
        return "noted", detail, loose, grad
    return "silent", detail, loose, grad


CLASSES = ("pass", "todo", "noted", "silent", "convert_error")
NAMESPACES = ("torch", "Tensor", "nn", "nn.functional", "optim", "linalg", "fft", "special", "distributions",
              "utils.data", "autograd", "other")


def error_kind(detail: str) -> str:
    """A failure's detail with numbers and quoted names folded, so that alike failures count together."""
    d = re.sub(r"'[^']*'", "'…'", detail.split("\n")[0])
    d = re.sub(r"\(\d+(, \d+)*,?\)|\d+(\.\d+)?", "N", d)
    return d[:70]


def summarize(results, counts, show):
    counted = [r for r in results if r["cls"] not in ("torch_error", "nothing_compared")]
    by_ns = collections.defaultdict(collections.Counter)
    for r in counted:
        for key in (r["ns"], "ALL"):
            by_ns[key][r["cls"]] += 1
            by_ns[key]["loose"] += r["loose"]
    print(f"{'namespace':14s} {'cases':>6s} " + " ".join(f"{c:>13s}" for c in CLASSES) + "   pass%  loose%")
    for ns in [n for n in NAMESPACES if n in by_ns] + ["ALL"]:
        cnt = by_ns[ns]
        total = sum(cnt[c] for c in CLASSES)
        print(f"{ns:14s} {total:6d} " + " ".join(f"{cnt[c]:13d}" for c in CLASSES) +
              f"   {100 * cnt['pass'] / max(total, 1):5.1f}  {100 * cnt['loose'] / max(total, 1):5.1f}")
    custom = [r for r in counted if r["custom_compare"]]
    print(f"shape/dtype only (the peer's own compare): {len(custom)} cases, "
          f"{sum(r['cls'] == 'pass' for r in custom)} pass; "
          f"requires_grad (not part of pass): differs in {sum(r['grad_differs'] == 'differs' for r in counted)} "
          f"cases, unknown in {sum(r['grad_differs'] == 'unknown' for r in counted)} (torch's True on a MindSpore "
          f"tensor that is no Parameter, which has no such flag)")
    print(f"not counted: torch_error {sum(r['cls'] == 'torch_error' for r in results)}; nothing compared (ran; no "
          f"value named to compare) {sum(r['cls'] == 'nothing_compared' for r in results)}; "
          + "; ".join(f"{k}: {v}" for k, v in counts.most_common()))
    fails = [r for r in counted if r["cls"] in ("silent", "noted", "convert_error")]
    for title, key in (("failure kinds (class, what)", lambda r: (r["cls"], error_kind(r["detail"]))),
                       ("failing APIs (class, api)", lambda r: (r["cls"], r["api"])),
                       ("TODO kinds", None)):
        if key is None:
            tally = collections.Counter(error_kind(r["detail"]) for r in counted if r["cls"] == "todo")
        else:
            tally = collections.Counter(key(r) for r in fails)
        print(f"\ntop {title}:")
        for k, n in tally.most_common(show):
            print(f"  {n:4d}  {' | '.join(k) if isinstance(k, tuple) else k}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirror", help="bare git mirror of PaddlePaddle/PaConvert")
    ap.add_argument("--files", default="", help="comma-separated test file stems (test_addmm,...)")
    ap.add_argument("--limit", type=int, default=0, help="only the first N test files")
    ap.add_argument("--every", type=int, default=1, help="every K-th test file (a spread-out subset)")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="worker processes per side")
    ap.add_argument("--work", default=str(WORK))
    ap.add_argument("--json", default="", help="write every case's result here")
    ap.add_argument("--show", type=int, default=30, help="failure classes to print")
    ap.add_argument("--reuse", default="", help="an earlier --work dir: a case whose program (and, for the converted "
                    "side, _ms_compat.py where it imports it) is unchanged keeps its result from there")
    ap.add_argument("--resume", action="store_true", help="continue a run stopped part-way in --work (same cases)")
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    work = Path(args.work)
    if args.worker:
        return worker_main(args.worker[0], work, Path(args.worker[1]))
    if not args.mirror:
        ap.error("--mirror is required")

    t0 = time.time()
    sources = mirror_tests(args.mirror)
    helpers = mirror_tests(args.mirror, r"tests/\w+_helper\.py")
    stems = sorted(sources)
    if args.files:
        wanted = {f if f.startswith("test_") else "test_" + f for f in args.files.split(",")}
        stems = [s for s in stems if s in wanted]
    stems = stems[::args.every]
    if args.limit:
        stems = stems[:args.limit]
    cases, counts = [], collections.Counter()
    for s in stems:
        cs, cn = extract(s, sources[s], helpers)
        cases += cs
        counts.update(cn)
    if not (args.resume and (work / "cases.json").exists()):
        shutil.rmtree(work, ignore_errors=True)
        (work / "src").mkdir(parents=True)
        for c in cases:
            (work / "src" / f"{c['case']}.py").write_text(c["code"])
        (work / "cases.json").write_text(json.dumps(cases))
    else:   # a run stopped part-way: its programs, conversion and results stand; the cases left run
        cases = json.loads((work / "cases.json").read_text())
        for c in cases:
            c["code"] = ""
    names = [c["case"] for c in cases]
    print(f"{len(stems)} test files, {len(cases)} cases extracted")
    prev = Path(args.reuse) if args.reuse else None
    torch_names = names
    if prev:
        copied, torch_names = reuse(prev, work, names, "torch")
        print(f"torch results reused from {prev}: {copied}")
    run_side("torch", work, torch_names, args.jobs)
    t_torch = time.time() - t0

    t1 = time.time()
    files = converted_files(work, args.jobs, again=not args.resume)
    if files is None:
        return 2
    t_conv = time.time() - t1

    t2 = time.time()
    runnable = [n for n in names if files.get(n, {}).get("status") in ("converted", "unchanged")]
    if prev:
        copied, runnable = reuse(prev, work, runnable, "ms")
        print(f"torch-free results reused from {prev}: {copied} (+ those it finishes meanwhile)")
    run_side("ms", work, runnable, args.jobs)
    t_run = time.time() - t2

    sys.path.insert(0, str(work / "out"))   # results of the first versions may name the converted tree's helper
    results = []
    for c in cases:
        exp = pickle.loads((work / "res" / "torch" / f"{c['case']}.pkl").read_bytes())
        pk = work / "res" / "ms" / f"{c['case']}.pkl"
        got = pickle.loads(pk.read_bytes()) if pk.exists() else ("err", "NotRun", "")
        cls, detail, loose, grad = classify(c, exp, got, files.get(c["case"]))
        results.append(dict({k: v for k, v in c.items() if k != "code"}, cls=cls, detail=detail,
                            loose=cls == "pass" or loose, grad_differs=grad))
    summarize(results, counts, args.show)
    print(f"seconds ({args.jobs} workers): torch {t_torch:.0f}, convert {t_conv:.0f}, torch-free run {t_run:.0f}, "
          f"total {time.time() - t0:.0f}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
