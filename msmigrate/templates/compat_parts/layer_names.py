"""torch's names of layer settings, read where the converter could not tell the layer's type (thop's counting
hooks get `m` from a table of layer classes: `m.groups`, `m.in_features`, an RNN's `m.bias`, a Softmax's
`m.dim`, `getattr(m, "affine", False)` of a BatchNorm), answered from what MindSpore's layer keeps under its own
name. Non-data descriptors on MindSpore's classes: an attribute set on the layer itself comes first. MindSpore's
BatchNorm keeps no `affine` (gamma/beta get requires_grad=affine, which a freeze changes): its constructor's
argument is kept (a converter norm layer's torch_affine first, as module_tree.affine_off reads it)."""
import inspect
from mindspore import nn


class _TorchSetting:
    def __init__(self, read):
        self.read = read

    def __get__(self, layer, owner=None):
        return self if layer is None else self.read(layer)


def _batchnorm_affine(init):
    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.__dict__["_ms_affine_argument"] = inspect.signature(init).bind(self, *args, **kwargs).arguments.get(
            "affine", True)
    __init__.keeps_affine = True
    return __init__


# each statement patches a MindSpore class: kept in every converted tree's helper module (runtime_prune.py)
nn.Conv1d.groups = nn.Conv2d.groups = nn.Conv3d.groups = nn.Conv1dTranspose.groups = nn.Conv2dTranspose.groups = \
    nn.Conv3dTranspose.groups = _TorchSetting(lambda layer: layer.group)
nn.Dense.in_features = _TorchSetting(lambda layer: layer.in_channels)
nn.Dense.out_features = _TorchSetting(lambda layer: layer.out_channels)
nn.LeakyReLU.negative_slope = _TorchSetting(lambda layer: layer.alpha)
nn.Softmax.dim = _TorchSetting(lambda layer: (lambda axis: axis[0] if len(axis) == 1 else axis)(layer.softmax.axis))
nn.RNN.bias = nn.GRU.bias = nn.LSTM.bias = nn.RNNCell.bias = nn.GRUCell.bias = nn.LSTMCell.bias = \
    _TorchSetting(lambda layer: layer.has_bias)
nn.layer.normalization._BatchNorm.affine = _TorchSetting(
    lambda bn: bn.__dict__.get("torch_affine", bn.__dict__.get("_ms_affine_argument", True)))
if not getattr(nn.layer.normalization._BatchNorm.__init__, "keeps_affine", False):
    nn.layer.normalization._BatchNorm.__init__ = _batchnorm_affine(nn.layer.normalization._BatchNorm.__init__)
