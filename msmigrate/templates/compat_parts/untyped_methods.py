"""A tensor method on a receiver the converter could not type (msmigrate/untyped_methods.py): torch's
meaning on a MindSpore tensor, the object's own method on anything else."""


def is_tensor(x):
    return isinstance(x, ms.Tensor)


def on_tensor(x, tensor_form, method):
    """tensor_form(x) for a MindSpore tensor, method(x) (the call as written) otherwise."""
    if isinstance(x, ms.Tensor):
        return tensor_form(x)
    return method(x)
