"""torch's private base classes that real code subclasses or type-checks against
(torch.nn.modules.loss._Loss / _WeightedLoss). Subclassing them gives torch's reduction
and weight attributes; isinstance() answers for the converted built-in losses too."""
import mindspore as ms
from mindspore import nn

# torch's losses that derive from _WeightedLoss (a class weight buffer)
_WEIGHTED_LOSS_NAMES = ("CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "MultiLabelSoftMarginLoss",
                        "MultiMarginLoss")


def _is_converted_loss(obj, weighted):
    """A MindSpore loss Cell standing for one of torch's built-in losses."""
    cls = type(obj)
    if not isinstance(obj, nn.Cell) or not cls.__name__.endswith("Loss"):
        return False
    if weighted:
        return cls.__name__ in _WEIGHTED_LOSS_NAMES
    return isinstance(obj, nn.LossBase) or cls.__module__ == __name__


class _LossMeta(type):
    def __instancecheck__(cls, obj):
        if type.__instancecheck__(cls, obj):
            return True
        return cls.__name__ in ("LossModule", "WeightedLossModule") and \
            _is_converted_loss(obj, cls.__name__ == "WeightedLossModule")


def _reduction_from_legacy(size_average, reduce):
    """torch's _Reduction.legacy_get_string."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        return "mean"
    return "sum" if reduce else "none"


class LossModule(nn.Cell, metaclass=_LossMeta):
    """torch.nn.modules.loss._Loss: keeps `reduction` (from the legacy size_average/reduce flags
    when given, as torch does)."""

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = _reduction_from_legacy(size_average, reduce)
        self.reduction = reduction


class WeightedLossModule(LossModule):
    """torch.nn.modules.loss._WeightedLoss: also a `weight` buffer (saved in checkpoints as torch saves it)."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        if weight is None:
            self.weight = None
        else:
            register_buffer(self, "weight", weight)
