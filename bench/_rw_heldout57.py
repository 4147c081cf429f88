"""The `heldout57` set of bench/real_world.py (`--set heldout57`): time series and tabular/recommendation models.
zhouhaoyi/Informer2020 (Informer and InformerStack: ProbSparse attention with its torch.randint key sampling,
distilling convolutions, the generative decoder; exp/exp_informer.py's train, test and predict), thuml/Autoformer
(Autoformer: series decomposition by moving average, auto-correlation through torch.fft; exp/exp_main.py),
cure-lab/LTSF-Linear (DLinear and NLinear, through its own exp/exp_main.py) and rixwew/pytorch-fm (factorization
machines and their relatives on MovieLens ratings, trained as examples/main.py trains them), converted as a new user
would convert them, through drivers of ours calling their documented entry points.

    python bench/real_world.py --mirrors /work/.mirror --set heldout57 [--only informer,dlinear]

Extra packages (only in the bench's venv, not in setup.sh): pandas<3, scikit-learn, matplotlib, tqdm.

- Informer2020 (data/, exp/, models/, utils/ as they are): a driver writes a CSV in the ETT format (date, HUFL, HULL,
  MUFL, MULL, LUFL, LULL, OT; 120 hourly rows of our own series) and runs what main_informer.py runs for one
  iteration: an argparse.Namespace with main_informer.py's arguments (the 'custom' data: Dataset_Custom's 70/20/10
  split of the file; seq_len 16, label_len 4, pred_len 4, d_model 16, 2 heads, d_ff 32, batch 8, 2 epochs:
  8 steps each), `Exp_Informer(args)`, `exp.train(setting)` (Adam, MSELoss, vali each epoch, EarlyStopping's
  torch.save of the state_dict and the reload of the best checkpoint, adjust_learning_rate), `exp.test(setting)`
  and `exp.predict(setting, True)` (Dataset_Pred); the metrics and predictions it saves with np.save are read back
  as VALUEs.
  - informer: `model='informer'`, two encoder layers with distilling, ProbSparse attention.
  - informer_stack: `model='informerstack'`, `s_layers=[2, 1]` (EncoderStack), full attention in the encoder
    (`attn='full'`), `mix=False`.
- Autoformer (data_provider/, exp/, layers/, models/, utils/ as they are): the same CSV and run.py's arguments,
  `Exp_Main(args)` with `model='Autoformer'` (moving_avg 5, factor 1), train, test, predict. utils/tools.py
  imports matplotlib (test() plots one batch with visual()); layers/SelfAttention_Family.py imports
  reformer_pytorch's LSHSelfAttention (not installed; Reformer only): a stand-in of ours on both sides that nothing
  here calls.
  - autoformer.
- LTSF-Linear (data_provider/, exp/, layers/, models/, utils/ as they are): the same CSV and run_longExp.py's
  arguments, its Exp_Main, train and test (whose metrics, mse, mae, rse and corr, are read back from the
  result.txt it appends to, corr's channels averaged; its predict() hands 3-D predictions to sklearn's
  StandardScaler.inverse_transform, which takes 2-D arrays: torch's side fails there, so it is not called).
  - dlinear: `model='DLinear'` (moving_avg 5, one linear layer over all channels).
  - nlinear_individual: `model='NLinear'`, `individual=True` (a linear layer per channel).
- pytorch-fm (torchfm/ and examples/main.py as they are): a driver writes a MovieLens ratings.dat (`::`
  separated, 600 ratings of 30 users and 40 movies, ours), reads it with MovieLens1MDataset, splits it as
  main.py does (80/10/10; torch.utils.data.Subset of fixed index ranges instead of random_split) and builds models
  with main.py's get_model; for each model main.py's train() (Adam lr 1e-3, weight decay 1e-6, BCELoss, batch 64)
  for one epoch and test() (sklearn's roc_auc_score), whose AUC and the mean prediction are VALUEs.
  main.py imports criteo.py and avazu.py, which import lmdb (not installed): a stand-in of ours on both sides that
  nothing here calls. movielens.py calls np.int and np.long (gone since NumPy 1.24): the driver sets them to int and
  np.int64 before importing it, on both sides.
  - fm_shallow: lr, fm, hofm (order 3), ffm, afm, nfm, fnfm.
  - fm_deep: fnn, wd, ipnn, opnn, dcn, dfm, xdfm, ncf.
  - fm_attention: afi (AutoInt: nn.MultiheadAttention) and afn (AFN's logarithmic neurons), made small
    (mlp_dims (16, 16), LNN_dim 8).
  - fm_main: main.py's main() loop for dfm: three epochs, EarlyStopper (torch.save of the whole model), the
    validation AUC after each epoch and the test AUC.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

INFORMER = "zhouhaoyi+Informer2020@29f2a739226a509202a092b464163da81fa74960"
AUTOFORMER = "thuml+Autoformer@51c7d416ae120b805fd5beef2f4ccf7de496a6ff"
LTSF = "cure-lab+LTSF-Linear@0c113668a3b88c4c4ee586b8c5ec3e539c4de5a6"
TORCHFM = "rixwew+pytorch-fm@f74ad19771eda104e99874d19dc892e988ec53fa"

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

_READ_BACK = '''
folder = "./results/" + setting + "/"
if os.path.exists(folder + "metrics.npy"):
    metrics = np.load(folder + "metrics.npy")
    print("VALUE test_mae", float(metrics[0]))
    print("VALUE test_mse", float(metrics[1]))
else:     # LTSF-Linear's test() appends its metrics to result.txt instead
    with open("result.txt") as f:
        last = [line for line in f if line.startswith("mse:")][-1]
    for part in last.split(", "):
        key, number = part.strip().split(":")
        print("VALUE test_" + key, float(np.mean(np.array(number.strip("[]").split(), dtype=np.float64))))
print("VALUE pred", float(np.abs(np.load(folder + "pred.npy")).mean()))
if os.path.exists(folder + "real_prediction.npy"):
    print("VALUE real_prediction", float(np.abs(np.load(folder + "real_prediction.npy")).mean()))
'''

_INFORMER_DRIVER = _ETT_CSV + '''
import argparse

from exp.exp_informer import Exp_Informer

args = argparse.Namespace(
    model="{model}", data="custom", root_path="./ett/", data_path="ETTsmall.csv", features="M", target="OT",
    freq="h", checkpoints="./checkpoints/", seq_len=16, label_len=4, pred_len=4, enc_in=7, dec_in=7, c_out=7,
    d_model=16, n_heads=2, e_layers=2, d_layers=1, s_layers="2,1", d_ff=32, factor=5, padding=0, distil=True,
    dropout=0.05, attn="{attn}", embed="timeF", activation="gelu", output_attention=False, do_predict=True,
    mix={mix}, cols=None, num_workers=0, itr=1, train_epochs=2, batch_size=8, patience=3, learning_rate=0.001,
    des="test", loss="mse", lradj="type1", use_amp=False, inverse=False, use_gpu=False, gpu=0,
    use_multi_gpu=False, devices="0")
# as main_informer.py
args.s_layers = [int(s_l) for s_l in args.s_layers.replace(" ", "").split(",")]
args.detail_freq = args.freq
args.freq = args.freq[-1:]
setting = "{{}}_{{}}_ft{{}}_sl{{}}_ll{{}}_pl{{}}_dm{{}}_nh{{}}_el{{}}_dl{{}}_df{{}}_at{{}}_fc{{}}_eb{{}}_dt{{}}_mx{{}}_{{}}_{{}}".format(
    args.model, args.data, args.features, args.seq_len, args.label_len, args.pred_len, args.d_model, args.n_heads,
    args.e_layers, args.d_layers, args.d_ff, args.attn, args.factor, args.embed, args.distil, args.mix, args.des, 0)
exp = Exp_Informer(args)
exp.train(setting)
exp.test(setting)
exp.predict(setting, True)
''' + _READ_BACK

_EXP_MAIN_DRIVER = _ETT_CSV + '''
import argparse

from exp.exp_main import Exp_Main

args = argparse.Namespace(
    is_training=1, train_only=False, model_id="ETTsmall_16_4", model="{model}", data="custom", root_path="./ett/",
    data_path="ETTsmall.csv", features="M", target="OT", freq="h", checkpoints="./checkpoints/", seq_len=16,
    label_len=4, pred_len=4, bucket_size=4, n_hashes=4, individual={individual}, embed_type=0, enc_in=7, dec_in=7,
    c_out=7, d_model=16, n_heads=2, e_layers=2, d_layers=1, d_ff=32, moving_avg=5, factor=1, distil=True,
    dropout=0.05, embed="timeF", activation="gelu", output_attention=False, do_predict=True, num_workers=0, itr=1,
    train_epochs=2, batch_size=8, patience=3, learning_rate=0.001, des="test", loss="mse", lradj="type1",
    use_amp=False, use_gpu=False, gpu=0, use_multi_gpu=False, devices="0", test_flop=False)
setting = "{{}}_{{}}_{{}}_ft{{}}_sl{{}}_ll{{}}_pl{{}}_dm{{}}_nh{{}}_el{{}}_dl{{}}_df{{}}_fc{{}}_eb{{}}_dt{{}}_{{}}_{{}}".format(
    args.model_id, args.model, args.data, args.features, args.seq_len, args.label_len, args.pred_len, args.d_model,
    args.n_heads, args.e_layers, args.d_layers, args.d_ff, args.factor, args.embed, args.distil, args.des, 0)
exp = Exp_Main(args)
exp.train(setting)
exp.test(setting)
{predict}''' + _READ_BACK

_MOVIELENS = '''
import os

import numpy as np

# movielens.py calls np.int and np.long, gone since NumPy 1.24 (ours, before importing it)
np.int = int
np.long = np.int64
_rng = np.random.RandomState(11)
os.makedirs("./ml-1m", exist_ok=True)
with open("./ml-1m/ratings.dat", "w") as f:
    users = np.arange(1, 31)
    for i in range(600):
        u = int(users[i % 30])
        m = int(_rng.randint(1, 41)) if i >= 40 else i + 1     # every movie rated at least once
        r = int(np.clip(round(2.5 + 1.5 * np.sin(u * 0.7 + m * 0.3) + _rng.randn() * 0.7), 1, 5))
        f.write("%d::%d::%d::%d\\n" % (u, m, r, 978300760 + i))

import torch
from torch.utils.data import DataLoader, Subset
from torchfm.dataset.movielens import MovieLens1MDataset
from main import get_model, train, test, EarlyStopper

dataset = MovieLens1MDataset("./ml-1m/ratings.dat")
train_length = int(len(dataset) * 0.8)
valid_length = int(len(dataset) * 0.1)
test_length = len(dataset) - train_length - valid_length
train_dataset = Subset(dataset, list(range(train_length)))
valid_dataset = Subset(dataset, list(range(train_length, train_length + valid_length)))
test_dataset = Subset(dataset, list(range(train_length + valid_length, len(dataset))))
train_data_loader = DataLoader(train_dataset, batch_size=64, shuffle=True)
valid_data_loader = DataLoader(valid_dataset, batch_size=64)
test_data_loader = DataLoader(test_dataset, batch_size=64)
device = torch.device("cpu")
'''

_FM_MODELS_DRIVER = _MOVIELENS + '''
for name in {names}:
    model = get_model(name, dataset).to(device)
{shrink}    criterion = torch.nn.BCELoss()
    optimizer = torch.optim.Adam(params=model.parameters(), lr=0.001, weight_decay=1e-6)
    train(model, optimizer, train_data_loader, criterion, device)
    auc = test(model, test_data_loader, device)
    print("VALUE auc_" + name, float(auc))
    model.eval()
    with torch.no_grad():
        fields = torch.stack([torch.as_tensor(test_dataset[i][0]) for i in range(len(test_dataset))])
        print("VALUE mean_" + name, float(model(fields).mean()))
'''

# afi and afn as get_model makes them are wide (400-unit MLPs, 1500 logarithmic neurons): the same classes, smaller
_FM_ATTENTION_SHRINK = '''\
    if name == "afi":
        from torchfm.model.afi import AutomaticFeatureInteractionModel
        model = AutomaticFeatureInteractionModel(dataset.field_dims, embed_dim=16, atten_embed_dim=16, num_heads=2,
                                                 num_layers=2, mlp_dims=(16, 16), dropouts=(0, 0, 0))
    elif name == "afn":
        from torchfm.model.afn import AdaptiveFactorizationNetwork
        model = AdaptiveFactorizationNetwork(dataset.field_dims, embed_dim=16, LNN_dim=8, mlp_dims=(16, 16),
                                             dropouts=(0, 0, 0))
'''

_FM_MAIN_DRIVER = _MOVIELENS + '''
os.makedirs("./chkpt", exist_ok=True)
model = get_model("dfm", dataset).to(device)
criterion = torch.nn.BCELoss()
optimizer = torch.optim.Adam(params=model.parameters(), lr=0.01, weight_decay=1e-6)
early_stopper = EarlyStopper(num_trials=2, save_path="./chkpt/dfm.pt")
for epoch_i in range(3):
    train(model, optimizer, train_data_loader, criterion, device)
    auc = test(model, valid_data_loader, device)
    print("epoch:", epoch_i, "validation: auc:", auc)
    print("VALUE valid_auc_" + str(epoch_i), float(auc))
    if not early_stopper.is_continuable(model, auc):
        print(f"validation: best auc: {early_stopper.best_accuracy}")
        break
auc = test(model, test_data_loader, device)
print(f"test auc: {auc}")
print("VALUE test_auc", float(auc))
'''

_LMDB = '''
"""A stand-in written by bench/_rw_heldout57.py: lmdb is not installed; torchfm's criteo.py and avazu.py import it,
and nothing here calls it."""


def open(*args, **kwargs):
    raise NotImplementedError("the stand-in's lmdb is imported, not used")
'''

_TIME_SERIES = "data_provider,exp,layers,models,utils"

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("informer", INFORMER, "data,exp,models,utils", "driver.py", [], None),
    ("informer_stack", INFORMER, "data,exp,models,utils", "driver.py", [], None),
    ("autoformer", AUTOFORMER, _TIME_SERIES, "driver.py", [], None),
    ("dlinear", LTSF, _TIME_SERIES, "driver.py", [], None),
    ("nlinear_individual", LTSF, _TIME_SERIES, "driver.py", [], None),
    ("fm_shallow", TORCHFM, "torchfm,examples/main.py", "driver.py", [], None),
    ("fm_deep", TORCHFM, "torchfm,examples/main.py", "driver.py", [], None),
    ("fm_attention", TORCHFM, "torchfm,examples/main.py", "driver.py", [], None),
    ("fm_main", TORCHFM, "torchfm,examples/main.py", "driver.py", [], None),
]

DEPS: dict = {}

# Drivers: our own code, through the libraries' documented entry points.
DRIVERS = {
    "informer": _INFORMER_DRIVER.format(model="informer", attn="prob", mix=True),
    "informer_stack": _INFORMER_DRIVER.format(model="informerstack", attn="full", mix=False),
    "autoformer": _EXP_MAIN_DRIVER.format(model="Autoformer", individual=False,
                                          predict="exp.predict(setting, True)\n"),
    "dlinear": _EXP_MAIN_DRIVER.format(model="DLinear", individual=False, predict=""),
    "nlinear_individual": _EXP_MAIN_DRIVER.format(model="NLinear", individual=True, predict=""),
    "fm_shallow": _FM_MODELS_DRIVER.format(names=["lr", "fm", "hofm", "ffm", "afm", "nfm", "fnfm"], shrink=""),
    "fm_deep": _FM_MODELS_DRIVER.format(names=["fnn", "wd", "ipnn", "opnn", "dcn", "dfm", "xdfm", "ncf"],
                                        shrink=""),
    "fm_attention": _FM_MODELS_DRIVER.format(names=["afi", "afn"], shrink=_FM_ATTENTION_SHRINK),
    "fm_main": _FM_MAIN_DRIVER,
}

_REFORMER = '''
"""A stand-in written by bench/_rw_heldout57.py: reformer_pytorch is not installed; Autoformer's
layers/SelfAttention_Family.py imports LSHSelfAttention for its Reformer, which nothing here builds."""


class LSHSelfAttention:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("the stand-in's LSHSelfAttention is imported, not used")
'''

FILES = {**{name: {"lmdb.py": _LMDB} for name, *_ in PROGRAMS if name.startswith("fm_")},
         "autoformer": {"reformer_pytorch.py": _REFORMER}}

# every training step of a program, so that each runs to its end (test, predict, the VALUEs)
LOSSES = {"informer": 16, "informer_stack": 16, "autoformer": 16, "dlinear": 16, "nlinear_individual": 16,
          "fm_shallow": 7 * 8, "fm_deep": 8 * 8, "fm_attention": 2 * 8, "fm_main": 3 * 8}
