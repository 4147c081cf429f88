"""The `heldout14` set of bench/real_world.py (`--set heldout14`): a repository the converter was never run on,
converted as a new user would convert it, its trainer driven for a few steps by a short driver (our code, the
repository's own modules).

    python bench/real_world.py --mirrors /work/.mirror --set heldout14

- sthalles/SimCLR: simclr.py's SimCLR trainer as run.py builds it (Adam with weight decay, CosineAnnealingLR,
  `with torch.cuda.device(args.gpu_index)` with run.py's CPU index -1), its train() run for two epochs of three
  batches of two views: info_nce_loss (labels from torch.cat of aranges compared by broadcasting, torch.eye's
  boolean mask, `similarity_matrix[~mask].view(...)` and `[labels.bool()]` selections, logits over a
  temperature), GradScaler and autocast (disabled, as fp16_precision is off on a CPU), utils.accuracy's topk,
  the TensorBoard SummaryWriter's scalars and the checkpoint torch.save writes at the end. The model is a small
  encoder of ours (run.py's ResNetSimCLR takes torchvision's resnet18, whose compiled ops do not load next to this
  torch): SimCLR takes any model as its `model` keyword.
  Needs tensorboard and pyyaml installed on the torch side (MSMIGRATE_BENCH_DEPS=1).

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

SIMCLR = "sthalles+SimCLR@1848fc934ad844ae630e6c452300433fe99acfd9"

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("simclr_train", SIMCLR, "simclr.py,utils.py", "driver.py", [], None),
]

DEPS: dict = {}

# Drivers: our own code, through the repository's modules.
DRIVERS = {
    "simclr_train": '''
import argparse
import torch
import torch.nn as nn
from simclr import SimCLR


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 16))
        self.head = nn.Sequential(nn.ReLU(), nn.Linear(16, 8))

    def forward(self, x):
        return self.head(self.backbone(x))


args = argparse.Namespace(device=torch.device("cpu"), batch_size=4, n_views=2, temperature=0.07,
                          fp16_precision=False, epochs=2, log_every_n_steps=1, arch="small", disable_cuda=True,
                          gpu_index=-1)
model = Encoder()
optimizer = torch.optim.Adam(model.parameters(), 3e-4, weight_decay=1e-4)
batches = [([torch.randn(4, 3, 16, 16), torch.randn(4, 3, 16, 16)], torch.zeros(4, dtype=torch.long))
           for _ in range(3)]
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=len(batches), eta_min=0, last_epoch=-1)
with torch.cuda.device(args.gpu_index):
    simclr = SimCLR(model=model, optimizer=optimizer, scheduler=scheduler, args=args)
    simclr.train(batches)
logits, labels = simclr.info_nce_loss(model(torch.cat(batches[0][0], dim=0)))
print("VALUE logits_sum", float(logits.sum()))
print("VALUE positives", float(logits[:, 0].sum()))
print("VALUE labels_sum", float(labels.sum()))
''',
}
