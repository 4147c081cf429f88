"""Python idioms inside construct that run in PyNative but not in GRAPH mode, rewritten to an
equivalent form GRAPH mode compiles.

`q, k, v = map(lambda t: rearrange(t, ...), qkv)` (the usual einops idiom): MindSpore's GRAPH
mode refuses `map` over a lambda that reads a free variable ("The Map operator don't support
Closure with free variable yet"); a generator expression compiles (and is lazy, like map). So does
`map(f, SEQ)` of a name holding such a lambda (`bucket_fn = lambda x: x.reshape(..., bucket_size, e)`), also in
a module-level function construct calls: `(f(item) for item in SEQ)`.

`k, v = map(partial(ops.cat, axis=-1), ((mk, k), (mv, v)))`: GRAPH mode compiles the forward, but
its gradient of map over a partial concatenates the tuple of zero gradients of the int shapes
("For Operator[Concat], tensors's type 'Tuple[Int64*2]' does not match"); the generator
`(ops.cat(item, axis=-1) for item in ...)` differentiates.

`callable(d)` (lucidrains' `default(val, d)`: `d() if callable(d) else d`): in GRAPH mode a function
passed as an argument is a function graph, and callable() on it fails ("KeyError: 'd'");
_ms_compat.is_callable answers for it too, and as callable() everywhere else.

`all([f(d) for d in x.shape])` / `any(...)` inside construct: GRAPH mode evaluates the builtin by its
Python fallback at run time, without the module's functions ("name 'f' is not defined");
_ms_compat.all_true / any_true are the same loop written where GRAPH mode compiles it.

`functools.reduce(lambda acc, el: acc | (t == el), ids, init)` inside construct (mlm-pytorch's
mask_with_tokens): GRAPH mode evaluates reduce by its Python fallback at run time, without the variables the
lambda reads ("name 't' is not defined"); _ms_compat.fold_left / fold_left_first are reduce's loop written
where GRAPH mode compiles it.

`round(v)` inside construct: GRAPH mode stops compiling ("Cast failed ... Int64Imm", no line named);
_ms_compat.round_even is the same ties-to-even rounding written with floor.

`a ^ b` inside construct (x-transformers: `assert not (self.cross_attend ^ exists(context))`): GRAPH mode
compiles `^` to BitXor, which refuses two bools; _ms_compat.xor is `!=` on two bools, `^` on anything
else (ints, tensors), decided per call on the values' types.

`dict(k=v, ...)` / `dict(**kwargs, k=v)` inside construct (x-transformers' TransformerWrapper:
`kwargs = dict(**kwargs, pos=pos, ...)`, then `self.attn_layers(x, **kwargs)`): GRAPH mode builds a
dict() call by its Python fallback; when a value is known only at run time the dict is a run-time
Python object, the call it feeds runs in the interpreter and fails there ("dict() argument after **
must be a mapping, not tuple", "Nested execution during JIT execution"). A dict display compiles; a
merge is _ms_compat.dict_merge (copy and update, which compile).

`{**a, 'k': v}` / `{'k': v, **a}` inside construct: GRAPH mode compiles the display but builds it wrongly
when a value is known only at run time (measured on 2.10, silently: with `a` an empty **kwargs, d['k'] is
`((),)`; with `a` holding a tensor, its values become tuples; with 'k' also in `a`, the literal wins).
_ms_compat.dict_union(a, {'k': v}) merges the parts by update(), as the display does.

`kwargs.update(k=v)` inside construct (perceiver's PreNorm: `kwargs.update(context=normed_context)`, then
`self.fn(x, **kwargs)`): GRAPH mode stops compiling ("Got an unexpected keyword argument 'context'", naming
no line of the program); `kwargs.update({'k': v})` compiles and gives PyNative's values and gradients,
an empty **kwargs included (measured on 2.10). Only for a dict the function owns (its **kwargs, or a name it
binds to dict displays and dict() calls only): another object's update(k=v) (tqdm's `update(n=1)`) takes
no mapping."""
from __future__ import annotations

from typing import Optional, Set

import libcst as cst

from .visitor_bases import BindingTargets, ClassScopes, ScopeLocalVisitor


def map_lambda_as_generator(call: cst.Call) -> Optional[cst.GeneratorExp]:
    """`map(lambda t: EXPR, SEQ)` -> `(EXPR for t in SEQ)` (lazy, as map is), or None when the call
    is not of that form (several iterables, default arguments, *args, keywords)."""
    if not (isinstance(call.func, cst.Name) and call.func.value == "map" and len(call.args) == 2):
        return None
    fn, seq = call.args
    if fn.keyword is not None or seq.keyword is not None or fn.star or seq.star:
        return None
    lam = fn.value
    if not isinstance(lam, cst.Lambda):
        return None
    params = lam.params
    if (len(params.params) != 1 or params.posonly_params or params.kwonly_params or params.star_kwarg
            or not isinstance(params.star_arg, cst.MaybeSentinel) or params.params[0].default is not None):
        return None
    return cst.GeneratorExp(elt=lam.body, for_in=cst.CompFor(target=params.params[0].name, iter=seq.value))


def map_name_as_generator(call: cst.Call, item: str) -> Optional[cst.GeneratorExp]:
    """`map(f, SEQ)` with f a name or an attribute (linear-attention-transformer's `bucket_fn = lambda x: ...;
    map(bucket_fn, (q, k, v))`) -> `(f(item) for item in SEQ)`, or None when the call is not of that form."""
    if not (isinstance(call.func, cst.Name) and call.func.value == "map" and len(call.args) == 2):
        return None
    fn, seq = call.args
    if fn.keyword is not None or seq.keyword is not None or fn.star or seq.star \
            or not isinstance(fn.value, (cst.Name, cst.Attribute)):
        return None
    return cst.GeneratorExp(elt=cst.Call(func=fn.value, args=[cst.Arg(cst.Name(item))]),
                            for_in=cst.CompFor(target=cst.Name(item), iter=seq.value))


def map_partial_as_generator(call: cst.Call, item: str) -> Optional[cst.GeneratorExp]:
    """`map(functools.partial(F, *A, **K), SEQ)` -> `(F(*A, item, **K) for item in SEQ)`, or None when the call is
    not of that form (several iterables, starred or keyword arguments to map or partial)."""
    if not (isinstance(call.func, cst.Name) and call.func.value == "map" and len(call.args) == 2):
        return None
    fn, seq = call.args
    if fn.keyword is not None or seq.keyword is not None or fn.star or seq.star:
        return None
    part = fn.value     # the caller has resolved part.func to functools.partial
    if not (isinstance(part, cst.Call) and part.args):
        return None
    target, *bound = part.args
    if target.keyword is not None or target.star or any(a.star for a in bound):
        return None
    positional = [a for a in bound if a.keyword is None]
    keywords = [a for a in bound if a.keyword is not None]
    if [a.keyword is None for a in bound] != [True] * len(positional) + [False] * len(keywords):
        return None
    args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in positional] + [cst.Arg(cst.Name(item))] + \
        [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in keywords]
    return cst.GeneratorExp(elt=cst.Call(func=target.value, args=args),
                            for_in=cst.CompFor(target=cst.Name(item), iter=seq.value))


def callable_graph_safe(call: cst.Call, compat: str) -> Optional[cst.Call]:
    """`callable(x)` -> `<compat>.is_callable(x)`, or None when the call is not of that form."""
    if not (isinstance(call.func, cst.Name) and call.func.value == "callable" and len(call.args) == 1):
        return None
    if call.args[0].keyword is not None or call.args[0].star:
        return None
    return call.with_changes(func=cst.Attribute(value=cst.Name(compat), attr=cst.Name("is_callable")))


def dict_call_graph_safe(call: cst.Call, compat: str) -> Optional[cst.BaseExpression]:
    """`dict(k=v, ...)` -> `{'k': v, ...}`; `dict(**a, k=v, **b)` -> `<compat>.dict_merge(a, k=v, **b)`
    (the keys in the same order, a key given twice a TypeError as in dict()); None when the call has
    a positional argument (a mapping or pairs, kept) or no argument."""
    if not (isinstance(call.func, cst.Name) and call.func.value == "dict" and call.args):
        return None
    if any(a.keyword is None and a.star != "**" for a in call.args):
        return None
    if all(a.keyword is not None for a in call.args):
        last = len(call.args) - 1
        return cst.Dict(elements=[
            cst.DictElement(key=cst.SimpleString(repr(a.keyword.value)), value=a.value,
                            comma=cst.MaybeSentinel.DEFAULT if i == last else
                            cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            for i, a in enumerate(call.args)], lpar=call.lpar, rpar=call.rpar)
    first, rest = call.args[0], list(call.args[1:])
    if first.star == "**":
        base = first.with_changes(star="", whitespace_after_star=cst.SimpleWhitespace(""))
    else:                       # `dict(k=v, **a)`: nothing before the first keyword
        base, rest = cst.Arg(cst.Dict(elements=[]), comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))), \
            list(call.args)
    return call.with_changes(func=cst.Attribute(value=cst.Name(compat), attr=cst.Name("dict_merge")),
                             args=[base, *rest])


def dict_display_graph_safe(display: cst.Dict, compat: str) -> Optional[cst.Call]:
    """`{**a, 'k': v, **b}` -> `<compat>.dict_union(a, {'k': v}, b)` (each run of plain items a display of
    its own, the parts in source order), or None when the display unpacks nothing."""
    if not any(isinstance(el, cst.StarredDictElement) for el in display.elements):
        return None
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    parts, run = [], []

    def close_run() -> None:
        if run:
            items = [el.with_changes(comma=comma) for el in run[:-1]] + \
                [run[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)]
            parts.append(cst.Dict(elements=items))
            run.clear()
    for el in display.elements:
        if isinstance(el, cst.StarredDictElement):
            close_run()
            parts.append(el.value)
        else:
            run.append(el)
    close_run()
    args = [cst.Arg(part, comma=comma if i < len(parts) - 1 else cst.MaybeSentinel.DEFAULT)
            for i, part in enumerate(parts)]
    return cst.Call(func=cst.Attribute(value=cst.Name(compat), attr=cst.Name("dict_union")), args=args,
                    lpar=display.lpar, rpar=display.rpar)


# `n ** -1` on two Python ints in construct gives 0 in GRAPH mode (2.10), silently; _ms_compat.power raises
# an int to a negative int as a float. An exponent written as a number other than a negative int is
# raised right as it is.
def _plain_exponent(exp: cst.BaseExpression) -> bool:
    if isinstance(exp, (cst.Integer, cst.Float)):
        return True
    return isinstance(exp, cst.UnaryOperation) and isinstance(exp.operator, (cst.Minus, cst.Plus)) \
        and isinstance(exp.expression, cst.Float)


def power_graph_safe(node, compat: str) -> Optional[cst.Call]:
    """`a ** b` / `pow(a, b)` -> `<compat>.power(a, b)`, or None when it is neither or b is a number other
    than a negative int (`x ** 2`, `d ** -0.5`)."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Power):
        base, exp = node.left, node.right
    elif (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "pow"
          and len(node.args) == 2 and not any(a.keyword or a.star for a in node.args)):
        base, exp = node.args[0].value, node.args[1].value
    else:
        return None
    if _plain_exponent(exp):
        return None
    return cst.Call(func=cst.Attribute(value=cst.Name(compat), attr=cst.Name("power")),
                    args=[cst.Arg(base, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))), cst.Arg(exp)],
                    lpar=node.lpar, rpar=node.rpar)


# `a // b` / `a % b` on two Python ints in compiled code: GRAPH mode (2.10) folds them through a float32
# quotient, floor(float32(a) / float32(b)), wrong from about 2**24 on, silently (measured: `(2**24 + 1) % 97`
# is 97, `(3 * (2**24 + 1)) // 7` one too many). _ms_compat.floordiv / mod correct that quotient with int
# arithmetic (+, -, * and comparisons of ints are exact there), and keep the operator for anything else.
INT_DIVISIONS = {cst.FloorDivide: "floordiv", cst.Modulo: "mod"}
_STRINGS = (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)


def _float_literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation):
        node = node.expression
    return isinstance(node, (cst.Float, cst.Imaginary))


def int_division_graph_safe(left: cst.BaseExpression, operator, right: cst.BaseExpression,
                            compat: str) -> Optional[cst.Call]:
    """`a // b` / `a % b` -> `<compat>.floordiv(a, b)` / `<compat>.mod(a, b)`, or None for another operator,
    `"..." % args` (formatting) or a float literal operand (a float's division is not an int's)."""
    helper = INT_DIVISIONS.get(type(operator))
    if helper is None or isinstance(left, _STRINGS) or _float_literal(left) or _float_literal(right):
        return None
    return cst.Call(func=cst.Attribute(value=cst.Name(compat), attr=cst.Name(helper)),
                    args=[cst.Arg(left.with_changes(lpar=[], rpar=[]) if _bare(left) else left,
                                  comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                          cst.Arg(right.with_changes(lpar=[], rpar=[]) if _bare(right) else right)])


def training_loop_functions(module: cst.Module) -> Set[str]:
    """Module-level functions that call `.backward(...)`: training loops, whose statements run in Python (only
    the step msmigrate/train_loop.py takes out of them is compiled): `batch_idx % args.log_interval` there
    keeps its operator."""
    found: Set[str] = set()

    class _Backward(cst.CSTVisitor):
        hit = False

        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Attribute) and node.func.attr.value == "backward":
                self.hit = True
    for st in module.body:
        if isinstance(st, cst.FunctionDef):
            v = _Backward()
            st.visit(v)
            if v.hit:
                found.add(st.name.value)
    return found


def _bare(node: cst.BaseExpression) -> bool:
    """Parentheses that only grouped an operand: not needed as a call's argument."""
    return bool(getattr(node, "lpar", None)) and not isinstance(node, (cst.Tuple, cst.GeneratorExp, cst.NamedExpr, cst.Yield))


_GRAPH_SAFE_REDUCTIONS = {"all": "all_true", "any": "any_true", "round": "round_even"}


def all_any_graph_safe(call: cst.Call, compat: str) -> Optional[cst.Call]:
    """`all(x)` / `any(x)` / `round(x)` -> `<compat>.all_true(x)` / `any_true(x)` / `round_even(x)`, or None
    when the call is not of that form (the builtin with one positional argument)."""
    if not (isinstance(call.func, cst.Name) and call.func.value in _GRAPH_SAFE_REDUCTIONS
            and len(call.args) == 1):
        return None
    if call.args[0].keyword is not None or call.args[0].star:
        return None
    target = _GRAPH_SAFE_REDUCTIONS[call.func.value]
    return call.with_changes(func=cst.Attribute(value=cst.Name(compat), attr=cst.Name(target)))


def reduce_graph_safe(call: cst.Call, compat: str) -> Optional[cst.Call]:
    """`functools.reduce(f, seq, init)` / `reduce(f, seq)` -> `<compat>.fold_left(f, seq, init)` /
    `fold_left_first(f, seq)`, or None when the call is not of that form (keywords, stars)."""
    if len(call.args) not in (2, 3) or any(a.keyword is not None or a.star for a in call.args):
        return None
    target = "fold_left" if len(call.args) == 3 else "fold_left_first"
    return call.with_changes(func=cst.Attribute(value=cst.Name(compat), attr=cst.Name(target)))


def xor_graph_safe(node: cst.BinaryOperation, compat: str) -> Optional[cst.Call]:
    """`a ^ b` -> `<compat>.xor(a, b)`, or None when the operation is not `^`."""
    if not isinstance(node.operator, cst.BitXor):
        return None
    return cst.Call(func=cst.Attribute(value=cst.Name(compat), attr=cst.Name("xor")),
                    args=[cst.Arg(node.left, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                          cst.Arg(node.right)],
                    lpar=node.lpar, rpar=node.rpar)


# `seq_len, device = x.shape[1], x.device` in construct (x-transformers' positional embeddings): in GRAPH
# mode a tensor's device is a negligible value that poisons the whole tuple, and later uses of seq_len fail
# ("For 'Cast', the input 'dtype' expect a type, but got AbstractNegligible" in ops.arange(seq_len)).
# As one assignment per name, on the same line, each name gets its own value.
def _device_read(node) -> bool:
    """`x.device`, or the converted read `_ms_compat.device_of(x)` (tensor_reads.py)."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        return node.func.attr.value == "device_of"
    return isinstance(node, cst.Attribute) and node.attr.value == "device"


def split_device_tuple(assign: cst.Assign) -> Optional[list]:
    """`a, b = e1, x.device` -> [`a = e1`, `b = x.device`], or None when the assignment is not a plain
    tuple of names from a tuple of values, one of them a `.device` read, none reading the names. One
    starred value (`b, c, h, w, device = *img.shape, img.device`, lucidrains' diffusion) takes the names
    the others leave: `b, c, h, w = img.shape` (which checks the length as the unpacking did)."""
    if len(assign.targets) != 1:
        return None
    target, value = assign.targets[0].target, assign.value
    if not (isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, cst.Tuple)
            and len(target.elements) > 1):
        return None
    names = []
    for el in target.elements:
        if not isinstance(el, cst.Element) or not isinstance(el.value, cst.Name):
            return None
        names.append(el.value.value)
    starred = [i for i, el in enumerate(value.elements) if isinstance(el, cst.StarredElement)]
    values = [el.value for el in value.elements]
    if len(set(names)) != len(names) or len(starred) > 1:
        return None
    width = len(names) - (len(values) - 1) if starred else 1
    if (width < 1) or (not starred and len(values) != len(names)):
        return None
    if not any(_device_read(v) for i, v in enumerate(values) if i not in starred):
        return None
    read = set()

    class _Reads(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            read.add(node.value)

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            node.value.visit(self)       # `.device` names no local
            return False
    value.visit(_Reads())
    if read & set(names):
        return None
    out, k = [], 0
    for i, v in enumerate(values):
        if i in starred:
            group = names[k:k + width]
            k += width
            tgt = cst.Tuple(elements=[cst.Element(cst.Name(n)) for n in group], lpar=[], rpar=[]) \
                if len(group) > 1 else cst.Tuple(elements=[cst.Element(cst.Name(group[0]), comma=cst.Comma())],
                                                 lpar=[], rpar=[])
            out.append(cst.Assign(targets=[cst.AssignTarget(tgt)], value=v))
        else:
            out.append(cst.Assign(targets=[cst.AssignTarget(cst.Name(names[k]))], value=v))
            k += 1
    return out


class _DeviceTuples(ClassScopes):
    def __init__(self) -> None:
        super().__init__()
        self.construct = 0

    def visit_FunctionDef(self, node) -> None:
        if self.classes and node.name.value in ("construct", "forward"):
            self.construct += 1

    def leave_FunctionDef(self, original, updated):
        if self.classes and original.name.value in ("construct", "forward"):
            self.construct -= 1
        return updated

    def leave_SimpleStatementLine(self, original, updated):
        if not self.construct:
            return updated
        body, changed = [], False
        for small in updated.body:
            split = split_device_tuple(small) if isinstance(small, cst.Assign) else None
            if split:
                body.extend(split)
                changed = True
            else:
                body.append(small)
        if not changed:
            return updated
        body = [s.with_changes(semicolon=cst.MaybeSentinel.DEFAULT) for s in body]
        return updated.with_changes(body=body)


def split_device_tuples(module: cst.Module) -> cst.Module:
    """The pass over converted code: every such assignment of a construct split (on its own line)."""
    return module.visit(_DeviceTuples())


def set_membership_as_tuple(target: cst.ComparisonTarget) -> Optional[cst.ComparisonTarget]:
    """`x in {2, 3}` -> `x in (2, 3)` (x-transformers: `assert condition.ndim in {2, 3}`): GRAPH mode has
    no set expression ("Unsupported expression 'Set'"); membership in the displayed values is the same
    question. None when the comparison is not `in`/`not in` a set display without starred items."""
    if not (isinstance(target.operator, (cst.In, cst.NotIn)) and isinstance(target.comparator, cst.Set)):
        return None
    items = target.comparator.elements
    if any(isinstance(el, cst.StarredElement) for el in items):
        return None
    elements = [el.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                if i < len(items) - 1 else el.with_changes(comma=cst.MaybeSentinel.DEFAULT)
                for i, el in enumerate(items)]
    if len(elements) == 1:
        elements = [elements[0].with_changes(comma=cst.Comma())]
    return target.with_changes(comparator=cst.Tuple(elements=elements, lpar=[cst.LeftParen()],
                                                    rpar=[cst.RightParen()]))


# `tuple(i for b in blocks for i in range(b))` in construct or a function it calls (x-transformers'
# layer execution order): GRAPH mode takes one `for` per comprehension ("The 'generators' supports 1
# 'comprehension' in ListComp/GeneratorExp, but got 2"). Nested one-`for` comprehensions, flattened by
# _ms_compat.flatten, give the same items in the same order. A generator becomes a list, so only where
# it is consumed whole: the sole argument of one of these builtins.
CONSUMERS = {"tuple", "list", "sum", "max", "min", "sorted", "set", "frozenset", "len"}


def _one_for(elt, comp: cst.CompFor, compat: str) -> cst.BaseExpression:
    inner = comp.inner_for_in
    single = comp.with_changes(inner_for_in=None)
    if inner is None:
        return cst.ListComp(elt=elt, for_in=single)
    return cst.Call(func=cst.Attribute(value=cst.Name(compat), attr=cst.Name("flatten")),
                    args=[cst.Arg(cst.ListComp(elt=_one_for(elt, inner, compat), for_in=single))])


def single_for_comprehension(node, compat: str) -> Optional[cst.BaseExpression]:
    """`[E for a in A for b in B]` -> `<compat>.flatten([[E for b in B] for a in A])`; a generator the same
    way (the caller checks it is consumed whole); None when there is one `for` or an async one."""
    if not isinstance(node, (cst.ListComp, cst.GeneratorExp)) or node.for_in.inner_for_in is None:
        return None
    comp = node.for_in
    while comp is not None:
        if comp.asynchronous is not None:
            return None
        comp = comp.inner_for_in
    out = _one_for(node.elt, node.for_in, compat)
    return out.with_changes(lpar=node.lpar, rpar=node.rpar) if isinstance(node, cst.ListComp) else out


# `[a for a in (1, 2) if a]` in GRAPH mode (MindSpore 2.10) gives [1]: a comprehension's condition that is
# a plain value, not a comparison, is tested wrongly (silently: items go missing). bool(a) is tested right.
def comprehension_condition_as_bool(comp_if: cst.CompIf) -> Optional[cst.CompIf]:
    """`if v` in a comprehension -> `if bool(v)`, or None when v is already a comparison, a `not`, or a
    call of bool()."""
    test = comp_if.test
    if isinstance(test, cst.Comparison) or (isinstance(test, cst.UnaryOperation)
                                              and isinstance(test.operator, cst.Not)):
        return None
    if isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "bool":
        return None
    return comp_if.with_changes(test=cst.Call(func=cst.Name("bool"), args=[cst.Arg(test.with_changes(
        lpar=[], rpar=[]) if hasattr(test, "lpar") else test)]))


class _DictNames(BindingTargets, ScopeLocalVisitor):
    """The names one function binds, each with whether every value bound to it is a dict display or dict()."""
    binders = (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.For, cst.CompFor, cst.Del, cst.NamedExpr,
               cst.WithItem, cst.ExceptHandler)

    def __init__(self) -> None:
        self.dict_only = {}

    def bind(self, target, value) -> None:
        if isinstance(target, cst.Name):
            made = isinstance(value, cst.Dict) or (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)
                                                   and value.func.value == "dict")
            self.dict_only[target.value] = self.dict_only.get(target.value, True) and made


class _KeywordUpdates(ScopeLocalVisitor):
    def __init__(self, dicts: Set[str]) -> None:
        self.dicts, self.found = dicts, set()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if (isinstance(func, cst.Attribute) and func.attr.value == "update" and isinstance(func.value, cst.Name)
                and func.value.value in self.dicts and node.args
                and all(a.keyword is not None and not a.star for a in node.args)):
            self.found.add(id(node))


def keyword_updates(function: cst.FunctionDef) -> Set[int]:
    """ids of the calls `d.update(k=v, ...)` (keywords only) in the function's own body whose d is a dict the
    function owns: its **kwargs, or a name it binds to dict displays and dict() calls only."""
    names = _DictNames()
    function.body.visit(names)
    star = function.params.star_kwarg
    dicts = {n for n, made in names.dict_only.items() if made}
    if isinstance(star, cst.Param) and names.dict_only.get(star.name.value, True):
        dicts.add(star.name.value)
    if not dicts:
        return set()
    v = _KeywordUpdates(dicts)
    function.body.visit(v)
    return v.found


def keyword_update_as_display(call: cst.Call) -> cst.Call:
    """`d.update(k=v, ...)` -> `d.update({'k': v, ...})`: the same change to a dict."""
    return call.with_changes(args=[cst.Arg(dict_call_graph_safe(
        call.with_changes(func=cst.Name("dict"), lpar=[], rpar=[]), ""))])


# `type(x) in (tuple, list)` / `type(x) is tuple` (siamese-triplet's trainer.py: `if type(outputs) not in (tuple,
# list): outputs = (outputs,)` in the loop body that becomes the train step): MindSpore's graph compiler does not
# fold a comparison of type(x), so the `if` becomes a run-time switch whose branches return a tuple and a tensor
# ("Cannot join the return values of different branches", or "Primal graph ... is not a ValueNode of Parameter"
# under a gradient); isinstance() and hasattr() it folds (compat_parts/graph_builtins.py exact_type_in). `type(x)` is
# exactly tuple or list where x is an instance of one and no named tuple (a named tuple's class has `_fields`); a
# subclass of tuple or list of another kind is taken for the class itself (in torch code: torch.Size, which the
# conversion makes a plain tuple anyway).
_EXACT_SEQUENCES = ("tuple", "list")


def _exact_sequence_types(node: cst.BaseExpression) -> Optional[list]:
    if isinstance(node, cst.Name) and node.value in _EXACT_SEQUENCES:
        return [node.value]
    if isinstance(node, (cst.Tuple, cst.List)) and node.elements \
            and all(isinstance(e, cst.Element) and isinstance(e.value, cst.Name)
                    and e.value.value in _EXACT_SEQUENCES for e in node.elements):
        return [e.value.value for e in node.elements]
    return None


def exact_type_test(node: cst.Comparison, shadowed, compat: str) -> Optional[cst.BaseExpression]:
    """`type(x) in (tuple, list)`, `type(x) not in [...]`, `type(x) == tuple`, `is`, `!=`, `is not`:
    `_ms_compat.exact_type_in(x, (tuple, list))` (x read once, as before: the train-loop rewrite counts reads), or
    its negation; None for anything else (other types, `type` or the classes rebound: shadowed(name) is True)."""
    if len(node.comparisons) != 1:
        return None
    left, target = node.left, node.comparisons[0]
    if not (isinstance(left, cst.Call) and isinstance(left.func, cst.Name) and left.func.value == "type"
            and len(left.args) == 1 and left.args[0].keyword is None and not left.args[0].star):
        return None
    op = target.operator
    if isinstance(op, (cst.In, cst.NotIn)):
        if not isinstance(target.comparator, (cst.Tuple, cst.List)):
            return None
        types = _exact_sequence_types(target.comparator)
    elif isinstance(op, (cst.Equal, cst.Is, cst.NotEqual, cst.IsNot)):
        types = _exact_sequence_types(target.comparator) if isinstance(target.comparator, cst.Name) else None
    else:
        return None
    if types is None or any(shadowed(n) for n in ["type"] + types):
        return None
    kinds = ", ".join(dict.fromkeys(types))
    kinds = f"({kinds},)" if len(set(types)) == 1 else f"({kinds})"
    call = cst.parse_expression(f"{compat}.exact_type_in(_X, {kinds})")
    call = call.with_changes(args=[call.args[0].with_changes(value=left.args[0].value), call.args[1]])
    if isinstance(op, (cst.NotIn, cst.NotEqual, cst.IsNot)):
        return cst.UnaryOperation(operator=cst.Not(), expression=call, lpar=[cst.LeftParen()],
                                  rpar=[cst.RightParen()])
    return call
