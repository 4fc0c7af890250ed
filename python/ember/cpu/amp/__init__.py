"""torch.cpu.amp's older names: ``autocast`` (device_type fixed to "cpu") and ``GradScaler``."""
import warnings

from ember.amp import GradScaler as _GradScaler
from ember.amp import autocast as _autocast

__all__ = ["autocast", "GradScaler"]


class autocast(_autocast):  # noqa: N801  (torch's name)
    """``ember.cpu.amp.autocast(args...)`` is ``ember.amp.autocast("cpu", args...)`` (deprecated in torch)."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        import ember  # noqa: PLC0415
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cpu', "
                      "args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cpu", dtype=ember.bfloat16 if dtype is None else dtype, enabled=enabled,
                         cache_enabled=cache_enabled)


class GradScaler(_GradScaler):
    """``ember.cpu.amp.GradScaler(args...)`` is ``ember.amp.GradScaler("cpu", args...)``."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        super().__init__("cpu", init_scale, growth_factor, backoff_factor, growth_interval, enabled)
