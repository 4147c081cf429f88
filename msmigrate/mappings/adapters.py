"""Layer classes that torch code passes around as values (norm_layer=nn.BatchNorm2d)
are called elsewhere with torch's arguments, where the converter cannot translate
them. Such references become adapter subclasses in the emitted _ms_compat.py that
take torch's arguments and build the MindSpore layer."""
from __future__ import annotations

from ..records import ADAPTERS as _ADAPTERS

for _name in ("ReLU", "ReLU6", "SiLU", "Hardswish", "Hardsigmoid", "Sigmoid", "Tanh", "GELU",
              "BatchNorm1d", "BatchNorm2d", "GroupNorm", "Linear", "Conv2d", "LayerNorm", "Dropout", "Sequential",
              "LeakyReLU", "ELU", "Mish", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
              "ModuleDict", "LSTM", "GRU", "RNN", "Conv1d", "Conv3d", "MaxPool1d", "MaxPool2d", "MaxPool3d",
              "AvgPool1d", "AvgPool2d", "AvgPool3d", "Embedding", "Upsample", "ConvTranspose1d",
              "ConvTranspose2d", "ConvTranspose3d"):
    _ADAPTERS[f"torch.nn.{_name}"] = f"_ms_compat.{_name}"
