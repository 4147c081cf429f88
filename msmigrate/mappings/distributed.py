"""Distributed training: torch.distributed, DistributedDataParallel, DistributedSampler and
torch.multiprocessing.spawn -> MindSpore data parallel, launched with msrun.

The helpers live in templates/compat_parts/distributed.py: init_process_group runs
mindspore.communication.init() and sets the data-parallel mode (gradients averaged); the converted
train step averages gradients with nn.DistributedGradReducer (train_loop.py writes a GradReducer
line in modules that use torch.distributed); msmigrate writes an msrun launch script next to each
converted program that uses these APIs. FSDP and tensor parallelism stay TODOs: MindSpore's
counterparts (semi-auto/auto parallel with shard strategies, optimizer parallel) need a redesign,
not a translation."""
from __future__ import annotations

from ..records import DIFFERENCE, mapping

T = "tests/parity/test_distributed.py"
C = "_ms_compat."
D = "torch.distributed."

_INIT_ARGS = ("backend", "init_method", "timeout", "world_size", "rank", "store", "group_name", "pg_options",
              "device_id")
mapping(D + "init_process_group", C + "init_process_group", args=_INIT_ARGS, target_args=_INIT_ARGS,
        drop=("backend", "init_method", "timeout", "store", "group_name", "pg_options", "device_id"),
        status=DIFFERENCE,
        note="mindspore.communication.init() + set_auto_parallel_context(parallel_mode=DATA_PARALLEL, "
             "gradients_mean=True) (AUTO_PARALLEL with `msmigrate convert --parallel-mode auto`). The backend "
             "(nccl/gloo) is dropped: MindSpore uses HCCL on Ascend, NCCL on GPU, its own TCP collectives on CPU. "
             "msrun starts the processes and decides the ranks (see the *_msrun.sh script written next to the "
             "program); started with plain python the program runs as one process, rank 0 of 1. Under msrun "
             "os.environ gets torchrun's RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR/PORT from msrun's RANK_ID, "
             "DEVICE_ID, MS_WORKER_NUM, MS_SCHED_HOST/PORT when _ms_compat is imported",
        test=f"{T}::test_collectives_two_workers")
for _name, _note, _test in (
        ("get_rank", "mindspore.communication.get_rank()", "test_single_process_group"),
        ("get_world_size", "mindspore.communication.get_group_size()", "test_single_process_group"),
        ("is_initialized", "", "test_single_process_group"),
        ("is_available", "always True: MindSpore ships its collective communication", "test_single_process_group"),
        ("destroy_process_group", "mindspore.communication.release()", "test_single_process_group")):
    mapping(D + _name, C + _name, args=("group",), target_args=("group",), note=_note,
            test=f"{T}::{_test}")
mapping(D + "ReduceOp", C + "ReduceOp", test=f"{T}::test_collectives_two_workers")
for _op in ("SUM", "AVG", "PRODUCT", "MIN", "MAX"):
    mapping(f"{D}ReduceOp.{_op}", f"{C}ReduceOp.{_op}", test=f"{T}::test_collectives_two_workers")
for _op in ("BAND", "BOR", "BXOR", "PREMUL_SUM"):
    mapping(f"{D}ReduceOp.{_op}", None, note="bitwise/pre-multiplied reductions are not converted")
mapping(D + "all_reduce", C + "all_reduce", args=("tensor", "op", "group", "async_op"),
        target_args=("tensor", "op", "group", "async_op"), status=DIFFERENCE,
        note="writes the result into the tensor in place (Tensor.copy_), as torch does. MindSpore's CPU AllReduce "
             "only sums: MIN/MAX/PRODUCT gather all copies (AllGather) and reduce them; AVG is the sum over "
             "world_size; the sum runs in float32. Host code only (not inside a compiled step); async_op=True "
             "returns a handle whose wait() returns at once",
        test=f"{T}::test_collectives_two_workers")
mapping(D + "broadcast", C + "broadcast", args=("tensor", "src", "group", "async_op", "group_src"),
        target_args=("tensor", "src", "group", "async_op", "group_src"),
        note="ops.Broadcast(src), written into the tensor in place", test=f"{T}::test_collectives_two_workers")
mapping(D + "all_gather", C + "all_gather", args=("tensor_list", "tensor", "group", "async_op"),
        target_args=("tensor_list", "tensor", "group", "async_op"), status=DIFFERENCE,
        note="ops.AllGather; the list's items are replaced by the gathered tensors (torch writes into the "
             "tensors already in the list): read them from the list", test=f"{T}::test_collectives_two_workers")
mapping(D + "all_gather_into_tensor", C + "all_gather_into_tensor",
        args=("output_tensor", "input_tensor", "group", "async_op"),
        target_args=("output_tensor", "input_tensor", "group", "async_op"),
        note="ops.AllGather (concatenated along dim 0), written into output_tensor",
        test=f"{T}::test_collectives_two_workers")
mapping(D + "barrier", C + "barrier", args=("group", "async_op", "device_ids"),
        target_args=("group", "async_op", "device_ids"),
        note="a one-number AllReduce read back to the host", test=f"{T}::test_collectives_two_workers")
for _name, _why in (
        ("all_gather_object", "gathering pickled Python objects is not converted: gather tensors (all_gather)"),
        ("broadcast_object_list", "broadcasting pickled Python objects is not converted: broadcast tensors"),
        ("gather", "mindspore.communication has no gather to one rank on CPU: use all_gather"),
        ("scatter", "not converted: mindspore.ops.ReduceScatter / AllGather cover most uses"),
        ("reduce", "not converted: all_reduce gives every rank the result"),
        ("reduce_scatter", "mindspore.ops.ReduceScatter (not converted yet)"),
        ("send", "point-to-point: mindspore.ops.Send/Receive work in GRAPH mode on Ascend/GPU only"),
        ("recv", "point-to-point: mindspore.ops.Send/Receive work in GRAPH mode on Ascend/GPU only"),
        ("new_group", "sub-groups: mindspore.communication.create_group (not converted yet)")):
    mapping(D + _name, None, note=_why)

# ------------------------------------------------------------------ DDP and the sampler
_DDP_ARGS = ("module", "device_ids", "output_device", "dim", "broadcast_buffers", "process_group",
             "bucket_cap_mb", "find_unused_parameters", "check_reduction", "gradient_as_bucket_view",
             "static_graph")
for _src in ("torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel"):
    mapping(_src, C + "DistributedDataParallel", args=_DDP_ARGS, target_args=("module",),
            drop=_DDP_ARGS[1:], status=DIFFERENCE,
            note="a Cell that runs the module, kept as `.module` (model.module.state_dict() works); built, it "
                 "copies rank 0's parameters to every process as torch's DDP does. The gradients are averaged "
                 "by the train step (a GradReducer: nn.DistributedGradReducer after value_and_grad), not by the "
                 "wrapper; device_ids, buckets and the other tuning options have no counterpart. As in torch, "
                 "the wrapper's state_dict() keys start with 'module.', the module's do not",
            test=f"{T}::test_collectives_two_workers")
for _src in ("torch.utils.data.DistributedSampler", "torch.utils.data.distributed.DistributedSampler"):
    mapping(_src, C + "DistributedSampler", args=("dataset", "num_replicas", "rank", "shuffle", "seed", "drop_last"),
            target_args=("dataset", "num_replicas", "rank", "shuffle", "seed", "drop_last"),
            note="torch's exact index order per rank and epoch (torch's randperm for seed + epoch, computed with "
                 "NumPy's MT19937), padding and drop_last; set_epoch as in torch",
            test=f"{T}::test_distributed_sampler_matches_torch")
for _src in ("torch.multiprocessing.spawn", "torch.multiprocessing.spawn.spawn"):
    mapping(_src, C + "spawn", args=("fn", "args", "nprocs", "join", "daemon", "start_method"),
            target_args=("fn", "args", "nprocs", "join", "daemon", "start_method"), status=DIFFERENCE,
            note="msrun starts the processes: each calls fn(rank, *args) once with its own rank (launch with "
                 "msrun --worker_num=nprocs, see the *_msrun.sh script); with plain python only rank 0 runs",
            test=f"{T}::test_spawn_calls_fn_with_rank")

# ------------------------------------------------------------------ sharded training: redesign, not translation
_FSDP_NOTE = ("FSDP/ZeRO sharding has no one-to-one MindSpore API: use set_auto_parallel_context("
              "parallel_mode='semi_auto_parallel' or 'auto_parallel', enable_parallel_optimizer=True) (optimizer "
              "parallel shards parameters and optimizer state across data-parallel ranks), GRAPH mode, launched "
              "with msrun; wrap policies and mixed-precision configs do not carry over")
for _name in ("FullyShardedDataParallel", "fully_shard", "ShardingStrategy", "MixedPrecision", "CPUOffload",
              "StateDictType", "BackwardPrefetch"):
    mapping(f"{D}fsdp.{_name}", None, note=_FSDP_NOTE)
mapping(f"{D}fsdp", None, note=_FSDP_NOTE)
mapping(f"{D}_composable.fsdp.fully_shard", None, note=_FSDP_NOTE)
mapping(f"{D}fsdp.wrap.transformer_auto_wrap_policy", None, note=_FSDP_NOTE)
_TP_NOTE = ("tensor parallelism: MindSpore splits operators by shard strategies in semi_auto_parallel mode "
            "(ops.Primitive.shard(((dp, mp), (mp, 1))), mindspore.parallel.shard / Cell.shard with a layout), "
            "or searches them in auto_parallel mode (sharding_propagation); GRAPH mode, launched with msrun. "
            "DTensor/DeviceMesh placements must be rewritten as those strategies")
for _name in ("tensor.parallel.parallelize_module", "tensor.parallel.ColwiseParallel",
              "tensor.parallel.RowwiseParallel", "tensor.parallel.SequenceParallel",
              "tensor.parallel.PrepareModuleInput", "tensor.DTensor", "tensor.distribute_tensor",
              "device_mesh.init_device_mesh", "device_mesh.DeviceMesh",
              "_tensor.DTensor", "_tensor.distribute_tensor"):
    mapping(D + _name, None, note=_TP_NOTE)
# the placements alone are descriptions (built while modules are defined); what applies them above stays a TODO
for _name, _target, _args in (("Shard", "PlacementShard", ("dim",)), ("Replicate", "PlacementReplicate", ()),
                              ("Partial", "PlacementPartial", ("reduce_op",)), ("Placement", "PlacementBase", ())):
    mapping(f"{D}tensor.{_name}", f"_ms_compat.{_target}", args=_args, target_args=_args,
            note="a layout description (repr, ==, is_shard/is_replicate/is_partial as torch's); DTensor, "
                 "distribute_tensor and DeviceMesh, which would apply it, are not converted",
            test="tests/parity/test_build_probes.py::test_dtensor_placements")
mapping(D + "pipelining.pipeline", None,
        note="pipeline parallelism: MindSpore's pipeline_stages (set_auto_parallel_context(pipeline_stages=N), "
             "Cell.pipeline_stage, nn.PipelineCell), GRAPH mode; a redesign, not a translation")
mapping("torch.nn.SyncBatchNorm", "_ms_compat.SyncBatchNorm",
        args=("num_features", "eps", "momentum", "affine", "track_running_stats", "process_group", "device", "dtype"),
        target_args=("num_features", "eps", "momentum", "affine", "track_running_stats", "process_group", "device",
                     "dtype"), status=DIFFERENCE,
        note="one process: BatchNorm over any input rank (N, C, *), what torch's SyncBatchNorm computes there; "
             "several processes: building one raises MigrationError (no synchronised batch statistics here)",
        test=f"{T}::test_sync_batchnorm_layer")
mapping("torch.nn.SyncBatchNorm.convert_sync_batchnorm", "_ms_compat.convert_sync_batchnorm",
        args=("module", "process_group"), target_args=("module", "process_group"), status=DIFFERENCE,
        note="returns the model unchanged in one process (what torch's SyncBatchNorm computes there); with several "
             "processes it raises MigrationError: the batch statistics would not be synchronised",
        test=f"{T}::test_convert_sync_batchnorm")
