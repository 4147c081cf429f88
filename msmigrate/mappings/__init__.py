"""Every mapping record, grouped by what they map. Importing this package fills the
registry (msmigrate.registry.REGISTRY)."""
from . import layers, module_api, dtypes  # noqa: F401
from . import adapters  # noqa: F401  (must come after layers)

# the families of torch.nn.functional, torch.*, Tensor methods, devices, checkpoints, losses, data, training,
# optimizers, deployment, debugging, distribution, TensorFlow/Keras and einops
from . import functional, torch_functions, tensor_methods, misc, devices, checkpoints  # noqa: F401,E402
from . import losses, data, training, optim, deploy, debugging, distributed, tensorflow, einops, einx  # noqa: F401,E402

# finfo/iinfo, attention and transformers, patches, channel dropout, torch's private bases
from . import numerics, attention, patches, channel_dropout, private_bases  # noqa: F401,E402

# torch.fft, torch.special, torch.linalg and torch's elementwise/reduction math, one module per family
from . import torch_fft, torch_special, torch_linalg, torch_math, torch_tensor_ops, torch_functional_aliases  # noqa: F401,E402,E501
from . import torch_signal_windows, torch_masked  # noqa: F401,E402

# torch.nn.init structured initialisers, torch.nn.utils, torch.distributions
from . import torch_nn_init, torch_nn_utils, torch_distributions  # noqa: F401,E402
from . import nn_utils_reparam  # noqa: F401,E402  (weight_norm / spectral_norm)

# availability probes of torch (importlib.util.find_spec, importlib.metadata.version)
from . import package_probes, pytree_nodes, torch_library  # noqa: F401,E402

# torch.autograd: custom Functions, torch.autograd.functional
from . import autograd  # noqa: F401,E402
# torch.Tensor's in-place random fills (x.exponential_(), x.bernoulli_(p)...)
from . import random_fills, diagonal_fill  # noqa: F401,E402

# more torch.* functions: top-level copies of functional ops, one-expression functions
from . import torch_functions_more, torch_complex, torch_nn_more, torch_functional_more  # noqa: F401,E402

# torch.Tensor methods that are a converted torch function with the receiver first (x.erfinv())
from . import tensor_twins  # noqa: F401,E402
# torch's in-place functions (torch.relu_(x)) as rebindings of their out-of-place records
from . import torch_inplace_functions  # noqa: F401,E402
# torch._foreach_OP(tensors): the converted op over each tensor of a list
from . import foreach_ops  # noqa: F401,E402
# torch.compiler.disable and torch._dynamo.disable used as values
from . import compiler_hints, library_internals  # noqa: F401,E402
# torch's random state, dtype promotion and autocast queries, ChainDataset/StackDataset; more torch.* functions
from . import torch_runtime, torch_functions_extra  # noqa: F401,E402

# torch.testing.assert_close / assert_allclose on MindSpore tensors
from . import testing_compare  # noqa: F401,E402

# more Tensor properties/methods, torch.nn layers and functional ops (helpers: templates/compat_parts/nn_extra.py)
from . import tensor_nn_extra  # noqa: F401,E402

# the method twins of torch functions recorded after tensor_twins (Tensor.frexp is torch.frexp's)
tensor_twins._register()

# last: the in-place methods (`x.add_(y)`) as rebindings of whatever out-of-place records exist by now
from . import inplace  # noqa: F401,E402
# torch's sparse COO matrices and their products with dense ones
from . import sparse  # noqa: F401,E402
from . import lightning  # noqa: F401,E402  (PyTorch Lightning's module, data module and Trainer)
