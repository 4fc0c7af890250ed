"""Backend settings, as ``torch.backends``: ``ember.backends.cpu``, ``ember.backends.mkldnn``."""
from ember.backends import cpu, mkldnn  # noqa: F401
