"""The `heldout61` set of bench/real_world.py (`--set heldout61`): GPTs and a detection transformer:
karpathy/minGPT (GPT, its Trainer and the projects' adder and chargpt scripts, run whole), lucidrains/x-transformers
(TransformerWrapper with Decoder options, AutoregressiveWrapper training and kv-cached generation, the
encoder-decoder XTransformer of train_copy.py) and facebookresearch/DETR (DETR and DETRsegm built by models.build,
the HungarianMatcher's scipy assignment, SetCriterion's losses, engine.train_one_epoch),
converted as a new user would convert them, through the scripts as they are or drivers of ours calling their
documented entry points.

    python bench/real_world.py --mirrors /work/.mirror --set heldout61 [--only mingpt_adder,detr_train]

- minGPT (mingpt/ and the project script as they are, run whole with command-line overrides that
  `config.merge_from_args(sys.argv[1:])` reads; the Trainer's RandomSampler draws with replacement, DataLoader
  workers 0, device 'auto' is the CPU here; 3 training steps):
  - mingpt_adder: projects/adder/adder.py `--data.ndigit=1 --trainer.max_iters=3 --trainer.batch_size=16
    --trainer.num_workers=0`: gpt-nano (3 layers, 3 heads, 48 wide) on 1-digit additions (80 training, 20 test
    problems: its own AdditionDataset, torch.randperm under a seeded torch.Generator), AdamW through
    GPT.configure_optimizers (decayed and undecayed groups), clip_grad_norm_ 1.0; at iteration 0 the callback's
    eval_split of both splits (`model.generate(d1d2, ndigit+1, do_sample=False)`, greedy) prints its scores and the
    model's mistakes (PRINTED: the "final score" and "GPT claims" lines) and saves model.pt.
  - mingpt_chargpt: projects/chargpt/chargpt.py `--data.block_size=16 --model.model_type=None --model.n_layer=1
    --model.n_head=2 --model.n_embd=16 --trainer.max_iters=3 --trainer.batch_size=8 --trainer.num_workers=0` over
    an input.txt of ours (one line of about 750 characters of English without newlines, so the sample is one line);
    at iteration 0 the callback samples 500 characters after "O God, O God!" (`generate(x, 500, temperature=1.0,
    do_sample=True, top_k=10)`: topk, the -inf fill, softmax, torch.multinomial) and prints it (PRINTED: the
    sample's line). One layer: with gpt-nano's three, the 500 PyNative forwards took more than the bench's 240 s
    per side on this shared 2-core machine (about 0.38 s each).
- x-transformers (x_transformers/ as it is; it imports einops, einx, loguru, packaging and torch_einops_utils:
  `pip install einx loguru torch-einops-utils` into the venv, numpy<2 and torch kept; torch_einops_utils is
  converted with the program, `msmigrate convert --deps torch_einops_utils`, as the default set's x_transformers):
  - xt_enwik8_rotary: train_enwik8.py's loop (fire, wandb and accelerate left out: a driver): a synthetic
    enwik8.gz of ours (about 3 KB of English bytes, gzip, read as the script reads it: np.frombuffer, split 90/10),
    its TextSamplerDataset (torch.randint starts) in DataLoaders of 4, `AutoregressiveWrapper(TransformerWrapper(
    num_tokens=256, max_seq_len=32, attn_layers=Decoder(dim=32, depth=2, heads=2, rotary_pos_emb=True,
    ff_glu=True)))`, Adam 1e-3, 2 batches with gradient accumulation 2 (`loss / 2` backward), clip_grad_norm_ 0.5,
    the validation loss under no_grad, then `model.generate(prompts=inp, seq_len=16, cache_kv=True)` (top_k
    filtering and torch.multinomial, the kv cache): VALUEs.
  - xt_enwik8_alibi: the same with `Decoder(dim=32, depth=2, heads=4, alibi_pos_bias=True, alibi_num_heads=2,
    attn_gate_values=True, ff_glu=True)` and `TransformerWrapper(..., use_abs_pos_emb=False)`, and greedy generation
    (`temperature=0.`).
  - xt_copy: train_copy.py's loop, small: `XTransformer(dim=32, tie_token_emb=True, return_tgt_loss=True,
    enc_num_tokens=18, enc_depth=1, enc_heads=2, enc_max_seq_len=6, enc_attn_cog_signed=True, dec_num_tokens=18,
    dec_depth=1, dec_heads=2, dec_max_seq_len=13, dec_attn_cog_signed=True)`, batches of 4 from its cycle()
    (torch.randint sources, the prefix, the copied target, a bool source mask), Adam 3e-4, 4 steps, then
    `model.generate(src, start_tokens, 6, mask=src_mask)` (the encoder once, the decoder's AutoregressiveWrapper
    sampling with cross-attention) and the incorrect count: VALUEs.
- DETR (models/, util/ and engine.py as they are; datasets/__init__.py imports coco.py, which imports pycocotools,
  not installed: stand-ins of ours for the datasets package and its coco_eval and panoptic_eval modules, which
  engine.py imports and nothing here calls; torchvision does not import next to this CPU torch, so the program gets
  a `torchvision` package of ours, written before the conversion and converted with it, both sides, as
  bench/_rw_heldout40.py's: `__version__`, `_is_tracing`, ops.boxes.box_area, ops.misc.interpolate (torch's),
  models._utils.IntermediateLayerGetter as torchvision documents it, and models.resnet18/resnet50: residual
  networks of ours with one block per stage, torchvision's stage widths, strides and keyword arguments): a driver
  builds main.py's options with small values (resnet18, hidden_dim 32, nheads 2, dim_feedforward 64, 1 encoder
  and 2 decoder layers, 5 queries, aux_loss, dropout 0), sets `models.backbone.is_main_process` to False (the
  backbone built with pretrained=False: nothing downloaded), `model, criterion, postprocessors =
  models.build_model(args)` (DETR with FrozenBatchNorm2d, the sine position embedding, the transformer,
  HungarianMatcher and SetCriterion with the aux losses), main.py's param_dicts (the backbone at lr_backbone 1e-5),
  AdamW (lr 1e-4, weight decay 1e-4), StepLR(lr_drop 1), and 2 epochs of `engine.train_one_epoch(model, criterion,
  data_loader, optimizer, device, epoch, max_norm=0.1)` (its MetricLogger, reduce_dict, clip_grad_norm_) over a
  DataLoader (batch 2, util.misc.collate_fn: NestedTensors of padded images and their masks) of 4 synthetic
  images of ours of two sizes (48 x 64 and 64 x 48) as DETR's transforms give them (normalized tensors; targets
  with normalized cxcywh boxes, labels, image_id, area, iscrowd, orig_size, size); then in eval mode the
  criterion's losses of the first batch and postprocessors['bbox'] (scores, labels, boxes scaled to orig_size):
  VALUEs. DETR's datasets/transforms.py is not run (torchvision's transforms on PIL images).
  - detr_train: as above.
  - detr_segm: `--masks` (DETRsegm: the backbone's intermediate layers, MHAttentionMap, MaskHeadSmallConv's FPN,
    sigmoid_focal_loss and dice_loss over interpolated masks), `--backbone resnet50` (MaskHeadSmallConv's FPN
    widths are resnet50's), lr_backbone 0 (the backbone frozen, as main.py allows), hidden_dim 128 and 8 heads
    (MaskHeadSmallConv's GroupNorm(8, ...) widths), targets with bool instance masks; postprocessors['bbox'] and
    ['segm'] (PostProcessSegm's interpolation and threshold): VALUEs.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

MINGPT = "karpathy+minGPT@37baab71b9abea1b76ab957409a1cc2fbfba8a26"
XTRANSFORMERS = "lucidrains+x-transformers@9252ed7838021ee61e6c5be0930b3a9a88efdf06"
DETR = "facebookresearch+detr@29901c51d7fe8712168b8d0d64351170bc0f83e0"

_TEXT = (
    "O God, O God! how weary, stale, flat and unprofitable seem to me all the uses of this world. Fie on it, ah "
    "fie! it is an unweeded garden that grows to seed; things rank and gross in nature possess it merely. That it "
    "should come to this! But two months dead, nay, not so much, not two; so excellent a king, that was to this "
    "Hyperion to a satyr; so loving to my mother that he might not beteem the winds of heaven visit her face too "
    "roughly. Heaven and earth, must I remember? Why, she would hang on him as if increase of appetite had grown "
    "by what it fed on; and yet within a month, let me not think on it. Frailty, thy name is woman! A little "
    "month, or ere those shoes were old with which she followed my poor father's body, like Niobe, all tears."
)

_ADDER_ARGS = ["--data.ndigit=1", "--trainer.max_iters=3", "--trainer.batch_size=16", "--trainer.num_workers=0"]
_CHARGPT_ARGS = ["--data.block_size=16", "--model.model_type=None", "--model.n_layer=1", "--model.n_head=2",
                 "--model.n_embd=16", "--trainer.max_iters=3", "--trainer.batch_size=8", "--trainer.num_workers=0"]

_ENWIK8_DRIVER = '''
import gzip
import os
import random

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset
from x_transformers import TransformerWrapper, Decoder
from x_transformers.autoregressive_wrapper import AutoregressiveWrapper

TEXT = {text!r}

# a small enwik8.gz of ours, in the format the script reads (gzip of bytes)
os.makedirs("./data", exist_ok=True)
with gzip.open("./data/enwik8.gz", "wb") as file:
    file.write((TEXT * 5).encode())

random.seed(0)
torch.manual_seed(0)


def exists(v):
    return v is not None


def cycle(loader):
    while True:
        for data in loader:
            yield data


def decode_token(token):
    return str(chr(max(32, token)))


def decode_tokens(tokens):
    return ''.join(list(map(decode_token, tokens)))


# train_enwik8.py's train(), small: fire, wandb and accelerate left out
num_batches = 2
batch_size = 4
gradient_accumulate_every = 2
learning_rate = 1e-3
validate_every = 1
generate_every = 2
seq_len = 32
generate_length = 16
device = "cpu"

model = TransformerWrapper(
    num_tokens = 256,
    max_seq_len = seq_len,
    {wrapper_kwargs}attn_layers = Decoder(
        {decoder_kwargs}
    )
)
model = AutoregressiveWrapper(model)

with gzip.open('./data/enwik8.gz') as file:
    data = np.frombuffer(file.read(int(95e6)), dtype=np.uint8).copy()
    train_x, valid_x = np.split(data, [int(len(data) * 0.9)])
    data_train, data_val = torch.from_numpy(train_x), torch.from_numpy(valid_x)


class TextSamplerDataset(Dataset):
    def __init__(self, data, seq_len):
        super().__init__()
        self.data = data
        self.seq_len = seq_len

    def __getitem__(self, index):
        rand_start = torch.randint(0, self.data.size(0) - self.seq_len - 1, (1,))
        full_seq = self.data[rand_start: rand_start + self.seq_len + 1].long()
        return full_seq.to(device)

    def __len__(self):
        return self.data.size(0) // self.seq_len


train_dataset = TextSamplerDataset(data_train, seq_len)
val_dataset = TextSamplerDataset(data_val, seq_len)
train_loader = cycle(DataLoader(train_dataset, batch_size = batch_size, drop_last = True))
val_loader = cycle(DataLoader(val_dataset, batch_size = batch_size, drop_last = True))

optim = torch.optim.Adam(model.parameters(), lr=learning_rate)

for i in range(num_batches):
    model.train()

    for _ in range(gradient_accumulate_every):
        loss = model(next(train_loader))
        (loss / gradient_accumulate_every).backward()

    print(f'training loss: {{loss.item()}}')

    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    optim.step()
    optim.zero_grad()

    if i % validate_every == 0:
        model.eval()
        with torch.no_grad():
            loss = model(next(val_loader))
            print(f'validation loss: {{loss.item()}}')
print("VALUE valid_loss", loss.item())

model.eval()
inp = random.choice(val_dataset)[:-1]
prime = decode_tokens(inp.cpu().numpy())
print(f'%s \\n\\n %s' % (prime, '*' * 100))
sample = model.generate(
    prompts = inp,
    seq_len = generate_length,
    cache_kv = True{generate_kwargs}
)
output_str = decode_tokens(sample.cpu().numpy())
print(output_str)
print("VALUE sample_sum", float(sample.sum()))
print("VALUE sample_first", float(sample[0]))
with torch.no_grad():
    logits = model.net(sample[None])
print("VALUE logits", float(logits.abs().mean()))
'''

_COPY_DRIVER = '''
import torch
from x_transformers import XTransformer

# train_copy.py, small
NUM_BATCHES = 4
BATCH_SIZE = 4
LEARNING_RATE = 3e-4
NUM_TOKENS = 16 + 2
ENC_SEQ_LEN = 6
DEC_SEQ_LEN = 12 + 1
DEVICE = 'cuda' if torch.cuda.is_available() else 'cpu'

torch.manual_seed(0)


def cycle():
    while True:
        prefix = torch.ones((BATCH_SIZE, 1)).long().to(DEVICE)
        src = torch.randint(2, NUM_TOKENS, (BATCH_SIZE, ENC_SEQ_LEN)).long().to(DEVICE)
        tgt = torch.cat((prefix, src, src), 1)
        src_mask = torch.ones(BATCH_SIZE, src.shape[1]).bool().to(DEVICE)
        yield (src, tgt, src_mask)


model = XTransformer(
    dim = 32,
    tie_token_emb = True,
    return_tgt_loss = True,
    enc_num_tokens=NUM_TOKENS,
    enc_depth = 1,
    enc_heads = 2,
    enc_max_seq_len = ENC_SEQ_LEN,
    enc_attn_cog_signed = True,
    dec_num_tokens = NUM_TOKENS,
    dec_depth = 1,
    dec_heads = 2,
    dec_max_seq_len = DEC_SEQ_LEN,
    dec_attn_cog_signed = True
).to(DEVICE)

optim = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)

for i in range(NUM_BATCHES):
    model.train()

    src, tgt, src_mask = next(cycle())

    loss = model(src, tgt, mask=src_mask)
    loss.backward()
    print(f'{i}: {loss.item()}')

    optim.step()
    optim.zero_grad()

model.eval()
src, _, src_mask = next(cycle())
src, src_mask = src[:1], src_mask[:1]
start_tokens = (torch.ones((1, 1)) * 1).long().to(DEVICE)

sample = model.generate(src, start_tokens, ENC_SEQ_LEN, mask = src_mask)
incorrects = (src != sample).long().abs().sum()

print(f"input:  ", src)
print(f"predicted output:  ", sample)
print(f"incorrects: {incorrects}")
print("VALUE incorrects", float(incorrects))
print("VALUE sample_sum", float(sample.sum()))
with torch.no_grad():
    print("VALUE eval_loss", float(model(src, torch.cat((start_tokens, src, src), 1), mask=src_mask)))
'''

_DETR_DRIVER = """
import argparse
import random

import numpy as np
import torch
from torch.utils.data import DataLoader

import models.backbone
import util.misc as utils
from engine import train_one_epoch
from models import build_model
from util.box_ops import box_xyxy_to_cxcywh

random.seed(0)
torch.manual_seed(42)
np.random.seed(42)

# main.py's options, small
args = argparse.Namespace(
    lr=1e-4, lr_backbone={lr_backbone}, batch_size=2, weight_decay=1e-4, epochs=2, lr_drop=1, clip_max_norm=0.1,
    frozen_weights=None, backbone="{backbone}", dilation=False, position_embedding="sine", enc_layers=1,
    dec_layers=2, dim_feedforward={dim_feedforward}, hidden_dim={hidden_dim}, dropout=0.0, nheads={nheads},
    num_queries=5, pre_norm=False, masks={masks}, aux_loss=True, set_cost_class=1, set_cost_bbox=5,
    set_cost_giou=2, mask_loss_coef=1, dice_loss_coef=1, bbox_loss_coef=5, giou_loss_coef=2, eos_coef=0.1,
    dataset_file="coco", device="cpu")
models.backbone.is_main_process = lambda: False     # the backbone built with pretrained=False: nothing downloaded
device = torch.device(args.device)
model, criterion, postprocessors = build_model(args)
model.to(device)
n_parameters = sum(p.numel() for p in model.parameters() if p.requires_grad)
print('number of params:', n_parameters)

param_dicts = [
    {{"params": [p for n, p in model.named_parameters() if "backbone" not in n and p.requires_grad]}},
    {{
        "params": [p for n, p in model.named_parameters() if "backbone" in n and p.requires_grad],
        "lr": args.lr_backbone,
    }},
]
optimizer = torch.optim.AdamW(param_dicts, lr=args.lr, weight_decay=args.weight_decay)
lr_scheduler = torch.optim.lr_scheduler.StepLR(optimizer, args.lr_drop)

MEAN = torch.tensor([0.485, 0.456, 0.406])[:, None, None]
STD = torch.tensor([0.229, 0.224, 0.225])[:, None, None]


class SyntheticCoco(torch.utils.data.Dataset):
    # images and targets as datasets/coco.py's transforms give them to the model: normalized 3 x H x W float images
    # of two sizes, targets with normalized cxcywh boxes, labels, image_id, area, iscrowd, orig_size, size (and
    # instance masks with --masks)
    def __init__(self, n, masks):
        rng = np.random.RandomState(0)
        self.items = []
        for i in range(n):
            w, h = (64, 48) if i % 2 else (48, 64)
            pixels = rng.rand(h, w, 3).astype(np.float32)
            k = 1 + i % 2
            x0 = rng.randint(0, w // 2, k)
            y0 = rng.randint(0, h // 2, k)
            bw = rng.randint(8, w // 2, k)
            bh = rng.randint(8, h // 2, k)
            boxes = np.stack([x0, y0, x0 + bw, y0 + bh], 1).astype(np.float32)
            for x1, y1, x2, y2 in boxes.astype(int):
                pixels[y1:y2, x1:x2] = pixels[y1:y2, x1:x2] * 0.5 + 0.4
            image = (torch.from_numpy(pixels).permute(2, 0, 1) - MEAN) / STD
            target = {{"boxes": box_xyxy_to_cxcywh(torch.as_tensor(boxes)) / torch.tensor([w, h, w, h],
                                                                                         dtype=torch.float32),
                      "labels": torch.tensor(rng.randint(1, 91, k)), "image_id": torch.tensor([i]),
                      "area": torch.as_tensor(bw * bh, dtype=torch.float32),
                      "iscrowd": torch.zeros(k, dtype=torch.int64), "orig_size": torch.as_tensor([h, w]),
                      "size": torch.as_tensor([h, w])}}
            if masks:
                m = np.zeros((k, h, w), dtype=bool)
                for j, (x1, y1, x2, y2) in enumerate(boxes.astype(int)):
                    m[j, y1:y2, x1:x2] = True
                target["masks"] = torch.as_tensor(m)
            self.items.append((image, target))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        return self.items[idx]


dataset_train = SyntheticCoco(4, args.masks)
data_loader_train = DataLoader(dataset_train, batch_size=args.batch_size, shuffle=False,
                               collate_fn=utils.collate_fn, num_workers=0)

for epoch in range(args.epochs):
    train_stats = train_one_epoch(model, criterion, data_loader_train, optimizer, device, epoch, args.clip_max_norm)
    lr_scheduler.step()
    print("epoch", epoch, "loss", train_stats["loss"])
print("VALUE lr", optimizer.param_groups[0]["lr"])

model.eval()
criterion.eval()
samples, targets = next(iter(DataLoader(dataset_train, batch_size=2, collate_fn=utils.collate_fn)))
with torch.no_grad():
    outputs = model(samples)
    loss_dict = criterion(outputs, targets)
    orig_target_sizes = torch.stack([t["orig_size"] for t in targets], dim=0)
    results = postprocessors['bbox'](outputs, orig_target_sizes)
    print("VALUE eval_loss_ce", float(loss_dict["loss_ce"]))
    print("VALUE eval_loss_giou", float(loss_dict["loss_giou"]))
    print("VALUE pred_logits", float(outputs["pred_logits"].abs().mean()))
    print("VALUE pred_boxes", float(outputs["pred_boxes"].mean()))
    print("VALUE scores", float(torch.stack([r["scores"] for r in results]).mean()))
    print("VALUE boxes", float(torch.stack([r["boxes"] for r in results]).mean()))
    if 'segm' in postprocessors:
        target_sizes = torch.stack([t["size"] for t in targets], dim=0)
        results = postprocessors['segm'](results, outputs, orig_target_sizes, target_sizes)
        print("VALUE pred_masks", float(outputs["pred_masks"].abs().mean()))
        print("VALUE segm_masks", float(sum(r["masks"].float().mean() for r in results)))
"""

_DATASETS_INIT = """
\"\"\"A stand-in written by bench/_rw_heldout61.py: DETR's datasets/__init__.py imports coco.py, which imports
pycocotools (not installed); engine.py imports the two modules below, which nothing here calls.\"\"\"
"""

_COCO_EVAL = """
\"\"\"A stand-in written by bench/_rw_heldout61.py (see datasets/__init__.py).\"\"\"


class CocoEvaluator:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("the stand-in's CocoEvaluator is imported, not used")
"""

_PANOPTIC_EVAL = """
\"\"\"A stand-in written by bench/_rw_heldout61.py (see datasets/__init__.py).\"\"\"


class PanopticEvaluator:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("the stand-in's PanopticEvaluator is imported, not used")
"""

# torchvision does not import next to this CPU torch: a `torchvision` package of ours, written before the
# conversion and converted with the program (both sides), with what DETR reads of it
_TV_INIT = """
\"\"\"A stand-in written by bench/_rw_heldout61.py: torchvision does not import next to this CPU torch; DETR reads
its version, _is_tracing, models.resnet18/resnet50, models._utils.IntermediateLayerGetter, ops.boxes.box_area and
ops.misc.interpolate.\"\"\"
from . import models, ops

__version__ = "0.28.0"


def _is_tracing():
    return False
"""

_TV_MODELS = """
\"\"\"A stand-in written by bench/_rw_heldout61.py: small residual networks of ours under torchvision's resnet names
(one block per stage, torchvision's stage widths and strides, its keyword arguments).\"\"\"
import torch.nn as nn


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride, norm_layer):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = norm_layer(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = norm_layer(planes)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride, bias=False), norm_layer(planes))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        return self.relu(self.bn2(self.conv2(out)) + identity)


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride, norm_layer):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = norm_layer(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
        self.bn2 = norm_layer(planes)
        self.conv3 = nn.Conv2d(planes, planes * 4, 1, bias=False)
        self.bn3 = norm_layer(planes * 4)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or inplanes != planes * 4:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes * 4, 1, stride, bias=False),
                                            norm_layer(planes * 4))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        return self.relu(self.bn3(self.conv3(out)) + identity)


class ResNet(nn.Module):
    def __init__(self, block, num_classes=1000, replace_stride_with_dilation=None, norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2d
        if replace_stride_with_dilation is not None and any(replace_stride_with_dilation):
            raise NotImplementedError("the stand-in has no dilation")
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = norm_layer(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        inplanes = 64
        for i, planes in enumerate((64, 128, 256, 512)):
            setattr(self, f"layer{i + 1}", nn.Sequential(block(inplanes, planes, 1 if i == 0 else 2, norm_layer)))
            inplanes = planes * block.expansion
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(inplanes, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(self.avgpool(x).flatten(1))


def resnet18(pretrained=False, **kwargs):
    if pretrained:
        raise NotImplementedError("the stand-in has no weights")
    return ResNet(BasicBlock, **kwargs)


def resnet50(pretrained=False, **kwargs):
    if pretrained:
        raise NotImplementedError("the stand-in has no weights")
    return ResNet(Bottleneck, **kwargs)
"""

_TV_MODELS_UTILS = """
\"\"\"A stand-in written by bench/_rw_heldout61.py: IntermediateLayerGetter as torchvision documents it (the
model's children up to the last returned one, run in order; the returned ones under their new names).\"\"\"
from collections import OrderedDict

import torch.nn as nn


class IntermediateLayerGetter(nn.ModuleDict):
    def __init__(self, model, return_layers):
        orig_return_layers = return_layers
        return_layers = {str(k): str(v) for k, v in return_layers.items()}
        layers = OrderedDict()
        for name, module in model.named_children():
            layers[name] = module
            if name in return_layers:
                del return_layers[name]
            if not return_layers:
                break
        super().__init__(layers)
        self.return_layers = orig_return_layers

    def forward(self, x):
        out = OrderedDict()
        for name, module in self.items():
            x = module(x)
            if name in self.return_layers:
                out[self.return_layers[name]] = x
        return out
"""

_TV_OPS_INIT = """
\"\"\"A stand-in written by bench/_rw_heldout61.py.\"\"\"
from . import boxes, misc
"""

_TV_OPS_BOXES = """
\"\"\"A stand-in written by bench/_rw_heldout61.py: box_area as torchvision documents it.\"\"\"


def box_area(boxes):
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
"""

_TV_OPS_MISC = """
\"\"\"A stand-in written by bench/_rw_heldout61.py: torchvision.ops.misc.interpolate is torch's.\"\"\"
import torch

interpolate = torch.nn.functional.interpolate
"""

_TORCHVISION = {
    "torchvision/__init__.py": _TV_INIT,
    "torchvision/models/__init__.py": _TV_MODELS,
    "torchvision/models/_utils.py": _TV_MODELS_UTILS,
    "torchvision/ops/__init__.py": _TV_OPS_INIT,
    "torchvision/ops/boxes.py": _TV_OPS_BOXES,
    "torchvision/ops/misc.py": _TV_OPS_MISC,
}

_DETR_FILES = "models,util,engine.py"

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("mingpt_adder", MINGPT, "mingpt,projects/adder/adder.py", "adder.py", _ADDER_ARGS, None),
    ("mingpt_chargpt", MINGPT, "mingpt,projects/chargpt/chargpt.py", "chargpt.py", _CHARGPT_ARGS, None),
    ("xt_enwik8_rotary", XTRANSFORMERS, "x_transformers", "driver.py", [], None),
    ("xt_enwik8_alibi", XTRANSFORMERS, "x_transformers", "driver.py", [], None),
    ("xt_copy", XTRANSFORMERS, "x_transformers", "driver.py", [], None),
    ("detr_train", DETR, _DETR_FILES, "driver.py", [], None),
    ("detr_segm", DETR, _DETR_FILES, "driver.py", [], None),
]

DEPS = {"xt_enwik8_rotary": ["torch_einops_utils"], "xt_enwik8_alibi": ["torch_einops_utils"],
        "xt_copy": ["torch_einops_utils"]}

_SMALL = dict(lr_backbone=1e-5, backbone="resnet18", dim_feedforward=64, hidden_dim=32, nheads=2, masks=False)
_SEGM = dict(lr_backbone=0, backbone="resnet50", dim_feedforward=128, hidden_dim=128, nheads=8, masks=True)

# Drivers: our own code, through the libraries' documented entry points.
DRIVERS = {
    "xt_enwik8_rotary": _ENWIK8_DRIVER.format(
        text=_TEXT, wrapper_kwargs="",
        decoder_kwargs="dim = 32,\n        depth = 2,\n        heads = 2,\n        rotary_pos_emb = True,\n"
                       "        ff_glu = True",
        generate_kwargs=""),
    "xt_enwik8_alibi": _ENWIK8_DRIVER.format(
        text=_TEXT, wrapper_kwargs="use_abs_pos_emb = False,\n    ",
        decoder_kwargs="dim = 32,\n        depth = 2,\n        heads = 4,\n        alibi_pos_bias = True,\n"
                       "        alibi_num_heads = 2,\n        attn_gate_values = True,\n        ff_glu = True",
        generate_kwargs=",\n    temperature = 0."),
    "xt_copy": _COPY_DRIVER,
    "detr_train": _DETR_DRIVER.format(**_SMALL),
    "detr_segm": _DETR_DRIVER.format(**_SEGM),
}

FILES = {**{"mingpt_chargpt": {"input.txt": _TEXT}},
         **{name: {"datasets/__init__.py": _DATASETS_INIT, "datasets/coco_eval.py": _COCO_EVAL,
                   "datasets/panoptic_eval.py": _PANOPTIC_EVAL, **_TORCHVISION}
            for name, *_ in PROGRAMS if name.startswith("detr")}}

# the lines the programs print from their evaluations (the adder's scores and mistakes, chargpt's sample)
PRINTED = {"mingpt_adder": r"^.*final score.*$|^GPT claims.*$", "mingpt_chargpt": r"^O God, O God!.*$"}

# minGPT: 3 steps; x-transformers: 4 backward calls (enwik8: 2 batches of 2 accumulated), xt_copy 4 steps;
# DETR: 2 epochs of 2 batches
LOSSES = {name: 4 for name, *_ in PROGRAMS}
