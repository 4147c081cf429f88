"""`x.grad` read where no converted train step computes it (msmigrate/grad_reads.py)."""


def tensor_grad(value, where):
    """torch's `value.grad`: MindSpore tensors keep no gradient, so on a tensor this raises
    MigrationError naming the original site; on any other object it is the attribute."""
    if isinstance(value, ms.Tensor):
        raise MigrationError(
            f"Tensor.grad at {where} was not converted to MindSpore (MindSpore keeps no .grad on a tensor: "
            "gradients are the values mindspore.value_and_grad returns); see the '# msmigrate: TODO' comment "
            "there and the migration report")
    return value.grad
