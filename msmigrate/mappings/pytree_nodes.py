"""torch.utils._pytree registrations (what libraries do while their classes are defined)."""
from __future__ import annotations

from ..records import DIFFERENCE, mapping

_T = "tests/parity/test_build_probes.py::test_pytree_registration"
mapping("torch.utils._pytree.register_pytree_node", "_ms_compat.register_pytree_node",
        args=("cls", "flatten_fn", "unflatten_fn"), status=DIFFERENCE,
        kwonly=("serialized_type_name", "to_dumpable_context", "from_dumpable_context", "flatten_with_keys_fn"),
        note="kept in _ms_compat.PYTREE_NODES (a second registration raises ValueError, as on torch); torch's "
             "pytree functions that would read it are not converted", test=_T)
mapping("torch.utils._pytree._dict_flatten_with_keys", "_ms_compat.pytree_dict_flatten_with_keys", args=("d",),
        note="([(MappingKey(k), v)...], keys), with torch's MappingKey (str, repr, get)", test=_T)
mapping("torch.utils._pytree.MappingKey", "_ms_compat.PytreeMappingKey", args=("key",), test=_T)
