"""The graph a compiled Cell runs follows the plain values it reads.

A MindSpore graph takes the plain values its code reads as constants: a cell's `self.temperature`, a flag, the
training flag of a sub-cell, a number a train step closes over. MindSpore 2.10 compiles a Cell's graph once per
argument kinds and does not compile it again when the program changes those values between calls: the model
(or the converted train step) kept computing with the old value, silently (measured: `model.t = 3.0`,
`model.drop.eval()` and a loop's annealed KL weight changed nothing, in a direct call and in the train step).
torch reads them anew on every call.

So each call of a Cell in GRAPH mode first reads those values (graph_constants_of) and runs the graph compiled
for them: MindSpore keys a Cell's graphs by its create_time, which is pointed at one per set of values (a new
set compiles once; train/eval alternating compiles twice and then reuses both). Values that keep changing (a new
set fewer than _RECOMPILE_MIN_CALLS calls after the last, from the third graph on, or more than _MAX_GRAPHS sets)
make the cell run op by op from then on, with a warning naming what changed."""
import os

import mindspore as ms
from mindspore import nn, ops

# a cell whose constants change again fewer calls than this after the last change runs op by op
_RECOMPILE_MIN_CALLS = 20
_MAX_GRAPHS = 16
# what MindSpore itself keeps on every Cell (compile phases, ids, flags); `training` is the program's
_CELL_BOOKKEEPING = frozenset(vars(nn.Cell())) - {"training"}
_READ_NAMES = {}    # a class -> the attribute names a graph of it reads
_GLOBAL_READS = {}  # a class -> [(module globals, names of plain values there its graph reads)]
_COMPILE_ERRORS = (TypeError, ValueError, RuntimeError, IndexError, KeyError, AttributeError, NameError)
# attributes msmigrate's cells keep for the steps run op by op and read only then (not compiled into graphs)
HOST_STATE = frozenset({"param_steps"})


def graph_constants_of(cell):
    """(what, value) of everything a graph of `cell` takes as a constant that the program can change between
    calls: of each cell it runs (its sub-cells; for a train step, the cells its functions reach) the training
    flag, the plain attributes (numbers, strings, bools, None, short tuples of them) that the constructs or the
    step's functions read, and which sub-cells and Parameters it holds; for a train step also the plain values
    its functions close over or read as globals (_closure_key) and the attributes of the program's plain
    objects it reads through (a Trainer's `self`)."""
    step = _step_of(cell)
    if step is None:
        return tuple(_tree_constants([("", cell)], set(), []))
    out = [("(values the step reads)", _closure_key(step))]
    read = _step_names(step, set(), set())
    _tree_constants(_closure_cells(step, [], set()), read, out)
    for name, holder in _closure_holders(step, [], set()):
        for attr, value in vars(holder).items():
            if attr in read and _plain(value):
                out.append((f"{name}.{attr}", tuple(value) if isinstance(value, list) else value))
            elif attr in read and keyed_tensor(value):
                # a GAN trainer's `self.y_real_` (compile_step compiles such a step only where it must)
                out.append((f"{name}.{attr}", (value.shape, str(value.dtype), value.asnumpy().tobytes())))
    return tuple(out)


# a tensor a plain object holds, read by a compiled step, is a constant of its graph: up to this many entries,
# its values choose the graph (graph_constants_of), as a number's do
_KEYED_TENSOR_SIZE = 4096


def keyed_tensor(value):
    """A tensor (not a Parameter: a graph reads those as they are) small enough to key a graph by its values."""
    return isinstance(value, ms.Tensor) and not isinstance(value, ms.Parameter) and value.size <= _KEYED_TENSOR_SIZE


def _tree_constants(roots, read, out):
    tree = [(".".join(n for n in (name, sub) if n) or type(c).__name__, c)
            for name, cell in roots for sub, c in cell.cells_and_names()]
    classes = {type(cell) for _, cell in tree}
    for cls in classes:
        read |= _read_names(cls)
    for space, names in {id(g): (g, n) for cls in classes for g, n in _GLOBAL_READS[cls]}.values():
        for name in sorted(names):      # a module setting the forward reads (`TEMPERATURE = 0.5`, changed later)
            value = space.get(name)
            if _plain(value):
                out.append((f"{space.get('__name__')}.{name}", tuple(value) if isinstance(value, list) else value))
    for name, cell in tree:
        attrs = vars(cell)
        for attr in read.intersection(attrs):
            value = attrs[attr]
            if attr not in _CELL_BOOKKEEPING and _plain(value):
                out.append((f"{name}.{attr}", tuple(value) if isinstance(value, list) else value))
        # a primitive the program built again (a BatchNorm's momentum set: set_momentum): a graph holds the old one
        kept = getattr(cell, "_primitives", None) or {}
        for attr in sorted(read.intersection(kept)):
            out.append((f"{name}.{attr} (primitive)", id(kept[attr])))
        out.append((f"{name}.training", cell.training))
        out.append((f"{name} (sub-cells and Parameters)",
                    tuple(map(id, cell._cells.values())) + tuple(map(id, cell._params.values()))))
    return out


def _plain(value):
    if isinstance(value, (bool, int, float, str, type(None))):
        return True
    return isinstance(value, (tuple, list)) and len(value) <= 16 and all(
        isinstance(v, (bool, int, float, str, type(None))) for v in value)


def _read_names(cls):
    """The names that `cls.construct` and the methods, properties and module functions it calls read (what a graph
    of it can take as constants), less the host-side bookkeeping of msmigrate's own cells (HOST_STATE); and the
    module globals among them, as (globals, names) pairs (_GLOBAL_READS)."""
    if cls not in _READ_NAMES:
        import types
        names, done, global_reads = set(), set(), {}
        construct = getattr(cls, "construct", None)
        codes = [(getattr(construct, "__code__", None), getattr(construct, "__globals__", None))]
        while codes:
            code, space = codes.pop()
            if code is None or id(code) in done:
                continue
            done.add(id(code))
            names.update(code.co_names)
            codes += [(c, space) for c in code.co_consts if isinstance(c, types.CodeType)]
            for name in code.co_names:
                attr = getattr(cls, name, None)
                attr = attr.fget if isinstance(attr, property) else attr
                if isinstance(attr, types.FunctionType):
                    codes.append((attr.__code__, attr.__globals__))
                elif space is not None and name in space and not (space.get("__name__") or "").startswith(
                        ("mindspore", "numpy")):
                    value = space[name]
                    if isinstance(value, types.FunctionType):    # a module function the forward calls
                        codes.append((value.__code__, value.__globals__))
                    elif _plain(value):
                        global_reads.setdefault(id(space), (space, set()))[1].add(name)
        _READ_NAMES[cls] = names - HOST_STATE
        _GLOBAL_READS[cls] = list(global_reads.values())
    return _READ_NAMES[cls]


def _step_names(fn, names, seen):
    """The names the step's functions (and the methods of the objects they reach through) read."""
    seen.add(id(fn))
    names.update(fn.__code__.co_names)
    for _, value in _referenced(fn):
        if callable(value) and hasattr(value, "__code__") and id(value) not in seen:
            _step_names(value, names, seen)
        elif _holds_cells(value):
            for name in list(names):
                method = getattr(type(value), name, None)
                if callable(method) and hasattr(method, "__code__") and id(method) not in seen:
                    _step_names(method, names, seen)
    return names


def _closure_holders(fn, found, seen):
    """(name, object) of the program's plain objects (a Trainer's `self`) the step's functions reach."""
    seen.add(id(fn))
    for name, value in _referenced(fn):
        if callable(value) and hasattr(value, "__code__") and id(value) not in seen:
            _closure_holders(value, found, seen)
        elif _holds_cells(value) and all(value is not h for _, h in found):
            found.append((name, value))
    return found


class _GraphChoice:
    """A cell's graphs by constants (as create_time values), and how often the constants changed."""

    def __init__(self):
        self.times, self.last, self.calls, self.unjitted, self.chosen = {}, None, 0, False, False
        self.host = None


def _graph_choice(cell):
    choice = cell.__dict__.get("_ms_graph_choice")
    if choice is None:
        choice = _GraphChoice()
        object.__setattr__(cell, "_ms_graph_choice", choice)
    return choice


def _choose_graph(cell):
    """Point the cell's create_time at the graph for its current constants. Returns (run compiled, new set)."""
    choice = _graph_choice(cell)
    if choice.unjitted:
        return False, False
    constants = graph_constants_of(cell)
    time, new = choice.times.get(constants), False
    if time is None:
        if choice.times and (len(choice.times) >= _MAX_GRAPHS or len(choice.times) >= 2
                             and choice.calls < _RECOMPILE_MIN_CALLS):
            choice.unjitted = True
            _warn_changing_constants(cell, choice.last, constants)
            return False, False
        time = cell._create_time if not choice.times else max(choice.times.values()) + 1
        choice.times[constants], choice.calls, new = time, 0, True
    choice.last = constants
    if cell._create_time != time:
        object.__setattr__(cell, "_create_time", time)
    return True, new


def _warn_changing_constants(cell, before, now):
    import warnings
    old = dict(before or ())
    changed = [what for what, value in now if what in old and old[what] != value] or ["values it reads"]
    step = _step_of(cell)
    what = (f"{step.__name__} ({step.__code__.co_filename}:{step.__code__.co_firstlineno})" if step is not None
            else type(cell).__name__)
    warnings.warn(f"{what}: {', '.join(changed[:3])} changed between calls again and again; a compiled graph takes "
                  "them as constants, so it runs op by op (PYNATIVE) from now on")


# name -> (before compiling: a token; after compiling: (the Cell, or None where it failed; the token); on the
# Cell's return: (the Cell, its output) -> the output), what another section does around a Cell's graph
# (graph_objects.py: the records a graph builds as dicts, rebuilt from what the Cell returns)
GRAPH_CELL_HOOKS = {}


def _compile_for_constants(self, *args, **kwargs):
    """Cell.compile for the graph of the current constants."""
    choice = _graph_choice(self)
    if choice.chosen:        # compile_and_run chose already
        choice.chosen = False
    else:
        _choose_graph(self)
    started = {name: hooks[0]() for name, hooks in GRAPH_CELL_HOOKS.items()}
    try:
        compiled = nn.Cell._ms_original_compile(self, *args, **kwargs)
    except _COMPILE_ERRORS as exc:
        for name, hooks in GRAPH_CELL_HOOKS.items():
            hooks[1](None, started[name])
        raise_at_original_line(exc)
        raise
    for name, hooks in GRAPH_CELL_HOOKS.items():
        hooks[1](self, started[name])
    return compiled


def _code_names(code):
    names = set(code.co_names)
    for k in code.co_consts:
        names |= _code_names(k) if hasattr(k, "co_names") else set()
    return names


def _held_names(obj, names, depth=0):
    """The names read by the methods of obj's class that `names` calls, by the functions obj holds and, a level
    down, by the plain objects it holds (a selector's selection function)."""
    out = set()
    for klass in type(obj).__mro__ if depth < 3 else ():
        if not klass.__module__.startswith(("builtins", "mindspore")):
            out |= {n for a, f in vars(klass).items() if a in names and hasattr(f, "__code__")
                    for n in _code_names(f.__code__)}
    for attr, held in vars(obj).items() if depth < 3 and hasattr(obj, "__dict__") else ():
        if attr in names | out:
            out |= _code_names(held.__code__) if hasattr(held, "__code__") else \
                _held_names(held, names | out, depth + 1) if _holds_cells(held) else set()
    return out


def reads_on_host(cell):
    """A cell whose construct, or a method of a plain object it holds, reads a tensor on the host (asnumpy:
    siamese-triplet's OnlineContrastiveLoss, `self.pair_selector.get_pairs(...)` reading `.data.numpy()`; `.item()`:
    glow-pytorch's ActNorm, `if self.initialized.item() == 0: self.initialize(input)`, its data-dependent
    initialization, which a graph compiled as a switch over a uint8 scalar that MindSpore's CPU kernels refuse): a
    graph cannot read its own values mid-way; such a cell, and a train step reaching it, run op by op. So does one
    reading state its forward keeps across calls (graph_state: PixelCNN++'s `if self.init_padding is None:` set at
    the first call), which a graph would decide once, while compiling."""
    for _, sub in cell.cells_and_names():
        construct = getattr(type(sub), "construct", None)
        if hasattr(construct, "__code__") and not type(sub).__module__.startswith("mindspore"):
            names = _code_names(construct.__code__)
            if {"asnumpy", "host_value", "item", "tolist", "graph_state"} & (names | _held_names(sub, names)):
                return True
    return False


def _compile_and_run_for_constants(self, *args, **kwargs):
    """Cell.compile_and_run (a Cell called in GRAPH mode) running the graph of the current constants, or op by
    op once they keep changing, or where it reads tensors on the host (reads_on_host)."""
    choice = _graph_choice(self)
    if choice.host is None:
        choice.host = _step_of(self) is None and reads_on_host(self)
    if choice.host:
        return _unjitted(self.construct, args, kwargs)
    compiled, new = _choose_graph(self)
    if not compiled:
        step = _step_of(self)
        return _unjitted(step if step is not None else self.construct, args, kwargs)
    choice.calls += 1
    choice.chosen = True
    try:
        out = nn.Cell._ms_original_compile_and_run(self, *args, **kwargs)
    except _COMPILE_ERRORS as exc:
        if not _too_deep(exc):
            raise_at_original_line(exc)
            raise
        choice.host = True      # compiling ran nothing: op by op from now on, as torch runs it
        step = _step_of(self)
        return _unjitted(step if step is not None else self.construct, args, kwargs)
    finally:
        choice.chosen = False
    if new:     # what compiling set itself (MindSpore's bookkeeping on the cells) is no change of the program's
        after = graph_constants_of(self)
        choice.times.setdefault(after, self._create_time)
        choice.last = after
    for hooks in GRAPH_CELL_HOOKS.values():
        out = hooks[2](self, out)
    return out


def _too_deep(exc):
    """MindSpore's refusal of a graph deeper than its call depth limit: a Python loop it unrolls, each turn a few
    calls deep (Pointnet_Pointnet2's farthest point sampling: `for i in range(npoint)`, 512 turns of indexed writes,
    "Exceed function call depth limit 1000"). Such a cell, or step, runs op by op in GRAPH mode: a graph of it would
    be thousands of nodes compiled for minutes, where torch runs the loop as written."""
    import warnings
    deep = "Exceed function call depth" in str(exc)
    if deep:
        warnings.warn(f"{str(exc).splitlines()[0][:200]}: this runs op by op (PYNATIVE) in GRAPH mode")
    return deep


def raise_at_original_line(exc):
    """A MindSpore error compiling a graph as a MigrationError naming the original line of the innermost converted
    line in its trace (in analyze_fail.ir only for one raised in Python: a layer's argument check), its text kept."""
    import re, time
    # a refusal raised while compiling (a constexpr), handed back by MindSpore as a plain NameError/RuntimeError
    # whose text is pybind's "Type: message\n\nAt:\n  <helper file>(line): ...": raised again as itself, the class
    # of the helper that raised it (the Cell.compile hook running is the last converted tree's to install it)
    own = re.search(r"^(\w+): (.*?)\n\nAt:\n\s*(.+?)\(\d+\)", str(exc), re.M | re.S)
    cls = own and (getattr(_module_of_file(own.group(3)), own.group(1), None) or globals().get(own.group(1)))
    if not isinstance(exc, MigrationError) and isinstance(cls, type) \
            and any(b.__name__ == "MigrationError" for b in cls.__mro__):
        raise cls(own.group(2)) from exc
    text, ir = str(exc), os.path.join(ms.get_context("save_graphs_path") or ".", "rank_" + os.environ.get(
        "RANK_ID", "0"), "om", "analyze_fail.ir")
    try:
        if "In file " not in text and text and time.time() - os.path.getmtime(ir) < 30:
            with open(ir) as f:     # this error's dump (MindSpore wrote it just now)
                dump = f.read(1 << 20)
            text = dump.split("# IR entry", 1)[0] if text.splitlines()[0] in dump else text
    except OSError:
        pass
    found = [(original_line(p, n), p, n) for p, n in re.findall(r"In file (.+?):(\d+)", text)]
    found = [f for f in found if f[0]]
    if found and not isinstance(exc, MigrationError):
        raise MigrationError(f"{found[-1][0]} (converted: {found[-1][1]}:{found[-1][2]}): MindSpore cannot compile "
                             f"this in GRAPH mode: {type(exc).__name__}: {exc}") from exc


def _module_of_file(path):
    """The loaded module read from path (a helper named in a trace); None where none is."""
    import sys
    path = os.path.realpath(path)
    return next((m for m in list(sys.modules.values())
                 if os.path.realpath(getattr(m, "__file__", None) or "/") == path), None)


def original_line(path, line, _tables={}):     # _tables: each tree's file, read once
    """"file:line" of the original of a converted file's line: its innermost statement in the _ms_lines.json of
    its tree (written beside the tree's helper by msmigrate/line_map.py, found above the file: two converted trees
    in one process each have theirs); None where it names none."""
    import json
    path = os.path.realpath(path)
    here = os.path.dirname(path)
    while here not in _tables and not os.path.isfile(os.path.join(here, "_ms_lines.json")) \
            and os.path.dirname(here) != here:
        here = os.path.dirname(here)
    if here not in _tables:
        try:
            with open(os.path.join(here, "_ms_lines.json")) as f:
                _tables[here] = json.load(f)
        except (OSError, ValueError):
            _tables[here] = {}
    entry = _tables[here].get(os.path.relpath(path, here).replace(os.sep, "/"), {})
    spans = [s for s in entry.get("spans", ()) if s[0] <= int(line) <= s[1]]
    return f"{entry['source']}:{min(spans, key=lambda s: s[1] - s[0])[2]}" if spans else None


def calling_line(frame=None):
    """The original line of the innermost converted line running (a refusal on the host names it)."""
    import sys
    frame = frame or sys._getframe(1)
    while frame is not None and not original_line(frame.f_code.co_filename, frame.f_lineno):
        frame = frame.f_back
    return frame and original_line(frame.f_code.co_filename, frame.f_lineno)


def _step_of(cell):
    """The train step a compile_step StepCell runs (by name: two converted trees in one process each have one)."""
    return cell.__dict__.get("step") if type(cell).__name__ == "StepCell" else None


def install_graph_choice():
    """Cell.compile and Cell.compile_and_run choosing the graph of the current constants. MindSpore's own
    methods are kept on the class once: a second converted tree imported into the same process installs its
    own, which call MindSpore's."""
    if "_ms_original_compile" not in vars(nn.Cell):
        nn.Cell._ms_original_compile, nn.Cell._ms_original_compile_and_run = nn.Cell.compile, nn.Cell.compile_and_run
    nn.Cell.compile = _compile_for_constants
    nn.Cell.compile_and_run = _compile_and_run_for_constants


# on import: a program compiling its model directly (evaluation before training) is covered too
install_graph_choice()
