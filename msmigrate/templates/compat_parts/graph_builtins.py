# Python builtins that GRAPH mode cannot evaluate on every argument.
#
# In a compiled construct or train step, a function or lambda passed as an argument is a
# function graph, not a Python object: `callable(d)` on it fails ("KeyError: 'd'", lucidrains'
# `default(val, d)`), and isinstance(d, object) is False there, which Python never says.


def is_callable(obj):
    """callable(obj), also inside GRAPH mode (where a function argument is a function graph)."""
    if isinstance(obj, (ms.Tensor, int, float, bool, str, tuple, list, dict, type(None))):
        return False
    if not isinstance(obj, object):   # only a function graph (GRAPH mode) is no object
        return True
    return callable(obj)


# all()/any() over a list or generator inside a compiled construct are evaluated by MindSpore's
# Python fallback at run time, where the module's own functions are not defined ("name
# 'divisible_by' is not defined" for lucidrains' `assert all([divisible_by(d, f) for d in x.shape])`);
# a loop over the values compiles (unrolled for a constant list, as the shapes are).
def fold_left(function, values, initial):
    """functools.reduce(function, values, initial), also inside GRAPH mode (where reduce runs by the Python
    fallback, without the variables a lambda reads)."""
    acc = initial
    for value in values:
        acc = function(acc, value)
    return acc


def fold_left_first(function, values):
    """functools.reduce(function, values), also inside GRAPH mode."""
    values = tuple(values)
    if not values:
        raise TypeError("reduce() of empty iterable with no initial value")
    acc = values[0]
    for value in values[1:]:
        acc = function(acc, value)
    return acc


def all_true(values):
    """all(values), also inside GRAPH mode."""
    for value in values:
        if not value:
            return False
    return True


def any_true(values):
    """any(values), also inside GRAPH mode."""
    for value in values:
        if value:
            return True
    return False


# `a ^ b` on two Python bools (x-transformers: `assert not (self.cross_attend ^ exists(context))`):
# GRAPH mode compiles it to BitXor, which takes integers only ("only integer types are supported,
# but got ... BoolImm"); on bools xor is `!=`. Anything else (ints, tensors) keeps `^`.
def xor(a, b):
    """a ^ b, also on two bools inside GRAPH mode."""
    if isinstance(a, bool) and isinstance(b, bool):
        return a != b
    return a ^ b


# `d ** -1` / pow(d, -1) on two Python ints in a compiled construct (`x * self.dim ** -1`): GRAPH mode
# (2.10) gives the int 0 where Python gives the float 0.25, silently; a float base is raised right.
def power(base, exp):
    """base ** exp, also on two ints inside GRAPH mode (a negative int exponent gives a float)."""
    if isinstance(base, int) and isinstance(exp, int) and exp < 0:
        return float(base) ** exp
    return base ** exp


# `a // b` / `a % b` on two ints in a compiled construct: GRAPH mode (2.10) divides through float32, wrong from
# about 2**24 on, silently (`(2**24 + 1) % 97` is 97). Ints add, multiply and compare exactly there: dividing
# the remainder again corrects the quotient, and the remainder's sign settles the last step.
def floordiv(a, b):
    """a // b, also on two ints inside GRAPH mode."""
    if not (isinstance(a, int) and isinstance(b, int)):
        return a // b
    q = a // b
    for _ in range(3):                  # each round divides the quotient's error by about 2**22
        q = q + (a - q * b) // b
    r = a - q * b
    if (b > 0 and r < 0) or (b < 0 and r > 0):
        return q - 1
    if (b > 0 and r >= b) or (b < 0 and r <= b):
        return q + 1
    return q


def mod(a, b):
    """a % b, also on two ints inside GRAPH mode (the sign of b, as Python's)."""
    if isinstance(a, int) and isinstance(b, int):
        return a - floordiv(a, b) * b
    return a % b


# `round(v)` in a compiled construct (`int(round(h * scale))`): GRAPH mode (2.10) stops compiling with
# "Cast failed, original value: 2, type: Int64Imm", naming no line; the same ties-to-even rounding,
# written with floor, compiles. torch's Tensor has no __round__: round(tensor) is a TypeError there too.
def round_even(value):
    """round(value) with one argument, also inside GRAPH mode: the nearest int, ties to the even one."""
    if isinstance(value, ms.Tensor):
        raise TypeError("type Tensor doesn't define __round__ method")
    low = math.floor(value)
    rest = value - low
    if rest > 0.5 or (rest == 0.5 and low % 2 == 1):
        return int(low) + 1
    return int(low)


# `dict(**kwargs, k=v)` in a compiled construct (msmigrate/graph_idioms.py): GRAPH mode builds a
# dict() call by its Python fallback, at run time when a value is known only then, and the call the
# dict feeds fails in the interpreter. copy() and update() compile (a loop of `out[k] = v` does not
# with such a value: "'tuple' object does not support item assignment", measured on 2.10).
def dict_merge(base, **more):
    """dict(**base, **more), also inside GRAPH mode: base's keys first, a key in both a TypeError."""
    for key in more:
        if key in base:
            raise TypeError(f"dict() got multiple values for keyword argument '{key}'")
    return dict_union(base, more)


# `{**a, 'k': v}` / `{'k': v, **a}` in a compiled construct (msmigrate/graph_idioms.py): GRAPH mode builds
# such a display wrongly when a value is known only at run time (measured on 2.10: with `a` an empty
# **kwargs, d['k'] is `((),)`; with `a` holding a tensor its values become tuples; with `'k'` also in
# `a`, the literal wins where Python keeps a's). An empty **kwargs is an empty tuple there, which
# neither copy() nor `out[k] = v` take, so empty parts are skipped; update() compiles.
def dict_union(*parts):
    """{**parts[0], **parts[1], ...}, also inside GRAPH mode: keys in first-seen order, the last value wins."""
    merged = {}
    for part in parts:
        if part:
            merged.update(part)     # any mapping, as `**m` takes
    return merged

# A comprehension with two `for`s in a compiled graph: GRAPH mode takes one `for` per comprehension,
# so msmigrate nests them and flattens the parts here (items in the same order).
def flatten(parts):
    """[item for part in parts for item in part], also inside GRAPH mode."""
    out = []
    for part in parts:
        for item in part:
            out.append(item)
    return out


# `it = iter(xs)` read only by `next(it, d)` in a compiled construct (msmigrate/graph_iters.py):
# GRAPH mode's next() gives (item, rest) and takes no default, so the iterator is the sequence
# itself, read by indexing and slicing; a list, tuple or tensor as it is, anything else as a tuple.
def graph_iter(values):
    """The sequence iter(values) walks, as something to index and slice, also inside GRAPH mode."""
    if isinstance(values, (list, tuple, ms.Tensor)):
        return values
    return tuple(values)


# `mems = mems.copy() if exists(mems) else [None] * n` in a compiled construct, the argument a list
# (msmigrate/graph_pops.py list_copies): GRAPH mode's list.copy() gives something that fails when
# indexed in a loop ("'int' object is not subscriptable"); list(x) is the same copy and compiles.
def list_copy(values):
    """values.copy(), also of a list inside GRAPH mode."""
    if isinstance(values, list):
        return list(values)
    return values.copy()


# functools.partial held by a Cell (x-transformers' `self.attn_fn = partial(softmax_fn, dtype=...)`):
# compiled, MindSpore calls a functools.partial object through its Python fallback, whose result has
# no static shape and no gradient (measured on 2.10: d/dx 0 where PyNative gives the true value). A
# jit_class is compiled like the rest of the graph; call-time keywords override bound ones as in
# functools (a loop, since GRAPH mode cannot merge two dicts with `{**a, **b}`). It derives from
# functools.partial (func, args, keywords kept there): `isinstance(layer, functools.partial)` answers as
# in torch code (timm's get_norm_act_layer asserts it, then rebinds the keywords).
import functools as _functools


@ms.jit_class
class partial(_functools.partial):
    """functools.partial(func, *args, **keywords), also called inside GRAPH mode. A partial of a partial is one
    partial of the inner one's function, as functools flattens it (timm's get_norm_act_layer unwraps `.func` once
    and reads its `__name__`)."""

    def __new__(cls, func, /, *args, **keywords):
        if isinstance(func, _functools.partial):
            args, keywords, func = func.args + args, {**func.keywords, **keywords}, func.func
        return super().__new__(cls, func, *args, **keywords)

    def __call__(self, *args, **keywords):
        kept = {}
        for k, v in self.keywords.items():
            if k not in keywords:
                kept[k] = v
        return self.func(*self.args, *args, **kept, **keywords)


# `type(x) in (tuple, list)` inside a compiled step or construct: MindSpore does not fold a comparison of type(x),
# so `if type(out) not in (tuple, list): out = (out,)` became a run-time switch between a tuple and a tensor
# ("Cannot join the return values of different branches"); isinstance() and hasattr() it folds.
def exact_type_in(obj, kinds):
    """type(obj) in kinds for kinds among tuple and list, also inside GRAPH mode: an instance of one that is no
    named tuple (whose class has _fields)."""
    return isinstance(obj, kinds) and not hasattr(obj, "_fields")
