"""The `heldout65` set of bench/real_world.py (`--set heldout65`): joint-embedding self-supervision, state-space
sequence models and graph attention: facebookresearch/ijepa (the ViT encoder and predictor of
src/models/vision_transformer.py, src/masks/multiblock.py's MaskCollator, the loss, the AdamW with its cosine lr and
weight-decay schedules and the target encoder's momentum update as src/train.py computes them), state-spaces/s4 (the
standalone S4D of models/s4/s4d.py and the full S4Block of models/s4/s4.py in example.py's S4Model backbone, trained
as example.py trains it; the pure-torch kernels, no pykeops or CUDA extension) and gordicaleksa/pytorch-GAT (its GAT
in its three layer implementations, trained by training_script_cora.py's own main loop on a small synthetic Cora in
the repository's on-disk format), converted as a new user would convert them, through drivers of ours calling
their documented entry points.

    python bench/real_world.py --mirrors /work/.mirror --set heldout65 [--only ijepa_in1k,gat_imp3]

(Diego999/pyGAT, first meant for this set, is heldout17's already: pytorch-GAT replaces it.)

- I-JEPA (src/ as it is: the driver imports src.helper, src.masks, src.utils; src/train.py itself imports
  torchvision through src/transforms.py, not importable beside this torch, so the driver does what its main() does):
  a ViT of the module's own class registered as `vit.vit_mini` (VisionTransformer with embed 48, depth 2, 3 heads,
  qkv bias, LayerNorm eps 1e-6), so that src.helper.init_model builds it through `vit.__dict__[model_name]` as it
  builds vit_huge (patch 8, 64-pixel crops: 8 x 8 patches; trunc_normal_ init, fix_init_weight's `rescale(param,
  layer_id): param.div_(...)` on `.weight.data`), the predictor from vit_predictor (embed 24), `copy.deepcopy` of
  the encoder as the target encoder with requires_grad False, MaskCollator(input_size=64, patch_size=8,
  pred_mask_scale=(0.15, 0.2), enc_mask_scale=(0.85, 1.0), aspect_ratio=(0.75, 1.5), min_keep=4) as the
  DataLoader's collate_fn over 8 (image, label) pairs (blocky noise normalised as make_transforms does; batch 4,
  drop_last), init_opt (AdamW over four groups of generators of parameters, WD_exclude, WarmupCosineSchedule with
  warmup 1 epoch, start_lr 2e-4, ref_lr 1e-3, final 1e-6, CosineWDSchedule 0.04 to 0.4), train.py's momentum
  generator (ema 0.996 to 1.0), and two epochs of train.py's train_step as written (forward_target under no_grad:
  F.layer_norm, apply_masks, repeat_interleave_batch; forward_context; F.smooth_l1_loss through AllReduce.apply
  (an autograd.Function, identity outside distributed runs); autocast(enabled=False); grad_logger after step;
  zero_grad; the momentum update `param_k.data.mul_(m).add_((1.-m) * param_q.detach().data)`; gpu_timer), the
  AverageMeters and log lines; VALUEs: the average loss and largest gradient norm per epoch, lr, wd, the mask
  meters, the groups' weight decays, the target encoder's features, the encoder-target gap and the predictor's
  output on the last batch.
  - ijepa_in1k: the in1k configs' masks (nenc 1, npred 4, allow_overlap False: the encoder block constrained by
    the complement of the predicted blocks, constrain_mask's `mask *= acceptable_regions[k]`), predictor depth 2.
  - ijepa_overlap: nenc 2, npred 2, allow_overlap True (repeat_interleave_batch with repeat 2), predictor depth 1.
- S4 (models/s4/ and src/models/nn/ as they are, put back at their paths by `_s4_layout`; example.py parses
  arguments and reads torchvision's datasets at import, so the driver declares its S4Model backbone, its
  setup_optimizer (parameters with an `_optim` dict of lr and weight decay in groups of their own), train() and
  eval() as example.py writes them; pytorch_lightning, imported by s4.py for rank_zero_only, is a stand-in of ours;
  no pykeops, no CUDA extension: s4.py's naive Cauchy and Vandermonde kernels): S4Model(d_input=1, d_output=4,
  d_model=16, n_layers=2, dropout=0.1), AdamW lr 0.01 wd 0.01 with the S4 parameters' group at lr 0.001 and no
  decay, CosineAnnealingLR over 2 epochs, nn.CrossEntropyLoss, on 16 training, 8 validation and 8 test noisy sines
  of 4 frequencies (L = 48, batch 8, shuffled); VALUEs: each epoch's validation and test losses, the groups'
  learning rates and the final logits.
  - s4d_example: models/s4/s4d.py's S4D (S4DKernel: complex parameters through view_as_real, `1j * A_imag`, an
    einsum of complex tensors, rfft/irfft convolution, GLU), prenorm False.
  - s4_diag: s4.py's S4Block with mode='diag', init='diag-lin' (SSMKernelDiag, log_vandermonde_naive through
    `contract = torch.einsum`, `_c2r = torch.view_as_real`), prenorm True.
  - s4_dplr: S4Block with mode='dplr', init='legs' (nplr's eigh of a complex Hermitian matrix, diag_embed,
    SSMKernelDPLR's cauchy_naive and Woodbury correction, the bilinear transform's step matrices).
- pytorch-GAT (models/, utils/ and training_script_cora.py as they are; utils/ imports matplotlib, python-igraph,
  GitPython and tensorboard: stand-ins of ours for the first three, the runner's SummaryWriter for the last; NumPy
  1.24 removed the `np.float` its dense branch spells: the driver sets it back to float): a synthetic Cora of 160
  nodes, 24 binary word features and 4 classes in the repository's own files (node_features.csr: a pickled scipy
  CSR matrix; node_labels.npy: a pickled int array; adjacency_list.dict: a pickled {node: [neighbours]}, 320
  citations mostly within a class), written where utils/constants.py's CORA_PATH points, Cora's split constants
  made to fit (train 0-40, val 40-100, test 100-160), utils.data_loading.load_graph_data (normalize_features_sparse;
  build_edge_index for IMP3; networkx's adjacency matrix made a -inf/0 mask for IMP1 and IMP2), `GAT(num_of_layers=2,
  num_heads_per_layer=[4, 1], num_features_per_layer=[24, 8, 4], bias=True, dropout=0.6)`, Adam lr 5e-3 wd 5e-4,
  and training_script_cora's own get_main_loop: four epochs of `main_loop(phase=LoopPhase.TRAIN)` and, under
  no_grad, `main_loop(phase=LoopPhase.VAL)` (its patience logic), then the TEST phase; VALUEs: the test accuracy,
  the best validation accuracy (the script's global), the eval-mode scores and validation loss, the predictions.
  - gat_imp3: GATLayerImp3 (edge index: index_select lifting, scatter_add_ neighbourhood softmax and aggregation),
    skip connections on (skip_proj, `out_nodes_features += ...`).
  - gat_imp2: GATLayerImp2 (dense connectivity mask, bmm), no skip connection.
  - gat_imp1: GATLayerImp1 (proj_param of shape (heads, FIN, FOUT), scoring vectors reshaped), skip connections on.


A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

import shutil
from pathlib import Path

IJEPA = "facebookresearch+ijepa@52c1ae95d05f743e000e8f10a1f3a79b10cff048"
S4 = "state-spaces+s4@e757cef57d89e448c413de7325ed5601aceaac13"
GAT = "gordicaleksa+pytorch-GAT@39c8f0ee634477033e8b1a6e9a6da3c7ed71bbd1"
_IJEPA_DRIVER = '''
import copy
from functools import partial

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import src.models.vision_transformer as vit
from src.helper import init_model, init_opt
from src.masks.multiblock import MaskCollator as MBMaskCollator
from src.masks.utils import apply_masks
from src.utils.distributed import AllReduce
from src.utils.logging import AverageMeter, gpu_timer, grad_logger
from src.utils.tensors import repeat_interleave_batch

torch.manual_seed(0)
# a small ViT of the module's own kind, under a name init_model looks up in vit.__dict__ as it does vit_huge
vit.vit_mini = partial(vit.VisionTransformer, embed_dim=48, depth=2, num_heads=3, mlp_ratio=4, qkv_bias=True,
                       norm_layer=partial(nn.LayerNorm, eps=1e-6))
device = torch.device('cpu')
crop_size, patch_size = 64, 8
num_epochs, batch_size = 2, 4
ema = [0.996, 1.0]
ipe_scale = 1.0
use_bfloat16 = False

encoder, predictor = init_model(device=device, patch_size=patch_size, crop_size=crop_size, pred_depth={pred_depth},
                                pred_emb_dim=24, model_name='vit_mini')
target_encoder = copy.deepcopy(encoder)
mask_collator = MBMaskCollator(input_size=crop_size, patch_size=patch_size, pred_mask_scale=(0.15, 0.2),
                               enc_mask_scale=(0.85, 1.0), aspect_ratio=(0.75, 1.5), nenc={nenc}, npred={npred},
                               allow_overlap={allow_overlap}, min_keep=4)

# ImageNet's (image, label) pairs after make_transforms (ToTensor, Normalize): smooth noise images
rng = np.random.RandomState(0)
images = []
for i in range(8):
    base = rng.rand(3, 8, 8).astype(np.float32)
    img = np.kron(base, np.ones((8, 8), np.float32)) + 0.1 * rng.randn(3, 64, 64).astype(np.float32)
    images.append((torch.from_numpy((img - 0.45) / 0.225), i % 3))
unsupervised_loader = torch.utils.data.DataLoader(images, collate_fn=mask_collator, batch_size=batch_size,
                                                  drop_last=True, shuffle=False)
ipe = len(unsupervised_loader)
optimizer, scaler, scheduler, wd_scheduler = init_opt(encoder=encoder, predictor=predictor, wd=0.04, final_wd=0.4,
                                                      start_lr=0.0002, ref_lr=0.001, final_lr=1e-6,
                                                      iterations_per_epoch=ipe, warmup=1, num_epochs=num_epochs,
                                                      ipe_scale=ipe_scale, use_bfloat16=use_bfloat16)
for p in target_encoder.parameters():
    p.requires_grad = False
momentum_scheduler = (ema[0] + i*(ema[1]-ema[0])/(ipe*num_epochs*ipe_scale)
                      for i in range(int(ipe*num_epochs*ipe_scale)+1))

for epoch in range(num_epochs):
    loss_meter = AverageMeter()
    maskA_meter = AverageMeter()
    maskB_meter = AverageMeter()
    for itr, (udata, masks_enc, masks_pred) in enumerate(unsupervised_loader):

        def load_imgs():
            imgs = udata[0].to(device, non_blocking=True)
            masks_1 = [u.to(device, non_blocking=True) for u in masks_enc]
            masks_2 = [u.to(device, non_blocking=True) for u in masks_pred]
            return (imgs, masks_1, masks_2)
        imgs, masks_enc, masks_pred = load_imgs()
        maskA_meter.update(len(masks_enc[0][0]))
        maskB_meter.update(len(masks_pred[0][0]))

        def train_step():
            _new_lr = scheduler.step()
            _new_wd = wd_scheduler.step()

            def forward_target():
                with torch.no_grad():
                    h = target_encoder(imgs)
                    h = F.layer_norm(h, (h.size(-1),))
                    B = len(h)
                    h = apply_masks(h, masks_pred)
                    h = repeat_interleave_batch(h, B, repeat=len(masks_enc))
                    return h

            def forward_context():
                z = encoder(imgs, masks_enc)
                z = predictor(z, masks_enc, masks_pred)
                return z

            def loss_fn(z, h):
                loss = F.smooth_l1_loss(z, h)
                loss = AllReduce.apply(loss)
                return loss

            with torch.cuda.amp.autocast(dtype=torch.bfloat16, enabled=use_bfloat16):
                h = forward_target()
                z = forward_context()
                loss = loss_fn(z, h)

            if use_bfloat16:
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
            else:
                loss.backward()
                optimizer.step()
            grad_stats = grad_logger(encoder.named_parameters())
            optimizer.zero_grad()

            with torch.no_grad():
                m = next(momentum_scheduler)
                for param_q, param_k in zip(encoder.parameters(), target_encoder.parameters()):
                    param_k.data.mul_(m).add_((1.-m) * param_q.detach().data)

            return (float(loss), _new_lr, _new_wd, grad_stats)
        (loss, _new_lr, _new_wd, grad_stats), etime = gpu_timer(train_step)
        loss_meter.update(loss)
        print('[%d, %5d] loss: %.3f masks: %.1f %.1f [wd: %.2e] [lr: %.2e]'
              % (epoch + 1, itr, loss_meter.avg, maskA_meter.avg, maskB_meter.avg, _new_wd, _new_lr))
        print('[%d, %5d] grad_stats: [%.2e %.2e] (%.2e, %.2e)' % (epoch + 1, itr, grad_stats.first_layer,
              grad_stats.last_layer, grad_stats.min, grad_stats.max))
        assert not np.isnan(loss), 'loss is nan'
    print('avg. loss %.3f' % loss_meter.avg)
    print("VALUE avg_loss", loss_meter.avg)
    print("VALUE grad_max", grad_stats.max)

print("VALUE lr", _new_lr)
print("VALUE wd", _new_wd)
print("VALUE mask_enc", maskA_meter.avg)
print("VALUE mask_pred", maskB_meter.avg)
print("VALUE wd_groups", sum(g['weight_decay'] for g in optimizer.param_groups))
encoder.eval()
target_encoder.eval()
with torch.no_grad():
    feats = target_encoder(imgs)
    print("VALUE target_features", float(feats.abs().mean()))
    print("VALUE ema_gap", float(sum((p - q).abs().sum() for p, q in zip(encoder.parameters(),
                                                                           target_encoder.parameters()))))
    z = predictor(encoder(imgs, masks_enc), masks_enc, masks_pred)
    print("VALUE prediction", float(z.abs().mean()))
    print("VALUE prediction_rows", float(z.shape[0] * 1000 + z.shape[1]))
'''

_S4_DRIVER = '''
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

from models.s4.s4 import S4Block as S4
from models.s4.s4d import S4D

dropout_fn = nn.Dropout1d
torch.manual_seed(0)
lr, weight_decay, epochs = 0.01, 0.01, 2
device = 'cpu'


class S4Model(nn.Module):
    """example.py's backbone, its layer as the script's comment offers: the minimal S4D or the full S4Block"""

    def __init__(self, d_input, d_output=10, d_model=256, n_layers=4, dropout=0.2, prenorm=False):
        super().__init__()
        self.prenorm = prenorm
        self.encoder = nn.Linear(d_input, d_model)
        self.s4_layers = nn.ModuleList()
        self.norms = nn.ModuleList()
        self.dropouts = nn.ModuleList()
        for _ in range(n_layers):
            self.s4_layers.append({layer})
            self.norms.append(nn.LayerNorm(d_model))
            self.dropouts.append(dropout_fn(dropout))
        self.decoder = nn.Linear(d_model, d_output)

    def forward(self, x):
        x = self.encoder(x)
        x = x.transpose(-1, -2)
        for layer, norm, dropout in zip(self.s4_layers, self.norms, self.dropouts):
            z = x
            if self.prenorm:
                z = norm(z.transpose(-1, -2)).transpose(-1, -2)
            z, _ = layer(z)
            z = dropout(z)
            x = z + x
            if not self.prenorm:
                x = norm(x.transpose(-1, -2)).transpose(-1, -2)
        x = x.transpose(-1, -2)
        x = x.mean(dim=1)
        x = self.decoder(x)
        return x


# sequential data as example.py's transforms give it, (L, d_input) per item: noisy sines of 4 frequencies
rng = np.random.RandomState(0)
L, d_input, d_output = 48, 1, 4


def make(n):
    ys = rng.randint(0, d_output, n)
    t = np.arange(L, dtype=np.float32)
    xs = np.sin(2 * np.pi * (ys[:, None] + 1) * t / L + rng.rand(n, 1) * 6.28) + 0.3 * rng.randn(n, L)
    return torch.utils.data.TensorDataset(torch.tensor(xs[:, :, None], dtype=torch.float32),
                                          torch.tensor(ys, dtype=torch.long))


trainloader = torch.utils.data.DataLoader(make(16), batch_size=8, shuffle=True)
valloader = torch.utils.data.DataLoader(make(8), batch_size=8, shuffle=False)
testloader = torch.utils.data.DataLoader(make(8), batch_size=8, shuffle=False)
model = S4Model(d_input=d_input, d_output=d_output, d_model=16, n_layers=2, dropout=0.1, prenorm={prenorm})
model = model.to(device)


def setup_optimizer(model, lr, weight_decay, epochs):
    all_parameters = list(model.parameters())
    params = [p for p in all_parameters if not hasattr(p, "_optim")]
    optimizer = optim.AdamW(params, lr=lr, weight_decay=weight_decay)
    hps = [getattr(p, "_optim") for p in all_parameters if hasattr(p, "_optim")]
    hps = [
        dict(s) for s in sorted(list(dict.fromkeys(frozenset(hp.items()) for hp in hps)))
    ]
    for hp in hps:
        params = [p for p in all_parameters if getattr(p, "_optim", None) == hp]
        optimizer.add_param_group(
            {{"params": params, **hp}}
        )
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, epochs)
    keys = sorted(set([k for hp in hps for k in hp.keys()]))
    for i, g in enumerate(optimizer.param_groups):
        group_hps = {{k: g.get(k, None) for k in keys}}
        print(' | '.join([
            f"Optimizer group {{i}}",
            f"{{len(g['params'])}} tensors",
        ] + [f"{{k}} {{v}}" for k, v in group_hps.items()]))
    return optimizer, scheduler


criterion = nn.CrossEntropyLoss()
optimizer, scheduler = setup_optimizer(model, lr=lr, weight_decay=weight_decay, epochs=epochs)


def train():
    model.train()
    train_loss = 0
    correct = 0
    total = 0
    for batch_idx, (inputs, targets) in enumerate(trainloader):
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        outputs = model(inputs)
        loss = criterion(outputs, targets)
        loss.backward()
        optimizer.step()
        train_loss += loss.item()
        _, predicted = outputs.max(1)
        total += targets.size(0)
        correct += predicted.eq(targets).sum().item()
        print('Batch Idx: (%d/%d) | Loss: %.3f | Acc: %.3f%% (%d/%d)' %
              (batch_idx, len(trainloader), train_loss/(batch_idx+1), 100.*correct/total, correct, total))


def eval(epoch, dataloader):
    model.eval()
    eval_loss = 0
    correct = 0
    total = 0
    with torch.no_grad():
        for batch_idx, (inputs, targets) in enumerate(dataloader):
            inputs, targets = inputs.to(device), targets.to(device)
            outputs = model(inputs)
            loss = criterion(outputs, targets)
            eval_loss += loss.item()
            _, predicted = outputs.max(1)
            total += targets.size(0)
            correct += predicted.eq(targets).sum().item()
    return eval_loss / (batch_idx + 1), 100.*correct/total


for epoch in range(epochs):
    train()
    val_loss, val_acc = eval(epoch, valloader)
    print("VALUE val_loss_%d" % epoch, val_loss)
    test_loss, test_acc = eval(epoch, testloader)
    print("VALUE test_loss_%d" % epoch, test_loss)
    scheduler.step()
print("VALUE lrs", sum(g['lr'] for g in optimizer.param_groups))
model.eval()
with torch.no_grad():
    logits = model(testloader.dataset.tensors[0])
print("VALUE logits", float(logits.abs().mean()))
'''

_S4D_LAYER = "S4D(d_model, dropout=dropout, transposed=True, lr=min(0.001, lr))"
_S4_LAYER = "S4(d_model, dropout=dropout, transposed=True, lr=min(0.001, lr), mode='{mode}', init='{init}')"

_GAT_DRIVER = '''
import os
import pickle

import numpy as np
if not hasattr(np, "float"):    # data_loading.py's dense branch spells np.float (removed in NumPy 1.24)
    np.float = float
import scipy.sparse as sp
import torch
import torch.nn as nn
from torch.optim import Adam

import utils.data_loading as data_loading
from utils.constants import CORA_PATH, LayerType, LoopPhase
from models.definitions.GAT import GAT
import training_script_cora
from training_script_cora import get_main_loop

# a small synthetic Cora in the repository's on-disk format: node_features.csr (a pickled scipy CSR matrix of 0/1
# word features), node_labels.npy (a pickled int array) and adjacency_list.dict (a pickled {{node: [neighbours]}})
rng = np.random.RandomState(3)
N, FIN, C = 160, 24, 4
labels = rng.randint(0, C, N)
feats = (rng.rand(N, FIN) < 0.15).astype(np.float32)
for i in range(N):
    feats[i, labels[i] * 6 + rng.randint(0, 6)] = 1.
adjacency = {{i: [] for i in range(N)}}
for _ in range(320):
    a = int(rng.randint(0, N))
    same = np.flatnonzero(labels == labels[a]) if rng.rand() < 0.8 else np.arange(N)
    b = int(same[rng.randint(0, len(same))])
    if a != b and b not in adjacency[a]:
        adjacency[a].append(b)
        adjacency[b].append(a)
os.makedirs(CORA_PATH, exist_ok=True)
for name, obj in (("node_features.csr", sp.csr_matrix(feats)), ("node_labels.npy", labels.astype(np.int64)),
                  ("adjacency_list.dict", adjacency)):
    with open(os.path.join(CORA_PATH, name), "wb") as f:
        pickle.dump(obj, f, protocol=pickle.HIGHEST_PROTOCOL)
# Cora's split constants (140 / 500 / 1000 of 2708 nodes) made to fit 160 nodes
data_loading.CORA_TRAIN_RANGE = [0, 40]
data_loading.CORA_VAL_RANGE = [40, 100]
data_loading.CORA_TEST_RANGE = [100, 160]

torch.manual_seed(0)
config = {{
    "num_of_epochs": 4, "patience_period": 100, "lr": 5e-3, "weight_decay": 5e-4, "should_test": True,
    "dataset_name": "CORA", "should_visualize": False, "enable_tensorboard": False, "console_log_freq": 1,
    "checkpoint_freq": None,
    "num_of_layers": 2, "num_heads_per_layer": [4, 1], "num_features_per_layer": [FIN, 8, C],
    "add_skip_connection": {skip}, "bias": True, "dropout": 0.6, "layer_type": LayerType.{imp},
}}
device = torch.device("cpu")
node_features, node_labels, edge_index, train_indices, val_indices, test_indices = \\
    data_loading.load_graph_data(config, device)
gat = GAT(num_of_layers=config['num_of_layers'], num_heads_per_layer=config['num_heads_per_layer'],
          num_features_per_layer=config['num_features_per_layer'],
          add_skip_connection=config['add_skip_connection'], bias=config['bias'], dropout=config['dropout'],
          layer_type=config['layer_type'], log_attention_weights=False).to(device)
loss_fn = nn.CrossEntropyLoss(reduction='mean')
optimizer = Adam(gat.parameters(), lr=config['lr'], weight_decay=config['weight_decay'])
main_loop = get_main_loop(config, gat, loss_fn, optimizer, node_features, node_labels, edge_index, train_indices,
                          val_indices, test_indices, config['patience_period'], 0.)
for epoch in range(config['num_of_epochs']):
    main_loop(phase=LoopPhase.TRAIN, epoch=epoch)
    with torch.no_grad():
        try:
            main_loop(phase=LoopPhase.VAL, epoch=epoch)
        except Exception as e:
            print(str(e))
            break
test_acc = main_loop(phase=LoopPhase.TEST)
print("VALUE test_acc", test_acc)
print("VALUE best_val_acc", training_script_cora.BEST_VAL_PERF)
gat.eval()
with torch.no_grad():
    scores = gat((node_features, edge_index))[0]
print("VALUE scores", float(scores.abs().mean()))
print("VALUE val_loss", float(loss_fn(scores.index_select(0, val_indices), node_labels.index_select(0, val_indices))))
print("VALUE prediction_sum", float(torch.argmax(scores, dim=-1).sum()))
'''


_GIT_STAND_IN = """
\"\"\"A stand-in written by bench/_rw_heldout65.py: GitPython is not installed; pytorch-GAT's utils/utils.py imports it
for get_training_state's commit hash, which nothing here calls.\"\"\"


class Repo:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("the stand-in's Repo is imported, not used")
"""

_IGRAPH_STAND_IN = """
\"\"\"A stand-in written by bench/_rw_heldout65.py: python-igraph is not installed; pytorch-GAT's
utils/visualizations.py imports it for drawing, which nothing here calls.\"\"\"
"""

_MATPLOTLIB_STAND_IN = """
\"\"\"A stand-in written by bench/_rw_heldout65.py: matplotlib is not installed; pytorch-GAT's utils/visualizations.py
imports matplotlib.pyplot, and nothing here draws.\"\"\"
"""

_LIGHTNING_STAND_IN = """
\"\"\"A stand-in written by bench/_rw_heldout65.py: pytorch_lightning is not installed; models/s4/s4.py imports its
rank_zero_only decorator for its logger.\"\"\"


def rank_zero_only(fn):
    return fn
"""


def _s4_layout(proj: Path) -> None:
    """models/s4 and src/models/nn are copied as s4/ and nn/ (each part under its own name): put them back where
    s4.py and s4d.py import them from (models.s4, src.models.nn)."""
    (proj / "models").mkdir()
    shutil.move(str(proj / "s4"), str(proj / "models" / "s4"))
    (proj / "src" / "models").mkdir(parents=True)
    shutil.move(str(proj / "nn"), str(proj / "src" / "models" / "nn"))


_GAT_FILES = "models,utils,training_script_cora.py"
_S4_FILES = "models/s4,src/models/nn"

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("ijepa_in1k", IJEPA, "src", "driver.py", [], None),
    ("ijepa_overlap", IJEPA, "src", "driver.py", [], None),
    ("s4d_example", S4, _S4_FILES, "driver.py", [], None),
    ("s4_diag", S4, _S4_FILES, "driver.py", [], None),
    ("s4_dplr", S4, _S4_FILES, "driver.py", [], None),
    ("gat_imp3", GAT, _GAT_FILES, "driver.py", [], None),
    ("gat_imp2", GAT, _GAT_FILES, "driver.py", [], None),
    ("gat_imp1", GAT, _GAT_FILES, "driver.py", [], None),
]

DEPS: dict = {}

# Drivers: our own code, through the libraries' documented entry points.
DRIVERS = {
    "ijepa_in1k": _IJEPA_DRIVER.format(pred_depth=2, nenc=1, npred=4, allow_overlap=False),
    "ijepa_overlap": _IJEPA_DRIVER.format(pred_depth=1, nenc=2, npred=2, allow_overlap=True),
    "s4d_example": _S4_DRIVER.format(layer=_S4D_LAYER, prenorm=False),
    "s4_diag": _S4_DRIVER.format(layer=_S4_LAYER.format(mode="diag", init="diag-lin"), prenorm=True),
    "s4_dplr": _S4_DRIVER.format(layer=_S4_LAYER.format(mode="dplr", init="legs"), prenorm=False),
    "gat_imp3": _GAT_DRIVER.format(imp="IMP3", skip=True),
    "gat_imp2": _GAT_DRIVER.format(imp="IMP2", skip=False),
    "gat_imp1": _GAT_DRIVER.format(imp="IMP1", skip=True),
}

FILES = {**{name: {"s4": _s4_layout, "pytorch_lightning/__init__.py": "",
                   "pytorch_lightning/utilities/__init__.py": _LIGHTNING_STAND_IN}
            for name, *_ in PROGRAMS if name.startswith("s4")},
         **{name: {"git.py": _GIT_STAND_IN, "igraph.py": _IGRAPH_STAND_IN,
                   "matplotlib/__init__.py": _MATPLOTLIB_STAND_IN, "matplotlib/pyplot.py": _MATPLOTLIB_STAND_IN}
            for name, *_ in PROGRAMS if name.startswith("gat_")}}

# I-JEPA: two epochs of two batches; S4: two epochs of two batches; GAT: four epochs of one step
LOSSES = {name: 4 for name, *_ in PROGRAMS}
