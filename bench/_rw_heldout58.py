"""The `heldout58` set of bench/real_world.py (`--set heldout58`): flows, audio GANs and contrastive losses:
ikostrikov/pytorch-flows (MAF, RealNVP and the Glow-style MADESplit + InvertibleMM flow of flows.py with their log-det
Jacobians and BatchNormFlow, trained as main.py trains), jik876/hifi-gan (the Generator with weight_norm and its
remove_weight_norm, the multi-period and multi-scale discriminators with spectral_norm, the feature-matching,
generator and discriminator losses as train.py computes them) and HobbitLong/SupContrast (SupConLoss, supervised and
SimCLR, over SupConResNet, trained by main_supcon.py's own train() with util's warmup and cosine learning rates),
converted as a new user would convert them, through drivers of ours calling their documented entry points.

    python bench/real_world.py --mirrors /work/.mirror --set heldout58 [--only flows_maf,hifigan_v1]

- pytorch-flows (flows.py as it is; main.py imports tqdm, tensorboardX and the datasets package's matplotlib and
  sklearn, so a driver does what main.py does): a synthetic 4-dimensional float32 dataset in the datasets' format
  (N x D arrays: two moons and two columns derived from them, NumPy's seeded RandomState, 64 training, 40 validation
  and 40 test rows), `torch.manual_seed(1)`, main.py's modules for the flow (2 blocks, 16 hidden units),
  `fnn.FlowSequential(*modules)`, main.py's orthogonal init of every nn.Linear with zero biases, Adam (lr 1e-3,
  weight decay 1e-6), and two epochs of main.py's train() (`loss = -model.log_probs(data, None).mean()` over a
  shuffled DataLoader of batch 32; after each epoch the BatchNormFlow momentum set to 0, one no_grad pass over the
  whole training tensor, the momentum set back to 1) and validate() (eval mode, no_grad, summed log-probabilities
  over a DataLoader of batch 20) keeping a `copy.deepcopy(model)` of the best; then the test loss of the best model
  and, in eval mode, `model.sample(noise=torch.randn(8, 4))` (the inverse pass) as VALUEs.
  - flows_maf: `--flow maf`: MADE (masked linears: `F.linear(inputs, weight * mask, bias)`, chunk), BatchNormFlow,
    Reverse (NumPy permutation indices); MADE's inverse fills `x[:, i_col]` column by column.
  - flows_realnvp: `--flow realnvp`: CouplingLayer (tanh scale and relu translate nets over the masked inputs),
    BatchNormFlow.
  - flows_glow: `--flow maf-split-glow`: MADESplit, BatchNormFlow, InvertibleMM (`torch.slogdet`, `torch.inverse`,
    an orthogonal init). main.py's `--flow glow` (LUInvertibleMM) multiplies float32 inputs by the float64 matrix
    scipy's LU gives and fails in torch itself.
- hifi-gan (models.py, utils.py, env.py and config_v1/v3.json as they are): a driver reads the config as train.py
  does (`AttrDict(json.loads(...))`) and makes the generator small (upsample rates (2, 2), kernels (4, 4), 32
  initial channels; resblock kernels (3, 5) with the config's first two dilations), builds Generator,
  MultiPeriodDiscriminator and MultiScaleDiscriminator (its first DiscriminatorS under spectral_norm), AdamW for each (betas 0.8, 0.99 from the
  config) and ExponentialLR(gamma=lr_decay) stepped after each epoch, and trains two epochs of one batch as
  train.py's loop does (discriminator step on `y_g_hat.detach()` with discriminator_loss, generator step with
  `F.l1_loss` of the mels * 45, feature_loss and generator_loss), then train.py's validation (eval, no_grad, the
  mel error) and inference.py's `generator.eval(); generator.remove_weight_norm()` and one generation: VALUEs. The
  waveform: two 64-sample sines with torch.randn noise. The mel: meldataset.mel_spectrogram calls `torch.stft`
  without `return_complex` (an error in torch 2) and librosa's mel filters (not installed): the driver computes it
  as that function does, with `torch.view_as_real(torch.stft(..., return_complex=True))`, n_fft 16, hop 4 (the
  generator's upsampling), reflect padding, and a fixed non-negative 80 x 9 filter bank of NumPy's.
  utils.py imports matplotlib (not installed here): a stand-in of ours on both sides that nothing here calls.
  - hifigan_v1: config_v1.json (ResBlock1, dilations (1, 3, 5)).
  - hifigan_v3: config_v3.json (ResBlock2, dilations (1, 2) and (2, 6)).
- SupContrast (main_supcon.py, util.py, losses.py and networks/ as they are; main_supcon.py imports torchvision, not
  importable beside this torch, and tensorboard_logger, not installed: stand-ins of ours, torchvision's on the torch
  side only, that nothing here calls): a driver builds the options parse_option() builds (`--model resnet18
  --learning_rate 0.05 --cosine --warm --epochs 2 --temp 0.1 --print_freq 1`, warm_epochs 1 and warmup_to as
  parse_option computes them), `SupConResNet(name='resnet18')`, `SupConLoss(temperature=opt.temp)`,
  util.set_optimizer (SGD momentum 0.9, weight decay 1e-4), and for two epochs util.adjust_learning_rate then
  main_supcon's own `train(train_loader, model, criterion, optimizer, epoch, opt)` over a list of two batches of
  TwoCropTransform-shaped pairs `([view1, view2], labels)` of four 3x16x16 images (the second view the first with
  torch.randn noise), then the eval-mode features' mean |.| and the learning rate as VALUEs.
  - supcon_supcon: `--method SupCon` (the label mask, `torch.eq(labels, labels.T)`, torch.scatter's self mask).
  - supcon_simclr: `--method SimCLR` (the identity mask).

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

FLOWS = "ikostrikov+pytorch-flows@bf12ed91b86867b38d74982f5e2d44c248604df9"
HIFIGAN = "jik876+hifi-gan@4769534d45265d52a904b850da5a622601885777"
SUPCON = "HobbitLong+SupContrast@66a8fe53880d6a1084b2e4e0db0a019024d6d41a"

_FLOWS_DRIVER = '''
import copy

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
import torch.utils.data

import flows as fnn

torch.manual_seed(1)
rng = np.random.RandomState(0)


def rows(n):
    """two moons and two columns of them, float32 N x D as the datasets' Data.x"""
    t = rng.uniform(0, np.pi, n)
    upper = rng.rand(n) < 0.5
    x = np.where(upper, np.cos(t), 1 - np.cos(t))
    y = np.where(upper, np.sin(t), 0.5 - np.sin(t))
    data = np.stack([x, y, x * y, x - y], 1) + 0.05 * rng.randn(n, 4)
    return data.astype(np.float32)


trn, val, tst = rows(64), rows(40), rows(40)
train_dataset = torch.utils.data.TensorDataset(torch.from_numpy(trn))
valid_dataset = torch.utils.data.TensorDataset(torch.from_numpy(val))
test_dataset = torch.utils.data.TensorDataset(torch.from_numpy(tst))
train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=32, shuffle=True)
valid_loader = torch.utils.data.DataLoader(valid_dataset, batch_size=20, shuffle=False, drop_last=False)
test_loader = torch.utils.data.DataLoader(test_dataset, batch_size=20, shuffle=False, drop_last=False)

num_inputs = 4
num_hidden = 16
num_cond_inputs = None
num_blocks = 2
flow = "{flow}"
modules = []
if flow == 'realnvp':
    mask = torch.arange(0, num_inputs) % 2
    mask = mask.float()
    for _ in range(num_blocks):
        modules += [
            fnn.CouplingLayer(num_inputs, num_hidden, mask, num_cond_inputs, s_act='tanh', t_act='relu'),
            fnn.BatchNormFlow(num_inputs)
        ]
        mask = 1 - mask
elif flow == 'maf':
    for _ in range(num_blocks):
        modules += [
            fnn.MADE(num_inputs, num_hidden, num_cond_inputs, act='relu'),
            fnn.BatchNormFlow(num_inputs),
            fnn.Reverse(num_inputs)
        ]
elif flow == 'maf-split-glow':
    for _ in range(num_blocks):
        modules += [
            fnn.MADESplit(num_inputs, num_hidden, num_cond_inputs, s_act='tanh', t_act='relu'),
            fnn.BatchNormFlow(num_inputs),
            fnn.InvertibleMM(num_inputs)
        ]
model = fnn.FlowSequential(*modules)
for module in model.modules():
    if isinstance(module, nn.Linear):
        nn.init.orthogonal_(module.weight)
        if hasattr(module, 'bias') and module.bias is not None:
            module.bias.data.fill_(0)
optimizer = optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-6)


def train(epoch):
    model.train()
    train_loss = 0
    for batch_idx, data in enumerate(train_loader):
        if isinstance(data, list):
            cond_data = data[1].float() if len(data) > 1 else None
            data = data[0]
        optimizer.zero_grad()
        loss = -model.log_probs(data, cond_data).mean()
        train_loss += loss.item()
        loss.backward()
        optimizer.step()
    print("train log likelihood", -train_loss / (batch_idx + 1))
    for module in model.modules():
        if isinstance(module, fnn.BatchNormFlow):
            module.momentum = 0
    with torch.no_grad():
        model(train_loader.dataset.tensors[0])
    for module in model.modules():
        if isinstance(module, fnn.BatchNormFlow):
            module.momentum = 1


def validate(epoch, model, loader):
    model.eval()
    val_loss = 0
    for batch_idx, data in enumerate(loader):
        if isinstance(data, list):
            cond_data = data[1].float() if len(data) > 1 else None
            data = data[0]
        with torch.no_grad():
            val_loss += -model.log_probs(data, cond_data).sum().item()
    return val_loss / len(loader.dataset)


best_validation_loss = float('inf')
best_validation_epoch = 0
best_model = model
for epoch in range(2):
    train(epoch)
    validation_loss = validate(epoch, model, valid_loader)
    print("validation", validation_loss)
    if validation_loss < best_validation_loss:
        best_validation_epoch = epoch
        best_validation_loss = validation_loss
        best_model = copy.deepcopy(model)
print("VALUE validation", best_validation_loss)
print("VALUE test", validate(best_validation_epoch, best_model, test_loader))
model.eval()
with torch.no_grad():
    samples = model.sample(noise=torch.randn(8, num_inputs))
print("VALUE samples", float(samples.abs().mean()))
'''

_HIFIGAN_DRIVER = '''
import itertools
import json

import numpy as np
import torch
import torch.nn.functional as F
from env import AttrDict
from models import Generator, MultiPeriodDiscriminator, MultiScaleDiscriminator, feature_loss, generator_loss, \\
    discriminator_loss

with open("{config}") as f:
    h = AttrDict(json.loads(f.read()))
h.upsample_rates = [2, 2]
h.upsample_kernel_sizes = [4, 4]
h.upsample_initial_channel = 32
h.resblock_kernel_sizes = [3, 5]
h.resblock_dilation_sizes = h.resblock_dilation_sizes[:2]
h.n_fft = h.win_size = 16
h.hop_size = 4
torch.manual_seed(h.seed)

# meldataset.mel_spectrogram's computation (its torch.stft call lacks return_complex, an error in torch 2; its
# filter bank is librosa's): a fixed non-negative bank, the same reflect padding, magnitude, log compression
mel_basis = torch.from_numpy(np.abs(np.random.RandomState(0).randn(h.num_mels, h.n_fft // 2 + 1)).astype(np.float32)
                             / h.n_fft)
hann_window = torch.hann_window(h.win_size)


def mel_spectrogram(y, n_fft, hop_size, win_size):
    y = torch.nn.functional.pad(y.unsqueeze(1), (int((n_fft - hop_size) / 2), int((n_fft - hop_size) / 2)),
                                mode='reflect')
    y = y.squeeze(1)
    spec = torch.view_as_real(torch.stft(y, n_fft, hop_length=hop_size, win_length=win_size, window=hann_window,
                                         center=False, pad_mode='reflect', normalized=False, onesided=True,
                                         return_complex=True))
    spec = torch.sqrt(spec.pow(2).sum(-1) + (1e-9))
    spec = torch.matmul(mel_basis, spec)
    return torch.log(torch.clamp(spec, min=1e-5) * 1)


generator = Generator(h)
mpd = MultiPeriodDiscriminator()
msd = MultiScaleDiscriminator()
optim_g = torch.optim.AdamW(generator.parameters(), h.learning_rate, betas=[h.adam_b1, h.adam_b2])
optim_d = torch.optim.AdamW(itertools.chain(msd.parameters(), mpd.parameters()),
                            h.learning_rate, betas=[h.adam_b1, h.adam_b2])
scheduler_g = torch.optim.lr_scheduler.ExponentialLR(optim_g, gamma=h.lr_decay, last_epoch=-1)
scheduler_d = torch.optim.lr_scheduler.ExponentialLR(optim_d, gamma=h.lr_decay, last_epoch=-1)

t = torch.arange(64).float() / 64
audio = torch.stack([0.5 * torch.sin(2 * np.pi * 3 * t), 0.4 * torch.sin(2 * np.pi * 5 * t + 1.0)])
audio = audio + 0.02 * torch.randn(2, 64)
mel = mel_spectrogram(audio, h.n_fft, h.hop_size, h.win_size)
train_loader = [(mel, audio, None, mel)]

generator.train()
mpd.train()
msd.train()
steps = 0
for epoch in range(2):
    for i, batch in enumerate(train_loader):
        x, y, _, y_mel = batch
        x = torch.autograd.Variable(x)
        y = torch.autograd.Variable(y)
        y_mel = torch.autograd.Variable(y_mel)
        y = y.unsqueeze(1)

        y_g_hat = generator(x)
        y_g_hat_mel = mel_spectrogram(y_g_hat.squeeze(1), h.n_fft, h.hop_size, h.win_size)

        optim_d.zero_grad()
        y_df_hat_r, y_df_hat_g, _, _ = mpd(y, y_g_hat.detach())
        loss_disc_f, losses_disc_f_r, losses_disc_f_g = discriminator_loss(y_df_hat_r, y_df_hat_g)
        y_ds_hat_r, y_ds_hat_g, _, _ = msd(y, y_g_hat.detach())
        loss_disc_s, losses_disc_s_r, losses_disc_s_g = discriminator_loss(y_ds_hat_r, y_ds_hat_g)
        loss_disc_all = loss_disc_s + loss_disc_f
        loss_disc_all.backward()
        optim_d.step()

        optim_g.zero_grad()
        loss_mel = F.l1_loss(y_mel, y_g_hat_mel) * 45
        y_df_hat_r, y_df_hat_g, fmap_f_r, fmap_f_g = mpd(y, y_g_hat)
        y_ds_hat_r, y_ds_hat_g, fmap_s_r, fmap_s_g = msd(y, y_g_hat)
        loss_fm_f = feature_loss(fmap_f_r, fmap_f_g)
        loss_fm_s = feature_loss(fmap_s_r, fmap_s_g)
        loss_gen_f, losses_gen_f = generator_loss(y_df_hat_g)
        loss_gen_s, losses_gen_s = generator_loss(y_ds_hat_g)
        loss_gen_all = loss_gen_s + loss_gen_f + loss_fm_s + loss_fm_f + loss_mel
        loss_gen_all.backward()
        optim_g.step()

        with torch.no_grad():
            mel_error = F.l1_loss(y_mel, y_g_hat_mel).item()
        print('Steps : {{:d}}, Gen Loss Total : {{:4.3f}}, Mel-Spec. Error : {{:4.3f}}'.format(
            steps, loss_gen_all, mel_error))
        print("disc real", sum(losses_disc_f_r) + sum(losses_disc_s_r))
        steps += 1
    scheduler_g.step()
    scheduler_d.step()

generator.eval()
val_err_tot = 0
with torch.no_grad():
    for j, batch in enumerate(train_loader):
        x, y, _, y_mel = batch
        y_g_hat = generator(x)
        y_g_hat_mel = mel_spectrogram(y_g_hat.squeeze(1), h.n_fft, h.hop_size, h.win_size)
        val_err_tot += F.l1_loss(y_mel, y_g_hat_mel).item()
print("VALUE val_err", val_err_tot / (j + 1))
print("VALUE lr", optim_g.param_groups[0]['lr'])

# inference.py
generator.eval()
generator.remove_weight_norm()
with torch.no_grad():
    y_g_hat = generator(mel)
    generated = y_g_hat.squeeze() * 32768.0
print("VALUE generated", float(generated.abs().mean()))
print("VALUE weight_norm_removed", float(sum(p.numel() for p in generator.parameters())))
'''

_MATPLOTLIB = '''
"""A stand-in written by bench/_rw_heldout58.py: matplotlib is not installed; hifi-gan's utils.py imports it for
plot_spectrogram, which nothing here calls."""


def use(backend):
    return None
'''

_PYLAB = '''
"""A stand-in written by bench/_rw_heldout58.py (see matplotlib/__init__.py)."""


def subplots(*args, **kwargs):
    raise NotImplementedError("the stand-in's pylab is imported, not used")
'''

_SUPCON_DRIVER = '''
import math
from types import SimpleNamespace

import torch
from main_supcon import train
from util import adjust_learning_rate, set_optimizer
from networks.resnet_big import SupConResNet
from losses import SupConLoss

# parse_option's options for `--model resnet18 --learning_rate 0.05 --cosine --warm --epochs 2 --temp 0.1`
opt = SimpleNamespace(print_freq=1, batch_size=4, epochs=2, learning_rate=0.05, lr_decay_epochs=[700, 800, 900],
                      lr_decay_rate=0.1, weight_decay=1e-4, momentum=0.9, model='resnet18', method='{method}',
                      temp=0.1, cosine=True, warm=True)
opt.warmup_from = 0.01
opt.warm_epochs = 1
eta_min = opt.learning_rate * (opt.lr_decay_rate ** 3)
opt.warmup_to = eta_min + (opt.learning_rate - eta_min) * (1 + math.cos(math.pi * opt.warm_epochs / opt.epochs)) / 2

torch.manual_seed(0)
model = SupConResNet(name=opt.model)
criterion = SupConLoss(temperature=opt.temp)
optimizer = set_optimizer(opt, model)

# TwoCropTransform's pairs: two views of each image, here the second the first with noise
train_loader = []
for b in range(2):
    images = torch.randn(4, 3, 16, 16)
    train_loader.append(([images, images + 0.1 * torch.randn(4, 3, 16, 16)], torch.tensor([0, 1, 0, 1])))

for epoch in range(1, opt.epochs + 1):
    adjust_learning_rate(opt, optimizer, epoch)
    loss = train(train_loader, model, criterion, optimizer, epoch, opt)
    print('epoch {{}}, loss {{}}'.format(epoch, loss))
print("VALUE lr", optimizer.param_groups[0]['lr'])
model.eval()
with torch.no_grad():
    features = model(train_loader[0][0][0])
print("VALUE features", float(features.abs().mean()))
print("VALUE eval_loss", float(criterion(torch.stack([features, model(train_loader[0][0][1])], 1).detach(),
                                         train_loader[0][1])))
'''

_TENSORBOARD_LOGGER = '''
"""A stand-in written by bench/_rw_heldout58.py: tensorboard_logger is not installed; main_supcon.py imports it,
and nothing here calls it."""


class Logger:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("the stand-in's Logger is imported, not used")
'''

_TORCHVISION = {
    "torchvision/__init__.py": '''
"""A stand-in written by bench/_rw_heldout58.py: torchvision is not importable beside this torch; main_supcon.py
imports transforms and datasets, which nothing here calls."""
from . import datasets, transforms
''',
    "torchvision/transforms.py": '"""A stand-in written by bench/_rw_heldout58.py."""\n',
    "torchvision/datasets.py": '"""A stand-in written by bench/_rw_heldout58.py."""\n',
}

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("flows_maf", FLOWS, "flows.py", "driver.py", [], None),
    ("flows_realnvp", FLOWS, "flows.py", "driver.py", [], None),
    ("flows_glow", FLOWS, "flows.py", "driver.py", [], None),
    ("hifigan_v1", HIFIGAN, "models.py,utils.py,env.py,config_v1.json", "driver.py", [], None),
    ("hifigan_v3", HIFIGAN, "models.py,utils.py,env.py,config_v3.json", "driver.py", [], None),
    ("supcon_supcon", SUPCON, "main_supcon.py,util.py,losses.py,networks", "driver.py", [], None),
    ("supcon_simclr", SUPCON, "main_supcon.py,util.py,losses.py,networks", "driver.py", [], None),
]

DEPS: dict = {}

# Drivers: our own code, through the libraries' documented entry points.
DRIVERS = {
    "flows_maf": _FLOWS_DRIVER.format(flow="maf"),
    "flows_realnvp": _FLOWS_DRIVER.format(flow="realnvp"),
    "flows_glow": _FLOWS_DRIVER.format(flow="maf-split-glow"),
    "hifigan_v1": _HIFIGAN_DRIVER.format(config="config_v1.json"),
    "hifigan_v3": _HIFIGAN_DRIVER.format(config="config_v3.json"),
    "supcon_supcon": _SUPCON_DRIVER.format(method="SupCon"),
    "supcon_simclr": _SUPCON_DRIVER.format(method="SimCLR"),
}

FILES = {**{name: {"matplotlib/__init__.py": _MATPLOTLIB, "matplotlib/pylab.py": _PYLAB} for name, *_ in PROGRAMS
            if name.startswith("hifigan_")},
         **{name: {"tensorboard_logger.py": _TENSORBOARD_LOGGER} for name, *_ in PROGRAMS
            if name.startswith("supcon_")}}

TORCH_FILES = {name: dict(_TORCHVISION) for name, *_ in PROGRAMS if name.startswith("supcon_")}

# flows: 4 steps; hifi-gan: 2 steps of a discriminator and a generator loss; SupContrast: 4 steps
LOSSES = {name: 4 for name, *_ in PROGRAMS}
