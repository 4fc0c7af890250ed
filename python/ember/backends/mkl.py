"""oneMKL settings, as ``torch.backends.mkl``.

Float32 and float64 matrix products run on Intel oneMKL's GEMM when the ``mkl`` package is
installed (``pip install mkl``; loaded on the first product, in strict reproducibility mode:
the same bits for any thread count) and the CPU has AVX2 or AVX-512; otherwise on oneDNN and
OpenBLAS. ``enabled`` (an ember extension) switches MKL off and on; ``EMBER_MKL=0`` in the
environment keeps it from loading at all.
"""
import sys
import types

from ember import _C

__all__ = ["is_available", "enabled", "version"]


def is_available():
    """Whether matrix products run on MKL (installed, loaded, and ``enabled``)."""
    return _C._mkl_gemm_available()


def version():
    """MKL's version string, or None when it is not loaded."""
    v = _C._mkl_version()
    return v or None


class _MklModule(types.ModuleType):
    """Makes ``ember.backends.mkl.enabled`` a settable module attribute."""

    @property
    def enabled(self):
        return _C._get_mkl_enabled()

    @enabled.setter
    def enabled(self, value):
        _C._set_mkl_enabled(bool(value))


sys.modules[__name__].__class__ = _MklModule
