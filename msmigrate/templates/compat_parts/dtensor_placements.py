# torch.distributed.tensor's placements (Shard(dim), Replicate(), Partial(op)) in converted code: plain
# descriptions of a layout that libraries build while their modules are defined (transformers' tensor-parallel
# plans). Building and comparing them computes what torch does; what would apply them (DTensor,
# distribute_tensor, DeviceMesh) stays unconverted and stops with MigrationError where it is reached.
class PlacementBase:
    """torch.distributed.tensor.Placement: what kind of placement this is. A placement keeps at most one
    argument (_arg: Shard's dim, Partial's reduce_op) and prints as torch prints it (_repr, _str formats)."""
    _kind = _arg = _repr = _str = None

    def _key(self):
        return getattr(self, self._arg) if self._arg else ()

    def _is(self, kind, arg):
        return self._kind == kind and (arg is None or arg == self._key())

    def is_shard(self, dim=None):
        return self._is("shard", dim)

    def is_replicate(self):
        return self._is("replicate", None)

    def is_partial(self, reduce_op=None):
        return self._is("partial", reduce_op)

    def __eq__(self, other):
        return type(other) is type(self) and other._key() == self._key()

    def __hash__(self):
        return hash((type(self).__name__, self._key()))

    def __repr__(self):
        return object.__repr__(self) if self._repr is None else self._repr.format(self._key())

    def __str__(self):
        return repr(self) if self._str is None else self._str.format(self._key())


class PlacementShard(PlacementBase):
    """torch.distributed.tensor.Shard(dim)."""
    _kind, _arg, _repr, _str = "shard", "dim", "Shard(dim={})", "S({})"

    def __init__(self, dim):
        self.dim = dim


class PlacementReplicate(PlacementBase):
    """torch.distributed.tensor.Replicate()."""
    _kind, _repr, _str = "replicate", "Replicate()", "R"


class PlacementPartial(PlacementBase):
    """torch.distributed.tensor.Partial(reduce_op="sum")."""
    _kind, _arg, _repr, _str = "partial", "reduce_op", "Partial({})", "P({})"

    def __init__(self, reduce_op="sum"):
        self.reduce_op = reduce_op
