"""Backend settings, as ``torch.backends``: ``ember.backends.cpu``, ``ember.backends.mkl``, ``ember.backends.mkldnn``."""
from ember.backends import cpu, mkl, mkldnn  # noqa: F401
