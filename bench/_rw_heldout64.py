"""The `heldout64` set of bench/real_world.py (`--set heldout64`): a patch transformer for time series, a neural
audio codec and deep graph convolutions: yuqinie98/PatchTST (PatchTST_supervised: the PatchTST model with its
RevIN, patching, series decomposition and per-channel heads, trained by exp/exp_main.py's Exp_Main with its
OneCycleLR 'TST' schedule), facebookresearch/encodec (the SEANet encoder and decoder with weight-normed or
time-group-normed streaming convolutions and LSTMs, the residual vector quantizer with k-means initialization, EMA
codebooks and dead-code expiry, EncodecModel's framed encode/decode, the loss Balancer's autograd.grad) and
chennnM/GCNII (GCNII and GCNII* on a citation graph in the Planetoid format, torch.spmm over its sparse
adjacency, train.py's train/validate/test). tkipf/pygcn, named for this set, is heldout17's already: GCNII, a
deeper GCN on the same kind of data, takes its place. Converted as a new user would convert them, through drivers
of ours calling their documented entry points.

    python bench/real_world.py --mirrors /work/.mirror --set heldout64 [--only patchtst_revin,gcnii]

Extra packages (only in the bench's venv, not in setup.sh): pandas<3, scikit-learn, matplotlib.

- PatchTST (PatchTST_supervised's data_provider/, exp/, layers/, models/, utils/ as they are): a driver writes a
  CSV in the ETT format (date, HUFL, HULL, MUFL, MULL, LUFL, LULL, OT; 120 hourly rows of our own series), seeds
  as run_longExp.py does (random, torch and numpy with --random_seed 2021) and runs what run_longExp.py runs for
  one iteration: an argparse.Namespace with run_longExp.py's arguments (scripts/PatchTST/etth1.sh's, made small:
  the 'custom' data, Dataset_Custom's 70/20/10 split of the file; seq_len 16, label_len 4, pred_len 4, patch_len
  4, stride 2, d_model 16, 2 heads, d_ff 32, 2 encoder layers, batch 8, 2 epochs of 8 steps), `Exp_Main(args)`,
  `exp.train(setting)` (Adam, MSELoss, vali each epoch, EarlyStopping's torch.save and the reload of the best
  checkpoint, the learning rate schedule) and `exp.test(setting)`, whose mse, mae and rse (read back from the
  result.txt it appends to) and the mean |prediction| of the pred.npy it saves are VALUEs.
  - patchtst_revin: `--revin 1 --affine 1` (RevIN's learnable affine weight and bias), padding_patch 'end'
    (ReplicationPad1d), features M, `--lradj TST` (OneCycleLR stepped after every batch, adjust_learning_rate
    reading scheduler.get_last_lr()).
  - patchtst_decomp: `--decomposition 1 --kernel_size 5` (series_decomp's moving average: two backbones, trend and
    residual), `--individual 1` (a Flatten_Head per channel), `--subtract_last 1` (RevIN subtracting the last
    value), no patch padding, features MS, `--lradj type3`.
  - patchtst_univariate: `--revin 0`, features S (enc_in 1, target OT), 3 encoder layers, `--lradj TST` with
    pct_start 0.4.
- encodec (the encodec package as it is; encodec/utils.py and msstftd.py import torchaudio, not importable beside
  this torch: a stand-in of ours on both sides that nothing here calls): a driver builds a small model from the
  package's classes as EncodecModel._get_model does (SEANetEncoder and SEANetDecoder with 4 filters, ratios
  [4, 2], dimension 16; ResidualVectorQuantizer with 4 quantizers of 32 bins; EncodecModel at 800 Hz, so a
  quantizer is 0.5 kbps), two 256-sample mono waveforms of our own (sines with torch.randn noise), Adam (lr 3e-4,
  betas 0.5, 0.9) and four training steps (encoder, `quantizer(emb, frame_rate, bandwidth)`'s QuantizedResult,
  decoder; L1 and L2 reconstruction losses and the commitment penalty), then eval mode, set_target_bandwidth and
  `model.encode(x)` / `model.decode(frames)` / `model(x)` at two bandwidths: the codes' mean, the reconstructions'
  mean |.| and error are VALUEs.
  - encodec_train: non-causal, weight_norm, two LSTM layers, k-means initialization of the codebooks (5
    iterations, on the first batch: torch.randperm), bandwidth 2.0 (4 quantizers) in training; the loss summed and
    backward().
  - encodec_balancer: non-causal (GroupNorm is not causal), time_group_norm (GroupNorm), true_skip, no LSTM, uniform (kaiming) codebooks and dead
    code expiry (threshold 2: sample_vectors' randperm/randint replacing unused codes), normalize=True and segment
    0.16 s with overlap 0.5 (EncodecModel's framed encode with its per-frame scale and _linear_overlap_add's
    decode), bandwidth 1.0 (2 quantizers) in training; `penalty.backward(retain_graph=True)` then balancer.py's
    `Balancer({'l1': 1, 'l2': 2}).backward(losses, output)` (autograd.grad of each loss with respect to the
    decoder's output, the gradients rescaled by EMA-averaged norms, `output.backward(out_grad)`).
  - encodec_24khz: `EncodecModel.encodec_model_24khz(pretrained=False)` (the documented entry point: the full-size
    causal 24 kHz model, 32 quantizers of 1024 bins), the codebooks' k-means initialization by one no_grad
    training-mode forward of the quantizer (3 frames for 1024 codes: sample_vectors' torch.randint), then eval,
    set_target_bandwidth(6.0) and 1.5, encode/decode of one 960-sample waveform, and the LM model that
    get_lm_model builds (its checkpoint is a download: LMModel(n_q, 1024) built as get_lm_model builds it, one
    forward over the codes: the probabilities' mean as a VALUE).
- GCNII (model.py and utils.py as they are; train.py moves everything to cuda:0, so a driver does what it does):
  a citation graph in the Planetoid format that utils.load_citation reads (data/ind.cora.{x,y,tx,ty,allx,ally,
  graph} pickles of scipy.sparse matrices, one-hot labels and a dict of neighbour lists, and ind.cora.test.index:
  600 nodes, 24 binary features, 4 classes, 40 training nodes, 500 validation nodes, 60 test nodes, about 1300
  edges, ours), train.py's seeding (random, numpy, torch with --seed 42), `GCNII(...)`, Adam over the two
  parameter groups (convolutions weight decay wd1 0.01, linears wd2 5e-4), and train.py's loop: train() (nll_loss
  of the log-softmax over the training nodes), validate() (no_grad), the best state_dict saved with torch.save
  under pretrained/, patience; then with `--test` test() (load_state_dict(torch.load(...)), eval): the best
  validation loss, the test loss and accuracy are VALUEs.
  - gcnii: 8 layers, hidden 16, alpha 0.1, lamda 0.5, 6 epochs.
  - gcnii_variant: `--variant` (GCNII*: `torch.cat([hi, h0], 1)` into a double-width weight), 4 layers, 6 epochs.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

PATCHTST = "yuqinie98+PatchTST@204c21efe0b39603ad6e2ca640ef5896646ab1a9"
ENCODEC = "facebookresearch+encodec@0e2d0aed29362c8e8f52494baf3e6f99056b214f"
GCNII = "chennnM+GCNII@ca91f5686c4cd09cc1c6f98431a5d5b7e36acc92"

# A CSV in the ETT format, our own series: a daily cycle, a trend, noise from a stream of the driver's own
_ETT_CSV = '''
import datetime
import os

import numpy as np

os.makedirs("./ett/", exist_ok=True)
_rng = np.random.RandomState(7)
_start = datetime.datetime(2016, 7, 1)
with open("./ett/ETTsmall.csv", "w") as f:
    f.write("date,HUFL,HULL,MUFL,MULL,LUFL,LULL,OT\\n")
    for i in range(120):
        stamp = (_start + datetime.timedelta(hours=i)).strftime("%Y-%m-%d %H:%M:%S")
        base = np.sin(2 * np.pi * i / 24.0) + 0.01 * i
        cols = [base * (k + 1) * 0.5 + 0.3 * _rng.randn() for k in range(6)] + [2.0 * base + 0.2 * _rng.randn()]
        f.write(stamp + "," + ",".join("%.4f" % c for c in cols) + "\\n")
'''

_PATCHTST_DRIVER = _ETT_CSV + '''
import argparse
import random

import torch
from exp.exp_main import Exp_Main

# run_longExp.py's arguments (scripts/PatchTST/etth1.sh's, made small)
args = argparse.Namespace(
    random_seed=2021, is_training=1, model_id="ETTsmall_16_4", model="PatchTST", data="custom",
    root_path="./ett/", data_path="ETTsmall.csv", features="{features}", target="OT", freq="h",
    checkpoints="./checkpoints/", seq_len=16, label_len=4, pred_len=4, fc_dropout=0.05, head_dropout=0.0,
    patch_len=4, stride=2, padding_patch={padding_patch}, revin={revin}, affine={affine},
    subtract_last={subtract_last}, decomposition={decomposition}, kernel_size=5, individual={individual},
    embed_type=0, enc_in={enc_in}, dec_in={enc_in}, c_out={enc_in}, d_model=16, n_heads=2, e_layers={e_layers},
    d_layers=1, d_ff=32, moving_avg=25, factor=1, distil=True, dropout=0.05, embed="timeF", activation="gelu",
    output_attention=False, do_predict=False, num_workers=0, itr=1, train_epochs=2, batch_size=8, patience=3,
    learning_rate=0.001, des="Exp", loss="mse", lradj="{lradj}", pct_start={pct_start}, use_amp=False,
    use_gpu=False, gpu=0, use_multi_gpu=False, devices="0", test_flop=False)
# as run_longExp.py
random.seed(args.random_seed)
torch.manual_seed(args.random_seed)
np.random.seed(args.random_seed)
setting = "{{}}_{{}}_{{}}_ft{{}}_sl{{}}_ll{{}}_pl{{}}_dm{{}}_nh{{}}_el{{}}_dl{{}}_df{{}}_fc{{}}_eb{{}}_dt{{}}_{{}}_{{}}".format(
    args.model_id, args.model, args.data, args.features, args.seq_len, args.label_len, args.pred_len, args.d_model,
    args.n_heads, args.e_layers, args.d_layers, args.d_ff, args.factor, args.embed, args.distil, args.des, 0)
exp = Exp_Main(args)
exp.train(setting)
exp.test(setting)

folder = "./results/" + setting + "/"
with open("result.txt") as f:
    last = [line for line in f if line.startswith("mse:")][-1]
for part in last.split(", "):
    key, number = part.strip().split(":")
    print("VALUE test_" + key, float(np.mean(np.array(number.strip("[]").split(), dtype=np.float64))))
print("VALUE pred", float(np.abs(np.load(folder + "pred.npy")).mean()))
'''

_ENCODEC_SMALL = '''
import math

import torch
import torch.nn.functional as F
from encodec.model import EncodecModel
from encodec import modules as m
from encodec import quantization as qt
from encodec.balancer import Balancer

torch.manual_seed(0)
# as EncodecModel._get_model builds a model, made small
encoder = m.SEANetEncoder(channels=1, dimension=16, n_filters=4, n_residual_layers=1, ratios=[4, 2],
                          norm="{norm}", causal={causal}, true_skip={true_skip}, lstm={lstm})
decoder = m.SEANetDecoder(channels=1, dimension=16, n_filters=4, n_residual_layers=1, ratios=[4, 2],
                          norm="{norm}", causal={causal}, true_skip={true_skip}, lstm={lstm})
quantizer = qt.ResidualVectorQuantizer(dimension=encoder.dimension, n_q=4, bins=32, kmeans_init={kmeans_init},
                                       kmeans_iters=5, threshold_ema_dead_code=2)
model = EncodecModel(encoder, decoder, quantizer, [1.0, 2.0], 800, 1, normalize={normalize}, segment={segment},
                     overlap=0.5)
optimizer = torch.optim.Adam(model.parameters(), lr=3e-4, betas=(0.5, 0.9))

t = torch.arange(256).float() / 800
x = torch.stack([0.5 * torch.sin(2 * math.pi * 50 * t), 0.3 * torch.sin(2 * math.pi * 120 * t + 1.0)])[:, None]
x = x + 0.02 * torch.randn(2, 1, 256)

model.train()
for step in range(4):
    emb = model.encoder(x)
    qv = model.quantizer(emb, model.frame_rate, {train_bandwidth})
    out = model.decoder(qv.quantized)[..., :x.shape[-1]]
    l1 = F.l1_loss(out, x)
    l2 = F.mse_loss(out, x)
    optimizer.zero_grad()
{backward}    optimizer.step()
    print("step", step, float(l1), float(l2), float(qv.penalty), float(qv.bandwidth))

model.eval()
for bandwidth in [1.0, 2.0]:
    model.set_target_bandwidth(bandwidth)
    with torch.no_grad():
        frames = model.encode(x)
        codes = torch.cat([codes for codes, _ in frames], -1)
        decoded = model.decode(frames)
        y = model(x)
    print("VALUE frames_%g" % bandwidth, float(len(frames)))
    print("VALUE codes_%g" % bandwidth, float(codes.float().mean()))
    print("VALUE decoded_%g" % bandwidth, float(decoded.abs().mean()))
    print("VALUE error_%g" % bandwidth, float((y - x).abs().mean()))
'''

_ENCODEC_SUM_BACKWARD = '''\
    loss = l1 + l2 + qv.penalty
    loss.backward()
'''

_ENCODEC_BALANCER_BACKWARD = '''\
    qv.penalty.backward(retain_graph=True)
    balancer.backward({'l1': l1, 'l2': l2}, out)
'''

_ENCODEC_24KHZ = '''
import math

import torch
from encodec import EncodecModel
from encodec.model import LMModel

torch.manual_seed(0)
model = EncodecModel.encodec_model_24khz(pretrained=False)
t = torch.arange(960).float() / 24000
x = (0.4 * torch.sin(2 * math.pi * 440 * t) + 0.02 * torch.randn(960))[None, None]
# the codebooks' k-means initialization on this batch, as a first training forward would do it
model.quantizer.train()
with torch.no_grad():
    model.quantizer(model.encoder(x), model.frame_rate, 6.0)
model.eval()
for bandwidth in [6.0, 1.5]:
    model.set_target_bandwidth(bandwidth)
    with torch.no_grad():
        frames = model.encode(x)
        codes = frames[0][0]
        y = model.decode(frames)
        emb = model.encoder(x)
    print("VALUE n_q_%g" % bandwidth, float(codes.shape[1]))
    print("VALUE codes_%g" % bandwidth, float(codes.float().mean()))
    print("VALUE emb_%g" % bandwidth, float(emb.abs().mean()))
    print("VALUE decoded_%g" % bandwidth, float(y.abs().mean()))
# get_lm_model's LMModel (its checkpoint is a download): built as get_lm_model builds it
lm = LMModel(model.quantizer.n_q, model.quantizer.bins, num_layers=2, dim=32, past_context=int(3.5 * model.frame_rate))
lm.eval()
with torch.no_grad():
    probas, states, offset = lm(codes)
print("VALUE lm_probas", float(probas.mean()))
print("VALUE lm_max", float(probas.max(dim=1).values.mean()))
'''

_TORCHAUDIO = '''
"""A stand-in written by bench/_rw_heldout64.py: torchaudio is not importable beside this torch; encodec's utils.py
(convert_audio, save_audio) and msstftd.py (its discriminator's Spectrogram) import it, and nothing here calls
them."""


def load(*args, **kwargs):
    raise NotImplementedError("the stand-in's torchaudio is imported, not used")


def save(*args, **kwargs):
    raise NotImplementedError("the stand-in's torchaudio is imported, not used")


class _Transforms:
    def __getattr__(self, name):
        raise NotImplementedError("the stand-in's torchaudio is imported, not used")


transforms = _Transforms()
functional = _Transforms()
'''

# A citation graph in the Planetoid format (tkipf/gcn's ind.<dataset>.* pickles), ours
_PLANETOID = '''
import os
import pickle

import numpy as np
import scipy.sparse as sp

_rng = np.random.RandomState(5)
N, N_FEAT, C, N_TRAIN, N_TEST = 600, 24, 4, 40, 60
classes = _rng.randint(0, C, N)
onehot = np.eye(C, dtype=np.int32)[classes]
features = (_rng.rand(N, N_FEAT) < 0.12).astype(np.float32)
features[np.arange(N), classes * (N_FEAT // C) + _rng.randint(0, N_FEAT // C, N)] = 1.0
graph = {{i: [] for i in range(N)}}
for i in range(N):
    for _ in range(2):
        same = np.flatnonzero(classes == classes[i]) if _rng.rand() < 0.8 else np.arange(N)
        j = int(same[_rng.randint(len(same))])
        if j != i and j not in graph[i]:
            graph[i].append(j)
            graph[j].append(i)
test_index = N - N_TEST + _rng.permutation(N_TEST)
os.makedirs("data", exist_ok=True)
objects = {{"x": sp.csr_matrix(features[:N_TRAIN]), "y": onehot[:N_TRAIN],
           "allx": sp.csr_matrix(features[:N - N_TEST]), "ally": onehot[:N - N_TEST],
           "tx": sp.csr_matrix(features[test_index]), "ty": onehot[test_index], "graph": graph}}
for name, obj in objects.items():
    with open("data/ind.cora.%s" % name, "wb") as f:
        pickle.dump(obj, f, protocol=2)
with open("data/ind.cora.test.index", "w") as f:
    f.write("\\n".join(str(i) for i in test_index) + "\\n")
os.makedirs("pretrained", exist_ok=True)
'''

_GCNII_DRIVER = _PLANETOID + '''
import argparse
import random
import uuid

import torch
import torch.nn.functional as F
import torch.optim as optim
from utils import *
from model import *

# train.py's arguments
args = argparse.Namespace(seed=42, epochs=6, lr=0.01, wd1=0.01, wd2=5e-4, layer={layer}, hidden=16, dropout=0.6,
                          patience=100, data="cora", dev=0, alpha=0.1, lamda=0.5, variant={variant}, test=True)
random.seed(args.seed)
np.random.seed(args.seed)
torch.manual_seed(args.seed)

adj, features, labels, idx_train, idx_val, idx_test = load_citation(args.data)
device = torch.device("cpu")     # train.py's cuda:<dev>
features = features.to(device)
adj = adj.to(device)
checkpt_file = "pretrained/" + uuid.uuid4().hex + ".pt"

model = GCNII(nfeat=features.shape[1], nlayers=args.layer, nhidden=args.hidden, nclass=int(labels.max()) + 1,
              dropout=args.dropout, lamda=args.lamda, alpha=args.alpha, variant=args.variant).to(device)
optimizer = optim.Adam([{{"params": model.params1, "weight_decay": args.wd1}},
                        {{"params": model.params2, "weight_decay": args.wd2}}], lr=args.lr)


def train():
    model.train()
    optimizer.zero_grad()
    output = model(features, adj)
    acc_train = accuracy(output[idx_train], labels[idx_train].to(device))
    loss_train = F.nll_loss(output[idx_train], labels[idx_train].to(device))
    loss_train.backward()
    optimizer.step()
    return loss_train.item(), acc_train.item()


def validate():
    model.eval()
    with torch.no_grad():
        output = model(features, adj)
        loss_val = F.nll_loss(output[idx_val], labels[idx_val].to(device))
        acc_val = accuracy(output[idx_val], labels[idx_val].to(device))
        return loss_val.item(), acc_val.item()


def test():
    model.load_state_dict(torch.load(checkpt_file))
    model.eval()
    with torch.no_grad():
        output = model(features, adj)
        loss_test = F.nll_loss(output[idx_test], labels[idx_test].to(device))
        acc_test = accuracy(output[idx_test], labels[idx_test].to(device))
        return loss_test.item(), acc_test.item()


bad_counter = 0
best = 999999999
best_epoch = 0
acc = 0
for epoch in range(args.epochs):
    loss_tra, acc_tra = train()
    loss_val, acc_val = validate()
    print("Epoch:{{:04d}}".format(epoch + 1), "train", "loss:{{:.3f}}".format(loss_tra),
          "acc:{{:.2f}}".format(acc_tra * 100), "| val", "loss:{{:.3f}}".format(loss_val),
          "acc:{{:.2f}}".format(acc_val * 100))
    if loss_val < best:
        best = loss_val
        best_epoch = epoch
        acc = acc_val
        torch.save(model.state_dict(), checkpt_file)
        bad_counter = 0
    else:
        bad_counter += 1
    if bad_counter == args.patience:
        break
loss_test, acc_test = test()
print("VALUE best_val_loss", best)
print("VALUE best_epoch", float(best_epoch))
print("VALUE test_loss", loss_test)
print("VALUE test_acc", acc_test)
'''

_PATCHTST_FILES = "PatchTST_supervised/data_provider,PatchTST_supervised/exp,PatchTST_supervised/layers," \
                  "PatchTST_supervised/models,PatchTST_supervised/utils"

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("patchtst_revin", PATCHTST, _PATCHTST_FILES, "driver.py", [], None),
    ("patchtst_decomp", PATCHTST, _PATCHTST_FILES, "driver.py", [], None),
    ("patchtst_univariate", PATCHTST, _PATCHTST_FILES, "driver.py", [], None),
    ("encodec_train", ENCODEC, "encodec", "driver.py", [], None),
    ("encodec_balancer", ENCODEC, "encodec", "driver.py", [], None),
    ("encodec_24khz", ENCODEC, "encodec", "driver.py", [], None),
    ("gcnii", GCNII, "model.py,utils.py", "driver.py", [], None),
    ("gcnii_variant", GCNII, "model.py,utils.py", "driver.py", [], None),
]

DEPS: dict = {}

# Drivers: our own code, through the libraries' documented entry points.
DRIVERS = {
    "patchtst_revin": _PATCHTST_DRIVER.format(features="M", enc_in=7, padding_patch="'end'", revin=1, affine=1,
                                              subtract_last=0, decomposition=0, individual=0, e_layers=2,
                                              lradj="TST", pct_start=0.3),
    "patchtst_decomp": _PATCHTST_DRIVER.format(features="MS", enc_in=7, padding_patch=None, revin=1, affine=0,
                                               subtract_last=1, decomposition=1, individual=1, e_layers=2,
                                               lradj="type3", pct_start=0.3),
    "patchtst_univariate": _PATCHTST_DRIVER.format(features="S", enc_in=1, padding_patch="'end'", revin=0,
                                                   affine=0, subtract_last=0, decomposition=0, individual=0,
                                                   e_layers=3, lradj="TST", pct_start=0.4),
    "encodec_train": _ENCODEC_SMALL.format(norm="weight_norm", causal=False, true_skip=False, lstm=2,
                                           kmeans_init=True, normalize=False, segment=None, train_bandwidth=2.0,
                                           backward=_ENCODEC_SUM_BACKWARD),
    "encodec_balancer": _ENCODEC_SMALL.replace(
        "model.train()", "balancer = Balancer({{'l1': 1, 'l2': 2}})\nmodel.train()").format(
            norm="time_group_norm", causal=False, true_skip=True, lstm=0, kmeans_init=False, normalize=True,
            segment=0.16, train_bandwidth=1.0, backward=_ENCODEC_BALANCER_BACKWARD),
    "encodec_24khz": _ENCODEC_24KHZ,
    "gcnii": _GCNII_DRIVER.format(layer=8, variant=False),
    "gcnii_variant": _GCNII_DRIVER.format(layer=4, variant=True),
}

FILES = {name: {"torchaudio/__init__.py": _TORCHAUDIO} for name, *_ in PROGRAMS if name.startswith("encodec_")}

# PatchTST: two epochs of 8 steps; encodec: 4 steps (the balancer's: 4 penalty backwards and 4 output
# backwards); GCNII: 6 epochs of one step
LOSSES = {"patchtst_revin": 16, "patchtst_decomp": 16, "patchtst_univariate": 16, "encodec_train": 4,
          "encodec_balancer": 8, "gcnii": 6, "gcnii_variant": 6}
