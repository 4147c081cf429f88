"""Writes tinynet weights the way a PyTorch project would (torch.save of a state_dict)."""
import sys

import _ms_compat

from tinynet import tiny_resnet

# _ms_compat.manual_seed (helper): torch.manual_seed: mindspore.set_seed, less its np.random.seed (torch's leaves NumPy
# alone): a NumPy stream the progr...
_ms_compat.manual_seed(seed=0)
model = tiny_resnet()
# _ms_compat.save (helper): nested dicts, lists and numbers at exactly this path (save_checkpoint: flat, appends .ckpt)
# _ms_compat.state_dict (helper): also answers torch's names (Cell.state_dict: gamma, beta, moving_mean...); optimizers
# in torch's layout
_ms_compat.save(_ms_compat.state_dict(model), sys.argv[1] if len(sys.argv) > 1 else "tinynet.pth")
