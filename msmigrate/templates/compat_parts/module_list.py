"""torch's ModuleList holding None entries (a norm that is configured off: x-transformers'
`ModuleList([pre_norm, post_branch_norm, post_main_norm])`); MindSpore's CellList refuses None."""
from collections import OrderedDict

from mindspore import nn
from mindspore.nn.layer.container import _get_prefix_and_index


class ModuleList(nn.CellList):
    """nn.CellList whose entries may be None, as torch's ModuleList: None keeps its index and
    is returned by indexing and iteration (a Cell's child slot may hold None)."""

    def _prefix(self):
        """The parameter-name prefix of this list's entries: a parameter's full name less its path inside its entry
        (MindSpore's CellList guesses it from the names' parts, wrongly for a list of lists with one entry); with
        no parameter yet (`self.downs = ModuleList()` grown by append) the prefix its parent gave it, so that two
        lists grown alike do not name their parameters the same ("0.0.weight")."""
        for key, cell in self._cells.items():
            for path, param in (cell.parameters_and_names() if cell is not None else ()):
                tail = f"{key}.{path}"
                if param.name == tail or param.name.endswith("." + tail):
                    return param.name[: len(param.name) - len(tail)]
                return _get_prefix_and_index(OrderedDict((k, c) for k, c in self._cells.items() if c is not None))[0]
        return getattr(self, "_attached_prefix", "")

    def update_parameters_name(self, prefix="", recurse=True):
        self._attached_prefix = prefix     # the attribute path its parent gave it ("downs.")
        super().update_parameters_name(prefix, recurse)

    def extend(self, cells):
        for cell in list(cells):
            self.append(cell)
        return self

    def append(self, cell):
        if cell is not None and not isinstance(cell, nn.Cell):
            raise TypeError(f"ModuleList entries are cells or None, not {type(cell).__name__}")
        if cell is not None and self._auto_prefix:
            cell.update_parameters_name(f"{self._prefix()}{len(self)}.")
        self._cells[str(len(self))] = cell

    def __setitem__(self, index, cell):
        if cell is None:
            self._cells[str(index % len(self))] = None
        else:
            super().__setitem__(index, cell)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return ModuleList(list(self._cells.values())[index])
        # CellList's own, named: MindSpore's graph parser cannot resolve super() (`mods[1](x)` in a compiled step)
        return nn.CellList.__getitem__(self, index)

    def set_grad(self, flag=True):
        self.requires_grad = flag
        for cell in self._cells.values():
            if cell is not None:
                cell.set_grad(flag)


class NamedModules(nn.Cell):
    """A ModuleList filled with named children (pretrainedmodels' NASNet: `path = nn.ModuleList()`, then
    `path.add_module('pad', ...)`, read as `path.pad`). MindSpore's graph parser reads a CellList as the tuple of its
    entries, so `path.pad` could not compile ("'Tuple' object has no attribute"); add_module turns such a list into
    this Cell, which holds the children as attributes and iterates, counts and indexes them as torch's list does."""

    def __iter__(self):
        return iter(self._cells.values())

    def __len__(self):
        return len(self._cells)

    def __getitem__(self, index):
        return self._cells[str(index)]      # torch's: the child named str(index) (a KeyError for a name)

    def append(self, cell):
        add_module(self, str(len(self)), cell)
        return self
