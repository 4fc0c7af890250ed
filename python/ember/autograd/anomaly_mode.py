"""Anomaly detection (torch.autograd.detect_anomaly): nodes made under it remember the traceback of
their forward call; a backward that returns NaN raises "Function 'XBackward0' returned nan values in
its 0th output.", and any error in a node's backward is preceded by a warning that prints the forward
traceback ("Error detected in XBackward0. Traceback of forward call that caused the error: ...").
"""
import warnings

from ember import _C

__all__ = ["detect_anomaly", "set_detect_anomaly"]


class detect_anomaly:
    """Context manager enabling anomaly detection inside the block (check_nan: also raise on NaN
    gradients). Slows forward (a traceback per node) and backward (a NaN scan per node)."""

    def __init__(self, check_nan=True):
        self.prev = _C.is_anomaly_enabled()
        self.prev_nan = _C.is_anomaly_check_nan_enabled()
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", stacklevel=2)

    def __enter__(self):
        _C._set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc):
        _C._set_anomaly_enabled(self.prev, self.prev_nan)


class set_detect_anomaly:
    """Turns anomaly detection on or off, immediately; used with `with`, restores the previous state on exit."""

    def __init__(self, mode, check_nan=True):
        self.prev = _C.is_anomaly_enabled()
        self.prev_nan = _C.is_anomaly_check_nan_enabled()
        _C._set_anomaly_enabled(bool(mode), check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _C._set_anomaly_enabled(self.prev, self.prev_nan)
