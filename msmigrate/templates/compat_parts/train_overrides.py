"""torch's `module.train(mode)` / `module.eval()` in a project whose Module classes override train(mode) (loralib's
layers merge their low-rank update into the weight in eval() and take it out in train()): torch's Module.train sets
the flag and calls train(mode) of every child, so a parent's eval() reaches each layer's own train(). MindSpore's
set_train sets the flags of the whole tree and calls nothing: here each cell whose class defines train() has it
called, parents before children (a parent's own train() runs whole before its children's: in torch they run
inside its super().train(mode))."""


def train_mode(cell, mode=True):
    """`cell.train(mode)` / `cell.eval()`: the cell's own train() if its class has one, else the flag; then the same
    for each sub-cell. Returns the cell, as torch does."""
    own = getattr(type(cell), "train", None)
    if callable(own):
        own(cell, mode)
    else:
        cell.set_train(mode)
    for child in cell.cells():
        train_mode(child, mode)
    return cell


def train_of(obj, *args, **kwargs):
    """`obj.train(arg)` where the converter could not tell obj's type and arg is no True/False literal: for an
    nn.Cell, torch's Module.train(mode) (a mode that is no bool raises torch's ValueError; a class's own train()
    runs as train_mode runs it); any other object's own train() (Time-Series-Library's `exp.train(setting)`, an
    experiment object's training loop), with the arguments as written. Returns what that call returns."""
    if not isinstance(obj, nn.Cell):
        return obj.train(*args, **kwargs)
    mode = args[0] if args else kwargs.get("mode", True)
    if not isinstance(mode, bool):
        if callable(getattr(type(obj), "train", None)):
            return obj.train(*args, **kwargs)   # the Cell class's own train(x), no mode
        raise ValueError("training mode is expected to be boolean")
    return train_mode(obj, mode)
