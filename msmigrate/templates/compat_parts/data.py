"""Data loading: torch.utils.data, torchvision.transforms and torchvision.datasets.

What this section is, and why it is not a name-for-name MindSpore pipeline
(everything below was measured with MindSpore 2.10 on a 2-core CPU machine):

- `DataLoader` is a small Python loader with torch's semantics (batch_size, shuffle,
  sampler, batch_sampler, drop_last, collate_fn, num_workers, generator, len()).
  It builds each batch with NumPy and hands it over as mindspore Tensors in the same
  structure torch's default_collate gives (lists for tuples, dicts, namedtuples).
  A `mindspore.dataset.GeneratorDataset` fed one sample at a time iterated 10k small
  samples 18-23x slower than torch's DataLoader (more workers made it slower), so rows
  are never fed to MindSpore one by one. `DataLoader.to_dataset()` wraps the loader in a
  GeneratorDataset that yields whole batches, for `mindspore.train.Model`.
- Fast paths: a TensorDataset (or a Subset of one) is batched by NumPy fancy indexing,
  with no per-sample Python code. Other datasets are read sample by sample, as torch
  does; with num_workers > 0 the samples are read and collated in forked worker
  processes (like torch's workers on Linux), and the main process only wraps the NumPy
  batch into Tensors (`Tensor.from_numpy`, which does not copy; `Tensor(array)` copies).
- Default collate follows torch: Python floats become float64, ints int64, bools bool,
  NumPy arrays and mindspore Tensors keep their dtype, strings stay lists. A converted
  program that worked in torch casts where it needs to (`.float()`, `.long()`). Note that
  `mindspore.nn.CrossEntropyLoss` only takes int32 labels (`ops.cross_entropy` and
  `ops.nll_loss` take int64).
- The transforms are written here with torchvision's semantics, using PIL for PIL
  images (as torchvision does) and NumPy for tensors; ToTensor returns a mindspore
  Tensor, as torchvision returns a torch tensor, and the transforms that follow accept
  Tensors or NumPy arrays. `mindspore.dataset.vision` gives the same pixels on PIL
  images (it calls PIL too), but used directly it is not a drop-in replacement:
    * its eager `Compose` returns a tuple `(img,)` when a step runs in Python;
    * on NumPy input its ops read HWC, while torchvision's tensors are CHW (after
      ToTensor an image is CHW, so Resize/flip/crop would silently act on wrong axes);
    * once a seed is set (`mindspore.set_seed`, which is what torch.manual_seed
      becomes), its eager random ops on NumPy input draw the same numbers on every
      call: RandomCrop/RandomHorizontalFlip then crop and flip every image the same way;
    * its Normalize only takes means in [0, 255] and its ToTensor divides float input
      by 255 (torchvision only scales uint8);
    * each eager C++ op costs about 60-70 us per call (NumPy's Normalize: about 6 us).
- The random transforms draw from NumPy's global random stream, which
  `mindspore.set_seed` seeds; each DataLoader worker reseeds it (and `random`) from a
  base seed drawn per epoch, as torch does. The numbers differ from torch's.
- The datasets read the files torchvision downloaded (MNIST idx files, the CIFAR
  "python version" pickles, image folders). MindSpore's own Cifar10Dataset reads the
  binary version of CIFAR, so it cannot read torchvision's files. Nothing is downloaded:
  `download=True` raises a clear error when the files are missing. File checksums are
  not verified (torchvision checks CIFAR's md5).
- Measured against torch's DataLoader in the same process (msmigrate's bench/data_speed.py,
  time per epoch, converted/torch): CIFAR-10-like 5k images with RandomCrop + flip +
  ToTensor + Normalize, batch 128: 0.55-0.94x with num_workers=0, 0.66-1.0x with 2;
  a TensorDataset of 10k small samples: 0.05-0.07x. msmigrate's tests/parity/test_data.py
  compares everything here with torch and torchvision.
"""
import bisect
import collections
import gzip
import itertools
import math
import multiprocessing
import numbers
import os
import queue
import random
import sys
import traceback
import warnings

from PIL import Image, ImageEnhance, ImageOps


# ======================================================================
# random streams
# ======================================================================
def _dl_rng(generator=None):
    """A NumPy random stream for torch's `generator=` argument.

    None: NumPy's global stream (seeded by mindspore.set_seed and np.random.seed).
    A mindspore.Generator (what torch.Generator becomes): a stream seeded from its seed
    and offset, advancing the generator, so the same manual_seed gives the same
    permutations and two calls give two different ones (not torch's numbers)."""
    if generator is None:
        return np.random
    if isinstance(generator, (np.random.Generator, np.random.RandomState)):
        return generator
    try:
        seed, offset = generator._step(ms.Tensor(1, ms.int64))
        return np.random.default_rng([int(seed), int(offset)])
    except (AttributeError, TypeError, RuntimeError):
        return np.random.default_rng(int(generator.initial_seed()))


def _dl_base_seed(generator=None):
    """The seed of an epoch's workers, drawn where torch draws it: from the loader's generator, else from the
    framework's default generator (torch's global one; MindSpore's here), never from NumPy's global stream,
    whose numbers are the program's own (a seeded program's np.random.beta between batches, mixup's, is the
    same sequence in torch whatever its DataLoaders do)."""
    if generator is None:
        from mindspore.common.generator import default_generator as generator
    rng = _dl_rng(generator)
    return int(rng.integers(0, 2 ** 62) if hasattr(rng, "integers") else rng.randint(0, 2 ** 62, dtype=np.int64))


# ======================================================================
# samplers (torch.utils.data.sampler)
# ======================================================================
class Sampler:
    """Base class of samplers: __iter__ yields indices (or lists of indices)."""

    def __class_getitem__(cls, item):
        return cls   # generic, as torch's (Sampler[int] in annotations and base classes)

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        # abstract, as in torch: each sampler (and a user's subclass) defines it
        raise NotImplementedError(f"{type(self).__name__} does not define __iter__()")


class SequentialSampler(Sampler):
    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self):
        # the dataset may change size between epochs
        return len(self.data_source) if self._num_samples is None else self._num_samples

    _CHUNK = 1 << 16   # indices drawn at a time: num_samples=10**10 is an endless sampler, not an array

    def __iter__(self):
        n, rng, left = len(self.data_source), _dl_rng(self.generator), self.num_samples
        while left > 0:
            if self.replacement:
                part = rng.choice(n, size=min(left, self._CHUNK), replace=True)
            else:
                part = rng.permutation(n)[:left]   # one epoch's permutation (the last one cut short)
            left -= len(part)
            yield from part.tolist()

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in _dl_rng(self.generator).permutation(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """Draws indices with probability proportional to `weights` (torch.multinomial)."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        weights = np.asarray(weights.asnumpy() if isinstance(weights, ms.Tensor) else weights, dtype=np.float64)
        if weights.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {weights.shape}")
        if (weights < 0).any() or not np.isfinite(weights).all() or weights.sum() <= 0:
            raise RuntimeError("invalid multinomial distribution (weights must be >= 0, finite, not all zero)")
        if not replacement and num_samples > int((weights > 0).sum()):
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
        self.weights = weights
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        rng = _dl_rng(self.generator)
        picks = rng.choice(len(self.weights), size=self.num_samples, replace=self.replacement,
                           p=self.weights / self.weights.sum())
        return iter(picks.tolist())

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of `sampler` into lists of `batch_size`."""

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        it = iter(self.sampler)
        while True:
            batch = list(itertools.islice(it, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


# ======================================================================
# datasets (torch.utils.data.dataset)
# ======================================================================
def _dl_numpy(x):
    """A mindspore Tensor, a NumPy array or a nested list as a NumPy array (no copy where possible)."""
    return x.asnumpy() if isinstance(x, ms.Tensor) else np.asarray(x)


def _dl_tensor(arr):
    """A NumPy array (or scalar) as a mindspore Tensor sharing its memory, as torch.as_tensor
    shares it (Tensor(array) would copy)."""
    arr = np.asarray(arr)
    if not arr.flags.c_contiguous:
        arr = arr.copy()
    return ms.Tensor.from_numpy(arr)


class TensorDataset:
    """Samples are rows of the given tensors. The data is kept as NumPy arrays, so the
    DataLoader batches it by fancy indexing; indexing one sample gives Tensors."""

    def __init__(self, *tensors):
        arrays = [_dl_numpy(t) for t in tensors]
        if any(len(a) != len(arrays[0]) for a in arrays):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors
        self._arrays = arrays

    def __getitem__(self, index):
        return tuple(_dl_tensor(a[index]) for a in self._arrays)

    def __len__(self):
        return len(self._arrays[0])


class Subset:
    """The samples of `dataset` at `indices`."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)


class ConcatDataset:
    """The samples of several datasets, one after the other."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        d = bisect.bisect_right(self.cumulative_sizes, idx)
        return self.datasets[d][idx - (self.cumulative_sizes[d - 1] if d > 0 else 0)]


def random_split(dataset, lengths, generator=None):
    """Split `dataset` into non-overlapping Subsets of the given lengths (or fractions
    that sum to 1, with the remainder spread round-robin as torch does)."""
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            counts.append(int(math.floor(len(dataset) * frac)))
        for i in range(len(dataset) - sum(counts)):
            counts[i % len(counts)] += 1
        for i, n in enumerate(counts):
            if n == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.")
        lengths = counts
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = _dl_rng(generator).permutation(sum(lengths)).tolist()
    return [Subset(dataset, indices[end - n:end]) for end, n in zip(itertools.accumulate(lengths), lengths)]


def _dl_batch_reader(dataset):
    """For datasets whose samples are rows of arrays (TensorDataset, a Subset of one):
    a function list-of-indices -> list of NumPy batches, one per field. None otherwise
    (also when a subclass overrides __getitem__)."""
    if type(dataset).__getitem__ is TensorDataset.__getitem__:
        arrays = dataset._arrays
        return lambda idx: [a[idx] for a in arrays]
    if type(dataset).__getitem__ is Subset.__getitem__ and type(dataset).__getitems__ is Subset.__getitems__:
        inner = _dl_batch_reader(dataset.dataset)
        if inner is not None:
            where = np.asarray(dataset.indices, dtype=np.int64)
            return lambda idx: inner(where[idx])
    return None


# ======================================================================
# collate (torch.utils.data._utils.collate)
# ======================================================================
_DL_COLLATE_ERROR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                     "found {}")


def _dl_collate_np(batch):
    """torch's default_collate, building NumPy arrays: the structure of one sample,
    with a batch dimension added to every tensor, array and number."""
    elem = batch[0]
    if isinstance(elem, ms.Tensor):
        return np.stack([b.asnumpy() for b in batch])
    if isinstance(elem, (np.ndarray, np.generic)):
        if elem.dtype.kind in "SaUO":
            raise TypeError(_DL_COLLATE_ERROR.format(elem.dtype))
        return np.stack(batch) if isinstance(elem, np.ndarray) else np.array(batch)
    if isinstance(elem, float):
        return np.array(batch, dtype=np.float64)
    if isinstance(elem, int):            # bool is an int: [True, False] stays bool, as in torch
        return np.array(batch)
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, collections.abc.Mapping):
        out = {key: _dl_collate_np([d[key] for d in batch]) for key in elem}
        try:
            return type(elem)(out)
        except TypeError:
            return out
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):      # namedtuple
        return type(elem)(*(_dl_collate_np(list(s)) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(s) != len(elem) for s in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [_dl_collate_np(list(s)) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return columns                                         # torch gives a list here too
        try:
            return type(elem)(columns)
        except TypeError:
            return columns
    raise TypeError(_DL_COLLATE_ERROR.format(type(elem)))


def _dl_to_ms(data):
    """NumPy arrays (and NumPy scalars) in a nested structure -> mindspore Tensors sharing
    their memory; tuples become lists as in torch's default_convert."""
    if isinstance(data, (np.ndarray, np.generic)):
        if data.dtype.kind in "SaUO":
            return data
        return _dl_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        out = {key: _dl_to_ms(value) for key, value in data.items()}
        try:
            return type(data)(out)
        except TypeError:
            return out
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(_dl_to_ms(d) for d in data))
    if isinstance(data, (list, tuple)):
        return [_dl_to_ms(d) for d in data]
    return data


def default_collate(batch):
    """torch's default_collate: a list of samples -> one batch of mindspore Tensors."""
    return _dl_to_ms(_dl_collate_np(batch))


def default_convert(data):
    """torch's default_convert (batch_size=None): NumPy arrays -> mindspore Tensors."""
    return _dl_to_ms(data)


# ======================================================================
# DataLoader
# ======================================================================
class WorkerInfo:
    def __init__(self, id, num_workers, seed, dataset):
        self.id, self.num_workers, self.seed, self.dataset = id, num_workers, seed, dataset

    def __repr__(self):
        return f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed})"


_dl_worker_info = None


def get_worker_info():
    """Inside a DataLoader worker process: its WorkerInfo (id, num_workers, seed,
    dataset); in the main process: None."""
    return _dl_worker_info


def _dl_worker_loop(read, index_queue, result_queue, stop, worker_id, num_workers, seed, state, init_fn, dataset):
    """Runs in a forked worker: read batches of indices, send back (batch number, batch); state: its random
    states to start from; init_fn: None where it ran already (worker 0, in the main process)."""
    global _dl_worker_info
    _dl_worker_info = WorkerInfo(worker_id, num_workers, seed, dataset)
    _dl_set_random_state(state)
    result_queue.cancel_join_thread()     # exit at once when stopped, even with unread results
    try:
        if init_fn is not None:
            init_fn(worker_id)
        while True:
            job = index_queue.get()
            if job is None or stop.is_set():
                break
            number, indices = job
            try:
                result_queue.put((number, read(indices)))
            except Exception as exc:  # sent to the main process, raised there
                result_queue.put((number, _DLWorkerError(worker_id, exc)))
    except KeyboardInterrupt:
        pass


def _dl_random_state():
    return random.getstate(), np.random.get_state()


def _dl_set_random_state(state):
    random.setstate(state[0])
    np.random.set_state(state[1])


def _dl_seeded_state(seed):
    """A worker's Python and NumPy random states (this process's given back)."""
    outer = _dl_random_state()
    random.seed(seed)
    np.random.seed(seed % 2 ** 32)
    state = _dl_random_state()
    _dl_set_random_state(outer)
    return state


def _dl_calls_mindspore(call):
    """(call(), whether it called into MindSpore: a function of its package, or a builtin method of one of its
    objects). MindSpore's runtime does not survive a fork: an op run in a forked worker waits forever."""
    used = False

    def probe(frame, event, arg):
        nonlocal used
        if used or event not in ("call", "c_call"):
            return
        if event == "call":
            module = frame.f_globals.get("__name__") or ""
        else:
            owner = getattr(arg, "__self__", None)
            module = getattr(arg, "__module__", None) or type(owner).__module__ or ""
        used = module == "mindspore" or module.startswith(("mindspore.", "_c_expression"))

    before = sys.getprofile()
    sys.setprofile(probe)
    try:
        result = call()
    finally:
        sys.setprofile(before)
    return result, used


class _DLWorkerError:
    def __init__(self, worker_id, exc):
        self.worker_id = worker_id
        self.exc_type = type(exc)
        self.text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} in DataLoader worker process {self.worker_id}.\nOriginal {self.text}"
        try:
            exc = self.exc_type(msg)
        except Exception:
            exc = RuntimeError(msg)
        raise exc


class DataLoader:
    """torch.utils.data.DataLoader yielding mindspore Tensors (see the notes at the top
    of this section). pin_memory, timeout, persistent_workers and the other
    device/process options are accepted; workers are forked processes (Linux), started
    for each epoch, unless reading calls MindSpore (_worker_batches); where fork is
    unavailable the samples are read in this process."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor if prefetch_factor is not None else (2 if num_workers > 0 else None)
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.generator = generator
        self.pin_memory = pin_memory
        self.persistent_workers = persistent_workers
        # map-style datasets index samples; anything else with __iter__ is iterable-style
        self._iterable = not hasattr(dataset, "__getitem__") and hasattr(dataset, "__iter__")
        if self._iterable:
            if shuffle not in (None, False):
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle option, "
                                 f"but got shuffle={shuffle}")
            if sampler is not None or batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler/batch_sampler option")
        else:
            if sampler is not None and shuffle:
                raise ValueError("sampler option is mutually exclusive with shuffle")
            if batch_sampler is not None:
                if batch_size != 1 or shuffle or sampler is not None or drop_last:
                    raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                     "and drop_last")
                batch_size, drop_last = None, False
            elif batch_size is None and drop_last:
                raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive "
                                 "with drop_last")
            if sampler is None:
                sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
            if batch_size is not None and batch_sampler is None:
                batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        batched = batch_size is not None or batch_sampler is not None
        self.collate_fn = collate_fn if collate_fn is not None else (default_collate if batched else default_convert)

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)

    # ------------------------------------------------------------ reading batches
    def _default_collate(self):
        return self.collate_fn is default_collate or self.collate_fn is default_convert

    def _read(self, indices):
        """One batch from a list of indices (or one sample from an index without batching).
        With torch's default collate the result holds NumPy arrays (made Tensors later)."""
        if self.batch_sampler is None:
            sample = self.dataset[indices]
            return sample if self._default_collate() else self.collate_fn(sample)
        if callable(getattr(self.dataset, "__getitems__", None)):
            samples = self.dataset.__getitems__(indices)
        else:
            samples = [self.dataset[i] for i in indices]
        return _dl_collate_np(samples) if self.collate_fn is default_collate else self.collate_fn(samples)

    def _raw_batches(self):
        """Batches before the NumPy -> Tensor step of the default collate."""
        if self._iterable:
            yield from self._iterable_batches()
            return
        jobs = self.batch_sampler if self.batch_sampler is not None else self.sampler
        reader = _dl_batch_reader(self.dataset) if self.collate_fn is default_collate else None
        if reader is not None:
            # rows of arrays: one fancy-indexing per field, no per-sample Python code
            for indices in jobs:
                yield reader(np.asarray(indices, dtype=np.int64))
        elif self.num_workers > 0 and "fork" in multiprocessing.get_all_start_methods():
            yield from self._worker_batches(jobs)
        else:
            for indices in jobs:
                yield self._read(indices)

    def _iterable_batches(self):
        # iterable-style datasets are read in this process (torch would give each worker a
        # copy of the dataset; get_worker_info() is None here, so the dataset yields everything)
        it = iter(self.dataset)
        if self.batch_size is None:
            for sample in it:
                yield sample if self._default_collate() else self.collate_fn(sample)
            return
        while True:
            samples = list(itertools.islice(it, self.batch_size))
            if not samples or (self.drop_last and len(samples) < self.batch_size):
                return
            yield _dl_collate_np(samples) if self.collate_fn is default_collate else self.collate_fn(samples)

    def _worker_batches(self, jobs):
        """Batch k read by worker k % num_workers, with its own random states (seeded base_seed + w) after its
        worker_init_fn. Worker 0's first batch is read here: where that calls MindSpore (ops in a converted
        __getitem__ or collate_fn), so is every batch, as its worker would (an op in a forked process waits
        forever); otherwise the workers are forked processes, worker 0 going on from its state here."""
        n = self.num_workers
        base_seed = _dl_base_seed(self.generator)     # one base seed per epoch, as torch draws it
        states = [_dl_seeded_state(base_seed + w) for w in range(n)]
        started = set()
        jobs = iter(enumerate(jobs))
        first = next(jobs, None)
        if first is None:
            return
        batch, used = _dl_calls_mindspore(lambda: self._as_worker(0, base_seed, states, started, first[1]))
        yield batch
        if used:
            for number, indices in jobs:
                yield self._as_worker(number % n, base_seed, states, started, indices)
            return
        yield from self._forked_batches(jobs, base_seed, states)

    def _as_worker(self, w, base_seed, states, started, indices):
        """One batch read here as worker w reads it (its random states, WorkerInfo, worker_init_fn first)."""
        global _dl_worker_info
        outer, info = _dl_random_state(), _dl_worker_info
        _dl_set_random_state(states[w])
        _dl_worker_info = WorkerInfo(w, self.num_workers, base_seed + w, self.dataset)
        try:
            if w not in started:
                started.add(w)
                if self.worker_init_fn is not None:
                    self.worker_init_fn(w)
            batch = self._read(indices)
            states[w] = _dl_random_state()
        finally:
            _dl_set_random_state(outer)
            _dl_worker_info = info
        return batch

    def _forked_batches(self, jobs, base_seed, states):
        ctx = multiprocessing.get_context("fork")
        n = self.num_workers
        index_queues = [ctx.SimpleQueue() for _ in range(n)]
        results, stop = ctx.Queue(), ctx.Event()
        workers = [ctx.Process(target=_dl_worker_loop, daemon=True,
                               args=(self._read, index_queues[w], results, stop, w, n, base_seed + w, states[w],
                                     self.worker_init_fn if w else None, self.dataset))
                   for w in range(n)]
        for w in workers:
            w.start()
        try:
            sent = 0
            for number, indices in itertools.islice(jobs, self.prefetch_factor * n):
                index_queues[number % n].put((number, indices))
                sent += 1
            done, waiting = 1, {}
            while done < sent + 1:
                while done not in waiting:
                    number, batch = self._next_result(results, workers)
                    waiting[number] = batch
                batch = waiting.pop(done)
                done += 1
                for number, indices in itertools.islice(jobs, 1):   # keep the workers busy
                    index_queues[number % n].put((number, indices))
                    sent += 1
                if isinstance(batch, _DLWorkerError):
                    batch.reraise()
                yield batch
        finally:
            stop.set()            # an early break: workers skip the batches still queued
            for q in index_queues:
                q.put(None)
            for w in workers:
                w.join(timeout=5)
                if w.is_alive():
                    w.terminate()
            results.cancel_join_thread()
            results.close()

    def _next_result(self, results, workers):
        while True:
            try:
                return results.get(timeout=self.timeout if self.timeout > 0 else 5.0)
            except queue.Empty:
                if self.timeout > 0:
                    raise RuntimeError(f"DataLoader timed out after {self.timeout} seconds")
                dead = [str(w.pid) for w in workers if not w.is_alive()]
                if dead:
                    raise RuntimeError(f"DataLoader worker (pid(s) {', '.join(dead)}) exited unexpectedly")

    def __iter__(self):
        if not self._default_collate():
            return self._raw_batches()
        return (_dl_to_ms(batch) for batch in self._raw_batches())

    # ------------------------------------------------------------ mindspore.dataset
    def to_dataset(self, column_names=None):
        """This loader as a mindspore.dataset.GeneratorDataset whose rows are whole
        batches (a new epoch reshuffles), e.g. for mindspore.train.Model.train(...,
        dataset_sink_mode=False). Batches must be a tuple/list or dict of tensors."""
        import mindspore.dataset as ds

        if column_names is None:
            first = next(iter(_DLBatchSource(self, None)))
            column_names = list(first.keys()) if isinstance(first, dict) else \
                [f"column_{i}" for i in range(len(first))]
        return ds.GeneratorDataset(_DLBatchSource(self, column_names), column_names=list(column_names),
                                   shuffle=False)


class _DLBatchSource:
    """Feeds a DataLoader's batches to GeneratorDataset as rows of NumPy arrays."""

    def __init__(self, loader, column_names):
        self.loader, self.column_names = loader, column_names

    def __len__(self):
        return len(self.loader)

    def __iter__(self):
        for batch in self.loader._raw_batches():
            if isinstance(batch, collections.abc.Mapping):
                if self.column_names is None:
                    yield batch
                    continue
                batch = [batch[k] for k in self.column_names]
            elif not isinstance(batch, (list, tuple)):
                batch = [batch]
            yield tuple(b.asnumpy() if isinstance(b, ms.Tensor) else np.asarray(b) for b in batch)


# ======================================================================
# torchvision.transforms
# ======================================================================
def _tv_same_channels(arr, stat):
    """torchvision subtracts and divides in place: a mean or std that broadcasts the image to another shape
    (three entries on a one-channel image) is torch's error, not a wider image."""
    channels, entries = arr.shape[-3], stat.shape[0]
    if channels == 1 and entries != 1:
        wide = list(arr.shape)
        wide[-3] = entries
        raise RuntimeError(f"output with shape {list(arr.shape)} doesn't match the broadcast shape {wide}")
    if entries not in (1, channels):
        raise RuntimeError(f"The size of tensor a ({channels}) must match the size of tensor b ({entries}) at "
                           f"non-singleton dimension {arr.ndim - 3}")


def _tv_unwrap(img):
    """(PIL image or NumPy array, whether it came as a mindspore Tensor)."""
    if isinstance(img, ms.Tensor):
        return img.asnumpy(), True
    return img, False


def _tv_wrap(arr, as_tensor):
    return _dl_tensor(arr) if as_tensor else arr


def _tv_is_pil(img):
    return isinstance(img, Image.Image)


def _tv_hw(img):
    """(height, width) of a PIL image or a [..., H, W] tensor/array."""
    if _tv_is_pil(img):
        return img.height, img.width
    return tuple(img.shape[-2:])


def _tv_channels(img):
    if _tv_is_pil(img):
        return len(img.getbands())
    return 1 if img.ndim == 2 else img.shape[-3]


def _tv_pair(size, name="size"):
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    size = tuple(size)
    if len(size) == 1:
        return size[0], size[0]
    if len(size) != 2:
        raise ValueError(f"Please provide only two dimensions (h, w) for {name}.")
    return size


def _tv_max_value(dtype):
    dtype = np.dtype(dtype)
    return np.iinfo(dtype).max if dtype.kind in "iu" else 1


def _tv_ltrb(padding):
    """torchvision's padding (int, (lr, tb) or (l, t, r, b)) as (left, top, right, bottom)."""
    if isinstance(padding, numbers.Number):
        return (int(padding),) * 4
    padding = tuple(padding)
    if len(padding) == 1:
        return (padding[0],) * 4
    if len(padding) == 2:
        return padding[0], padding[1], padding[0], padding[1]
    if len(padding) == 4:
        return padding
    raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a {len(padding)} element tuple")


def _tv_pad(img, padding, fill=0, padding_mode="constant"):
    if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    left, top, right, bottom = _tv_ltrb(padding)
    if min(left, top, right, bottom) < 0:
        raise MigrationError("negative padding (cropping) is not converted")
    if _tv_is_pil(img):
        if padding_mode == "constant":
            # torchvision's PIL path: ImageOps.expand with the fill per channel
            bands = len(img.getbands())
            if fill is None:
                fill = 0
            if isinstance(fill, (list, tuple)):
                fill = tuple(fill) * bands if len(fill) == 1 else tuple(fill)
            elif bands > 1:
                fill = (fill,) * bands
            if img.mode != "F":
                fill = tuple(int(f) for f in fill) if isinstance(fill, tuple) else int(fill)
            out = ImageOps.expand(img, border=(left, top, right, bottom), fill=fill)
            if img.mode == "P":
                out.putpalette(img.getpalette())
            return out
        arr = np.asarray(img)
        widths = ((top, bottom), (left, right)) + (((0, 0),) if arr.ndim == 3 else ())
        out = Image.fromarray(np.pad(arr, widths, mode=padding_mode))
        if img.mode == "P":
            out.putpalette(img.getpalette())
        return out
    arr, as_tensor = _tv_unwrap(img)
    widths = [(0, 0)] * (arr.ndim - 2) + [(top, bottom), (left, right)]
    if padding_mode == "constant":
        out = np.pad(arr, widths, mode="constant", constant_values=0 if fill is None else fill)
    else:
        out = np.pad(arr, widths, mode=padding_mode)
    return _tv_wrap(out, as_tensor)


def _tv_crop(img, top, left, height, width):
    if _tv_is_pil(img):
        return img.crop((left, top, left + width, top + height))
    arr, as_tensor = _tv_unwrap(img)
    h, w = arr.shape[-2:]
    if top < 0 or left < 0 or top + height > h or left + width > w:
        # outside the image: torchvision pads with zeros
        pad = (max(-left, 0), max(-top, 0), max(left + width - w, 0), max(top + height - h, 0))
        arr = _tv_pad(arr, pad)
        top, left = top + pad[1], left + pad[0]
    return _tv_wrap(arr[..., top:top + height, left:left + width], as_tensor)


def _tv_flip(img, axis):
    if _tv_is_pil(img):
        return img.transpose(Image.FLIP_LEFT_RIGHT if axis == -1 else Image.FLIP_TOP_BOTTOM)
    arr, as_tensor = _tv_unwrap(img)
    return _tv_wrap(np.flip(arr, axis).copy(), as_tensor)


_TV_PIL_MODES = {"nearest": Image.NEAREST, "nearest-exact": Image.NEAREST, "bilinear": Image.BILINEAR,
                 "bicubic": Image.BICUBIC, "box": Image.BOX, "hamming": Image.HAMMING, "lanczos": Image.LANCZOS}
_TV_PIL_INT_MODES = {0: "nearest", 2: "bilinear", 3: "bicubic", 4: "box", 5: "hamming", 1: "lanczos"}


def _tv_mode(interpolation):
    """An InterpolationMode (or a PIL constant, as torchvision accepts) as its name."""
    if isinstance(interpolation, int) and not isinstance(interpolation, bool):
        return _TV_PIL_INT_MODES[interpolation]
    return getattr(interpolation, "value", interpolation)


def _tv_resized_size(h, w, size, max_size=None):
    """torchvision's _compute_resized_output_size: an int (or 1-list) sets the smaller edge."""
    if isinstance(size, numbers.Number):
        size = [size]
    size = list(size)
    if len(size) == 2:
        if max_size is not None:
            raise ValueError("max_size should only be passed if size specifies the length of the smaller edge")
        return size[0], size[1]
    short, long = (w, h) if w <= h else (h, w)
    new_short, new_long = size[0], int(size[0] * long / short)
    if max_size is not None:
        if max_size <= size[0]:
            raise ValueError(f"max_size = {max_size} must be strictly greater than the requested "
                             f"size for the smaller edge size = {size}")
        if new_long > max_size:
            new_short, new_long = int(max_size * new_short / new_long), max_size
    return (new_long, new_short) if w <= h else (new_short, new_long)


def _tv_resize(img, out_hw, interpolation="bilinear"):
    """Resize to (height, width). PIL images: PIL's resize, as torchvision does. Tensors:
    PIL's antialiased float resize per channel, which torchvision's antialias=True tensor
    resize reproduces (within 3e-6); nearest uses torch's floor(dst * scale) rule."""
    mode = _tv_mode(interpolation)
    out_h, out_w = int(out_hw[0]), int(out_hw[1])
    if tuple(_tv_hw(img)) == (out_h, out_w):
        return img
    if _tv_is_pil(img):
        return img.resize((out_w, out_h), _TV_PIL_MODES[mode])
    arr, as_tensor = _tv_unwrap(img)
    h, w = arr.shape[-2:]
    if mode in ("nearest", "nearest-exact"):
        shift = 0.5 if mode == "nearest-exact" else 0.0
        rows = np.minimum(np.floor((np.arange(out_h) + shift) * (h / out_h)).astype(np.int64), h - 1)
        cols = np.minimum(np.floor((np.arange(out_w) + shift) * (w / out_w)).astype(np.int64), w - 1)
        return _tv_wrap(arr[..., rows[:, None], cols], as_tensor)
    # in float32 (PIL mode 'F'), then clamped and rounded back for integer images: this is
    # what torchvision's tensor resize does (for uint8 it agrees to within 1 on a few pixels;
    # PIL's own 8-bit resize differs by 1 on many)
    flat = arr.reshape((-1, h, w)).astype(np.float32)
    out = np.stack([np.asarray(Image.fromarray(ch).resize((out_w, out_h), _TV_PIL_MODES[mode])) for ch in flat])
    out = out.reshape(arr.shape[:-2] + (out_h, out_w))
    if arr.dtype.kind != "f":
        info = np.iinfo(arr.dtype)
        out = np.round(np.clip(out, info.min, info.max))
    return _tv_wrap(out.astype(arr.dtype), as_tensor)


def _tv_gray(arr, num_output_channels=1):
    """torchvision's rgb_to_grayscale on a [..., 3, H, W] array (ITU-R 601-2 weights)."""
    if arr.shape[-3] == 3:
        r, g, b = arr[..., 0, :, :], arr[..., 1, :, :], arr[..., 2, :, :]
        gray = (0.2989 * r.astype(np.float32) + 0.587 * g + 0.114 * b).astype(arr.dtype)[..., None, :, :]
    else:
        gray = arr.copy()
    if num_output_channels == 3:
        gray = np.broadcast_to(gray, gray.shape[:-3] + (3,) + gray.shape[-2:]).copy()
    return gray


def _tv_blend(img1, img2, ratio):
    bound = _tv_max_value(img1.dtype)
    out = np.clip(ratio * img1.astype(np.float32) + (1.0 - ratio) * img2, 0, bound)
    return out.astype(img1.dtype)


def _tv_rgb2hsv(img):
    r, g, b = img[..., 0, :, :], img[..., 1, :, :], img[..., 2, :, :]
    maxc, minc = img.max(axis=-3), img.min(axis=-3)
    eqc = maxc == minc
    cr = maxc - minc
    s = cr / np.where(eqc, 1.0, maxc)
    cr_div = np.where(eqc, 1.0, cr)
    rc, gc, bc = (maxc - r) / cr_div, (maxc - g) / cr_div, (maxc - b) / cr_div
    hr = (maxc == r) * (bc - gc)
    hg = ((maxc == g) & (maxc != r)) * (2.0 + rc - bc)
    hb = ((maxc != g) & (maxc != r)) * (4.0 + gc - rc)
    h = np.fmod((hr + hg + hb) / 6.0 + 1.0, 1.0)
    return np.stack((h, s, maxc), axis=-3).astype(np.float32)


def _tv_hsv2rgb(img):
    h, s, v = img[..., 0, :, :], img[..., 1, :, :], img[..., 2, :, :]
    i = np.floor(h * 6.0)
    f = h * 6.0 - i
    i = i.astype(np.int32) % 6
    p = np.clip(v * (1.0 - s), 0.0, 1.0)
    q = np.clip(v * (1.0 - s * f), 0.0, 1.0)
    t = np.clip(v * (1.0 - s * (1.0 - f)), 0.0, 1.0)
    choices = [(v, t, p), (q, v, p), (p, v, t), (p, q, v), (t, p, v), (v, p, q)]
    out = [np.select([i == k for k in range(6)], [c[ch] for c in choices]) for ch in range(3)]
    return np.stack(out, axis=-3).astype(np.float32)


def _tv_convert_dtype(arr, dtype, v2=False):
    """torchvision's convert_image_dtype on a NumPy array (v2: transforms.v2's to_dtype,
    which multiplies by 1/max instead of dividing by max: one ulp apart)."""
    dtype = np.dtype(dtype)
    if arr.dtype == dtype:
        return arr
    if arr.dtype.kind == "f":
        if dtype.kind == "f":
            return arr.astype(dtype)
        if (arr.dtype == np.float32 and dtype in (np.int32, np.int64)) or \
                (arr.dtype == np.float64 and dtype == np.int64):
            raise RuntimeError(f"The cast from {arr.dtype} to {dtype} cannot be performed safely.")
        # max + 1 - eps spreads the floats of [0, 1] evenly over the integers
        return (arr * np.asarray(float(_tv_max_value(dtype)) + 1.0 - 1e-3, arr.dtype)).astype(dtype)
    in_max = _tv_max_value(arr.dtype)
    if dtype.kind == "f":
        if v2:
            return arr.astype(dtype) * np.asarray(1.0 / in_max, dtype)
        return arr.astype(dtype) / np.asarray(in_max, dtype)
    out_max = _tv_max_value(dtype)
    if in_max > out_max:
        return (arr // ((in_max + 1) // (out_max + 1))).astype(dtype)
    return arr.astype(dtype) * ((out_max + 1) // (in_max + 1))


def _tv_np_dtype(dtype):
    """A mindspore dtype (what torch.float32 becomes) or a NumPy dtype -> NumPy dtype."""
    if isinstance(dtype, (np.dtype, str)) or (isinstance(dtype, type) and issubclass(dtype, np.generic)):
        return np.dtype(dtype)
    return np.dtype(str(dtype).lower())      # mindspore.float32 prints as Float32


class transforms:
    """torchvision.transforms (and transforms.v2 for single images) with torchvision's
    results: PIL images go through PIL as in torchvision; tensors are mindspore Tensors
    (or NumPy arrays) laid out [..., C, H, W] like torch's. Random choices come from
    NumPy's global random stream."""

    class InterpolationMode:
        NEAREST = "nearest"
        NEAREST_EXACT = "nearest-exact"
        BILINEAR = "bilinear"
        BICUBIC = "bicubic"
        BOX = "box"
        HAMMING = "hamming"
        LANCZOS = "lanczos"

    class Compose:
        def __init__(self, transforms):
            self.transforms = list(transforms)

        def __call__(self, img):
            for t in self.transforms:
                img = t(img)
            return img

        def __repr__(self):
            lines = "".join(f"\n    {t}" for t in self.transforms)
            return f"Compose({lines}\n)"

    class Lambda:
        def __init__(self, lambd, *types):
            if not callable(lambd):
                raise TypeError(f"Argument lambd should be callable, got {repr(type(lambd).__name__)}")
            self.lambd = lambd

        def __call__(self, img):
            return self.lambd(img)

    class RandomApply(nn.Cell):
        """Apply the list of transforms with probability p."""

        def __init__(self, transforms, p=0.5):
            super().__init__()
            self.transforms = list(transforms)
            self.p = p

        def __call__(self, img):
            if self.p < np.random.random():
                return img
            for t in self.transforms:
                img = t(img)
            return img

    class ToTensor:
        """PIL image or HWC ndarray -> CHW float32 Tensor in [0, 1] (uint8 input is divided
        by 255; other dtypes keep their values, as in torchvision)."""

        def __call__(self, pic):
            if _tv_is_pil(pic):
                dtype = {"I": np.int32, "I;16": np.int16, "F": np.float32}.get(pic.mode, np.uint8)
                arr = np.array(pic, dtype)
                if pic.mode == "1":
                    arr = 255 * arr
                arr = arr.reshape(pic.height, pic.width, len(pic.getbands()))
            else:
                arr, _ = _tv_unwrap(pic)
                if arr.ndim not in (2, 3):
                    raise ValueError(f"pic should be 2/3 dimensional. Got {arr.ndim} dimensions.")
                if arr.ndim == 2:
                    arr = arr[:, :, None]
            if arr.dtype == np.uint8:
                return _dl_tensor(arr.transpose(2, 0, 1).astype(np.float32, order="C") / np.float32(255))
            return _dl_tensor(arr.transpose(2, 0, 1))

        def __repr__(self):
            return "ToTensor()"

    class PILToTensor:
        """PIL image -> CHW Tensor of the same dtype (no scaling)."""

        def __call__(self, pic):
            if not _tv_is_pil(pic):
                raise TypeError(f"pic should be PIL Image. Got {type(pic)}")
            arr = np.array(pic).reshape(pic.height, pic.width, len(pic.getbands()))
            return _dl_tensor(arr.transpose(2, 0, 1))

    class ToImage:
        """transforms.v2.ToImage: PIL image or HWC ndarray -> CHW Tensor, same dtype."""

        def __call__(self, pic):
            if _tv_is_pil(pic):
                return transforms.PILToTensor()(pic)
            if isinstance(pic, ms.Tensor):
                return pic
            arr = np.asarray(pic)
            arr = arr[:, :, None] if arr.ndim == 2 else arr
            return _dl_tensor(arr.transpose(2, 0, 1))

    class ToPILImage:
        """CHW Tensor (or HWC ndarray, as torchvision reads NumPy input) -> PIL image;
        float data is scaled by 255 and truncated, as in torchvision."""

        def __init__(self, mode=None):
            self.mode = mode

        def __call__(self, pic):
            arr, was_tensor = _tv_unwrap(pic)
            if arr.ndim == 2:
                arr = arr[None] if was_tensor else arr[:, :, None]
            if was_tensor:
                arr = arr.transpose(1, 2, 0)
            if arr.dtype.kind == "f" and self.mode != "F":
                arr = (arr * 255).astype(np.uint8)
            if arr.shape[2] == 1:
                arr = arr[:, :, 0]
            return Image.fromarray(arr, mode=self.mode) if self.mode else Image.fromarray(arr)

    class ConvertImageDtype(nn.Cell):
        """Tensor -> dtype, rescaling values (uint8 255 <-> float 1.0) like torchvision."""

        def __init__(self, dtype):
            super().__init__()
            self.dtype = dtype

        def __call__(self, image):
            arr, _ = _tv_unwrap(image)
            return _dl_tensor(_tv_convert_dtype(arr, _tv_np_dtype(self.dtype)))

    class ToDtype:
        """transforms.v2.ToDtype for images: cast, rescaling values when scale=True."""

        def __init__(self, dtype, scale=False):
            if isinstance(dtype, dict):
                raise MigrationError("ToDtype with a dict of dtypes per input type is not converted")
            self.dtype, self.scale = dtype, scale

        def __call__(self, image):
            arr, _ = _tv_unwrap(image)
            dtype = _tv_np_dtype(self.dtype)
            out = _tv_convert_dtype(arr, dtype, v2=True) if self.scale else arr.astype(dtype)
            return _dl_tensor(out)

    class Normalize(nn.Cell):
        """(x - mean) / std per channel of a float CHW tensor."""

        def __init__(self, mean, std, inplace=False):
            super().__init__()
            self.mean, self.std, self.inplace = list(mean), list(std), inplace

        def __call__(self, tensor):
            if _tv_is_pil(tensor):
                raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
            arr, as_tensor = _tv_unwrap(tensor)
            if arr.dtype.kind != "f":
                raise TypeError(f"Input tensor should be a float tensor. Got {arr.dtype}.")
            if arr.ndim < 3:
                raise ValueError("Expected tensor to be a tensor image of size (..., C, H, W). Got tensor.size() = "
                                 f"{list(arr.shape)}")
            mean = np.asarray(self.mean, arr.dtype).reshape(-1, 1, 1)
            std = np.asarray(self.std, arr.dtype).reshape(-1, 1, 1)
            if (std == 0).any():
                raise ValueError(f"std evaluated to zero after conversion to {arr.dtype}, leading to division by zero.")
            _tv_same_channels(arr, mean)
            _tv_same_channels(arr, std)
            return _tv_wrap((arr - mean) / std, as_tensor)

        def __repr__(self):
            return f"Normalize(mean={self.mean}, std={self.std})"

    class Resize(nn.Cell):
        def __init__(self, size, interpolation="bilinear", max_size=None, antialias=True):
            super().__init__()
            self.size, self.interpolation, self.max_size, self.antialias = size, interpolation, max_size, antialias

        def __call__(self, img):
            h, w = _tv_hw(img if _tv_is_pil(img) else _tv_unwrap(img)[0])
            return _tv_resize(img, _tv_resized_size(h, w, self.size, self.max_size), self.interpolation)

        def __repr__(self):
            return f"Resize(size={self.size}, interpolation={_tv_mode(self.interpolation)}, max_size={self.max_size})"

    class CenterCrop(nn.Cell):
        def __init__(self, size):
            super().__init__()
            self.size = _tv_pair(size)

        def __call__(self, img):
            crop_h, crop_w = self.size
            h, w = _tv_hw(img if _tv_is_pil(img) else _tv_unwrap(img)[0])
            if crop_w > w or crop_h > h:
                # a crop larger than the image: pad with zeros first, centred, as torchvision
                pad = [(crop_w - w) // 2 if crop_w > w else 0, (crop_h - h) // 2 if crop_h > h else 0,
                       (crop_w - w + 1) // 2 if crop_w > w else 0, (crop_h - h + 1) // 2 if crop_h > h else 0]
                img = _tv_pad(img, pad, fill=0)
                h, w = _tv_hw(img if _tv_is_pil(img) else _tv_unwrap(img)[0])
                if (crop_h, crop_w) == (h, w):
                    return img
            return _tv_crop(img, int(round((h - crop_h) / 2.0)), int(round((w - crop_w) / 2.0)), crop_h, crop_w)

        def __repr__(self):
            return f"CenterCrop(size={self.size})"

    class Pad(nn.Cell):
        def __init__(self, padding, fill=0, padding_mode="constant"):
            super().__init__()
            self.padding, self.fill, self.padding_mode = padding, fill, padding_mode

        def __call__(self, img):
            return _tv_pad(img, self.padding, self.fill, self.padding_mode)

    class RandomCrop(nn.Cell):
        def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant"):
            super().__init__()
            self.size = _tv_pair(size)
            self.padding, self.pad_if_needed, self.fill, self.padding_mode = padding, pad_if_needed, fill, padding_mode

        def __call__(self, img):
            if self.padding is not None:
                img = _tv_pad(img, self.padding, self.fill, self.padding_mode)
            th, tw = self.size
            h, w = _tv_hw(img if _tv_is_pil(img) else _tv_unwrap(img)[0])
            if self.pad_if_needed and w < tw:
                img = _tv_pad(img, (tw - w, 0), self.fill, self.padding_mode)
            if self.pad_if_needed and h < th:
                img = _tv_pad(img, (0, th - h), self.fill, self.padding_mode)
            top, left, h, w = self.get_params(img, (th, tw))
            if (top, left) == (0, 0) and _tv_hw(img if _tv_is_pil(img) else _tv_unwrap(img)[0]) == (h, w):
                return img
            return _tv_crop(img, top, left, h, w)

        @staticmethod
        def get_params(img, output_size):
            """(top, left, height, width) of a random crop of output_size."""
            h, w = _tv_hw(img if _tv_is_pil(img) else _tv_unwrap(img)[0])
            th, tw = output_size
            if h < th or w < tw:
                raise ValueError(f"Required crop size {(th, tw)} is larger than input image size {(h, w)}")
            if (h, w) == (th, tw):
                return 0, 0, h, w
            return np.random.randint(0, h - th + 1), np.random.randint(0, w - tw + 1), th, tw

        def __repr__(self):
            return f"RandomCrop(size={self.size}, padding={self.padding})"

    class _RandomFlip(nn.Cell):
        axis = -1   # the image axis flipped: -1 width (horizontal), -2 height (vertical)

        def __init__(self, p=0.5):
            super().__init__()
            self.p = p

        def __call__(self, img):
            return _tv_flip(img, self.axis) if np.random.random() < self.p else img

        def __repr__(self):
            return f"{type(self).__name__}(p={self.p})"

    class RandomRotation(nn.Cell):
        """A rotation by an angle drawn uniformly from degrees ((-d, d) for a number d). PIL images go through
        PIL's rotate as in torchvision (nearest by default, the corners filled with fill); a tensor image is
        refused (torchvision rotates it with its own affine grid sampling, not reproduced)."""

        def __init__(self, degrees, interpolation="nearest", expand=False, center=None, fill=0):
            super().__init__()
            if isinstance(degrees, numbers.Number):
                if degrees < 0:
                    raise ValueError("If degrees is a single number, it must be positive.")
                degrees = (-degrees, degrees)
            elif len(degrees) != 2:
                raise ValueError("If degrees is a sequence, it should be of length 2.")
            self.degrees = [float(d) for d in degrees]
            self.interpolation, self.expand, self.center = _tv_mode(interpolation), expand, center
            if fill is None:
                fill = 0
            elif not isinstance(fill, (list, tuple, numbers.Number)):
                raise TypeError("Fill should be either a sequence or a number.")
            self.fill = fill

        @staticmethod
        def get_params(degrees):
            """The angle, drawn uniformly from degrees (torchvision's float32 draw, as a float)."""
            return float(np.float32(np.random.uniform(float(degrees[0]), float(degrees[1]))))

        def __call__(self, img):
            if not _tv_is_pil(img):
                raise MigrationError("RandomRotation of a tensor image is not converted (torchvision samples "
                                     "an affine grid); rotate the PIL image before ToTensor")
            channels = len(img.getbands())
            fill = self.fill
            if isinstance(fill, numbers.Number) and channels > 1:
                fill = (fill,) * channels
            if isinstance(fill, (list, tuple)):
                if len(fill) == 1:
                    fill = tuple(fill) * channels
                elif len(fill) != channels:
                    raise ValueError(f"The number of elements in 'fill' does not match the number of channels "
                                     f"of the image ({len(fill)} != {channels})")
                fill = tuple(fill)
            if img.mode != "F":
                fill = tuple(int(v) for v in fill) if isinstance(fill, tuple) else int(fill)
            angle = self.get_params(self.degrees)
            return img.rotate(angle, _TV_PIL_MODES[self.interpolation], self.expand, self.center, fillcolor=fill)

        def __repr__(self):
            return f"RandomRotation(degrees={self.degrees}, interpolation={self.interpolation})"

    class RandomHorizontalFlip(_RandomFlip):
        axis = -1

    class RandomVerticalFlip(_RandomFlip):
        axis = -2

    class RandomResizedCrop(nn.Cell):
        """A random area (scale) and aspect ratio (ratio) crop, resized to size; ten
        tries, then a centre crop, as torchvision."""

        def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation="bilinear",
                     antialias=True):
            super().__init__()
            self.size = _tv_pair(size)
            self.scale, self.ratio, self.interpolation, self.antialias = scale, ratio, interpolation, antialias

        @staticmethod
        def get_params(img, scale, ratio):
            """(top, left, height, width) of a random crop (torchvision's rule)."""
            height, width = _tv_hw(img if _tv_is_pil(img) else _tv_unwrap(img)[0])
            area = height * width
            log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
            for _ in range(10):
                target_area = area * np.random.uniform(scale[0], scale[1])
                aspect = math.exp(np.random.uniform(log_ratio[0], log_ratio[1]))
                w = int(round(math.sqrt(target_area * aspect)))
                h = int(round(math.sqrt(target_area / aspect)))
                if 0 < w <= width and 0 < h <= height:
                    return np.random.randint(0, height - h + 1), np.random.randint(0, width - w + 1), h, w
            in_ratio = width / height          # ten misses: a centre crop
            if in_ratio < min(ratio):
                w, h = width, int(round(width / min(ratio)))
            elif in_ratio > max(ratio):
                h, w = height, int(round(height * max(ratio)))
            else:
                w, h = width, height
            return (height - h) // 2, (width - w) // 2, h, w

        def __call__(self, img):
            top, left, h, w = self.get_params(img, self.scale, self.ratio)
            return _tv_resize(_tv_crop(img, top, left, h, w), self.size, self.interpolation)

    class Grayscale(nn.Cell):
        def __init__(self, num_output_channels=1):
            super().__init__()
            self.num_output_channels = num_output_channels

        def __call__(self, img):
            if _tv_is_pil(img):
                gray = img.convert("L")
                if self.num_output_channels == 3:
                    a = np.asarray(gray)
                    gray = Image.fromarray(np.dstack([a, a, a]))
                return gray
            arr, as_tensor = _tv_unwrap(img)
            return _tv_wrap(_tv_gray(arr, self.num_output_channels), as_tensor)

    class RandomGrayscale(nn.Cell):
        def __init__(self, p=0.1):
            super().__init__()
            self.p = p

        def __call__(self, img):
            if np.random.random() < self.p:
                return transforms.Grayscale(_tv_channels(img if _tv_is_pil(img) else _tv_unwrap(img)[0]))(img)
            return img

    class ColorJitter(nn.Cell):
        """Brightness, contrast, saturation and hue factors drawn uniformly, applied in a
        random order, with torchvision's formulas (PIL's ImageEnhance on PIL images)."""

        def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
            super().__init__()
            self.brightness = self._check(brightness, "brightness")
            self.contrast = self._check(contrast, "contrast")
            self.saturation = self._check(saturation, "saturation")
            self.hue = self._check(hue, "hue", center=0, bound=(-0.5, 0.5), clip_first_on_zero=False)

        @staticmethod
        def _check(value, name, center=1, bound=(0, float("inf")), clip_first_on_zero=True):
            if isinstance(value, numbers.Number):
                if value < 0:
                    raise ValueError(f"If {name} is a single number, it must be non negative.")
                value = [center - float(value), center + float(value)]
                if clip_first_on_zero:
                    value[0] = max(value[0], 0.0)
            elif isinstance(value, (tuple, list)) and len(value) == 2:
                value = [float(value[0]), float(value[1])]
            else:
                raise TypeError(f"{name} should be a single number or a list/tuple with length 2.")
            if not bound[0] <= value[0] <= value[1] <= bound[1]:
                raise ValueError(f"{name} values should be between {bound}, but got {value}.")
            return None if value[0] == value[1] == center else tuple(value)

        @staticmethod
        def get_params(brightness, contrast, saturation, hue):
            """(order of the four adjustments, their factors; None where a range is None)."""
            order = np.random.permutation(4)
            factors = [None if r is None else float(np.random.uniform(r[0], r[1]))
                       for r in (brightness, contrast, saturation, hue)]
            return (order, *factors)

        def __call__(self, img):
            order, *factors = self.get_params(self.brightness, self.contrast, self.saturation, self.hue)
            for k in order:
                if factors[k] is not None:
                    img = self._adjust(img, int(k), factors[k])
            return img

        @staticmethod
        def _adjust(img, which, factor):
            if _tv_is_pil(img):
                if which == 0:
                    return ImageEnhance.Brightness(img).enhance(factor)
                if which == 1:
                    return ImageEnhance.Contrast(img).enhance(factor)
                if which == 2:
                    return ImageEnhance.Color(img).enhance(factor)
                if img.mode in ("L", "1", "I", "F"):
                    return img
                h, s, v = img.convert("HSV").split()
                np_h = np.array(h, dtype=np.uint8)
                np_h += np.int32(factor * 255).astype(np.uint8)      # wraps around, as intended
                return Image.merge("HSV", (Image.fromarray(np_h), s, v)).convert(img.mode)
            arr, as_tensor = _tv_unwrap(img)
            channels = arr.shape[-3]
            if which == 0:
                out = _tv_blend(arr, np.zeros_like(arr), factor)
            elif which == 1:
                dtype = arr.dtype if arr.dtype.kind == "f" else np.float32
                gray = _tv_gray(arr) if channels == 3 else arr
                out = _tv_blend(arr, gray.astype(dtype).mean(axis=(-3, -2, -1), keepdims=True), factor)
            elif channels == 1:
                out = arr
            elif which == 2:
                out = _tv_blend(arr, _tv_gray(arr), factor)
            else:
                hsv = _tv_rgb2hsv(_tv_convert_dtype(arr, np.float32))
                hsv[..., 0, :, :] = (hsv[..., 0, :, :] + factor) % 1.0
                out = _tv_convert_dtype(_tv_hsv2rgb(hsv), arr.dtype)
            return _tv_wrap(out, as_tensor)

    class GaussianBlur(nn.Cell):
        """sigma drawn uniformly from (min, max) per call (a fixed sigma is exact); the blur is
        functional.gaussian_blur's."""

        def __init__(self, kernel_size, sigma=(0.1, 2.0)):
            super().__init__()
            self.kernel_size = _tv_pair(kernel_size, "Kernel size")
            for ks in self.kernel_size:
                if ks <= 0 or ks % 2 == 0:
                    raise ValueError("Kernel size value should be an odd and positive number.")
            if isinstance(sigma, numbers.Number):
                if sigma <= 0:
                    raise ValueError("If sigma is a single number, it must be positive.")
                sigma = (sigma, sigma)
            elif isinstance(sigma, (tuple, list)) and len(sigma) == 2:
                if not 0.0 < sigma[0] <= sigma[1]:
                    raise ValueError("sigma values should be positive and of the form (min, max).")
            else:
                raise ValueError("sigma should be a single number or a list/tuple with length 2.")
            self.sigma = sigma

        @staticmethod
        def get_params(sigma_min, sigma_max):
            return float(np.random.uniform(sigma_min, sigma_max))

        def __call__(self, img):
            sigma = self.get_params(self.sigma[0], self.sigma[1])
            return transforms.functional.gaussian_blur(img, self.kernel_size, [sigma, sigma])

    class functional:
        """torchvision.transforms.functional: the operations behind the classes above."""

        @staticmethod
        def to_tensor(pic):
            return transforms.ToTensor()(pic)

        @staticmethod
        def pil_to_tensor(pic):
            return transforms.PILToTensor()(pic)

        @staticmethod
        def to_pil_image(pic, mode=None):
            return transforms.ToPILImage(mode)(pic)

        @staticmethod
        def convert_image_dtype(image, dtype=ms.float32):
            return transforms.ConvertImageDtype(dtype)(image)

        @staticmethod
        def normalize(tensor, mean, std, inplace=False):
            return transforms.Normalize(mean, std)(tensor)

        @staticmethod
        def resize(img, size, interpolation="bilinear", max_size=None, antialias=True):
            return transforms.Resize(size, interpolation, max_size)(img)

        @staticmethod
        def center_crop(img, output_size):
            return transforms.CenterCrop(output_size)(img)

        @staticmethod
        def crop(img, top, left, height, width):
            return _tv_crop(img, top, left, height, width)

        @staticmethod
        def resized_crop(img, top, left, height, width, size, interpolation="bilinear", antialias=True):
            return _tv_resize(_tv_crop(img, top, left, height, width), _tv_pair(size), interpolation)

        @staticmethod
        def pad(img, padding, fill=0, padding_mode="constant"):
            return _tv_pad(img, padding, fill, padding_mode)

        @staticmethod
        def hflip(img):
            return _tv_flip(img, -1)

        @staticmethod
        def vflip(img):
            return _tv_flip(img, -2)

        @staticmethod
        def rgb_to_grayscale(img, num_output_channels=1):
            return transforms.Grayscale(num_output_channels)(img)

        to_grayscale = rgb_to_grayscale

        # ColorJitter's adjustments 0..3, with torchvision's argument names
        adjust_brightness = staticmethod(lambda img, brightness_factor: transforms.ColorJitter._adjust(
            img, 0, brightness_factor))
        adjust_contrast = staticmethod(lambda img, contrast_factor: transforms.ColorJitter._adjust(
            img, 1, contrast_factor))
        adjust_saturation = staticmethod(lambda img, saturation_factor: transforms.ColorJitter._adjust(
            img, 2, saturation_factor))
        adjust_hue = staticmethod(lambda img, hue_factor: transforms.ColorJitter._adjust(img, 3, hue_factor))

        @staticmethod
        def gaussian_blur(img, kernel_size, sigma=None):
            """torchvision's tensor path (PIL images go through it as uint8 arrays): the kernel
            exp(-x**2 / (2 sigma**2)) normalised per axis in the image's float dtype (float32 for
            integer images), reflect padding of kernel_size // 2, a per-channel correlation, and
            integer images rounded back."""
            if isinstance(kernel_size, int):
                kernel_size = [kernel_size, kernel_size]
            if len(kernel_size) != 2:
                raise ValueError(f"If kernel_size is a sequence its length should be 2. Got {len(kernel_size)}")
            if any(k % 2 == 0 or k < 0 for k in kernel_size):
                raise ValueError(f"kernel_size should have odd and positive integers. Got {kernel_size}")
            if sigma is None:
                sigma = [k * 0.15 + 0.35 for k in kernel_size]
            if isinstance(sigma, (int, float)):
                sigma = [float(sigma), float(sigma)]
            if len(sigma) == 1:
                sigma = [sigma[0], sigma[0]]
            if len(sigma) != 2 or min(sigma) <= 0:
                raise ValueError(f"sigma should have two positive values. Got {sigma}")
            pil_mode = img.mode if _tv_is_pil(img) else None
            if pil_mode is not None:
                arr, as_tensor = np.array(img), False
                arr = arr[None] if arr.ndim == 2 else arr.transpose(2, 0, 1)
            else:
                arr, as_tensor = _tv_unwrap(img)
            dtype = arr.dtype if arr.dtype.kind == "f" else np.dtype(np.float32)

            def kernel1d(size, s):
                x = np.linspace(-(size - 1) * 0.5, (size - 1) * 0.5, size).astype(dtype)
                pdf = np.exp(-0.5 * (x / dtype.type(s)) ** 2)
                return pdf / pdf.sum()

            kx, ky = kernel1d(kernel_size[0], sigma[0]), kernel1d(kernel_size[1], sigma[1])
            kernel = ky[:, None] * kx[None, :]
            px, py = kernel_size[0] // 2, kernel_size[1] // 2
            pad = [(0, 0)] * (arr.ndim - 2) + [(py, py), (px, px)]
            padded = np.pad(arr.astype(dtype), pad, mode="reflect")
            h, w = arr.shape[-2:]
            out = np.zeros(arr.shape, dtype)
            for i in range(kernel.shape[0]):
                for j in range(kernel.shape[1]):
                    out += kernel[i, j] * padded[..., i:i + h, j:j + w]
            if arr.dtype.kind in "iu":
                out = np.round(out)
            out = out.astype(arr.dtype)
            if pil_mode is not None:
                return Image.fromarray(out[0] if out.shape[0] == 1 else out.transpose(1, 2, 0), mode=pil_mode)
            return _tv_wrap(out, as_tensor)

        @staticmethod
        def get_dimensions(img):
            arr = img if _tv_is_pil(img) else _tv_unwrap(img)[0]
            return [_tv_channels(arr), *_tv_hw(arr)]

        @staticmethod
        def get_image_size(img):
            h, w = _tv_hw(img if _tv_is_pil(img) else _tv_unwrap(img)[0])
            return [w, h]


# ======================================================================
# torchvision.datasets
# ======================================================================
def _tv_find(path):
    """The file, or its .gz version (torchvision keeps the extracted file)."""
    if os.path.isfile(path):
        return path
    if os.path.isfile(path + ".gz"):
        return path + ".gz"
    return None


def _tv_read_idx(path):
    """An MNIST idx file ("SN3 Pascal Vincent" format, big-endian) as a NumPy array."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    magic = int.from_bytes(data[0:4], "big")
    nd, ty = magic % 256, magic // 256
    if not (1 <= nd <= 3 and ty in (8, 9, 11, 12, 13, 14)):
        raise RuntimeError(f"{path} is not an idx file")
    dtype = {8: np.uint8, 9: np.int8, 11: ">i2", 12: ">i4", 13: ">f4", 14: ">f8"}[ty]
    shape = [int.from_bytes(data[4 * (i + 1):4 * (i + 2)], "big") for i in range(nd)]
    arr = np.frombuffer(data, dtype=dtype, offset=4 * (nd + 1))
    return arr.astype(arr.dtype.newbyteorder("=")).reshape(shape)


def _tv_array_property(name):
    """A Tensor sharing memory with the array attribute `name` samples are read from (MNIST's data/targets);
    assigning a new value (e.g. a filtered subset) replaces that array."""
    return property(lambda self: ms.Tensor.from_numpy(getattr(self, name)),
                    lambda self, value: setattr(self, name, np.ascontiguousarray(_dl_numpy(value))))


def _tv_missing(what, where, download):
    hint = (" download=True cannot fetch it here: download it once with torchvision (or copy the files) "
            "and point root at it." if download else " You can use download=True to download it.")
    return RuntimeError(f"{what} not found at {where}.{hint}")


class datasets:
    """torchvision.datasets reading the same files torchvision reads; samples are
    (PIL image, int label) passed through transform / target_transform."""

    class VisionDataset:
        def __init__(self, root=None, transforms=None, transform=None, target_transform=None):
            self.root = os.path.expanduser(root) if isinstance(root, str) else root
            self.transform = transform
            self.target_transform = target_transform
            self.transforms = transforms

        def __len__(self):
            # abstract, as in torchvision: each dataset defines it
            raise NotImplementedError(f"{type(self).__name__} does not define __len__()")

        def _transformed(self, sample, target):
            """(transform(sample), target_transform(target)), each where it is given."""
            if self.transform is not None:
                sample = self.transform(sample)
            if self.target_transform is not None:
                target = self.target_transform(target)
            return sample, target

        def __repr__(self):
            lines = [f"Dataset {type(self).__name__}", f"    Number of datapoints: {len(self)}"]
            if self.root is not None:
                lines.append(f"    Root location: {self.root}")
            return "\n".join(lines)

    class MNIST(VisionDataset):
        """root/<ClassName>/raw/{train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz].
        `data` (N, 28, 28) uint8 and `targets` (N,) int64 are mindspore Tensors, as torch
        tensors in torchvision; samples are read from their NumPy arrays."""

        classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six",
                   "7 - seven", "8 - eight", "9 - nine"]

        def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
            super().__init__(root, transform=transform, target_transform=target_transform)
            self.train = train
            prefix = "train" if train else "t10k"
            files = [_tv_find(os.path.join(self.raw_folder, f"{prefix}-{kind}-ubyte"))
                     for kind in ("images-idx3", "labels-idx1")]
            if None in files:
                raise _tv_missing("Dataset", self.raw_folder, download)
            self._data = _tv_read_idx(files[0])
            self._targets = _tv_read_idx(files[1]).astype(np.int64)
            if self._data.ndim != 3 or self._data.dtype != np.uint8 or self._targets.ndim != 1:
                raise RuntimeError(f"unexpected idx files in {self.raw_folder}")

        @property
        def raw_folder(self):
            return os.path.join(self.root, type(self).__name__, "raw")

        @property
        def class_to_idx(self):
            return {c: i for i, c in enumerate(self.classes)}

        data = _tv_array_property("_data")
        targets = _tv_array_property("_targets")
        # torchvision's deprecated names of data and targets (read-only; all four whatever `train` is)
        train_data = test_data = property(lambda self: self.data)
        train_labels = test_labels = property(lambda self: self.targets)

        def __getitem__(self, index):
            return self._transformed(Image.fromarray(self._data[index]), int(self._targets[index]))

        def __len__(self):
            return len(self._data)

    class FashionMNIST(MNIST):
        classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
                   "Ankle boot"]

    class KMNIST(MNIST):
        classes = ["o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo"]

    class CIFAR10(VisionDataset):
        """root/cifar-10-batches-py/{data_batch_1..5, test_batch, batches.meta}: the
        "python version" pickles torchvision downloads. `data` is (N, 32, 32, 3) uint8
        NumPy and `targets` a list of ints, as in torchvision."""

        base_folder = "cifar-10-batches-py"
        train_list = ["data_batch_1", "data_batch_2", "data_batch_3", "data_batch_4", "data_batch_5"]
        test_list = ["test_batch"]
        meta = {"filename": "batches.meta", "key": "label_names"}

        def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
            super().__init__(root, transform=transform, target_transform=target_transform)
            self.train = train
            folder = os.path.join(self.root, self.base_folder)
            if not all(os.path.isfile(os.path.join(folder, f)) for f in self.train_list + self.test_list):
                raise _tv_missing("Dataset", folder, download)
            data, self.targets = [], []
            for name in (self.train_list if train else self.test_list):
                entry = read_numpy_pickle(os.path.join(folder, name))   # runs nothing from the file
                data.append(entry["data"])
                self.targets.extend(entry["labels"] if "labels" in entry else entry["fine_labels"])
            self.data = np.vstack(data).reshape(-1, 3, 32, 32).transpose((0, 2, 3, 1))   # HWC
            meta = os.path.join(folder, self.meta["filename"])
            if not os.path.isfile(meta):
                raise _tv_missing("Dataset metadata file", meta, download)
            self.classes = read_numpy_pickle(meta)[self.meta["key"]]
            self.class_to_idx = {c: i for i, c in enumerate(self.classes)}

        def __getitem__(self, index):
            return self._transformed(Image.fromarray(self.data[index]), self.targets[index])

        def __len__(self):
            return len(self.data)

    class CIFAR100(CIFAR10):
        base_folder = "cifar-100-python"
        train_list = ["train"]
        test_list = ["test"]
        meta = {"filename": "meta", "key": "fine_label_names"}

    IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")

    @staticmethod
    def pil_loader(path):
        with open(path, "rb") as f:
            return Image.open(f).convert("RGB")

    @staticmethod
    def default_loader(path):
        return datasets.pil_loader(path)

    @staticmethod
    def find_classes(directory):
        classes = sorted(entry.name for entry in os.scandir(directory) if entry.is_dir())
        if not classes:
            raise FileNotFoundError(f"Couldn't find any class folder in {directory}.")
        return classes, {name: i for i, name in enumerate(classes)}

    @staticmethod
    def make_dataset(directory, class_to_idx=None, extensions=None, is_valid_file=None, allow_empty=False):
        """(path, class index) for every file under directory/<class>/, in torchvision's order."""
        directory = os.path.expanduser(directory)
        if class_to_idx is None:
            _, class_to_idx = datasets.find_classes(directory)
        elif not class_to_idx:
            raise ValueError("'class_to_index' must have at least one entry to collect any samples.")
        if (extensions is None) == (is_valid_file is None):
            raise ValueError("Both extensions and is_valid_file cannot be None or not None at the same time")
        if extensions is not None:
            ext = extensions if isinstance(extensions, str) else tuple(extensions)
            is_valid_file = lambda path: path.lower().endswith(ext)   # noqa: E731
        instances, found = [], set()
        for target_class in sorted(class_to_idx):
            target_dir = os.path.join(directory, target_class)
            if not os.path.isdir(target_dir):
                continue
            for root, _, fnames in sorted(os.walk(target_dir, followlinks=True)):
                for fname in sorted(fnames):
                    path = os.path.join(root, fname)
                    if is_valid_file(path):
                        instances.append((path, class_to_idx[target_class]))
                        found.add(target_class)
        empty = set(class_to_idx) - found
        if empty and not allow_empty:
            msg = f"Found no valid file for the classes {', '.join(sorted(empty))}. "
            if extensions is not None:
                names = extensions if isinstance(extensions, str) else ", ".join(extensions)
                msg += f"Supported extensions are: {names}"
            raise FileNotFoundError(msg)
        return instances

    class DatasetFolder(VisionDataset):
        """root/<class>/<file>: samples are (loader(path), class index)."""

        def __init__(self, root, loader, extensions=None, transform=None, target_transform=None,
                     is_valid_file=None, allow_empty=False):
            super().__init__(root, transform=transform, target_transform=target_transform)
            self.classes, self.class_to_idx = self.find_classes(self.root)
            self.samples = self.make_dataset(self.root, self.class_to_idx, extensions, is_valid_file, allow_empty)
            self.loader = loader
            self.extensions = extensions
            self.targets = [s[1] for s in self.samples]

        def find_classes(self, directory):
            return datasets.find_classes(directory)

        @staticmethod
        def make_dataset(directory, class_to_idx, extensions=None, is_valid_file=None, allow_empty=False):
            return datasets.make_dataset(directory, class_to_idx, extensions, is_valid_file, allow_empty)

        def __getitem__(self, index):
            path, target = self.samples[index]
            return self._transformed(self.loader(path), target)

        def __len__(self):
            return len(self.samples)

    class ImageFolder(DatasetFolder):
        """root/<class>/<image>: samples are (RGB PIL image, class index)."""

        def __init__(self, root, transform=None, target_transform=None, loader=None, is_valid_file=None,
                     allow_empty=False):
            super().__init__(root, loader if loader is not None else datasets.default_loader,
                             datasets.IMG_EXTENSIONS if is_valid_file is None else None,
                             transform=transform, target_transform=target_transform,
                             is_valid_file=is_valid_file, allow_empty=allow_empty)
            self.imgs = self.samples
