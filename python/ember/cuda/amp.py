"""``torch.cuda.amp`` (deprecated in torch for ``torch.amp``): CUDA autocast and GradScaler, both
disabled with torch's warning, since ember has no GPU."""
from ember.amp import GradScaler as _GradScaler
from ember.amp import autocast as _autocast

__all__ = ["autocast", "GradScaler"]


class autocast(_autocast):  # noqa: N801  (torch's name)
    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        import ember  # noqa: PLC0415
        super().__init__("cuda", dtype=ember.float16 if dtype is None else dtype, enabled=enabled,
                         cache_enabled=cache_enabled)


class GradScaler(_GradScaler):
    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000, enabled=True):
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor, backoff_factor=backoff_factor,
                         growth_interval=growth_interval, enabled=enabled)
