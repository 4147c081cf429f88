"""The copy form of `torch.autograd.grad(y, x)` (msmigrate/higher_order_grad.py): the block runs the statements from
x to y, and the gradient's function runs copies of them again. torch runs them once, so a network there in
training mode would differ: a BatchNorm moves its running statistics twice, a Dropout draws a second mask (the
gradient is that of another network than the one the block's values came from)."""


def forward_run_again(where, *objects):
    """Before the gradient of a function that runs the forward again: MigrationError naming the original line where
    one of the objects it reads (a network, or an object holding one in an attribute: an attack's `self.model`)
    holds a BatchNorm or Dropout in training mode; nothing otherwise (eval mode, no such layer). Inside a compiled
    graph the cells cannot be walked: nothing is checked there."""
    if _compiling(_draw_probe):
        return 0
    for obj in objects:
        for cell in _cells_of(obj):
            why = _stateful_in_training(cell)
            if why:
                _forward_run_again_refused(where, why)
    return 0


def _cells_of(obj):
    if isinstance(obj, nn.Cell):
        return [cell for _, cell in obj.cells_and_names()]
    found = []
    for value in list(getattr(obj, "__dict__", {}).values()):
        if isinstance(value, nn.Cell):
            found.extend(cell for _, cell in value.cells_and_names())
    return found


def _stateful_in_training(cell):
    if not cell.training:
        return ""
    if isinstance(cell, nn.layer.normalization._BatchNorm) and cell.use_batch_statistics is not False:
        return f"{type(cell).__name__} in training mode would update its running statistics twice"
    if "Dropout" in type(cell).__name__:
        p = getattr(cell, "p", None)
        p = 1 - getattr(cell, "keep_prob", 1.0) if p is None else p
        if p:
            return f"{type(cell).__name__} in training mode would draw a second mask"
    return ""


def _forward_run_again_refused(where, why):
    # its own function: MindSpore's graph parser refuses a `raise` of a non-builtin exception in a function a
    # graph calls
    raise MigrationError(
        f"{where}: torch.autograd.grad differentiates the forward torch ran once; the converted gradient runs the "
        f"statements from the input to the output again, and a {why}. Put the network in eval mode around this "
        "gradient, or write it with mindspore.value_and_grad over a function computing everything it needs once")
