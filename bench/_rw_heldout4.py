"""The `heldout4` set of bench/real_world.py (`--set heldout4`): repositories the converter was not
tuned on, run as a new user would.

    python bench/real_world.py --mirrors /work/.mirror --set heldout4 [--only morvan_gan,lion]

- MorvanZhou/PyTorch-Tutorial: the tutorial-contents/ scripts as written (regression, classification,
  Sequential nets, four optimizers on one loader, RNN regressor with its hidden state carried over, GAN and
  conditional GAN on numpy-made paintings, dropout, batch norm with layers kept in a list and setattr); each
  makes its own data (numpy or torch draws); matplotlib draws to Agg.
- hunkim/PyTorchZeroToAll: the numbered scripts as written (Variable-era linear regression, the diabetes
  logistic model on the repository's own data/diabetes.csv.gz, the same through Dataset/DataLoader, the
  embedding RNN on "hihell").
- lucidrains/lion-pytorch: the Lion optimizer (and its cautious variant) through a driver: an MLP trained under
  Lion with a StepLR schedule and gradient-norm clipping, a checkpoint (model and optimizer state) saved and
  loaded into a fresh model and optimizer that train on.
- lucidrains/byol-pytorch: BYOL (forward hook on a named layer, lazily built projector, deep-copied target
  encoder updated by EMA) around a small conv net, through a driver. byol_pytorch.py alone is taken: the
  package's __init__ imports its trainer, which needs accelerate and beartype.
- lucidrains/mlp-mixer-pytorch: MLPMixer and Permutator (einops layers, Conv1d token mixing) through a driver.

Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

MORVAN = "MorvanZhou+PyTorch-Tutorial"
Z2A = "hunkim+PyTorchZeroToAll"
LION = "lucidrains+lion-pytorch"
BYOL = "lucidrains+byol-pytorch"
MIXER = "lucidrains+mlp-mixer-pytorch"

MORVAN_SCRIPTS = [
    ("morvan_regression", "301_regression.py"),
    ("morvan_classification", "302_classification.py"),
    ("morvan_quick", "303_build_nn_quickly.py"),
    ("morvan_optimizers", "306_optimizer.py"),
    ("morvan_rnn_regressor", "403_RNN_regressor.py"),
    ("morvan_gan", "406_GAN.py"),
    ("morvan_cgan", "406_conditional_GAN.py"),
    ("morvan_dropout", "503_dropout.py"),
    ("morvan_batchnorm", "504_batch_normalization.py"),
]

Z2A_SCRIPTS = [
    ("z2a_linear", "05_linear_regression.py"),
    ("z2a_diabetes", "07_diabets_logistic.py"),
    ("z2a_loader", "08_2_dataset_loade_logistic.py"),
    ("z2a_rnn_emb", "12_4_hello_rnn_emb.py"),
]

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [(name, MORVAN, "tutorial-contents", script, [], None) for name, script in MORVAN_SCRIPTS] + [
    (name, Z2A, ".", script, [], None) for name, script in Z2A_SCRIPTS
] + [
    ("lion", LION, "lion_pytorch", "driver.py", [], None),
    ("byol", BYOL, "byol_pytorch/byol_pytorch.py", "driver.py", [], None),
    ("mlp_mixer", MIXER, "mlp_mixer_pytorch", "driver.py", [], None),
]

DEPS: dict = {}

# Drivers: our own code, through the libraries' documented entry points.
DRIVERS = {
    "lion": '''
import torch
import torch.nn.functional as F
from torch import nn
from lion_pytorch import Lion
from lion_pytorch.cautious_lion import Lion as CautiousLion


def make_model():
    return nn.Sequential(nn.Linear(6, 16), nn.GELU(), nn.Linear(16, 3))


x = torch.randn(8, 6)
y = torch.tensor([0, 1, 2, 0, 1, 2, 2, 1])
for name, make_opt in (("lion", lambda p: Lion(p, lr=1e-2, weight_decay=1e-2)),
                       ("cautious", lambda p: CautiousLion(p, lr=1e-2, weight_decay=1e-2, cautious_factor=0.5))):
    model = make_model()
    optimizer = make_opt(model.parameters())
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    for step in range(4):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
        optimizer.step()
        scheduler.step()
        print("loss", loss.item())
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step}, name + ".pt")
    checkpoint = torch.load(name + ".pt")
    resumed = make_model()
    resumed.load_state_dict(checkpoint["model"])
    optimizer = make_opt(resumed.parameters())
    optimizer.load_state_dict(checkpoint["optimizer"])
    for step in range(checkpoint["step"] + 1, checkpoint["step"] + 3):
        optimizer.zero_grad()
        loss = F.cross_entropy(resumed(x), y)
        loss.backward()
        optimizer.step()
        print("loss", loss.item())
    print("VALUE " + name + "_weights", float(sum(p.abs().sum() for p in resumed.parameters())))
''',
    "byol": '''
import torch
from torch import nn
from byol_pytorch import BYOL


class SmallNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                                      nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        return self.fc(self.pool(self.features(x)).flatten(1))


net = SmallNet()
learner = BYOL(net, image_size=16, hidden_layer="pool", projection_size=16, projection_hidden_size=32,
               augment_fn=lambda t: t.flip(-1), augment_fn2=lambda t: t * 0.9, sem_num_simplices=4,
               sem_simplex_dim=4, moving_average_decay=0.9)
optimizer = torch.optim.Adam(learner.parameters(), lr=1e-3)
images = torch.randn(4, 3, 16, 16)
for step in range(4):
    loss = learner(images)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    learner.update_moving_average()
    print("loss", loss.item())
with torch.no_grad():
    projection, embedding = learner(images, return_embedding=True)
print("VALUE projection", float(projection.abs().mean()))
print("VALUE embedding", float(embedding.abs().mean()))
print("VALUE target", float(sum(p.abs().sum() for p in learner.target_encoder.parameters())))
''',
    "mlp_mixer": '''
import torch
import torch.nn.functional as F
from mlp_mixer_pytorch import MLPMixer, Permutator

images = torch.randn(2, 3, 8, 8)
labels = torch.tensor([1, 3])
for name, model in (("mixer", MLPMixer(image_size=8, channels=3, patch_size=4, dim=16, depth=2, num_classes=5)),
                    ("permutator", Permutator(image_size=8, patch_size=4, dim=16, depth=2, num_classes=5,
                                              segments=4))):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(3):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        print("loss", loss.item())
    with torch.no_grad():
        print("VALUE " + name + "_logits", float(model(images).abs().mean()))
''',
}
