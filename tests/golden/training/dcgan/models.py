import mindspore as ms
from mindspore import nn, ops
import _ms_compat


# custom weights initialization called on netG and netD
def weights_init(m):
    classname = m.__class__.__name__
    if classname.find('Conv') != -1:
        m.weight.set_data(ms.common.initializer.initializer(ms.common.initializer.Normal(sigma=0.02, mean=0.0), m.weight.shape, m.weight.dtype))
    elif classname.find('BatchNorm') != -1:
        m.gamma.set_data(ms.common.initializer.initializer(ms.common.initializer.Normal(sigma=0.02, mean=1.0), m.gamma.shape, m.gamma.dtype))
        m.beta.set_data(ms.common.initializer.initializer(ms.common.initializer.Zero(), m.beta.shape, m.beta.dtype))


class Generator(nn.Cell):
    """z (nz x 1 x 1) -> a 32x32 image in [-1, 1]."""

    def __init__(self, nz=100, ngf=64, nc=3):
        super(Generator, self).__init__()
        # _ms_compat.Tanh (helper): torch.nn.Tanh: precise_tanh
        self.main = nn.SequentialCell(
            # input is Z, going into a convolution
            nn.Conv2dTranspose(nz, ngf * 4, 4, 1, has_bias=False, pad_mode='valid'),
            nn.BatchNorm2d(ngf * 4),
            nn.ReLU(),
            # state size. (ngf*4) x 4 x 4
            nn.Conv2dTranspose(ngf * 4, ngf * 2, 4, 2, has_bias=False, pad_mode='pad', padding=1),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(),
            # state size. (ngf*2) x 8 x 8
            nn.Conv2dTranspose(ngf * 2, ngf, 4, 2, has_bias=False, pad_mode='pad', padding=1),
            nn.BatchNorm2d(ngf),
            nn.ReLU(),
            # state size. (ngf) x 16 x 16
            nn.Conv2dTranspose(ngf, nc, 4, 2, has_bias=False, pad_mode='pad', padding=1),
            _ms_compat.Tanh()
            # state size. (nc) x 32 x 32
        )
        self.set_train(True)  # msmigrate: torch modules start in training mode (MindSpore cells: inference mode)

    def construct(self, input):
        return self.main(input)


class Discriminator(nn.Cell):
    """A 32x32 image -> the probability that it is real."""

    def __init__(self, ndf=64, nc=3):
        super(Discriminator, self).__init__()
        # _ms_compat.LeakyReLU (helper): torch.nn.LeakyReLU: leaky_relu's gradient at 0 (the slope, as torch;
        # compat_parts/nn_extra.py)
        self.main = nn.SequentialCell(
            # input is (nc) x 32 x 32
            nn.Conv2d(nc, ndf, 4, 2, has_bias=False, pad_mode='pad', padding=1),
            _ms_compat.LeakyReLU(0.2),
            # state size. (ndf) x 16 x 16
            nn.Conv2d(ndf, ndf * 2, 4, 2, has_bias=False, pad_mode='pad', padding=1),
            nn.BatchNorm2d(ndf * 2),
            _ms_compat.LeakyReLU(0.2),
            # state size. (ndf*2) x 8 x 8
            nn.Conv2d(ndf * 2, ndf * 4, 4, 2, has_bias=False, pad_mode='pad', padding=1),
            nn.BatchNorm2d(ndf * 4),
            _ms_compat.LeakyReLU(0.2),
            # state size. (ndf*4) x 4 x 4
            nn.Conv2d(ndf * 4, 1, 4, 1, has_bias=False, pad_mode='valid'),
            nn.Sigmoid()
        )
        self.set_train(True)  # msmigrate: torch modules start in training mode (MindSpore cells: inference mode)

    def construct(self, input):
        output = self.main(input)
        return ops.squeeze(output.view(-1, 1), 1)
