"""The `heldout13` set of bench/real_world.py (`--set heldout13`): a repository the converter was never run on,
converted as a new user would convert it, its models trained for a few steps through short drivers (our code, the
repository's own modules, trained as its train_*.py scripts train them, on small synthetic data drawn from fixed
seeds).

    python bench/real_world.py --mirrors /work/.mirror --set heldout13 [--only vqvae_ema,pixelsnail_top]

- rosinality/vq-vae-2-pytorch, five drivers, each written next to the repository's modules (vqvae.py, the
  distributed package, scheduler.py, pixelsnail.py and the scripts):
  - vqvae_ema: vqvae.py's VQVAE (small: 16 channels, a codebook of 16 vectors of 8) trained by a loop of ours
    written as train_vqvae.py's train() body (MSE reconstruction + 0.25 * latent loss, Adam) on two 32x32 images.
    Quantize updates its codebook in forward under `if self.training`: `self.cluster_size.data.mul_(decay)
    .add_(..., alpha=1 - decay)`, `self.embed_avg.data...`, `self.embed.data.copy_(...)` (EMA buffers written in
    place), after `dist_fn.all_reduce` (the repository's distributed package over torch.distributed, one
    process); the straight-through `input + (quantize - input).detach()`. The buffers' sums after the steps and
    an eval-mode reconstruction printed.
  - vqvae_train_fn: train_vqvae.py's own train(epoch, loader, model, optimizer, scheduler, device) over a
    DataLoader of four images, two epochs, with scheduler.py's CycleScheduler (group['lr'] written each step),
    tqdm's set_description, dist.all_gather and the i % 100 == 0 branch (model.eval(), a no_grad forward,
    utils.save_image, model.train()). torchvision does not import next to this torch: the driver gives
    train_vqvae.py a torchvision module whose utils.save_image writes nothing. The codebook buffers printed.
  - pixelsnail_top: pixelsnail.py's PixelSNAIL (weight_norm'd convolutions and linears, CausalConv2d 'causal'
    zeroing `weight_v.data[:, :, -1, causal:]` in forward, GatedResBlock's GLU and in-place `out += input`,
    CausalAttention with the lru_cache'd numpy causal mask, masked_fill, the coordinate background buffer) on
    4x4 top codes, trained by train_pixelsnail.py's train(args, ...) with hier='top' (cross entropy over the
    class dimension, Adam, CycleScheduler). dataset.py (lmdb) is given a stand-in module.
  - pixelsnail_bottom: the same with hier='bottom': attention off, a conditioning CondResNet over the one-hot
    top codes, F.interpolate(scale_factor=2), the condition kept in the cache dict, on 8x8 bottom codes.
  - vqvae_sample: sample.py's sample_model (@torch.no_grad, an int64 row filled position by position,
    torch.softmax over out[:, :, i, j] / temperature, torch.multinomial) for a small top and a conditioned bottom
    PixelSNAIL, decoded by VQVAE.decode_code; the codes and the decoded image's sum printed.
  (train_vqvae.py's and train_pixelsnail.py's main blocks are not run: CUDA devices, an ImageFolder/LMDB dataset,
  apex.)

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

VQVAE2 = "rosinality+vq-vae-2-pytorch@ef5f67c46f93624163776caec9e0d95063910eca"
_MODULES = "vqvae.py,distributed,scheduler.py,pixelsnail.py"

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("vqvae_ema", VQVAE2, _MODULES, "driver.py", [], None),
    ("vqvae_train_fn", VQVAE2, _MODULES + ",train_vqvae.py,sample", "driver.py", [], None),
    ("pixelsnail_top", VQVAE2, _MODULES + ",train_pixelsnail.py", "driver.py", [], None),
    ("pixelsnail_bottom", VQVAE2, _MODULES + ",train_pixelsnail.py", "driver.py", [], None),
    ("vqvae_sample", VQVAE2, _MODULES + ",sample.py", "driver.py", [], None),
]

DEPS: dict = {}

# torchvision does not import next to this CPU torch (and lmdb is not installed): the scripts get stand-ins
_STANDINS = '''
import sys
import types

torchvision = types.ModuleType("torchvision")
torchvision.datasets = types.ModuleType("torchvision.datasets")
torchvision.transforms = types.ModuleType("torchvision.transforms")
torchvision.utils = types.ModuleType("torchvision.utils")
torchvision.utils.save_image = lambda *args, **kwargs: None
for _name in ("datasets", "transforms", "utils"):
    sys.modules["torchvision." + _name] = getattr(torchvision, _name)
sys.modules["torchvision"] = torchvision
dataset = types.ModuleType("dataset")
dataset.LMDBDataset = None
sys.modules["dataset"] = dataset
'''

_PIXELSNAIL_TRAIN = _STANDINS + '''
import argparse
import torch
from torch import optim
from torch.utils.data import DataLoader, TensorDataset
from pixelsnail import PixelSNAIL
from scheduler import CycleScheduler
from train_pixelsnail import train

HIER = "{hier}"
torch.manual_seed(0)
top = torch.randint(0, 16, (4, 4, 4))
bottom = torch.randint(0, 16, (4, 8, 8))
loader = DataLoader(TensorDataset(top, bottom, torch.zeros(4, dtype=torch.long)), batch_size=2)
if HIER == "top":
    model = PixelSNAIL([4, 4], 16, 16, 5, 1, 1, 16, dropout=0.1, n_out_res_block=1)
else:
    model = PixelSNAIL([8, 8], 16, 16, 5, 1, 1, 16, attention=False, dropout=0.1, n_cond_res_block=1,
                       cond_res_channel=16)
optimizer = optim.Adam(model.parameters(), lr=3e-3)
scheduler = CycleScheduler(optimizer, 3e-3, n_iter=len(loader) * 2, momentum=None)
args = argparse.Namespace(hier=HIER)
for epoch in range(2):
    train(args, epoch, loader, model, optimizer, scheduler, "cpu")
print("VALUE lr", optimizer.param_groups[0]["lr"])
model.eval()
with torch.no_grad():
    if HIER == "top":
        out, _ = model(top[:2])
    else:
        out, _ = model(bottom[:2], condition=top[:2])
print("VALUE logits_sum", float(out.sum()))
print("VALUE logits_abs", float(out.abs().sum()))
'''

# Drivers: our own code, through the repository's modules.
DRIVERS = {
    "vqvae_ema": '''
import torch
from torch import nn, optim
from vqvae import VQVAE

torch.manual_seed(0)
model = VQVAE(in_channel=3, channel=16, n_res_block=1, n_res_channel=8, embed_dim=8, n_embed=16)
img = torch.rand(2, 3, 32, 32) * 2 - 1
optimizer = optim.Adam(model.parameters(), lr=3e-3)
criterion = nn.MSELoss()
latent_loss_weight = 0.25
for step in range(5):
    model.zero_grad()
    out, latent_loss = model(img)
    recon_loss = criterion(out, img)
    latent_loss = latent_loss.mean()
    loss = recon_loss + latent_loss_weight * latent_loss
    loss.backward()
    optimizer.step()
    print("step", step, "mse", recon_loss.item(), "latent", latent_loss.item())
for q in ("quantize_t", "quantize_b"):
    quantize = getattr(model, q)
    print("VALUE", q + "_embed", float(quantize.embed.sum()))
    print("VALUE", q + "_embed_abs", float(quantize.embed.abs().sum()))
    print("VALUE", q + "_cluster_size", float(quantize.cluster_size.sum()))
    print("VALUE", q + "_cluster_size_sq", float((quantize.cluster_size ** 2).sum()))
    print("VALUE", q + "_embed_avg", float(quantize.embed_avg.abs().sum()))
model.eval()
with torch.no_grad():
    out, diff = model(img)
    _, _, _, id_t, id_b = model.encode(img)
print("VALUE eval_recon", float(out.abs().sum()))
print("VALUE eval_diff", float(diff.sum()))
print("VALUE codes", float(id_t.sum() + 7 * id_b.sum()))
''',
    "vqvae_train_fn": _STANDINS + '''
import torch
from torch import optim
from torch.utils.data import DataLoader, TensorDataset
from vqvae import VQVAE
from scheduler import CycleScheduler
from train_vqvae import train

torch.manual_seed(0)
images = torch.rand(4, 3, 32, 32) * 2 - 1
loader = DataLoader(TensorDataset(images, torch.zeros(4, dtype=torch.long)), batch_size=2, shuffle=True)
model = VQVAE(in_channel=3, channel=16, n_res_block=1, n_res_channel=8, embed_dim=8, n_embed=16)
optimizer = optim.Adam(model.parameters(), lr=3e-3)
scheduler = CycleScheduler(optimizer, 3e-3, n_iter=len(loader) * 20, momentum=None, warmup_proportion=0.05)
for epoch in range(2):
    train(epoch, loader, model, optimizer, scheduler, "cpu")
print("VALUE lr", optimizer.param_groups[0]["lr"])
for q in ("quantize_t", "quantize_b"):
    quantize = getattr(model, q)
    print("VALUE", q + "_embed_abs", float(quantize.embed.abs().sum()))
    print("VALUE", q + "_cluster_size_sq", float((quantize.cluster_size ** 2).sum()))
    print("VALUE", q + "_embed_avg", float(quantize.embed_avg.abs().sum()))
''',
    "pixelsnail_top": _PIXELSNAIL_TRAIN.replace("{hier}", "top"),
    "pixelsnail_bottom": _PIXELSNAIL_TRAIN.replace("{hier}", "bottom"),
    "vqvae_sample": _STANDINS + '''
import torch
from vqvae import VQVAE
from pixelsnail import PixelSNAIL
from sample import sample_model

torch.manual_seed(0)
model_vqvae = VQVAE(in_channel=3, channel=16, n_res_block=1, n_res_channel=8, embed_dim=8, n_embed=16)
model_top = PixelSNAIL([2, 2], 16, 16, 5, 1, 1, 16, dropout=0.1)
model_bottom = PixelSNAIL([4, 4], 16, 16, 5, 1, 1, 16, attention=False, dropout=0.1, n_cond_res_block=1,
                          cond_res_channel=16)
for m in (model_vqvae, model_top, model_bottom):
    m.eval()
top_sample = sample_model(model_top, "cpu", 2, [2, 2], 1.0)
bottom_sample = sample_model(model_bottom, "cpu", 2, [4, 4], 0.7, condition=top_sample)
with torch.no_grad():
    decoded_sample = model_vqvae.decode_code(top_sample, bottom_sample).clamp(-1, 1)
print("VALUE top_codes", float(top_sample.sum()))
print("VALUE bottom_codes", float(bottom_sample.sum()))
print("VALUE decoded_sum", float(decoded_sample.sum()))
print("VALUE decoded_abs", float(decoded_sample.abs().sum()))
''',
}
