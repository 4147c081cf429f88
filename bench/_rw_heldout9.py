"""The `heldout9` set of bench/real_world.py (`--set heldout9`): repositories the converter was never run on,
converted as a new user would convert them, each trained for a few steps through a short driver (our code, the
libraries' documented entry points).

    python bench/real_world.py --mirrors /work/.mirror --set heldout9 [--only conformer,nystrom,sksq96_vae,mlm,botnet]

- lucidrains/conformer: Conformer (blocks of half-step feed-forwards, attention with Shaw's relative position
  embedding looked up from a clamped distance matrix, a convolution module of GLU, a padded depth-wise Conv1d and
  BatchNorm1d, einops Rearrange layers) trained with Adam; a ConformerBlock called with a boolean padding mask
  (`dots.masked_fill_(~mask, -torch.finfo(dots.dtype).max)`), and a causal ConformerConvModule; eval-mode
  outputs printed.
- lucidrains/nystrom-attention: Nystromformer (landmarks by einops reduce, the Moore-Penrose pseudo-inverse by
  Newton iterations scaled by torch.max of the whole matrix, a depth-wise Conv2d residual of the values, the
  sequence left-padded to a multiple of the landmarks) with a padding mask, under a linear classifier, SGD with
  momentum; NystromAttention's attention matrix (return_attn) printed.
- sksq96/pytorch-vae: vae.py's convolutional VAE on 64x64 RGB images (torch.randn(*mu.size()) in its
  reparametrisation, ConvTranspose2d decoder), trained with Adam on its notebook's objective (binary cross
  entropy summed, plus the KL term).
- lucidrains/mlm-pytorch: the MLM trainer (pad and [cls] tokens kept out of the mask by a functools.reduce of
  `|` over a set of token ids, the masked subset drawn by torch.rand + topk + scatter_, labels by masked_fill,
  [mask] tokens put in where a uniform_ draw is below replace_prob; with random_token_prob, torch.randint tokens
  chosen by `&=` and torch.where) around a small embedding + MLP of ours, Adam. replace_prob and
  random_token_prob are 1.0 where they are used: uniform_'s draws are not aligned across the frameworks by the
  runner, and a draw in [0, 1) is below 1.0 on both sides.
- lucidrains/bottleneck-transformer-pytorch: BottleStack (BottleBlocks sharing one nn.ReLU() instance, the last
  BatchNorm's gamma zeroed by nn.init.zeros_, multi-head self-attention over the feature map with relative
  position logits made absolute by zero-padding and reshaping, AvgPool2d downsampling) under a pooled linear
  classifier, SGD with momentum; an absolute-position stack's output printed.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

CONFORMER = "lucidrains+conformer@fc70d518d3770788d17a5d9799e08d23ad19c525"
NYSTROM = "lucidrains+nystrom-attention@fbe9ebad6bae24143d7930d6c2b82d6a12d68f76"
VAE = "sksq96+pytorch-vae@14ce22796fe0ee5120f4f1cdb1dbaf515e72559d"
MLM = "lucidrains+mlm-pytorch@1569ae2ad67fc4c973bcae00ac01b3eaae9fe2a2"
BOTNET = "lucidrains+bottleneck-transformer-pytorch@440fbdc6cc31cef318cc6c10a466c408138065fa"

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("conformer", CONFORMER, "conformer", "driver.py", [], None),
    ("nystrom", NYSTROM, "nystrom_attention", "driver.py", [], None),
    ("sksq96_vae", VAE, "vae.py", "driver.py", [], None),
    ("mlm", MLM, "mlm_pytorch", "driver.py", [], None),
    ("botnet", BOTNET, "bottleneck_transformer_pytorch", "driver.py", [], None),
]

DEPS: dict = {}

# Drivers: our own code, through the repositories' documented entry points.
DRIVERS = {
    "conformer": '''
import torch
import torch.nn.functional as F
from conformer import Conformer, ConformerBlock, ConformerConvModule

x = torch.randn(2, 10, 16)
target = torch.randn(2, 10, 16)
model = Conformer(dim=16, depth=2, dim_head=8, heads=2, ff_mult=2, conv_expansion_factor=2, conv_kernel_size=7)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), target)
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
model.eval()
with torch.no_grad():
    print("VALUE conformer_eval", float(model(x).abs().mean()))

block = ConformerBlock(dim=16, dim_head=8, heads=2, ff_mult=2, conv_kernel_size=5)
mask = torch.ones(2, 10).bool()
mask[1, 7:] = False
optimizer = torch.optim.Adam(block.parameters(), lr=1e-3)
for step in range(2):
    optimizer.zero_grad()
    out = block(x, mask=mask)
    loss = (out * mask[..., None]).pow(2).mean()
    loss.backward()
    optimizer.step()
    print("loss", loss.item())

causal = ConformerConvModule(dim=16, causal=True, expansion_factor=2, kernel_size=4)
with torch.no_grad():
    print("VALUE causal_conv", float(causal(x).abs().mean()))
''',
    "nystrom": '''
import torch
import torch.nn.functional as F
from torch import nn
from nystrom_attention import NystromAttention, Nystromformer

x = torch.randn(2, 10, 16)
mask = torch.ones(2, 10).bool()
mask[0, 8:] = False
labels = torch.tensor([1, 3])
body = Nystromformer(dim=16, depth=2, dim_head=8, heads=2, num_landmarks=4, pinv_iterations=6,
                     attn_values_residual_conv_kernel=5)
head = nn.Linear(16, 4)
optimizer = torch.optim.SGD(list(body.parameters()) + list(head.parameters()), lr=1e-2, momentum=0.9)
for step in range(3):
    optimizer.zero_grad()
    logits = head(body(x, mask=mask).mean(dim=1))
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    optimizer.step()
    print("loss", loss.item())

attn = NystromAttention(dim=16, dim_head=8, heads=2, num_landmarks=4, residual_conv_kernel=3)
with torch.no_grad():
    out, matrix = attn(x, return_attn=True)
print("VALUE attn_out", float(out.abs().mean()))
print("VALUE attn_matrix", float(matrix.abs().mean()))
''',
    "sksq96_vae": '''
import torch
import torch.nn.functional as F
from vae import VAE

def loss_fn(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x, reduction="sum")
    KLD = -0.5 * torch.mean(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD, BCE, KLD

images = torch.rand(4, 3, 64, 64)
model = VAE(image_channels=3)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    recon_images, mu, logvar = model(images)
    loss, bce, kld = loss_fn(recon_images, images, mu, logvar)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
with torch.no_grad():
    print("VALUE representation", float(model.representation(images).abs().mean()))
''',
    "mlm": '''
import torch
from torch import nn
from mlm_pytorch import MLM


class Tiny(nn.Module):
    def __init__(self, num_tokens=20, dim=16):
        super().__init__()
        self.emb = nn.Embedding(num_tokens, dim)
        self.net = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, num_tokens))

    def forward(self, x):
        return self.net(self.emb(x))


seq = torch.randint(3, 20, (4, 12))
seq[:, 0] = 1           # [cls]
seq[1, 9:] = 0          # [pad]
for name, random_token_prob in (("plain", 0.), ("random_tokens", 1.0)):
    trainer = MLM(Tiny(), mask_token_id=2, pad_token_id=0, mask_prob=0.25, replace_prob=1.0, num_tokens=20,
                  random_token_prob=random_token_prob, mask_ignore_token_ids=[1])
    optimizer = torch.optim.Adam(trainer.parameters(), lr=3e-3)
    for step in range(3):
        loss = trainer(seq)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("loss", loss.item())
    with torch.no_grad():
        print("VALUE " + name + "_logits", float(trainer.transformer(seq).abs().mean()))
''',
    "botnet": '''
import torch
import torch.nn.functional as F
from torch import nn
from bottleneck_transformer_pytorch import BottleStack

stack = BottleStack(dim=8, fmap_size=8, dim_out=16, proj_factor=4, num_layers=2, downsample=True, heads=2,
                    dim_head=4, rel_pos_emb=True, activation=nn.ReLU())
model = nn.Sequential(stack, nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(1), nn.Linear(16, 5))
fmap = torch.randn(2, 8, 8, 8)
labels = torch.tensor([0, 3])
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
for step in range(3):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(fmap), labels)
    loss.backward()
    optimizer.step()
    print("loss", loss.item())

absolute = BottleStack(dim=8, fmap_size=(4, 6), dim_out=8, proj_factor=2, num_layers=2, downsample=False,
                       heads=2, dim_head=4, rel_pos_emb=False)
with torch.no_grad():
    print("VALUE absolute", float(absolute(torch.randn(2, 8, 4, 6)).abs().mean()))
''',
}
