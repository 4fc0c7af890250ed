"""Padding modules: Zero/Constant/Reflection/Replication/Circular Pad 1d/2d/3d (over F.pad)."""
from ember.nn import functional as F
from ember.nn.modules.module import Module

__all__ = [
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
    "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
]


def _ntuple_padding(padding, n):
    """An int pads every side; a tuple must give 2 * n values."""
    if isinstance(padding, int):
        return (padding,) * (2 * n)
    padding = tuple(padding)
    return padding


class _PadNd(Module):
    _n = 1
    _mode = "constant"

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple_padding(padding, self._n)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with a constant."""
    _n = 1


class ConstantPad2d(_ConstantPadNd):
    """Pads the last 2 dims with a constant."""
    _n = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last 3 dims with a constant."""
    _n = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd):
    """Pads the last dim with zeros."""
    _n = 1


class ZeroPad2d(_ZeroPadNd):
    """Pads the last 2 dims with zeros."""
    _n = 2


class ZeroPad3d(_ZeroPadNd):
    """Pads the last 3 dims with zeros."""
    _n = 3


class ReflectionPad1d(_PadNd):
    """Pads the last dim by reflection."""
    _n, _mode = 1, "reflect"


class ReflectionPad2d(_PadNd):
    """Pads the last 2 dims by reflection."""
    _n, _mode = 2, "reflect"


class ReflectionPad3d(_PadNd):
    """Pads the last 3 dims by reflection."""
    _n, _mode = 3, "reflect"


class ReplicationPad1d(_PadNd):
    """Pads the last dim by repeating the edge."""
    _n, _mode = 1, "replicate"


class ReplicationPad2d(_PadNd):
    """Pads the last 2 dims by repeating the edge."""
    _n, _mode = 2, "replicate"


class ReplicationPad3d(_PadNd):
    """Pads the last 3 dims by repeating the edge."""
    _n, _mode = 3, "replicate"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input):
        n = self._n
        if input.dim() not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.dim()}D input)")
        return F.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    """Pads the last dim circularly."""
    _n = 1


class CircularPad2d(_CircularPadNd):
    """Pads the last 2 dims circularly."""
    _n = 2


class CircularPad3d(_CircularPadNd):
    """Pads the last 3 dims circularly."""
    _n = 3
