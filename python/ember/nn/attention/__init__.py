"""``ember.nn.attention``, as ``torch.nn.attention``: the kernels scaled_dot_product_attention may use.

ember has one CPU attention kernel, computing torch's math (and its CPU flash kernel's) result.
``sdpa_kernel(backends)`` limits the choice as torch's does: inside it, scaled_dot_product_attention
runs if MATH or FLASH_ATTENTION (torch's CPU kernels) is allowed, and otherwise raises torch's
"No viable backend" RuntimeError (EFFICIENT_ATTENTION and CUDNN_ATTENTION are GPU kernels).
"""
import contextlib
import enum
import threading

__all__ = ["SDPBackend", "sdpa_kernel"]


class SDPBackend(enum.IntEnum):
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_CPU_KERNELS = {SDPBackend.MATH, SDPBackend.FLASH_ATTENTION}
_allowed = threading.local()


def _check_kernel_available():
    """Raises when the innermost sdpa_kernel block allows no CPU kernel."""
    allowed = getattr(_allowed, "backends", None)
    if allowed is not None and not (allowed & _CPU_KERNELS):
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This is likely due to "
                           "turning off both the math kernel and the fused kernels.")


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Within the block, scaled_dot_product_attention may use only the given backend(s)."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
                             f"{type(backends).__name__}")
    backends = [backends] if isinstance(backends, SDPBackend) else list(backends)
    previous = getattr(_allowed, "backends", None)
    _allowed.backends = set(backends)
    try:
        yield
    finally:
        _allowed.backends = previous
