"""The `heldout12` set of bench/real_world.py (`--set heldout12`): two repositories the converter was never run on,
converted as a new user would convert them, their models trained for a few steps through short drivers (our code, the
repositories' own modules, trained as their train scripts train them).

    python bench/real_world.py --mirrors /work/.mirror --set heldout12 [--only cyclegan_train,textcnn_train]

- aitorzip/PyTorch-CycleGAN, drivers written next to models.py and utils.py (utils.py imports visdom at import, not
  installed here: the drivers put an empty `visdom` module in sys.modules first; its Logger is not used):
  - cyclegan_models: models.py's Generator (ReflectionPad2d, Conv2d, InstanceNorm2d, ReLU(inplace=True), two
    residual blocks `x + self.conv_block(x)`, ConvTranspose2d with output_padding, Tanh) and Discriminator
    (LeakyReLU, `F.avg_pool2d(x, x.size()[2:]).view(x.size()[0], -1)`), initialised by `.apply(weights_init_normal)`
    (class-name tests, torch.nn.init.normal on `.weight.data`); the outputs of both on a 32x32 batch printed.
  - cyclegan_train: the `train` script's loop (which itself imports torchvision, PIL's dataset and visdom): two
    generators (two residual blocks) and two discriminators, one Adam over `itertools.chain` of both generators'
    parameters, LambdaLR schedulers driven by utils.LambdaLR(...).step, inputs allocated as `Tensor(n, c, h, w)`
    and filled by `Variable(input_A.copy_(batch))`, targets by `Tensor(n).fill_(1.0)`; identity, GAN and cycle
    losses summed into one generator step, then each discriminator on real and on a utils.ReplayBuffer's
    push_and_pop of the fakes (`.detach()`), two epochs of one 32x32 batch; the four networks' outputs printed
    after the second epoch's updates (at the scheduled learning rate).
- Shawn1993/cnn-text-classification-pytorch (torchtext-free: mydatasets.py's own Vocab, Dataset and collate_fn),
  drivers written next to model.py, train.py and mydatasets.py; each writes a small rt-polaritydata/ (the MR
  dataset's two files, sentences of our own) in its directory, which MRDataset.splits reads instead of downloading:
  - textcnn_train: model.CNN_Text (Embedding with padding_idx, a ModuleList of Conv2d over (K, D) kernels,
    `F.max_pool1d(i, i.size(2)).squeeze(2)` per kernel size, torch.cat, dropout, Linear) trained by train.train
    itself (Adam built inside the function, F.cross_entropy, the max-norm rescale of fc1.weight under no_grad
    after each step, accuracy from `torch.max(logit, 1)[1] == target`, train.eval at the test interval, the best
    model saved by train.save) over a DataLoader with mydatasets.collate_fn; the best accuracy printed.
  - textcnn_static: the same with `-static` (the embedding's `requires_grad = False`) and `-optimizer adadelta`.
  - textcnn_eval: train.eval (reduction='sum' cross-entropy, accuracy) and train.predict (clean_str, the vocab's
    stoi, `torch.max(output, 1)`) of an untrained model; the accuracy, the logits of two sentences printed.
  - textcnn_legacy: the repository at c3059f4, before it dropped torchtext (not installed here): model.py
    (`from torch.autograd import Variable`) and train.py's train and eval over batches of our own shaped as
    torchtext's legacy Iterator yields them (`.text` (length, batch), `.label` counted from 1, `.batch_size`,
    `.dataset`): `feature.t_(), target.sub_(1)` (one tuple statement writing both in place),
    `torch.max(logit, 1)[1].view(target.size()).data == target.data`, `F.cross_entropy(..., size_average=False)`,
    accuracy as a tensor; eval every 3 steps, the best model saved; the accuracy and logits after training printed.
  (main.py itself is not run: its MR branch downloads the dataset.)

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

CYCLEGAN = "aitorzip+PyTorch-CycleGAN@67da8f9e2b69bd68763451803c7700aaccc92f18"
TEXTCNN = "Shawn1993+cnn-text-classification-pytorch@93415f08168a1ae60635320569f6eca0ae3a40bb"
# the repository before it dropped torchtext (7b34030): train.py reads torchtext's legacy batches
TEXTCNN_LEGACY = "Shawn1993+cnn-text-classification-pytorch@c3059f4e191aa7111cdd8b48c595cd4f69aa2527"

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("cyclegan_models", CYCLEGAN, "models.py,utils.py", "driver.py", [], None),
    ("cyclegan_train", CYCLEGAN, "models.py,utils.py", "driver.py", [], None),
    ("textcnn_train", TEXTCNN, "model.py,train.py,mydatasets.py", "driver.py", [], None),
    ("textcnn_static", TEXTCNN, "model.py,train.py,mydatasets.py", "driver.py", [], None),
    ("textcnn_eval", TEXTCNN, "model.py,train.py,mydatasets.py", "driver.py", [], None),
    ("textcnn_legacy", TEXTCNN_LEGACY, "model.py,train.py", "driver.py", [], None),
]

DEPS: dict = {}

_NO_VISDOM = '''
import sys
import types

sys.modules.setdefault("visdom", types.SimpleNamespace(Visdom=object))     # utils.py imports it; not installed
'''

_MR_DATA = '''
import argparse
import os
import random

words = ["good", "bad", "great", "awful", "fine", "dull", "moving", "boring", "funny", "flat", "the", "film",
         "was", "a", "plot", "very", "not", "it's", "acting", "story"]
draw = random.Random(12)
os.makedirs("rt-polaritydata", exist_ok=True)
for name in ("neg", "pos"):
    with open(os.path.join("rt-polaritydata", "rt-polarity." + name), "w") as f:
        for line in range(24):
            f.write(" ".join(draw.choice(words) for _ in range(draw.randint(3, 9))) + ("!" if line % 3 else ".") + "\\n")


def make_args(text_vocab, label_vocab, **changes):
    args = argparse.Namespace(
        lr=0.01, epochs=1, batch_size=8, log_interval=1, test_interval=3, save_interval=500, save_dir="snapshot",
        early_stop=1000, save_best=True, dropout=0.5, max_norm=0.5, embed_dim=12, kernel_num=4,
        kernel_sizes=[3, 4, 5], static=False, optimizer="adam", cuda=False)
    args.embed_num, args.class_num = len(text_vocab), len(label_vocab)
    for key, value in changes.items():
        setattr(args, key, value)
    return args
'''

_TEXTCNN_TRAIN = _MR_DATA + '''
import torch
from torch.utils.data import DataLoader
import model
import train
import mydatasets

train_dataset, dev_dataset, text_vocab, label_vocab = mydatasets.MRDataset.splits()
train_iter = DataLoader(train_dataset, batch_size=8, shuffle=True, collate_fn=mydatasets.collate_fn)
dev_iter = DataLoader(dev_dataset, batch_size=len(dev_dataset), shuffle=False, collate_fn=mydatasets.collate_fn)
args = make_args(text_vocab, label_vocab__CHANGES__)
cnn = model.CNN_Text(args)
best_acc = train.train(train_iter, dev_iter, cnn, args)
print("VALUE best_acc", float(best_acc))
with torch.no_grad():
    print("VALUE fc1_norm", float(cnn.fc1.weight.norm()))
    print("VALUE embed_sum", float(cnn.embed.weight.abs().sum()))
'''

# Drivers: our own code, through the repositories' modules.
DRIVERS = {
    "cyclegan_models": _NO_VISDOM + '''
import torch
from models import Generator, Discriminator
from utils import weights_init_normal

netG = Generator(3, 3, n_residual_blocks=2)
netD = Discriminator(3)
netG.apply(weights_init_normal)
netD.apply(weights_init_normal)
real = torch.rand(2, 3, 32, 32) * 2 - 1
with torch.no_grad():
    fake = netG(real)
    score = netD(fake)
print("VALUE fake_abs_mean", float(fake.abs().mean()))
print("VALUE fake_sum", float(fake.sum()))
print("VALUE score_sum", float(score.sum()))
print("VALUE score_shape", float(score.shape[0] * 10 + score.shape[1]))
''',
    "cyclegan_train": _NO_VISDOM + '''
import itertools
import torch
from torch.autograd import Variable
from models import Generator, Discriminator
from utils import ReplayBuffer, LambdaLR, weights_init_normal

n_epochs, decay_epoch, batch_size, size, lr = 4, 0, 1, 32, 0.0002
netG_A2B = Generator(3, 3, n_residual_blocks=2)
netG_B2A = Generator(3, 3, n_residual_blocks=2)
netD_A = Discriminator(3)
netD_B = Discriminator(3)
for net in (netG_A2B, netG_B2A, netD_A, netD_B):
    net.apply(weights_init_normal)

criterion_GAN = torch.nn.MSELoss()
criterion_cycle = torch.nn.L1Loss()
criterion_identity = torch.nn.L1Loss()
optimizer_G = torch.optim.Adam(itertools.chain(netG_A2B.parameters(), netG_B2A.parameters()), lr=lr,
                               betas=(0.5, 0.999))
optimizer_D_A = torch.optim.Adam(netD_A.parameters(), lr=lr, betas=(0.5, 0.999))
optimizer_D_B = torch.optim.Adam(netD_B.parameters(), lr=lr, betas=(0.5, 0.999))
lr_scheduler_G = torch.optim.lr_scheduler.LambdaLR(optimizer_G, lr_lambda=LambdaLR(n_epochs, 0, decay_epoch).step)
lr_scheduler_D_A = torch.optim.lr_scheduler.LambdaLR(optimizer_D_A, lr_lambda=LambdaLR(n_epochs, 0, decay_epoch).step)
lr_scheduler_D_B = torch.optim.lr_scheduler.LambdaLR(optimizer_D_B, lr_lambda=LambdaLR(n_epochs, 0, decay_epoch).step)

Tensor = torch.Tensor
input_A = Tensor(batch_size, 3, size, size)
input_B = Tensor(batch_size, 3, size, size)
target_real = Variable(Tensor(batch_size).fill_(1.0), requires_grad=False)
target_fake = Variable(Tensor(batch_size).fill_(0.0), requires_grad=False)
fake_A_buffer = ReplayBuffer()
fake_B_buffer = ReplayBuffer()
dataloader = [{"A": torch.rand(batch_size, 3, size, size) * 2 - 1, "B": torch.rand(batch_size, 3, size, size) * 2 - 1}]

for epoch in range(0, 2):
    for i, batch in enumerate(dataloader):
        real_A = Variable(input_A.copy_(batch["A"]))
        real_B = Variable(input_B.copy_(batch["B"]))

        optimizer_G.zero_grad()
        same_B = netG_A2B(real_B)
        loss_identity_B = criterion_identity(same_B, real_B) * 5.0
        same_A = netG_B2A(real_A)
        loss_identity_A = criterion_identity(same_A, real_A) * 5.0
        fake_B = netG_A2B(real_A)
        pred_fake = netD_B(fake_B)
        loss_GAN_A2B = criterion_GAN(pred_fake, target_real)
        fake_A = netG_B2A(real_B)
        pred_fake = netD_A(fake_A)
        loss_GAN_B2A = criterion_GAN(pred_fake, target_real)
        recovered_A = netG_B2A(fake_B)
        loss_cycle_ABA = criterion_cycle(recovered_A, real_A) * 10.0
        recovered_B = netG_A2B(fake_A)
        loss_cycle_BAB = criterion_cycle(recovered_B, real_B) * 10.0
        loss_G = loss_identity_A + loss_identity_B + loss_GAN_A2B + loss_GAN_B2A + loss_cycle_ABA + loss_cycle_BAB
        loss_G.backward()
        optimizer_G.step()

        optimizer_D_A.zero_grad()
        pred_real = netD_A(real_A)
        loss_D_real = criterion_GAN(pred_real, target_real)
        fake_A = fake_A_buffer.push_and_pop(fake_A)
        pred_fake = netD_A(fake_A.detach())
        loss_D_fake = criterion_GAN(pred_fake, target_fake)
        loss_D_A = (loss_D_real + loss_D_fake) * 0.5
        loss_D_A.backward()
        optimizer_D_A.step()

        optimizer_D_B.zero_grad()
        pred_real = netD_B(real_B)
        loss_D_real = criterion_GAN(pred_real, target_real)
        fake_B = fake_B_buffer.push_and_pop(fake_B)
        pred_fake = netD_B(fake_B.detach())
        loss_D_fake = criterion_GAN(pred_fake, target_fake)
        loss_D_B = (loss_D_real + loss_D_fake) * 0.5
        loss_D_B.backward()
        optimizer_D_B.step()
        print("losses", loss_G.item(), loss_D_A.item(), loss_D_B.item())

    lr_scheduler_G.step()
    lr_scheduler_D_A.step()
    lr_scheduler_D_B.step()
    print("lr", optimizer_G.param_groups[0]["lr"])

# the trained networks' outputs (parameter sums would add up the +-lr moves Adam gives the convolutions' biases
# before InstanceNorm, whose gradients are rounding: the norm cancels them, so the outputs do not see them)
with torch.no_grad():
    print("VALUE G_A2B_out", float(netG_A2B(real_A).abs().mean()))
    print("VALUE G_B2A_out", float(netG_B2A(real_B).abs().mean()))
    print("VALUE D_A_out", float(netD_A(real_A).sum()))
    print("VALUE D_B_out", float(netD_B(real_B).sum()))
''',
    "textcnn_train": _TEXTCNN_TRAIN.replace("__CHANGES__", ""),
    "textcnn_static": _TEXTCNN_TRAIN.replace("__CHANGES__", ', static=True, optimizer="adadelta", lr=1.0'),
    "textcnn_legacy": '''
import argparse
import torch
import model
import train


class Batch:                 # what torchtext's legacy Iterator yields: text (length, batch), labels from 1
    def __init__(self, text, label):
        self.text, self.label, self.batch_size = text, label, text.size(1)


class Batches:
    def __init__(self, texts, labels, batch_size):
        self.texts, self.labels, self.batch_size = texts, labels, batch_size
        self.dataset = list(range(texts.size(0)))

    def __iter__(self):      # new tensors at each pass, as torchtext's
        for i in range(0, self.texts.size(0), self.batch_size):
            yield Batch(self.texts[i:i + self.batch_size].t().clone(), self.labels[i:i + self.batch_size].clone())


g = torch.Generator().manual_seed(3)
texts = torch.randint(1, 30, (44, 9), generator=g)
labels = (texts[:, :3].sum(1) % 2) + 1
args = argparse.Namespace(lr=0.01, epochs=1, log_interval=1, test_interval=3, save_interval=500, save_dir="snapshot",
                          early_stop=1000, save_best=True, dropout=0.5, embed_num=30, embed_dim=12, class_num=2,
                          kernel_num=4, kernel_sizes=[3, 4, 5], static=False, cuda=False)
train_iter = Batches(texts[:36], labels[:36], 8)
dev_iter = Batches(texts[36:], labels[36:], 8)
cnn = model.CNN_Text(args)
train.train(train_iter, dev_iter, cnn, args)
accuracy = train.eval(dev_iter, cnn, args)
print("VALUE accuracy", float(accuracy))
with torch.no_grad():
    logit = cnn(texts[36:])
print("VALUE logit_sum", float(logit.sum()))
print("VALUE logit_abs", float(logit.abs().sum()))
''',
    "textcnn_eval": _MR_DATA + '''
import torch
from torch.utils.data import DataLoader
import model
import train
import mydatasets

train_dataset, dev_dataset, text_vocab, label_vocab = mydatasets.MRDataset.splits(dev_ratio=0.25)
dev_iter = DataLoader(dev_dataset, batch_size=5, shuffle=False, collate_fn=mydatasets.collate_fn)
args = make_args(text_vocab, label_vocab)
cnn = model.CNN_Text(args)
accuracy = train.eval(dev_iter, cnn, args)
print("VALUE accuracy", float(accuracy))
for text in ("the film was very good!", "a dull , boring plot"):
    print("predicted", train.predict(text, cnn, text_vocab, label_vocab, False))
with torch.no_grad():
    feature, target = next(iter(dev_iter))
    logit = cnn(feature)
print("VALUE logit_sum", float(logit.sum()))
print("VALUE logit_abs", float(logit.abs().sum()))
''',
}
