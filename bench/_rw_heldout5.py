"""The `heldout5` set of bench/real_world.py (`--set heldout5`): repositories the converter was never run on,
converted as a new user would convert them.

    python bench/real_world.py --mirrors /work/.mirror --set heldout5 [--only bigram,siren]

- karpathy/ng-video-lecture: bigram.py as written (the character bigram model on the repository's own
  input.txt, estimate_loss under torch.no_grad with model.eval()/train() before the first step, AdamW).
  gpt.py is left out: at its own hyperparameters (384-wide, 6 layers, 64x256 batches, 400 evaluation
  forwards before the first step) one run is past a CPU bench's time.
- L1aoXingyu/pytorch-beginner: the numbered scripts that run under today's torch: linear regression on inline
  points, logistic regression and an MLP on FashionMNIST under ../datasets. Left out: the others stop under
  torch itself (the RNN, N-gram, CBOW, LSTM tagger and VAE read `loss.data[0]` of a 0-d tensor, an IndexError
  since torch 0.5; simple_Gan normalizes 1-channel MNIST with 3-channel means; the autoencoders and conv_gan call
  .cuda() unconditionally; the CNN's logger imports tensorflow).
- jcjohnson/pytorch-examples: the autograd/ and nn/ scripts as written (2-space indented; random data): raw
  tensors with requires_grad updated under torch.no_grad() and their .grad zeroed, a custom autograd Function
  (save_for_backward, a masked assignment in backward), nn.Sequential with a hand-written `param.data -=` update,
  torch.optim, a Module subclass, and DynamicNet (random.randint layers in forward, momentum SGD).
- lucidrains/siren-pytorch: SirenNet (sine activations, custom uniform init) and SirenWrapper (a coordinate
  grid buffer cloned, detached and requires_grad_ at each call; latent modulation with an in-place product)
  through a driver.
- lucidrains/g-mlp-pytorch: gMLP (token shift, circulant spatial gating, causal masking, tiny attention) and
  gMLPVision through a driver.
- lucidrains/lambda-networks: LambdaLayer (global and local-context via Conv3d) inside a small classifier,
  through a driver (lambda_networks.py alone: the package also holds a tensorflow version).
- lucidrains/CoCa-pytorch: CoCa with a small conv image encoder of our own (contrastive + caption loss),
  through a driver.

Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

from pathlib import Path

NG = "karpathy+ng-video-lecture"
BEGINNER = "L1aoXingyu+pytorch-beginner"
JCJ = "jcjohnson+pytorch-examples"
SIREN = "lucidrains+siren-pytorch"
GMLP = "lucidrains+g-mlp-pytorch"
LAMBDA = "lucidrains+lambda-networks"
COCA = "lucidrains+CoCa-pytorch"


def fashion_beside(root: Path):
    """FashionMNIST idx files where the beginner scripts read them: '../datasets' from the program."""
    from tests.corpus import write_mnist
    write_mnist(root.parent / "x" / "datasets", n_train=200, n_test=64, name="FashionMNIST")


BEGINNER_SCRIPTS = [
    ("beginner_linear", "01-Linear Regression", "Linear_Regression.py", None),
    ("beginner_logistic", "02-Logistic Regression", "Logistic_Regression.py", fashion_beside),
    ("beginner_mlp", "03-Neural Network", "neural_network.py", fashion_beside),
]

JCJ_SCRIPTS = [
    ("jcj_autograd", "autograd", "two_layer_net_autograd.py"),
    ("jcj_custom_function", "autograd", "two_layer_net_custom_function.py"),
    ("jcj_nn", "nn", "two_layer_net_nn.py"),
    ("jcj_optim", "nn", "two_layer_net_optim.py"),
    ("jcj_module", "nn", "two_layer_net_module.py"),
    ("jcj_dynamic", "nn", "dynamic_net.py"),
]

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [("bigram", NG, ".", "bigram.py", [], None)] + [
    (name, BEGINNER, subdir, script, [], data) for name, subdir, script, data in BEGINNER_SCRIPTS
] + [(name, JCJ, subdir, script, [], None) for name, subdir, script in JCJ_SCRIPTS] + [
    ("siren", SIREN, "siren_pytorch", "driver.py", [], None),
    ("gmlp", GMLP, "g_mlp_pytorch", "driver.py", [], None),
    ("lambda_net", LAMBDA, "lambda_networks/lambda_networks.py", "driver.py", [], None),
    ("coca", COCA, "coca_pytorch", "driver.py", [], None),
]

DEPS: dict = {}

# Drivers: our own code, through the libraries' documented entry points.
DRIVERS = {
    "siren": '''
import torch
from torch import nn
from siren_pytorch import SirenNet, SirenWrapper

image = torch.rand(1, 3, 6, 5)
for name, latent_dim in (("plain", None), ("modulated", 4)):
    net = SirenNet(dim_in=2, dim_hidden=16, dim_out=3, num_layers=3, final_activation=nn.Sigmoid(),
                   w0_initial=30.)
    wrapper = SirenWrapper(net, image_width=5, image_height=6, latent_dim=latent_dim)
    latent = nn.Parameter(torch.randn(4)) if latent_dim else None
    params = list(wrapper.parameters()) + ([latent] if latent is not None else [])
    optimizer = torch.optim.Adam(params, lr=1e-3)
    for step in range(3):
        optimizer.zero_grad()
        loss = wrapper(image, latent=latent) if latent is not None else wrapper(image)
        loss.backward()
        optimizer.step()
        print("loss", loss.item())
    with torch.no_grad():
        out = wrapper(latent=latent) if latent is not None else wrapper()
    print("VALUE " + name + "_image", float(out.abs().mean()))
''',
    "gmlp": '''
import torch
import torch.nn.functional as F
from torch import nn
from g_mlp_pytorch import gMLP, gMLPVision

tokens = torch.randint(0, 20, (2, 8))
for name, model in (
        ("plain", gMLP(num_tokens=20, dim=16, depth=2, seq_len=8, act=nn.Tanh())),
        ("circulant_causal", gMLP(num_tokens=20, dim=16, depth=2, seq_len=8, circulant_matrix=True, causal=True,
                                  heads=2, attn_dim=8, shift_tokens=1))):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(3):
        optimizer.zero_grad()
        logits = model(tokens)
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, 20), tokens[:, 1:].reshape(-1))
        loss.backward()
        optimizer.step()
        print("loss", loss.item())
    with torch.no_grad():
        print("VALUE " + name + "_logits", float(model(tokens).abs().mean()))

vision = gMLPVision(image_size=8, patch_size=4, num_classes=5, dim=16, depth=2, channels=3)
images = torch.randn(2, 3, 8, 8)
labels = torch.tensor([1, 4])
optimizer = torch.optim.SGD(vision.parameters(), lr=1e-2, momentum=0.9)
for step in range(3):
    optimizer.zero_grad()
    loss = F.cross_entropy(vision(images), labels)
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
''',
    "lambda_net": '''
import torch
import torch.nn.functional as F
from torch import nn
from lambda_networks import LambdaLayer


class LambdaNet(nn.Module):
    def __init__(self, r=None, n=None):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.norm = nn.BatchNorm2d(8)
        self.lam = LambdaLayer(dim=8, dim_out=16, r=r, n=n, dim_k=4, heads=4, dim_u=2 if r else 1)
        self.head = nn.Linear(16, 5)

    def forward(self, x):
        x = F.relu(self.norm(self.stem(x)))
        x = self.lam(x)
        return self.head(x.mean(dim=(2, 3)))


images = torch.randn(3, 3, 6, 6)
labels = torch.tensor([0, 2, 4])
for name, model in (("global", LambdaNet(n=6)), ("local", LambdaNet(r=3))):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(3):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        print("loss", loss.item())
    model.eval()
    with torch.no_grad():
        print("VALUE " + name + "_logits", float(model(images).abs().mean()))
''',
    "coca": '''
import torch
from torch import nn
from coca_pytorch import CoCa


class PatchEncoder(nn.Module):
    """images (b, 3, 8, 8) -> patch embeddings (b, 4, 24)"""
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 24, 4, stride=4)

    def forward(self, images):
        return self.conv(images).flatten(2).transpose(1, 2)


coca = CoCa(dim=32, img_encoder=PatchEncoder(), image_dim=24, num_tokens=30, unimodal_depth=1,
            multimodal_depth=1, dim_head=8, heads=2, caption_loss_weight=1., contrastive_loss_weight=1.)
optimizer = torch.optim.AdamW(coca.parameters(), lr=1e-3)
text = torch.randint(0, 30, (3, 7))
images = torch.randn(3, 3, 8, 8)
for step in range(4):
    optimizer.zero_grad()
    loss = coca(text=text, images=images, return_loss=True)
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
with torch.no_grad():
    logits = coca(text=text, images=images)
    text_embeds, image_embeds = coca(text=text, images=images, return_embeddings=True)
print("VALUE logits", float(logits.abs().mean()))
print("VALUE text_embeds", float(text_embeds.abs().mean()))
print("VALUE image_embeds", float(image_embeds.abs().mean()))
''',
}
