"""Tensor methods written in Python (printing, NumPy protocol), attached to the C++ class."""

from ember import _C
from ember._C import Tensor


def _repr(self):
    from ember._tensor_str import tensor_repr
    import ember
    return tensor_repr(self, default_dtype=ember.get_default_dtype)


def _ember():
    import ember
    return ember


Tensor.__repr__ = _repr
Tensor.__str__ = _repr


def _format(self, spec):
    """f"{t:.2f}": a 0-d tensor formats as its Python number (torch's); others only with an empty spec."""
    if self.dim() == 0 and type(self) is Tensor:
        return self.item().__format__(spec)
    return object.__format__(self, spec)


Tensor.__format__ = _format


# ---- small Tensor methods written from other ops ----

def _inplace_view(name):
    def method(self, *args, **kwargs):
        self._set_geometry_from(getattr(self, name)(*args, **kwargs))
        return self
    method.__name__ = name + "_"
    method.__doc__ = f"In-place {name}: this tensor becomes the view {name}(...) of itself."
    return method


for _name in ("squeeze", "unsqueeze", "t", "transpose", "swapaxes", "swapdims", "as_strided"):
    setattr(Tensor, _name + "_", _inplace_view(_name))

Tensor.is_signed = lambda self: self.dtype.is_signed
Tensor.nbytes = property(lambda self: self.numel() * self.element_size())
Tensor.itemsize = property(lambda self: self.element_size())
Tensor.is_same_size = lambda self, other: tuple(self.shape) == tuple(other.shape)
Tensor.get_device = lambda self: -1  # CPU, as torch


_LEGACY_TYPES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
                 "bfloat16": "BFloat16Tensor", "uint8": "ByteTensor", "int8": "CharTensor", "int16": "ShortTensor",
                 "int32": "IntTensor", "int64": "LongTensor", "bool": "BoolTensor", "complex64": "ComplexFloatTensor",
                 "complex128": "ComplexDoubleTensor"}


def _type(self, dtype=None, non_blocking=False, **kwargs):
    """x.type(): the legacy type name ('torch.FloatTensor'); x.type(dtype or name): a cast."""
    import ember
    if dtype is None:
        return "torch." + _LEGACY_TYPES[str(self.dtype)[6:]]
    if isinstance(dtype, type) and hasattr(dtype, "_dtype_name"):  # ember.FloatTensor and the like
        dtype = getattr(ember, dtype._dtype_name)
    if isinstance(dtype, str):
        wanted = dtype.split(".")[-1]
        matches = [k for k, v in _LEGACY_TYPES.items() if v == wanted]
        if not matches:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = getattr(ember, matches[0])
    return self if dtype == self.dtype else self.to(dtype)


Tensor.type = _type


def _sum_to_size(self, *size):
    """Sum over the dims that broadcasting `size` to this tensor's shape would have expanded."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    shape = tuple(self.shape)
    if len(size) > len(shape) or any(s not in (1, d) for s, d in zip(size[::-1], shape[::-1])):
        raise RuntimeError(f"size {{{', '.join(map(str, size))}}} is not expandable to size "
                           f"{{{', '.join(map(str, shape))}}}.")
    lead = len(shape) - len(size)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(size) if s == 1 and shape[lead + i] != 1]
    r = self.sum(dims, keepdim=True) if dims else self
    return r.reshape(size)


Tensor.sum_to_size = _sum_to_size


def _fill_diagonal_(self, fill_value, wrap=False):
    """Fill the main diagonal in place (for tall matrices with wrap=True, restart it every cols + 1 rows)."""
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.dim() > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    if self.dim() == 2:
        rows, cols = self.shape
        step = cols + 1 if wrap and rows > cols else rows
        for start in range(0, rows, step):
            self[start:start + cols].diagonal().fill_(fill_value)
        return self
    n = self.shape[0]
    self.as_strided((n,), (sum(self.stride()),), self.storage_offset()).fill_(fill_value)
    return self


Tensor.fill_diagonal_ = _fill_diagonal_

Tensor.cfloat = lambda self: self.to(_ember().complex64)
Tensor.cdouble = lambda self: self.to(_ember().complex128)
# Ember tensors are dense, strided, unquantized and never meta.
# Nor on another accelerator (torch's is_mps, is_xpu, ... flags).
for _name in ("is_sparse", "is_sparse_csr", "is_quantized", "is_meta", "is_mkldnn", "is_nested", "is_mps", "is_xpu",
              "is_ipu", "is_maia", "is_mtia", "is_vulkan", "is_xla"):
    setattr(Tensor, _name, property(lambda self: False))


def _share_memory_(self):
    """Moves the storage to shared memory (a no-op if it is there); returns self."""
    return _C._share_memory_(self)


Tensor.share_memory_ = _share_memory_
Tensor.is_shared = lambda self: _C._is_shared(self)

# ---- copy.deepcopy (nn.Module deep copies: buffers, grads, attributes) ----

def _deepcopy(self, memo):
    """A detached copy with the same requires_grad, grad and Python attributes (graph leaves only, as torch)."""
    import copy
    if id(self) in memo:
        return memo[id(self)]
    if not self.is_leaf:
        raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol "
                           "at the moment.  If you were attempting to deepcopy a module, this may be because of a "
                           "torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001")
    new = self.detach().clone()
    if type(self) is not Tensor:
        new = Tensor._make_subclass(type(self), new, False)
    new.requires_grad_(self.requires_grad)
    memo[id(self)] = new
    if self.grad is not None:
        new.grad = copy.deepcopy(self.grad, memo)
    for k, v in self.__dict__.items():
        setattr(new, k, copy.deepcopy(v, memo))
    return new


Tensor.__deepcopy__ = _deepcopy


# ---- pickle (copy, plain pickle.dumps; ember.save and multiprocessing have their own reducers) ----

def _rebuild_from_bytes(data, dtype_name, shape, requires_grad):
    import numpy as np
    ember = _ember()
    if not data:
        t = ember.empty(shape, dtype=getattr(ember, dtype_name))
        return t.requires_grad_() if requires_grad else t
    flat = ember.from_numpy(np.frombuffer(data, dtype=np.uint8).copy())
    t = flat.view(getattr(ember, dtype_name)).reshape(shape)
    if requires_grad:
        t.requires_grad_()
    return t


def _reduce_ex(self, proto):
    """A tensor pickles as its values (contiguous), dtype, shape and requires_grad: unpickled, it
    is a new leaf with its own memory."""
    ember = _ember()
    raw = self.detach().contiguous().reshape(-1).view(ember.uint8).numpy().tobytes()
    return (_rebuild_from_bytes, (raw, str(self.dtype).split(".")[-1], tuple(self.shape), self.requires_grad))


Tensor.__reduce_ex__ = _reduce_ex
_C.device.__reduce__ = lambda self: (_C.device, (str(self),))
