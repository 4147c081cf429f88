"""torch's process-level functions that a model's code reads: the random state (torch.seed, initial_seed,
get_rng_state/set_rng_state), dtype promotion queries (promote_types, result_type, can_cast, broadcast_shapes),
mixed-precision queries (is_autocast_enabled, get_autocast_dtype), set_default_tensor_type, the top-level
torch.GradScaler, and torch.utils.data's ChainDataset / StackDataset.

Helpers: templates/compat_parts/torch_runtime.py. Proven by tests/parity/test_torch_runtime.py (values compared
with torch's; random state by replaying draws)."""
from __future__ import annotations

from ..callsite import UnsupportedSite
from ..records import DIFFERENCE, mapping, rule

T = "tests/parity/test_torch_runtime.py"
C = "_ms_compat."

# ------------------------------------------------------------------ random state
_STATE_NOTE = ("the state is a seed: get_rng_state() restarts MindSpore's random streams from a seed drawn from "
               "them (reproducible in a seeded program) and returns it (a uint8 tensor), set_rng_state(state) "
               "restarts them from it, so the draws after "
               "set_rng_state repeat those after get_rng_state, as in torch; the numbers are MindSpore's, and a "
               "state saved by torch cannot be replayed (set_rng_state raises)")
for _mod in ("torch", "torch.random"):
    mapping(f"{_mod}.get_rng_state", C + "get_rng_state", status=DIFFERENCE, note=_STATE_NOTE,
            test=f"{T}::test_rng_state_replays_draws")
    mapping(f"{_mod}.set_rng_state", C + "set_rng_state", args=("new_state",), target_args=("new_state",),
            status=DIFFERENCE, note=_STATE_NOTE, test=f"{T}::test_rng_state_replays_draws")
    mapping(f"{_mod}.seed", C + "seed", status=DIFFERENCE,
            note="a non-deterministic seed set with mindspore.set_seed (and mindspore.manual_seed) and returned",
            test=f"{T}::test_seed_functions")
    mapping(f"{_mod}.initial_seed", C + "initial_seed", status=DIFFERENCE,
            note="the seed torch.manual_seed (mindspore.set_seed) or torch.seed set; with none set, a "
                 "non-deterministic seed is set and returned (torch picks one at start-up)",
            test=f"{T}::test_seed_functions")

# ------------------------------------------------------------------ dtypes and shapes
mapping("torch.promote_types", C + "promote_types", args=("type1", "type2"), target_args=("type1", "type2"),
        note="torch's promotion table (category, then width; uint8 with int8 -> int16, float16 with bfloat16 -> "
             "float32) on MindSpore dtypes", test=f"{T}::test_dtype_queries")
mapping("torch.result_type", C + "result_type", args=("tensor1", "tensor2"), target_args=("tensor1", "tensor2"),
        note="torch's rule: tensors with dimensions, then 0-dim tensors, then Python numbers (int64, float32 for a "
             "float: the default dtype), a lower group counting only when its category is higher",
        test=f"{T}::test_dtype_queries")
mapping("torch.can_cast", C + "can_cast", args=("from_", "to"), target_args=("from_", "to"),
        note="False where the cast lowers the category (complex -> real, floating -> integer, non-bool -> bool)",
        test=f"{T}::test_dtype_queries")
mapping("torch.broadcast_shapes", C + "broadcast_shapes", note="a tuple (torch: torch.Size, a tuple subclass)",
        test=f"{T}::test_dtype_queries")

# ------------------------------------------------------------------ mixed precision queries
_AUTOCAST_OFF = ("False: the converted code runs without autocast (torch.autocast contexts are removed or do "
                 "nothing; MindSpore sets mixed precision on the network with mindspore.amp.auto_mixed_precision), "
                 "so inside such a context it answers False where torch answers True")
for _name, _args in (("is_autocast_enabled", ("device_type",)), ("is_autocast_cpu_enabled", ())):
    mapping(f"torch.{_name}", "expr:False", args=_args, drop=_args, status=DIFFERENCE, note=_AUTOCAST_OFF,
            test=f"{T}::test_autocast_queries")
_AUTOCAST_DTYPE = ("torch's default autocast dtype (bfloat16 on CPU, float16 on accelerators): the setters "
                   "(set_autocast_dtype...) are not converted, so the default is the only value")
mapping("torch.get_autocast_dtype", "expr:(ms.bfloat16 if {device_type} == 'cpu' else ms.float16)",
        args=("device_type",), note=_AUTOCAST_DTYPE, test=f"{T}::test_autocast_queries")
mapping("torch.get_autocast_cpu_dtype", "expr:ms.bfloat16", note=_AUTOCAST_DTYPE, test=f"{T}::test_autocast_queries")
mapping("torch.get_autocast_gpu_dtype", "expr:ms.float16", note=_AUTOCAST_DTYPE, test=f"{T}::test_autocast_queries")
mapping("torch.GradScaler", C + "GradScaler",
        args=("device", "init_scale", "growth_factor", "backoff_factor", "growth_interval", "enabled"),
        target_args=("init_scale", "growth_factor", "backoff_factor", "growth_interval", "enabled"),
        drop=("device",), status=DIFFERENCE,
        note="torch.amp.GradScaler's record: loss scaling off (scale(x) returns x, step(opt) calls opt.step()); "
             "for float16 training use mindspore.amp.DynamicLossScaler", test=f"{T}::test_grad_scaler_top_level")


def _set_default_tensor_type(ctx):
    node = ctx.original.args[0].value if len(ctx.original.args) == 1 else None
    qn = ctx.tr._torch_qname(node) if node is not None else None
    text = node.evaluated_value if node is not None and hasattr(node, "evaluated_value") else None
    if qn == "torch.FloatTensor" or text == "torch.FloatTensor":
        return "drop"
    raise UnsupportedSite("MindSpore has no global default tensor type (its default is float32): only "
                          "torch.FloatTensor is removed; pass dtype= where the tensors are made")


rule("torch.set_default_tensor_type", None, args=("t",),
     note="set_default_tensor_type(torch.FloatTensor) (or the string 'torch.FloatTensor') is MindSpore's default "
          "and is removed; any other type has no global switch (TODO)",
     test=f"{T}::test_set_default_tensor_type")(_set_default_tensor_type)

# ------------------------------------------------------------------ torch.utils.data
for _m in ("", ".dataset"):
    mapping(f"torch.utils.data{_m}.ChainDataset", C + "ChainDataset", args=("datasets",), target_args=("datasets",),
            note="iterates each dataset in turn", test=f"{T}::test_chain_stack_datasets")
    mapping(f"torch.utils.data{_m}.StackDataset", C + "StackDataset",
            note="tuple samples from positional datasets, dict samples from keyword ones",
            test=f"{T}::test_chain_stack_datasets")

# ------------------------------------------------------------------ printing
_PRINT_ARGS = ("precision", "threshold", "edgeitems", "linewidth", "profile", "sci_mode")
mapping("torch.set_printoptions", C + "set_printoptions", args=_PRINT_ARGS, target_args=_PRINT_ARGS,
        status=DIFFERENCE, test=f"{T}::test_set_printoptions",
        note="MindSpore tensors print through NumPy: the same options (profile presets as torch's) on "
             "np.set_printoptions; sci_mode=False suppresses scientific notation; the layout of the text is NumPy's")
