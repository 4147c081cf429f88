"""The `heldout8` set of bench/real_world.py (`--set heldout8`): repositories the converter was never run on,
converted as a new user would convert them. Both change, between steps, values their losses read.

    python bench/real_world.py --mirrors /work/.mirror --set heldout8 [--only gumbel_vae,beta_vae]

- YongfeiYan/Gumbel_Softmax_VAE: gumbel_softmax_vae.py as written (an MNIST VAE with a categorical latent drawn
  by the Gumbel-softmax trick: torch.rand noise inside forward; Adam; its temperature annealed by
  `temp = np.maximum(temp * np.exp(-ANNEAL_RATE * batch_idx), temp_min)` under an `if` in the loop, carried
  from step to step and passed to the model; then its test() and a decoded sample saved with save_image).
  Synthetic MNIST idx files under data/MNIST/MNIST/raw, where its datasets.MNIST('./data/MNIST') reads them.
- 1Konny/Beta-VAE: Solver (solver.py) training BetaVAE_B with Burgess et al.'s objective, whose capacity
  `C = torch.clamp(self.C_max / self.C_stop_iter * self.global_iter, 0, self.C_max.data[0])` grows with the
  trainer's step counter (an attribute of the Solver incremented in the loop), Adam, the reparametrisation's
  normal_() noise in forward. The driver (our code) sets visdom, imported by solver.py and not installed, to an
  empty module, writes a small dSprites-format .npz of squares, and runs Solver(args).train() for a few steps.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

GUMBEL = "YongfeiYan+Gumbel_Softmax_VAE"
BETA = "1Konny+Beta-VAE"


def _mnist_where_it_reads(root):
    """datasets.MNIST('./data/MNIST') from the script's directory (real_world.prepare's RUN/SIDE/x/prog, beside
    RUN/SIDE/data): ./data/MNIST/MNIST/raw."""
    from tests.corpus import write_mnist
    write_mnist(root.parent / "x" / "prog" / "data" / "MNIST", n_train=200, n_test=16)


# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("gumbel_vae", GUMBEL, ".", "gumbel_softmax_vae.py", ["--batch-size", "8", "--epochs", "1", "--no-cuda"],
     _mnist_where_it_reads),
    ("beta_vae", BETA, "solver.py,model.py,dataset.py,utils.py", "driver.py", [], None),
]

DEPS: dict = {}

# Drivers: our own code, through the repositories' documented entry points.
DRIVERS = {
    "beta_vae": '''
import argparse
import os
import sys
import types

import numpy as np

sys.modules["visdom"] = types.ModuleType("visdom")     # imported by solver.py; not installed (viz_on=False)

from solver import Solver

# dSprites' layout (an "imgs" array of 64x64 binary images), squares at places of our choosing
os.makedirs("data/dsprites-dataset", exist_ok=True)
imgs = np.zeros((48, 64, 64), dtype=np.uint8)
for i in range(48):
    a, b, s = 4 + (i * 7) % 40, 6 + (i * 11) % 40, 8 + i % 12
    imgs[i, a:a + s, b:b + s] = 1
np.savez("data/dsprites-dataset/dsprites_ndarray_co1sh3sc6or40x32y32_64x64.npz", imgs=imgs)

args = argparse.Namespace(
    train=True, seed=1, cuda=False, max_iter=12, batch_size=8, z_dim=10, beta=4, gamma=1000.0, C_max=20.0,
    C_stop_iter=10.0, objective="B", model="B", lr=1e-4, beta1=0.9, beta2=0.999, dset_dir="data",
    dataset="dsprites", image_size=64, num_workers=0, viz_on=False, viz_name="main", viz_port=8097,
    save_output=False, output_dir="outputs", gather_step=1000, display_step=10000, save_step=10000,
    ckpt_dir="checkpoints", ckpt_name=None)
solver = Solver(args)
solver.train()
print("C after training", float(min(args.C_max / args.C_stop_iter * solver.global_iter, args.C_max)))
''',
}
