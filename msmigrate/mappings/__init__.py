"""Every mapping record, grouped by what they map. Importing this package fills the
registry (msmigrate.registry.REGISTRY)."""
from . import layers, module_api, dtypes  # noqa: F401
from . import adapters  # noqa: F401  (must come after layers)

import importlib

# families filled in by their own modules; absent ones are simply skipped
for _name in ("functional", "torch_functions", "tensor_methods", "misc", "devices", "checkpoints",
              "losses", "data", "training", "optim", "deploy", "debugging", "distributed", "tensorflow", "einops"):
    try:
        importlib.import_module(f"{__name__}.{_name}")
    except ModuleNotFoundError as exc:  # pragma: no cover - only while a family is not written yet
        if exc.name != f"{__name__}.{_name}":
            raise

# finfo/iinfo, attention and transformers, patches, channel dropout, torch's private bases
from . import numerics, attention, patches, channel_dropout, private_bases  # noqa: F401,E402
# availability probes of torch (importlib.util.find_spec, importlib.metadata.version)
from . import package_probes, pytree_nodes, torch_library  # noqa: F401,E402
