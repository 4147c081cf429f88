"""The `heldout7` set of bench/real_world.py (`--set heldout7`): repositories the converter was never run on,
converted as a new user would convert them.

    python bench/real_world.py --mirrors /work/.mirror --set heldout7 [--only unet,captioning]

- milesial/Pytorch-UNet: UNet (transposed-convolution upsampling, padding to the skip connection's size) with
  the repository's dice_loss and evaluate(), trained as its train_model() trains (RMSprop with foreach=True,
  ReduceLROnPlateau on the validation Dice score, a GradScaler switched off, clip_grad_norm_, the gradients'
  finiteness checked per parameter after each step). The driver is train_model()'s loop without wandb and the
  image folders: train.py imports wandb, not installed. Its first RMSprop step moves every weight by about
  10 * lr * sign(gradient), so float32 noise in near-zero gradients flips whole steps: the judgement needs the
  float64 reference run, which evaluate() (an explicit cast to float32) would stop; the epoch is longer than
  the bench's loss budget, so evaluate() is not reached.
- sgrvinod/a-PyTorch-Tutorial-to-Image-Captioning: DecoderWithAttention (soft attention over the encoded image,
  an LSTMCell stepped over the caption lengths, sorted by length) trained as the repository's train() trains
  (pack_padded_sequence on scores and targets, doubly stochastic attention regularization, its
  clip_gradient(optimizer, c) clamping .grad between backward() and step(), its AverageMeter and top-5
  accuracy). train() itself unpacks a PackedSequence into two names, which fails in torch since 1.1: the
  driver's loop is train()'s with `.data`. The encoder (torchvision's resnet101) is replaced by a small
  convolution of our own; torchvision, which models.py imports for the encoder, is an empty module; utils.py
  imports h5py (not installed, an empty module here) and scipy.misc's imread and imresize (removed from
  SciPy; used by its data preparation only): the driver sets them to None.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

UNET = "milesial+Pytorch-UNet"
CAPTION = "sgrvinod+a-PyTorch-Tutorial-to-Image-Captioning"

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("unet", UNET, "unet,utils,evaluate.py", "driver.py", [], None),
    ("captioning", CAPTION, "models.py,utils.py", "driver.py", [], None),
]

DEPS: dict = {}

# Drivers: our own code, through the repositories' documented entry points.
DRIVERS = {
    "unet": '''
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim
from torch.utils.data import DataLoader, Dataset

from evaluate import evaluate
from unet import UNet
from utils.dice_score import dice_loss


class Shapes(Dataset):
    """images with a bright square on noise, the square's mask as the target class"""
    def __init__(self, n, size=32):
        g = torch.Generator().manual_seed(n)
        self.items = []
        for i in range(n):
            img = torch.rand(3, size, size, generator=g) * 0.3
            mask = torch.zeros(size, size, dtype=torch.long)
            a = 4 + (i * 5) % 12
            img[:, a:a + 10, a:a + 10] += 0.6
            mask[a:a + 10, a:a + 10] = 1
            self.items.append({"image": img, "mask": mask})

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


device = torch.device("cpu")
model = UNet(n_channels=3, n_classes=2, bilinear=False)
model = model.to(memory_format=torch.channels_last)
train_loader = DataLoader(Shapes(16), shuffle=True, batch_size=2)
val_loader = DataLoader(Shapes(4), shuffle=False, drop_last=True, batch_size=2)
optimizer = optim.RMSprop(model.parameters(), lr=1e-3, weight_decay=1e-8, momentum=0.9, foreach=True)
scheduler = optim.lr_scheduler.ReduceLROnPlateau(optimizer, "max", patience=5)
grad_scaler = torch.cuda.amp.GradScaler(enabled=False)
criterion = nn.CrossEntropyLoss() if model.n_classes > 1 else nn.BCEWithLogitsLoss()
global_step = 0
for epoch in range(1, 3):
    model.train()
    epoch_loss = 0
    for batch in train_loader:
        images, true_masks = batch["image"], batch["mask"]
        # (train.py also passes dtype=torch.float32: left out, so bench/real_world.py's float64 reference runs)
        images = images.to(device=device, memory_format=torch.channels_last)
        true_masks = true_masks.to(device=device, dtype=torch.long)
        with torch.autocast(device.type, enabled=False):
            masks_pred = model(images)
            loss = criterion(masks_pred, true_masks)
            loss += dice_loss(F.softmax(masks_pred, dim=1).float(),
                              F.one_hot(true_masks, model.n_classes).permute(0, 3, 1, 2).float(),
                              multiclass=True)
        optimizer.zero_grad(set_to_none=True)
        grad_scaler.scale(loss).backward()
        grad_scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        grad_scaler.step(optimizer)
        grad_scaler.update()
        global_step += 1
        epoch_loss += loss.item()
        finite = 0
        for tag, value in model.named_parameters():
            if not (torch.isinf(value.grad) | torch.isnan(value.grad)).any():
                finite += 1
        print("VALUE finite_grads", finite)
    val_score = evaluate(model, val_loader, device, False)
    scheduler.step(val_score)
    print("VALUE val_dice", float(val_score))
    print("VALUE epoch_loss", epoch_loss)
''',
    "captioning": '''
import sys
import types

import torch
from torch import nn

# models.py imports torchvision for the resnet101 encoder this driver replaces
sys.modules["torchvision"] = types.ModuleType("torchvision")
sys.modules["torchvision.transforms"] = types.ModuleType("torchvision.transforms")
sys.modules["h5py"] = types.ModuleType("h5py")     # utils.py's data preparation writes HDF5 (not used here)
import scipy.misc  # noqa: E402  utils.py imports imread/imresize, gone from SciPy (used by its data preparation)
scipy.misc.imread = scipy.misc.imresize = None

from torch.nn.utils.rnn import pack_padded_sequence
from models import DecoderWithAttention
from utils import AverageMeter, accuracy, clip_gradient


class TinyEncoder(nn.Module):
    """stands in for the resnet101 Encoder: (batch, 3, 16, 16) -> (batch, 4, 4, encoder_dim)"""
    def __init__(self, encoder_dim):
        super().__init__()
        self.conv = nn.Conv2d(3, encoder_dim, 4, stride=4)

    def forward(self, images):
        return self.conv(images).permute(0, 2, 3, 1)


class Captions(torch.utils.data.Dataset):
    def __init__(self, n, vocab, max_len=7):
        g = torch.Generator().manual_seed(7)
        self.imgs = torch.rand(n, 3, 16, 16, generator=g)
        self.caps = torch.randint(1, vocab, (n, max_len), generator=g)
        self.lens = torch.tensor([[3 + (i * 3) % (max_len - 2)] for i in range(n)])

    def __len__(self):
        return len(self.imgs)

    def __getitem__(self, i):
        return self.imgs[i], self.caps[i], self.lens[i]


vocab = 20
encoder_dim = 16
grad_clip = 0.05
alpha_c = 1.0
decoder = DecoderWithAttention(attention_dim=12, embed_dim=10, decoder_dim=14, vocab_size=vocab,
                               encoder_dim=encoder_dim, dropout=0.5)
decoder_optimizer = torch.optim.Adam(params=filter(lambda p: p.requires_grad, decoder.parameters()), lr=4e-3)
encoder = TinyEncoder(encoder_dim)
criterion = nn.CrossEntropyLoss()
loader = torch.utils.data.DataLoader(Captions(12, vocab), batch_size=4, shuffle=True)
# train.py's train(), but for `scores, _ = pack_padded_sequence(...)`: PackedSequence has four fields since
# torch 1.1 (the repository was written for torch 0.4), so its unpacking fails in torch itself; `.data` here
for epoch in range(2):
    decoder.train()
    losses, top5accs = AverageMeter(), AverageMeter()
    for i, (imgs, caps, caplens) in enumerate(loader):
        imgs = encoder(imgs)
        scores, caps_sorted, decode_lengths, alphas, sort_ind = decoder(imgs, caps, caplens)
        targets = caps_sorted[:, 1:]
        scores = pack_padded_sequence(scores, decode_lengths, batch_first=True).data
        targets = pack_padded_sequence(targets, decode_lengths, batch_first=True).data
        loss = criterion(scores, targets)
        loss += alpha_c * ((1. - alphas.sum(dim=1)) ** 2).mean()
        decoder_optimizer.zero_grad()
        loss.backward()
        if grad_clip is not None:
            clip_gradient(decoder_optimizer, grad_clip)
        decoder_optimizer.step()
        top5 = accuracy(scores, targets, 5)
        losses.update(loss.item(), sum(decode_lengths))
        top5accs.update(top5, sum(decode_lengths))
    print("VALUE loss_avg", losses.avg)
    print("VALUE top5_avg", top5accs.avg)
with torch.no_grad():
    imgs, caps, lens = next(iter(torch.utils.data.DataLoader(Captions(12, vocab), batch_size=12)))
    scores, _, _, alphas, _ = decoder(encoder(imgs), caps, lens)
    print("VALUE scores", float(scores.abs().mean()))
    print("VALUE alphas", float(alphas.sum()))
''',
}
