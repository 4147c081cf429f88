"""The `heldout66` set of bench/real_world.py (`--set heldout66`): recommendation and text recognition:
pmixer/SASRec.pytorch (self-attentive sequential recommendation: python/model.py's SASRec and python/utils.py's
sampler and evaluation, trained as python/main.py trains it), gusye1234/LightGCN-PyTorch (code/ as it is, main.py run
whole: LightGCN over a torch.sparse normalised adjacency and PureMF, the BPR loss, its Test() with top-k metrics) and
meijieru/crnn.pytorch (models/crnn.py's CRNN of convolutions and bidirectional LSTMs, utils.py's strLabelConverter,
averager and loadData, trained as train.py trains it with a CTC loss), converted as a new user would convert them,
through drivers of ours calling their documented entry points.

    python bench/real_world.py --mirrors /work/.mirror --set heldout66 [--only sasrec_post,lightgcn_lgn]

- SASRec (python/model.py and python/utils.py as they are; main.py's own loop is the driver's: main.py starts its
  WarpSampler with n_workers=3, three processes whose batches reach the queue in whatever order they are ready, so
  two runs see different batches; the driver starts it with one worker): data/syn.txt in the repository's format
  (one `user item` line per interaction, in time order; 30 users, 40 items, 4 to 12 interactions each) read by
  build_index and data_partition, `SASRec(usernum, itemnum, args)` (maxlen 10, hidden 16, 2 blocks), main.py's
  xavier_normal_ over every parameter (the failures passed), the padding rows zeroed through `.weight.data[0, :]`,
  BCEWithLogitsLoss on the positions `np.where(pos != 0)` picks, the l2_emb term, Adam (betas 0.9, 0.98), two epochs
  of four batches of 8, then utils.evaluate and evaluate_valid (NDCG@10, HR@10 over 100 sampled negatives) after
  each epoch (printed, not compared: evaluate's 100 negatives are drawn with replacement from the items outside
  the user's training items, so they can repeat the held-out item, and `predictions.argsort().argsort()[0]` then
  ranks tied scores: torch's CPU argsort (stable=False) orders ties its own way, MindSpore's keeps their order, and
  NDCG@10 and HR@10 differ by such ties alone); VALUEs: the final predict() logits (mean magnitude, largest).
  - sasrec_post: norm_first False (the layer norm after the attention's residual), one head, l2_emb 0.
  - sasrec_prenorm: norm_first True, two heads, l2_emb 1e-3.
- LightGCN (code/*.py as they are; main.py run whole by a driver that writes the data, sets sys.argv and imports it;
  tensorboardX a stand-in (`--tensorboard 0`); the C++ sampler not built: utils.py falls back on its Python
  sampler, as it does where cppimport is missing): ../data/gowalla/train.txt and test.txt in the repository's format
  (one `user item item ...` line per user; 50 users, 60 items), the normalised adjacency built by
  Loader.getSparseGraph (scipy) and read as a torch.sparse tensor, `register.MODELS[model](config, dataset)`,
  BPRLoss (Adam) stepped by Procedure.BPR_train_original, Procedure.Test at epoch 0 (top-k with the training items
  excluded through `rating[exclude_index, exclude_items] = -(1<<10)`, recall/precision/NDCG at 5 and 10),
  torch.save of the state_dict after each epoch:
  - lightgcn_lgn: `--model lgn --layer 3` (torch.sparse.mm propagation, stack and mean of the layers).
  - lightgcn_mf: `--model mf` (PureMF).
  - lightgcn_dropout: `--model lgn --layer 2 --dropout 1 --keepprob 0.7` (the graph's edges dropped by
    `torch.rand(len(values)) + keep_prob` rounded down, a new torch.sparse tensor built of the kept ones).
- CRNN (models/ and utils.py as they are; train.py reads lmdb databases through dataset.py, which imports torchvision
  and lmdb, and its loss is warpctc_pytorch's CUDA extension, so the driver does what train.py does: its
  weights_init, the global image/text/length tensors filled by utils.loadData's `v.data.resize_(...).copy_(...)`,
  trainBatch and val as written, with torch's nn.CTCLoss(reduction='sum') over log_softmax for warp-ctc's summed
  loss over activations; Python 3.10 moved collections.Iterable, which utils.py spells: the driver sets it back):
  16 training and 8 validation grey 32 x 64 images of 5 characters each (a stripe pattern per character; since
  torch 0.4 loadData's resize_ through .data no longer resizes the global tensors, so every batch has the shapes
  they are made with: the image tensor (batchSize, 1, 32, 64) where train.py makes (batchSize, 3, imgH, imgH)),
  normalised as resizeNormalize does, batch 4, shuffled; `CRNN(32, 1, 37, nh=16)`, two epochs, val() at the end of
  each (greedy decoding by strLabelConverter.decode); VALUEs: the validation loss and accuracy, the mean of the final
  activations:
  - crnn_adam: `--adam --lr 0.001 --beta1 0.5`, leakyRelu True.
  - crnn_adadelta: `--adadelta` (lr 1.0), ReLU.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

SASREC = "pmixer+SASRec.pytorch@fde8a9c08febc2c898dc269b1d98ab762c50d2be"
LIGHTGCN = "gusye1234+LightGCN-PyTorch@947ca2b3b1d2d3545b114145710cb06c4e57b3d2"
CRNN = "meijieru+crnn.pytorch@3cc7904c5ba20b18fcdc2d02ac2b24a9be9eafaf"

_SASREC_DRIVER = '''
import argparse
import os

import numpy as np
import torch

from model import SASRec
from utils import *

# a small dataset in the repository's format: data/<name>.txt, one "user item" line per interaction, in time order
rng = np.random.RandomState(5)
os.makedirs('data', exist_ok=True)
with open('data/syn.txt', 'w') as f:
    for u in range(1, 31):
        start, stride = rng.randint(1, 41), u % 3 + 1
        for k in range(rng.randint(4, 13)):
            f.write('%d %d\\n' % (u, (start + k * stride + rng.randint(0, 2)) % 40 + 1))

args = argparse.Namespace(dataset='syn', train_dir='h66', batch_size=8, lr=0.001, maxlen=10, hidden_units=16,
                          num_blocks=2, num_epochs=2, num_heads={heads}, dropout_rate=0.2, l2_emb={l2_emb},
                          device='cpu', inference_only=False, state_dict_path=None, norm_first={norm_first})
u2i_index, i2u_index = build_index(args.dataset)
dataset = data_partition(args.dataset)
[user_train, user_valid, user_test, usernum, itemnum] = dataset
num_batch = (len(user_train) - 1) // args.batch_size + 1
cc = 0.0
for u in user_train:
    cc += len(user_train[u])
print('average sequence length: %.2f' % (cc / len(user_train)))

sampler = WarpSampler(user_train, usernum, itemnum, batch_size=args.batch_size, maxlen=args.maxlen, n_workers=1)
model = SASRec(usernum, itemnum, args).to(args.device)
for name, param in model.named_parameters():
    try:
        torch.nn.init.xavier_normal_(param.data)
    except:
        pass
model.pos_emb.weight.data[0, :] = 0
model.item_emb.weight.data[0, :] = 0
model.train()

bce_criterion = torch.nn.BCEWithLogitsLoss()
adam_optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, betas=(0.9, 0.98))
for epoch in range(1, args.num_epochs + 1):
    for step in range(num_batch):
        u, seq, pos, neg = sampler.next_batch()
        u, seq, pos, neg = np.array(u), np.array(seq), np.array(pos), np.array(neg)
        pos_logits, neg_logits = model(u, seq, pos, neg)
        pos_labels, neg_labels = torch.ones(pos_logits.shape, device=args.device), torch.zeros(neg_logits.shape, device=args.device)
        adam_optimizer.zero_grad()
        indices = np.where(pos != 0)
        loss = bce_criterion(pos_logits[indices], pos_labels[indices])
        loss += bce_criterion(neg_logits[indices], neg_labels[indices])
        for param in model.item_emb.parameters(): loss += args.l2_emb * torch.sum(param ** 2)
        loss.backward()
        adam_optimizer.step()
        print("loss in epoch {{}} iteration {{}}: {{}}".format(epoch, step, loss.item()))
    model.eval()
    t_test = evaluate(model, dataset, args)
    t_valid = evaluate_valid(model, dataset, args)
    print('epoch:%d, valid (NDCG@10: %.4f, HR@10: %.4f), test (NDCG@10: %.4f, HR@10: %.4f)'
          % (epoch, t_valid[0], t_valid[1], t_test[0], t_test[1]))
    model.train()
sampler.close()
model.eval()
with torch.no_grad():
    logits = model.predict(np.array([1]), np.array([[0] * 6 + [3, 4, 5, 6]]), np.arange(1, itemnum + 1))
print("VALUE predict", float(logits.abs().mean()))
print("VALUE predict_max", float(logits.max()))
'''

_LIGHTGCN_DRIVER = '''
import os
import sys

import numpy as np

# the gowalla format: train.txt and test.txt, one line per user, "user item item ...", ids from 0
rng = np.random.RandomState(7)
n_users, n_items = 50, 60     # Test() asserts len(users) // testbatch + 1 batches: 50 users, 4 a batch
folder = os.path.join('..', 'data', 'gowalla')
os.makedirs(folder, exist_ok=True)
if os.path.exists(os.path.join(folder, 's_pre_adj_mat.npz')):
    os.remove(os.path.join(folder, 's_pre_adj_mat.npz'))     # built again from train.txt on every run
with open(os.path.join(folder, 'train.txt'), 'w') as train, open(os.path.join(folder, 'test.txt'), 'w') as test:
    for u in range(n_users):
        group = u % 4
        pool = [i for i in range(n_items) if i % 4 == group or rng.rand() < 0.1]
        items = sorted(rng.choice(pool, rng.randint(5, 9), replace=False).tolist())
        train.write(' '.join(str(x) for x in [u] + items[:-2]) + '\\n')
        test.write(' '.join(str(x) for x in [u] + items[-2:]) + '\\n')

sys.argv = ['main.py', '--dataset', 'gowalla', '--model', '{model}', '--recdim', '16', '--layer', '{layer}',
            '--bpr_batch', '64', '--epochs', '2', '--testbatch', '4', '--tensorboard', '0', '--lr', '0.01',
            '--decay', '1e-4', '--topks', '[5, 10]', '--dropout', '{dropout}', '--keepprob', '0.7']
import main
'''

_TENSORBOARDX_STAND_IN = """
\"\"\"A stand-in written by bench/_rw_heldout66.py: tensorboardX is not installed; LightGCN's main.py imports its
SummaryWriter, which `--tensorboard 0` leaves unused.\"\"\"


class SummaryWriter:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("the stand-in's SummaryWriter is imported, not used")
"""

_CRNN_DRIVER = '''
import collections
import collections.abc
if not hasattr(collections, 'Iterable'):    # utils.py's collections.Iterable (collections.abc's since Python 3.10)
    collections.Iterable = collections.abc.Iterable
import random

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
import torch.utils.data
from torch.autograd import Variable

import utils
import models.crnn as crnn

manualSeed = 1234
random.seed(manualSeed)
np.random.seed(manualSeed)
torch.manual_seed(manualSeed)
alphabet = '0123456789abcdefghijklmnopqrstuvwxyz'
imgH, imgW, nh, batchSize, nepoch = 32, 64, 16, 4, 2
displayInterval, valInterval, n_test_disp = 2, 4, 4
adam, adadelta, lr, beta1 = {adam}, {adadelta}, 0.001, 0.5


class TextImages(torch.utils.data.Dataset):
    """what lmdbDataset and alignCollate give: grey text-line images normalised as resizeNormalize does, and their
    strings; each character a stripe pattern of its own"""

    def __init__(self, n, seed):
        r = np.random.RandomState(seed)
        self.items = []
        for _ in range(n):
            text = ''.join(alphabet[k] for k in r.randint(0, 12, 5))
            img = r.rand(imgH, imgW).astype(np.float32) * 0.2
            for j, ch in enumerate(text):
                k = alphabet.index(ch)
                x0 = 3 + j * 12
                img[4 + k % 3:28 - k % 2, x0:x0 + 2 + k % 4] += 0.7
                img[6 + (k * 5) % 20, x0:x0 + 9] += 0.5
            self.items.append((torch.from_numpy((np.clip(img, 0, 1) - 0.5) / 0.5)[None], text))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        return self.items[index]


train_dataset = TextImages(16, 1)
train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=batchSize, shuffle=True)
test_dataset = TextImages(8, 2)

nclass = len(alphabet) + 1
nc = 1

converter = utils.strLabelConverter(alphabet)
ctc = nn.CTCLoss(reduction='sum', zero_infinity=True)


def criterion(preds, text, preds_size, length):
    """warp-ctc's CTCLoss: the loss summed over the batch, of activations (the softmax its own)"""
    return ctc(preds.log_softmax(2), text, preds_size, length)


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find('Conv') != -1:
        m.weight.data.normal_(0.0, 0.02)
    elif classname.find('BatchNorm') != -1:
        m.weight.data.normal_(1.0, 0.02)
        m.bias.data.fill_(0)


crnn = crnn.CRNN(imgH, nc, nclass, nh, leakyRelu={leaky})
crnn.apply(weights_init)
print(crnn)

# train.py's (batchSize, 3, imgH, imgH): loadData's `v.data.resize_(...)` resized the tensor in torch 0.x; since 0.4
# .data is another tensor object, so the tensor keeps the shape it was made with: made here with the batches' own
image = torch.FloatTensor(batchSize, 1, imgH, imgW)
text = torch.IntTensor(batchSize * 5)
length = torch.IntTensor(batchSize)
image = Variable(image)
text = Variable(text)
length = Variable(length)

loss_avg = utils.averager()
if adam:
    optimizer = optim.Adam(crnn.parameters(), lr=lr, betas=(beta1, 0.999))
elif adadelta:
    optimizer = optim.Adadelta(crnn.parameters())
else:
    optimizer = optim.RMSprop(crnn.parameters(), lr=lr)


def val(net, dataset, criterion, max_iter=100):
    print('Start val')
    for p in crnn.parameters():
        p.requires_grad = False
    net.eval()
    data_loader = torch.utils.data.DataLoader(dataset, shuffle=False, batch_size=batchSize)
    val_iter = iter(data_loader)
    i = 0
    n_correct = 0
    loss_avg = utils.averager()
    max_iter = min(max_iter, len(data_loader))
    for i in range(max_iter):
        data = next(val_iter)
        i += 1
        cpu_images, cpu_texts = data
        batch_size = cpu_images.size(0)
        utils.loadData(image, cpu_images)
        t, l = converter.encode(cpu_texts)
        utils.loadData(text, t)
        utils.loadData(length, l)
        preds = crnn(image)
        preds_size = Variable(torch.IntTensor([preds.size(0)] * batch_size))
        cost = criterion(preds, text, preds_size, length) / batch_size
        loss_avg.add(cost)
        _, preds = preds.max(2)
        preds = preds.transpose(1, 0).contiguous().view(-1)
        sim_preds = converter.decode(preds.data, preds_size.data, raw=False)
        for pred, target in zip(sim_preds, cpu_texts):
            if pred == target.lower():
                n_correct += 1
    raw_preds = converter.decode(preds.data, preds_size.data, raw=True)[:n_test_disp]
    for raw_pred, pred, gt in zip(raw_preds, sim_preds, cpu_texts):
        print('%-20s => %-20s, gt: %-20s' % (raw_pred, pred, gt))
    accuracy = n_correct / float(max_iter * batchSize)
    print('Test loss: %f, accuray: %f' % (loss_avg.val(), accuracy))
    print("VALUE val_loss", float(loss_avg.val()))
    print("VALUE accuracy", accuracy)


def trainBatch(net, criterion, optimizer):
    data = next(train_iter)
    cpu_images, cpu_texts = data
    batch_size = cpu_images.size(0)
    utils.loadData(image, cpu_images)
    t, l = converter.encode(cpu_texts)
    utils.loadData(text, t)
    utils.loadData(length, l)
    preds = crnn(image)
    preds_size = Variable(torch.IntTensor([preds.size(0)] * batch_size))
    cost = criterion(preds, text, preds_size, length) / batch_size
    crnn.zero_grad()
    cost.backward()
    optimizer.step()
    return cost


for epoch in range(nepoch):
    train_iter = iter(train_loader)
    i = 0
    while i < len(train_loader):
        for p in crnn.parameters():
            p.requires_grad = True
        crnn.train()
        cost = trainBatch(crnn, criterion, optimizer)
        loss_avg.add(cost)
        i += 1
        if i % displayInterval == 0:
            print('[%d/%d][%d/%d] Loss: %f' % (epoch, nepoch, i, len(train_loader), loss_avg.val()))
            loss_avg.reset()
        if i % valInterval == 0:
            val(crnn, test_dataset, criterion)
crnn.eval()
with torch.no_grad():
    out = crnn(torch.stack([test_dataset[k][0] for k in range(4)]))
print("VALUE activations", float(out.abs().mean()))
'''

_LIGHTGCN_FILES = ",".join("code/" + f for f in ("main.py", "world.py", "parse.py", "register.py", "Procedure.py",
                                                  "model.py", "utils.py", "dataloader.py"))
_SASREC_FILES = "python/model.py,python/utils.py"
_CRNN_FILES = "models,utils.py"

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("sasrec_post", SASREC, _SASREC_FILES, "driver.py", [], None),
    ("sasrec_prenorm", SASREC, _SASREC_FILES, "driver.py", [], None),
    ("lightgcn_lgn", LIGHTGCN, _LIGHTGCN_FILES, "driver.py", [], None),
    ("lightgcn_mf", LIGHTGCN, _LIGHTGCN_FILES, "driver.py", [], None),
    ("lightgcn_dropout", LIGHTGCN, _LIGHTGCN_FILES, "driver.py", [], None),
    ("crnn_adam", CRNN, _CRNN_FILES, "driver.py", [], None),
    ("crnn_adadelta", CRNN, _CRNN_FILES, "driver.py", [], None),
]

DEPS: dict = {}

# Drivers: our own code, through the libraries' documented entry points.
DRIVERS = {
    "sasrec_post": _SASREC_DRIVER.format(heads=1, l2_emb=0.0, norm_first=False),
    "sasrec_prenorm": _SASREC_DRIVER.format(heads=2, l2_emb=1e-3, norm_first=True),
    "lightgcn_lgn": _LIGHTGCN_DRIVER.format(model="lgn", layer=3, dropout=0),
    "lightgcn_mf": _LIGHTGCN_DRIVER.format(model="mf", layer=3, dropout=0),
    "lightgcn_dropout": _LIGHTGCN_DRIVER.format(model="lgn", layer=2, dropout=1),
    "crnn_adam": _CRNN_DRIVER.format(adam=True, adadelta=False, leaky=True),
    "crnn_adadelta": _CRNN_DRIVER.format(adam=False, adadelta=True, leaky=False),
}

FILES = {name: {"tensorboardX.py": _TENSORBOARDX_STAND_IN} for name, *_ in PROGRAMS if name.startswith("lightgcn")}

# SASRec: two epochs of four batches; LightGCN: two epochs of five batches; CRNN: two epochs of four batches
LOSSES = {name: 8 for name, *_ in PROGRAMS}
