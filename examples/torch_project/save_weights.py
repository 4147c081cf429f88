"""Writes tinynet weights the way a PyTorch project would (torch.save of a state_dict)."""
import sys

import torch

from tinynet import tiny_resnet

torch.manual_seed(0)
model = tiny_resnet()
torch.save(model.state_dict(), sys.argv[1] if len(sys.argv) > 1 else "tinynet.pth")
