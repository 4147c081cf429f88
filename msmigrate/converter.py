"""Converting a file or a whole tree: walk, convert each Python file (in parallel
for large trees), copy everything else, write the helper module and the report.
The source tree is only read."""
from __future__ import annotations

import ast
import os
import re
import shutil
import signal
import stat
import sys
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import libcst as cst

from . import train_loop as TL
from .autograd_backward import might_call_backward, rewrite_autograd_backward
from .first_parameters import might_read_first_parameter, rewrite_first_parameters
from .trained_tensors import might_train_tensors, rewrite_trained_tensors
from .detached_updates import might_update_detached, rewrite_detached_updates
from .own_names import (imported_converter_names, might_bind_converter_names, own_converter_names,
                        rename_own_converter_names)
from .loop_unswitch import might_unswitch, unswitch_loops
from .exit_branches import hoist_exit_else, might_exit_branch
from .inplace_chains import might_chain_inplace, might_update_buffer, rewrite_inplace_chains
from .grad_helpers import inline_grad_helpers, might_inline_grad_helpers
from .init_subscripts import might_init_subscript, rewrite_init_subscripts
from .graph_attr_casts import might_recast_attribute, recast_attributes_as_locals
from .graph_attr_stores import might_store_attribute, read_stored_attributes_as_locals
from .inplace_activations import might_act_in_place, rebind_activated_inputs
from .inplace_callers import might_change_arguments, rebind_changed_arguments
from .inplace_flag_returns import might_return_flagged_inplace, rewrite_flagged_inplace_returns
from .complex_operators import makes_complex
from .graph_branch_names import bind_branch_names, made_step_functions, might_bind_in_branch
from .gathered_writes import might_write_gathered, own_gathered_reads
from .graph_idioms import split_device_tuples
from .graph_partials import inline_graph_partials, might_build_partial
from .argument_backward import packages_hold_one
from .deps import DependencyError, converted_before, imports_dependency, locate as locate_dependency
from .lines import statement_lines
from .line_map import LINES_FILE, follow_edits, line_table, mark_statements, unmark
from .numpy_idioms import convert_numpy_only, has_copy_keyword, rewrite_numpy_copy

from .project_index import ProjectIndex, dependency_write_owners, is_torch_name
from .out_files import copy_file, output_problem, write_text
from .package_probes import might_probe, rewrite_package_probes
from .torch_namespace import literal_getattr_chains
from .torch_attr_stores import might_store_on_torch, own_names_on_torch
from .base_calls import base_calls_as_super, might_call_base
from .torch_feature_probes import rewrite_feature_probes
from .undefined_names import read_undefined_names, restore_bound_names
from .forward_refs import rename_class_forward_refs
from .source_limits import source_problem
from .sites import Site
from .transformer import COMPAT, TorchToMindSpore

TEMPLATES = Path(__file__).parent / "templates"
_TORCH_WORD = re.compile(r"\b(torch|torchvision|torchaudio|torchtext|functorch|timm)\b")
# torch's Module dictionaries read by attribute (`model._modules.items()`): a file of helpers that walks a model
# passed in (pytorch-grad-cam's utils/find_layers.py) names no torch, but reads torch's modules
_MODULE_DICT_READ = re.compile(r"\.(_modules|_parameters)\b")
_TF_WORD = re.compile(r"^\s*(import|from)\s+(tensorflow|keras|tf_keras)\b", re.M)
# a file importing MindSpore already (e.g. msmigrate's own output of a mixed torch + TensorFlow file) is not
# a TensorFlow program: converting it again must change nothing
_MS_WORD = re.compile(r"^\s*(import|from)\s+(mindspore|_ms_compat)\b|^\s*from\s+\.+\s+import\s+_ms_compat\b", re.M)
MAX_FILE_BYTES = 5 * 1024 * 1024
# one file's conversion may take this long (seconds); past it the file is copied unchanged and
# reported as failed, so that one pathological file cannot hold up a whole tree
FILE_TIME_LIMIT_S = 600.0
_HELPER_MARK = '"""Small helpers written by msmigrate'


class ConversionError(Exception):
    """A usage or input problem: one line for the user."""


@dataclass
class FileResult:
    rel: str
    status: str                 # "converted", "unchanged", "copied" (not Python), "failed"
    sites: List[Site] = field(default_factory=list)
    reason: str = ""
    lines: int = 0
    compat_dir: Optional[str] = None   # where this file expects _ms_compat.py (relative)
    # (first, last converted line, original line) per converted statement (line_map.py): _ms_lines.json
    spans: List[Tuple[int, int, int]] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"file": self.rel, "status": self.status, "reason": self.reason, "lines": self.lines,
                "sites": [s.to_json() for s in self.sites]}


def convert_code(source: str, module_name: str = "__main__", is_package: bool = False,
                 index: Optional[ProjectIndex] = None,
                 compat_import: Optional[Tuple[int, str]] = None,
                 spans: Optional[list] = None, renamed: bool = False) -> Tuple[str, List[Site], bool]:
    """Convert one module's source. Returns (new code, sites, uses_compat). `spans`, a list: filled with the
    original line of each converted statement (line_map.py)."""
    if index is None:
        path = Path(*module_name.split(".")).with_suffix(".py")
        index = ProjectIndex(Path("."), [path], {path: source})
    TL.forget_answers()   # (the answers kept for the last file's nodes)
    module = cst.parse_module(source)
    if not _TORCH_WORD.search(source) and _TF_WORD.search(source) and not _MS_WORD.search(source):
        from .tf_convert import convert_tf_code, imports_tensorflow
        if imports_tensorflow(module):   # a TensorFlow/Keras program: its own pass
            if spans is None:
                return convert_tf_code(source, compat_import, module_name)
            # its statements marked with their original lines too (_ms_lines.json: a refusal at run time names
            # the original line, as a torch file's do)
            marked = mark_statements(module, statement_lines(module, ast.parse(source))).code
            code, sites, uses_compat = convert_tf_code(marked, compat_import, module_name)
            code, found = unmark(code)
            spans.extend(found)
            return code, sites, uses_compat
    tree = ast.parse(source)
    own_names = own_converter_names(module) if might_bind_converter_names(source) else set()
    if own_names:   # `from .common import nn` re-exporting torch's nn (a project module's name): left as it is
        info = index.modules.get(module_name)
        project = {m.split(".")[0] for m in index.modules}
        own_names -= {n for n, q in (info.imports if info else {}).items()
                      if is_torch_name(q) or q.split(".")[0] in project}
    # a function's read of a name the module never defines, through the helper with its line (undefined_names.py);
    # first, on the original positions
    module, reads_undefined = read_undefined_names(module, source, module_name, COMPAT)
    if spans is not None:   # each statement marked with its original line (line_map.py)
        module = mark_statements(module, statement_lines(module, tree))
    if might_inline_grad_helpers(source, index, module_name):   # `gp = self.penalty(out, x)` written out (grad_helpers.py)
        # (the pass adds the statements it writes to the ast too: every statement keeps its line)
        module = inline_grad_helpers(module, tree, statement_lines(module, tree), index, module_name)
    np_sites: List[Site] = []
    if might_store_on_torch(source):   # `nn.MaskedLinear = MaskedLinear`: the program's own (torch_attr_stores.py)
        info = index.modules.get(module_name)
        module, np_sites = own_names_on_torch(module, info.imports if info else {}, statement_lines(module, tree))
    if might_call_base(source):   # `nn.Linear.__init__(self, ...)` in a subclass of nn.Linear: super() (base_calls.py)
        info = index.modules.get(module_name)
        module = base_calls_as_super(module, info.imports if info else {})
    if has_copy_keyword(source):   # numpy 2's copy= idioms, rewritten for numpy<2 (numpy_idioms.py)
        info = index.modules.get(module_name)
        module, copy_sites = rewrite_numpy_copy(module, info.imports if info else {}, statement_lines(module, tree))
        np_sites = np_sites + copy_sites
    if "getattr(" in source:   # getattr(torch, "version").hip: one torch name (torch_namespace.py)
        info = index.modules.get(module_name)
        module = literal_getattr_chains(module, info.imports if info else {})
        module, feature_sites = rewrite_feature_probes(module, info.imports if info else {},
                                                       statement_lines(module, tree))
        np_sites = np_sites + feature_sites   # getattr(torch.X, "name", default) (torch_feature_probes.py)
    if ".forward" in source:   # cls.forward / type(self).forward in a module class (forward_refs.py)
        module = rename_class_forward_refs(module, index, module_name)
    if might_call_backward(source):   # torch.autograd.backward(loss) as loss.backward() (autograd_backward.py)
        info = index.modules.get(module_name)
        module = rewrite_autograd_backward(module, info.imports if info else {})
    if might_train_tensors(source):   # w = torch.randn(.., requires_grad=True) in SGD([w]): nn.Parameter (trained_tensors.py)
        info = index.modules.get(module_name)
        module = rewrite_trained_tensors(module, info.imports if info else {})
    if might_read_first_parameter(source):   # next(self.parameters()) as self.mlp[0].weight (first_parameters.py)
        info = index.modules.get(module_name)
        module = rewrite_first_parameters(module, info.imports if info else {})
    if might_update_detached(source):   # p.detach().zero_() as p.data.zero_() (detached_updates.py)
        module = rewrite_detached_updates(module)
    if might_chain_inplace(source) or might_update_buffer(source):
        # mu.mul_(m).add_(dp) as mu.mul_(m); mu.add_(dp); self.buf.mul_(m) as self.buf.data.mul_(m) (inplace_chains.py)
        module = rewrite_inplace_chains(module)
    fills_parts = False
    if might_init_subscript(source):   # nn.init.zeros_(w[i]) as w[i] = 0 (init_subscripts.py)
        info = index.modules.get(module_name)
        module, fills_parts = rewrite_init_subscripts(module, info.imports if info else {})
    if might_recast_attribute(source):   # `self.m = self.m.to(x.dtype)` in forward (graph_attr_casts.py)
        module, recast_sites = recast_attributes_as_locals(module, statement_lines(module, tree))
        np_sites = np_sites + recast_sites
    if might_store_attribute(source):   # `self.c = h * 2; return self.c.sum()` in forward (graph_attr_stores.py)
        module = read_stored_attributes_as_locals(module)
    arg_refusals, arg_write_backs = {}, {}
    if might_change_arguments(source):   # `y = f(x, m)` where f changes x in place: `y = x = f(x, m)` (inplace_callers.py)
        module, arg_refusals, arg_write_backs = rebind_changed_arguments(
            module, lambda name: f"{module_name}.{name}" in index.cell_classes)
    if might_act_in_place(source):   # `out = self.act(h)` with inplace=True, h read after: `out = h = ...`
        module, act_refusals = rebind_activated_inputs(module)
        arg_refusals = {**arg_refusals, **act_refusals}
    if might_return_flagged_inplace(source):   # `return x.mul_(s) if inplace else x.mul(s)` (inplace_flag_returns.py)
        module = rewrite_flagged_inplace_returns(module)   # (after the callers' analysis above saw the in-place form)
    gathered = False
    if might_write_gathered(source):   # `t = s[idx]; t[mask] = v`: t a tensor of its own (gathered_writes.py)
        module, gathered = own_gathered_reads(module, COMPAT)
    probe_sites: List[Site] = []
    if might_probe(source) and _TORCH_WORD.search(source):   # torch availability probes (package_probes.py)
        info = index.modules.get(module_name)
        module, probe_sites = rewrite_package_probes(module, info.imports if info else {},
                                                     statement_lines(module, tree), COMPAT)
    stmt_lines = statement_lines(module, tree)
    if might_exit_branch(source):   # `if i == 0: ...; continue` / `else: <forward>`: the else after it (exit_branches.py)
        module = hoist_exit_else(module, stmt_lines) or module
    if might_unswitch(source):   # an update chosen by a fixed test inside an inner loop (loop_unswitch.py)
        module = unswitch_loops(module, stmt_lines) or module
    for keep_no_grad in (False, True):
        tr = TorchToMindSpore(module_name, is_package, index, compat_import)
        tr.stmt_lines = stmt_lines
        tr._arg_refusals = arg_refusals
        tr._arg_write_backs = arg_write_backs
        tr.uses_compat = bool(probe_sites) or fills_parts or reads_undefined or gathered   # _ms_compat.fill_part by the pre-pass
        tr.complex_operators = makes_complex(source)   # `z * x` with z complex (complex_operators.py)
        # a module a recording program imports (convert_tree's second phase): its no_grad outside Cell code stays
        tr.keep_no_grad = keep_no_grad or ("outside_cells" if module_name in index.recorded_imports else False)
        new = module.visit(tr)
        # a taped backward (taped_steps.py): PyNative records from the program's start, so torch.no_grad()
        # regions (weights written in place) must stay: the file is converted again keeping them
        # (recorded_backward.py: the same record, here or started by a module imported, which makes MindSpore
        # refuse an in-place write on a Parameter outside a no_grad region: "A leaf tensor that requires grad is
        # being used in an inplace operator")
        if not (tr._taped or tr._records_autograd or index.reaches_recorded_backward(module_name)):
            break
    if reads_undefined:   # a name the conversion binds (a converted loop's train_step) reads as written
        new = restore_bound_names(new, COMPAT)
    if might_bind_in_branch(source) or made_step_functions(source, new):
        # a name only an `if` or loop of a function binds (graph_branch_names.py); the functions a converted
        # training loop became too (its forward_fn returns the `output` the loop body bound)
        new = bind_branch_names(new)
    if ".device" in source:   # `n, device = x.shape[1], x.device` in construct (graph_idioms.py)
        new = split_device_tuples(new)
    if might_build_partial(source):   # `f = partial(g, k=t)` then `f(x)` in a function: `g(x, k=t)` (graph_partials.py)
        new = inline_graph_partials(new)
    code = new.code
    clash = own_names & imported_converter_names(code)
    if clash and not renamed:   # the program's own `ops`/`ms`/`nn` beside the converter's import of it: renamed (own_names.py)
        own = rename_own_converter_names(cst.parse_module(source), source, clash).code
        return convert_code(own, module_name, is_package, index, compat_import, spans, renamed=True)
    if spans is not None:
        code, found = unmark(code)
        spans.extend(found)
    return code, np_sites + probe_sites + tr.sites, tr.uses_compat


def compat_source() -> str:
    """The emitted helper module: the core template, then one section per file in
    templates/compat_parts/ (data loading, optimizers, training steps...)."""
    parts = [(TEMPLATES / "_ms_compat.py").read_text(encoding="utf-8")]
    for part in sorted((TEMPLATES / "compat_parts").glob("*.py")):
        title = part.stem.replace("_", " ")
        parts.append(f"\n\n# {'=' * 70}\n# {title}\n# {'=' * 70}\n" + part.read_text(encoding="utf-8"))
    from .torch_namespace import compat_section   # generated from the registry
    parts.append(f"\n\n# {'=' * 70}\n# torch namespaces\n# {'=' * 70}\n" + compat_section())
    return "".join(parts)


# ------------------------------------------------------------------ worker
_INDEX: Optional[ProjectIndex] = None
_TIME_LIMIT: Optional[float] = None


def _init_worker(index: ProjectIndex, time_limit: Optional[float] = None) -> None:
    global _INDEX, _TIME_LIMIT
    _INDEX = index
    _TIME_LIMIT = time_limit
    from . import mappings  # noqa: F401  register once per process


def _init_pool_worker(index: ProjectIndex, time_limit: Optional[float] = None) -> None:
    # Ctrl-C goes to the whole process group: the parent stops the run and reports it, a worker
    # finishes its file quietly instead of printing a traceback
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _init_worker(index, time_limit)


def _convert_one(args) -> Tuple[FileResult, Optional[str]]:
    path, rel, text = args
    return convert_file_text(_INDEX, path, rel, text, _TIME_LIMIT)


def _convert_isolated(index: ProjectIndex, time_limit: Optional[float], item) -> Tuple[FileResult, Optional[str]]:
    """One file in a process of its own: a crash there fails only this file."""
    try:
        with ProcessPoolExecutor(max_workers=1, initializer=_init_pool_worker, initargs=(index, time_limit)) as ex:
            return ex.submit(_convert_one, item).result()
    except BrokenProcessPool:
        text = item[2]
        return FileResult(item[1], "failed", reason="the converter crashed on this file (e.g. a native stack "
                          "overflow in the parser)", lines=text.count("\n") + 1), None


class _FileTimeLimit(BaseException):
    """Raised (by SIGALRM) in a file's conversion that ran past its time limit. A BaseException:
    no `except Exception` inside the converter swallows it."""


def _raise_time_limit(signum, frame):
    raise _FileTimeLimit()


class _time_limit:
    """Interrupt the block after `seconds` (wall clock). Only where a SIGALRM timer is free: in the
    main thread (the worker processes of convert_tree, the CLI) and with no other timer running."""

    def __init__(self, seconds: Optional[float]):
        self.armed = (bool(seconds) and hasattr(signal, "setitimer")
                      and threading.current_thread() is threading.main_thread()
                      and signal.getitimer(signal.ITIMER_REAL)[0] == 0)
        self.seconds = seconds

    def __enter__(self):
        if self.armed:
            self.previous = signal.signal(signal.SIGALRM, _raise_time_limit)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def __exit__(self, *exc):
        if self.armed:
            try:
                signal.setitimer(signal.ITIMER_REAL, 0)
            finally:
                signal.signal(signal.SIGALRM, self.previous)
        return False


def _first_line(exc: BaseException) -> str:
    """The first line of an exception's message; libcst's ParserSyntaxError can fail to format its own context."""
    try:
        text = str(exc)
    except Exception:       # noqa: BLE001 - the message itself is broken: the file fails with the class name
        return "(no message)"
    return text.splitlines()[0] if text else ""


def convert_file_text(index: ProjectIndex, path: Path, rel: str, text: str,
                      time_limit: Optional[float] = None) -> Tuple[FileResult, Optional[str]]:
    lines = text.count("\n") + 1
    info = index.by_path.get(path)
    if info is None:
        return FileResult(rel, "unchanged", lines=lines), None
    if info.parse_error:   # (a statement too deep or too long says so rather than "not valid")
        return FileResult(rel, "failed", reason=source_problem(text) or f"not valid Python: {info.parse_error}",
                          lines=lines), None
    if not _TORCH_WORD.search(text) and not _TF_WORD.search(text) and not _MODULE_DICT_READ.search(text) and not any(
            f"{info.name}.{c}" in index.cell_classes or f"{info.name}.{c}" in index.cell_mixins
            for c in info.classes) and not index.reaches_torch(info) \
            and not imports_dependency(index, text) and not index.derives_from_torch_code(info) \
            and not index.serves_torch_code(info):
        if has_copy_keyword(text) and not source_problem(text):   # no torch, but numpy 2 idioms numpy<2 rejects
            try:
                code, sites = convert_numpy_only(text, info.imports)
            except Exception as exc:  # a converter bug must not lose the file
                return FileResult(rel, "failed", reason=f"{type(exc).__name__}: {exc}", lines=lines), None
            if sites:
                return FileResult(rel, "converted", sites=sites, lines=lines), code
        return FileResult(rel, "unchanged", lines=lines), None
    too_big = source_problem(text)   # before libcst sees it: libcst can crash on these
    if too_big:
        return FileResult(rel, "failed", reason=too_big, lines=lines), None
    helper_dir = index.helper_dir(path)
    if (path.parent / "__init__.py").exists():
        depth = len(path.parent.relative_to(helper_dir).parts)
        # a file at the top of a converted directory that is a package too (src/ with its __init__.py, whose
        # train.py is run as a script and imports its siblings by their own names): the relative import where it
        # is imported as a package's module, the plain one where it runs as a script (no __package__)
        compat_import = (depth + 1, COMPAT, depth == 0 and path.parent == index.root)
    else:
        compat_import = (0, COMPAT)
    try:
        with _time_limit(time_limit):
            spans: list = []
            code, sites, uses_compat = convert_code(text, info.name, info.is_package, index, compat_import, spans)
            compile(code, str(path), "exec", dont_inherit=True, flags=0x400)  # PyCF_ONLY_AST
    except _FileTimeLimit:
        return FileResult(rel, "failed", reason=f"conversion took longer than {time_limit:g} s (the per-file "
                          "time limit); copied unchanged", lines=lines), None
    except Exception as exc:  # a converter bug must not lose the file
        return FileResult(rel, "failed", reason=f"{type(exc).__name__}: {_first_line(exc)}",
                          lines=lines), None
    if code == text:
        return FileResult(rel, "unchanged", sites=sites, lines=lines), None
    res = FileResult(rel, "converted", sites=sites, lines=lines, spans=spans)
    if uses_compat:
        res.compat_dir = str(helper_dir.relative_to(index.root)) if helper_dir != index.root else "."
    return res, code


# -------------------------------------------------------------------- tree
@dataclass
class TreeResult:
    src: Path
    out: Path
    files: List[FileResult]
    copied: int = 0
    # dry_run only: rel -> converted code of every file that would change (nothing is written)
    outputs: Dict[str, str] = field(default_factory=dict)
    # msrun launch scripts written next to converted distributed programs (relative to the output)
    launch_scripts: List[str] = field(default_factory=list)
    # packages converted with the project (msmigrate convert --deps; msmigrate/deps.py)
    dependencies: List[dict] = field(default_factory=list)
    # the _ms_compat.py written: its lines, and the converted code's uses of it (runtime_prune.helper_for_files)
    helper: dict = field(default_factory=dict)

    @property
    def sites(self) -> List[Site]:
        return [s for f in self.files for s in f.sites]


def _check_paths(src: Path, out: Optional[Path], force: bool) -> None:
    if not src.exists():
        raise ConversionError(f"source {src} does not exist")
    if not (src.is_file() or src.is_dir()):
        raise ConversionError(f"source {src} is neither a regular file nor a directory")
    if out is None:  # dry run: nothing is written
        return
    s, o = src.resolve(), out.resolve()
    if o == s or (src.is_dir() and s in o.parents):
        raise ConversionError(f"output {out} is the source or lies inside it; choose another directory")
    if src.is_file() and (o if out.suffix == ".py" else o / src.name) == s:
        raise ConversionError(f"output {out} would overwrite the source file {src}")
    if src.is_dir() and o in s.parents:
        raise ConversionError(f"source {src} lies inside output {out}; writing there could overwrite the source")
    if o.exists() and o.is_dir() and any(o.iterdir()) and not force:
        raise ConversionError(f"output {out} exists and is not empty (use --force to write into it)")
    if o.exists() and o.is_file() and src.is_dir():
        raise ConversionError(f"output {out} is a file")
    problem = output_problem(src, out, force)
    if problem:
        raise ConversionError(problem)


def _walk(src: Path) -> Tuple[List[Path], List[Path], List[str]]:
    py, other, skipped = [], [], []
    seen = set()
    for dirpath, dirnames, filenames in os.walk(src, followlinks=False):
        d = Path(dirpath)
        for n in sorted(dirnames):
            if (d / n).is_symlink():
                skipped.append(f"{(d / n).relative_to(src)}: symbolic link to a directory, not followed")
        dirnames[:] = sorted(n for n in dirnames if n not in ("__pycache__", ".git") and not (d / n).is_symlink())
        for n in sorted(filenames):
            p = d / n
            if p.is_symlink():
                skipped.append(f"{p.relative_to(src)}: symbolic link, not followed")
                continue
            try:
                regular = stat.S_ISREG(p.lstat().st_mode)
            except OSError as exc:
                skipped.append(f"{p.relative_to(src)}: unreadable ({exc.strerror or exc})")
                continue
            if not regular:
                skipped.append(f"{p.relative_to(src)}: not a regular file (device, FIFO or socket), not read")
                continue
            key = p.resolve()
            if key in seen:
                continue
            seen.add(key)
            (py if n.endswith(".py") else other).append(p)
    return py, other, skipped


def _dependency_roots(names) -> List[Path]:
    roots = []
    for name in names:
        try:
            roots.append(locate_dependency(name))
        except DependencyError:     # reported by the dependency's own conversion
            continue
    return roots


_RECORDING_HEADER = re.compile(rf"^\s*{COMPAT}\.(open_tape|record_autograd)\(\)", re.M)


def _convert_recorded_imports(index: ProjectIndex, time_limit: float, work, results: List[FileResult],
                              outputs: Dict[str, Optional[str]]) -> None:
    """A converted program that records PyNative's operations from its start (a taped backward: taped_steps.py;
    recorded_backward.py) records what the modules it imports run too, where torch's no_grad() recorded nothing: a
    weight initialisation's in-place copy into a Parameter (which MindSpore then refuses), a generate()'s kv-cache
    writes. Those modules are converted again with their no_grad() regions outside Cell code kept as
    mindspore._no_grad() (in Cell code a compiled graph refuses it; there no_grad_values.py stops the gradient)."""
    names = {info.path: name for name, info in index.modules.items()}
    recording = {names.get(path) for path, rel, _ in work
                 if outputs.get(rel) and _RECORDING_HEADER.search(outputs[rel])} - {None}
    if not recording:
        return
    imported = index.imported_modules(recording) - recording
    redo = [item for item in work if names.get(item[0]) in imported]
    if not redo:
        return
    index.recorded_imports = frozenset(imported)
    again = {}
    try:
        with ProcessPoolExecutor(max_workers=1, initializer=_init_pool_worker, initargs=(index, time_limit)) as ex:
            for res, code in ex.map(_convert_one, redo, chunksize=1):
                again[res.rel] = (res, code)
    except BrokenProcessPool:   # (the first conversion of every file stands: each converted alone again)
        again = {item[1]: _convert_isolated(index, time_limit, item) for item in redo}
    for k, res in enumerate(results):
        if res.rel in again:
            results[k], outputs[res.rel] = again[res.rel]


def convert_tree(src: Path, out: Optional[Path], force: bool = False, jobs: Optional[int] = None,
                 progress: bool = False, dry_run: bool = False, parallel_mode: str = "data",
                 time_limit: Optional[float] = None, deps=(), dependency: bool = False) -> TreeResult:
    """Convert SRC into OUT. With ``dry_run`` nothing is written (OUT may be None): the converted code of
    every file that would change is returned in ``TreeResult.outputs``. ``time_limit``: seconds one file's
    conversion may take (default FILE_TIME_LIMIT_S; 0: no limit). ``deps``: packages converted alongside
    (msmigrate/deps.py) whose names are kept as references to the converted copies; ``dependency``: SRC is
    one of them."""
    time_limit = FILE_TIME_LIMIT_S if time_limit is None else time_limit
    src = Path(src)
    out = Path(out) if out is not None else None
    _check_paths(src, None if dry_run else out, force)
    if out is None:
        if not dry_run:
            raise ConversionError("no output given")
        out = Path(src.name + "_ms")  # never written; only decides the single-file layout
    if src.is_file():
        root = src.parent
        py, other, skipped = ([src], [], []) if src.suffix == ".py" else ([], [src], [])
        out_root = out.parent if out.suffix == ".py" else out
        single_out = out if out.suffix == ".py" else out / src.name
    else:
        root = src
        py, other, skipped = _walk(src)
        out_root = out
        single_out = None
    texts: Dict[Path, str] = {}
    results: List[FileResult] = []
    for p in py:
        rel = p.name if single_out else str(p.relative_to(root))
        try:
            size = p.stat().st_size
            if size > MAX_FILE_BYTES:
                results.append(FileResult(rel, "failed", reason=f"larger than {MAX_FILE_BYTES // 2**20} MiB"))
                continue
            raw = p.read_bytes()
            if b"\x00" in raw:
                results.append(FileResult(rel, "failed", reason="binary file named .py"))
                continue
            text = raw.decode("utf-8-sig")
            if p.name == f"{COMPAT}.py" and text.startswith(_HELPER_MARK):
                # msmigrate's own helper (a second pass over converted code): never converted again
                results.append(FileResult(rel, "unchanged", lines=text.count("\n") + 1))
                continue
            texts[p] = text
        except UnicodeDecodeError:
            results.append(FileResult(rel, "failed", reason="not UTF-8 text"))
        except OSError as exc:
            results.append(FileResult(rel, "failed", reason=f"unreadable: {exc.strerror or exc}"))
    index = ProjectIndex(root, list(texts), texts)
    # --deps (and those of an earlier --deps conversion of this tree): their names refer to the converted copies
    index.converted_deps = frozenset(deps) | frozenset(converted_before(root) if src.is_dir() else ())
    index.deps_bootstrap = not dependency   # a project's files import _ms_compat (sys.path) before them
    # a --deps package's loss scaler (timm's NativeScaler) fills .grad: the project's zero_grad() calls stay
    # and one whose class writes into its caller's tensor (timm's Mixup): a program building one runs PYNATIVE
    roots = _dependency_roots(deps) if deps else []
    index.deps_argument_backward = packages_hold_one(roots)
    index.deps_write_owners = dependency_write_owners(roots)
    work = [(p, p.name if single_out else str(p.relative_to(root)), texts[p]) for p in texts]
    outputs: Dict[str, Optional[str]] = {}
    n_jobs = jobs if jobs is not None else (os.cpu_count() or 1)
    total_lines = sum(t.count("\n") for t in texts.values())
    bar = _Progress(len(work), progress)
    if not (n_jobs > 1 and len(work) > 8 and total_lines > 4000):
        n_jobs = 1   # a small tree or -j 1: one worker, still a process of its own (a crash fails only its file)
    # largest files first, one at a time: the workers finish together
    work.sort(key=lambda item: len(item[2]), reverse=True)
    done = set()
    ex = ProcessPoolExecutor(max_workers=n_jobs, initializer=_init_pool_worker, initargs=(index, time_limit))
    try:
        for res, code in ex.map(_convert_one, work, chunksize=1):
            results.append(res)
            outputs[res.rel] = code
            done.add(res.rel)
            bar.advance()
        ex.shutdown()
    except KeyboardInterrupt:   # Ctrl-C: do not wait for the files not started yet
        ex.shutdown(wait=False, cancel_futures=True)
        raise
    except BrokenProcessPool:
        ex.shutdown(wait=False, cancel_futures=True)
        # a worker died (a crash in native code): every file not yet converted is converted again
        # alone in its own process, so one bad file cannot take the others down
        for item in work:
            if item[1] not in done:
                res, code = _convert_isolated(index, time_limit, item)
                results.append(res)
                outputs[res.rel] = code
                bar.advance()
    bar.close()
    _convert_recorded_imports(index, time_limit, work, results, outputs)
    from .native_forms import native_forms   # MindSpore's own form where the tree shows no helper difference
    converted = dict(outputs)
    outputs = native_forms(outputs, compat_source(), COMPAT)
    if dry_run:
        results.extend(FileResult(p.name if single_out else str(p.relative_to(root)), "copied") for p in other)
        for s in skipped:
            rel, _, why = s.partition(": ")
            results.append(FileResult(rel, "failed", reason=why))
        results.sort(key=lambda r: r.rel)
        return TreeResult(src, out, results, 0, {k: v for k, v in outputs.items() if v is not None})
    from .helper_notes import annotate_first_uses   # why each helper stands there, at its first use
    outputs = annotate_first_uses(outputs, compat_source(), COMPAT)
    for res in results:   # the original lines follow those passes' edits
        if res.spans and outputs.get(res.rel) != converted.get(res.rel):
            res.spans = follow_edits(res.spans, converted[res.rel], outputs[res.rel])
    # write
    out_root.mkdir(parents=True, exist_ok=True)
    compat_dirs = set()
    for res in results:
        dst = single_out if single_out else out_root / res.rel
        src_file = src if single_out else root / res.rel
        code = outputs.get(res.rel)
        try:   # never through a link already in OUT (out_files)
            if code is not None:
                write_text(out_root, dst, code)
            else:
                copy_file(out_root, src_file, dst)
        except OSError as exc:
            res.status = "failed"
            res.reason = (res.reason + "; " if res.reason else "") + f"could not write: {exc}"
        if res.compat_dir is not None:
            compat_dirs.add(res.compat_dir)
    copied = 0
    for p in other:
        rel = p.relative_to(root)
        dst = (out_root / p.name) if single_out else out_root / rel
        try:
            copy_file(out_root, p, dst)
            copied += 1
            results.append(FileResult(str(rel) if not single_out else p.name, "copied"))   # the report lists it
        except OSError as exc:
            results.append(FileResult(str(rel), "failed", reason=f"could not copy: {exc}"))
    for s in skipped:
        rel, _, why = s.partition(": ")
        results.append(FileResult(rel, "failed", reason=why))
    helper = compat_source()
    if parallel_mode != "data":   # --parallel-mode: the one setting line of the distributed section
        helper = helper.replace('PARALLEL_MODE = "data_parallel"', f'PARALLEL_MODE = "{parallel_mode}_parallel"', 1)
    launch_scripts = _write_launch_scripts(results, outputs, out_root, single_out)
    helper_figures: dict = {}
    if compat_dirs:   # one helper module at the top, with what the converted files use (runtime_prune.py)
        from .runtime_prune import helper_for_files, shim
        written = [single_out if single_out else out_root / r.rel for r in results if r.rel.endswith(".py")]
        helper, helper_figures = helper_for_files(helper, [p for p in written if p.is_file() and not p.is_symlink()],
                                                  COMPAT)
        write_text(out_root, out_root / f"{COMPAT}.py", helper)
        if "def original_line(" in helper:   # an error naming a converted line: the original's (line_map.py)
            write_text(out_root, out_root / LINES_FILE, line_table(results, single_out, out_root))
    for d in compat_dirs:
        if d != ".":   # a package's `from .. import _ms_compat` finds a stand-in for the top one
            write_text(out_root, out_root / d / f"{COMPAT}.py", shim(COMPAT, len(Path(d).parts)))
    req = out_root / "requirements-mindspore.txt"
    if any(r.status == "converted" for r in results) and (not req.exists() or req.is_symlink()):
        from .requirements import write_requirements   # every third-party package the output imports
        if req.is_symlink():
            req.unlink()                       # never write through a link inside OUT
        written = [single_out if single_out else out_root / r.rel for r in results if r.rel.endswith(".py")]
        write_requirements(out_root, [p for p in written if p.is_file() and not p.is_symlink()]
                           + ([out_root / f"{COMPAT}.py"] if compat_dirs else []))
    results.sort(key=lambda r: r.rel)
    return TreeResult(src, out, results, copied, launch_scripts=launch_scripts, helper=helper_figures)


_DISTRIBUTED_ENTRY = ("torch.distributed.init_process_group", "torch.multiprocessing.spawn")
MSRUN_SCRIPT = """#!/bin/sh
# Written by msmigrate: starts {program} on several processes with MindSpore's launcher, msrun
# (torchrun's counterpart). msrun sets RANK_ID, DEVICE_ID and MS_WORKER_NUM; _ms_compat fills in
# torchrun's RANK, LOCAL_RANK and WORLD_SIZE from them. Logs: one file per worker in $LOG_DIR.
#   sh {script} [program arguments...]
#   NPROC=8 MASTER_PORT=8200 sh {script} --epochs 10
NPROC=${{NPROC:-2}}
exec msrun --worker_num="$NPROC" --local_worker_num="$NPROC" --master_port="${{MASTER_PORT:-8118}}" \\
    --log_dir="${{LOG_DIR:-msrun_log}}" --join=True --cluster_time_out="${{CLUSTER_TIMEOUT:-600}}" \\
    "$(dirname "$0")/{program}" "$@"
"""


def _write_launch_scripts(results, outputs, out_root: Path, single_out: Optional[Path]) -> List[str]:
    """Next to each converted program that starts distributed training (init_process_group or
    multiprocessing.spawn, and an `if __name__ == "__main__"` block), a `<program>_msrun.sh`."""
    written = []
    for res in results:
        code = outputs.get(res.rel)
        if code is None or "__main__" not in code or not any(s.api in _DISTRIBUTED_ENTRY for s in res.sites):
            continue
        dst = single_out if single_out else out_root / res.rel
        script = dst.with_name(dst.stem + "_msrun.sh")
        write_text(out_root, script, MSRUN_SCRIPT.format(program=dst.name, script=script.name))
        script.chmod(0o755)
        written.append(str(script.relative_to(out_root)))
    return written


class _Progress:
    """A rich progress bar on a terminal; silent otherwise."""

    def __init__(self, total: int, enabled: bool):
        self._p = None
        if enabled and total > 20 and sys.stderr.isatty():
            from rich.progress import Progress
            self._p = Progress(transient=True)
            self._p.start()
            self._task = self._p.add_task("converting", total=total)

    def advance(self):
        if self._p is not None:
            self._p.advance(self._task)

    def close(self):
        if self._p is not None:
            self._p.stop()
