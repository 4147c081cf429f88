"""A torch.optim.Optimizer subclass the program writes itself (Lion, LAMB, SAM, AdaBelief...): its
`step(closure=None)` loops over self.param_groups, reads p.grad and self.state[p], and changes the
parameters and the state tensors in place (msmigrate/hand_optimizers.py rebases the class here).

HandWrittenOptimizer keeps torch's API (param_groups as dicts holding Python numbers, defaults, state:
parameter -> dict of tensors, add_param_group, zero_grad, state_dict/load_state_dict in torch's layout) and
runs the program's own step() on the host, op by op: a converted train step calls `optimizer(grads)`, which
makes the gradients each parameter's p.grad (the kept gradients tensor_grad reads) and calls step(). Python
dict logic cannot enter a compiled graph, so compile_step runs a step that reaches such an optimizer op by op
in GRAPH mode too (HOST_STEPPED, the train section); one it did not see refuses to compile (MigrationError).
The in-place updates of step() are the converter's usual forms: a Parameter or a state tensor is written
into (write_data / write_into), so param_groups, state and the network all see the new values."""

_HOST_OPTIMIZER_IN_GRAPH = (
    "{} is an optimizer written in the program (a torch.optim.Optimizer subclass): its step() runs on the host "
    "and cannot be compiled into a graph; run the train step in PYNATIVE mode (ms.set_context(mode=ms.PYNATIVE_MODE))")


class HandWrittenOptimizer:
    """torch.optim.Optimizer as the base of an optimizer the program defines (see the top of this section)."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__:
            cls.step = _closure_gives_gradients(cls.__dict__["step"])

    def __init__(self, params, defaults):
        self.defaults = dict(defaults)
        self.state = _OptimizerState()
        self.param_groups = []
        if isinstance(params, ms.Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {type(params).__name__}")
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        for group in (params if isinstance(params[0], dict) else [{"params": params}]):
            self.add_param_group(group)

    def add_param_group(self, param_group):
        group = dict(param_group)
        params = group["params"]
        params = [params] if isinstance(params, ms.Tensor) else list(params)
        # named_parameters(): (name, parameter)
        group["params"] = [p[1] if isinstance(p, tuple) else p for p in params]
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        known = {id(p) for p in self.parameters}
        if any(id(p) in known for p in group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    @property
    def parameters(self):
        """What the converted step differentiates: the param groups' parameters (torch's p.grad stays None for a
        frozen one). Read from param_groups, so a wrapper that never calls Optimizer.__init__ and takes its base
        optimizer's groups (Lookahead: `self.param_groups = self.optimizer.param_groups`) has them too."""
        seen, found = set(), []
        for group in getattr(self, "param_groups", ()):
            for p in group["params"]:
                if id(p) not in seen and p.requires_grad:
                    seen.add(id(p))
                    found.append(p)
        return tuple(found)

    def __call__(self, gradients):
        """A converted train step's `optimizer(grads)`: torch's `loss.backward(); optimizer.step()`."""
        if _compiling(_draw_probe):
            _refuse_compiled(_HOST_OPTIMIZER_IN_GRAPH, type(self).__name__)
        keep_grads(self.parameters, gradients)
        _hold_for_base_optimizers(self, gradients)
        self.step()
        return True

    def zero_grad(self, set_to_none=True):
        for p in self.parameters:   # p.grad is None again, as after torch's zero_grad()
            _KEPT_GRADS[id(p)] = (p, None)

    def state_dict(self):
        """torch's layout: {'state': {index: {name: value}}, 'param_groups': [{..., 'params': [index...]}]}."""
        index = {}
        groups = []
        for group in self.param_groups:
            saved = {k: v for k, v in group.items() if k != "params"}
            saved["params"] = [index.setdefault(id(p), len(index)) for p in group["params"]]
            groups.append(saved)
        params = [p for group in self.param_groups for p in group["params"]]
        state = {index[id(p)]: dict(self.state[p]) for p in params if p in self.state}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        groups, saved_groups = self.param_groups, state_dict["param_groups"]
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        by_index = {}
        for group, saved in zip(groups, saved_groups):
            by_index.update(zip(saved["params"], group["params"]))
        self.state = _OptimizerState()
        for key, values in state_dict["state"].items():
            param = by_index.get(int(key))
            if param is not None:
                self.state[param] = {name: _state_value(param, name, v) for name, v in values.items()}
        for i, (group, saved) in enumerate(zip(groups, saved_groups)):
            new = {k: v for k, v in saved.items() if k != "params"}
            new["params"] = group["params"]
            groups[i] = new

    def __repr__(self):
        lines = [type(self).__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {key}: {group[key]}" for key in sorted(group) if key != "params"]
        return "\n".join(lines + [")"])


def give_gradients(optimizer, gradients, method):
    """torch's `loss.backward(); optimizer.first_step()` (SAM's two steps): a converted step's gradients become the
    p.grad the program's own method reads, added to those backward()s since its last zero_grad() left, as torch's
    .grad grows; an optimizer this one holds (SAM's base_optimizer) gets them for its step()."""
    if not isinstance(optimizer, HandWrittenOptimizer):
        raise MigrationError(f"{type(optimizer).__name__}.{method}() after backward(): msmigrate hands the gradients "
                             "only to an optimizer the program writes (a torch.optim.Optimizer subclass)")
    params = optimizer.parameters
    total = []
    for p, g in zip(params, gradients):
        kept = _KEPT_GRADS.get(id(p))
        earlier = kept[1] if kept is not None and kept[0] is p else None
        total.append(g if earlier is None else earlier if g is None else earlier + g)
    keep_grads(params, total)
    _hold_for_base_optimizers(optimizer, tuple(total))


def _hold_for_base_optimizers(optimizer, gradients):
    """A converted torch optimizer this one holds (Lookahead's self.optimizer, SAM's self.base_optimizer) gets the
    step's gradients for its own step(), as torch's reads .grad: held for it (hold_gradients, in the order of its
    parameters). Looked up by name: a program that builds no torch optimizer has neither (the table, not
    hold_gradients: a tree's helper keeps the table with the optimizers, hold_gradients only where its code calls it)."""
    torch_optimizer, held = globals().get("_TorchOptimizer"), globals().get("_HELD_GRADIENTS")
    if torch_optimizer is None or held is None:
        return
    by_id = {id(p): g for p, g in zip(optimizer.parameters, gradients)}
    for inner in vars(optimizer).values():
        if isinstance(inner, torch_optimizer):   # as hold_gradients
            held[id(inner)] = tuple(by_id[id(p)] if id(p) in by_id else ops.zeros_like(p) for p in inner.parameters)


def augmented_in_place(x, op, value):
    """`x += value` (op "add", "sub", "mul"...) in a hand-written optimizer's method: on a tensor, the tensor
    itself changes (x may be a state tensor: `slow = self.state[p]['slow']; slow += ...`), as torch's `+=`;
    anything else as Python's own `+=` (a number rebound, a list extended in place)."""
    import operator
    if isinstance(x, ms.Tensor):
        return write_into(x, getattr(operator, op)(x, value))
    return getattr(operator, "i" + op)(x, value)


class _OptimizerState(dict):
    """self.state: parameter -> its dict, created empty on first read (torch's defaultdict(dict))."""

    def __missing__(self, param):
        value = self[param] = {}
        return value


def _state_value(param, name, value):
    """A loaded state entry as torch's load_state_dict casts it: a floating tensor to the parameter's dtype
    (a step count kept as it is), a copy either way (step() changes it in place)."""
    if isinstance(value, np.ndarray):
        value = ms.Tensor(value)
    if not isinstance(value, ms.Tensor):
        return value
    if name != "step" and value.is_floating_point() and value.dtype != param.dtype:
        return value.astype(param.dtype)
    return value.copy()


def _closure_gives_gradients(step):
    """The program's step(closure): a converted closure returns (loss, gradients of optimizer.parameters)
    (msmigrate/step_closure.py); step() gets a closure that returns the loss, its gradients become p.grad."""
    def stepped(self, closure=None, *args, **kwargs):
        if closure is None and not args and not kwargs:
            return step(self)         # also a step() taking no closure (barlowtwins' LARS)
        if closure is None or getattr(closure, "gives_loss", False):   # none, or one made here (super().step())
            return step(self, closure, *args, **kwargs)

        def with_gradients():
            result = closure()
            if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], (tuple, list))):
                raise MigrationError(f"{type(self).__name__}.step(closure): the closure returned no gradients "
                                     "(msmigrate converts a closure defined right before the step that calls "
                                     "zero_grad(), computes a loss, calls loss.backward() and returns it)")
            keep_grads(self.parameters, result[1])
            return result[0]
        with_gradients.gives_loss = True
        return step(self, with_gradients, *args, **kwargs)
    stepped.__name__, stepped.__qualname__, stepped.__doc__ = step.__name__, step.__qualname__, step.__doc__
    return stepped


def _reaches_hand_written_optimizer(step, seen=None):
    """Whether a train step calls an optimizer of this section: one it closes over or reads as a global, in a
    function it calls, or held by a trainer object it reads (self.optimizer)."""
    seen = set() if seen is None else seen
    seen.add(id(step))
    for _, value in _referenced(step):
        if isinstance(value, HandWrittenOptimizer):
            return True
        if callable(value) and hasattr(value, "__code__") and id(value) not in seen:
            if _reaches_hand_written_optimizer(value, seen):
                return True
        elif _holds_cells(value) and any(isinstance(v, HandWrittenOptimizer) for v in vars(value).values()):
            return True
    return False


HOST_STEPPED["optimizers written in the program"] = _reaches_hand_written_optimizer
