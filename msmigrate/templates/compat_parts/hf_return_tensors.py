"""A Hugging Face tokenizer's or processor's output asked for as NumPy arrays (msmigrate/hf_return_tensors.py)."""
import numpy as np
import mindspore as ms


def ms_tensors(batch):
    """Each NumPy array of `batch` (a BatchEncoding, a dict, or one array) as a MindSpore tensor, in place:
    torch's return_tensors='pt' gave torch tensors of the same values and dtypes."""
    if isinstance(batch, np.ndarray):
        return ms.Tensor(batch)
    for key in list(batch.keys()):
        if isinstance(batch[key], np.ndarray):
            batch[key] = ms.Tensor(batch[key])
    return batch
