# The training step. A converted program differentiates a forward function with
# mindspore.value_and_grad and applies `optimizer(grads)`; these helpers are the
# pieces of torch's loop that have no one-line MindSpore counterpart.


def set_device(target):
    """mindspore.set_device(target), which MindSpore allows only before its runtime starts:
    a converted program imported after MindSpore already ran kernels (from a test, a
    notebook) keeps the device chosen then, with a warning when it differs.
    Called right after the program's mode line: in GRAPH mode it also stops PyNative's record that a module imported
    before that line started (record_autograd, whose backward() raises in GRAPH mode all the same); left on, MindSpore
    fails to differentiate a function calling a compiled Cell (measured: a cross-entropy's GatherD, 'Bprop
    "GatherDGradV2" encounter a problem: The pointer[value] is null')."""
    try:
        ms.set_device(target)
    except RuntimeError:
        current = ms.get_context("device_target")
        if current != target:
            import warnings
            warnings.warn(f"MindSpore already runs on {current}; {target} was not applied")
    if ms.get_context("mode") == ms.GRAPH_MODE:
        from mindspore.common.api import _pynative_executor
        if _pynative_executor.grad_flag():
            _pynative_executor.set_grad_flag(False)


import enum as _enum

_COMPILED_STEPS = {}
# what compile_step also runs on each step: init_process_group (the distributed section) adds its
# data-parallel safety net here, so a program that starts no process group is written without it
STEP_CHECKS = []
HOST_STEPPED = {}   # name -> test(step): it calls what updates on the host (user_optimizers: a program's optimizer)
# name -> wrap(step, compiled): what runs in place of a compiled step (unused_params: parameters the loss did not use)
COMPILED_STEP_WRAPPERS = {}


def compile_step(step, host_calls=False):
    """Compile a train step (as a StepCell graph) when the program runs in GRAPH mode
    (ms.set_context(mode=ms.GRAPH_MODE), the fast path); in PYNATIVE mode it runs op
    by op, so a debugger and print() see every value. host_calls: the step calls a helper
    of the program that draws on the host (NumPy noise in a gradient penalty); compiled,
    the draw would be made once, at compile time, so it runs op by op in either mode.

    A step defined inside a function that runs once per epoch is a new function each
    time, and mindspore.jit would compile it again (seconds per epoch). So compiled
    steps are kept per (code, what the step closes over): the same model, loss and
    optimizer objects reuse the compiled step; a different object or value compiles anew."""
    run, second_order = _step_runner(step, host_calls)
    if not second_order:
        return run
    held = _TWICE_DIFFERENTIATED_RUNS.get(id(run))
    if held is None or held[0] is not run:
        held = _TWICE_DIFFERENTIATED_RUNS[id(run)] = (run, _twice_differentiated(run))
    return held[1]


_TWICE_DIFFERENTIATED_RUNS = {}     # id(a step's runner) -> (it, its _twice_differentiated wrapper)
# what MindSpore 2.10 says where a kernel's gradient has no gradient of its own (naming no line of the program)
_NOT_TWICE_DIFFERENTIABLE = ("bprop not defined", "GatherDGradV2")


def _twice_differentiated(run):
    """A step taking a gradient of a gradient: while it runs (and compiles), the losses whose kernels MindSpore
    cannot differentiate twice compute by their formulas (TWICE_DIFFERENTIATED, compat_parts/losses.py); where
    another such kernel is reached, MigrationError names the program's line running the step."""
    def twice(*args, **kwargs):
        before = TWICE_DIFFERENTIATED[0]
        TWICE_DIFFERENTIATED[0] = True
        try:
            return run(*args, **kwargs)
        except RuntimeError as exc:
            if not any(s in str(exc) for s in _NOT_TWICE_DIFFERENTIABLE):
                raise
            _raise_migration_error(
                f"{calling_line() or 'the train step'}: the gradient of a gradient (torch.autograd.grad with "
                f"create_graph=True) reaches an operation MindSpore 2.10 cannot differentiate twice: "
                f"{str(exc).splitlines()[0][:200]}")
        finally:
            TWICE_DIFFERENTIATED[0] = before
    return twice


def _step_runner(step, host_calls):
    """(what runs the step, whether it takes a gradient of a gradient): see compile_step."""
    install_graph_choice()      # a graph follows the values it reads (graph_constants.py)
    cells = [cell for _, cell in _closure_cells(step, [], set())]
    switched_off = _inside_eval_cells(cells)
    for cell in cells:
        if id(cell) not in switched_off:
            train_mode_by_default(cell)
        if type(type(cell).__dict__.get("construct")).__name__ == "Unconverted":
            type(cell).construct()      # a hand-written optimizer's step(): MigrationError naming it
    distinct_parameter_names(step)
    for check in STEP_CHECKS:       # data parallel: average_gradients_in, see the distributed section
        check(step)
    pynative = ms.get_context("mode") != ms.GRAPH_MODE
    reached = _names_reached(step)
    # a gradient of a gradient op by op drops terms (see _GRAD_OF_GRAD_NAMES): such a step is compiled in PYNATIVE
    # mode too, unless it must run op by op (below), where a layer named here stops it (wrong_second_order)
    second_order = "<gradient of a gradient>" in reached
    second_order_wrong = second_order and _layer_wrong_op_by_op(cells)
    if pynative and not second_order:
        return step, False
    stepped = [why for why, reaches in HOST_STEPPED.items() if reaches(step)]
    if second_order_wrong and stepped == ["tensors held by plain objects"] and _object_tensors_keyed(step):
        # DRAGAN's critic step reading the trainer's `self.y_real_`: op by op it would stop (wrong_second_order);
        # compiled, the tensors' values choose its graph (graph_constants_of), so a new value compiles anew
        stepped = []
    if host_calls or "set_train" in reached or stepped:
        # op by op in either mode (a mode switch inside the step, `model.eval()` ... `model.train()` around an
        # attack, does not compile); a loss holding a gradient of a gradient through a convolution or a
        # normalization then stops (unused_params.wrong_second_order)
        return (step if pynative else _op_by_op(step)), second_order
    kept = []
    key = _closure_key(step, kept=kept)
    READ_BY_COMPILED_STEPS.update(_tensors_read(step, {}, set()))     # resize_ refuses to reshape them
    if key not in _COMPILED_STEPS:
        _COMPILED_STEPS[key] = (StepCell(step), kept)   # kept: the globals keyed by id stay alive
    compiled = _COMPILED_STEPS[key][0]
    for wrap in COMPILED_STEP_WRAPPERS.values():
        compiled = wrap(step, compiled)
    if pynative:
        return _members_op_by_op(step, _in_graph_mode(compiled)), second_order
    # the same object for the same compiled step (a train() run once per epoch gets the step it compiled before)
    held = _ENUM_SAFE_STEPS.get(id(compiled))
    if held is None or held[0] is not compiled:
        held = _ENUM_SAFE_STEPS[id(compiled)] = (compiled, _members_op_by_op(step, compiled))
    return held[1], second_order


_ENUM_SAFE_STEPS = {}   # id(compiled step) -> (it, its _members_op_by_op wrapper)


def _members_op_by_op(step, compiled):
    """The compiled step, except for a call with an Enum member among its arguments (pytorch-GAT's
    `main_loop(phase=LoopPhase.TRAIN)`, whose step takes `phase`): MindSpore cannot type one in a graph
    (NotImplementedError naming no line where the gradient's zeros_like meets it, even as a constant), so that call
    runs op by op, as a step calling a host helper does."""
    def run(*args, **kwargs):
        if any(isinstance(a, _enum.Enum) for a in (*args, *kwargs.values())):
            return _op_by_op(step)(*args, **kwargs)
        return compiled(*args, **kwargs)
    return run


# The gradient of a gradient (WGAN-GP's penalty differentiated by the critic's step) op by op, MindSpore 2.10 on CPU:
# through a convolution, the weights of the Dense layers after it get zero gradients; through a BatchNorm in training
# mode, the second such computation on the same values comes out wrong; through a LayerNorm, MindSpore raises
# ("For LayerNormGrad, the index 7 is out of range"); through a reshape, a transpose or a reduction without keepdims
# the terms passing through their gradients are dropped. Compiled, all are torch's (tests/test_stop48_programs.py):
# such a step is compiled in PYNATIVE mode too; where it must run op by op, a loss that holds such a gradient stops
# (unused_params.wrong_second_order).
_GRAD_OF_GRAD_NAMES = {"GradOperation", "vjp", "jvp", "jacfwd", "jacrev"}     # and mindspore.grad (not a .grad)
_WRONG_OP_BY_OP = ("Conv", "BatchNorm", "LayerNorm")


def second_order_wrong_op_by_op(step):
    """The layer class a step taking the gradient of a gradient reaches whose gradients MindSpore computes wrongly
    op by op ("reshape" where it reaches none of them); None where the step takes no gradient inside."""
    if "<gradient of a gradient>" not in _names_reached(step):
        return None
    # a layer named where one is reached; any other step taking a gradient of a gradient meets reshapes,
    # transposes or reductions, whose terms op by op are dropped too (a first call op by op: its weights wrong)
    return _layer_wrong_op_by_op([cell for _, cell in _closure_cells(step, [], set())]) or "reshape"


def _layer_wrong_op_by_op(cells):
    for cell in cells:
        for _, sub in cell.cells_and_names():
            for k in type(sub).__mro__:
                if any(k.__name__.startswith(w) for w in _WRONG_OP_BY_OP):
                    return k.__name__
    return None


def _names_reached(step, program_only=False):
    """The global and attribute names the functions a step calls read (their nested functions' too; not the
    step's own, nor MindSpore's; program_only: nor this helper's, followed), and "<gradient of a gradient>" where
    one of them takes a gradient (calls mindspore.grad, not a tensor's .grad, or reads GradOperation, vjp...)."""
    names, seen, todo = set(), set(), [step]
    while todo:
        fn = todo.pop()
        if id(fn) in seen or not hasattr(fn, "__code__"):
            continue
        seen.add(id(fn))
        if fn is not step and (getattr(fn, "__module__", None) or "").startswith("mindspore"):
            continue
        codes = [fn.__code__]
        while codes:
            code = codes.pop()
            if fn is not step and not (program_only and getattr(fn, "__globals__", None) is globals()):
                names.update(code.co_names)
                if _GRAD_OF_GRAD_NAMES & set(code.co_names) or _calls_mindspore_grad(code, fn):
                    names.add("<gradient of a gradient>")
            codes.extend(c for c in code.co_consts if hasattr(c, "co_names"))
        todo.extend(v for _, v in _referenced(fn) if callable(v))
        todo.extend(getattr(fn, a) for a in ("recording", "__wrapped__") if callable(getattr(fn, a, None)))
    return names


def _calls_mindspore_grad(code, fn):
    """`ms.grad` in the code: the attribute grad of a global holding the mindspore module; in the program's own
    code `ms.value_and_grad` too (higher_order_grad.py's form of a create_graph gradient whose value is read; this
    helper's own value_and_grad is the step's outer gradient)."""
    import dis
    wanted = {"grad"} | ({"value_and_grad"} if getattr(fn, "__globals__", None) is not globals() else set())
    if not wanted & set(code.co_names):
        return False
    before = None
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and ins.argval in wanted and before is not None \
                and before.opname == "LOAD_GLOBAL" and getattr(fn, "__globals__", {}).get(before.argval) is ms:
            return True
        before = ins
    return False


def _in_mode(step, mode, restored):
    """The step run in `mode`, the program's own mode restored after it: GRAPH for a step compiled in a PYNATIVE
    program (_in_graph_mode), PYNATIVE for a step run op by op in a GRAPH program (_op_by_op)."""
    def run(*args, **kwargs):
        ms.set_context(mode=mode)
        try:
            return step(*args, **kwargs)
        finally:
            ms.set_context(mode=restored)
    return run


def _in_graph_mode(compiled):
    return _in_mode(compiled, ms.GRAPH_MODE, ms.PYNATIVE_MODE)


def _op_by_op(step):
    return _in_mode(step, ms.PYNATIVE_MODE, ms.GRAPH_MODE)


def value_and_grad_host_aux(forward, weights, zeroed=False):
    """ms.value_and_grad(forward, None, weights, has_aux=True) for a step run op by op, whose extra outputs may
    be host values (a NumPy array a network made with .numpy(), a list): MindSpore's has_aux takes tensors
    only, so the others are kept aside while the gradients are taken and returned in their places."""
    kept = []

    def tensors_only(*args):
        loss, *aux = forward(*args)
        kept[:] = aux
        return (loss, *[a if isinstance(a, ms.Tensor) else ms.Tensor(0) for a in aux])

    def run(*args):
        (loss, *aux), grads = value_and_grad_reached(tensors_only, weights, has_aux=True, zeroed=zeroed)(*args)
        return (loss, *[a if isinstance(k, ms.Tensor) else k for a, k in zip(aux, kept)]), grads
    return run


class StepCell(nn.Cell):
    """A train step compiled as a Cell's graph. In GRAPH mode MindSpore 2.10 runs a Cell
    graph faster than the same function under mindspore.jit (ResNet-18 train step on CPU,
    measured side by side: 1.24x torch's step time against 2.04x), so the step is wrapped.
    Which of its graphs runs follows the plain values it reads (graph_constants.py)."""

    def __init__(self, step):
        super().__init__(auto_prefix=False)
        self.step = step

    def construct(self, *args):
        return self.step(*args)

    def __call__(self, *args, **kwargs):
        # a NumPy array the loop drew (labels, noise) cannot enter a graph; as torch's step would
        # turn it into a tensor (LongTensor(a)), it enters as a Tensor of its own dtype
        # (inside a list too: nlp-tutorial's random_batch() gives a list of NumPy rows for torch.Tensor(rows))
        args = tuple(_graph_argument(a) for a in args)
        entered = [dict(g.__dict__) if type(g) in _GRAPH_RECORDS.values() else None for g in args]
        out = super().__call__(*args, **kwargs)
        _record_writes_refused(args, entered)
        return out


def _unjitted(step, args, kwargs=None):
    """The step run op by op, MindSpore's @jit methods (SGD's) too (a graph calling a @jit method that ran as a
    jit function op by op no longer compiles), its outputs detached as a graph's: the autograd history of a
    GAN's `fake` would take the next step's gradients into the generator twice."""
    before = os.environ.get("MS_JIT")
    os.environ["MS_JIT"] = "0"
    try:
        return _detached(_op_by_op(step)(*args, **(kwargs or {})))
    finally:
        os.environ.pop("MS_JIT") if before is None else os.environ.update(MS_JIT=before)


def _detached(value):
    if isinstance(value, (tuple, list)):
        return type(value)(_detached(v) for v in value)
    return ops.stop_gradient(value) if isinstance(value, ms.Tensor) else value


def _graph_argument(value):
    """A NumPy array as a Tensor of its own dtype, in lists and tuples too (a graph refuses arrays). A tuple of tensors
    (`step(batch)`) enters as mutable: a plain one is a graph constant, compiled again for every batch (10 s a step,
    measured). Not a list: host rows for `Tensor(rows)` in the step (nlp-tutorial's random_batch)."""
    if isinstance(value, tuple) and value and all(isinstance(v, ms.Tensor) for v in value):
        return ms.mutable(value)
    record = _graph_record(value)
    if record is not None:
        return record
    if isinstance(value, np.ndarray):
        return ms.Tensor(value)
    if isinstance(value, (list, tuple)) and any(isinstance(v, (np.ndarray, list, tuple)) for v in value):
        return type(value)(_graph_argument(v) for v in value)
    return value


_GRAPH_RECORDS = {}


def _graph_record(value):
    """An object of the program's own class whose attributes are tensors (one at least), arrays, numbers, strings
    or None (torchtext's Batch: .src, .trg), which a graph refuses as an argument: an instance of a jit_class of the
    same attributes (its methods absent: a step calling one stops compiling; a step writing one is refused:
    _record_writes_refused). None for any other value."""
    cls, fields = type(value), getattr(value, "__dict__", None)
    if (not fields or cls.__module__ in ("builtins", "numpy") or getattr(cls, "__ms_class__", False)
            or isinstance(value, (ms.Tensor, nn.Cell, type, type(ms))) or callable(value)
            or not any(isinstance(v, (ms.Tensor, np.ndarray)) for v in fields.values())
            or not all(isinstance(v, (ms.Tensor, np.ndarray, int, float, str, type(None))) for v in fields.values())):
        return None
    if cls not in _GRAPH_RECORDS:
        _GRAPH_RECORDS[cls] = ms.jit_class(type(cls.__name__, (), {"__module__": cls.__module__}))
    out = _GRAPH_RECORDS[cls].__new__(_GRAPH_RECORDS[cls])
    out.__dict__.update({k: ms.Tensor(v) if isinstance(v, np.ndarray) else v for k, v in fields.items()})
    return out


def _record_writes_refused(args, entered):
    """A compiled step that wrote an attribute of a program's object entered as a _graph_record: the graph reads
    the old value after such a write (MindSpore 2.10) and the program's object would miss it; refused, naming the
    line of the step's call (a write of an attribute the object lacks already stops the compile)."""
    for g, before in zip(args, entered):
        written = [k for k, v in (before or {}).items() if g.__dict__.get(k) is not v]
        if written:
            where = calling_line()
            raise MigrationError((f"{where}: " if where else "") + f"the compiled train step writes "
                                 f"{type(g).__name__}.{written[0]} of an object it takes; a MindSpore graph reads "
                                 "the value from before the write: assign it to a local name in the step instead")


def _closure_key(fn, seen=None, kept=None):
    """What a step's graph depends on besides its arguments: the code of the step and of
    the functions it closes over, and the objects (model, loss, optimizer) and plain values
    they close over or read as module globals. MindSpore's own wrappers (value_and_grad's, jit's) add
    bookkeeping (hash ids, configs, fresh grad operations) that changes on every call: skipped."""
    seen, kept = set() if seen is None else seen, [] if kept is None else kept
    seen.add(id(fn))
    internal = (getattr(fn, "__module__", None) or "").startswith("mindspore")
    # the module too: a step at a script's top level reads its model and optimizer as globals, and two
    # scripts run in one process can hold steps of equal code (equal line numbers included), each its own
    parts = [fn.__code__, id(getattr(fn, "__globals__", None))]
    for cell in fn.__closure__ or ():
        try:
            value = cell.cell_contents
        except ValueError:          # not bound yet
            value = None
        if callable(value) and hasattr(value, "__code__"):
            if id(value) not in seen:
                parts.append(_closure_key(value, seen, kept))
        elif internal and (isinstance(value, (int, float, str, bool, type(None)))
                           or (type(value).__module__.startswith("mindspore")
                               and not isinstance(value, (nn.Cell, ms.ParameterTuple)))):
            continue
        elif isinstance(value, (int, float, str, bool, type(None))):
            parts.append((type(value).__name__, value))
        else:
            parts.append(id(value))   # kept alive by the cached step, so the id stays unique
    # a top-level step defined once per model in a loop reads model, optimizer, grad_fn as globals
    module_globals = {} if internal else getattr(fn, "__globals__", None) or {}
    for name in (n for n in fn.__code__.co_names if n in module_globals):
        value = module_globals[name]
        if isinstance(value, (int, float, str, bool, type(None))):
            parts.append((name, type(value).__name__, value))
        elif callable(value) and hasattr(value, "__code__"):
            parts.append(_closure_key(value, seen, kept) if id(value) not in seen else name)
        elif not isinstance(value, (type, type(ms), ms.Tensor, np.ndarray, list, tuple, dict, set)):
            kept.append(value)      # a Cell, an optimizer: by id, kept alive with the compiled step
            parts.append((name, id(value)))
    return tuple(parts)


def _referenced(fn):
    """(name, value) of what a function closes over and of the module globals it reads: a
    train step written at a script's top level reads the model and optimizer as globals."""
    out = []
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            out.append((name, cell.cell_contents))
        except ValueError:      # not bound yet
            continue
    if not (getattr(fn, "__module__", None) or "").startswith("mindspore"):
        module_globals = getattr(fn, "__globals__", {})
        out += [(name, module_globals[name]) for name in fn.__code__.co_names if name in module_globals]
    return out


def _tensors_read(fn, found, seen):
    """id -> tensor (not a Parameter) for those a step and the functions it calls read as globals or close over."""
    seen.add(id(fn))
    for _, value in _referenced(fn):
        if isinstance(value, ms.Tensor) and not isinstance(value, ms.Parameter):
            found[id(value)] = value
        elif callable(value) and hasattr(value, "__code__") and id(value) not in seen:
            _tensors_read(value, found, seen)
    return found


def _closure_cells(fn, found, seen):
    seen.add(id(fn))
    for name, value in _referenced(fn):
        if isinstance(value, nn.Cell) and all(value is not c for _, c in found):
            found.append((name, value))
        elif callable(value) and hasattr(value, "__code__") and id(value) not in seen:
            _closure_cells(value, found, seen)
        elif isinstance(value, (dict, list, tuple)):
            # networks handed over in a container (nerf-pytorch's render_kwargs: network_fn, network_fine)
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, held in items:
                if isinstance(held, nn.Cell) and all(held is not c for _, c in found):
                    found.append((f"{name}.{key}", held))
        elif _holds_cells(value):
            # a trainer object (`self` of a Trainer class) holding its networks as attributes: the
            # step reaches self.model through it, directly or in a method it calls (self.compute_loss)
            used = set(fn.__code__.co_names)
            for attr in list(used):
                method = getattr(type(value), attr, None)
                if callable(method) and hasattr(method, "__code__"):
                    used |= set(method.__code__.co_names)
            for attr, held in vars(value).items():
                if attr in used and isinstance(held, nn.Cell) and all(held is not c for _, c in found):
                    found.append((f"{name}.{attr}", held))
    return found


def _holds_cells(value):
    """A plain Python object of the program (not a class, module, function or library object)."""
    import types
    if isinstance(value, (type, types.ModuleType, types.FunctionType, types.MethodType, nn.Cell)):
        return False
    module = type(value).__module__ or ""
    return hasattr(value, "__dict__") and not module.startswith(("mindspore", "builtins", "numpy"))


def _object_tensors(fn, seen=None):
    """The tensors plain objects of the program hold as attributes that a step's functions read."""
    seen = set() if seen is None else seen
    seen.add(id(fn))
    found = []
    for _, value in _referenced(fn):
        if callable(value) and hasattr(value, "__code__") and not isinstance(value, nn.Cell):
            if id(value) not in seen:
                found += _object_tensors(value, seen)
        elif _holds_cells(value):
            used = set(fn.__code__.co_names)
            found += [held for attr, held in vars(value).items() if attr in used and isinstance(held, ms.Tensor)]
    return found


def _object_tensors_keyed(step):
    return all(keyed_tensor(t) for t in _object_tensors(step))


def _reaches_object_tensor(fn, seen=None):
    """A step reading a tensor that a plain object of the program holds as an attribute (SAC's agent: its entropy
    temperature `self.log_alpha`, a Parameter trained by an Adam of its own, and `self.alpha =
    self.log_alpha.exp()`, rebound after every update and read by the policy's step): a compiled graph takes such
    an attribute as the value it had when it was compiled (graph_constants follows plain numbers, not tensors:
    `self.alpha` stayed at its first tensor, the temperature's gradient was zero after the first call), so the
    step runs op by op in GRAPH mode too."""
    return bool(_object_tensors(fn, seen))


HOST_STEPPED["tensors held by plain objects"] = _reaches_object_tensor


def _reaches_host_reads_in_cells(step):
    """A step reaching a cell that reads tensors on the host (graph_constants.reads_on_host) runs op by op in GRAPH
    mode too, as torch's does."""
    return any(reads_on_host(cell) for _, cell in _closure_cells(step, [], set()))


HOST_STEPPED["tensors read on the host in a cell"] = _reaches_host_reads_in_cells


def _reaches_host_reads_in_functions(step):
    """A step calling a function of the program that reads a tensor's value on the host (`.item()`, `.tolist()`,
    `.asnumpy()`: Prototypical-Networks' prototypical_loss counts its queries by `.sum().item()` and builds Python
    lists as long as the batch's classes): a compiled graph cannot read its own values mid-way (it did not compile,
    or would keep the values of its first batch), so the step runs op by op in GRAPH mode too, as torch's does."""
    return bool({"item", "tolist", "asnumpy", "host_value"} & _names_reached(step, program_only=True))


HOST_STEPPED["tensors read on the host in a function"] = _reaches_host_reads_in_functions


def _inside_eval_cells(cells):
    """ids of the cells inside a cell the program switched to eval (`teacher.eval()`: set_train(False), MindSpore's
    phase 'predict'). MindSpore sets the training flag of every sub-cell but the phase of that cell alone, so a
    step that also reaches a sub-cell (`head = teacher.head`, called in the step) would find its phase still the
    initial 'train' and take it for a cell never switched (train_mode_by_default): trained, silently."""
    inside = set()
    for top in cells:
        for _, c in top.cells_and_names():
            if getattr(c, "_phase", None) == "predict":
                inside.update(id(s) for _, s in c.cells_and_names() if s is not c)
    return inside


def train_mode_by_default(cell):
    """A torch module starts in training mode, a MindSpore cell in eval mode. A network that
    the program never switched either way (set_train() never called: MindSpore's phase is
    still the initial 'train') trains, as it did in torch; sub-cells the program switched
    to eval (a frozen BatchNorm) stay so. A container whose own flag is set (`.add_flags(training=True)`, a new
    torch container) may still hold cells never switched."""
    if getattr(cell, "_phase", None) != "train":
        return
    cells = [c for _, c in cell.cells_and_names()]
    if not all(c.training for c in cells):
        frozen = [c for c in cells if getattr(c, "_phase", None) == "predict"]
        cell.set_train(True)
        for c in frozen:
            c.set_train(False)


def distinct_parameter_names(step):
    """One compiled graph cannot hold two Parameters of the same name. A GAN's generator
    and discriminator often both name theirs `main.0.weight` (MindSpore names parameters
    by their path inside their own network): the later network's parameters get its
    variable name as a prefix (`netD.main.0.weight`), which its checkpoints then carry.
    Parameters shared with an earlier cell (an optimizer holds its model's) are the same
    objects, not a clash."""
    names, seen = set(), set()
    for var, cell in _closure_cells(step, [], set()):
        params = list(cell.get_parameters())
        fresh = [p for p in params if id(p) not in seen]
        if any(p.name in names for p in fresh):
            for p in fresh:
                if not p.name.startswith(var + "."):     # a second step over the same networks
                    p.name = f"{var}.{p.name}"
        seen |= {id(p) for p in params}
        names |= {p.name for p in params}


def accumulate_grads(total, grads):
    """Gradient accumulation: the running sum of the gradients of several batches
    (None: nothing summed yet, as after optimizer.zero_grad())."""
    if total is None:
        return grads
    # None: a parameter no backward() reached yet (op by op, value_and_grad_reached), as torch's .grad
    return tuple(g if t is None else t if g is None else t + g for t, g in zip(total, grads))


def clip_grad_norm(grads, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """torch.nn.utils.clip_grad_norm_ on a tuple of gradients: scale them all by
    max_norm / (total_norm + 1e-6) when that is below 1. Returns (grads, total_norm)."""
    norm_type = float(norm_type)
    present = [g for g in grads if g is not None]   # None: a parameter the loss did not use, skipped as in torch
    if norm_type == float("inf"):
        total = ops.stack([ops.abs(g).max() for g in present]).max()
    else:
        total = ops.stack([ops.pow(ops.abs(g), norm_type).sum() for g in present]).sum() ** (1.0 / norm_type)
    coef = ops.clamp(max_norm / (total + 1e-6), max=1.0)
    return tuple(None if g is None else g * coef.astype(g.dtype) for g in grads), total


def clip_grad_value(grads, clip_value, foreach=None):
    """torch.nn.utils.clip_grad_value_ on a tuple of gradients."""
    return tuple(None if g is None else ops.clamp(g, -clip_value, clip_value) for g in grads)


@_migration_constexpr(check=False)
def _raise_at_calling_line(message):
    """_raise_migration_error, the message led by the original line of the converted code running (calling_line:
    the clipping statement on the host; the call of the compiled step where a graph compiles it)."""
    where = calling_line()
    raise MigrationError(f"{where}: {message}" if where else message)


def _held_gradients_of(parameters):
    """On the host, between a converted step and the step() of a wrapper's own method (hold_gradients: a trainer's
    `def optimizer_step(self): clip_grad_norm_(self.model.parameters(), c); self.opt.step()`): (the optimizer's
    key, its held gradients, the positions of `parameters` among them), torch's .grad of those parameters; None
    where no held gradients cover them all. Looked up by name: a tree holding no gradients has neither table."""
    held, owners = globals().get("_HELD_GRADIENTS"), globals().get("_HELD_PARAMETERS")
    if not held or not owners:
        return None
    wanted = [p for p in (parameters if isinstance(parameters, (list, tuple)) else list(parameters))
              if isinstance(p, ms.Parameter)]
    for key, params in owners.items():
        grads = held.get(key)
        where = {id(p): i for i, p in enumerate(params)}
        if grads is not None and wanted and all(id(p) in where for p in wanted):
            return key, grads, [where[id(p)] for p in wanted]
    return None


def _filled_gradients_of(parameters):
    """On the host, where a backward() handed the loss filled the .grad of every one of `parameters`
    (recorded_backward.py's backward_to_grads, _filled_reader): ((the Parameters with a gradient, their
    gradients), `parameters` as a list); (None, `parameters`) otherwise (read into a list, a generator once read)."""
    filled = _filled_reader("filled_gradient")
    if filled is None or _compiling(_draw_probe):
        return None, parameters
    parameters = [parameters] if isinstance(parameters, ms.Tensor) else list(parameters)
    wanted = [p for p in parameters if isinstance(p, ms.Parameter)]
    answers = [filled(p) for p in wanted]
    if not wanted or not all(handled for handled, _ in answers):
        return None, parameters
    kept = [(p, g) for p, (_, g) in zip(wanted, answers) if g is not None]
    return ([p for p, _ in kept], [g for _, g in kept]), parameters


# reached in a compiled train step too: the MigrationError goes through a constexpr (_raise_at_calling_line); on
# the host, gradients held for a wrapper's step() are clipped where they are held
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    filled, parameters = _filled_gradients_of(parameters)
    if filled is not None:      # the .grad a backward() handed the loss filled (backward_to_grads), clipped in place
        params, grads = filled
        if not grads:
            return ms.Tensor(0.0, ms.float32)
        clipped, total = clip_grad_norm(grads, max_norm, norm_type)
        if error_if_nonfinite and not bool(ops.isfinite(total)):
            raise RuntimeError(f"The total norm of order {float(norm_type)} for gradients from `parameters` is "
                               "non-finite, so it cannot be clipped.")
        for p, g in zip(params, clipped):
            _filled_reader("set_filled_gradient")(p, g)
        return total
    found = _held_gradients_of(parameters)
    if found is None:
        _raise_at_calling_line(
            "clip_grad_norm_ clips the .grad of parameters, which MindSpore does not keep: clip the gradients "
            "returned by value_and_grad with _ms_compat.clip_grad_norm(grads, max_norm) inside the train step")
    key, grads, picked = found
    clipped, total = clip_grad_norm([grads[i] for i in picked], max_norm, norm_type)
    if error_if_nonfinite and not bool(ops.isfinite(total)):
        raise RuntimeError(f"The total norm of order {float(norm_type)} for gradients from `parameters` is "
                           "non-finite, so it cannot be clipped.")
    _set_held(key, grads, picked, clipped)
    return total


def clip_grad_value_(parameters, clip_value, foreach=None):
    filled, parameters = _filled_gradients_of(parameters)
    if filled is not None:      # the .grad a backward() handed the loss filled (backward_to_grads), clipped in place
        for p, g in zip(filled[0], clip_grad_value(filled[1], clip_value)):
            _filled_reader("set_filled_gradient")(p, g)
        return None
    found = _held_gradients_of(parameters)
    if found is None:
        _raise_at_calling_line(
            "clip_grad_value_ clips the .grad of parameters, which MindSpore does not keep: clip the gradients "
            "returned by value_and_grad with _ms_compat.clip_grad_value(grads, clip_value) inside the train step")
    key, grads, picked = found
    _set_held(key, grads, picked, clip_grad_value([grads[i] for i in picked], clip_value))


def _set_held(key, grads, picked, new):
    out = list(grads)
    for i, g in zip(picked, new):
        out[i] = g
    globals()["_HELD_GRADIENTS"][key] = tuple(out)
