"""The `heldout10` set of bench/real_world.py (`--set heldout10`): repositories the converter was never run on,
converted as a new user would convert them, each trained for a few steps through a short driver (our code, the
libraries' documented entry points, or the program's own training loop on its own data generator).

    python bench/real_world.py --mirrors /work/.mirror --set heldout10 [--only tcn_copymem,halonet,rotary]

- locuslab/TCN, two drivers: tcn_copymem, the copy-memory task (TCN.copy_memory's data_generator, numpy-drawn
  digits, and its TCN: TemporalConvNet of weight_norm'd dilated Conv1d layers, Chomp1d slicing, 1x1 downsample,
  weights re-drawn by `.weight.data.normal_`) trained as copymem_test.py trains it (RMSprop, its
  clip_grad_norm_ between zero_grad() and backward(), cross entropy over `out.view(-1, n_classes)`); tcn_adding,
  the adding problem (TCN.adding_problem's data_generator, positions drawn by np.random.choice written into a
  mask tensor one by one, and its model; Adam, clip_grad_norm_ after backward(), MSE).
- lucidrains/halonet-pytorch: HaloAttention (F.unfold neighbourhoods with a halo, relative position logits made
  absolute by padding and reshaping, an unfolded padding mask applied by masked_fill_ with -finfo.max, in-place
  `q *= scale` and `sim += ...`) between two convolutions under a pooled classifier, SGD with momentum.
- lucidrains/axial-attention: AxialImageTransformer (non-reversible: permutations to and from each axis, PreNorm
  self-attention, channel LayerNorm by torch.var, LeakyReLU(inplace=True) feed-forwards, axial positional
  embeddings set by setattr) trained with Adam; AxialAttention summed over the axes, its output printed.
- lucidrains/rotary-embedding-torch: RotaryEmbedding in a small attention of ours (rotate_queries_or_keys, the
  frequencies cached in a non-persistent buffer written in forward), and an xpos RotaryEmbedding
  (rotate_queries_and_keys, scales by power), trained with Adam.
- AntixK/PyTorch-VAE: models/ VanillaVAE (reparameterised with torch.randn_like, loss_function's KL weight
  M_N), VQVAE (VectorQuantizer: argmin distances, one-hot by scatter_, the straight-through estimator) and
  WAE_MMD (the inverse multi-quadratic kernel MMD against torch.randn_like prior samples), each trained on 64x64
  images with SGD and momentum, their eval-mode generate() printed. (Not Adam, as the repository's experiment.py:
  the bias of each Conv2d before a BatchNorm2d gets a gradient of rounding size, which Adam's first step turns into
  +-lr by its sign; the BatchNorm running means, read in eval mode, then differ in torch's own float32 and float64
  runs by 5e-3.)

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

TCN = "locuslab+TCN@2f8c2b817050206397458dfd1f5a25ce8a32fe65"
HALONET = "lucidrains+halonet-pytorch@ff0eb7123f40d9aedea19007e63a0bea5a3706c6"
AXIAL = "lucidrains+axial-attention@eff2c10c2e76c735a70a6b995b571213adffbbb7"
ROTARY = "lucidrains+rotary-embedding-torch@8bb4643d1c29f944c47d2e807452ac437689af18"
ANTIXK = "AntixK+PyTorch-VAE@a6896b944c918dd7030e7d795a8c13e5c6345ec7"

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("tcn_copymem", TCN, "TCN", "driver.py", [], None),
    ("tcn_adding", TCN, "TCN", "driver.py", [], None),
    ("halonet", HALONET, "halonet_pytorch", "driver.py", [], None),
    ("axial", AXIAL, "axial_attention", "driver.py", [], None),
    ("rotary", ROTARY, "rotary_embedding_torch", "driver.py", [], None),
    ("antixk_vae", ANTIXK, "models", "driver.py", [], None),
]

DEPS: dict = {}

# Drivers: our own code, through the repositories' documented entry points.
DRIVERS = {
    "tcn_copymem": '''
import torch
import torch.nn as nn
from TCN.copy_memory.utils import data_generator
from TCN.copy_memory.model import TCN

# copymem_test.py's training, at a small size: T=12 blanks, 5 digits to remember
n_classes = 10
train_x, train_y = data_generator(12, 5, 64)
model = TCN(1, n_classes, [8, 8], 4, dropout=0.0)
criterion = nn.CrossEntropyLoss()
optimizer = getattr(torch.optim, "RMSprop")(model.parameters(), lr=5e-4)
batch_size = 16
for batch_idx, batch in enumerate(range(0, 64, batch_size)):
    x = train_x[batch:batch + batch_size]
    y = train_y[batch:batch + batch_size]
    optimizer.zero_grad()
    out = model(x.unsqueeze(1).contiguous())
    loss = criterion(out.view(-1, n_classes), y.view(-1))
    pred = out.view(-1, n_classes).data.max(1, keepdim=True)[1]
    correct = pred.eq(y.data.view_as(pred)).cpu().sum()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    loss.backward()
    optimizer.step()
    print("loss", loss.item(), int(correct))
model.eval()
with torch.no_grad():
    print("VALUE copymem_eval", float(criterion(model(train_x.unsqueeze(1)).view(-1, n_classes), train_y.view(-1))))
''',
    "tcn_adding": '''
import torch
import torch.nn.functional as F
from TCN.adding_problem.utils import data_generator
from TCN.adding_problem.model import TCN

# add_test.py's training: the adding problem, sequences of 16
X_train, Y_train = data_generator(32, 16)
model = TCN(2, 1, [8, 8, 8], kernel_size=3, dropout=0.0)
optimizer = getattr(torch.optim, "Adam")(model.parameters(), lr=4e-3)
for i in range(0, 32, 16):
    x, y = X_train[i:(i + 16)], Y_train[i:(i + 16)]
    optimizer.zero_grad()
    output = model(x)
    loss = F.mse_loss(output, y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    optimizer.step()
    print("loss", loss.item())
model.eval()
with torch.no_grad():
    print("VALUE adding_eval", float(F.mse_loss(model(X_train), Y_train)))
''',
    "halonet": '''
import torch
import torch.nn.functional as F
from torch import nn
from halonet_pytorch import HaloAttention

model = nn.Sequential(
    nn.Conv2d(3, 8, 3, padding=1),
    HaloAttention(dim=8, block_size=4, halo_size=1, dim_head=4, heads=2),
    nn.ReLU(),
    nn.Conv2d(8, 8, 3, padding=1),
    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 5))
images = torch.randn(2, 3, 8, 8)
labels = torch.tensor([1, 4])
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
for step in range(3):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(images), labels)
    loss.backward()
    optimizer.step()
    print("loss", loss.item())

attn = HaloAttention(dim=8, block_size=2, halo_size=2, dim_head=4, heads=2)
with torch.no_grad():
    print("VALUE halo_out", float(attn(torch.randn(1, 8, 4, 6)).abs().mean()))
''',
    "axial": '''
import torch
import torch.nn.functional as F
from axial_attention import AxialAttention, AxialImageTransformer

model = AxialImageTransformer(dim=8, depth=2, heads=2, reversible=False, axial_pos_emb_shape=(4, 6))
images = torch.randn(2, 8, 4, 6)
target = torch.randn(2, 8, 4, 6)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    optimizer.zero_grad()
    loss = F.mse_loss(model(images), target)
    loss.backward()
    optimizer.step()
    print("loss", loss.item())

attn = AxialAttention(dim=8, dim_index=1, heads=2, num_dimensions=2)
with torch.no_grad():
    print("VALUE axial_sum", float(attn(images).abs().mean()))
''',
    "rotary": '''
import torch
import torch.nn.functional as F
from torch import nn
from rotary_embedding_torch import RotaryEmbedding


class Attention(nn.Module):
    def __init__(self, dim=16, heads=2, xpos=False):
        super().__init__()
        self.heads = heads
        self.xpos = xpos
        self.to_qkv = nn.Linear(dim, dim * 3, bias=False)
        self.rotary = RotaryEmbedding(dim=4, use_xpos=xpos)
        self.to_out = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = (t.reshape(b, n, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        if self.xpos:
            q, k = self.rotary.rotate_queries_and_keys(q, k)
        else:
            q = self.rotary.rotate_queries_or_keys(q)
            k = self.rotary.rotate_queries_or_keys(k)
        attn = (q @ k.transpose(-1, -2) * q.shape[-1] ** -0.5).softmax(dim=-1)
        out = (attn @ v).transpose(1, 2).reshape(b, n, d)
        return self.to_out(out)


x = torch.randn(2, 6, 16)
target = torch.randn(2, 6, 16)
for xpos in (False, True):
    model = Attention(xpos=xpos)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(3):
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), target)
        loss.backward()
        optimizer.step()
        print("loss", loss.item())
    with torch.no_grad():
        print("VALUE xpos" if xpos else "VALUE plain", float(model(x).abs().mean()))
''',
    "antixk_vae": '''
import torch
from models import VanillaVAE, VQVAE, WAE_MMD

images = torch.rand(2, 3, 64, 64)
for name, model, kwargs in (
        ("vanilla", VanillaVAE(in_channels=3, latent_dim=8, hidden_dims=[8, 8, 16, 16, 512]), {"M_N": 0.5}),
        ("vq", VQVAE(in_channels=3, embedding_dim=8, num_embeddings=16, hidden_dims=[8, 16]), {}),
        ("wae", WAE_MMD(in_channels=3, latent_dim=8, hidden_dims=[8, 8, 16, 16, 512]), {})):
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    for step in range(2):
        optimizer.zero_grad()
        results = model(images)
        loss = model.loss_function(*results, **kwargs)["loss"]
        loss.backward()
        optimizer.step()
        print("loss", loss.item())
    model.eval()
    with torch.no_grad():
        print("VALUE " + name + "_generate", float(model.generate(images).abs().mean()))
''',
}
