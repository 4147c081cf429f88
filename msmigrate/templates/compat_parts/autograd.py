"""torch.autograd: custom Functions and the functional transforms.

A torch.autograd.Function subclass keeps its forward(ctx, ...) and backward(ctx, *grads) as written;
Fn.apply(...) runs forward inside a Cell whose bprop calls the class's backward, so MindSpore's
ms.grad / value_and_grad use the user's gradient formula (as torch does), not one derived from forward."""
import mindspore as ms
import numpy as np
from mindspore import nn, ops


class FunctionCtx:
    """torch's ctx: what forward saves for backward."""

    def __init__(self, needs_input_grad):
        self.needs_input_grad = needs_input_grad
        self.saved_tensors = ()
        self.non_differentiable = ()
        self.materialize_grads = True

    def save_for_backward(self, *tensors):
        self.saved_tensors = tensors

    @property
    def saved_variables(self):
        return self.saved_tensors

    def mark_non_differentiable(self, *tensors):
        self.non_differentiable = tensors

    def mark_dirty(self, *tensors):
        """In-place changes of inputs are not tracked by MindSpore: nothing to mark."""

    def set_materialize_grads(self, value):
        self.materialize_grads = value   # False: an all-zero output gradient reaches backward as None


class _FunctionCall(nn.Cell):
    """One Fn.apply(...) call: construct runs Fn.forward on the arguments (tensors are the Cell's inputs,
    anything else is held here), bprop runs Fn.backward on the ctx that forward filled."""

    def __init__(self, fn, args, kwargs, tensor_positions):
        super().__init__()
        self.fn, self.args, self.kwargs, self.tensor_positions = fn, list(args), kwargs, tensor_positions
        self.ctx = None
        self.at = ""   # " at file:line" of the apply (function_apply), for the messages
        self.non_differentiable = ()

    def construct(self, *tensors):
        args = list(self.args)
        for position, t in zip(self.tensor_positions, tensors):
            args[position] = t
        ctx = self.ctx = FunctionCtx(tuple(i in self.tensor_positions for i in range(len(args))))
        if self.fn.has_setup_context():
            out = self.fn.forward(*args, **self.kwargs)
            self.fn.setup_context(ctx, tuple(args), out)
        else:
            out = self.fn.forward(ctx, *args, **self.kwargs)
        outs = out if isinstance(out, tuple) else (out,)
        self.non_differentiable = tuple(i for i, o in enumerate(outs)
                                        if any(o is t for t in ctx.non_differentiable))
        return out

    def bprop(self, *inputs_out_dout):
        tensors, dout = inputs_out_dout[:-2], inputs_out_dout[-1]
        douts = dout if isinstance(dout, tuple) else (dout,)
        # torch hands zeros to backward for an output marked non-differentiable (its use carries no gradient)
        douts = tuple(ops.zeros_like(d) if i in self.non_differentiable else d for i, d in enumerate(douts))
        if not self.ctx.materialize_grads:
            # torch hands None for an output the loss does not use; MindSpore hands zeros. None means a zero
            # gradient to a backward written for set_materialize_grads(False), so an all-zero one is None here
            douts = tuple(None if isinstance(d, ms.Tensor) and not bool(ops.any(d != 0)) else d for d in douts)
        grads = self.fn.backward(self.ctx, *douts)
        grads = grads if isinstance(grads, tuple) else (grads,)
        if len(grads) < len(self.args) or any(g is not None for g in grads[len(self.args):]):
            raise MigrationError(f"{self.fn.__name__}.backward returned {len(grads)} gradients for "
                                 f"{len(self.args)} forward inputs (its apply{self.at})")
        return tuple(ops.zeros_like(t) if grads[p] is None else grads[p]
                     for p, t in zip(self.tensor_positions, tensors))


class Function:
    """torch.autograd.Function: subclass it with static forward(ctx, ...) and backward(ctx, *grads)
    (or forward(...) plus setup_context(ctx, inputs, output)); call it with Fn.apply(...).
    Runs op by op (PYNATIVE mode: a converted program whose project defines one starts in PYNATIVE
    mode); torch tensors kept in lists or other containers get no gradient, as in torch."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("a Function subclass defines forward")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("a Function subclass defines backward")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError

    def __call__(self, *args, **kwargs):
        """An instance called as a function, the legacy form (`class Detect(Function): def forward(self, ...)`, then
        `self.detect = Detect(...)` and `self.detect(x)`: ssd.pytorch): torch (since 1.5) refuses the call with
        RuntimeError; here MigrationError (a RuntimeError) with torch's words, naming the calling line (compiling a
        graph that reaches the call stops the same way)."""
        if _compiling(_draw_probe):
            _refuse_compiled(_LEGACY_FUNCTION_CALL, "Function", "")
        import sys
        frame = sys._getframe(1)     # the original line where the converted tree maps it, else the converted one
        at = calling_line(frame) or f"{frame.f_code.co_filename}:{frame.f_lineno}"
        _raise_migration_error(_LEGACY_FUNCTION_CALL.format(type(self).__name__, " at " + at))

    @classmethod
    def has_setup_context(cls):
        return cls.setup_context is not Function.setup_context

    @classmethod
    def apply(cls, *args, **kwargs):
        # compiling a construct or ms.jit function that calls it stops with MigrationError (a constexpr: the graph
        # parser refuses a raise of MigrationError, "Unsupported exception type"), its traceback naming the caller
        if _compiling(_draw_probe):
            _refuse_compiled(_FUNCTION_APPLY_REFUSAL, "Function", "")
        return _function_call(cls, args, kwargs)


_LEGACY_FUNCTION_CALL = ("{}(...) called as a function{}: Legacy autograd function with non-static forward method "
                         "is deprecated (torch's RuntimeError since 1.5); write a static forward(ctx, ...) and call "
                         "Fn.apply(...)")
_FUNCTION_APPLY_REFUSAL = ("{}.apply{}: a custom torch.autograd.Function runs in PYNATIVE mode only (its backward "
                           "is called op by op); set ms.set_context(mode=ms.PYNATIVE_MODE)")


def function_apply(fn, where, *args, **kwargs):
    """`Fn.apply(...)` written at `where` (the converter's form of the call): compiling a graph that reaches it
    stops with MigrationError naming the class and that line (in a graph Function.apply's own `cls` is not the
    class); so does its op-by-op run in GRAPH mode, and a backward returning too many gradients."""
    if _compiling(_draw_probe):
        _refuse_compiled(_FUNCTION_APPLY_REFUSAL, fn.__name__, " at " + where)
    if isinstance(fn, type) and issubclass(fn, Function) and fn.apply.__func__ is Function.apply.__func__:
        return _function_call(fn, args, kwargs, where)
    return fn.apply(*args, **kwargs)


def recomputed_call(run_function, length, *args):
    """`Fn.apply(run_function, length, *args)` of a Function that only checkpoints (msmigrate/checkpoint_functions.py:
    forward runs run_function(*args[:length]) under no_grad, backward runs it again and differentiates over those
    inputs and the parameters args[length:]): what it computes, with the same gradients (activations kept); run
    again where a gradient is recorded, as torch's backward does (recomputed: a BatchNorm's statistics)."""
    return recomputed(run_function, *args[:length])


def _function_call(cls, args, kwargs, where=None):
    """Fn.apply called op by op (a graph compiling the call stops at Function.apply before this)."""
    at = "" if where is None else " at " + where
    if ms.get_context("mode") == ms.GRAPH_MODE:
        raise MigrationError(_FUNCTION_APPLY_REFUSAL.format(cls.__name__, at))
    positions = tuple(i for i, a in enumerate(args) if isinstance(a, ms.Tensor))
    call = _FunctionCall(cls, args, kwargs, positions)
    call.at = at
    return call(*[args[i] for i in positions])


def once_differentiable(fn):
    """torch.autograd.function.once_differentiable: backward is used as written; a second-order gradient
    differentiates its operations again (PYNATIVE mode), where torch raises."""
    return fn


# ---------------------------------------------------------------- torch.autograd.functional
def _op_by_op_transform(transform):
    """The transform run op by op: ms.grad of a closure per output element over the program's own function,
    which GRAPH mode would compile (MindSpore 2.10: "The name 'k' is not defined", a raw NameError). Called from
    Python in GRAPH mode, PYNATIVE is set around it; compiling a graph that reaches it raises MigrationError."""
    def run(*args, **kwargs):
        if _compiling(_draw_probe):
            _refuse_compiled("torch.autograd.functional.{} inside a compiled graph (GRAPH mode construct or "
                             "ms.jit): it runs op by op only; call it outside the network or run in PYNATIVE "
                             "mode", transform.__name__)
        return _in_pynative(transform, args, kwargs)
    return run


def _second_order_transform(transform):
    """hessian/vhp/hvp: a gradient of a gradient. Op by op MindSpore 2.10 loses the terms through a reduction
    (the hessian of sum(y) ** 2 comes out 0, measured; compiled it is 2), and compiled its per-element closures
    do not parse: a program in GRAPH mode stops with MigrationError instead of either."""
    message = ("torch.autograd.functional.{} in GRAPH mode: MindSpore 2.10 cannot compile its per-element "
               "gradients, and op by op it drops the second-order terms through reductions (sum(y) ** 2); compute "
               "the second derivative with ms.grad of ms.grad inside one ms.jit function")

    def run(*args, **kwargs):
        if _compiling(_draw_probe):
            _refuse_compiled(message, transform.__name__)
        return _unless_graph_mode(transform, args, kwargs, message)
    return run


def _unless_graph_mode(fn, args, kwargs, message):
    if ms.get_context("mode") == ms.GRAPH_MODE:
        raise MigrationError(message.format(fn.__name__))
    return _in_pynative(fn, args, kwargs)


def _in_pynative(fn, args, kwargs):
    """fn(*args, **kwargs) in PYNATIVE mode, the program's mode restored after it (no `try` where a graph
    compiles: MindSpore's parser rejects it before the guard above could raise)."""
    graph = ms.get_context("mode") == ms.GRAPH_MODE
    if graph:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    try:
        try:
            return fn(*args, **kwargs)
        except TypeError as e:
            # measured, MindSpore 2.10 PYNATIVE: a gradient of a gradient through `y[0]` in the function fails so
            if "as index, but got" not in str(e) or getattr(ms.Tensor.__getitem__, "int_as_tuple", False):
                raise
            # the failed nested gradient leaves MindSpore's op-by-op executor broken for every later gradient
            from mindspore.common.api import _pynative_executor
            _pynative_executor.clear_res()
        # `y[(0,)]`, the same index, passes there (taped_backward.py): Tensor indexing takes that form from here on
        _int_index_as_tuple(ms.Tensor)
        return fn(*args, **kwargs)
    finally:
        if graph:
            ms.set_context(mode=ms.GRAPH_MODE)


def _as_tuple(x):
    return (tuple(x), True) if isinstance(x, (tuple, list)) else ((x,), False)


def _sum_output(func, xs):
    """func as a function of a 0-d result, for hessian/hvp/vhp, which torch defines for a single-element
    output only (checked here once: mindspore.jvp compiles the function it differentiates)."""
    out = func(*xs)
    if isinstance(out, (tuple, list)) or out.size != 1:
        raise MigrationError("torch.autograd.functional: the function must return a single-element tensor "
                             "for hessian/hvp/vhp (or for a vjp without v)")

    def scalar(*ys):
        return func(*ys).reshape(())
    return scalar


def _distinct(xs):
    """The inputs, a tensor given twice copied: ms.grad gives each position of one tensor object the sum
    of its gradients (grad_position=(0, 1) over (x, x) -> (2 + 3, 2 + 3) for 2a + 3b, MindSpore 2.10 PYNATIVE),
    torch differentiates each input on its own."""
    return tuple(x.copy() if isinstance(x, ms.Tensor) and any(x is y for y in xs[:i]) else x
                 for i, x in enumerate(xs))


def _jacobian_of(func, xs):
    """d func(*xs) / d xs as torch nests it: [output][input] blocks of shape out.shape + in.shape."""
    xs = _distinct(tuple(xs))
    out = func(*xs)
    outs, _ = _as_tuple(out)
    rows = []
    for k, o in enumerate(outs):
        flat = o.reshape(-1)
        blocks = [[] for _ in xs]
        for j in range(flat.shape[0]):
            def component(*ys, _k=k, _j=j):
                res = func(*ys)
                res = res if isinstance(res, (tuple, list)) else (res,)
                return res[_k].reshape(-1)[_j]
            gs = ms.grad(component, grad_position=tuple(range(len(xs))))(*xs)
            gs = gs if isinstance(gs, tuple) else (gs,)
            for i, g in enumerate(gs):
                blocks[i].append(g)
        rows.append(tuple(ops.stack(b).reshape(tuple(o.shape) + tuple(x.shape)) if b else
                          ops.zeros(tuple(o.shape) + tuple(x.shape), x.dtype) for b, x in zip(blocks, xs)))
    return out, rows


@_op_by_op_transform
def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """torch.autograd.functional.jacobian: one gradient per output element (reverse mode)."""
    xs, many_in = _as_tuple(inputs)
    out, rows = _jacobian_of(func, xs)
    _, many_out = _as_tuple(out)
    rows = [r if many_in else r[0] for r in rows]
    return tuple(rows) if many_out else rows[0]


@_second_order_transform
def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """torch.autograd.functional.hessian: the jacobian of the gradient of a single-element func."""
    xs, many_in = _as_tuple(inputs)
    xs = _distinct(xs)
    scalar = _sum_output(func, xs)
    positions = tuple(range(len(xs)))
    try:   # compiled (mindspore.jacfwd over jacrev), the second-order terms through reductions are kept
        h = ms.jacfwd(ms.jacrev(scalar, grad_position=positions), grad_position=positions)(*xs)
        rows = [[h]] if isinstance(h, ms.Tensor) else [list(r) if isinstance(r, tuple) else [r] for r in h]
    except (TypeError, RuntimeError, ValueError, OSError):
        # func does not compile (a lambda inside the call, Python state): op by op, which may drop those
        # terms, so its result is checked against finite differences of the (first-order) gradient
        def gradient(*ys):
            g = ms.grad(scalar, grad_position=positions)(*ys)
            return g if isinstance(g, tuple) else (g,)
        _, rows = _jacobian_of(gradient, xs)
        _check_hessian(gradient, xs, rows)
    return tuple(tuple(r) for r in rows) if many_in else rows[0][0]


def _check_hessian(gradient, xs, rows):
    """MigrationError where the op-by-op hessian is not the derivative of the gradient (central differences,
    float32: a loose tolerance, which a dropped second-order term exceeds)."""
    base = [x.asnumpy().astype(np.float64) for x in xs]
    for j, x in enumerate(base):
        eps = 1e-2 * max(1.0, float(np.abs(x).max()) if x.size else 1.0)
        for k in range(x.size):
            shifted = []
            for sign in (1.0, -1.0):
                moved = x.reshape(-1).copy()
                moved[k] += sign * eps
                ys = [ms.Tensor(b.astype(xs[i].asnumpy().dtype)) for i, b in enumerate(base)]
                ys[j] = ms.Tensor(moved.reshape(x.shape).astype(xs[j].asnumpy().dtype))
                shifted.append([g.asnumpy().astype(np.float64) for g in gradient(*ys)])
            for i in range(len(xs)):
                column = (shifted[0][i] - shifted[1][i]) / (2 * eps)
                got = rows[i][j].asnumpy().reshape(base[i].shape + (x.size,))[..., k]
                if not np.allclose(got, column, rtol=5e-2, atol=5e-2 * (1.0 + np.abs(column).max())):
                    raise MigrationError(
                        "torch.autograd.functional.hessian: MindSpore 2.10 computes this second derivative op by "
                        "op without some of its terms (through a reduction such as sum(y) ** 2), and the function "
                        "does not compile for the exact form (a lambda written inside the call, Python state): "
                        "define it as a named function of tensors only")


@_op_by_op_transform
def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """torch.autograd.functional.vjp -> (func(inputs), v^T J), through mindspore.vjp."""
    xs, many_in = _as_tuple(inputs)
    out, pullback = ms.vjp(func, *_distinct(xs))
    if v is None:
        if isinstance(out, (tuple, list)) or out.size != 1:
            raise MigrationError("torch.autograd.functional.vjp: v may be left out only for a single-element output")
        v = ops.ones_like(out)
    grads = pullback(tuple(v) if isinstance(v, list) else v)
    grads = grads if isinstance(grads, tuple) else (grads,)
    return out, (grads if many_in else grads[0])


@_op_by_op_transform
def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """torch.autograd.functional.jvp -> (func(inputs), J v), with J built op by op (mindspore.jvp would
    compile func, where lambdas and Python state fail)."""
    xs, many_in = _as_tuple(inputs)
    if v is None:
        if any(x.size != 1 for x in xs):
            raise MigrationError("torch.autograd.functional.jvp: v may be left out only for single-element inputs")
        v = tuple(ops.ones_like(x) for x in xs)
    vs, _ = _as_tuple(v)
    out, rows = _jacobian_of(func, xs)
    outs, many_out = _as_tuple(out)
    tangents = tuple(sum((block * t).reshape(o.size, -1).sum(-1) for block, t in zip(row, vs)).reshape(o.shape)
                     for row, o in zip(rows, outs))
    return out, (tangents if many_out else tangents[0])


def _hessian_product(func, inputs, v, product):
    """(func(inputs), v^T H for "vhp" or H v for "hvp"), H the hessian (exact, or a MigrationError: op by op
    MindSpore drops second-order terms through reductions)."""
    xs, many_in = _as_tuple(inputs)
    out = func(*xs)
    if v is None:
        if any(x.size != 1 for x in xs):
            raise MigrationError(f"torch.autograd.functional.{product}: v may be left out only for single-element inputs")
        v = tuple(ops.ones_like(x) for x in xs) if many_in else ops.ones_like(xs[0])
    vs, _ = _as_tuple(v)
    h = hessian(func, inputs)   # compiled where func compiles, else checked (see hessian)
    rows = h if many_in else ((h,),)
    n = len(xs)
    if product == "vhp":      # (v^T H)_j = sum_i v_i . H[i][j]
        res = tuple(sum(ops.matmul(vs[i].reshape(1, -1), rows[i][j].reshape(vs[i].size, -1)) for i in range(n))
                    .reshape(xs[j].shape) for j in range(n))
    else:                     # (H v)_i = sum_j H[i][j] . v_j
        res = tuple(sum(ops.matmul(rows[i][j].reshape(-1, vs[j].size), vs[j].reshape(-1, 1)) for j in range(n))
                    .reshape(xs[i].shape) for i in range(n))
    return out, (res if many_in else res[0])


@_second_order_transform
def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """torch.autograd.functional.vhp -> (func(inputs), v^T H) for a single-element func."""
    return _hessian_product(func, inputs, v, "vhp")


@_second_order_transform
def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """torch.autograd.functional.hvp -> (func(inputs), H v) for a single-element func (forward over reverse)."""
    return _hessian_product(func, inputs, v, "hvp")


# ---------------------------------------------------------------- checks
def is_tensor_like(inp):
    """torch.autograd.is_tensor_like: a tensor (MindSpore has no __torch_function__ protocol)."""
    return isinstance(inp, ms.Tensor)


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True,
              fast_mode=False, masked=None):
    """torch.autograd.gradcheck: the gradients MindSpore computes (a custom Function's backward included)
    against central finite differences, for every floating-point tensor input (torch: those with
    requires_grad). True, or RuntimeError / False (raise_exception=False) on a mismatch."""
    xs, _ = _as_tuple(inputs)
    diff = [i for i, x in enumerate(xs) if isinstance(x, ms.Tensor) and x.dtype in (ms.float16, ms.float32, ms.float64)]
    if not diff:
        raise ValueError("gradcheck expects at least one floating-point input tensor")

    def on_diff(*ds):
        full = list(xs)
        for i, d in zip(diff, ds):
            full[i] = d
        return func(*full)
    _, rows = _jacobian_of(on_diff, [xs[i] for i in diff])
    for slot, i in enumerate(diff):
        x = xs[i].asnumpy()
        # one pair of shifted evaluations per input element serves every output
        numericals = [np.zeros((row[slot].size // max(x.size, 1), x.size)) for row in rows]
        for j in range(x.size):
            shifted = []
            for sign in (1.0, -1.0):
                y = x.copy().reshape(-1)
                y[j] += sign * eps
                full = [xs[m] for m in diff]
                full[slot] = ms.Tensor(y.reshape(x.shape))
                outs, _ = _as_tuple(on_diff(*full))
                shifted.append([o.asnumpy().reshape(-1).astype(np.float64) for o in outs])
            for k, numerical in enumerate(numericals):
                numerical[:, j] = (shifted[0][k] - shifted[1][k]) / (2 * eps)
        for k, row in enumerate(rows):
            analytical, numerical = row[slot].asnumpy().reshape(-1, x.size), numericals[k]
            if not np.allclose(analytical, numerical, rtol=rtol, atol=atol):
                if raise_exception:
                    raise RuntimeError(f"Jacobian mismatch for output {k} with respect to input {i},\n"
                                       f"numerical:{numerical}\nanalytical:{analytical}\n")
                return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, gen_non_contig_grad_outputs=False,
                  raise_exception=True, nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """torch.autograd.gradgradcheck: gradcheck of the vector-Jacobian product (v^T J, the first gradient
    as a function of the inputs and of v), so MindSpore's second-order gradients are checked against finite
    differences of its first-order ones. grad_outputs left out: random normal v (torch: random too)."""
    xs, _ = _as_tuple(inputs)
    diff = [i for i, x in enumerate(xs) if isinstance(x, ms.Tensor) and x.dtype in (ms.float16, ms.float32, ms.float64)]
    if not diff:
        raise ValueError("gradgradcheck expects at least one floating-point input tensor")
    outs, _ = _as_tuple(func(*xs))
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        vs = tuple(ms.Tensor(rng.standard_normal(tuple(o.shape)), o.dtype) for o in outs)
    else:
        vs, _ = _as_tuple(grad_outputs)

    def first_gradient(*ds_and_vs):
        ds, v = ds_and_vs[:len(diff)], ds_and_vs[len(diff):]

        def weighted(*ys):
            full = list(xs)
            for i, y in zip(diff, ys):
                full[i] = y
            res, _ = _as_tuple(func(*full))
            return sum((r * w).sum() for r, w in zip(res, v))
        g = ms.grad(weighted, grad_position=tuple(range(len(ds))))(*ds)
        return g if isinstance(g, tuple) else (g,)
    return gradcheck(first_gradient, tuple(xs[i] for i in diff) + tuple(vs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)


# ---------------------------------------------------------------- torch.func
def func_grad(func, argnums=0, has_aux=False):
    """torch.func.grad: the gradient function of a single-element func with respect to argument(s) argnums
    (mindspore.grad); with has_aux func returns (output, aux) and the gradient function (grads, aux)."""
    if not has_aux:
        return ms.grad(func, grad_position=argnums)

    def grad_and_aux(*args):
        held = {}

        def output(*xs):
            out, aux = func(*xs)
            held["aux"] = aux
            return out
        return ms.grad(output, grad_position=argnums)(*args), held["aux"]
    return grad_and_aux


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """torch.vmap / torch.func.vmap: func mapped over a dimension of its arguments, one call per slice, the results
    stacked at out_dims (nested tuples, lists and dicts of tensors too). mindspore.vmap batches each op instead and
    mis-batches some (x.T transposes the mapped dimension too, measured on 2.10); chunk_size only bounds torch's
    memory use."""
    def mapped(*args):
        dims = in_dims if isinstance(in_dims, (tuple, list)) else (in_dims,) * len(args)
        if len(dims) != len(args):
            raise ValueError(f"vmap: in_dims has {len(dims)} entries for {len(args)} arguments")

        def size_of(arg, dim):
            if dim is None:
                return None
            if isinstance(arg, (tuple, list)):
                return next((s for s in (size_of(a, dim) for a in arg) if s is not None), None)
            if isinstance(arg, dict):
                return next((s for s in (size_of(a, dim) for a in arg.values()) if s is not None), None)
            return arg.shape[dim]

        def part(arg, dim, i):
            if dim is None:
                return arg
            if isinstance(arg, (tuple, list)):
                return type(arg)(part(a, dim, i) for a in arg)
            if isinstance(arg, dict):
                return {k: part(a, dim, i) for k, a in arg.items()}
            return arg.narrow(dim, i, 1).squeeze(dim)

        sizes = [s for s in (size_of(a, d) for a, d in zip(args, dims)) if s is not None]
        if not sizes:
            raise ValueError("vmap: at least one argument must be mapped over (in_dims all None)")
        if any(s != sizes[0] for s in sizes):
            raise ValueError(f"vmap: the mapped dimensions differ in size: {sizes}")
        outs = [func(*[part(a, d, i) for a, d in zip(args, dims)]) for i in range(sizes[0])]

        def stack(results, dim):
            first = results[0]
            if isinstance(first, (tuple, list)):
                ds = dim if isinstance(dim, (tuple, list)) else (dim,) * len(first)
                return type(first)(stack([r[k] for r in results], ds[k]) for k in range(len(first)))
            if isinstance(first, dict):
                return {k: stack([r[k] for r in results], dim) for k in first}
            if not isinstance(first, ms.Tensor):
                first = ms.Tensor(first)
                results = [ms.Tensor(r) for r in results]
            return ops.stack(results, dim % (first.ndim + 1))
        return stack(outs, out_dims)
    return mapped
