"""default_collate / default_convert: turning a list of samples into a batch, with torch's rules."""
import collections.abc
import re

import ember
from ember import _C

np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}")

# Set in DataLoader worker processes: stacked batches are then allocated in shared memory, so
# handing them to the main process moves no bytes (ember.multiprocessing.reductions).
_collate_into_shared_memory = False


def _is_namedtuple(obj):
    return isinstance(obj, tuple) and hasattr(obj, "_fields")


def _is_ndarray(obj):
    t = type(obj)
    return t.__module__ == "numpy" and t.__name__ in ("ndarray", "memmap")


def _is_numpy_scalar(obj):
    return type(obj).__module__ == "numpy" and not _is_ndarray(obj)


def default_convert(data):
    """Converts NumPy arrays and scalars to tensors, recursively through mappings and sequences."""
    if isinstance(data, ember.Tensor):
        return data
    if _is_ndarray(data):
        if np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return ember.as_tensor(data)
    if _is_numpy_scalar(data):
        if data.dtype.kind in "SaUO":
            return data
        return ember.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = data.copy()
                clone.update({k: default_convert(v) for k, v in data.items()})
                return clone
            return type(data)({k: default_convert(v) for k, v in data.items()})
        except TypeError:
            return {k: default_convert(v) for k, v in data.items()}
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def _stack(batch):
    elem = batch[0]
    if _collate_into_shared_memory:
        out = _C._empty_shared((len(batch),) + tuple(elem.shape), elem.dtype)
        return ember.stack(batch, 0, out=out)
    return ember.stack(batch, 0)


def default_collate(batch):
    """Stacks tensors (and NumPy arrays, numbers) along a new first dim, recursing into containers."""
    elem = batch[0]
    elem_type = type(elem)
    if isinstance(elem, ember.Tensor):
        return _stack(batch)
    if _is_ndarray(elem):
        if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
            raise TypeError(default_collate_err_msg_format.format(elem.dtype))
        return default_collate([ember.as_tensor(b) for b in batch])
    if _is_numpy_scalar(elem) and hasattr(elem, "shape") and elem.shape == ():
        return ember.as_tensor(batch)
    if isinstance(elem, float):
        return ember.tensor(batch, dtype=ember.float64)
    if isinstance(elem, bool):
        return ember.tensor(batch)
    if isinstance(elem, int):
        return ember.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = elem.copy()
                clone.update({key: default_collate([d[key] for d in batch]) for key in elem})
                return clone
            return elem_type({key: default_collate([d[key] for d in batch]) for key in elem})
        except TypeError:
            return {key: default_collate([d[key] for d in batch]) for key in elem}
    if _is_namedtuple(elem):
        return elem_type(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = elem.copy()
                for i, samples in enumerate(transposed):
                    clone[i] = default_collate(samples)
                return clone
            return elem_type([default_collate(samples) for samples in transposed])
        except TypeError:
            return [default_collate(samples) for samples in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))
