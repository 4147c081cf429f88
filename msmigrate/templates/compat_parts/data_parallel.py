"""torch.nn.DataParallel on one device: MindSpore runs one device per process (data parallel is msrun +
mindspore.communication), so the wrapper runs the network itself; it keeps it as `.module`, which torch programs
read (`model.module.fc`, `torch.save(model.module.state_dict(), path)`)."""
from mindspore import nn


class DataParallel(nn.Cell):
    """torch.nn.DataParallel: the wrapped network, run as it is on the device MindSpore was given; device_ids,
    output_device and dim have no counterpart. Its Parameters keep the network's own names (no "module."
    prefix: a checkpoint of the wrapper loads into the network, and the network's into the wrapper)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__(auto_prefix=False)
        self.module = module

    def construct(self, *args, **kwargs):
        return self.module(*args, **kwargs)
