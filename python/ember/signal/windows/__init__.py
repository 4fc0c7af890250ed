"""ember.signal.windows: window functions with scipy.signal.windows' parameters, as torch.signal.windows."""
from ember.signal.windows.windows import (  # noqa: F401
    bartlett, blackman, cosine, exponential, gaussian, general_cosine, general_hamming, hamming, hann, kaiser,
    nuttall,
)

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming", "hamming",
           "hann", "kaiser", "nuttall"]
