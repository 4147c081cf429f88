"""The `heldout15` set of bench/real_world.py (`--set heldout15`): two repositories the converter was never run on,
converted as a new user would convert them, driven by short drivers (our code, the repositories' own modules) on
small synthetic data drawn from fixed seeds.

    python bench/real_world.py --mirrors /work/.mirror --set heldout15 [--only made_train,flows_realnvp]

- karpathy/pytorch-made (made.py, run.py):
  - made_train: run.py's own run_epoch(split, upto) (torch.set_grad_enabled(split == 'train'), model.train() /
    model.eval() as an expression statement, `Variable(x[step*B:step*B+B])`, masks resampled by
    MADE.update_masks every resample_every steps and at every test sample, `xbhat += model(xb)` over the
    samples, F.binary_cross_entropy_with_logits(..., size_average=False) / B, `loss.data.item()`, Adam with
    weight decay) on a small synthetic binarized_mnist.npz in the real format (train_data / valid_data /
    test_data, float32 0/1 rows of 784), run.py's epoch loop (StepLR stepped with the epoch) written by the
    driver: run.py's main block calls `.cuda()` unconditionally, so the driver runs that block's statements
    without them and hands run.py's module globals (args, xtr, xte, model, opt) to run.run_epoch.
  - made_check: made.py's `__main__` self-check run as the program itself: per output k, a fresh
    `Variable(torch.from_numpy(x), requires_grad=True)`, `model(xtr)[0, k].backward()`, and `xtr.grad` read to
    list the inputs output k depends on (the autoregressive property).
- karpathy/pytorch-normalizing-flows (nflib): NormalizingFlowModel trained for a few Adam steps on two half-moons
  of our own (numpy, fixed seed) with nflib1.ipynb's loop (`zs, prior_logprob, log_det = model(x)`,
  `loss = -torch.sum(prior_logprob + log_det)`), the prior a standard normal; the log-probabilities of a batch
  and a sampled batch (the flows' backward(), inversion, from fixed z) printed:
  - flows_realnvp: AffineHalfFlow couplings (RealNVP), with ActNorm's data-dependent first-batch init.
  - flows_maf: MAF with its ARMLP (MADE with natural ordering), sampling through the sequential inversion.
  - flows_iaf: IAF (MAF with forward and backward swapped in __init__).
  - flows_glow: ActNorm, Invertible1x1Conv (LU-parametrised W, torch.inverse) and AffineHalfFlow, as the
    notebook's Glow cell.
  - flows_nsf: the notebook's neural spline cell: ActNorm, Invertible1x1Conv and NSF_CL (rational-quadratic
    splines, boolean-mask writes), plus one NSF_AR.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

MADE = "karpathy+pytorch-made@81886ccc8270cdf3a2b32cbbca5c7feab422f907"
FLOWS = "karpathy+pytorch-normalizing-flows@b60e119b37be10ce2930ef9fa17e58686aaf2b3d"


def _binarized_mnist(root):
    """binarized_mnist.npz as MADE's release ships it (train_data, valid_data, test_data: float32 rows of 784
    zeros and ones), small: 300 / 200 / 100 rows of blobs thresholded."""
    import numpy as np

    rng = np.random.RandomState(0)

    def rows(n):
        base = rng.rand(n, 1) * 0.6 + 0.2
        return (rng.rand(n, 784) < base).astype(np.float32)

    np.savez(root / "binarized_mnist.npz", train_data=rows(300), valid_data=rows(200), test_data=rows(100))


# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("made_train", MADE, "made.py,run.py", "driver.py", [], _binarized_mnist),
    ("made_check", MADE, ".", "made.py", [], None),
    ("flows_realnvp", FLOWS, "nflib", "driver.py", [], None),
    ("flows_maf", FLOWS, "nflib", "driver.py", [], None),
    ("flows_iaf", FLOWS, "nflib", "driver.py", [], None),
    ("flows_glow", FLOWS, "nflib", "driver.py", [], None),
    ("flows_nsf", FLOWS, "nflib", "driver.py", [], None),
]

DEPS: dict = {}

_FLOWS = '''
import itertools
import numpy as np
import torch
import torch.optim as optim
from torch.distributions import MultivariateNormal
from nflib.flows import (AffineConstantFlow, ActNorm, AffineHalfFlow, MAF, IAF, Invertible1x1Conv,
                         NormalizingFlowModel)
from nflib.spline_flows import NSF_AR, NSF_CL

KIND = "{kind}"
torch.manual_seed(0)
rng = np.random.RandomState(0)


def moons(n):
    t = rng.rand(n) * np.pi
    upper = rng.rand(n) < 0.5
    x = np.where(upper, np.cos(t), 1 - np.cos(t))
    y = np.where(upper, np.sin(t), 0.5 - np.sin(t))
    xy = np.stack([x, y], axis=1) + rng.randn(n, 2) * 0.05
    return torch.from_numpy(xy.astype(np.float32))


if KIND == "realnvp":
    flows = [AffineHalfFlow(dim=2, parity=i % 2, nh=16) for i in range(4)]
    norms = [ActNorm(dim=2) for _ in flows]
    flows = list(itertools.chain(*zip(norms, flows)))
elif KIND == "maf":
    flows = [MAF(dim=2, parity=i % 2, nh=16) for i in range(3)]
    flows.append(AffineConstantFlow(dim=2, shift=False))
elif KIND == "iaf":
    flows = [IAF(dim=2, parity=i % 2, nh=16) for i in range(2)]
elif KIND == "glow":
    flows = [Invertible1x1Conv(dim=2) for i in range(2)]
    norms = [ActNorm(dim=2) for _ in flows]
    couplings = [AffineHalfFlow(dim=2, parity=i % 2, nh=16) for i in range(len(flows))]
    flows = list(itertools.chain(*zip(norms, flows, couplings)))
else:
    flows = [NSF_CL(dim=2, K=5, B=3, hidden_dim=8) for _ in range(2)]
    convs = [Invertible1x1Conv(dim=2) for _ in flows]
    norms = [ActNorm(dim=2) for _ in flows]
    flows = list(itertools.chain(*zip(norms, convs, flows)))
    flows.append(NSF_AR(dim=2, K=5, B=3, hidden_dim=8))

prior = MultivariateNormal(torch.zeros(2), torch.eye(2))
model = NormalizingFlowModel(prior, flows)
optimizer = optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-5)
model.train()
for k in range(6):
    x = moons(64)
    zs, prior_logprob, log_det = model(x)
    logprob = prior_logprob + log_det
    loss = -torch.sum(logprob)
    model.zero_grad()
    loss.backward()
    optimizer.step()
    print("step", k, loss.item())

model.eval()
x = moons(32)
with torch.no_grad():
    zs, prior_logprob, log_det = model(x)
print("VALUE logprob", float((prior_logprob + log_det).sum()))
print("VALUE z_abs", float(zs[-1].abs().sum()))
z = torch.from_numpy(rng.randn(16, 2).astype(np.float32) * 0.5)
with torch.no_grad():
    xs, log_det = model.backward(z)
print("VALUE sample_sum", float(xs[-1].sum()))
print("VALUE sample_abs", float(xs[-1].abs().sum()))
print("VALUE sample_logdet", float(log_det.sum()))
'''

# Drivers: our own code, through the repositories' modules.
DRIVERS = {
    "made_train": '''
import argparse
import numpy as np
import torch
import run
from made import MADE

# run.py's main block, without its .cuda() calls
args = argparse.Namespace(data_path="../../data/binarized_mnist.npz", hiddens="48,48", num_masks=3,
                          resample_every=2, samples=2)
np.random.seed(42)
torch.manual_seed(42)
mnist = np.load(args.data_path)
xtr, xte = mnist["train_data"], mnist["valid_data"]
xtr = torch.from_numpy(xtr)
xte = torch.from_numpy(xte)
hidden_list = list(map(int, args.hiddens.split(",")))
model = MADE(xtr.size(1), hidden_list, xtr.size(1), num_masks=args.num_masks)
opt = torch.optim.Adam(model.parameters(), 1e-3, weight_decay=1e-4)
scheduler = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
# run_epoch reads them as run.py's globals
run.args, run.xtr, run.xte, run.model, run.opt = args, xtr, xte, model, opt
for epoch in range(2):
    print("epoch %d" % (epoch, ))
    scheduler.step(epoch)
    run.run_epoch("test", upto=1)
    run.run_epoch("train")
model.eval()
with torch.no_grad():
    logits = model(xte[:8])
print("VALUE logits_sum", float(logits.sum()))
print("VALUE logits_abs", float(logits.abs().sum()))
print("VALUE lr", opt.param_groups[0]["lr"])
''',
}
for _kind in ("realnvp", "maf", "iaf", "glow", "nsf"):
    DRIVERS["flows_" + _kind] = _FLOWS.replace("{kind}", _kind)
