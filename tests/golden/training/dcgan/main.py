"""Deep convolutional GAN on an image folder (after pytorch/examples/dcgan).

    python main.py --dataroot ~/images --niter 25 --outf out

--dataroot is an ImageFolder tree (one sub-directory per class; the labels are not used).
"""
from __future__ import print_function
import argparse
import json
import os
import random

import numpy as np
import mindspore as ms
from mindspore import ops
import _ms_compat

from models import Discriminator, Generator, weights_init

# msmigrate: GRAPH_MODE compiles the train step (fast); PYNATIVE_MODE runs op by op (debugging)
# msmigrate: the device comes from MS_DEVICE_TARGET (CPU, GPU or Ascend)
ms.set_context(mode=ms.GRAPH_MODE)
# _ms_compat.set_device (helper): warns instead of raising once MindSpore's runtime has started
_ms_compat.set_device(os.environ.get('MS_DEVICE_TARGET', 'CPU'))
# msmigrate: MindSpore's CPU convolutions are ~100x slower with oneDNN's AVX-512 path
os.environ.setdefault('ONEDNN_MAX_CPU_ISA', 'AVX2')

parser = argparse.ArgumentParser()
parser.add_argument('--dataroot', '--data', required=True, help='path to the image folder')
parser.add_argument('--workers', type=int, help='number of data loading workers', default=2)
parser.add_argument('--batchSize', '--batch-size', type=int, default=64, help='input batch size')
parser.add_argument('--imageSize', type=int, default=32, help='the height / width of the input image to network')
parser.add_argument('--nz', type=int, default=100, help='size of the latent z vector')
parser.add_argument('--ngf', type=int, default=64)
parser.add_argument('--ndf', type=int, default=64)
parser.add_argument('--niter', '--epochs', type=int, default=25, help='number of epochs to train for')
parser.add_argument('--lr', type=float, default=0.0002, help='learning rate, default=0.0002')
parser.add_argument('--beta1', type=float, default=0.5, help='beta1 for adam. default=0.5')
parser.add_argument('--cuda', action='store_true', default=False, help='enables cuda')
parser.add_argument('--dry-run', action='store_true', help='check a single training cycle works')
parser.add_argument('--max-steps', type=int, default=0, help='stop after this many iterations (0: no limit)')
parser.add_argument('--netG', default='', help="path to netG (to continue training)")
parser.add_argument('--netD', default='', help="path to netD (to continue training)")
parser.add_argument('--outf', default='.', help='folder to output model checkpoints')
parser.add_argument('--manualSeed', '--seed', type=int, help='manual seed')
parser.add_argument('--log-interval', type=int, default=1, help='iterations between log lines')
parser.add_argument('--deterministic', action='store_true',
                    help='reproducible run: images in folder order (no shuffling), and the generator\'s noise '
                         'drawn from numpy.random.default_rng(seed) instead of torch.randn, so two runs from '
                         'the same --netG/--netD weights compute the same losses')
parser.add_argument('--metrics', default='', help='append one JSON line per iteration (both losses) to this file')

opt = parser.parse_args()
print(opt)

try:
    os.makedirs(opt.outf)
except OSError:
    pass

if opt.manualSeed is None:
    opt.manualSeed = random.randint(1, 10000)
print("Random Seed: ", opt.manualSeed)
random.seed(opt.manualSeed)
# _ms_compat.manual_seed (helper): torch.manual_seed: mindspore.set_seed, less its np.random.seed (torch's leaves NumPy
# alone): a NumPy stream the progr...
_ms_compat.manual_seed(seed=opt.manualSeed)
rng = np.random.default_rng(opt.manualSeed)

# _ms_compat.datasets (helper): reads torchvision's files and gives (PIL image, int label) samples
# _ms_compat.transforms (helper): torchvision's results: PIL images through PIL, tensors [..., C, H, W] (dataset.vision:
# HWC)
dataset = _ms_compat.datasets.ImageFolder(root=opt.dataroot,
                           transform=_ms_compat.transforms.Compose([
                               _ms_compat.transforms.Resize(opt.imageSize),
                               _ms_compat.transforms.CenterCrop(opt.imageSize),
                               _ms_compat.transforms.ToTensor(),
                               _ms_compat.transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5)),
                           ]))
nc = 3

# _ms_compat.DataLoader (helper): torch's loop: len(), samplers, workers, collate, batches of mindspore Tensors
dataloader = _ms_compat.DataLoader(dataset, batch_size=opt.batchSize,
                                         shuffle=not opt.deterministic, num_workers=int(opt.workers))
# _ms_compat.Device (helper): torch.device as a string with .type and .index: MindSpore places tensors by its context
device = _ms_compat.Device("cuda:0" if opt.cuda else "cpu")
ngpu = 1
nz = int(opt.nz)
ngf = int(opt.ngf)
ndf = int(opt.ndf)

netG = Generator(nz, ngf, nc)
# _ms_compat.module_apply (helper): torch's order: every sub-module, children first, then the module itself
_ms_compat.module_apply(netG, weights_init)
if opt.netG != '':
    # _ms_compat.load_state_dict (helper): takes torch's names and layouts and writes in place, so a compiled step sees
    # the values
    # _ms_compat.load (helper): reads torch.save files without torch or running pickled code, and MindSpore checkpoints
    _ms_compat.load_state_dict(netG, _ms_compat.load(opt.netG))
print(netG)

netD = Discriminator(ndf, nc)
_ms_compat.module_apply(netD, weights_init)
if opt.netD != '':
    _ms_compat.load_state_dict(netD, _ms_compat.load(opt.netD))
print(netD)

# _ms_compat.BCELoss (helper): torch.nn.BCELoss, reduced as torch (MindSpore's doubles a one-element mean/sum)
criterion = _ms_compat.BCELoss()

real_label = 1
fake_label = 0

# setup optimizer
# _ms_compat.Adam (helper): torch's update (mindspore.experimental.optim.Adam adds eps before the bias correction)
optimizerD = _ms_compat.Adam(netD.trainable_params(), lr=opt.lr, betas=(opt.beta1, 0.999))
optimizerG = _ms_compat.Adam(netG.trainable_params(), lr=opt.lr, betas=(opt.beta1, 0.999))

metrics = open(opt.metrics, 'a') if opt.metrics else None
step = 0

# msmigrate: the forward computation of the training step (differentiated by grad_fn_D)
def forward_fn_D(batch_size, real_cpu, noise):
    label = ops.full((batch_size,), real_label, dtype=real_cpu.dtype)

    output = netD(real_cpu)
    errD_real = criterion(output, label)
    output_6 = output
    fake = netG(noise)
    label = ops.full_like(label, fake_label)
    output = netD(ops.stop_gradient(fake))
    errD_fake = criterion(output, label)
    return errD_real + errD_fake, output_6, errD_fake, errD_real, fake, label, output
# _ms_compat.value_and_grad_reached (helper): ms.value_and_grad; op by op a parameter the loss did not use gets None, as
# torch's .grad, and the optimizer skips it
grad_fn_D = _ms_compat.value_and_grad_reached(forward_fn_D, optimizerD.parameters, has_aux=True)

# msmigrate: one optimizer step, compiled into a graph in GRAPH mode (PYNATIVE: op by op)
def train_step_D(batch_size, real_cpu, noise):
    (loss_D, output_6, errD_fake, errD_real, fake, label, output), grads = grad_fn_D(batch_size, real_cpu, noise)
    optimizerD(grads)
    return loss_D, output_6, errD_fake, errD_real, fake, label, output
# _ms_compat.compile_step (helper): compiled once per model and optimizer in GRAPH mode, not again each epoch; op by op
# in PYNATIVE mode
train_step_D = _ms_compat.compile_step(train_step_D)

# msmigrate: the forward computation of the training step (differentiated by grad_fn_G)
def forward_fn_G(batch_size, real_cpu, noise, fake):
    label = ops.full((batch_size,), real_label, dtype=real_cpu.dtype)
    fake_recomputed = netG(noise)
    # _ms_compat.value_kept (helper): held in value, recomputed in gradient: `stop_gradient(held) + (r -
    # stop_gradient(r))` for a tensor, item by item in t...
    fake = _ms_compat.value_kept(fake, fake_recomputed)
    label = ops.full_like(label, fake_label)
    label = ops.full_like(label, real_label)  # fake labels are real for generator cost
    output = netD(fake)
    errG = criterion(output, label)
    return errG, fake, label, output
grad_fn_G = _ms_compat.value_and_grad_reached(forward_fn_G, optimizerG.parameters, has_aux=True)

# msmigrate: one optimizer step, compiled into a graph in GRAPH mode (PYNATIVE: op by op)
def train_step_G(batch_size, real_cpu, noise, fake):
    (errG, fake, label, output), grads = grad_fn_G(batch_size, real_cpu, noise, fake)
    optimizerG(grads)
    return errG, fake, label, output
train_step_G = _ms_compat.compile_step(train_step_G)

for epoch in range(opt.niter):
    for i, data in enumerate(dataloader, 0):
        real_cpu = data[0]
        batch_size = real_cpu.shape[0]

        # train with fake
        if opt.deterministic:
            noise = ms.Tensor.from_numpy(rng.standard_normal((batch_size, nz, 1, 1)).astype('float32'))
        else:
            noise = ops.randn((batch_size, nz, 1, 1))
        loss_D, output_6, errD_fake, errD_real, fake, label, output = train_step_D(batch_size, real_cpu, noise)
        D_x = (_ms_compat.reduce_mean(output_6) if _ms_compat.is_tensor(output_6) else output_6.mean()).item()
        D_G_z1 = (_ms_compat.reduce_mean(output) if _ms_compat.is_tensor(output) else output.mean()).item()
        errD = errD_real + errD_fake
        errG, fake, label, output = train_step_G(batch_size, real_cpu, noise, fake)
        D_G_z2 = (_ms_compat.reduce_mean(output) if _ms_compat.is_tensor(output) else output.mean()).item()
        step += 1

        if metrics is not None:
            metrics.write(json.dumps({'step': step, 'epoch': epoch, 'loss_D': errD.item(), 'loss_G': errG.item(),
                                      'D_x': D_x, 'D_G_z1': D_G_z1, 'D_G_z2': D_G_z2}) + '\n')
        if i % opt.log_interval == 0:
            print('[%d/%d][%d/%d] Loss_D: %.4f Loss_G: %.4f D(x): %.4f D(G(z)): %.4f / %.4f'
                  % (epoch, opt.niter, i, len(dataloader),
                     errD.item(), errG.item(), D_x, D_G_z1, D_G_z2))

        if opt.dry_run or (opt.max_steps and step >= opt.max_steps):
            break
    # do checkpointing
    # _ms_compat.save (helper): nested dicts, lists and numbers at exactly this path (save_checkpoint: flat, appends
    # .ckpt)
    # _ms_compat.state_dict (helper): also answers torch's names (Cell.state_dict: gamma, beta, moving_mean...);
    # optimizers in torch's layout
    _ms_compat.save(_ms_compat.state_dict(netG), '%s/netG_epoch_%d.pth' % (opt.outf, epoch))
    _ms_compat.save(_ms_compat.state_dict(netD), '%s/netD_epoch_%d.pth' % (opt.outf, epoch))
    if opt.dry_run or (opt.max_steps and step >= opt.max_steps):
        break

if metrics is not None:
    metrics.close()
