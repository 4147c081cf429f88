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

# torch.fft, torch.special, torch.linalg and torch's elementwise/reduction math, one module per family
from . import torch_fft, torch_special, torch_linalg, torch_math, torch_tensor_ops, torch_functional_aliases  # noqa: F401,E402,E501
from . import torch_signal_windows  # noqa: F401,E402

# torch.nn.init structured initialisers, torch.nn.utils, torch.distributions
from . import torch_nn_init, torch_nn_utils, torch_distributions  # noqa: F401,E402

# availability probes of torch (importlib.util.find_spec, importlib.metadata.version)
from . import package_probes, pytree_nodes, torch_library  # noqa: F401,E402

# torch.compiler.disable and torch._dynamo.disable used as values
from . import compiler_hints, library_internals  # noqa: F401,E402

# last: the in-place methods (`x.add_(y)`) as rebindings of whatever out-of-place records exist by now
from . import inplace  # noqa: F401,E402
