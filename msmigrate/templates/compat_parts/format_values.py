"""A tensor formatted with a format spec (msmigrate/format_values.py): torch's Tensor.__format__ formats a
0-d tensor as its Python number; MindSpore's Tensor has no __format__ (f"{loss:.4f}" raises TypeError)."""


def format_value(value):
    """`{value:.4f}`: a 0-d tensor's number (torch's self.item().__format__(spec)); anything else as it is."""
    if isinstance(value, ms.Tensor) and value.ndim == 0:
        return value.item()
    return value


import string


class _SpecFormatter(string.Formatter):
    """str.format where a field with a spec formats a 0-d tensor as its number (format_value)."""

    def format_field(self, value, format_spec):
        return super().format_field(format_value(value) if format_spec else value, format_spec)


def format_str(text, *args, **kwargs):
    """`text.format(*args, **kwargs)` whose values come from a mapping (AverageMeter's
    `fmtstr.format(**self.__dict__)`, values that may be 0-d tensors): fields with a spec as format_value
    gives them; an object that is no string formats with its own format()."""
    if not isinstance(text, str):
        return text.format(*args, **kwargs)
    return _SpecFormatter().vformat(text, args, kwargs)
