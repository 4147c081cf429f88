# Distributed data parallel: torch.distributed on mindspore.communication.
#
# torchrun starts one process per device and sets RANK, LOCAL_RANK and WORLD_SIZE; MindSpore's
# launcher, msrun, starts the workers (plus one scheduler process that runs the same script
# until mindspore.communication.init()) and sets RANK_ID, DEVICE_ID and MS_WORKER_NUM instead:
#
#     msrun --worker_num=2 --local_worker_num=2 --master_port=8118 --log_dir=msrun_log --join=True train.py
#
# (msmigrate writes that command next to the converted program, in <program>_msrun.sh.)
# In data-parallel mode every process holds the whole model; each computes gradients on its own
# batches and the gradients are averaged across processes before the optimizer step, which is
# what torch's DistributedDataParallel does during backward(). A MindSpore train step written with
# value_and_grad does not average by itself: `GradReducer` below does it (nn.DistributedGradReducer).
# A program started with plain `python` (no msrun) runs as a group of one process: rank 0 of 1.
import contextlib
import warnings

from mindspore.ops.primitive import constexpr as _dist_constexpr

# msmigrate convert --parallel-mode writes this line: "data_parallel" (torch DDP's behaviour),
# "auto_parallel" (MindSpore chooses how to split each operator) or "semi_auto_parallel" (the
# shard strategies you add); those two need GRAPH mode on Ascend or GPU.
PARALLEL_MODE = "data_parallel"


def launched_by_msrun():
    """True in a process started by msrun (a worker, or msrun's scheduler process)."""
    return "MS_ROLE" in os.environ


def _torch_launcher_env():
    """Programs written for torchrun read os.environ["LOCAL_RANK"], ["RANK"], ["WORLD_SIZE"],
    ["MASTER_ADDR"], ["MASTER_PORT"]. Under msrun those are filled in from msrun's variables
    (never overwritten when set). msrun's scheduler process has no DEVICE_ID: it reads 0."""
    if not launched_by_msrun():
        return
    env = os.environ
    world = env.get("MS_WORKER_NUM", env.get("RANK_SIZE", "1"))
    for name, value in (("RANK", env.get("RANK_ID", env.get("MS_NODE_ID", "0"))),
                        ("LOCAL_RANK", env.get("DEVICE_ID", "0")),
                        ("WORLD_SIZE", world),
                        ("MASTER_ADDR", env.get("MS_SCHED_HOST", "127.0.0.1")),
                        ("MASTER_PORT", env.get("MS_SCHED_PORT", "8118"))):
        env.setdefault(name, value)


_torch_launcher_env()

# the default process group: torch keeps it in torch.distributed, here it is this dict
_GROUP = {"initialized": False, "rank": 0, "size": 1, "msrun": False}


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """torch.distributed.init_process_group: mindspore.communication.init() and the parallel mode
    (data parallel, gradients averaged). The backend (nccl, gloo) is MindSpore's choice (HCCL on
    Ascend, NCCL on GPU, its own TCP collectives on CPU) and msrun decides the ranks, so backend,
    init_method, world_size and rank are not needed; a world_size that differs from msrun's
    --worker_num raises. Without msrun the program runs as one process (rank 0 of 1)."""
    if _GROUP["initialized"]:
        raise RuntimeError("trying to initialize the default process group twice!")
    if launched_by_msrun():
        from mindspore.communication import init, get_rank as _get_rank, get_group_size
        init()          # msrun's scheduler process stays in here until the workers are done
        size, my_rank = get_group_size(), _get_rank()
        mode = PARALLEL_MODE
        if mode != "data_parallel" and ms.get_context("device_target") == "CPU":
            # MindSpore 2.10 refuses semi_auto/auto parallel on CPU ("Invalid communication backend: CPU
            # for semi_auto_parallel/auto_parallel mode") when it compiles the first step
            warnings.warn(f"{mode} needs Ascend or GPU; this CPU run trains data parallel")
            mode = "data_parallel"
        if mode == "data_parallel":
            ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
        elif mode == "auto_parallel":   # MindSpore propagates the strategies of the operators it knows
            ms.set_auto_parallel_context(parallel_mode=mode, gradients_mean=True,
                                         search_mode="sharding_propagation")
        else:                           # semi_auto_parallel: the shard strategies written in the model
            ms.set_auto_parallel_context(parallel_mode=mode, gradients_mean=True)
        _GROUP.update(msrun=True)
    else:
        size, my_rank = 1, 0
        warnings.warn("init_process_group: not started by msrun, so this program runs as one process "
                      "(rank 0 of 1); start it with msrun (see the *_msrun.sh script msmigrate wrote) to "
                      "train on several")
        for name, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1")):
            os.environ.setdefault(name, value)
    if world_size not in (-1, None) and int(world_size) != size:
        raise MigrationError(f"init_process_group(world_size={world_size}) but msrun started {size} "
                             f"workers: msrun's --worker_num decides the number of processes")
    _GROUP.update(initialized=True, rank=my_rank, size=size)
    if average_gradients_in not in STEP_CHECKS:   # compile_step's safety net (the train section)
        STEP_CHECKS.append(average_gradients_in)


def _group():
    if not _GROUP["initialized"]:
        raise ValueError("Default process group has not been initialized, please make sure to call "
                         "init_process_group.")
    return _GROUP


def is_initialized():
    return _GROUP["initialized"]


def is_available():
    """MindSpore always has its collective communication (torch.distributed.is_available)."""
    return True


def get_rank(group=None):
    """This process's rank (mindspore.communication.get_rank())."""
    return _group()["rank"]


def get_world_size(group=None):
    """The number of processes (mindspore.communication.get_group_size())."""
    return _group()["size"]


def destroy_process_group(group=None):
    """torch.distributed.destroy_process_group: mindspore.communication.release()."""
    if _GROUP["msrun"]:
        from mindspore.communication import release
        release()
    _GROUP.update(initialized=False, rank=0, size=1, msrun=False)


class ReduceOp:
    """torch.distributed.ReduceOp: the reduction an all_reduce applies."""
    SUM = "sum"
    AVG = "avg"
    PRODUCT = "prod"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"
    PREMUL_SUM = "premul_sum"


class _Done:
    """What an async_op=True collective returns: MindSpore's collectives here finish before they
    return, so wait() has nothing left to wait for."""

    def wait(self, timeout=None):
        return True

    def is_completed(self):
        return True


def _finish(async_op):
    return _Done() if async_op else None


def _gather_rows(tensor):
    """All processes' copies of `tensor`, stacked: shape (world_size, *tensor.shape)."""
    flat = tensor.reshape((1, -1))
    return ops.AllGather()(flat).reshape((get_world_size(),) + tuple(tensor.shape))


def _write_into(tensor, value):
    # torch's collectives write into their argument; Tensor.copy_ is truly in place in MindSpore
    # (the arithmetic in-place methods such as add_ are not, on CPU)
    tensor.copy_(value.astype(tensor.dtype).reshape(tensor.shape))


@_dist_constexpr(check=False)
def _reduce_op_converted(op):
    """A constexpr: reached in a compiled construct (DETR's SetCriterion all-reduces num_boxes there), the
    refusal stops compiling as MigrationError (a graph raises only Python's own exception types)."""
    if op not in (ReduceOp.SUM, ReduceOp.AVG, ReduceOp.MIN, ReduceOp.MAX, ReduceOp.PRODUCT):
        raise MigrationError(f"all_reduce with ReduceOp {op!r} is not converted (SUM, AVG, MIN, MAX, PRODUCT are)")


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """torch.distributed.all_reduce: reduces `tensor` across processes and writes the result into
    it, in place, as torch does (every other reference to the tensor sees it too). MindSpore's
    CPU AllReduce only sums: MIN, MAX and PRODUCT gather every process's copy and reduce them here
    (also on GPU/Ascend, so the code is the same everywhere); AVG is the sum over world_size.
    Host code only (not inside a compiled step)."""
    op = getattr(op, "value", op)
    _reduce_op_converted(op)
    if get_world_size() == 1:
        return _finish(async_op)
    if op in (ReduceOp.SUM, ReduceOp.AVG):
        work = tensor if tensor.dtype == ms.float32 else tensor.astype(ms.float32)
        total = ops.AllReduce("sum")(work.reshape((-1,)))
        result = total / get_world_size() if op == ReduceOp.AVG else total
    else:
        rows = _gather_rows(tensor)
        result = {ReduceOp.MIN: ops.amin, ReduceOp.MAX: ops.amax, ReduceOp.PRODUCT: ops.prod}[op](rows, 0)
    _write_into(tensor, result)
    return _finish(async_op)


def broadcast(tensor, src=0, group=None, async_op=False, group_src=None):
    """torch.distributed.broadcast: process `src`'s tensor written into every process's tensor."""
    src = src if group_src is None else group_src
    if get_world_size() > 1:
        _write_into(tensor, ops.Broadcast(src)((tensor,))[0])
    return _finish(async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """torch.distributed.all_gather: tensor_list[i] becomes process i's tensor. The list's items
    are replaced (torch writes into the tensors already there): read them from the list."""
    if len(tensor_list) != get_world_size():
        raise ValueError(f"all_gather: tensor_list has {len(tensor_list)} entries for {get_world_size()} processes")
    rows = _gather_rows(tensor) if get_world_size() > 1 else tensor.reshape((1,) + tuple(tensor.shape))
    for i in range(len(tensor_list)):
        tensor_list[i] = rows[i]
    return _finish(async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """torch.distributed.all_gather_into_tensor: the processes' tensors concatenated along dim 0,
    written into output_tensor."""
    if get_world_size() == 1:
        _write_into(output_tensor, input_tensor)
    else:
        _write_into(output_tensor, ops.AllGather()(input_tensor))
    return _finish(async_op)


def barrier(group=None, async_op=False, device_ids=None):
    """torch.distributed.barrier: returns once every process got here (a one-number all-reduce,
    read back to the host so that this process waits for it)."""
    if get_world_size() > 1:
        ops.AllReduce("sum")(ms.Tensor([1.0], ms.float32)).asnumpy()
    return _finish(async_op)


# ------------------------------------------------------------------ DistributedDataParallel
class DistributedDataParallel(nn.Cell):
    """torch.nn.parallel.DistributedDataParallel: the model itself, kept as `.module` (so
    `model.module.state_dict()` works as in torch). Like torch's DDP it starts every process
    from rank 0's parameters (a broadcast when it is built). Gradients are averaged by the
    train step (GradReducer), not by this wrapper: MindSpore computes gradients functionally.
    device_ids, bucket sizes and the other DDP tuning options have no counterpart and are
    ignored. As in torch, the wrapper's state_dict() keys start with "module." and the module's
    own do not (the Parameters keep the module's names)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, **unused):
        super().__init__(auto_prefix=False)
        self.module = module
        if is_initialized() and get_world_size() > 1:
            for param in module.get_parameters():
                synced = ops.Broadcast(0)((param.value(),))[0]
                param.set_data(synced)

    def construct(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    @contextlib.contextmanager
    def no_sync(self):
        """torch skips the gradient all-reduce inside no_sync() (gradient accumulation). Here the
        gradients of each batch are averaged anyway: the same result, some extra communication."""
        yield


# ------------------------------------------------------------------ gradient averaging
def data_parallel_active():
    """True while gradients must be averaged by the train step: data-parallel mode with more than
    one process. (In auto_parallel mode MindSpore's compiler inserts the averaging itself.)"""
    return (_GROUP["initialized"] and _GROUP["size"] > 1
            and ms.get_auto_parallel_context("parallel_mode") in ("data_parallel", "hybrid_parallel"))


class GradReducer(nn.Cell):
    """Averages gradients across processes (what torch's DDP does during backward()) when the
    program runs data parallel on several processes; returns them unchanged otherwise, so the
    same code runs as one process. Built after init_process_group, called on the gradients right
    after value_and_grad (before clipping, as in torch)."""

    def __init__(self, parameters):
        super().__init__(auto_prefix=False)
        self.active = data_parallel_active()
        if self.active:
            self.reducer = nn.DistributedGradReducer(parameters, mean=True, degree=get_world_size())

    def construct(self, grads):
        if self.active:
            return self.reducer(grads)
        return grads


_REDUCING_CLASSES = {}


def average_gradients_in(step):
    """Safety net for compile_step: a train step that averages no gradients itself (it was in a
    file that does not use torch.distributed, so no GradReducer was written there) while the
    program runs data parallel would let the processes drift apart silently. Its optimizers are
    made to average the gradients they get before they update (with a warning: gradient clipping
    in that step then sees each process's own gradients, torch clips the averaged ones)."""
    if not data_parallel_active():
        return
    referenced = [value for _, value in _closure_cells(step, [], set())]
    if any(isinstance(v, GradReducer) for v in referenced):
        return
    for value in referenced:
        if isinstance(value, (nn.Optimizer, _ms_experimental_optimizer())) and \
                type(value) not in _REDUCING_CLASSES.values():
            value.grad_reducer = nn.DistributedGradReducer(value.parameters, mean=True, degree=get_world_size())
            value.__class__ = _reducing_class(type(value))
            warnings.warn(f"{step.__name__}: the gradients are averaged across processes in the optimizer "
                          f"{type(value).__name__}; put `grads = GradReducer(optimizer.parameters)(grads)` "
                          "right after value_and_grad to average them before clipping, as torch does")


def _ms_experimental_optimizer():
    from mindspore.experimental.optim import Optimizer
    return Optimizer


def _reducing_class(base):
    """`base` whose update first averages the gradients across processes."""
    if base not in _REDUCING_CLASSES:
        def construct(self, gradients):
            return base.construct(self, self.grad_reducer(gradients))
        _REDUCING_CLASSES[base] = type(base.__name__, (base,), {"construct": construct})
    return _REDUCING_CLASSES[base]


# ------------------------------------------------------------------ DistributedSampler
def torch_randperm(n, seed):
    """torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist(), without torch:
    torch's CPU generator is MT19937 seeded like NumPy's legacy RandomState(seed), and randperm
    is a Fisher-Yates shuffle drawing one 32-bit number per position (checked against torch)."""
    draws = np.random.RandomState(int(seed) & 0xFFFFFFFF).randint(0, 2 ** 32, size=max(n - 1, 0),
                                                                   dtype=np.uint64)
    perm = list(range(n))
    for i in range(n - 1):
        j = i + int(draws[i]) % (n - i)
        perm[i], perm[j] = perm[j], perm[i]
    return perm


class DistributedSampler:
    """torch.utils.data.distributed.DistributedSampler with torch's exact index order: each
    process reads every num_replicas-th index of one permutation (torch's, for seed + epoch),
    padded by repetition to a multiple of num_replicas (or cut, with drop_last). Call
    set_epoch(epoch) every epoch for a new shuffle, as in torch."""

    def __class_getitem__(cls, item):
        return cls   # generic, as torch's (Sampler[int] in annotations and base classes)

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None:
            num_replicas = get_world_size()
        if rank is None:
            rank = get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.drop_last, self.shuffle, self.seed = 0, drop_last, shuffle, seed
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        n = len(self.dataset)
        indices = torch_randperm(n, self.seed + self.epoch) if self.shuffle else list(range(n))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        self.epoch = epoch


# ------------------------------------------------------------------ launching
def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """torch.multiprocessing.spawn(fn, args, nprocs): msrun starts the processes, so each one
    calls fn(rank, *args) once with its own rank. Start the program with msrun
    --worker_num=nprocs (the *_msrun.sh script); with plain python it runs rank 0 only."""
    rank = int(os.environ.get("RANK_ID", os.environ.get("RANK", "0"))) if launched_by_msrun() else 0
    if not launched_by_msrun() and nprocs > 1:
        warnings.warn(f"spawn(nprocs={nprocs}) without msrun: only rank 0 runs; start the program with msrun "
                      f"--worker_num={nprocs}")
    fn(rank, *args)


class SyncBatchNorm(nn.BatchNorm2d):
    """nn.SyncBatchNorm: in one process what torch's computes there (plain batch statistics), over inputs of any
    rank (N, C, *), normalised as a (N, C, L, 1) view. With several processes MindSpore on this backend has no
    batch statistics synchronised across them: building one raises rather than train differently."""

    def __init__(self, num_features, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None):
        if _GROUP["initialized"] and _GROUP["size"] > 1:
            raise MigrationError(f"{calling_line()}: nn.SyncBatchNorm with several processes: its batch statistics "
                                 "would be computed per process (torch synchronises them). Use "
                                 "mindspore.nn.SyncBatchNorm (Ascend) or BatchNorm knowingly")
        if momentum is None:
            raise MigrationError(f"{calling_line()}: SyncBatchNorm momentum=None (cumulative average) is not "
                                 "converted")
        super().__init__(num_features, eps=eps, momentum=1 - momentum, affine=affine,
                         use_batch_statistics=None if track_running_stats else True)
        self.torch_affine = bool(affine)   # affine_off reads it

    def construct(self, x):
        shape = x.shape
        return nn.BatchNorm2d.construct(self, x.reshape(shape[0], shape[1], -1, 1)).reshape(shape)


def convert_sync_batchnorm(module, process_group=None):
    """nn.SyncBatchNorm.convert_sync_batchnorm(model): with one process its BatchNorm layers compute what torch's
    SyncBatchNorm computes, so the model is returned unchanged; with several, MindSpore on this backend has no
    batch statistics synchronised across processes, and the call raises rather than train differently."""
    if _GROUP["initialized"] and _group()["size"] > 1:
        raise MigrationError(
            "nn.SyncBatchNorm.convert_sync_batchnorm with several processes: the converted BatchNorm layers would "
            "compute batch statistics per process (torch synchronises them). Use mindspore.nn.SyncBatchNorm "
            "(Ascend) or plain BatchNorm knowingly")
    return module
