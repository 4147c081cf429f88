"""An `if` on a plain flag whose two branches are the same once converted is its body.

Old PyTorch code chooses the device by hand, a branch per device:

    if self.gpu_mode:
        x_p = x_ + 0.5 * x_.std() * torch.rand(x_.size()).cuda()
    else:
        x_p = x_ + 0.5 * x_.std() * torch.rand(x_.size())

The conversion drops `.cuda()`, so both branches become one statement. Kept as an `if`, it hides the statements
from the passes that read a training loop's body (the draw sits in a branch, so the step around it is taped, not
compiled). When the test, as written, only reads a name or an attribute chain (`self.gpu_mode`, `not
args.no_cuda`, `args.device != 'cpu'`: reading it calls nothing the program wrote) and the branches' converted
code is the same (their comments and layout aside), the
`if` runs that code whichever way the test goes: the `if` becomes its first branch, which keeps its lines. An `if`
on a plain flag whose only branch is left empty by the conversion (`if self.gpu_mode: self.G.cuda()`: `pass`)
does nothing either way, and goes."""
from __future__ import annotations

import ast
import re
import textwrap
from typing import List, Optional

import libcst as cst

_MARK = re.compile(r"#@msmigrate-line:\d+@")    # line_map.py's marks: the branches' lines differ


def plain_test(test: cst.BaseExpression) -> bool:
    """a name or an attribute chain of names (`self.gpu_mode`), `not` one, or one compared with a literal
    (`args.device == 'cuda'`): reading it calls nothing the program wrote"""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return plain_test(test.expression)
    if isinstance(test, cst.Comparison):
        return _read_only(test.left) and all(
            isinstance(c.operator, (cst.Equal, cst.NotEqual, cst.Is, cst.IsNot))
            and (_read_only(c.comparator) or isinstance(c.comparator, (cst.SimpleString, cst.Integer)))
            for c in test.comparisons)
    return _read_only(test)


def _read_only(test: cst.BaseExpression) -> bool:
    while isinstance(test, cst.Attribute):
        test = test.value
    return isinstance(test, cst.Name)


def _shape(block: cst.IndentedBlock) -> Optional[str]:
    """The block's code as Python sees it (comments and layout set aside); None where it does not parse alone."""
    code = _MARK.sub("", cst.Module(body=list(block.body)).code)
    try:
        return ast.dump(ast.parse(textwrap.dedent(code)))
    except SyntaxError:
        return None


def merged(node: cst.If, written: Optional[cst.BaseExpression] = None) -> Optional[List[cst.BaseStatement]]:
    """The statements an `if plain_flag: A else: A` (converted) stands for, the `if`'s leading lines and a note
    on the first; None where the `if` is not one. written: the test as the program wrote it (what is plain is
    the original's: `args.device` reads as `_ms_compat.device_of(args)` once converted)."""
    written = node.test if written is None else written
    if not (isinstance(node.orelse, cst.Else) and plain_test(written)
            and isinstance(node.body, cst.IndentedBlock) and isinstance(node.orelse.body, cst.IndentedBlock)):
        return None
    first = _shape(node.body)
    if first is None or first != _shape(node.orelse.body):
        return None
    test = cst.Module(body=[]).code_for_node(written)
    note = cst.EmptyLine(comment=cst.Comment(
        f"# msmigrate: `if {test}:` and its `else:` are the same once converted (a branch per device): one of them"))
    body = list(node.body.body)
    body[0] = body[0].with_changes(leading_lines=list(node.leading_lines) + [note] + list(body[0].leading_lines))
    return body


def emptied(node: cst.If, written: Optional[cst.BaseExpression] = None) -> bool:
    """`if plain_flag: pass` with no `else` and no comment in it (what the conversion left of a device move)."""
    written = node.test if written is None else written
    if node.orelse is not None or not plain_test(written) or not isinstance(node.body, cst.IndentedBlock):
        return False
    return all(isinstance(st, cst.SimpleStatementLine) and not st.leading_lines
               and all(isinstance(small, cst.Pass) for small in st.body)
               and _no_comment(st.trailing_whitespace) for st in node.body.body) and _no_comment(node.body.header)


def _no_comment(ws: cst.TrailingWhitespace) -> bool:
    return ws.comment is None or not _MARK.sub("", ws.comment.value).strip()
