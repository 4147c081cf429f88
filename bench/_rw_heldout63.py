"""The `heldout63` set of bench/real_world.py (`--set heldout63`): detection, super-resolution and promptable
segmentation: ultralytics/yolov5 (DetectionModel and SegmentationModel built from models/*.yaml, trained as
train.py and segment/train.py train them with utils/loss.py's and utils/segment/loss.py's ComputeLoss),
JingyunLiang/SwinIR (SwinIR for classical and lightweight super-resolution, trained with an L1 loss and run through
main_test_swinir.py's padding and tiling) and facebookresearch/segment-anything (a small Sam from its modeling
package, run through SamPredictor and Sam.forward, and its mask decoder fine-tuned), converted as a new user would
convert them, through drivers of ours calling their documented entry points.

    RW_SITE=DIR python bench/real_world.py --mirrors /work/.mirror --set heldout63 [--only yolov5n_det,sam_forward]

Extra packages (not in setup.sh): YOLOv5's modules import cv2, pandas, IPython, pkg_resources, seaborn and
matplotlib at import time (models/common.py, utils/general.py, utils/plots.py, utils/metrics.py), installed into the
bench's venv: `pip install "numpy<2" "opencv-python-headless<4.12" "pandas<3" matplotlib seaborn ipython
"setuptools<81"` (opencv-python-headless 4.11.0.86, pandas 2.3.3, matplotlib 3.11.2, seaborn 0.13.2, ipython 9.19.1,
setuptools 80.10.2 for pkg_resources; thop is optional there and not installed); timm 1.0.31 for SwinIR installed
apart as bench/_rw_heldout59.py's (`pip download timm==1.0.31 --no-deps -d W; pip install --no-deps --target DIR
W/*.whl`) and given to both sides with RW_SITE=DIR.

- YOLOv5 at v7.0 (models/, utils/ and data/hyps/ as they are; later commits import the ultralytics package, a torch
  library of its own, for the loss's bbox_iou): a driver does what train.py (and segment/train.py) does on CPU with
  AMP off: hyp.scratch-low.yaml read with yaml.safe_load, `Model(cfg, ch=3, nc=80, anchors=hyp.get('anchors'))`
  (parse_model evaluates the module names the yaml spells, `nn.Upsample` among them), nbs 64 and batch 2
  (weight-decay scaling, accumulate), utils.torch_utils.smart_optimizer (SGD with nesterov over three parameter
  groups, the norm layers' weights found through `nn.__dict__.items()`, add_param_group), the linear LambdaLR,
  ModelEMA, the hyp's box/cls/obj scaling by layers and image size, labels_to_class_weights, `ComputeLoss(model)`,
  and two epochs of two batches of train.py's loop: warmup by np.interp of every group's lr and momentum,
  accumulate from np.interp (optimizer steps at iterations 0, 1 and 3), `torch.cuda.amp.autocast(False)`,
  `GradScaler(enabled=False)` scale/unscale_/step/update, clip_grad_norm_ 10, ema.update, the running mean of the
  loss items, scheduler.step and ema.update_attr after each epoch; then the EMA model in eval mode on the first
  batch (Detect's inference path: grids, anchors, sigmoid boxes) and its loss on the training outputs: VALUEs (the
  loss items, the learning rates, the mean objectness, box and the largest confidence). The images: 2 x 3 x 64 x
  64 uint8 noise with bright boxes (NumPy's seeded RandomState), targets (image, class, x, y, w, h) as the
  collate_fn gives them.
  - yolov5n_det: `Model('models/yolov5n.yaml')`, utils/loss.py's ComputeLoss (build_targets' anchor matching and
    neighbour offsets, CIoU through utils/metrics.bbox_iou, BCEWithLogitsLoss).
  - yolov5n_seg: `SegmentationModel('models/segment/yolov5n-seg.yaml')` (Segment head: Proto and
    `self.detect = Detect.forward`), utils/segment/loss.py's `ComputeLoss(model, overlap=True)` with the overlap
    masks segment/train.py's loader gives (each box of an image filled with its index at a quarter of the
    resolution; crop_mask, the per-image mask loss loop), the proto's mean |.| a VALUE too.
- SwinIR (models/network_swinir.py, utils/ and main_test_swinir.py as they are): `SwinIR(upscale=2, in_chans=3,
  img_size=8, window_size=4, img_range=1., depths=[2, 2], embed_dim=16, num_heads=[2, 2], mlp_ratio=2,
  upsampler=..., resi_connection=..., drop_path_rate=0.)` (DropPath's draws are not replayed by the runner: off),
  four Adam steps (lr 2e-4, betas (0.9, 0.99), MultiStepLR at 2 and 3) of nn.L1Loss on pairs of synthetic 16 x 16
  HR images and their bicubic x2 downsampling, then main_test_swinir.py's inference: an 11 x 13 LR image padded by
  flipping to a multiple of the window (12 x 16: the attention mask computed for a size other than img_size),
  main_test_swinir's own `test(img_lq, model, args, window_size)`, the crop, the uint8 round trip (its one-line
  `output.data.squeeze().float().cpu().clamp_(0, 1).numpy()` written with the clamp_ as a statement: an in-place
  method on a chain whose result is used is a TODO raising MigrationError) and
  utils/util_calculate_psnr_ssim's calculate_psnr and calculate_ssim: VALUEs.
  - swinir_classical: `upsampler='pixelshuffle'`, `resi_connection='1conv'`, the image tested whole.
  - swinir_lightweight: `upsampler='pixelshuffledirect'`, `resi_connection='3conv'`, tested tile by tile
    (`args.tile=8, tile_overlap=4`: the E/W accumulation with `add_` into slices).
- segment-anything (segment_anything/ as it is; utils/transforms.py imports torchvision's resize and to_pil_image,
  which the runner makes importable on the torch side): build_sam.py's _build_sam made small: ImageEncoderViT
  (64-pixel images, patches of 8, embed 32, depth 2, 2 heads, window 4, global attention in the second block,
  relative positions), PromptEncoder (embed 32, mask_in_chans 4), MaskDecoder over TwoWayTransformer (depth 2,
  embed 32, mlp 64, 2 heads; IoU head 32), `sam.eval()`; synthetic HWC uint8 images (noise with a bright ellipse).
  - sam_predictor: SamPredictor as predictor_example.ipynb uses it: `set_image` (ResizeLongestSide through PIL, the
    padding), `predict` with a point and multimask_output, with two points and the best low-resolution mask as
    mask_input, with a box, with a box and a negative point (return_logits), and `predict_torch` with three boxes
    through `apply_boxes_torch`: the masks' sums, scores and logits as VALUEs.
  - sam_forward: `sam(batched_input, multimask_output=...)` (Sam.forward under no_grad) over two images of other
    sizes (40 x 56 with two boxes, 96 x 72 with two points), prepared as the notebook's batched example prepares
    them, for multimask_output False and True: masks, IoU predictions and low-resolution logits as VALUEs.
  - sam_decoder_train: the image encoder and prompt encoder frozen (requires_grad_(False)), embeddings computed
    under no_grad for two images with a box prompt around the ellipse each, then 4 Adam steps (lr 1e-3) of the
    mask decoder with a loss of ours: binary cross-entropy and dice loss of sam.postprocess_masks' upscaled logits
    against the ellipse, plus the squared error of the predicted IoU against the IoU of the thresholded mask; then
    eval-mode losses and IoU predictions as VALUEs.

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

# v7.0, the last release: later commits import the ultralytics package (a torch library of its own) for the loss
YOLOV5 = "ultralytics+yolov5@915bbf294bb74c859f0b41f1c23bc395014ea679"
SWINIR = "JingyunLiang+SwinIR@6545850fbf8df298df73d81f3e8cba638787c8bd"
SAM = "facebookresearch+segment-anything@dca509fe793f601edb92606367a655c15ac00fdf"
_YOLO_DRIVER = '''
import numpy as np
import torch
import torch.nn as nn
import yaml
from torch.optim import lr_scheduler

from models.yolo import {model_class}
from utils.general import labels_to_class_weights
from {loss_module} import ComputeLoss
from utils.torch_utils import ModelEMA, de_parallel, smart_optimizer

torch.manual_seed(0)
rng = np.random.RandomState(0)
with open("hyps/hyp.scratch-low.yaml", errors="ignore") as f:
    hyp = yaml.safe_load(f)
nc, imgsz, batch_size, epochs, mask_ratio = 80, 64, 2, 2, 4
names = [f"class{{i}}" for i in range(nc)]
model = {model_class}("{cfg}", ch=3, nc=nc, anchors=hyp.get("anchors"))
amp = False
gs = max(int(model.stride.max()), 32)
nbs = 64
accumulate = max(round(nbs / batch_size), 1)
hyp["weight_decay"] *= batch_size * accumulate / nbs
optimizer = smart_optimizer(model, "SGD", hyp["lr0"], hyp["momentum"], hyp["weight_decay"])
lf = lambda x: (1 - x / epochs) * (1.0 - hyp["lrf"]) + hyp["lrf"]  # linear
scheduler = lr_scheduler.LambdaLR(optimizer, lr_lambda=lf)
ema = ModelEMA(model)


def image_batch(n_boxes):
    """uint8 images with bright boxes on noise, targets (image, class, x, y, w, h normalized) as the collate_fn
    gives them, and the overlap masks segment/train.py's loader gives (box j of an image filled with j + 1 at a
    quarter of the resolution)"""
    imgs = rng.randint(0, 60, (batch_size, 3, imgsz, imgsz)).astype(np.uint8)
    masks = np.zeros((batch_size, imgsz // mask_ratio, imgsz // mask_ratio), np.float32)
    targets = []
    for b in range(batch_size):
        for j in range(n_boxes):
            w, h = rng.uniform(0.15, 0.5, 2)
            x, y = rng.uniform(w / 2, 1 - w / 2), rng.uniform(h / 2, 1 - h / 2)
            x0, x1 = int((x - w / 2) * imgsz), int((x + w / 2) * imgsz)
            y0, y1 = int((y - h / 2) * imgsz), int((y + h / 2) * imgsz)
            imgs[b, :, y0:y1, x0:x1] = rng.randint(150, 255)
            masks[b, y0 // mask_ratio:y1 // mask_ratio, x0 // mask_ratio:x1 // mask_ratio] = j + 1
            targets.append([b, rng.randint(0, nc), x, y, w, h])
    return torch.from_numpy(imgs), torch.tensor(targets, dtype=torch.float32), torch.from_numpy(masks)


train_loader = [image_batch(2), image_batch(3)]
labels = [np.concatenate([t[t[:, 0] == b][:, 1:].numpy() for _, t, _ in train_loader]) for b in range(batch_size)]
nl = de_parallel(model).model[-1].nl
hyp["box"] *= 3 / nl
hyp["cls"] *= nc / 80 * 3 / nl
hyp["obj"] *= (imgsz / 640) ** 2 * 3 / nl
hyp["label_smoothing"] = 0.0
model.nc = nc
model.hyp = hyp
model.class_weights = labels_to_class_weights(labels, nc) * nc
model.names = names

nb = len(train_loader)
nw = max(round(hyp["warmup_epochs"] * nb), 100)
last_opt_step = -1
scheduler.last_epoch = -1
scaler = torch.cuda.amp.GradScaler(enabled=amp)
compute_loss = ComputeLoss(model{loss_args})
for epoch in range(epochs):
    model.train()
    mloss = torch.zeros({n_items})
    optimizer.zero_grad()
    for i, (imgs, targets, masks) in enumerate(train_loader):
        ni = i + nb * epoch
        imgs = imgs.float() / 255
        if ni <= nw:
            xi = [0, nw]
            accumulate = max(1, np.interp(ni, xi, [1, nbs / batch_size]).round())
            for j, x in enumerate(optimizer.param_groups):
                x["lr"] = np.interp(ni, xi, [hyp["warmup_bias_lr"] if j == 0 else 0.0, x["initial_lr"] * lf(epoch)])
                if "momentum" in x:
                    x["momentum"] = np.interp(ni, xi, [hyp["warmup_momentum"], hyp["momentum"]])
        with torch.cuda.amp.autocast(amp):
            pred = model(imgs)
            loss, loss_items = compute_loss(pred, targets{masks_arg})
        scaler.scale(loss).backward()
        if ni - last_opt_step >= accumulate:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=10.0)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
            if ema:
                ema.update(model)
            last_opt_step = ni
        mloss = (mloss * i + loss_items) / (i + 1)
        print(("%11s" * 2 + "%11.4g" * {n_items}) % (f"{{epoch}}/{{epochs - 1}}", ni, *mloss))
    lr = [x["lr"] for x in optimizer.param_groups]
    scheduler.step()
    ema.update_attr(model, include=["yaml", "nc", "hyp", "names", "stride", "class_weights"])
for k, v in enumerate(mloss.tolist()):
    print("VALUE mloss%d" % k, v)
print("VALUE lr", lr[0])
print("VALUE lr2", lr[2])
print("VALUE ema_updates", ema.updates)

# val.py's forward of the EMA model in eval mode, and its loss on the training batch
model = ema.ema
model.eval()
with torch.no_grad():
    imgs, targets, masks = train_loader[0]
    out = model(imgs.float() / 255)
    preds, train_out = out[0], out[-1]
    print("VALUE obj", float(preds[..., 4].mean()))
    print("VALUE box", float(preds[..., :4].abs().mean()))
    print("VALUE conf_max", float(preds[..., 4].max()))
    {val_loss}
'''

_YOLO_DET_VAL = 'print("VALUE val_loss", float(compute_loss(train_out, targets)[1].sum()))'
_YOLO_SEG_VAL = ('print("VALUE proto", float(out[1].abs().mean()))\n'
                 '    print("VALUE val_loss", float(compute_loss((train_out, out[1]), targets, masks=masks)[1].sum()))')

_SWINIR_DRIVER = '''
from types import SimpleNamespace

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from main_test_swinir import test
from models.network_swinir import SwinIR as net
from utils import util_calculate_psnr_ssim as util

torch.manual_seed(0)
rng = np.random.RandomState(0)
scale, window_size = 2, 4
model = net(upscale=scale, in_chans=3, img_size=8, window_size=window_size, img_range=1., depths=[2, 2],
            embed_dim=16, num_heads=[2, 2], mlp_ratio=2, upsampler="{upsampler}", resi_connection="{resi}",
            drop_path_rate=0.)


def hr_image(h, w):
    """a smooth synthetic RGB image in [0, 1]: a few sinusoids and a bright rectangle"""
    yy, xx = np.mgrid[0:h, 0:w] / 8.0
    f = rng.uniform(0.5, 2.0, (3, 2))
    img = np.stack([0.5 + 0.3 * np.sin(f[c, 0] * xx + c) * np.cos(f[c, 1] * yy) for c in range(3)])
    y0, x0 = rng.randint(0, h // 2), rng.randint(0, w // 2)
    img[:, y0:y0 + h // 3, x0:x0 + w // 3] += 0.2
    return np.clip(img, 0, 1).astype(np.float32)


# training pairs as KAIR's dataset_sr gives them: HR patches of 16 and their x2 bicubic downsampling
pairs = []
for _ in range(4):
    hr = torch.from_numpy(np.stack([hr_image(16, 16) for _ in range(2)]))
    lr = F.interpolate(hr, scale_factor=1 / scale, mode="bicubic", align_corners=False).clamp(0, 1)
    pairs.append((lr, hr))
criterion = nn.L1Loss()
optimizer = torch.optim.Adam(model.parameters(), lr=2e-4, betas=(0.9, 0.99))
scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[2, 3], gamma=0.5)
model.train()
for step, (lr, hr) in enumerate(pairs):
    optimizer.zero_grad()
    loss = criterion(model(lr), hr)
    loss.backward()
    optimizer.step()
    scheduler.step()
    print("step", step, "loss", loss.item())

# main_test_swinir.py's inference: a test image whose sides are not multiples of the window, padded by flipping
model.eval()
args = SimpleNamespace(tile={tile}, tile_overlap={tile_overlap}, scale=scale)
img_gt = hr_image(22, 26)
img_lq = F.interpolate(torch.from_numpy(img_gt)[None], scale_factor=1 / scale, mode="bicubic",
                       align_corners=False).clamp(0, 1)
with torch.no_grad():
    _, _, h_old, w_old = img_lq.size()
    h_pad = (h_old // window_size + 1) * window_size - h_old
    w_pad = (w_old // window_size + 1) * window_size - w_old
    img_lq = torch.cat([img_lq, torch.flip(img_lq, [2])], 2)[:, :, :h_old + h_pad, :]
    img_lq = torch.cat([img_lq, torch.flip(img_lq, [3])], 3)[:, :, :, :w_old + w_pad]
    output = test(img_lq, model, args, window_size)
    output = output[..., :h_old * args.scale, :w_old * args.scale]
# main_test_swinir.py's `output.data.squeeze().float().cpu().clamp_(0, 1).numpy()`, its clamp_ as a statement: an
# in-place method on a chain whose result is used stays a TODO (MigrationError naming the line)
output = output.data.squeeze().float().cpu()
output.clamp_(0, 1)
output = output.numpy()
output = np.transpose(output[[2, 1, 0], :, :], (1, 2, 0))
output = (output * 255.0).round().astype(np.uint8)
img_gt = (np.transpose(img_gt[[2, 1, 0]], (1, 2, 0)) * 255.0).round().astype(np.uint8)
print("VALUE output_mean", float(output.mean()))
print("VALUE psnr", util.calculate_psnr(output, img_gt, crop_border=scale))
print("VALUE ssim", util.calculate_ssim(output, img_gt, crop_border=scale))
print("VALUE lr", optimizer.param_groups[0]["lr"])
'''

_SAM_BUILD = '''
from functools import partial

import numpy as np
import torch
import torch.nn.functional as F

from segment_anything import SamPredictor
from segment_anything.modeling import ImageEncoderViT, MaskDecoder, PromptEncoder, Sam, TwoWayTransformer
from segment_anything.utils.transforms import ResizeLongestSide

torch.manual_seed(0)
rng = np.random.RandomState(0)
# build_sam.py's _build_sam, small: 64-pixel images, patches of 8, a 32-wide encoder of two blocks (windowed, then
# global attention) with relative positions, prompts of 32
prompt_embed_dim = 32
image_size = 64
vit_patch_size = 8
image_embedding_size = image_size // vit_patch_size
sam = Sam(
    image_encoder=ImageEncoderViT(
        depth=2,
        embed_dim=32,
        img_size=image_size,
        mlp_ratio=4,
        norm_layer=partial(torch.nn.LayerNorm, eps=1e-6),
        num_heads=2,
        patch_size=vit_patch_size,
        qkv_bias=True,
        use_rel_pos=True,
        global_attn_indexes=[1],
        window_size=4,
        out_chans=prompt_embed_dim,
    ),
    prompt_encoder=PromptEncoder(
        embed_dim=prompt_embed_dim,
        image_embedding_size=(image_embedding_size, image_embedding_size),
        input_image_size=(image_size, image_size),
        mask_in_chans=4,
    ),
    mask_decoder=MaskDecoder(
        num_multimask_outputs=3,
        transformer=TwoWayTransformer(
            depth=2,
            embedding_dim=prompt_embed_dim,
            mlp_dim=64,
            num_heads=2,
        ),
        transformer_dim=prompt_embed_dim,
        iou_head_depth=3,
        iou_head_hidden_dim=32,
    ),
    pixel_mean=[123.675, 116.28, 103.53],
    pixel_std=[58.395, 57.12, 57.375],
)
sam.eval()


def image(h, w):
    """an HWC uint8 RGB image: noise with a bright ellipse"""
    img = rng.randint(0, 80, (h, w, 3)).astype(np.uint8)
    yy, xx = np.mgrid[0:h, 0:w]
    inside = ((yy - h * 0.45) / (h * 0.3)) ** 2 + ((xx - w * 0.55) / (w * 0.25)) ** 2 < 1
    img[inside] = rng.randint(150, 255, 3)
    return img, inside
'''

_SAM_PREDICTOR = _SAM_BUILD + '''

# SamPredictor as predictor_example.ipynb uses it: set_image, then predict with points, a box, both, a mask
predictor = SamPredictor(sam)
img, _ = image(48, 64)
predictor.set_image(img)
print("VALUE features", float(predictor.get_image_embedding().abs().mean()))
input_point = np.array([[36, 20]])
input_label = np.array([1])
masks, scores, logits = predictor.predict(point_coords=input_point, point_labels=input_label,
                                          multimask_output=True)
print("VALUE point_masks", float(masks.sum()))
print("VALUE point_scores", float(scores.sum()))
print("VALUE point_logits", float(np.abs(logits).mean()))
input_point = np.array([[36, 20], [20, 30]])
input_label = np.array([1, 0])
mask_input = logits[np.argmax(scores), :, :]
masks, scores, _ = predictor.predict(point_coords=input_point, point_labels=input_label,
                                     mask_input=mask_input[None, :, :], multimask_output=False)
print("VALUE refined_masks", float(masks.sum()))
print("VALUE refined_scores", float(scores.sum()))
input_box = np.array([18, 6, 56, 40])
masks, scores, logits = predictor.predict(point_coords=None, point_labels=None, box=input_box[None, :],
                                          multimask_output=False)
print("VALUE box_masks", float(masks.sum()))
print("VALUE box_logits", float(np.abs(logits).mean()))
masks, scores, _ = predictor.predict(point_coords=np.array([[30, 24]]), point_labels=np.array([0]),
                                     box=input_box, multimask_output=False, return_logits=True)
print("VALUE box_point_logits", float(masks.mean()))
print("VALUE box_point_scores", float(scores.sum()))
input_boxes = torch.tensor([[4, 4, 30, 30], [18, 6, 56, 40], [0, 0, 63, 47]], dtype=torch.float)
transformed_boxes = predictor.transform.apply_boxes_torch(input_boxes, img.shape[:2])
masks, scores, _ = predictor.predict_torch(point_coords=None, point_labels=None, boxes=transformed_boxes,
                                           multimask_output=False)
print("VALUE batch_masks", float(masks.sum()))
print("VALUE batch_scores", float(scores.sum()))
'''

_SAM_FORWARD = _SAM_BUILD + '''

# Sam.forward over a batch of two images as predictor_example.ipynb's batched example builds it
resize_transform = ResizeLongestSide(sam.image_encoder.img_size)


def prepare_image(image, transform, device):
    image = transform.apply_image(image)
    image = torch.as_tensor(image, device=device.device)
    return image.permute(2, 0, 1).contiguous()


image1, _ = image(40, 56)
image2, _ = image(96, 72)
image1_boxes = torch.tensor([[10, 4, 40, 30], [0, 0, 55, 39]], dtype=torch.float)
image2_points = torch.tensor([[[30, 40]], [[50, 70]]], dtype=torch.float)
batched_input = [
    {
        "image": prepare_image(image1, resize_transform, sam),
        "boxes": resize_transform.apply_boxes_torch(image1_boxes, image1.shape[:2]),
        "original_size": image1.shape[:2],
    },
    {
        "image": prepare_image(image2, resize_transform, sam),
        "point_coords": resize_transform.apply_coords_torch(image2_points, image2.shape[:2]),
        "point_labels": torch.tensor([[1], [1]]),
        "original_size": image2.shape[:2],
    },
]
for multimask_output in (False, True):
    batched_output = sam(batched_input, multimask_output=multimask_output)
    for k, out in enumerate(batched_output):
        tag = "%d_%d" % (k, multimask_output)
        print("shape" + tag, list(out["masks"].shape))
        print("VALUE masks" + tag, float(out["masks"].sum()))
        print("VALUE iou" + tag, float(out["iou_predictions"].sum()))
        print("VALUE logits" + tag, float(out["low_res_logits"].abs().mean()))
'''

_SAM_TRAIN = _SAM_BUILD + '''

# fine-tuning the mask decoder on box prompts, the image encoder and prompt encoder frozen; a loss of ours: the
# binary cross-entropy and dice loss of the upscaled mask, and the squared error of the predicted IoU against the
# IoU of the thresholded mask
for p in sam.image_encoder.parameters():
    p.requires_grad_(False)
for p in sam.prompt_encoder.parameters():
    p.requires_grad_(False)
transform = ResizeLongestSide(sam.image_encoder.img_size)
data = []
for h, w in [(48, 64), (64, 40)]:
    img, inside = image(h, w)
    ys, xs = np.nonzero(inside)
    box = np.array([[xs.min() - 2, ys.min() - 2, xs.max() + 2, ys.max() + 2]], dtype=np.float32)
    input_image = torch.as_tensor(transform.apply_image(img)).permute(2, 0, 1).contiguous()[None]
    with torch.no_grad():
        embedding = sam.image_encoder(sam.preprocess(input_image))
    data.append((embedding, torch.as_tensor(transform.apply_boxes(box, (h, w))), tuple(input_image.shape[-2:]),
                 (h, w), torch.as_tensor(inside, dtype=torch.float32)[None, None]))


def dice_loss(logits, target):
    prob = torch.sigmoid(logits).flatten(1)
    target = target.flatten(1)
    return 1 - (2 * (prob * target).sum(-1) + 1) / (prob.sum(-1) + target.sum(-1) + 1)


def run(embedding, box, input_size, original_size):
    with torch.no_grad():
        sparse_embeddings, dense_embeddings = sam.prompt_encoder(points=None, boxes=box, masks=None)
    low_res_masks, iou_predictions = sam.mask_decoder(
        image_embeddings=embedding,
        image_pe=sam.prompt_encoder.get_dense_pe(),
        sparse_prompt_embeddings=sparse_embeddings,
        dense_prompt_embeddings=dense_embeddings,
        multimask_output=False,
    )
    return sam.postprocess_masks(low_res_masks, input_size, original_size), iou_predictions


optimizer = torch.optim.Adam(sam.mask_decoder.parameters(), lr=1e-3, weight_decay=0)
sam.mask_decoder.train()
for epoch in range(2):
    for embedding, box, input_size, original_size, gt in data:
        masks, iou_predictions = run(embedding, box, input_size, original_size)
        with torch.no_grad():
            binary = (masks > sam.mask_threshold).float()
            iou = (binary * gt).sum((-1, -2)) / ((binary + gt) > 0).float().sum((-1, -2)).clamp(min=1)
        loss = (F.binary_cross_entropy_with_logits(masks, gt) + dice_loss(masks, gt).mean()
                + F.mse_loss(iou_predictions, iou))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("epoch", epoch, "loss", loss.item())
sam.eval()
with torch.no_grad():
    for k, (embedding, box, input_size, original_size, gt) in enumerate(data):
        masks, iou_predictions = run(embedding, box, input_size, original_size)
        print("VALUE eval_bce%d" % k, float(F.binary_cross_entropy_with_logits(masks, gt)))
        print("VALUE eval_iou_pred%d" % k, float(iou_predictions.sum()))
'''

_YOLO_FILES = "models,utils,data/hyps"
_SWINIR_FILES = "models,utils,main_test_swinir.py"

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("yolov5n_det", YOLOV5, _YOLO_FILES, "driver.py", [], None),
    ("yolov5n_seg", YOLOV5, _YOLO_FILES, "driver.py", [], None),
    ("swinir_classical", SWINIR, _SWINIR_FILES, "driver.py", [], None),
    ("swinir_lightweight", SWINIR, _SWINIR_FILES, "driver.py", [], None),
    ("sam_predictor", SAM, "segment_anything", "driver.py", [], None),
    ("sam_forward", SAM, "segment_anything", "driver.py", [], None),
    ("sam_decoder_train", SAM, "segment_anything", "driver.py", [], None),
]

# SwinIR imports timm's layers: timm converted with it (bench/_rw_heldout59.py's RW_SITE)
DEPS = {name: ["timm"] for name, *_ in PROGRAMS if name.startswith("swinir_")}

# Drivers: our own code, through the libraries' documented entry points.
DRIVERS = {
    "yolov5n_det": _YOLO_DRIVER.format(model_class="Model", loss_module="utils.loss", cfg="models/yolov5n.yaml",
                                       loss_args="", masks_arg="", n_items=3, val_loss=_YOLO_DET_VAL),
    "yolov5n_seg": _YOLO_DRIVER.format(model_class="SegmentationModel", loss_module="utils.segment.loss",
                                       cfg="models/segment/yolov5n-seg.yaml", loss_args=", overlap=True",
                                       masks_arg=", masks=masks.float()", n_items=4, val_loss=_YOLO_SEG_VAL),
    "swinir_classical": _SWINIR_DRIVER.format(upsampler="pixelshuffle", resi="1conv", tile="None", tile_overlap=0),
    "swinir_lightweight": _SWINIR_DRIVER.format(upsampler="pixelshuffledirect", resi="3conv", tile=8,
                                                tile_overlap=4),
    "sam_predictor": _SAM_PREDICTOR,
    "sam_forward": _SAM_FORWARD,
    "sam_decoder_train": _SAM_TRAIN,
}

# YOLOv5: 4 losses (two epochs of two batches); SwinIR: 4 steps; the mask decoder: 4 steps
LOSSES = {"yolov5n_det": 4, "yolov5n_seg": 4, "swinir_classical": 4, "swinir_lightweight": 4,
          "sam_decoder_train": 4}
