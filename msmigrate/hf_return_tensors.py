"""`tokenizer(texts, padding=True, return_tensors="pt")`: a Hugging Face tokenizer, processor or feature extractor
asked for torch tensors. The call needs torch installed and hands the converted model torch tensors: torch copied
through in a string. It asks for NumPy arrays instead (`return_tensors="np"`, which every such call takes) and
`_ms_compat.ms_tensors` makes each array a MindSpore tensor in place, so a BatchEncoding keeps its methods and
attribute reads (`enc.input_ids`, `enc.to(...)` is not kept: torch's device move). Calls of torch names
(`DataCollatorWithPadding(tok, return_tensors="pt")`) are sites of their own and are left to them."""
from __future__ import annotations

from typing import Optional

import libcst as cst

from . import registry as R
from .callsite import code_of
from .sites import Site, shorten

API = "transformers: return_tensors='pt'"
TEST = "tests/parity/test_hf_return_tensors.py"
NOTE = "asks for NumPy arrays (return_tensors='np'), made MindSpore tensors by _ms_compat.ms_tensors"


def _asks_for_torch(arg: cst.Arg) -> bool:
    return (arg.keyword is not None and arg.keyword.value == "return_tensors"
            and isinstance(arg.value, cst.SimpleString) and arg.value.evaluated_value == "pt")


def converted(tr, original: cst.Call, updated: cst.Call) -> Optional[cst.BaseExpression]:
    """The call asking for NumPy arrays, wrapped in _ms_compat.ms_tensors; None when it asks for no torch tensors
    or is a torch name's call (a site of its own)."""
    if not any(_asks_for_torch(a) for a in updated.args) or tr._torch_qname(original.func) is not None:
        return None
    args = [a.with_changes(value=cst.SimpleString(a.value.value[0] + "np" + a.value.value[-1]))
            if _asks_for_torch(a) else a for a in updated.args]
    tr.uses_compat = True
    tr.touched = True
    tr.sites.append(Site(tr._line(original), API, "_ms_compat.ms_tensors(..., return_tensors='np')", R.CONVERTED,
                         NOTE, shorten(code_of(original)), TEST))
    return cst.Call(func=cst.Attribute(cst.Name("_ms_compat"), cst.Name("ms_tensors")),
                    args=[cst.Arg(updated.with_changes(args=args))])
