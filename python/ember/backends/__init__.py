"""Backend settings, as ``torch.backends``: ``ember.backends.cpu``."""
from ember.backends import cpu  # noqa: F401
