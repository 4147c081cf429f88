"""`d_loss = d_real; d_loss += d_fake` (msmigrate/aug_aliases.py): torch's `+=` changed the one tensor both
names held; MindSpore's PyNative `+=` made a new one. The alias follows the changed tensor."""
import mindspore as ms


def inplace_alias(changed, alias):
    """`changed` when the alias held a tensor (torch changed it in place), else the alias as it is."""
    return changed if isinstance(alias, ms.Tensor) else alias
