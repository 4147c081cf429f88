"""torch.nn.utils.rnn packing: a PackedSequence here keeps the padded batch (batch first, original order) and the
lengths; MindSpore's LSTM/GRU/RNN given seq_length compute what torch computes on the packed batch (outputs
zero past each length, final states at each sequence's last step, original order), so on first use packing
lets those cells take a PackedSequence, as torch's do (PyNative: a Python object does not enter a graph).
.data / .batch_sizes / .sorted_indices / .unsorted_indices are torch's, computed when read; one built
directly from torch's fields (data, batch_sizes, ...) keeps them as given and unpacks them into the padded batch."""
import mindspore as ms
import numpy as np
from mindspore import nn, ops


class PackedSequence:
    """torch.nn.utils.rnn.PackedSequence(data, batch_sizes, sorted_indices, unsorted_indices); also built by
    pack_padded_sequence / pack_sequence."""

    def __init__(self, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if batch_sizes is None:
            raise MigrationError("PackedSequence(data) without batch_sizes (torch's (data, batch_sizes) tuple "
                                 "form) is not converted")
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        sizes = [int(b) for b in (batch_sizes.asnumpy() if isinstance(batch_sizes, ms.Tensor) else batch_sizes)]
        # packed row of sequence i (in sorted order) at step t: offset[t] + i, present while i < batch_sizes[t]
        offset = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        present = np.arange(sizes[0])[:, None] < np.array(sizes)[None, :]
        rows = np.where(present, offset[None, :] + np.arange(sizes[0])[:, None], 0)
        padded = data[ms.Tensor(rows)]
        keep = ms.Tensor(present.reshape(present.shape + (1,) * (padded.ndim - 2)))
        padded = ops.where(keep, padded, ops.zeros_like(padded))
        lengths = present.sum(1).tolist()
        if unsorted_indices is not None:      # back to the original batch order, as pad_packed_sequence does
            order = [int(i) for i in unsorted_indices.asnumpy()]
            padded, lengths = padded[ms.Tensor(order, ms.int64)], [lengths[i] for i in order]
        self._padded, self._lengths = padded, lengths
        self.sorted_indices, self.unsorted_indices = sorted_indices, unsorted_indices
        self._fields = (data, batch_sizes)    # read back as given

    @classmethod
    def _of_padded(cls, padded, lengths, sorted_indices):
        """The packing of `padded` (B, T, *), original batch order, Python int lengths."""
        self = cls.__new__(cls)
        self._padded = padded            # (B, T, *), original batch order
        self._lengths = lengths          # Python ints, original order
        self._fields = None
        self.sorted_indices = sorted_indices
        self.unsorted_indices = invert_permutation(sorted_indices)
        return self

    def _order(self):
        if self.sorted_indices is None:
            return list(range(len(self._lengths)))
        return [int(i) for i in self.sorted_indices.asnumpy()]

    @property
    def batch_sizes(self):
        if self._fields is not None:
            return self._fields[1]
        return ms.Tensor([sum(1 for n in self._lengths if n > t) for t in range(max(self._lengths))], ms.int64)

    @property
    def data(self):
        if self._fields is not None:
            return self._fields[0]
        order = self._order()
        rows = [self._padded[b, t] for t in range(max(self._lengths)) for b in order if self._lengths[b] > t]
        return ops.stack(rows)

    def __iter__(self):   # torch's namedtuple fields, for `data, batch_sizes, *_ = packed`
        return iter((self.data, self.batch_sizes, self.sorted_indices, self.unsorted_indices))

    def __getitem__(self, index):
        return tuple(self)[index]

    def __len__(self):
        return 4

    def _cast(self, dtype):
        """torch's packed.to(dtype) / .double() ...: the data cast, the sizes and indices kept."""
        if dtype is None or self.data.dtype == dtype:
            return self
        out = PackedSequence._of_padded(self._padded.astype(dtype), self._lengths, self.sorted_indices)
        out.unsorted_indices = self.unsorted_indices
        if self._fields is not None:
            out._fields = (self._fields[0].astype(dtype), self._fields[1])
        return out

    def to(self, *args, **kwargs):
        """packed.to(dtype) casts; a device (MindSpore places tensors by its context) is dropped."""
        dtype = kwargs.get("dtype")
        for a in args:
            if isinstance(a, ms.Tensor):
                dtype = a.dtype
            elif isinstance(a, type(ms.float32)):
                dtype = a
        return self._cast(dtype)

    def double(self):
        return self._cast(ms.float64)

    def float(self):
        return self._cast(ms.float32)

    def half(self):
        return self._cast(ms.float16)

    def long(self):
        return self._cast(ms.int64)

    def int(self):
        return self._cast(ms.int32)

    def cpu(self):
        return self

    def cuda(self, *args, **kwargs):
        return self

    def pin_memory(self):
        return self

    def is_pinned(self):
        return False

    @property
    def is_cuda(self):
        return is_on_device(self._padded, "cuda", "is_cuda")


def invert_permutation(permutation):
    """torch.nn.utils.rnn.invert_permutation: the inverse permutation, in the input's dtype; None stays None."""
    if permutation is None:
        return None
    return ops.argsort(permutation).astype(permutation.dtype)


def _packing_lengths(lengths):
    if isinstance(lengths, ms.Tensor):
        lengths = lengths.asnumpy().tolist()
    return [int(n) for n in lengths]


_PACKING_IN_GRAPH = ("torch.nn.utils.rnn.{} at {} inside a compiled graph (GRAPH mode construct, ms.jit, the converted "
                     "train step): a PackedSequence is a Python object built from lengths read on the host, so "
                     "packing runs op by op only; set ms.set_context(mode=ms.PYNATIVE_MODE)")


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True, where="a call msmigrate did not see"):
    """torch.nn.utils.rnn.pack_padded_sequence (where: the original file:line, for the compiled-graph refusal)."""
    if _compiling(_draw_probe):
        # packing reads the lengths on the host: compiled, MindSpore 2.10 failed with a raw TypeError instead
        _refuse_compiled(_PACKING_IN_GRAPH, "pack_padded_sequence", where)
    lengths = _packing_lengths(lengths)
    if enforce_sorted:
        if any(a < b for a, b in zip(lengths, lengths[1:])):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
                               "to sidestep this requirement if you do not need ONNX exportability.")
        sorted_indices = None
    else:
        sorted_indices = ms.Tensor(sorted(range(len(lengths)), key=lambda i: -lengths[i]), ms.int64)
    if min(lengths) <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    padded = input if batch_first else ops.swapaxes(input, 0, 1)
    _rnn_accept_packed()
    return PackedSequence._of_padded(padded[:, :max(lengths)], lengths, sorted_indices)


def pack_sequence(sequences, enforce_sorted=True, where="a call msmigrate did not see"):
    """torch.nn.utils.rnn.pack_sequence: pad_sequence, then pack_padded_sequence."""
    if _compiling(_draw_probe):
        _refuse_compiled(_PACKING_IN_GRAPH, "pack_sequence", where)
    sequences = list(sequences)
    return pack_padded_sequence(pad_sequence(sequences, batch_first=True), [s.shape[0] for s in sequences],
                                batch_first=True, enforce_sorted=enforce_sorted, where=where)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """torch.nn.utils.rnn.pad_packed_sequence: (padded batch, lengths as int64), in the original order."""
    lengths = sequence._lengths
    longest = max(lengths)
    if total_length is not None:
        if total_length < longest:
            raise ValueError(f"Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {longest}")
        longest = total_length
    padded = sequence._padded
    if padded.shape[1] < longest:
        fill = ops.zeros((padded.shape[0], longest - padded.shape[1]) + tuple(padded.shape[2:]), padded.dtype)
        padded = ops.cat([padded, fill], 1)
    padded = padded[:, :longest]
    steps = ops.arange(longest).reshape(1, -1)
    keep = (steps < ms.Tensor(lengths, ms.int64).reshape(-1, 1)).reshape((len(lengths), longest) +
                                                                          (1,) * (padded.ndim - 2))
    padded = ops.where(keep, padded, ops.full_like(padded, padding_value))
    return (padded if batch_first else ops.swapaxes(padded, 0, 1)), ms.Tensor(lengths, ms.int64)


def _rnn_packed_call(cell, call, packed, hx=None):
    """cell(packed, hx) for a MindSpore LSTM/GRU/RNN: the padded batch with seq_length, rewrapped."""
    x = packed._padded if cell.batch_first else ops.swapaxes(packed._padded, 0, 1)
    out, h = call(cell, x, hx, seq_length=ms.Tensor(packed._lengths, ms.int32))
    out = out if cell.batch_first else ops.swapaxes(out, 0, 1)
    result = PackedSequence._of_padded(out, packed._lengths, packed.sorted_indices)
    return result, h


def _rnn_accept_packed():
    """Once: MindSpore's LSTM/GRU/RNN calls take a PackedSequence as their input (others go through unchanged)."""
    for cls in (nn.LSTM, nn.GRU, nn.RNN):
        if "_ms_packed_call" in cls.__dict__:
            continue
        plain = cls.__call__

        def call(self, *args, _plain=plain, **kwargs):
            if args and isinstance(args[0], PackedSequence):
                return _rnn_packed_call(self, _plain, *args, **kwargs)
            return _plain(self, *args, **kwargs)
        cls.__call__ = call
        cls._ms_packed_call = True


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """torch.nn.utils.rnn.unpad_sequence: the list of sequences, each cut to its length."""
    padded = padded_sequences if batch_first else ops.swapaxes(padded_sequences, 0, 1)
    return [padded[i, :n] for i, n in enumerate(_packing_lengths(lengths))]


def unpack_sequence(packed_sequences):
    """torch.nn.utils.rnn.unpack_sequence: the list of sequences of a PackedSequence, in the original order."""
    return unpad_sequence(packed_sequences._padded, packed_sequences._lengths, batch_first=True)
