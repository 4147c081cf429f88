"""torch.accelerator (torch 2.6+, pytorch/examples' device choice) answered from MindSpore's context."""


def current_accelerator(check_available=False):
    """torch.accelerator.current_accelerator(): the device MindSpore runs on when it is an accelerator
    (torch's 'cuda' for a GPU, 'npu' for Ascend); None on a CPU run, as CPU-only torch answers."""
    if not backend.on_accelerator:
        return None
    return Device(backend.target)
