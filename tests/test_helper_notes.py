"""The comment at each helper's first use in a converted tree (msmigrate/helper_notes.py)."""
from __future__ import annotations

import textwrap

from msmigrate.helper_notes import WHY, annotate_first_uses

HELPER = textwrap.dedent('''\
    def documented(x):
        """Does what torch does. More words."""
        return x


    def bare(x):
        return x
    ''')


def test_first_use_in_the_tree_gets_the_reason():
    a = textwrap.dedent('''\
        import _ms_compat


        def f(model):
            sd = _ms_compat.state_dict(
                model)
            return _ms_compat.state_dict(model), _ms_compat.documented(1)
        ''')
    b = "from . import _ms_compat\nx = _ms_compat.state_dict(m)\ny = _ms_compat.bare(2)\n"
    out = annotate_first_uses({"a.py": a, "pkg/b.py": b, "c.txt": None}, HELPER, "_ms_compat")
    lines = out["a.py"].split("\n")
    # above the statement's first line, indented like it; the second use and the other file get none
    i = lines.index("    sd = _ms_compat.state_dict(")
    above = lines[lines.index("def f(model):") + 1:i]
    assert above[0].startswith("    # _ms_compat.state_dict (helper): ") and all(x.startswith("    # ") for x in above)
    assert " ".join(x[6:] for x in above).endswith(WHY["state_dict"])
    assert sum("(helper):" in line for line in lines) == 2, out["a.py"]
    assert "# _ms_compat.documented (helper): Does what torch does\n" in out["a.py"], "else the docstring's first sentence"
    assert out["pkg/b.py"] == b, "a helper without a reason (no docstring) and one seen before: no comment"
    compile(out["a.py"], "a.py", "exec")
    assert annotate_first_uses(out, HELPER, "_ms_compat") == out, "converted again: no second comment"


def test_the_comment_goes_above_the_statements_first_line():
    code = "import _ms_compat\nx = 1 + \\\n    _ms_compat.save(y)\n"
    out = annotate_first_uses({"a.py": code}, HELPER, "_ms_compat")["a.py"]
    assert out.startswith("import _ms_compat\n# _ms_compat.save (helper): ")
    assert out.endswith("\nx = 1 + \\\n    _ms_compat.save(y)\n")
    compile(out, "a.py", "exec")
