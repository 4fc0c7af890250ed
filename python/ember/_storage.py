"""torch.layout / torch.strided, Tensor.untyped_storage() / storage() and the Tensor methods that need
them (set_, new, is_set_to, ...), plus CPU-only forms of pin_memory/is_pinned and element-wise
Python callbacks (apply_, map_, map2_). Storages are views of a tensor's bytes: they share memory
with every tensor on the same storage. Checked in tests/python/test_api_names.py.
"""
import ember as _E
from ember import _C


class layout:
    """A tensor's memory layout; ember has only torch.strided (dense, strided) tensors."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return "ember." + self._name

    def __reduce__(self):
        return self._name


strided = layout("strided")


class UntypedStorage:
    """The bytes behind one or more tensors (a 1-d uint8 tensor that shares them)."""

    def __init__(self, size=0, *, device=None):
        if isinstance(size, _E.Tensor):  # internal: wrap an existing byte tensor
            self._bytes = size
        else:
            self._bytes = _E.zeros(int(size), dtype=_E.uint8)
        self.device = _E.device("cpu")

    def nbytes(self):
        return self._bytes.numel()

    def size(self):
        return self._bytes.numel()

    def __len__(self):
        return self._bytes.numel()

    def data_ptr(self):
        return self._bytes.untyped_storage_ptr()

    def element_size(self):
        return 1

    def __getitem__(self, i):
        r = self._bytes[i]
        return r.item() if r.dim() == 0 else UntypedStorage(r.clone())

    def __setitem__(self, i, v):
        self._bytes[i] = v

    def tolist(self):
        return self._bytes.tolist()

    def fill_(self, value):
        self._bytes.fill_(value)
        return self

    def copy_(self, other):
        self._bytes.copy_(other._bytes)
        return self

    def clone(self):
        return UntypedStorage(self._bytes.clone())

    def cpu(self):
        return self

    def is_shared(self):
        return False

    @property
    def is_cuda(self):
        return False

    def __repr__(self):
        return " " + "\n ".join(str(b) for b in self._bytes.tolist()) + \
            f"\n[ember.storage.UntypedStorage(device=cpu) of size {len(self)}]"


class TypedStorage:
    """A storage seen as elements of one dtype (what Tensor.storage() returns)."""

    def __init__(self, untyped, dtype):
        self._untyped, self.dtype = untyped, dtype
        self.device = untyped.device

    def untyped(self):
        return self._untyped

    def _tensor(self):
        return self._untyped._bytes.view(self.dtype)

    def element_size(self):
        return _E.empty((), dtype=self.dtype).element_size()

    def size(self):
        return self._untyped.nbytes() // self.element_size()

    def __len__(self):
        return self.size()

    def nbytes(self):
        return self._untyped.nbytes()

    def data_ptr(self):
        return self._untyped.data_ptr()

    def __getitem__(self, i):
        return self._tensor()[i].item()

    def __setitem__(self, i, v):
        self._tensor()[i] = v

    def tolist(self):
        return self._tensor().tolist()

    def fill_(self, value):
        self._tensor().fill_(value)
        return self

    def _new_shared_like(self):
        return self

    def __repr__(self):
        return " " + "\n ".join(str(v) for v in self.tolist()) + \
            f"\n[ember.storage.TypedStorage(dtype={self.dtype}, device=cpu) of size {len(self)}]"


# ---- Tensor methods ----

def _untyped_storage(self):
    return UntypedStorage(self._storage_bytes())


def _storage(self):
    return TypedStorage(_untyped_storage(self), self.dtype)


def _storage_type(self):
    return TypedStorage


def _set_(self, source=None, storage_offset=0, size=None, stride=None):
    """This tensor takes source's storage (and, given size, the geometry size/stride/storage_offset)."""
    if source is None:
        self.data = _E.empty(0, dtype=self.dtype)
        return self
    if isinstance(source, TypedStorage):
        if source.dtype != self.dtype:
            raise RuntimeError(f"Expected a Storage of type {self.dtype} but got type {source.dtype} for argument 1 "
                               f"'storage'")
        source = source.untyped()
    if isinstance(source, UntypedStorage):
        flat = source._bytes.view(self.dtype)
        if size is None:
            size, stride, storage_offset = (flat.numel(),), (1,), 0
    elif isinstance(source, _E.Tensor):
        if source.dtype != self.dtype:
            raise RuntimeError(f"expected {self.dtype} but got {source.dtype} for argument 'source'")
        if size is None:
            self.data = source
            return self
        flat = source._storage_bytes().view(self.dtype)
    else:
        raise TypeError(f"set_(): argument 'source' must be Tensor or Storage, not {type(source).__name__}")
    if stride is None:
        stride, acc = [], 1
        for s in reversed(list(size)):
            stride.insert(0, acc)
            acc *= s
    self.data = flat.as_strided(tuple(size), tuple(stride), storage_offset)
    return self


def _is_set_to(self, other):
    """Same storage, offset, sizes and strides."""
    return (self._storage_id() == other._storage_id() and self.storage_offset() == other.storage_offset()
            and tuple(self.shape) == tuple(other.shape) and self.stride() == other.stride())


def _new(self, *args, **kwargs):
    """Legacy constructor: x.new(sizes...) (uninitialised), x.new(data) or x.new(tensor/storage); x's dtype."""
    dtype = kwargs.pop("dtype", self.dtype)
    if not args:
        return _E.empty(0, dtype=dtype)
    if len(args) == 1 and isinstance(args[0], _E.Tensor):
        if args[0].dtype != dtype:
            raise TypeError(f"expected {dtype} (got {args[0].dtype})")
        return args[0].detach()
    if len(args) == 1 and isinstance(args[0], (UntypedStorage, TypedStorage)):
        return _E.empty(0, dtype=dtype).set_(args[0])
    if all(isinstance(a, int) for a in args):
        return _E.empty(*args, dtype=dtype)
    if len(args) == 1 and isinstance(args[0], _E.Size):
        return _E.empty(args[0], dtype=dtype)
    return _E.tensor(args[0] if len(args) == 1 else list(args), dtype=dtype)


def _new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False, layout=None,
                       pin_memory=False):
    return _E.empty_strided(size, stride, dtype=dtype or self.dtype).requires_grad_(requires_grad)


def _pin_memory(self, device=None):
    raise RuntimeError("Cannot access accelerator device when none is available.")


def _is_pinned(self, device=None):
    return False


def _apply_(self, callable):
    """Replaces each element by callable(element), in place (CPU, no autograd)."""
    if self.requires_grad:
        raise RuntimeError("Can't call apply_() on Variable that requires grad. Use var.detach().apply_() instead.")
    vals = [callable(v) for v in self.reshape(-1).tolist()]
    self.copy_(_E.tensor(vals, dtype=self.dtype).reshape(self.shape))
    return self


def _map_(self, tensor, callable):
    """self[i] = callable(self[i], tensor[i]), tensor broadcast to self's shape."""
    if self.requires_grad:
        raise RuntimeError("Can't call map_() on Variable that requires grad. Use var.detach().map_() instead.")
    other = tensor.expand(self.shape).reshape(-1).tolist()
    vals = [callable(a, b) for a, b in zip(self.reshape(-1).tolist(), other)]
    self.copy_(_E.tensor(vals, dtype=self.dtype).reshape(self.shape))
    return self


def _map2_(self, x, y, callable):
    if self.requires_grad:
        raise RuntimeError("Can't call map2_() on Variable that requires grad. Use var.detach().map2_() instead.")
    a, b = x.expand(self.shape).reshape(-1).tolist(), y.expand(self.shape).reshape(-1).tolist()
    vals = [callable(s, p, q) for s, p, q in zip(self.reshape(-1).tolist(), a, b)]
    self.copy_(_E.tensor(vals, dtype=self.dtype).reshape(self.shape))
    return self


def _dim_order(self, *, ambiguity_check=False):
    """Dims from outermost to innermost in memory (the stride order; ties keep the logical order)."""
    st = self.stride()
    return tuple(sorted(range(self.dim()), key=lambda d: (-st[d], d)))


def _resize_as_(self, the_template, memory_format=None):
    return self.resize_(the_template.shape)


def _resize(self, *sizes):
    """Deprecated out-of-place resize: only a change of shape that keeps the number of elements, as torch's."""
    if len(sizes) == 1 and not isinstance(sizes[0], int):
        sizes = tuple(sizes[0])
    n = 1
    for s in sizes:
        n *= s
    if n != self.numel():
        dims = "x".join(str(s) for s in sizes)
        raise RuntimeError(f"requested resize to {dims} ({n} elements in total), but the given tensor has a size of "
                           f"{'x'.join(str(s) for s in self.shape)} ({self.numel()} elements). autograd's resize can "
                           f"only change the shape of a given tensor, while preserving the number of elements. ")
    return self.reshape(sizes)


def _resize_as(self, tensor):
    return _resize(self, tuple(tensor.shape))


def _to_dense(self, dtype=None, *, masked_grad=None):
    return self if dtype is None or dtype == self.dtype else self.to(dtype)


def _module_load(self, other, assign=False):
    """What nn.Module.load_state_dict stores for this parameter: other, detached to self's dtype unless assigned."""
    return other if assign else other.detach().to(self.dtype)


def _nonzero_static(self, *, size, fill_value=-1):
    """nonzero() cut or padded (with fill_value) to exactly `size` rows."""
    nz = self.nonzero()
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer but got {size}")
    if nz.shape[0] >= size:
        return nz[:size].clone()
    pad = _E.full((size - nz.shape[0], self.dim()), fill_value, dtype=_E.int64)
    return _E.cat([nz, pad], 0)


def _attach():
    T = _C.Tensor
    methods = {
        "untyped_storage": _untyped_storage, "storage": _storage, "storage_type": _storage_type, "set_": _set_,
        "is_set_to": _is_set_to, "new": _new, "new_empty_strided": _new_empty_strided, "pin_memory": _pin_memory,
        "is_pinned": _is_pinned, "apply_": _apply_, "map_": _map_, "map2_": _map2_, "dim_order": _dim_order,
        "resize_as_": _resize_as_, "resize": _resize, "resize_as": _resize_as, "to_dense": _to_dense,
        "module_load": _module_load, "nonzero_static": _nonzero_static,
    }
    for name, fn in methods.items():
        if not hasattr(T, name):
            setattr(T, name, fn)
    if not hasattr(T, "layout"):
        T.layout = property(lambda self: strided, doc="The memory layout: always ember.strided.")
    if not hasattr(T, "const_data_ptr"):
        T.const_data_ptr = T.data_ptr
    if not hasattr(T, "is_distributed"):
        T.is_distributed = lambda self: False


_attach()
