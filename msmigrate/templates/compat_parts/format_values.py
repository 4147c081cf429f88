"""A tensor formatted with a format spec (msmigrate/format_values.py): torch's Tensor.__format__ formats a
0-d tensor as its Python number; MindSpore's Tensor has no __format__ (f"{loss:.4f}" raises TypeError)."""


def format_value(value):
    """`{value:.4f}`: a 0-d tensor's number (torch's self.item().__format__(spec)); anything else as it is."""
    if isinstance(value, ms.Tensor) and value.ndim == 0:
        return value.item()
    return value
