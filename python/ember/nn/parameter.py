"""Parameter, Buffer and their uninitialized (lazy) forms, as in torch.nn.parameter."""
from collections import OrderedDict

import ember
from ember._C import Tensor

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "is_lazy"]


class Parameter(Tensor):
    """A Tensor that a Module registers as a parameter when assigned as an attribute.

    `Parameter(data, requires_grad=True)` is a detached alias of `data` (same storage) whose
    class is Parameter, so `isinstance(p, ember.Tensor)` holds and ops on it return plain Tensors.
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = ember.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): argument 'data' must be Tensor, not {type(data).__name__}")
        return Tensor._make_subclass(cls, data, requires_grad)

    def __init__(self, *args, **kwargs):  # everything happens in __new__ (the C++ Tensor must not re-init)
        pass

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(memory_format=ember.preserve_format), self.requires_grad)
        memo[id(self)] = result
        return result

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto):
        # Parameters pickle as (data, requires_grad) plus the backward hooks slot torch keeps.
        return (_rebuild_parameter, (self.data, self.requires_grad, OrderedDict()))


def _rebuild_parameter(data, requires_grad, backward_hooks):
    p = Parameter(data, requires_grad)
    return p


class _BufferMeta(type):
    # isinstance(t, Buffer) holds for tensors marked by Buffer(...) (which are plain Tensors; the
    # nanobind Tensor type cannot take a custom metaclass, so Buffer is not a Tensor subclass).
    def __instancecheck__(cls, instance):
        return isinstance(instance, Tensor) and bool(getattr(instance, "_is_buffer", False))


class Buffer(metaclass=_BufferMeta):
    """Marks a tensor to be registered as a buffer when assigned to a Module attribute.

    `Buffer(data, *, persistent=True)` returns a detached alias of `data` (a plain Tensor) that
    carries the persistence flag; `isinstance(t, Buffer)` is true for it.
    """

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = ember.empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


class _UninitializedMixin:
    """Shared by UninitializedParameter/UninitializedBuffer: no shape until materialize()."""

    cls_to_become = None

    def materialize(self, shape, device=None, dtype=None):
        """Allocates the data with `shape` (uninitialized values) and becomes a `cls_to_become`."""
        if device is None:
            device = self.data.device
        if dtype is None:
            dtype = self.data.dtype
        self.data = ember.empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
            "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call "
            "`forward` to initialize the parameters before accessing their attributes.")

    def share_memory_(self):
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to initialize the "
            "parameters before calling `module.share_memory()`.")

    def __repr__(self):
        return f"<{self.__class__.__name__}>"

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))


class UninitializedParameter(_UninitializedMixin, Parameter):
    """A Parameter without data yet (used by the Lazy* modules); materialize() gives it a shape."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        data = ember.empty(0, device=device, dtype=dtype)
        return Tensor._make_subclass(cls, data, requires_grad)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, self.data.device, self.data.dtype)
        memo[id(self)] = result
        return result


class UninitializedBuffer(_UninitializedMixin, Tensor):
    """A buffer without data yet (used by the Lazy* modules); materialize() gives it a shape."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        data = ember.empty(0, device=device, dtype=dtype)
        t = Tensor._make_subclass(cls, data, requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t

    def __init__(self, *args, **kwargs):
        pass

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, self.data.device, self.data.dtype)
        memo[id(self)] = result
        return result


def is_lazy(param):
    """True for an uninitialized parameter or buffer."""
    return isinstance(param, _UninitializedMixin)
