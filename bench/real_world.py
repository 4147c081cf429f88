"""Real-world programs: third-party PyTorch programs and libraries converted with
`msmigrate convert` (no manual edit) and run against the originals.

    python bench/real_world.py --mirrors /work/.mirror [--only gan,vae] [--losses 6] [--no-verify]
    python bench/real_world.py --mirrors /work/.mirror --set wider     # bench/_rw_wider.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout3  # bench/_rw_heldout3.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout4  # bench/_rw_heldout4.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout2  # bench/_rw_heldout2.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout5  # bench/_rw_heldout5.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout6  # bench/_rw_heldout6.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout7  # bench/_rw_heldout7.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout8  # bench/_rw_heldout8.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout9  # bench/_rw_heldout9.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout10  # bench/_rw_heldout10.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout11  # bench/_rw_heldout11.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout12  # bench/_rw_heldout12.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout13  # bench/_rw_heldout13.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout14  # bench/_rw_heldout14.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout15  # bench/_rw_heldout15.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout16  # bench/_rw_heldout16.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout17  # bench/_rw_heldout17.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout18  # bench/_rw_heldout18.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout19  # bench/_rw_heldout19.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout20  # bench/_rw_heldout20.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout21  # bench/_rw_heldout21.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout22  # bench/_rw_heldout22.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout23  # bench/_rw_heldout23.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout24  # bench/_rw_heldout24.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout25  # bench/_rw_heldout25.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout26  # bench/_rw_heldout26.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout27  # bench/_rw_heldout27.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout28  # bench/_rw_heldout28.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout29  # bench/_rw_heldout29.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout30  # bench/_rw_heldout30.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout31  # bench/_rw_heldout31.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout32  # bench/_rw_heldout32.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout33  # bench/_rw_heldout33.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout34  # bench/_rw_heldout34.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout35  # bench/_rw_heldout35.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout36  # bench/_rw_heldout36.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout37  # bench/_rw_heldout37.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout38  # bench/_rw_heldout38.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout39  # bench/_rw_heldout39.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout40  # bench/_rw_heldout40.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout41  # bench/_rw_heldout41.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout42  # bench/_rw_heldout42.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout43  # bench/_rw_heldout43.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout44  # bench/_rw_heldout44.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout45  # bench/_rw_heldout45.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout46  # bench/_rw_heldout46.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout47  # bench/_rw_heldout47.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout48  # bench/_rw_heldout48.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout49  # bench/_rw_heldout49.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout50  # bench/_rw_heldout50.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout51  # bench/_rw_heldout51.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout52  # bench/_rw_heldout52.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout53  # bench/_rw_heldout53.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout54  # bench/_rw_heldout54.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout55  # bench/_rw_heldout55.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout56  # bench/_rw_heldout56.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout57  # bench/_rw_heldout57.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout58  # bench/_rw_heldout58.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout59  # bench/_rw_heldout59.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout60  # bench/_rw_heldout60.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout61  # bench/_rw_heldout61.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout62  # bench/_rw_heldout62.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout63  # bench/_rw_heldout63.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout64  # bench/_rw_heldout64.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout65  # bench/_rw_heldout65.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout66  # bench/_rw_heldout66.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout67  # bench/_rw_heldout67.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout68  # bench/_rw_heldout68.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout69  # bench/_rw_heldout69.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout70  # bench/_rw_heldout70.py's programs
    python bench/real_world.py --mirrors /work/.mirror --set heldout71  # bench/_rw_heldout71.py's programs

--mirrors DIR holds bare git repositories as DIR/<owner>+<name>/repo (what the search tool's
fetch gives); nothing of them is kept in this repository: each is extracted at run time into
bench/_work/real_world/src/ (git-ignored), blobs that the mirror lacks (large files) skipped.

For each program:
1. Data: small synthetic data in the real on-disk format where the program reads it
   (MNIST idx files under data/MNIST/raw and data/mnist/MNIST/raw as torchvision reads them,
   so nothing is downloaded; CIFAR-10 python batches, torchvision's md5 check skipped on the
   torch side). The program's directory is copied to RUN/torch/x/prog and its conversion
   written to RUN/ms/x/prog, so its own relative paths (../../data) resolve to RUN/<side>/data.
   Library repositories (diffusion, x-transformers, CLIP, DETR) get a small driver script
   written here (our code, in torch: construct, forward, a few training steps) next to the
   library's package; driver and package are converted together, the third-party torch packages
   the library imports (DEPS) with `msmigrate convert --deps`.
2. Runs, under bench/_rw_runner.py, which patches nothing in the program, only the frameworks'
   entry points, identically on both sides (see its docstring): seeds, the initial weights of
   every model (torch's state_dict at its first call, loaded into the converted model with
   msmigrate.weights), the RandomSampler order, noise (torch.randn... / ops.randn... from one
   numpy stream), dropout off; each side stops after K losses (Tensor.backward values on the
   torch side, the first value of each _ms_compat.compile_step step on the converted side).
   The converted program runs twice in a process that cannot import torch: PYNATIVE (the
   runner turns the program's mode line to PYNATIVE) and GRAPH (as converted; noise inside compiled
   steps is drawn from the same numpy stream when the graph runs, by msmigrate.draw_replay's ordered
   side-effect ops), both compared with torch's losses.
   Drivers also print `VALUE name number` lines (logits, samples), compared the same way. A set's PRINTED names a
   program's stdout lines (a regular expression) that must be the same on both sides: what a program run whole
   prints after training (bench/_rw_heldout26.py: nlp-tutorial's predicted words).
3. `msmigrate verify` (PYNATIVE and GRAPH) of every model whose first call took tensors only,
   the model built by running the program up to that call (bench/_rw_capture.py).

4. A difference over the tolerance (1e-4 relative) is judged against torch's own float32 rounding:
   torch runs twice more from the same weights, data and noise (bench/_rw_runner.py --reference):
   in float64, and in float32 through its own CPU kernels instead of oneDNN's. Where the converted
   losses are within the tolerance of torch's float64 losses at every step, the row passes ("vs torch
   float64": torch's float32 run is the one that strayed, e.g. a LeakyReLU input at 2e-7 that float32
   rounds below 0). Where they are not, but the first loss matches and the converted run is no farther
   from float64 than one of torch's own float32 runs is, the status is `float32-noise`: a training that
   amplifies rounding (Adam's first step moves every weight by +-lr, whatever the gradient's size, so a
   gradient at rounding level flips its sign) - counted apart from the passes, with its figures.
   Where neither holds, a ReLU input within rounding of 0 may have fallen on the other side in the converted
   run (its derivative 1 instead of 0), and a few such steps later momentum has carried the training elsewhere
   (pytorch-cifar's MobileNetV2: 3 inputs of 1e-6 at the first step, 5e-2 on the third loss). The converted
   side runs once more recording every ReLU's side, and torch once more in float64 taking those sides
   (--reference float64-kinks): where its losses match the converted run's within the tolerance at every step,
   and every side it took against its own sign was within KINK_MARGIN of 0 (relative to its tensor's largest
   magnitude: rounding, not a different computation), the status is `float32-noise` too, with those figures.

Prints one table: program, TODO count, status, largest relative loss difference (or the error)."""
from __future__ import annotations

import argparse
import fcntl
import json
import os
import re
import shutil
import struct
import signal
import subprocess
import sys
import termios
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PY = sys.executable
RTOL = 1e-4
# a ReLU input that the converted run put on the other side is rounding when it is this close to 0, relative
# to the largest magnitude in its tensor (float32 keeps 6e-8 of it; a deep network's accumulated rounding 1e-6)
KINK_MARGIN = 1e-4

GAN_ARGS = ["--n_epochs", "1", "--batch_size", "8", "--sample_interval", "1000000"]
TUTORIAL = "yunjey+pytorch-tutorial"
GANS = "eriklindernoren+PyTorch-GAN"

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("feedforward", TUTORIAL, "tutorials/01-basics/feedforward_neural_network", "main.py", [], "mnist"),
    ("logistic_regression", TUTORIAL, "tutorials/01-basics/logistic_regression", "main.py", [], "mnist"),
    ("linear_regression", TUTORIAL, "tutorials/01-basics/linear_regression", "main.py", [], None),
    ("cnn", TUTORIAL, "tutorials/02-intermediate/convolutional_neural_network", "main.py", [], "mnist"),
    ("resnet_cifar", TUTORIAL, "tutorials/02-intermediate/deep_residual_network", "main.py", [], "cifar"),
    ("rnn", TUTORIAL, "tutorials/02-intermediate/recurrent_neural_network", "main.py", [], "mnist"),
    ("birnn", TUTORIAL, "tutorials/02-intermediate/bidirectional_recurrent_neural_network", "main.py", [],
     "mnist"),
    ("tutorial_gan", TUTORIAL, "tutorials/03-advanced/generative_adversarial_network", "main.py", [], "mnist"),
    ("vae", TUTORIAL, "tutorials/03-advanced/variational_autoencoder", "main.py", [], "mnist"),
    ("tensorboard", TUTORIAL, "tutorials/04-utils/tensorboard", "main.py", [], "mnist"),
] + [
    (g, GANS, f"implementations/{g}", f"{g}.py", GAN_ARGS, "mnist")
    for g in ("gan", "dcgan", "wgan", "wgan_gp", "cgan", "acgan", "infogan", "lsgan", "softmax_gan", "began",
              "bgan", "ebgan", "wgan_div", "dragan", "relativistic_gan", "aae", "sgan")
] + [
    ("diffusion", "lucidrains+denoising-diffusion-pytorch", "denoising_diffusion_pytorch", "driver.py", [], None),
    ("x_transformers", "lucidrains+x-transformers", "x_transformers", "driver.py", [], None),
    ("clip", "openai+CLIP", "clip", "driver.py", [], None),
    ("detr", "facebookresearch+detr", "models,util", "driver.py", [], None),
]

# Third-party torch packages a library imports, converted with it from the installed package
# (`msmigrate convert --deps`, into the output's _deps/).
DEPS = {"x_transformers": ["torch_einops_utils"], "diffusion": ["ema_pytorch", "accelerate"],
        "detr": ["torchvision"]}

# Drivers for library repositories: our own code, the library's documented entry points.
DRIVERS = {
    "diffusion": '''
import torch
from denoising_diffusion_pytorch import Unet, GaussianDiffusion

model = Unet(dim=8, dim_mults=(1, 2), attn_dim_head=8, attn_heads=2)
diffusion = GaussianDiffusion(model, image_size=8, timesteps=4, sampling_timesteps=4)
optimizer = torch.optim.Adam(diffusion.parameters(), lr=1e-3)
images = torch.rand(2, 3, 8, 8)
for step in range(3):
    optimizer.zero_grad()
    loss = diffusion(images)
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
sampled = diffusion.sample(batch_size=2)
print("VALUE sample", float(sampled.abs().mean()))
''',
    "x_transformers": '''
import torch
import torch.nn.functional as F
from x_transformers import TransformerWrapper, Decoder

model = TransformerWrapper(num_tokens=64, max_seq_len=16, attn_layers=Decoder(dim=32, depth=2, heads=2))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
tokens = torch.randint(0, 64, (2, 16))
logits = model(tokens)
print("VALUE logits", float(logits.abs().mean()))
for step in range(3):
    optimizer.zero_grad()
    logits = model(tokens[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 64), tokens[:, 1:].reshape(-1))
    loss.backward()
    optimizer.step()
    print("loss", loss.item())
''',
    "clip": '''
import torch
from clip.model import CLIP, build_model

# a random state dict of a small ViT CLIP (widths of 64 give build_model one head per 64 channels)
reference = CLIP(32, 32, 2, 64, 16, 16, 100, 64, 1, 2)
model = build_model(reference.state_dict()).float()
image = torch.rand(2, 3, 32, 32)
text = torch.randint(0, 100, (2, 16))
with torch.no_grad():
    image_features = model.encode_image(image)
    text_features = model.encode_text(text)
    logits_per_image, logits_per_text = model(image, text)
print("VALUE image_features", float(image_features.abs().mean()))
print("VALUE text_features", float(text_features.abs().mean()))
print("VALUE logits", float(logits_per_image.abs().mean()))
''',
    "detr": '''
import argparse
import torch
import models.backbone
from models.detr import build
from util.misc import nested_tensor_from_tensor_list

models.backbone.is_main_process = lambda: False     # no pretrained download: random backbone
args = argparse.Namespace(
    lr_backbone=1e-5, masks=False, dilation=False, backbone="resnet18", position_embedding="sine",
    hidden_dim=32, dropout=0.0, nheads=2, dim_feedforward=64, enc_layers=1, dec_layers=2, pre_norm=False,
    num_queries=5, aux_loss=True, set_cost_class=1, set_cost_bbox=5, set_cost_giou=2, bbox_loss_coef=5,
    giou_loss_coef=2, eos_coef=0.1, dataset_file="coco", device="cpu", frozen_weights=None,
    mask_loss_coef=1, dice_loss_coef=1)
model, criterion, postprocessors = build(args)
images = nested_tensor_from_tensor_list([torch.rand(3, 64, 64), torch.rand(3, 64, 64)])
targets = [{"labels": torch.tensor([1, 3]), "boxes": torch.tensor([[0.5, 0.5, 0.2, 0.3], [0.3, 0.6, 0.2, 0.2]])},
           {"labels": torch.tensor([7]), "boxes": torch.tensor([[0.4, 0.4, 0.5, 0.5]])}]
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
for step in range(2):
    outputs = model(images)
    loss_dict = criterion(outputs, targets)
    losses = sum(loss_dict[k] * criterion.weight_dict[k] for k in loss_dict if k in criterion.weight_dict)
    optimizer.zero_grad()
    losses.backward()
    optimizer.step()
    print("loss", losses.item())
''',
}


# Loss budgets per program where --losses is too small (a set's LOSSES: bench/_rw_heldout22.py's makemore runs
# whole, to its sampling at step 200)
LOSSES: dict = {}

# The stdout lines of a program that must be the same on both sides (a set's PRINTED), by program name: a regular
# expression matched per line (bench/_rw_heldout26.py: the predictions nlp-tutorial's programs print).
PRINTED: dict = {}

# Files of ours written beside a program before it is converted (a set's FILES: bench/_rw_heldout19.py's
# synthetic `gym` package), by program name: {relative path: text}.
FILES: dict = {}

# Files of ours written beside the torch program after the conversion (a set's TORCH_FILES: bench/_rw_heldout30.py's
# torchvision stand-in, which the converter must not see), by program name: {relative path: text, or a function of
# the torch program's directory that edits it (its `.cuda()` made `.cpu()`: no GPU here)}.
TORCH_FILES: dict = {}

# The framework of a program's original, by program name (a set's ORIGINAL): "tf" for TensorFlow/Keras programs
# (bench/_rw_heldout70.py), run by bench/_rw_runner.py --side tf; the converted side then cannot import tensorflow or
# keras either, and its Keras models start from the TF side's weights (get_weights/set_weights). Torch otherwise.
ORIGINAL: dict = {}

# The error a program's torch run ends with, which its converted runs must end with too (a set's RAISES: a regular
# expression searched in the error; bench/_rw_heldout30.py's 201_torch_numpy.py ends on torch's refusal of a 2-D
# `tensor.dot`), by program name: the runs are then compared up to it (printed lines, losses, values).
RAISES: dict = {}


# ------------------------------------------------------------------ sources and data
def extract(gitdir: Path, dest: Path, rev: str = "HEAD") -> None:
    """Every blob of REV (HEAD unless a program names a commit) that the mirror holds (large files may be absent:
    skipped)."""
    if dest.exists():
        return
    listing = subprocess.run(["git", "--git-dir", str(gitdir), "ls-tree", "-r", "-z", rev],
                             capture_output=True, check=True).stdout
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, path = entry.split(b"\t", 1)
        mode, kind, sha = meta.split()
        if kind != b"blob" or mode == b"120000":
            continue
        blob = subprocess.run(["git", "--git-dir", str(gitdir), "cat-file", "blob", sha.decode()],
                              capture_output=True)
        if blob.returncode:
            continue
        target = dest / path.decode()
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blob.stdout)


def write_data(kind, root: Path) -> None:
    from tests.corpus import write_cifar10, write_mnist
    if callable(kind):      # a program set's own writer (bench/_rw_wider.py)
        return kind(root)
    if kind == "mnist":
        write_mnist(root, n_train=200, n_test=16)
        write_mnist(root / "mnist", n_train=200, n_test=16)
    elif kind == "cifar":
        write_cifar10(root, n_train=120, n_test=16)


def prepare(name, repo, subdir, script, data, src: Path, run: Path):
    """RUN/torch/x/prog (the program or driver + library), data for both sides; returns the project dir."""
    proj = run / "torch" / "x" / "prog"
    if run.exists():
        shutil.rmtree(run)
    proj.parent.mkdir(parents=True)
    if name in DRIVERS or "," in subdir:
        # a driver, or a script with the package it imports (`torchdiffeq,examples/ode_demo.py`), each part
        # under its own name in one directory
        proj.mkdir()
        for part in filter(None, subdir.split(",")):      # each next to the driver, under its own name
            (shutil.copy if (src / repo / part).is_file() else shutil.copytree)(src / repo / part,
                                                                                proj / Path(part).name)
        if name in DRIVERS:
            (proj / script).write_text(DRIVERS[name].lstrip(), encoding="utf-8")
    else:
        shutil.copytree(src / repo / subdir, proj)
    for rel, text in FILES.get(name, {}).items():
        if callable(text):      # a change of the program's files before converting, both sides (heldout47)
            text(proj)
            continue
        (proj / rel).parent.mkdir(parents=True, exist_ok=True)
        (proj / rel).write_text(text.lstrip(), encoding="utf-8")
    for side in ("torch", "ms"):
        (run / side / "data").mkdir(parents=True, exist_ok=True)
        if data:
            write_data(data, run / side / "data")
    return proj


def run_group(cmd, timeout, **kw) -> subprocess.CompletedProcess:
    """subprocess.run(cmd, capture_output=True, text=True, timeout=...) in a process group of its own: on timeout
    the whole group is killed (a program's DataLoader workers, the converter's pool), not the child alone, whose
    children would run on and load the machine for the programs after it. Raises subprocess.TimeoutExpired."""
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                          **kw) as p:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired as e:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            out, err = p.communicate()
            raise subprocess.TimeoutExpired(cmd, timeout, output=out, stderr=err) from e
        finally:
            try:        # whatever the group left behind after the leader exited
                os.killpg(p.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)


def convert(proj: Path, out: Path, deps=()):
    t = time.perf_counter()
    extra = ["--deps", ",".join(deps)] if deps else []
    if out.exists():    # the data a program reads from its own directory (bench/_rw_heldout8.py), written first
        extra.append("--force")
    r = run_group([PY, "-m", "msmigrate.cli", "convert", str(proj), "-o", str(out), "-q", *extra], 1800, cwd=ROOT,
                  env=env_for(None))
    seconds = time.perf_counter() - t
    report = out / "msmigrate-report.json"
    todo = None
    if report.exists():
        todo = json.loads(report.read_text())["summary"]["todo"]
    return r.returncode, todo, seconds, (r.stderr or r.stdout)[-500:]


def env_for(side):
    env = dict(os.environ)
    # RW_SITE: libraries a set needs that the shared environment lacks, installed apart (`pip install --target
    # DIR`: bench/_rw_heldout39.py's pandas and wandb), after the repository on both sides; so does a PYTHONPATH
    # the bench was started with (bench/_rw_heldout59.py's timm)
    extra = [os.environ[k] for k in ("RW_SITE", "PYTHONPATH") if os.environ.get(k)]
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *extra])
    env["GLOG_v"] = "3"
    env["MS_DEVICE_TARGET"] = "CPU"
    env.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")
    env["MPLBACKEND"] = "Agg"
    # one string hash on every side: programs that build a vocabulary from list(set(words)) (nlp-tutorial)
    # number their words in set order, which follows the per-process hash seed
    env["PYTHONHASHSEED"] = "0"
    # torch.load's default before torch 2.6 (weights_only=False), which programs that torch.save numpy
    # arrays were written for (pytorch/examples time_sequence_prediction); the converted side ignores it
    env["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"
    return env


def run_side(side, script: Path, args, record: Path, weights: Path, losses, timeout, mode="pynative",
             reference=None, kinks=None, original="torch"):
    if side == "torch" and original != "torch":     # the original program: TensorFlow/Keras (ORIGINAL)
        if reference and reference != "float64":     # TF: a float64 reference only (Keras' floatx float64)
            return {"status": "error", "error": f"no {reference} reference run for {original} originals",
                    "losses": [], "models": [], "values": {}}
        side = original
    cmd = [PY, str(ROOT / "bench" / "_rw_runner.py"), "--side", side, "--script", str(script),
           *(["--original", original] if side == "ms" and original != "torch" else []),
           "--record", str(record), "--weights", str(weights), "--losses", str(losses), "--mode", mode,
           *(["--reference", reference] if reference else []), *(["--kinks", str(kinks)] if kinks else []),
           "--", *args]
    env = env_for(side)
    data = record.parent / ("ms" if side == "ms" else "torch") / "data"
    urls = data / "urls.json"     # a data writer's local copies of downloads
    if urls.exists():
        env["RW_URLS"] = str(urls)
    if (data / "keras").is_dir():     # Keras' cache (keras.datasets' files, in their real format): KERAS_HOME
        env["KERAS_HOME"] = str(data / "keras")
    t = time.perf_counter()
    # standard input is a terminal of 24x80: programs that size their progress bar by `stty size`
    # (pytorch-cifar's utils.py, at import) read it as they would at a console
    leader, follower = os.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    try:
        p = run_group(cmd, timeout, cwd=script.parent, env=env, stdin=follower)
        out, err = p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        return {"status": "timeout", "error": f"over {timeout} s", "losses": [], "models": [], "values": {},
                "seconds": timeout, "stderr": str(e.stderr or "")[-2000:]}
    finally:
        os.close(leader)
        os.close(follower)
    rec = json.loads(record.read_text()) if record.exists() else {
        "status": "error", "error": f"runner exited {p.returncode}: {err[-1500:]}", "losses": [], "models": []}
    rec["values"] = {m.group(1): float(m.group(2)) for m in re.finditer(r"^VALUE (\S+) (\S+)$", out, re.M)}
    rec["seconds"] = time.perf_counter() - t
    rec["stdout_tail"] = out[-800:]
    rec["stdout"] = out[-20000:]
    record.with_name(record.stem + ".stdout.txt").write_text(out)     # the VALUE lines, for a look afterwards
    return rec


def rel_diff(a, b, scales=None):
    """The largest |a - b| relative to |b|, or to the scale of what each b sums where that is larger (a step's
    losses summed per optimizer step: relative to the sum of their magnitudes)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape or a.size == 0:
        return None
    size = np.abs(b) if scales is None or len(scales) != b.size else np.maximum(np.abs(b), np.asarray(scales))
    return float(np.max(np.abs(a - b) / np.maximum(size, 1e-12)))


def compare(torch_rec, ms_rec):
    """(status, largest relative difference, note)."""
    if ms_rec["status"] in ("error", "timeout"):
        return "error", None, summarize(ms_rec["error"])
    note = ""
    grouped = torch_rec.get("step_losses") or []
    if grouped and len(grouped) < len(torch_rec["losses"]) and len(ms_rec["losses"]) >= len(grouped):
        # several backward() per optimizer step (dcgan's real and fake halves): the converted step
        # differentiates their sum, so compare torch's sums per step with the steps' losses
        scales = (torch_rec.get("step_scales") or [])[:len(grouped)]
        d = rel_diff(ms_rec["losses"][:len(grouped)], grouped, scales)
        # within the tolerance (relative to what each sum adds: WassersteinGAN's critic loss cancels its halves), or
        # exactly one converted loss per optimizer step (wgan-gp: its critic steps' three backward()s; the
        # difference is then judged as any other, against torch's own float32 rounding)
        if d is not None and (d <= RTOL or len(ms_rec["losses"]) == len(grouped)):
            torch_rec = dict(torch_rec, losses=grouped, loss_scales=scales)
            ms_rec = dict(ms_rec, losses=ms_rec["losses"][:len(grouped)])
            note = "losses summed per optimizer step"
    if len(ms_rec["losses"]) != len(torch_rec["losses"]):
        return "fail", None, f"{len(ms_rec['losses'])} losses vs torch's {len(torch_rec['losses'])}"
    diffs = [d for d in [rel_diff(ms_rec["losses"], torch_rec["losses"], torch_rec.get("loss_scales"))]
             if d is not None]
    for k, v in torch_rec["values"].items():
        if k not in ms_rec["values"]:
            return "fail", None, f"value {k} not printed"
        diffs.append(rel_diff([ms_rec["values"][k]], [v]))
    worst = max(diffs) if diffs else None
    if worst is None:
        return "fail", None, "nothing to compare (no losses or values)"
    return ("pass" if worst <= RTOL else "fail"), worst, note


def judge(torch_rec, ms_rec, references):
    """compare(), and for a difference over RTOL the verdict against torch's own float32 rounding
    (the module's docstring, step 4). references: a function giving a variant's torch record (run once)."""
    status, worst, note = compare(torch_rec, ms_rec)
    if status != "fail" or worst is None:
        return status, worst, note
    refs = {v: references(v) for v in ("float64", "native-kernels")}
    f64 = refs["float64"]
    if f64["status"] in ("error", "timeout"):
        return status, worst, _join(note, f"no float64 reference: {summarize(f64['error'])}")
    _, to_f64, _ = compare(f64, ms_rec)
    drift = [compare(f64, r)[1] for r in (torch_rec, refs["native-kernels"]) if r["status"] not in ("error", "timeout")]
    drift = max((d for d in drift if d is not None), default=None)
    if to_f64 is None or drift is None:
        return status, worst, note
    figures = f"vs torch float64 {to_f64:.1e}; torch float32 vs float64 up to {drift:.1e}"
    if to_f64 <= RTOL:
        return "pass", worst, _join(note, figures)
    firsts = [rel_diff(ms_rec["losses"][:1], losses[:1]) for losses in (torch_rec["losses"], torch_rec.get("step_losses"))
              if losses]      # per backward() or summed per optimizer step (compare's grouping)
    first_matches = any(f is not None and f <= RTOL for f in firsts)
    if first_matches and to_f64 <= drift:
        return "float32-noise", worst, _join(note, figures)
    if first_matches:
        kinked = _kinks_verdict(references("float64-kinks"), ms_rec)
        if kinked:
            return "float32-noise", worst, _join(note, figures, kinked)
        figures = _join(figures, _kinks_verdict(references("float64-kinks"), ms_rec, why=True))
    return status, worst, _join(note, figures)


def printed(name, torch_rec, ms_rec, status, worst, note):
    """judge()'s verdict, failed where the program's PRINTED lines differ from torch's (the first that differs)."""
    pattern = PRINTED.get(name)
    if not pattern or status == "error" or ms_rec["status"] in ("error", "timeout"):
        return status, worst, note
    lines = [re.findall(pattern, rec.get("stdout", ""), re.M) for rec in (torch_rec, ms_rec)]
    if lines[0] == lines[1]:
        if status == "fail" and worst is None and note.startswith("nothing to compare") and lines[0]:
            # a program that trains and draws nothing (bench/_rw_heldout30.py's numpy interop): its printed lines
            return "pass", None, f"{len(lines[0])} printed lines as torch's (nothing else to compare)"
        return status, worst, _join(note, f"{len(lines[0])} printed lines as torch's")
    differ = next((i for i, (a, b) in enumerate(zip(*lines)) if a != b), min(map(len, lines)))
    got = lines[1][differ] if differ < len(lines[1]) else "nothing"
    want = lines[0][differ] if differ < len(lines[0]) else "nothing"
    return "fail", worst, _join(note, f"printed {got[:120]!r}, torch {want[:120]!r}")


def ended(name, rec):
    """A run whose program must end with RAISES[name]: that error makes it a finished run (the expected end), no
    error or another one an error."""
    expected = RAISES.get(name)
    if not expected or rec["status"] == "timeout":
        return rec
    if rec["status"] == "error":
        return dict(rec, status="finished") if re.search(expected, str(rec["error"])) else rec
    return dict(rec, status="error", error=f"ran on where torch stops with {expected!r} (ended {rec['status']})")


def _kinks_verdict(ref, ms_rec, why=False):
    """The float64-kinks reference's figures where it explains the converted run (the module's docstring, step 4);
    with why, the reason it does not (or "" where there is no reference)."""
    kinks = ref.get("kinks") or {}
    if ref["status"] in ("error", "timeout") or not kinks:
        return f"no float64-kinks reference: {summarize(ref.get('error'))}" if why and ref.get("error") else ""
    _, to_kinks, _ = compare(ref, ms_rec)
    explained = (not kinks["mismatch"] and kinks["differ"] > 0 and kinks["margin"] <= KINK_MARGIN
                 and to_kinks is not None and to_kinks <= RTOL)
    figures = (f"torch float64 taking the converted run's side at {kinks['differ']} ReLU inputs "
               f"(within {kinks['margin']:.0e} of 0) vs converted {to_kinks:.1e}" if to_kinks is not None
               else "float64-kinks: nothing compared")
    if explained:
        return figures
    if not why:
        return ""
    return kinks["mismatch"] or figures


def _join(*notes):
    return "; ".join(n for n in notes if n)


def summarize(error):
    if not error:
        return ""
    lines = [l for l in str(error).strip().splitlines() if l.strip()]
    for l in reversed(lines):
        if re.match(r"^[\w.]+(Error|Exception|Exit)\b", l.strip()) or "Error:" in l:
            return l.strip()[:220]
    return lines[-1][:220] if lines else ""


def verify_models(name, torch_script, ms_script, args, torch_rec, run: Path, timeout):
    """msmigrate verify of each model whose first call took tensors only; one line per model."""
    out = []
    for i, m in enumerate(torch_rec.get("models", [])):
        ins = m.get("inputs")
        if not ins or any("shape" not in x for x in ins):
            out.append(f"{m['class']}: not verified (first call took {ins and [x.get('type') for x in ins]})")
            continue
        spec = {"torch_script": str(torch_script), "ms_script": str(ms_script), "args": args, "index": i,
                "torch_cwd": str(torch_script.parent), "ms_cwd": str(ms_script.parent)}
        env = env_for(None)
        env["RW_CAPTURE"] = json.dumps(spec)
        cmd = [PY, "-m", "msmigrate.cli", "verify", "--torch", "bench._rw_capture:torch_model",
               "--torch-path", str(ROOT), "--ms", "bench._rw_capture:ms_model", "--ms-path", str(ROOT),
               "--mode", "both", "--timeout", str(timeout), "--json", str(run / f"verify{i}.json"), "-q",
               "--no-per-layer"]
        for x in ins:
            dtype = x["dtype"]
            cmd += ["--input", (",".join(map(str, x["shape"])) or "()") + (f":{dtype}" if dtype != "float32" else "")]
        highs = [x["high"] for x in ins if x.get("high", 0) > 0]
        if highs:       # token ids below the vocabulary the program used (minGPT: 3)
            cmd += ["--int-high", str(min(highs))]
        try:
            p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=2 * timeout + 60)
        except subprocess.TimeoutExpired:
            out.append(f"{m['class']}: verify timed out")
            continue
        res = run / f"verify{i}.json"
        if res.exists():
            r = json.loads(res.read_text())
            modes = {md["mode"]: md["status"] for md in r.get("modes", [])}
            err = r.get("error") or "; ".join(f"{md['mode']}: {md.get('error')}" for md in r.get("modes", [])
                                              if md.get("error"))
            out.append(f"{m['class']}: pynative {modes.get('pynative', '-')}, graph {modes.get('graph', '-')}"
                       + (f" ({summarize(err)})" if err else ""))
        else:
            out.append(f"{m['class']}: verify exit {p.returncode}: {summarize(p.stderr or p.stdout)}")
    return out


# ------------------------------------------------------------------ main
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirrors", required=True, type=Path, help="DIR/<owner>+<name>/repo bare git repositories")
    ap.add_argument("--work", type=Path, default=ROOT / "bench" / "_work" / "real_world")
    ap.add_argument("--only", default="", help="comma-separated program names")
    ap.add_argument("--losses", type=int, default=6, help="losses recorded per side (the step budget)")
    ap.add_argument("--timeout", type=int, default=240, help="seconds per run of one side")
    ap.add_argument("--no-verify", action="store_true")
    ap.add_argument("--no-graph", action="store_true", help="skip the GRAPH-mode run of converted programs")
    ap.add_argument("--set", choices=("default", "wider", "heldout2", "heldout3", "heldout4", "heldout5",
                                      "heldout6", "heldout7", "heldout8", "heldout9", "heldout10", "heldout11",
                                      "heldout12", "heldout13", "heldout14", "heldout15", "heldout16",
                                      "heldout17", "heldout18", "heldout19", "heldout20", "heldout21",
                                      "heldout22", "heldout23", "heldout24", "heldout25", "heldout26",
                                      "heldout27", "heldout28", "heldout29", "heldout30", "heldout31",
                                      "heldout32", "heldout33", "heldout34", "heldout35", "heldout36",
                                      "heldout37", "heldout38", "heldout39", "heldout40",
                                      "heldout41", "heldout42", "heldout43", "heldout44", "heldout45",
                                      "heldout46", "heldout47", "heldout48", "heldout49",
                                      "heldout50", "heldout51", "heldout52", "heldout53", "heldout54",
                                      "heldout55", "heldout56", "heldout57", "heldout58",
                                      "heldout59", "heldout60", "heldout61", "heldout62", "heldout63",
                                      "heldout64", "heldout65", "heldout66", "heldout67",
                                      "heldout68", "heldout69", "heldout70", "heldout71"),
                    default="default",
                    help="wider: programs beyond the default set (bench/_rw_wider.py); heldout2: "
                         "kuangliu/pytorch-cifar and graykode/nlp-tutorial (bench/_rw_heldout2.py); heldout3: "
                         "makemore, attention-is-all-you-need, vector-quantize, perceiver (bench/_rw_heldout3.py); heldout4: "
                         "MorvanZhou/PyTorch-Tutorial, PyTorchZeroToAll, lion, byol, mlp-mixer (bench/_rw_heldout4.py); "
                         "heldout5: ng-video-lecture, pytorch-beginner, jcjohnson/pytorch-examples, siren, g-mlp, "
                         "lambda-networks, CoCa "
                         "(bench/_rw_heldout5.py); heldout6: LLMs-from-scratch's GPT and Qwen3, ema-pytorch, SAM, "
                         "tab-transformer, performer, linear-attention-transformer (bench/_rw_heldout6.py); "
                         "heldout7: Pytorch-UNet, a-PyTorch-Tutorial-to-Image-Captioning (bench/_rw_heldout7.py); "
                         "heldout8: Gumbel_Softmax_VAE, Beta-VAE (bench/_rw_heldout8.py); heldout9: conformer, "
                         "nystrom-attention, sksq96/pytorch-vae, mlm-pytorch, bottleneck-transformer "
                         "(bench/_rw_heldout9.py); heldout10: locuslab/TCN, halonet, axial-attention, "
                         "rotary-embedding-torch, AntixK/PyTorch-VAE (bench/_rw_heldout10.py); heldout11: "
                         "spro/practical-pytorch's char-RNNs and sequence mask (bench/_rw_heldout11.py); heldout12: "
                         "aitorzip/PyTorch-CycleGAN, Shawn1993/cnn-text-classification-pytorch (bench/_rw_heldout12.py); "
                         "heldout13: rosinality/vq-vae-2-pytorch (bench/_rw_heldout13.py); heldout14: "
                         "sthalles/SimCLR's trainer (bench/_rw_heldout14.py); heldout15: karpathy/pytorch-made, "
                         "karpathy/pytorch-normalizing-flows (bench/_rw_heldout15.py); heldout16: rtqichen/torchdiffeq's "
                         "odeint, odeint_adjoint and examples (bench/_rw_heldout16.py); heldout17: tkipf/pygcn, "
                         "Diego999/pyGAT's train.py, dense and sparse (bench/_rw_heldout17.py); heldout18: "
                         "PaLM-pytorch, tab-transformer (categories only), slot-attention, mixture-of-experts "
                         "(bench/_rw_heldout18.py); heldout19: sfujim/TD3's main.py and agents, "
                         "pranz24/pytorch-soft-actor-critic's main.py and SAC (bench/_rw_heldout19.py); heldout20: "
                         "lukemelas/EfficientNet-PyTorch, kenshohara/3D-ResNets-PyTorch's models and train_epoch "
                         "(bench/_rw_heldout20.py); heldout21: pytorch/examples' reinforce and actor_critic, "
                         "seungeunrho/minimalRL (bench/_rw_heldout21.py); heldout22: karpathy/makemore run through its "
                         "sampling and evaluation, kuangliu/pytorch-cifar's models on two images "
                         "(bench/_rw_heldout22.py); heldout23: lucidrains/vit-pytorch's variants, Pytorch-UNet trained "
                         "with dice_loss, attention-is-all-you-need's train_epoch (bench/_rw_heldout23.py); heldout24: "
                         "karpathy/llama2.c's train.py and model, mamba-minimal, hkproj/pytorch-llama, minRF "
                         "(bench/_rw_heldout24.py); heldout25: karpathy/build-nanogpt's train_gpt2.py, "
                         "cloneofsimo/minDiffusion's DDPM and DDIM, tanelp/tiny-diffusion's ddpm.py "
                         "(bench/_rw_heldout25.py); heldout26: graykode/nlp-tutorial's programs run whole, through "
                         "their predictions (bench/_rw_heldout26.py); heldout27: lucidrains/perceiver-pytorch's "
                         "Perceiver, PerceiverIO and variants, lucidrains/g-mlp-pytorch's train.py and generate, "
                         "karpathy/ng-video-lecture's bigram.py and gpt.py with their sampling (bench/_rw_heldout27.py); "
                         "heldout28: openai/improved-diffusion's UNet, TrainLoop and samplers, "
                         "lucidrains/siren-pytorch, lucidrains/mlp-mixer-pytorch (bench/_rw_heldout28.py); heldout29: "
                         "locuslab/TCN's task scripts run whole, davda54/sam's example/train.py, "
                         "lucidrains/lion-pytorch's Lion, foreach and cautious optimizers (bench/_rw_heldout29.py); "
                         "heldout30: MorvanZhou/PyTorch-Tutorial's twenty scripts run whole (bench/_rw_heldout30.py); "
                         "heldout31: Harry24k/adversarial-attacks-pytorch's attacks, yenchenlin/nerf-pytorch's "
                         "create_nerf, render and training step (bench/_rw_heldout31.py); heldout32: "
                         "weiaicunzai/pytorch-cifar100's train.py and test.py run whole, every architecture of its "
                         "get_network (bench/_rw_heldout32.py); heldout33: "
                         "facebookresearch/dino's student/teacher step, checkpoint restart, ViT features, linear "
                         "and k-NN evaluation (bench/_rw_heldout33.py); heldout34: bearpaw/pytorch-classification's "
                         "cifar.py run whole for seven architectures and --evaluate --resume, yunjey/stargan's "
                         "main.py train and test, its gradient penalty (bench/_rw_heldout34.py); heldout35: "
                         "jacobgil/pytorch-grad-cam's CAM variants through forward and tensor hooks "
                         "(bench/_rw_heldout35.py); heldout36: eriklindernoren/PyTorch-GAN's CoGAN, PixelDA, "
                         "ClusterGAN, context encoder, UNIT, CycleGAN and DiscoGAN run whole "
                         "(bench/_rw_heldout36.py); heldout37: yunjey/pytorch-tutorial's main.py scripts run "
                         "whole, utkuozbulak/pytorch-cnn-visualizations' gradients and CAMs through module and "
                         "tensor hooks (bench/_rw_heldout37.py); heldout38: jettify/pytorch-optimizer's "
                         "hand-written optimizers trained by drivers, its examples/mnist.py run whole "
                         "(bench/_rw_heldout38.py); heldout39: kentaroy47/vision-transformers-cifar10's "
                         "ViT, CaiT, Swin, MLP-Mixer, ConvMixer, MobileViT, DyT, ResNet and VGG models "
                         "(bench/_rw_heldout39.py); heldout40: facebookresearch/simsiam's SimSiam "
                         "and train, facebookresearch/barlowtwins' BarlowTwins and LARS, "
                         "ritheshkumar95/pytorch-vqvae's VQ-VAE, vq/vq_st Functions and PixelCNN prior "
                         "(bench/_rw_heldout40.py); heldout41: sgrvinod's super-resolution tutorial "
                         "(SRResNet, SRGAN's adversarial step, TruncatedVGG19) and object-detection tutorial "
                         "(SSD300, MultiBoxLoss, detect_objects) (bench/_rw_heldout41.py); "
                         "heldout42: gordicaleksa/pytorch-original-transformer's "
                         "Transformer, training step with label smoothing and its learning-rate schedule, greedy "
                         "decoding and its own model check (bench/_rw_heldout42.py); "
                         "heldout43: kazuto1011/grad-cam-pytorch's backpropagation "
                         "maps, Grad-CAM and occlusion sensitivity, Lyken17/pytorch-OpCounter's thop.profile "
                         "(bench/_rw_heldout43.py); heldout44: "
                         "znxlwm/pytorch-generative-model-collections' ten GANs through main.py, "
                         "timbmg/VAE-CVAE-MNIST's train.py (bench/_rw_heldout44.py); heldout45: "
                         "facebookresearch/mixup-cifar10's mixup_data and "
                         "mixup_criterion, uoguelph-mlrg/Cutout's train.py run whole, Po-Hsun-Su/pytorch-ssim's "
                         "ssim and SSIM, davidtvs/pytorch-lr-finder's LRFinder.range_test "
                         "(bench/_rw_heldout45.py); heldout46: locuslab/fast_adversarial's MNIST scripts "
                         "run whole and its CIFAR10 utils' PGD, yaodongyu/TRADES' trades_loss and PGD attacks "
                         "(bench/_rw_heldout46.py); heldout47: timgaripov/swa's train.py with SWA run whole "
                         "and resumed, HobbitLong/RepDistiller's distillation losses through train_distill "
                         "(bench/_rw_heldout47.py); heldout48: adambielski/siamese-triplet's fit() for "
                         "classification, siamese, triplet and online pair/triplet mining, "
                         "kevinzakka/recurrent-visual-attention's main.py trained and tested "
                         "(bench/_rw_heldout48.py); heldout49: dragen1860/MAML-Pytorch's Meta trained through "
                         "its inner autograd.grad steps and finetunning, clovaai/CutMix-PyTorch's train.py run "
                         "whole (bench/_rw_heldout49.py); heldout50: salesforce/awd-lstm-lm's main.py (weight-dropped "
                         "LSTM and GRU, SplitCrossEntropyLoss, the ASGD switch) and xternalz/WideResNet-pytorch's "
                         "train.py run whole (bench/_rw_heldout50.py); heldout51: rosinality/glow-pytorch's train.py "
                         "(ActNorm, InvConv2d and InvConv2dLU, affine and additive couplings) and its sampling, "
                         "orobix/Prototypical-Networks-for-Few-shot-Learning-PyTorch's train.py run whole "
                         "(bench/_rw_heldout51.py); heldout52: akamaster/pytorch_resnet_cifar10's trainer.py run "
                         "whole (float32 and --half) and evaluating its bundled checkpoints, caogang/wgan-gp's "
                         "gan_toy.py and gan_mnist.py (bench/_rw_heldout52.py); heldout53: pclucas14/pixel-cnn-pp's "
                         "main.py (PixelCNN++ on MNIST and CIFAR, its sampling) and martinarjovsky/WassersteinGAN's "
                         "main.py (DCGAN and MLP critics, weight clipping) and generate.py (bench/_rw_heldout53.py); "
                         "heldout54: rwightman/gen-efficientnet-pytorch's EfficientNet, MixNet and MobileNetV3 and "
                         "gpleiss/efficient_densenet_pytorch's checkpointed DenseNet, trained by drivers "
                         "(bench/_rw_heldout54.py); heldout55: yanx27/Pointnet_Pointnet2_pytorch's "
                         "train_classification.py (PointNet, PointNet++ SSG and MSG), fxia22/pointnet.pytorch's "
                         "classification and segmentation scripts, WangYueFt/dgcnn's main.py (DGCNN, PointNet) "
                         "run whole (bench/_rw_heldout55.py); heldout56: VainF/DeepLabV3Plus-Pytorch's DeepLabV3 and "
                         "DeepLabV3+ with FocalLoss and PolyLR, jeonsworld/ViT-pytorch's ViT and R50 hybrid with "
                         "WarmupCosineSchedule, ermongroup/ddim's UNet, EMA and samplers, through drivers "
                         "(bench/_rw_heldout56.py); heldout57: zhouhaoyi/Informer2020's exp train/test/predict, "
                         "thuml/Autoformer's and cure-lab/LTSF-Linear's Exp_Main (Autoformer, DLinear, NLinear), "
                         "rixwew/pytorch-fm's models trained as examples/main.py trains them (bench/_rw_heldout57.py); "
                         "heldout58: ikostrikov/pytorch-flows' MAF, RealNVP and "
                         "Glow-style flows, jik876/hifi-gan's weight-normed Generator with its multi-period and "
                         "multi-scale discriminators, HobbitLong/SupContrast's SupConLoss and SupConResNet, through "
                         "drivers (bench/_rw_heldout58.py); heldout59: facebookresearch/DiT's DiT with "
                         "training_losses and its samplers, facebookresearch/ConvNeXt's models with layer decay, "
                         "Mixup and ModelEma, microsoft/Swin-Transformer's Swin, SwinV2 and SwinMLP through "
                         "build_model, with timm converted by --deps (bench/_rw_heldout59.py); heldout60: "
                         "openai/whisper's Whisper trained, "
                         "greedy and beam decoding with its kv-cache hooks, google/gemma_pytorch's Gemma 1, 2 "
                         "and 3 trained and generating, microsoft/LoRA's loralib layers trained and merged, "
                         "through drivers (bench/_rw_heldout60.py); heldout61: karpathy/minGPT's adder and chargpt "
                         "projects run whole, lucidrains/x-transformers' AutoregressiveWrapper (rotary, alibi, "
                         "gated feed-forward) and XTransformer trained and generating, facebookresearch/detr's "
                         "DETR and DETRsegm trained by engine.train_one_epoch (bench/_rw_heldout61.py); heldout62: "
                         "facebookresearch/mae's MaskedAutoencoderViT pretrained and ViT fine-tuned by its engines "
                         "(timm converted by --deps), lucidrains/byol-pytorch's BYOL and SimSiam forms, "
                         "lucidrains/vector-quantize-pytorch's VectorQuantize, ResidualVQ, ResidualFSQ and LFQ in "
                         "autoencoders (bench/_rw_heldout62.py); heldout63: "
                         "ultralytics/yolov5's detection and segmentation models trained with their ComputeLoss, "
                         "JingyunLiang/SwinIR trained and tiled, facebookresearch/segment-anything's Sam through "
                         "SamPredictor and Sam.forward, its mask decoder fine-tuned (bench/_rw_heldout63.py); heldout64: "
                         "yuqinie98/PatchTST's PatchTST (RevIN, decomposition, per-channel heads) trained by its "
                         "Exp_Main, facebookresearch/encodec's SEANet codec with its residual vector quantizer "
                         "trained (with its loss Balancer) and the 24 kHz model, chennnM/GCNII's GCNII and GCNII* "
                         "on a Planetoid-format graph (bench/_rw_heldout64.py); heldout65: "
                         "facebookresearch/ijepa's encoder, predictor, multi-block masks and momentum target trained "
                         "as src/train.py trains them, state-spaces/s4's S4D and S4Block (diag, dplr) in example.py's "
                         "backbone, gordicaleksa/pytorch-GAT's three GAT layers trained by training_script_cora's "
                         "main loop (bench/_rw_heldout65.py); heldout66: pmixer/SASRec.pytorch's SASRec (post- and "
                         "pre-norm) trained and evaluated as main.py does, gusye1234/LightGCN-PyTorch's main.py run "
                         "whole (LightGCN over a torch.sparse graph, with edge dropout, and PureMF with the BPR loss), "
                         "meijieru/crnn.pytorch's CRNN trained with a CTC loss as train.py trains it "
                         "(bench/_rw_heldout66.py); heldout67: descriptinc/melgan-neurips' "
                         "weight-normed Generator and multi-scale Discriminator trained as scripts/train.py trains "
                         "them, eriklindernoren/PyTorch-YOLOv3's Darknet trained with compute_loss and train.py's "
                         "burn-in and subdivisions, facebookresearch/moco-v3's MoCo_ResNet with LARS and AdamW "
                         "trained by main_moco.train (bench/_rw_heldout67.py); heldout68: "
                         "thuml/Time-Series-Library's run.py run whole (TimesNet, iTransformer, TimeMixer trained "
                         "by Exp_Long_Term_Forecast), dreamquark-ai/tabnet's TabNetClassifier and TabNetRegressor "
                         "through fit (sparsemax, entmax, ghost batch norm), kekmodel/FixMatch-pytorch's "
                         "WideResNet, ModelEMA and FixMatch step (bench/_rw_heldout68.py); heldout69: "
                         "megvii-research/NAFNet's ImageRestorationModel (NAFNet, Baseline) and swz30/Restormer's "
                         "ImageCleanModel (with its EMA and progressive patches) trained by basicsr's loop on a paired "
                         "image folder, facebookresearch/DomainBed's IRM, CORAL, GroupDRO and Mixup trained as "
                         "scripts/train.py trains them (bench/_rw_heldout69.py); heldout70: TensorFlow/Keras "
                         "originals: philipperemy/keras-tcn's TCN trained by its task scripts, keras-team/keras' "
                         "examples (MNIST convnet, subclassed, functional, custom layers with keras.ops) "
                         "(bench/_rw_heldout70.py); heldout71: amdegroot/ssd.pytorch's "
                         "SSD300 trained with MultiBoxLoss on a VOC-format folder, LeeJunHyun/Image_Segmentation's "
                         "U_Net, R2U_Net and AttU_Net trained by solver.Solver, Cadene/pretrained-models.pytorch's "
                         "nasnetamobile, dpn68 and se_resnext50_32x4d fine-tuned (bench/_rw_heldout71.py)")
    a = ap.parse_args(argv)
    a.work, a.mirrors = a.work.resolve(), a.mirrors.resolve()
    only = {s for s in a.only.split(",") if s}
    src = a.work / "src"
    rows = []
    programs = PROGRAMS
    if a.set != "default":
        import importlib
        program_set = importlib.import_module(f"bench._rw_{a.set}")
        programs = program_set.PROGRAMS
        DRIVERS.update(program_set.DRIVERS)
        DEPS.update(program_set.DEPS)
        FILES.update(getattr(program_set, "FILES", {}))
        TORCH_FILES.update(getattr(program_set, "TORCH_FILES", {}))
        RAISES.update(getattr(program_set, "RAISES", {}))
        ORIGINAL.update(getattr(program_set, "ORIGINAL", {}))
        LOSSES.update(getattr(program_set, "LOSSES", {}))
        PRINTED.update(getattr(program_set, "PRINTED", {}))
    for name, repo, subdir, script, args, data in programs:
        if only and name not in only:
            continue
        original = ORIGINAL.get(name, "torch")
        mirror, _, rev = repo.partition("@")     # OWNER+NAME@COMMIT: that commit, not HEAD
        gitdir = a.mirrors / mirror / "repo"
        if (gitdir / ".git").is_dir():     # a mirror kept as a checkout's .git (tkipf+pygcn/repo/.git)
            gitdir = gitdir / ".git"
        if not gitdir.exists():
            rows.append((name, "-", "blocked", f"no mirror {gitdir}", "", ""))
            continue
        extract(gitdir, src / repo, rev or "HEAD")
        run = a.work / "runs" / name
        proj = prepare(name, repo, subdir, script, data, src, run)
        ms_proj = run / "ms" / "x" / "prog"
        rc, todo, secs, msg = convert(proj, ms_proj, DEPS.get(name, ()))
        if not (ms_proj / script).exists():
            rows.append((name, todo, "convert-failed", f"exit {rc}: {msg}", "", ""))
            continue
        for rel, text in TORCH_FILES.get(name, {}).items():
            if callable(text):
                text(proj)
                continue
            (proj / rel).parent.mkdir(parents=True, exist_ok=True)
            (proj / rel).write_text(text.lstrip(), encoding="utf-8")
        weights = run / "weights"
        budget = max(a.losses, LOSSES.get(name, 0))
        t_rec = ended(name, run_side("torch", proj / script, args, run / "torch.json", weights, budget, a.timeout,
                                     original=original))
        if t_rec["status"] in ("error", "timeout"):
            rows.append((name, todo, "torch-failed", summarize(t_rec["error"]), "", ""))
            print_row(rows[-1])
            continue
        m_rec = ended(name, run_side("ms", ms_proj / script, args, run / "ms.json", weights, budget, a.timeout,
                                     original=original))
        refs = {}

        def references(variant):
            if variant not in refs and variant == "float64-kinks":
                kinks = run / "kinks.npz"     # the converted side's ReLU sides (a PYNATIVE run)
                rec = run_side("ms", ms_proj / script, args, run / "ms_kinks.json", weights, budget, a.timeout,
                               kinks=kinks, original=original)
                refs[variant] = rec if rec["status"] in ("error", "timeout") else run_side(
                    "torch", proj / script, args, run / "torch_float64-kinks.json", weights, budget,
                    3 * a.timeout, reference=variant, kinks=kinks, original=original)
            elif variant not in refs:
                # float64 convolutions go through torch's slow native kernels: a longer allowance
                refs[variant] = run_side("torch", proj / script, args, run / f"torch_{variant}.json", weights,
                                         budget, 3 * a.timeout, reference=variant, original=original)
            return refs[variant]
        status, worst, note = printed(name, t_rec, m_rec, *judge(t_rec, m_rec, references))
        graph = ""
        if not a.no_graph and status != "error":
            g_rec = run_side("ms", ms_proj / script, args, run / "ms_graph.json", weights, budget, a.timeout,
                             mode="graph", original=original)
            own_noise = g_rec["status"] == "error" and "not a PrimitivePy" in str(g_rec["error"])
            if own_noise:   # a graph with JIT-fallback values cannot run the stream's pyfunc draws
                g_rec = run_side("ms", ms_proj / script, args, run / "ms_graph.json", weights, budget,
                                 a.timeout, mode="graph-own-noise", original=original)
            g_rec = ended(name, g_rec)
            g_status, g_worst, g_note = printed(name, t_rec, g_rec, *judge(t_rec, g_rec, references))
            if own_noise:
                g_note = (g_note + "; " if g_note else "") + "in-graph noise MindSpore's own (JIT-fallback values)"
            graph = f"graph {g_status}" + (f" {g_worst:.1e}" if g_worst is not None else "") + \
                (f" ({g_note})" if g_note else "")
        verified = []
        if not a.no_verify and status != "error" and original == "torch":     # msmigrate verify: torch models
            verified = verify_models(name, proj / script, ms_proj / script, args, t_rec, run, a.timeout)
        detail = (f"{worst:.1e}" if worst is not None else "") + (f" {note}" if note else "")
        rows.append((name, todo, status, detail.strip(), graph, "; ".join(verified)))
        print_row(rows[-1])
    print()
    print(f"{'program':22} {'TODO':>4}  {'status':15} largest loss difference / error")
    for r in rows:
        print(f"{r[0]:22} {str(r[1]):>4}  {r[2]:15} {r[3]}")
        for extra in r[4:]:
            if extra:
                print(f"{'':44}{extra}")
    passed = sum(r[2] == "pass" for r in rows)
    noise = sum(r[2] == "float32-noise" for r in rows)
    print(f"\n{passed}/{len(rows)} programs match torch (PYNATIVE losses within {RTOL} relative of torch's float32 or "
          f"float64 run)" + (f"; {noise} more within torch's own float32 drift (float32-noise)" if noise else ""))
    (a.work / "results.json").write_text(json.dumps(rows, indent=1))
    return 0 if passed == len(rows) else 1


def print_row(r):
    print(" | ".join(str(x) for x in r if x != ""), flush=True)


if __name__ == "__main__":
    sys.exit(main())
