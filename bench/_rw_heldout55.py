"""The `heldout55` set of bench/real_world.py (`--set heldout55`): point-cloud networks:
yanx27/Pointnet_Pointnet2_pytorch (PointNet and PointNet++ SSG/MSG classifiers: farthest point sampling, ball
query, batched gathers `points[batch_indices, idx, :]`), fxia22/pointnet.pytorch (PointNet classification and part
segmentation with the STN feature transform and its regularizer) and WangYueFt/dgcnn (DGCNN's knn through topk and
get_graph_feature, its PointNet), converted as a new user would convert them.

    python bench/real_world.py --mirrors /work/.mirror --set heldout55 [--only pn2_pointnet_cls,dgcnn]

- yanx27/Pointnet_Pointnet2_pytorch (train_classification.py, provider.py, data_utils/ and models/ as they are):
  a synthetic ModelNet10 in the on-disk layout ModelNetDataLoader reads, under ./data/modelnet40_normal_resampled
  of the script's directory (modelnet10_shape_names.txt, modelnet10_train.txt and modelnet10_test.txt of shape
  ids, CLASS/CLASS_NNNN.txt of 520 comma-separated x,y,z,nx,ny,nz lines: 8 training and 4 test shapes of four
  classes). 512 points for PointNet++ (its first level samples 512 centroids: from fewer points, farthest point
  sampling repeats one point hundreds of times, and BatchNorm's batch statistics then sit on near-constant
  channels, where MindSpore's CPU BatchNorm was 6e-3 from torch's and from float64). train_classification.py run
  whole by a driver of ours that first removes ./log (the program resumes from the checkpoint an earlier run left
  in the same directory, and each side runs more than once there) (`--use_cpu --num_category 10 --batch_size 4
  --epoch 2 --log_dir run --learning_rate 1e-5`; at the default 1e-3, Adam's first step already put torch's
  own float32 runs 2% apart, oneDNN's kernels against torch's native ones, as heldout51's proto_train): the
  model module imported by name from models/, `classifier.apply(inplace_relu)`, the checkpoint probe's
  bare `except`, Adam with weight decay, StepLR stepped before the epoch, the DataLoader (10 workers, shuffled,
  drop_last), provider's NumPy point dropout, scale and shift written into `points[:, :, 0:3]`, the model and
  get_loss, the accuracy through `pred.data.max(1)[1]`, test() in eval mode under no_grad (per-class accuracy by
  `np.unique(target)` and boolean masks), torch.save of the state dicts when the accuracy is best. The losses
  compared; PRINTED: the accuracy lines.
  - pn2_pointnet_cls: `--model pointnet_cls --num_point 32` (STN3d, STNkd, torch.bmm, the feature transform
    regularizer `torch.norm(..., dim=(1, 2))`, log_softmax and nll_loss).
  - pn2_ssg: `--model pointnet2_cls_ssg --num_point 512` (farthest_point_sample's loop of torch.randint start,
    `distance[mask] = dist[mask]`, `torch.max(distance, -1)[1]`; query_ball_point's `group_idx[sqrdists >
    radius ** 2] = N`, sort, `group_idx[mask] = group_first[mask]`; index_points' `points[batch_indices, idx, :]`).
  - pn2_msg: `--model pointnet2_cls_msg --num_point 512` (three radii per level, `grouped_xyz -=` in place).
- fxia22/pointnet.pytorch (utils/train_classification.py and utils/train_segmentation.py, pointnet/ and misc/ as
  they are, each script beside the package): a synthetic ShapeNet part dataset in ShapeNetDataset's layout under
  RUN/SIDE/data/shapenet (synsetoffset2category.txt, train_test_split/shuffled_{train,test}_file_list.json,
  SYNSET/points/UUID.pts of space-separated x y z lines and SYNSET/points_label/UUID.seg of part labels 1..4):
  Airplane and Chair, 4 training and 2 test shapes each. `--workers 0`; the datasets' NumPy resampling, rotation
  and jitter (np.random, seeded alike). The losses compared.
  - fxia_cls: train_classification.py `--batchSize 4 --num_points 40 --nepoch 2 --feature_transform` (PointNetCls,
    `loss += feature_transform_regularizer(trans_feat) * 0.001`, the test batch every 10 steps through
    `next(enumerate(testdataloader, 0))`, the final accuracy over the test loader).
  - fxia_seg: train_segmentation.py `--batchSize 2 --nepoch 1 --class_choice Chair --feature_transform`
    (PointNetDenseCls on ShapeNetDataset's 2500 resampled points, `pred.view(-1, num_classes)`, the targets
    `target.view(-1, 1)[:, 0] - 1`, the mIOU loop over the test loader).
  pointnet/dataset.py imports plyfile (ModelNetDataset's .ply reader, not used here) at its top: plyfile is not
  installed, so both sides get a stand-in plyfile.py beside the script (before converting). No GPU here: the torch
  side's `.cuda()` calls are made `.cpu()` (after the conversion, which saw `.cuda()`).
- WangYueFt/dgcnn (pytorch/ as it is): ModelNet40's HDF5 files written with h5py under
  ./data/modelnet40_ply_hdf5_2048 of the script's directory (ply_data_train0.h5: 8 clouds, ply_data_test0.h5: 4,
  'data' float32 [N, 2048, 3] and 'label' uint8 [N, 1]), so download() finds them. main.py run whole (`--exp_name
  run --batch_size 4 --test_batch_size 4 --epochs 2 --num_points 24 --emb_dims 64 --k 4 --no_cuda True`):
  ModelNet40's translate and shuffle (np.random), DataLoader(num_workers=8), nn.DataParallel, SGD (momentum,
  weight decay, lr*100), CosineAnnealingLR stepped before the epoch, cal_loss's label smoothing through
  `scatter`, sklearn's accuracy and balanced accuracy, the test loop, torch.save. The losses compared; PRINTED:
  the accuracies of the Train/Test lines (not their mean losses, printed to 6 decimals: float32 rounding).
  - dgcnn: `--model dgcnn` (knn's `topk(k=k, dim=-1)[1]`, get_graph_feature's `x.view(B*N, -1)[idx, :]`).
  - dgcnn_pointnet: `--model pointnet` (`F.adaptive_max_pool1d(x, 1).squeeze()`).
  No GPU here: the torch side's `torch.device('cuda')` in get_graph_feature is made 'cpu' (after the conversion).

A repo entry `OWNER+NAME@COMMIT` is read at that commit. Entries have real_world.PROGRAMS' shape."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

POINTNET2 = "yanx27+Pointnet_Pointnet2_pytorch@eb64fe0b4c24055559cea26299cb485dcb43d8dd"
POINTNET = "fxia22+pointnet.pytorch@bafbf401e0af19be3262e448c59313fd2be0e421"
DGCNN = "WangYueFt+dgcnn@f765b469a67730658ba554e97dc11723a7bab628"

_MODELNET10 = ["bathtub", "bed", "chair", "desk", "dresser", "monitor", "night_stand", "sofa", "table", "toilet"]


def _shape(rs, n, kind):
    """n points of a noisy primitive (kind 0: sphere, 1: box, 2: disc, 3: rod), with unit normals."""
    xyz = rs.randn(n, 3)
    if kind == 0:
        xyz /= np.linalg.norm(xyz, axis=1, keepdims=True)
    elif kind == 1:
        xyz = np.clip(xyz, -1, 1)
    elif kind == 2:
        xyz[:, 2] *= 0.05
    else:
        xyz[:, :2] *= 0.1
    xyz += 0.05 * rs.randn(n, 3)
    normals = rs.randn(n, 3)
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    return xyz, normals


def _modelnet_txt(root):
    """yanx27's ModelNetDataLoader: ./data/modelnet40_normal_resampled of the script's directory, ModelNet10."""
    rs = np.random.RandomState(55)
    base = Path(root).parent / "x" / "prog" / "data" / "modelnet40_normal_resampled"
    base.mkdir(parents=True, exist_ok=True)
    (base / "modelnet10_shape_names.txt").write_text("\n".join(_MODELNET10) + "\n")
    ids = {"train": [], "test": []}
    for kind, cls in enumerate(["chair", "desk", "night_stand", "table"]):
        (base / cls).mkdir(exist_ok=True)
        for i in range(3):
            name = f"{cls}_{i + 1:04d}"
            xyz, normals = _shape(rs, 520, kind)
            rows = "\n".join(",".join(f"{v:.6f}" for v in row) for row in np.hstack([xyz, normals]))
            (base / cls / f"{name}.txt").write_text(rows + "\n")
            ids["test" if i == 2 else "train"].append(name)
    for split, names in ids.items():
        (base / f"modelnet10_{split}.txt").write_text("\n".join(names) + "\n")


def _shapenet(root):
    """fxia22's ShapeNetDataset: RUN/SIDE/data/shapenet, Airplane and Chair, part labels 1..4 by height."""
    rs = np.random.RandomState(56)
    base = Path(root) / "shapenet"
    cats = {"Airplane": "02691156", "Chair": "03001627"}
    (base / "train_test_split").mkdir(parents=True, exist_ok=True)
    (base / "synsetoffset2category.txt").write_text("".join(f"{k}\t{v}\n" for k, v in cats.items()))
    lists = {"train": [], "test": []}
    for kind, synset in enumerate(cats.values()):
        (base / synset / "points").mkdir(parents=True)
        (base / synset / "points_label").mkdir()
        for i in range(6):
            uuid = f"{synset[-4:]}{i:04d}"
            xyz, _ = _shape(rs, 50 + 7 * i, kind + 1)
            parts = 1 + np.digitize(xyz[:, 1], [-0.5, 0.0, 0.5])
            (base / synset / "points" / f"{uuid}.pts").write_text(
                "\n".join(" ".join(f"{v:.5f}" for v in row) for row in xyz) + "\n")
            (base / synset / "points_label" / f"{uuid}.seg").write_text("\n".join(str(p) for p in parts) + "\n")
            lists["test" if i >= 4 else "train"].append(f"shape_data/{synset}/{uuid}")
    for split, files in lists.items():
        (base / "train_test_split" / f"shuffled_{split}_file_list.json").write_text(json.dumps(files))


def _modelnet_h5(root):
    """WangYueFt's load_data: ./data/modelnet40_ply_hdf5_2048/ply_data_{train,test}0.h5 of the script's
    directory."""
    import h5py
    rs = np.random.RandomState(57)
    base = Path(root).parent / "x" / "prog" / "data" / "modelnet40_ply_hdf5_2048"
    base.mkdir(parents=True, exist_ok=True)
    for split, n in (("train", 8), ("test", 4)):
        labels = np.array([[i % 4] for i in range(n)], dtype=np.uint8)
        clouds = np.stack([_shape(rs, 2048, int(c))[0] for c in labels[:, 0]]).astype(np.float32)
        with h5py.File(base / f"ply_data_{split}0.h5", "w") as f:
            f["data"] = clouds
            f["label"] = labels


_PLYFILE = '''
"""A stand-in written by bench/_rw_heldout55.py: pointnet/dataset.py imports plyfile (not installed) for
ModelNetDataset's .ply files, which the ShapeNet runs here never read."""


class PlyData:
    @staticmethod
    def read(f):
        raise NotImplementedError("the stand-in's PlyData is imported, not used")


class PlyElement:
    pass
'''


def _edit(path, old, new):
    text = path.read_text()
    if old not in text:
        raise RuntimeError(f"{path}: {old!r} not found")
    path.write_text(text.replace(old, new))


def _fxia_cpu(proj):
    """No GPU here: the torch side's `.cuda()` calls (unconditional) made `.cpu()`, after the conversion."""
    for script in ("train_classification.py", "train_segmentation.py"):
        if (Path(proj) / script).exists():
            _edit(Path(proj) / script, ".cuda()", ".cpu()")


def _dgcnn_cpu(proj):
    """No GPU here: get_graph_feature's `torch.device('cuda')` made 'cpu' on the torch side, after the conversion."""
    _edit(Path(proj) / "model.py", "torch.device('cuda')", "torch.device('cpu')")


_PN2 = "train_classification.py,provider.py,data_utils,models"
_PN2_COMMON = ["--use_cpu", "--num_category", "10", "--batch_size", "4", "--epoch", "2", "--log_dir", "run",
               "--learning_rate", "1e-5"]
_FXIA_COMMON = ["--dataset", "../../data/shapenet", "--workers", "0", "--feature_transform"]
_DGCNN_COMMON = ["--exp_name", "run", "--batch_size", "4", "--test_batch_size", "4", "--epochs", "2",
                 "--num_points", "24", "--emb_dims", "64", "--k", "4", "--no_cuda", "True"]

# (name, repo, directory of the program in the repo, script, args, data)
PROGRAMS = [
    ("pn2_pointnet_cls", POINTNET2, _PN2, "driver.py",
     _PN2_COMMON + ["--model", "pointnet_cls", "--num_point", "32"], _modelnet_txt),
    ("pn2_ssg", POINTNET2, _PN2, "driver.py",
     _PN2_COMMON + ["--model", "pointnet2_cls_ssg", "--num_point", "512"], _modelnet_txt),
    ("pn2_msg", POINTNET2, _PN2, "driver.py",
     _PN2_COMMON + ["--model", "pointnet2_cls_msg", "--num_point", "512"], _modelnet_txt),
    ("fxia_cls", POINTNET, "utils/train_classification.py,pointnet,misc", "train_classification.py",
     _FXIA_COMMON + ["--batchSize", "4", "--num_points", "40", "--nepoch", "2"], _shapenet),
    ("fxia_seg", POINTNET, "utils/train_segmentation.py,pointnet,misc", "train_segmentation.py",
     _FXIA_COMMON + ["--batchSize", "2", "--nepoch", "1", "--class_choice", "Chair"], _shapenet),
    ("dgcnn", DGCNN, "pytorch", "main.py", _DGCNN_COMMON + ["--model", "dgcnn"], _modelnet_h5),
    ("dgcnn_pointnet", DGCNN, "pytorch", "main.py", _DGCNN_COMMON + ["--model", "pointnet"], _modelnet_h5),
]

DEPS: dict = {}

_PN2_DRIVER = '''
"""A driver written by bench/_rw_heldout55.py: train_classification.py run as __main__ (its arguments) from a clean
log directory. The program resumes from log/classification/RUN/checkpoints/best_model.pth where one exists (its
probe's bare except), and the bench runs each side more than once in one directory (PYNATIVE, GRAPH, references)."""
import runpy
import shutil

shutil.rmtree("log", ignore_errors=True)
runpy.run_path("train_classification.py", run_name="__main__")
'''

DRIVERS = {name: _PN2_DRIVER for name, *_ in PROGRAMS if name.startswith("pn2_")}

FILES = {name: {"plyfile.py": _PLYFILE} for name, *_ in PROGRAMS if name.startswith("fxia_")}

TORCH_FILES = {**{name: {".cpu": _fxia_cpu} for name, *_ in PROGRAMS if name.startswith("fxia_")},
               **{name: {".cpu": _dgcnn_cpu} for name, *_ in PROGRAMS if name.startswith("dgcnn")}}

# pn2: 2 epochs of 2 steps; fxia_cls: 2 epochs of 2 steps; fxia_seg: 2 steps; dgcnn: 2 epochs of 2 steps
LOSSES = {name: 4 for name, *_ in PROGRAMS}

PRINTED = {**{name: r"(?:Train|Test) Instance Accuracy: .*$" for name, *_ in PROGRAMS if name.startswith("pn2_")},
           **{name: r"(?:train|test) acc: .*$" for name, *_ in PROGRAMS if name.startswith("dgcnn")}}
