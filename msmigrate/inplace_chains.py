"""Chains of torch in-place methods, rewritten as torch code the main pass converts, before conversion.

torch's `x.op_(...)` returns x itself, so a statement

    mu.mul_(momentum).add_(dp)                    # an optimizer's momentum buffer (dino's LARS)

is exactly the statements `mu.mul_(momentum); mu.add_(dp)` (Python evaluates `dp` after the first call
returned), which the main pass converts one by one (a rebinding, or a write into the tensor where other
holders share it: inplace_holders.py). They stay on the one line, so every later line keeps its number.

A chain on a fresh copy changes nothing anyone else holds:

    w = distances.clone().div_(T).exp_()

is `distances.clone().div(T).exp()`. Both only for the methods whose out-of-place twin (the name without
"_") takes the same arguments (detached_updates._CHAINABLE, triu_ and tril_). A torch factory's tensor, filled or
not, is such a copy: whisper's `torch.empty(n, n).fill_(-np.inf).triu_(1)` is `torch.empty(n, n).fill_(-np.inf)
.triu(1)` (the fill the main pass converts).

A buffer resized and cleared at once, `one_hot.resize_(b * k, c).zero_()` (or `.fill_(v)`), on a local that
nothing else holds, is `one_hot = one_hot.new_zeros((b * k, c))`: the values, shape and dtype torch leaves."""
from __future__ import annotations

import re
from typing import List, Optional, Tuple

import libcst as cst

from .detached_updates import _CHAINABLE
from .held_items import item
from .held_tensor_paths import dict_bound_names, dict_item, held_tensor

# the links of a chain: the methods whose out-of-place twin takes the same arguments, and triangles
# (`torch.empty(n, n).fill_(-np.inf).triu_(1)`, whisper's causal mask)
_LINKS = _CHAINABLE | frozenset(("triu_", "tril_"))
# torch's factories: a new tensor nobody else holds
_FACTORIES = frozenset(("empty", "zeros", "ones", "full", "tensor", "rand", "randn", "randint", "arange", "linspace",
                        "eye", "empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like"))

_CHAIN = re.compile(r"[)\]]\s*\.\s*[a-z_0-9]+_\(")


def might_chain_inplace(source: str) -> bool:
    return bool(_CHAIN.search(source))


def _links(node: cst.BaseExpression) -> Tuple[List[cst.Call], cst.BaseExpression]:
    """The in-place calls of `R.m1_(..).m2_(..)` innermost first, and R."""
    links: List[cst.Call] = []
    while (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
           and node.func.attr.value in _LINKS):
        links.append(node)
        node = node.func.value
    links.reverse()
    return links, node


# methods whose result is always a new tensor though they have no in-place twin: reductions, products
_NEW_RESULTS = frozenset(("norm", "sum", "mean", "prod", "std", "var", "amax", "amin", "logsumexp", "matmul", "mm",
                          "bmm", "mv", "outer", "cumsum", "cumprod",
                          # copies, never views (torch.flip's documentation: "makes a copy of input's data"):
                          # timm Mixup's `x.flip(0).mul_(1. - lam)`
                          "flip", "fliplr", "flipud", "roll", "rot90", "repeat", "repeat_interleave", "index_select",
                          "gather", "masked_select", "new_zeros", "new_ones", "new_full", "new_empty", "new_tensor"))
# functional activations (`F.relu6(x + 3.)`, hard_swish's inner value before `.div_(6.)`): a new tensor, unless
# called with inplace=True
_NEW_ACTIVATIONS = frozenset(("relu6", "gelu", "silu", "softplus", "elu", "selu", "celu", "leaky_relu", "hardtanh",
                              "hardsigmoid", "hardswish", "mish", "softmax", "log_softmax", "softsign", "tanhshrink",
                              "logsigmoid"))
# methods whose result is a view of their receiver (or a copy of it): new where the receiver is
_VIEWS = frozenset(("view", "reshape", "unsqueeze", "squeeze", "flatten", "view_as", "reshape_as"))


def _fresh_copy(node: cst.BaseExpression) -> bool:
    """`E.clone()`, an out-of-place twin called on a tensor (`E.clone().div(T)`, what this pass made of the
    chain's first links; `v.sqrt()`), a reduction (`x.norm(dim=1)`, AdamP's norms before `.add_(eps)`), or
    arithmetic (`(v.sqrt() / c)`, Adam's denominator before `.add_(eps)`): a new tensor nobody else holds (never a
    view of E); a view of such a tensor (`x.norm(dim=1).view(shape)`) too: its base is held by nobody else."""
    if isinstance(node, (cst.BinaryOperation, cst.UnaryOperation)) and node.lpar:
        return True
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
        return False
    name = node.func.attr.value
    if name == "clone":
        return not node.args
    if isinstance(node.func.value, cst.Name) and node.func.value.value == "torch" and name in _FACTORIES:
        return _out_name(node) is None      # `torch.empty(n, n)`
    if name in ("fill_", "zero_"):          # `torch.empty(n, n).fill_(v)`: the fresh tensor, filled
        return _fresh_copy(node.func.value)
    if _out_name(node) is not None:     # `torch.rsqrt(v, out=u)` returns u
        return False
    if name in _VIEWS:
        return _fresh_copy(node.func.value)
    if any(a.keyword is not None and a.keyword.value == "inplace" and not (
            isinstance(a.value, cst.Name) and a.value.value == "False") for a in node.args):
        return False    # `F.relu(x, inplace=True)` returns x itself
    return name + "_" in _LINKS or name in _NEW_RESULTS or name in _NEW_ACTIVATIONS


def _out_of_place(links: List[cst.Call], base: cst.BaseExpression) -> cst.BaseExpression:
    out = base
    for call in links:
        out = call.with_changes(func=call.func.with_changes(value=out, attr=cst.Name(call.func.attr.value[:-1])))
    return out


def _plain_name(node: cst.BaseExpression) -> bool:
    """`x`, `self.mean`: naming it again (once per link) reads the same tensor and runs nothing."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


class _Rewrite(cst.CSTTransformer):
    def __init__(self, module_buffers: frozenset = frozenset()) -> None:
        super().__init__()
        self._buffers: List[set] = []
        self._module_buffers = module_buffers   # every class's buffer names: `self.book.usage` of a submodule
        self._functions: List[set] = []          # per enclosing function: its locals no one else holds
        self._dicts: List[frozenset] = []        # per enclosing function: its names bound only to dicts

    def _is_buffer(self, held: cst.BaseExpression) -> bool:
        """`self.mean`, a buffer of this class, or `self.book.usage`, a chain from self ending in a name some
        class of the file registers as a buffer (a submodule's running statistic)."""
        if not (self._buffers and isinstance(held, cst.Attribute)):
            return False
        if isinstance(held.value, cst.Name):
            return held.value.value == "self" and held.attr.value in self._buffers[-1]
        root = held.value
        while isinstance(root, cst.Attribute):
            root = root.value
        return isinstance(root, cst.Name) and root.value == "self" and held.attr.value in self._module_buffers

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._buffers.append(_buffer_names(node))

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        self._buffers.pop()
        return updated

    def _on_buffer_data(self, small: cst.BaseSmallStatement) -> Optional[cst.BaseSmallStatement]:
        """A whole statement `self.mean.mul_(m)` on a registered buffer (running statistics updated in forward):
        `self.mean.data.mul_(m)`, the same change in torch (a buffer carries no gradient), which the main pass
        assigns into the buffer (ops.assign); MindSpore's in-place arithmetic left it unchanged, so the site was
        a raising TODO. A chain (`self.avg.mul_(d).add_(v, alpha=1 - d)`, an EMA): `self.avg.data.copy_(
        self.avg.mul(d).add(v, alpha=1 - d))`, the same value in torch, which data_writes.py writes with one
        ops.assign (its `.data.copy_` form, kept as it was, computed wrongly when GRAPH compiled a forward
        reading the buffer after it; through ops.assign it is torch's: tests/parity/test_data_writes.py)."""
        if not isinstance(small, cst.Expr):
            return None
        links, held = _links(small.value)
        if len(links) > 1 and (_data_of_attribute(held) or (
                isinstance(held, cst.Attribute) and held.attr.value == "data" and self._dicts
                and dict_item(held.value, self._dicts[-1]))):
            # (or of an item of a dict of the function's: basicsr's model_ema, `net_g_ema_params[k].data.mul_(decay)
            # .add_(net_g_params[k].data, alpha=1 - decay)` over `dict(net_g_ema.named_parameters())`)
            # `self.size.data.mul_(d).add_(v, alpha=1 - d)` (vq-vae-2's EMA codebook in forward): the chain's value
            # written through .data at once, `self.size.data.copy_(self.size.mul(d).add(v, alpha=1 - d))`
            copy = cst.Call(func=cst.Attribute(value=held, attr=cst.Name("copy_")),
                            args=[cst.Arg(_out_of_place(links, held.value))])
            return small.with_changes(value=copy)
        if not (links and self._is_buffer(held)):
            return None
        data = cst.Attribute(value=held, attr=cst.Name("data"))
        if len(links) > 1:
            copy = cst.Call(func=cst.Attribute(value=data, attr=cst.Name("copy_")),
                            args=[cst.Arg(_out_of_place(links, held))])
            return small.with_changes(value=copy)
        return small.with_changes(value=links[0].with_changes(func=links[0].func.with_changes(value=data)))

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        links, base = _links(updated)
        if links and _fresh_copy(base):
            return _out_of_place(links, base)
        return updated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.append(_held_alone(node))
        self._dicts.append(dict_bound_names(node))

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self._functions.pop()
        self._dicts.pop()
        return updated

    def _resized_fill(self, small: cst.BaseSmallStatement) -> Optional[cst.BaseSmallStatement]:
        """`x.resize_(n, m).zero_()` (or `.fill_(v)`) as a whole statement on a local tensor that no other name,
        call or container holds (dino's k-NN one-hot buffer resized to each chunk): `x = x.new_zeros((n, m))`
        (`x.new_full((n, m), v)`): torch's values, shape and dtype, whatever resize_ kept or left uninitialized.
        The main pass converts new_zeros; resize_ alone stays the raising TODO."""
        if not (isinstance(small, cst.Expr) and self._functions and isinstance(small.value, cst.Call)):
            return None
        fill = small.value
        if not (isinstance(fill.func, cst.Attribute) and fill.func.attr.value in ("zero_", "fill_")):
            return None
        resize = fill.func.value
        if not (isinstance(resize, cst.Call) and isinstance(resize.func, cst.Attribute)
                and resize.func.attr.value == "resize_" and isinstance(resize.func.value, cst.Name)
                and resize.args and all(a.keyword is None and not a.star for a in resize.args)):
            return None
        name = resize.func.value.value
        if name not in self._functions[-1]:
            return None
        if fill.func.attr.value == "zero_" and not fill.args:
            method, extra = "new_zeros", []
        elif fill.func.attr.value == "fill_" and len(fill.args) == 1 and fill.args[0].keyword is None \
                and not fill.args[0].star:
            method, extra = "new_full", [cst.Arg(fill.args[0].value)]
        else:
            return None
        size = resize.args[0].value if len(resize.args) == 1 else cst.Tuple(
            elements=[cst.Element(a.value) for a in resize.args])
        call = cst.Call(func=cst.Attribute(value=cst.Name(name), attr=cst.Name(method)),
                        args=[cst.Arg(size)] + extra)
        return cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=call)

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine,
                                  updated: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
        body = []
        for small in updated.body:
            resized = self._resized_fill(small)
            if resized is not None:
                body.append(resized)
                continue
            on_buffer = self._on_buffer_data(small)
            split = [on_buffer] if on_buffer is not None else (self._split(small) or self._first_chain(small))
            body.extend(split if split is not None else [small])
        if len(body) == len(updated.body) and all(a is b for a, b in zip(body, updated.body)):
            return updated
        body = [s.with_changes(semicolon=cst.MaybeSentinel.DEFAULT) for s in body]
        return updated.with_changes(body=body)

    @staticmethod
    def _first_chain(small: cst.BaseSmallStatement) -> Optional[List[cst.BaseSmallStatement]]:
        """A chain on a local name that its statement evaluates first, `d = (g.div_(c).mul_(v).sum() - b)`
        (Apollo's update) or `g = g.add_(a).add_(b)` (PID's gradient): its links as whole statements before it,
        `g.div_(c); g.mul_(v); d = (g.sum() - b)`, the chain's place taken by the name (the call returns the
        tensor itself), which the main pass converts one by one. Python evaluated nothing of the statement before
        the chain, and each link's arguments after the link before it, in both forms. `g = g.add_(a)` is
        `g.add_(a)`: torch binds g to the tensor it holds. A chain on a call writing into `out=u`
        (`torch.rsqrt(v, out=u).mul_(g)`, Adafactor) is that call, then the links on u."""
        if not isinstance(small, (cst.Expr, cst.Assign, cst.Return)) or small.value is None:
            return None
        node = small.value
        first: List[cst.BaseSmallStatement] = []
        while True:
            links, base = _links(node)
            if links and isinstance(base, cst.Name):
                break
            out = _out_name(base) if links else None
            if out is not None:     # `torch.rsqrt(v, out=u).mul_(g)`: torch returns u itself
                first, base = [cst.Expr(value=base)], out
                break
            if isinstance(node, cst.BinaryOperation):
                node = node.left
            elif isinstance(node, (cst.Subscript, cst.Attribute)):
                node = node.value
            elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
                node = node.func.value
            else:
                return None
        whole = node is small.value
        same = (isinstance(small, cst.Assign) and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == base.value)
        if len(links) < 2 and not (whole and same) and not first:
            return None
        before = first + [cst.Expr(value=call.with_changes(func=call.func.with_changes(value=base)))
                          for call in links]
        if whole and (same or isinstance(small, cst.Expr)):
            return before
        return before + [small.deep_replace(node, cst.Name(base.value))]

    @staticmethod
    def _split(small: cst.BaseSmallStatement) -> Optional[List[cst.BaseSmallStatement]]:
        """`x.m1_(a).m2_(b)` as a whole statement on a name or an attribute (a buffer's running statistic,
        `self.mean.mul_(m).add_(v)`): `x.m1_(a)`, `x.m2_(b)`. On a dict entry (`state['buf'].mul_(m).add_(g)`,
        an optimizer's momentum buffer) the entry is named first, `_ms_entry = state['buf']`, so the main pass
        writes the new value into the tensor the dict holds (inplace_holders.py)."""
        if not isinstance(small, cst.Expr):
            return None
        links, base = _links(small.value)
        if links and _dict_entry(base):
            entry = cst.Name(ENTRY)
            return [cst.Assign(targets=[cst.AssignTarget(entry)], value=base)] + [
                cst.Expr(value=call.with_changes(func=call.func.with_changes(value=entry))) for call in links]
        if links and isinstance(base, cst.Call) and isinstance(base.func, cst.Attribute) \
                and base.func.attr.value in _FILLS:
            # `p.data.normal_().mul_(s)` (a hand-written He initialization): the fill returns p.data itself
            links, base = [base] + links, base.func.value
        # `self.shadow[k].mul_(d).add_(v, alpha=1 - d)` (an EMA's dict of weights): the entry named again per link
        # reads the same tensor (held_items.py then writes each link's value into it)
        if len(links) < 2 or not (_plain_name(base) or held_tensor(base) or item(base) is not None):
            return None
        return [cst.Expr(value=call.with_changes(func=call.func.with_changes(value=base))) for call in links]


ENTRY = "_ms_entry"
# in-place fills, which return their receiver as every in-place method does but have no out-of-place twin taking
# the same arguments: the first link of a chain `x.normal_().mul_(s)` split into statements
_FILLS = frozenset(("normal_", "uniform_", "zero_", "fill_", "copy_", "random_", "bernoulli_", "exponential_",
                    "log_normal_", "cauchy_", "geometric_"))


def _out_name(call: cst.BaseExpression) -> Optional[cst.Name]:
    """The name of `f(..., out=name)`, the tensor such a call returns."""
    if not isinstance(call, cst.Call):
        return None
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "out" and isinstance(arg.value, cst.Name):
            return cst.Name(arg.value.value)
    return None


def _held_alone(fn: cst.FunctionDef) -> set:
    """The names a function binds by assignment (not its parameters, globals or nonlocals) whose tensor no
    other holder can see: never assigned on as a whole (`y = x`, `y = (x, z)`), passed to a call, returned,
    yielded or stored (`d[k] = x`). A rebinding of such a name is the in-place change torch makes."""
    bound, escaped = set(), set()
    params = {p.name.value for p in (*fn.params.params, *fn.params.posonly_params, *fn.params.kwonly_params)}
    for star in (fn.params.star_arg, fn.params.star_kwarg):
        if isinstance(star, cst.Param):
            params.add(star.name.value)

    def bare(node):
        if isinstance(node, cst.Name):
            escaped.add(node.value)
        elif isinstance(node, (cst.Tuple, cst.List, cst.Set)):
            for e in node.elements:
                bare(e.value)

    class _Scan(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for t in node.targets:
                if isinstance(t.target, cst.Name):
                    bound.add(t.target.value)
            bare(node.value)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            if node.value is not None:
                bare(node.value)

        def visit_Arg(self, node: cst.Arg) -> None:
            bare(node.value)

        def visit_Return(self, node: cst.Return) -> None:
            if node.value is not None:
                bare(node.value)

        def visit_Yield(self, node: cst.Yield) -> None:
            if isinstance(node.value, cst.BaseExpression):
                bare(node.value)

        def visit_Global(self, node: cst.Global) -> None:
            escaped.update(n.name.value for n in node.names)

        def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
            escaped.update(n.name.value for n in node.names)

    fn.body.visit(_Scan())
    return bound - params - escaped


def _dict_entry(node: cst.BaseExpression) -> bool:
    """`state['buf']`, `self.state[p]['buf']`: a string key (a mapping's entry, never a view of a tensor) of a
    name, attribute or subscript chain that reads again without running anything."""
    if not (isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index)
            and isinstance(node.slice[0].slice.value, cst.SimpleString)):
        return False
    node = node.value
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        if isinstance(node, cst.Subscript) and not all(
                isinstance(e.slice, cst.Index) and isinstance(e.slice.value, (cst.Name, cst.SimpleString, cst.Integer))
                for e in node.slice):
            return False
        node = node.value
    return isinstance(node, cst.Name)


def _data_of_attribute(node: cst.BaseExpression) -> bool:
    """`self.size.data`, `ema.avg.data`: `.data` of an attribute chain of names (never a bare name: a loop's
    `p.data.mul_(m).add_(g)` is split for param_data_update.py's loop rewrite)."""
    return (isinstance(node, cst.Attribute) and node.attr.value == "data" and isinstance(node.value, cst.Attribute)
            and _plain_name(node.value))


def _buffer_names(cls: cst.ClassDef) -> set:
    """The names a class registers as buffers: `self.register_buffer("mean", ...)`."""
    names = set()

    class _Find(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            f = node.func
            if isinstance(f, cst.Attribute) and f.attr.value == "register_buffer" and node.args \
                    and isinstance(node.args[0].value, cst.SimpleString):
                names.add(node.args[0].value.evaluated_value)

    cls.visit(_Find())
    return names


def might_update_buffer(source: str) -> bool:
    return "register_buffer" in source and re.search(r"self(\.\w+)+\.[a-z_0-9]+_\(", source) is not None


def rewrite_inplace_chains(module: cst.Module) -> cst.Module:
    buffers = set()
    for node in module.body:
        if isinstance(node, cst.ClassDef):
            buffers |= _buffer_names(node)
    module = module.visit(_Rewrite(frozenset(buffers)))
    return module.visit(_ViewChains(_own_memory_functions(module)))


# ------------------------------------------------------------------ a chain on a diagonal or a call's result
DIAG = "_ms_diag"
_BUILTIN_NAMES = frozenset(dir(__import__("builtins")))


def _params_of(fn: cst.FunctionDef) -> set:
    p = fn.params
    names = {x.name.value for x in (*p.params, *p.posonly_params, *p.kwonly_params)}
    for star in (p.star_arg, p.star_kwarg):
        if isinstance(star, cst.Param):
            names.add(star.name.value)
    return names


def _assigned(fn: cst.FunctionDef) -> set:
    """Names the function binds by plain assignment, less those it declares global or nonlocal."""
    bound, declared = set(), set()

    class V(cst.CSTVisitor):
        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            t = node.target
            for e in ([el.value for el in t.elements] if isinstance(t, (cst.Tuple, cst.List)) else [t]):
                if isinstance(e, cst.Name):
                    bound.add(e.value)

        def visit_Global(self, node) -> None:
            declared.update(n.name.value for n in node.names)

        def visit_Nonlocal(self, node) -> None:
            declared.update(n.name.value for n in node.names)
    fn.body.visit(V())
    return bound - declared


def _loaded_names(node: cst.CSTNode) -> List[str]:
    """Every Name read in `node` (not an attribute's or keyword's name), in source order."""
    out: List[str] = []

    class V(cst.CSTVisitor):
        def visit_Attribute(self, n: cst.Attribute) -> bool:
            n.value.visit(self)
            return False

        def visit_Arg(self, n: cst.Arg) -> bool:
            n.value.visit(self)
            return False

        def visit_Name(self, n: cst.Name) -> None:
            out.append(n.value)
    node.visit(V())
    return out


def _own_memory_functions(module: cst.Module) -> set:
    """Module-level functions whose result can share memory only with their arguments: they read nothing but
    their parameters, their locals, builtins and the module's imports."""
    imported = set()
    for st in module.body:
        if isinstance(st, cst.SimpleStatementLine):
            for small in st.body:
                if isinstance(small, cst.Import):
                    imported |= {(a.asname.name.value if a.asname else _code_of(a.name).split(".")[0])
                                 for a in small.names}
                elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                    imported |= {(a.asname.name.value if a.asname else _code_of(a.name)) for a in small.names}
    out = set()
    for st in module.body:
        if isinstance(st, cst.FunctionDef) and not st.decorators:
            known = _params_of(st) | _assigned(st) | _BUILTIN_NAMES | imported
            inner = any(isinstance(n, (cst.FunctionDef, cst.Lambda, cst.ClassDef)) for n in _descendants(st.body))
            if not inner and all(n in known for n in _loaded_names(st.body)):
                out.add(st.name.value)
    return out


def _descendants(node: cst.CSTNode) -> List[cst.CSTNode]:
    found: List[cst.CSTNode] = []

    class V(cst.CSTVisitor):
        def on_visit(self, n: cst.CSTNode) -> bool:
            found.append(n)
            return True
    node.visit(V())
    return found


def _code_of(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _chains_in(value: cst.BaseExpression) -> List[Tuple[cst.Call, List[cst.Call], cst.BaseExpression]]:
    """The maximal in-place chains of an expression: (outermost call, links, base)."""
    parents: dict = {}
    for n in _descendants(value):
        for c in n.children:
            parents[id(c)] = n
    out = []
    for n in _descendants(value):
        if not isinstance(n, cst.Call):
            continue
        links, base = _links(n)
        if not links:
            continue
        p = parents.get(id(n))      # a longer chain holds this one: `attr` of a Call whose func it is
        if isinstance(p, cst.Attribute) and isinstance(parents.get(id(p)), cst.Call) \
                and p.attr.value in _LINKS and parents[id(p)].func is p:
            continue
        out.append((n, links, base))
    return out


_VIEWING = frozenset({"view", "view_as", "reshape", "flatten", "t", "transpose", "permute", "squeeze", "unsqueeze",
                      "narrow", "select", "expand", "diagonal", "detach", "T", "mT", "unfold", "movedim"})


class _ViewChains(cst.CSTTransformer):
    """Two forms of an in-place chain inside an expression, which the main pass refuses (MindSpore's views are
    copies, its in-place arithmetic rebinds a name):

    - on the diagonal of a local tensor, `on_diag = torch.diagonal(c).add_(-1).pow_(2).sum()` (barlowtwins'
      loss): torch changes c's diagonal and uses the changed values. The line becomes
      `_ms_diag = torch.diagonal(c).add(-1).pow(2); c = c.diagonal_scatter(_ms_diag); on_diag = _ms_diag.sum()`:
      the same values and the same c for every later read, where no other name holds c or a view of it;
    - on the result of a module function that reads only its arguments (`off_diagonal(c).pow_(2).sum()`), each
      argument a local name read nowhere after the statement (no loop around it): whatever memory the result
      shares, nobody reads it again, so the out-of-place chain is the same value."""

    def __init__(self, own_memory: set) -> None:
        super().__init__()
        self.own_memory = own_memory
        self.fns: List[Tuple[cst.FunctionDef, set, List[str], dict]] = []
        self.loops = 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        names: List[str] = []
        at: dict = {}       # statement id -> how many names are read before its end

        class V(cst.CSTVisitor):
            def leave_SimpleStatementLine(self, n) -> None:
                names.extend(_loaded_names(n))
                at[id(n)] = len(names)

            def visit_SimpleStatementLine(self, n) -> bool:
                return False

            def visit_If(self, n) -> None:
                names.extend(_loaded_names(n.test))

            def visit_While(self, n) -> None:
                names.extend(_loaded_names(n.test))

            def visit_For(self, n) -> None:
                names.extend(_loaded_names(n.iter))
        node.body.visit(V())
        locals_ = _assigned(node) - _params_of(node)
        self.fns.append((node, locals_, names, at))

    def leave_FunctionDef(self, original, updated):
        self.fns.pop()
        return updated

    def visit_For(self, node) -> None:
        self.loops += 1

    def leave_For(self, original, updated):
        self.loops -= 1
        return updated

    def visit_While(self, node) -> None:
        self.loops += 1

    def leave_While(self, original, updated):
        self.loops -= 1
        return updated

    def _viewed(self, fn: cst.FunctionDef, name: str) -> bool:
        """Another name bound to `name` or to a view of it somewhere in the function."""
        for n in _descendants(fn.body):
            if not isinstance(n, cst.Assign):
                continue
            v = n.value
            while isinstance(v, (cst.Call, cst.Attribute, cst.Subscript)):
                if isinstance(v, cst.Call):
                    f = v.func
                    if not (isinstance(f, cst.Attribute) and f.attr.value in _VIEWING):
                        break
                    v = f.value
                elif isinstance(v, cst.Attribute):
                    if v.attr.value not in _VIEWING:
                        break
                    v = v.value
                else:
                    v = v.value
            if isinstance(v, cst.Name) and v.value == name:
                return True
        return False

    def leave_SimpleStatementLine(self, original, updated):
        if not self.fns or len(updated.body) != 1:
            return updated
        fn, locals_, names, at = self.fns[-1]
        small = updated.body[0]
        value = small.value if isinstance(small, (cst.Assign, cst.Expr, cst.Return)) else None
        if value is None or id(original) not in at:
            return updated
        chains = _chains_in(value)
        if len(chains) != 1:
            return updated
        outer, links, base = chains[0]
        if outer is value and isinstance(small, cst.Expr):
            return updated          # a whole statement: the main pass's rebinding
        reads = _loaded_names(small)
        later = names[at[id(original)]:]
        diag = self._diagonal_of(base)
        if diag is not None:
            name = diag.value
            if name not in locals_ or reads.count(name) != 1 or self._viewed(fn, name):
                return updated
            args = base.args[1:] if isinstance(base.func, cst.Attribute) and base.func.attr.value == "diagonal" \
                and isinstance(base.func.value, cst.Name) and base.func.value.value == "torch" else base.args
            view = cst.Name(DIAG)
            first = cst.Assign(targets=[cst.AssignTarget(view)], value=_out_of_place(links, base))
            scatter = cst.Call(func=cst.Attribute(value=cst.Name(name), attr=cst.Name("diagonal_scatter")),
                               args=[cst.Arg(view, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                                     if args else cst.Arg(view)] + list(args))
            second = cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=scatter)
            rest = small.deep_replace(outer, view)
            return updated.with_changes(body=[first.with_changes(semicolon=cst.Semicolon(
                whitespace_after=cst.SimpleWhitespace(" "))), second.with_changes(semicolon=cst.Semicolon(
                    whitespace_after=cst.SimpleWhitespace(" "))), rest])
        if (isinstance(base, cst.Call) and isinstance(base.func, cst.Name) and base.func.value in self.own_memory
                and not self.loops and base.args):
            held = []
            for a in base.args:
                if a.star or a.keyword is not None and not isinstance(a.value, (cst.Name, cst.Integer)):
                    return updated
                if isinstance(a.value, cst.Name):
                    held.append(a.value.value)
                elif not isinstance(a.value, (cst.Integer, cst.Float, cst.SimpleString)):
                    return updated
            if all(h in locals_ and h not in later and reads.count(h) == 1 for h in held):
                return updated.with_changes(body=[small.deep_replace(outer, _out_of_place(links, base))])
        return updated

    @staticmethod
    def _diagonal_of(base: cst.BaseExpression) -> Optional[cst.Name]:
        """`torch.diagonal(c, ...)` or `c.diagonal(...)`: c (a name)."""
        if not (isinstance(base, cst.Call) and isinstance(base.func, cst.Attribute)
                and base.func.attr.value == "diagonal"):
            return None
        owner = base.func.value
        if isinstance(owner, cst.Name) and owner.value == "torch":
            first = base.args[0] if base.args else None
            if first is not None and first.keyword is None and not first.star and isinstance(first.value, cst.Name) \
                    and all(a.keyword is not None or not a.star for a in base.args):
                return first.value
            return None
        return owner if isinstance(owner, cst.Name) and owner.value != "torch" else None
