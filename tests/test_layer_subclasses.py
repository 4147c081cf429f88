"""Layers as model libraries write them (timm's layers/norm_act.py, layers/std_conv.py, models/starnet.py), run
under torch and converted: a BatchNorm subclass whose forward calls F.batch_norm with its own statistics, weight, bias and momentum;
the layer made by a factory and reached through a holder the converter cannot type (`self.conv2.bn.weight`: the
adapter answers torch's names); a layer added with `self.add_module('bn', ...)` (typed as an assignment is); a Conv2d subclass with its own reset_parameters() that torch's Conv2d.__init__ calls
and that calls super().reset_parameters() (the adapter has torch's, and calls the subclass's at the end of __init__
as torch does)."""
import numpy as np

from tests.parity.test_layers import check_stateful

NORM_ACT = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class BatchNormAct2d(nn.BatchNorm2d):
    def __init__(self, num_features, momentum=0.1, apply_act=True):
        super().__init__(num_features, momentum=momentum)
        self.act = nn.ReLU() if apply_act else nn.Identity()

    def forward(self, x):
        x = F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias, self.training,
                         self.momentum, self.eps)
        return self.act(x)


_NORMS = {"bnact": BatchNormAct2d}


def get_norm(name):
    return _NORMS[name]


class ConvNormAct(nn.Module):
    def __init__(self, cin, cout, norm="bnact", momentum=0.1):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1, bias=False)
        self.bn = get_norm(norm)(cout, momentum=momentum)

    def forward(self, x):
        return self.bn(self.conv(x))


class ConvBN(nn.Sequential):
    def __init__(self, cin, cout):
        super().__init__()
        self.add_module("conv", nn.Conv2d(cin, cout, 1))
        self.add_module("bn", nn.BatchNorm2d(cout))
        nn.init.constant_(self.bn.weight, 0.5)
        nn.init.constant_(self.bn.bias, 0.1)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = ConvNormAct(2, 4)
        self.conv2 = ConvNormAct(4, 4, momentum=0.3)
        self.proj = ConvBN(4, 3)
        nn.init.constant_(self.conv2.bn.weight, 2.0)
        nn.init.constant_(self.conv2.bn.bias, -0.5)

    def forward(self, x):
        return self.proj(self.conv2(self.conv1(x)))


def make():
    return Block()
'''


def test_norm_act_subclass_reached_through_a_factory():
    x = np.random.default_rng(0).standard_normal((2, 2, 5, 5)).astype(np.float32)
    # the initial values of __init__ (randomize=False), then running statistics after two training steps
    code, _ = check_stateful(NORM_ACT, [x], train=True, steps=2, graph=False, randomize=False)
    assert "self.bn.gamma.set_data" in code      # add_module's layer typed
    check_stateful(NORM_ACT, [x], train=True, steps=2, graph=True)


STD_CONV = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class ScaledStdConv2d(nn.Conv2d):
    def __init__(self, cin, cout, kernel_size, gain_init=1.0, eps=1e-6):
        self.calls = []
        super().__init__(cin, cout, kernel_size, padding=kernel_size // 2)
        self.gain = nn.Parameter(torch.full((self.out_channels, 1, 1, 1), gain_init))
        self.gain_init = gain_init
        self.scale = self.weight[0].numel() ** -0.5
        self.eps = eps
        self.reset_parameters()

    def reset_parameters(self):
        self.calls.append(hasattr(self, "gain"))
        if hasattr(self, "gain"):
            torch.nn.init.constant_(self.gain, self.gain_init)
            super().reset_parameters()

    def forward(self, x):
        weight = F.batch_norm(self.weight.reshape(1, self.out_channels, -1), None, None,
                              weight=(self.gain * self.scale).view(-1), training=True, momentum=0., eps=self.eps
                              ).reshape_as(self.weight)
        return F.conv2d(x, weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = ScaledStdConv2d(2, 3, 3, gain_init=0.5)
        self.calls = self.conv.calls

    def forward(self, x):
        return self.conv(x)


def make():
    return Net()
'''


def test_conv_subclass_resetting_its_parameters():
    from tests.parity.harness import load_converted

    x = np.random.default_rng(1).standard_normal((2, 2, 6, 6)).astype(np.float32)
    check_stateful(STD_CONV, [x], train=False, steps=1, graph=False)
    mod, _, _ = load_converted(STD_CONV)
    net = mod.make()
    assert net.calls == [False, True]      # torch's Conv2d.__init__ calls it, then the subclass
    w = net.conv.weight.asnumpy()
    bound = 1 / np.sqrt(2 * 3 * 3)
    assert np.abs(w).max() <= bound and np.abs(w).max() > bound / 2 and float(net.conv.gain.asnumpy().max()) == 0.5


SETTER_EMBEDDINGS = '''
import numpy as np
import torch
import torch.nn as nn


def fill_(tensor, value):
    """the project's own initializer (transformers' `initialization` module)"""
    with torch.no_grad():
        tensor.fill_(value)
    return tensor


class Scaled(nn.Embedding):
    def __init__(self, n, d, padding_idx, scale=2.0):
        super().__init__(n, d, padding_idx)
        self.scale = scale

    def forward(self, ids):
        return super().forward(ids) * self.scale


class Pre(nn.Module):
    def _init_weights(self, module):
        if isinstance(module, (Encoder, Seq2Seq)):
            fill_(module.shared.weight, 0.25)


class Encoder(Pre):
    def __init__(self):
        super().__init__()
        self.shared = nn.Embedding(6, 3)
        self._init_weights(self)

    def set_input_embeddings(self, value):
        self.shared = value

    def forward(self, ids):
        return self.shared(ids)


class Seq2Seq(Pre):
    def __init__(self):
        super().__init__()
        self.shared = Scaled(6, 3, 0)
        self._init_weights(self)

    def forward(self, ids):
        return self.shared(ids)


ids = torch.tensor([[0, 1, 5]])
weights = [Encoder()(ids).detach(), Seq2Seq()(ids).detach()]
'''


def test_embedding_weight_read_where_a_setter_stores_a_parameter():
    """`module.shared.weight` handed to a project function, where `module` is narrowed to classes whose `shared` is
    an nn.Embedding (and a setter stores a parameter there) or a subclass of one (transformers' T5 and BART
    _init_weights): MindSpore's Embedding has no `weight` ("'Embedding' object has no attribute 'weight'" building
    T5EncoderModel); it is read as embedding_table."""
    from tests.parity.harness import program_weights_match_torch

    code, _ = program_weights_match_torch(SETTER_EMBEDDINGS, graph=False)
    assert "fill_(module.shared.embedding_table, 0.25)" in code, code


TIED_EMBEDDINGS = '''
import torch
import torch.nn as nn


class Scaled(nn.Embedding):
    def __init__(self, n, d, padding_idx, scale=2.0):
        super().__init__(n, d, padding_idx)
        self.scale = scale

    def forward(self, ids):
        return super().forward(ids) * self.scale


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = Scaled(6, 3, 0)
        self.embed_tokens = Scaled(6, 3, 0)
        with torch.no_grad():
            self.shared.weight.copy_(torch.arange(18.0).reshape(6, 3))
        setattr(self.embed_tokens, "weight", self.shared.weight)    # transformers' tie_weights

    def forward(self, ids):
        return self.embed_tokens(ids) + self.shared(ids)


model = Model()
ids = torch.tensor([[0, 1, 5]])
weights = [model(ids).detach(), torch.tensor(float(len(list(model.parameters()))))]
'''


def test_embedding_subclass_weight_tied_by_setattr():
    """`setattr(emb, "weight", other.weight)` on a subclass of nn.Embedding (transformers' tie_weights on BART's
    ScaledWordEmbedding): MindSpore refused a second Parameter named weight ("the weight parameter already exists in
    the network"); the table is the shared one, as torch ties it."""
    from tests.parity.harness import program_weights_match_torch

    program_weights_match_torch(TIED_EMBEDDINGS, graph=False)
