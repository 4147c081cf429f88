"""Data loading: torch.utils.data, torchvision.transforms (v1 and v2) and torchvision.datasets.

Everything maps to helpers emitted into `_ms_compat.py` (templates/compat_parts/data.py),
whose first lines say why: a name-for-name `mindspore.dataset` pipeline was measured
18-23x slower than torch's DataLoader, and `mindspore.dataset.vision` ops read NumPy
input as HWC (torchvision tensors are CHW), return a tuple from an eager Compose, and
repeat the same random draw on every eager call once a seed is set."""
from __future__ import annotations

from ..records import CONVERTED, DIFFERENCE, mapping

T = "tests/parity/test_data.py"
C = "_ms_compat."

# ------------------------------------------------------------------ torch.utils.data
# Dataset/IterableDataset used as base classes: the subclass becomes a plain class
for _mod in ("torch.utils.data", "torch.utils.data.dataset"):
    mapping(f"{_mod}.Dataset", "object", status=DIFFERENCE,
            note="a plain class: _ms_compat.DataLoader and mindspore.dataset.GeneratorDataset read any object "
                 "with __getitem__/__len__ (torch's `dataset1 + dataset2` is ConcatDataset([...]) here)",
            test="tests/parity/test_data_base.py::test_dataset_base")
    mapping(f"{_mod}.IterableDataset", "object", status=DIFFERENCE,
            note="a plain class with __iter__: _ms_compat.DataLoader and GeneratorDataset read any iterable",
            test="tests/parity/test_data_base.py::test_dataset_base")

_LOADER_ARGS = ("dataset", "batch_size", "shuffle", "sampler", "batch_sampler", "num_workers", "collate_fn",
                "pin_memory", "drop_last", "timeout", "worker_init_fn", "multiprocessing_context", "generator")
# keyword-only in torch, and in _ms_compat.DataLoader (worker process options: no effect on the batches)
_LOADER_KEYWORDS = ("prefetch_factor", "persistent_workers", "pin_memory_device", "in_order")
_LOADER_NOTE = ("same batches as torch (batch_size, shuffle, sampler, batch_sampler, drop_last, collate_fn, "
                "generator), as mindspore Tensors: ints collate to int64 and Python floats to float64 like torch "
                "(mindspore.nn.CrossEntropyLoss wants int32 labels; ops.cross_entropy takes int64). Workers are "
                "forked processes; iterable datasets are read in the main process. .to_dataset() gives a "
                "GeneratorDataset of whole batches for mindspore.train.Model")
_SAMPLERS = {
    "Sampler": ("data_source",),
    "SequentialSampler": ("data_source",),
    "RandomSampler": ("data_source", "replacement", "num_samples", "generator"),
    "SubsetRandomSampler": ("indices", "generator"),
    "WeightedRandomSampler": ("weights", "num_samples", "replacement", "generator"),
    "BatchSampler": ("sampler", "batch_size", "drop_last"),
}
_RANDOM_NOTE = ("random choices come from NumPy's global stream (seeded by mindspore.set_seed) or from the "
                "given mindspore.Generator: reproducible, but not torch's numbers")
_UTILS = {
    # name: (modules, args, note, test)
    "DataLoader": (("", ".dataloader"), _LOADER_ARGS, _LOADER_NOTE, "test_loader_tensor_dataset"),
    "TensorDataset": (("", ".dataset"), (), "keeps the data as NumPy arrays; the loader batches it by fancy "
                      "indexing", "test_loader_tensor_dataset"),
    "Subset": (("", ".dataset"), ("dataset", "indices"), "", "test_random_split_subset_concat"),
    "ConcatDataset": (("", ".dataset"), ("datasets",), "", "test_random_split_subset_concat"),
    "random_split": (("", ".dataset"), ("dataset", "lengths", "generator"), _RANDOM_NOTE,
                     "test_random_split_subset_concat"),
    "default_collate": (("", ".dataloader", "._utils.collate"), ("batch",),
                        "returns mindspore Tensors, dtypes as torch's", "test_default_collate_structures"),
    "default_convert": (("", ".dataloader", "._utils.collate"), ("data",), "", "test_default_collate_structures"),
    "get_worker_info": (("", ".dataloader"), (), "", "test_loader_workers"),
}
for _name, (_mods, _args, _note, _test) in _UTILS.items():
    for _m in _mods:
        mapping(f"torch.utils.data{_m}.{_name}", C + _name, args=_args, target_args=_args, note=_note,
                kwonly=_LOADER_KEYWORDS if _name == "DataLoader" else (),
                status=DIFFERENCE if _note == _RANDOM_NOTE else CONVERTED, test=f"{T}::{_test}")
for _name, _args in _SAMPLERS.items():
    for _m in ("", ".sampler"):
        mapping(f"torch.utils.data{_m}.{_name}", C + _name, args=_args, target_args=_args,
                note=_RANDOM_NOTE if "generator" in _args or _name == "WeightedRandomSampler" else "",
                status=DIFFERENCE if "generator" in _args else CONVERTED, test=f"{T}::test_samplers")
# DistributedSampler: see mappings/distributed.py

# ------------------------------------------------------------------ torchvision.transforms
_TV = "tests/parity/test_data.py"
_TRANSFORMS = {
    # name: (args, v2 too, note, test)
    "Compose": (("transforms",), True, "", "test_transforms_deterministic"),
    "Lambda": (("lambd",), True, "", "test_transforms_deterministic"),
    "ToTensor": ((), True, "returns a mindspore Tensor (CHW, float32 in [0, 1] from uint8)",
                 "test_transforms_deterministic"),
    "PILToTensor": ((), True, "", "test_transforms_deterministic"),
    "ToPILImage": (("mode",), True, "", "test_transforms_deterministic"),
    "ConvertImageDtype": (("dtype",), False, "", "test_transforms_deterministic"),
    "Normalize": (("mean", "std", "inplace"), True, "", "test_transforms_deterministic"),
    "Resize": (("size", "interpolation", "max_size", "antialias"), True,
               "PIL images: PIL's resize as in torchvision; tensors: PIL's antialiased resize per channel "
               "(torchvision's antialias=True); antialias=False on tensors is not reproduced when downscaling",
               "test_transforms_resize"),
    "CenterCrop": (("size",), True, "", "test_transforms_deterministic"),
    "Pad": (("padding", "fill", "padding_mode"), True, "", "test_transforms_deterministic"),
    "Grayscale": (("num_output_channels",), True, "", "test_transforms_deterministic"),
    "RandomCrop": (("size", "padding", "pad_if_needed", "fill", "padding_mode"), True, "",
                   "test_transforms_random"),
    "RandomHorizontalFlip": (("p",), True, "", "test_transforms_random"),
    "RandomVerticalFlip": (("p",), True, "", "test_transforms_random"),
    "RandomResizedCrop": (("size", "scale", "ratio", "interpolation", "antialias"), True, "",
                          "test_transforms_random"),
    "RandomApply": (("transforms", "p"), True, "", "test_transforms_random"),
    "RandomGrayscale": (("p",), True, "", "test_transforms_random"),
    "RandomRotation": (("degrees", "interpolation", "expand", "center", "fill"), True,
                       "PIL images through PIL's rotate as in torchvision; a tensor image raises MigrationError",
                       "test_transforms_random"),
    "ColorJitter": (("brightness", "contrast", "saturation", "hue"), True,
                    "torchvision's formulas and random order; exact for given factors", "test_color_jitter"),
    "GaussianBlur": (("kernel_size", "sigma"), True, "torchvision's kernel and reflect padding; exact for a fixed "
                     "sigma", "test_gaussian_blur"),
}
for _name, (_args, _v2, _note, _test) in _TRANSFORMS.items():
    _mods = ["torchvision.transforms", "torchvision.transforms.transforms"]
    _mods += ["torchvision.transforms.v2"] if _v2 else []
    for _m in _mods:
        _is_random = _name.startswith("Random") or _name in ("ColorJitter", "GaussianBlur")
        mapping(f"{_m}.{_name}", f"{C}transforms.{_name}", args=_args, target_args=_args,
                note=(_note + "; " if _note else "") + ("random draws from NumPy's global stream (seeded by "
                      "mindspore.set_seed), not torch's numbers" if _is_random else "same values as torchvision"),
                status=DIFFERENCE if _is_random else CONVERTED, test=f"{_TV}::{_test}")
for _name, _args in (("RandomCrop", ("img", "output_size")), ("RandomResizedCrop", ("img", "scale", "ratio")),
                     ("RandomRotation", ("degrees",)),
                     ("ColorJitter", ("brightness", "contrast", "saturation", "hue")),
                     ("GaussianBlur", ("sigma_min", "sigma_max"))):
    for _m in ("torchvision.transforms", "torchvision.transforms.transforms"):
        mapping(f"{_m}.{_name}.get_params", f"{C}transforms.{_name}.get_params", args=_args, target_args=_args,
                status=DIFFERENCE, note="torchvision's rule; random draws from NumPy's global stream",
                test=f"{_TV}::test_transforms_random")
mapping("torchvision.transforms.v2.ConvertImageDtype", f"{C}transforms.ToDtype", args=("dtype",),
        target_args=("dtype", "scale"), extra={"scale": "True"}, note="v2's to_dtype with scale=True",
        test=f"{_TV}::test_transforms_deterministic")
mapping("torchvision.transforms.v2.ToImage", f"{C}transforms.ToImage", note="CHW mindspore Tensor, same dtype",
        test=f"{_TV}::test_transforms_deterministic")
mapping("torchvision.transforms.v2.ToDtype", f"{C}transforms.ToDtype", args=("dtype", "scale"),
        target_args=("dtype", "scale"), note="one dtype for images (a dict per input type is not converted)",
        test=f"{_TV}::test_transforms_deterministic")
for _m in ("torchvision.transforms", "torchvision.transforms.functional", "torchvision.transforms.v2"):
    mapping(f"{_m}.InterpolationMode", f"{C}transforms.InterpolationMode", test=f"{_TV}::test_transforms_resize")
    for _mode in ("NEAREST", "NEAREST_EXACT", "BILINEAR", "BICUBIC", "BOX", "HAMMING", "LANCZOS"):
        mapping(f"{_m}.InterpolationMode.{_mode}", f"{C}transforms.InterpolationMode.{_mode}",
                test=f"{_TV}::test_transforms_resize")

_FUNCTIONAL = {
    "to_tensor": ("pic",), "pil_to_tensor": ("pic",), "to_pil_image": ("pic", "mode"),
    "convert_image_dtype": ("image", "dtype"), "normalize": ("tensor", "mean", "std", "inplace"),
    "resize": ("img", "size", "interpolation", "max_size", "antialias"), "center_crop": ("img", "output_size"),
    "crop": ("img", "top", "left", "height", "width"),
    "resized_crop": ("img", "top", "left", "height", "width", "size", "interpolation", "antialias"),
    "pad": ("img", "padding", "fill", "padding_mode"), "hflip": ("img",), "vflip": ("img",),
    "rgb_to_grayscale": ("img", "num_output_channels"), "to_grayscale": ("img", "num_output_channels"),
    "adjust_brightness": ("img", "brightness_factor"), "adjust_contrast": ("img", "contrast_factor"),
    "adjust_saturation": ("img", "saturation_factor"), "adjust_hue": ("img", "hue_factor"),
    "get_dimensions": ("img",), "get_image_size": ("img",), "gaussian_blur": ("img", "kernel_size", "sigma"),
}
# v2.functional: the geometric ones, whose results are the same as v1's (its first argument is `inpt`)
_V2_FUNCTIONAL = ("pil_to_tensor", "to_pil_image", "normalize", "resize", "center_crop", "crop", "resized_crop",
                  "pad", "hflip", "vflip")
for _name, _args in _FUNCTIONAL.items():
    mapping(f"torchvision.transforms.functional.{_name}", f"{C}transforms.functional.{_name}", args=_args,
            target_args=_args, note="same values as torchvision (PIL images through PIL, tensors as CHW arrays)",
            test=f"{_TV}::test_transforms_functional")
    if _name in _V2_FUNCTIONAL:
        mapping(f"torchvision.transforms.v2.functional.{_name}", f"{C}transforms.functional.{_name}",
                args=("inpt",) + _args[1:], target_args=_args, rename={"inpt": _args[0]},
                note="same values as torchvision for images", test=f"{_TV}::test_transforms_functional")

# ------------------------------------------------------------------ torchvision.datasets
_DS_NOTE = ("reads the files torchvision downloaded ({files}); nothing is downloaded: download=True raises "
            "a clear error when they are missing; checksums are not verified")
_DATASETS = {
    "MNIST": ("mnist", "root/MNIST/raw/*-ubyte idx files (or .gz)", "test_datasets_mnist"),
    "FashionMNIST": ("mnist", "root/FashionMNIST/raw/*-ubyte idx files (or .gz)", "test_datasets_mnist"),
    "KMNIST": ("mnist", "root/KMNIST/raw/*-ubyte idx files (or .gz)", "test_datasets_mnist"),
    "CIFAR10": ("cifar", "root/cifar-10-batches-py pickles", "test_datasets_cifar"),
    "CIFAR100": ("cifar", "root/cifar-100-python pickles", "test_datasets_cifar"),
}
for _name, (_sub, _files, _test) in _DATASETS.items():
    for _m in ("torchvision.datasets", f"torchvision.datasets.{_sub}"):
        mapping(f"{_m}.{_name}", f"{C}datasets.{_name}",
                args=("root", "train", "transform", "target_transform", "download"),
                target_args=("root", "train", "transform", "target_transform", "download"),
                note=_DS_NOTE.format(files=_files), status=DIFFERENCE, test=f"{_TV}::{_test}")
for _m in ("torchvision.datasets", "torchvision.datasets.folder"):
    mapping(f"{_m}.ImageFolder", f"{C}datasets.ImageFolder",
            args=("root", "transform", "target_transform", "loader", "is_valid_file", "allow_empty"),
            target_args=("root", "transform", "target_transform", "loader", "is_valid_file", "allow_empty"),
            note="same classes, order and RGB PIL images as torchvision", test=f"{_TV}::test_datasets_image_folder")
    mapping(f"{_m}.DatasetFolder", f"{C}datasets.DatasetFolder",
            args=("root", "loader", "extensions", "transform", "target_transform", "is_valid_file", "allow_empty"),
            target_args=("root", "loader", "extensions", "transform", "target_transform", "is_valid_file",
                         "allow_empty"), test=f"{_TV}::test_datasets_image_folder")
for _name, _args in (("default_loader", ("path",)), ("pil_loader", ("path",))):
    mapping(f"torchvision.datasets.folder.{_name}", f"{C}datasets.{_name}", args=_args, target_args=_args,
            test=f"{_TV}::test_datasets_image_folder")
mapping("torchvision.datasets.folder.IMG_EXTENSIONS", f"{C}datasets.IMG_EXTENSIONS",
        test=f"{_TV}::test_datasets_image_folder")
for _src in ("torchvision.datasets.VisionDataset", "torchvision.datasets.vision.VisionDataset"):
    mapping(_src, f"{C}datasets.VisionDataset", args=("root", "transforms", "transform", "target_transform"),
            target_args=("root", "transforms", "transform", "target_transform"),
            note="base class keeping root/transform/target_transform", test=f"{_TV}::test_datasets_image_folder")

# ------------------------------------------------------------------ torchvision.utils
_GRID_ARGS = ("tensor", "nrow", "padding", "normalize", "value_range", "scale_each", "pad_value")
# `range`: torchvision's name for value_range before 0.12 (a keyword make_grid read from **kwargs), in programs
# written for it (vq-vae-2's `save_image(..., normalize=True, range=(-1, 1))`)
_OLD_RANGE = {"range": "value_range"}
mapping("torchvision.utils.make_grid", f"{C}make_grid", args=_GRID_ARGS, target_args=_GRID_ARGS, rename=_OLD_RANGE,
        note="computed in NumPy (host code): the same grid as torchvision",
        test="tests/parity/test_vision_utils.py::test_make_grid")
mapping("torchvision.utils.save_image", f"{C}save_image", args=("tensor", "fp", "format"),
        target_args=("tensor", "fp", "format"), kwonly=_GRID_ARGS[1:], rename=_OLD_RANGE,   # **kwargs to make_grid
        note="the grid as torchvision computes it, written with PIL: the same pixels",
        test="tests/parity/test_vision_utils.py::test_save_image")
