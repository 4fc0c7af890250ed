"""Automatic mixed precision, as ``torch.amp``: ``autocast`` (CPU: bfloat16 or float16) and
``GradScaler``.

Inside ``with ember.autocast("cpu"):`` the ops on torch's CPU lists change precision (Note
[Autocast] in csrc/ember/core/autocast.h): convolutions, linear, the matmul family and attention
run in bfloat16 (float32 arguments are cast, parameters once per region), the losses in float32;
every other op runs in the dtype of its inputs. float32 parameters receive float32 gradients.
"""
import functools
import warnings

from ember import _C
from ember.amp.grad_scaler import GradScaler  # noqa: F401

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd", "is_autocast_available"]


def is_autocast_available(device_type):
    """Whether autocast exists for device_type in this build ('cpu' only)."""
    return device_type == "cpu"


class autocast:  # noqa: N801  (torch's name)
    """Context manager and decorator: ops in the region run in mixed precision.

    autocast(device_type, dtype=None, enabled=True, cache_enabled=None). On CPU dtype defaults to
    bfloat16 (ember.get_autocast_dtype("cpu")); float16 is accepted too.
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = device_type
        self.fast_dtype = _C._get_autocast_dtype("cpu") if device_type == "cpu" else None
        self._cache_enabled = _C._is_autocast_cache_enabled()
        if device_type == "cuda":
            if enabled:
                warnings.warn("User provided device_type of 'cuda', but CUDA is not available. Disabling")
            enabled = False
        elif device_type != "cpu":
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        if dtype is not None:
            self.fast_dtype = dtype
        if cache_enabled is not None:
            self._cache_enabled = cache_enabled
        if device_type == "cpu" and enabled:
            import ember  # noqa: PLC0415
            if self.fast_dtype not in (ember.bfloat16, ember.float16):
                warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                              "CPU Autocast only supports dtype of torch.bfloat16, torch.float16 currently.")
                enabled = False
        self._enabled = enabled

    def __enter__(self):
        if self.device != "cpu":
            return self
        self.prev_cache_enabled = _C._is_autocast_cache_enabled()
        self.prev = _C._is_autocast_enabled("cpu")
        self.prev_fastdtype = _C._get_autocast_dtype("cpu")
        _C._set_autocast_enabled("cpu", self._enabled)
        if self._enabled:  # a disabled region keeps the dtype (it may be one autocast refuses)
            _C._set_autocast_dtype("cpu", self.fast_dtype)
        _C._set_autocast_cache_enabled(self._cache_enabled)
        _C._autocast_increment_nesting()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if self.device != "cpu":
            return False
        _C._autocast_decrement_nesting()  # clears the cast cache when the outermost region ends
        _C._set_autocast_enabled("cpu", self.prev)
        _C._set_autocast_dtype("cpu", self.prev_fastdtype)
        _C._set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return decorate_autocast


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for a custom autograd Function's forward: runs it with autocast as at the call
    (or, with cast_inputs, with autocast off and floating-point tensor arguments cast)."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._fwd_used_autocast = _C._is_autocast_enabled(device_type) if device_type == "cpu" else False
        args[0]._dtype = _C._get_autocast_dtype("cpu")
        if cast_inputs is None:
            return fwd(*args, **kwargs)
        enabled = device_type == "cpu" and _C._is_autocast_enabled("cpu")
        if enabled:
            args = [_cast(a, cast_inputs) for a in args]
            kwargs = {k: _cast(v, cast_inputs) for k, v in kwargs.items()}
        with autocast(device_type=device_type, enabled=False):
            return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorator for a custom autograd Function's backward: runs it with the forward's autocast state."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=getattr(args[0], "_fwd_used_autocast", False),
                      dtype=getattr(args[0], "_dtype", None)):
            return bwd(*args, **kwargs)
    return decorate_bwd


def _lower_if_autocast(*tensors):
    """Note [Autocast]: the float32 tensors cast to the CPU autocast dtype when autocast is on
    (for lower-precision ops written in Python); None when it is off."""
    if not _C._is_autocast_enabled("cpu"):
        return None
    import ember  # noqa: PLC0415
    dt = _C._get_autocast_dtype("cpu")
    return tuple(t.to(dt) if isinstance(t, ember.Tensor) and t.dtype == ember.float32 else t for t in tensors)


def _cast(value, dtype):
    import ember  # noqa: PLC0415
    if isinstance(value, ember.Tensor):
        return value.to(dtype) if value.is_floating_point() else value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast(v, dtype) for k, v in value.items()}
    return value
