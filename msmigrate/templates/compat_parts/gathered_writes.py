# A tensor read through an index tensor or a list, then written by subscript (`lab = labels[match]`, then
# `lab[score < 0.5] = 0`): torch's read is a copy; MindSpore 2.10's PYNATIVE result stays tied to its source,
# and the write changes the source too (measured: `t = s[idx]; t[mask] = 5` set s[0]). msmigrate/gathered_writes.py
# binds such reads through own_gathered.


def own_gathered(value, *parts):
    """`value` (a subscript read) as a tensor of its own when one of the index's `parts` is a tensor or a list
    (torch's advanced indexing: a copy); otherwise (int or slice parts, torch's view) `value` itself."""
    if not isinstance(value, ms.Tensor):
        return value
    for part in parts:
        if isinstance(part, (ms.Tensor, list)):
            return ops.deepcopy(value)
    return value
