"""Checkpoints: torch.save/torch.load, state_dict/load_state_dict (models and optimizers),
safetensors. The emitted helpers live in templates/compat_parts/checkpoints.py."""
from __future__ import annotations

from ..records import DIFFERENCE, mapping

T = "tests/parity/test_checkpoints.py"

_SAVE_NOTE = ("writes a MindSpore checkpoint (mindspore.save_checkpoint) at exactly the path given, also for "
              ".pt/.pth names; the structure around the tensors (dicts, lists, epoch, accuracy...) is kept so "
              "_ms_compat.load gives it back. A whole model (torch.save(model)) is saved as its parameters: "
              "loading that file raises, save model.state_dict() instead")
_LOAD_NOTE = ("reads what the converted program saved, MindSpore checkpoints, torch.save files (zip or legacy) and "
              ".safetensors, without torch and without running pickled code (only tensors, containers, numbers "
              "and strings are accepted; whole pickled models are refused); tensors come back as "
              "mindspore.Tensor; map_location/weights_only/mmap are ignored")
for _save in ("torch.save", "torch.serialization.save"):
    mapping(_save, "_ms_compat.save",
            args=("obj", "f", "pickle_module", "pickle_protocol", "_use_new_zipfile_serialization",
                  "_disable_byteorder_record"),
            target_args=("obj", "f"),
            drop=("pickle_module", "pickle_protocol", "_use_new_zipfile_serialization", "_disable_byteorder_record"),
            takes_torch_args=True, status=DIFFERENCE, note=_SAVE_NOTE,
            test=f"{T}::test_training_checkpoint_round_trip")
for _load in ("torch.load", "torch.serialization.load"):
    mapping(_load, "_ms_compat.load", args=("f", "map_location", "pickle_module", "weights_only", "mmap"),
            target_args=("f",), drop=("map_location", "pickle_module", "weights_only", "mmap"),
            takes_torch_args=True, status=DIFFERENCE, note=_LOAD_NOTE,
            test=f"{T}::test_torch_checkpoint_loads_into_converted_model")

mapping("Module.state_dict", "_ms_compat.state_dict", args=("destination", "prefix", "keep_vars"),
        target_args=("module",), status=DIFFERENCE,
        note="MindSpore's names (BatchNorm gamma/beta/moving_mean/moving_variance, LayerNorm gamma/beta, Embedding "
             "embedding_table), also answering lookups/`in`/pop/del by torch's names; load_state_dict accepts these "
             "and torch's; no num_batches_tracked entries. An optimizer's state_dict has torch's "
             "layout ({'state': {index: {...}}, 'param_groups': [...]})",
        test=f"{T}::test_state_dict_answers_torch_names")
mapping("Module.load_state_dict", "_ms_compat.load_state_dict", args=("state_dict", "strict", "assign"),
        target_args=("module", "state_dict"), drop=("assign",),
        note="takes MindSpore's or torch's parameter names (renamed, Conv1d weights reshaped, num_batches_tracked "
             "dropped); strict=True raises listing every missing and unexpected key; returns (missing_keys, "
             "unexpected_keys). Optimizers: torch's Adam/AdamW/SGD state loads into mindspore.experimental.optim",
        test=f"{T}::test_torch_checkpoint_loads_into_converted_model")

# safetensors.torch: the same file format, written and read with NumPy
mapping("safetensors.torch.save_file", "_ms_compat.safetensors_save_file", args=("tensors", "filename", "metadata"),
        target_args=("tensors", "filename", "metadata"), test=f"{T}::test_safetensors")
mapping("safetensors.torch.load_file", "_ms_compat.safetensors_load_file", args=("filename", "device"),
        target_args=("filename",), drop=("device",), note="tensors come back as mindspore.Tensor",
        test=f"{T}::test_safetensors")
mapping("safetensors.torch.save", "_ms_compat.safetensors_save", args=("tensors", "metadata"),
        target_args=("tensors", "metadata"), test=f"{T}::test_safetensors")
mapping("safetensors.torch.load", "_ms_compat.safetensors_load", args=("data",), target_args=("data",),
        note="tensors come back as mindspore.Tensor", test=f"{T}::test_safetensors")

# torch.hub's weight cache: the same directory as torch's, the file read by _ms_compat.load
_HUB = "tests/parity/test_hub_weights.py"
_HUB_NOTE = ("downloads to torch's cache directory ($TORCH_HOME/hub/checkpoints) when the file is not there and "
             "reads it with _ms_compat.load (torch's format without torch, no pickled code run); tensors come back "
             "as mindspore.Tensor with torch's names, which the converted load_state_dict accepts; map_location/"
             "weights_only/progress have no effect")
for _src in ("torch.hub.load_state_dict_from_url", "torch.utils.model_zoo.load_url"):
    mapping(_src, "_ms_compat.load_state_dict_from_url",
            args=("url", "model_dir", "map_location", "progress", "check_hash", "file_name", "weights_only"),
            target_args=("url", "model_dir", "map_location", "progress", "check_hash", "file_name", "weights_only"),
            status=DIFFERENCE, note=_HUB_NOTE, test=f"{_HUB}::test_load_state_dict_from_url")
mapping("torch.hub.download_url_to_file", "_ms_compat.download_url_to_file",
        args=("url", "dst", "hash_prefix", "progress"), target_args=("url", "dst", "hash_prefix", "progress"),
        test=f"{_HUB}::test_download_url_to_file")
mapping("torch.hub.get_dir", "_ms_compat.get_dir", test=f"{_HUB}::test_load_state_dict_from_url")
mapping("torch.hub.set_dir", "_ms_compat.set_dir", args=("d",), target_args=("d",),
        test=f"{_HUB}::test_load_state_dict_from_url")
