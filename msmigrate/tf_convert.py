"""The libcst pass that turns a TensorFlow/Keras training program into MindSpore code.

Chosen by msmigrate.converter.convert_code for files that import tensorflow or keras and not torch. Names are
resolved through the file's imports (`import tensorflow as tf`, `from tensorflow import keras`,
`from tensorflow.keras import layers`, `import keras`) to "tensorflow.X" / "keras.X" (tf.keras.X counts as
keras.X) and converted through the records in msmigrate/mappings/tensorflow.py. Structural rewrites done here:
- `with tf.GradientTape() as tape: BODY` + `grads = tape.gradient(target, sources)` ->
      def _tape_forward_N():
          BODY
          return target, <names BODY assigns>
      (_tape_target_N, <names>), grads = mindspore.value_and_grad(_tape_forward_N, None, sources, has_aux=True)()
- `@tf.function` is dropped (the step runs in PyNative mode); `with tf.device(...)` keeps only its body;
- tensorflow/keras imports are removed; `import mindspore as ms`, `from mindspore import ops` and the
  `_ms_compat` import are added.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from .registry import CONVERTED, DIFFERENCE, TODO, lookup
from .callsite import dotted_name as _dotted
from .project_index import resolve_head
from .scope_names import all_params, scope_names
from .sites import Site, shorten
from . import fstring_quotes as FSQ

COMPAT = "_ms_compat"
_TF_TOPS = ("tensorflow", "keras", "tf_keras")


def imports_tensorflow(module: cst.Module) -> bool:
    """True when the module imports tensorflow or keras."""
    found = []

    class V(cst.CSTVisitor):
        def visit_Import(self, node):
            for a in node.names:
                if _dotted(a.name).split(".")[0] in _TF_TOPS:
                    found.append(1)

        def visit_ImportFrom(self, node):
            if node.module is not None and not node.relative and _dotted(node.module).split(".")[0] in _TF_TOPS:
                found.append(1)
    module.visit(V())
    return bool(found)




def canonical(qn: str) -> str:
    """tf.keras.X and tf_keras.X are keras.X; tf.math.X / tf.nn.X stay under tensorflow."""
    for prefix in ("tensorflow.keras.", "tf_keras.", "tensorflow.python.keras."):
        if qn.startswith(prefix):
            return "keras." + qn[len(prefix):]
    if qn in ("tensorflow.keras", "tf_keras"):
        return "keras"
    return qn


def _code(node) -> str:
    return cst.Module([]).code_for_node(node)


def _atom(code):
    """Code that can stand anywhere in a template: parenthesised unless a name, attribute, call, number."""
    if code is None:
        return code
    try:
        node = cst.parse_expression(code)
    except Exception:
        return f"({code})"
    simple = (cst.Name, cst.Attribute, cst.Call, cst.Integer, cst.Float, cst.SimpleString, cst.Subscript,
              cst.List, cst.Tuple)
    return code if isinstance(node, simple) else f"({code})"


def _expr(text: str) -> cst.BaseExpression:
    return cst.parse_expression(text)


def _local_names(fn: cst.FunctionDef) -> set:
    """The names a function binds in its own scope (parameters, assignment, loop, with and except targets,
    imports other than TensorFlow/Keras ones, inner defs), less those it declares global or nonlocal: Python's rule
    for a local name. A name an import of TensorFlow/Keras also binds (`layers`) is the function's own variable
    there, not the module; a TensorFlow import inside the function (`import tensorflow as tf`, which the pass
    removes) keeps its name the import's."""
    found = scope_names(fn)
    imported = {name for name, module in found.imports.items() if module.split(".")[0] not in _TF_TOPS}
    return (found.values | found.lambdas | found.defs | imported) - found.declared


class TFToMindSpore(cst.CSTTransformer):
    def __init__(self, module: cst.Module, compat_import: Optional[Tuple[int, str]] = None,
                 module_name: str = ""):
        super().__init__()
        self.module_name = module_name
        self.compat_import = compat_import
        self.sites: List[Site] = []
        self.uses_compat = True
        self.imports: Dict[str, str] = {}
        self._inner: set = set()
        # id(converted With) -> (tape name, original, converted); the node is kept so that an id reused by a later
        # object (after the With was freed) never matches
        self._tapes: Dict[int, Tuple[str, cst.With, cst.With]] = {}
        self._unwrap: Dict[int, cst.With] = {}              # converted `with tf.device()` statements
        self._n = 0
        self._line = 0
        self._positions = {}
        self._comments: List[List[str]] = []     # the TODO comments of each enclosing statement, as torch's have
        self._locals: List[set] = []     # the names each enclosing function (or lambda) binds itself

        class Imports(cst.CSTVisitor):
            def __init__(s):
                s.table = {}

            def visit_Import(s, node):
                for a in node.names:
                    full = _dotted(a.name)
                    if a.asname is not None:
                        s.table[a.asname.name.value] = full
                    else:
                        s.table[full.split(".")[0]] = full.split(".")[0]

            def visit_ImportFrom(s, node):
                if node.module is None or node.relative or isinstance(node.names, cst.ImportStar):
                    return
                mod = _dotted(node.module)
                for a in node.names:
                    name = a.name.value
                    s.table[a.asname.name.value if a.asname else name] = f"{mod}.{name}"
        v = Imports()
        module.visit(v)
        self.imports = {k: q for k, q in v.table.items() if q.split(".")[0] in _TF_TOPS}

    # ------------------------------------------------------------- helpers
    def qname(self, node) -> Optional[str]:
        d = _dotted(node)
        if d is not None and self._locals and d.split(".")[0] in self._locals[-1]:
            return None      # a function's own variable named as an import (`layers = model._layers.copy()`)
        full = None if d is None else resolve_head(d, self.imports)
        return None if full is None else canonical(full)

    def _site(self, api, target, status, note="", code="", test=""):
        self.sites.append(Site(self._line, api, target, status, note, shorten(code), test))

    def _todo(self, node, api, why, call=None):
        """A placeholder naming the original module and line; at a call (`call`, converted) it is
        called with the call's arguments, so reaching the call raises wherever it stands."""
        self._site(api, "", TODO, why, _code(node))
        if self._comments:      # the original stays visible above its statement
            self._comments[-1].append(f"# msmigrate: TODO {api}: {why}. Original: {shorten(_code(node), 150)}")
        where = f"{self.module_name}:{self._line}" if self.module_name else f"line {self._line}"
        ph = _expr(f"{COMPAT}.Unconverted({api!r}, {where!r}, {why!r})")
        return call.with_changes(func=ph) if call is not None else ph

    def on_visit(self, node) -> bool:
        if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            self._comments.append([])
        return super().on_visit(node)

    def on_leave(self, original, updated):
        result = super().on_leave(original, updated)
        if isinstance(original, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            comments = list(dict.fromkeys(self._comments.pop()))
            if comments and hasattr(result, "leading_lines"):
                result = result.with_changes(leading_lines=list(result.leading_lines) + [
                    cst.EmptyLine(comment=cst.Comment(c)) for c in comments])
        return result

    def leave_FormattedString(self, original, updated):
        # a field quoting the f-string's own quote (a TODO's placeholder): a concatenation (fstring_quotes.py)
        return FSQ.readable(original, updated) if updated is not original else updated

    def render(self, target: str) -> str:
        if target.startswith("mindspore.ops."):
            return "ops." + target[len("mindspore.ops."):]
        if target.startswith("mindspore.nn."):
            return "nn." + target[len("mindspore.nn."):]
        if target.startswith("mindspore."):
            return "ms." + target[len("mindspore."):]
        return target

    def visit_SimpleStatementLine(self, node):
        self._line = self._line_of(node)

    def visit_Module(self, node):
        self._mod = node

    def _line_of(self, node):
        try:
            return self.get_metadata(cst.metadata.PositionProvider, node).start.line
        except Exception:
            return self._line

    METADATA_DEPENDENCIES = (cst.metadata.PositionProvider,)

    # ------------------------------------------------------------- names
    def visit_Attribute(self, node):
        self._inner.add(id(node.value))
        # `self.layers`, `model.optimizers`: an attribute's own name is no reference to an imported name
        self._inner.add(id(node.attr))

    def visit_Arg(self, node):
        if node.keyword is not None:     # `Sequential(layers=[...])`, `compile(metrics=[...])`: a keyword's name
            self._inner.add(id(node.keyword))

    def visit_Param(self, node):
        self._inner.add(id(node.name))   # a parameter named as an imported module (`def f(layers): ...`)

    def visit_FunctionDef(self, node):
        self._inner.add(id(node.name))
        self._locals.append(_local_names(node))

    def visit_Lambda(self, node):
        self._locals.append({p.name.value for p in all_params(node.params)})

    def leave_Lambda(self, original, updated):
        self._locals.pop()
        return updated

    def visit_ClassDef(self, node):
        self._inner.add(id(node.name))

    def visit_Import(self, node):
        return False          # import statements are removed or kept whole, never rewritten

    def visit_ImportFrom(self, node):
        return False

    def _convert_name(self, original, updated):
        if id(original) in self._inner:
            return updated
        qn = self.qname(original)
        if qn is None:
            return updated
        m = lookup(qn)
        rest = ""
        if m is None:
            # `tf.data.Dataset.from_tensor_slices`: a recorded class followed by its attributes
            parts = qn.split(".")
            for k in range(len(parts) - 1, 1, -1):
                pm = lookup(".".join(parts[:k]))
                if pm is not None and pm.target and pm.target.startswith(("_ms_compat.", "mindspore.")):
                    m, rest = pm, "." + ".".join(parts[k:])
                    break
        if m is None:
            if qn in ("tensorflow", "keras") or qn.count(".") == 0:
                return updated
            return self._todo(original, qn, "no MindSpore conversion recorded for this TensorFlow/Keras API")
        if m.target is None:
            return self._todo(original, qn, m.note or "no MindSpore counterpart")
        if m.target.startswith("expr:") and "{" not in m.target:    # a constant (tf.newaxis -> None)
            self._site(qn, m.target[5:], m.status, m.note, _code(original), m.test)
            return _expr(m.target[5:])
        if m.target in ("drop", "identity") or m.target.startswith("expr:") or m.target.startswith("method:"):
            return updated   # handled at the call
        self._site(qn, self.render(m.target) + rest, m.status, m.note, _code(original), m.test)
        return _expr(self.render(m.target) + rest)

    def leave_Name(self, original, updated):
        return self._convert_name(original, updated)

    def leave_Attribute(self, original, updated):
        return self._convert_name(original, updated)

    # ------------------------------------------------------------- calls
    def leave_Call(self, original, updated):
        qn = self.qname(original.func)
        if qn is None:
            return updated
        m = lookup(qn)
        if m is None or m.target is None or qn == "tensorflow.device":   # tf.device: see leave_With
            return updated
        special = m.target in ("drop", "identity") or m.target.startswith("expr:")
        if not (special or m.rename or m.values or m.transforms or m.extra or m.drop):
            return updated
        bound, order = {}, []
        for i, a in enumerate(updated.args):
            if a.star:
                return self._todo(original, qn, "*args/**kwargs at a call that needs argument rewriting", updated)
            name = a.keyword.value if a.keyword is not None else (m.args[i] if i < len(m.args) else None)
            if name is None:
                return self._todo(original, qn, "more positional arguments than the record knows", updated)
            bound[name] = _code(a.value)
            order.append(name)
        for name, why in m.unsupported.items():
            if name in bound:
                return self._todo(original, qn, f"{name}: {why}", updated)
        for name in m.drop:
            bound.pop(name, None)
        for name, table in m.values.items():
            if name in bound and bound[name] in table:
                bound[name] = table[bound[name]]
        for name, tpl in m.transforms.items():
            if name in bound:
                bound[name] = tpl.replace("{v}", bound[name])
        if m.target == "drop":
            self._site(qn, "", m.status, m.note, _code(original), m.test)
            return _expr("None")
        if m.target == "identity":
            self._site(qn, "", m.status, m.note, _code(original), m.test)
            first = m.args[0] if m.args else None
            return _expr(bound.get(first, "None"))
        if m.target.startswith("expr:"):
            tpl = m.target[5:]
            slots = {n: bound.get(n, d) for n, d in zip(m.args, [None] * len(m.args))}
            for n, default in m.extra.items():
                if slots.get(n) is None:
                    slots[n] = default
            if any(f"{{{n}}}" in tpl and v is None for n, v in slots.items()):
                missing = [n for n, v in slots.items() if v is None and f"{{{n}}}" in tpl]
                return self._todo(original, qn, f"argument(s) {missing} needed for the conversion", updated)
            text = tpl.format(**{n: _atom(v) for n, v in slots.items()})
            self._site(qn, text, m.status, m.note, _code(original), m.test)
            return _expr(text)
        args = []
        pos_ok = True
        for i, name in enumerate([n for n in order if n in bound]):
            tname = m.rename.get(name, name)
            if pos_ok and i < len(m.target_args) and m.target_args[i] == tname and updated.args[i].keyword is None:
                args.append(f"{bound[name]}")
            else:
                pos_ok = False
                args.append(f"{tname}={bound[name]}")
        for k, v in m.extra.items():
            if k not in [m.rename.get(n, n) for n in bound]:
                args.append(f"{k}={v}")
        text = f"{self.render(m.target)}({', '.join(args)})"
        self._site(qn, self.render(m.target), m.status, m.note, _code(original), m.test)
        return _expr(text)

    # ------------------------------------------------------------- decorators
    def leave_Decorator(self, original, updated):
        return updated

    def leave_FunctionDef(self, original, updated):
        self._locals.pop()
        self._line = self._line_of(original)
        keep = []
        for dec, odec in zip(updated.decorators, original.decorators):
            d = odec.decorator.func if isinstance(odec.decorator, cst.Call) else odec.decorator
            qn = self.qname(d)
            if qn == "tensorflow.function":
                m = lookup(qn)
                self._site(qn, "", m.status, m.note, "@" + _code(odec.decorator), m.test)
                continue
            keep.append(dec)
        return updated.with_changes(decorators=keep)

    # ------------------------------------------------------------- with statements
    def leave_With(self, original, updated):
        self._line = self._line_of(original)
        if len(original.items) != 1:
            return updated
        item = original.items[0]
        call = item.item
        qn = self.qname(call.func) if isinstance(call, cst.Call) else None
        if qn == "tensorflow.GradientTape":
            for a in call.args:
                if a.keyword is not None and a.keyword.value == "persistent" and _code(a.value) != "False":
                    self._todo(original, qn, "a persistent tape (several gradient calls) is not converted")
                    return updated
            if item.asname is None or not isinstance(item.asname.name, cst.Name):
                self._todo(original, qn, "a GradientTape without `as name`")
                return updated
            self._tapes[id(updated)] = (item.asname.name.value, original, updated)
        elif qn == "tensorflow.device":
            m = lookup(qn)
            self._site(qn, "", m.status, m.note, _code(call), m.test)
            self._unwrap[id(updated)] = updated
        return updated

    def _rewrite_block(self, body):
        body = list(body)
        out = []
        i = 0
        while i < len(body):
            stmt = body[i]
            if self._unwrap.get(id(stmt)) is stmt:
                out.extend(stmt.body.body)
                i += 1
                continue
            if id(stmt) in self._tapes and self._tapes[id(stmt)][2] is stmt:
                tape, original, _ = self._tapes.pop(id(stmt))
                self._line = self._line_of(original)
                j, grad = self._find_gradient(body, i + 1, tape)
                if f"{tape}." in _code(stmt.body):
                    self._todo(original, "tensorflow.GradientTape",
                               f"{tape}.watch/... inside the tape block: only Parameters can be differentiated by "
                               "mindspore.value_and_grad here")
                    out.append(stmt)
                    i += 1
                    continue
                if grad is None:
                    self._todo(original, "tensorflow.GradientTape",
                               f"no `grads = {tape}.gradient(target, sources)` after the tape in the same block")
                    out.append(stmt)
                    i += 1
                    continue
                out.extend(self._tape_statements(stmt, *grad))
                out.extend(body[i + 1:j])
                i = j + 1
                continue
            out.append(stmt)
            i += 1
        return out

    def _find_gradient(self, body, start, tape):
        for j in range(start, len(body)):
            s = body[j]
            if isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 and isinstance(s.body[0], cst.Assign):
                a = s.body[0]
                v = a.value
                if (isinstance(v, cst.Call) and isinstance(v.func, cst.Attribute) and v.func.attr.value == "gradient"
                        and isinstance(v.func.value, cst.Name) and v.func.value.value == tape
                        and len(a.targets) == 1 and len(v.args) >= 2):
                    return j, (a.targets[0].target, v.args[0].value, v.args[1].value)
        return len(body), None

    def _tape_statements(self, with_stmt, grads_target, target, sources):
        self._n += 1
        n = self._n
        names: List[str] = []

        class Targets(cst.CSTVisitor):
            def visit_AssignTarget(s, node):
                s._collect(node.target)

            def visit_AnnAssign(s, node):
                s._collect(node.target)

            def _collect(s, t):
                if isinstance(t, cst.Name):
                    if t.value not in names:
                        names.append(t.value)
                elif isinstance(t, (cst.Tuple, cst.List)):
                    for e in t.elements:
                        s._collect(e.value)

            def visit_FunctionDef(s, node):
                return False
        with_stmt.body.visit(Targets())
        ret = ", ".join([_code(target)] + names)
        fn = f"_tape_forward_{n}"
        body_code = cst.Module(body=[cst.FunctionDef(
            name=cst.Name(fn), params=cst.Parameters(),
            body=with_stmt.body.with_changes(body=list(with_stmt.body.body) + [
                cst.parse_statement(f"return {ret}\n")]))]).code
        outs = ", ".join([f"_tape_target_{n}"] + names)
        build = f"{COMPAT}.build_before_grad({fn})  # layers first called here get their weights before the grad\n"
        call = (f"({outs},), {_code(grads_target)} = ms.value_and_grad({fn}, None, {_code(sources)}, "
                f"has_aux=True)()\n")
        m = lookup("tensorflow.GradientTape")
        self._site("tensorflow.GradientTape", "mindspore.value_and_grad", m.status, m.note,
                   "with tf.GradientTape() ... tape.gradient(...)", m.test)
        stmts = list(cst.parse_module(body_code).body)
        stmts[0] = stmts[0].with_changes(leading_lines=[cst.EmptyLine(comment=cst.Comment(
            "# msmigrate: the GradientTape block became a forward function; "
            "mindspore.value_and_grad gives its gradients"))])
        stmts.append(cst.parse_statement(build))
        stmts.append(cst.parse_statement(call))
        return stmts

    def leave_IndentedBlock(self, original, updated):
        return updated.with_changes(body=self._rewrite_block(updated.body))

    # ------------------------------------------------------------- imports and header
    def _is_tf_import(self, node) -> bool:
        if isinstance(node, cst.Import):
            return all(_dotted(a.name).split(".")[0] in _TF_TOPS for a in node.names)
        if isinstance(node, cst.ImportFrom):
            return node.module is not None and not node.relative and _dotted(node.module).split(".")[0] in _TF_TOPS
        return False

    def leave_SimpleStatementLine(self, original, updated):
        if all(self._is_tf_import(s) for s in updated.body):
            return cst.RemoveFromParent()
        if len(updated.body) == 1 and isinstance(updated.body[0], cst.Expr) and _code(updated.body[0].value) == "None":
            return cst.RemoveFromParent()   # a dropped call statement
        return updated

    def leave_Module(self, original, updated):
        body = self._rewrite_block(updated.body)
        lines = ["import mindspore as ms", "from mindspore import ops"]
        if self.compat_import is None or self.compat_import[0] == 0:
            lines.append(f"import {COMPAT}")
        else:
            if len(self.compat_import) > 2 and self.compat_import[2]:   # a package's file run as a script too
                lines.append(f"if __package__:\n    from . import {COMPAT}\nelse:\n    import {COMPAT}")
            else:
                lines.append(f"from {'.' * self.compat_import[0]} import {COMPAT}")
        new = [cst.parse_statement(l + "\n") for l in lines]
        pos = 0
        while pos < len(body):
            s = body[pos]
            if isinstance(s, cst.SimpleStatementLine) and (
                    (isinstance(s.body[0], cst.Expr) and isinstance(s.body[0].value, (cst.SimpleString,
                                                                                       cst.ConcatenatedString)))
                    or (isinstance(s.body[0], cst.ImportFrom) and _dotted(s.body[0].module or cst.Name("x"))
                        == "__future__")):
                pos += 1
                continue
            break
        return updated.with_changes(body=body[:pos] + new + body[pos:])


def convert_tf_code(source: str, compat_import=None, module_name: str = ""):
    """Convert one TensorFlow/Keras module. Returns (new code, sites, uses_compat)."""
    module = cst.parse_module(source)
    wrapper = cst.metadata.MetadataWrapper(module)
    tr = TFToMindSpore(wrapper.module, compat_import, module_name)
    new = wrapper.visit(tr)
    return new.code, tr.sites, tr.uses_compat
