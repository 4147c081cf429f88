"""f-strings whose fields the conversion fills with code quoting the f-string's own quote (msmigrate/fstring_quotes.py):
before, transformers' generation/continuous_batching/utils.py converted to a SyntaxError under Python 3.11
(`f"... {torch.get_device_module().__name__ = }."` with a TODO's reason holding a `'` and a `"`), so the file was
copied unchanged, `import torch` and all, and 36 converted transformers modules importing it failed."""
import libcst as cst
import pytest

from msmigrate.converter import convert_code
from msmigrate.fstring_quotes import concatenated

X, NAME, ROWS = 3.14159, "ab", [1, 2, 3]


@pytest.mark.parametrize("src", ['f"{X = }"', 'f"{X=}"', 'f"a {X = :.2f} b"', 'f"{ X=!s} and {NAME!r:>6}"',
                                 "f'v={X:.1f}'", 'rf"\\d{X}"', 'f"{X}"', 'f"{ROWS[1:2] = }"', 'f"{{lit}} {X!a}"'])
def test_concatenation_equals_the_f_string(src):
    node = cst.parse_expression(src)
    code = cst.Module([]).code_for_node(concatenated(node, node))
    assert "format(" in code and eval(code) == eval(src), code


def test_todo_inside_an_f_string_field_converts_to_code_every_python_reads():
    from tests.parity.harness import load_converted

    src = ("import torch\n\n\n"
           "def describe():\n"
           "    return f\"device: {torch.get_device_module().__name__ = }.\"\n")
    code, sites, _ = convert_code(src, module_name="m")
    assert any(s.api == "torch.get_device_module" and s.status == "todo" for s in sites)
    compile(code, "m.py", "exec")       # Python 3.11 (the pinned one) refuses the f-string form
    assert '("device: " + "torch.get_device_module().__name__ = " + format(repr(' in code, code
    mod, _, _ = load_converted(src)
    with pytest.raises(Exception) as err:
        mod.describe()
    assert type(err.value).__name__ == "MigrationError" and "torch.get_device_module" in str(err.value)


def test_tensorflow_todo_inside_a_single_quoted_f_string():
    """The TensorFlow pass's placeholders quote with `'`: inside f'...' they need the same rewrite."""
    src = "import tensorflow as tf\n\n\ndef describe(x):\n    return f'value: {tf.no_such_api(x)!r}'\n"
    code, sites, _ = convert_code(src, module_name="m")
    assert [s.api for s in sites if s.status == "todo"] == ["tensorflow.no_such_api"]
    compile(code, "m.py", "exec")
    assert "('value: ' + format(repr(_ms_compat.Unconverted('tensorflow.no_such_api'" in code, code
