"""torch.tensor(data) of a Python list whose items may be tensors (msmigrate/python_sequences.py): torch reads a
one-element tensor inside the list as its number, so `torch.tensor([[a], [b]])` of shape-[1] actions is [2, 1];
mindspore.Tensor keeps each tensor's own dimensions ([2, 1, 1]), and the batch broadcasts wrongly afterwards."""


def tensor_data(data):
    """The list as torch.tensor reads it: each tensor in it (at any depth) as a 0-d tensor of its one value."""
    def read(item):
        if isinstance(item, ms.Tensor):
            if item.size != 1:
                raise ValueError("only one element tensors can be converted to Python scalars")
            return item.reshape(())
        return [read(i) for i in item] if isinstance(item, (list, tuple)) else item
    return read(data)
