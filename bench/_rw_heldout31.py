"""The `heldout31` set of bench/real_world.py (`--set heldout31`): Harry24k/adversarial-attacks-pytorch's
torchattacks and yenchenlin/nerf-pytorch, converted as a new user would convert them.

    python bench/real_world.py --mirrors /work/.mirror --set heldout31 [--only atk_gradient,nerf_train]

- Harry24k/adversarial-attacks-pytorch (torchattacks/; its robustbench/ is not converted): a small CNN classifier
  of ours (two convolutions, BatchNorm, max pooling, a linear head; 10 classes, 3x8x8 images in [0, 1]) in eval
  mode, attacked by the package's attacks; each attack's adversarial images and their logits printed as VALUEs
  (sums, absolute sums), and an `ATTACK name ok` line (or the error it raised: a PRINTED line, compared with
  torch's, so one attack that stops does not hide the others). torch.rand/randn_like draws are matched by the
  runner; the classifier ends in AdaptiveAvgPool2d(4) (DIFGSM's resized inputs).
  - atk_gradient: the sign-gradient family without random starts: FGSM, BIM, MIFGSM, NIFGSM, VMIFGSM, VNIFGSM,
    SINIFGSM, UPGD (ce and dlr losses), TIFGSM (scipy's gaussian kernel, a depthwise conv of the gradient),
    PIFGSM, VANILA; the targeted modes (by function, least likely: torch.kthvalue over a list of indices) and
    set_normalization_used (the attack de-normalizes, attacks and normalizes again).
  - atk_random: attacks with random starts or noise: PGD, EOTPGD, FFGSM, RFGSM, TPGD (KL divergence to the clean
    prediction), GN, PGDL2, PGD targeted at random labels, then Jitter and DIFGSM (input diversity: torch.randint
    sizes, F.interpolate, F.pad), last because their conversions stop where the torch side has drawn: the
    runner's noise stream is one for all attacks.
  - atk_optim: attacks that optimise or search: CW (Adam on a tanh-space image), DeepFool (per-image
    jacobians), APGD and APGDT, Square, EADL1, EADEN, FAB, SparseFool, JSMA, OnePixel and Pixle.
- yenchenlin/nerf-pytorch (run_nerf.py, run_nerf_helpers.py; imageio and cv2 are not installed, and
  configargparse: stand-in modules of ours beside the scripts, unused by what runs):
  - nerf_train: create_nerf (an args Namespace of ours: multires 4, view directions with multires 2, netdepth 4
    and width 32 (skips [4] kept: no skip at depth 4), 8 coarse and 8 fine samples), then train()'s inner step
    replayed on a synthetic scene: a camera pose_spherical-like c2w of ours, get_rays, a random batch of rays
    (np.random.choice), render with perturb 1 and raw_noise_std 0.5 (torch.rand/randn matched), img2mse on rgb and
    rgb0, mse2psnr, Adam with train()'s exponential learning-rate decay.
  - nerf_train_det: the same with perturb 0 and raw_noise_std 0 (no draws: the gradients and the Adam steps alone).
  - nerf_render: render of a tiny 6x5 image from c2w (render_kwargs_test: perturb off, the fine network's
    sample_pdf with det=True), ndc_rays with an LLFF-style setup and lindisp, white_bkgd, and get_rays_np.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

ATK = "Harry24k+adversarial-attacks-pytorch@23620a694a3660e4f194c3e4d28992bced7785a1"
NERF = "yenchenlin+nerf-pytorch@63a5a630c9abd62b0f21c08703d0ac2ea7d4b9dd"

_NERF_STANDINS = {
    "imageio.py": '"""A stand-in written by bench/_rw_heldout31.py: imageio is not installed (nothing calls it)."""\n',
    "cv2.py": '"""A stand-in written by bench/_rw_heldout31.py: OpenCV is not installed (nothing calls it)."""\n',
    "configargparse.py": '''"""A stand-in written by bench/_rw_heldout31.py: configargparse is not installed."""
from argparse import *  # noqa: F401,F403
''',
}

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("atk_gradient", ATK, "torchattacks", "driver.py", [], None),
    ("atk_random", ATK, "torchattacks", "driver.py", [], None),
    ("atk_optim", ATK, "torchattacks", "driver.py", [], None),
    ("nerf_train", NERF, "run_nerf.py,run_nerf_helpers.py,load_llff.py,load_deepvoxels.py,load_blender.py,"
     "load_LINEMOD.py", "driver.py", [], None),
    ("nerf_train_det", NERF, "run_nerf.py,run_nerf_helpers.py,load_llff.py,load_deepvoxels.py,load_blender.py,"
     "load_LINEMOD.py", "driver.py", [], None),
    ("nerf_render", NERF, "run_nerf.py,run_nerf_helpers.py,load_llff.py,load_deepvoxels.py,load_blender.py,"
     "load_LINEMOD.py", "driver.py", [], None),
]

DEPS: dict = {}

FILES = {"nerf_train": _NERF_STANDINS, "nerf_train_det": _NERF_STANDINS, "nerf_render": _NERF_STANDINS}

LOSSES = {"nerf_train": 6, "nerf_train_det": 6, "atk_optim": 400}     # CW, EAD, JSMA: backward() per step

# each attack's outcome (ok, or the error it raised) as torch's
PRINTED = {name: r"^ATTACK .*$" for name in ("atk_gradient", "atk_random", "atk_optim")}

_CLASSIFIER = '''
import numpy as np
import torch
import torch.nn as nn
import torchattacks

torch.manual_seed(0)


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(4))
        self.head = nn.Linear(16 * 4 * 4, 10)

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


model = SmallCNN().eval()
images = torch.rand(4, 3, 8, 8)
labels = torch.tensor([1, 3, 5, 7])


def report(name, adv):
    with torch.no_grad():
        logits = model(adv)
    print("VALUE", name + "_adv", float(adv.sum()))
    print("VALUE", name + "_delta", float((adv - images).abs().sum()))
    print("VALUE", name + "_logits", float(logits.abs().sum()))


def attack(name, atk, *args):
    """one attack's VALUEs, or the error it raised (a PRINTED line, compared with torch's)"""
    try:
        adv = atk(*args)
    except Exception as e:
        print("ATTACK", name, "raised", type(e).__name__, str(e).split(" (")[0][:120])
        return None
    print("ATTACK", name, "ok")
    report(name, adv)
    return adv
'''

# Drivers: our own code, through the repositories' modules.
DRIVERS = {
    "atk_gradient": _CLASSIFIER + '''
attacks = [
    ("fgsm", torchattacks.FGSM(model, eps=8 / 255)),
    ("bim", torchattacks.BIM(model, eps=8 / 255, alpha=2 / 255, steps=3)),
    ("mifgsm", torchattacks.MIFGSM(model, eps=8 / 255, alpha=2 / 255, steps=3, decay=1.0)),
    ("nifgsm", torchattacks.NIFGSM(model, eps=8 / 255, alpha=2 / 255, steps=3)),
    ("vmifgsm", torchattacks.VMIFGSM(model, eps=8 / 255, alpha=2 / 255, steps=3, N=2, beta=1.5)),
    ("vnifgsm", torchattacks.VNIFGSM(model, eps=8 / 255, alpha=2 / 255, steps=3, N=2, beta=1.5)),
    ("sinifgsm", torchattacks.SINIFGSM(model, eps=8 / 255, alpha=2 / 255, steps=3, m=3)),
    ("upgd_ce", torchattacks.UPGD(model, eps=8 / 255, alpha=2 / 255, steps=3)),
    ("upgd_dlr", torchattacks.UPGD(model, eps=8 / 255, alpha=2 / 255, steps=3, loss="dlr", decay=0.5)),
    ("tifgsm", torchattacks.TIFGSM(model, eps=8 / 255, alpha=2 / 255, steps=3, len_kernel=5, diversity_prob=0.0)),
    ("pifgsm", torchattacks.PIFGSM(model, max_epsilon=8, num_iter_set=3)),
    ("vanila", torchattacks.VANILA(model)),
]
for name, atk in attacks:
    attack(name, atk, images, labels)

# targeted modes
atk = torchattacks.BIM(model, eps=8 / 255, alpha=2 / 255, steps=3)
atk.set_mode_targeted_by_function(lambda inputs, labels: (labels + 1) % 10, quiet=True)
attack("bim_target_fn", atk, images, labels)
atk.set_mode_targeted_least_likely(kth_min=2, quiet=True)
attack("bim_least_likely", atk, images, labels)
atk.set_mode_default()
# the attack de-normalizes its inputs, attacks, and normalizes again
norm_model = nn.Sequential(model)
atk = torchattacks.MIFGSM(norm_model, eps=8 / 255, alpha=2 / 255, steps=2)
atk.set_normalization_used(mean=[0.5, 0.4, 0.3], std=[0.2, 0.25, 0.3])
normed = (images - torch.tensor([0.5, 0.4, 0.3]).view(1, 3, 1, 1)) / torch.tensor([0.2, 0.25, 0.3]).view(1, 3, 1, 1)
attack("normalized", atk, normed, labels)
''',
    "atk_random": _CLASSIFIER + '''
attacks = [
    ("pgd", torchattacks.PGD(model, eps=8 / 255, alpha=2 / 255, steps=3, random_start=True)),
    ("eotpgd", torchattacks.EOTPGD(model, eps=8 / 255, alpha=2 / 255, steps=2, eot_iter=2)),
    ("ffgsm", torchattacks.FFGSM(model, eps=8 / 255, alpha=10 / 255)),
    ("rfgsm", torchattacks.RFGSM(model, eps=8 / 255, alpha=2 / 255, steps=3)),
    ("tpgd", torchattacks.TPGD(model, eps=8 / 255, alpha=2 / 255, steps=3)),
    ("gn", torchattacks.GN(model, std=0.1)),
    ("pgdl2", torchattacks.PGDL2(model, eps=1.0, alpha=0.2, steps=3, random_start=True)),
]
for name, atk in attacks:
    attack(name, atk, images, labels)
atk = torchattacks.PGD(model, eps=8 / 255, alpha=2 / 255, steps=2, random_start=True)
atk.set_mode_targeted_random(quiet=True)
attack("pgd_target_random", atk, images, labels)
# last: attacks whose conversion may stop (a raising TODO) after the torch side drew from the shared noise stream,
# which would leave every later attack's draws elsewhere on the two sides
for name, atk in [
    ("jitter", torchattacks.Jitter(model, eps=8 / 255, alpha=2 / 255, steps=3, scale=10, std=0.1)),
    ("difgsm", torchattacks.DIFGSM(model, eps=8 / 255, alpha=2 / 255, steps=3, resize_rate=1.25,
                                   diversity_prob=1.0)),
]:
    attack(name, atk, images, labels)
''',
    "atk_optim": _CLASSIFIER + '''
attacks = [
    ("cw", torchattacks.CW(model, c=1, kappa=0, steps=5, lr=0.05)),
    ("deepfool", torchattacks.DeepFool(model, steps=3, overshoot=0.02)),
    ("apgd_ce", torchattacks.APGD(model, norm="Linf", eps=8 / 255, steps=4, n_restarts=1, loss="ce", seed=0)),
    ("apgd_dlr", torchattacks.APGD(model, norm="L2", eps=0.5, steps=4, n_restarts=1, loss="dlr", seed=0)),
    ("apgdt", torchattacks.APGDT(model, norm="Linf", eps=8 / 255, steps=4, n_restarts=1, n_classes=10, seed=0)),
    ("square", torchattacks.Square(model, norm="Linf", eps=8 / 255, n_queries=10, n_restarts=1, seed=0)),
    ("eadl1", torchattacks.EADL1(model, kappa=0, lr=0.01, binary_search_steps=2, max_iterations=10)),
    ("eaden", torchattacks.EADEN(model, kappa=0, lr=0.01, binary_search_steps=2, max_iterations=10)),
    ("fab", torchattacks.FAB(model, norm="Linf", eps=8 / 255, steps=4, n_restarts=1, n_classes=10, seed=0)),
    ("sparsefool", torchattacks.SparseFool(model, steps=2, lam=3, overshoot=0.02)),
    ("jsma", torchattacks.JSMA(model, theta=1.0, gamma=0.1)),
    ("onepixel", torchattacks.OnePixel(model, pixels=1, steps=2, popsize=4, inf_batch=16)),
    ("pixle", torchattacks.Pixle(model, x_dimensions=(0.1, 0.2), restarts=2, max_iterations=2)),
]
for name, atk in attacks:
    np.random.seed(0)     # the numpy draws of the search attacks from one state on both sides
    attack(name, atk, images, labels)
''',
}

_NERF_SETUP = '''
import argparse

import numpy as np
import torch

import run_nerf
from run_nerf import create_nerf, render
from run_nerf_helpers import get_rays, get_rays_np, img2mse, mse2psnr

torch.manual_seed(0)
np.random.seed(0)


def namespace(**kw):
    args = argparse.Namespace(multires=4, i_embed=0, use_viewdirs=True, multires_views=2, N_importance=8,
                              netdepth=4, netwidth=32, netdepth_fine=4, netwidth_fine=32, netchunk=256,
                              lrate=5e-3, lrate_decay=1, basedir=BASEDIR, expname="exp", ft_path=None,
                              no_reload=True, perturb=1.0, N_samples=8, white_bkgd=False, raw_noise_std=0.5,
                              dataset_type="blender", no_ndc=False, lindisp=False)
    for k, v in kw.items():
        setattr(args, k, v)
    return args


import os
import tempfile

BASEDIR = tempfile.mkdtemp()
os.makedirs(os.path.join(BASEDIR, "exp"), exist_ok=True)


def camera(theta, radius=3.0):
    c, s = np.cos(theta), np.sin(theta)
    return torch.tensor([[c, 0.0, s, radius * s], [0.0, 1.0, 0.0, 0.2], [-s, 0.0, c, radius * c]],
                        dtype=torch.float32)


H, W, focal = 6, 5, 4.0
K = np.array([[focal, 0, 0.5 * W], [0, focal, 0.5 * H], [0, 0, 1]])
'''

def _nerf_training(args):
    """Five training steps through create_nerf, get_rays, render and the losses of run_nerf_helpers (our loop: a
    random batch of a synthetic target's pixels, the coarse and fine losses, the exponential learning-rate decay),
    then a render of a test view."""
    return _NERF_SETUP + f'''
args = namespace({args})
train_kw, test_kw, _, _, opt = create_nerf(args)
near_far = dict(near=2.0, far=6.0)
train_kw.update(near_far)
goal = torch.rand(H, W, 3)
grid = torch.stack(torch.meshgrid(torch.linspace(0, H - 1, H), torch.linspace(0, W - 1, W)), -1).reshape(-1, 2)
for it in range(5):
    origins, dirs = get_rays(H, W, K, camera(0.3 * it))
    pick = grid[np.random.choice(grid.shape[0], size=[12], replace=False)].long()
    rays = torch.stack([origins[pick[:, 0], pick[:, 1]], dirs[pick[:, 0], pick[:, 1]]], 0)
    want = goal[pick[:, 0], pick[:, 1]]
    rgb, disp, acc, extras = render(H, W, K, chunk=8, rays=rays, verbose=it < 10, retraw=True, **train_kw)
    opt.zero_grad()
    mse = img2mse(rgb, want)
    total = mse
    if 'rgb0' in extras:
        total = total + img2mse(extras['rgb0'], want)
    total.backward()
    opt.step()
    for group in opt.param_groups:
        group['lr'] = args.lrate * 0.1 ** ((it + 1) / (args.lrate_decay * 1000))
    print("VALUE psnr%d" % it, float(mse2psnr(mse)))
    print("VALUE zstd%d" % it, float(extras['z_std'].sum()))
with torch.no_grad():
    rgb, disp, acc, _ = render(H, W, K, chunk=16, c2w=camera(0.1), **dict(test_kw, **near_far))
print("VALUE image", float(rgb.sum()))
print("VALUE disp", float(disp.sum()))
'''


DRIVERS.update({
    "nerf_train": _nerf_training(""),
    "nerf_train_det": _nerf_training("perturb=0.0, raw_noise_std=0.0"),    # no draws: the gradients alone
    "nerf_render": _NERF_SETUP + '''
# a tiny image of the test configuration (perturb off, no noise: sample_pdf with det=True)
args = namespace(raw_noise_std=0.0)
_, test_kw, _, _, _ = create_nerf(args)
with torch.no_grad():
    rgb, disp, acc, extras = render(H, W, K, chunk=7, c2w=camera(0.4), near=2.0, far=6.0, **test_kw)
print("VALUE rgb", float(rgb.sum()))
print("VALUE disp", float(disp.sum()))
print("VALUE acc", float(acc.sum()))
print("VALUE rgb0", float(extras['rgb0'].abs().sum()))
print("VALUE z_std", float(extras['z_std'].sum()))
# LLFF style: NDC rays, lindisp, white background, coarse network only
args = namespace(dataset_type="llff", lindisp=True, white_bkgd=True, N_importance=0, use_viewdirs=False,
                 raw_noise_std=0.0)
_, test_kw, _, _, _ = create_nerf(args)
test_kw["lindisp"] = True
with torch.no_grad():
    rgb, disp, acc, extras = render(H, W, K, chunk=16, c2w=camera(-0.2), near=0.0, far=1.0, **test_kw)
print("VALUE ndc_rgb", float(rgb.sum()))
print("VALUE ndc_disp", float(disp.sum()))
rays_o, rays_d = get_rays_np(H, W, K, camera(0.2).numpy())
print("VALUE rays_np", float(np.abs(rays_d).sum() + rays_o.sum()))
''',
})
