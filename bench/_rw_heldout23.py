"""The `heldout23` set of bench/real_world.py (`--set heldout23`): three repositories converted as a new user would
convert them, their models trained for a few steps by short drivers (our code, the repositories' own modules, on
small synthetic data drawn from fixed seeds).

    python bench/real_world.py --mirrors /work/.mirror --set heldout23 [--only vit_deep,unet_train]

- lucidrains/vit-pytorch (the whole vit_pytorch package converted; its __init__ imports vit, simple_vit, mae and
  dino, so the converted package must import as a whole; dino imports torchvision's transforms, which does not
  load next to this CPU torch: the drivers give torchvision a stand-in module on both sides). Each driver builds a
  few variants on tiny images (dropout 0), trains each two steps with Adam (cross entropy), its losses and its
  eval-mode logits printed as VALUE lines:
  - vit_deep: DeepViT (re-attention), CCT (a convolutional tokenizer, sequence pooling, learnable positions),
    T2TViT (nn.Unfold tokens-to-token).
  - vit_pyramid: LeViT (convolutional stem, attention biases indexed by position offsets), PiT (depth-wise pooling
    convolutions between stages), CrossViT (two branches, cross attention of the class tokens).
  - vit_local: MobileViT (MV2 blocks, unfold/fold by einops), MaxViT (MBConv with squeeze-excitation, block and
    grid attention with relative position bias), NesT (nested blocks aggregated by convolutions).
  - vit_conv: CvT (convolutional projections), RegionViT (regional and local tokens), TwinsSVT (locally grouped
    and global sub-sampled attention, PEG).
  - vit_wrappers: MAE around a ViT with pool='mean' (patches masked by torch.rand(...).argsort, the draws aligned
    by the runner; the reconstruction loss is the model's output), DistillWrapper around a DistillableViT with a
    small teacher.
- milesial/Pytorch-UNet (unet/, utils/, evaluate.py):
  - unet_train: UNet(n_channels=3, n_classes=2, bilinear=False) (transposed-convolution upsampling), trained with
    CrossEntropyLoss + utils.dice_score.dice_loss on synthetic images and masks (Adam), then evaluate.py's
    evaluate on a tiny loader.
  - unet_bilinear: the same with bilinear=True (nn.Upsample(scale_factor=2, mode='bilinear', align_corners=True),
    halved channels).
- jadore801120/attention-is-all-you-need-pytorch (transformer/, train.py):
  - aiayn_train: transformer.Models.Transformer (d_model 32, n_layers 2) trained by train.py's own train_epoch
    (patch_src/patch_trg, cal_performance with label smoothing, ScheduledOptim's step_and_update_lr) and evaluated
    by its eval_epoch, over batches of ours (namespaces with .src and .trg as torchtext's BucketIterator gives
    them, sequence first). train.py imports torchtext (not installed): the driver gives it stand-in modules.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

VIT = "lucidrains+vit-pytorch@69d24fe9e3024c0d4b02761123b8583a24ebed1e"
UNET = "milesial+Pytorch-UNet@21d7850f2af30a9695bbeea75f3136aa538cfc4a"
AIAYN = "jadore801120+attention-is-all-you-need-pytorch@132907dd272e2cc92e3c10e6c4e783a87ff8893d"

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("vit_deep", VIT, "vit_pytorch,", "driver.py", [], None),
    ("vit_pyramid", VIT, "vit_pytorch,", "driver.py", [], None),
    ("vit_local", VIT, "vit_pytorch,", "driver.py", [], None),
    ("vit_conv", VIT, "vit_pytorch,", "driver.py", [], None),
    ("vit_wrappers", VIT, "vit_pytorch,", "driver.py", [], None),
    ("unet_train", UNET, "unet,utils,evaluate.py", "driver.py", [], None),
    ("unet_bilinear", UNET, "unet,utils,evaluate.py", "driver.py", [], None),
    ("aiayn_train", AIAYN, "transformer,train.py", "driver.py", [], None),
]

DEPS: dict = {}

# dino.py imports torchvision's transforms at import time (used only when a Dino is built)
_VIT_HEAD = '''
import sys
import types

sys.modules["torchvision"] = types.ModuleType("torchvision")
sys.modules["torchvision"].transforms = types.ModuleType("torchvision.transforms")
sys.modules["torchvision.transforms"] = sys.modules["torchvision"].transforms

import torch
import torch.nn.functional as F
from torch import nn


def train(name, model, images, labels, steps=2):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    for step in range(steps):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        print("VALUE", name + "_loss" + str(step), loss.item())
    model.eval()
    with torch.no_grad():
        logits = model(images)
    print("VALUE", name + "_logits_abs", float(logits.abs().sum()))


torch.manual_seed(0)
'''

_VIT_DEEP = _VIT_HEAD + '''
from vit_pytorch.deepvit import DeepViT
from vit_pytorch.cct import CCT
from vit_pytorch.t2t import T2TViT

images = torch.rand(2, 3, 16, 16)
labels = torch.tensor([1, 3])
train("deepvit", DeepViT(image_size=16, patch_size=4, num_classes=5, dim=32, depth=2, heads=2, mlp_dim=64,
                         dim_head=16), images, labels)
train("cct", CCT(img_size=16, embedding_dim=32, n_conv_layers=1, kernel_size=3, stride=1, padding=1,
                 pooling_kernel_size=3, pooling_stride=2, pooling_padding=1, num_layers=2, num_heads=2,
                 mlp_ratio=2.0, num_classes=5, positional_embedding="learnable", dropout_rate=0.0,
                 attention_dropout=0.0, stochastic_depth_rate=0.0), images, labels)
images = torch.rand(2, 3, 32, 32)
train("t2t", T2TViT(image_size=32, num_classes=5, dim=32, depth=2, heads=2, mlp_dim=64, dim_head=16,
                    t2t_layers=((7, 4), (3, 2), (3, 2))), images, labels)
'''

_VIT_PYRAMID = _VIT_HEAD + '''
from vit_pytorch.levit import LeViT
from vit_pytorch.pit import PiT
from vit_pytorch.cross_vit import CrossViT

labels = torch.tensor([1, 3])
images = torch.rand(2, 3, 32, 32)
train("levit", LeViT(image_size=32, num_classes=5, stages=3, dim=(16, 24, 32), depth=1, heads=(2, 2, 2),
                     mlp_mult=2, dim_key=8, dim_value=16, dropout=0.0), images, labels)
train("pit", PiT(image_size=32, patch_size=4, dim=16, num_classes=5, depth=(1, 1), heads=2, mlp_dim=32,
                 dim_head=8, dropout=0.0, emb_dropout=0.0), images, labels)
images = torch.rand(2, 3, 16, 16)
train("crossvit", CrossViT(image_size=16, num_classes=5, depth=1, sm_dim=16, sm_patch_size=4, sm_enc_depth=1,
                           sm_enc_heads=2, sm_enc_mlp_dim=32, sm_enc_dim_head=8, lg_dim=24, lg_patch_size=8,
                           lg_enc_depth=1, lg_enc_heads=2, lg_enc_mlp_dim=32, lg_enc_dim_head=8,
                           cross_attn_depth=1, cross_attn_heads=2, cross_attn_dim_head=8, dropout=0.0,
                           emb_dropout=0.0), images, labels)
'''

_VIT_LOCAL = _VIT_HEAD + '''
from vit_pytorch.mobile_vit import MobileViT
from vit_pytorch.max_vit import MaxViT
from vit_pytorch.nest import NesT

labels = torch.tensor([1, 3])
images = torch.rand(2, 3, 64, 64)
train("mobilevit", MobileViT(image_size=(64, 64), dims=[16, 20, 24], channels=[8, 8, 12, 12, 16, 16, 20, 20, 24, 24,
                                                                               32],
                             num_classes=5, depths=(1, 1, 1)), images, labels)
images = torch.rand(2, 3, 32, 32)
train("maxvit", MaxViT(num_classes=5, dim_conv_stem=8, dim=16, dim_head=8, depth=(1, 1), window_size=2,
                       dropout=0.0), images, labels)
images = torch.rand(2, 3, 16, 16)
train("nest", NesT(image_size=16, patch_size=2, dim=16, heads=2, num_hierarchies=2, block_repeats=(1, 1),
                   num_classes=5, dim_head=8), images, labels)
'''

_VIT_CONV = _VIT_HEAD + '''
from vit_pytorch.cvt import CvT
from vit_pytorch.regionvit import RegionViT
from vit_pytorch.twins_svt import TwinsSVT

labels = torch.tensor([1, 3])
images = torch.rand(2, 3, 32, 32)
train("cvt", CvT(num_classes=5, s1_emb_dim=16, s1_heads=1, s1_depth=1, s2_emb_dim=24, s2_heads=2, s2_depth=1,
                 s3_emb_dim=32, s3_heads=2, s3_depth=1), images, labels)
images = torch.rand(2, 3, 64, 64)
train("regionvit", RegionViT(dim=(16, 16, 24, 32), depth=(1, 1, 1, 1), window_size=2, num_classes=5,
                             local_patch_size=4), images, labels)
train("twins", TwinsSVT(num_classes=5, s1_emb_dim=16, s1_patch_size=4, s1_local_patch_size=2, s1_global_k=2,
                        s1_depth=1, s2_emb_dim=24, s2_patch_size=2, s2_local_patch_size=2, s2_global_k=2,
                        s2_depth=1, s3_emb_dim=32, s3_patch_size=2, s3_local_patch_size=2, s3_global_k=2,
                        s3_depth=1, s4_emb_dim=32, s4_patch_size=2, s4_local_patch_size=1, s4_global_k=1,
                        s4_depth=1), images, labels)
'''

_VIT_WRAPPERS = _VIT_HEAD + '''
from vit_pytorch import ViT, MAE
from vit_pytorch.distill import DistillableViT, DistillWrapper

images = torch.rand(2, 3, 16, 16)
labels = torch.tensor([1, 3])
# pool="mean": MAE adds the encoder's whole pos_embedding (with pool="cls" it slices a batch axis that ViT's 2-d
# pos_embedding no longer has, a shape error in torch itself)
encoder = ViT(image_size=16, patch_size=4, num_classes=5, dim=32, depth=2, heads=2, mlp_dim=64, dim_head=16,
              pool="mean")
mae = MAE(encoder=encoder, masking_ratio=0.75, decoder_dim=16, decoder_depth=1, decoder_heads=2, decoder_dim_head=8)
optimizer = torch.optim.Adam(mae.parameters(), lr=1e-3)
for step in range(3):
    optimizer.zero_grad()
    loss = mae(images)
    loss.backward()
    optimizer.step()
    print("VALUE mae_loss" + str(step), loss.item())

teacher = nn.Sequential(nn.Conv2d(3, 8, 4, stride=4), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 16, 5))
student = DistillableViT(image_size=16, patch_size=4, num_classes=5, dim=32, depth=2, heads=2, mlp_dim=64,
                         dim_head=16, dropout=0.0, emb_dropout=0.0)
distiller = DistillWrapper(student=student, teacher=teacher, temperature=3.0, alpha=0.5, hard=False)
optimizer = torch.optim.Adam(distiller.parameters(), lr=1e-3)
for step in range(3):
    optimizer.zero_grad()
    loss = distiller(images, labels)
    loss.backward()
    optimizer.step()
    print("VALUE distill_loss" + str(step), loss.item())
student.eval()
with torch.no_grad():
    print("VALUE student_logits_abs", float(student(images).abs().sum()))
    print("VALUE vit_logits_abs", float(student.to_vit()(images).abs().sum()))
'''

_UNET = '''
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

from evaluate import evaluate
from unet import UNet
from utils.dice_score import dice_loss


class Squares(Dataset):
    """images with a bright square on noise, the square's mask as the target class"""
    def __init__(self, n, size=32):
        g = torch.Generator().manual_seed(n)
        self.items = []
        for i in range(n):
            img = torch.rand(3, size, size, generator=g) * 0.3
            mask = torch.zeros(size, size, dtype=torch.long)
            a = 3 + (i * 5) % 13
            img[:, a:a + 9, a:a + 11] += 0.6
            mask[a:a + 9, a:a + 11] = 1
            self.items.append({{"image": img, "mask": mask}})

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


torch.manual_seed(0)
device = torch.device("cpu")
model = UNet(n_channels=3, n_classes=2, bilinear={bilinear})
train_loader = DataLoader(Squares(6), shuffle=False, batch_size=2)
val_loader = DataLoader(Squares(4), shuffle=False, batch_size=2)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
criterion = nn.CrossEntropyLoss()
model.train()
for batch in train_loader:
    images, true_masks = batch["image"], batch["mask"]
    masks_pred = model(images)
    loss = criterion(masks_pred, true_masks)
    loss += dice_loss(F.softmax(masks_pred, dim=1).float(),
                      F.one_hot(true_masks, model.n_classes).permute(0, 3, 1, 2).float(), multiclass=True)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
val_score = evaluate(model, val_loader, device, False)
print("VALUE val_dice", float(val_score))
model.eval()
with torch.no_grad():
    logits = model(val_loader.dataset[0]["image"][None])
print("VALUE logits_abs", float(logits.abs().sum()))
'''

# train.py imports torchtext's Field, Dataset, BucketIterator and TranslationDataset (its data pipeline, not
# installed): stand-in modules, both sides
_AIAYN = '''
import argparse
import sys
import types

_torchtext = types.ModuleType("torchtext")
_torchtext.data = types.ModuleType("torchtext.data")
_torchtext.data.Field = _torchtext.data.Dataset = _torchtext.data.BucketIterator = None
_torchtext.datasets = types.ModuleType("torchtext.datasets")
_torchtext.datasets.TranslationDataset = None
sys.modules["torchtext"] = _torchtext
sys.modules["torchtext.data"] = _torchtext.data
sys.modules["torchtext.datasets"] = _torchtext.datasets

import torch

from transformer.Models import Transformer
from transformer.Optim import ScheduledOptim
from train import train_epoch, eval_epoch

PAD, BOS, EOS = 1, 2, 3
VOCAB = 24


def batches(n, seed):
    """torchtext's BucketIterator batches: .src and .trg sequence-first (train.py's patch_src transposes them)"""
    g = torch.Generator().manual_seed(seed)
    out = []
    for i in range(n):
        src = torch.randint(4, VOCAB, (9, 3), generator=g)
        src[7:, i % 3] = PAD
        trg = torch.randint(4, VOCAB, (8, 3), generator=g)
        trg[0] = BOS
        trg[6:, (i + 1) % 3] = PAD
        out.append(types.SimpleNamespace(src=src, trg=trg))
    return out


torch.manual_seed(0)
opt = argparse.Namespace(src_pad_idx=PAD, trg_pad_idx=PAD)
model = Transformer(VOCAB, VOCAB, src_pad_idx=PAD, trg_pad_idx=PAD, d_word_vec=32, d_model=32, d_inner=64,
                    n_layers=2, n_head=2, d_k=16, d_v=16, dropout=0.1, n_position=40,
                    trg_emb_prj_weight_sharing=True, emb_src_trg_weight_sharing=True, scale_emb_or_prj="prj")
optimizer = ScheduledOptim(torch.optim.Adam(model.parameters(), betas=(0.9, 0.98), eps=1e-09), 2.0, 32, 10)
device = torch.device("cpu")
training_data, validation_data = batches(4, 1), batches(2, 2)
for epoch in range(2):
    train_loss, train_accu = train_epoch(model, training_data, optimizer, opt, device, smoothing=True)
    print("VALUE train_loss" + str(epoch), train_loss)
    print("VALUE train_accu" + str(epoch), train_accu)
    valid_loss, valid_accu = eval_epoch(model, validation_data, device, opt)
    print("VALUE valid_loss" + str(epoch), valid_loss)
    print("VALUE valid_accu" + str(epoch), valid_accu)
'''

# Drivers: our own code, through the repositories' modules.
DRIVERS = {
    "vit_deep": _VIT_DEEP,
    "vit_pyramid": _VIT_PYRAMID,
    "vit_local": _VIT_LOCAL,
    "vit_conv": _VIT_CONV,
    "vit_wrappers": _VIT_WRAPPERS,
    "unet_train": _UNET.format(bilinear=False),
    "unet_bilinear": _UNET.format(bilinear=True),
    "aiayn_train": _AIAYN,
}
