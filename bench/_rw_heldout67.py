"""The `heldout67` set of bench/real_world.py (`--set heldout67`): a GAN vocoder, one-stage detection and momentum
contrast: descriptinc/melgan-neurips (mel2wav's weight-normed Generator and multi-scale Discriminator trained as
scripts/train.py trains them, on WAV files listed as its data folder lists them), eriklindernoren/PyTorch-YOLOv3
(pytorchyolo's Darknet built from a .cfg file, its ListDataset over images and label files, compute_loss and
train.py's burn-in learning rate and subdivisions) and facebookresearch/moco-v3 (moco.builder's MoCo_ResNet with its
projector and predictor MLPs, momentum encoder and contrastive loss over a group of one process, moco.optimizer's
LARS, and main_moco.py's train() with its learning-rate and momentum schedules as that file writes them), converted as a new user would
convert them, through drivers of ours calling their documented entry points.

    python bench/real_world.py --mirrors /work/.mirror --set heldout67 [--only melgan_train,yolo_tiny_adam]

(openai/improved-diffusion, first meant for this set, is heldout28's already.)

- MelGAN (mel2wav/ as it is; librosa 0.11 is not installed, and its `filters.mel(sr, n_fft, ...)` takes keyword
  arguments only since 0.10, which modules.py's positional call would meet: a stand-in of ours on both sides with
  the Slaney filter bank, `core.load` (scipy's WAV reader) and `util.normalize`): 6 WAV files of 22050 Hz,
  16-bit, listed in train_files.txt / test_files.txt as the README's data folder has them, AudioDataset (its
  `random.shuffle`, random segment starts and np.random amplitude), train.py's loop written out as main() runs it
  (its `.cuda()` calls left out, no GPU here): the discriminator's hinge loss over each scale's last output, the
  generator's adversarial and feature-matching losses, Adam(lr 1e-4, betas (0.5, 0.9)) for both, the mel L1 error
  under no_grad. Audio2Mel.forward calls `torch.stft` without return_complex, which torch 2 refuses ("stft requires
  the return_complex parameter be given for real inputs"; the converted _ms_compat.stft raises the same error):
  the training driver computes the log-mel spectrogram from an Audio2Mel's own buffers (the librosa filter bank,
  the Hann window) with return_complex=True, and melgan_audio2mel runs Audio2Mel as it is, where both sides must
  end on that error (RAISES).
  - melgan_train: ngf 4, 2 residual layers, num_D 2, and train.py's discriminator defaults (ndf 16, n_layers_D 4,
    downsampling 4: NLayerDiscriminator's last layers take nf_prev channels, so its channels must reach the 1024
    cap before them), 32 mel channels, segments of 2048 samples, batch 2.
  - melgan_audio2mel: Audio2Mel(n_mel_channels=32) on one test-set clip.
- PyTorch-YOLOv3 (pytorchyolo/ and config/ as they are; utils/utils.py imports imgaug, not installed: a stand-in
  of ours on both sides, which nothing here calls; torchvision is not installed: a stand-in of ours on the torch
  side, which nothing here calls):
  config/yolov3-tiny.cfg made small by the driver (64-pixel input, filters divided by 16, 3 classes: the yolo
  layers' convolutions 24 filters), 8 PNG images with YOLO label files under images/ and labels/ and a list file,
  ListDataset (its label-path rule, np.loadtxt, its collate_fn with resize) with a transform of ours doing what
  DEFAULT_TRANSFORMS does for square images (relative labels, a CHW float tensor), load_model (weights_init_normal),
  and train.py's loop written out (compute_loss with build_targets' anchor matching and CIoU, the burn-in learning
  rate, the `lr_steps`, a step every `subdivisions` batches), then the eval-mode forward (YOLOLayer's grid).
  - yolo_tiny_adam: optimizer adam, subdivisions 1, burn_in 2.
  - yolo_tiny_sgd: optimizer sgd with momentum 0.9, subdivisions 2 (gradients of two batches summed before each
    step), burn_in 1000.
- MoCo v3 (moco/ as it is; main_moco.py itself cannot be imported by the conversion: its module level lists
  `torchvision_models.__dict__`'s architectures for its argument parser, and torchvision.models has no MindSpore
  mapping, so the converted module stops there with MigrationError naming main_moco:40 (first rule kept); it also
  imports vits.py, which needs timm. The driver writes main_moco.py's train(), adjust_learning_rate and
  adjust_moco_momentum out as main_moco.py has them, its meters left out): `dist.init_process_group('gloo', ...)`
  over one process as main_worker calls it, a small ResNet of ours as the torchvision architecture main_worker
  passes (`partial(arch, zero_init_residual=True)`, with a `fc`), MoCo_ResNet(dim 16, mlp_dim 32, T 0.2) (`del
  self.base_encoder.fc`, BatchNorm1d with affine=False, the momentum update `param_m.data = ...` under no_grad inside
  forward, concat_all_gather, `einsum('nc,mc->nm', [q, k])`, labels offset by get_rank(); its `.cuda()` made
  `.cpu()` on the torch side after the conversion, no GPU here), torch.cuda.amp.GradScaler, the runner's
  SummaryWriter, moco.loader.TwoCropsTransform over two transforms of ours (a horizontal flip and a brightness
  change of 16 noise images of 3 x 32 x 32), and 2 epochs of 2 batches of 8 (the warmup and cosine learning rate
  and momentum per iteration, autocast, scaler.scale(loss).backward(), scaler.step, scaler.update), then an
  eval-mode loss and the momentum encoder's features; moco.loader imports torchvision.transforms.functional: the
  torchvision stand-in of ours on the torch side.
  - moco_lars: moco.optimizer.LARS (lr 0.6 * 8 / 256, weight decay 1e-6, momentum 0.9), moco_m_cos.
  - moco_adamw: torch.optim.AdamW (lr 0.032 * 8 / 256, weight decay 0.1), a fixed moco_m of 0.99.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

MELGAN = "descriptinc+melgan-neurips@6488045bfba1975602288de07a58570c7b4d66ea"
YOLO = "eriklindernoren+PyTorch-YOLOv3@1d621c8489e22c76ceb93bb2397ac6c8dfb5ceb7"
MOCO = "facebookresearch+moco-v3@c349e6e24f40d3fedb22d973f92defa4cedf37a7"

_WAVS = '''
import os

import numpy as np
import scipy.io.wavfile

# the README's data folder: WAV files and train_files.txt / test_files.txt naming them
rng = np.random.RandomState(7)
os.makedirs("data", exist_ok=True)
names = []
for i in range(6):
    t = np.arange(4096 + 512 * i) / 22050.
    wave = 0.5 * np.sin(2 * np.pi * (180 + 60 * i) * t) * (1 + 0.3 * np.sin(2 * np.pi * 3 * t))
    wave = wave + 0.05 * rng.randn(len(t))
    scipy.io.wavfile.write(os.path.join("data", "clip_%d.wav" % i), 22050, (wave * 20000).astype(np.int16))
    names.append("clip_%d.wav" % i)
with open(os.path.join("data", "train_files.txt"), "w") as f:
    f.write("\\n".join(names[:4]) + "\\n")
with open(os.path.join("data", "test_files.txt"), "w") as f:
    f.write("\\n".join(names[4:]) + "\\n")
'''

_MELGAN_DRIVER = _WAVS + '''
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from mel2wav.dataset import AudioDataset
from mel2wav.modules import Generator, Discriminator, Audio2Mel

torch.manual_seed(0)
n_mel_channels, ngf, n_residual_layers = 32, 4, 2
ndf, num_D, n_layers_D, downsamp_factor, lambda_feat = 16, 2, 4, 4, 10
batch_size, seq_len, epochs = 2, 2048, 2

netG = Generator(n_mel_channels, ngf, n_residual_layers)
netD = Discriminator(num_D, ndf, n_layers_D, downsamp_factor)
a2m = Audio2Mel(n_mel_channels=n_mel_channels)


def fft(audio):
    """Audio2Mel's log-mel spectrogram from its own buffers; torch 2 wants return_complex given"""
    p = (a2m.n_fft - a2m.hop_length) // 2
    audio = F.pad(audio, (p, p), "reflect").squeeze(1)
    spec = torch.stft(audio, n_fft=a2m.n_fft, hop_length=a2m.hop_length, win_length=a2m.win_length,
                      window=a2m.window, center=False, return_complex=True)
    magnitude = torch.sqrt(spec.real ** 2 + spec.imag ** 2)
    mel_output = torch.matmul(a2m.mel_basis, magnitude)
    return torch.log10(torch.clamp(mel_output, min=1e-5))


optG = torch.optim.Adam(netG.parameters(), lr=1e-4, betas=(0.5, 0.9))
optD = torch.optim.Adam(netD.parameters(), lr=1e-4, betas=(0.5, 0.9))
train_set = AudioDataset(Path("data") / "train_files.txt", seq_len, sampling_rate=22050)
test_set = AudioDataset(Path("data") / "test_files.txt", 22050 // 4, sampling_rate=22050, augment=False)
train_loader = DataLoader(train_set, batch_size=batch_size, num_workers=0)
test_loader = DataLoader(test_set, batch_size=1)

test_voc = []
for i, x_t in enumerate(test_loader):
    s_t = fft(x_t).detach()
    test_voc.append(s_t)
    print("VALUE test_mel_%d" % i, float(s_t.mean()))

costs = []
steps = 0
for epoch in range(1, epochs + 1):
    for iterno, x_t in enumerate(train_loader):
        s_t = fft(x_t).detach()
        x_pred_t = netG(s_t)

        with torch.no_grad():
            s_pred_t = fft(x_pred_t.detach())
            s_error = F.l1_loss(s_t, s_pred_t).item()

        D_fake_det = netD(x_pred_t.detach())
        D_real = netD(x_t)

        loss_D = 0
        for scale in D_fake_det:
            loss_D += F.relu(1 + scale[-1]).mean()

        for scale in D_real:
            loss_D += F.relu(1 - scale[-1]).mean()

        netD.zero_grad()
        loss_D.backward()
        optD.step()

        D_fake = netD(x_pred_t)

        loss_G = 0
        for scale in D_fake:
            loss_G += -scale[-1].mean()

        loss_feat = 0
        feat_weights = 4.0 / (n_layers_D + 1)
        D_weights = 1.0 / num_D
        wt = D_weights * feat_weights
        for i in range(num_D):
            for j in range(len(D_fake[i]) - 1):
                loss_feat += wt * F.l1_loss(D_fake[i][j], D_real[i][j].detach())

        netG.zero_grad()
        (loss_G + lambda_feat * loss_feat).backward()
        optG.step()

        costs.append([loss_D.item(), loss_G.item(), loss_feat.item(), s_error])
        steps += 1
        print("Epoch {} | Iters {} / {} | loss {}".format(epoch, iterno, len(train_loader), costs[-1]))

print("VALUE mel_error", float(sum(c[3] for c in costs)))
with torch.no_grad():
    pred_audio = netG(test_voc[0])
print("VALUE generated", float(pred_audio.abs().mean()))
print("VALUE generated_len", float(pred_audio.shape[-1]))
'''

_AUDIO2MEL_DRIVER = _WAVS + '''
from pathlib import Path

import torch
from torch.utils.data import DataLoader

from mel2wav.dataset import AudioDataset
from mel2wav.modules import Audio2Mel

fft = Audio2Mel(n_mel_channels=32)
print("VALUE mel_basis", float(fft.mel_basis.sum()))
print("VALUE window", float(fft.window.sum()))
test_set = AudioDataset(Path("data") / "test_files.txt", 22050 // 4, sampling_rate=22050, augment=False)
for i, x_t in enumerate(DataLoader(test_set, batch_size=1)):
    s_t = fft(x_t).detach()
    print("VALUE test_mel_%d" % i, float(s_t.mean()))
'''

_LIBROSA_INIT = '''
"""A stand-in written by bench/_rw_heldout67.py: librosa is not installed (and 0.10+ takes filters.mel's arguments by
keyword only); mel2wav imports librosa.filters.mel, librosa.core.load and librosa.util.normalize."""
from . import core, filters, util
'''

_LIBROSA_FILTERS = '''
"""A stand-in written by bench/_rw_heldout67.py: librosa's Slaney-style mel filter bank."""
import numpy as np


def _hz_to_mel(f):
    f = np.asarray(f, dtype=np.float64)
    mel = f * 3.0 / 200.0
    log_part = 15.0 + np.log(np.maximum(f, 1e-10) / 1000.0) / (np.log(6.4) / 27.0)
    return np.where(f >= 1000.0, log_part, mel)


def _mel_to_hz(m):
    m = np.asarray(m, dtype=np.float64)
    hz = m * 200.0 / 3.0
    log_part = 1000.0 * np.exp((np.log(6.4) / 27.0) * (m - 15.0))
    return np.where(m >= 15.0, log_part, hz)


def mel(sr, n_fft, n_mels=128, fmin=0.0, fmax=None):
    fmax = sr / 2.0 if fmax is None else fmax
    fftfreqs = np.linspace(0, sr / 2.0, 1 + n_fft // 2)
    mel_f = _mel_to_hz(np.linspace(_hz_to_mel(fmin), _hz_to_mel(fmax), n_mels + 2))
    fdiff = np.diff(mel_f)
    ramps = np.subtract.outer(mel_f, fftfreqs)
    weights = np.zeros((n_mels, 1 + n_fft // 2))
    for i in range(n_mels):
        lower = -ramps[i] / fdiff[i]
        upper = ramps[i + 2] / fdiff[i + 1]
        weights[i] = np.maximum(0, np.minimum(lower, upper))
    weights *= (2.0 / (mel_f[2:n_mels + 2] - mel_f[:n_mels]))[:, None]
    return weights.astype(np.float32)
'''

_LIBROSA_CORE = '''
"""A stand-in written by bench/_rw_heldout67.py: 16-bit WAV files read at their own rate (the bench's are 22050 Hz)."""
import numpy as np
import scipy.io.wavfile


def load(path, sr=22050):
    rate, data = scipy.io.wavfile.read(str(path))
    assert rate == sr, (rate, sr)
    return (data.astype(np.float32) / 32768.0), rate
'''

_LIBROSA_UTIL = '''
"""A stand-in written by bench/_rw_heldout67.py: librosa.util.normalize's default (the largest magnitude made 1)."""
import numpy as np


def normalize(data):
    return data / np.max(np.abs(data))
'''

_YOLO_DRIVER = '''
import os
import re

import numpy as np
import torch
import torch.optim as optim
from PIL import Image
from torch.utils.data import DataLoader

from pytorchyolo.models import load_model
from pytorchyolo.utils.datasets import ListDataset
from pytorchyolo.utils.loss import compute_loss
from pytorchyolo.utils.parse_config import parse_data_config
from pytorchyolo.utils.utils import load_classes, to_cpu

# a small model: config/yolov3-tiny.cfg at 64 pixels, filters divided by 16, 3 classes
with open("config/yolov3-tiny.cfg") as f:
    cfg = f.read()
cfg = re.sub(r"filters=(\\d+)", lambda m: "filters=%d" % (24 if m.group(1) == "255" else max(4, int(m.group(1)) // 16)),
             cfg)
cfg = cfg.replace("classes=80", "classes=3").replace("width=416", "width=64").replace("height=416", "height=64")
cfg = re.sub(r"batch=\\d+", "batch={batch}", cfg)
cfg = re.sub(r"subdivisions=\\d+", "subdivisions={subdivisions}", cfg)
cfg = re.sub(r"burn_in=\\d+", "burn_in={burn_in}", cfg)
cfg = re.sub(r"steps=[\\d,]+", "steps=3,1000", cfg)
cfg = re.sub(r"learning_rate=[\\d.]+", "learning_rate=0.001\\noptimizer={optimizer}", cfg)
with open("config/yolov3-small.cfg", "w") as f:
    f.write(cfg)

# the custom dataset's on-disk format: images/, labels/ (class x y w h, relative), a list file, a .data file
rng = np.random.RandomState(5)
os.makedirs("data/small/images", exist_ok=True)
os.makedirs("data/small/labels", exist_ok=True)
paths = []
for i in range(8):
    img = (rng.rand(64, 64, 3) * 60).astype(np.uint8)
    rows = []
    for k in range(1 + i % 3):
        c = int(rng.randint(0, 3))
        w, h = rng.uniform(0.15, 0.5, 2)
        x, y = rng.uniform(w / 2, 1 - w / 2), rng.uniform(h / 2, 1 - h / 2)
        x0, y0, x1, y1 = int((x - w / 2) * 64), int((y - h / 2) * 64), int((x + w / 2) * 64), int((y + h / 2) * 64)
        img[y0:y1, x0:x1, c] = 200
        rows.append("%d %.6f %.6f %.6f %.6f" % (c, x, y, w, h))
    path = os.path.abspath("data/small/images/img_%d.png" % i)
    Image.fromarray(img).save(path)
    with open("data/small/labels/img_%d.txt" % i, "w") as f:
        f.write("\\n".join(rows) + "\\n")
    paths.append(path)
with open("data/small/train.txt", "w") as f:
    f.write("\\n".join(paths) + "\\n")
with open("data/small/classes.names", "w") as f:
    f.write("red\\ngreen\\nblue\\n")
with open("config/small.data", "w") as f:
    f.write("classes=3\\ntrain=data/small/train.txt\\nvalid=data/small/train.txt\\nnames=data/small/classes.names\\n")


def square_transform(data):
    """what DEFAULT_TRANSFORMS does for a square image: labels (class, x, y, w, h) made (0, class, ...), the image
    a CHW float tensor in [0, 1]"""
    img, boxes = data
    targets = np.zeros((len(boxes), 6), dtype=np.float32)
    targets[:, 1:] = boxes
    return torch.from_numpy(np.ascontiguousarray(img.transpose(2, 0, 1))).float() / 255., torch.from_numpy(targets)


torch.manual_seed(0)
data_config = parse_data_config("config/small.data")
class_names = load_classes(data_config["names"])
device = torch.device("cpu")
model = load_model("config/yolov3-small.cfg")
mini_batch_size = model.hyperparams['batch'] // model.hyperparams['subdivisions']
dataset = ListDataset(data_config["train"], img_size=model.hyperparams['height'], multiscale=False,
                      transform=square_transform)
dataloader = DataLoader(dataset, batch_size=mini_batch_size, shuffle=True, num_workers=0,
                        collate_fn=dataset.collate_fn)
params = [p for p in model.parameters() if p.requires_grad]
if (model.hyperparams['optimizer'] in [None, "adam"]):
    optimizer = optim.Adam(params, lr=model.hyperparams['learning_rate'], weight_decay=model.hyperparams['decay'])
elif (model.hyperparams['optimizer'] == "sgd"):
    optimizer = optim.SGD(params, lr=model.hyperparams['learning_rate'], weight_decay=model.hyperparams['decay'],
                          momentum=model.hyperparams['momentum'])

for epoch in range(1, 3):
    model.train()
    for batch_i, (_, imgs, targets) in enumerate(dataloader):
        batches_done = len(dataloader) * epoch + batch_i
        imgs = imgs.to(device, non_blocking=True)
        targets = targets.to(device)
        outputs = model(imgs)
        loss, loss_components = compute_loss(outputs, targets, model)
        loss.backward()
        if batches_done % model.hyperparams['subdivisions'] == 0:
            lr = model.hyperparams['learning_rate']
            if batches_done < model.hyperparams['burn_in']:
                lr *= (batches_done / model.hyperparams['burn_in'])
            else:
                for threshold, value in model.hyperparams['lr_steps']:
                    if batches_done > threshold:
                        lr *= value
            for g in optimizer.param_groups:
                g['lr'] = lr
            optimizer.step()
            optimizer.zero_grad()
        print("IoU loss %.5f Object loss %.5f Class loss %.5f Batch loss %.5f" % (
            float(loss_components[0]), float(loss_components[1]), float(loss_components[2]), to_cpu(loss).item()))
        model.seen += imgs.size(0)
print("VALUE seen", float(model.seen))
print("VALUE lr", lr)
model.eval()
with torch.no_grad():
    detections = model(imgs)
print("VALUE detections", float(detections.abs().mean()))
print("VALUE detection_rows", float(detections.shape[1]))
print("VALUE confidence", float(detections[..., 4].max()))
'''

_IMGAUG_INIT = '''
"""A stand-in written by bench/_rw_heldout67.py: imgaug is not installed; pytorchyolo/utils/utils.py imports it for
provide_determinism's ia.seed, which nothing here calls."""


def seed(value):
    raise NotImplementedError("the stand-in's imgaug is imported, not used")
'''

_MOCO_DRIVER = '''
import argparse
import math
from functools import partial

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.tensorboard import SummaryWriter

import moco.builder
import moco.loader
import moco.optimizer

torch.manual_seed(0)
args = argparse.Namespace(lr={lr}, batch_size=8, weight_decay={wd}, momentum=0.9, epochs=2, warmup_epochs=1,
                          start_epoch=0, moco_m={moco_m}, moco_m_cos={moco_m_cos}, moco_t=0.2, moco_dim=16,
                          moco_mlp_dim=32, gpu=None, rank=0, world_size=1, print_freq=1, optimizer='{optimizer}',
                          dist_backend='gloo', dist_url='tcp://127.0.0.1:{port}', arch='resnet_small')
dist.init_process_group(backend=args.dist_backend, init_method=args.dist_url, world_size=args.world_size,
                        rank=args.rank)


class BasicBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        out = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(x + self.bn2(self.conv2(out)))


class ResNetSmall(nn.Module):
    """a torchvision-style ResNet of ours (conv stem, a residual block, average pool, fc), the architecture
    main_worker's `partial(torchvision_models.__dict__[args.arch], zero_init_residual=True)` builds"""

    def __init__(self, num_classes=1000, zero_init_residual=False):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.layer1 = BasicBlock(8)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(8, num_classes)
        if zero_init_residual:
            nn.init.constant_(self.layer1.bn2.weight, 0.5)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        x = self.layer1(x)
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


model = moco.builder.MoCo_ResNet(partial(ResNetSmall, zero_init_residual=True), args.moco_dim, args.moco_mlp_dim,
                                 args.moco_t)
args.lr = args.lr * args.batch_size / 256
if args.optimizer == 'lars':
    optimizer = moco.optimizer.LARS(model.parameters(), args.lr, weight_decay=args.weight_decay,
                                    momentum=args.momentum)
elif args.optimizer == 'adamw':
    optimizer = torch.optim.AdamW(model.parameters(), args.lr, weight_decay=args.weight_decay)
scaler = torch.cuda.amp.GradScaler()
summary_writer = SummaryWriter() if args.rank == 0 else None


class Flip:
    def __call__(self, x):
        return torch.flip(x, dims=[2])


class Brighter:
    def __call__(self, x):
        return x * 0.8 + 0.1


rng = np.random.RandomState(3)
images = [torch.from_numpy(rng.rand(3, 32, 32).astype(np.float32)) for _ in range(16)]
two_crops = moco.loader.TwoCropsTransform(Flip(), Brighter())
train_dataset = [(two_crops(img), i % 4) for i, img in enumerate(images)]
train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=args.batch_size, shuffle=True,
                                           num_workers=0, drop_last=True)


def adjust_learning_rate(optimizer, epoch, args):
    """main_moco.py's: half-cycle cosine after warmup"""
    if epoch < args.warmup_epochs:
        lr = args.lr * epoch / args.warmup_epochs
    else:
        lr = args.lr * 0.5 * (1. + math.cos(math.pi * (epoch - args.warmup_epochs) / (args.epochs - args.warmup_epochs)))
    for param_group in optimizer.param_groups:
        param_group['lr'] = lr
    return lr


def adjust_moco_momentum(epoch, args):
    """main_moco.py's"""
    m = 1. - 0.5 * (1. + math.cos(math.pi * epoch / args.epochs)) * (1. - args.moco_m)
    return m


def train(train_loader, model, optimizer, scaler, summary_writer, epoch, args):
    """main_moco.py's train() (its meters and timing left out)"""
    model.train()
    iters_per_epoch = len(train_loader)
    moco_m = args.moco_m
    for i, (images, _) in enumerate(train_loader):
        lr = adjust_learning_rate(optimizer, epoch + i / iters_per_epoch, args)
        if args.moco_m_cos:
            moco_m = adjust_moco_momentum(epoch + i / iters_per_epoch, args)
        if args.gpu is not None:
            images[0] = images[0].cuda(args.gpu, non_blocking=True)
            images[1] = images[1].cuda(args.gpu, non_blocking=True)
        with torch.cuda.amp.autocast(True):
            loss = model(images[0], images[1], moco_m)
        if args.rank == 0:
            summary_writer.add_scalar("loss", loss.item(), epoch * iters_per_epoch + i)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        print("Epoch: [%d][%d/%d] lr %.4e loss %.4e" % (epoch, i, iters_per_epoch, lr, loss.item()))


for epoch in range(args.start_epoch, args.epochs):
    train(train_loader, model, optimizer, scaler, summary_writer, epoch, args)
print("VALUE lr", optimizer.param_groups[0]['lr'])
print("VALUE momentum", adjust_moco_momentum(1.5, args))
model.eval()
with torch.no_grad():
    x1 = torch.stack([two_crops(img)[0] for img in images[:8]])
    x2 = torch.stack([two_crops(img)[1] for img in images[:8]])
    print("VALUE eval_loss", float(model(x1, x2, 0.99)))
    print("VALUE features", float(model.momentum_encoder(x1).abs().mean()))
'''

_TORCHVISION = {
    "torchvision/__init__.py": '"""A stand-in written by bench/_rw_heldout67.py."""\nfrom . import datasets, '
                               'models, transforms\n',
    "torchvision/datasets.py": '"""A stand-in written by bench/_rw_heldout67.py (never instantiated)."""\n',
    "torchvision/models.py": '"""A stand-in written by bench/_rw_heldout67.py: no architectures."""\n',
    "torchvision/transforms/__init__.py": '"""A stand-in written by bench/_rw_heldout67.py (nothing here is '
                                          'called)."""\n',
    "torchvision/transforms/functional.py": '"""A stand-in written by bench/_rw_heldout67.py."""\n',
}

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("melgan_train", MELGAN, "mel2wav", "driver.py", [], None),
    ("melgan_audio2mel", MELGAN, "mel2wav", "driver.py", [], None),
    ("yolo_tiny_adam", YOLO, "pytorchyolo,config", "driver.py", [], None),
    ("yolo_tiny_sgd", YOLO, "pytorchyolo,config", "driver.py", [], None),
    ("moco_lars", MOCO, "moco", "driver.py", [], None),
    ("moco_adamw", MOCO, "moco", "driver.py", [], None),
]

DEPS: dict = {}

# Drivers: our own code, through the libraries' documented entry points.
DRIVERS = {
    "melgan_train": _MELGAN_DRIVER,
    "melgan_audio2mel": _AUDIO2MEL_DRIVER,
    "yolo_tiny_adam": _YOLO_DRIVER.format(batch=4, subdivisions=1, burn_in=2, optimizer="adam"),
    "yolo_tiny_sgd": _YOLO_DRIVER.format(batch=4, subdivisions=2, burn_in=1000, optimizer="sgd"),
    "moco_lars": _MOCO_DRIVER.format(lr=0.6, wd=1e-6, moco_m=0.99, moco_m_cos=True, optimizer="lars", port=29567),
    "moco_adamw": _MOCO_DRIVER.format(lr=0.032, wd=0.1, moco_m=0.99, moco_m_cos=False, optimizer="adamw",
                                      port=29568),
}

_LIBROSA = {"librosa/__init__.py": _LIBROSA_INIT, "librosa/filters.py": _LIBROSA_FILTERS,
            "librosa/core.py": _LIBROSA_CORE, "librosa/util.py": _LIBROSA_UTIL}
FILES = {**{name: dict(_LIBROSA) for name, *_ in PROGRAMS if name.startswith("melgan")},
         **{name: {"imgaug/__init__.py": _IMGAUG_INIT} for name, *_ in PROGRAMS if name.startswith("yolo")}}



def _moco_cpu(proj):
    """No GPU here: contrastive_loss's `.cuda()` made `.cpu()` on the torch side (after the conversion, which saw
    `.cuda()`)."""
    path = proj / "moco" / "builder.py"
    path.write_text(path.read_text(encoding="utf-8").replace(".cuda()", ".cpu()"), encoding="utf-8")


TORCH_FILES = {name: dict(_TORCHVISION) for name, *_ in PROGRAMS if not name.startswith("melgan")}
for _name in ("moco_lars", "moco_adamw"):
    TORCH_FILES[_name]["moco/builder.py"] = _moco_cpu

# Audio2Mel.forward's torch.stft without return_complex: torch 2 refuses it, and so must the conversion
RAISES = {"melgan_audio2mel": r"stft requires the return_complex parameter be given"}

# MelGAN: two epochs of two batches, two backward() each; YOLO: two epochs of two batches; MoCo: two of two
LOSSES = {"melgan_train": 8, "melgan_audio2mel": 0, "yolo_tiny_adam": 4, "yolo_tiny_sgd": 4, "moco_lars": 4,
          "moco_adamw": 4}
