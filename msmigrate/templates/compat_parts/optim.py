"""Optimizers and learning-rate schedules with torch.optim's behaviour.

The optimizers are mindspore.experimental.optim classes (torch-style param_groups, one learning-rate
Parameter per group, `optimizer(grads)` does the update), with what converted torch code relies on:

* `model.parameters()` may be passed: Parameters that do not train (BatchNorm's moving statistics,
  frozen weights) are left out, as torch's optimizers skip parameters that get no gradient;
* `group['lr'] = value` (a hand-written schedule) writes into the group's Parameter. A step compiled
  with mindspore.jit reads that Parameter; a plain float put in its place would stay baked into the
  compiled graph and the change would be silently ignored;
* Adam and AdamW compute what torch computes (MindSpore's experimental Adam adds eps before the bias
  correction and ignores amsgrad).

The schedules compute the learning rate in Python floats with torch's own formulas and write it into
those Parameters between steps: nothing recompiles, get_last_lr() returns floats as in torch, and a
custom scheduler subclassing LRScheduler (get_lr() from self.last_epoch and self.base_lrs) works.
"""
import bisect
import types
import weakref
from collections import Counter

from mindspore.experimental import optim as _ms_optim


# ------------------------------------------------------------------ param groups
def _hyper(group, key):
    """A param group's hyper-parameter (lr, momentum...) as a Python number."""
    value = dict.__getitem__(group, key)
    if isinstance(value, ms.Tensor):
        current = float(value.asnumpy())
        exact = getattr(group, "exact", {}).get(key)
        # the float64 value last written, while the float32 Parameter still holds it
        if exact is not None and np.float32(exact) == np.float32(current):
            return exact
        return current
    return value


def _assign_number(param, value):
    # ops.assign writes into the Parameter's memory, which a compiled step reads; set_data and
    # assign_value swap that memory for new one and the compiled step keeps reading the old value
    ops.assign(param, ms.Tensor(float(value), param.dtype))


def _set_hyper(group, key, value):
    """Set a param group's hyper-parameter. When the group keeps it in a Parameter (the learning
    rate; momentum or beta1 while a OneCycleLR/CyclicLR cycles it) the value goes into that
    Parameter, which a compiled step reads at run time."""
    current = dict.get(group, key)
    if isinstance(current, ms.Parameter) and not isinstance(value, ms.Parameter):
        _assign_number(current, value)
        if isinstance(group, ParamGroup):
            group.exact[key] = float(value)
    elif (isinstance(current, tuple) and isinstance(value, (tuple, list)) and len(value) == len(current)
          and any(isinstance(c, ms.Parameter) for c in current)):
        for c, v in zip(current, value):  # betas with a cycled beta1
            if isinstance(c, ms.Parameter):
                _assign_number(c, v)
        dict.__setitem__(group, key, tuple(c if isinstance(c, ms.Parameter) else v for c, v in zip(current, value)))
    else:
        dict.__setitem__(group, key, value)


class ParamGroup(dict):
    """One entry of optimizer.param_groups, read and written as in torch: group['lr'] is a Python
    float (f"{group['lr']:.2e}" works), and `group['lr'] = x` updates the learning-rate Parameter
    instead of replacing it (see the top of this section). The optimizer itself reaches the
    Parameter through dict.get / self.lrs."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.exact = {}

    def __getitem__(self, key):
        value = dict.__getitem__(self, key)
        return _hyper(self, key) if isinstance(value, ms.Parameter) else value

    def __setitem__(self, key, value):
        _set_hyper(self, key, value)

    def update(self, *args, **kwargs):
        # `group.update(lr=x)`: dict.update would replace the learning-rate Parameter the optimizer reads
        for key, value in dict(*args, **kwargs).items():
            _set_hyper(self, key, value)


def optimizer_params(params):
    """torch's `params` argument as MindSpore's optimizers take it: a list of Parameters that train,
    or a list of group dicts. model.parameters() became Cell.get_parameters(), which also yields
    BatchNorm's moving statistics (requires_grad=False): torch's optimizer never sees those."""
    params = list(params)
    if any(isinstance(p, dict) for p in params):
        return [dict(group, params=_trainable(group["params"])) for group in params]
    return _trainable(params)


def _trainable(params):
    if isinstance(params, ms.Parameter):
        params = [params]
    out = []
    for p in params:
        if isinstance(p, tuple):  # named_parameters(): (name, parameter)
            p = p[1]
        if isinstance(p, ms.Tensor) and not isinstance(p, ms.Parameter):   # torch.tensor(..., requires_grad=True)
            raise MigrationError(f"{calling_line()}: the optimizer is given a {type(p).__name__} that is no "
                                 "Parameter (a tensor made with requires_grad=True): MindSpore's optimizers update "
                                 "Parameters; write it as ms.Parameter(<tensor>, name='...')")
        if p.requires_grad:
            if any(q is p for q in out):
                # itertools.chain(enc_a.parameters(), enc_b.parameters()) of networks sharing a layer
                raise MigrationError(f"{calling_line()}: the optimizer is given the Parameter {p.name} more than "
                                     "once (networks sharing a layer, chained): torch (with a warning) updates it once "
                                     "per occurrence in each step, its state advanced each time, while MindSpore's "
                                     "optimizers update a Parameter once; give each Parameter once, or write the "
                                     "repeated update by hand")
            out.append(p)
    return out


def _distinct_names(params):
    """MindSpore's optimizers refuse two Parameters of one name, which torch's take: two networks
    joined with itertools.chain(enc.parameters(), dec.parameters()) both name theirs `0.weight`.
    The later ones get a numbered name while the optimizer is built (its state is named after
    it); returns (parameter, original name) to give the names back afterwards."""
    flat = [p for group in params for p in group["params"]] if params and isinstance(params[0], dict) else params
    names, seen, renamed = set(), set(), []
    for p in flat:
        if id(p) in seen:
            continue
        seen.add(id(p))
        if p.name in names:
            k = 1
            while f"{p.name}_{k}" in names:
                k += 1
            renamed.append((p, p.name))
            p.name = f"{p.name}_{k}"
        names.add(p.name)
    return renamed


_OPTIMIZERS_BUILDING = set()   # ids of optimizers whose constructor chain is running


def _building_with_distinct_names(init):
    """Wraps an optimizer class's __init__: the outermost call gives duplicate parameter names
    numbered ones until the whole constructor chain (state clones included) has run, then gives
    the networks their own names back (their checkpoints carry them)."""
    def build(self, params, *args, **kwargs):
        if id(self) in _OPTIMIZERS_BUILDING:
            return init(self, params, *args, **kwargs)
        params = optimizer_params(params)
        renamed = _distinct_names(params)
        _OPTIMIZERS_BUILDING.add(id(self))
        try:
            init(self, params, *args, **kwargs)
        finally:
            _OPTIMIZERS_BUILDING.discard(id(self))
            for param, name in renamed:
                param.name = name
    build.__name__, build.__qualname__, build.__doc__ = init.__name__, init.__qualname__, init.__doc__
    return build


def _zero_state(params, prefix):
    """params.clone(prefix=prefix, init="zeros"), an empty parameter too (vit-pytorch's ViT with pool='mean' holds
    a cls_token of 0 rows), whose clone MindSpore's initializer refuses (shape must be positive)."""
    new = []
    for p in params:
        x = p.clone(ms.Tensor(np.zeros(p.shape, ms.dtype_to_nptype(p.dtype))) if 0 in p.shape else "zeros")
        x.name = prefix + "." + x.name
        new.append(x)
    return ms.ParameterTuple(new)


_CALL_DEPTH = [1000]   # mindspore.set_recursion_limit's default: a compiled step nests ~2 calls per parameter


def _allow_call_depth(n_parameters):   # (a model of ~500 parameter tensors passed it; raised, never lowered)
    if 200 + 4 * n_parameters > _CALL_DEPTH[0]:
        _CALL_DEPTH[0] = 200 + 4 * n_parameters
        ms.set_recursion_limit(_CALL_DEPTH[0])


# an optimizer's state under torch's names (state_dict() and `optimizer.state[p]`)
_OPTIMIZER_TORCH_NAMES = {"SGD": {"accum": "momentum_buffer"}}
_STEP_NAMES = ("state_step", "step_t")


def _optimizer_slots(opt):
    """{state name: ParameterTuple with one entry per optimized parameter}, step Parameter."""
    renames = next((_OPTIMIZER_TORCH_NAMES[c.__name__] for c in type(opt).__mro__
                    if c.__name__ in _OPTIMIZER_TORCH_NAMES), {})
    count = len(opt.parameters)
    slots = {renames.get(k, k): v for k, v in vars(opt).items()
             if isinstance(v, ms.ParameterTuple) and k != "parameters" and len(v) == count}
    step = next((getattr(opt, n) for n in _STEP_NAMES if isinstance(getattr(opt, n, None), ms.Parameter)), None)
    return slots, step


class _TorchOptimizerState(dict):
    """torch's `optimizer.state[p]`: a parameter's state under torch's names (ASGD's 'ax', Adam's 'exp_avg'...),
    the optimizer's own Parameters (awd-lstm-lm evaluates `optimizer.state[prm]['ax'].clone()`, the averaged
    weights); entries a program stores itself are kept beside them."""

    def __init__(self, opt):
        super().__init__()
        self.opt = opt

    def __missing__(self, param):
        entry = {}
        index = next((i for i, p in enumerate(self.opt.parameters) if p is param), None)
        if index is not None:
            slots, step = _optimizer_slots(self.opt)
            entry.update((name, values[index]) for name, values in slots.items())
            if step is not None:
                entry["step"] = step
        self[param] = entry
        return entry

    def __hash__(self):
        return id(self)


class _TorchOptimizer:
    """Mixin for mindspore.experimental.optim optimizers: the parameter filtering and the
    param_groups described at the top of this section."""

    # the group entry a OneCycleLR/CyclicLR may cycle at run time (None: this optimizer compiles
    # momentum into its update, so it cannot be cycled)
    cycled_momentum = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            cls.__init__ = _building_with_distinct_names(cls.__dict__["__init__"])

    def __init__(self, params, *args, **kwargs):
        super().__init__(optimizer_params(params), *args, **kwargs)
        _BUILT_OPTIMIZERS.add(self)
        self.groups_complete = True
        _allow_call_depth(len(self.parameters))
        self.state = _TorchOptimizerState(self)
        for i, group in enumerate(self.param_groups):
            if not isinstance(group, ParamGroup):
                # a group the base class built again (SGD's): `group['lr']` reads a float, not the live
                # Parameter (awd-lstm-lm keeps `lr2 = group['lr']` to put it back after a scaled step)
                wrapped = ParamGroup(group)
                wrapped.exact.update((k, float(v)) for k, v in self.defaults.items()
                                     if k in group and isinstance(v, (int, float)) and not isinstance(v, bool)
                                     and isinstance(dict.get(group, k), ms.Parameter))
                self.param_groups[i] = wrapped

    def step(self, closure=None):
        """torch's `optimizer.step(closure)`: the converted closure returns (loss, gradients) (step_closure.py).
        Without one, the gradients a converted step held for it (hold_gradients: a wrapper's own method steps
        it); with none held, this step() was part of no converted train step (which calls optimizer(grads))."""
        if closure is None and id(self) not in _HELD_GRADIENTS:
            # the .grad a backward() handed the loss filled (recorded_backward.py's backward_to_grads)
            filled = _filled_reader("filled_gradients")
            grads = filled(self.parameters) if filled is not None else None
            if grads is None:
                raise MigrationError("optimizer.step() outside a converted train step: MindSpore keeps no .grad, "
                                     "the update needs the gradients value_and_grad returns (optimizer(grads))")
            if any(g is not None for g in grads):     # none: torch's step() skips every parameter
                self(grads)
            return None
        loss, grads = closure_loss_and_grads(closure()) if closure else (None, _HELD_GRADIENTS.pop(id(self)))
        self(grads)
        return loss

    def __call__(self, gradients):
        # a gradient None: a parameter the loss did not use (value_and_grad_reached, op by op only), which torch's
        # step() skips; Adam counting steps per parameter since one was skipped (param_steps)
        if isinstance(gradients, (tuple, list)) and (any(g is None for g in gradients)
                                                     or getattr(self, "param_steps", None) is not None):
            return _skipping_unreached(self, gradients, super().__call__)
        return super().__call__(gradients)

    def zero_grad(self, set_to_none=True):   # MindSpore keeps no .grad: held gradients and sums (grad_sum) dropped
        _HELD_GRADIENTS.pop(id(self), None)
        _HELD_GRADIENTS.pop((id(self), "sum"), None)
        cleared = _filled_reader("clear_filled_grads")    # what a backward() handed the loss filled
        if cleared is not None:
            cleared(self.parameters, set_to_none)

    def add_param_group(self, param_group):
        if getattr(self, "groups_complete", False):
            return _group_added(self, param_group)
        lr = param_group.get("lr", self.defaults["lr"])
        super().add_param_group(param_group)
        group = ParamGroup(self.param_groups[-1])
        group.exact["lr"] = float(lr)
        self.param_groups[-1] = group


def _group_added(opt, param_group):
    """add_param_group() on a built optimizer (YOLOv5's smart_optimizer adds its weight groups after building SGD over
    the biases): before any step, while every per-parameter state (MindSpore sizes it when the optimizer is built)
    still holds one constant, its initial value, the state is grown with that value for the new parameters. After
    a step, MigrationError: a converted train step differentiates the parameters it was given."""
    before = len(opt.parameters)
    states = {name: value for name, value in opt.__dict__.items()
              if isinstance(value, ms.ParameterTuple) and len(value) == before and value is not opt.parameters}
    fills = {}
    for name, state in states.items():
        values = [p.asnumpy() for p in state]
        first = next((v.flat[0] for v in values if v.size), 0)
        if any((v != first).any() for v in values):
            raise MigrationError(f"{calling_line() or '?'}: add_param_group() after a step: MindSpore's optimizers "
                                 "size their state when they are built, and a converted train step differentiates "
                                 "the parameters it was given; pass every param group to the constructor")
        fills[name] = first
    opt.groups_complete = False
    opt.add_param_group(param_group)
    opt.groups_complete = True
    group, first = opt.param_groups[-1], opt.param_groups[0]
    for key in list(group):     # as the optimizer's constructor makes its groups' numbers (SGD's float dampening)
        if isinstance(dict.get(first, key), float) and type(dict.get(group, key)) is int:
            group[key] = float(dict.get(group, key))
    for name, state in states.items():
        prefix = state[0].name.split(".")[0] if before else name
        grown = [ms.Parameter(ms.Tensor(np.full(p.shape, fills[name], ms.dtype_to_nptype(p.dtype))),
                              name=f"{prefix}.{p.name}") for p in opt.parameters[before:]]
        setattr(opt, name, ms.ParameterTuple(tuple(state) + tuple(grown)))
    _allow_call_depth(len(opt.parameters))
    if opt.cycled_momentum == "momentum":
        _momentum_read_at_run_time(opt)     # SGD: the new group's momentum in a Parameter too


# id(optimizer) -> the gradients a converted step computed for it, applied by its next step() (hold_gradients)
_HELD_GRADIENTS = {}


# every optimizer built: the parameters whose .grad a backward() handed the loss fills (backward_to_grads). Shared by
# every helper of the process (the project's and each --deps package's own _ms_compat, as init_stream's): an
# optimizer the project builds is stepped by a loss scaler of a package
_BUILT_OPTIMIZERS = vars(_ms_optim).setdefault("_msmigrate_built_optimizers", weakref.WeakSet())


def _filled_reader(name):
    """A function of recorded_backward.py's backward_to_grads (filled_gradients, filled_gradient,
    set_filled_gradient, clear_filled_grads) from whichever helper of the process holds it (registered on
    MindSpore's optim module); None where none is imported."""
    return vars(_ms_optim).get("_msmigrate_filled_grads", {}).get("readers", {}).get(name)


# id(optimizer) -> its parameters, in the order of the gradients held for it (clip_grad_norm_ on the host)
_HELD_PARAMETERS = {}


def hold_gradients(optimizer, grads):
    """The gradients a converted step returned, for `optimizer`'s next step() (called by a wrapper's own method,
    `sched.step_and_update_lr()`, as torch's step() reads .grad): torch's .grad between backward() and step()."""
    _HELD_GRADIENTS[id(optimizer)] = grads
    _HELD_PARAMETERS[id(optimizer)] = tuple(optimizer.parameters)


def stepped_optimizer(stepped, attribute):
    """The optimizer `stepped.step()` updates, where the converter could not tell whether `stepped` is one or a
    project wrapper whose own step() steps `stepped.<attribute>` (NoamOpt): the one hold_gradients feeds."""
    for candidate in (stepped, getattr(stepped, attribute, None)):
        if isinstance(candidate, (_ms_optim.Optimizer, ms.nn.Optimizer)):
            return candidate
    raise MigrationError(f"{type(stepped).__name__}.step() in a converted train step: neither an optimizer nor a "
                         f"wrapper holding one in .{attribute}")


def grad_sum(optimizer, grads):
    """torch's growing .grad in a loop without zero_grad(): the gradients of every backward() since the
    optimizer's last zero_grad(), in this loop and the loops (or calls) before it, plus `grads`
    (held under (id(optimizer), "sum") with the optimizer's parameters; None: cleared by clear_module_grads)."""
    held = _HELD_GRADIENTS.get((id(optimizer), "sum"))
    params = tuple(optimizer.parameters)
    # Python reuses a collected optimizer's id: a sum held for other parameters is a gone optimizer's, not this
    # one's (the held parameters stay alive, so the same parameters mean torch's .grad still holds that sum)
    if held is not None and (len(held[0]) != len(params) or any(a is not b for a, b in zip(held[0], params))):
        held = None
    total = grads if held is None else tuple(g if t is None else t if g is None else t + g
                                             for t, g in zip(held[1], grads))
    _HELD_GRADIENTS[(id(optimizer), "sum")] = (params, total)
    return total


def clear_module_grads(module, where):
    """torch's `module.zero_grad()` beside a step summing gradients (grad_sum): it clears the .grad of the
    module's parameters only, so their entries of every held sum are dropped and the others kept."""
    if isinstance(module, _TorchOptimizer):
        return module.zero_grad()
    if not isinstance(module, ms.nn.Cell) or hasattr(module, "zero_grad"):
        raise MigrationError(f"{where}: zero_grad() on {type(module).__name__}, neither an optimizer nor a module "
                             "without its own zero_grad(): msmigrate cannot tell which held gradients it clears")
    owned = {id(p) for p in module.get_parameters()}
    cleared = _filled_reader("clear_filled_grads")    # what a backward() handed the loss filled
    if cleared is not None:
        cleared(module.get_parameters())
    for key, held in list(_HELD_GRADIENTS.items()):
        if isinstance(key, tuple) and key[1] == "sum":
            params, total = held
            _HELD_GRADIENTS[key] = (params, tuple(None if id(p) in owned else t for p, t in zip(params, total)))


def clears_all_gradients(module, optimizer, where):
    """torch's `module.zero_grad()` beside a step applying fresh gradients: the same only where the module owns
    every parameter the optimizer updates (the others' .grad would keep growing in torch)."""
    if module is optimizer:
        return
    owned = {id(p) for p in module.get_parameters()} \
        if isinstance(module, ms.nn.Cell) and not hasattr(module, "zero_grad") else set()
    # a leaf grad_leaf made since (a fresh `Variable(img, requires_grad=True)` per turn) has no .grad yet in torch:
    # nothing to keep growing before this step
    missing = [p.name for p in optimizer.parameters if id(p) not in owned and not _unstepped_leaf(p)]
    for p in optimizer.parameters:
        if _unstepped_leaf(p):
            p._ms_unstepped_leaf = False
    if missing:
        raise MigrationError(f"{where}: zero_grad() on {type(module).__name__} leaves the gradients of {missing[0]} "
                             f"(and {len(missing) - 1} more the optimizer updates) growing in torch, while the "
                             "converted step applies fresh gradients: clear with optimizer.zero_grad()")


def _unstepped_leaf(p):
    return getattr(p, "_ms_unstepped_leaf", False)


def stepped_together(*optimizers):
    """Optimizers one converted step updates together (train_loop._co_step: `enc_opt.step(); dec_opt.step()` on
    the same backward()s): their own Parameters (learning rates, step counts, moments) carry the same names in
    each (`learning_rate_group_0`), which one compiled graph refuses. Those of all but the first get the
    optimizer's position as a prefix (optimizer state is saved and loaded by position, not by these names).
    Returns the weights they update, in order: the parameters the step differentiates."""
    for k, opt in enumerate(optimizers[1:], 1):
        weights = {id(p) for p in opt.parameters}
        own = [p for p in opt.get_parameters() if id(p) not in weights] + list(getattr(opt, "lrs", ()))
        for group in opt.param_groups:
            own += [v for value in dict.values(group) for v in (value if isinstance(value, tuple) else (value,))
                    if isinstance(v, ms.Parameter)]
        seen = set()
        for p in own:
            if id(p) not in seen and not p.name.startswith(f"_step{k}."):
                seen.add(id(p))
                p.name = f"_step{k}.{p.name}"
    return tuple(p for opt in optimizers for p in opt.parameters)


def closure_loss_and_grads(result):
    """What a converted closure returned: (loss, gradients). Anything else comes from a closure
    msmigrate did not convert, whose gradients would be missing."""
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], (tuple, list)):
        return result
    raise MigrationError("optimizer.step(closure): the closure returned no gradients. msmigrate converts a closure "
                         "defined right before the step that calls zero_grad(), computes a loss, calls "
                         "loss.backward() and returns a value; this one was not converted (see the migration "
                         "report)")


def _floats(values):
    return tuple(float(v) for v in values)


# ------------------------------------------------------------------ optimizers
class SGD(_TorchOptimizer, _ms_optim.SGD):
    """torch.optim.SGD (momentum, dampening, nesterov, weight_decay, maximize: same numbers)."""

    cycled_momentum = "momentum"

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False):
        super().__init__(params, lr, float(momentum), dampening, weight_decay, nesterov, maximize=maximize)
        _momentum_read_at_run_time(self)


def _momentum_read_at_run_time(opt):
    """SGD's momentum kept in a Parameter per group, as the learning rate: a compiled step reads a plain float
    once, when it compiles, so a momentum the program sets between steps (YOLOv5's warmup, `x['momentum'] =
    np.interp(...)` every iteration) went unread in GRAPH mode. Groups without momentum keep their 0."""
    if any(_hyper(g, "momentum") for g in opt.param_groups):
        _cycled_momentum(opt)


class Adam(_TorchOptimizer, _ms_optim.Optimizer):
    """torch.optim.Adam, computed as torch computes it (mindspore.experimental.optim.Adam adds eps
    before the bias correction, which changes the result for eps far from 0, and ignores amsgrad).
    weight_decay adds weight_decay * param to the gradient; with decoupled_weight_decay=True the
    parameter is shrunk instead, as in AdamW."""

    cycled_momentum = "betas"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, *,
                 maximize=False, decoupled_weight_decay=False):
        defaults = dict(lr=lr, betas=_floats(betas), eps=float(eps), weight_decay=float(weight_decay),
                        amsgrad=amsgrad, maximize=maximize, decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)
        self.exp_avg = _zero_state(self.parameters, "exp_avg")
        self.exp_avg_sq = _zero_state(self.parameters, "exp_avg_sq")
        if any(group["amsgrad"] for group in self.param_groups):
            self.max_exp_avg_sq = _zero_state(self.parameters, "max_exp_avg_sq")
        # torch counts steps per parameter; they all advance together until a step skips a parameter the loss
        # did not use (op by op: param_steps, one count per parameter, _skipping_unreached)
        self.state_step = ms.Parameter(ms.Tensor(0.0, ms.float32), name="state_step")
        self.param_steps = None

    def construct(self, gradients):
        ops.assign_add(self.state_step, ms.Tensor(1.0, ms.float32))
        for group_id, group in enumerate(self.param_groups):
            beta1, beta2 = group["betas"]
            self._update_group(group_id, self.lrs[group_id], beta1, beta2, group["eps"], group["weight_decay"],
                               group["amsgrad"], group["maximize"], group["decoupled_weight_decay"], gradients)
        return True

    def _update_group(self, group_id, lr, beta1, beta2, eps, weight_decay, amsgrad, maximize, decoupled, gradients):
        # torch computes 1 - beta and 1 - beta ** t in float64 Python; in float32 (what a compiled graph
        # uses for Python floats) 1 - 0.999 loses 5 digits: 1 - b ** t = 1 - exp(t * log(b)) keeps them
        log_beta1, log_beta2 = _log(beta1), _log(beta2)
        bias_correction1 = _one_minus_exp(self.state_step * log_beta1)
        bias_correction2 = _one_minus_exp(self.state_step * log_beta2)
        step_size = lr / bias_correction1
        bias_correction2_sqrt = ops.sqrt(bias_correction2)
        one_minus_beta1, one_minus_beta2 = _one_minus_exp(log_beta1), _one_minus_exp(log_beta2)
        for i in range(self.group_start_id[group_id], self.group_start_id[group_id + 1]):
            # one call per parameter, its branches inside it: written inline, each branch of the unrolled loop made
            # a compiled graph nest the rest of the loop one call deeper, and a model of ~250 parameters passed
            # MindSpore's call depth limit of 1000 (nlp-tutorial's 6+6-layer Transformer)
            self._update_param(i, lr, log_beta1, log_beta2, step_size, bias_correction2_sqrt, one_minus_beta1,
                               one_minus_beta2, beta2, eps, weight_decay, amsgrad, maximize, decoupled, gradients[i])
        return True

    def _update_param(self, i, lr, log_beta1, log_beta2, step_size, bias_correction2_sqrt, one_minus_beta1,
                      one_minus_beta2, beta2, eps, weight_decay, amsgrad, maximize, decoupled, grad):
        param = self.parameters[i]
        if self.param_steps is not None and not _compiling(_draw_probe):     # compiled: one count for all
            step = ms.Tensor(self.param_steps[i], ms.float32)
            step_size = lr / _one_minus_exp(step * log_beta1)
            bias_correction2_sqrt = ops.sqrt(_one_minus_exp(step * log_beta2))
        if maximize:
            grad = -grad
        new_param = param
        if weight_decay != 0:
            if decoupled:
                new_param = param * (1 - lr * weight_decay)
            else:
                grad = grad + weight_decay * param
        exp_avg = self.exp_avg[i] + (grad - self.exp_avg[i]) * one_minus_beta1  # torch: lerp
        exp_avg_sq = self.exp_avg_sq[i] * beta2 + grad * grad * one_minus_beta2
        if amsgrad:
            max_exp_avg_sq = ops.maximum(self.max_exp_avg_sq[i], exp_avg_sq)
            ops.assign(self.max_exp_avg_sq[i], max_exp_avg_sq)
            denom = ops.sqrt(max_exp_avg_sq) / bias_correction2_sqrt + eps
        else:
            denom = ops.sqrt(exp_avg_sq) / bias_correction2_sqrt + eps
        ops.assign(self.exp_avg[i], exp_avg)
        ops.assign(self.exp_avg_sq[i], exp_avg_sq)
        ops.assign(param, new_param - step_size * (exp_avg / denom))
        return True


def _log(beta):
    if isinstance(beta, ms.Tensor):  # beta1 cycled by a scheduler: a float32 Parameter
        return ops.log(beta)
    if beta == 0:   # betas=(0.0, 0.9), as GAN trainers write: beta ** t is 0, 1 - exp(-inf) is 1
        return ms.Tensor(float("-inf"), ms.float32)
    return ms.Tensor(math.log(beta), ms.float32)  # computed in float64 by Python


def _one_minus_exp(y):
    """1 - exp(y) for y <= 0, accurate in float32 near 0 (a Taylor series there; MindSpore's expm1
    computes exp(y) - 1 directly and is 1% off at y = -1e-6)."""
    series = -y * (1 + y / 2 * (1 + y / 3 * (1 + y / 4 * (1 + y / 5 * (1 + y / 6)))))
    return ops.select(y > -0.1, series, 1 - ops.exp(y))


class AdamW(Adam):
    """torch.optim.AdamW: Adam with decoupled weight decay (param *= 1 - lr * weight_decay)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize,
                         decoupled_weight_decay=True)


class RMSprop(_TorchOptimizer, _ms_optim.RMSprop):
    """torch.optim.RMSprop (alpha, eps, momentum, centered, weight_decay: same numbers)."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 maximize=False):
        super().__init__(params, lr, alpha, eps, weight_decay, momentum, centered, maximize)


class Adagrad(_TorchOptimizer, _ms_optim.Adagrad):
    """torch.optim.Adagrad (lr_decay, initial_accumulator_value, eps, weight_decay: same numbers)."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10, *,
                 maximize=False):
        super().__init__(params, lr, lr_decay, weight_decay, initial_accumulator_value, eps, maximize=maximize)


class Adadelta(_TorchOptimizer, _ms_optim.Adadelta):
    """torch.optim.Adadelta (rho, eps, weight_decay: same numbers)."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, *, maximize=False):
        super().__init__(params, lr, float(rho), eps, weight_decay, maximize=maximize)


class Adamax(_TorchOptimizer, _ms_optim.Adamax):
    """torch.optim.Adamax (same numbers)."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, *, maximize=False):
        super().__init__(params, lr, _floats(betas), eps, weight_decay, maximize=maximize)


def _torch_options(optimizer, decoupled_weight_decay, maximize):
    optimizer.decoupled_weight_decay = decoupled_weight_decay
    optimizer.maximize = maximize
    for group in optimizer.param_groups:
        dict.__setitem__(group, "decoupled_weight_decay", decoupled_weight_decay)
        dict.__setitem__(group, "maximize", maximize)


def _before_update(optimizer, gradients):
    """torch's maximize and decoupled_weight_decay for MindSpore's NAdam and RAdam: negate the
    gradients; shrink the parameters (param *= 1 - lr * weight_decay) instead of adding
    weight_decay * param to the gradients (_decay_weight below then leaves them alone)."""
    if optimizer.maximize:
        gradients = tuple(-grad for grad in gradients)
    if optimizer.decoupled_weight_decay:
        done = []
        for group_id, group in enumerate(optimizer.param_groups):
            shrink = 1 - optimizer.lrs[group_id] * group["weight_decay"]
            for i in range(optimizer.group_start_id[group_id], optimizer.group_start_id[group_id + 1]):
                # in a compiled step: shrink once the gradients are computed, update after the shrink
                param = ops.depend(optimizer.parameters[i], gradients)
                done.append(ops.assign(optimizer.parameters[i], param * shrink))
        gradients = ops.depend(gradients, tuple(done))
    return gradients


def _coupled_decay(self, weight_decay, params, gradients):
    """_decay_weight of NAdam and RAdam: torch's weight_decay added to the gradient, unless
    decoupled_weight_decay (then _before_update shrinks the parameters instead)."""
    if self.decoupled_weight_decay:
        return gradients
    return _ms_optim.Optimizer._decay_weight(self, weight_decay, params, gradients)


class NAdam(_TorchOptimizer, _ms_optim.NAdam):
    """torch.optim.NAdam (momentum_decay, weight_decay, decoupled_weight_decay, maximize: same numbers)."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, maximize=False):
        super().__init__(params, lr, _floats(betas), eps, weight_decay, momentum_decay)
        _torch_options(self, decoupled_weight_decay, maximize)

    _decay_weight = _coupled_decay

    # (MindSpore's compiler resolves super() wrongly in these classes: the bases are named)
    def construct(self, gradients):
        return _ms_optim.NAdam.construct(self, _before_update(self, gradients))


class RAdam(_TorchOptimizer, _ms_optim.RAdam):
    """torch.optim.RAdam (weight_decay, decoupled_weight_decay, maximize: same numbers)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False, *,
                 maximize=False):
        super().__init__(params, lr, _floats(betas), eps, weight_decay)
        _torch_options(self, decoupled_weight_decay, maximize)

    _decay_weight = _coupled_decay

    def construct(self, gradients):
        return _ms_optim.RAdam.construct(self, _before_update(self, gradients))


class ASGD(_TorchOptimizer, _ms_optim.ASGD):
    """torch.optim.ASGD (same numbers; the averaged parameters are in .ax)."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, maximize=False):
        super().__init__(params, lr, float(lambd), alpha, float(t0), weight_decay, maximize)


class Rprop(_TorchOptimizer, _ms_optim.Rprop):
    """torch.optim.Rprop (etas, step_sizes: same numbers)."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, maximize=False):
        super().__init__(params, lr, _floats(etas), _floats(step_sizes), maximize=maximize)


# ------------------------------------------------------------------ learning-rate schedules
class LRScheduler:
    """torch.optim.lr_scheduler.LRScheduler: get_lr() computes the new learning rates from
    self.last_epoch, self.base_lrs and the groups' current values, in Python floats as torch does;
    step() writes them into the optimizer's learning-rate Parameters."""

    def __init__(self, optimizer, last_epoch=-1):
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", _hyper(group, "lr"))
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming a "
                                   "scheduler with last_epoch >= 0")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self):
        self._step_count = 0
        self._is_initial = True
        self.step()
        self._is_initial = False

    def _group_lrs(self):
        return [_hyper(group, "lr") for group in self.optimizer.param_groups]

    def get_lr(self):
        # abstract, as in torch: each schedule (and a user's subclass) defines it
        raise NotImplementedError(f"{type(self).__name__} does not define get_lr()")

    def get_last_lr(self):
        return self._last_lr

    def step(self, epoch=None):
        self._step_count += 1
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            values = self._get_closed_form_lr() if hasattr(self, "_get_closed_form_lr") else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            _set_hyper(group, "lr", lr)
        self._last_lr = self._group_lrs()

    def state_dict(self):
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)


class StepLR(LRScheduler):
    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._group_lrs()
        return [lr * self.gamma for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch not in self.milestones:
            return self._group_lrs()
        return [lr * self.gamma ** self.milestones[self.last_epoch] for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect.bisect_right(milestones, self.last_epoch) for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self._is_initial:
            return self._group_lrs()
        return [lr * self.gamma for lr in self._group_lrs()]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        lrs = self._group_lrs()
        if self._is_initial:
            return lrs
        if self._step_count == 1 and self.last_epoch > 0:
            return self._get_closed_form_lr()
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            return [lr + (base_lr - self.eta_min) * (1 - math.cos(math.pi / self.T_max)) / 2
                    for base_lr, lr in zip(self.base_lrs, lrs)]
        return [(1 + math.cos(math.pi * self.last_epoch / self.T_max))
                / (1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max)) * (lr - self.eta_min) + self.eta_min
                for lr in lrs]

    def _get_closed_form_lr(self):
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]


class _LambdaScheduler(LRScheduler):
    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        super().__init__(optimizer, last_epoch)

    def state_dict(self):
        # functions cannot be saved; callable objects keep their attributes
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        for fn, saved in zip(self.lr_lambdas, state_dict.pop("lr_lambdas")):
            if saved is not None:
                fn.__dict__.update(saved)
        self.__dict__.update(state_dict)


class LambdaLR(_LambdaScheduler):
    def get_lr(self):
        return [base_lr * fn(self.last_epoch) for fn, base_lr in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaScheduler):
    def get_lr(self):
        if self._is_initial:
            return self._group_lrs()
        return [lr * fn(self.last_epoch) for fn, lr in zip(self.lr_lambdas, self._group_lrs())]


class LinearLR(LRScheduler):
    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        lrs = self._group_lrs()
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in lrs]
        if self._is_initial or self.last_epoch > self.total_iters:
            return lrs
        factor = 1.0 + (self.end_factor - self.start_factor) / (
            self.total_iters * self.start_factor + (self.last_epoch - 1) * (self.end_factor - self.start_factor))
        return [lr * factor for lr in lrs]

    def _get_closed_form_lr(self):
        return [base_lr * (self.start_factor + (self.end_factor - self.start_factor)
                           * min(self.total_iters, self.last_epoch) / self.total_iters) for base_lr in self.base_lrs]


class ConstantLR(LRScheduler):
    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        lrs = self._group_lrs()
        if self.last_epoch not in (0, self.total_iters):
            return lrs
        factor = self.factor if self.last_epoch == 0 else 1.0 / self.factor
        return [lr * factor for lr in lrs]

    def _get_closed_form_lr(self):
        return [base_lr * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        lrs = self._group_lrs()
        if self._is_initial or self.last_epoch > self.total_iters:
            return lrs
        decay = ((1.0 - self.last_epoch / self.total_iters) / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [lr * decay for lr in lrs]

    def _get_closed_form_lr(self):
        return [base_lr * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
                for base_lr in self.base_lrs]


class SequentialLR(LRScheduler):
    """Runs schedulers[i] from milestones[i - 1] on (a warmup, then the main schedule)."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        if len(schedulers) < 1:
            raise ValueError("SequentialLR expects at least one scheduler")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(f"SequentialLR expects {len(schedulers) - 1} milestones for {len(schedulers)} "
                             f"schedulers, got {len(milestones)}")
        for i, scheduler in enumerate(schedulers):
            if isinstance(scheduler, ReduceLROnPlateau):
                raise ValueError(f"SequentialLR does not support ReduceLROnPlateau (scheduler {i})")
            if scheduler.optimizer is not optimizer:
                raise ValueError(f"SequentialLR expects all schedulers to belong to the same optimizer (scheduler {i})")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # every scheduler above already stepped once: undo that and start the first one again
        for group in optimizer.param_groups:
            _set_hyper(group, "lr", group["initial_lr"])
        self._undo(self)
        idx = bisect.bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = schedulers[idx].get_last_lr()

    def _undo(self, scheduler):
        if hasattr(scheduler, "_schedulers"):
            for s in scheduler._schedulers:
                self._undo(s)
        elif hasattr(scheduler, "last_epoch"):
            scheduler.last_epoch -= 1

    def step(self):
        self.last_epoch += 1
        idx = bisect.bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self):
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        for scheduler, saved in zip(self._schedulers, state_dict.pop("_schedulers")):
            scheduler.load_state_dict(saved)
        self.__dict__.update(state_dict)


class ChainedScheduler(SequentialLR):
    """Steps every scheduler each time (their factors multiply)."""

    def __init__(self, schedulers, optimizer=None):
        if len(schedulers) < 1:
            raise ValueError("ChainedScheduler expects at least one scheduler")
        self._schedulers = list(schedulers)
        self.optimizer = optimizer or schedulers[0].optimizer
        self._last_lr = [_hyper(group, "lr") for group in self.optimizer.param_groups]

    def step(self):
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = [_hyper(group, "lr") for group in self.optimizer.param_groups]


class ReduceLROnPlateau(LRScheduler):
    """step(metric) after each evaluation; lr *= factor after `patience` epochs without improvement."""

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4, threshold_mode="rel",
                 cooldown=0, min_lr=0, eps=1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        if mode not in ("min", "max"):
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.factor = factor
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self._last_lr = self._group_lrs()
        self._reset()

    def _reset(self):
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch=None):
        current = float(metrics)
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = self._group_lrs()

    def _reduce_lr(self):
        if len(self.min_lrs) != len(self.optimizer.param_groups) and self.default_min_lr is not None:
            self.min_lrs = [self.default_min_lr] * len(self.optimizer.param_groups)
        for i, group in enumerate(self.optimizer.param_groups):
            old_lr = _hyper(group, "lr")
            new_lr = max(old_lr * self.factor, self.min_lrs[i])
            if old_lr - new_lr > self.eps:
                _set_hyper(group, "lr", new_lr)

    @property
    def in_cooldown(self):
        return self.cooldown_counter > 0

    def _is_better(self, a, best):
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min":
            return a < best - self.threshold
        if self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold


class CosineAnnealingWarmRestarts(LRScheduler):
    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base_lr in self.base_lrs]

    def step(self, epoch=None):
        """step() after each epoch or batch, or step(epoch + i / iters) with a fractional epoch."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            _set_hyper(group, "lr", lr)
        self._last_lr = self._group_lrs()


def _per_group(name, optimizer, value):
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups")
        return list(value)
    return [value] * len(optimizer.param_groups)


def _cycled_momentum(optimizer):
    """The group entry ('momentum' or 'betas') a OneCycleLR/CyclicLR changes every step. The
    optimizer must read it at run time: it becomes a Parameter here."""
    key = getattr(optimizer, "cycled_momentum", None)
    if key is None:
        raise MigrationError(
            f"cycle_momentum=True changes {type(optimizer).__name__}'s momentum every step, but it is compiled "
            "into the update; use SGD, Adam or AdamW, or pass cycle_momentum=False (then momentum stays fixed)")
    for i, group in enumerate(optimizer.param_groups):
        if key == "betas":
            beta1, beta2 = group["betas"]
            if not isinstance(beta1, ms.Parameter):
                dict.__setitem__(group, "betas", (ms.Parameter(ms.Tensor(beta1, ms.float32), name=f"beta1_{i}"), beta2))
        elif not isinstance(dict.__getitem__(group, "momentum"), ms.Parameter):
            dict.__setitem__(group, "momentum", ms.Parameter(ms.Tensor(group["momentum"], ms.float32),
                                                             name=f"momentum_{i}"))
    return key


def _set_momentum(group, key, value):
    if key == "betas":
        _set_hyper(group, "betas", (value, group["betas"][1]))
    else:
        _set_hyper(group, "momentum", value)


class CyclicLR(LRScheduler):
    """Cycles lr between base_lr and max_lr (and, by default, momentum between max_momentum and
    base_momentum the opposite way)."""

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None, mode="triangular",
                 gamma=1.0, scale_fn=None, scale_mode="cycle", cycle_momentum=True, base_momentum=0.8,
                 max_momentum=0.9, last_epoch=-1):
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                _set_hyper(group, "lr", lr)
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        if scale_fn is None:
            self.scale_mode = "iterations" if mode == "exp_range" else "cycle"
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self._momentum_key = _cycled_momentum(optimizer)
            self.base_momentums = _per_group("base_momentum", optimizer, base_momentum)
            self.max_momentums = _per_group("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for m_momentum, b_momentum, group in zip(self.max_momentums, self.base_momentums,
                                                         optimizer.param_groups):
                    _set_momentum(group, self._momentum_key, m_momentum)
                    group["max_momentum"] = m_momentum
                    group["base_momentum"] = b_momentum
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def scale_fn(self, x):
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x  # exp_range

    def get_lr(self):
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base_lr + (max_lr - base_lr) * scale_factor * scale
               for base_lr, max_lr in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for base_m, max_m, group in zip(self.base_momentums, self.max_momentums, self.optimizer.param_groups):
                _set_momentum(group, self._momentum_key, max_m - (max_m - base_m) * scale_factor * scale)
        return lrs

    def state_dict(self):
        state = super().state_dict()
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None if fn is None or isinstance(fn, types.FunctionType) else fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        fn = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        if fn is not None:
            self._scale_fn_custom.__dict__.update(fn)


class OneCycleLR(LRScheduler):
    """The 1cycle policy: lr from max_lr / div_factor up to max_lr, then down to
    max_lr / div_factor / final_div_factor (momentum, by default, the opposite way)."""

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, pct_start=0.3,
                 anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85, max_momentum=0.95,
                 div_factor=25.0, final_div_factor=1e4, three_phase=False, last_epoch=-1):
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self.anneal_strategy = anneal_strategy
        # (end step, lr at start, lr at end, momentum at start, momentum at end): group keys
        if three_phase:
            self._schedule_phases = [
                (float(pct_start * self.total_steps) - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                (self.total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        else:
            self._schedule_phases = [
                (float(pct_start * self.total_steps) - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (self.total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]
        max_lrs = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for max_lr_i, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = max_lr_i / div_factor
                group["max_lr"] = max_lr_i
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self._momentum_key = _cycled_momentum(optimizer)
            max_momentums = _per_group("max_momentum", optimizer, max_momentum)
            base_momentums = _per_group("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for m_momentum, b_momentum, group in zip(max_momentums, base_momentums, optimizer.param_groups):
                    _set_momentum(group, self._momentum_key, m_momentum)
                    group["max_momentum"] = m_momentum
                    group["base_momentum"] = b_momentum
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start, end, pct):
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self):
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(f"Tried to step {step_num} times. The specified number of total steps is "
                             f"{self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, (end_step, start_lr, end_lr, start_m, end_m) in enumerate(self._schedule_phases):
                if step_num <= end_step or i == len(self._schedule_phases) - 1:
                    pct = (step_num - start_step) / (end_step - start_step)
                    lrs.append(self._anneal(group[start_lr], group[end_lr], pct))
                    if self.cycle_momentum:
                        _set_momentum(group, self._momentum_key, self._anneal(group[start_m], group[end_m], pct))
                    break
                start_step = end_step
        return lrs


# ------------------------------------------------------------------ state_dict in torch's layout
def _optimizer_state_dict(opt):
    slots, step = _optimizer_slots(opt)
    steps = getattr(opt, "param_steps", None)   # Adam counting per parameter since a step skipped one
    state = {}
    for i in range(len(opt.parameters)):
        state[i] = {} if step is None else {"step": step if steps is None else ms.Tensor(steps[i], ms.float32)}
        state[i].update((name, values[i]) for name, values in slots.items())
    groups = []
    for g, group in enumerate(opt.param_groups):
        saved = {}
        for k, v in group.items():
            if isinstance(v, tuple):  # betas, with a Parameter where a scheduler cycles beta1
                v = tuple(_group_number(group, k, x) for x in v)
            elif isinstance(v, ms.Tensor):
                v = _group_number(group, k, v) if v.size == 1 else None
            if k != "params" and v is not None and not isinstance(v, ParameterTuple):
                saved[k] = v
        saved["params"] = list(range(opt.group_start_id[g], opt.group_start_id[g + 1]))
        groups.append(saved)
    return {"state": state, "param_groups": groups}


def _group_number(group, key, value):
    """A hyper-parameter as torch's state_dict has it: a Python number. The optimizers section's
    param groups remember the float64 value they last wrote into a float32 Parameter (.exact)."""
    if not isinstance(value, ms.Tensor):
        return value
    number = value.asnumpy().item()
    exact = getattr(group, "exact", {}).get(key)
    return exact if isinstance(exact, float) and np.float32(exact) == np.float32(number) else number


def _scheduler_state_dict(scheduler):
    if hasattr(scheduler, "state_dict"):
        return scheduler.state_dict()
    return {k: v for k, v in vars(scheduler).items() if k != "optimizer" and not callable(v)}


_STATE_DICT_LAYOUTS[_ms_optim.Optimizer] = _optimizer_state_dict
_STATE_DICT_LAYOUTS[_ms_optim.lr_scheduler.LRScheduler] = _scheduler_state_dict


# torch.optim and torch.optim.lr_scheduler used as values: getattr(torch.optim, config.name)
lr_scheduler_module = types.SimpleNamespace(
    LRScheduler=LRScheduler, _LRScheduler=LRScheduler, StepLR=StepLR, MultiStepLR=MultiStepLR,
    ExponentialLR=ExponentialLR, CosineAnnealingLR=CosineAnnealingLR, LambdaLR=LambdaLR,
    MultiplicativeLR=MultiplicativeLR, LinearLR=LinearLR, ConstantLR=ConstantLR, PolynomialLR=PolynomialLR,
    SequentialLR=SequentialLR, ChainedScheduler=ChainedScheduler, ReduceLROnPlateau=ReduceLROnPlateau,
    CosineAnnealingWarmRestarts=CosineAnnealingWarmRestarts, CyclicLR=CyclicLR, OneCycleLR=OneCycleLR)
optim_module = types.SimpleNamespace(
    Optimizer=_ms_optim.Optimizer, SGD=SGD, Adam=Adam, AdamW=AdamW, RMSprop=RMSprop, Adagrad=Adagrad,
    Adadelta=Adadelta, Adamax=Adamax, NAdam=NAdam, RAdam=RAdam, ASGD=ASGD, Rprop=Rprop,
    lr_scheduler=lr_scheduler_module)
