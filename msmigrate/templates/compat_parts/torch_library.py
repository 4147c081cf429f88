# torch.library custom operators defined in converted code (custom_op, register_fake, register_autograd):
# libraries register them while their modules are imported. The operator runs its Python implementation
# (converted); a fake (shape) implementation only serves torch's tracing, which converted code never runs
# under; an autograd formula is not converted, so an operator that has one stops with MigrationError when
# called rather than let MindSpore differentiate the implementation in its place.
from mindspore.ops.primitive import constexpr as _library_constexpr

TORCH_LIBRARY_OPS = {}


class TorchLibraryOp:
    """One torch.library custom operator ("namespace::name")."""

    def __init__(self, name, fn, where):
        self.name = name
        self.fn = fn
        self.where = where
        self.fake = None
        self.autograd_where = None

    def __call__(self, *args, **kwargs):
        _library_op_refusal(self.name, self.where, self.autograd_where, self.fn is None)
        return self.fn(*args, **kwargs)

    def register_fake(self, fn):
        self.fake = fn
        return fn


@_library_constexpr(check=False)
def _library_op_refusal(name, where, autograd_where, unimplemented):
    """A constexpr: an operator called in a compiled construct stops compiling with this MigrationError (the
    graph parser refuses a raise of MigrationError: "Unsupported exception type")."""
    if autograd_where is not None:
        raise MigrationError(f"torch.library operator {name!r} (defined at {where}) has an autograd "
                             f"formula (register_autograd at {autograd_where}) that was not converted")
    if unimplemented:
        raise MigrationError(f"torch.library operator {name!r} (defined at {where}) has no Python "
                             "implementation to run")


def _library_op(op, where):
    if isinstance(op, TorchLibraryOp):
        return op
    if op not in TORCH_LIBRARY_OPS:
        TORCH_LIBRARY_OPS[op] = TorchLibraryOp(op, None, where)
    return TORCH_LIBRARY_OPS[op]


def library_custom_op(name, fn=None, *, mutates_args=(), device_types=None, schema=None, where="?"):
    """torch.library.custom_op(name, fn, mutates_args=...), also as a decorator."""
    def define(f):
        op = _library_op(name, where)
        op.fn, op.where = f, where
        return op
    return define if fn is None else define(fn)


def library_register_fake(op, fn=None, *, lib=None, _stacklevel=1, allow_override=False, where="?"):
    """torch.library.register_fake: kept on the operator (no tracing in converted code)."""
    def register(f):
        _library_op(op, where).fake = f
        return f
    return register if fn is None else register(fn)


def library_register_autograd(op, backward, *, setup_context=None, lib=None, where="?"):
    """torch.library.register_autograd: noted on the operator, which then refuses to run (not converted)."""
    _library_op(op, where).autograd_where = where
