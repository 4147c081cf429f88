"""The `heldout68` set of bench/real_world.py (`--set heldout68`): time-series forecasting, attentive tabular
learning and semi-supervised image classification: thuml/Time-Series-Library (its run.py run whole: TimesNet,
iTransformer and TimeMixer trained by exp/exp_long_term_forecasting.py's Exp_Long_Term_Forecast on a small CSV,
then its test()), dreamquark-ai/tabnet (pytorch_tabnet's TabNetClassifier and TabNetRegressor through their fit
loop: sparsemax / entmax attentive transformers, ghost batch norm, categorical embeddings, early stopping and
feature importances) and kekmodel/FixMatch-pytorch (models/wideresnet.py's WideResNet, models/ema.py's ModelEMA and
train.py's FixMatch step), converted as a new user would convert them.

    python bench/real_world.py --mirrors /work/.mirror --set heldout68 [--only tsl_timesnet,tabnet_classifier]

Extra packages (only in the bench's venv, not in setup.sh): pandas<3, scikit-learn, matplotlib.

- Time-Series-Library (run.py, data_provider/, exp/, layers/, models/ and utils/ as they are; data_provider
  imports sktime, datasets, huggingface_hub and patoolib, layers/SelfAttention_Family.py reformer_pytorch, none
  installed and none called here: stand-ins of ours on both sides): run.py run whole with its own arguments (the scripts/long_term_forecast ones made small: the
  'custom' data, Dataset_Custom's 70/20/10 split of a CSV in the ETT format, 80 hourly rows of our own series;
  seq_len 16, pred_len 4, d_model 16, d_ff 32, 2 heads, batch 8, 2 epochs of 5 steps, `--no_use_gpu`,
  `--num_workers 0`): Exp_Long_Term_Forecast's train() (Adam, MSELoss, vali on the validation and test splits each
  epoch, EarlyStopping's torch.save, adjust_learning_rate type1, the reload of the best checkpoint) and test()
  (visual's PDF, metric, np.save).
  - tsl_timesnet: TimesNet (FFT_for_Period's torch.fft.rfft and topk, the 2-D reshape by period, Inception_Block_V1,
    softmax-weighted aggregation), top_k 2, num_kernels 2, label_len 8.
  - tsl_itransformer: iTransformer (DataEmbedding_inverted, FullAttention encoder, the series normalisation),
    label_len 8.
  - tsl_timemixer: TimeMixer (series_decomp, past-decomposable mixing over one avg-pooled down-sampling layer,
    Normalize, channel independence), label_len 0.
- TabNet (pytorch_tabnet/ as it is): a driver of ours, 160 training and 64 validation rows of our own (6 numeric
  columns and 2 categorical ones), the README's usage: `TabNetClassifier(...)` / `TabNetRegressor(...)`, `fit`
  with an eval_set (its DataLoader shuffled, drop_last False, EarlyStopping with patience, History), then
  predict / predict_proba and feature_importances_ (compute_importance's explain pass) as VALUEs.
  - tabnet_classifier: n_d 8, n_a 8, 3 steps, sparsemax masks, categorical embeddings of size 2, virtual batch 16
    in batches of 32, Adam lr 2e-2, 2 epochs, eval metric accuracy.
  - tabnet_regressor: entmax masks (Entmax15), n_d 8, 2 steps, a StepLR scheduler, batches of 32 (virtual 8), 2
    epochs, eval metric mse.
- FixMatch (models/ as it is; train.py imports dataset/cifar.py, which needs torchvision, and its train() calls
  `labeled_iter.next()`, which a DataLoader iterator has not had since torch 1.13: the driver writes train()'s step
  out as train.py has it, with `next(...)`, the lines the file itself leaves in comments):
  build_wideresnet(depth 10, widen 1, 4 classes: WideResNet's LeakyReLU(0.1), BatchNorm momentum 0.001, the
  dropout off), ModelEMA (deepcopy, state_dict copy_ under no_grad), SGD with nesterov momentum over train.py's
  two parameter groups (no weight decay for bias and bn), get_cosine_schedule_with_warmup (LambdaLR), interleave /
  de_interleave, the supervised cross-entropy and the masked pseudo-label loss (softmax / T, torch.max, ge
  threshold), 2 epochs of 3 steps on 16 labeled and 48 unlabeled 3 x 16 x 16 images of ours (the strong
  augmentation a brightness change of ours), then test() as train.py has it with the EMA model.
  - fixmatch_wrn: mu 2, threshold 0.6, T 1, lambda_u 1, use_ema.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

TSL = "thuml+Time-Series-Library@4e938a1767106324dd753b2a44832bf870a0252e"
TABNET = "dreamquark-ai+tabnet@2c0c4ebd2bb1cb639ea94ab4b11823bc49265588"
FIXMATCH = "kekmodel+FixMatch-pytorch@040be3b8950300b052f810df31a0c6c09561e09f"


def _ett_csv(root):
    """A CSV in the ETT format (date, HUFL, HULL, MUFL, MULL, LUFL, LULL, OT), our own series."""
    import datetime

    import numpy as np
    (root / "ts").mkdir(parents=True, exist_ok=True)
    rng = np.random.RandomState(7)
    start = datetime.datetime(2016, 7, 1)
    lines = ["date,HUFL,HULL,MUFL,MULL,LUFL,LULL,OT"]
    for i in range(80):
        stamp = (start + datetime.timedelta(hours=i)).strftime("%Y-%m-%d %H:%M:%S")
        base = np.sin(2 * np.pi * i / 24.0) + 0.01 * i
        cols = [base * (k + 1) * 0.5 + 0.3 * rng.randn() for k in range(6)] + [2.0 * base + 0.2 * rng.randn()]
        lines.append(stamp + "," + ",".join("%.4f" % c for c in cols))
    (root / "ts" / "ETTsmall.csv").write_text("\n".join(lines) + "\n")


_TSL_ARGS = ["--task_name", "long_term_forecast", "--is_training", "1", "--model_id", "ETTsmall_16_4", "--data",
             "custom", "--root_path", "../../data/ts/", "--data_path", "ETTsmall.csv", "--features", "M",
             "--seq_len", "16", "--pred_len", "4", "--enc_in", "7", "--dec_in", "7", "--c_out", "7", "--d_model",
             "16", "--d_ff", "32", "--n_heads", "2", "--e_layers", "2", "--d_layers", "1", "--batch_size", "8",
             "--train_epochs", "2", "--num_workers", "0", "--no_use_gpu", "--des", "Exp", "--itr", "1",
             "--learning_rate", "0.001"]

_TSL_PARTS = "run.py,data_provider,exp,layers,models,utils"

# data_provider/data_loader.py and m4.py import these at module level; nothing here calls them
_STANDINS = {
    "sktime/__init__.py": '"""A stand-in written by bench/_rw_heldout68.py."""\n',
    "sktime/datasets.py": '"""A stand-in written by bench/_rw_heldout68.py (never called)."""\n\n\n'
                          'def load_from_tsfile_to_dataframe(*args, **kwargs):\n'
                          '    raise RuntimeError("sktime stand-in")\n',
    "datasets/__init__.py": '"""A stand-in written by bench/_rw_heldout68.py (never called)."""\n\n\n'
                            'def load_dataset(*args, **kwargs):\n    raise RuntimeError("datasets stand-in")\n',
    "huggingface_hub/__init__.py": '"""A stand-in written by bench/_rw_heldout68.py (never called)."""\n\n\n'
                                   'def hf_hub_download(*args, **kwargs):\n'
                                   '    raise RuntimeError("huggingface_hub stand-in")\n',
    "patoolib/__init__.py": '"""A stand-in written by bench/_rw_heldout68.py (never called)."""\n',
    # layers/SelfAttention_Family.py's ReformerLayer (not used by these models)
    "reformer_pytorch/__init__.py": '"""A stand-in written by bench/_rw_heldout68.py (never instantiated)."""\n\n\n'
                                    'class LSHSelfAttention:\n    def __init__(self, *args, **kwargs):\n'
                                    '        raise RuntimeError("reformer_pytorch stand-in")\n',
}

_TABNET_DATA = '''
import numpy as np
import torch

# our own table: 6 numeric columns and 2 categorical ones (last), 160 training rows and 64 validation rows
rng = np.random.RandomState(11)
n_train, n_valid = 160, 64
numeric = rng.randn(n_train + n_valid, 6)
cat_a = rng.randint(0, 4, size=n_train + n_valid)
cat_b = rng.randint(0, 3, size=n_train + n_valid)
X = np.concatenate([numeric, cat_a[:, None], cat_b[:, None]], axis=1)
signal = numeric[:, 0] - 0.5 * numeric[:, 1] * numeric[:, 2] + 0.4 * (cat_a == 2) - 0.3 * cat_b
X_train, X_valid = X[:n_train], X[n_train:]
'''

_TABNET_CLASSIFIER = _TABNET_DATA + '''
from pytorch_tabnet.tab_model import TabNetClassifier

y = (signal > np.median(signal)).astype(np.int64)
y_train, y_valid = y[:n_train], y[n_train:]
clf = TabNetClassifier(n_d=8, n_a=8, n_steps=3, gamma=1.3, cat_idxs=[6, 7], cat_dims=[4, 3], cat_emb_dim=2,
                       optimizer_fn=torch.optim.Adam, optimizer_params=dict(lr=2e-2), mask_type="sparsemax",
                       seed=0, verbose=1)
clf.fit(X_train, y_train, eval_set=[(X_valid, y_valid)], eval_name=["valid"], eval_metric=["accuracy"],
        max_epochs=2, patience=5, batch_size=32, virtual_batch_size=16, num_workers=0, drop_last=False)
proba = clf.predict_proba(X_valid)
print("VALUE proba", float(proba[:, 1].mean()))
print("VALUE proba_first", float(proba[0, 1]))
print("VALUE best_cost", float(clf.best_cost))
print("VALUE importances", float((clf.feature_importances_ * np.arange(1, 9)).sum()))
explain, masks = clf.explain(X_valid[:8])
print("VALUE explain", float(explain.sum()))
'''

_TABNET_REGRESSOR = _TABNET_DATA + '''
from pytorch_tabnet.tab_model import TabNetRegressor

y = signal.reshape(-1, 1)
y_train, y_valid = y[:n_train], y[n_train:]
reg = TabNetRegressor(n_d=8, n_a=8, n_steps=2, cat_idxs=[6, 7], cat_dims=[4, 3], cat_emb_dim=[2, 1],
                      optimizer_fn=torch.optim.Adam, optimizer_params=dict(lr=1e-2),
                      scheduler_fn=torch.optim.lr_scheduler.StepLR, scheduler_params=dict(step_size=1, gamma=0.5),
                      mask_type="entmax", seed=0, verbose=1)
reg.fit(X_train, y_train, eval_set=[(X_valid, y_valid)], eval_metric=["mse"], max_epochs=2, patience=5,
        batch_size=32, virtual_batch_size=8, num_workers=0, drop_last=False)
pred = reg.predict(X_valid)
print("VALUE pred", float(pred.mean()))
print("VALUE pred_abs", float(np.abs(pred).mean()))
print("VALUE best_cost", float(reg.best_cost))
print("VALUE importances", float((reg.feature_importances_ * np.arange(1, 9)).sum()))
'''

_FIXMATCH_DRIVER = '''
import argparse
import math

import numpy as np
import torch
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import LambdaLR
from torch.utils.data import DataLoader, RandomSampler, SequentialSampler

from models.ema import ModelEMA
import models.wideresnet as models


def get_cosine_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps, num_cycles=7. / 16.,
                                    last_epoch=-1):
    """train.py's"""
    def _lr_lambda(current_step):
        if current_step < num_warmup_steps:
            return float(current_step) / float(max(1, num_warmup_steps))
        no_progress = float(current_step - num_warmup_steps) / float(max(1, num_training_steps - num_warmup_steps))
        return max(0., math.cos(math.pi * num_cycles * no_progress))
    return LambdaLR(optimizer, _lr_lambda, last_epoch)


def interleave(x, size):
    """train.py's"""
    s = list(x.shape)
    return x.reshape([-1, size] + s[1:]).transpose(0, 1).reshape([-1] + s[1:])


def de_interleave(x, size):
    """train.py's"""
    s = list(x.shape)
    return x.reshape([size, -1] + s[1:]).transpose(0, 1).reshape([-1] + s[1:])


args = argparse.Namespace(num_classes=4, model_depth=10, model_width=1, lr=0.03, wdecay=5e-4, nesterov=True,
                          warmup=1, epochs=2, eval_step=3, batch_size=4, mu=2, T=1.0, threshold=0.6, lambda_u=1.0,
                          use_ema=True, ema_decay=0.999, device=torch.device("cpu"), start_epoch=0)
torch.manual_seed(0)
rng = np.random.RandomState(5)
images = rng.rand(64, 3, 16, 16).astype(np.float32)
labels = rng.randint(0, 4, size=64)


class Labeled(torch.utils.data.Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, i):
        return torch.from_numpy(images[i]), int(labels[i])


class Unlabeled(torch.utils.data.Dataset):
    """TransformFixMatch's pair: the weak view as it is, the strong one brightened and flipped (ours)"""
    def __len__(self):
        return 48

    def __getitem__(self, i):
        weak = torch.from_numpy(images[16 + i])
        strong = torch.flip(weak, dims=[2]) * 0.7 + 0.2
        return (weak, strong), -1


class Test(torch.utils.data.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return torch.from_numpy(images[i] * 0.9), int(labels[i])


labeled_trainloader = DataLoader(Labeled(), sampler=RandomSampler(Labeled()), batch_size=args.batch_size,
                                 num_workers=0, drop_last=True)
unlabeled_trainloader = DataLoader(Unlabeled(), sampler=RandomSampler(Unlabeled()),
                                   batch_size=args.batch_size * args.mu, num_workers=0, drop_last=True)
test_loader = DataLoader(Test(), sampler=SequentialSampler(Test()), batch_size=4, num_workers=0)

model = models.build_wideresnet(depth=args.model_depth, widen_factor=args.model_width, dropout=0,
                                num_classes=args.num_classes)
no_decay = ['bias', 'bn']
grouped_parameters = [
    {'params': [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
     'weight_decay': args.wdecay},
    {'params': [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)], 'weight_decay': 0.0}
]
optimizer = optim.SGD(grouped_parameters, lr=args.lr, momentum=0.9, nesterov=args.nesterov)
args.total_steps = args.epochs * args.eval_step
scheduler = get_cosine_schedule_with_warmup(optimizer, args.warmup, args.total_steps)
ema_model = ModelEMA(args, model, args.ema_decay)


def test(args, test_loader, model, epoch):
    """train.py's test() (its meters and progress bar left out)"""
    total, correct, loss_sum = 0, 0, 0.0
    with torch.no_grad():
        for batch_idx, (inputs, targets) in enumerate(test_loader):
            model.eval()
            outputs = model(inputs)
            loss = F.cross_entropy(outputs, targets)
            loss_sum += loss.item() * inputs.shape[0]
            correct += (outputs.argmax(1) == targets).float().sum().item()
            total += inputs.shape[0]
    return loss_sum / total, 100.0 * correct / total


labeled_iter = iter(labeled_trainloader)
unlabeled_iter = iter(unlabeled_trainloader)
model.train()
for epoch in range(args.start_epoch, args.epochs):
    for batch_idx in range(args.eval_step):
        try:
            inputs_x, targets_x = next(labeled_iter)
        except StopIteration:
            labeled_iter = iter(labeled_trainloader)
            inputs_x, targets_x = next(labeled_iter)
        try:
            (inputs_u_w, inputs_u_s), _ = next(unlabeled_iter)
        except StopIteration:
            unlabeled_iter = iter(unlabeled_trainloader)
            (inputs_u_w, inputs_u_s), _ = next(unlabeled_iter)

        batch_size = inputs_x.shape[0]
        inputs = interleave(torch.cat((inputs_x, inputs_u_w, inputs_u_s)), 2 * args.mu + 1).to(args.device)
        targets_x = targets_x.to(args.device)
        logits = model(inputs)
        logits = de_interleave(logits, 2 * args.mu + 1)
        logits_x = logits[:batch_size]
        logits_u_w, logits_u_s = logits[batch_size:].chunk(2)
        del logits

        Lx = F.cross_entropy(logits_x, targets_x, reduction='mean')

        pseudo_label = torch.softmax(logits_u_w.detach() / args.T, dim=-1)
        max_probs, targets_u = torch.max(pseudo_label, dim=-1)
        mask = max_probs.ge(args.threshold).float()

        Lu = (F.cross_entropy(logits_u_s, targets_u, reduction='none') * mask).mean()

        loss = Lx + args.lambda_u * Lu
        loss.backward()
        optimizer.step()
        scheduler.step()
        if args.use_ema:
            ema_model.update(model)
        model.zero_grad()
        print("epoch %d step %d loss %.6f Lx %.6f Lu %.6f mask %.3f lr %.5f" % (
            epoch, batch_idx, loss.item(), Lx.item(), Lu.item(), mask.mean().item(), scheduler.get_last_lr()[0]))

    test_model = ema_model.ema if args.use_ema else model
    test_loss, test_acc = test(args, test_loader, test_model, epoch)
    print("VALUE test_loss_%d" % epoch, test_loss)
    print("VALUE test_acc_%d" % epoch, test_acc)

print("VALUE lr", scheduler.get_last_lr()[0])
print("VALUE ema_weight", float(sum(p.abs().sum() for p in ema_model.ema.parameters())))
print("VALUE ema_running_mean", float(sum(b.float().abs().sum() for n, b in ema_model.ema.named_buffers()
                                         if "running_mean" in n)))
'''

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("tsl_timesnet", TSL, _TSL_PARTS, "run.py",
     _TSL_ARGS + ["--model", "TimesNet", "--label_len", "8", "--top_k", "2", "--num_kernels", "2"], _ett_csv),
    ("tsl_itransformer", TSL, _TSL_PARTS, "run.py", _TSL_ARGS + ["--model", "iTransformer", "--label_len", "8"],
     _ett_csv),
    ("tsl_timemixer", TSL, _TSL_PARTS, "run.py",
     _TSL_ARGS + ["--model", "TimeMixer", "--label_len", "0", "--down_sampling_layers", "1",
                  "--down_sampling_window", "2", "--down_sampling_method", "avg"], _ett_csv),
    ("tabnet_classifier", TABNET, "pytorch_tabnet", "driver.py", [], None),
    ("tabnet_regressor", TABNET, "pytorch_tabnet", "driver.py", [], None),
    ("fixmatch_wrn", FIXMATCH, "models", "driver.py", [], None),
]

DEPS: dict = {}

# Drivers: our own code, through the libraries' documented entry points.
DRIVERS = {
    "tabnet_classifier": _TABNET_CLASSIFIER,
    "tabnet_regressor": _TABNET_REGRESSOR,
    "fixmatch_wrn": _FIXMATCH_DRIVER,
}

FILES = {name: dict(_STANDINS) for name, *_ in PROGRAMS if name.startswith("tsl_")}

# Time-Series-Library: 2 epochs of 5 steps; TabNet: 2 epochs of 5 batches; FixMatch: 2 epochs of 3 steps
LOSSES = {"tsl_timesnet": 10, "tsl_itransformer": 10, "tsl_timemixer": 10, "tabnet_classifier": 10,
          "tabnet_regressor": 10, "fixmatch_wrn": 6}
