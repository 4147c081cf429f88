"""The `heldout62` set of bench/real_world.py (`--set heldout62`): masked autoencoders, self-supervised learning with a
momentum target and vector quantizers: facebookresearch/mae (MaskedAutoencoderViT over timm's PatchEmbed and Block,
pretrained by engine_pretrain.train_one_epoch with util/misc's NativeScalerWithGradNormCount and util/lr_sched's
per-iteration cosine schedule, and models_vit's VisionTransformer fine-tuned by engine_finetune.train_one_epoch and
evaluate with util/lr_decay's layer-decay groups), lucidrains/byol-pytorch (BYOL: a forward hook on a hidden layer of
the wrapped network, the projector built at the first forward, the deep-copied target encoder updated by
update_moving_average, simplicial embeddings; and its SimSiam form without momentum) and
lucidrains/vector-quantize-pytorch (VectorQuantize with its EMA codebook, k-means init, dead-code expiry and the
rotation trick, ResidualVQ, and the codebook-free ResidualFSQ and LFQ), converted as a new user would convert them,
through drivers of ours calling their documented entry points (the files as they are, but for MAE's two edits below).
timm itself (0.4.9, the PyPI wheel) is converted with each MAE program (`msmigrate convert --deps timm`).

    RW_SITE=DIR python bench/real_world.py --mirrors /work/.mirror --set heldout62 [--only mae_pretrain,vq_ema]

Extra packages (not in setup.sh), installed apart (`pip download timm==0.4.9 --no-deps -d W; pip install --no-deps
--target DIR W/*.whl`) and put on both sides' path with RW_SITE=DIR: timm 0.4.9, the last release whose
vision_transformer.Block still takes MAE's `qk_scale` argument (MAE pins 0.3.2, which imports `torch._six`'s
container_abcs, gone in torch 2; 0.4.9 has the same Block, PatchEmbed, VisionTransformer, Mixup, add_weight_decay
and accuracy). einops and einx (vector-quantize-pytorch) are in the test venv already.

- MAE (models_mae.py, models_vit.py, engine_pretrain.py, engine_finetune.py and util/ as they are; main_pretrain.py
  and main_finetune.py import torch.utils.tensorboard and util/datasets.py's PIL/timm transforms and build the
  ViT-Base models, so a driver does what they do with small models). Two edits, on both sides before converting:
  util/misc.py's `from torch._six import inf` (torch._six is gone in torch 2; its inf was math's) becomes `from math
  import inf`, and util/pos_embed.py's `dtype=np.float` (removed in NumPy 1.24; the builtin float) `np.float64`. After converting, the torch side's `torch.cuda.synchronize()` in the two engines becomes
  `torch.cpu.synchronize()` (no GPU here; the converter saw them as written). The data: a synthetic ImageFolder of
  PNG images (train/ and val/, two classes, 24 x 24 RGB, NumPy's seeded draws) written by the set on both sides.
  - mae_pretrain: main_pretrain.py's path: its transforms (RandomResizedCrop(16, scale=(0.2, 1.0),
    interpolation=3), RandomHorizontalFlip, ToTensor, Normalize), `datasets.ImageFolder(.../train)`,
    `DistributedSampler(dataset, num_replicas=1, rank=0, shuffle=True)` (main_pretrain's `if True:` branch; the
    world size and rank from util.misc), a DataLoader of batch 4 with drop_last, a small
    `models_mae.MaskedAutoencoderViT(img_size=16, patch_size=4, embed_dim=32, depth=2, num_heads=2,
    decoder_embed_dim=16, decoder_depth=1, decoder_num_heads=2, mlp_ratio=4, norm_layer=partial(nn.LayerNorm,
    eps=1e-6))` (the sin-cos position embeddings of util/pos_embed.py, random masking by torch.rand noise and
    argsort), timm's `optim_factory.add_weight_decay(model, 0.05)`, `AdamW(param_groups, lr, betas=(0.9, 0.95))`
    with lr = blr * eff_batch_size / 256 (blr 1.5e-2), NativeScaler, and two epochs of `engine_pretrain.train_one_epoch(model,
    data_loader, optimizer, device, epoch, loss_scaler, log_writer=None, args=args)` (one warmup epoch of
    lr_sched.adjust_learning_rate per iteration, mask ratio 0.75); then, in eval mode, the loss and the mean
    |unpatchify(pred)| of a batch of the validation images, and the learning rate: VALUEs.
  - mae_pretrain_normpix: the same with `norm_pix_loss=True` (per-patch normalized targets), `accum_iter=2`
    (the loss divided, the scaler's update_grad every second step, the grads accumulated in between) and a
    RandomSampler (main_pretrain's else branch).
  - mae_finetune: main_finetune.py's path: a MaskedAutoencoderViT as above saved as a checkpoint `{'model':
    state_dict}` with torch.save, then `models_vit.VisionTransformer(img_size=16, patch_size=4, embed_dim=32,
    depth=2, num_heads=2, mlp_ratio=4, qkv_bias=True, norm_layer=partial(nn.LayerNorm, eps=1e-6), num_classes=5,
    drop_path_rate=0.1, global_pool=True)` (5 outputs: evaluate's top-5 accuracy needs them; the folder has 2 classes) (a subclass of timm's VisionTransformer that deletes `self.norm`),
    main_finetune's load: torch.load, the head keys dropped where their shapes differ,
    util.pos_embed.interpolate_pos_embed, `load_state_dict(checkpoint_model, strict=False)` and its assert on the
    missing keys, `trunc_normal_(model.head.weight, std=2e-5)`; `lrd.param_groups_lrd(model, 0.05,
    no_weight_decay_list=model.no_weight_decay(), layer_decay=0.75)`, AdamW (blr 5e-2), NativeScaler,
    LabelSmoothingCrossEntropy(0.1) (no Mixup), and two epochs of `engine_finetune.train_one_epoch(model,
    criterion, data_loader, optimizer, device, epoch, loss_scaler, max_norm=1.0, mixup_fn=None, args=args)`
    (clip_grad_norm_ through the scaler); then `engine_finetune.evaluate` of the validation folder (timm's
    accuracy): VALUEs.
- BYOL (byol_pytorch/byol_pytorch.py as it is; the package's __init__ imports its trainer, which needs accelerate
  and beartype, so the module is taken alone, as bench/_rw_heldout4.py's byol does): a small residual network of
  ours (conv, BatchNorm, two residual blocks, `avgpool`, `fc`), `BYOL(net, image_size=16, ...)` (its constructor
  runs a forward of `torch.randn(2, 3, 16, 16)`, which registers the hook and builds the projector), an
  augmentation of ours of torchvision's transforms on tensors (`nn.Sequential(T.RandomHorizontalFlip(),
  T.RandomResizedCrop((16, 16), antialias=False), T.Normalize(...))`), Adam over `learner.parameters()`, 4 steps on
  8 images; then `learner(images, return_embedding=True)` in eval mode: VALUEs.
  - byol_momentum: `hidden_layer='avgpool'` (found by name), simplicial embeddings (4 simplices of 4), the
    deep-copied target encoder and `learner.update_moving_average()` after each step (decay 0.9).
  - byol_simsiam: `use_momentum=False` (SimSiamMLP with its affine-free BatchNorm1d, the online encoder as its own
    target under no_grad), `hidden_layer=-2` (found by position among the children), no simplicial embeddings.
- vector-quantize-pytorch (the vector_quantize_pytorch package as it is): autoencoders of ours after
  examples/autoencoder.py's SimpleVQAutoEncoder, through the package's Sequential, trained by AdamW on 8 random
  1 x 16 x 16 images for 4 steps (examples/autoencoder.py's loss: `(out.clamp(-1, 1) - x).abs().mean() + alpha *
  commit_loss`); then the number of distinct codes, the codebook's mean |.| and the eval-mode reconstruction error:
  VALUEs.
  - vq_ema: `VectorQuantize(dim=32, codebook_size=32, accept_image_fmap=True, decay=0.8, kmeans_init=True,
    kmeans_iters=2, threshold_ema_dead_code=1, rotation_trick=True)` (the EMA codebook update, k-means on the
    first batch, dead codes replaced by sampled inputs).
  - vq_cosine: `VectorQuantize(dim=32, codebook_size=32, accept_image_fmap=True, heads=2,
    separate_codebook_per_head=True, codebook_dim=8, use_cosine_sim=True, orthogonal_reg_weight=10,
    straight_through=True, rotation_trick=False)` (project in and out, the cosine-similarity codebook, the
    orthogonal regularisation).
  - vq_residual: `ResidualVQ(dim=32, num_quantizers=3, codebook_size=16, kmeans_init=True, kmeans_iters=2)`
    (three EMA codebooks over the residuals, the commit losses of each) over the encoder's 4 x 4 positions as a
    sequence, in an autoencoder class of ours with the same layers (ResidualVQ's `accept_image_fmap=True` fails
    in torch at this commit: its residual is concatenated channel-last with the image-shaped quantized output),
    then `get_output_from_indices`.
  - vq_scalar: `ResidualFSQ(dim=32, levels=[8, 5, 5], num_quantizers=2, is_channel_first=True)` and
    `LFQ(dim=32, codebook_size=16, entropy_loss_weight=0.1, channel_first=True)` (the per-sample and batch entropy
    aux loss), each in its own autoencoder (separate models, so the runner syncs each at its first call).

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

from pathlib import Path

import numpy as np

MAE = "facebookresearch+mae@efb2a8062c206524e35e47d04501ed4f544c0ae8"
BYOL = "lucidrains+byol-pytorch@299312613c1f44923e7869d1c82be7d536c2c42b"
VQ = "lucidrains+vector-quantize-pytorch@0d7d1aa83334b6f2f8a40306bece75cdaa13d065"


def image_folder(root: Path):
    """A synthetic ImageFolder: root/imagenet/{train,val}/{class_a,class_b}/*.png, 24 x 24 RGB, NumPy's seeded
    draws (the class a brightness offset)."""
    from PIL import Image
    rs = np.random.RandomState(62)
    for split, n in (("train", 8), ("val", 4)):
        for c, cls in enumerate(("class_a", "class_b")):
            d = root / "imagenet" / split / cls
            d.mkdir(parents=True, exist_ok=True)
            for i in range(n):
                pixels = np.clip(rs.rand(24, 24, 3) * 160 + 60 * c, 0, 255).astype(np.uint8)
                Image.fromarray(pixels).save(d / f"{i}.png")


def _edit(path: Path, pairs):
    text = path.read_text()
    for old, new in pairs:
        if old not in text:
            raise RuntimeError(f"{path}: {old!r} not found")
        text = text.replace(old, new)
    path.write_text(text)


def _mae_today(proj):
    """Both sides, before converting: torch._six is gone in torch 2 (its inf was math.inf); NumPy 1.24 removed
    np.float (the builtin float, float64 as a dtype)."""
    _edit(Path(proj) / "util" / "misc.py", [("from torch._six import inf", "from math import inf")])
    _edit(Path(proj) / "util" / "pos_embed.py", [("dtype=np.float)", "dtype=np.float64)")])


def _mae_cpu(proj):
    """The torch side, after converting: no GPU here, torch.cuda.synchronize() raises; torch.cpu's waits as well."""
    for engine in ("engine_pretrain.py", "engine_finetune.py"):
        _edit(Path(proj) / engine, [("torch.cuda.synchronize()", "torch.cpu.synchronize()")])


_MAE_COMMON = '''
import os
from functools import partial
from types import SimpleNamespace

import torch
import torch.nn as nn
import torchvision.transforms as transforms
import torchvision.datasets as datasets
import timm.optim.optim_factory as optim_factory

import util.misc as misc
from util.misc import NativeScalerWithGradNormCount as NativeScaler
import models_mae

torch.manual_seed(0)
device = torch.device('cpu')
data_path = os.path.join('..', '..', 'data', 'imagenet')


def small_mae(norm_pix_loss=False):
    """models_mae.mae_vit_base_patch16_dec512d8b's construction, small"""
    return models_mae.MaskedAutoencoderViT(
        img_size=16, patch_size=4, embed_dim=32, depth=2, num_heads=2,
        decoder_embed_dim=16, decoder_depth=1, decoder_num_heads=2,
        mlp_ratio=4, norm_layer=partial(nn.LayerNorm, eps=1e-6), norm_pix_loss=norm_pix_loss)
'''

_MAE_PRETRAIN_DRIVER = _MAE_COMMON + '''
from engine_pretrain import train_one_epoch

args = SimpleNamespace(batch_size=4, epochs=2, accum_iter={accum_iter}, input_size=16, mask_ratio=0.75,
                       norm_pix_loss={norm_pix_loss}, weight_decay=0.05, lr=None, blr=1.5e-2, min_lr=0.,
                       warmup_epochs=1, start_epoch=0, distributed=False)
transform_train = transforms.Compose([
        transforms.RandomResizedCrop(args.input_size, scale=(0.2, 1.0), interpolation=3),  # 3 is bicubic
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])])
dataset_train = datasets.ImageFolder(os.path.join(data_path, 'train'), transform=transform_train)
print(dataset_train)
{sampler}
data_loader_train = torch.utils.data.DataLoader(
    dataset_train, sampler=sampler_train,
    batch_size=args.batch_size,
    num_workers=0,
    pin_memory=False,
    drop_last=True,
)
model = small_mae(norm_pix_loss=args.norm_pix_loss)
model.to(device)
model_without_ddp = model
eff_batch_size = args.batch_size * args.accum_iter * misc.get_world_size()
if args.lr is None:  # only base_lr is specified
    args.lr = args.blr * eff_batch_size / 256
param_groups = optim_factory.add_weight_decay(model_without_ddp, args.weight_decay)
optimizer = torch.optim.AdamW(param_groups, lr=args.lr, betas=(0.9, 0.95))
loss_scaler = NativeScaler()
for epoch in range(args.start_epoch, args.epochs):
    train_stats = train_one_epoch(
        model, data_loader_train,
        optimizer, device, epoch, loss_scaler,
        log_writer=None,
        args=args
    )
    print("epoch", epoch, "loss", train_stats['loss'])
print("VALUE lr", optimizer.param_groups[0]["lr"])
print("VALUE train_loss", train_stats['loss'])

transform_val = transforms.Compose([
        transforms.Resize(args.input_size, interpolation=3),
        transforms.ToTensor(),
        transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])])
dataset_val = datasets.ImageFolder(os.path.join(data_path, 'val'), transform=transform_val)
images = torch.stack([dataset_val[i][0] for i in range(len(dataset_val))])
model.eval()
with torch.no_grad():
    loss, pred, mask = model(images, mask_ratio=args.mask_ratio)
    reconstruction = model.unpatchify(pred)
print("VALUE eval_loss", float(loss))
print("VALUE reconstruction", float(reconstruction.abs().mean()))
print("VALUE masked", float(mask.sum()))
'''

_DISTRIBUTED_SAMPLER = '''
num_tasks = misc.get_world_size()
global_rank = misc.get_rank()
sampler_train = torch.utils.data.DistributedSampler(
    dataset_train, num_replicas=num_tasks, rank=global_rank, shuffle=True
)
print("Sampler_train = %s" % str(sampler_train))
'''

_RANDOM_SAMPLER = '''
sampler_train = torch.utils.data.RandomSampler(dataset_train)
'''

_MAE_FINETUNE_DRIVER = _MAE_COMMON + '''
from timm.models.layers import trunc_normal_
from timm.loss import LabelSmoothingCrossEntropy

import util.lr_decay as lrd
from util.pos_embed import interpolate_pos_embed
import models_vit
from engine_finetune import train_one_epoch, evaluate

args = SimpleNamespace(batch_size=4, epochs=2, accum_iter=1, input_size=16, weight_decay=0.05, lr=None, blr=5e-2,
                       layer_decay=0.75, min_lr=1e-6, warmup_epochs=1, smoothing=0.1, clip_grad=1.0,
                       nb_classes=5, drop_path=0.1, global_pool=True, finetune='mae_pretrain.pth')

# a pretrained checkpoint as main_pretrain.py's misc.save_model writes it
mae = small_mae()
with torch.no_grad():
    mae(torch.randn(2, 3, 16, 16), mask_ratio=0.75)
torch.save({{'model': mae.state_dict(), 'epoch': 0}}, args.finetune)

transform = transforms.Compose([
        transforms.Resize(args.input_size, interpolation=3),
        transforms.CenterCrop(args.input_size),
        transforms.ToTensor(),
        transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])])
dataset_train = datasets.ImageFolder(os.path.join(data_path, 'train'), transform=transform)
dataset_val = datasets.ImageFolder(os.path.join(data_path, 'val'), transform=transform)
sampler_train = torch.utils.data.RandomSampler(dataset_train)
sampler_val = torch.utils.data.SequentialSampler(dataset_val)
data_loader_train = torch.utils.data.DataLoader(dataset_train, sampler=sampler_train, batch_size=args.batch_size,
                                                num_workers=0, pin_memory=False, drop_last=True)
data_loader_val = torch.utils.data.DataLoader(dataset_val, sampler=sampler_val, batch_size=args.batch_size,
                                              num_workers=0, pin_memory=False, drop_last=False)

model = models_vit.VisionTransformer(
    img_size=16, patch_size=4, embed_dim=32, depth=2, num_heads=2, mlp_ratio=4, qkv_bias=True,
    norm_layer=partial(nn.LayerNorm, eps=1e-6),
    num_classes=args.nb_classes,
    drop_path_rate=args.drop_path,
    global_pool=args.global_pool,
)

checkpoint = torch.load(args.finetune, map_location='cpu')
print("Load pre-trained checkpoint from: %s" % args.finetune)
checkpoint_model = checkpoint['model']
state_dict = model.state_dict()
for k in ['head.weight', 'head.bias']:
    if k in checkpoint_model and checkpoint_model[k].shape != state_dict[k].shape:
        print(f"Removing key {{k}} from pretrained checkpoint")
        del checkpoint_model[k]
interpolate_pos_embed(model, checkpoint_model)
msg = model.load_state_dict(checkpoint_model, strict=False)
print(sorted(msg.missing_keys))
if args.global_pool:
    assert set(msg.missing_keys) == {{'head.weight', 'head.bias', 'fc_norm.weight', 'fc_norm.bias'}}
else:
    assert set(msg.missing_keys) == {{'head.weight', 'head.bias'}}
trunc_normal_(model.head.weight, std=2e-5)
model.to(device)
model_without_ddp = model
n_parameters = sum(p.numel() for p in model.parameters() if p.requires_grad)
print('number of params (M): %.2f' % (n_parameters / 1.e6))
eff_batch_size = args.batch_size * args.accum_iter * misc.get_world_size()
if args.lr is None:  # only base_lr is specified
    args.lr = args.blr * eff_batch_size / 256
param_groups = lrd.param_groups_lrd(model_without_ddp, args.weight_decay,
    no_weight_decay_list=model_without_ddp.no_weight_decay(),
    layer_decay=args.layer_decay
)
optimizer = torch.optim.AdamW(param_groups, lr=args.lr)
loss_scaler = NativeScaler()
criterion = LabelSmoothingCrossEntropy(smoothing=args.smoothing)
print("criterion = %s" % str(criterion))
for epoch in range(args.epochs):
    train_stats = train_one_epoch(
        model, criterion, data_loader_train,
        optimizer, device, epoch, loss_scaler,
        args.clip_grad, None,
        log_writer=None,
        args=args
    )
    test_stats = evaluate(data_loader_val, model, device)
    print(f"Accuracy of the network on the {{len(dataset_val)}} test images: {{test_stats['acc1']:.1f}}%")
print("VALUE train_loss", train_stats['loss'])
print("VALUE val_loss", test_stats['loss'])
print("VALUE val_acc1", test_stats['acc1'])
print("VALUE lr", max(g["lr"] for g in optimizer.param_groups))
print("VALUE head", float(model.head.weight.abs().mean()))
'''

_BYOL_DRIVER = '''
import torch
from torch import nn
import torch.nn.functional as F
from torchvision import transforms as T
from byol_pytorch import BYOL


class Block(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(x + self.bn2(self.conv2(out)))


class SmallResNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU(inplace=True)
        self.layer1 = Block(8)
        self.layer2 = Block(8)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(8, num_classes)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer2(self.layer1(x))
        x = self.avgpool(x)
        return self.fc(torch.flatten(x, 1))


torch.manual_seed(0)
net = SmallResNet()
augment = nn.Sequential(
    T.RandomHorizontalFlip(),
    T.RandomResizedCrop((16, 16), antialias=False),
    T.Normalize(mean=torch.tensor([0.485, 0.456, 0.406]), std=torch.tensor([0.229, 0.224, 0.225])),
)
learner = BYOL(
    net,
    image_size=16,
    projection_size=16,
    projection_hidden_size=32,
    augment_fn=augment,
    {options}
)
opt = torch.optim.Adam(learner.parameters(), lr=3e-3)
images = torch.rand(8, 3, 16, 16)
for step in range(4):
    loss = learner(images)
    opt.zero_grad()
    loss.backward()
    opt.step()
    {update}
    print("loss", loss.item())
learner.eval()
with torch.no_grad():
    projection, embedding = learner(images, return_embedding=True)
print("VALUE projection", float(projection.abs().mean()))
print("VALUE embedding", float(embedding.abs().mean()))
print("VALUE net", float(sum(p.abs().sum() for p in net.parameters())))
{target}
'''

_VQ_DRIVER = '''
import torch
import torch.nn as nn
from torch.optim import AdamW
from vector_quantize_pytorch import {klasses}, Sequential


def SimpleVQAutoEncoder(quantizer):
    """examples/autoencoder.py's SimpleVQAutoEncoder, the quantizer given"""
    return Sequential(
        nn.Conv2d(1, 16, kernel_size=3, stride=1, padding=1),
        nn.MaxPool2d(kernel_size=2, stride=2),
        nn.GELU(),
        nn.Conv2d(16, 32, kernel_size=3, stride=1, padding=1),
        nn.MaxPool2d(kernel_size=2, stride=2),
        quantizer,
        nn.Upsample(scale_factor=2, mode="nearest"),
        nn.Conv2d(32, 16, kernel_size=3, stride=1, padding=1),
        nn.GELU(),
        nn.Upsample(scale_factor=2, mode="nearest"),
        nn.Conv2d(16, 1, kernel_size=3, stride=1, padding=1),
    )


class SeqVQAutoEncoder(nn.Module):
    """The same encoder and decoder around a quantizer of (batch, sequence, dim) inputs: the feature map's 4 x 4
    positions as the sequence"""
    def __init__(self, quantizer):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, 16, kernel_size=3, stride=1, padding=1),
            nn.MaxPool2d(kernel_size=2, stride=2),
            nn.GELU(),
            nn.Conv2d(16, 32, kernel_size=3, stride=1, padding=1),
            nn.MaxPool2d(kernel_size=2, stride=2),
        )
        self.quantizer = quantizer
        self.decoder = nn.Sequential(
            nn.Upsample(scale_factor=2, mode="nearest"),
            nn.Conv2d(32, 16, kernel_size=3, stride=1, padding=1),
            nn.GELU(),
            nn.Upsample(scale_factor=2, mode="nearest"),
            nn.Conv2d(16, 1, kernel_size=3, stride=1, padding=1),
        )

    def forward(self, x):
        z = self.encoder(x)
        b, c, h, w = z.shape
        quantized, indices, commit_loss = self.quantizer(z.flatten(2).transpose(1, 2))
        quantized = quantized.transpose(1, 2).reshape(b, c, h, w)
        return self.decoder(quantized), indices, commit_loss


torch.random.manual_seed(1234)
x = torch.rand(8, 1, 16, 16) * 2 - 1
alpha = 10
for name, make in {quantizers}:
    model = {builder}(make())
    opt = AdamW(model.parameters(), lr=3e-3)
    for _ in range(4):
        opt.zero_grad()
        out, indices, *aux = model(x)
        out = out.clamp(-1., 1.)
        rec_loss = (out - x).abs().mean()
        cmt_loss = aux[0].sum() if aux else 0.
        (rec_loss + alpha * cmt_loss).backward()
        opt.step()
        print(name, "rec loss", rec_loss.item(), "active", indices.unique().numel())
    quantizer = model.fns[5] if isinstance(model, Sequential) else model.quantizer
    model.eval()
    with torch.no_grad():
        out, indices, *aux = model(x)
    print("VALUE " + name + "_eval_rec", float((out.clamp(-1., 1.) - x).abs().mean()))
    print("VALUE " + name + "_codes", float(indices.unique().numel()))
    {extra}
'''

_VQ_CODEBOOK = '''print("VALUE " + name + "_codebook", float(quantizer.codebook.abs().mean()))'''
_VQ_RESIDUAL = '''print("VALUE " + name + "_codebooks", float(quantizer.codebooks.abs().mean()))
    with torch.no_grad():
        decoded = quantizer.get_output_from_indices(indices)
    print("VALUE " + name + "_from_indices", float(decoded.abs().mean()))'''
_VQ_SCALAR = '''print("VALUE " + name + "_index_sum", float(indices.float().sum()))'''

# (name, repo, directory of the program in the repo, script, args, data)
_MAE_PARTS = "models_mae.py,models_vit.py,engine_pretrain.py,engine_finetune.py,util"
PROGRAMS = [
    ("mae_pretrain", MAE, _MAE_PARTS, "driver.py", [], image_folder),
    ("mae_pretrain_normpix", MAE, _MAE_PARTS, "driver.py", [], image_folder),
    ("mae_finetune", MAE, _MAE_PARTS, "driver.py", [], image_folder),
    ("byol_momentum", BYOL, "byol_pytorch/byol_pytorch.py", "driver.py", [], None),
    ("byol_simsiam", BYOL, "byol_pytorch/byol_pytorch.py", "driver.py", [], None),
    ("vq_ema", VQ, "vector_quantize_pytorch", "driver.py", [], None),
    ("vq_cosine", VQ, "vector_quantize_pytorch", "driver.py", [], None),
    ("vq_residual", VQ, "vector_quantize_pytorch", "driver.py", [], None),
    ("vq_scalar", VQ, "vector_quantize_pytorch", "driver.py", [], None),
]

# timm, imported by the MAE programs, converted with them
DEPS = {name: ["timm"] for name, *_ in PROGRAMS if name.startswith("mae_")}

# Drivers: our own code, through the libraries' documented entry points.
DRIVERS = {
    "mae_pretrain": _MAE_PRETRAIN_DRIVER.format(accum_iter=1, norm_pix_loss=False, sampler=_DISTRIBUTED_SAMPLER),
    "mae_pretrain_normpix": _MAE_PRETRAIN_DRIVER.format(accum_iter=2, norm_pix_loss=True, sampler=_RANDOM_SAMPLER),
    "mae_finetune": _MAE_FINETUNE_DRIVER.format(),
    "byol_momentum": _BYOL_DRIVER.format(
        options="hidden_layer='avgpool', moving_average_decay=0.9, use_simplicial_embeddings=True,\n"
                "    sem_num_simplices=4, sem_simplex_dim=4,",
        update="learner.update_moving_average()",
        target='print("VALUE target", float(sum(p.abs().sum() for p in learner.target_encoder.parameters())))'),
    "byol_simsiam": _BYOL_DRIVER.format(
        options="hidden_layer=-2, use_momentum=False, use_simplicial_embeddings=False,",
        update="", target=""),
    "vq_ema": _VQ_DRIVER.format(
        klasses="VectorQuantize", builder="SimpleVQAutoEncoder",
        quantizers='(("vq", lambda: VectorQuantize(dim=32, codebook_size=32, accept_image_fmap=True, decay=0.8,\n'
                   '    kmeans_init=True, kmeans_iters=2, threshold_ema_dead_code=1, rotation_trick=True)),)',
        extra=_VQ_CODEBOOK),
    "vq_cosine": _VQ_DRIVER.format(
        klasses="VectorQuantize", builder="SimpleVQAutoEncoder",
        quantizers='(("vq", lambda: VectorQuantize(dim=32, codebook_size=32, accept_image_fmap=True, heads=2,\n'
                   '    separate_codebook_per_head=True, codebook_dim=8, use_cosine_sim=True,\n'
                   '    orthogonal_reg_weight=10, straight_through=True, rotation_trick=False)),)',
        extra=_VQ_CODEBOOK),
    "vq_residual": _VQ_DRIVER.format(
        klasses="ResidualVQ", builder="SeqVQAutoEncoder",
        quantizers='(("rvq", lambda: ResidualVQ(dim=32, num_quantizers=3, codebook_size=16,\n'
                   '    kmeans_init=True, kmeans_iters=2)),)',
        extra=_VQ_RESIDUAL),
    "vq_scalar": _VQ_DRIVER.format(
        klasses="ResidualFSQ, LFQ", builder="SimpleVQAutoEncoder",
        quantizers='(("rfsq", lambda: ResidualFSQ(dim=32, levels=[8, 5, 5], num_quantizers=2,\n'
                   '    is_channel_first=True)),\n'
                   '    ("lfq", lambda: LFQ(dim=32, codebook_size=16, entropy_loss_weight=0.1, channel_first=True)))',
        extra=_VQ_SCALAR),
}

FILES = {name: {"_mae_today": _mae_today} for name, *_ in PROGRAMS if name.startswith("mae_")}

TORCH_FILES = {name: {"_mae_cpu": _mae_cpu} for name, *_ in PROGRAMS if name.startswith("mae_")}

# MAE: 8 steps (two epochs of 16 training images in batches of 4);
# BYOL: the constructor's forward is no step, 4 steps; vector-quantize: 4 steps per quantizer
LOSSES = {"mae_pretrain": 8, "mae_pretrain_normpix": 8, "mae_finetune": 8, "byol_momentum": 4, "byol_simsiam": 4,
          "vq_ema": 4, "vq_cosine": 4, "vq_residual": 4, "vq_scalar": 8}
