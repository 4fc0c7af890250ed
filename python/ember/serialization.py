"""ember.save / ember.load in PyTorch's file format, so checkpoints move both ways.

The file is a zip archive (stored, not compressed) with records under one prefix:
``data.pkl`` (the object, pickled with protocol 2; each tensor storage is a persistent id
``('storage', torch.<Type>Storage, key, location, numel)``), ``data/<key>`` (a storage's raw
little-endian bytes, aligned to 64 bytes in the file), ``byteorder``, ``version``,
``.format_version``, ``.storage_alignment`` and ``.data/serialization_id``. Pickles name torch's
globals (``torch._utils._rebuild_tensor_v2``, ``torch.FloatStorage``, ``torch.Size``, ...) and the
unpickler maps them to ember without importing torch. Loading is safe by default
(``weights_only=True``): only tensors, containers, primitive types and allow-listed globals.
The zip container itself is written and read by libember (``ember/serialize/zip_archive.h``,
bound as ``ember._C._serialization.ZipReader`` / ``ZipWriter``); the pickle layer is Python.
"""
import _compat_pickle
import collections
import contextlib
import io
import os
import pickle
import random
import struct
import sys
import tempfile

import numpy as np

import ember
from ember import _C

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals",
           "DEFAULT_PROTOCOL"]

DEFAULT_PROTOCOL = 2
_ALIGN = 64

# torch.<Name>Storage for each dtype (the typed-storage names torch still writes).
_STORAGE_NAMES = {
    "float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage", "bfloat16": "BFloat16Storage",
    "int64": "LongStorage", "int32": "IntStorage", "int16": "ShortStorage", "int8": "CharStorage",
    "uint8": "ByteStorage", "bool": "BoolStorage", "complex64": "ComplexFloatStorage",
    "complex128": "ComplexDoubleStorage",
}
_DTYPES = {name: getattr(ember, name) for name in _STORAGE_NAMES}
_NAME_OF_DTYPE = {v: k for k, v in _DTYPES.items()}
_TORCH_DTYPE_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "long": "int64", "int": "int32",
                        "short": "int16", "cfloat": "complex64", "cdouble": "complex128"}


def _dtype_name(dt):
    return str(dt).split(".")[-1]


# ---------------------------------------------------------------- pickling (save)
class _TorchGlobal:
    """A torch global (module, name) that ember's pickler writes by name, never importing torch."""
    _cache = {}

    def __new__(cls, module, name):
        key = (module, name)
        if key not in cls._cache:
            obj = super().__new__(cls)
            obj.module, obj.name = module, name
            cls._cache[key] = obj
        return cls._cache[key]

    def __call__(self, *args):  # never called while pickling; keeps pickle's REDUCE contract
        raise RuntimeError(f"{self.module}.{self.name} is a placeholder for pickling")


_REBUILD_TENSOR = _TorchGlobal("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _TorchGlobal("torch._utils", "_rebuild_parameter")
_TORCH_SIZE = _TorchGlobal("torch", "Size")
_TORCH_DEVICE = _TorchGlobal("torch", "device")


class _StorageRef:
    __slots__ = ("key", "dtype", "numel")

    def __init__(self, key, dtype, numel):
        self.key, self.dtype, self.numel = key, dtype, numel


def _parameter_type():
    nn = sys.modules.get("ember.nn")
    return getattr(nn, "Parameter", None) if nn is not None else None


class _Pickler(pickle._Pickler):
    """Protocol-2 pickler that writes tensors the way torch.save does."""

    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.storages = {}     # storage id -> (key, dtype, storage bytes tensor)
        self.param_type = _parameter_type()

    def persistent_id(self, obj):
        if isinstance(obj, _StorageRef):
            return ("storage", _TorchGlobal("torch", _STORAGE_NAMES[_dtype_name(obj.dtype)]), obj.key, "cpu",
                    obj.numel)
        return None

    def _storage_ref(self, t):
        sid = t._storage_id()
        dt = t.dtype
        if sid in self.storages:
            key, sdt, _ = self.storages[sid]
            if sdt != dt:
                raise RuntimeError("Cannot save multiple tensors or storages that view the same data as different "
                                   "types")
        else:
            key = str(len(self.storages))
            self.storages[sid] = (key, dt, _C._serialization.storage_bytes(t))
        nbytes = _C._serialization.storage_nbytes(t)
        return _StorageRef(key, dt, nbytes // t.element_size())

    def save(self, obj, save_persistent_id=True):
        if isinstance(obj, _TorchGlobal):
            return self._save_torch_global(obj)
        if isinstance(obj, ember.dtype):
            return self._save_torch_global(_TorchGlobal("torch", _dtype_name(obj)))
        return super().save(obj, save_persistent_id)

    def _save_torch_global(self, g):
        memo = self.memo.get(id(g))
        if memo is not None:
            self.write(self.get(memo[0]))
            return
        self.write(pickle.GLOBAL + f"{g.module}\n{g.name}\n".encode("utf-8"))
        self.memoize(g)

    def reducer_override(self, obj):
        if isinstance(obj, ember.Tensor):
            if obj.device.type != "cpu":
                raise NotImplementedError(f"ember.save: tensors on {obj.device} are not supported")
            if self.param_type is not None and isinstance(obj, self.param_type):
                return (_REBUILD_PARAMETER, (obj.detach(), obj.requires_grad, collections.OrderedDict()))
            return (_REBUILD_TENSOR, (self._storage_ref(obj), obj.storage_offset(), tuple(obj.shape),
                                      tuple(obj.stride()), obj.requires_grad, collections.OrderedDict()))
        if isinstance(obj, ember.Size):
            return (_TORCH_SIZE, (tuple(obj),))
        if isinstance(obj, ember.device):
            return (_TORCH_DEVICE, (str(obj),))
        return NotImplemented


def _zip_prefix(f):
    if isinstance(f, (str, os.PathLike)):
        stem = os.path.splitext(os.path.basename(os.fspath(f)))[0]
        return stem or "archive"
    return "archive"


def _write_archive(writer, prefix, pickled, storages):
    """The records in torch's order; the C++ writer (ember/serialize/zip_archive.h) aligns each
    record's data to 64 bytes and writes the central directory and ZIP64 end records."""
    try:
        writer.write_record(f"{prefix}/data.pkl", pickled)
        writer.write_record(f"{prefix}/.format_version", b"1")
        writer.write_record(f"{prefix}/.storage_alignment", str(_ALIGN).encode())
        writer.write_record(f"{prefix}/byteorder", sys.byteorder.encode())
        for key, _, raw in storages.values():
            writer.write_record(f"{prefix}/data/{key}", raw)   # the storage's bytes, straight from memory
        writer.write_record(f"{prefix}/version", b"3\n")
        sid = "".join(random.choice("0123456789") for _ in range(40))
        writer.write_record(f"{prefix}/.data/serialization_id", sid.encode())
        writer.finish()
    except BaseException:
        writer.abort()      # a path's temporary file goes; the previous file is untouched
        raise


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Saves obj to a path or a writable binary file object in torch.save's zip format.

    A path is written atomically: to a temporary file in the same directory, flushed to disk,
    then renamed over the target, so an interrupted save leaves the previous file intact.
    """
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("ember.save: the legacy (non-zip) format is not supported; "
                                  "use _use_new_zipfile_serialization=True")
    buf = io.BytesIO()
    pickler = _Pickler(buf, pickle_protocol or DEFAULT_PROTOCOL)
    pickler.dump(obj)           # before the file is touched: an unpicklable object leaves it as it was
    if not isinstance(f, (str, os.PathLike)) and not hasattr(f, "write"):
        raise AttributeError(f"ember.save: expected a path or a writable file object, got {type(f).__name__}")
    _write_archive(_C._serialization.ZipWriter(f), _zip_prefix(f), buf.getbuffer(), pickler.storages)


# ---------------------------------------------------------------- unpickling (load)
class _StorageType:
    """What the unpickler gives for torch.<Type>Storage / torch.UntypedStorage: the storage's dtype."""

    def __init__(self, name, dtype):
        self.name, self.dtype = name, dtype

    def __repr__(self):
        return f"torch.{self.name}"


_STORAGE_TYPES = {v: _StorageType(v, _DTYPES[k]) for k, v in _STORAGE_NAMES.items()}
_STORAGE_TYPES["UntypedStorage"] = _StorageType("UntypedStorage", ember.uint8)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None,
                       metadata=None):
    if not isinstance(storage, ember.Tensor):
        raise pickle.UnpicklingError("ember.load: _rebuild_tensor_v2 expects a storage")
    if not isinstance(size, (tuple, list)) or not isinstance(stride, (tuple, list)) or \
            not isinstance(storage_offset, int):
        raise pickle.UnpicklingError("ember.load: _rebuild_tensor_v2 expects size and stride tuples")
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise pickle.UnpicklingError("ember.load: tensor size and stride have different lengths")
    if any(s < 0 for s in size) or any(s < 0 for s in stride) or storage_offset < 0:
        raise pickle.UnpicklingError("ember.load: negative tensor size, stride or offset")
    extent = storage_offset + (sum((n - 1) * s for n, s in zip(size, stride)) + 1 if all(size) else 0)
    if extent > storage.numel():
        raise pickle.UnpicklingError(f"ember.load: tensor of size {list(size)} and stride {list(stride)} at "
                                     f"offset {storage_offset} lies outside its storage of {storage.numel()} "
                                     "elements")
    t = storage.as_strided(size, stride, storage_offset)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _rebuild_tensor_v2(storage, storage_offset, size, stride)


def _rebuild_parameter(data, requires_grad, backward_hooks=None):
    param = _parameter_type()
    if param is not None:
        return param(data, requires_grad)
    return data.detach().requires_grad_(requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    p = _rebuild_parameter(data, requires_grad, backward_hooks)
    if state:
        for k, v in (state.items() if isinstance(state, dict) else []):
            setattr(p, k, v)
    return p


def _torch_size(*args):
    if len(args) != 1 or not isinstance(args[0], (tuple, list)):
        raise pickle.UnpicklingError("ember.load: torch.Size expects a tuple")
    return ember.Size(*args)


def _torch_device(*args):
    return ember.device(*args)


def _torch_globals():
    table = {
        ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
        ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
        ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
        ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter_with_state,
        ("torch", "Size"): _torch_size,
        ("torch", "device"): _torch_device,
        ("torch.storage", "UntypedStorage"): _STORAGE_TYPES["UntypedStorage"],
        ("collections", "OrderedDict"): collections.OrderedDict,
    }
    for name, st in _STORAGE_TYPES.items():
        table[("torch", name)] = st
    for name, dt in _DTYPES.items():
        table[("torch", name)] = dt
    for alias, name in _TORCH_DTYPE_ALIASES.items():
        table[("torch", alias)] = _DTYPES[name]
    return table


_TORCH_GLOBALS = _torch_globals()
# Harmless builtins allowed under weights_only=True (containers and numbers only; nothing callable
# that could run code or reach the file system).
def _no_lazy_sizes(ctor):
    """ctor as a weights_only global, refusing the arguments that let a few pickle bytes allocate
    gigabytes (bytes(10**10), list(range(10**10)), ...): a size, or a lazy range to expand."""
    sized = ctor in (bytes, bytearray)

    def build(*args, **kwargs):
        if (sized and args and isinstance(args[0], int)) or any(isinstance(a, range) for a in args):
            raise pickle.UnpicklingError(f"ember.load: refusing {ctor.__name__}{tuple(map(type, args))} in a "
                                         "weights_only load (its size does not come from the file)")
        return ctor(*args, **kwargs)
    build.__name__ = build.__qualname__ = ctor.__name__
    build.wrapped = ctor
    return build


def _defaultdict(factory=None, *args):
    # a factory named in the file (list, set, ...) is the real type again, not the guard
    return collections.defaultdict(getattr(factory, "wrapped", factory), *args)


# Harmless builtins allowed under weights_only=True (containers and numbers only; nothing callable
# that could run code or reach the file system; sizes come from the file's own bytes).
_SAFE_BUILTINS = {("builtins", n): _no_lazy_sizes(getattr(__import__("builtins"), n))
                  for n in ("set", "frozenset", "tuple", "list", "dict", "bytearray", "bytes")}
_SAFE_BUILTINS.update({("builtins", n): getattr(__import__("builtins"), n)
                       for n in ("slice", "complex", "range", "int", "float", "bool", "str")})
_SAFE_BUILTINS[("collections", "defaultdict")] = _defaultdict
_SAFE_BUILTINS[("collections", "Counter")] = _no_lazy_sizes(collections.Counter)
_SAFE_BUILTINS[("_codecs", "encode")] = __import__("codecs").encode  # how protocol-2 pickles spell bytes

_user_safe_globals = []


def add_safe_globals(safe_globals):
    """Allows these globals (objects, or (object, "module.name") pairs) in weights_only loads."""
    _user_safe_globals.extend(safe_globals)


def get_safe_globals():
    """The globals added by add_safe_globals."""
    return list(_user_safe_globals)


def clear_safe_globals():
    """Forgets every global added by add_safe_globals."""
    _user_safe_globals.clear()


@contextlib.contextmanager
def safe_globals(safe_globals):
    """Context manager that allows these globals in weights_only loads while it is active."""
    n = len(_user_safe_globals)
    _user_safe_globals.extend(safe_globals)
    try:
        yield
    finally:
        del _user_safe_globals[n:]


def _user_global(module, name):
    full = f"{module}.{name}"
    for g in _user_safe_globals:
        if isinstance(g, (tuple, list)) and len(g) == 2:
            obj, gname = g
            if gname == full:
                return obj
        elif f"{getattr(g, '__module__', '')}.{getattr(g, '__qualname__', getattr(g, '__name__', ''))}" == full:
            return g
    return None


class _UnpicklerMixin:
    """find_class and persistent_load shared by both unpicklers (see _Unpickler)."""

    def __init__(self, file, load_storage, weights_only, **kwargs):
        super().__init__(file, **kwargs)
        self.load_storage = load_storage
        self.weights_only = weights_only

    def find_class(self, module, name):
        # protocol-2 pickles spell Python 3 modules the Python 2 way (__builtin__, copy_reg, ...)
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        key = (module, name)
        if key in _TORCH_GLOBALS:
            return _TORCH_GLOBALS[key]
        if key in _SAFE_BUILTINS:
            return _SAFE_BUILTINS[key]
        user = _user_global(module, name)
        if user is not None:
            return user
        if self.weights_only:
            raise pickle.UnpicklingError(
                "Weights only load failed. ember.load with weights_only=True refuses to unpickle arbitrary "
                f"objects, and the file needs the global {module}.{name}. If you trust the file, load it with "
                f"weights_only=False, or allow the global with ember.serialization.add_safe_globals([{name}]) "
                "or the ember.serialization.safe_globals context manager.")
        if module == "torch" or module.startswith("torch."):
            raise pickle.UnpicklingError(f"ember.load: the torch global {module}.{name} has no ember equivalent")
        return super().find_class(module, name)

    def persistent_load(self, pid):
        if not isinstance(pid, tuple) or len(pid) < 5 or pid[0] != "storage":
            raise pickle.UnpicklingError(f"ember.load: unsupported persistent id {pid!r:.100}")
        _, storage_type, key, location, numel = pid[:5]
        if not isinstance(storage_type, _StorageType):
            raise pickle.UnpicklingError(f"ember.load: {storage_type!r:.100} is not a storage type")
        if not isinstance(key, str) or not isinstance(numel, int) or numel < 0:
            raise pickle.UnpicklingError("ember.load: malformed storage record")
        return self.load_storage(storage_type.dtype, key, str(location), numel)


class _SafeUnpickler(_UnpicklerMixin, pickle._Unpickler):
    pass


class _FastUnpickler(_UnpicklerMixin, pickle.Unpickler):
    pass


def _Unpickler(file, load_storage, weights_only, **kwargs):
    """Note [Unpickling untrusted files]: weights_only loads use pickle's pure-Python unpickler,
    whose memo is a dict. The C unpickler grows its memo array to twice the largest PUT index,
    zero-filling it, so an 8-byte LONG_BINPUT in a hostile file costs gigabytes before anything
    else is checked. The pure-Python one is slower (about 15 us a tensor); trusted loads
    (weights_only=False) keep the C one."""
    cls = _SafeUnpickler if weights_only else _FastUnpickler
    return cls(file, load_storage, weights_only, **kwargs)


class _UserError(Exception):
    """An exception from the caller's own code (a map_location callable) met while unpickling:
    _unpickle re-raises the original instead of blaming the file."""

    def __init__(self, error):
        super().__init__(error)
        self.error = error


def _call_user(fn, *args):
    try:
        return fn(*args)
    except Exception as e:
        raise _UserError(e) from None


def _unpickle(unpickler, weights_only):
    """Runs the unpickler; in a weights_only load any failure is the file's fault and raises
    pickle.UnpicklingError (a RuntimeError of ours, e.g. a bad storage record, passes as is)."""
    try:
        return unpickler.load()
    except _UserError as e:
        raise e.error from None
    except (pickle.UnpicklingError, RuntimeError):
        raise
    except (EOFError, struct.error, MemoryError, RecursionError, OverflowError, UnicodeDecodeError) as e:
        raise pickle.UnpicklingError(f"ember.load: corrupted data.pkl ({type(e).__name__}: {e})") from None
    except Exception as e:
        if not weights_only:
            raise
        raise pickle.UnpicklingError(f"ember.load: corrupted data.pkl ({type(e).__name__}: {e})") from None


def _location_for(map_location, location):
    """Device string a storage saved at `location` should land on (None: keep, checked later)."""
    if map_location is None:
        return location
    if isinstance(map_location, dict):
        return map_location.get(location, location)
    if isinstance(map_location, (str, ember.device)):
        return str(map_location)
    return location


def _check_location(loc):
    dev = str(loc)
    if dev.startswith("cuda"):
        raise RuntimeError("Attempting to deserialize object on a CUDA device but ember has no CUDA backend "
                           "in this build. If you are running on a CPU-only machine, please use ember.load with "
                           "map_location=ember.device('cpu') to map your storages to the CPU.")
    if dev != "cpu" and not dev.startswith("cpu:"):
        raise RuntimeError(f"ember.load: don't know how to restore data location {dev!r}")


def _byteswap(arr_u8, dtype):
    item = ember.empty(0, dtype=dtype).element_size()
    if dtype in (ember.complex64, ember.complex128):
        item //= 2
    if item > 1:
        a = arr_u8.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[item])
        a.byteswap(inplace=True)


_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Loads an object saved by ember.save or torch.save (zip format, or torch's legacy format).

    weights_only (default True, as torch 2.6+): only tensors, primitive types, containers and
    globals allowed with add_safe_globals are unpickled; False unpickles anything (trusted files
    only). map_location: a device string or ember.device, a dict from saved to new locations, or
    a callable(storage, location) returning a storage or None. mmap=True maps the storages from
    the file (copy-on-write) instead of reading them.
    """
    if weights_only is None:
        weights_only = os.environ.get("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0") not in ("1", "true", "True")
    if pickle_module is not None and weights_only:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    try:
        if isinstance(f, (str, os.PathLike)):
            path = os.fspath(f)
            with open(path, "rb") as fh:
                if fh.read(4) != _ZIP_MAGIC:
                    fh.seek(0)
                    return _load_not_zip(fh, map_location, weights_only, bool(mmap), pickle_load_args)
            # the C++ reader opens the path itself (pread, without the GIL)
            return _load_zip(path, path if mmap else None, map_location, weights_only, pickle_load_args)
        if mmap and not isinstance(getattr(f, "name", None), str):
            raise ValueError("f must be a file path in order to use the mmap argument")
        start = f.tell()
        head = f.read(4)
        f.seek(start)
        if head != _ZIP_MAGIC:
            return _load_not_zip(f, map_location, weights_only, bool(mmap), pickle_load_args)
        return _load_zip(f, f.name if mmap else None, map_location, weights_only, pickle_load_args)
    except (EOFError, struct.error, OverflowError, UnicodeDecodeError, MemoryError, RecursionError) as e:
        raise RuntimeError(f"ember.load: corrupted or truncated file ({type(e).__name__}: {e})") from None


_ZIP_MAGIC = b"PK\x03\x04"   # a zip archive starts with a local header, as torch checks


def _load_not_zip(f, map_location, weights_only, use_mmap, pickle_load_args):
    start = f.tell()
    head = f.read(64)
    f.seek(start)
    if head[:1] == b"\x80":
        try:
            # the safe unpickler: these are the file's first bytes, not yet known to be a checkpoint
            magic = _Unpickler(io.BytesIO(head[: head.index(b".") + 1]), None, True).load() if b"." in head else None
        except Exception:
            magic = None
        if magic == _LEGACY_MAGIC:
            if use_mmap:
                raise RuntimeError("mmap can only be used with files saved with "
                                   "`torch.save(_use_new_zipfile_serialization=True)`, please torch.save your "
                                   "checkpoint with this option in order to use mmap.")
            return _legacy_load(f, map_location, weights_only, pickle_load_args)
    raise RuntimeError("ember.load: not a checkpoint in torch's zip format (the file is not a zip archive)")


def _legacy_load(f, map_location, weights_only, pickle_load_args):
    """torch's pre-1.6 format: pickled magic, protocol and sys_info, the object (storages as
    persistent ids), the list of storage keys, then each storage as an int64 count and raw bytes."""
    def plain():
        return _unpickle(_Unpickler(f, None, True, **pickle_load_args), True)

    if plain() != _LEGACY_MAGIC:
        raise RuntimeError("ember.load: invalid magic number; corrupt file?")
    protocol = plain()
    if protocol != 1001:
        raise RuntimeError(f"ember.load: invalid protocol version: {protocol}")
    sys_info = plain()
    little = sys_info.get("little_endian", True) if isinstance(sys_info, dict) else True
    storages = {}   # root key -> (dtype, uint8 tensor of its bytes, typed view)
    claimed = [0]   # bytes of all storages so far: together they must fit in the file
    pos = f.tell()
    f.seek(0, os.SEEK_END)
    file_size = f.tell()
    f.seek(pos)

    def load_storage(dtype, key, location, numel, view_metadata=None):
        if key not in storages:
            item = ember.empty(0, dtype=dtype).element_size()
            claimed[0] += numel * item
            if claimed[0] > file_size:
                raise RuntimeError(f"ember.load: storage {key} claims more bytes than the file holds")
            raw = ember.empty(numel * item, dtype=ember.uint8)
            typed = raw.view(dtype)
            if callable(map_location) and not isinstance(map_location, (dict, str, ember.device)):
                result = _call_user(map_location, typed, location)
                if result is not None and not (isinstance(result, ember.Tensor) and result.data_ptr() ==
                                                typed.data_ptr()):
                    raise NotImplementedError("ember.load: a map_location callable that copies storages is not "
                                              "supported for legacy-format files")
            else:
                _check_location(_location_for(map_location, location))
            storages[key] = (dtype, raw, typed)
        dtype0, raw, typed = storages[key]
        if view_metadata is not None:
            _, offset, size = view_metadata
            return typed[offset:offset + size]
        return typed

    class _LegacyUnpickler(_SafeUnpickler if weights_only else _FastUnpickler):
        def persistent_load(self, pid):
            if isinstance(pid, tuple) and len(pid) == 6 and pid[0] == "storage":
                _, storage_type, key, location, numel, view = pid
                if not isinstance(storage_type, _StorageType) or not isinstance(numel, int) or numel < 0:
                    raise pickle.UnpicklingError("ember.load: malformed storage record")
                return self.load_storage(storage_type.dtype, str(key), str(location), numel, view)
            if isinstance(pid, tuple) and pid and pid[0] == "module":
                raise pickle.UnpicklingError("ember.load: legacy files with pickled torch modules are not supported")
            raise pickle.UnpicklingError(f"ember.load: unsupported persistent id {pid!r:.100}")

    result = _unpickle(_LegacyUnpickler(f, load_storage, weights_only, **pickle_load_args), weights_only)
    keys = plain()
    for key in keys:
        key = str(key)
        if key not in storages:
            raise RuntimeError(f"ember.load: storage {key} listed but never referenced")
        dtype, raw, _ = storages[key]
        head = f.read(8)
        if len(head) != 8:
            raise RuntimeError("ember.load: legacy file is truncated")
        count = int.from_bytes(head, "little" if little else "big")
        if count * ember.empty(0, dtype=dtype).element_size() != raw.numel():
            raise RuntimeError(f"ember.load: storage {key} holds {count} elements, its tensors expect a different "
                               "size")
        arr = raw.numpy()
        if raw.numel() and f.readinto(memoryview(arr)) != raw.numel():
            raise RuntimeError("ember.load: legacy file is truncated")
        if little != (sys.byteorder == "little"):
            _byteswap(arr, dtype)
    return result


def _load_zip(source, mmap_path, map_location, weights_only, pickle_load_args):
    """The zip format, read by the C++ archive reader (ember/serialize/zip_archive.h), which checks
    every size and offset against the file and each record's CRC-32; mmap_path: map storages."""
    S = _C._serialization
    mapped = S.MappedFile(mmap_path) if mmap_path is not None else None
    # headers are read with pread even when mapping: through the mapping, each local header would
    # fault in (and count in RSS) the 64 KiB of file around it
    reader = S.ZipReader(mmap_path if mmap_path is not None else source)
    pkl = [n for n in reader.names() if n.endswith("/data.pkl") and n.count("/") == 1]
    if not pkl:
        raise RuntimeError("ember.load: archive has no <name>/data.pkl record")
    prefix = pkl[0][: -len("/data.pkl")]
    byteorder = "little"
    if reader.has_record(f"{prefix}/byteorder"):
        byteorder = reader.read(f"{prefix}/byteorder").decode("ascii", "replace")
        if byteorder not in ("little", "big"):
            raise RuntimeError(f"ember.load: unknown byteorder {byteorder!r:.40}")
    swap = byteorder != sys.byteorder
    loaded = {}

    def load_storage(dtype, key, location, numel):
        if key in loaded:
            st = loaded[key]
            if st.dtype != dtype:
                st = st.view(ember.uint8).view(dtype) if (st.numel() * st.element_size()) % \
                    ember.empty(0, dtype=dtype).element_size() == 0 else st
            return st
        name = f"{prefix}/data/{key}"
        if not reader.has_record(name):
            raise RuntimeError(f"ember.load: archive is missing the storage record {name:.200}")
        item = ember.empty(0, dtype=dtype).element_size()
        nbytes = numel * item
        size = reader.size(name)
        if size != nbytes:      # checked before allocating: the record's size is bounded by the file
            raise RuntimeError(f"ember.load: storage record {name} holds {size} bytes, expected "
                               f"{nbytes} ({numel} elements of {_dtype_name(dtype)})")
        if nbytes == 0:
            raw = ember.empty(0, dtype=ember.uint8)
        elif mapped is not None and reader.is_stored(name) and reader.data_offset(name) % item == 0:
            raw = mapped.tensor(reader.data_offset(name), nbytes)     # aliases the file, copy-on-write
        else:
            raw = ember.empty(nbytes, dtype=ember.uint8)
            reader.read_into(name, raw)                               # straight into the tensor
        if swap:
            _byteswap(raw.numpy(), dtype)
        storage = raw.view(dtype)
        if callable(map_location) and not isinstance(map_location, (dict, str, ember.device)):
            result = _call_user(map_location, storage, location)
            if result is not None:
                storage = result
        else:
            _check_location(_location_for(map_location, location))
        loaded[key] = storage
        return storage

    data = reader.read(pkl[0])
    return _unpickle(_Unpickler(io.BytesIO(data), load_storage, weights_only, **pickle_load_args), weights_only)
