"""The `heldout71` set of bench/real_world.py (`--set heldout71`): detection, segmentation and an ImageNet model
library: amdegroot/ssd.pytorch (SSD300 on VGG16 built by build_ssd('train'), VOCDetection over a VOC-format folder
with BaseTransform, detection_collate, MultiBoxLoss with hard-negative mining, train.py's weights_init and SGD),
LeeJunHyun/Image_Segmentation (solver.Solver's train(): U_Net, R2U_Net and AttU_Net with BCELoss over sigmoid
outputs, Adam, the linear learning-rate decay, validation metrics of evaluation.py, the best model saved and
reloaded for the test pass) and Cadene/pretrained-models.pytorch (pretrainedmodels' nasnetamobile, dpn68 and
se_resnext50_32x4d built with random weights, their last_linear replaced as the README's fine-tuning recipe does,
a few SGD steps and an eval-mode forward), converted as a new user would convert them, through drivers of ours
calling their documented entry points.

    python bench/real_world.py --mirrors /work/.mirror --set heldout71 [--only seg_unet,pm_dpn68]

Why drivers and not the scripts: ssd.pytorch's train.py reads `loss_l.data[0]` (an IndexError on a 0-d tensor
since torch 0.5) and needs the VGG weights file; Image_Segmentation's main.py draws its learning rate and 100 to 250
epochs from Python's random, and its data_loader.py is torchvision's transforms throughout (the venv's torchvision
does not import beside this torch, so solver.py's module-level `import torchvision` gets a stand-in of ours on the
torch side, as bench/_rw_heldout69.py's). ssd.pytorch's MultiBoxLoss writes `loss_c[pos] = 0` before
`loss_c = loss_c.view(num, -1)`, an IndexError (mask shape) under today's torch: the fix users of the repository
apply (the two lines swapped) is made to the program before converting, on both sides; its SSDAugmentation's
RandomSampleCrop calls np.random.choice on a tuple of None and tuples (ValueError under NumPy >= 1.24), so the
drivers use its BaseTransform (eval.py's). Extra packages: ssd.pytorch reads images with OpenCV (`pip install
"opencv-python-headless<4.11"`, MSMIGRATE_BENCH_DEPS=1); pretrainedmodels' datasets import six and tqdm (installed).

- ssd_voc: a VOC2007-format folder of our own (six 96 x 128 JPEGs, Annotations XML with one or two objects each,
  ImageSets/Main/trainval.txt), VOCDetection(root, [('2007', 'trainval')], BaseTransform(300, MEANS)),
  build_ssd('train', 300, 21) (L2Norm, the extras, loc/conf heads, PriorBox), train.py's xavier weights_init of
  extras/loc/conf, SGD (lr 1e-4, momentum 0.9, wd 5e-4), MultiBoxLoss(21, 0.5, True, 0, True, 3, 0.5, False, False),
  DataLoader(batch 2, shuffle, detection_collate), the loop of train.py (Variable, loss_l + loss_c); 3 iterations.
- ssd_detect: two such iterations, train.py's torch.save of the state_dict, then test.py's test_net as it reads:
  build_ssd('test', 300, 21) (Softmax, Detect), load_weights, eval(), one image through BaseTransform and the
  network. torch (>= 1.5) stops there with RuntimeError: Detect is a Function subclass with a non-static forward,
  called as a function ("Legacy autograd function with non-static forward method is deprecated"); the converted
  runs must stop there too (RAISES).
- Image_Segmentation (solver.py, network.py and evaluation.py as they are): an ISIC-layout folder (train/ valid/
  test/ of ISIC_xxxx.jpg and *_GT/ISIC_xxxx_segmentation.png masks; 32 x 32 RGB images), read by a Dataset of ours
  (PIL, to [-1, 1] as data_loader's Normalize leaves them, masks to [0, 1]), Solver(config, ...).train() with 2
  epochs, num_epochs_decay 1, batch 2, Adam(lr 2e-4, betas 0.5/0.999):
  - seg_unet: U_Net; seg_r2unet: R2U_Net(t=2); seg_attunet: AttU_Net.
- pretrainedmodels (the package as it is): pretrainedmodels.__dict__[name](num_classes=1000, pretrained=None), the
  last_linear replaced by nn.Linear(in_features, 10) (DPN's, a 1 x 1 convolution, by nn.Conv2d(in_channels, 10,
  1)), SGD (lr 0.01, momentum 0.9), F.cross_entropy on 2 images of the input size pretrained_settings names
  (3 x 224 x 224), then model.eval() and model.features / model.logits:
  - pm_nasnetamobile, pm_dpn68, pm_se_resnext50 (se_resnext50_32x4d).

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

SSD = "amdegroot+ssd.pytorch@5b0b77faa955c1917b0c710d770739ba8fbff9b7"
SEG = "LeeJunHyun+Image_Segmentation@5e9da9395c52b119d55dfc6532c34ac0e88f446e"
PM = "Cadene+pretrained-models.pytorch@8aae3d8f1135b6b13fed79c1d431e3449fdbf6e0"

_SSD_DRIVER = '''
import os

import numpy as np
from PIL import Image

# a VOC2007-format folder: JPEGImages, Annotations (XML), ImageSets/Main/trainval.txt
root = os.path.join("VOCdevkit", "VOC2007")
for sub in ("JPEGImages", "Annotations", os.path.join("ImageSets", "Main")):
    os.makedirs(os.path.join(root, sub), exist_ok=True)
rng = np.random.RandomState(3)
names = ["aeroplane", "bicycle", "bird", "boat", "bottle", "bus", "car", "cat", "chair", "cow", "diningtable",
         "dog", "horse", "motorbike", "person", "pottedplant", "sheep", "sofa", "train", "tvmonitor"]
ids = []
for i in range(6):
    img_id = "%06d" % (i + 1)
    ids.append(img_id)
    h, w = 96, 128
    img = (rng.rand(h, w, 3) * 60 + 40).astype(np.uint8)
    objects = []
    for k in range(1 + i % 2):
        x0, y0 = int(rng.randint(0, w // 2)), int(rng.randint(0, h // 2))
        x1, y1 = int(x0 + rng.randint(20, w // 2)), int(y0 + rng.randint(20, h // 2))
        img[y0:y1, x0:x1] = rng.randint(120, 250, 3)
        objects.append((names[(i * 3 + k) % 20], x0 + 1, y0 + 1, x1, y1))
    Image.fromarray(img).save(os.path.join(root, "JPEGImages", img_id + ".jpg"), quality=95)
    xml = ["<annotation><folder>VOC2007</folder><filename>%s.jpg</filename>" % img_id,
           "<size><width>%d</width><height>%d</height><depth>3</depth></size>" % (w, h)]
    for name, a, b, c, d in objects:
        xml.append("<object><name>%s</name><pose>Unspecified</pose><truncated>0</truncated><difficult>0</difficult>"
                   "<bndbox><xmin>%d</xmin><ymin>%d</ymin><xmax>%d</xmax><ymax>%d</ymax></bndbox></object>"
                   % (name, a, b, c, d))
    xml.append("</annotation>")
    with open(os.path.join(root, "Annotations", img_id + ".xml"), "w") as f:
        f.write("".join(xml))
with open(os.path.join(root, "ImageSets", "Main", "trainval.txt"), "w") as f:
    f.write("\\n".join(ids) + "\\n")

# data/coco.py reads ~/data/coco/coco_labels.txt at import (COCOAnnotationTransform's default argument): a home of
# our own with the repository's label file where scripts/COCO2014.sh would have put it
import shutil
os.environ["HOME"] = os.path.abspath("home")
os.makedirs(os.path.join("home", "data", "coco"), exist_ok=True)
shutil.copy(os.path.join("data", "coco_labels.txt"), os.path.join("home", "data", "coco", "coco_labels.txt"))

import torch
import torch.nn as nn
import torch.nn.init as init
import torch.optim as optim
import torch.utils.data as data
from torch.autograd import Variable

from data import VOCDetection, BaseTransform, MEANS, voc, detection_collate
from layers.modules import MultiBoxLoss
from ssd import build_ssd


def xavier(param):
    init.xavier_uniform_(param)


def weights_init(m):
    if isinstance(m, nn.Conv2d):
        xavier(m.weight.data)
        m.bias.data.zero_()


torch.manual_seed(0)
ITERATIONS = 3
cfg = voc
dataset = VOCDetection(root="VOCdevkit", image_sets=[("2007", "trainval")],
                       transform=BaseTransform(cfg["min_dim"], MEANS))
ssd_net = build_ssd("train", cfg["min_dim"], cfg["num_classes"])
net = ssd_net
ssd_net.extras.apply(weights_init)
ssd_net.loc.apply(weights_init)
ssd_net.conf.apply(weights_init)
optimizer = optim.SGD(net.parameters(), lr=1e-4, momentum=0.9, weight_decay=5e-4)
criterion = MultiBoxLoss(cfg["num_classes"], 0.5, True, 0, True, 3, 0.5, False, False)
net.train()
loc_loss = 0
conf_loss = 0
data_loader = data.DataLoader(dataset, 2, num_workers=0, shuffle=True, collate_fn=detection_collate,
                              pin_memory=False)
batch_iterator = iter(data_loader)
for iteration in range(ITERATIONS):
    images, targets = next(batch_iterator)
    images = Variable(images)
    targets = [Variable(ann, volatile=True) for ann in targets]
    out = net(images)
    optimizer.zero_grad()
    loss_l, loss_c = criterion(out, targets)
    loss = loss_l + loss_c
    loss.backward()
    optimizer.step()
    loc_loss += loss_l.item()
    conf_loss += loss_c.item()
    print("iter " + repr(iteration) + " || Loss: %.4f ||" % (loss.item()), loss_l.item(), loss_c.item())
print("VALUE loc_loss", loc_loss)
print("VALUE conf_loss", conf_loss)
'''

_SSD_DETECT = '''
# train.py's save, then test.py's test_net: build_ssd('test') with Detect, load_weights, one image through BaseTransform
os.makedirs("weights", exist_ok=True)
torch.save(ssd_net.state_dict(), "weights/VOC.pth")
test_net = build_ssd("test", 300, 21)
test_net.load_weights("weights/VOC.pth")
test_net.eval()
transform = BaseTransform(test_net.size, (104, 117, 123))
img = dataset.pull_image(0)
x = torch.from_numpy(transform(img)[0]).permute(2, 0, 1)
x = Variable(x.unsqueeze(0))
with torch.no_grad():
    y = test_net(x)      # torch >= 1.5: RuntimeError, Detect is a legacy Function called as a function
detections = y.data
print("VALUE detections", float(detections[0, 1:, :, 0].sum()))
'''

_SEG_DRIVER = '''
import argparse
import os

import numpy as np
import torch
from PIL import Image
from torch.utils import data

from solver import Solver

# an ISIC-layout folder: dataset/{train,valid,test}/ISIC_xxxx.jpg, dataset/{...}_GT/ISIC_xxxx_segmentation.png
rng = np.random.RandomState(7)
counter = 0
for split, count in (("train", 6), ("valid", 2), ("test", 2)):
    os.makedirs(os.path.join("dataset", split), exist_ok=True)
    os.makedirs(os.path.join("dataset", split + "_GT"), exist_ok=True)
    for i in range(count):
        counter += 1
        yy, xx = np.mgrid[0:32, 0:32]
        cy, cx, r = rng.randint(10, 22), rng.randint(10, 22), rng.randint(5, 10)
        mask = ((yy - cy) ** 2 + (xx - cx) ** 2 < r * r)
        img = rng.rand(32, 32, 3) * 40 + 60
        img[mask] += 100
        Image.fromarray(img.astype(np.uint8)).save(os.path.join("dataset", split, "ISIC_%04d.jpg" % counter),
                                                   quality=95)
        Image.fromarray((mask * 255).astype(np.uint8)).save(
            os.path.join("dataset", split + "_GT", "ISIC_%04d_segmentation.png" % counter))


class ISICFolder(data.Dataset):
    """Our own reader of the ISIC layout (data_loader.ImageFolder without its torchvision transforms)."""

    def __init__(self, root):
        self.root = root
        self.GT_paths = root[:-1] + "_GT/"
        self.image_paths = sorted(os.path.join(root, x) for x in os.listdir(root))

    def __getitem__(self, index):
        image_path = self.image_paths[index]
        filename = image_path.split("_")[-1][:-len(".jpg")]
        GT_path = self.GT_paths + "ISIC_" + filename + "_segmentation.png"
        image = np.asarray(Image.open(image_path), dtype=np.float32) / 255.0
        GT = np.asarray(Image.open(GT_path), dtype=np.float32)[None] / 255.0
        image = (image.transpose(2, 0, 1) - 0.5) / 0.5
        return torch.from_numpy(np.ascontiguousarray(image)), torch.from_numpy(np.ascontiguousarray(GT))

    def __len__(self):
        return len(self.image_paths)


def get_loader(image_path, batch_size):
    return data.DataLoader(dataset=ISICFolder(image_path), batch_size=batch_size, shuffle=True, num_workers=0)


torch.manual_seed(0)
config = argparse.Namespace(
    image_size=32, t=2, img_ch=3, output_ch=1, num_epochs=2, num_epochs_decay=1, batch_size=2, num_workers=0,
    lr=0.0002, beta1=0.5, beta2=0.999, augmentation_prob=0.0, log_step=2, val_step=2, mode="train",
    model_type="{model_type}", model_path="./models", train_path="./dataset/train/", valid_path="./dataset/valid/",
    test_path="./dataset/test/", result_path="./result/{model_type}", cuda_idx=1)
for p in (config.model_path, config.result_path):
    os.makedirs(p, exist_ok=True)
train_loader = get_loader(config.train_path, config.batch_size)
valid_loader = get_loader(config.valid_path, config.batch_size)
test_loader = get_loader(config.test_path, config.batch_size)
solver = Solver(config, train_loader, valid_loader, test_loader)
unet = solver.unet
try:
    solver.train()
except UnboundLocalError as e:
    # under torch >= 1.2 evaluation.py's ((SR==1)+(GT==1))==2 adds bools (a logical or) and is never true: JS and DC
    # stay 0, no best model is saved, and train()'s test pass meets `del best_unet` unbound
    print("train() stopped:", type(e).__name__, e)
from evaluation import get_accuracy, get_sensitivity, get_specificity, get_precision, get_F1, get_JS, get_DC
unet.eval()
images, GT = next(iter(data.DataLoader(ISICFolder(config.valid_path), batch_size=2, shuffle=False)))
with torch.no_grad():
    SR = torch.sigmoid(unet(images))
for fn in (get_accuracy, get_sensitivity, get_specificity, get_precision, get_F1, get_JS, get_DC):
    print("VALUE valid_" + fn.__name__[4:], fn(SR, GT))
print("VALUE valid_SR", float(SR.mean()))
'''

_PM_DRIVER = '''
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import pretrainedmodels

torch.manual_seed(0)
model_name = "{model}"
model = pretrainedmodels.__dict__[model_name](num_classes=1000, pretrained=None)
# the README's fine-tuning recipe: a new last layer (DPN's is a 1 x 1 convolution)
if isinstance(model.last_linear, nn.Linear):
    dim_feats = model.last_linear.in_features
    model.last_linear = nn.Linear(dim_feats, 10)
else:
    model.last_linear = nn.Conv2d(model.last_linear.in_channels, 10, kernel_size=1, bias=True)
# the input size as the README reads it (a model built with pretrained=None has no input_size attribute)
settings = pretrainedmodels.pretrained_settings[model_name]
input_size = next(iter(settings.values()))["input_size"]
print(model_name, input_size)
rng = np.random.RandomState(17)
images = torch.from_numpy(rng.randn(3, 2, *input_size).astype(np.float32))
labels = torch.from_numpy(rng.randint(0, 10, (3, 2)).astype(np.int64))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
model.train()
for step in range(3):
    logits = model(images[step])
    loss = F.cross_entropy(logits, labels[step])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print("step", step, loss.item())
model.eval()
with torch.no_grad():
    features = model.features(images[0])
    logits = model.logits(features)
print("VALUE features", float(features.abs().mean()))
print("VALUE logits", float(logits.abs().mean()))
'''

_TORCHVISION = {
    "torchvision/__init__.py": '"""A stand-in written by bench/_rw_heldout71.py: the venv\'s torchvision does not '
                               'import beside this torch; solver.py and pretrainedmodels import it at module level, '
                               'nothing here calls it."""\n__version__ = "0.0"\nfrom . import models, transforms, '
                               'utils\n',
    "torchvision/utils.py": 'def save_image(*args, **kwargs):\n    raise NotImplementedError("stand-in")\n',
    "torchvision/transforms/__init__.py": '',
    "torchvision/models/__init__.py": '',
}


def _fix_multibox_mask(proj):
    """The fix users of ssd.pytorch apply, on both sides: the hard-negative mask written after the view it indexes."""
    path = proj / "layers" / "modules" / "multibox_loss.py"
    text = path.read_text()
    old = "        loss_c[pos] = 0  # filter out pos boxes for now\n        loss_c = loss_c.view(num, -1)\n"
    new = "        loss_c = loss_c.view(num, -1)\n        loss_c[pos] = 0  # filter out pos boxes for now\n"
    assert old in text
    path.write_text(text.replace(old, new))


_SSD_PARTS = "data,layers,utils,ssd.py"
_SEG_PARTS = "solver.py,network.py,evaluation.py"

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("ssd_voc", SSD, _SSD_PARTS, "driver.py", [], None),
    ("ssd_detect", SSD, _SSD_PARTS, "driver.py", [], None),
    ("seg_unet", SEG, _SEG_PARTS, "driver.py", [], None),
    ("seg_r2unet", SEG, _SEG_PARTS, "driver.py", [], None),
    ("seg_attunet", SEG, _SEG_PARTS, "driver.py", [], None),
    ("pm_nasnetamobile", PM, "pretrainedmodels", "driver.py", [], None),
    ("pm_dpn68", PM, "pretrainedmodels", "driver.py", [], None),
    ("pm_se_resnext50", PM, "pretrainedmodels", "driver.py", [], None),
]

DEPS: dict = {}

# Drivers: our own code, through the libraries' documented entry points.
DRIVERS = {
    "ssd_voc": _SSD_DRIVER,
    "ssd_detect": _SSD_DRIVER.replace("ITERATIONS = 3", "ITERATIONS = 2") + _SSD_DETECT,
    "seg_unet": _SEG_DRIVER.replace("{model_type}", "U_Net"),
    "seg_r2unet": _SEG_DRIVER.replace("{model_type}", "R2U_Net"),
    "seg_attunet": _SEG_DRIVER.replace("{model_type}", "AttU_Net"),
    "pm_nasnetamobile": _PM_DRIVER.replace("{model}", "nasnetamobile"),
    "pm_dpn68": _PM_DRIVER.replace("{model}", "dpn68"),
    "pm_se_resnext50": _PM_DRIVER.replace("{model}", "se_resnext50_32x4d"),
}

FILES = {name: {"layers/modules/multibox_loss.py": _fix_multibox_mask} for name in ("ssd_voc", "ssd_detect")}
# ssd_detect's test-phase forward: torch (>= 1.5) refuses Detect, a legacy Function called as a function
RAISES = {"ssd_detect": r"Legacy autograd function with non-static forward method"}
TORCH_FILES = {name: dict(_TORCHVISION) for name, *_ in PROGRAMS}

# SSD: 3 iterations; Image_Segmentation: 2 epochs of 3 steps; pretrainedmodels: 3 steps
LOSSES = {"ssd_voc": 3, "ssd_detect": 2, "seg_unet": 6, "seg_r2unet": 6, "seg_attunet": 6, "pm_nasnetamobile": 3,
          "pm_dpn68": 3, "pm_se_resnext50": 3}
