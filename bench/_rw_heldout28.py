"""The `heldout28` set of bench/real_world.py (`--set heldout28`): openai/improved-diffusion's UNet and Gaussian
diffusion, lucidrains/siren-pytorch and lucidrains/mlp-mixer-pytorch, converted as a new user would convert them.

    python bench/real_world.py --mirrors /work/.mirror --set heldout28 [--only idiff_train,siren_wrapper]

- openai/improved-diffusion (improved_diffusion/; mpi4py and blobfile are not installed: stand-in modules of ours
  beside the package, a one-process COMM_WORLD and a local-file BlobFile):
  - idiff_train: create_model_and_diffusion (image_size 32, num_channels 32 (normalization is GroupNorm(32, ch): 16 is refused by torch), num_res_blocks 1, attention at
    resolution 8, num_heads 2, use_checkpoint True (nn.py's CheckpointFunction, a custom autograd.Function
    recomputing under enable_grad and th.autograd.grad), learn_sigma True, 8 diffusion steps respaced to 4, the
    hybrid loss: RESCALED_MSE plus the vb term) trained 3 steps of 2 micro batches by a driver replaying
    TrainLoop.run_step (forward_backward's functools.partial of training_losses, UniformSampler's
    np.random.choice, log_loss_dict, optimize_normal's AdamW step and update_ema). TrainLoop itself is not run:
    its __init__ calls torch.distributed.get_world_size(), which needs an initialised process group (the
    converted program has none to give; patching torch.distributed's functions is a raising TODO).
  - idiff_sample: the same model and diffusion, 2 Adam steps through training_losses with a LossAwareSampler
    (LossSecondMomentResampler; its `np.int` given back by the driver: NumPy 1.24 removed
    the alias), then p_sample_loop and ddim_sample_loop (eta 0.5) from torch-matched noise.
- lucidrains/siren-pytorch:
  - siren_net: SirenNet (w0_initial 30, a final Sigmoid, dropout) fitting an 8x8 image for a few Adam steps.
  - siren_wrapper: SirenWrapper around a SirenNet with latent_dim modulation (Modulator, the grid buffer
    `clone().detach().requires_grad_()`, `x *= rearrange(mod, 'd -> () d')`), a few steps, then the image.
- lucidrains/mlp-mixer-pytorch (einops layers):
  - mixer_train: MLPMixer and MLPMixer3D trained a few Adam steps on tiny images (videos).
  - permutator_train: Permutator (ParallelSum's `sum(map(...))`, segment rearranges) trained a few steps.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

IDIFF = "openai+improved-diffusion@1bc7bbbdc414d83d4abf2ad8cc1446dc36c4e4d5"
SIREN = "lucidrains+siren-pytorch@3555d895b213d243e8aa4db1913d01154cdcdd6b"
MIXER = "lucidrains+mlp-mixer-pytorch@b102a9b25cb8bd2360db36cbd252dc4e670fd5e4"

_IDIFF_STANDINS = {
    "mpi4py/__init__.py": '"""A stand-in written by bench/_rw_heldout28.py: one process."""\n',
    "mpi4py/MPI.py": '''"""A stand-in written by bench/_rw_heldout28.py: COMM_WORLD of one process."""


class _Comm:
    rank = 0
    size = 1

    def Get_rank(self):
        return 0

    def Get_size(self):
        return 1

    def bcast(self, value, root=0):
        return value

    def allreduce(self, value, op=None):
        return value


COMM_WORLD = _Comm()
''',
    "blobfile.py": '''"""A stand-in written by bench/_rw_heldout28.py: local files."""
import os

join = os.path.join
dirname = os.path.dirname
exists = os.path.exists


def BlobFile(path, mode="r"):
    return open(path, mode)
''',
}

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("idiff_train", IDIFF, "improved_diffusion", "driver.py", [], None),
    ("idiff_sample", IDIFF, "improved_diffusion", "driver.py", [], None),
    ("siren_net", SIREN, "siren_pytorch", "driver.py", [], None),
    ("siren_wrapper", SIREN, "siren_pytorch", "driver.py", [], None),
    ("mixer_train", MIXER, "mlp_mixer_pytorch", "driver.py", [], None),
    ("permutator_train", MIXER, "mlp_mixer_pytorch", "driver.py", [], None),
]

DEPS: dict = {}

FILES = {"idiff_train": _IDIFF_STANDINS, "idiff_sample": _IDIFF_STANDINS}

LOSSES = {"mixer_train": 8}

_IDIFF_MODEL = '''
import numpy as np
import torch
from improved_diffusion.script_util import create_model_and_diffusion, model_and_diffusion_defaults

torch.manual_seed(0)
np.random.seed(0)
options = model_and_diffusion_defaults()
options.update(image_size=32, num_channels=32, num_res_blocks=1, num_heads=2, attention_resolutions="8",
               learn_sigma=True, use_checkpoint=True, diffusion_steps=8, timestep_respacing="4",
               noise_schedule="cosine")
model, diffusion = create_model_and_diffusion(**options)
images = torch.rand(4, 3, 32, 32) * 2 - 1
'''

# Drivers: our own code, through the repositories' modules.
DRIVERS = {
    "idiff_train": _IDIFF_MODEL + '''
import copy
import functools

from improved_diffusion import logger
from improved_diffusion.nn import update_ema
from improved_diffusion.resample import create_named_schedule_sampler
from improved_diffusion.train_util import log_loss_dict

# TrainLoop.run_step replayed (its __init__ asks torch.distributed for the world size, which needs an initialised
# process group): forward_backward's micro batches, optimize_normal's step and EMA, fp16 off
schedule_sampler = create_named_schedule_sampler("uniform", diffusion)
opt = torch.optim.AdamW(list(model.parameters()), lr=1e-3, weight_decay=0.0)
with torch.no_grad():    # the runner gives the converted model torch's weights at its first call: before the copy
    model(images[:2], torch.zeros(2))
ema_params = copy.deepcopy(list(model.parameters()))
microbatch = 2
for step in range(3):
    opt.zero_grad()
    for i in range(0, images.shape[0], microbatch):
        micro = images[i:i + microbatch]
        t, weights = schedule_sampler.sample(micro.shape[0], "cpu")
        compute_losses = functools.partial(diffusion.training_losses, model, micro, t, model_kwargs={})
        losses = compute_losses()
        loss = (losses["loss"] * weights).mean()
        log_loss_dict(diffusion, t, {k: v * weights for k, v in losses.items()})
        loss.backward()
        print("loss", loss.item())
    opt.step()
    update_ema(ema_params, list(model.parameters()), rate=0.9)
    print("VALUE mse", logger.getkvs()["mse"])
    logger.dumpkvs()
print("VALUE ema_sum", float(sum(p.detach().sum() for p in ema_params)))
print("VALUE ema_abs", float(sum(p.detach().abs().sum() for p in ema_params)))
''',
    "idiff_sample": _IDIFF_MODEL + '''
from improved_diffusion.resample import LossSecondMomentResampler

np.int = int    # resample.py's np.zeros(..., dtype=np.int): an alias NumPy 1.24 removed

sampler = LossSecondMomentResampler(diffusion, history_per_term=1)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(2):
    t, weights = sampler.sample(images.shape[0], "cpu")
    losses = diffusion.training_losses(model, images, t)
    sampler.update_with_all_losses(t.tolist(), losses["loss"].detach().tolist())    # one process
    loss = (losses["loss"] * weights).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
model.eval()
with torch.no_grad():
    sample = diffusion.p_sample_loop(model, (2, 3, 32, 32), clip_denoised=True)
    print("VALUE p_sample_abs", float(sample.abs().mean()))
    print("VALUE p_sample_sum", float(sample.sum()))
    sample = diffusion.ddim_sample_loop(model, (2, 3, 32, 32), eta=0.5)
    print("VALUE ddim_abs", float(sample.abs().mean()))
    print("VALUE ddim_sum", float(sample.sum()))
''',
    "siren_net": '''
import torch
import torch.nn.functional as F
from torch import nn
from siren_pytorch import SirenNet

torch.manual_seed(0)
net = SirenNet(dim_in=2, dim_hidden=16, dim_out=3, num_layers=3, w0_initial=30., final_activation=nn.Sigmoid(),
               dropout=0.1)
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
ys, xs = torch.meshgrid(torch.linspace(-1, 1, 8), torch.linspace(-1, 1, 8), indexing="ij")
coords = torch.stack((ys, xs), dim=-1).reshape(-1, 2)
target = torch.rand(64, 3)
net.eval()      # dropout off: its masks are not matched between the sides
for step in range(5):
    optimizer.zero_grad()
    loss = F.mse_loss(net(coords), target)
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
with torch.no_grad():
    out = net(coords)
print("VALUE out_sum", float(out.sum()))
''',
    "siren_wrapper": '''
import torch
from siren_pytorch import SirenNet, SirenWrapper

torch.manual_seed(0)
net = SirenNet(dim_in=2, dim_hidden=16, dim_out=3, num_layers=3, w0_initial=30.)
wrapper = SirenWrapper(net, image_width=8, image_height=6, latent_dim=4)
latent = torch.nn.Parameter(torch.zeros(4).normal_(0, 0.1))
optimizer = torch.optim.Adam(list(wrapper.parameters()) + [latent], lr=1e-3)
img = torch.rand(1, 3, 6, 8)
for step in range(5):
    optimizer.zero_grad()
    loss = wrapper(img, latent=latent)
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
with torch.no_grad():
    out = wrapper(latent=latent)
print("VALUE out_sum", float(out.sum()))
print("VALUE out_abs", float(out.abs().mean()))
print("VALUE latent", float(latent.detach().abs().sum()))
''',
    "mixer_train": '''
import torch
import torch.nn.functional as F
from mlp_mixer_pytorch import MLPMixer, MLPMixer3D

torch.manual_seed(0)
model = MLPMixer(image_size=8, channels=3, patch_size=4, dim=16, depth=2, num_classes=5)
model3d = MLPMixer3D(image_size=8, time_size=4, time_patch_size=2, channels=3, patch_size=4, dim=16, depth=1,
                     num_classes=5)
for m, x in ((model, torch.randn(2, 3, 8, 8)), (model3d, torch.randn(2, 3, 4, 8, 8))):
    optimizer = torch.optim.Adam(m.parameters(), lr=1e-3)
    labels = torch.tensor([1, 3])
    for step in range(4):
        optimizer.zero_grad()
        loss = F.cross_entropy(m(x), labels)
        loss.backward()
        optimizer.step()
        print("loss", loss.item())
    with torch.no_grad():
        print("VALUE logits", float(m(x).abs().sum()))
''',
    "permutator_train": '''
import torch
import torch.nn.functional as F
from mlp_mixer_pytorch import Permutator

torch.manual_seed(0)
model = Permutator(image_size=8, patch_size=2, dim=16, depth=2, num_classes=5, segments=4)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(2, 3, 8, 8)
labels = torch.tensor([0, 4])
for step in range(5):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), labels)
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
with torch.no_grad():
    print("VALUE logits", float(model(x).abs().sum()))
''',
}
