"""ember.signal: signal-processing helpers, as torch.signal (the window functions)."""
from ember.signal import windows  # noqa: F401

__all__ = ["windows"]
