"""Anomaly detection: NaN gradients raise, naming the forward op's node."""
from ember import _C


class detect_anomaly:
    """Context manager enabling anomaly detection inside the block."""

    def __init__(self, check_nan=True):
        self.prev = _C.is_anomaly_enabled()
        self.prev_nan = _C.is_anomaly_check_nan_enabled()
        self.check_nan = check_nan

    def __enter__(self):
        _C._set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc):
        _C._set_anomaly_enabled(self.prev, self.prev_nan)


class set_detect_anomaly:
    """Turns anomaly detection on or off (immediately; restores on exit when used with `with`)."""

    def __init__(self, mode, check_nan=True):
        self.prev = _C.is_anomaly_enabled()
        self.prev_nan = _C.is_anomaly_check_nan_enabled()
        _C._set_anomaly_enabled(bool(mode), check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _C._set_anomaly_enabled(self.prev, self.prev_nan)
