"""The safetensors format with the API of ``safetensors.torch``: save_file, load_file, save, load,
save_model, load_model and safe_open (keys, metadata, get_tensor, get_slice).

A file is an 8-byte little-endian header length N, N bytes of JSON (``{"__metadata__": {str: str},
name: {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, ...}``, padded with spaces
to a multiple of 8), then the tensors' bytes, back to back, which the offsets must cover exactly.
Files are read through a copy-on-write mapping (``ember._C._serialization.MappedFile``): a loaded
tensor aliases the mapped file, nothing is copied, and writing to it never changes the file.
Headers are untrusted input: every size and offset is checked before use.
"""
import json
import os
import sys

import ember
from ember import _C

__all__ = ["save_file", "load_file", "save", "load", "save_model", "load_model", "safe_open", "SafetensorError"]

_MAX_HEADER = 100_000_000   # the format's limit on the JSON header

_DTYPES = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16", "I64": "int64",
           "I32": "int32", "I16": "int16", "I8": "int8", "U8": "uint8", "BOOL": "bool", "C64": "complex64"}
_CODES = {name: code for code, name in _DTYPES.items()}
# The writer's order (safetensors' dtype rank, descending, then the name): larger elements come
# first, so every tensor's data stays aligned to its element size; ember's files match byte for byte.
_RANK = {code: i for i, code in enumerate(["BOOL", "U8", "I8", "I16", "F16", "BF16", "I32", "F32", "C64", "F64",
                                           "I64"])}
_UNSUPPORTED = ("F8_E4M3", "F8_E4M3FNUZ", "F8_E5M2", "F8_E5M2FNUZ", "F8_E8M0", "F4", "F6_E2M3", "F6_E3M2", "U16",
                "U32", "U64")


class SafetensorError(Exception):
    """A malformed safetensors file (safetensors' own error class has this name)."""


def _dtype_name(dt):
    return str(dt).split(".")[-1]


def _itemsize(dt):
    return ember.empty(0, dtype=dt).element_size()


# ------------------------------------------------------------------------------------ header
def _no_duplicates(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise SafetensorError(f"Error while deserializing header: duplicate key {k!r:.80}")
        out[k] = v
    return out


def _parse_header(head8, read_header, total):
    """(metadata, {name: (dtype, shape, begin, end)}, data_start) after checking the header
    against the file: the offsets must cover the data exactly, as the format requires."""
    if total < 8 or len(head8) < 8:
        raise SafetensorError("Error while deserializing header: the file is shorter than 8 bytes")
    n = int.from_bytes(head8[:8], "little")
    if n > _MAX_HEADER:
        raise SafetensorError(f"Error while deserializing header: header of {n} bytes is too large")
    if 8 + n > total:
        raise SafetensorError(f"Error while deserializing header: header of {n} bytes runs past the end of the "
                              f"{total}-byte file")
    try:
        header = json.loads(bytes(read_header(n)).decode("utf-8"), object_pairs_hook=_no_duplicates)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        if isinstance(e, SafetensorError):
            raise
        raise SafetensorError(f"Error while deserializing header: invalid JSON in header: {e}") from None
    if not isinstance(header, dict):
        raise SafetensorError("Error while deserializing header: the header is not a JSON object")
    metadata = header.pop("__metadata__", None)
    if metadata is not None and (not isinstance(metadata, dict) or
                                 not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())):
        raise SafetensorError("Error while deserializing header: __metadata__ must map strings to strings")
    data_len = total - 8 - n
    entries = {}
    for name, info in header.items():
        if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
            raise SafetensorError(f"Error while deserializing header: bad entry for tensor {name!r:.80}")
        code, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
        if code in _UNSUPPORTED:
            raise NotImplementedError(f"safetensors: tensor {name!r} has dtype {code}, which ember does not "
                                      "support")
        if code not in _DTYPES:
            raise SafetensorError(f"Error while deserializing header: unknown dtype {code!r:.20} for {name!r:.80}")
        if (not isinstance(shape, list) or not all(type(s) is int and s >= 0 for s in shape) or
                not isinstance(offsets, list) or len(offsets) != 2 or
                not all(type(o) is int and o >= 0 for o in offsets) or offsets[0] > offsets[1]):
            raise SafetensorError(f"Error while deserializing header: bad shape or data_offsets for {name!r:.80}")
        dt = getattr(ember, _DTYPES[code])
        numel = 1
        for s in shape:
            numel *= s
        if numel * _itemsize(dt) != offsets[1] - offsets[0]:
            raise SafetensorError(f"Error while deserializing header: tensor {name!r:.80} of shape {shape} and dtype "
                                  f"{code} needs {numel * _itemsize(dt)} bytes, its offsets give "
                                  f"{offsets[1] - offsets[0]}")
        entries[name] = (dt, shape, offsets[0], offsets[1])
    pos = 0
    for name, (_, _, begin, end) in sorted(entries.items(), key=lambda kv: (kv[1][2], kv[1][3])):
        if begin != pos:
            raise SafetensorError(f"Error while deserializing header: tensor {name!r:.80} starts at {begin}, "
                                  f"expected {pos} (the data must be covered without holes or overlaps)")
        pos = end
    if pos != data_len:
        raise SafetensorError(f"Error while deserializing header: the tensors cover {pos} bytes of data, the file "
                              f"holds {data_len}")
    return metadata, entries, 8 + n


def _check_device(device):
    dev = str(device) if not isinstance(device, int) else f"cuda:{device}"
    if dev != "cpu" and not dev.startswith("cpu:"):
        raise RuntimeError(f"safetensors: device {dev!r} is not available; ember loads safetensors on the CPU")


def _byteswapped(t):
    # files are little-endian; on a big-endian host each tensor gets its bytes reversed
    if sys.byteorder == "little" or t.element_size() == 1:
        return t
    import numpy as np
    item = t.element_size() // (2 if t.is_complex() else 1)
    raw = t.contiguous().view(ember.uint8).clone()
    raw.numpy().view({2: np.uint16, 4: np.uint32, 8: np.uint64}[item]).byteswap(inplace=True)
    return raw.view(t.dtype).view(t.shape)


# ------------------------------------------------------------------------------------ reading
class safe_open:
    """Opens a safetensors file lazily: ``with safe_open(path, framework="pt") as f:`` then
    ``f.keys()``, ``f.metadata()``, ``f.get_tensor(name)`` (a tensor aliasing the mapped file) and
    ``f.get_slice(name)[...]``. framework "pt"/"torch"/"ember" gives ember tensors, "np"/"numpy"
    NumPy arrays."""

    def __init__(self, filename, framework="pt", device="cpu"):
        if framework not in ("pt", "torch", "pytorch", "ember", "np", "numpy"):
            raise ValueError(f"safe_open: framework {framework!r} is not supported (use 'pt' or 'numpy')")
        _check_device(device)
        self._numpy = framework in ("np", "numpy")
        self._file = _C._serialization.MappedFile(os.fspath(filename))
        f = self._file
        self._metadata, self._entries, self._start = _parse_header(
            f.read(0, min(8, f.size)), lambda n: f.read(8, n), f.size)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def keys(self):
        """Tensor names, sorted."""
        return sorted(self._entries)

    def offset_keys(self):
        """Tensor names in the order of their data in the file."""
        return [k for k, _ in sorted(self._entries.items(), key=lambda kv: kv[1][2])]

    def metadata(self):
        """The header's __metadata__ (a dict of strings), or None."""
        return None if self._metadata is None else dict(self._metadata)

    def _tensor(self, name):
        try:
            dt, shape, begin, end = self._entries[name]
        except KeyError:
            raise SafetensorError(f"File does not contain tensor {name}") from None
        offset = self._start + begin
        if end == begin:
            return ember.empty(shape, dtype=dt)
        raw = self._file.tensor(offset, end - begin)        # aliases the mapping: no copy
        if offset % _itemsize(dt):                           # misaligned for its dtype: copy once
            raw = raw.clone()
        return _byteswapped(raw.view(dt).view(shape))

    def get_tensor(self, name):
        t = self._tensor(name)
        return t.numpy() if self._numpy else t

    def get_tensors(self):
        return {k: self.get_tensor(k) for k in self.offset_keys()}

    def get_slice(self, name):
        return _Slice(self, name)


class _Slice:
    """A lazily indexed tensor of a safe_open file (safetensors' PySafeSlice)."""

    def __init__(self, f, name):
        if name not in f._entries:
            raise SafetensorError(f"File does not contain tensor {name}")
        self._f, self._name = f, name

    def get_shape(self):
        return list(self._f._entries[self._name][1])

    def get_dtype(self):
        return _CODES[_dtype_name(self._f._entries[self._name][0])]

    def __getitem__(self, index):
        t = self._f._tensor(self._name)[index].clone()      # a slice of the mapping, then its own memory
        return t.numpy() if self._f._numpy else t


def load_file(filename, device="cpu", *, backend="mmap"):
    """Loads every tensor of a safetensors file; each aliases the file's copy-on-write mapping."""
    if backend not in ("mmap", "pread"):
        raise ValueError(f"load_file: unknown backend {backend!r}")
    with safe_open(filename, framework="pt", device=device) as f:
        return {k: f.get_tensor(k) for k in f.offset_keys()}


def load(data):
    """Loads safetensors bytes (tensors get their own memory)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"load: expected bytes, got {type(data).__name__}")
    data = memoryview(data).cast("B")
    _, entries, start = _parse_header(bytes(data[:8]), lambda n: data[8:8 + n], len(data))
    import numpy as np
    out = {}
    for name, (dt, shape, begin, end) in sorted(entries.items(), key=lambda kv: kv[1][2]):
        raw = ember.empty(end - begin, dtype=ember.uint8)
        if end > begin:
            raw.numpy()[:] = np.frombuffer(data, dtype=np.uint8, count=end - begin, offset=start + begin)
        out[name] = _byteswapped(raw.view(dt).view(shape))
    return out


# ------------------------------------------------------------------------------------ writing
def _storage_key(t):
    return _C._serialization.storage_bytes(t).data_ptr(), _C._serialization.storage_nbytes(t)


def _shared_groups(tensors):
    """Names whose tensors overlap in memory (tensors of one storage that do not overlap are fine)."""
    by_storage = {}
    for k, v in tensors.items():
        if v.numel() and _C._serialization.storage_nbytes(v):
            by_storage.setdefault(_storage_key(v), []).append(k)
    groups = []
    for names in by_storage.values():
        if len(names) < 2:
            continue
        spans = sorted((tensors[k].data_ptr(), tensors[k].data_ptr() + tensors[k].numel() *
                        tensors[k].element_size(), k) for k in names)
        group, end = {spans[0][2]}, spans[0][1]
        for start, stop, k in spans[1:]:
            if start < end:
                group.add(k)
                end = max(end, stop)
            else:
                if len(group) > 1:
                    groups.append(group)
                group, end = {k}, stop
        if len(group) > 1:
            groups.append(group)
    return groups


def _prepare(tensors, metadata):
    if not isinstance(tensors, dict):
        raise TypeError(f"expected a dict of tensors, got {type(tensors).__name__}")
    if metadata is not None:
        if not isinstance(metadata, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                     for k, v in metadata.items()):
            raise TypeError("metadata must be a dict of str to str")
    for k, v in tensors.items():
        if not isinstance(k, str):
            raise TypeError(f"tensor names must be str, got {type(k).__name__}")
        if not isinstance(v, ember.Tensor):
            raise TypeError(f"{k}: expected a tensor, got {type(v).__name__}")
        if v.device.type != "cpu":
            raise NotImplementedError(f"safetensors: tensors on {v.device} are not supported")
        if _dtype_name(v.dtype) not in _CODES:
            raise ValueError(f"safetensors: tensor {k!r} has dtype {v.dtype}, which the format cannot store")
        if not v.is_contiguous():
            raise ValueError(f"You are trying to save a non contiguous tensor: `{k}` which is not allowed. Call "
                             "`.contiguous()` on it first, or save only the full tensor and reslice at load time.")
    shared = _shared_groups(tensors)
    if shared:
        raise RuntimeError(f"Some tensors share memory, this will lead to duplicate memory on disk and potential "
                           f"differences when loading them again: {shared}. A potential way to correctly save your "
                           "model is to use `save_model`.")
    order = sorted(tensors, key=lambda k: (-_RANK[_CODES[_dtype_name(tensors[k].dtype)]], k))
    header, pos = {}, 0
    if metadata is not None:
        header["__metadata__"] = dict(metadata)
    for k in order:
        v = tensors[k]
        n = v.numel() * v.element_size()
        header[k] = {"dtype": _CODES[_dtype_name(v.dtype)], "shape": list(v.shape), "data_offsets": [pos, pos + n]}
        pos += n
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return len(text).to_bytes(8, "little") + text, [tensors[k] for k in order]


def _tensor_bytes(t):
    """The tensor's bytes (a view of its memory, little-endian)."""
    t = _byteswapped(t)
    if t.numel() == 0:
        return b""
    start = t.storage_offset() * t.element_size()
    return memoryview(_C._serialization.storage_bytes(t)[start:start + t.numel() * t.element_size()].numpy())


def save(tensors, metadata=None):
    """The safetensors bytes of a dict of contiguous tensors."""
    head, order = _prepare(tensors, metadata)
    return b"".join([head] + [bytes(_tensor_bytes(t)) for t in order])


def save_file(tensors, filename, metadata=None):
    """Writes a dict of contiguous tensors (none sharing memory) to filename."""
    head, order = _prepare(tensors, metadata)
    with open(os.fspath(filename), "wb") as f:
        f.write(head)
        for t in order:
            f.write(_tensor_bytes(t))


def _complete(t):
    return t.data_ptr() == _storage_key(t)[0] and t.numel() * t.element_size() == _storage_key(t)[1]


def _duplicates(state_dict, preferred=()):
    """{kept name: [names dropped]} for each group of tensors sharing memory (tied weights)."""
    out = {}
    for group in _shared_groups(state_dict):
        complete = sorted(k for k in group if _complete(state_dict[k]))
        if not complete:
            raise RuntimeError(f"safetensors: the tensors {sorted(group)} share memory and none covers all of it; "
                               "refusing to save them")
        keep = next((k for k in complete if k in preferred), complete[0])
        out[keep] = sorted(k for k in group if k != keep)
    return out


def save_model(model, filename, metadata=None, force_contiguous=True):
    """Saves model.state_dict(), keeping one name of each group of tied (shared) tensors."""
    state_dict = model.state_dict()
    for keep, dropped in _duplicates(state_dict).items():
        for name in dropped:
            metadata = {} if metadata is None else metadata
            metadata.setdefault(name, keep)
            del state_dict[name]
    if force_contiguous:
        state_dict = {k: v.contiguous() for k, v in state_dict.items()}
    save_file(state_dict, filename, metadata=metadata)


def load_model(model, filename, strict=True, device="cpu", *, backend="mmap"):
    """Loads a file written by save_model into model; returns (missing, unexpected) names."""
    state_dict = load_file(filename, device=device, backend=backend)
    missing, unexpected = model.load_state_dict(state_dict, strict=False)
    missing, unexpected = set(missing), list(unexpected)
    for dropped in _duplicates(model.state_dict(), preferred=set(state_dict)).values():
        for name in dropped:
            if name in missing:
                missing.remove(name)        # tied to a tensor the file did fill
            else:
                unexpected.append(name)
    if strict and (missing or unexpected):
        msg = f"Error(s) in loading state_dict for {type(model).__name__}:"
        if missing:
            msg += "\n\tMissing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in sorted(missing))
        if unexpected:
            msg += "\n\tUnexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in sorted(unexpected))
        raise RuntimeError(msg)
    return missing, unexpected
