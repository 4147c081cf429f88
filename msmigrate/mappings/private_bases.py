"""torch's private base classes that real code subclasses or checks with isinstance()."""
from __future__ import annotations

from ..records import DIFFERENCE, mapping

T = "tests/parity/test_canonical_paths.py"

mapping("torch.nn.modules.loss._Loss", "_ms_compat.LossModule", args=("size_average", "reduce", "reduction"),
        target_args=("size_average", "reduce", "reduction"),
        note="a Cell base keeping torch's reduction attribute; isinstance() also holds for converted built-in losses",
        test=f"{T}::test_private_bases")
mapping("torch.nn.modules.loss._WeightedLoss", "_ms_compat.WeightedLossModule",
        args=("weight", "size_average", "reduce", "reduction"),
        target_args=("weight", "size_average", "reduce", "reduction"),
        note="as _Loss, plus the weight buffer (a non-trained Parameter, so checkpoints keep it)",
        test=f"{T}::test_private_bases")
mapping("torch.nn.modules.batchnorm._BatchNorm", "mindspore.nn.layer.normalization._BatchNorm", status=DIFFERENCE,
        args=("num_features",), target_args=("num_features",),
        note="MindSpore's base of BatchNorm1d/2d/3d: for isinstance(); a subclass takes MindSpore's arguments",
        test=f"{T}::test_private_bases")
mapping("torch.nn.modules.conv._ConvNd", "mindspore.nn.layer.conv._Conv", status=DIFFERENCE,
        note="MindSpore's base of every (transposed) convolution: for isinstance(); a subclass takes MindSpore's "
             "arguments", test=f"{T}::test_private_bases")
