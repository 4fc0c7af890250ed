"""Variable-length sequences (torch.nn.utils.rnn): PackedSequence, pack/pad helpers.

Packing and padding are index_select / index_copy over the flattened (time * batch) rows, so
gradients flow through them.
"""
from collections import namedtuple

import ember
from ember._C import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]

_PackedSequenceBase = namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


class PackedSequence(_PackedSequenceBase):
    """Time-major packed data of a batch of sequences: data rows t, then batch_sizes[t] rows per step."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PackedSequence((data, batch_sizes))
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def _apply_to_data(self, fn):
        return type(self)(fn(self.data), self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else type(self)(data, self.batch_sizes, self.sorted_indices,
                                                          self.unsorted_indices)

    def cpu(self):
        return self

    def cuda(self, *args, **kwargs):
        raise NotImplementedError("Ember was built without CUDA support; cannot move a PackedSequence to cuda")

    def double(self):
        return self._apply_to_data(lambda d: d.double())

    def float(self):
        return self._apply_to_data(lambda d: d.float())

    def half(self):
        return self._apply_to_data(lambda d: d.half())

    def long(self):
        return self._apply_to_data(lambda d: d.long())

    def int(self):
        return self._apply_to_data(lambda d: d.int())

    @property
    def is_cuda(self):
        return False

    def is_pinned(self):
        return False


def invert_permutation(permutation):
    """The inverse of a permutation of 0..n-1 (None stays None)."""
    if permutation is None:
        return None
    out = ember.empty_like(permutation)
    out.scatter_(0, permutation, ember.arange(permutation.numel(), dtype=permutation.dtype))
    return out


def _packed_rows(lengths, batch):
    """Flat (t * batch + b) row indices of the packed order and the batch size of each step."""
    max_len = max(lengths) if lengths else 0
    batch_sizes = [sum(1 for n in lengths if n > t) for t in range(max_len)]
    rows = [t * batch + b for t in range(max_len) for b in range(batch_sizes[t])]
    return rows, batch_sizes


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch (T, B, *) (or (B, T, *) with batch_first) of sequences of the given lengths."""
    if isinstance(lengths, Tensor):
        lengths_list = [int(n) for n in lengths.tolist()]
    else:
        lengths_list = [int(n) for n in lengths]
    batch_dim = 0 if batch_first else 1
    if enforce_sorted:
        sorted_indices = None
        if any(a < b for a, b in zip(lengths_list, lengths_list[1:])):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You "
                               "can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                               "sidestep this requirement if you do not need ONNX exportability.")
    else:
        order = sorted(range(len(lengths_list)), key=lambda i: -lengths_list[i])
        sorted_indices = ember.tensor(order, dtype=ember.int64)
        lengths_list = [lengths_list[i] for i in order]
        input = input.index_select(batch_dim, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    if len(lengths_list) != input.shape[1]:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lengths_list)} "
                           f"(batch_size={input.shape[1]})")
    if any(n <= 0 for n in lengths_list):
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that "
                           "is <= 0")
    if lengths_list and lengths_list[0] > input.shape[0]:
        raise RuntimeError(f"Expected sequence length to be larger than or equal to the max length in lengths, but got "
                           f"{input.shape[0]} and {lengths_list[0]}")
    batch = input.shape[1]
    rows, batch_sizes = _packed_rows(lengths_list, batch)
    flat = input.reshape([input.shape[0] * batch] + list(input.shape[2:]))
    data = flat.index_select(0, ember.tensor(rows, dtype=ember.int64))
    return PackedSequence(data, ember.tensor(batch_sizes, dtype=ember.int64), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Inverse of pack_padded_sequence: (padded batch, lengths)."""
    data, batch_sizes = sequence.data, [int(n) for n in sequence.batch_sizes.tolist()]
    max_len = len(batch_sizes)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, but "
                             f"got total_length={total_length} and max sequence length being {max_len}")
        max_len = total_length
    batch = batch_sizes[0] if batch_sizes else 0
    lengths = [sum(1 for n in batch_sizes if n > b) for b in range(batch)]
    rows, _ = _packed_rows(lengths, batch)
    trailing = list(data.shape[1:])
    flat = ember.full([max_len * batch] + trailing, padding_value, dtype=data.dtype)
    flat = flat.index_copy(0, ember.tensor(rows, dtype=ember.int64), data)
    padded = flat.reshape([max_len, batch] + trailing)
    lengths_t = ember.tensor(lengths, dtype=ember.int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths_t = lengths_t.index_select(0, sequence.unsorted_indices)
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, lengths_t


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks sequences of shape (L_i, *) into (max L, B, *) (or (B, max L, *)), padding with padding_value."""
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    max_len = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        n = max_len - s.shape[0]
        if n:
            fill = ember.full([n] + list(s.shape[1:]), padding_value, dtype=s.dtype)
            s = ember.cat([s, fill] if padding_side == "right" else [fill, s], 0)
        padded.append(s)
    return ember.stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of unpadded sequences of a padded batch."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(n)] for seq, n in zip(padded_sequences, lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of sequences of shape (L_i, *)."""
    lengths = ember.tensor([s.shape[0] for s in sequences], dtype=ember.int64)
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences of a PackedSequence."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
