# torch.distributed.tensor's placements (Shard(dim), Replicate(), Partial(op)) in converted code: plain
# descriptions of a layout that libraries build while their modules are defined (transformers' tensor-parallel
# plans). Building and comparing them computes what torch does; what would apply them (DTensor,
# distribute_tensor, DeviceMesh) stays unconverted and stops with MigrationError where it is reached.
class PlacementBase:
    """torch.distributed.tensor.Placement: what kind of placement this is."""

    def is_shard(self, dim=None):
        return False

    def is_replicate(self):
        return False

    def is_partial(self, reduce_op=None):
        return False

    def __eq__(self, other):
        return type(other) is type(self) and other._key() == self._key()

    def __hash__(self):
        return hash((type(self).__name__, self._key()))


class PlacementShard(PlacementBase):
    """torch.distributed.tensor.Shard(dim)."""

    def __init__(self, dim):
        self.dim = dim

    def _key(self):
        return self.dim

    def is_shard(self, dim=None):
        return dim is None or dim == self.dim

    def __repr__(self):
        return f"Shard(dim={self.dim})"

    def __str__(self):
        return f"S({self.dim})"


class PlacementReplicate(PlacementBase):
    """torch.distributed.tensor.Replicate()."""

    def _key(self):
        return ()

    def is_replicate(self):
        return True

    def __repr__(self):
        return "Replicate()"

    def __str__(self):
        return "R"


class PlacementPartial(PlacementBase):
    """torch.distributed.tensor.Partial(reduce_op="sum")."""

    def __init__(self, reduce_op="sum"):
        self.reduce_op = reduce_op

    def _key(self):
        return self.reduce_op

    def is_partial(self, reduce_op=None):
        return reduce_op is None or reduce_op == self.reduce_op

    def __repr__(self):
        return f"Partial({self.reduce_op})"

    def __str__(self):
        return f"P({self.reduce_op})"
