"""torch's legacy constructors: ``ember.Tensor(...)``, the typed classes ``FloatTensor``,
``LongTensor``, ... and ``autograd.Variable``.

``Tensor(*sizes)`` is an uninitialized tensor of the default dtype, ``Tensor(sequence or
array)`` a copy of the data in it, ``Tensor(tensor)`` an alias of it and ``Tensor()`` an empty
one; ``FloatTensor`` and the others do the same for their dtype (an alias only of a tensor of
that dtype), and ``isinstance(t, ember.FloatTensor)`` tests a tensor's dtype, as torch's tensor
types do.
"""
import numbers

import ember
from ember._C import Tensor

_TYPE_DTYPES = {"FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16",
                "BFloat16Tensor": "bfloat16", "ByteTensor": "uint8", "CharTensor": "int8", "ShortTensor": "int16",
                "IntTensor": "int32", "LongTensor": "int64", "BoolTensor": "bool"}


def _is_size_args(args):
    if len(args) == 1 and isinstance(args[0], ember.Size):
        return True
    return all(isinstance(a, numbers.Integral) and not isinstance(a, bool) for a in args)


def _legacy_new(dtype, args, device=None, check_dtype=True):
    if device is not None and ember.device(device).type != "cpu":
        raise NotImplementedError(f"Ember was built without CUDA support; cannot create a tensor on {device}")
    if not args:
        return ember.empty(0, dtype=dtype)
    if _is_size_args(args):
        sizes = tuple(args[0]) if len(args) == 1 and isinstance(args[0], ember.Size) else tuple(args)
        if any(s < 0 for s in sizes):
            raise RuntimeError(f"Trying to create tensor with negative dimension {min(sizes)}: {list(sizes)}")
        return ember.empty(sizes, dtype=dtype)
    if len(args) != 1:
        raise TypeError(f"new(): invalid data type '{type(args[1]).__name__}'")
    data = args[0]
    if isinstance(data, Tensor):
        if check_dtype and data.dtype != dtype:
            raise TypeError(f"expected {dtype} (got {data.dtype})")
        return data.detach().view_as(data) if data.requires_grad else data.view_as(data)
    if isinstance(data, (str, bytes)) or not hasattr(data, "__len__") and not hasattr(data, "__array__"):
        raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
    return ember.tensor(data, dtype=dtype)


def tensor_new(*args, device=None):
    """What ember.Tensor(*args) holds (python/src/pyobj.cpp's constructor aliases it)."""
    return _legacy_new(ember.get_default_dtype(), args, device, check_dtype=False)  # Tensor(t): any dtype


class _TensorTypeMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and str(obj.dtype) == "ember." + cls._dtype_name

    def __call__(cls, *args, device=None):
        return _legacy_new(getattr(ember, cls._dtype_name), args, device)


def _make_type(name, dtype_name):
    return _TensorTypeMeta(name, (), {"_dtype_name": dtype_name, "__module__": "ember",
                                      "__doc__": f"Legacy constructor and isinstance test for {dtype_name} tensors."})


TENSOR_TYPES = {name: _make_type(name, dt) for name, dt in _TYPE_DTYPES.items()}


class _VariableMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """autograd.Variable (merged into Tensor since torch 0.4): ``Variable(t, requires_grad=False)``
    is t as a leaf with that requires_grad (t itself when nothing changes)."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if data is None:
            return ember.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if data.requires_grad == requires_grad and data.grad_fn is None:
            return data
        return data.detach().requires_grad_(requires_grad)
