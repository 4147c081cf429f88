"""Sizes of a Python file that the converter refuses before libcst sees it.

libcst's native parser overflows its stack (a segmentation fault, which takes the whole
run down) on a very deep expression, e.g. a 10,000-operand `and` chain, and needs time and
memory that grow faster than the size of one very long statement (a 3.7 MiB literal: 382 s,
6 GB). The converter itself recurses once per nesting level and gives up near 300 levels.
So each statement is measured first with a cheap scan (a regular expression, no parser):
its nesting depth (operators chained inside one operand, brackets, attribute and call
chains) and its number of tokens. A file past a limit is reported and copied unchanged.
"""
from __future__ import annotations

import os
import re
from typing import Optional

MAX_EXPRESSION_DEPTH = 500
MAX_STATEMENT_TOKENS = 50_000
TOKENS_ENV = "MSMIGRATE_MAX_STATEMENT_TOKENS"

# an unterminated string runs to the end of its line (or of the text): a scan never fails and restarts, so
# it stays linear on crafted quotes
_TOKEN = re.compile(r"""
    (?P<str>(?:[rRbBuUfF]{0,2})(?:'''(?:\\.|[^\\])*?(?:'''|\Z)|\"\"\"(?:\\.|[^\\])*?(?:\"\"\"|\Z)
        |'(?:\\.|[^'\\\n])*'?|"(?:\\.|[^"\\\n])*"?))
  | (?P<comment>\#[^\n]*)
  | (?P<cont>\\\r?\n)
  | (?P<nl>\r?\n|\r)
  | (?P<open>[(\[{])
  | (?P<close>[)\]}])
  | (?P<sep>,|;|:=|->|==|!=|<=|>=|(?:\*\*|//|>>|<<|[-+*/%@&|^])=|=|:)
  | (?P<num>\.?\d[\w.]*(?:[eE][-+]?\d+)?)
  | (?P<op>\*\*|//|>>|<<|[-+*/%@&|^~<>.])
  | (?P<name>[^\W\d]\w*)
  | (?P<space>[ \t\f]+)
  | (?P<other>.)
""", re.VERBOSE | re.DOTALL)

_KEYWORD_OPS = frozenset(("and", "or", "not", "if", "else", "lambda", "in", "is", "await", "for"))
_COMPARISONS = frozenset(("==", "!=", "<=", ">="))


def _token_limit() -> int:
    raw = os.environ.get(TOKENS_ENV, "")
    return int(raw) if raw.isdigit() and int(raw) > 0 else MAX_STATEMENT_TOKENS


def source_problem(text: str) -> Optional[str]:
    """Why `text` must not be given to libcst (one line), or None."""
    max_tokens = _token_limit()
    line = 1
    start_line = 1
    tokens = 0
    # one frame per open bracket: [operators in the current operand, deepest bracket inside it,
    # deepest operand seen in this bracket, bracket kind]
    frames = [[0, 0, 0, ""]]
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind in ("space", "comment"):
            continue
        if kind == "cont":
            line += 1
            continue
        if kind == "nl":
            line += 1
            if len(frames) == 1:          # end of a logical line
                frames = [[0, 0, 0, ""]]
                tokens = 0
                start_line = line
            continue
        if kind == "str":
            line += m.group().count("\n")
        tokens += 1
        if tokens > max_tokens:
            return (f"the statement at line {start_line} has more than {max_tokens} tokens; msmigrate converts "
                    f"statements up to that size (libcst's time and memory grow faster than the statement; set "
                    f"{TOKENS_ENV} to raise the limit)")
        top = frames[-1]
        if kind == "open":
            top[0] += 1                  # a call, subscript or group is one more level
            frames.append([0, 0, 0, m.group()])
        elif kind == "close":
            if len(frames) > 1:
                inner = frames.pop()
                depth = max(inner[2], inner[0] + inner[1])
                frames[-1][1] = max(frames[-1][1], depth)
        elif kind == "sep":
            sep = m.group()
            if sep in _COMPARISONS:
                top[0] += 1
            elif sep != ":" or top[3] in ("[", "{"):   # ':' also ends lambda parameters: keep counting there
                top[2] = max(top[2], top[0] + top[1])
                top[0] = top[1] = 0
        elif kind == "op" or (kind == "name" and m.group() in _KEYWORD_OPS):
            top[0] += 1
        else:
            continue
        top = frames[-1]
        if top[0] + top[1] > MAX_EXPRESSION_DEPTH or len(frames) > MAX_EXPRESSION_DEPTH:
            return (f"the expression at line {start_line} nests more than {MAX_EXPRESSION_DEPTH} levels deep "
                    f"(chained operators, calls or brackets); libcst and the converter cannot parse it safely")
    return None
