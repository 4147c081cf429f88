# torch.utils._pytree.register_pytree_node in converted code: libraries register their output classes
# (transformers' ModelOutput) with torch's pytree while classes are defined. The converted program keeps
# the registration (a table, with torch's refusal of a second one); no converted code reads the table:
# torch's pytree functions themselves are not converted, so their uses stop with MigrationError.
PYTREE_NODES = {}


class PytreeMappingKey:
    """torch.utils._pytree.MappingKey: the key of one entry of a flattened mapping."""

    def __init__(self, key):
        self.key = key

    def __str__(self):
        return f"[{self.key!r}]"

    def __repr__(self):
        return f"MappingKey(key={self.key!r})"

    def __eq__(self, other):
        return isinstance(other, PytreeMappingKey) and other.key == self.key

    def __hash__(self):
        return hash(("MappingKey", self.key))

    def get(self, mapping):
        return mapping[self.key]


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None, to_dumpable_context=None,
                         from_dumpable_context=None, flatten_with_keys_fn=None):
    """torch.utils._pytree.register_pytree_node: kept in PYTREE_NODES; a class registered twice raises
    ValueError, as on torch."""
    if cls in PYTREE_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    PYTREE_NODES[cls] = (flatten_fn, unflatten_fn, flatten_with_keys_fn, serialized_type_name)


def pytree_dict_flatten_with_keys(d):
    """torch.utils._pytree._dict_flatten_with_keys: ([(MappingKey(k), v)...], [keys])."""
    return [(PytreeMappingKey(k), v) for k, v in d.items()], list(d.keys())
