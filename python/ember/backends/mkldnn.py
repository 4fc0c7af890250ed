"""oneDNN settings, as ``torch.backends.mkldnn``.

float32 convolutions (forward and both gradients) run on oneDNN's kernels when ``enabled`` is
True (the default); otherwise, and for float64, on ember's im2col + BLAS kernels.
"""
import sys
import types
from contextlib import contextmanager

from ember import _C

__all__ = ["is_available", "enabled", "flags"]


def is_available():
    """Whether ember was built with oneDNN (always, on CPU)."""
    return True


@contextmanager
def flags(enabled=False, deterministic=False):
    """Sets ``enabled`` inside the block and restores it afterwards."""
    old = _C._get_mkldnn_enabled()
    _C._set_mkldnn_enabled(bool(enabled))
    try:
        yield
    finally:
        _C._set_mkldnn_enabled(old)


class _MkldnnModule(types.ModuleType):
    """Makes ``ember.backends.mkldnn.enabled`` a settable module attribute, as in torch."""

    @property
    def enabled(self):
        return _C._get_mkldnn_enabled()

    @enabled.setter
    def enabled(self, value):
        _C._set_mkldnn_enabled(bool(value))


sys.modules[__name__].__class__ = _MkldnnModule
