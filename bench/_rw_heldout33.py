"""The `heldout33` set of bench/real_world.py (`--set heldout33`): facebookresearch/dino, the whole repository
converted as a new user would convert it (its twelve .py files), driven by programs of ours that import its modules.

    python bench/real_world.py --mirrors /work/.mirror --set heldout33 [--only dino_step,vit_features]

main_dino.py's train_one_epoch needs a DistributedDataParallel student (`student.module`), CUDA images, CUDA
autocast and torch.cuda.synchronize: it is not called. The training drivers are one-process loops of ours that
make the same step from the repository's classes and functions. DINOLoss.update_center calls dist.all_reduce and
dist.get_world_size: the drivers start a one-process group (torch: gloo with a file store; converted:
_ms_compat.init_process_group, rank 0 of 1). torchvision does not import next to this CPU torch: the torch side
gets a stand-in of ours (ImageFolder, transforms and models namespaces that nothing reached here calls), written
after the conversion.

- dino_step: a ViT student (patch 8, embed 32, depth 2, 2 heads, drop_path 0.1) and teacher, each in a
  MultiCropWrapper with a DINOHead (3 layers, hidden 48, bottleneck 16, 64 outputs, weight-normed last layer
  with its gain frozen); the teacher starts from the student's weights and trains no parameter. Six steps over
  3 epochs of 2 iterations: two 32x32 global crops through the teacher, those and two 16x16 local crops through
  the student (two resolutions: two backbone passes, one head pass), DINOLoss (4 crops, the teacher temperature
  warmed up over 2 epochs, the center buffer's EMA through a one-process all_reduce), AdamW on
  get_params_groups with the per-iteration learning rate and weight decay (the first group only) of
  cosine_scheduler (a warm-up epoch for the rate), clip_gradients (the norms summed as a VALUE),
  cancel_gradients_last_layer for the first epoch, the teacher's EMA under no_grad with the momentum schedule.
  VALUEs: the gradient norms, the center, the teacher's parameter sums.
- dino_checkpoint: two such steps, then a checkpoint dict (student, teacher, optimizer and DINOLoss state dicts,
  the epoch) written with torch.save (converted: _ms_compat.save, its own format) to a relative path, fresh
  networks, loss and optimizer restored by utils.restart_from_checkpoint (torch.load -> _ms_compat.load, each
  load_state_dict -> _ms_compat.load_state_dict; run_variables for the epoch), the restored student's output and
  center as VALUEs, two more steps from there; then the file the torch run wrote (torch.save's zip, in the torch
  program's directory) restored the same way into fresh objects on both sides (the converted side reads
  torch's file through _ms_compat.load), its student and teacher outputs as VALUEs and one more step.
  restart_from_checkpoint's printed lines (what it loaded, the optimizer's retry without strict=) are PRINTED.
- vit_features: a ViT (the repository's layer-norm eps 1e-6) in eval mode on 40x48 inputs (a 5x6 grid against
  the 4x4 grid of its positional embedding: interpolate_pos_encoding's bicubic resize), get_last_selfattention,
  get_intermediate_layers(n=2), the forward's CLS output; VALUEs of each.
- linear_eval: eval_linear's LinearClassifier on the frozen ViT's features as eval_linear's train makes them
  (the last block's CLS token with the average of its patch tokens, avgpool as for ViT-Base), SGD with momentum and
  CosineAnnealingLR for 6 steps; then eval_knn's knn_classifier (k 3, 4 classes) on normalized features of
  the ViT for 12 train and 100 test images (the function takes 100 chunks) (top-1 and top-5 as VALUEs).

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

DINO = "facebookresearch+dino@7c446df5b9f45747937fb0d72314eb9f7b66930a"
_PARTS = ("main_dino.py,utils.py,vision_transformer.py,eval_linear.py,eval_knn.py,eval_copy_detection.py,"
          "eval_image_retrieval.py,eval_video_segmentation.py,hubconf.py,run_with_submitit.py,"
          "video_generation.py,visualize_attention.py")

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [(name, DINO, _PARTS, "driver.py", [], None)
            for name in ("dino_step", "dino_checkpoint", "vit_features", "linear_eval")]

DEPS: dict = {}

FILES: dict = {}

LOSSES = {"dino_step": 6, "dino_checkpoint": 5, "linear_eval": 6}

# restart_from_checkpoint's report of what it loaded (torch's optimizer refuses strict=False: its retry line)
PRINTED = {"dino_checkpoint": r"^(=> |Found checkpoint)"}

# torchvision does not import next to this CPU torch: a stand-in for the torch side, after the conversion
_TORCHVISION = {
    "torchvision/__init__.py": '"""A stand-in written by bench/_rw_heldout33.py."""\nfrom . import datasets, '
                               'models, transforms\n',
    "torchvision/datasets.py": '"""A stand-in written by bench/_rw_heldout33.py (never instantiated)."""\n\n\n'
                               'class ImageFolder:\n    pass\n',
    "torchvision/models.py": '"""A stand-in written by bench/_rw_heldout33.py: no architectures."""\n',
    "torchvision/transforms.py": '"""A stand-in written by bench/_rw_heldout33.py (nothing here is called)."""\n\n'
                                 '\nclass InterpolationMode:\n    BICUBIC = "bicubic"\n',
}

TORCH_FILES = {name: dict(_TORCHVISION) for name, *_ in PROGRAMS}

_SETUP = '''
import os
import tempfile
from functools import partial

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn

import utils
import vision_transformer as vits
from vision_transformer import DINOHead

torch.manual_seed(0)
np.random.seed(0)


def small_vit(drop_path=0.0):
    return vits.VisionTransformer(img_size=[32], patch_size=8, embed_dim=32, depth=2, num_heads=2, mlp_ratio=2,
                                  qkv_bias=True, drop_path_rate=drop_path,
                                  norm_layer=partial(nn.LayerNorm, eps=1e-6))
'''

_TRAINING = _SETUP + '''
from main_dino import DINOLoss

store = os.path.join(tempfile.mkdtemp(), "group")
dist.init_process_group("gloo", init_method="file://" + store, rank=0, world_size=1)
N_OUT, EPOCHS, PER_EPOCH = 64, 3, 2


def networks():
    def wrapped(drop_path):
        head = DINOHead(32, N_OUT, nlayers=3, hidden_dim=48, bottleneck_dim=16)
        return utils.MultiCropWrapper(small_vit(drop_path), head)
    s, t = wrapped(0.1), wrapped(0.0)
    t.load_state_dict(s.state_dict())
    for q in t.parameters():
        q.requires_grad = False
    crit = DINOLoss(N_OUT, 4, warmup_teacher_temp=0.04, teacher_temp=0.07, warmup_teacher_temp_epochs=2,
                    nepochs=EPOCHS)
    return s, t, crit, torch.optim.AdamW(utils.get_params_groups(s))


rates = utils.cosine_scheduler(2e-3, 1e-4, EPOCHS, PER_EPOCH, warmup_epochs=1)
decays = utils.cosine_scheduler(0.04, 0.4, EPOCHS, PER_EPOCH)
momenta = utils.cosine_scheduler(0.9, 1.0, EPOCHS, PER_EPOCH)


def batch():
    big = [torch.randn(2, 3, 32, 32) for _ in range(2)]
    return big + [torch.randn(2, 3, 16, 16) for _ in range(2)]


def one_step(student, teacher, crit, opt, step):
    epoch = step // PER_EPOCH
    for g, group in enumerate(opt.param_groups):
        group["lr"] = rates[step]
        if g == 0:
            group["weight_decay"] = decays[step]
    views = batch()
    targets = teacher(views[:2])
    preds = student(views)
    loss = crit(preds, targets, epoch)
    opt.zero_grad()
    loss.backward()
    norms = utils.clip_gradients(student, 0.3)
    utils.cancel_gradients_last_layer(epoch, student, 1)
    opt.step()
    with torch.no_grad():
        m = momenta[step]
        for src, dst in zip(student.parameters(), teacher.parameters()):
            dst.data.mul_(m).add_((1 - m) * src.detach().data)
    print("VALUE grad_norms%d" % step, float(sum(norms)))
    print("VALUE center%d" % step, float(crit.center.abs().sum()))


def teacher_sums(teacher, tag):
    for key, q in teacher.named_parameters():
        print("VALUE %s_%s" % (tag, key), float(q.abs().sum()))
'''

DRIVERS = {
    "dino_step": _TRAINING + '''
student, teacher, crit, opt = networks()
for step in range(EPOCHS * PER_EPOCH):
    one_step(student, teacher, crit, opt, step)
teacher_sums(teacher, "teacher")
''',
    "dino_checkpoint": _TRAINING + '''
student, teacher, crit, opt = networks()
for step in range(2):
    one_step(student, teacher, crit, opt, step)
path = "dino_checkpoint.pth"      # relative: restart_from_checkpoint's printed lines the same on both sides
torch.save({"student": student.state_dict(), "teacher": teacher.state_dict(), "optimizer": opt.state_dict(),
            "epoch": 1, "dino_loss": crit.state_dict()}, path)
student, teacher, crit, opt = networks()
progress = {"epoch": 0}
utils.restart_from_checkpoint(path, run_variables=progress, student=student, teacher=teacher, optimizer=opt,
                              dino_loss=crit)
print("VALUE epoch", progress["epoch"])
print("VALUE restored_center", float(crit.center.abs().sum()))
probe = torch.randn(2, 3, 32, 32)
with torch.no_grad():
    print("VALUE restored_student", float(student(probe).abs().sum()))
for step in range(2, 4):
    one_step(student, teacher, crit, opt, step)
teacher_sums(teacher, "teacher")
# the file the torch run wrote (torch.save's zip), restored on both sides: the converted side reads it with
# torch.load's conversion
torch_file = os.path.join("..", "..", "..", "torch", "x", "prog", "dino_checkpoint.pth")
student, teacher, crit, opt = networks()
progress = {"epoch": 0}
utils.restart_from_checkpoint(torch_file, run_variables=progress, student=student, teacher=teacher, optimizer=opt,
                              dino_loss=crit)
print("VALUE torch_file_epoch", progress["epoch"])
print("VALUE torch_file_center", float(crit.center.abs().sum()))
with torch.no_grad():
    print("VALUE torch_file_student", float(student(probe).abs().sum()))
    print("VALUE torch_file_teacher", float(teacher(probe).abs().sum()))
one_step(student, teacher, crit, opt, 2)
''',
    "vit_features": _SETUP + '''
vit = small_vit().eval()
images = torch.randn(2, 3, 40, 48)
with torch.no_grad():
    attn = vit.get_last_selfattention(images)
    layers = vit.get_intermediate_layers(images, n=2)
    cls = vit(images)
print("VALUE attn_shape", float(np.prod(attn.shape)))
print("VALUE attn", float((attn * torch.arange(attn.shape[-1]).float()).sum()))
for i, out in enumerate(layers):
    print("VALUE layer%d" % i, float(out.abs().sum()))
    print("VALUE layer%d_tokens" % i, float(out.shape[1]))
print("VALUE cls", float(cls.abs().sum()))
with torch.no_grad():
    same = vit(torch.randn(2, 3, 32, 32))
print("VALUE cls_native", float(same.abs().sum()))
''',
    "linear_eval": _SETUP + '''
from eval_knn import knn_classifier
from eval_linear import LinearClassifier

vit = small_vit().eval()
n_last, classes = 1, 5
clf = LinearClassifier(32 * 2, num_labels=classes)
opt = torch.optim.SGD(clf.parameters(), 0.05, momentum=0.9, weight_decay=0)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, 6, eta_min=0)
for step in range(6):
    images = torch.randn(4, 3, 32, 32)
    labels = torch.randint(0, classes, (4,))
    with torch.no_grad():
        blocks = vit.get_intermediate_layers(images, n_last)
        feats = torch.cat([b[:, 0] for b in blocks], dim=-1)
        pooled = torch.mean(blocks[-1][:, 1:], dim=1)
        feats = torch.cat((feats.unsqueeze(-1), pooled.unsqueeze(-1)), dim=-1).reshape(feats.shape[0], -1)
    loss = nn.CrossEntropyLoss()(clf(feats), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
print("VALUE linear_weight", float(clf.linear.weight.abs().sum()))

# k-NN on the frozen features
with torch.no_grad():
    bank = nn.functional.normalize(vit(torch.randn(12, 3, 32, 32)), dim=1, p=2)
    queries = nn.functional.normalize(vit(torch.randn(100, 3, 32, 32)), dim=1, p=2)
bank_labels = torch.arange(12) % 4
query_labels = torch.arange(100) % 4
top1, top5 = knn_classifier(bank, bank_labels, queries, query_labels, 3, 0.07, num_classes=4)
print("VALUE knn_top1", float(top1))
print("VALUE knn_top5", float(top5))
''',
}
